/* SPDX-License-Identifier: MIT */
/*
 * region.h - managed regions and their folios (region.c): folio states
 * and flags, struct region and its LRU lists (lru_add() and lru_del() are
 * vmscan.c's).  The runtime's table of regions is in runtime.h.
 */
#ifndef USWAP_REGION_H
#define USWAP_REGION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "ilist.h"
#include "swap.h"

struct uswap_runtime;

/*
 * Folio states (region.c has the state diagram).  The state lives in the
 * low bits of folio->flags with the flag bits above it; every change of
 * state is a compare-and-swap by the thread that owns the transition.
 */
enum folio_state {
	FOLIO_NONE,		/* never touched (or discarded): reads as zeros */
	FOLIO_RESIDENT,		/* mapped in the region */
	FOLIO_EVICTING,		/* write-protected, being written to a slot */
	FOLIO_ZAPPING,		/* stored; being removed from the address space */
	FOLIO_SWAPPED,		/* only in its slots (swp[] of its pages) */
	FOLIO_LOADING,		/* being read back by a fault handler */
};

#define FOLIO_STATE_MASK	0x7u
#define F_LRU		(1u << 3)	/* on one of the region's LRU lists */
#define F_ACTIVE	(1u << 4)	/* ... the active one */
#define F_REFERENCED	(1u << 5)	/* written since armed */
#define F_ARMED		(1u << 6)	/* write-protected to observe writes */
#define F_CLEAN		(1u << 7)	/* swp[] holds an exact copy; WP'd */
#define F_WORKINGSET	(1u << 8)	/* was active when evicted */
#define F_WAITERS	(1u << 9)	/* a fault waits for ZAPPING to end */
#define F_DEMOTED	(1u << 10)	/* on a slower node, charged to its tier
					   (demote.c); node in FOLIO_NODE bits */
#define F_PROMOTE	(1u << 11)	/* demoted, written in the last scan
					   too: promoted if written again */
#define F_STORING	(1u << 12)	/* a victim the reclaimer still reads
					   in place (pageout.c): in flight,
					   even if a write made it RESIDENT */
#define F_SHARED	(1u << 13)	/* resident at a fork: its pages may be
					   mapped by other processes of the
					   tree too, charged once to the tree's
					   `shared` (fork_share.c); WP'd */
#define F_MOVED		(1u << 14)	/* EVICTING, its pages in (or on their
					   way into or out of) the reclaimer's
					   staging area: a fault on it waits
					   (F_WAITERS), a write does not abort */
#define F_UNEVICTABLE	(1u << 15)	/* resident and locked or pinned
					   (mlock.c): off the LRU, charged */
#define F_BUSY		(1u << 22)	/* refused eviction: a page pinned
					   (vmscan.c); tried again less */
#define FOLIO_NODE_SHIFT	16
#define FOLIO_NODE_MASK		(0x3fu << FOLIO_NODE_SHIFT)	/* 64 nodes */

/*
 * Per-folio metadata: 12 bytes.  lru links the folio on its region's
 * LRU list while resident (ilist.h); while swapped, lru.prev holds the
 * shadow entry (the eviction clock at eviction, workingset.c).
 */
struct folio {
	struct ilist_link lru;
	_Atomic uint32_t flags;
};

#define SHADOW(f)	((f)->lru.prev)

static inline unsigned folio_state(uint32_t flags)
{
	return flags & FOLIO_STATE_MASK;
}

/* The node a demoted folio was moved to (F_DEMOTED set). */
static inline int folio_node(uint32_t flags)
{
	return (int)((flags & FOLIO_NODE_MASK) >> FOLIO_NODE_SHIFT);
}

/*
 * A region's LRU lists: inactive and active folios on the fast tier, and
 * the folios demoted to slower nodes (one list for all of them, in the
 * order they were demoted: demote.c).  lru_add() and lru_del() pick the
 * list from the folio's flags (F_DEMOTED, F_ACTIVE).
 */
enum lru_list_id { LRU_INACTIVE, LRU_ACTIVE, LRU_DEMOTED, NR_LRU_LISTS };

struct lru_list {
	struct ilist list;	/* of folio indices; first is the newest */
	uint64_t nr_pages;
};

/*
 * A managed region: one page-aligned range registered with userfaultfd.
 * Folio i covers [origin + i*fsize, origin + (i+1)*fsize) clipped to
 * [start, end): folio boundaries move with the data when a region moves.
 *
 * The region table and start/end/origin/arrays change only under the
 * runtime's op_lock held for writing.  lru_lock protects the LRU lists and
 * the links of folios on them; it nests inside op_lock.
 */
