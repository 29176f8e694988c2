// SPDX-License-Identifier: MIT
/*
 * vmscan.c - the reclaimer (the kernel's kswapd and vmscan.c).
 *
 * Each region has an inactive and an active LRU list of resident folios.
 * New folios enter the inactive list; folios that prove themselves move to
 * the active list; the reclaimer evicts from the inactive tail and refills
 * the inactive list from the active tail when it runs short (as the
 * kernel: inactive_is_low()).
 *
 * The access signal.  User space cannot read the accessed bit, so uswap
 * observes writes: a folio reaching the inactive tail for the first time
 * is write-protected ("armed") and given a second trip through the list.
 * A write to it meanwhile raises a write-protect fault (memory.c) that
 * marks it referenced; at the tail again, a referenced folio is activated
 * and an unreferenced one is evicted.  Reads are invisible until eviction;
 * a folio evicted wrongly refaults soon, and refault detection
 * (workingset.c) puts it straight on the active list.  The write-protect
 * set when arming is also what the eviction protocol needs, so arming
 * costs no extra system call per evicted folio.
 *
 * The eviction protocol (DESIGN.md, invariant 1):
 *   1. under op_lock (read) and the LRU lock, a victim goes RESIDENT ->
 *      EVICTING; it is write-protected already (armed, or clean);
 *   2. without locks, its pages are written to new slots straight from the
 *      region (a clean folio's slots already hold it);
 *   3. under op_lock (read), EVICTING -> ZAPPING by compare-and-swap: a
 *      write that came in meanwhile has turned the folio back to RESIDENT
 *      (fault_wp() in memory.c) and the swap copy is dropped instead;
 *   4. the pages of all ZAPPING victims go in one process_madvise call;
 *   5. ZAPPING -> SWAPPED; threads that faulted meanwhile are woken.
 * A write can only land before step 1's write-protect, or abort the
 * eviction: no write is ever lost.
 *
 * A tier that fails (DESIGN.md, invariant 4): a victim that finds no slot,
 * or whose write fails, keeps its folio resident (putback); a device whose
 * writes fail leaves the lists for good, one without room (ENOSPC) until
 * slots are freed; both are counted and logged once.  Step 2 also records
 * the crc32c of every slot written (swap_io.h), computed while the writes
 * are in flight, which every read checks.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "swap_io.h"

#define BATCH_PAGES	512u	/* one 2 MiB cluster per batch */
#define SCAN_FACTOR	4u	/* scan at most this many batches' worth */
#define MAX_VICTIMS	512u

static uint32_t folio_nr_pages(const struct region *r, uint32_t i)
{
	uintptr_t a;
	size_t len;
	uint32_t p;

	folio_range(r, i, &a, &len, &p);
	return (uint32_t)(len >> PAGE_SHIFT);
}

/* The list folio i goes on (or is on): demoted, else active or not. */
static enum lru_list_id lru_of(uint32_t fl, bool active)
{
	if (fl & F_DEMOTED)
		return LRU_DEMOTED;
	return active ? LRU_ACTIVE : LRU_INACTIVE;
}

/*
 * Put folio i at the head of a list: the active or inactive one, or the
 * demoted list whatever `active` says when the folio is demoted.  Caller
 * holds r->lru_lock.
 */
void lru_add(struct region *r, uint32_t i, bool active)
{
	struct folio *f = &r->folios[i];
	enum lru_list_id id = lru_of(atomic_load(&f->flags), active);
	struct lru_list *l = &r->lru[id];

	assert(!(atomic_load(&f->flags) & F_LRU));
	active = id == LRU_ACTIVE;
	f->prev = FOLIO_NIL;
	f->next = l->head;
	if (l->head != FOLIO_NIL)
		r->folios[l->head].prev = i;
	else
		l->tail = i;
	l->head = i;
	l->nr_folios++;
	l->nr_pages += folio_nr_pages(r, i);
	if (active)
		atomic_fetch_add(&r->rt->active_pages, folio_nr_pages(r, i));
	atomic_fetch_or(&f->flags, F_LRU | (active ? F_ACTIVE : 0));
}

