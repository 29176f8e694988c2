// SPDX-License-Identifier: MIT
/*
 * memcontrol.c - the budget, as a cgroup v2 memory controller's limits.
 *
 * Every resident managed page is charged.  Past `high` the reclaimer is
 * woken and reclaims until charges fall to `low`, a little below high
 * (hysteresis, so that it works in batches rather than a folio at a time).
 * `max` is a hard limit: a fault that would pass it waits until reclaim has
 * made room.  When reclaim can make no room at all (every tier full), the
 * budget is "stuck" and faults are admitted past max, counted and logged:
 * uswap never kills or deadlocks its program for lack of swap space.
 *
 * One budget per process tree.  The budget lives in a shared mapping of a
 * memfd, so a child forked from a member shares it, as a cgroup is shared
 * by the processes in it.  Each process is a member and charges its own
 * share; every reclaimer is woken when the tree passes high, and each
 * reclaims only while it holds at least an equal share of the charges, so
 * the process that uses more gives back more and some member always
 * reclaims (the largest holds at least the average).
 *
 * A member's process can end without a word (kill -9, _exit, exec into a
 * program that does not load uswap): the reclaimers look for members
 * whose pid is gone or no longer maps the budget's memfd (its name is in
 * /proc/PID/maps), and reap them: their slots are freed (swapon.c keeps
 * who holds which) and their charges dropped.
 *
 * No lock: charges and member states are atomics, and waiting is on
 * futexes in the shared mapping (a fault waits on `room`, a reclaimer on
 * `kick`; each is a counter bumped before the wake-up).  A process killed
 * while it waits leaves nothing behind, where a process-shared condition
 * variable would be left inconsistent.  (The one lock, share_lock, orders
 * the evictions of pages shared by fork, fork_share.c; it is robust, and
 * guards no data.)
 *
 * Pages shared by fork are charged once, to the tree's `shared` rather
 * than to a member (fork_share.c): `resident` is the members' charges plus
 * `shared`.
 *
 * Every charge that takes `resident` past max is counted (max_overrun),
 * whatever made it: a fault admitted while reclaim is stuck, or past the
 * bounded wait below; the compressed pool growing before the folios it
 * stores are unmapped; the pages a fork gives the child; a promotion from
 * a slower node; a structural change charging a folio whole.  `peak`
 * follows every one of them.
 *
 * A member that does not reclaim (stopped by SIGSTOP, or stuck) must not
 * hold the others at max.  Faults that wait with no room made start the
 * `starved` clock: after MEMCG_SHARE_WAIT_US every member reclaims what it
 * can for a while, whatever its share; a fault that has waited
 * MEMCG_WAIT_MAX_US, the tree starved for half of it, is admitted past max
 * (counted as max_overrun).
 *
 * Each member's counters live in the budget too (struct vmstat, one block
 * per member): whatever way its process ends, they are there.  A member
 * is released once (by itself, or by the reaper); its events are then
 * folded into the tree's `reaped` totals unless its process wrote them
 * out itself (`reported`), and every process's statistics carry those
 * totals (vmstat.c), so that uswap run counts a process that ended with
 * _exit() or a signal once.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "fdtable.h"
#include "lockdep.h"
#include "log.h"
#include "memcontrol.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "uswap.h"
#include "vmstat.h"
#include "zswap.h"

#define MEMCG_SHARE_WAIT_US	200000u		/* starved: every member reclaims */
#define MEMCG_SHARE_OFF_US	1000000u	/* ... for this long */
#define MEMCG_WAIT_MAX_US	2000000u	/* a fault waits at max at most, */
#define MEMCG_WAIT_HARD_US	8000000u	/* ... or this, whatever room is made */

/*
 * When pid started (field 22 of /proc/PID/stat, in clock ticks), or 0.
 * Read without stdio (prim_read_file): this runs in a fork handler too.
 */
