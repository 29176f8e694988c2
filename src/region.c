// SPDX-License-Identifier: MIT
/*
 * region.c - managed regions and their page state tables.
 *
 * A region is a range of anonymous private memory registered with
 * userfaultfd (the kernel's VMA), with a swap entry per page (the swap PTE)
 * and a struct folio per folio (state, flags, LRU links).  Per managed
 * 4 KiB page that is 4 bytes plus 12 bytes per folio: 16 bytes with 4 KiB
 * folios, under 5 with 64 KiB ones.  Tables are mapped MAP_NORESERVE, so
 * the untouched parts of a large, sparsely used region cost nothing.
 *
 * The life of a folio:
 *
 *                  fault (zeros)                    fault: read slots
 *      NONE ------------------------> RESIDENT <------------ LOADING
 *       ^                            |  ^   ^                   ^
 *       | discard, unmap   isolate,  |  |   | write fault        | fault
 *       |                  WP        v  |   | (abort), moved    |
 *       |                        EVICTING --+ back           SWAPPED
 *       |                            |  | moved out, stored     ^  ^
 *       |                            |  +---------------------+  |
 *       |                            | stored (in place)         |
 *       |                            v                           |
 *       |                         ZAPPING -----------------------+
 *       |                                  pages dropped
 *       +---- (from any settled state)
 *
 *   NONE -> RESIDENT      fault_in(), zero-filled (through LOADING)  memory.c
 *   SWAPPED -> LOADING    fault_in()               memory.c
 *   LOADING -> RESIDENT   fault_in()               memory.c
 *   RESIDENT -> EVICTING  isolate_batch()          vmscan.c
 *   EVICTING -> RESIDENT  fault_wp() (a write)     memory.c, or
 *                         putback (no room), moved_abort() (a fault
 *                         waited, or the store failed)   vmscan.c
 *   EVICTING -> SWAPPED   victim_swapped() (moved out whole) vmscan.c
 *   EVICTING -> ZAPPING   zap_victims()            vmscan.c
 *   ZAPPING -> SWAPPED    victim_swapped()         vmscan.c
 *   any settled -> NONE   region_drop_range() (munmap, MADV_DONTNEED,
 *                         fork advice)             region.c
 *
 * EVICTING and LOADING are "in flight": their owner works on them without
 * the op_lock (I/O), and structural changes wait for them to settle.  So
 * is a victim a write took back to RESIDENT while the reclaimer still
 * reads its pages (F_STORING): discarding them under the reader would
 * make it fault, and no uswap thread may wait for a fault.  An EVICTING
 * folio may have its pages in the reclaimer's staging area (F_MOVED), or
 * on their way there: a program's fault on it waits (vmscan.c's
 * protocol, step 2a).  ZAPPING only exists
 * inside an op_lock read section.  A resident folio that is locked or
 * pinned (F_UNEVICTABLE, mlock.c) is on no LRU list.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "base.h"
#include "ilist.h"
#include "lockdep.h"
#include "memcontrol.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "swap.h"
#include "uswap.h"
#include "trace.h"

int region_table_init(struct uswap_runtime *rt)
{
	rt->cap_regions = 256;
	rt->regions_map_len = rt->cap_regions * sizeof(*rt->regions);
	rt->regions = prim_alloc(rt->regions_map_len);
	return rt->regions ? 0 : -ENOMEM;
}

void region_table_destroy(struct uswap_runtime *rt)
{
	prim_free(rt->regions, rt->regions_map_len);
	rt->regions = NULL;
}

/* The region containing addr, or NULL.  Caller holds op_lock. */
struct region *region_find_locked(struct uswap_runtime *rt, uintptr_t addr)
{
	unsigned lo = 0, hi = rt->nr_regions;

	lock_assert_held(&rt->op_lock);
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		struct region *r = rt->regions[mid];

