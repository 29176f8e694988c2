// SPDX-License-Identifier: MIT
/*
 * hold.c - a process's swapped memory brought back and kept resident, for
 * those who read it from outside: a core dump, a debugger.
 *
 * A folio uswap evicted is gone from the address space.  The process
 * itself brings it back by touching it (a userfaultfd fault, served by a
 * fault thread), but a reader from outside cannot: the kernel reads
 * another process's memory (/proc/PID/mem, PTRACE_PEEKDATA) and writes a
 * core dump without the retry a userfaultfd fault needs, so /proc/PID/mem
 * and ptrace get EIO there and a core dump gets zeros.  (process_vm_readv
 * faults with a retry: it works, served as the process's own faults.)
 * A debugger also stops every thread, the fault threads with the rest.
 * So the memory must be resident before such a reader looks, and stay so:
 *
 *   hold      rt->hold is set: the reclaimer evicts nothing more
 *             (hold_reclaim, at the top of its loop and between batches)
 *             and a fault that would pass max is admitted at once
 *             (hold_admit, in memcg_charge: counted as hold_overrun), so
 *             that bringing everything back cannot wait for room;
 *   bring in  the region table is scanned (op_lock taken for reading
 *             without waiting, hold_scan) for runs of folios not resident,
 *             and each run is faulted in with MADV_POPULATE_READ (or
 *             _WRITE, to take the write-protection off too), which the
 *             fault threads serve as any fault; the scan is repeated until
 *             it finds nothing, since a folio the reclaimer was evicting
 *             when the hold began goes out after the first scan;
 *   release   rt->hold cleared: reclaim takes the budget back to high.
 *
 * Not when a tracer attaches (TracerPid in /proc/self/status): by then
 * the tracer has stopped every thread, the fault threads with the rest,
 * and nothing can be brought back.  So the memory is held on demand,
 * before the debugger attaches (uswap debug), and before a core dump.
 *
 * Two callers.  The process itself (uswap_runtime_hold): the preload
 * library's handler of a signal that is about to dump core (so it runs in
 * a signal handler: nothing here allocates or waits for a lock without a
 * bound).  Another process (uswap_hold_pid, uswap debug): it opens the
 * tree's budget through /proc/PID/fd, sets a request in the process's
 * member entry and kicks the reclaimers; the process's reclaimer serves
 * it (hold_reclaim), writes the result, and wakes the requester on a
 * futex.  The hold ends when the requester asks, or when the reclaimer
 * finds it gone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "memcontrol.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "uswap.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif

#define HOLD_RUNS		64	/* runs gathered per scan (on the stack) */
#define HOLD_LOCK_WAIT_MS	5000	/* op_lock busy that long: give up */
#define HOLD_MAX_PASSES		1000
#define HOLD_CHECK_US		1000000	/* the remote holder, checked this often */

struct hold_run {
	uintptr_t start;
	size_t len;
};

