// SPDX-License-Identifier: MIT
/*
 * memory.c - the fault path (the kernel's handle_mm_fault, do_anonymous_page
 * and do_swap_page).
 *
 * Fault threads read userfaultfd messages and resolve them:
 *   - a missing page of a never-touched folio: the whole folio is installed
 *     as zeros with one UFFDIO_COPY, no I/O (fault_zero_fill);
 *   - a missing page of a swapped folio: the folio's slots are read into
 *     the thread's buffer and installed with one UFFDIO_COPY
 *     (fault_swap_in).  A read fault installs it write-protected and keeps
 *     the slots: while nobody writes, the folio is clean and can be dropped
 *     again without I/O (the kernel's swap cache);
 *   - a missing page of a folio being evicted, whose pages the reclaimer
 *     moves into its staging area (F_MOVED, vmscan.c) or may be about to:
 *     not a hole, never zeros; the fault waits (F_WAITERS) and the
 *     reclaimer wakes it once the folio is swapped (then it faults the
 *     folio back in), put back, or moved back (its store failed);
 *   - a missing page of a resident folio: one the program dropped behind
 *     uswap's back, or a stale fault (the page came back since): filled
 *     with zeros under the LRU lock, so that no move can take the page
 *     in between (the fill finds a page that is there: EEXIST);
 *   - a write-protect fault: a write to an armed folio (referenced), to a
 *     clean one (now dirty: its slots are freed), to one being evicted
 *     (the eviction is aborted, unless its pages are moving out: then it
 *     waits as above), or to one shared by fork (the writer is charged
 *     for it, fork_share.c) (fault_wp).
 *   - a folio coming in under a lock or a pin (mlock.c) stays off the LRU.
 * Several threads faulting on one folio get one load: the first takes the
 * folio to LOADING, the others find it so and return; UFFDIO_COPY wakes
 * every thread waiting in its range.
 *
 * A load that fails never installs what it got: a device read that fails
 * (the data is gone, as for the kernel's failed swap-in), a device slot
 * that fails its checksum, a pool object that does.  The folio stays
 * swapped and its range is poisoned, so that the program gets SIGBUS there
 * and nowhere else, for good (fault_lost).  Readahead is only a guess: a
 * readahead folio that cannot be loaded is given back, and its own fault
 * decides.
 *
 * Nothing here allocates memory or takes a lock the application may hold.
 * The budget is charged before op_lock is taken, since charging may wait
 * for the reclaimer, which needs op_lock.
 */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base.h"
#include "lockdep.h"
#include "log.h"
#include "memcontrol.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "swap.h"
#include "threadcpu.h"
#include "uswap.h"
#include "vmstat.h"
#include "zswap.h"
#include "trace.h"
#include "fdtable.h"
#include "swap_io.h"

#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON	(1 << 14)
#endif

/*
 * Swap-in readahead for small folios (4K, 16K), as the kernel's: when
 * swap-ins come in order, the folios that follow on the device are read
 * in the same I/O and installed clean (write-protected, their slots
 * kept), so a sequential reader finds them resident, and those it never
 * touches are dropped again without I/O.  The window (in folios) doubles
 * when a fault lands right after the last window (the reader went through
 * it: swap_ra_hit) and halves otherwise; it only grows within the
 * budget's room (no waiting for it).  Large folios need no readahead:
 * they are their own.
 */
#define RA_MAX_FOLIOS	16u
#define RA_MAX_SHIFT	14		/* folios up to 16 KiB */
#define RA_MAX_PAGES	(RA_MAX_FOLIOS << (RA_MAX_SHIFT - PAGE_SHIFT))

/*
 * Fault-around for the first touch of small folios: when zero fills come
 * in order, the never-touched folios that follow are filled with zeros in
 * the same UFFDIO_COPY, so that a sequential writer faults once per
 * window instead of once per folio (with 4K folios, one fault per 4 KiB
 * made first touch six times slower than with 64K folios; a window of
 * 512 KiB instead of 64 KiB wrote 512 MiB under 256 MiB 1.2x as fast,
 * as fast as 2M folios).  The window
 * (in folios) doubles when a fill lands right after the last window and
 * halves otherwise, up to ZA_MAX_PAGES pages in all with the faulting
 * folio; only over memory that is plainly read-write and neither locked
 * nor pinned (MLOCK_ONFAULT locks what is touched), and charged without
 * waiting (a full budget takes no folio ahead).  What the program never
 * touches costs a zero page each, at most a window's worth at the end of
 * a run: the reclaimer stores no slot for a page of zeros.  (A protection
 * changed behind uswap's back, by a raw system call, is not seen: the
 * page filled there is zeros with that protection, what the program
 * would read there anyway.)
 */
#define ZA_MAX_PAGES	128u

/*
 * Write-around for small folios: a program that reads its memory back
 * and writes it in order (its folios read ahead clean, or armed by
 * reclaim to see writes) takes one write-protect fault per folio, and
 * with 4 KiB folios that was two thirds of a sequential read-write pass.
 * When write-protect faults come in order, the folios that follow, while
 * resident and write-protected, are taken as written by the same fault
 * and unprotected in the same call: the window (in folios) doubles when a
 * fault lands right after the last window and halves otherwise, up to
 * WA_MAX_PAGES pages with the faulting folio.  A folio taken that the
 * program then does not write only loses its clean copy (written out
 * again when evicted) and looks referenced once, as a written one does.
 */
#define WA_MAX_PAGES	16u

struct fault_thread {
	struct uswap_runtime *rt;
	void *buf;			/* one folio, for swap-in */
	struct zswap_ctx *zc;		/* decompression, with a pool */
	struct swap_io *io;		/* its own ring: reads never queue
					   behind the reclaimer's writes */
	/* Readahead in flight: folios after the faulting one, and the
	   flags each had before it was taken. */
	void *ra_buf;			/* RA_MAX_PAGES pages */
	uint32_t ra_nr, ra_pages;
	swp_entry_t ra_first;
	bool ra_checked;		/* read page by page, each checked */
	uint32_t ra_pooled;		/* of its pages, from the pool */
	uint32_t ra_flags[RA_MAX_FOLIOS];
	swp_entry_t entries[MAX_FOLIO_PAGES];
	/* Fault-around in flight: the flags each folio had before. */
	uint32_t za_flags[ZA_MAX_PAGES];
	int last_tid, last_cpu;		/* the last fault served: follow() */
	bool own_buf;			/* buf is its own (a spare's) */

