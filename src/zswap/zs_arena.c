// SPDX-License-Identifier: MIT
/*
 * zs_arena.c - the page allocator under the compressed pool.
 *
 * zs_class.c packs objects into spans of 1..16 consecutive pages; this
 * file hands out those spans.  The kernel's zsmalloc takes scattered
 * physical pages from the page allocator; here the pool owns one
 * contiguous range of virtual memory (the arena, reserved MAP_NORESERVE),
 * and a span is simply a run of consecutive arena pages.
 *
 * Spans come from a buddy allocator over arena pages (orders 0..4): a
 * span of n pages takes a block of the next power of two and gives the
 * tail back.  Blocks beyond the frontier have never been used; their
 * metadata is untouched.  Page states, at a block's first page:
 *
 *	 beyond the frontier
 *	        | frontier_grow_locked()
 *	        v           span_get()              span_put()
 *	      FREE ------------------------> SPAN ------------> DIRTY
 *	        ^                             ^                   |  |
 *	        |                             +-------------------+  |
 *	        |                      span_get() of the same length |
 *	        +----------------------------------------------------+
 *	              arena_purge(): MADV_DONTNEED, back to the buddy
 *
 * A span that empties is not given back at once: up to dirty_max pages
 * of them stay mapped (DIRTY) so that the next span of that length costs
 * neither a madvise nor page faults (a freed raw page is followed by a
 * stored one all the time); past that, or at zs_compact(), they are
 * zapped in one batch.  The arena is twice max_bytes of address space so
 * that fragmentation of the address space is most unlikely to fill the
 * pool before its memory does: memory is limited by the pool's charge
 * (struct zs_charge), which counts span pages (cached ones included) and
 * the pages of pages[] and of the handle table up to their high-water
 * marks, each charged before it is used.
 *
 * Locking.  arena->lock, a leaf lock, protects the buddy lists, the
 * frontier, the dirty cache and the kind / order / npages of pages[]
 * entries.  The zap itself runs without it: a span being zapped is marked
 * PURGING and is on no list.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "base.h"
#include "lockdep.h"
#include "prim.h"
#include "zs_arena.h"

#define ZS_DIRTY_MAX		64u		/* pages of cached empty spans */
#define ZS_PURGE_BATCH		64u

#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))

static void arena_assert_locked(struct zs_arena *arena)
{
	assert(pthread_mutex_trylock(&arena->lock) == EBUSY);
	lock_assert_held(&arena->lock);
	(void)arena;
}

static void block_push_locked(struct zs_arena *arena, uint32_t p,
		              unsigned order)
{
	arena->pages[p].kind = ZS_PG_FREE;
	arena->pages[p].order = (uint8_t)order;
	page_list_add(arena->pages, &arena->free_area[order], p);
}

/* Give the buddy one more block of the largest order, charging pages[]. */
static bool frontier_grow_locked(struct zs_arena *arena)
{
	uint32_t end = arena->frontier + ZS_MAX_SPAN_PAGES;
	uint64_t need;

	if (end > arena->nr_pages)
		return false;
	need = DIV_ROUND_UP((uint64_t)end * sizeof(struct zs_page), PAGE_SIZE);
	if (need > arena->meta_pages) {
		if (!pool_charge(arena->charge, need - arena->meta_pages))
			return false;
		arena->meta_pages = need;
	}
	block_push_locked(arena, arena->frontier, ZS_MAX_ORDER);
	arena->frontier = end;
	return true;
}

static uint32_t block_alloc_locked(struct zs_arena *arena, unsigned order)
{
	unsigned o = order;
	uint32_t p;

	arena_assert_locked(arena);
	while (o <= ZS_MAX_ORDER && arena->free_area[o] == NIL)
		o++;
	if (o > ZS_MAX_ORDER) {
		if (!frontier_grow_locked(arena))
			return NIL;
		o = ZS_MAX_ORDER;
	}
	p = arena->free_area[o];
	page_list_del(arena->pages, &arena->free_area[o], p);
	arena->pages[p].kind = ZS_PG_NONE;
	while (o > order) {
		o--;
		block_push_locked(arena, p + (1u << o), o);
	}
	return p;
}

