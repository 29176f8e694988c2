// SPDX-License-Identifier: MIT
/*
 * zs_class.c - the compressed pool's size classes: the spans that hold
 * objects of up to a page, and compaction.
 *
 * This rebuilds the size classes, zspages and fullness groups of the
 * kernel's mm/zsmalloc.c, and its compaction (zs_compact(),
 * migrate_zspage()).  zsmalloc.c names each object by a handle and asks
 * this file for a slot of the object's class; spans come from zs_arena.c.
 * The pool structure and the locking are in zs_pool.h.
 *
 * Size classes.  An object of up to 4 KiB goes into a slot of its class.
 * Slots grow in 16-byte steps from 16 to 4080 bytes; each slot starts with
 * a 4-byte header naming the handle of the object in it (0 when the slot is
 * free), so an object of n bytes needs a slot of at least n + 4.  Objects
 * of 4077..4096 bytes (pages that did not compress) go to the "huge" class:
 * one object per page, no header, the handle kept in the span's metadata.
 *
 * Spans.  A class stores its slots in spans of 1..16 pages, all of the
 * same length for the class: the length that leaves the smallest tail
 * after the last whole slot (class_layout(); a shorter span wins when it
 * wastes under 1/128 more, because partly used spans are what
 * fragmentation is made of and shorter ones leave less behind; a pool
 * under 32 MiB also gets shorter spans, class_init_all()).  Classes
 * that end up with the same span length and slots per span are merged into
 * the largest of them, as zsmalloc does: they would use the same memory.
 * A span's metadata lives in pages[], indexed by its first arena page:
 * objects in use, a free-slot list threaded through the free slots
 * themselves, and how many slots were ever handed out (slots beyond are
 * untouched memory, so a fresh span costs no page faults until it fills).
 *
 * Fullness.  A class keeps its spans on ZS_NR_BANDS lists by the fraction
 * of slots used, plus a list of full spans; an empty span leaves its class
 * at once.  Allocation takes a slot from the fullest span that has room, so
 * sparse spans drain; compaction moves objects out of the emptiest span
 * into the fullest ones until the class could not give up another span.
 *
 * Compaction drops the class lock after emptying each source span, so it
 * never holds up a reader for more than one span's worth of copying.
 *
 * zs_validate() checks, in a quiescent pool, every span's slots against
 * the handle table, the fullness lists and counts of each class, then the
 * arena (arena_validate()).
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "base.h"
#include "lockdep.h"
#include "zs_arena.h"
#include "zs_pool.h"
#include "zsmalloc.h"

#define ZS_NO_BAND		0xffu		/* on no list */

#define NO_SLOT			0xffffu

static void zs_assert_locked(pthread_mutex_t *lock)
{
	assert(pthread_mutex_trylock(lock) == EBUSY);
	lock_assert_held(lock);
	(void)lock;
}

/* ---- size classes and spans ---- */

/*
 * The span length, at most max_span pages, for slots of size bytes: the
 * least tail waste, a shorter span when it wastes under 1/128 more.
 */
static void class_layout(unsigned size, unsigned max_span, unsigned *pages,
			 unsigned *objs)
{
	double best = 0;
	unsigned k;

	*pages = 1;
	*objs = (unsigned)(PAGE_SIZE / size);
	for (k = 1; k <= max_span; k++) {
		unsigned n = (unsigned)(k * PAGE_SIZE / size);

		best = MAX(best, (double)n * size / (double)(k * PAGE_SIZE));
	}
	for (k = 1; k <= max_span; k++) {
		unsigned n = (unsigned)(k * PAGE_SIZE / size);

		if ((double)n * size / (double)(k * PAGE_SIZE) >=
		    best - 1.0 / 128) {
			*pages = k;
			*objs = n;
			return;
		}
	}
}

/*
 * Set up the classes.  A small pool gets shorter spans (at most 1/512 of
 * it): each class in use keeps one partly used span, and with ~180
 * classes long spans would fill a small pool with half-empty ones.
 */
