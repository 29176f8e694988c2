// SPDX-License-Identifier: MIT
/*
 * pageout.c - getting the reclaimer's victims out: capturing their
 * contents and storing them (steps 2 and 3 of the eviction protocol in
 * vmscan.c; the kernel's try_to_unmap(), pageout() and swap_writepage()).
 *
 * A batch of victims (about a cluster's worth, EVICTING) goes out in four
 * moves:
 *
 *   1. slots: each dirty victim gets 2^order contiguous slots on the
 *      device its memory's node prefers (swapon.c), or one per page when
 *      no device has such a run; one without room is left alone;
 *   2. capture: its pages are moved out of the program's reach into the
 *      reclaimer's staging area (UFFDIO_MOVE, one call for each run of
 *      victims side by side, which the batch is sorted into; the kernel
 *      refuses a page pinned for I/O, and the folio stays resident), or,
 *      when they cannot move, left in place write-protected and copied
 *      into the staging area through /proc/self/mem, or, without
 *      UFFDIO_MOVE and read-write, read in place (victim.src says where
 *      they are read);
 *   3. the compressed pool, if there is one, takes what it will, the
 *      victims compressed in parallel by its threads (zswap.c);
 *   4. the rest goes to the devices from victim.src: runs of consecutive
 *      slots, across victims, each run one request, the whole batch
 *      submitted at once (page_io.c).  The crc32c of every slot written is
 *      computed while the writes are in flight and kept once they
 *      completed (swap_io.h).
 *
 * A victim without room, or whose write failed, loses its slots (ents
 * NULL) and stays resident (vmscan.c puts it back, moving its pages back
 * first); a device whose writes fail leaves the lists for good, one
 * without room until slots are freed; both are counted and logged once
 * (docs/design.md, invariant 4).  A clean victim (its slots still hold it) is
 * captured but not written.
 *
 * The staging area is the reclaimer's own memory: what is in it can be
 * read without a fault the reclaimer would have to wait for, and nothing
 * the program does reaches it.  It is empty between batches (and its
 * pages never moved into read as zeros: it is registered for
 * write-protect faults only).
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base.h"
#include "log.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "swap.h"
#include "uswap.h"
#include "vma.h"
#include "zswap.h"
#include "swap_io.h"
#include "trace.h"
#include "vmscan.h"

/*
 * The node each dirty victim's memory is on (policy "page": one move_pages
 * call for the batch), or the reclaiming thread's (policy "cpu").
 */
static void victim_nodes(struct reclaimer *rc, unsigned nv)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned k;
	int here = swap_node_now(rt);

	for (k = 0; k < nv; k++) {
		rc->pages[k] = (void *)rc->victims[k].addr;
		rc->nodes[k] = here;
	}
	if (rt->opt.swap_node_policy != USWAP_SWAP_NODE_PAGE || rt->nr_nodes < 2)
		return;
	if (prim_move_pages(nv, rc->pages, rc->nodes))
		for (k = 0; k < nv; k++)
			rc->nodes[k] = here;
	for (k = 0; k < nv; k++)
		if (rc->nodes[k] < 0)
			rc->nodes[k] = here;	/* not resident: no node */
}

/*
 * Give each dirty victim slots: 2^order contiguous ones on one device, or
 * one per page when no device has such a run (swapon.c).  Returns -ENOSPC
 * when some victim found no room (it keeps ents NULL and stays resident).
 * Before the victims are captured: one without room is left alone.
 */
int alloc_victims(struct reclaimer *rc, unsigned nv)
{
	unsigned k, used = 0;
	int nospace = 0;

	victim_nodes(rc, nv);
	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];

		v->pooled = 0;
		v->ents = NULL;
		if (v->clean || v->skip)
			continue;
		if (swap_alloc_folio(rc->rt, &rc->pick, rc->nodes[k],
				     v->nr_pages, &rc->ents[used]) < 0) {
			nospace = -ENOSPC;
			continue;
		}
		v->ents = &rc->ents[used];
		used += v->nr_pages;
	}
	return nospace;
}

