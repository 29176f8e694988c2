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
 * The eviction protocol (docs/design.md, invariants 1 and 6):
 *   1. under op_lock (read) and the LRU lock, a victim goes RESIDENT ->
 *      EVICTING; it is write-protected already (armed, or clean);
 *   2. without locks, its contents are captured (capture_victims()):
 *      a. moved: F_MOVED is set by compare-and-swap (unless a write
 *         aborted the eviction already), then UFFDIO_MOVE takes its pages
 *         out of the program's address space into the reclaimer's staging
 *         area, atomically page by page (victims side by side in one
 *         call: the batch is sorted by address).  The kernel refuses a page
 *         pinned for I/O (EBUSY): such a folio stays resident (evict_busy)
 *         and goes to the active list, not to be tried again at once.
 *         Once moved, nothing the program does reaches the pages: a
 *         fault on the folio waits for step 4 (F_WAITERS);
 *      b. in place, when it cannot move: a page still shared with
 *         another process (fork), a folio not read-write or under a key,
 *         a kernel without UFFDIO_MOVE.  The folio stays write-protected
 *         where it is, and is read there, or copied through
 *         /proc/self/mem (which reads a PROT_NONE page without touching
 *         it) when it is not plainly read-write or was refused a move.
 *         No page of it can be pinned for writing meanwhile: a pin for
 *         writing takes a write fault first, which aborts the eviction
 *         (fault_wp() in memory.c), and a page shared by fork, or not
 *         writable, can be pinned for writing no other way;
 *   3. without locks, the captured contents are written to new slots
 *      (pageout.c; a clean folio's slots already hold it);
 *   4. under op_lock (read), a moved victim goes EVICTING -> SWAPPED and
 *      the faults that waited on it are woken, to bring it back (the
 *      eviction is finished, not undone: reclaim that a faulting reader
 *      could undo would make no progress under the very pressure it is
 *      there for, and a read never aborted an eviction); when its store
 *      failed, its pages are moved back and it is RESIDENT again.  One
 *      left in place goes EVICTING -> ZAPPING by compare-and-swap: a
 *      write that came in meanwhile has turned it back to RESIDENT
 *      (fault_wp()) and the swap copy is dropped instead;
 *   5. the pages of all ZAPPING victims go in one process_madvise call,
 *      and the staging area is emptied; a victim whose pages the kernel
 *      refused to drop (a range locked behind uswap's back) is RESIDENT
 *      again, its new slots freed (unevictable_pgs_culled);
 *   6. ZAPPING -> SWAPPED; threads that faulted meanwhile are woken.
 * A write can only land before step 1's write-protect or step 2's move,
 * abort the eviction, or wait for it: no write is ever lost.  A page
 * pinned for I/O never leaves: the kernel keeps writing into it, and the
 * program reads what the kernel wrote.
 *
 * A tier that fails (docs/design.md, invariant 4): a victim that finds no slot,
 * or whose write fails, keeps its folio resident (putback); a device whose
 * writes fail leaves the lists for good, one without room (ENOSPC) until
 * slots are freed; both are counted and logged once.  Step 3 is
 * pageout.c's.
 *
 * Locked and pinned folios (mlock.c) are not on the LRU at all.
 *
 * Before step 2, a victim whose node demotes to a slower node with room
 * moves there instead (demote.c) and is resident again; reclaim of a
 * slower node's own budget takes its victims from the demoted lists.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "demote.h"
#include "ilist.h"
#include "lockdep.h"
#include "log.h"
#include "memcontrol.h"
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

#define SCAN_FACTOR	4u	/* scan at most this many batches' worth */

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

	lock_assert_held(&r->lru_lock);
	assert(!(atomic_load(&f->flags) & F_LRU));
	if (atomic_load(&f->flags) & F_UNEVICTABLE)
		return;		/* locked or pinned: on no list (mlock.c) */
	active = id == LRU_ACTIVE;
	ilist_add_head(&l->list, lru_folios(r), i);
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

	lock_assert_held(&r->lru_lock);
	assert(fl & F_LRU);
	ilist_del(&l->list, lru_folios(r), i);
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

/*
 * A structural change (mmap.c settle_range()) waits for r's folios in
 * flight: start nothing new in it.  Caller holds op_lock for reading.
 */
static bool region_busy(const struct region *r)
{
	lock_assert_held_read(&r->rt->op_lock);
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

	lock_assert_held(&r->lru_lock);
	while (r->lru[LRU_INACTIVE].nr_pages < r->lru[LRU_ACTIVE].nr_pages &&
	       moved < BATCH_PAGES) {
		uint32_t i = ilist_last(&r->lru[LRU_ACTIVE].list);
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

	lock_assert_held(&r->lru_lock);
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
 * isolate armed unreferenced ones as victims (RESIDENT -> EVICTING);
 * none while a change to r waits (rc->in_flight).  Caller holds op_lock
 * for reading.  Returns the number of victims.
 */
static unsigned isolate_batch(struct reclaimer *rc, struct region *r,
			      unsigned *nr_arm)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned nv = 0, na = 0, pages = 0, scanned = 0;
	enum lru_list_id list = rc->tier >= 0 ? LRU_DEMOTED : LRU_INACTIVE;

	lock_assert_held_read(&rt->op_lock);
	*nr_arm = 0;
	if (region_busy(r)) {
		rc->in_flight = true;
		return 0;
	}
	pthread_mutex_lock(&r->lru_lock);
	if (list == LRU_INACTIVE)
		shrink_active_list(rt, r);
	while (pages < BATCH_PAGES && scanned < SCAN_FACTOR * BATCH_PAGES &&
	       nv < MAX_VICTIMS && na < MAX_VICTIMS &&
	       !ilist_empty(&r->lru[list].list)) {
		uint32_t i = ilist_last(&r->lru[list].list);
		struct folio *f = &r->folios[i];
		uint32_t fl = atomic_load(&f->flags), nr, page;
		struct victim *v;
		unsigned vmflags;
		uintptr_t addr;
		size_t len;

		folio_range(r, i, &addr, &len, &page);
		nr = (uint32_t)(len >> PAGE_SHIFT);
		scanned += nr;
		count_event(rt, USWAP_PGSCAN, nr);
		if (folio_state(fl) != FOLIO_RESIDENT || (fl & F_STORING) ||
		    (list == LRU_DEMOTED && folio_node(fl) != rc->tier)) {
			lru_move(r, i, false);
			continue;
		}
		if (fl & F_REFERENCED) {
			folio_referenced(rt, r, i, nr);
			continue;
		}
		if (fl & F_BUSY) {
			/*
			 * Pinned the last time it was tried: one more trip
			 * round the lists first, so that a long-pinned folio
			 * is not moved and refused at every scan.
			 */
			atomic_fetch_and(&f->flags, ~F_BUSY);
			lru_move(r, i, true);
			continue;
		}
		vmflags = vma_flags(&rt->vmas, addr, addr + len);
		if (vmflags & (VMA_LOCKED | VMA_PINNED)) {
			/* Locked since it was listed: off the lists. */
			lru_del(r, i);
			atomic_fetch_or(&f->flags, F_UNEVICTABLE);
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
				(fl & ~FOLIO_STATE_MASK) | FOLIO_EVICTING |
				F_STORING)) {
			/* A write fault got there first: look again later. */
			lru_move(r, i, false);
			continue;
		}
		lru_del(r, i);
		trace_folio(TR_PICK, addr, nr, fl, 0);
		v = &rc->victims[nv++];
		v->r = r;
		v->folio = i;
		v->nr_pages = nr;
		v->page = page;
		v->addr = addr;
		v->src = addr;
		v->inplace = 0;
		v->zap_n = 0;
		v->clean = fl & F_CLEAN;
		v->fl = fl;
		v->vmflags = vmflags;
		v->how = CAPTURE_IN_PLACE;
		v->skip = false;
		v->busy = false;
		v->written = false;
		v->excl = 0;
		pages += nr;
	}
	pthread_mutex_unlock(&r->lru_lock);
	*nr_arm = na;
	return nv;
}

static int index_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Write-protect the armed folios, merging neighbours into one call (each
 * call flushes the TLB once): in address order, as sort_victims() puts
 * victims.  A folio whose protection failed is not armed: it cannot be
 * evicted safely.
 */
static void arm_folios(struct reclaimer *rc, struct region *r, unsigned na)
{
	struct uswap_runtime *rt = rc->rt;
	uintptr_t run_start = 0, run_end = 0;
	unsigned k, run_first = 0, m;

	qsort(rc->arm, na, sizeof(rc->arm[0]), index_cmp);

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

/*
 * Victim v is no longer read in place (written, demoted or given up): a
 * write that aborted its eviction meanwhile left it RESIDENT, and only now
 * may a discard or an unmap settle it (mmap.c).  op_lock held (read).
 */
static void stored(struct victim *v)
{
	atomic_fetch_and(&v->r->folios[v->folio].flags, ~F_STORING);
}

/* Undo an isolation: the folio stays resident (no room, I/O error). */
static void putback(struct uswap_runtime *rt, struct victim *v)
{
	struct folio *f = &v->r->folios[v->folio];
	uint32_t fl = atomic_load(&f->flags);

	while (folio_state(fl) == FOLIO_EVICTING &&
	       !atomic_compare_exchange_weak(&f->flags, &fl,
				(fl & ~(FOLIO_STATE_MASK | F_WAITERS)) |
				FOLIO_RESIDENT))
		;
	if (folio_state(fl) != FOLIO_EVICTING)
		return;		/* a write fault already put it back */
	if (fl & F_WAITERS)	/* a fault waited while it was evicting */
		prim_uffd_wake(rt->uffd, v->addr,
			       (size_t)v->nr_pages << PAGE_SHIFT);
	trace_folio(TR_PUTBACK, v->addr, v->nr_pages, fl, 0);
	pthread_mutex_lock(&v->r->lru_lock);
	lru_add(v->r, v->folio, true);
	pthread_mutex_unlock(&v->r->lru_lock);
}

/* ---- steps 4 to 6 ---- */

/*
 * A victim is evicted: its slots are its pages' (or were, clean), it is
 * SWAPPED, its charge goes.  Returns its pages.  op_lock (read).
 */
static uint32_t victim_swapped(struct reclaimer *rc, struct victim *v,
			       uint64_t *out, uint64_t *clean, uint64_t *fast)
{
	struct uswap_runtime *rt = rc->rt;
	struct region *r = v->r;
	struct folio *f = &r->folios[v->folio];
	uint32_t fl, nfl;

	if (!v->clean) {
		memcpy(&r->swp[v->page], v->ents,
		       v->nr_pages * sizeof(swp_entry_t));
		*out += v->nr_pages - v->pooled;
	} else {
		*clean += v->nr_pages;
	}
	if (v->how == CAPTURE_MOVED)
		count_event(rt, USWAP_EVICT_MOVE, v->nr_pages - v->inplace);
	workingset_eviction(rt, r, f, v->nr_pages);
	fl = atomic_load(&f->flags);
	do {
		nfl = FOLIO_SWAPPED | (fl & F_WORKINGSET);
	} while (!atomic_compare_exchange_weak(&f->flags, &fl, nfl));
	trace_folio(TR_SWAPPED, v->addr, v->nr_pages, fl, v->clean);
	if (fl & F_WAITERS)
		prim_uffd_wake(rt->uffd, v->addr, (size_t)v->nr_pages << PAGE_SHIFT);
	if (v->fl & F_DEMOTED)
		tier_uncharge(rt, folio_node(v->fl), v->nr_pages);
	else if (v->fl & F_SHARED)
		memcg_share_drop(rt, v->nr_pages, v->excl);
	else
		*fast += v->nr_pages;
	return v->nr_pages;
}

/*
 * A moved victim is not evicted after all: its store failed.  Its pages
 * go back, it is RESIDENT on the active list, and the waiters are woken.
 * Pages moved back are not write-protected: the folio is clean no more
 * (its slots go), and it is protected again to stay armed (else every
 * attempt would re-arm it, and reclaim that cannot store would never find
 * itself stuck).  op_lock (read).
 */
static void moved_abort(struct reclaimer *rc, struct victim *v, unsigned first)
{
	struct uswap_runtime *rt = rc->rt;
	struct region *r = v->r;
	struct folio *f = &r->folios[v->folio];
	uint32_t fl, nfl, p, keep = 0;

	move_back(rc, v, first);
	if (v->written && !v->clean)
		for (p = 0; p < v->nr_pages; p++)
			swap_free_slots(rt, v->ents[p], 1);
	v->written = false;
	if (!prim_uffd_wp(rt->uffd, v->addr, (size_t)v->nr_pages << PAGE_SHIFT,
			  true, false))
		keep = F_ARMED;
	pthread_mutex_lock(&r->lru_lock);
	fl = atomic_load(&f->flags);
	if (fl & F_CLEAN) {
		/* A write may have landed unseen before any protection. */
		region_free_entries(r, v->page, v->nr_pages);
		atomic_fetch_or_explicit(&f->flags, 0, memory_order_release);
	}
	do {
		nfl = (fl & ~(FOLIO_STATE_MASK | F_MOVED | F_WAITERS | F_ARMED |
			      F_CLEAN | F_SHARED)) | FOLIO_RESIDENT | (fl & keep);
	} while (!atomic_compare_exchange_weak(&f->flags, &fl, nfl));
	trace_folio(TR_ABORT, v->addr, v->nr_pages, fl, 0);
	lru_add(r, v->folio, true);
	pthread_mutex_unlock(&r->lru_lock);
	/* Shared by fork: its pages, moved and back, are its own now. */
	if (fl & F_SHARED)
		memcg_unshare_to_own(rt, v->nr_pages);
	if (fl & F_WAITERS)
		prim_uffd_wake(rt->uffd, v->addr, (size_t)v->nr_pages << PAGE_SHIFT);
}

/*
 * The kernel refused to drop v's pages in place (step 5): a range locked
 * behind uswap's back.  If they are all still there, v is RESIDENT again
 * (still write-protected, so as armed or clean as it was) and its new
 * slots are freed; if any went, v is SWAPPED all the same: its slots hold
 * every page, and a page still there is kept when the folio comes back.
 * Returns true when v stays resident.  op_lock (read).
 */
static bool zap_refused(struct reclaimer *rc, struct victim *v, int err)
{
	struct uswap_runtime *rt = rc->rt;
	struct folio *f = &v->r->folios[v->folio];
	uint32_t fl, p;

	uswap_log_once(&rt->logged_zap,
		       "the kernel refused to drop evicted pages (%s; locked behind uswap's back?): they stay resident (counted as unevictable_pgs_culled)",
		       strerror(-err));
	if (v->how == CAPTURE_MOVED || !victim_pagemap(rc, v, 0))
		return false;
	for (p = 0; p < v->nr_pages; p++)
		if (!(rc->pm[p] & PM_PRESENT))
			return false;
	if (!v->clean)
		for (p = 0; p < v->nr_pages; p++)
			swap_free_slots(rt, v->ents[p], 1);
	pthread_mutex_lock(&v->r->lru_lock);
	fl = atomic_load(&f->flags);
	while (!atomic_compare_exchange_weak(&f->flags, &fl,
			(fl & ~(FOLIO_STATE_MASK | F_WAITERS)) | FOLIO_RESIDENT))
		;
	lru_add(v->r, v->folio, true);
	pthread_mutex_unlock(&v->r->lru_lock);
	if (fl & F_WAITERS)
		prim_uffd_wake(rt->uffd, v->addr, (size_t)v->nr_pages << PAGE_SHIFT);
	count_event(rt, USWAP_UNEVICTABLE_PGS_CULLED, v->nr_pages);
	return true;
}

/* Add v's pages left in place to the zap: all of them, or its runs. */
static void zap_add(struct reclaimer *rc, struct victim *v, unsigned first,
		    unsigned *nz)
{
	uint32_t p = 0, run;

	v->zap_first = *nz;
	if (v->how != CAPTURE_MOVED) {
		rc->iov[(*nz)++] = (struct iovec){ (void *)v->addr,
			(size_t)v->nr_pages << PAGE_SHIFT };
		v->zap_n = 1;
		return;
	}
	while (p < v->nr_pages) {
		if (rc->stage[first + p] != STAGE_COPIED) {
			p++;
			continue;
		}
		for (run = 1; p + run < v->nr_pages &&
		     rc->stage[first + p + run] == STAGE_COPIED; run++)
			;
		rc->iov[(*nz)++] = (struct iovec){
			(void *)(v->addr + ((uintptr_t)p << PAGE_SHIFT)),
			(size_t)run << PAGE_SHIFT };
		p += run;
	}
	v->zap_n = *nz - v->zap_first;
}

/*
 * Steps 4-6 of the protocol for the victims captured: a moved one is
 * SWAPPED, or moved back; the others (and the pages a moved one left in
 * place) go EVICTING -> ZAPPING, their pages dropped in one call,
 * ZAPPING -> SWAPPED.  Caller holds op_lock for reading.  Returns the
 * pages reclaimed.
 */
static uint64_t zap_victims(struct reclaimer *rc, unsigned nv)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned k, nz = 0, first, j;
	uint64_t freed = 0, fast = 0, out = 0, clean = 0;
	bool shared = false;
	uint32_t p;

	lock_assert_held_read(&rt->op_lock);
	for (k = 0, first = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];
		struct folio *f = &v->r->folios[v->folio];
		uint32_t fl = atomic_load(&f->flags);
		unsigned here = first;

		if (v->how != CAPTURE_IN_PLACE)
			first += v->nr_pages;
		v->zap_n = 0;
		if (v->skip) {
			if (v->busy) {
				atomic_fetch_or(&f->flags, F_BUSY);
				count_event(rt, USWAP_EVICT_BUSY, 1);
			}
			putback(rt, v);
			v->written = false;
			continue;
		}
		if (v->how == CAPTURE_MOVED) {
			/* Step 4 for a moved victim. */
			for (;;) {
				if (!v->clean && !v->written) {
					moved_abort(rc, v, here);
					break;
				}
				if (!v->inplace) {
					v->excl = v->nr_pages;	/* moved: ours alone */
					v->written = true;
					freed += victim_swapped(rc, v, &out, &clean,
								&fast);
					break;
				}
				if (atomic_compare_exchange_weak(&f->flags, &fl,
						(fl & ~(FOLIO_STATE_MASK | F_MOVED)) |
						FOLIO_ZAPPING)) {
					v->written = true;
					zap_add(rc, v, here, &nz);
					trace_folio(TR_ZAP, v->addr,
						    v->nr_pages, fl, 1);
					shared |= (v->fl & F_SHARED) != 0;
					break;
				}
			}
			continue;
		}
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
		zap_add(rc, v, here, &nz);
		trace_folio(TR_ZAP, v->addr, v->nr_pages, fl, 0);
		v->written = true;
		if (v->fl & F_SHARED)	/* as isolated: only fork sets it */
			shared = true;
	}
	/*
	 * Victims shared by fork: the pages nobody else maps are freed by the
	 * zap (and those moved, which were this process's alone).  Look and
	 * zap under the tree's share_lock, so that two processes evicting one
	 * page do not both see the other's mapping.
	 */
	if (shared) {
		memcg_share_lock(rt->memcg);
		for (k = 0; k < nv; k++) {
			struct victim *v = &rc->victims[k];

			if (v->written && v->zap_n && (v->fl & F_SHARED))
				v->excl = share_exclusive(rt, v->addr,
							  v->nr_pages) +
					  (v->how == CAPTURE_MOVED ?
					   v->nr_pages - v->inplace : 0);
		}
	}
	if (nz)
		prim_zap_ranges_each(rc->iov, nz, rc->zap_err);
	if (shared)
		memcg_share_unlock(rt->memcg);
	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];
		int err = 0;

		if (!v->written || !v->zap_n)
			continue;
		for (j = 0; j < v->zap_n && !err; j++)
			err = rc->zap_err[v->zap_first + j];
		if (err && zap_refused(rc, v, err))
			continue;
		freed += victim_swapped(rc, v, &out, &clean, &fast);
	}
	staging_empty(rc, false);
	memcg_pool_settle(rt, fast);	/* and charge what the pool grew */
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

	lock_assert_not_held(&rt->op_lock);
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
			/* Shared by fork: charged to no tier, and the
			   other process's mapping pins it here anyway. */
			.from = rc->victims[k].fl & F_SHARED ? -1 :
				rc->nodes[k],
		};
	demote_folios(rt, rc->demote, nv, atomic_load(&rt->memcg->waiters) > 0);
	pthread_rwlock_rdlock(&rt->op_lock);
	for (k = 0; k < nv; k++) {
		struct victim *v = &rc->victims[k];

		if (rc->demote[k].to < 0) {
			rc->victims[left++] = *v;
			continue;
		}
		stored(v);
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
			any = r->lru[LRU_DEMOTED].list.nr;
		else
			any = r->lru[LRU_INACTIVE].list.nr ||
			      r->lru[LRU_ACTIVE].list.nr;
		pthread_mutex_unlock(&r->lru_lock);
		if (any)
			return r;
	}
	return NULL;
}

