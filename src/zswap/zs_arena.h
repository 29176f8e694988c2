/* SPDX-License-Identifier: MIT */
/*
 * zs_arena.h - the page allocator under the compressed pool (zs_arena.c),
 * for zsmalloc.c and zs_class.c only.
 *
 * The arena hands out spans of 1..ZS_MAX_SPAN_PAGES consecutive pages of
 * one reserved range and takes empty ones back.  pages[] holds the
 * metadata of every arena page: the arena owns an entry's kind, order and
 * npages (under arena->lock); zs_class.c owns the rest of a span's entry
 * (under its class's lock).  Both link entries on lists through next/prev.
 */
#ifndef USWAP_ZS_ARENA_H
#define USWAP_ZS_ARENA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define ZS_MAX_ORDER		4u
#define ZS_MAX_SPAN_PAGES	(1u << ZS_MAX_ORDER)

#define NIL			UINT32_MAX	/* no page: end of a list */

enum zs_page_kind {
	ZS_PG_NONE,		/* inside a block, or beyond the frontier */
	ZS_PG_FREE,		/* first page of a free buddy block */
	ZS_PG_SPAN,		/* first page of a span owned by a class */
	ZS_PG_DIRTY,		/* first page of an empty span, still mapped */
	ZS_PG_PURGING,		/* first page of a span being zapped */
};

/*
 * Metadata of one arena page; only a block's first page uses its entry.
 * next/prev link it on a buddy list, a dirty list (arena->lock) or a
 * fullness list of its class (class->lock).
 */
struct zs_page {
	uint32_t next, prev;
	uint32_t handle;	/* huge span: the handle of its object */
	uint16_t inuse;		/* objects in the span */
	uint16_t nr_init;	/* slots ever handed out */
	uint16_t free_slot;	/* first free slot below nr_init */
	uint16_t class_idx;
	uint8_t kind;		/* enum zs_page_kind, arena->lock */
	uint8_t order;		/* free block: its order, arena->lock */
	uint8_t npages;		/* span: its length, arena->lock */
	uint8_t band;		/* span: the list it is on, class->lock */
};

/*
 * The memory of a pool, in pages: the arena charges its spans and pages[],
 * zsmalloc.c the handle table.  Lock-free (one atomic counter).
 */
struct zs_charge {
	_Atomic uint64_t pages;		/* memory charged */
	uint64_t max_pages;
	void (*account)(void *arg, long delta_pages);
	void *account_arg;
};

struct zs_arena {
	char *base;			/* nr_pages pages, MAP_NORESERVE */
	uint32_t nr_pages;
	struct zs_page *pages;		/* nr_pages entries */
	struct zs_charge *charge;	/* the pool's */

	/* Under lock, a leaf lock: */
	pthread_mutex_t lock;
	uint32_t free_area[ZS_MAX_ORDER + 1];
	uint32_t frontier;		/* pages ever given to the buddy */
	uint64_t meta_pages;		/* pages of pages[] charged */
	uint32_t dirty[ZS_MAX_SPAN_PAGES + 1];	/* by span length */
	uint32_t dirty_pages, dirty_max;
};

/* Charge n pages of pool memory; false if that would pass max_pages. */
static inline bool pool_charge(struct zs_charge *ch, uint64_t n)
{
	uint64_t cur = atomic_load(&ch->pages);

	do {
		if (cur + n > ch->max_pages)
			return false;
	} while (!atomic_compare_exchange_weak(&ch->pages, &cur, cur + n));
	if (ch->account)
		ch->account(ch->account_arg, (long)n);
	return true;
}

static inline void pool_uncharge(struct zs_charge *ch, uint64_t n)
{
	if (!n)
		return;
	atomic_fetch_sub(&ch->pages, n);
	if (ch->account)
		ch->account(ch->account_arg, -(long)n);
}

/* Lists of pages (buddy, dirty, fullness), linked through pages[]. */
static inline void page_list_add(struct zs_page *pages, uint32_t *head,
				 uint32_t p)
{
	struct zs_page *pg = &pages[p];

	pg->prev = NIL;
	pg->next = *head;
	if (*head != NIL)
		pages[*head].prev = p;
	*head = p;
}

static inline void page_list_del(struct zs_page *pages, uint32_t *head,
				 uint32_t p)
{
	struct zs_page *pg = &pages[p];

	if (pg->prev != NIL)
		pages[pg->prev].next = pg->next;
	else
		*head = pg->next;
	if (pg->next != NIL)
		pages[pg->next].prev = pg->prev;
}

/*
 * Reserve the address space of a pool of max_pages pages (twice that)
 * and its pages[]; nothing is charged yet.  0 or -ENOMEM.
 */
int arena_init(struct zs_arena *arena, uint64_t max_pages,
	       struct zs_charge *charge);
/* Unmap it all; the caller uncharges the pool's memory. */
void arena_destroy(struct zs_arena *arena);
/*
 * A span of npages pages, charged, its entry ZS_PG_SPAN with npages set.
 * Returns its first page, NIL when the pool is full.
 */
uint32_t span_get(struct zs_arena *arena, unsigned npages);
/* Take back an empty span.  Returns the pages released (uncharged). */
uint64_t span_put(struct zs_arena *arena, uint32_t p);
/* Zap the cache of empty spans.  Returns the pages released. */
uint64_t arena_purge(struct zs_arena *arena);
/*
 * Check the buddy lists and the dirty cache, that the pages in spans
 * (span_pages), cached and free make up the frontier, and that the arena's
 * pages plus other_pages are what is charged.  The pool must be quiescent.
 * NULL when consistent, else a static message.
 */
const char *arena_validate(struct zs_arena *arena, uint64_t span_pages,
			   uint64_t other_pages);

#endif /* USWAP_ZS_ARENA_H */