/* Are the victim's slots one run on one device? */
static bool victim_contiguous(const struct victim *v)
{
	uint32_t k;

	for (k = 1; k < v->nr_pages; k++)
		if (v->ents[k] != v->ents[0] + k)
			return false;
	return true;
}

/*
 * Offer the dirty victims to the compressed pool, in parallel: a victim
 * whose slots are one run as one job (one unit in "folio" mode), a split
 * one page by page.
 */
static void pool_victims(struct reclaimer *rc, unsigned nv)
{
	unsigned k, nj = 0, first[MAX_VICTIMS], p;

	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];

		first[k] = nj;
		if (v->clean || !v->ents)
			continue;
		if (victim_contiguous(v)) {
			rc->jobs[nj++] = (struct zswap_job){
				.src = (const void *)v->src,
				.slot = v->ents[0], .nr = v->nr_pages,
			};
			continue;
		}
		for (p = 0; p < v->nr_pages; p++)
			rc->jobs[nj++] = (struct zswap_job){
				.src = (const void *)(v->src + ((uintptr_t)p << PAGE_SHIFT)),
				.slot = v->ents[p], .nr = 1,
			};
	}
	zswap_store_batch(rc->rt->zswap, rc->zc, rc->jobs, nj);
	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];
		unsigned end = k + 1 < nv ? first[k + 1] : nj;

		for (p = first[k]; p < end; p++)
			v->pooled += rc->jobs[p].stored;
		if (v->ents && v->pooled == v->nr_pages)
			v->written = true;
	}
}

static void victim_write_failed(struct reclaimer *rc, struct victim *v,
				int err)
{
	struct uswap_runtime *rt = rc->rt;
	uint32_t p;

	for (p = 0; p < v->nr_pages; p++)
		swap_free_slots(rt, v->ents[p], 1);
	v->ents = NULL;
	v->written = false;
	if (err == -ENODEV || err == -ENOSPC)
		return;		/* no device, no room: counted as swap_full */
	count_event(rt, USWAP_SWAP_IO_ERROR, 1);
	uswap_log_once(&rt->logged_io, "swap write failed: %s; folios stay resident",
		       strerror(-err));
}

/* Does page p of v still need the device (not clean, not in the pool)? */
static bool page_needs_write(struct reclaimer *rc, const struct victim *v,
			     uint32_t p)
{
	if (v->clean || !v->ents || v->written)
		return false;
	return !v->pooled || !zswap_present(rc->rt->zswap, v->ents[p]);
}

/*
 * Add one run to the batch: pages of victims [k, ...) whose slots follow
 * each other on one device, from victim k page *p on.  Page addresses that
 * follow each other share an iovec.  Advances (*k, *p) past the run.
 */
static void add_run(struct reclaimer *rc, unsigned nv, unsigned *kp,
		    uint32_t *pp, unsigned *niov_used)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned k = *kp, niov = 0, first = k, last = k;
	struct iovec *iov = &rc->iov[*niov_used];
	uint32_t p = *pp, n = 0;
	swp_entry_t start = rc->victims[k].ents[p], next = start;
	struct swap_io_req *req = &rc->reqs[rc->nr_reqs];
	uintptr_t addr_next = 0;

	while (k < nv) {
		struct victim *v = &rc->victims[k];
		uintptr_t addr;

		if (p >= v->nr_pages) {
			k++;
			p = 0;
			continue;
		}
		if (!page_needs_write(rc, v, p) || v->ents[p] != next)
			break;
		addr = v->src + ((uintptr_t)p << PAGE_SHIFT);
		if (niov && addr == addr_next) {
			iov[niov - 1].iov_len += PAGE_SIZE;
		} else {
			iov[niov].iov_base = (void *)addr;
			iov[niov].iov_len = PAGE_SIZE;
			niov++;
		}
		addr_next = addr + PAGE_SIZE;
		next++;
		n++;
		last = k;
		p++;
	}
	*kp = k;
	*pp = p;
	*niov_used += niov;
	*req = (struct swap_io_req){
		.si = &rt->swap[swp_type(start)], .offset = swp_offset(start),
		.iov = iov, .iovcnt = (int)niov, .len = (size_t)n << PAGE_SHIFT,
	};
	rc->req_victims[rc->nr_reqs][0] = first;
	rc->req_victims[rc->nr_reqs][1] = last;
	rc->nr_reqs++;
}