	/* What it does, for the watchdog to see (watchdog.c). */
	_Atomic uint64_t busy_since;	/* serving a fault since (us); 0: not */
	_Atomic uint64_t served;	/* faults served */
	_Atomic uintptr_t fault_addr;	/* the fault being served */
	_Atomic uint64_t fault_flags;
	_Atomic bool waiting;		/* for room at max (memcg_charge) */
	_Atomic bool ended;		/* its thread returned ... */
	_Atomic int end_err;		/* ... because a read failed so */
	/* A fault to serve before reading (given by the watchdog). */
	struct uffd_msg first;
	bool has_first;
};

/* The fault thread that runs on this thread, if one does. */
static __thread struct fault_thread *self __attribute__((tls_model("initial-exec")));

static void fault_done(struct uswap_runtime *rt, uint64_t t0)
{
	count_latency(rt, prim_now_us() - t0);
}

/*
 * A missing page inside a folio that is resident: the application dropped
 * it behind uswap's back (a raw madvise).  Such a page reads as zeros.
 */
static void fault_repair(struct uswap_runtime *rt, uintptr_t addr)
{
	int err = prim_uffd_copy(rt->uffd, addr, rt->zero_buf, PAGE_SIZE,
				 false, NULL);

	if (err == -EEXIST) {
		count_event(rt, USWAP_UFFD_EEXIST, 1);
		prim_uffd_wake(rt->uffd, addr, PAGE_SIZE);
	}
}

/* A read error that trying again may cure: the data is not lost. */
static bool read_error_transient(int err)
{
	return err == -EAGAIN || err == -EINTR || err == -ENOMEM ||
	       err == -EBUSY;
}

/*
 * Read run slots from e on its device into dst and check them (decrypt
 * them, on a device that encrypts): 0, -EBADMSG (a checksum or a tag),
 * or the read's -errno.  A failure that loses data is logged
 * once per device.
 */
static int read_slots(struct uswap_runtime *rt, struct swap_io *io,
		      swp_entry_t e, unsigned run, void *dst)
{
	struct swap_info *si = &rt->swap[swp_type(e)];
	uint64_t t0 = prim_now_us();
	int err;

	err = swap_io_read(io, si, swp_offset(e), dst, (size_t)run << PAGE_SHIFT);
	swap_count_io(rt, swp_type(e), false, err ? 0 : run,
		      prim_now_us() - t0);
	if (!err)
		return swap_slots_check(si, swp_offset(e), dst, run);
	if (!read_error_transient(err) && swap_log_first(si, SWAP_LOGGED_READ))
		uswap_log("swap device %s: reading slots %u..%u failed (%s): "
			  "that data is lost; the program gets SIGBUS where it "
			  "is mapped (counted as swap_io_error)", si->path,
			  swp_offset(e), swp_offset(e) + run - 1, strerror(-err));
	return err;
}

/* The pool's copy of e failed its checksum: logged once per device. */
static void pool_corrupt(struct uswap_runtime *rt, swp_entry_t e)
{
	struct swap_info *si = &rt->swap[swp_type(e)];

	if (swap_log_first(si, SWAP_LOGGED_POOL))
		uswap_log("swap device %s: the compressed copy of slot %u failed "
			  "its checksum: it is never used; the program gets "
			  "SIGBUS where it is mapped (counted as swap_corrupt)",
			  si->path, swp_offset(e));
}

int swap_read_entries(struct uswap_runtime *rt, struct zswap_ctx *zc,
		      struct swap_io *io, const swp_entry_t *entries,
		      unsigned nr, void *buf, unsigned *pool_pages)
{
	unsigned i = 0;

	*pool_pages = 0;
	while (i < nr) {
		swp_entry_t e = entries[i];
		char *dst = (char *)buf + ((size_t)i << PAGE_SHIFT);
		unsigned run = 1;
		int n;

		if (!e) {
			memset(dst, 0, PAGE_SIZE);
			i++;
			continue;
		}
		/* Consecutive slots: as much from the pool as it holds... */
		while (i + run < nr && entries[i + run] == e + run)
			run++;
		if (rt->zswap) {
			n = zswap_load(rt->zswap, zc, e, run, dst);
			if (n < 0) {
				pool_corrupt(rt, e);
				return n;
			}
			if (n > 0) {
				*pool_pages += (unsigned)n;
				i += (unsigned)n;
				continue;
			}
			/* ... else from the device, up to the next pooled page. */
			run = 1 + zswap_absent_run(rt->zswap, e + 1, run - 1);
		}
		n = read_slots(rt, io, e, run, dst);
		if (n)
			return n;
		i += run;
	}
	return 0;
}

static unsigned zero_entries(const struct fault_thread *ft, unsigned nr)
{
	unsigned k, zero = 0;

	for (k = 0; k < nr; k++)
		zero += !ft->entries[k];
	return zero;
}

/* Are entries[0..nr) consecutive slots on one device, none a zero page? */
static bool entries_run(const swp_entry_t *e, uint32_t nr)
{
	uint32_t k;

	for (k = 0; k < nr; k++)
		if (!e[k] || e[k] != e[0] + k)
			return false;
	return true;
}

/*
 * Take folio j of r to load it ahead of a fault: when it has nr pages, is
 * in state `want` and the budget has room for it without waiting, it is
 * LOADING and charged, *flags is what it was, and true is returned.
 * Caller holds op_lock (read).
 */
static bool take_ahead(struct uswap_runtime *rt, struct region *r, uint32_t j,
		       uint32_t nr, unsigned want, uint32_t *flags)
{
	struct folio *g = &r->folios[j];
	uint32_t gl = atomic_load(&g->flags), page;
	uintptr_t a;
	size_t len;

	folio_range(r, j, &a, &len, &page);
	if ((len >> PAGE_SHIFT) != nr || folio_state(gl) != want ||
	    !memcg_try_charge(rt, nr))
		return false;
	if (!atomic_compare_exchange_strong(&g->flags, &gl,
			(gl & ~FOLIO_STATE_MASK) | FOLIO_LOADING)) {
		memcg_uncharge(rt, nr);
		return false;
	}
	*flags = gl;
	return true;
}

/*
 * Under op_lock (read), before the faulting folio i (nr pages, its entries
 * in ft->entries) is read: adapt the window and take the folios after it
 * whose slots continue the run (SWAPPED -> LOADING, charged).
 */
