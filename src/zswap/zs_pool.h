/* SPDX-License-Identifier: MIT */
/*
 * zs_pool.h - the insides of the compressed pool's allocator, for
 * zsmalloc.c (handles, objects, the pool's life) and zs_class.c (size
 * classes and their spans, compaction, consistency checks) only; the rest
 * of uswap sees the pool through zsmalloc.h.
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
 */
#ifndef USWAP_ZS_POOL_H
#define USWAP_ZS_POOL_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "zs_arena.h"

#define ZS_ALIGN		16u	/* slot size step */
#define ZS_HDR			4u	/* handle header of a slot */
#define ZS_NR_SLOT_CLASSES	255u	/* slots of 16 .. 4080 bytes */
#define ZS_HUGE_IDX		ZS_NR_SLOT_CLASSES
#define ZS_NR_CLASSES		(ZS_NR_SLOT_CLASSES + 1)
#define ZS_HUGE_MIN		(ZS_NR_SLOT_CLASSES * ZS_ALIGN - ZS_HDR + 1)
#define ZS_NR_BANDS		8u
#define ZS_FULL			ZS_NR_BANDS	/* list index of full spans */
#define ZS_NR_LISTS		(ZS_NR_BANDS + 1)

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

/* ---- handle entries ---- */

static inline uint64_t h_small(uint32_t page, unsigned slot, size_t size)
{
	return H_USED | (uint64_t)size << H_SMALL_SIZE_SHIFT |
	       (uint64_t)page << 12 | slot;
}

static inline uint64_t h_large(uint32_t index, size_t size)
{
	return H_USED | H_LARGE | (uint64_t)size << H_LARGE_SIZE_SHIFT | index;
}

static inline size_t h_size(uint64_t e)
{
	if (e & H_LARGE)
		return (e >> H_LARGE_SIZE_SHIFT) & 0x3fffff;
	return (e >> H_SMALL_SIZE_SHIFT) & 0x1fff;
}

static inline uint32_t h_page(uint64_t e)
{
	return (uint32_t)(e >> 12);
}

static inline unsigned h_slot(uint64_t e)
{
	return e & 0xfff;
}

static inline uint64_t h_get(struct zs_pool *pool, uint32_t h)
{
	assert(h && h < pool->nr_handles);
	return atomic_load_explicit(&pool->handles[h], memory_order_acquire);
}

static inline void h_set(struct zs_pool *pool, uint32_t h, uint64_t e)
{
	atomic_store_explicit(&pool->handles[h], e, memory_order_release);
}

/* ---- size classes (zs_class.c) ---- */

static inline unsigned size_to_idx(size_t size)
{
	assert(size >= 1 && size <= PAGE_SIZE);
	if (size >= ZS_HUGE_MIN)
		return ZS_HUGE_IDX;
	return (unsigned)((size + ZS_HDR - 1) / ZS_ALIGN);
}

static inline struct size_class *size_class(struct zs_pool *pool, size_t size)
{
	return &pool->classes[pool->class_of[size_to_idx(size)]];
}

static inline char *slot_addr(struct zs_pool *pool,
			      const struct size_class *c, uint32_t p,
			      unsigned s)
{
	return pool->arena.base + (size_t)p * PAGE_SIZE + (size_t)s * c->size;
}

/* ---- defined in zs_class.c ---- */

/* Set up the classes of a new pool (its charge's max_pages set). */
void class_init_all(struct zs_pool *pool);
/* The fullest span of c with a free slot; NIL if none. */
uint32_t class_fullest_locked(struct size_class *c);
/* Make page p, a span just taken from the arena, an empty span of c. */
void class_span_init_locked(struct zs_pool *pool, struct size_class *c,
			    uint32_t p);
/* Put span p on the list its fullness says; an empty one on none. */
void class_span_relink_locked(struct zs_pool *pool, struct size_class *c,
			      uint32_t p);
/*
 * Take a free slot of span p (which has one) for handle h; returns the
 * slot.  The caller relinks the span.
 */
unsigned class_slot_alloc_locked(struct zs_pool *pool, struct size_class *c,
				 uint32_t p, uint32_t h);
/* Free slot s of span p; the caller relinks the span. */
void class_slot_free_locked(struct zs_pool *pool, struct size_class *c,
			    uint32_t p, unsigned s);

#endif /* USWAP_ZS_POOL_H */