static uint64_t start_time(int pid)
{
	char path[64], buf[1024], *p;
	unsigned field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (prim_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');	/* the command name may hold anything */
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* The budget's mapping: a named memfd, so that /proc/PID/maps shows it. */
static struct memcg *memcg_map(size_t len, char *name, size_t name_len,
			       int *fdp)
{
	static _Atomic unsigned seq;
	void *p;
	int fd;

	snprintf(name, name_len, "uswap-tree-%d-%u", (int)getpid(),
		 atomic_fetch_add(&seq, 1));
	fd = prim_memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (prim_ftruncate(fd, (off_t)len) < 0) {
		prim_close(fd);
		return NULL;
	}
	p = prim_map_own(len, MAP_SHARED, fd);
	if (p == MAP_FAILED) {
		prim_close(fd);
		return NULL;
	}
	*fdp = fd_install(fd, FD_BUDGET);
	return p;
}

static void stat_clear(struct vmstat *st)
{
	unsigned k;

	for (k = 0; k < USWAP_NR_COUNTERS; k++)
		atomic_store_explicit(&st->ev[k], 0, memory_order_relaxed);
	for (k = 0; k < USWAP_LATENCY_BUCKETS; k++)
		atomic_store_explicit(&st->latency[k], 0, memory_order_relaxed);
	for (k = 0; k < ZSWAP_NR_COUNTERS; k++)
		atomic_store_explicit(&st->zswap[k], 0, memory_order_relaxed);
}

/*
 * This process's counters go to its own block from now on: it has no
 * member (any more), or its member is about to be freed.
 */
static void stat_detach(struct uswap_runtime *rt)
{
	rt->stat = &rt->stat_own;
	if (rt->zswap)
		zswap_counters_set(rt->zswap, NULL);
}

/*
 * Reserve a free member entry (FREE -> FORKING) using devset, charged
 * `charged` pages.  Returns its index, or -ENOSPC when the table is full.
 */
static int member_reserve(struct memcg *mc, uint64_t devset, uint64_t charged)
{
	unsigned m;

	for (m = 0; m < TREE_MAX_MEMBERS; m++) {
		unsigned st = MEMBER_FREE;

		if (atomic_compare_exchange_strong(&mc->member[m].state, &st,
						   MEMBER_FORKING))
			break;
	}
	if (m == TREE_MAX_MEMBERS)
		return -ENOSPC;
	atomic_fetch_add(&mc->member[m].gen, 1);	/* before it can be LIVE */
	atomic_store(&mc->member[m].pid, 0);
	atomic_store(&mc->member[m].charged, charged);
	atomic_store(&mc->member[m].shared_held, 0);
	atomic_store(&mc->member[m].devset, devset);
	atomic_store(&mc->member[m].reported, false);
	stat_clear(&mc->stat[m]);
	atomic_fetch_add(&mc->nr_live, 1);
	return (int)m;
}

/* Member m is this process now. */
static void member_enter(struct uswap_runtime *rt, unsigned m)
{
	struct memcg *mc = rt->memcg;

	rt->member = m;
	rt->stat = &mc->stat[m];
	if (rt->zswap)
		zswap_counters_set(rt->zswap, rt->stat->zswap);
	atomic_store(&mc->member[m].start_time, start_time(getpid()));
	atomic_store(&mc->member[m].pid, (int)getpid());
	atomic_store(&mc->member[m].state, MEMBER_LIVE);
}

/* Become a member: a free entry for this process. */
static int member_add(struct uswap_runtime *rt)
{
	int m = member_reserve(rt->memcg, rt->devset, 0);

	if (m < 0)
		return m;
	member_enter(rt, (unsigned)m);
	return 0;
}

/*
 * After exec: join the budget of the image before (its descriptor came
 * through exec).  That image's member is this very process: mark it
 * EXECED so that the members that share its devices free its slots.
 */
static int memcg_join(struct uswap_runtime *rt, int fd)
{
	struct memcg *mc;
	struct stat st;
	unsigned m;
	int err;

	err = prim_fstat(fd, &st);
	if (err)
		return err;
	if ((size_t)st.st_size < sizeof(*mc))
		return -EINVAL;
	mc = prim_map_own((size_t)st.st_size, MAP_SHARED, fd);
	if (mc == MAP_FAILED)
		return -errno;
	if (mc->magic != MEMCG_MAGIC || mc->map_len != (size_t)st.st_size) {
		prim_munmap(mc, (size_t)st.st_size);
		return -EINVAL;
	}
	for (m = 0; m < TREE_MAX_MEMBERS; m++) {
		unsigned live = MEMBER_LIVE;

		if (atomic_load(&mc->member[m].pid) == (int)getpid())
			atomic_compare_exchange_strong(&mc->member[m].state,
						       &live, MEMBER_EXECED);
	}
	rt->memcg = mc;
	err = member_add(rt);
	if (err) {
		prim_munmap(mc, mc->map_len);
		rt->memcg = NULL;
		return err;
	}
	rt->tree_fd = fd_install(prim_fcntl(fd, F_DUPFD_CLOEXEC, 3), FD_BUDGET);
	/* The one it joined by: it keeps its number, close-on-exec now. */
	rt->tree_fd_exec = fd_install_in_place(fd, FD_BUDGET_EXEC);
	return 0;
}

/* Process-shared, and robust: a member may be killed holding it. */
static void share_lock_init(struct memcg *mc)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&mc->share_lock, &attr);
	pthread_mutexattr_destroy(&attr);
}

int memcg_create(struct uswap_runtime *rt, uint64_t max_bytes,
		 uint64_t high_bytes, unsigned folio_pages)
{
	size_t len = (sizeof(struct memcg) + PAGE_SIZE - 1) & PAGE_MASK;
	char name[sizeof(rt->memcg->name)];
	struct memcg *mc;
	uint64_t delta;
	int err;

	rt->stat = &rt->stat_own;
	rt->devset = ((uint64_t)getpid() << 32) ^ prim_now_us();
	rt->tree_fd = rt->tree_fd_exec = -1;
	if (rt->opt.flags & USWAP_OPT_JOIN_TREE) {
		err = memcg_join(rt, rt->opt.tree_fd);
		if (!err)
			return 0;
		uswap_log("cannot join the budget of the program that exec'd this one (%s): this one has a budget of its own",
			  strerror(-err));
		/* Not joined: opt.tree_fd is none of this runtime's. */
		rt->opt.flags &= ~USWAP_OPT_JOIN_TREE;
	}
	mc = memcg_map(len, name, sizeof(name), &rt->tree_fd);
	if (!mc)
		return errno ? -errno : -ENOMEM;
	memcpy(mc->name, name, sizeof(name));
	mc->magic = MEMCG_MAGIC;
	mc->map_len = len;
	mc->max = max_bytes >> PAGE_SHIFT;
	mc->high = high_bytes >> PAGE_SHIFT;
	/* Stop 2% of max (at least a 2 MiB batch, two folios) below high. */
	delta = MAX(mc->max / 50, MAX(512u, 2u * folio_pages));
	mc->low = mc->high > 2 * delta ? mc->high - delta : mc->high / 2;
	share_lock_init(mc);
	rt->memcg = mc;
	return member_add(rt);
}

/*
 * The budget's descriptor for exec'd programs: close-on-exec like every
 * descriptor of uswap's; whoever execs a program that joins clears the
 * flag for that exec only (the preload library: preload/exec.c).
 */
int memcg_tree_fd(struct uswap_runtime *rt)
{
	if (rt->tree_fd_exec < 0 && rt->tree_fd >= 0) {
		int fd = prim_fd_dup(rt->tree_fd, FD_BUDGET_EXEC);

		rt->tree_fd_exec = fd >= 0 ? fd : -1;
	}
	return rt->tree_fd_exec >= 0 ? rt->tree_fd_exec : -EBADF;
}