/*
 * While the runs are in flight: the checksum of every page written, in
 * rc->crc.  The pages cannot change until the victims are zapped (they are
 * moved or copied out of the program's reach, or write-protected: a write
 * aborts the eviction, and the slots are dropped with whatever was
 * computed for them).
 */
static void checksum_runs(void *arg)
{
	struct reclaimer *rc = arg;
	uint32_t *crc = rc->crc;
	unsigned i;

	program_memory_read_begin();
	for (i = 0; i < rc->nr_reqs; i++) {
		const struct swap_io_req *req = &rc->reqs[i];

		if (req->si->csum)
			swap_csum_compute(req->iov, req->iovcnt, crc);
		crc += req->len >> PAGE_SHIFT;
	}
	program_memory_read_end();
}

/*
 * Submit every run at once (io_uring: all in flight together), checksum
 * them meanwhile, record the checksums of the runs written, then fail the
 * victims of the runs that failed.  Returns -ENOSPC when a device had no
 * room.
 */
static int submit_runs(struct reclaimer *rc)
{
	struct uswap_runtime *rt = rc->rt;
	uint64_t t0 = prim_now_us(), us;
	const uint32_t *crc = rc->crc;
	bool verify = false;
	int nospace = 0;
	unsigned i, k;

	/* A device keeps checksums (si->csum) when they are wanted (swapon.c). */
	for (i = 0; i < rc->nr_reqs; i++)
		verify |= rc->reqs[i].si->csum != NULL;
	swap_io_write_batch_during(rc->io, rc->reqs, rc->nr_reqs,
				   verify ? checksum_runs : NULL, rc);
	us = prim_now_us() - t0;
	for (i = 0; i < rc->nr_reqs; i++) {
		struct swap_io_req *req = &rc->reqs[i];
		const uint32_t nr = (uint32_t)(req->len >> PAGE_SHIFT);
		unsigned dev = req->si->type;

		if (!req->result && req->si->csum)
			memcpy(req->si->csum + req->offset, crc,
			       nr * sizeof(*crc));
		crc += nr;
		swap_count_io(rt, dev, true, req->result ? 0 : nr, us);
		if (!req->result)
			continue;
		if (req->result == -ENOSPC)
			nospace = -ENOSPC;
		swap_device_error(rt, dev, req->result);
		for (k = rc->req_victims[i][0]; k <= rc->req_victims[i][1]; k++)
			if (rc->victims[k].ents)
				victim_write_failed(rc, &rc->victims[k],
						    req->result);
	}
	return nospace;
}

/*
 * Store each dirty victim that has slots (alloc_victims()): the pool takes
 * what it will, then the rest is written to the devices from where its
 * contents were captured, run by run of consecutive slots (across
 * victims), every run in one batch.  A victim whose write failed loses its
 * slots (ents NULL) and stays resident.  Returns -ENOSPC when a device
 * had no room.
 */
int write_victims(struct reclaimer *rc, unsigned nv)
{
	struct uswap_runtime *rt = rc->rt;
	bool device = swap_has_storage(&rt->swap[0]);
	unsigned k, niov = 0;
	uint32_t p;
	int nospace = 0;

	if (rt->zswap && rc->zc)
		pool_victims(rc, nv);
	rc->nr_reqs = 0;
	k = 0;
	p = 0;
	while (k < nv) {
		struct victim *v = &rc->victims[k];

		if (p >= v->nr_pages || !page_needs_write(rc, v, p)) {
			if (++p >= v->nr_pages) {
				k++;
				p = 0;
			}
			continue;
		}
		if (!device) {
			victim_write_failed(rc, v, -ENODEV);
			nospace = -ENOSPC;
			k++;
			p = 0;
			continue;
		}
		add_run(rc, nv, &k, &p, &niov);
	}
	if (rc->nr_reqs && submit_runs(rc) == -ENOSPC)
		nospace = -ENOSPC;
	/* Every victim with slots left was stored whole. */
	for (k = 0; k < nv; k++)
		if (rc->victims[k].ents)
			rc->victims[k].written = true;
	return nospace;
}

