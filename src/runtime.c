// SPDX-License-Identifier: MIT
/*
 * runtime.c - a runtime's life: creation from options, its threads, fork,
 * destruction.
 *
 * fork.  The kernel gives a child none of its parent's userfaultfd
 * registrations: without them, the child would read zeros where its
 * parent's memory is swapped out.  So the child carries on its copy of
 * the runtime with a userfaultfd of its own, as the kernel's fork copies
 * swap entries into the child's page tables:
 *
 *  - before fork, the parent settles every folio (nothing in flight),
 *    pauses the pool's writeback, charges its resident folios to the tree
 *    as shared with the child (fork_share.c), and gives the child a member
 *    in the budget, charged the rest of what the parent holds (its copy of
 *    the pool, its demoted folios); every slot the parent's
 *    regions name gets one more use, held by that member (the slot maps
 *    are shared memory, swapon.c);
 *  - in the child, the regions are registered again on a new userfaultfd,
 *    clean resident folios drop their slots (their write-protection did
 *    not survive fork), the shared ones are write-protected again, and
 *    fresh threads serve faults and reclaim.  The
 *    pool is the child's copy: it names the same slots;
 *  - the parent waits until the child has taken its member (or fork
 *    failed: the member is then released), and goes on.
 *
 * From there the two diverge copy-on-write: each frees its own uses of
 * the slots, and a slot is free when neither holds it.  When the budget's
 * member table is full, or the child cannot start its runtime, the child
 * reads all its swapped memory in instead and runs without a runtime
 * (counted as fork_materialized).
 *
 * Until the child's fault threads run, nothing may touch the program's
 * managed memory: a swapped-out page there would wait for ever (and
 * before the regions are registered again it would read as zeros).  The
 * program's allocator may keep its heap there (jemalloc's extents are
 * managed), and it may be locked by its own fork handlers.  So the fork
 * handlers, and every thread of uswap's, allocate from uswap's own memory
 * (slab.c) and run on stacks of uswap's own: the program's malloc is
 * never called on these paths, nor by the C library on their behalf
 * (pthread_create's DTV) where the preload library serves them.  The
 * handlers are registered as early as possible (the preload's first
 * mmap, before the program's allocator has initialised), so that an
 * allocator's own handlers run around them: its prepare before ours,
 * its child handler after ours, once the fault threads serve faults.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base.h"
#include "crash.h"
#include "demote.h"
#include "fdtable.h"
#include "lockdep.h"
#include "log.h"
#include "memcontrol.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "swap.h"
#include "thread.h"
#include "threadcpu.h"
#include "uswap.h"
#include "zswap.h"
#include "trace.h"
#include "options.h"
#include "slab.h"

#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON	(1 << 14)
#endif

#define MAX_RUNTIMES	16

static pthread_mutex_t runtimes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uswap_runtime *runtimes[MAX_RUNTIMES];
/* Runtimes from the start of their creation to the end of their destroy
   (or failed creation), under runtimes_lock. */
static unsigned nr_live;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int fork_pipe[2] = { -1, -1 };
static int fork_member[MAX_RUNTIMES];	/* the child's member, or -1 */

static int start_workers(struct uswap_runtime *rt);
static void stop_threads(struct uswap_runtime *rt);
static void threads_forget_child(void);

/* The pipe that wakes the fault threads at shutdown, high and recorded. */
static int wake_pipe_open(struct uswap_runtime *rt)
{
	int err = prim_pipe2(rt->wake_pipe, O_CLOEXEC | O_NONBLOCK);

	if (err)
		return err;
	rt->wake_pipe[0] = fd_install(rt->wake_pipe[0], FD_WAKE);
	rt->wake_pipe[1] = fd_install(rt->wake_pipe[1], FD_WAKE);
	return 0;
}

static void wake_pipe_close(struct uswap_runtime *rt)
{
	prim_fd_close(rt->wake_pipe[0]);
	prim_fd_close(rt->wake_pipe[1]);
}

/*
 * A runtime of this process is gone (destroyed, failed to start, or left
 * behind in a fork child): after the last one, the pidfd that prim.c
 * keeps is closed too.  Caller holds runtimes_lock.
 */