/*
 * This process leaves the tree (its slots were freed by the caller), and
 * closes the budget's descriptors that are the runtime's: its own, and
 * the one for exec that memcg_tree_fd() made.  The one an exec'd member
 * joined by (opt.tree_fd, which memcg_tree_fd() hands on) is the
 * caller's and stays open.
 */
void memcg_destroy(struct uswap_runtime *rt)
{
	struct memcg *mc = rt->memcg;
	bool joined = rt->opt.flags & USWAP_OPT_JOIN_TREE;

	if (!mc)
		return;
	memcg_member_release(rt, rt->member);
	prim_munmap(mc, mc->map_len);
	if (rt->tree_fd >= 0)
		prim_fd_close(rt->tree_fd);
	if (rt->tree_fd_exec >= 0 && !joined)
		prim_fd_close(rt->tree_fd_exec);
	else if (rt->tree_fd_exec >= 0)
		(void)fd_release(rt->tree_fd_exec);	/* the caller's again */
	rt->tree_fd = rt->tree_fd_exec = -1;
	rt->memcg = NULL;
}

static void bump(_Atomic uint32_t *word)
{
	atomic_fetch_add(word, 1);
	prim_futex_wake_all(word);
}

/* Every reclaimer of the tree: each decides whether it holds its share. */
void memcg_kick_reclaim(struct memcg *mc)
{
	atomic_fetch_add(&mc->kick, 1);
	if (atomic_load(&mc->sleepers))
		prim_futex_wake_all(&mc->kick);
}

/* Wake every waiter and reclaimer (shutdown, a member reaped). */
void memcg_wake_all(struct memcg *mc)
{
	bump(&mc->kick);
	bump(&mc->room);
}

/*
 * A reclaimer sleeps until kicked or ms pass.  With `always`, even above
 * high: another process of the tree holds more and reclaims first.
 */
void memcg_reclaim_sleep(struct uswap_runtime *rt, long ms, bool always)
{
	struct memcg *mc = rt->memcg;
	uint32_t seq;

	atomic_fetch_add(&mc->sleepers, 1);
	seq = atomic_load(&mc->kick);
	if (!rt->stopping && (always || !memcg_above_high(rt)))
		prim_futex_wait(&mc->kick, seq, ms);
	atomic_fetch_sub(&mc->sleepers, 1);
}

/*
 * nr pages were charged on top of `old`: note the peak, and count the
 * charge when it took the budget past max.
 */
static void charged_from(struct uswap_runtime *rt, uint64_t old, uint64_t nr)
{
	struct memcg *mc = rt->memcg;
	uint64_t peak = atomic_load(&mc->peak);

	while (old + nr > peak &&
	       !atomic_compare_exchange_weak(&mc->peak, &peak, old + nr))
		;
	if (unlikely(old + nr > mc->max))
		count_event(rt, USWAP_MAX_OVERRUN, 1);
}

/* Try to charge nr pages without passing max (force: past it).  true when charged. */
static bool try_charge(struct uswap_runtime *rt, unsigned nr, bool force)
{
	struct memcg *mc = rt->memcg;
	uint64_t cur = atomic_load(&mc->resident);

	do {
		if (!force && cur + nr > mc->max)
			return false;
	} while (!atomic_compare_exchange_weak(&mc->resident, &cur, cur + nr));
	atomic_fetch_add(&mc->member[rt->member].charged, nr);
	charged_from(rt, cur, nr);
	return true;
}

/* Charge nr pages if that stays within max, without waiting (readahead). */
bool memcg_try_charge(struct uswap_runtime *rt, unsigned nr)
{
	return try_charge(rt, nr, false);
}

void memcg_force_charge(struct uswap_runtime *rt, unsigned nr)
{
	try_charge(rt, nr, true);
}

/* Room was made: waiters try again, and the starved clock starts over. */
static void room_made(struct memcg *mc)
{
	uint64_t since = atomic_load(&mc->starved_us);

	if (!atomic_load(&mc->waiters))
		return;
	if (since)
		atomic_compare_exchange_strong(&mc->starved_us, &since,
					       prim_now_us());
	bump(&mc->room);
}

/*
 * A fault waits at max: has no room been made for a while?  Then some
 * member holds charges it does not reclaim (stopped, stuck): every member
 * reclaims what it can for MEMCG_SHARE_OFF_US (memcg_should_reclaim).
 */
static uint64_t starved_for(struct memcg *mc, uint64_t now)
{
	uint64_t since = atomic_load(&mc->starved_us);

	if (!since) {
		/* The first waiter, or one that found the clock stopped by
		   the last waiter of a round before it. */
		atomic_compare_exchange_strong(&mc->starved_us, &since, now);
		return 0;
	}
	if (now > since + MEMCG_SHARE_WAIT_US)
		atomic_store(&mc->share_off_us, now + MEMCG_SHARE_OFF_US);
	return now > since ? now - since : 0;
}

/*
 * Charge nr pages for a folio about to be installed.  Waits while the
 * charge would pass max (the reclaimers are kicked), unless the budget is
 * stuck, the runtime is stopping, or the fault has waited
 * MEMCG_WAIT_MAX_US with the tree starved for half of it, or
 * MEMCG_WAIT_HARD_US in all (room made in crumbs, each taken by other
 * faults first, resets the starved clock without ever admitting it).  Must be called
 * with no lock held, by a fault thread.  Returns the microseconds spent
 * waiting.
 */