/* ---- step 2 of the protocol: capture ---- */

static uintptr_t staging_page(const struct reclaimer *rc, unsigned k)
{
	return (uintptr_t)rc->staging + ((uintptr_t)k << PAGE_SHIFT);
}

/*
 * Clear F_MOVED (v's pages are back, or never left): a fault that waited
 * on it meanwhile is woken, to find them.
 */
static void unmark_moved(struct uswap_runtime *rt, struct victim *v)
{
	struct folio *f = &v->r->folios[v->folio];
	uint32_t fl = atomic_fetch_and(&f->flags, ~(F_MOVED | F_WAITERS));

	if (fl & F_WAITERS)
		prim_uffd_wake(rt->uffd, v->addr, (size_t)v->nr_pages << PAGE_SHIFT);
}

/*
 * Pagemap entries of n pages from addr into pm.  false: unknown (no
 * pagemap).
 */
static bool read_pagemap(struct reclaimer *rc, uintptr_t addr, uint32_t n,
			 uint64_t *pm)
{
	int fd = rc->rt->pagemap_fd;
	size_t len = n * sizeof(*pm);

	return fd >= 0 && prim_pread(fd, pm, len, (off_t)((addr >> PAGE_SHIFT) *
					 sizeof(*pm))) == (ssize_t)len;
}

/*
 * How many of the n pages from `from` moved to `to`, counted from the
 * first, whatever the move said: the kernel's UFFDIO_MOVE can move pages
 * in a retry of its own and not count them (it then fails with EEXIST on
 * the first of them).  A page gone from `from` and present at `to` moved.
 */
static uint32_t moved_really(struct reclaimer *rc, uintptr_t to,
			     uintptr_t from, uint32_t n)
{
	uint32_t k;

	if (!read_pagemap(rc, from, n, rc->pm) ||
	    !read_pagemap(rc, to, n, rc->pm_to))
		return 0;
	for (k = 0; k < n; k++)
		if ((rc->pm[k] & PM_PRESENT) || !(rc->pm_to[k] & PM_PRESENT))
			break;
	return k;
}

/*
 * Move n pages from src to dst, all of them: 0, or the -errno of the page
 * that stopped it, *moved the bytes that did move (checked against
 * pagemap, see moved_really()).  Never with ALLOW_SRC_HOLES: the kernel's
 * retry that miscounts can then spin over a hole for ever.
 */
static int move_pages_checked(struct reclaimer *rc, uintptr_t dst,
			      uintptr_t src, uint32_t n, size_t *moved)
{
	size_t done = 0, got;
	int err = 0;

	while (done < ((size_t)n << PAGE_SHIFT)) {
		uint32_t more;

		err = prim_uffd_move(rc->rt->uffd, dst + done, src + done,
				     ((size_t)n << PAGE_SHIFT) - done, false, &got);
		done += got;
		if (!err)
			break;
		more = moved_really(rc, dst + done, src + done,
				    n - (uint32_t)(done >> PAGE_SHIFT));
		if (!more)
			break;
		done += (size_t)more << PAGE_SHIFT;
		err = 0;
	}
	*moved = done;
	return err;
}

/*
 * Move v's pages that are in the staging area (STAGE_MOVED) back where
 * they were, run by run.  Nothing can have been mapped there meanwhile
 * (every change of the region waits for v, and a fault on it waits too);
 * should the move fail anyway (the program changed the mapping with a
 * raw system call), what can be is copied back, and that is logged.
 * Caller owns v (EVICTING, F_MOVED).
 */