static void live_put_locked(void)
{
	lock_assert_held(&runtimes_lock);
	assert(nr_live > 0);
	if (--nr_live == 0)
		prim_self_pidfd_close();
}

/* Give member m (the child) one use of every slot rt's regions name. */
static void share_slots(struct uswap_runtime *rt, unsigned m)
{
	unsigned n;
	uint32_t p;

	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];

		for (p = 0; p < r->nr_pages; p++)
			if (r->swp[p])
				swap_dup_for(rt, r->swp[p], m);
	}
}

static void fork_prepare(void)
{
	unsigned i;

	slab_self_enter();
	pthread_mutex_lock(&runtimes_lock);
	for (i = 0; i < MAX_RUNTIMES; i++) {
		struct uswap_runtime *rt = runtimes[i];

		fork_member[i] = -1;
		if (!rt || rt->defunct)
			continue;
		settle_range(rt, 0, UINTPTR_MAX);
		debug_check_swap(rt, "fork");
		if (rt->zswap)
			zswap_fork_prepare(rt->zswap);
		fork_share_parent(rt);
		fork_member[i] = memcg_fork_prepare(rt);
		if (fork_member[i] >= 0)
			share_slots(rt, (unsigned)fork_member[i]);
	}
	/* (Registered before any runtime exists: then nothing to wait for.) */
	if (!nr_live || prim_pipe2(fork_pipe, O_CLOEXEC))
		fork_pipe[0] = fork_pipe[1] = -1;
	memcg_fork_lock();
	slab_self_leave();
}

static void fork_parent(void)
{
	unsigned i;
	char c;

	slab_self_enter();
	memcg_fork_unlock(false);
	if (fork_pipe[1] >= 0) {
		/* EOF when the child has its members (or when fork failed). */
		prim_close(fork_pipe[1]);
		while (prim_read(fork_pipe[0], &c, 1) == -EINTR)
			;
		prim_close(fork_pipe[0]);
	}
	for (i = 0; i < MAX_RUNTIMES; i++) {
		struct uswap_runtime *rt = runtimes[i];

		if (!rt || rt->defunct)
			continue;
		if (fork_member[i] >= 0 &&
		    memcg_fork_failed(rt, (unsigned)fork_member[i])) {
			swap_reap_member(rt, (unsigned)fork_member[i]);
			memcg_member_release(rt, (unsigned)fork_member[i]);
		}
		if (rt->zswap)
			zswap_fork_done(rt->zswap);
		settle_done(rt);
	}
	pthread_mutex_unlock(&runtimes_lock);
	slab_self_leave();
}

/*
 * Read every swapped page of rt into this (child) process's memory, from
 * the pool or the device, run by run of consecutive entries.
 */
static uint64_t materialize(struct uswap_runtime *rt)
{
	uint64_t pages = 0;
	unsigned n, pooled;

	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];
		uint32_t p = 0;

		/* Not in the child, or zeros there (fork advice). */
		if (r->vm_flags & (R_DONTFORK | R_WIPEONFORK))
			continue;
		while (p < r->nr_pages) {
			uintptr_t addr = r->start + ((uintptr_t)p << PAGE_SHIFT);
			swp_entry_t e = r->swp[p];
			uint32_t run = 1;
			struct folio *f;

			if (!e) {
				p++;
				continue;
			}
			f = &r->folios[folio_index(r, addr)];
			if (folio_state(atomic_load(&f->flags)) == FOLIO_RESIDENT) {
				p++;	/* clean: the pages are here already */
				continue;
			}
			while (p + run < r->nr_pages && run < MAX_FOLIO_PAGES &&
			       r->swp[p + run] == e + run)
				run++;
			/* No ring: the parent's rings are shared memory. */
			if (swap_read_entries(rt, rt->fork_zctx, NULL, &r->swp[p],
					      run, (void *)addr, &pooled))
				uswap_log("fork: cannot read swapped memory at %p into the child",
					  (void *)addr);
			pages += run;
			p += run;
		}
	}
	return pages;
}

