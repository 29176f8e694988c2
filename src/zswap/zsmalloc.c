// SPDX-License-Identifier: MIT
/*
 * zsmalloc.c - the compressed pool's allocator: handles, objects and the
 * pool.
 *
 * This rebuilds the kernel's mm/zsmalloc.c for user space.  The kernel
 * builds zspages out of scattered physical pages; here the pool owns one
 * contiguous range of virtual memory (the arena, reserved MAP_NORESERVE),
 * so a "span" of pages is simply a run of consecutive arena pages and an
 * object never needs to be stitched together across page boundaries.
 *
 * The allocator is three files:
 *
 *	zsmalloc.c	handles, objects of up to a page, chained objects,
 *			the API, the pool's life
 *	zs_class.c	size classes: slots in spans, fullness lists,
 *			compaction, consistency checks
 *	zs_arena.c	the arena's pages, handed out as spans
 *
 * zs_pool.h has the pool structure the first two share, and the locking.
 * An object of up to 4 KiB goes into a slot of its size class, a span of
 * slots of that size; zs_class.c explains classes and spans.
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
 */
#include <assert.h>
#include <string.h>

#include "base.h"
#include "prim.h"
#include "zs_arena.h"
#include "zs_pool.h"
#include "zsmalloc.h"

#define ZS_MAX_CHUNKS		(ZS_MAX_OBJECT / PAGE_SIZE)
#define ZS_MAX_POOL_PAGES	(1ull << 28)	/* 1 TiB */

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
			class_span_init_locked(pool, c, spare);
			p = spare;
			spare = NIL;
		}
	}
	s = class_slot_alloc_locked(pool, c, p, h);
	h_set(pool, h, h_small(p, s, size));
	class_span_relink_locked(pool, c, p);
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
	class_slot_free_locked(pool, c, p, h_slot(e));
	class_span_relink_locked(pool, c, p);
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
	class_init_all(pool);
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