uint64_t memcg_charge(struct uswap_runtime *rt, unsigned nr)
{
	struct memcg *mc = rt->memcg;
	uint64_t t0, now, waited;

	lock_assert_none_held();
	if (likely(try_charge(rt, nr, false)))
		goto charged;
	if (hold_admit(rt, nr))		/* held for a dump or a debugger */
		goto charged;

	t0 = now = prim_now_us();
	fault_thread_waits(true);
	if (atomic_fetch_add(&mc->waiters, 1) == 0)
		starved_for(mc, now);
	for (;;) {
		uint32_t seq = atomic_load(&mc->room);
		bool stuck, starved;

		if (try_charge(rt, nr, false) || hold_admit(rt, nr))
			break;
		now = prim_now_us();
		stuck = atomic_load(&mc->stuck) || rt->stopping;
		starved = (now - t0 >= MEMCG_WAIT_MAX_US &&
			   starved_for(mc, now) >= MEMCG_WAIT_MAX_US / 2) ||
			  now - t0 >= MEMCG_WAIT_HARD_US;
		if (stuck || starved) {
			try_charge(rt, nr, true);
			/* Stopping (the process ends, or execs): no message. */
			if (atomic_load(&mc->stuck))
				uswap_log_once(&rt->logged_overrun,
					       "no tier has room: resident memory goes past --max (counted as max_overrun)");
			else if (starved)
				uswap_log_once(&rt->logged_starved,
					       "a fault waited %u s at --max while no process of the tree gave memory back (one is stopped or stuck?): resident memory goes past --max (counted as max_overrun)",
					       MEMCG_WAIT_MAX_US / 1000000u);
			break;
		}
		starved_for(mc, now);
		memcg_kick_reclaim(mc);
		prim_futex_wait(&mc->room, seq, 10);
	}
	if (atomic_fetch_sub(&mc->waiters, 1) == 1)
		atomic_store(&mc->starved_us, 0);
	fault_thread_waits(false);
	waited = prim_now_us() - t0;
	count_event(rt, USWAP_RECLAIM_STALL, 1);
	count_event(rt, USWAP_RECLAIM_STALL_US, waited);
	return waited;

charged:
	if (atomic_load(&mc->resident) > mc->high)
		memcg_kick_reclaim(mc);
	return 0;
}

/*
 * Take nr pages off a charge, never below zero.  One that would go below
 * is a bookkeeping bug, not the program's: as the kernel's
 * page_counter_cancel() warns and stops at zero, the charge stops at
 * zero, the event is logged once and counted in member m's
 * charge_underflow (the soak fails a round that counts one), and the
 * program goes on with a budget that is off by those pages.  A debug
 * build (make debug) stops there.
 */
static void charge_sub(struct memcg *mc, unsigned m, _Atomic uint64_t *c,
		       uint64_t nr, const char *what)
{
	static bool logged;
	uint64_t cur = atomic_load(c);

	while (!atomic_compare_exchange_weak(c, &cur, cur - MIN(cur, nr)))
		;
	if (likely(cur >= nr))
		return;
	atomic_fetch_add(&mc->stat[m].ev[USWAP_CHARGE_UNDERFLOW], nr - cur);
	uswap_log_once(&logged,
		       "uswap's charge for %s went below zero by %llu pages: a bug of uswap's, counted as charge_underflow (the budget is off by that much)",
		       what, (unsigned long long)(nr - cur));
#ifdef USWAP_DEBUG
	assert(!"charge below zero");
#endif
}

static void uncharge_member(struct memcg *mc, unsigned m, uint64_t nr)
{
	charge_sub(mc, m, &mc->member[m].charged, nr, "a process");
	charge_sub(mc, m, &mc->resident, nr, "the tree");
	room_made(mc);
}

void memcg_uncharge(struct uswap_runtime *rt, uint64_t nr)
{
	uncharge_member(rt->memcg, rt->member, nr);
}

/*
 * The pool's growth during a reclaim batch is charged once the batch's
 * folios are uncharged (memcg_pool_defer, memcg_pool_settle): the pool
 * then holds the compressed copies of folios that are leaving (stored by
 * the pool's compression threads for the reclaimer), and charging those
 * first would take the tree past max by a batch's compressed size at
 * every batch.  Growth that comes in just as a batch settles waits for
 * the next one.
 */
void memcg_pool_defer(struct uswap_runtime *rt)
{
	atomic_store(&rt->pool_deferring, true);
}

/*
 * The batch's folios left, nr pages of them charged: uncharge those and
 * charge the pool's growth in one step, so that no fault waiting at max
 * takes the room in between.
 */
void memcg_pool_settle(struct uswap_runtime *rt, uint64_t nr)
{
	uint64_t grown;

	atomic_store(&rt->pool_deferring, false);
	grown = atomic_exchange(&rt->pool_deferred, 0);
	if (grown > nr)
		try_charge(rt, (unsigned)(grown - nr), true);
	else if (grown < nr)
		memcg_uncharge(rt, nr - grown);
}

/* Take up to nr pages of growth not charged yet back: how many it took. */
static uint64_t pool_undefer(struct uswap_runtime *rt, uint64_t nr)
{
	uint64_t cur = atomic_load(&rt->pool_deferred), cut;

	do {
		cut = MIN(cur, nr);
	} while (cut && !atomic_compare_exchange_weak(&rt->pool_deferred, &cur,
						      cur - cut));
	return cut;
}

/*
 * The compressed pool grew or shrank (zswap's account callback, arg is
 * the runtime).  Pool memory is charged like resident memory, as the
 * kernel charges zswap to the memory cgroup, but it never waits: the pool
 * grows while reclaim frees the larger folios it stores.  A shrink first
 * cancels growth not charged yet.
 */