static void ra_begin(struct fault_thread *ft, struct region *r, uint32_t i,
		     uint32_t nr)
{
	struct uswap_runtime *rt = ft->rt;
	swp_entry_t next = ft->entries[nr - 1] + 1;
	uint32_t win, k, m;

	ft->ra_nr = ft->ra_pages = 0;
	if (!rt->have_wp || r->folio_shift > RA_MAX_SHIFT ||
	    nr != (1u << (r->folio_shift - PAGE_SHIFT)) ||
	    !entries_run(ft->entries, nr))
		return;
	win = atomic_load(&r->ra_win);
	if (i == atomic_load(&r->ra_next)) {
		count_event(rt, USWAP_SWAP_RA_HIT, atomic_load(&r->ra_last));
		win = win ? MIN(2 * win, RA_MAX_FOLIOS) : 1;
	} else {
		win /= 2;
	}
	atomic_store(&r->ra_win, win);
	atomic_store(&r->ra_last, 0);
	atomic_store(&r->ra_next, i + 1);
	ft->ra_first = next;
	for (k = 1; k <= win && i + k < r->nr_folios; k++) {
		struct folio *g = &r->folios[i + k];
		uint32_t gl, page;
		uintptr_t a;
		size_t len;

		if (!take_ahead(rt, r, i + k, nr, FOLIO_SWAPPED, &gl))
			break;
		/* Ours now: its entries cannot change under us. */
		folio_range(r, i + k, &a, &len, &page);
		for (m = 0; m < nr && r->swp[page + m] == next + m; m++)
			;
		if (m < nr) {
			atomic_store(&g->flags, gl);
			prim_uffd_wake(rt->uffd, a, len);
			memcg_uncharge(rt, nr);
			break;
		}
		ft->ra_flags[ft->ra_nr++] = gl;
		next += nr;
	}
	ft->ra_pages = ft->ra_nr * nr;
}

/*
 * With some of it in the pool: the faulting folio and its readahead each
 * read as a fault reads, from the pool where it holds them, runs of the
 * rest from the device (every page checked as it is read).  A readahead
 * folio of which a page came from the pool is installed dirty: the pool's
 * copy goes, as the faulting folio's does (*pooled).  When the folio
 * cannot be read, neither is its readahead (given back).
 */
static int ra_read_pooled(struct fault_thread *ft, uint32_t nr, int *ra_err,
			  unsigned *pooled)
{
	struct uswap_runtime *rt = ft->rt;
	swp_entry_t ents[RA_MAX_PAGES];
	unsigned ra_pooled = 0;
	uint32_t k;
	int err;

	err = swap_read_entries(rt, ft->zc, ft->io, ft->entries, nr, ft->buf,
				pooled);
	if (err) {
		*ra_err = err;
		return err;
	}
	for (k = 0; k < ft->ra_pages; k++)
		ents[k] = ft->ra_first + k;
	*ra_err = swap_read_entries(rt, ft->zc, ft->io, ents, ft->ra_pages,
				    ft->ra_buf, &ra_pooled);
	ft->ra_checked = true;
	ft->ra_pooled = ra_pooled;
	return 0;
}

/*
 * Without locks: the faulting folio (nr pages, one run of slots, in
 * ft->entries) and its readahead, the run that follows it on the device,
 * in one I/O, into ft->buf and ft->ra_buf; *ra_err is the readahead's
 * result.  When that read fails, the folio is read alone, as without
 * readahead: a failure in the readahead's part must not cost the folio.
 * Returns the folio's result, as swap_read_entries(), and *pooled its
 * pages that came from the pool.
 */
static int ra_read_with(struct fault_thread *ft, uint32_t nr, int *ra_err,
			unsigned *pooled)
{
	struct uswap_runtime *rt = ft->rt;
	swp_entry_t e = ft->entries[0];
	struct swap_info *si = &rt->swap[swp_type(e)];
	struct iovec iov[2] = {
		{ ft->buf, (size_t)nr << PAGE_SHIFT },
		{ ft->ra_buf, (size_t)ft->ra_pages << PAGE_SHIFT },
	};
	struct swap_io_req req = {
		.si = si, .offset = swp_offset(e), .iov = iov, .iovcnt = 2,
		.len = iov[0].iov_len + iov[1].iov_len,
	};
	uint64_t t0 = prim_now_us();

	*pooled = 0;
	ft->ra_checked = false;
	ft->ra_pooled = 0;
	/* None of it in the pool (written back, or never stored there): one
	   read.  No page of these folios can go into the pool meanwhile. */
	if (rt->zswap && zswap_absent_run(rt->zswap, e, nr + ft->ra_pages) <
			 nr + ft->ra_pages)
		return ra_read_pooled(ft, nr, ra_err, pooled);
	*ra_err = swap_io_read_batch(ft->io, &req, 1);
	if (*ra_err)
		return swap_read_entries(rt, ft->zc, ft->io, ft->entries, nr,
					 ft->buf, pooled);
	swap_count_io(rt, swp_type(e), false, nr, prim_now_us() - t0);
	return swap_slots_check(si, swp_offset(e), ft->buf, nr);
}

/*
 * Under op_lock (read) again: install the readahead folios clean, or give
 * them back (SWAPPED, uncharged, waiters woken) when the read failed.
 * Those that pass their checksums, from the first on, go in one
 * UFFDIO_COPY; the rest are given back.
 */