/* Take folio i off its list.  Caller holds r->lru_lock. */
void lru_del(struct region *r, uint32_t i)
{
	struct folio *f = &r->folios[i];
	uint32_t fl = atomic_load(&f->flags);
	struct lru_list *l = &r->lru[lru_of(fl, fl & F_ACTIVE)];

	assert(fl & F_LRU);
	if (f->prev != FOLIO_NIL)
		r->folios[f->prev].next = f->next;
	else
		l->head = f->next;
	if (f->next != FOLIO_NIL)
		r->folios[f->next].prev = f->prev;
	else
		l->tail = f->prev;
	l->nr_folios--;
	l->nr_pages -= folio_nr_pages(r, i);
	if (fl & F_ACTIVE)
		atomic_fetch_sub(&r->rt->active_pages, folio_nr_pages(r, i));
	atomic_fetch_and(&f->flags, ~(F_LRU | F_ACTIVE));
}

static void lru_move(struct region *r, uint32_t i, bool active)
{
	lru_del(r, i);
	lru_add(r, i, active);
}

struct victim {
	struct region *r;
	uint32_t folio;
	uint32_t nr_pages;
	uint32_t page;		/* first page index in r */
	uintptr_t addr;
	swp_entry_t *ents;	/* its pages' new slots (in the reclaimer's
				   ents[]), NULL when it has none */
	uint32_t pooled;	/* pages the compressed pool took */
	uint32_t fl;		/* its flags when isolated (its budget) */
	bool clean;
	bool written;
};

/* A batch holds BATCH_PAGES pages, plus the folio that passed it. */
#define MAX_BATCH_PAGES	(BATCH_PAGES + MAX_FOLIO_PAGES)

struct reclaimer {
	struct uswap_runtime *rt;
	struct swap_pick pick;		/* device choice */
	unsigned cursor;		/* next region to scan */
	struct victim victims[MAX_VICTIMS];
	struct zswap_job jobs[MAX_BATCH_PAGES];
	struct zswap_ctx *zc;		/* compression, with a pool */
	struct iovec iov[MAX_BATCH_PAGES];
	swp_entry_t ents[MAX_BATCH_PAGES];	/* the victims' new slots */
	struct swap_io *io;		/* io_uring, or plain I/O */
	struct swap_io_req reqs[MAX_BATCH_PAGES];
	uint32_t crc[MAX_BATCH_PAGES];	/* the runs' checksums, in reqs order */
	unsigned req_victims[MAX_BATCH_PAGES][2];	/* first, last victim */
	unsigned nr_reqs;
	void *pages[MAX_VICTIMS];	/* move_pages: where victims live */
	int nodes[MAX_VICTIMS];
	uint32_t arm[MAX_VICTIMS];
	struct demote_folio demote[MAX_VICTIMS];
	int tier;		/* the slower node being reclaimed, or -1 */
};

/* A structural change waits on this region: start nothing new in it. */
static bool in_busy_range(const struct region *r, uintptr_t addr)
{
	(void)addr;
	return r->busy_end != 0;
}

/*
 * Move folios from the active tail to the inactive head while the inactive
 * list is the smaller (the kernel's inactive_is_low with ratio 1).
 * Caller holds r->lru_lock.
 */
static void shrink_active_list(struct uswap_runtime *rt, struct region *r)
{
	unsigned moved = 0;

	while (r->lru[LRU_INACTIVE].nr_pages < r->lru[LRU_ACTIVE].nr_pages &&
	       moved < BATCH_PAGES) {
		uint32_t i = r->lru[LRU_ACTIVE].tail;
		uint32_t nr = folio_nr_pages(r, i);

		atomic_fetch_and(&r->folios[i].flags, ~F_REFERENCED);
		lru_move(r, i, false);
		moved += nr;
		count_event(rt, USWAP_PGDEACTIVATE, nr);
	}
}

/*
 * A referenced folio at the tail: to the active list; a demoted one stays
 * on its list, a promotion candidate (demote.c promotes it if it is
 * written again).  Caller holds r->lru_lock.
 */