void memcg_account_pool(void *arg, long delta_pages)
{
	struct uswap_runtime *rt = arg;
	uint64_t nr;

	if (delta_pages < 0) {
		nr = (uint64_t)-delta_pages;
		atomic_fetch_sub(&rt->pool_pages, nr);
		nr -= pool_undefer(rt, nr);
		if (nr)
			memcg_uncharge(rt, nr);
		return;
	}
	nr = (uint64_t)delta_pages;
	atomic_fetch_add(&rt->pool_pages, nr);
	if (atomic_load(&rt->pool_deferring))
		atomic_fetch_add(&rt->pool_deferred, nr);
	else
		try_charge(rt, (unsigned)nr, true);
}

/* --- pages shared by fork (fork_share.c) --- */

/*
 * `shared` is exact while every process ends through its runtime: the last
 * to let go of a page frees it.  A process killed (or exec'd) frees, with
 * its address space, the pages it was the last to map, and nobody sees
 * that.  Each member therefore counts the pages of its folios marked
 * F_SHARED (shared_held): every page of `shared` is in some member's count
 * (a member counts its pages before they enter `shared` and after they
 * leave it; a child starts with its parent's count), so when a member is
 * gone, `shared` can be cut to the sum over the members left.  The sum is
 * read without a lock: a fork meanwhile (which can move a page from the
 * parent's count, once it lets go, to the child's, read before) makes the
 * cut start again.
 */
static void held_sub(struct memcg *mc, unsigned m, uint64_t nr)
{
	uint64_t cur = atomic_load(&mc->member[m].shared_held);

	while (nr && !atomic_compare_exchange_weak(&mc->member[m].shared_held,
						   &cur, cur - MIN(cur, nr)))
		;
}

static void share_clamp(struct memcg *mc)
{
	uint64_t cur, held, gen;
	unsigned m;

	for (;;) {
		gen = atomic_load(&mc->fork_gen);
		cur = atomic_load(&mc->shared);
		held = 0;
		for (m = 0; m < TREE_MAX_MEMBERS; m++)
			if (atomic_load(&mc->member[m].state) != MEMBER_FREE)
				held += atomic_load(&mc->member[m].shared_held);
		if (held >= cur)
			return;
		if (gen != atomic_load(&mc->fork_gen))
			continue;
		if (atomic_compare_exchange_strong(&mc->shared, &cur, held))
			break;
	}
	atomic_fetch_sub(&mc->resident, cur - held);
	room_made(mc);
}

/* At fork: nr pages newly marked F_SHARED leave this member's charge. */
void memcg_share(struct uswap_runtime *rt, uint64_t nr)
{
	struct memcg *mc = rt->memcg;
	uint64_t own = atomic_load(&mc->member[rt->member].charged);

	atomic_fetch_add(&mc->member[rt->member].shared_held, nr);
	nr = MIN(nr, own);	/* the pages shared were charged here */
	atomic_fetch_sub(&mc->member[rt->member].charged, nr);
	atomic_fetch_add(&mc->shared, nr);
}

/* nr shared pages are gone (at most what `shared` holds). */
static void memcg_unshare(struct uswap_runtime *rt, uint64_t nr)
{
	struct memcg *mc = rt->memcg;
	uint64_t cur = atomic_load(&mc->shared);

	do {
		if (!cur || !nr)
			return;
		nr = MIN(nr, cur);
	} while (!atomic_compare_exchange_weak(&mc->shared, &cur, cur - nr));
	atomic_fetch_sub(&mc->resident, nr);
	room_made(mc);
}

/*
 * A folio of `held` pages marked F_SHARED is no longer (written, evicted,
 * unmapped); `freed` of its pages nobody else mapped went with it.
 */
void memcg_share_drop(struct uswap_runtime *rt, uint64_t held, uint64_t freed)
{
	memcg_unshare(rt, freed);
	held_sub(rt->memcg, rt->member, held);
}

/*
 * nr shared pages are this member's alone now: its charge, whole (a
 * resident folio of its own is charged whole).  What `shared` no longer
 * holds of them (cut by share_clamp() after a member went) is charged
 * anew, so that the member's charge never falls short of its folios.
 */
void memcg_unshare_to_own(struct uswap_runtime *rt, uint64_t nr)
{
	struct memcg *mc = rt->memcg;
	uint64_t cur = atomic_load(&mc->shared), take;

	do {
		take = MIN(nr, cur);
	} while (take && !atomic_compare_exchange_weak(&mc->shared, &cur,
						       cur - take));
	if (take)
		atomic_fetch_add(&mc->member[rt->member].charged, take);
	if (take < nr)
		try_charge(rt, (unsigned)(nr - take), true);
	held_sub(mc, rt->member, nr);
}

/* The lock of a process that died holding it is taken over as it is:
   it guards no data, only the order of looks and zaps. */
void memcg_share_lock(struct memcg *mc)
{
	if (pthread_mutex_lock(&mc->share_lock) == EOWNERDEAD)
		pthread_mutex_consistent(&mc->share_lock);
}

void memcg_share_unlock(struct memcg *mc)
{
	pthread_mutex_unlock(&mc->share_lock);
}

uint64_t memcg_own_pages(struct uswap_runtime *rt)
{
	return atomic_load(&rt->memcg->member[rt->member].charged);
}

bool memcg_above_high(struct uswap_runtime *rt)
{
	struct memcg *mc = rt->memcg;

	return atomic_load(&mc->resident) > mc->high ||
	       atomic_load(&mc->waiters) > 0;
}

/*
 * Reclaim on while the tree is above low (or a fault waits) and this
 * process holds at least the average share: own * members >= total.
 * Pages shared by fork count as everyone's: each process that maps them
 * must let go of them before they are freed.  While the tree is starved
 * (faults wait and nobody makes room: the largest member is stopped or
 * stuck), every member reclaims what it can.
 */