static void ra_finish(struct fault_thread *ft, struct region *r, uint32_t i,
		      uint32_t nr, int err)
{
	struct uswap_runtime *rt = ft->rt;
	struct swap_info *si = &rt->swap[swp_type(ft->ra_first)];
	uint32_t k, ok = 0, done = 0, page;
	uint32_t clean = ft->ra_pooled ? 0 : F_CLEAN;
	uintptr_t a;
	size_t len;

	if (!err && ft->ra_checked)
		ok = ft->ra_nr;
	while (!err && ok < ft->ra_nr &&
	       !swap_slots_check(si, swp_offset(ft->ra_first) + ok * nr,
				 (char *)ft->ra_buf + ((size_t)ok * nr << PAGE_SHIFT),
				 nr))
		ok++;
	if (ok) {
		folio_range(r, i + 1, &a, &len, &page);
		for (k = 0; k < ok; k++)
			trace_folio(TR_LOAD, a + k * len, nr, ft->ra_flags[k], 0);
		err = prim_uffd_copy(rt->uffd, a, ft->ra_buf, len * ok,
				     clean != 0, NULL);
		if (err == -EEXIST) {
			/* A page is not our copy (which, we do not know): the
			   folios are dirty. */
			count_event(rt, USWAP_UFFD_EEXIST, 1);
			clean = 0;
			err = 0;
		}
	}
	for (k = 0; k < ft->ra_nr; k++) {
		struct folio *g = &r->folios[i + 1 + k];
		uint32_t gl = ft->ra_flags[k];

		folio_range(r, i + 1 + k, &a, &len, &page);
		if (err || k >= ok) {
			atomic_store(&g->flags, gl);
			prim_uffd_wake(rt->uffd, a, len);
			memcg_uncharge(rt, nr);
			continue;
		}
		if (!clean)
			region_free_entries(r, page, nr);
		atomic_store(&g->flags, (gl & F_WORKINGSET) | FOLIO_RESIDENT |
					clean | (folio_unevictable(rt, a, len) ?
						 F_UNEVICTABLE : 0));
		pthread_mutex_lock(&r->lru_lock);
		lru_add(r, i + 1 + k, false);
		pthread_mutex_unlock(&r->lru_lock);
		done += nr;
	}
	if (done) {
		count_event(rt, USWAP_SWAP_RA, done);
		count_event(rt, USWAP_PSWPIN, done - MIN(done, ft->ra_pooled));
	}
	atomic_store(&r->ra_last, done);
	atomic_store(&r->ra_next, i + 1 + ft->ra_nr);
	ft->ra_nr = 0;
}

/*
 * A fault-around or write-around window after folio i of r: it doubles
 * (up to max folios) when i is where the last window ended (*next),
 * halves otherwise; no further than the region's end, and none over
 * memory whose VMA flags have any of `avoid`.  Returns it.
 */
static uint32_t adapt_window(struct uswap_runtime *rt, const struct region *r,
			     _Atomic uint32_t *next, _Atomic uint32_t *winp,
			     uint32_t i, uint32_t max, unsigned avoid)
{
	uint32_t win = atomic_load(winp), page;
	uintptr_t a;
	size_t len;

	if (i == atomic_load(next))
		win = win ? MIN(2 * win, max) : 1;
	else
		win /= 2;
	atomic_store(winp, win);
	win = MIN(win, r->nr_folios - 1 - i);
	folio_range(r, i, &a, &len, &page);
	if (win && (vma_flags(&rt->vmas, a + len, a + len * (1 + win)) & avoid))
		return 0;
	return win;
}

/*
 * Under op_lock (read), folio i (nr pages) being zero-filled (NONE ->
 * LOADING): adapt the window and take the never-touched folios after it
 * (NONE -> LOADING, charged).  Returns how many; their flags before are
 * in ft->za_flags.
 */
static uint32_t za_begin(struct fault_thread *ft, struct region *r,
			 uint32_t i, uint32_t nr)
{
	struct uswap_runtime *rt = ft->rt;
	uint32_t win, k, taken = 0;

	if (nr >= ZA_MAX_PAGES)
		return 0;
	/* Locked on fault: only what is touched. */
	win = adapt_window(rt, r, &r->za_next, &r->za_win, i,
			   ZA_MAX_PAGES / nr - 1,
			   VMA_PROTECTED | VMA_LOCKED | VMA_ONFAULT | VMA_PINNED);
	for (k = 1; k <= win; k++) {
		if (!take_ahead(rt, r, i + k, nr, FOLIO_NONE,
				&ft->za_flags[taken]))
			break;
		taken++;
	}
	atomic_store(&r->za_next, i + 1 + taken);
	return taken;
}

/*
 * Under op_lock (read): the n folios after folio i taken by za_begin are
 * resident now (filled: true), or given back as they were (their fill
 * failed, waiters woken).
 */
static void za_finish(struct fault_thread *ft, struct region *r, uint32_t i,
		      uint32_t n, bool filled)
{
	struct uswap_runtime *rt = ft->rt;
	uint32_t k, page, nr = 0;
	uintptr_t a;
	size_t len;

	for (k = 0; k < n; k++) {
		struct folio *g = &r->folios[i + 1 + k];
		uint32_t gl = ft->za_flags[k];

		folio_range(r, i + 1 + k, &a, &len, &page);
		nr = (uint32_t)(len >> PAGE_SHIFT);
		if (!filled) {
			atomic_store(&g->flags, gl);
			prim_uffd_wake(rt->uffd, a, len);
			memcg_uncharge(rt, nr);
			continue;
		}
		trace_folio(TR_FILL, a, nr, gl, 0);
		atomic_store(&g->flags, (gl & F_WORKINGSET) | FOLIO_RESIDENT |
					(folio_unevictable(rt, a, len) ?
					 F_UNEVICTABLE : 0));
		pthread_mutex_lock(&r->lru_lock);
		lru_add(r, i + 1 + k, false);
		pthread_mutex_unlock(&r->lru_lock);
	}
	if (filled && n)
		count_event(rt, USWAP_FAULT_AROUND, (uint64_t)n * nr);
}

/*
 * Folio i of r (at addr, len bytes, first page `page`) could not be
 * loaded: a read failed (err: its -errno) or what came back failed its
 * checksum (-EBADMSG).  Its range is poisoned, so that the program gets
 * SIGBUS at any address in it, as the kernel does for a memory error;
 * then the data is gone for good: the slots are freed and the folio is
 * NONE, which nothing installs without a fault, and a poisoned range
 * raises none (readahead, which takes SWAPPED folios, cannot bring it
 * back either).  The poison stays until the program unmaps the range or
 * discards any of it (MADV_DONTNEED), after which the folio reads as
 * zeros.  Without
 * UFFDIO_POISON the process gets SIGBUS at once.  A range that cannot be
 * poisoned (it changed meanwhile) stays swapped and is woken: the thread
 * faults again and sees what became of it.  Caller holds op_lock (read)
 * and owns the folio (LOADING; fl is its state before).
 */
static void fault_lost(struct uswap_runtime *rt, struct region *r,
		       struct folio *f, uint32_t fl, uintptr_t addr, size_t len,
		       uint32_t page, int err)
{
	lock_assert_held_read(&rt->op_lock);
	trace_folio(TR_LOAD_FAIL, addr, (uint32_t)(len >> PAGE_SHIFT), fl, err);
	count_event(rt, err == -EBADMSG ? USWAP_SWAP_CORRUPT :
		    USWAP_SWAP_IO_ERROR, 1);
	if (!(rt->features & UFFD_FEATURE_POISON)) {
		atomic_store(&f->flags, fl);
		prim_kill(getpid(), SIGBUS);
		return;
	}
	if (prim_uffd_poison(rt->uffd, addr, len)) {
		atomic_store(&f->flags, fl);
		prim_uffd_wake(rt->uffd, addr, len);
		return;
	}
	region_free_entries(r, page, (uint32_t)(len >> PAGE_SHIFT));
	atomic_store(&f->flags, FOLIO_NONE);
}