static void folio_referenced(struct uswap_runtime *rt, struct region *r,
			     uint32_t i, uint32_t nr)
{
	struct folio *f = &r->folios[i];

	atomic_fetch_and(&f->flags, ~F_REFERENCED);
	if (atomic_load(&f->flags) & F_DEMOTED) {
		atomic_fetch_or(&f->flags, F_PROMOTE);
		lru_move(r, i, false);
		count_event(rt, USWAP_PGPROMOTE_CANDIDATE, nr);
		return;
	}
	atomic_fetch_or(&f->flags, F_WORKINGSET);
	lru_move(r, i, true);
	count_event(rt, USWAP_PGACTIVATE, nr);
	workingset_activation(rt, nr);
}

/*
 * Scan r's inactive tail (or, reclaiming a slower node, its demoted list
 * for that node's folios): activate referenced folios, arm unarmed ones,
 * isolate armed unreferenced ones as victims (RESIDENT -> EVICTING).
 * Caller holds op_lock for reading.  Returns the number of victims.
 */
static unsigned isolate_batch(struct reclaimer *rc, struct region *r,
			      unsigned *nr_arm)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned nv = 0, na = 0, pages = 0, scanned = 0;
	enum lru_list_id list = rc->tier >= 0 ? LRU_DEMOTED : LRU_INACTIVE;

	pthread_mutex_lock(&r->lru_lock);
	if (list == LRU_INACTIVE)
		shrink_active_list(rt, r);
	while (pages < BATCH_PAGES && scanned < SCAN_FACTOR * BATCH_PAGES &&
	       nv < MAX_VICTIMS && na < MAX_VICTIMS &&
	       r->lru[list].tail != FOLIO_NIL) {
		uint32_t i = r->lru[list].tail;
		struct folio *f = &r->folios[i];
		uint32_t fl = atomic_load(&f->flags), nr, page;
		struct victim *v;
		uintptr_t addr;
		size_t len;

		folio_range(r, i, &addr, &len, &page);
		nr = (uint32_t)(len >> PAGE_SHIFT);
		scanned += nr;
		count_event(rt, USWAP_PGSCAN, nr);
		if (folio_state(fl) != FOLIO_RESIDENT || in_busy_range(r, addr) ||
		    (list == LRU_DEMOTED && folio_node(fl) != rc->tier)) {
			lru_move(r, i, false);
			continue;
		}
		if (fl & F_REFERENCED) {
			folio_referenced(rt, r, i, nr);
			continue;
		}
		if (!(fl & (F_ARMED | F_CLEAN))) {
			if (!rt->have_wp) {
				/* Nothing can be evicted without write-protect. */
				lru_move(r, i, true);
				continue;
			}
			atomic_fetch_or(&f->flags, F_ARMED);
			lru_move(r, i, false);
			rc->arm[na++] = i;
			continue;
		}
		if (!atomic_compare_exchange_strong(&f->flags, &fl,
				(fl & ~FOLIO_STATE_MASK) | FOLIO_EVICTING)) {
			/* A write fault got there first: look again later. */
			lru_move(r, i, false);
			continue;
		}
		lru_del(r, i);
		v = &rc->victims[nv++];
		v->r = r;
		v->folio = i;
		v->nr_pages = nr;
		v->page = page;
		v->addr = addr;
		v->clean = fl & F_CLEAN;
		v->fl = fl;
		v->written = false;
		pages += nr;
	}
	pthread_mutex_unlock(&r->lru_lock);
	*nr_arm = na;
	return nv;
}

/*
 * Write-protect the armed folios, merging neighbours into one call.  A
 * folio whose protection failed is not armed: it cannot be evicted safely.
 */
static void arm_folios(struct reclaimer *rc, struct region *r, unsigned na)
{
	struct uswap_runtime *rt = rc->rt;
	uintptr_t run_start = 0, run_end = 0;
	unsigned k, run_first = 0, m;

	for (k = 0; k <= na; k++) {
		uintptr_t addr = 0;
		size_t len = 0;
		uint32_t page;

		if (k < na)
			folio_range(r, rc->arm[k], &addr, &len, &page);
		if (k < na && addr == run_end && run_end) {
			run_end += len;
			continue;
		}
		if (run_end && prim_uffd_wp(rt->uffd, run_start,
					    run_end - run_start, true, false)) {
			for (m = run_first; m < k; m++)
				atomic_fetch_and(&r->folios[rc->arm[m]].flags,
						 ~F_ARMED);
		}
		run_start = addr;
		run_end = addr + len;
		run_first = k;
	}
	count_event(rt, USWAP_UFFD_EAGAIN, prim_uffd_eagain_take());
}

