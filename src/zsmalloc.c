// SPDX-License-Identifier: MIT
/*
 * zsmalloc.c - the compressed pool's allocator.
 *
 * This rebuilds the kernel's mm/zsmalloc.c for user space.  The kernel
 * builds zspages out of scattered physical pages; here the pool owns one
 * contiguous range of virtual memory (the arena, reserved MAP_NORESERVE),
 * so a "span" of pages is simply a run of consecutive arena pages and an
 * object never needs to be stitched together across page boundaries.
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
 * under 32 MiB also gets shorter spans, classes_init()).  Classes
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
 * Handles.  A handle is an index into handles[], whose 64-bit entries say
 * where the object is: (span page, slot, size) for a small object.  When
 * compaction moves an object it rewrites the entry, so handles never
 * change.  An object larger than 4 KiB (a large folio) is a chain: chunks
 * of 4 KiB (the last one shorter) stored as ordinary objects, plus an index
 * object holding the chunks' handles; its entry holds (index handle, size).
 * Chunks and indexes are invisible outside this file.
 *
 * The arena.  Spans come from zs_arena.c: a buddy allocator over the
 * pages of the arena, with a cache of empty spans that keeps them mapped
 * for the next span of the same length.  Memory is limited by the pool's
 * charge (struct zs_charge), which counts span pages (cached ones
 * included) and the pages of pages[] and handles[] up to their high-water
 * marks, each charged before it is used.
 *
 * Locking.  Three leaf locks; none is held while taking another:
 *
 *  - class->lock protects the class's fullness lists, the metadata of its
 *    spans (inuse, free slots, band, links), the bytes of its slots and
 *    the location in the handle entries of its objects.  Readers, writers
 *    and compaction all copy object bytes under it, so a read never sees
 *    an object half moved.  The class of an object follows from its size,
 *    which never changes, so a caller reads the entry, locks the class,
 *    then reads the entry again for the location.
 *  - arena.lock (zs_arena.c) protects the buddy lists, the frontier, the
 *    dirty cache and the kind / order / npages of pages[] entries.
 *  - handle_lock protects the handle free list and handles_hwm.
 *
 * Compaction drops the class lock after emptying each source span, so it
 * never holds up a reader for more than one span's worth of copying.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "zs_arena.h"
#include "zsmalloc.h"

#define ZS_ALIGN		16u	/* slot size step */
#define ZS_HDR			4u	/* handle header of a slot */
#define ZS_NR_SLOT_CLASSES	255u	/* slots of 16 .. 4080 bytes */
#define ZS_HUGE_IDX		ZS_NR_SLOT_CLASSES
#define ZS_NR_CLASSES		(ZS_NR_SLOT_CLASSES + 1)
#define ZS_HUGE_MIN		(ZS_NR_SLOT_CLASSES * ZS_ALIGN - ZS_HDR + 1)
#define ZS_MAX_CHUNKS		(ZS_MAX_OBJECT / PAGE_SIZE)
#define ZS_NR_BANDS		8u
#define ZS_FULL			ZS_NR_BANDS	/* list index of full spans */
#define ZS_NR_LISTS		(ZS_NR_BANDS + 1)
#define ZS_NO_BAND		0xffu		/* on no list */
#define ZS_MAX_POOL_PAGES	(1ull << 28)	/* 1 TiB */

#define NO_SLOT			0xffffu

#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))

/*
 * Handle entries, 64 bits:
 *	small object	H_USED | size << 44 | span page << 12 | slot
 *	chained object	H_USED | H_LARGE | size << 32 | index handle
 *	free handle	the next free handle (H_USED clear)
 */
#define H_LARGE			(1ull << 63)
#define H_USED			(1ull << 62)
#define H_SMALL_SIZE_SHIFT	44
#define H_LARGE_SIZE_SHIFT	32

/* One cache line or more each: the locks of two classes do not share one. */
struct size_class {
	pthread_mutex_t lock;	/* see the top of the file */
	uint32_t size;		/* slot bytes */
	uint16_t span_pages;
	uint16_t objs_per_span;
	bool huge;
	uint32_t lists[ZS_NR_LISTS];
	uint64_t nr_spans;
	uint64_t nr_used;	/* slots in use */
} __attribute__((aligned(64)));

struct zs_pool {
	struct zs_charge charge;	/* memory charged, pages */
	struct zs_arena arena;		/* see zs_arena.c */

	/*
	 * Under handle_lock: the free list and handles_hwm.  The entry of a
	 * live handle changes under its class's lock (atomically: readers
	 * look up the size, hence the class, without it).
	 */
	pthread_mutex_t handle_lock;
	_Atomic uint64_t *handles;
	uint32_t nr_handles;		/* entries reserved */
	uint32_t handles_hwm;		/* highest handle ever used */
	uint32_t handle_free;		/* free list head, 0 if empty */
	uint64_t handle_pages;		/* pages of handles[] charged */