/*
 * Bring folio i of r in.  The caller charged nr pages and holds op_lock
 * (read) and a reference on r; the folio is NONE or SWAPPED.  Drops and
 * retakes op_lock around I/O.  Returns 0, or -EAGAIN when the folio
 * changed state meanwhile (the charge was not used).
 */
static int fault_in(struct fault_thread *ft, struct region *r, uint32_t i,
		    bool write)
{
	struct uswap_runtime *rt = ft->rt;
	struct folio *f = &r->folios[i];
	uint32_t fl = atomic_load(&f->flags), nr, page, k;
	bool swapped = folio_state(fl) == FOLIO_SWAPPED, active = false;
	bool keep_clean = false;
	const void *src = rt->zero_buf;
	unsigned pooled = 0;
	uint32_t around = 0;	/* folios filled ahead (za_begin) */
	uintptr_t addr;
	size_t len;
	int err;

	if (folio_state(fl) != FOLIO_NONE && !swapped)
		return -EAGAIN;
	if (!atomic_compare_exchange_strong(&f->flags, &fl,
				(fl & ~FOLIO_STATE_MASK) | FOLIO_LOADING))
		return -EAGAIN;
	folio_range(r, i, &addr, &len, &page);
	nr = (uint32_t)(len >> PAGE_SHIFT);

	if (swapped) {
		int ra_err = 0;

		memcpy(ft->entries, &r->swp[page], nr * sizeof(swp_entry_t));
		ra_begin(ft, r, i, nr);
		pthread_rwlock_unlock(&rt->op_lock);
		if (ft->ra_nr)
			err = ra_read_with(ft, nr, &ra_err, &pooled);
		else
			err = swap_read_entries(rt, ft->zc, ft->io, ft->entries,
						nr, ft->buf, &pooled);
		pthread_rwlock_rdlock(&rt->op_lock);
		ra_finish(ft, r, i, nr, ra_err);
		if (err && read_error_transient(err)) {
			/* The data is still in its slots: fault again. */
			count_event(rt, USWAP_SWAP_IO_ERROR, 1);
			uswap_log_once(&rt->logged_io, "swap read failed: %s; "
				       "the fault is retried", strerror(-err));
			atomic_store(&f->flags, fl);
			prim_uffd_wake(rt->uffd, addr, len);
			return -EIO;
		}
		if (err) {
			fault_lost(rt, r, f, fl, addr, len, page, err);
			return err;
		}
		src = ft->buf;
		/*
		 * A read fault keeps the copy on the device: the folio is
		 * clean.  A copy in the pool goes (zswap's exclusive loads):
		 * keeping it would charge the folio twice.
		 */
		keep_clean = !write && rt->have_wp && !pooled;
		for (k = 0; k < nr && keep_clean; k++)
			if (!ft->entries[k])
				keep_clean = false;
		active = workingset_refault(rt, r, f, nr);
	} else {
		around = za_begin(ft, r, i, nr);
	}

	/* Before the copy, which wakes the thread: it sees this first. */
	trace_folio(swapped ? TR_LOAD : TR_FILL, addr, nr, fl, pooled);
	err = prim_uffd_copy(rt->uffd, addr, src, len * (1 + around),
			     keep_clean, NULL);
	if (err == -EEXIST) {
		/* A page was mapped already, not from our copy: dirty. */
		count_event(rt, USWAP_UFFD_EEXIST, 1);
		keep_clean = false;
	} else if (err) {
		/* The range went away under us (unmapped by the program). */
		za_finish(ft, r, i, around, false);
		atomic_store(&f->flags, fl);
		prim_uffd_wake(rt->uffd, addr, len);
		return err;
	}
	za_finish(ft, r, i, around, true);
	if (swapped) {
		if (!keep_clean)
			region_free_entries(r, page, nr);
		count_event(rt, USWAP_PGMAJFAULT, 1);
		count_event(rt, USWAP_PSWPIN, nr - pooled - zero_entries(ft, nr));
	} else {
		count_event(rt, USWAP_ZERO_FILL, 1);
	}
	fl = (fl & F_WORKINGSET) | FOLIO_RESIDENT | (keep_clean ? F_CLEAN : 0);
	if (folio_unevictable(rt, addr, len))
		fl |= F_UNEVICTABLE;	/* locked or pinned: no list */
	atomic_store(&f->flags, fl);
	pthread_mutex_lock(&r->lru_lock);
	lru_add(r, i, active);
	pthread_mutex_unlock(&r->lru_lock);
	return 0;
}