bool memcg_should_reclaim(struct uswap_runtime *rt)
{
	struct memcg *mc = rt->memcg;
	uint64_t total = atomic_load(&mc->resident);
	uint64_t mine = memcg_own_pages(rt) + atomic_load(&mc->shared);

	if (total <= mc->low && !atomic_load(&mc->waiters))
		return false;
	if (unlikely(atomic_load(&mc->share_off_us) > prim_now_us()))
		return mine > 0;
	return mine * atomic_load(&mc->nr_live) >= total;
}

/*
 * The reclaimer says whether it can make room.  Waiters are released when
 * it cannot, and held again as soon as it can.
 */
void memcg_set_stuck(struct uswap_runtime *rt, bool stuck)
{
	struct memcg *mc = rt->memcg;

	if (!stuck)
		atomic_fetch_add_explicit(&mc->progress, 1,
					  memory_order_relaxed);
	if (atomic_exchange(&mc->stuck, stuck) == stuck)
		return;
	if (stuck)
		bump(&mc->room);
}

uint64_t memcg_progress(struct uswap_runtime *rt)
{
	return atomic_load_explicit(&rt->memcg->progress, memory_order_relaxed);
}

/* --- tier budgets (--tier-max): pages demoted to slower nodes --- */

/* Give node a budget of max pages (the tree's creator, once). */
void tier_budget_set(struct memcg *mc, int node, uint64_t max)
{
	struct tier_budget *tb = &mc->tier[node];
	uint64_t delta = MAX(max / 50, 512u);

	tb->max = max;
	tb->high = max - max / 10;
	tb->low = tb->high > 2 * delta ? tb->high - delta : tb->high / 2;
	mc->tier_nodes |= 1ull << node;
}

/* Charge nr pages demoted to node if that stays within its max. */
bool tier_try_charge(struct uswap_runtime *rt, int node, unsigned nr)
{
	struct memcg *mc = rt->memcg;
	struct tier_budget *tb = &mc->tier[node];
	uint64_t cur = atomic_load(&tb->charged);

	do {
		if (cur + nr > tb->max)
			return false;
	} while (!atomic_compare_exchange_weak(&tb->charged, &cur, cur + nr));
	atomic_fetch_add(&mc->member[rt->member].demoted[node], nr);
	return true;
}

/* The pages charged to node are there now: note its peak. */
void tier_note_peak(struct uswap_runtime *rt, int node)
{
	struct tier_budget *tb = &rt->memcg->tier[node];
	uint64_t cur = atomic_load(&tb->charged), peak = atomic_load(&tb->peak);

	while (cur > peak &&
	       !atomic_compare_exchange_weak(&tb->peak, &peak, cur))
		;
}

static void tier_uncharge_member(struct memcg *mc, unsigned m, int node,
				 uint64_t nr)
{
	uint64_t old = atomic_fetch_sub(&mc->member[m].demoted[node], nr);

	assert(old >= nr);
	old = atomic_fetch_sub(&mc->tier[node].charged, nr);
	assert(old >= nr);
	(void)old;
}

void tier_uncharge(struct uswap_runtime *rt, int node, uint64_t nr)
{
	tier_uncharge_member(rt->memcg, rt->member, node, nr);
}

/* Drop nr pages of a folio whose flags are fl from its budget. */
void folio_uncharge(struct uswap_runtime *rt, uint32_t fl, uint64_t nr)
{
	if (fl & F_DEMOTED)
		tier_uncharge(rt, folio_node(fl), nr);
	else
		memcg_uncharge(rt, nr);
}

/*
 * A node whose demoted pages passed its high mark and that this process
 * holds pages of, or -1.  *reclaiming keeps the node until it is back at
 * low (hysteresis, as for the budget).
 */
int tier_over_high(struct uswap_runtime *rt, int *reclaiming)
{
	struct memcg *mc = rt->memcg;
	struct tree_member *me = &mc->member[rt->member];
	uint64_t nodes = mc->tier_nodes;

	if (*reclaiming >= 0) {
		struct tier_budget *tb = &mc->tier[*reclaiming];

		if (atomic_load(&tb->charged) > tb->low &&
		    atomic_load(&me->demoted[*reclaiming]))
			return *reclaiming;
		*reclaiming = -1;
	}
	while (nodes) {
		int n = __builtin_ctzll(nodes);

		nodes &= nodes - 1;
		if (atomic_load(&mc->tier[n].charged) > mc->tier[n].high &&
		    atomic_load(&me->demoted[n])) {
			*reclaiming = n;
			return n;
		}
	}
	return -1;
}

/* Room for nr more pages on the fast tier without reclaim (promotion). */
bool memcg_has_room(struct uswap_runtime *rt, unsigned nr)
{
	struct memcg *mc = rt->memcg;

	return atomic_load(&mc->resident) + nr <= mc->low &&
	       !atomic_load(&mc->waiters);
}

/* Move nr pages' charge from node's tier to the fast tier (promotion). */
void tier_promote_charge(struct uswap_runtime *rt, int node, unsigned nr)
{
	tier_uncharge(rt, node, nr);
	try_charge(rt, nr, true);
}

/* --- members --- */

/*
 * Before fork: a member for the child, charged what this process has
 * charged (its pool and demoted pages are the child's too, until they
 * diverge; its resident pages too when fork_share.c could not share them).
 * Returns its index, or -ENOSPC when the table is full.
 */