/* A charge past max while held: admitted at once, counted. */
bool hold_admit(struct uswap_runtime *rt, unsigned nr)
{
	if (likely(!hold_active(rt)))
		return false;
	memcg_force_charge(rt, nr);
	count_event(rt, USWAP_HOLD_OVERRUN, 1);
	return true;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * op_lock for reading, without waiting behind a writer for ever: the
 * calling thread may have been interrupted by a signal while it held it
 * (-EDEADLK), or a thread may be stuck holding it (-ETIMEDOUT).
 */
static int hold_lock(struct uswap_runtime *rt)
{
	unsigned waited = 0;

	for (;;) {
		int err = pthread_rwlock_tryrdlock(&rt->op_lock);

		if (!err)
			return 0;
		if (err == EDEADLK)
			return -EDEADLK;
		if (waited >= HOLD_LOCK_WAIT_MS)
			return -ETIMEDOUT;
		sleep_ms(1);
		waited++;
	}
}

/* Does folio f need the reader's fault?  *busy: it will, in a moment. */
static bool hold_wants(uint32_t fl, bool writable, bool *busy)
{
	switch (folio_state(fl)) {
	case FOLIO_SWAPPED:
	case FOLIO_ZAPPING:
		return true;
	case FOLIO_EVICTING:
	case FOLIO_LOADING:
		*busy = true;
		return writable && folio_state(fl) == FOLIO_EVICTING;
	case FOLIO_RESIDENT:
		return writable && (fl & (F_ARMED | F_CLEAN | F_SHARED));
	default:
		return false;
	}
}

/*
 * Gather up to HOLD_RUNS runs of folios to fault in, from address *from
 * on, with at most room swapped pages among them (*pages counts them).
 * *from moves past what was scanned (UINTPTR_MAX: to the end); *busy says
 * a folio was in flight.  Returns the number of runs, or -errno (op_lock).
 */
static int hold_scan(struct uswap_runtime *rt, bool writable, uintptr_t *from,
		     uint64_t room, struct hold_run *runs, uint64_t *pages,
		     bool *busy)
{
	unsigned n, nr = 0;
	int err = hold_lock(rt);

	if (err)
		return err;
	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];
		uint32_t i, first, last;

		if (r->end <= *from)
			continue;
		region_folios_in(r, MAX(*from, r->start), r->end, &first, &last);
		for (i = first; i < last; i++) {
			uint32_t fl = atomic_load(&r->folios[i].flags);
			uintptr_t a;
			size_t len;
			uint32_t page;
			bool swapped;

			if (!hold_wants(fl, writable, busy))
				continue;
			folio_range(r, i, &a, &len, &page);
			swapped = folio_state(fl) == FOLIO_SWAPPED ||
				  folio_state(fl) == FOLIO_ZAPPING;
			if (swapped && *pages + (len >> PAGE_SHIFT) > room) {
				*from = UINTPTR_MAX;	/* the limit */
				goto out;
			}
			if (nr && runs[nr - 1].start + runs[nr - 1].len == a) {
				runs[nr - 1].len += len;
			} else if (nr == HOLD_RUNS) {
				*from = a;
				goto out;
			} else {
				runs[nr].start = a;
				runs[nr++].len = len;
			}
			if (swapped)
				*pages += len >> PAGE_SHIFT;
		}
	}
	*from = UINTPTR_MAX;
out:
	pthread_rwlock_unlock(&rt->op_lock);
	return (int)nr;
}

/*
 * Fault [start, start+len) in, as the process's own access would: the
 * fault threads serve it.  A range the program made unreadable or
 * unmapped meanwhile is left (it reads as it would without uswap).
 */
static int hold_populate(uintptr_t start, size_t len, bool writable)
{
	static _Atomic bool no_populate;
	static char sink[64 << 10];
	size_t done;

	if (!atomic_load_explicit(&no_populate, memory_order_relaxed)) {
		int err = prim_madvise((void *)start, len, writable ?
				       MADV_POPULATE_WRITE : MADV_POPULATE_READ);

		if (err != -EINVAL)
			return err == -EFAULT || err == -ENOMEM ? 0 : err;
		atomic_store(&no_populate, true);	/* before 5.14 */
	}
	/* A read of our own memory through the kernel faults with a retry. */
	for (done = 0; done < len; done += sizeof(sink)) {
		struct iovec local = { sink, MIN(sizeof(sink), len - done) };
		struct iovec remote = { (void *)(start + done), local.iov_len };

		ssize_t r = prim_read_pinned(local.iov_base, (uintptr_t)remote.iov_base,
					     local.iov_len);

		if (r < 0 && r != -EFAULT)
			return (int)r;
	}
	return 0;
}

/*
 * Bring rt's memory in until a scan finds nothing left to fault in (or
 * limit pages were brought back).  The hold is already set.
 */