/* Undo an isolation: the folio stays resident (no room, I/O error). */
static void putback(struct uswap_runtime *rt, struct victim *v)
{
	struct folio *f = &v->r->folios[v->folio];
	uint32_t fl = atomic_load(&f->flags);

	while (folio_state(fl) == FOLIO_EVICTING &&
	       !atomic_compare_exchange_weak(&f->flags, &fl,
				(fl & ~FOLIO_STATE_MASK) | FOLIO_RESIDENT))
		;
	if (folio_state(fl) != FOLIO_EVICTING)
		return;		/* a write fault already put it back */
	pthread_mutex_lock(&v->r->lru_lock);
	lru_add(v->r, v->folio, true);
	pthread_mutex_unlock(&v->r->lru_lock);
	(void)rt;
}

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
 */
static int alloc_victim_slots(struct reclaimer *rc, unsigned nv)
{
	unsigned k, used = 0;
	int nospace = 0;

	victim_nodes(rc, nv);
	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];

		v->pooled = 0;
		v->ents = NULL;
		if (v->clean)
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
				.src = (const void *)v->addr,
				.slot = v->ents[0], .nr = v->nr_pages,
			};
			continue;
		}
		for (p = 0; p < v->nr_pages; p++)
			rc->jobs[nj++] = (struct zswap_job){
				.src = (const void *)(v->addr + ((uintptr_t)p << PAGE_SHIFT)),
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
		addr = v->addr + ((uintptr_t)p << PAGE_SHIFT);
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
 * write-protected; a write aborts the eviction, and the slots are dropped
 * with whatever was computed for them).
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
 * Store each dirty victim: slots first, then the pool takes what it will,
 * then the rest is written to the devices straight from the region, run by
 * run of consecutive slots (across victims), every run in one batch.  A
 * victim without room or with a failed write loses its slots (ents NULL)
 * and stays resident.  Returns -ENOSPC when some victim found no room.
 */
static int write_victims(struct reclaimer *rc, unsigned nv)
{
	struct uswap_runtime *rt = rc->rt;
	bool device = rt->swap[0].fd >= 0;
	unsigned k, niov = 0;
	uint32_t p;
	int nospace;

	nospace = alloc_victim_slots(rc, nv);
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

/*
 * Steps 3-5 of the protocol for the victims that were stored: EVICTING ->
 * ZAPPING, drop their pages in one call, ZAPPING -> SWAPPED.  Caller holds
 * op_lock for reading.  Returns the pages reclaimed.
 */
static uint64_t zap_victims(struct reclaimer *rc, unsigned nv)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned k, nz = 0;
	uint64_t freed = 0, fast = 0, out = 0, clean = 0;
	uint32_t p;

	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];
		struct folio *f = &v->r->folios[v->folio];
		uint32_t fl = atomic_load(&f->flags);

		if (!v->clean && !v->written) {
			putback(rt, v);
			continue;
		}
		if (folio_state(fl) != FOLIO_EVICTING ||
		    !atomic_compare_exchange_strong(&f->flags, &fl,
				(fl & ~FOLIO_STATE_MASK) | FOLIO_ZAPPING)) {
			/* A write aborted the eviction (memory.c did the rest). */
			if (!v->clean)
				for (p = 0; p < v->nr_pages; p++)
					swap_free_slots(rt, v->ents[p], 1);
			count_event(rt, USWAP_EVICT_ABORT, 1);
			v->written = false;
			v->clean = false;
			continue;
		}
		rc->iov[nz].iov_base = (void *)v->addr;
		rc->iov[nz].iov_len = (size_t)v->nr_pages << PAGE_SHIFT;
		nz++;
		v->written = true;
	}
	if (nz && prim_zap_ranges(rc->iov, nz))
		uswap_log("dropping evicted pages failed");
	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];
		struct region *r = v->r;
		struct folio *f = &r->folios[v->folio];
		uint32_t fl, nfl;

		if (!v->written)
			continue;
		if (!v->clean) {
			memcpy(&r->swp[v->page], v->ents,
			       v->nr_pages * sizeof(swp_entry_t));
			out += v->nr_pages - v->pooled;
		} else {
			clean += v->nr_pages;
		}
		workingset_eviction(rt, r, f, v->nr_pages);
		fl = atomic_load(&f->flags);
		do {
			nfl = FOLIO_SWAPPED | (fl & F_WORKINGSET);
		} while (!atomic_compare_exchange_weak(&f->flags, &fl, nfl));
		if (fl & F_WAITERS)
			prim_uffd_wake(rt->uffd, v->addr,
				       (size_t)v->nr_pages << PAGE_SHIFT);
		freed += v->nr_pages;
		if (v->fl & F_DEMOTED)
			tier_uncharge(rt, folio_node(v->fl), v->nr_pages);
		else
			fast += v->nr_pages;
	}
	if (fast)
		memcg_uncharge(rt, fast);
	if (freed) {
		count_event(rt, USWAP_PGSTEAL, freed);
		count_event(rt, USWAP_PSWPOUT, out);
		count_event(rt, USWAP_CLEAN_DROP, clean);
	}
	return freed;
}

