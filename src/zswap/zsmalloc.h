/* SPDX-License-Identifier: MIT */
/*
 * zsmalloc.h - the compressed pool's allocator (zsmalloc.c; compaction and
 * the consistency checks in zs_class.c).
 *
 * A pool packs variable-sized objects (compressed pages and folios) into
 * one reserved arena and names each by a 32-bit handle that stays valid
 * while compaction moves the object.  zsmalloc.c and zs_class.c explain
 * the design.
 *
 * Every function but zs_create and zs_destroy may be called from several
 * threads at once.  Nothing here calls malloc.  zs_read, zs_write and
 * zs_size only take a lock and copy; zs_free allocates nothing (it may
 * give pages back with madvise); zs_malloc only faults in arena pages.
 */
#ifndef USWAP_ZSMALLOC_H
#define USWAP_ZSMALLOC_H

#include <stddef.h>
#include <stdint.h>

/* Largest object: a 2 MiB folio that did not compress, plus headroom. */
#define ZS_MAX_OBJECT	((size_t)(2u << 20) + (64u << 10))

struct zs_pool;

/*
 * Create a pool of at most max_bytes of memory: spans of objects, the
 * handle table and the page metadata (the fixed pool structure, about
 * 40 KiB, is not counted).  Its arena reserves twice that much address
 * space, MAP_NORESERVE.  account(arg, delta_pages), when not NULL, is called with
 * the change whenever pool memory grows or shrinks; it is called with
 * pool locks held and must be cheap (atomics only).  Returns NULL when
 * max_bytes is below one page or above 1 TiB, or on mapping failure.
 */
struct zs_pool *zs_create(size_t max_bytes,
			  void (*account)(void *arg, long delta_pages),
			  void *arg);
/* Free everything; account() receives minus the pool's whole memory. */
void zs_destroy(struct zs_pool *pool);

/*
 * Allocate an object of size bytes (1 .. ZS_MAX_OBJECT).  Returns a non-zero
 * handle, or 0 when size is invalid or the pool has no room.
 */
uint32_t zs_malloc(struct zs_pool *pool, size_t size);
/* Free an object; handle 0 is ignored. */
void zs_free(struct zs_pool *pool, uint32_t handle);

/*
 * Copy len bytes into / out of the object, from its start.  len is the
 * allocated size (a shorter len copies a prefix).  A read never sees an
 * object half moved by compaction; reads and writes of one object must not
 * overlap each other (the caller owns the object).
 */
void zs_write(struct zs_pool *pool, uint32_t handle, const void *src,
	      size_t len);
void zs_read(struct zs_pool *pool, uint32_t handle, void *dst, size_t len);
size_t zs_size(struct zs_pool *pool, uint32_t handle);

/*
 * Move objects out of sparsely used spans into fuller spans of their class
 * and release the spans emptied, and the cache of empty spans.  Returns
 * the bytes released.
 */
uint64_t zs_compact(struct zs_pool *pool);

struct zs_stats {
	uint64_t pool_bytes;	/* spans mapped (empty ones cached included) and tables */
	uint64_t obj_bytes;	/* sum of the sizes of live objects */
	uint64_t objects;	/* live objects (a chained object counts once) */
	uint64_t compactions;	/* zs_compact calls that moved something */
	uint64_t pages_compacted; /* pages released by zs_compact */
};
void zs_get_stats(struct zs_pool *pool, struct zs_stats *st);

/*
 * Debug: check the pool's internal consistency (every span's slots against
 * the handle table, the fullness lists, the page allocator, the memory
 * counted).  The pool must be quiescent.  Returns NULL when consistent,
 * else a static message naming the first problem.
 */
const char *zs_validate(struct zs_pool *pool);

#endif /* USWAP_ZSMALLOC_H */