static int hold_bring_in(struct uswap_runtime *rt, bool writable,
			 uint64_t limit, uint64_t *pages)
{
	struct hold_run runs[HOLD_RUNS];
	unsigned pass;
	int err = 0;

	*pages = 0;
	for (pass = 0; pass < HOLD_MAX_PASSES && *pages < limit; pass++) {
		uintptr_t from = 0;
		bool busy = false, any = false;

		while (from != UINTPTR_MAX && *pages < limit) {
			uint64_t got = 0;
			int k, nr = hold_scan(rt, writable, &from,
					      limit - *pages, runs, &got,
					      &busy);

			if (nr < 0)
				return nr;
			for (k = 0; k < nr && !err; k++)
				err = hold_populate(runs[k].start, runs[k].len,
						    writable);
			if (err)
				return err;
			*pages += got;
			any |= nr > 0;
		}
		if (!any && !busy)
			break;
		if (!any)
			sleep_ms(1);	/* in flight: settled in a moment */
	}
	count_event(rt, USWAP_HOLD_PAGES, *pages);
	return 0;
}

EXPORT int uswap_runtime_hold(struct uswap_runtime *rt, unsigned flags,
			      uint64_t limit, uint64_t *pages)
{
	uint64_t got = 0;
	int err;

	if (!rt || rt->defunct)
		return -EINVAL;
	atomic_fetch_or(&rt->hold, HOLD_LOCAL);
	memcg_wake_all(rt->memcg);	/* faults waiting for room: admitted */
	err = hold_bring_in(rt, flags & USWAP_HOLD_WRITABLE,
			    limit == UINT64_MAX ? UINT64_MAX : limit >> PAGE_SHIFT,
			    &got);
	if (pages)
		*pages = got;
	return err;
}

EXPORT void uswap_runtime_unhold(struct uswap_runtime *rt)
{
	if (!rt || rt->defunct)
		return;
	atomic_fetch_and(&rt->hold, ~HOLD_LOCAL);
	memcg_kick_reclaim(rt->memcg);
}

/* --- a hold asked by another process --- */

static bool pid_alive(int pid)
{
	int err = pid > 0 ? prim_kill(pid, 0) : -ESRCH;

	return !err || err == -EPERM;
}

/*
 * The reclaimer serves its member's request: a new hold_seq.  The hold
 * stays while the member names this process and a living holder (a fork
 * child, whose member is new, is not held).
 */
static void hold_remote_poll(struct uswap_runtime *rt)
{
	struct tree_member *me = &rt->memcg->member[rt->member];
	uint32_t seq = atomic_load(&me->hold_seq);
	int holder = atomic_load(&me->hold_holder);
	bool want = holder && atomic_load(&me->hold_target) == (int)getpid();
	uint64_t now, pages = 0;
	int err = 0;

	if (want && seq == rt->hold_seen) {
		now = prim_now_us();
		if (now - rt->hold_checked_us < HOLD_CHECK_US)
			return;
		rt->hold_checked_us = now;
		if (pid_alive(holder))
			return;
		/* The requester died without letting go. */
		atomic_compare_exchange_strong(&me->hold_holder, &holder, 0);
		want = false;
	}
	if (!want) {
		atomic_fetch_and(&rt->hold, ~HOLD_REMOTE);
	} else {
		atomic_fetch_or(&rt->hold, HOLD_REMOTE);
		memcg_wake_all(rt->memcg);
		rt->hold_checked_us = prim_now_us();
		err = hold_bring_in(rt, true, UINT64_MAX, &pages);
	}
	if (seq == rt->hold_seen)
		return;
	rt->hold_seen = seq;
	atomic_store(&me->hold_pages, pages);
	atomic_store(&me->hold_err, err);
	atomic_store(&me->hold_done, seq);
	prim_futex_wake_all(&me->hold_done);
}

bool hold_reclaim(struct uswap_runtime *rt)
{
	hold_remote_poll(rt);
	unmanaged_check(rt);
	if (!hold_active(rt))
		return false;
	memcg_reclaim_sleep(rt, 100, true);
	return true;
}

struct uswap_hold {
	struct memcg *mc;
	size_t len;
	unsigned m;
	int pid;
};

