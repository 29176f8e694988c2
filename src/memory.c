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
 *   - a write-protect fault: a write to an armed folio (referenced), to a
 *     clean one (now dirty: its slots are freed), or to one being evicted
 *     (the eviction is aborted) (fault_wp).
 * Several threads faulting on one folio get one load: the first takes the
 * folio to LOADING, the others find it so and return; UFFDIO_COPY wakes
 * every thread waiting in its range.
 *
 * Nothing here allocates memory or takes a lock the application may hold.
 * The budget is charged before op_lock is taken, since charging may wait
 * for the reclaimer, which needs op_lock.
 */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "swap_io.h"

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
#define RA_MAX_FOLIOS	8u
#define RA_MAX_SHIFT	14		/* folios up to 16 KiB */
#define RA_MAX_PAGES	(RA_MAX_FOLIOS << (RA_MAX_SHIFT - PAGE_SHIFT))

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
	uint32_t ra_flags[RA_MAX_FOLIOS];
	swp_entry_t entries[MAX_FOLIO_PAGES];
};

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

	if (err == -EEXIST)
		prim_uffd_wake(rt->uffd, addr, PAGE_SIZE);
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
		uint64_t t0;
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
			if (n < 0)
				return n;
			if (n > 0) {
				*pool_pages += (unsigned)n;
				i += (unsigned)n;
				continue;
			}
			/* ... else from the device, up to the next pooled page. */
			run = 1 + zswap_absent_run(rt->zswap, e + 1, run - 1);
		}
		t0 = prim_now_us();
		n = swap_io_read(io, &rt->swap[swp_type(e)], swp_offset(e), dst,
				 (size_t)run << PAGE_SHIFT);
		swap_count_io(rt, swp_type(e), false, n ? 0 : run,
			      prim_now_us() - t0);
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
	if (!rt->have_wp || rt->zswap || r->folio_shift > RA_MAX_SHIFT ||
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
		uint32_t gl = atomic_load(&g->flags), page;
		uintptr_t a;
		size_t len;

		folio_range(r, i + k, &a, &len, &page);
		if ((len >> PAGE_SHIFT) != nr || folio_state(gl) != FOLIO_SWAPPED ||
		    !memcg_try_charge(rt, nr))
			break;
		if (!atomic_compare_exchange_strong(&g->flags, &gl,
				(gl & ~FOLIO_STATE_MASK) | FOLIO_LOADING)) {
			memcg_uncharge(rt, nr);
			break;
		}
		/* Ours now: its entries cannot change under us. */
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

/* Without locks: read the readahead folios' run in one I/O. */
static int ra_read(struct fault_thread *ft)
{
	struct uswap_runtime *rt = ft->rt;
	swp_entry_t e = ft->ra_first;

	if (!ft->ra_nr)
		return 0;
	return swap_io_read(ft->io, &rt->swap[swp_type(e)], swp_offset(e),
			    ft->ra_buf, (size_t)ft->ra_pages << PAGE_SHIFT);
}

/*
 * Under op_lock (read) again: install the readahead folios clean, or give
 * them back (SWAPPED, uncharged, waiters woken) when the read failed.
 */
static void ra_finish(struct fault_thread *ft, struct region *r, uint32_t i,
		      uint32_t nr, int err)
{
	struct uswap_runtime *rt = ft->rt;
	uint32_t k, done = 0, page;

	for (k = 0; k < ft->ra_nr; k++) {
		struct folio *g = &r->folios[i + 1 + k];
		uint32_t gl = ft->ra_flags[k];
		uintptr_t a;
		size_t len;
		int cerr = err;

		folio_range(r, i + 1 + k, &a, &len, &page);
		if (!cerr) {
			cerr = prim_uffd_copy(rt->uffd, a,
					      (char *)ft->ra_buf + ((size_t)k * nr << PAGE_SHIFT),
					      len, true, NULL);
			if (cerr == -EEXIST)
				cerr = 0;
		}
		if (cerr) {
			atomic_store(&g->flags, gl);
			prim_uffd_wake(rt->uffd, a, len);
			memcg_uncharge(rt, nr);
			continue;
		}
		atomic_store(&g->flags, (gl & F_WORKINGSET) | FOLIO_RESIDENT |
					F_CLEAN);
		pthread_mutex_lock(&r->lru_lock);
		lru_add(r, i + 1 + k, false);
		pthread_mutex_unlock(&r->lru_lock);
		done += nr;
	}
	if (done) {
		count_event(rt, USWAP_SWAP_RA, done);
		count_event(rt, USWAP_PSWPIN, done);
	}
	atomic_store(&r->ra_last, done);
	atomic_store(&r->ra_next, i + 1 + ft->ra_nr);
	ft->ra_nr = 0;
}

/*
 * The pool returned a corrupt object for folio f: never install it.  The
 * folio stays swapped and its range is poisoned, so that the program gets
 * SIGBUS there, as the kernel does for a memory error; without
 * UFFDIO_POISON the process gets SIGBUS at once.
 */
static void fault_corrupt(struct uswap_runtime *rt, struct region *r,
			  struct folio *f, uint32_t fl, uintptr_t addr,
			  size_t len)
{
	(void)r;
	count_event(rt, USWAP_SWAP_CORRUPT, 1);
	uswap_log("corrupt compressed data for %p..%p (checksum mismatch): "
		  "the program gets SIGBUS there", (void *)addr,
		  (void *)(addr + len));
	atomic_store(&f->flags, fl);
	if (prim_uffd_poison(rt->uffd, addr, len))
		kill(getpid(), SIGBUS);
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
		int ra_err;

		memcpy(ft->entries, &r->swp[page], nr * sizeof(swp_entry_t));
		ra_begin(ft, r, i, nr);
		pthread_rwlock_unlock(&rt->op_lock);
		err = swap_read_entries(rt, ft->zc, ft->io, ft->entries, nr,
					ft->buf, &pooled);
		ra_err = ra_read(ft);
		pthread_rwlock_rdlock(&rt->op_lock);
		ra_finish(ft, r, i, nr, ra_err);
		if (err == -EBADMSG) {
			fault_corrupt(rt, r, f, fl, addr, len);
			return -EBADMSG;
		}
		if (err) {
			/*
			 * The data is still in its slots: leave the folio
			 * swapped and let the thread fault again.
			 */
			count_event(rt, USWAP_SWAP_IO_ERROR, 1);
			uswap_log_once(&rt->logged_io, "swap read failed: %s",
				       strerror(-err));
			atomic_store(&f->flags, fl);
			prim_uffd_wake(rt->uffd, addr, len);
			return -EIO;
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
	}

	err = prim_uffd_copy(rt->uffd, addr, src, len, keep_clean, NULL);
	if (err && err != -EEXIST) {
		/* The range went away under us (unmapped by the program). */
		atomic_store(&f->flags, fl);
		prim_uffd_wake(rt->uffd, addr, len);
		return err;
	}
	if (swapped) {
		if (!keep_clean)
			region_free_entries(r, page, nr);
		count_event(rt, USWAP_PGMAJFAULT, 1);
		count_event(rt, USWAP_PSWPIN, nr - pooled - zero_entries(ft, nr));
	} else {
		count_event(rt, USWAP_ZERO_FILL, 1);
	}
	fl = (fl & F_WORKINGSET) | FOLIO_RESIDENT | (keep_clean ? F_CLEAN : 0);
	atomic_store(&f->flags, fl);
	pthread_mutex_lock(&r->lru_lock);
	lru_add(r, i, active);
	pthread_mutex_unlock(&r->lru_lock);
	return 0;
}

static void fault_missing(struct fault_thread *ft, uintptr_t addr, bool write)
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
		case FOLIO_RESIDENT:
		case FOLIO_EVICTING:
			fault_repair(rt, addr);
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
 * A write hit a write-protected page.  Whatever the folio's state, the
 * writer must end up either running or woken to fault again.
 */
static void fault_wp(struct fault_thread *ft, uintptr_t addr)
{
	struct uswap_runtime *rt = ft->rt;
	struct region *r;
	struct folio *f;
	uint32_t i, fl, nfl, page;
	uintptr_t a;
	size_t len;

	count_event(rt, USWAP_WP_FAULT, 1);
	pthread_rwlock_rdlock(&rt->op_lock);
	r = region_find_locked(rt, addr);
	if (!r) {
		pthread_rwlock_unlock(&rt->op_lock);
		prim_uffd_wake(rt->uffd, addr, PAGE_SIZE);
		return;
	}
	i = folio_index(r, addr);
	f = &r->folios[i];
	folio_range(r, i, &a, &len, &page);
	fl = atomic_load(&f->flags);
	for (;;) {
		unsigned s = folio_state(fl);

		if (s == FOLIO_ZAPPING) {
			if (atomic_compare_exchange_weak(&f->flags, &fl,
							 fl | F_WAITERS))
				break;
			continue;
		}
		if (s != FOLIO_RESIDENT && s != FOLIO_EVICTING) {
			/* Gone or coming back: the thread faults again. */
			prim_uffd_wake(rt->uffd, addr, PAGE_SIZE);
			break;
		}
		nfl = (fl & ~(F_ARMED | F_CLEAN | FOLIO_STATE_MASK)) |
		      F_REFERENCED | FOLIO_RESIDENT;
		if (!atomic_compare_exchange_weak(&f->flags, &fl, nfl))
			continue;
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
		if (s == FOLIO_EVICTING) {
			/* Abort: the reclaimer's CAS to ZAPPING will fail. */
			pthread_mutex_lock(&r->lru_lock);
			lru_add(r, i, true);
			pthread_mutex_unlock(&r->lru_lock);
		}
		prim_uffd_wp(rt->uffd, a, len, false, true);
		break;
	}
	pthread_rwlock_unlock(&rt->op_lock);
}

static void handle_msg(struct fault_thread *ft, const struct uffd_msg *msg)
{
	uint64_t t0 = prim_now_us();
	uint64_t flags = msg->arg.pagefault.flags;
	uintptr_t addr = (uintptr_t)msg->arg.pagefault.address & PAGE_MASK;

	if (msg->event != UFFD_EVENT_PAGEFAULT)
		return;
	count_event(ft->rt, USWAP_PGFAULT, 1);
	if (flags & UFFD_PAGEFAULT_FLAG_WP)
		fault_wp(ft, addr);
	else
		fault_missing(ft, addr, flags & UFFD_PAGEFAULT_FLAG_WRITE);
	fault_done(ft->rt, t0);
}

/* A fault thread's state, in internal memory: buf is one folio. */
struct fault_thread *fault_thread_alloc(struct uswap_runtime *rt, void *buf)
{
	struct fault_thread *ft = prim_alloc(sizeof(*ft));

	if (!ft)
		return NULL;
	ft->rt = rt;
	ft->buf = buf;
	ft->io = swap_io_create(4);
	ft->ra_buf = prim_alloc((size_t)RA_MAX_PAGES << PAGE_SHIFT);
	if (!ft->ra_buf) {
		swap_io_destroy(ft->io);
		prim_free(ft, sizeof(*ft));
		return NULL;
	}
	if (rt->zswap) {
		ft->zc = zswap_ctx_create(rt->zswap);
		if (!ft->zc) {
			swap_io_destroy(ft->io);
			prim_free(ft->ra_buf, (size_t)RA_MAX_PAGES << PAGE_SHIFT);
			prim_free(ft, sizeof(*ft));
			return NULL;
		}
	}
	return ft;
}

void fault_thread_free(struct fault_thread *ft)
{
	if (ft->zc)
		zswap_ctx_destroy(ft->rt->zswap, ft->zc);
	swap_io_destroy(ft->io);
	prim_free(ft->ra_buf, (size_t)RA_MAX_PAGES << PAGE_SHIFT);
	prim_free(ft, sizeof(*ft));
}

/*
 * The fault thread: read one message, resolve it.  One at a time: a thread
 * may wait in memcg_charge() for reclaim, and a message it had read ahead
 * would wait with it, although another thread could serve it (it may be
 * the very fault reclaim waits for).
 */
void *fault_thread_main(void *arg)
{
	struct fault_thread *ft = arg;
	struct uswap_runtime *rt = ft->rt;
	struct uffd_msg msgs[1];	/* one at a time: see below */
	struct pollfd pfd[2];

	pfd[0].fd = rt->uffd;
	pfd[0].events = POLLIN;
	pfd[1].fd = rt->wake_pipe[0];
	pfd[1].events = POLLIN;
	while (!rt->stopping) {
		ssize_t n = read(rt->uffd, msgs, sizeof(msgs));
		ssize_t k;

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				poll(pfd, 2, -1);
				continue;
			}
			uswap_log("reading userfaultfd failed: %s; fault thread stops",
				  strerror(errno));
			break;
		}
		for (k = 0; k < n / (ssize_t)sizeof(msgs[0]); k++)
			handle_msg(ft, &msgs[k]);
	}
	return NULL;
}