	_Atomic uint64_t objects, obj_bytes, compactions, pages_compacted;
	uint16_t class_of[ZS_NR_CLASSES];	/* slot index -> class */
	struct size_class classes[ZS_NR_CLASSES];
};

static void zs_assert_locked(pthread_mutex_t *lock)
{
	assert(pthread_mutex_trylock(lock) == EBUSY);
	(void)lock;
}

/* ---- handle entries ---- */

static uint64_t h_small(uint32_t page, unsigned slot, size_t size)
{
	return H_USED | (uint64_t)size << H_SMALL_SIZE_SHIFT |
	       (uint64_t)page << 12 | slot;
}

static uint64_t h_large(uint32_t index, size_t size)
{
	return H_USED | H_LARGE | (uint64_t)size << H_LARGE_SIZE_SHIFT | index;
}

static size_t h_size(uint64_t e)
{
	if (e & H_LARGE)
		return (e >> H_LARGE_SIZE_SHIFT) & 0x3fffff;
	return (e >> H_SMALL_SIZE_SHIFT) & 0x1fff;
}

static uint32_t h_page(uint64_t e)
{
	return (uint32_t)(e >> 12);
}

static unsigned h_slot(uint64_t e)
{
	return e & 0xfff;
}

static uint64_t h_get(struct zs_pool *pool, uint32_t h)
{
	assert(h && h < pool->nr_handles);
	return atomic_load_explicit(&pool->handles[h], memory_order_acquire);
}

static void h_set(struct zs_pool *pool, uint32_t h, uint64_t e)
{
	atomic_store_explicit(&pool->handles[h], e, memory_order_release);
}

/* ---- handles ---- */

/* A new handle, its entry not yet set; 0 when out of handles or memory. */
static uint32_t handle_alloc(struct zs_pool *pool)
{
	uint32_t h;

	pthread_mutex_lock(&pool->handle_lock);
	h = pool->handle_free;
	if (h) {
		pool->handle_free = (uint32_t)atomic_load_explicit(
			&pool->handles[h], memory_order_relaxed);
	} else if (pool->handles_hwm + 1 < pool->nr_handles) {
		uint64_t need;

		h = pool->handles_hwm + 1;
		need = DIV_ROUND_UP(((uint64_t)h + 1) * sizeof(uint64_t),
				    PAGE_SIZE);
		if (need > pool->handle_pages) {
			if (pool_charge(&pool->charge,
					need - pool->handle_pages))
				pool->handle_pages = need;
			else
				h = 0;
		}
		if (h)
			pool->handles_hwm = h;
	}
	if (h)
		atomic_store_explicit(&pool->handles[h], H_USED,
				      memory_order_relaxed);
	pthread_mutex_unlock(&pool->handle_lock);
	return h;
}

static void handle_free(struct zs_pool *pool, uint32_t h)
{
	pthread_mutex_lock(&pool->handle_lock);
	atomic_store_explicit(&pool->handles[h], pool->handle_free,
			      memory_order_relaxed);
	pool->handle_free = h;
	pthread_mutex_unlock(&pool->handle_lock);
}

/* ---- size classes and spans ---- */

static unsigned size_to_idx(size_t size)
{
	assert(size >= 1 && size <= PAGE_SIZE);
	if (size >= ZS_HUGE_MIN)
		return ZS_HUGE_IDX;
	return (unsigned)((size + ZS_HDR - 1) / ZS_ALIGN);
}

static struct size_class *size_class(struct zs_pool *pool, size_t size)
{
	return &pool->classes[pool->class_of[size_to_idx(size)]];
}

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
static void classes_init(struct zs_pool *pool)
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