static void fault_missing(struct fault_thread *ft, uintptr_t addr, bool write,
			  int tid)
{
	struct uswap_runtime *rt = ft->rt;
	struct region *r;
	struct folio *f;
	uint32_t i, fl, nr;

	for (;;) {
		uintptr_t a;
		size_t len;
		uint32_t page;
		int err;

		pthread_rwlock_rdlock(&rt->op_lock);
		r = region_find_locked(rt, addr);
		if (!r) {
			/* Unmapped meanwhile: let the thread see that. */
			pthread_rwlock_unlock(&rt->op_lock);
			prim_uffd_wake(rt->uffd, addr, PAGE_SIZE);
			return;
		}
		i = folio_index(r, addr);
		f = &r->folios[i];
		fl = atomic_load(&f->flags);
		switch (folio_state(fl)) {
		case FOLIO_EVICTING:
			/* (tid 0: the kernel does not say who faulted.) */
			if (tid != atomic_load(&rt->reclaim_tid) &&
			    ((fl & F_MOVED) ||
			     (tid && !atomic_load(&rt->reads_in_place)))) {
				/*
				 * Its pages are in the reclaimer's staging area,
				 * or may be on their way there: never zeros
				 * here.  Filling the page would race with the
				 * move, which may have taken the program's page
				 * just before: ours would then stay mapped, in
				 * front of the folio when it comes back.  (The
				 * fault may also be stale: raised while the
				 * folio was out, served once it was back.)  The
				 * reclaimer wakes us when the folio leaves
				 * EVICTING; the thread faults again if it must.
				 * The reclaimer itself, reading a page it left
				 * in place, finds one the program dropped since:
				 * that one is a hole, filled below.
				 */
				if (!atomic_compare_exchange_strong(&f->flags, &fl,
								    fl | F_WAITERS)) {
					pthread_rwlock_unlock(&rt->op_lock);
					continue;
				}
				pthread_rwlock_unlock(&rt->op_lock);
				count_event(rt, USWAP_EVICT_WAIT, 1);
				trace_folio(TR_WAIT_MOVED, addr, 1, fl, 0);
				return;
			}
			trace_folio(TR_REPAIR, addr & PAGE_MASK, 1, fl, 0);
			fault_repair(rt, addr);
			pthread_rwlock_unlock(&rt->op_lock);
			return;
		case FOLIO_RESIDENT:
			/*
			 * A page missing from a resident folio: dropped by the
			 * program behind uswap's back, or this fault is stale
			 * (the page is back: the fill finds it, EEXIST).
			 * Filled under the LRU lock, which the reclaimer takes
			 * to pick a victim: no page of the folio can move out
			 * while we fill.
			 */
			pthread_mutex_lock(&r->lru_lock);
			fl = atomic_load(&f->flags);
			if (folio_state(fl) != FOLIO_RESIDENT) {
				pthread_mutex_unlock(&r->lru_lock);
				pthread_rwlock_unlock(&rt->op_lock);
				continue;
			}
			trace_folio(TR_REPAIR, addr & PAGE_MASK, 1, fl, 0);
			fault_repair(rt, addr);
			pthread_mutex_unlock(&r->lru_lock);
			pthread_rwlock_unlock(&rt->op_lock);
			return;
		case FOLIO_LOADING:
			/* Another thread loads it; its UFFDIO_COPY wakes us. */
			pthread_rwlock_unlock(&rt->op_lock);
			return;
		case FOLIO_ZAPPING:
			/* The reclaimer wakes waiters when the zap is done. */
			if (!atomic_compare_exchange_strong(&f->flags, &fl,
							    fl | F_WAITERS)) {
				pthread_rwlock_unlock(&rt->op_lock);
				continue;
			}
			pthread_rwlock_unlock(&rt->op_lock);
			return;
		default:
			break;
		}
		folio_range(r, i, &a, &len, &page);
		nr = (uint32_t)(len >> PAGE_SHIFT);
		region_get(r);
		pthread_rwlock_unlock(&rt->op_lock);

		memcg_charge(rt, nr);

		pthread_rwlock_rdlock(&rt->op_lock);
		if (region_find_locked(rt, addr) != r) {
			err = -EAGAIN;
		} else {
			err = fault_in(ft, r, i, write);
		}
		pthread_rwlock_unlock(&rt->op_lock);
		region_put(r);
		if (!err)
			return;
		memcg_uncharge(rt, nr);
		if (err != -EAGAIN)
			return;
	}
}

/*
 * The write-protect fault on resident folio i (nr pages) is served: adapt
 * the write-around window, and mark as written the folios after it that
 * are resident, write-protected and plainly the program's (not shared by
 * fork, not on a slower node, not protected).  Returns how many, from
 * i + 1 on: the caller unprotects them with folio i.  Under lru_lock, as
 * the faulting folio's change.
 */
static uint32_t wa_take(struct uswap_runtime *rt, struct region *r,
			uint32_t i, uint32_t nr)
{
	uint32_t win, k, page;
	uintptr_t a;
	size_t len;

	if (nr >= WA_MAX_PAGES)
		return 0;
	win = adapt_window(rt, r, &r->wa_next, &r->wa_win, i,
			   WA_MAX_PAGES / nr - 1, VMA_PROTECTED);
	for (k = 1; k <= win; k++) {
		struct folio *g = &r->folios[i + k];
		uint32_t gl = atomic_load(&g->flags);

		folio_range(r, i + k, &a, &len, &page);
		if ((len >> PAGE_SHIFT) != nr ||
		    folio_state(gl) != FOLIO_RESIDENT ||
		    !(gl & (F_ARMED | F_CLEAN)) ||
		    (gl & (F_SHARED | F_DEMOTED | F_STORING)) ||
		    !atomic_compare_exchange_strong(&g->flags, &gl,
				(gl & ~(F_ARMED | F_CLEAN)) | F_REFERENCED))
			break;
		if (gl & F_CLEAN) {
			region_free_entries(r, page, nr);
			atomic_fetch_or_explicit(&g->flags, 0,
						 memory_order_release);
		}
		trace_folio(TR_WP, a, nr, gl, 0);
	}
	atomic_store(&r->wa_next, i + k);
	return k - 1;
}

/*
 * A write hit a write-protected page.  Whatever the folio's state, the
 * writer must end up either running or woken to fault again.
 */