		if (addr < r->start)
			hi = mid;
		else if (addr >= r->end)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

/* Index of the first region ending after addr. */
static unsigned region_lower_bound(struct uswap_runtime *rt, uintptr_t addr)
{
	unsigned lo = 0, hi = rt->nr_regions;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (rt->regions[mid]->end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void region_get(struct region *r)
{
	atomic_fetch_add(&r->refs, 1);
}

static void region_free(struct region *r)
{
	atomic_fetch_sub(&r->rt->meta_bytes, r->swp_map_len + r->folio_map_len);
	prim_free(r->swp, r->swp_map_len);
	prim_free(r->folios, r->folio_map_len);
	pthread_mutex_destroy(&r->lru_lock);
	prim_free(r, sizeof(*r));
}

void region_put(struct region *r)
{
	if (atomic_fetch_sub(&r->refs, 1) == 1)
		region_free(r);
}

/* A region struct with tables for [start, end), all folios NONE. */
static struct region *region_alloc(struct uswap_runtime *rt, uintptr_t start,
				   uintptr_t end, uintptr_t origin)
{
	struct region *r = prim_alloc(sizeof(*r));
	unsigned i;

	if (!r)
		return NULL;
	r->rt = rt;
	r->start = start;
	r->end = end;
	r->origin = origin;
	r->folio_shift = rt->folio_shift;
	r->nr_pages = (uint32_t)((end - start) >> PAGE_SHIFT);
	r->nr_folios = (uint32_t)(((end - origin) + folio_size(r) - 1) >>
				  r->folio_shift);
	r->swp_map_len = (size_t)r->nr_pages * sizeof(*r->swp);
	r->folio_map_len = (size_t)r->nr_folios * sizeof(*r->folios);
	r->swp = prim_alloc(r->swp_map_len);
	r->folios = prim_alloc(r->folio_map_len);
	if (!r->swp || !r->folios) {
		prim_free(r->swp, r->swp_map_len);
		prim_free(r->folios, r->folio_map_len);
		prim_free(r, sizeof(*r));
		return NULL;
	}
	pthread_mutex_init(&r->lru_lock, NULL);
	for (i = 0; i < NR_LRU_LISTS; i++)
		ilist_init(&r->lru[i].list);
	atomic_init(&r->refs, 1);
	atomic_fetch_add(&rt->meta_bytes, r->swp_map_len + r->folio_map_len);
	return r;
}

/* Room in the table for n more regions.  0 or -ENOMEM. */
static int table_reserve(struct uswap_runtime *rt, unsigned n)
{
	while (rt->nr_regions + n > rt->cap_regions) {
		size_t len = rt->regions_map_len * 2;
		struct region **t = prim_alloc(len);

		if (!t)
			return -ENOMEM;
		memcpy(t, rt->regions, rt->nr_regions * sizeof(*t));
		prim_free(rt->regions, rt->regions_map_len);
		rt->regions = t;
		rt->regions_map_len = len;
		rt->cap_regions *= 2;
	}
	return 0;
}

static int table_insert(struct uswap_runtime *rt, struct region *r)
{
	unsigned pos;
	int err = table_reserve(rt, 1);

	if (err)
		return err;
	pos = region_lower_bound(rt, r->start);
	memmove(&rt->regions[pos + 1], &rt->regions[pos],
		(rt->nr_regions - pos) * sizeof(*rt->regions));
	rt->regions[pos] = r;
	rt->nr_regions++;
	return 0;
}

static void table_remove(struct uswap_runtime *rt, struct region *r)
{
	unsigned pos = region_lower_bound(rt, r->start);

	assert(pos < rt->nr_regions && rt->regions[pos] == r);
	/* Its lists die with it (the pieces that replace it count theirs). */
	atomic_fetch_sub(&rt->active_pages, r->lru[LRU_ACTIVE].nr_pages);
	memmove(&rt->regions[pos], &rt->regions[pos + 1],
		(rt->nr_regions - pos - 1) * sizeof(*rt->regions));
	rt->nr_regions--;
}

/*
 * Manage the fresh anonymous mapping [start, start+len): register it and
 * enter it in the table.  Caller holds op_lock for writing.
 */
int region_add(struct uswap_runtime *rt, uintptr_t start, size_t len)
{
	uintptr_t origin = start & ~(((uintptr_t)1 << rt->folio_shift) - 1);
	struct region *r = region_alloc(rt, start, start + len, origin);
	int err;

	lock_assert_held_write(&rt->op_lock);
	if (!r)
		return -ENOMEM;
	/* userfaultfd never builds huge pages; keep khugepaged away too. */
	prim_madvise((void *)start, len, MADV_NOHUGEPAGE);
	err = prim_uffd_register(rt->uffd, start, len, rt->have_wp);
	if (err)
		goto err_free;
	err = table_insert(rt, r);
	if (err)
		goto err_unregister;
	count_event(rt, USWAP_MANAGED_BYTES, len);
	return 0;

err_unregister:
	prim_uffd_unregister(rt->uffd, start, len);
err_free:
	region_put(r);
	return err;
}

void region_folios_in(const struct region *r, uintptr_t start, uintptr_t end,
		      uint32_t *first, uint32_t *last)
{
	assert(start >= r->start && end <= r->end && start < end);
	*first = folio_index(r, start);
	*last = folio_index(r, end - 1) + 1;
}

void region_free_entries(struct region *r, uint32_t page, uint32_t nr)
{
	uint32_t i = 0;

	while (i < nr) {
		swp_entry_t e = r->swp[page + i];
		uint32_t run = 1;

		if (!e) {
			i++;
			continue;
		}
		/* Free contiguous runs in one call. */
		while (i + run < nr && r->swp[page + i + run] == e + run)
			run++;
		swap_free_slots(r->rt, e, run);
		memset(&r->swp[page + i], 0, run * sizeof(*r->swp));
		i += run;
	}
}

/*
 * A copy of r limited to [start, end) with origin moved by `shift`
 * (non-zero when the data moves, mremap): folio states, swap entries and
 * LRU order are kept.  The new region has a fresh reference.
 */
static struct region *region_clone(struct region *r, uintptr_t start,
				   uintptr_t end, intptr_t shift,
				   uintptr_t new_end)
{
	struct uswap_runtime *rt = r->rt;
	uint32_t first, last, i, lru;
	struct region *n;

	/* n's folio j is r's folio first + j. */
	region_folios_in(r, start, end, &first, &last);
	n = region_alloc(rt, start + shift, new_end,
			 r->origin + shift + ((uintptr_t)first << r->folio_shift));
	if (!n)
		return NULL;
	n->vm_flags = r->vm_flags;
	memcpy(n->swp, &r->swp[(start - r->start) >> PAGE_SHIFT],
	       ((end - start) >> PAGE_SHIFT) * sizeof(*n->swp));
	for (i = first; i < last; i++) {
		uint32_t fl = atomic_load(&r->folios[i].flags);

		atomic_store(&n->folios[i - first].flags,
			     fl & ~(F_LRU | F_ACTIVE));
		SHADOW(&n->folios[i - first]) = SHADOW(&r->folios[i]);
	}
	/* Rebuild the LRU lists, oldest first, so that order is kept. */
	pthread_mutex_lock(&n->lru_lock);	/* n is ours alone: lru_add() asserts it */
	for (lru = 0; lru < NR_LRU_LISTS; lru++) {
		uint32_t f = ilist_last(&r->lru[lru].list);

		while (f != ILIST_NIL) {
			uint32_t prev = ilist_prev(lru_folios(r), f);

			if (f >= first && f < last)
				lru_add(n, f - first, lru == LRU_ACTIVE);
			f = prev;
		}
	}
	pthread_mutex_unlock(&n->lru_lock);
	return n;
}

/* Pages of folio i that lie in [start, end). */
static uint32_t folio_pages_in(const struct region *r, uint32_t i,
			       uintptr_t start, uintptr_t end, uint32_t *page)
{
	uintptr_t a;
	size_t len;
	uint32_t p;

	folio_range(r, i, &a, &len, &p);
	if (a < start) {
		p += (uint32_t)((start - a) >> PAGE_SHIFT);
		len -= start - a;
		a = start;
	}
	if (a + len > end)
		len = end - a;
	*page = p;
	return (uint32_t)(len >> PAGE_SHIFT);
}

/*
 * Drop the contents of [start, end) inside r: free swap entries, uncharge
 * resident pages, and take folios wholly inside to NONE.  The caller has
 * settled the range (no folio in flight) and holds op_lock for writing; it
 * removes the pages from the address space itself.  With `unmap` the
 * range leaves the region (munmap): a resident folio partly in it is
 * uncharged for those pages, as the folio left behind is smaller; without
 * (MADV_DONTNEED), they come back as zeros and stay charged.  A demoted
 * folio's pages are uncharged from their tier, a shared one's from the
 * tree's shared charge if nobody else maps them (fork_share.c).  Returns
 * the number of pages uncharged from this process's charge.
 */
uint64_t region_drop_range(struct region *r, uintptr_t start, uintptr_t end,
			   bool unmap)
{
	uint32_t first, last, i;
	uint64_t dropped = 0;

	region_folios_in(r, start, end, &first, &last);
	for (i = first; i < last; i++) {
		struct folio *f = &r->folios[i];
		uint32_t fl = atomic_load(&f->flags), page, nr, all, p0;
		uintptr_t a;
		size_t len;

		folio_range(r, i, &a, &len, &p0);
		all = (uint32_t)(len >> PAGE_SHIFT);
		nr = folio_pages_in(r, i, start, end, &page);
		trace_folio(TR_DROP, a, all, fl, nr);
		if (folio_state(fl) == FOLIO_RESIDENT && (fl & F_SHARED)) {
			/*
			 * Shared by fork (fork_share.c): the pages going that
			 * nobody else maps are freed.  Pages dropped from a
			 * folio that stays come back as zeros of this
			 * process's own: the folio is then the process's,
			 * charged whole, as if written.
			 */
			if (nr == all || unmap) {
				share_release(r->rt, a + ((uintptr_t)(page - p0) << PAGE_SHIFT), nr);
			} else {
				memcg_force_charge(r->rt, all);
				share_release(r->rt, a, all);
				fl &= ~F_SHARED;
			}
			if (fl & F_CLEAN) {
				region_free_entries(r, p0, all);
				fl &= ~F_CLEAN;
			}
		} else if (folio_state(fl) == FOLIO_RESIDENT) {
			/*
			 * A folio is charged whole while resident: a page
			 * dropped from it comes back as zeros inside it
			 * (refill_partial), uncharged only with the folio
			 * (or when it leaves the region).
			 */
			if ((nr == all || unmap) && (fl & F_DEMOTED))
				tier_uncharge(r->rt, folio_node(fl), nr);
			else if (nr == all || unmap)
				dropped += nr;
			if (fl & F_CLEAN) {
				/* The copy no longer matches: forget it all. */
				region_free_entries(r, p0, all);
				fl &= ~F_CLEAN;
			}
		} else {
			region_free_entries(r, page, nr);
		}
		if (nr == all) {
			if (fl & F_LRU) {
				pthread_mutex_lock(&r->lru_lock);
				lru_del(r, i);
				pthread_mutex_unlock(&r->lru_lock);
			}
			fl = FOLIO_NONE;
		}
		atomic_store(&f->flags, fl);
	}
	if (dropped)
		memcg_uncharge(r->rt, dropped);
	return dropped;
}

/*
 * Replace r in the table by the pieces of it outside [start, end) (none,
 * one or two).  Caller holds op_lock for writing and has dropped the range.
 */
int region_cut(struct uswap_runtime *rt, struct region *r, uintptr_t start,
	       uintptr_t end)
{
	struct region *head = NULL, *tail = NULL;
	int err = 0;

	lock_assert_held_write(&rt->op_lock);
	if (start > r->start) {
		head = region_clone(r, r->start, start, 0, start);
		if (!head)
			return -ENOMEM;
	}
	if (end < r->end) {
		tail = region_clone(r, end, r->end, 0, r->end);
		if (!tail) {
			if (head)
				region_put(head);
			return -ENOMEM;
		}
	}
	table_remove(rt, r);
	if (head)
		err = table_insert(rt, head);
	if (!err && tail)
		err = table_insert(rt, tail);
	atomic_fetch_sub(&rt->stat->ev[USWAP_MANAGED_BYTES], end - start);
	region_put(r);
	return err;
}

struct region *region_next_locked(struct uswap_runtime *rt, uintptr_t addr)
{
	unsigned i = region_lower_bound(rt, addr);

	lock_assert_held(&rt->op_lock);
	return i < rt->nr_regions ? rt->regions[i] : NULL;
}

/*
 * Make [start, end) (page-aligned, inside one region r) a region of its
 * own, as the kernel splits a VMA when advice changes for part of it:
 * r is replaced by up to three regions with its state, the folios cut by
 * start or end becoming two clipped folios, one on each side (so that no
 * folio spans two of the kernel's VMAs: a UFFDIO_COPY cannot).  *rp gets
 * the region of [start, end).  The caller holds op_lock for writing and
 * has settled r (no folio in flight).  0, or -ENOMEM with nothing changed.
 */
int region_isolate(struct uswap_runtime *rt, uintptr_t start, uintptr_t end,
		   struct region **rp)
{
	struct region *r = region_find_locked(rt, start), *p[3] = { NULL };
	unsigned k, n = 0;
	int err = -ENOMEM;

	lock_assert_held_write(&rt->op_lock);
	assert(r && end <= r->end && start < end);
	if (start == r->start && end == r->end) {
		*rp = r;
		return 0;
	}
	if (start > r->start && !(p[n++] = region_clone(r, r->start, start, 0, start)))
		goto err_free;
	if (!(p[n++] = region_clone(r, start, end, 0, end)))
		goto err_free;
	if (end < r->end && !(p[n++] = region_clone(r, end, r->end, 0, r->end)))
		goto err_free;
	if (table_reserve(rt, n - 1))
		goto err_free;
	table_remove(rt, r);
	for (k = 0; k < n; k++) {
		err = table_insert(rt, p[k]);
		assert(!err);	/* room was reserved */
		if (p[k]->start == start)
			*rp = p[k];
	}
	region_put(r);
	return 0;

err_free:
	for (k = 0; k < n; k++) {
		if (!p[k])
			continue;
		/* Its lists were counted when they were built. */
		atomic_fetch_sub(&rt->active_pages,
				 p[k]->lru[LRU_ACTIVE].nr_pages);
		region_put(p[k]);
	}
	return err;
}

/*
 * n grew past old_end (mremap), inside a resident folio that the old end
 * clipped: the folio now has pages that were never there.  They are
 * charged with it and filled with zeros at once, as a resident folio is
 * whole (reclaim reads every page of a victim).  (The LRU lists of n
 * were built with its folio sizes already.)
 */
static void grow_last_folio(struct uswap_runtime *rt, struct region *n,
			    uintptr_t old_end)
{
	uint32_t i = folio_index(n, old_end - 1), page, nr;
	uint32_t fl = atomic_load(&n->folios[i].flags);
	uintptr_t a;
	size_t len;

	if (folio_state(fl) != FOLIO_RESIDENT)
		return;
	folio_range(n, i, &a, &len, &page);
	if (a + len <= old_end)
		return;		/* the old end was on a folio boundary */
	nr = (uint32_t)((a + len - old_end) >> PAGE_SHIFT);
	memcg_force_charge(rt, nr);
	if (prim_uffd_copy(rt->uffd, old_end, rt->zero_buf, a + len - old_end,
			   rt->have_wp && (fl & F_ARMED), NULL) == -EEXIST)
		count_event(rt, USWAP_UFFD_EEXIST, 1);
}

/* The folios of n in [start, end) lost their write protection for good. */
static void forget_protection(struct region *n, uintptr_t start, uintptr_t end)
{
	uint32_t first, last, i;

	region_folios_in(n, start, end, &first, &last);
	for (i = first; i < last; i++) {
		struct folio *f = &n->folios[i];
		uint32_t fl = atomic_load(&f->flags), page;
		uintptr_t a;
		size_t len;

		folio_range(n, i, &a, &len, &page);
		if (fl & F_CLEAN)
			region_free_entries(n, page, (uint32_t)(len >> PAGE_SHIFT));
		if ((fl & F_SHARED) && folio_state(fl) == FOLIO_RESIDENT) {
			/* Writes will not show: the process's own, as if
			   written (fork_share.c). */
			memcg_force_charge(n->rt, (unsigned)(len >> PAGE_SHIFT));
			share_release(n->rt, a, (unsigned)(len >> PAGE_SHIFT));
		}
		atomic_store(&f->flags, fl & ~(F_ARMED | F_CLEAN | F_SHARED));
	}
}

/*
 * Without UFFD_FEATURE_EVENT_REMAP the kernel clears the uffd-wp bits of
 * the ptes mremap moves.  Resident folios that are armed, clean or shared
 * by fork count on that protection (a write must show, or a clean folio's
 * slots would be taken for its contents, or a copy go uncharged): protect
 * them again, one call per run of such
 * folios.  One that cannot be protected is neither armed nor clean any
 * more (its slots are let go).  Caller holds op_lock for writing.
 */
static void rearm_moved(struct uswap_runtime *rt, struct region *n)
{
	uintptr_t run_start = 0, run_end = 0;
	uint32_t i;

	lock_assert_held_write(&rt->op_lock);
	if (!rt->have_wp)
		return;
	for (i = 0; i <= n->nr_folios; i++) {
		uint32_t fl = i < n->nr_folios ? atomic_load(&n->folios[i].flags) : 0;
		uintptr_t a = 0;
		size_t len = 0;
		uint32_t page;

		if (i < n->nr_folios && folio_state(fl) == FOLIO_RESIDENT &&
		    (fl & (F_ARMED | F_CLEAN | F_SHARED))) {
			folio_range(n, i, &a, &len, &page);
			if (run_end == a && run_end) {
				run_end += len;
				continue;
			}
		}
		if (run_end && prim_uffd_wp(rt->uffd, run_start,
					    run_end - run_start, true, false))
			forget_protection(n, run_start, run_end);
		run_start = a;
		run_end = a + len;
	}
}

/*
 * Move r's state to a region at new_start of new_len bytes (mremap): the
 * kernel has moved the pages already.  Growth is never-touched memory.
 * Caller holds op_lock for writing; shrinking was dropped before.
 */
int region_move(struct uswap_runtime *rt, struct region *r, uintptr_t new_start,
		size_t new_len)
{
	size_t keep = MIN((size_t)(r->end - r->start), new_len);
	intptr_t shift = (intptr_t)(new_start - r->start);
	struct region *n;
	int err;

	lock_assert_held_write(&rt->op_lock);
	n = region_clone(r, r->start, r->start + keep, shift,
			 new_start + new_len);
	if (!n)
		return -ENOMEM;
	err = prim_uffd_register(rt->uffd, new_start, new_len, rt->have_wp);
	if (err) {
		region_put(n);
		return err;
	}
	prim_madvise((void *)new_start, new_len, MADV_NOHUGEPAGE);
	rearm_moved(rt, n);
	if (new_len > keep)
		grow_last_folio(rt, n, new_start + keep);
	count_event(rt, USWAP_UFFD_EAGAIN, prim_uffd_eagain_take());
	table_remove(rt, r);
	err = table_insert(rt, n);
	atomic_fetch_add(&rt->stat->ev[USWAP_MANAGED_BYTES],
			 new_len - (r->end - r->start));
	region_put(r);
	return err;
}