void class_init_all(struct zs_pool *pool)
{
	unsigned max_span = ZS_MAX_SPAN_PAGES, i, l;
	struct size_class *c;

	while (max_span > 1 && max_span * 512 > pool->charge.max_pages)
		max_span /= 2;
	for (i = ZS_NR_CLASSES; i-- > 0;) {
		unsigned pages, objs;

		c = &pool->classes[i];
		pthread_mutex_init(&c->lock, NULL);
		for (l = 0; l < ZS_NR_LISTS; l++)
			c->lists[l] = NIL;
		if (i == ZS_HUGE_IDX) {
			c->size = PAGE_SIZE;
			c->span_pages = 1;
			c->objs_per_span = 1;
			c->huge = true;
			pool->class_of[i] = (uint16_t)i;
			continue;
		}
		c->size = (i + 1) * ZS_ALIGN;
		class_layout(c->size, max_span, &pages, &objs);
		c->span_pages = (uint16_t)pages;
		c->objs_per_span = (uint16_t)objs;
		pool->class_of[i] = (uint16_t)i;
		if (i + 1 < ZS_HUGE_IDX) {
			/* Same layout as the next larger class: use that. */
			const struct size_class *up =
				&pool->classes[pool->class_of[i + 1]];

			if (up->span_pages == pages && up->objs_per_span == objs)
				pool->class_of[i] = pool->class_of[i + 1];
		}
	}
}

/* The handle in a slot's header, 0 if the slot is free. */
static uint32_t slot_handle(const char *slot)
{
	uint32_t h;

	memcpy(&h, slot, sizeof(h));
	return h;
}

static void slot_set_handle(char *slot, uint32_t h)
{
	memcpy(slot, &h, sizeof(h));
}

static unsigned span_band(const struct size_class *c, unsigned inuse)
{
	if (inuse == c->objs_per_span)
		return ZS_FULL;
	return inuse * ZS_NR_BANDS / c->objs_per_span;
}

/* Put a span on the list its fullness says; an empty one on none. */
void class_span_relink_locked(struct zs_pool *pool, struct size_class *c,
			      uint32_t p)
{
	struct zs_page *sp = &pool->arena.pages[p];
	unsigned band = sp->inuse ? span_band(c, sp->inuse) : ZS_NO_BAND;

	if (band == sp->band)
		return;
	if (sp->band != ZS_NO_BAND)
		page_list_del(pool->arena.pages, &c->lists[sp->band], p);
	if (band != ZS_NO_BAND)
		page_list_add(pool->arena.pages, &c->lists[band], p);
	sp->band = (uint8_t)band;
}

void class_span_init_locked(struct zs_pool *pool, struct size_class *c,
			    uint32_t p)
{
	struct zs_page *sp = &pool->arena.pages[p];

	sp->class_idx = (uint16_t)(c - pool->classes);
	sp->inuse = 0;
	sp->nr_init = 0;
	sp->free_slot = NO_SLOT;
	sp->handle = 0;
	sp->band = ZS_NO_BAND;
	c->nr_spans++;
}

/* The fullest span with a free slot; NIL if none. */
uint32_t class_fullest_locked(struct size_class *c)
{
	unsigned b;

	for (b = ZS_NR_BANDS; b-- > 0;)
		if (c->lists[b] != NIL)
			return c->lists[b];
	return NIL;
}

unsigned class_slot_alloc_locked(struct zs_pool *pool, struct size_class *c,
				 uint32_t p, uint32_t h)
{
	struct zs_page *sp = &pool->arena.pages[p];
	unsigned s;

	zs_assert_locked(&c->lock);
	assert(sp->inuse < c->objs_per_span);
	if (sp->free_slot != NO_SLOT) {
		uint16_t next;

		s = sp->free_slot;
		memcpy(&next, slot_addr(pool, c, p, s) + ZS_HDR, sizeof(next));
		sp->free_slot = next;
	} else {
		s = sp->nr_init++;
	}
	sp->inuse++;
	c->nr_used++;
	if (c->huge)
		sp->handle = h;
	else
		slot_set_handle(slot_addr(pool, c, p, s), h);
	return s;
}

