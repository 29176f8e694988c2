// SPDX-License-Identifier: MIT
/*
 * vma.c - what the kernel's VMAs say about managed memory that reclaim
 * must know: protection, protection key, lock, pins (the kernel's
 * vm_flags, vm_page_prot and the pins it counts on folios).
 *
 * The program changes them through mprotect(2), pkey_mprotect(2)
 * (mprotect.c), mlock(2) and its family, and io_uring buffer
 * registration (mlock.c); uswap keeps its own copy, a sorted array of
 * segments [start, end) with their attributes.  Only what differs from
 * a fresh managed mapping (read-write, key 0, not locked, not pinned) is
 * kept: a program that never changes them has an empty array.
 *
 * Readers: reclaim (how to read a victim's pages, whether a folio may
 * leave the LRU at all), the fault path (a folio coming in under a lock
 * stays off the LRU), the counters.  The array changes only under
 * op_lock held for writing (the changes settle their range first,
 * mmap.c settle_range()), and is read under op_lock: no lock of its own,
 * and no allocation on the fault path.  The array's memory is uswap's own
 * (prim_alloc), never the program's.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "base.h"
#include "prim.h"
#include "vma.h"

#define PROT_RW		(PROT_READ | PROT_WRITE)

static const struct vma_attr attr_default = { .prot = PROT_RW };

static bool attr_same(const struct vma_attr *a, const struct vma_attr *b)
{
	return a->prot == b->prot && a->pkey == b->pkey &&
	       a->lock == b->lock && a->pins == b->pins;
}

static bool attr_is_default(const struct vma_attr *a)
{
	return attr_same(a, &attr_default);
}

/* Index of the first segment that ends after addr. */
static unsigned seg_lower_bound(const struct vma_map *m, uintptr_t addr)
{
	unsigned lo = 0, hi = m->nr;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (m->seg[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Room for `more` segments more.  0 or -ENOMEM. */
static int map_reserve(struct vma_map *m, unsigned more)
{
	return prim_array_grow((void **)&m->seg, &m->map_len, &m->cap, m->nr,
			       more, sizeof(*m->seg));
}

static void seg_insert(struct vma_map *m, unsigned at, uintptr_t start,
		       uintptr_t end, const struct vma_attr *a)
{
	assert(m->nr < m->cap);
	memmove(&m->seg[at + 1], &m->seg[at], (m->nr - at) * sizeof(*m->seg));
	m->seg[at] = (struct vma_seg){ .start = start, .end = end, .a = *a };
	m->nr++;
}

/* Split the segment holding addr (if any) at addr. */
static void seg_split(struct vma_map *m, uintptr_t addr)
{
	unsigned i = seg_lower_bound(m, addr);

	if (i < m->nr && m->seg[i].start < addr) {
		seg_insert(m, i + 1, addr, m->seg[i].end, &m->seg[i].a);
		m->seg[i].end = addr;
	}
}

/* Drop segments back at the default; merge neighbours that are alike. */
static void map_compact(struct vma_map *m)
{
	unsigned i, n = 0;

	for (i = 0; i < m->nr; i++) {
		struct vma_seg *s = &m->seg[i];

		if (attr_is_default(&s->a))
			continue;
		if (n && m->seg[n - 1].end == s->start &&
		    attr_same(&m->seg[n - 1].a, &s->a)) {
			m->seg[n - 1].end = s->end;
			continue;
		}
		m->seg[n++] = *s;
	}
	m->nr = n;
}

/*
 * Apply fn to the attributes of every page of [start, end): the pieces
 * of segments inside it, and the gaps between them (as the default).
 * Caller holds op_lock for writing.  0 or -ENOMEM (nothing changed).
 */
int vma_update(struct vma_map *m, uintptr_t start, uintptr_t end,
	       void (*fn)(struct vma_attr *, const void *), const void *arg)
{
	unsigned i;
	uintptr_t at = start;
	int err;

	if (start >= end)
		return 0;
	/* Two splits, and at most one gap per segment inside, plus one. */
	err = map_reserve(m, 2 * (m->nr + 2));
	if (err)
		return err;
	seg_split(m, start);
	seg_split(m, end);
	i = seg_lower_bound(m, start);
	while (at < end) {
		if (i < m->nr && m->seg[i].start == at) {
			fn(&m->seg[i].a, arg);
			at = m->seg[i].end;
			i++;
			continue;
		}
		/* A gap up to the next segment, or to end. */
		seg_insert(m, i, at,
			   i < m->nr && m->seg[i].start < end ? m->seg[i].start : end,
			   &attr_default);
		fn(&m->seg[i].a, arg);
		at = m->seg[i].end;
		i++;
	}
	map_compact(m);
	return 0;
}

static void attr_reset(struct vma_attr *a, const void *arg)
{
	(void)arg;
	*a = attr_default;
}

/* [start, end) is no longer managed (munmap): forget it.  op_lock (write). */
void vma_forget(struct vma_map *m, uintptr_t start, uintptr_t end)
{
	unsigned i, n = 0;

	if (!m->nr)
		return;
	if (vma_update(m, start, end, attr_reset, NULL)) {
		/* No room to split: forget the segments wholly inside. */
		for (i = 0; i < m->nr; i++)
			if (m->seg[i].start < start || m->seg[i].end > end)
				m->seg[n++] = m->seg[i];
		m->nr = n;
	}
}

/*
 * The mapping [old, old + old_len) moved to new (mremap), new_len bytes
 * long: its attributes go with it, and pages it grew by take those of its
 * last page, as the kernel's grown mapping has that mapping's flags.
 * op_lock (write).
 */
void vma_move(struct vma_map *m, uintptr_t old, size_t old_len, uintptr_t new,
	      size_t new_len)
{
	unsigned i, first, last;
	intptr_t shift = (intptr_t)(new - old);
	struct vma_attr tail = attr_default;
	size_t keep = MIN(old_len, new_len);

	if (!m->nr)
		return;
	if (map_reserve(m, 4))
		return;
	seg_split(m, old);
	seg_split(m, old + keep);
	first = seg_lower_bound(m, old);
	for (last = first; last < m->nr && m->seg[last].end <= old + keep; last++)
		;
	if (last > first && m->seg[last - 1].end == old + keep)
		tail = m->seg[last - 1].a;
	/* Take the moved segments out, shift them, put them back in order. */
	{
		unsigned k, n = last - first;
		struct vma_seg moved[64];

		if (n > ARRAY_SIZE(moved)) {
			/* Too many pieces to carry: forget them (conservative
			   defaults: reclaim learns the rest from the kernel). */
			vma_forget(m, old, old + old_len);
			return;
		}
		memcpy(moved, &m->seg[first], n * sizeof(*moved));
		memmove(&m->seg[first], &m->seg[last],
			(m->nr - last) * sizeof(*m->seg));
		m->nr -= n;
		vma_forget(m, old + keep, old + old_len);
		vma_forget(m, new, new + new_len);	/* nothing was there */
		for (k = 0; k < n; k++) {
			moved[k].start += shift;
			moved[k].end += shift;
			i = seg_lower_bound(m, moved[k].start);
			if (map_reserve(m, 1))
				return;
			seg_insert(m, i, moved[k].start, moved[k].end,
				   &moved[k].a);
		}
	}
	if (new_len > keep && !attr_is_default(&tail) &&
	    !map_reserve(m, 1))
		seg_insert(m, seg_lower_bound(m, new + keep), new + keep,
			   new + new_len, &tail);
	map_compact(m);
}

/*
 * What the pages of [start, end) have, together: VMA_PROTECTED when one
 * is not read-write or has a key, VMA_LOCKED when one is locked,
 * VMA_PINNED when one is pinned.  Caller holds op_lock.
 */
unsigned vma_flags(const struct vma_map *m, uintptr_t start, uintptr_t end)
{
	unsigned i, flags = 0;

	if (!m->nr)
		return 0;
	for (i = seg_lower_bound(m, start); i < m->nr && m->seg[i].start < end;
	     i++) {
		const struct vma_attr *a = &m->seg[i].a;

		if (a->prot != PROT_RW || a->pkey)
			flags |= VMA_PROTECTED;
		if (a->lock)
			flags |= VMA_LOCKED;
		if (a->lock == VMA_LOCK_ONFAULT)
			flags |= VMA_ONFAULT;
		if (a->pins)
			flags |= VMA_PINNED;
	}
	return flags;
}

/*
 * Pages of [start, end) that are not locked or pinned (what a new lock of
 * that range would add to the memory that cannot be evicted), and, over
 * the whole map, the pages that are.  Caller holds op_lock.
 */
void vma_unevictable_pages(const struct vma_map *m, uintptr_t start,
			   uintptr_t end, uint64_t *added, uint64_t *total)
{
	uint64_t covered = 0;
	unsigned i;

	*total = 0;
	for (i = 0; i < m->nr; i++) {
		const struct vma_seg *s = &m->seg[i];

		if (!s->a.lock && !s->a.pins)
			continue;
		*total += (s->end - s->start) >> PAGE_SHIFT;
		if (s->end > start && s->start < end)
			covered += (MIN(s->end, end) - MAX(s->start, start)) >>
				   PAGE_SHIFT;
	}
	*added = ((end - start) >> PAGE_SHIFT) - covered;
}

/* Forget every lock and pin (a fork child's copy).  op_lock (write). */
void vma_clear_locks(struct vma_map *m)
{
	unsigned i;

	for (i = 0; i < m->nr; i++) {
		m->seg[i].a.lock = 0;
		m->seg[i].a.pins = 0;
	}
	map_compact(m);
}

/* The segments, for a walk: *nr of them.  Caller holds op_lock. */
const struct vma_seg *vma_segments(const struct vma_map *m, unsigned *nr)
{
	*nr = m->nr;
	return m->seg;
}

void vma_map_destroy(struct vma_map *m)
{
	prim_free(m->seg, m->map_len);
	memset(m, 0, sizeof(*m));
}