/*
 * Before the victims are written: move those whose node demotes to a
 * target with room (demote.c), and keep the others, in order, for swap.
 * Returns how many are left.  Called without op_lock; takes it to finish.
 */
static unsigned demote_victims(struct reclaimer *rc, unsigned nv)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned k, left = 0;

	if (!rt->tiering || !nv)
		return nv;
	for (k = 0; k < nv; k++)
		rc->pages[k] = (void *)rc->victims[k].addr;
	if (prim_move_pages(nv, rc->pages, rc->nodes))
		return nv;
	for (k = 0; k < nv; k++)
		rc->demote[k] = (struct demote_folio){
			.addr = rc->victims[k].addr,
			.nr_pages = rc->victims[k].nr_pages,
			.from = rc->nodes[k],
		};
	demote_folios(rt, rc->demote, nv, atomic_load(&rt->memcg->waiters) > 0);
	pthread_rwlock_rdlock(&rt->op_lock);
	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];

		if (rc->demote[k].to < 0) {
			rc->victims[left++] = *v;
			continue;
		}
		demote_finish(rt, v->r, v->folio, rc->demote[k].to,
			      v->nr_pages, v->fl);
	}
	pthread_rwlock_unlock(&rt->op_lock);
	return left;
}

/*
 * The next region with folios on the lists being reclaimed (the fast
 * ones, or the demoted list), round robin.  op_lock held.
 */
static struct region *next_region(struct reclaimer *rc)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned n;

	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[rc->cursor++ % rt->nr_regions];
		bool any;

		pthread_mutex_lock(&r->lru_lock);
		if (rc->tier >= 0)
			any = r->lru[LRU_DEMOTED].nr_folios;
		else
			any = r->lru[LRU_INACTIVE].nr_folios ||
			      r->lru[LRU_ACTIVE].nr_folios;
		pthread_mutex_unlock(&r->lru_lock);
		if (any)
			return r;
	}
	return NULL;
}

/*
 * One reclaim step: scan one region, demote or evict one batch.  Returns
 * the pages reclaimed (demoted ones too); *nospace is set when a victim
 * found no swap space.
 */
static uint64_t shrink_batch(struct reclaimer *rc, bool *nospace)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned nv, na, left;
	struct region *r;
	uint64_t freed;

	pthread_rwlock_rdlock(&rt->op_lock);
	r = next_region(rc);
	if (!r) {
		pthread_rwlock_unlock(&rt->op_lock);
		return 0;
	}
	region_get(r);
	nv = isolate_batch(rc, r, &na);
	arm_folios(rc, r, na);
	pthread_rwlock_unlock(&rt->op_lock);

	left = demote_victims(rc, nv);
	freed = nv - left;	/* folios demoted: progress */
	nv = left;
	*nospace = write_victims(rc, nv) == -ENOSPC;
	if (*nospace)
		count_event(rt, USWAP_SWAP_FULL, 1);

	pthread_rwlock_rdlock(&rt->op_lock);
	freed += zap_victims(rc, nv);
	pthread_rwlock_unlock(&rt->op_lock);
	region_put(r);
	/* Arming or activating is progress too: the next batch can evict. */
	return freed ? freed : (na ? 1 : 0);
}

