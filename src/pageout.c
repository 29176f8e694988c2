// SPDX-License-Identifier: MIT
/*
 * pageout.c - storing the reclaimer's victims (step 2 of the eviction
 * protocol in vmscan.c; the kernel's pageout() and swap_writepage()).
 *
 * A batch of victims (about a cluster's worth, EVICTING, their contents
 * captured: moved into the reclaimer's staging area, copied there, or
 * write-protected in place) is stored in three moves:
 *
 *   1. slots: each dirty victim gets 2^order contiguous slots on the
 *      device its memory's node prefers (swapon.c), or one per page when
 *      no device has such a run;
 *   2. the compressed pool, if there is one, takes what it will, the
 *      victims compressed in parallel by its threads (zswap.c);
 *   3. the rest goes to the devices straight from where the contents are
 *      (victim.src: the staging area, or the program's pages in place):
 *      runs of consecutive slots, across victims, each run one request, the
 *      whole batch submitted at once (page_io.c).  The crc32c of every
 *      slot written is computed while the writes are in flight and kept
 *      once they completed (swap_io.h).
 *
 * A victim without room, or whose write failed, loses its slots (ents
 * NULL) and stays resident (vmscan.c puts it back); a device whose writes
 * fail leaves the lists for good, one without room until slots are freed;
 * both are counted and logged once (DESIGN.md, invariant 4).  A clean
 * victim (its slots still hold it) is not written at all.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "internal.h"
#include "swap_io.h"
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
	const bool verify = !(rt->opt.flags & USWAP_OPT_NO_VERIFY);
	uint64_t t0 = prim_now_us(), us;
	const uint32_t *crc = rc->crc;
	int nospace = 0;
	unsigned i, k;

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
	bool device = rt->swap[0].fd >= 0;
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