/* Free a naturally aligned block, merging it with its free buddies. */
static void block_free_locked(struct zs_arena *arena, uint32_t p,
		              unsigned order)
{
	arena_assert_locked(arena);
	while (order < ZS_MAX_ORDER) {
		uint32_t b = p ^ (1u << order);
		struct zs_page *bp = &arena->pages[b];

		if (bp->kind != ZS_PG_FREE || bp->order != order)
			break;
		page_list_del(arena->pages, &arena->free_area[order], b);
		bp->kind = ZS_PG_NONE;
		p = MIN(p, b);
		order++;
	}
	block_push_locked(arena, p, order);
}

static unsigned order_of(unsigned npages)
{
	unsigned o = 0;

	while ((1u << o) < npages)
		o++;
	return o;
}

/* npages consecutive pages: a block of the next power of two, tail freed. */
static uint32_t pages_alloc_locked(struct zs_arena *arena, unsigned npages)
{
	unsigned order = order_of(npages), off = npages;
	uint32_t p = block_alloc_locked(arena, order);

	if (p == NIL)
		return NIL;
	while (off < (1u << order)) {
		unsigned o = (unsigned)__builtin_ctz(off);

		block_free_locked(arena, p + off, o);
		off += 1u << o;
	}
	return p;
}

/* Free pages [p, p + npages) as the aligned blocks they are made of. */
static void pages_free_locked(struct zs_arena *arena, uint32_t p,
		              unsigned npages)
{
	unsigned off = 0;

	while (off < npages) {
		unsigned o = 31u - (unsigned)__builtin_clz(npages - off);

		if (off)
			o = MIN(o, (unsigned)__builtin_ctz(off));
		block_free_locked(arena, p + off, o);
		off += 1u << o;
	}
}

/*
 * Zap every cached empty span and give its pages back to the buddy.
 * Returns the pages released.
 */
uint64_t arena_purge(struct zs_arena *arena)
{
	struct iovec iov[ZS_PURGE_BATCH];
	uint32_t first[ZS_PURGE_BATCH];
	uint64_t total = 0;

	for (;;) {
		uint64_t batch = 0;
		unsigned n = 0, k, i;

		pthread_mutex_lock(&arena->lock);
		for (k = 1; k <= ZS_MAX_SPAN_PAGES; k++) {
			while (n < ZS_PURGE_BATCH && arena->dirty[k] != NIL) {
				uint32_t p = arena->dirty[k];

				page_list_del(arena->pages, &arena->dirty[k],
					      p);
				arena->pages[p].kind = ZS_PG_PURGING;
				arena->dirty_pages -= k;
				first[n] = p;
				iov[n].iov_base = arena->base +
						  (size_t)p * PAGE_SIZE;
				iov[n].iov_len = (size_t)k * PAGE_SIZE;
				n++;
			}
		}
		pthread_mutex_unlock(&arena->lock);
		if (!n)
			break;
		/* Cannot fail on our own private anonymous mapping. */
		(void)prim_zap_ranges(iov, n);
		pthread_mutex_lock(&arena->lock);
		for (i = 0; i < n; i++) {
			unsigned np = arena->pages[first[i]].npages;

			arena->pages[first[i]].kind = ZS_PG_NONE;
			pages_free_locked(arena, first[i], np);
			batch += np;
		}
		pthread_mutex_unlock(&arena->lock);
		pool_uncharge(arena->charge, batch);
		total += batch;
	}
	return total;
}

static uint32_t span_get_locked(struct zs_arena *arena, unsigned npages)
{
	uint32_t p = arena->dirty[npages];

	if (p != NIL) {
		page_list_del(arena->pages, &arena->dirty[npages], p);
		arena->dirty_pages -= npages;
		return p;
	}
	if (!pool_charge(arena->charge, npages))
		return NIL;
	p = pages_alloc_locked(arena, npages);
	if (p == NIL)
		pool_uncharge(arena->charge, npages);
	return p;
}

/*
 * A span of npages pages, charged: a cached empty one if there is one of
 * that length, else fresh pages (after zapping the cache if the pool is at
 * its limit).  Returns its first page, NIL when the pool is full.
 */
uint32_t span_get(struct zs_arena *arena, unsigned npages)
{
	bool purged = false;
	uint32_t p;

	for (;;) {
		pthread_mutex_lock(&arena->lock);
		p = span_get_locked(arena, npages);
		if (p != NIL) {
			arena->pages[p].kind = ZS_PG_SPAN;
			arena->pages[p].npages = (uint8_t)npages;
		}
		pthread_mutex_unlock(&arena->lock);
		if (p != NIL || purged || !arena_purge(arena))
			return p;
		purged = true;
	}
}