void move_back(struct reclaimer *rc, struct victim *v, unsigned first)
{
	struct uswap_runtime *rt = rc->rt;
	uint32_t p = 0, run;

	while (p < v->nr_pages) {
		uintptr_t src = staging_page(rc, first + p);
		uintptr_t dst = v->addr + ((uintptr_t)p << PAGE_SHIFT);
		size_t moved = 0;
		int err;

		if (rc->stage[first + p] != STAGE_MOVED) {
			p++;
			continue;
		}
		for (run = 1; p + run < v->nr_pages &&
		     rc->stage[first + p + run] == STAGE_MOVED; run++)
			;
		err = move_pages_checked(rc, dst, src, run, &moved);
		if (err) {
			uswap_log_once(&rt->logged_move,
				       "moving pages back to %p failed (%s): they are copied back",
				       (void *)(dst + moved), strerror(-err));
			prim_uffd_copy(rt->uffd, dst + moved, (void *)(src + moved),
				       ((size_t)run << PAGE_SHIFT) - moved, false,
				       NULL);
		}
		memset(&rc->stage[first + p], STAGE_EMPTY, run);
		trace_folio(TR_MOVE_BACK, v->addr, v->nr_pages, 0, run);
		p += run;
	}
}

/* Drop n pages of the staging area from page k: copies made for nothing. */
static void staging_zap(struct reclaimer *rc, unsigned k, unsigned n)
{
	struct iovec iov = {
		.iov_base = (void *)staging_page(rc, k),
		.iov_len = (size_t)n << PAGE_SHIFT,
	};

	prim_zap_ranges(&iov, 1);
	memset(&rc->stage[k], STAGE_EMPTY, n);
}

/* Pagemap entries of v's pages [k, nr) into rc->pm + k.  false: unknown. */
bool victim_pagemap(struct reclaimer *rc, struct victim *v, uint32_t k)
{
	return read_pagemap(rc, v->addr + ((uintptr_t)k << PAGE_SHIFT),
			    v->nr_pages - k, rc->pm + k);
}

enum refused { REFUSED_AGAIN, REFUSED_SHARED, REFUSED_PINNED };

/*
 * The kernel would not move page k of v (EBUSY): the page is pinned, or
 * not this process's alone.  One another process maps too (a fork's) is
 * not pinned: the kernel copies a page pinned at fork for the child, and
 * gives a process that pins a shared page a copy of its own first.  It is
 * left in place, write-protected (REFUSED_SHARED).  One this process maps
 * alone that a fork left marked shared (its sharer has gone since) is made
 * its own by a read-only pin, as the kernel would on the next write: the
 * rest of v, once (REFUSED_AGAIN).  Otherwise it is pinned.  *shared gets
 * how many shared pages follow from k.
 */
static enum refused move_refused(struct reclaimer *rc, struct victim *v,
				 uint32_t k, uint32_t *unshared, uint32_t *shared)
{
	uint32_t p, run;

	if (!victim_pagemap(rc, v, k))
		return REFUSED_PINNED;	/* cannot tell: the safe side */
	if ((rc->pm[k] & PM_MINE) == PM_PRESENT) {
		/* With the shared pages that follow it. */
		for (*shared = 1; k + *shared < v->nr_pages &&
		     (rc->pm[k + *shared] & PM_MINE) == PM_PRESENT; (*shared)++)
			;
		return REFUSED_SHARED;
	}
	if (k < *unshared)
		return REFUSED_PINNED;	/* made its own already */
	for (p = k; p < v->nr_pages; p += run) {
		run = 1;
		if ((rc->pm[p] & PM_MINE) != PM_MINE)
			continue;
		while (p + run < v->nr_pages &&
		       (rc->pm[p + run] & PM_MINE) == PM_MINE)
			run++;
		prim_read_pinned(rc->scratch, v->addr + ((uintptr_t)p << PAGE_SHIFT),
				 (size_t)run << PAGE_SHIFT);
	}
	*unshared = v->nr_pages;
	return REFUSED_AGAIN;
}

/*
 * Copy pages [p, p + n) of v into the staging area through /proc/self/mem:
 * they stay where they are, write-protected, and are read without being
 * touched (one may be PROT_NONE, or under a key).  0 or -errno.
 */