struct region {
	uintptr_t start, end, origin;
	unsigned folio_shift;
	uint32_t nr_pages, nr_folios;
	swp_entry_t *swp;		/* per page: slot holding its contents */
	struct folio *folios;
	size_t swp_map_len, folio_map_len;
	pthread_mutex_t lru_lock;
	struct lru_list lru[NR_LRU_LISTS];
	uint32_t scan_cursor;		/* reclaim: where the last batch stopped */
	/* Swap-in readahead (memory.c): the folio a sequential reader faults
	   on next, the window in folios, the pages read ahead last time. */
	_Atomic uint32_t ra_next, ra_win, ra_last;
	_Atomic uint32_t za_next, za_win;	/* fault-around (memory.c) */
	_Atomic uint32_t wa_next, wa_win;	/* write-around (memory.c) */
	_Atomic int refs;		/* table reference + one per user */
	uintptr_t busy_start, busy_end;	/* range being changed: reclaim skips it */
	unsigned vm_flags;		/* R_*: advice the kernel keeps in the
					   VMA's flags */
	struct uswap_runtime *rt;
};

/* r's folios as the element array of its LRU lists (ilist.h). */
static inline struct ilist_array lru_folios(struct region *r)
{
	return ILIST_ARRAY(r->folios, r->nr_folios, lru);
}

/*
 * Region flags: the advice (mmap.c) the kernel keeps in the VMA's flags,
 * kept in the region's, a region being split where they change for part
 * of it, as the kernel splits the VMA.  Fork acts on two of them.
 */
#define R_WIPEONFORK	(1u << 0)	/* a fork child gets zeros here */
#define R_DONTFORK	(1u << 1)	/* a fork child has no mapping here */
#define R_DONTDUMP	(1u << 2)
#define R_SEQ_READ	(1u << 3)
#define R_RAND_READ	(1u << 4)
#define R_MERGEABLE	(1u << 5)

/* region.c */
int region_table_init(struct uswap_runtime *rt);
void region_table_destroy(struct uswap_runtime *rt);
struct region *region_find_locked(struct uswap_runtime *rt, uintptr_t addr);
void region_get(struct region *r);
void region_put(struct region *r);
int region_add(struct uswap_runtime *rt, uintptr_t start, size_t len);

static inline size_t folio_size(const struct region *r)
{
	return (size_t)1 << r->folio_shift;
}
static inline uint32_t folio_index(const struct region *r, uintptr_t addr)
{
	return (uint32_t)((addr - r->origin) >> r->folio_shift);
}
/* The clipped address range of folio i and the index of its first page. */
static inline void folio_range(const struct region *r, uint32_t i,
			       uintptr_t *addr, size_t *len, uint32_t *page)
{
	uintptr_t s = r->origin + ((uintptr_t)i << r->folio_shift);
	uintptr_t e = s + folio_size(r);

	if (s < r->start)
		s = r->start;
	if (e > r->end)
		e = r->end;
	*addr = s;
	*len = e - s;
	*page = (uint32_t)((s - r->start) >> PAGE_SHIFT);
}
/* Folios in the range [start,end) that is inside r: first and last+1. */
void region_folios_in(const struct region *r, uintptr_t start, uintptr_t end,
		      uint32_t *first, uint32_t *last);

/* Free the swap entries of pages [page, page+nr) of r and clear them. */
void region_free_entries(struct region *r, uint32_t page, uint32_t nr);

/* lru (vmscan.c) */
void lru_add(struct region *r, uint32_t i, bool active);
void lru_del(struct region *r, uint32_t i);

/* region.c, for mmap.c */
uint64_t region_drop_range(struct region *r, uintptr_t start, uintptr_t end,
			   bool unmap);
/* The first region ending after addr, or NULL.  Caller holds op_lock. */
struct region *region_next_locked(struct uswap_runtime *rt, uintptr_t addr);
/* Make [start, end), inside one region, a region of its own; *rp gets it. */
int region_isolate(struct uswap_runtime *rt, uintptr_t start, uintptr_t end,
		   struct region **rp);
int region_cut(struct uswap_runtime *rt, struct region *r, uintptr_t start,
	       uintptr_t end);
int region_move(struct uswap_runtime *rt, struct region *r, uintptr_t new_start,
		size_t new_len);

#endif /* USWAP_REGION_H */