/*
 * Free the parent's worker states, the child's copies: the fault threads'
 * and the reclaimer's (their rings are the parent's too; the child's
 * descriptors and mappings of them go).  Their threads did not survive
 * fork.
 */
static void child_forget_workers(struct uswap_runtime *rt)
{
	unsigned k;

	for (k = 0; k < rt->nr_fault_threads; k++)
		fault_thread_free(rt->fault_threads[k]);
	rt->nr_fault_threads = 0;
	reclaimer_free(rt->reclaimer, false);
	rt->reclaimer = NULL;
	rt->reclaim_started = false;
	rt->watchdog_started = false;
}

/*
 * The child's runtime cannot go on: read its swapped memory in, give up
 * its member (if it has one) and every use it holds, and leave the
 * runtime defunct (the preload library starts a new one on demand).
 */
static void child_materialize(struct uswap_runtime *rt, int member)
{
	uint64_t pages;
	unsigned k;

	pages = materialize(rt);
	count_event(rt, USWAP_FORK_MATERIALIZED, pages);
	if (pages && (rt->opt.flags & USWAP_OPT_VERBOSE))
		uswap_log("fork: %llu swapped pages made resident in the child",
			  (unsigned long long)pages);
	if (member >= 0) {
		swap_reap_member(rt, (unsigned)member);
		memcg_member_release(rt, (unsigned)member);
	}
	child_forget_workers(rt);
	prim_fd_close(rt->uffd);
	fork_share_close(rt);
	wake_pipe_close(rt);
	/* The devices are shared with the parent: close our descriptors only. */
	for (k = 0; k < rt->nr_swap; k++)
		if (rt->swap[k].fd >= 0)
			prim_fd_close(rt->swap[k].fd);
	rt->nr_regions = 0;
	rt->defunct = true;
}

/*
 * Clean resident folios: the child's pages are its own copies now, and
 * their write-protection did not survive fork, so their slots cannot stay
 * exact copies.  The child gives up its use of them.
 */
static void child_drop_clean(struct uswap_runtime *rt)
{
	unsigned n;

	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];
		uint32_t i, p, first;

		r->busy_start = r->busy_end = 0;
		for (i = 0; i < r->nr_folios; i++) {
			struct folio *f = &r->folios[i];
			uint32_t fl = atomic_load(&f->flags);
			uintptr_t addr;
			size_t len;

			if (folio_state(fl) != FOLIO_RESIDENT)
				continue;
			atomic_store(&f->flags, fl & ~(F_CLEAN | F_ARMED));
			folio_range(r, i, &addr, &len, &first);
			for (p = first; p < first + (len >> PAGE_SHIFT); p++) {
				if (!r->swp[p])
					continue;
				swap_free_slots(rt, r->swp[p], 1);
				r->swp[p] = 0;
			}
		}
	}
}

/*
 * Fork advice (mmap.c): a region advised MADV_DONTFORK is not in the child
 * at all, one advised MADV_WIPEONFORK is there but never touched.  The
 * child lets go of what its copy of their tables holds (its uses of their
 * slots, its charges for them) and reads nothing.
 */
static void child_drop_unforked(struct uswap_runtime *rt)
{
	unsigned n = 0;

	while (n < rt->nr_regions) {
		struct region *r = rt->regions[n];

		if (r->vm_flags & R_DONTFORK) {
			region_drop_range(r, r->start, r->end, true);
			region_cut(rt, r, r->start, r->end);	/* no piece left */
			continue;
		}
		if (r->vm_flags & R_WIPEONFORK)
			region_drop_range(r, r->start, r->end, false);
		n++;
	}
}