static char *slot_addr(struct zs_pool *pool, const struct size_class *c,
		       uint32_t p, unsigned s)
{
	return pool->arena.base + (size_t)p * PAGE_SIZE + (size_t)s * c->size;
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
static void span_relink_locked(struct zs_pool *pool, struct size_class *c,
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

static void span_init_locked(struct zs_pool *pool, struct size_class *c,
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
static uint32_t class_fullest_locked(struct size_class *c)
{
	unsigned b;

	for (b = ZS_NR_BANDS; b-- > 0;)
		if (c->lists[b] != NIL)
			return c->lists[b];
	return NIL;
}

static unsigned slot_alloc_locked(struct zs_pool *pool, struct size_class *c,
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

static void slot_free_locked(struct zs_pool *pool, struct size_class *c,
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

/* ---- objects of up to a page ---- */

static uint32_t obj_alloc(struct zs_pool *pool, size_t size)
{
	struct size_class *c = size_class(pool, size);
	uint32_t h = handle_alloc(pool), p, spare = NIL;
	unsigned s;

	if (!h)
		return 0;
	pthread_mutex_lock(&c->lock);
	p = class_fullest_locked(c);
	if (p == NIL) {
		/* Map a span without the lock; another thread may beat us. */
		pthread_mutex_unlock(&c->lock);
		spare = span_get(&pool->arena, c->span_pages);
		if (spare == NIL) {
			handle_free(pool, h);
			return 0;
		}
		pthread_mutex_lock(&c->lock);
		p = class_fullest_locked(c);
		if (p == NIL) {
			span_init_locked(pool, c, spare);
			p = spare;
			spare = NIL;
		}
	}
	s = slot_alloc_locked(pool, c, p, h);
	h_set(pool, h, h_small(p, s, size));
	span_relink_locked(pool, c, p);
	pthread_mutex_unlock(&c->lock);
	if (spare != NIL)
		span_put(&pool->arena, spare);
	return h;
}

static void obj_free(struct zs_pool *pool, uint32_t h, uint64_t e)
{
	struct size_class *c = size_class(pool, h_size(e));
	uint32_t p;
	bool empty;

	pthread_mutex_lock(&c->lock);
	e = h_get(pool, h);	/* the location is stable under the lock */
	p = h_page(e);
	slot_free_locked(pool, c, p, h_slot(e));
	span_relink_locked(pool, c, p);
	empty = !pool->arena.pages[p].inuse;
	if (empty)
		c->nr_spans--;
	pthread_mutex_unlock(&c->lock);
	handle_free(pool, h);
	if (empty)
		span_put(&pool->arena, p);
}

/* Copy the first len bytes of a small object out (write false) or in. */
static void obj_copy(struct zs_pool *pool, uint32_t h, uint64_t e, void *buf,
		     size_t len, bool write)
{
	struct size_class *c = size_class(pool, h_size(e));
	char *obj;

	assert(len <= h_size(e));
	pthread_mutex_lock(&c->lock);
	e = h_get(pool, h);
	obj = slot_addr(pool, c, h_page(e), h_slot(e)) + (c->huge ? 0 : ZS_HDR);
	if (write)
		memcpy(obj, buf, len);
	else
		memcpy(buf, obj, len);
	pthread_mutex_unlock(&c->lock);
}

/* ---- chained objects, larger than a page ---- */

static unsigned chunks_of(size_t size)
{
	return (unsigned)DIV_ROUND_UP(size, PAGE_SIZE);
}

static size_t chunk_len(size_t size, unsigned i)
{
	return MIN(PAGE_SIZE, size - (size_t)i * PAGE_SIZE);
}

static void chunks_free(struct zs_pool *pool, const uint32_t *idx, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		obj_free(pool, idx[i], h_get(pool, idx[i]));
}

static uint32_t large_alloc(struct zs_pool *pool, size_t size)
{
	uint32_t idx[ZS_MAX_CHUNKS], ih, h;
	unsigned n = chunks_of(size), i;

	for (i = 0; i < n; i++) {
		idx[i] = obj_alloc(pool, chunk_len(size, i));
		if (!idx[i])
			goto err_free_chunks;
	}
	ih = obj_alloc(pool, n * sizeof(uint32_t));
	if (!ih)
		goto err_free_chunks;
	obj_copy(pool, ih, h_get(pool, ih), idx, n * sizeof(uint32_t), true);
	h = handle_alloc(pool);
	if (!h)
		goto err_free_index;
	h_set(pool, h, h_large(ih, size));
	return h;

err_free_index:
	obj_free(pool, ih, h_get(pool, ih));
err_free_chunks:
	chunks_free(pool, idx, i);
	return 0;
}

/* The chunk handles of a chained object into idx[]; returns their number. */
static unsigned large_index(struct zs_pool *pool, uint64_t e, uint32_t *idx)
{
	uint32_t ih = (uint32_t)e;
	unsigned n = chunks_of(h_size(e));

	obj_copy(pool, ih, h_get(pool, ih), idx, n * sizeof(uint32_t), false);
	return n;
}

static void large_free(struct zs_pool *pool, uint32_t h, uint64_t e)
{
	uint32_t idx[ZS_MAX_CHUNKS];
	unsigned n = large_index(pool, e, idx);

	chunks_free(pool, idx, n);
	obj_free(pool, (uint32_t)e, h_get(pool, (uint32_t)e));
	handle_free(pool, h);
}

/* Chunk by chunk: compaction moves chunks, never changes their bytes. */
static void large_copy(struct zs_pool *pool, uint64_t e, char *buf,
		       size_t len, bool write)
{
	uint32_t idx[ZS_MAX_CHUNKS];
	unsigned i;

	large_index(pool, e, idx);
	for (i = 0; (size_t)i * PAGE_SIZE < len; i++)
		obj_copy(pool, idx[i], h_get(pool, idx[i]),
			 buf + (size_t)i * PAGE_SIZE, chunk_len(len, i), write);
}

/* ---- the API ---- */

uint32_t zs_malloc(struct zs_pool *pool, size_t size)
{
	uint32_t h;

	if (!size || size > ZS_MAX_OBJECT)
		return 0;
	h = size <= PAGE_SIZE ? obj_alloc(pool, size) : large_alloc(pool, size);
	if (h) {
		atomic_fetch_add_explicit(&pool->objects, 1,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&pool->obj_bytes, size,
					  memory_order_relaxed);
	}
	return h;
}

void zs_free(struct zs_pool *pool, uint32_t handle)
{
	uint64_t e;

	if (!handle)
		return;
	e = h_get(pool, handle);
	assert(e & H_USED);
	atomic_fetch_sub_explicit(&pool->objects, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&pool->obj_bytes, h_size(e),
				  memory_order_relaxed);
	if (e & H_LARGE)
		large_free(pool, handle, e);
	else
		obj_free(pool, handle, e);
}

void zs_write(struct zs_pool *pool, uint32_t handle, const void *src,
	      size_t len)
{
	uint64_t e = h_get(pool, handle);

	assert((e & H_USED) && len <= h_size(e));
	if (e & H_LARGE)
		large_copy(pool, e, (char *)src, len, true);
	else
		obj_copy(pool, handle, e, (void *)src, len, true);
}

void zs_read(struct zs_pool *pool, uint32_t handle, void *dst, size_t len)
{
	uint64_t e = h_get(pool, handle);

	assert((e & H_USED) && len <= h_size(e));
	if (e & H_LARGE)
		large_copy(pool, e, dst, len, false);
	else
		obj_copy(pool, handle, e, dst, len, false);
}

size_t zs_size(struct zs_pool *pool, uint32_t handle)
{
	return h_size(h_get(pool, handle));
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
	unsigned d = slot_alloc_locked(pool, c, dst, h);

	memcpy(slot_addr(pool, c, dst, d) + ZS_HDR, from + ZS_HDR, size);
	h_set(pool, h, h_small(dst, d, size));
	slot_free_locked(pool, c, src, s);
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
		span_relink_locked(pool, c, dst);
	}
	span_relink_locked(pool, c, src);
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

/* ---- pool ---- */

struct zs_pool *zs_create(size_t max_bytes,
			  void (*account)(void *arg, long delta_pages),
			  void *arg)
{
	uint64_t max_pages = max_bytes >> PAGE_SHIFT, nr_handles;
	struct zs_pool *pool;

	if (!max_pages || max_pages > ZS_MAX_POOL_PAGES)
		return NULL;
	pool = prim_alloc(sizeof(*pool));
	if (!pool)
		return NULL;
	pool->charge.max_pages = max_pages;
	pool->charge.account = account;
	pool->charge.account_arg = arg;
	if (arena_init(&pool->arena, max_pages, &pool->charge))
		goto err_free_pool;
	/* Each object and chunk takes a slot of at least 16 bytes. */
	nr_handles = MIN(max_pages * (PAGE_SIZE / ZS_ALIGN) * 3 / 2 + 2,
			 (uint64_t)UINT32_MAX);
	pool->nr_handles = (uint32_t)nr_handles;
	pool->handles = prim_alloc(nr_handles * sizeof(uint64_t));
	if (!pool->handles)
		goto err_destroy_arena;

	pthread_mutex_init(&pool->handle_lock, NULL);
	classes_init(pool);
	return pool;

err_destroy_arena:
	arena_destroy(&pool->arena);
err_free_pool:
	prim_free(pool, sizeof(*pool));
	return NULL;
}

void zs_destroy(struct zs_pool *pool)
{
	unsigned i;

	if (!pool)
		return;
	pool_uncharge(&pool->charge, atomic_load(&pool->charge.pages));
	for (i = 0; i < ZS_NR_CLASSES; i++)
		pthread_mutex_destroy(&pool->classes[i].lock);
	pthread_mutex_destroy(&pool->handle_lock);
	prim_free(pool->handles, (size_t)pool->nr_handles * sizeof(uint64_t));
	arena_destroy(&pool->arena);
	prim_free(pool, sizeof(*pool));
}

void zs_get_stats(struct zs_pool *pool, struct zs_stats *st)
{
	st->pool_bytes = atomic_load(&pool->charge.pages) * PAGE_SIZE;
	st->obj_bytes = atomic_load(&pool->obj_bytes);
	st->objects = atomic_load(&pool->objects);
	st->compactions = atomic_load(&pool->compactions);
	st->pages_compacted = atomic_load(&pool->pages_compacted);
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