static void fault_wp(struct fault_thread *ft, uintptr_t addr)
{
	struct uswap_runtime *rt = ft->rt;
	struct region *r;
	struct folio *f;
	uint32_t i, fl, nfl, page, around = 0;
	unsigned charged = 0, excl = 0;
	bool sweep = false;
	uintptr_t a;
	size_t len;

	count_event(rt, USWAP_WP_FAULT, 1);
again:
	pthread_rwlock_rdlock(&rt->op_lock);
	r = region_find_locked(rt, addr);
	if (!r) {
		pthread_rwlock_unlock(&rt->op_lock);
		prim_uffd_wake(rt->uffd, addr, PAGE_SIZE);
		goto out;
	}
	i = folio_index(r, addr);
	f = &r->folios[i];
	folio_range(r, i, &a, &len, &page);
	/*
	 * A write to a folio shared by fork (fork_share.c): the writer is
	 * charged the folio, before any lock (charging may wait for reclaim),
	 * and the pages it maps alone leave the tree's shared charge below.
	 */
	if ((atomic_load(&f->flags) & F_SHARED) &&
	    charged != (unsigned)(len >> PAGE_SHIFT)) {
		pthread_rwlock_unlock(&rt->op_lock);
		if (charged)
			memcg_uncharge(rt, charged);
		charged = (unsigned)(len >> PAGE_SHIFT);
		memcg_charge(rt, charged);
		goto again;
	}
	if (charged)
		excl = share_exclusive(rt, a, charged);
	/*
	 * lru_lock from the change of flags to the end of the unprotect: the
	 * reclaimer arms a folio (F_ARMED, under lru_lock) and write-protects
	 * it after.  Were that to fall between our clearing F_ARMED and our
	 * unprotect, the unprotect would undo the new protection of a folio
	 * marked armed: writes would not be seen, and an eviction that writes
	 * the folio out from its pages would lose them, or store a slot whose
	 * checksum was computed before them (soak bugs 10 and 6).  A promotion
	 * walk re-arming the folio there made one write look like two.
	 */
	pthread_mutex_lock(&r->lru_lock);
	fl = atomic_load(&f->flags);
	for (;;) {
		unsigned s = folio_state(fl);

		if (s == FOLIO_ZAPPING ||
		    (s == FOLIO_EVICTING && (fl & F_MOVED))) {
			/*
			 * Being dropped, or its pages moved out (this fault
			 * was raised before the move): no abort, the page is
			 * not here to unprotect.  The reclaimer wakes us when
			 * it is done, and the write faults again.
			 */
			if (atomic_compare_exchange_weak(&f->flags, &fl,
							 fl | F_WAITERS)) {
				if (s == FOLIO_EVICTING)
					count_event(rt, USWAP_EVICT_WAIT, 1);
				break;
			}
			continue;
		}
		if (s != FOLIO_RESIDENT && s != FOLIO_EVICTING) {
			/* Gone or coming back: the thread faults again. */
			prim_uffd_wake(rt->uffd, addr, PAGE_SIZE);
			break;
		}
		nfl = (fl & ~(F_ARMED | F_CLEAN | F_SHARED | FOLIO_STATE_MASK)) |
		      F_REFERENCED | FOLIO_RESIDENT;
		if (!atomic_compare_exchange_weak(&f->flags, &fl, nfl))
			continue;
		if (fl & F_SHARED) {
			memcg_share_drop(rt, len >> PAGE_SHIFT, excl);
			sweep = excl == charged;	/* the sharers let go */
			charged = 0;	/* the writer's now */
		}
		if (fl & F_CLEAN) {
			region_free_entries(r, page,
					    (uint32_t)(len >> PAGE_SHIFT));
			/*
			 * Publish the cleared entries: whoever changes the
			 * flags next (reclaim isolating the folio, much
			 * later) must see them before writing new ones.
			 */
			atomic_fetch_or_explicit(&f->flags, 0,
						 memory_order_release);
		}
		if (s == FOLIO_EVICTING)
			/* Abort: the reclaimer's CAS to ZAPPING will fail. */
			lru_add(r, i, true);
		trace_folio(TR_WP, a, (uint32_t)(len >> PAGE_SHIFT), fl,
			    s == FOLIO_EVICTING);
		if (s == FOLIO_RESIDENT && !(fl & F_SHARED))
			around = wa_take(rt, r, i,
					 (uint32_t)(len >> PAGE_SHIFT));
		prim_uffd_wp(rt->uffd, a, len * (1 + around), false, true);
		break;
	}
	pthread_mutex_unlock(&r->lru_lock);
	pthread_rwlock_unlock(&rt->op_lock);
out:
	if (charged)	/* not shared after all (another thread's write) */
		memcg_uncharge(rt, charged);
	if (sweep)
		share_sweep(rt);
}

/*
 * Be where the faulting thread is for its next fault: both wakeups of a
 * fault are then on one CPU, without interprocessor interrupts
 * (threadcpu.c, docs/fault-cost.md).  After the fault is served, so that
 * moving never delays it.  At every fault: looking one fault in 16
 * (asking where a thread runs is a system call) lost 15% of pmbench-zipf's
 * accesses (docs/fault-cost.md).
 */
static void follow(struct fault_thread *ft, int tid)
{
	int cpu = thread_cpu_of(tid);
	bool again = tid == ft->last_tid && cpu == ft->last_cpu;
	ft->last_tid = tid;
	ft->last_cpu = cpu;
	if (cpu < 0 || !again || cpu == sched_getcpu())
		return;
	if (prim_pin_to_cpu(cpu) == 0)
		count_event(ft->rt, USWAP_FAULT_THREAD_MOVES, 1);
}

static void handle_msg(struct fault_thread *ft, const struct uffd_msg *msg,
		       uint64_t t0)
{
	uint64_t flags = msg->arg.pagefault.flags;
	uintptr_t addr = (uintptr_t)msg->arg.pagefault.address & PAGE_MASK;

	count_event(ft->rt, USWAP_PGFAULT, 1);
	if (flags & UFFD_PAGEFAULT_FLAG_WP)
		fault_wp(ft, addr);
	else
		fault_missing(ft, addr, flags & UFFD_PAGEFAULT_FLAG_WRITE,
			      ft->rt->features & UFFD_FEATURE_THREAD_ID ?
			      (int)msg->arg.pagefault.feat.ptid : 0);
	count_event(ft->rt, USWAP_UFFD_EAGAIN, prim_uffd_eagain_take());
	fault_done(ft->rt, t0);
	if (ft->rt->features & UFFD_FEATURE_THREAD_ID)
		follow(ft, (int)msg->arg.pagefault.feat.ptid);
}

/*
 * A fault thread's state, in internal memory: buf is one folio, or NULL
 * for a buffer of its own.
 */
struct fault_thread *fault_thread_alloc(struct uswap_runtime *rt, void *buf)
{
	struct fault_thread *ft = prim_alloc(sizeof(*ft));

	if (!ft)
		return NULL;
	ft->rt = rt;
	ft->buf = buf;
	if (!buf) {
		ft->buf = prim_alloc((size_t)1 << rt->folio_shift);
		ft->own_buf = true;
		if (!ft->buf)
			goto err_free_ft;
	}
	/* A spare started by the watchdog makes its ring itself: one made
	   here, in a thread with a descriptor table of its own, would not be
	   in the new thread's (fdtable.c). */
	if (!fd_thread_is_private())
		ft->io = swap_io_create(4);
	ft->ra_buf = prim_alloc((size_t)RA_MAX_PAGES << PAGE_SHIFT);
	if (!ft->ra_buf)
		goto err_free_io;
	if (rt->zswap) {
		ft->zc = zswap_ctx_create(rt->zswap);
		if (!ft->zc)
			goto err_free_ra;
	}
	return ft;

err_free_ra:
	prim_free(ft->ra_buf, (size_t)RA_MAX_PAGES << PAGE_SHIFT);
err_free_io:
	swap_io_destroy(ft->io);
	if (ft->own_buf)
		prim_free(ft->buf, (size_t)1 << rt->folio_shift);
err_free_ft:
	prim_free(ft, sizeof(*ft));
	return NULL;
}