/* A descriptor of pid's budget: its memfd, opened through /proc/PID/fd. */
static int tree_fd_open(int pid)
{
	char path[64], link[128], buf[2048] __attribute__((aligned(8)));
	int fd = -ESRCH, dir;
	bool found = false;
	ssize_t len, off;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = prim_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (dir < 0)
		return dir == -ENOENT ? -ESRCH : dir;
	while (!found && (len = prim_getdents(dir, buf, sizeof(buf))) > 0) {
		for (off = 0; !found && off < len;) {
			const struct dirent64 *de = (const void *)(buf + off);
			char fpath[64 + sizeof(de->d_name)];
			ssize_t n;

			off += de->d_reclen;
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			snprintf(fpath, sizeof(fpath), "%s/%s", path,
				 de->d_name);
			n = prim_readlink(fpath, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = 0;
			if (strncmp(link, "/memfd:uswap-tree-", 18))
				continue;
			fd = prim_open(fpath, O_RDWR | O_CLOEXEC, 0);
			found = true;
		}
	}
	prim_close(dir);
	return fd;
}

/* Map pid's budget and find its member. */
static int hold_map(int pid, struct uswap_hold *h)
{
	struct stat st;
	unsigned m;
	void *p;
	int err, fd = tree_fd_open(pid);

	if (fd < 0)
		return fd;
	if (prim_fstat(fd, &st) || (size_t)st.st_size < sizeof(struct memcg)) {
		prim_close(fd);
		return -ESRCH;
	}
	p = prim_mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, 0);
	err = p == MAP_FAILED ? -errno : 0;
	prim_close(fd);
	if (err)
		return err;
	h->mc = p;
	h->len = (size_t)st.st_size;
	h->pid = pid;
	if (h->mc->magic != MEMCG_MAGIC)
		goto err_unmap;
	for (m = 0; m < TREE_MAX_MEMBERS; m++)
		if (atomic_load(&h->mc->member[m].pid) == pid &&
		    atomic_load(&h->mc->member[m].state) == MEMBER_LIVE)
			break;
	if (m == TREE_MAX_MEMBERS)
		goto err_unmap;
	h->m = m;
	return 0;

err_unmap:
	prim_munmap(p, h->len);
	return -ESRCH;
}

/* Ask the member for a new hold state, and wait until it is served. */
static int hold_ask(struct uswap_hold *h, unsigned timeout_ms)
{
	struct tree_member *me = &h->mc->member[h->m];
	uint32_t seq = atomic_fetch_add(&me->hold_seq, 1) + 1, done;
	uint64_t t0 = prim_now_us();

	memcg_kick_reclaim(h->mc);
	while ((done = atomic_load(&me->hold_done)) != seq) {
		if (!pid_alive(h->pid) || atomic_load(&me->pid) != h->pid)
			return -ESRCH;
		if (timeout_ms && prim_now_us() - t0 > timeout_ms * 1000ull)
			return -ETIMEDOUT;
		/* A reclaimer asleep between kicks: kick again now and then. */
		memcg_kick_reclaim(h->mc);
		prim_futex_wait(&me->hold_done, done, 200);
	}
	return atomic_load(&me->hold_err);
}

EXPORT int uswap_hold_pid(int pid, unsigned timeout_ms, struct uswap_hold **hp,
			  uint64_t *pages)
{
	struct uswap_hold *h = calloc(1, sizeof(*h));
	struct tree_member *me;
	int err, holder = 0;

	if (!h)
		return -ENOMEM;
	err = hold_map(pid, h);
	if (err)
		goto err_free;
	me = &h->mc->member[h->m];
	while (!atomic_compare_exchange_strong(&me->hold_holder, &holder,
					       (int)getpid())) {
		if (pid_alive(holder)) {
			err = -EBUSY;
			goto err_unmap;
		}
	}
	atomic_store(&me->hold_target, pid);
	err = hold_ask(h, timeout_ms);
	if (err) {
		uswap_hold_release(h);
		return err;
	}
	if (pages)
		*pages = atomic_load(&me->hold_pages);
	*hp = h;
	return 0;

err_unmap:
	prim_munmap(h->mc, h->len);
err_free:
	free(h);
	return err;
}

EXPORT void uswap_hold_release(struct uswap_hold *h)
{
	struct tree_member *me;
	int holder = (int)getpid();

	if (!h)
		return;
	me = &h->mc->member[h->m];
	if (atomic_compare_exchange_strong(&me->hold_holder, &holder, 0))
		hold_ask(h, 5000);
	prim_munmap(h->mc, h->len);
	free(h);
}