static int copy_pages(struct reclaimer *rc, struct victim *v, unsigned first,
		      uint32_t p, uint32_t n)
{
	size_t len = (size_t)n << PAGE_SHIFT;
	ssize_t got;

	if (rc->mem_fd < 0)
		return -EBADF;
	got = prim_pread(rc->mem_fd, (void *)staging_page(rc, first + p), len,
			 (off_t)(v->addr + ((uintptr_t)p << PAGE_SHIFT)));
	if (got != (ssize_t)len)
		return got < 0 ? (int)got : -EIO;
	memset(&rc->stage[first + p], STAGE_COPIED, n);
	return 0;
}

/*
 * Mark v F_MOVED before its pages move, unless a write aborted its
 * eviction first (false): a fault on it from now on waits for step 4.
 */
static bool mark_moved(struct victim *v)
{
	struct folio *f = &v->r->folios[v->folio];
	uint32_t fl = atomic_load(&f->flags);

	do {
		if (folio_state(fl) != FOLIO_EVICTING)
			return false;
	} while (!atomic_compare_exchange_weak(&f->flags, &fl, fl | F_MOVED));
	return true;
}

/*
 * Step 2a: move v's pages into the staging area from page `first` of it,
 * page by page when its folio spans several mappings; a page shared with
 * another process, or one that cannot move (not read-write: EINVAL), is
 * copied and left in place; a hole (a page the program dropped behind
 * uswap's back) stays a hole, read as zeros.  v is marked already
 * (mark_moved()), and its first `done` pages are in the staging area (a
 * run's move, move_run()).  0 when captured (CAPTURE_MOVED; or
 * CAPTURE_COPIED when no page moved); -EBUSY when a page is pinned (every
 * page moved is back); another -errno when v cannot be captured.
 */
static int move_victim(struct reclaimer *rc, struct victim *v, unsigned first,
		       uint32_t done)
{
	struct uswap_runtime *rt = rc->rt;
	struct folio *f = &v->r->folios[v->folio];
	uint32_t p = done, step = v->nr_pages;
	uint32_t unshared = 0, inplace = 0, moved_pages = done, n;
	int err = 0;

	while (p < v->nr_pages) {
		uintptr_t at = v->addr + ((uintptr_t)p << PAGE_SHIFT);
		size_t moved = 0;

		n = MIN(step, v->nr_pages - p);
		err = move_pages_checked(rc, staging_page(rc, first + p), at, n,
					 &moved);
		memset(&rc->stage[first + p], STAGE_MOVED, moved >> PAGE_SHIFT);
		p += (uint32_t)(moved >> PAGE_SHIFT);
		moved_pages += (uint32_t)(moved >> PAGE_SHIFT);
		if (!err)
			continue;
		if (err == -EINVAL && step > 1) {
			step = 1;	/* across mappings, maybe */
			continue;
		}
		at = v->addr + ((uintptr_t)p << PAGE_SHIFT);
		n = 1;
		if (err == -EBUSY) {
			enum refused r = move_refused(rc, v, p, &unshared, &n);

			if (r == REFUSED_AGAIN)
				continue;
			if (r == REFUSED_PINNED)
				break;
		} else if (err == -EINVAL || err == -ENOENT) {
			/* Not read-write (or locked), or a hole. */
			if (!read_pagemap(rc, at, 1, rc->pm))
				break;
			if (!(rc->pm[0] & PM_PRESENT)) {
				trace_folio(TR_HOLE, v->addr, v->nr_pages,
					    atomic_load(&f->flags), p);
				rc->stage[first + p] = STAGE_HOLE;
				/* Clean: its slot holds what the hole dropped. */
				if (v->clean)
					region_free_entries(v->r, v->page + p, 1);
				p++;
				continue;
			}
			if (err == -ENOENT)
				break;
		} else {
			break;
		}
		/* Shared, or not read-write: left in place, copied. */
		err = copy_pages(rc, v, first, p, n);
		if (err)
			break;
		inplace += n;
		p += n;
	}
	if (p < v->nr_pages) {
		trace_folio(TR_MOVE_FAIL, v->addr, v->nr_pages,
			    atomic_load(&f->flags), err ? err : -EIO);
		move_back(rc, v, first);
		/* Copies, and what a failed move back left: the next victim's. */
		staging_zap(rc, first, v->nr_pages);
		unmark_moved(rt, v);
		return err ? err : -EIO;
	}
	v->src = staging_page(rc, first);
	if (!moved_pages) {
		/* Nothing moved: evicted in place after all. */
		v->how = CAPTURE_COPIED;
		unmark_moved(rt, v);
		return 0;
	}
	v->how = CAPTURE_MOVED;
	v->inplace = inplace;
	trace_folio(TR_MOVED, v->addr, v->nr_pages, atomic_load(&f->flags),
		    moved_pages);
	return 0;
}