/* The child's runtime: a userfaultfd and threads of its own. */
static int child_restart(struct uswap_runtime *rt)
{
	pthread_rwlockattr_t attr;
	uint64_t managed = 0;
	unsigned n;
	int err;

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&rt->op_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	memset(rt->swapstat, 0, sizeof(rt->swapstat));
	if (rt->zswap) {
		err = zswap_fork_child(rt->zswap);
		if (err)
			return err;
	}
	/* Alone in the child, but the table's functions assert the lock. */
	pthread_rwlock_wrlock(&rt->op_lock);
	child_drop_unforked(rt);
	child_drop_clean(rt);
	pthread_rwlock_unlock(&rt->op_lock);
	for (n = 0; n < rt->nr_regions; n++)
		managed += rt->regions[n]->end - rt->regions[n]->start;
	atomic_store(&rt->stat->ev[USWAP_MANAGED_BYTES], managed);

	prim_fd_close(rt->uffd);
	err = prim_uffd_open(rt->features, rt->opt.uffd_features_off,
			     &rt->features, &rt->uffd);
	if (err)
		return err;
	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];

		err = prim_uffd_register(rt->uffd, r->start, r->end - r->start,
					 rt->have_wp);
		if (err)
			return err;
	}
	err = fork_share_child(rt);
	if (err)
		return err;
	pthread_rwlock_wrlock(&rt->op_lock);
	mlock_fork_child(rt);
	pthread_rwlock_unlock(&rt->op_lock);
	wake_pipe_close(rt);
	err = wake_pipe_open(rt);
	if (err)
		return err;
	child_forget_workers(rt);
	err = start_workers(rt);
	if (err)
		stop_threads(rt);	/* those that started */
	return err;
}

/* An error's name: strerror() may load a message catalogue (malloc). */
static const char *err_name(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "an unknown error";
}

static void fork_child(void)
{
	unsigned i;

	slab_self_enter();
	threads_forget_child();
	memcg_fork_unlock(true);
	thread_cpu_fork_child();
	for (i = 0; i < MAX_RUNTIMES; i++)
		if (runtimes[i] && !runtimes[i]->defunct)
			memcg_fork_child(runtimes[i], fork_member[i]);
	/* The parent may go on: every member is ours now. */
	if (fork_pipe[1] >= 0)
		prim_close(fork_pipe[1]);
	if (fork_pipe[0] >= 0)
		prim_close(fork_pipe[0]);
	fork_pipe[0] = fork_pipe[1] = -1;

	for (i = 0; i < MAX_RUNTIMES; i++) {
		struct uswap_runtime *rt = runtimes[i];
		int err = -ENOSPC;

		if (!rt || rt->defunct)
			continue;
		fd_owner_set(rt);
		if (fork_member[i] >= 0)
			err = child_restart(rt);
		fd_owner_set(NULL);
		if (!err)
			continue;
		uswap_log("fork: the child cannot keep its memory managed (%s): reading it in",
			  err_name(-err));
		child_materialize(rt, fork_member[i]);
		runtimes[i] = NULL;
		live_put_locked();
	}
	pthread_mutex_init(&runtimes_lock, NULL);
	slab_self_leave();
}

/*
 * The slab's handlers first, then the descriptor table's: their prepare
 * handlers then run after ours, their child handlers before.
 */
static void atfork_register(void)
{
	slab_atfork_register();
	slab_self_enter();	/* glibc may allocate to record them */
	fd_table_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	slab_self_leave();
}

void runtime_atfork_init(void)
{
	pthread_once(&atfork_once, atfork_register);
}

static int runtime_list_add(struct uswap_runtime *rt)
{
	unsigned i;

	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&runtimes_lock);
	for (i = 0; i < MAX_RUNTIMES; i++)
		if (!runtimes[i]) {
			runtimes[i] = rt;
			pthread_mutex_unlock(&runtimes_lock);
			return 0;
		}
	pthread_mutex_unlock(&runtimes_lock);
	return -EMFILE;
}

static void runtime_list_del(struct uswap_runtime *rt)
{
	unsigned i;

	pthread_mutex_lock(&runtimes_lock);
	for (i = 0; i < MAX_RUNTIMES; i++)
		if (runtimes[i] == rt)
			runtimes[i] = NULL;
	pthread_mutex_unlock(&runtimes_lock);
}

#define THREAD_STACK	(256 * 1024)

/*
 * A thread of uswap's, in the page below its own stack (prim_alloc_stack:
 * never managed memory, never the program's allocator; and a fork child
 * reuses none of the C library's cached stacks, whose DTVs the program's
 * allocator may have made).  Running threads are on a list, under
 * threads_lock, so that join_thread() finds the stack to free and a fork
 * child frees its copies of its parent's.
 */