void class_slot_free_locked(struct zs_pool *pool, struct size_class *c,
			    uint32_t p, unsigned s)
{
	struct zs_page *sp = &pool->arena.pages[p];

	zs_assert_locked(&c->lock);
	if (c->huge) {
		sp->handle = 0;
	} else {
		char *slot = slot_addr(pool, c, p, s);
		uint16_t next = sp->free_slot;

		slot_set_handle(slot, 0);
		memcpy(slot + ZS_HDR, &next, sizeof(next));
		sp->free_slot = (uint16_t)s;
	}
	sp->inuse--;
	c->nr_used--;
}

/* ---- compaction ---- */

/* Could the class's objects fit in fewer spans? */
static bool class_can_compact_locked(const struct size_class *c)
{
	return !c->huge &&
	       c->nr_spans > DIV_ROUND_UP(c->nr_used, c->objs_per_span);
}

/* The emptiest span of the class (one from the lowest band). */
static uint32_t class_emptiest_locked(struct size_class *c)
{
	unsigned b;

	for (b = 0; b < ZS_NR_BANDS; b++)
		if (c->lists[b] != NIL)
			return c->lists[b];
	return NIL;
}

static void obj_move_locked(struct zs_pool *pool, struct size_class *c,
			    uint32_t src, unsigned s, uint32_t dst)
{
	char *from = slot_addr(pool, c, src, s);
	uint32_t h = slot_handle(from);
	size_t size = h_size(h_get(pool, h));
	unsigned d = class_slot_alloc_locked(pool, c, dst, h);

	memcpy(slot_addr(pool, c, dst, d) + ZS_HDR, from + ZS_HDR, size);
	h_set(pool, h, h_small(dst, d, size));
	class_slot_free_locked(pool, c, src, s);
}

/*
 * Move the objects of span src into the fullest other spans of the class
 * until src is empty or no other span has room.  Returns objects moved.
 */
static unsigned span_migrate_locked(struct zs_pool *pool, struct size_class *c,
				    uint32_t src)
{
	struct zs_page *sp = &pool->arena.pages[src];
	unsigned s = 0, moved = 0;

	/* Off its list, so that it is never its own destination. */
	page_list_del(pool->arena.pages, &c->lists[sp->band], src);
	sp->band = ZS_NO_BAND;
	while (sp->inuse) {
		uint32_t dst = class_fullest_locked(c);

		if (dst == NIL)
			break;
		while (sp->inuse &&
		       pool->arena.pages[dst].inuse < c->objs_per_span) {
			while (!slot_handle(slot_addr(pool, c, src, s)))
				s++;
			assert(s < sp->nr_init);
			obj_move_locked(pool, c, src, s, dst);
			moved++;
		}
		class_span_relink_locked(pool, c, dst);
	}
	class_span_relink_locked(pool, c, src);
	return moved;
}

/* Compact one class; returns pages released, *moved set if objects moved. */
static uint64_t class_compact(struct zs_pool *pool, struct size_class *c,
			      bool *moved)
{
	uint64_t released = 0;

	for (;;) {
		uint32_t src = NIL;
		unsigned n = 0;
		bool empty = false;

		pthread_mutex_lock(&c->lock);
		if (class_can_compact_locked(c)) {
			src = class_emptiest_locked(c);
			assert(src != NIL);
			n = span_migrate_locked(pool, c, src);
			empty = !pool->arena.pages[src].inuse;
			if (empty)
				c->nr_spans--;
		}
		pthread_mutex_unlock(&c->lock);
		if (empty)
			released += span_put(&pool->arena, src);
		if (!n)
			break;
		*moved = true;
	}
	return released;
}