/* Can v's pages move (the protocol's 2a)?  Not when it has no room. */
static bool victim_movable(const struct reclaimer *rc, const struct victim *v)
{
	return rc->can_move && (v->clean || v->ents) &&
	       !(v->vmflags & VMA_PROTECTED);
}

/*
 * Mark victims k, k + 1, ... that lie side by side in one region, each
 * movable: a run whose pages move out in one UFFDIO_MOVE (move_run()).
 * A victim that a fork may share is a run of its own: the kernel refuses
 * to move a shared page, and a run would stop there only to go on.
 * Returns how many were marked (0: a write aborted victim k's eviction).
 */
static unsigned mark_run(struct reclaimer *rc, unsigned k, unsigned nv)
{
	const struct victim *first = &rc->victims[k];
	uintptr_t end = first->addr;
	unsigned n = 0;

	while (k + n < nv) {
		struct victim *v = &rc->victims[k + n];

		if (!victim_movable(rc, v) || v->r != first->r ||
		    v->addr != end || (n && (v->fl & F_SHARED)) ||
		    !mark_moved(v))
			break;
		end += (uintptr_t)v->nr_pages << PAGE_SHIFT;
		if (n++ == 0 && (v->fl & F_SHARED))
			break;
	}
	return n;
}

/*
 * Move the pages of victims [k, end), marked and side by side, into the
 * staging area from page `at` of it, in one UFFDIO_MOVE: the kernel
 * flushes the TLB once for the call, where a move per victim flushes once
 * per victim, and with 4 KiB folios that flush was most of what evicting
 * cost.  Returns how many pages moved, counted from the first; where the
 * move stopped (a pinned page, a change of mapping, a hole), move_victim()
 * goes on with that victim alone.
 */
static uint32_t move_run(struct reclaimer *rc, unsigned k, unsigned end,
			 unsigned at)
{
	uint32_t pages = 0, moved;
	size_t got = 0;
	unsigned m;

	for (m = k; m < end; m++)
		pages += rc->victims[m].nr_pages;
	move_pages_checked(rc, staging_page(rc, at), rc->victims[k].addr,
			   pages, &got);
	moved = (uint32_t)(got >> PAGE_SHIFT);
	memset(&rc->stage[at], STAGE_MOVED, moved);
	return moved;
}

/*
 * Empty the staging area for the next batch (step 5).  The program's
 * mlockall(MCL_CURRENT) locks it and fills it too, as all of the process's
 * memory: it is unlocked again, and emptied whole (`all`).
 */
void staging_empty(struct reclaimer *rc, bool all)
{
	struct iovec iov = {
		.iov_base = rc->staging,
		.iov_len = (size_t)(all ? MAX_BATCH_PAGES : rc->staged) << PAGE_SHIFT,
	};

	if (all)
		prim_mlock(iov.iov_base, iov.iov_len, false, false);
	if (iov.iov_len && prim_zap_ranges(&iov, 1) &&
	    (prim_mlock(iov.iov_base, iov.iov_len, false, false) ||
	     prim_zap_ranges(&iov, 1))) {
		/* Nothing can be moved into pages still there. */
		uswap_log_once(&rc->rt->logged_move,
			       "emptying the reclaimer's staging area failed: pages are evicted in place from now on");
		rc->can_move = false;
		atomic_store(&rc->rt->reads_in_place, true);
	}
	rc->staged = 0;
}