struct uswap_thread {
	void *(*fn)(void *);
	void *arg;
	char name[16];
	const void *owner;	/* its runtime (fd_owner_get of its maker) */
	size_t stack_len;
	pthread_t tid;
	_Atomic uint32_t running;	/* it reached its function */
	struct uswap_thread *next;
};

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uswap_thread *threads;

static int add_tls(struct dl_phdr_info *info, size_t size, void *data)
{
	size_t *total = data;
	unsigned k;

	(void)size;
	for (k = 0; k < info->dlpi_phnum; k++)
		if (info->dlpi_phdr[k].p_type == PT_TLS)
			*total += info->dlpi_phdr[k].p_memsz +
				  info->dlpi_phdr[k].p_align;
	return 0;
}

/*
 * A stack the caller gives holds the thread's static TLS too, at its top:
 * every loaded module's TLS block (ThreadSanitizer's is 900 KiB), the C
 * library's descriptor and its surplus, which modules loaded later use
 * (64 KiB covers both).  Measured once, by the first runtime: a fork
 * child must not walk the C library's list of modules, whose entries for
 * those loaded later came from the program's allocator, perhaps in
 * managed memory, before its fault threads run.
 */
static size_t thread_stack_len(void)
{
	static _Atomic size_t len;
	size_t tls = 64 * 1024, l = atomic_load(&len);

	if (l)
		return l;
	dl_iterate_phdr(add_tls, &tls);
	l = THREAD_STACK + ((tls + PAGE_SIZE - 1) & PAGE_MASK);
	atomic_store(&len, l);
	return l;
}

/*
 * The new thread names itself (prctl: no file to open in the program),
 * and takes a descriptor table of its own (fdtable.c).
 */
static void *thread_trampoline(void *p)
{
	struct uswap_thread *t = p;

	slab_self_enter();	/* for its whole life */
	prim_set_thread_name(t->name);
	crash_thread_mark(t->name);	/* a crash here is uswap's (crash.c) */
	fd_thread_private(t->owner);
	atomic_store(&t->running, 1);
	prim_futex_wake_all(&t->running);
	return t->fn(t->arg);
}

/*
 * Start a thread with every signal blocked: signals are the program's.  Its
 * name (at most 15 characters) is what top -H, ps -L and perf show.
 */
int start_thread(pthread_t *tid, const char *name, void *(*fn)(void *),
		 void *arg)
{
	size_t len = thread_stack_len() + PAGE_SIZE;
	struct uswap_thread *t = prim_alloc_stack(len);
	sigset_t all, old;
	pthread_attr_t attr;
	unsigned k;
	int err;

	if (!t)
		return -ENOMEM;
	t->stack_len = len;
	t->fn = fn;
	t->arg = arg;
	t->owner = fd_owner_get();
	snprintf(t->name, sizeof(t->name), "%s", name);
	sigfillset(&all);
	crash_sigmask(&all);		/* but its own faults (crash.c) */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	/* The stack proper starts above t's page (a sanitizer clears it). */
	pthread_attr_setstack(&attr, (char *)t + PAGE_SIZE, len - PAGE_SIZE);
	slab_self_enter();	/* pthread_create allocates the thread's DTV */
	err = pthread_create(&t->tid, &attr, thread_trampoline, t);
	slab_self_leave();
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		prim_free_stack(t, len);
		return -err;
	}
	*tid = t->tid;
	pthread_mutex_lock(&threads_lock);
	t->next = threads;
	threads = t;
	pthread_mutex_unlock(&threads_lock);
	/*
	 * Until it runs: a thread still starting may hold a lock of the C
	 * library's or a sanitizer's (its allocator, as a thread sets itself
	 * up), and a fork meanwhile would leave that lock held for ever in
	 * the child, whose own threads then never start.  At most 2 s: in a
	 * fork child where such a lock was left held already, the thread
	 * cannot start, and the fork handler must not wait for it for ever
	 * (a child that never faults, or execs, does not need it).
	 */
	for (k = 0; k < 20 && !atomic_load(&t->running); k++)
		prim_futex_wait(&t->running, 0, 100);
	return 0;
}