/*
 * A slower node's budget passed its high mark: demote its coldest folios
 * further, or swap them out, down to its low mark (or until the fast
 * tier needs the reclaimer).  true when something was reclaimed.
 */
static bool shrink_tiers(struct reclaimer *rc, int *sticky)
{
	struct uswap_runtime *rt = rc->rt;
	uint64_t total = 0;
	unsigned idle = 0;
	bool nospace;

	if (!rt->tiering)
		return false;
	rc->tier = tier_over_high(rt, sticky);
	while (rc->tier >= 0 && !rt->stopping && !memcg_above_high(rt) &&
	       idle <= 2 * (rt->nr_regions + 1)) {
		uint64_t got = shrink_batch(rc, &nospace);

		total += got;
		idle = got ? 0 : idle + 1;
		rc->tier = tier_over_high(rt, sticky);
	}
	rc->tier = -1;
	return total > 0;
}

/* Once a second: free what members that ended without a word still hold. */
static void reap_members(struct uswap_runtime *rt, uint64_t *last)
{
	uint64_t now = prim_now_us();

	if (now - *last < 1000000)
		return;
	*last = now;
	memcg_reap_gone(rt, swap_reap_member);
}

/*
 * The reclaimer thread: sleeps until charges pass high (or a fault waits
 * at max), then reclaims down to low.  When a whole round over every
 * region frees nothing (no swap space, everything in flight), it declares
 * the budget stuck so that waiting faults are admitted, and retries later.
 */
void *reclaim_thread_main(void *arg)
{
	struct uswap_runtime *rt = arg;
	struct reclaimer *rc = prim_alloc(sizeof(*rc));
	uint64_t last_reap = 0;
	unsigned idle = 0;
	int tier_sticky = -1;

	if (!rc) {
		uswap_log("reclaimer: out of memory; no reclaim");
		memcg_set_stuck(rt, true);
		return NULL;
	}
	rc->rt = rt;
	rc->tier = -1;
	swap_pick_init(&rc->pick);
	rc->io = swap_io_create(SWAP_IO_DEPTH_DEFAULT);
	if (rt->zswap) {
		rc->zc = zswap_ctx_create(rt->zswap);
		if (!rc->zc)
			uswap_log("reclaimer: out of memory for a compressor; no compression");
	}
	while (!rt->stopping) {
		bool nospace = false;
		uint64_t got;

		reap_members(rt, &last_reap);
		if (!memcg_above_high(rt)) {
			unsigned k;

			if (shrink_tiers(rc, &tier_sticky))
				continue;
			/* Idle: give freed clusters back (devices with
			   discard), promote what proved hot. */
			for (k = 0; k < rt->nr_swap; k++)
				swap_discard_run(&rt->swap[k]);
			promote_scan(rt);
			memcg_reclaim_sleep(rt, 100, false);
			continue;
		}
		if (!memcg_should_reclaim(rt)) {
			memcg_reclaim_sleep(rt, 10, true);
			continue;
		}
		while (!rt->stopping && memcg_should_reclaim(rt)) {
			got = shrink_batch(rc, &nospace);
			if (got) {
				idle = 0;
				memcg_set_stuck(rt, false);
				continue;
			}
			if (++idle > 2 * (rt->nr_regions + 1)) {
				if (nospace)
					uswap_log_once(&rt->logged_full,
						       "swap space is full: folios stay resident (counted as swap_full)");
				memcg_set_stuck(rt, true);
				/* Charges a dead member left may be what holds
				   the tree above low. */
				reap_members(rt, &last_reap);
				usleep(5000);
				idle = 0;
			}
		}
	}
	swap_pick_release(rt, &rc->pick);
	swap_io_destroy(rc->io);
	if (rc->zc)
		zswap_ctx_destroy(rt->zswap, rc->zc);
	prim_free(rc, sizeof(*rc));
	return NULL;
}