/* A victim given up before it was stored: its new slots go. */
static void victim_give_up(struct reclaimer *rc, struct victim *v)
{
	uint32_t p;

	v->skip = true;
	if (!v->ents)
		return;
	for (p = 0; p < v->nr_pages; p++)
		swap_free_slots(rc->rt, v->ents[p], 1);
	v->ents = NULL;
}

/*
 * A clean victim left in place: a page the program dropped behind uswap's
 * back (a raw madvise) is a hole now, and its slot holds what it dropped:
 * the slot goes (the page reads as zeros).  Before anything reads it.
 */
static void clean_holes(struct reclaimer *rc, struct victim *v)
{
	uint32_t p;

	if (!v->clean || !victim_pagemap(rc, v, 0))
		return;
	for (p = 0; p < v->nr_pages; p++)
		if (!(rc->pm[p] & PM_PRESENT))
			region_free_entries(v->r, v->page + p, 1);
}

/*
 * Step 2: capture each victim's contents (the protocol's 2a or 2b).  A
 * victim that cannot be captured is skipped (it stays resident).  Called
 * without locks: the victims are ours (EVICTING), and every change to
 * their regions waits for them.
 */
void capture_victims(struct reclaimer *rc, unsigned nv)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned k, run_end = 0;
	uint32_t run_left = 0, done;
	int err;

	if (rc->mlockall_gen != atomic_load(&rt->mlockall_gen)) {
		rc->mlockall_gen = atomic_load(&rt->mlockall_gen);
		if (rc->can_move)
			staging_empty(rc, true);
	}
	rc->staged = 0;
	memset(rc->stage, STAGE_EMPTY, sizeof(rc->stage));
	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];

		if (!v->clean && !v->ents) {
			v->skip = true;		/* no room: not touched */
			continue;
		}
		if (victim_movable(rc, v)) {
			if (k >= run_end) {
				run_end = k + mark_run(rc, k, nv);
				/* A victim alone moves by itself. */
				run_left = 0;
				if (k + 1 < run_end)
					run_left = move_run(rc, k, run_end,
							    rc->staged);
			}
			err = -ESTALE;
			if (k < run_end) {
				done = MIN(run_left, v->nr_pages);
				run_left -= done;
				err = move_victim(rc, v, rc->staged, done);
				/* The run's move stopped in v: the rest of it
				   goes on together. */
				if (done < v->nr_pages && k + 1 < run_end)
					run_left = move_run(rc, k + 1, run_end,
							    rc->staged + v->nr_pages);
				/* Its place is kept, failed or not: the
				   run's next victims are placed after it. */
				rc->staged += v->nr_pages;
			}
			if (!err)
				continue;
			victim_give_up(rc, v);
			if (err == -ESTALE) {
				count_event(rt, USWAP_EVICT_ABORT, 1);
			} else if (err == -EBUSY) {
				v->busy = true;
			} else {
				uswap_log_once(&rt->logged_move,
					       "capturing a folio to evict failed (%s): it stays resident",
					       strerror(-err));
			}
			continue;
		}
		/*
		 * In place.  A plain read-write folio is read where it is
		 * (without UFFDIO_MOVE: the protocol as it always was); any
		 * other, and one shared by fork (writing it to a device from
		 * where it is would pin it, and the kernel would give this
		 * process a copy of its own first), is copied.
		 */
		clean_holes(rc, v);
		if (!(v->vmflags & VMA_PROTECTED) && !(v->fl & F_SHARED) &&
		    !rc->can_move)
			continue;
		err = copy_pages(rc, v, rc->staged, 0, v->nr_pages);
		if (err) {
			staging_zap(rc, rc->staged, v->nr_pages);
			victim_give_up(rc, v);
			uswap_log_once(&rt->logged_move,
				       "reading a folio to evict failed (%s): it stays resident",
				       strerror(-err));
			continue;
		}
		v->how = CAPTURE_COPIED;
		v->src = staging_page(rc, rc->staged);
		rc->staged += v->nr_pages;
	}
}