/*
 * Take back an empty span: cache it, and zap the cache if it grew past
 * dirty_max.  Returns the pages released.
 */
uint64_t span_put(struct zs_arena *arena, uint32_t p)
{
	bool over;
	unsigned k;

	pthread_mutex_lock(&arena->lock);
	k = arena->pages[p].npages;
	assert(arena->pages[p].kind == ZS_PG_SPAN);
	arena->pages[p].kind = ZS_PG_DIRTY;
	page_list_add(arena->pages, &arena->dirty[k], p);
	arena->dirty_pages += k;
	over = arena->dirty_pages > arena->dirty_max;
	pthread_mutex_unlock(&arena->lock);
	return over ? arena_purge(arena) : 0;
}

static const char *arena_validate_locked(struct zs_arena *arena,
					 uint64_t *free_pages,
					 uint64_t *dirty_pages)
{
	unsigned o, k;
	uint32_t p;

	for (o = 0; o <= ZS_MAX_ORDER; o++)
		for (p = arena->free_area[o]; p != NIL;
		     p = arena->pages[p].next) {
			if (arena->pages[p].kind != ZS_PG_FREE ||
			    arena->pages[p].order != o || p & ((1u << o) - 1) ||
			    p >= arena->frontier)
				return "arena: free block";
			*free_pages += 1u << o;
		}
	for (k = 1; k <= ZS_MAX_SPAN_PAGES; k++)
		for (p = arena->dirty[k]; p != NIL; p = arena->pages[p].next) {
			if (arena->pages[p].kind != ZS_PG_DIRTY ||
			    arena->pages[p].npages != k)
				return "arena: dirty span";
			*dirty_pages += k;
		}
	if (*dirty_pages != arena->dirty_pages)
		return "arena: dirty page count";
	return NULL;
}

int arena_init(struct zs_arena *arena, uint64_t max_pages,
	       struct zs_charge *charge)
{
	size_t len;
	unsigned i;

	arena->charge = charge;
	arena->nr_pages = (uint32_t)((2 * max_pages + ZS_MAX_SPAN_PAGES - 1) &
				     ~(uint64_t)(ZS_MAX_SPAN_PAGES - 1));
	len = (size_t)arena->nr_pages * PAGE_SIZE;
	arena->base = prim_map_own(len, MAP_PRIVATE | MAP_ANONYMOUS |
					MAP_NORESERVE, -1);
	if (arena->base == MAP_FAILED)
		return -ENOMEM;
	/* Page-granular accounting: no transparent huge pages. */
	(void)prim_madvise(arena->base, len, MADV_NOHUGEPAGE);
	arena->pages = prim_alloc(arena->nr_pages * sizeof(struct zs_page));
	if (!arena->pages)
		goto err_unmap_arena;
	pthread_mutex_init(&arena->lock, NULL);
	for (i = 0; i <= ZS_MAX_ORDER; i++)
		arena->free_area[i] = NIL;
	for (i = 0; i <= ZS_MAX_SPAN_PAGES; i++)
		arena->dirty[i] = NIL;
	arena->dirty_max = (uint32_t)MIN(ZS_DIRTY_MAX, max_pages / 32);
	return 0;

err_unmap_arena:
	prim_munmap(arena->base, len);
	return -ENOMEM;
}

void arena_destroy(struct zs_arena *arena)
{
	pthread_mutex_destroy(&arena->lock);
	prim_free(arena->pages, arena->nr_pages * sizeof(struct zs_page));
	prim_munmap(arena->base, (size_t)arena->nr_pages * PAGE_SIZE);
}

const char *arena_validate(struct zs_arena *arena, uint64_t span_pages,
			   uint64_t other_pages)
{
	uint64_t free_pages = 0, dirty_pages = 0;
	const char *err;

	pthread_mutex_lock(&arena->lock);
	err = arena_validate_locked(arena, &free_pages, &dirty_pages);
	if (!err && span_pages + dirty_pages + free_pages != arena->frontier)
		err = "arena: pages lost";
	if (!err && span_pages + dirty_pages + arena->meta_pages +
			    other_pages != atomic_load(&arena->charge->pages))
		err = "pool: pages charged";
	pthread_mutex_unlock(&arena->lock);
	return err;
}