int memcg_fork_prepare(struct uswap_runtime *rt)
{
	struct memcg *mc = rt->memcg;
	uint64_t own = memcg_own_pages(rt), cur;
	int m = member_reserve(mc, rt->devset, own);
	uint64_t nodes = mc->tier_nodes;
	struct vmstat *stat;

	if (m < 0)
		return m;
	/* The child maps what this process marked shared (fork_share.c). */
	atomic_store(&mc->member[m].shared_held,
		     atomic_load(&mc->member[rt->member].shared_held));
	atomic_fetch_add(&mc->fork_gen, 1);
	cur = atomic_fetch_add(&mc->resident, own);
	charged_from(rt, cur, own);
	if (cur + own > mc->high)
		memcg_kick_reclaim(mc);
	/* Its counters start from nothing, but for the gauges it inherits. */
	stat = &mc->stat[m];
	atomic_store(&stat->ev[USWAP_MAX_BYTES],
		     atomic_load(&rt->stat->ev[USWAP_MAX_BYTES]));
	atomic_store(&stat->ev[USWAP_MANAGED_BYTES],
		     atomic_load(&rt->stat->ev[USWAP_MANAGED_BYTES]));
	if (rt->zswap)
		zswap_counters_fork(rt->zswap, stat->zswap);
	while (nodes) {
		int n = __builtin_ctzll(nodes);
		uint64_t d = atomic_load(&mc->member[rt->member].demoted[n]);

		nodes &= nodes - 1;
		atomic_store(&mc->member[m].demoted[n], d);
		atomic_fetch_add(&mc->tier[n].charged, d);
	}
	return m;
}

/*
 * In the child: become member `child`; or, with child < 0 (there was no
 * entry for it), count in the runtime's own block, not in the parent's.
 */
void memcg_fork_child(struct uswap_runtime *rt, int child)
{
	if (child < 0) {
		stat_clear(&rt->stat_own);
		stat_detach(rt);
		return;
	}
	member_enter(rt, (unsigned)child);
}

/* In the parent, once the child is past memcg_fork_child (or fork failed). */
bool memcg_fork_failed(struct uswap_runtime *rt, unsigned child)
{
	return atomic_load(&rt->memcg->member[child].state) == MEMBER_FORKING;
}

/*
 * Drop member m's remaining charges and free its entry.  Its counters go
 * into the tree's reaped totals unless its process wrote them out
 * (reported); `process`: its process ended without a word (not an exec,
 * not a runtime given up by a process that goes on), and counts as one.
 */
static void member_release(struct uswap_runtime *rt, unsigned m, bool process)
{
	struct memcg *mc = rt->memcg;
	uint64_t left = atomic_load(&mc->member[m].charged);
	uint64_t nodes = mc->tier_nodes;
	uint32_t gen, folded;

	if (left)
		uncharge_member(mc, m, left);
	while (nodes) {
		int n = __builtin_ctzll(nodes);

		nodes &= nodes - 1;
		left = atomic_load(&mc->member[m].demoted[n]);
		if (left)
			tier_uncharge_member(mc, m, n, left);
	}
	if (rt->stat == &mc->stat[m])
		stat_detach(rt);
	/* Once per occupancy, as a reaper that died half-way is taken over. */
	gen = atomic_load(&mc->member[m].gen);
	folded = atomic_load(&mc->folded_gen[m]);
	if (!atomic_load(&mc->member[m].reported) && folded != gen &&
	    atomic_compare_exchange_strong(&mc->folded_gen[m], &folded, gen)) {
		vmstat_fold(&mc->stat[m], &mc->reaped);
		if (process && atomic_load(&mc->member[m].pid))
			atomic_fetch_add(&mc->reaped.processes, 1);
	}
	atomic_fetch_sub(&mc->nr_live, 1);
	atomic_store(&mc->member[m].pid, 0);
	atomic_store(&mc->member[m].reaper, 0);
	atomic_store(&mc->member[m].shared_held, 0);
	atomic_store(&mc->member[m].state, MEMBER_FREE);
	share_clamp(mc);	/* what it mapped last went with it */
	memcg_wake_all(mc);
}

void memcg_member_release(struct uswap_runtime *rt, unsigned m)
{
	member_release(rt, m, false);
}

/* This process wrote its counters out: the reaper must not count them. */
void memcg_set_reported(struct uswap_runtime *rt)
{
	atomic_store(&rt->memcg->member[rt->member].reported, true);
}

/*
 * The reaper reads other processes' /proc files under proc_lock, and fork
 * takes it (memcg_fork_lock, last of the runtime's fork handlers): a
 * descriptor open at the fork would be the child's too, and no thread of
 * the child would ever close it (seen: a fork child ending with a
 * member's /proc/PID/maps open).
 */
static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;

void memcg_fork_lock(void)
{
	pthread_mutex_lock(&proc_lock);
}

void memcg_fork_unlock(bool child)
{
	if (child)
		pthread_mutex_init(&proc_lock, NULL);
	else
		pthread_mutex_unlock(&proc_lock);
}

/*
 * Does member m's process still run an image that maps this budget?  Not
 * if its pid is gone or now names another process (or a thread: a tid is
 * a pid to kill() and /proc), nor after an exec.  Caller holds proc_lock.
 */
static bool member_alive_locked(struct memcg *mc, unsigned m, int pid)
{
	size_t keep = strnlen(mc->name, sizeof(mc->name));
	char path[64], buf[4096];
	bool found = false;
	size_t have = 0;
	ssize_t n;
	int fd;

	lock_assert_held(&proc_lock);
	if (prim_kill(pid, 0) == -ESRCH)
		return false;
	if (start_time(pid) != atomic_load(&mc->member[m].start_time))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = prim_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd != -ENOENT;	/* cannot tell: assume alive */
	keep = keep ? keep - 1 : 0;	/* the start of a name a read cut */
	while (!found) {
		n = prim_read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		found = strstr(buf, mc->name) != NULL;
		if (have > keep) {
			memmove(buf, buf + have - keep, keep);
			have = keep;
		}
	}
	prim_close(fd);
	return found;
}

static bool member_alive(struct memcg *mc, unsigned m, int pid)
{
	bool alive;

	pthread_mutex_lock(&proc_lock);
	alive = member_alive_locked(mc, m, pid);
	pthread_mutex_unlock(&proc_lock);
	return alive;
}