void fault_thread_free(struct fault_thread *ft)
{
	if (ft->zc)
		zswap_ctx_destroy(ft->rt->zswap, ft->zc);
	swap_io_destroy(ft->io);
	prim_free(ft->ra_buf, (size_t)RA_MAX_PAGES << PAGE_SHIFT);
	if (ft->own_buf)
		prim_free(ft->buf, (size_t)1 << ft->rt->folio_shift);
	prim_free(ft, sizeof(*ft));
}

void fault_thread_waits(bool waiting)
{
	if (self)
		atomic_store_explicit(&self->waiting, waiting,
				      memory_order_relaxed);
}

void fault_thread_look(struct fault_thread *ft, struct fault_thread_state *st)
{
	st->busy_since = atomic_load(&ft->busy_since);
	st->served = atomic_load(&ft->served);
	st->addr = atomic_load(&ft->fault_addr);
	st->flags = atomic_load(&ft->fault_flags);
	st->waiting = atomic_load(&ft->waiting);
	st->ended = atomic_load(&ft->ended);
	st->end_err = atomic_load(&ft->end_err);
}

void fault_thread_reset(struct fault_thread *ft)
{
	atomic_store(&ft->ended, false);
	atomic_store(&ft->end_err, 0);
	atomic_store(&ft->busy_since, 0);
	atomic_store(&ft->waiting, false);
}

void fault_thread_end(struct fault_thread *ft, int err)
{
	atomic_store(&ft->end_err, err);
	atomic_store(&ft->ended, true);
}

void fault_thread_give(struct fault_thread *ft, uintptr_t addr, uint64_t flags)
{
	memset(&ft->first, 0, sizeof(ft->first));
	ft->first.event = UFFD_EVENT_PAGEFAULT;
	ft->first.arg.pagefault.address = addr;
	ft->first.arg.pagefault.flags = flags;
	ft->has_first = true;
}

/* Injected (fault_stall): stop serving, with msg in hand, until the end. */
static void stall(struct uswap_runtime *rt)
{
	struct pollfd pfd = { .fd = rt->wake_pipe[0], .events = POLLIN };

	while (!rt->stopping)
		prim_poll(&pfd, 1, -1);
}

/*
 * Serve one message, in the open: the watchdog sees which fault the
 * thread serves and since when.
 */
static void serve(struct fault_thread *ft, const struct uffd_msg *msg)
{
	uint64_t t0;

	if (msg->event != UFFD_EVENT_PAGEFAULT)
		return;
	t0 = prim_now_us();
	atomic_store_explicit(&ft->fault_addr, msg->arg.pagefault.address,
			      memory_order_relaxed);
	atomic_store_explicit(&ft->fault_flags, msg->arg.pagefault.flags,
			      memory_order_relaxed);
	atomic_store_explicit(&ft->busy_since, t0, memory_order_release);
	if (prim_inject(INJECT_FAULT_STALL, -1)) {
		stall(ft->rt);
		return;
	}
	handle_msg(ft, msg, t0);
	atomic_store_explicit(&ft->busy_since, 0, memory_order_release);
	atomic_fetch_add_explicit(&ft->served, 1, memory_order_relaxed);
}

/*
 * The fault thread's wait: an epoll set of its own holding the userfaultfd
 * with EPOLLEXCLUSIVE, so that a fault wakes one waiting fault thread
 * (poll(2) would wake every thread that polls, and all but one would read
 * nothing), and the wake-up pipe, which wakes them all at the end.  In
 * this thread's descriptor table (fdtable.c), tagged with ft.  -1 when it
 * cannot be made: the thread polls.
 */
static int waitset_open(struct fault_thread *ft)
{
	struct uswap_runtime *rt = ft->rt;
	int ep = prim_epoll_create();

	if (ep < 0)
		return -1;
	if (prim_epoll_add(ep, rt->uffd, true) ||
	    prim_epoll_add(ep, rt->wake_pipe[0], false)) {
		prim_close(ep);
		return -1;
	}
	return fd_install_tagged(ep, FD_WAITSET, ft);
}

static void waitset_close(struct fault_thread *ft, int ep)
{
	if (ep >= 0 && (ep = fd_release_tagged(ep, ft)) >= 0)
		prim_close(ep);
}

/* Until a message may be there to read (or the end). */
static void wait_for_msg(struct fault_thread *ft, int ep)
{
	struct pollfd pfd[2] = {
		{ .fd = ft->rt->uffd, .events = POLLIN },
		{ .fd = ft->rt->wake_pipe[0], .events = POLLIN },
	};

	if (ep < 0 || prim_epoll_wait(ep, -1) < 0)
		prim_poll(pfd, 2, -1);
}

/*
 * The fault thread: read one message, resolve it; wait when there was
 * none.  Reading first: the program, woken by the fault just served, often
 * faults again before this thread is back, and the thread that served the
 * last fault takes the next one hot, without sleeping.  One at a time: a
 * thread may wait in memcg_charge() for reclaim, and a message it had
 * read ahead would wait with it, although another thread could serve it
 * (it may be the very fault reclaim waits for).  A read that fails ends
 * the thread (the watchdog starts another); a userfaultfd that is gone
 * ends the process (watchdog_check_uffd).
 */
void *fault_thread_main(void *arg)
{
	struct fault_thread *ft = arg;
	struct uswap_runtime *rt = ft->rt;
	struct uffd_msg msgs[1];	/* one at a time: see above */
	ssize_t err = 0;
	int ep;

	self = ft;
	if (!ft->io)
		ft->io = swap_io_create(4);	/* NULL: plain reads */
	ep = waitset_open(ft);
	if (ft->has_first) {
		ft->has_first = false;
		serve(ft, &ft->first);
	}
	while (!rt->stopping) {
		ssize_t n = prim_uffd_read(rt->uffd, msgs, sizeof(msgs)), k;

		if (n == -EAGAIN || n == -EINTR) {
			wait_for_msg(ft, ep);
			continue;
		}
		if (n <= 0) {
			err = n ? n : -ENODATA;	/* 0: not a userfaultfd */
			break;
		}
		/* The program's table still has uswap's descriptors. */
		fd_check_program();
		for (k = 0; k < n / (ssize_t)sizeof(msgs[0]); k++)
			serve(ft, &msgs[k]);
	}
	if (err && !rt->stopping) {
		uswap_log_once(&rt->logged_read,
			       "reading userfaultfd failed: %s; the fault thread ends",
			       strerror((int)-err));
		watchdog_check_uffd(rt);
	}
	waitset_close(ft, ep);
	fault_thread_end(ft, (int)err);
	return NULL;
}