void join_thread(pthread_t tid)
{
	struct uswap_thread **pp, *t = NULL;

	pthread_join(tid, NULL);
	pthread_mutex_lock(&threads_lock);
	for (pp = &threads; *pp; pp = &(*pp)->next)
		if (pthread_equal((*pp)->tid, tid)) {
			t = *pp;
			*pp = t->next;
			break;
		}
	pthread_mutex_unlock(&threads_lock);
	if (t)
		prim_free_stack(t, t->stack_len);
}

/*
 * In a fork child: none of the threads on the list exists here (the C
 * library forgot them too: their stacks were ours to free).
 */
static void threads_forget_child(void)
{
	struct uswap_thread *t = threads, *next;

	pthread_mutex_init(&threads_lock, NULL);
	threads = NULL;
	for (; t; t = next) {
		next = t->next;
		prim_free_stack(t, t->stack_len);
	}
}

static void stop_threads(struct uswap_runtime *rt)
{
	unsigned i;

	rt->stopping = true;
	prim_fd_poke(rt->wake_pipe[1]);
	memcg_wake_all(rt->memcg);
	watchdog_stop(rt);	/* before it starts a fault thread again */
	for (i = 0; i < rt->nr_fault_threads; i++) {
		join_thread(rt->fault_tids[i]);
		fault_thread_free(rt->fault_threads[i]);
	}
	rt->nr_fault_threads = 0;
	if (rt->reclaim_started)
		join_thread(rt->reclaim_thread);
	rt->reclaim_started = false;
	reclaimer_free(rt->reclaimer, true);
	rt->reclaimer = NULL;
}

/* The fault threads and the reclaimer. */
static int start_workers(struct uswap_runtime *rt)
{
	size_t fsize = (size_t)1 << rt->folio_shift;
	unsigned i;
	int err;

	for (i = 0; i < rt->opt.fault_threads && i < ARRAY_SIZE(rt->fault_tids);
	     i++) {
		rt->fault_threads[i] = fault_thread_alloc(rt,
				(char *)rt->thread_bufs + i * fsize);
		if (!rt->fault_threads[i])
			return -ENOMEM;
		err = start_thread(&rt->fault_tids[i], "uswap-fault",
				   fault_thread_main, rt->fault_threads[i]);
		if (err) {
			fault_thread_free(rt->fault_threads[i]);
			return err;
		}
		rt->nr_fault_threads++;
	}
	err = watchdog_start(rt);
	if (err)
		return err;
	rt->reclaimer = reclaimer_alloc(rt);
	if (!rt->reclaimer)
		return -ENOMEM;
	err = start_thread(&rt->reclaim_thread, "uswap-reclaim",
			   reclaim_thread_main, rt->reclaimer);
	if (err)
		return err;
	rt->reclaim_started = true;
	return 0;
}

static unsigned ilog2(uint64_t v)
{
	unsigned s = 0;

	while (v > 1) {
		v >>= 1;
		s++;
	}
	return s;
}