/* Was member m's occupant of gen found gone by the tree's checker? */
static bool member_gone(struct memcg *mc, unsigned m, uint32_t gen)
{
	return atomic_load(&mc->member[m].gone_gen) == gen;
}

static bool devset_in_use(struct memcg *mc, uint64_t devset, unsigned skip)
{
	unsigned m;

	for (m = 0; m < TREE_MAX_MEMBERS; m++) {
		uint32_t gen = atomic_load(&mc->member[m].gen);
		unsigned st = atomic_load(&mc->member[m].state);

		if (m != skip && (st == MEMBER_LIVE || st == MEMBER_FORKING) &&
		    !(st == MEMBER_LIVE && member_gone(mc, m, gen)) &&
		    atomic_load(&mc->member[m].devset) == devset)
			return true;
	}
	return false;
}

/*
 * Is it this process's turn to check the members' processes in /proc?
 * One process of the tree does it each second, whichever comes first:
 * the checks cost tens of microseconds each, and every process checking
 * every member each second cost a tree of 60 idle processes a fifth of a
 * CPU.
 */
static bool check_turn(struct memcg *mc)
{
	uint64_t now = prim_now_us();
	uint64_t last = atomic_load(&mc->checked_us);

	return now - last >= 1000000 &&
	       atomic_compare_exchange_strong(&mc->checked_us, &last, now);
}

/*
 * Claim member m, found in state st in its occupancy gen, for reaping:
 * its reaper field names this process.  A reaper that died half-way
 * (kill -9 of a process whose reclaimer was reaping) is taken over:
 * reaping is idempotent.
 *
 * The entry may have changed hands since st and gen were read: its
 * process left the tree (memcg_member_release), or exec'd and was reaped,
 * and the entry went to a new child of a fork or to the exec'd image
 * itself (same pid), which is LIVE too.  Reaping it would free the uses
 * of slots the new occupant still holds, and it would free them again
 * itself, taking its parent's uses with them: the parent's slot would be
 * handed out while its data is still there.  So the claim stands only if
 * the entry is still in occupancy gen once it is REAPING (member_reserve
 * bumps gen before a new occupant can be LIVE); otherwise it is given
 * back.
 */
static bool reap_claim(struct memcg *mc, unsigned m, unsigned st,
		       uint32_t gen)
{
	int r = atomic_load(&mc->member[m].reaper);
	unsigned reaping = MEMBER_REAPING;

	if (r && prim_kill(r, 0) != -ESRCH)
		return false;		/* being reaped by a live process */
	/*
	 * REAPING with no reaper: the reaper has just finished (release
	 * clears the reaper before it frees the entry), and st was read
	 * while it worked.  Taking it over would release the member twice,
	 * and the tree would count one live member too few: then no member
	 * holds its "equal share", nobody reclaims, and faults wait forever
	 * (seen: five python3 workers at their max, nr_live 4).
	 */
	if (st == MEMBER_REAPING && !r)
		return false;
	if (!atomic_compare_exchange_strong(&mc->member[m].reaper, &r,
					    (int)getpid()))
		return false;
	if (st != MEMBER_REAPING &&
	    !atomic_compare_exchange_strong(&mc->member[m].state, &st,
					    MEMBER_REAPING)) {
		atomic_store(&mc->member[m].reaper, 0);
		return false;
	}
	if (atomic_load(&mc->member[m].gen) != gen) {
		atomic_compare_exchange_strong(&mc->member[m].state, &reaping,
					       st);
		atomic_store(&mc->member[m].reaper, 0);
		return false;
	}
	return true;
}

/*
 * Reap the members whose process is gone.  Called by idle reclaimers (not
 * on the fault path: it reads /proc with stdio).  Once a second, one
 * process of the tree (check_turn) checks the processes of the LIVE
 * members and marks those it finds gone (gone_gen); every process reaps
 * the gone members it can.  A member is reaped once: the reaper claims it
 * first (reap_claim), and released once.  Its slots can only be freed by a process that uses
 * the same devices; one that does not leaves the member to them, unless
 * none is left (the devices went with the last of them).
 */
static void reap_gone(struct uswap_runtime *rt,
		      void (*reap)(struct uswap_runtime *, unsigned), bool now)
{
	struct memcg *mc = rt->memcg;
	bool checker = now || check_turn(mc);
	unsigned m;

	for (m = 0; m < TREE_MAX_MEMBERS; m++) {
		uint32_t gen = atomic_load(&mc->member[m].gen);
		unsigned st = atomic_load(&mc->member[m].state);
		int pid = atomic_load(&mc->member[m].pid);
		uint64_t devset = atomic_load(&mc->member[m].devset);
		bool mine = devset == rt->devset;

		if (m == rt->member || !pid ||
		    (st != MEMBER_LIVE && st != MEMBER_EXECED &&
		     st != MEMBER_REAPING))
			continue;
		if (st == MEMBER_LIVE && !member_gone(mc, m, gen)) {
			if (!checker || member_alive(mc, m, pid))
				continue;
			/*
			 * A verdict on occupant gen: if the entry changed
			 * hands since gen was read, gen is gone anyway.
			 */
			atomic_store(&mc->member[m].gone_gen, gen);
		}
		if (!mine && devset_in_use(mc, devset, m))
			continue;
		if (!reap_claim(mc, m, st, gen))
			continue;
		if (mine)
			reap(rt, m);
		member_release(rt, m, st != MEMBER_EXECED);
	}
}

void memcg_reap_gone(struct uswap_runtime *rt,
		     void (*reap)(struct uswap_runtime *, unsigned))
{
	reap_gone(rt, reap, false);
}

/*
 * Reap now, checking every member (this process is about to write its
 * final counters, with the tree's reaped ones: the children it waited
 * for must be in them).
 */
void memcg_reap_now(struct uswap_runtime *rt)
{
	reap_gone(rt, swap_reap_member, true);
}