uint64_t zs_compact(struct zs_pool *pool)
{
	uint64_t released = 0;
	bool moved = false;
	unsigned i;

	for (i = 0; i < ZS_NR_CLASSES; i++)
		if (pool->class_of[i] == i)
			released += class_compact(pool, &pool->classes[i],
						  &moved);
	released += arena_purge(&pool->arena);
	if (moved)
		atomic_fetch_add(&pool->compactions, 1);
	atomic_fetch_add(&pool->pages_compacted, released);
	return released * PAGE_SIZE;
}

/* ---- consistency checks ---- */

/* Check one span of class c; adds its objects to *used. */
static const char *span_validate(struct zs_pool *pool, struct size_class *c,
				 uint32_t p, unsigned band, uint64_t *used)
{
	const struct zs_page *sp = &pool->arena.pages[p];
	unsigned s, n = 0, nfree = 0, f;

	if (sp->kind != ZS_PG_SPAN || sp->npages != c->span_pages)
		return "span: kind or length";
	if (pool->class_of[sp->class_idx] != c - pool->classes ||
	    sp->band != band || !sp->inuse || span_band(c, sp->inuse) != band)
		return "span: class or band";
	if (sp->nr_init > c->objs_per_span)
		return "span: nr_init";
	for (s = 0; s < sp->nr_init; s++) {
		uint32_t h = c->huge ? sp->handle :
				       slot_handle(slot_addr(pool, c, p, s));
		uint64_t e;

		if (!h)
			continue;
		if (h > pool->handles_hwm)
			return "span: handle out of range";
		e = atomic_load(&pool->handles[h]);
		if (!(e & H_USED) || (e & H_LARGE) || h_page(e) != p ||
		    h_slot(e) != s || size_class(pool, h_size(e)) != c)
			return "span: handle entry does not name its slot";
		n++;
	}
	if (n != sp->inuse)
		return "span: inuse count";
	for (f = sp->free_slot; !c->huge && f != NO_SLOT; nfree++) {
		uint16_t next;

		if (f >= sp->nr_init || nfree > sp->nr_init ||
		    slot_handle(slot_addr(pool, c, p, f)))
			return "span: free slot list";
		memcpy(&next, slot_addr(pool, c, p, f) + ZS_HDR, sizeof(next));
		f = next;
	}
	if (!c->huge && nfree != (unsigned)(sp->nr_init - sp->inuse))
		return "span: free slot count";
	*used += n;
	return NULL;
}

static const char *class_validate(struct zs_pool *pool, struct size_class *c,
				  uint64_t *span_pages)
{
	uint64_t spans = 0, used = 0;
	const char *err = NULL;
	unsigned b;

	pthread_mutex_lock(&c->lock);
	for (b = 0; b < ZS_NR_LISTS && !err; b++) {
		uint32_t p, prev = NIL;

		for (p = c->lists[b]; p != NIL && !err;
		     p = pool->arena.pages[p].next) {
			if (pool->arena.pages[p].prev != prev)
				err = "class: list links";
			else
				err = span_validate(pool, c, p, b, &used);
			prev = p;
			spans++;
		}
	}
	if (!err && (spans != c->nr_spans || used != c->nr_used))
		err = "class: span or object count";
	*span_pages += spans * c->span_pages;
	pthread_mutex_unlock(&c->lock);
	return err;
}

const char *zs_validate(struct zs_pool *pool)
{
	uint64_t span_pages = 0;
	const char *err = NULL;
	unsigned i;

	for (i = 0; i < ZS_NR_CLASSES && !err; i++)
		if (pool->class_of[i] == i)
			err = class_validate(pool, &pool->classes[i],
					     &span_pages);
	if (err)
		return err;
	return arena_validate(&pool->arena, span_pages, pool->handle_pages);
}