static int victim_cmp(const void *a, const void *b)
{
	const struct victim *va = a, *vb = b;

	return (va->addr > vb->addr) - (va->addr < vb->addr);
}

/*
 * The batch's victims in address order: the list's order is the order
 * they were listed in, and a fault-around lists the faulting folio after
 * the ones it filled ahead.  In order, neighbours move out together
 * (move_run() in pageout.c) and get consecutive slots, which a readahead
 * then reads in one request.
 */
static void sort_victims(struct reclaimer *rc, unsigned nv)
{
	qsort(rc->victims, nv, sizeof(rc->victims[0]), victim_cmp);
}

/*
 * One reclaim step: scan one region, demote or evict one batch.  Returns
 * the pages reclaimed (demoted ones too); *nospace is set when a victim
 * found no swap space.
 */
static uint64_t shrink_batch(struct reclaimer *rc, bool *nospace)
{
	struct uswap_runtime *rt = rc->rt;
	unsigned nv, na, left, k;
	struct region *r;
	uint64_t freed;

	rc->in_flight = false;
	pthread_rwlock_rdlock(&rt->op_lock);
	r = next_region(rc);
	if (!r) {
		/* No folio on any list, and pages charged beyond the
		   pool's: every one of them is being faulted in (charged
		   first, listed once mapped), or being zapped. */
		rc->in_flight = memcg_own_pages(rt) >
				atomic_load(&rt->pool_pages);
		pthread_rwlock_unlock(&rt->op_lock);
		/* Else all this process holds is in the pool: writing some
		   back makes room (the pool's own thread may not run yet). */
		if (rc->in_flight || !rt->zswap || !rc->zc)
			return 0;
		return zswap_shrink(rt->zswap, rc->zc, BATCH_PAGES);
	}
	region_get(r);
	nv = isolate_batch(rc, r, &na);
	arm_folios(rc, r, na);
	pthread_rwlock_unlock(&rt->op_lock);

	left = demote_victims(rc, nv);
	freed = nv - left;	/* folios demoted: progress */
	nv = left;
	memcg_pool_defer(rt);	/* the pool is charged once the batch left */
	sort_victims(rc, nv);
	*nospace = alloc_victims(rc, nv) == -ENOSPC;
	capture_victims(rc, nv);
	if (write_victims(rc, nv) == -ENOSPC)
		*nospace = true;
	if (*nospace)
		count_event(rt, USWAP_SWAP_FULL, 1);

	pthread_rwlock_rdlock(&rt->op_lock);
	for (k = 0; k < nv; k++)
		stored(&rc->victims[k]);
	freed += zap_victims(rc, nv);
	pthread_rwlock_unlock(&rt->op_lock);
	region_put(r);
	debug_check_swap(rt, "the end of a reclaim batch");
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
 * The reclaimer's state for rt: its device choice, a ring for its writes,
 * a compressor when rt has a pool.  NULL when out of memory.
 */
struct reclaimer *reclaimer_alloc(struct uswap_runtime *rt)
{
	struct reclaimer *rc = prim_alloc(sizeof(*rc));
	size_t len = (size_t)MAX_BATCH_PAGES << PAGE_SHIFT;

	if (!rc)
		return NULL;
	rc->rt = rt;
	rc->tier = -1;
	rc->mem_fd = -1;
	swap_pick_init(&rc->pick);
	rc->io = swap_io_create(SWAP_IO_DEPTH_DEFAULT);
	rc->staging = prim_alloc(len);
	rc->scratch = prim_alloc((size_t)MAX_FOLIO_PAGES << PAGE_SHIFT);
	if (!rc->staging || !rc->scratch) {
		reclaimer_free(rc, true);
		return NULL;
	}
	/*
	 * Not in a fork child: the child makes its own, registered with its
	 * own userfaultfd.  Never a huge page: pages move in one by one.
	 */
	prim_madvise(rc->staging, len, MADV_DONTFORK);
	prim_madvise(rc->staging, len, MADV_NOHUGEPAGE);
	rc->can_move = rt->have_wp && (rt->features & PRIM_UFFD_FEATURE_MOVE) &&
		       !prim_uffd_register_wp(rt->uffd, (uintptr_t)rc->staging,
					      len);
	atomic_store(&rt->reads_in_place, !rc->can_move);
	rc->mem_fd = prim_self_mem_open();
	if (rc->mem_fd < 0)
		uswap_log("cannot open /proc/self/mem (%s): memory that is not read-write is not evicted",
			  strerror(-rc->mem_fd));
	if (rt->zswap) {
		rc->zc = zswap_ctx_create(rt->zswap);
		if (!rc->zc)
			uswap_log("reclaimer: out of memory for a compressor; no compression");
	}
	return rc;
}

/*
 * Free rc; its thread, if it ran, has been joined.  owner false: rc is a
 * fork child's copy of its parent's reclaimer, whose current clusters (in
 * the shared slot maps) stay the parent's, and whose staging area the
 * child does not have (MADV_DONTFORK); only the ring, its mappings, the
 * descriptors and the memory are the child's to free.
 */
void reclaimer_free(struct reclaimer *rc, bool owner)
{
	if (!rc)
		return;
	if (owner)
		swap_pick_release(rc->rt, &rc->pick);
	swap_io_destroy(rc->io);
	if (owner && rc->staging)
		prim_free(rc->staging, (size_t)MAX_BATCH_PAGES << PAGE_SHIFT);
	prim_free(rc->scratch, (size_t)MAX_FOLIO_PAGES << PAGE_SHIFT);
	if (rc->mem_fd >= 0)
		prim_fd_close(rc->mem_fd);
	if (rc->zc)
		zswap_ctx_destroy(rc->rt->zswap, rc->zc);
	prim_free(rc, sizeof(*rc));
}

/*
 * The reclaimer thread (arg: its struct reclaimer): sleeps until charges
 * pass high (or a fault waits at max), then reclaims down to low.  When a
 * whole round over every region frees nothing (no swap space, nothing
 * left to evict), and no process of the tree made room for STUCK_AFTER_US
 * since (another one may hold what this one could not evict), it declares
 * the budget stuck so that waiting faults are admitted, and retries
 * later.  Folios in flight are not a reason: a
 * region skipped because a change to it (munmap, mremap, madvise) waits
 * for them, or a process whose every charged page is being faulted in
 * (2M folios under a small budget), waits a moment instead.
 */
/* How long a whole tree's reclaim must make no room to be stuck. */
#define STUCK_AFTER_US	20000u

void *reclaim_thread_main(void *arg)
{
	struct reclaimer *rc = arg;
	struct uswap_runtime *rt = rc->rt;
	uint64_t last_reap = 0, progress = 0, since = 0;
	unsigned idle = 0, waits = 0;
	int tier_sticky = -1;

	atomic_store(&rt->reclaim_tid, (int)gettid());
	while (!rt->stopping) {
		bool nospace = false;
		uint64_t got;

		reap_members(rt, &last_reap);
		if (hold_reclaim(rt))	/* held: nothing goes out (hold.c) */
			continue;
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
		while (!rt->stopping && !hold_wanted(rt) &&
		       memcg_should_reclaim(rt)) {
			got = shrink_batch(rc, &nospace);
			if (got) {
				idle = waits = 0;
				memcg_set_stuck(rt, false);
				continue;
			}
			/* Folios in flight are not "stuck": they are
			   mapped, or gone, in a moment (a second at most
			   is waited for, if they never are). */
			if (rc->in_flight && ++waits < 5000) {
				usleep(200);
				continue;
			}
			if (++idle == 1) {
				progress = memcg_progress(rt);
				since = prim_now_us();
			}
			if (idle <= 2 * (rt->nr_regions + 1))
				continue;
			if (memcg_progress(rt) != progress) {
				/* Another process of the tree made room (this
				   one holds only what they share, say): not
				   stuck. */
				idle = waits = 0;
				continue;
			}
			if (prim_now_us() - since < STUCK_AFTER_US) {
				memcg_reclaim_sleep(rt, 1, true);
				continue;
			}
			if (nospace)
				uswap_log_once(&rt->logged_full,
					       "swap space is full: folios stay resident (counted as swap_full)");
			memcg_set_stuck(rt, true);
			/* Charges a dead member left may be what holds the
			   tree above low. */
			reap_members(rt, &last_reap);
			usleep(5000);
			idle = waits = 0;
		}
		/* Charges fell below high (freed, reaped): room again. */
		if (!memcg_above_high(rt))
			memcg_set_stuck(rt, false);
	}
	return NULL;
}

/* Put folio i (off every list) at the tail of the inactive list. */
static void lru_add_tail(struct region *r, uint32_t i)
{
	struct folio *f = &r->folios[i];
	struct lru_list *l = &r->lru[LRU_INACTIVE];

	assert(!(atomic_load(&f->flags) & (F_LRU | F_DEMOTED)));
	ilist_add_tail(&l->list, lru_folios(r), i);
	l->nr_pages += folio_nr_pages(r, i);
	atomic_fetch_or(&f->flags, F_LRU);
}

/*
 * MADV_COLD and MADV_PAGEOUT (mmap.c): the resident folios of r that
 * [start, end) overlaps go to the tail of the inactive list, unreferenced,
 * the lowest address last, where the reclaimer looks first in r.  With
 * pageout they are armed (write-protected) as well, so that reclaim evicts
 * them at once unless they are written first; it does not run for them
 * while the budget is below high (a hint, not an order).  Demoted folios
 * keep their list.  Caller holds op_lock for writing.
 */
void lru_hint_range(struct uswap_runtime *rt, struct region *r, uintptr_t start,
		    uintptr_t end, bool pageout)
{
	uintptr_t run_start = 0, run_end = 0, a;
	uint32_t first, last, i, p, run_first = 0;
	uint64_t pages = 0, deactivated = 0;
	size_t len;

	lock_assert_held_write(&rt->op_lock);
	region_folios_in(r, start, end, &first, &last);
	pthread_mutex_lock(&r->lru_lock);
	for (i = last; i-- > first;) {
		uint32_t fl = atomic_load(&r->folios[i].flags);
		uint32_t nr = folio_nr_pages(r, i);

		if (folio_state(fl) != FOLIO_RESIDENT || !(fl & F_LRU) ||
		    (fl & F_DEMOTED))
			continue;
		lru_del(r, i);
		atomic_fetch_and(&r->folios[i].flags, ~F_REFERENCED);
		lru_add_tail(r, i);
		pages += nr;
		if (fl & F_ACTIVE)
			deactivated += nr;
		if (pageout && rt->have_wp)
			atomic_fetch_or(&r->folios[i].flags, F_ARMED);
	}
	pthread_mutex_unlock(&r->lru_lock);
	count_event(rt, pageout ? USWAP_MADV_PAGEOUT : USWAP_MADV_COLD, pages);
	count_event(rt, USWAP_PGDEACTIVATE, deactivated);
	if (!pageout || !rt->have_wp)
		return;
	/* Write-protect what was armed, run by run; unarm a failed run. */
	for (i = first; i <= last; i++) {
		bool armed = false;

		a = 0;
		len = 0;
		if (i < last) {
			folio_range(r, i, &a, &len, &p);
			armed = folio_state(atomic_load(&r->folios[i].flags)) ==
				FOLIO_RESIDENT &&
				(atomic_load(&r->folios[i].flags) & F_ARMED);
		}
		if (armed && run_end == a && run_end) {
			run_end += len;
			continue;
		}
		if (run_end && prim_uffd_wp(rt->uffd, run_start,
					    run_end - run_start, true, false))
			for (p = run_first; p < i; p++)
				atomic_fetch_and(&r->folios[p].flags, ~F_ARMED);
		run_start = armed ? a : 0;
		run_end = armed ? a + len : 0;
		run_first = i;
	}
}