/* The compressed pool, when the options ask for one. */
static int zswap_start(struct uswap_runtime *rt)
{
	struct zswap_params p = {
		.unit = rt->opt.zswap_unit != USWAP_ZSWAP_UNIT_PAGE,
		.max_bytes = rt->opt.max / 100 * rt->opt.zswap_max_pct,
		.accept_pct = rt->opt.zswap_accept_pct,
		.threads = rt->opt.zswap_threads,
		.max_unit = rt->opt.folio_size,
		.store_incompressible = rt->opt.flags &
					USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE,
		/* Uncharged (--zswap-charge off): the pool counts its own. */
		.account = rt->opt.flags & USWAP_OPT_ZSWAP_NO_CHARGE ?
			   NULL : memcg_account_pool,
		.account_arg = rt,
		.counters = rt->stat->zswap,	/* the member's: they outlive us */
	};
	struct swap_info *devs[SWAP_MAX_TYPES];
	char why[160];
	unsigned k;
	int err;

	if (!rt->opt.zswap[0] || !strcmp(rt->opt.zswap, "off"))
		return 0;
	if (comp_parse(rt->opt.zswap, &p.alg, &p.level, why, sizeof(why))) {
		uswap_log("zswap: %s", why);
		return -EINVAL;
	}
	for (k = 0; k < rt->nr_swap; k++)
		devs[k] = &rt->swap[k];
	p.free_slots = swap_release_slots;
	p.free_arg = rt;
	err = zswap_create(&rt->zswap, &p, devs, rt->nr_swap);
	if (err) {
		uswap_log("cannot create the compressed pool: %s", strerror(-err));
		return err;
	}
	rt->fork_zctx = zswap_ctx_create(rt->zswap);
	if (!rt->fork_zctx) {
		zswap_destroy(rt->zswap);
		rt->zswap = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void zswap_stop(struct uswap_runtime *rt)
{
	if (!rt->zswap)
		return;
	zswap_ctx_destroy(rt->zswap, rt->fork_zctx);
	zswap_destroy(rt->zswap);
	rt->zswap = NULL;
	rt->fork_zctx = NULL;
}

static int runtime_create(const struct uswap_options *opt,
			  struct uswap_runtime **rtp)
{
	struct uswap_runtime *rt;
	pthread_rwlockattr_t attr;
	char err_msg[256];
	size_t fsize;
	int err;

	pthread_mutex_lock(&runtimes_lock);
	nr_live++;
	pthread_mutex_unlock(&runtimes_lock);
	thread_cpu_register();		/* the caller: the program's first */
	rt = prim_alloc(sizeof(*rt));
	if (!rt) {
		err = -ENOMEM;
		goto err_put;
	}
	fd_owner_set(rt);	/* what is installed now is rt's */
	if (opt)
		rt->opt = *opt;
	else
		uswap_options_init(&rt->opt);
	err = options_apply_defaults(&rt->opt, err_msg, sizeof(err_msg));
	if (err) {
		uswap_log("%s", err_msg);
		goto err_free;
	}
	rt->folio_shift = ilog2(rt->opt.folio_size);
	fsize = (size_t)1 << rt->folio_shift;

	err = prim_uffd_open(UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_POISON |
			     UFFD_FEATURE_THREAD_ID | PRIM_UFFD_FEATURE_MOVE,
			     rt->opt.uffd_features_off, &rt->features, &rt->uffd);
	if (err)
		goto err_free;
	rt->have_wp = rt->features & UFFD_FEATURE_PAGEFAULT_FLAG_WP;
	rt->pagemap_fd = -1;
	fork_share_open(rt);
	prim_self_pidfd_open();
	if (!rt->have_wp)
		uswap_log("userfaultfd write-protect is unavailable: memory cannot be evicted safely and stays resident");

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&rt->op_lock, &attr);
	pthread_rwlockattr_destroy(&attr);

	err = region_table_init(rt);
	if (err)
		goto err_close_uffd;
	err = memcg_create(rt, rt->opt.max, rt->opt.high,
			   (unsigned)(fsize >> PAGE_SHIFT));
	if (err)
		goto err_regions;

	err = swapon_all(rt);
	if (err)
		goto err_memcg;
	err = zswap_start(rt);
	if (err)
		goto err_swap_file;
	err = tiering_setup(rt);
	if (err)
		goto err_tiering;

	rt->zero_buf = prim_mmap(NULL, (size_t)1 << MAX_FOLIO_SHIFT, PROT_READ,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
	rt->thread_bufs = prim_alloc(fsize * rt->opt.fault_threads);
	if (rt->zero_buf == MAP_FAILED || !rt->thread_bufs) {
		err = -ENOMEM;
		goto err_bufs;
	}
	err = wake_pipe_open(rt);
	if (err)
		goto err_bufs;

	err = start_workers(rt);
	if (err)
		goto err_threads;
	err = runtime_list_add(rt);
	if (err)
		goto err_threads;
	atomic_store(&rt->stat->ev[USWAP_MAX_BYTES], rt->opt.max);
	fd_owner_set(NULL);
	*rtp = rt;
	return 0;

err_threads:
	stop_threads(rt);
	wake_pipe_close(rt);
err_bufs:
	if (rt->zero_buf != MAP_FAILED && rt->zero_buf)
		prim_munmap(rt->zero_buf, (size_t)1 << MAX_FOLIO_SHIFT);
	prim_free(rt->thread_bufs, fsize * rt->opt.fault_threads);
	tiering_destroy(rt);
err_tiering:
	zswap_stop(rt);
err_swap_file:
	swapoff_all(rt);
err_memcg:
	memcg_destroy(rt);
err_regions:
	region_table_destroy(rt);
err_close_uffd:
	pthread_rwlock_destroy(&rt->op_lock);
	fork_share_close(rt);
	prim_fd_close(rt->uffd);
err_free:
	prim_free(rt, sizeof(*rt));
err_put:
	fd_owner_set(NULL);
	pthread_mutex_lock(&runtimes_lock);
	live_put_locked();
	pthread_mutex_unlock(&runtimes_lock);
	return err;
}

/*
 * What creating a runtime allocates, and what the C library allocates for
 * it (its threads' DTVs), is uswap's own (slab.h); the program's
 * allocator may be the caller (its first mmap) and hold its locks.
 */
EXPORT int uswap_runtime_create(const struct uswap_options *opt,
				struct uswap_runtime **rtp)
{
	int err;

	runtime_atfork_init();
	trace_init();
	slab_self_enter();
	err = runtime_create(opt, rtp);
	slab_self_leave();
	return err;
}

EXPORT int uswap_runtime_usable(const struct uswap_runtime *rt)
{
	return rt && !rt->defunct;
}

EXPORT int uswap_runtime_tree_fd(struct uswap_runtime *rt)
{
	return rt && !rt->defunct ? memcg_tree_fd(rt) : -EINVAL;
}

/*
 * Take rt off the list that fork handles and stop its threads: nothing
 * but the caller runs it from here (destroy, detach.c).
 */
void runtime_quiesce(struct uswap_runtime *rt)
{
	runtime_list_del(rt);
	stop_threads(rt);
}

/*
 * The rest of destroying a quiesced runtime: its regions leave the tables,
 * then every descriptor, mapping and member it has goes.  With `destroy`
 * the regions' memory is unmapped and op_lock destroyed (the caller frees
 * rt); without (detach.c), the memory stays mapped, unmanaged, and must
 * hold no swapped page, and rt stays a runtime with no region whose lock
 * a thread of the program may still take.
 */
void runtime_release(struct uswap_runtime *rt, bool destroy)
{
	size_t fsize = (size_t)1 << rt->folio_shift;

	pthread_rwlock_wrlock(&rt->op_lock);
	memcg_share_lock(rt->memcg);	/* fork_share.c: look, then unmap */
	while (rt->nr_regions) {
		struct region *r = rt->regions[--rt->nr_regions];

		region_drop_range(r, r->start, r->end, true);
		if (destroy)
			prim_munmap((void *)r->start, r->end - r->start);
		region_put(r);
	}
	memcg_share_unlock(rt->memcg);
	pthread_rwlock_unlock(&rt->op_lock);
	fork_share_close(rt);
	wake_pipe_close(rt);
	prim_fd_close(rt->uffd);
	rt->uffd = -1;
	prim_munmap(rt->zero_buf, (size_t)1 << MAX_FOLIO_SHIFT);
	prim_free(rt->thread_bufs, fsize * rt->opt.fault_threads);
	tiering_destroy(rt);
	debug_check_pool(rt, "runtime release");
	debug_check_swap(rt, "runtime release");
	zswap_stop(rt);
	swapoff_all(rt);
	memcg_destroy(rt);
	if (destroy) {
		region_table_destroy(rt);
		mlock_destroy(rt);
		pthread_rwlock_destroy(&rt->op_lock);
	}
	pthread_mutex_lock(&runtimes_lock);
	live_put_locked();
	pthread_mutex_unlock(&runtimes_lock);
}

EXPORT void uswap_runtime_destroy(struct uswap_runtime *rt)
{
	if (!rt)
		return;
	if (rt->defunct)
		return;		/* a child's copy: nothing of it is ours */
	runtime_quiesce(rt);
	runtime_release(rt, true);
	prim_free(rt, sizeof(*rt));
}
