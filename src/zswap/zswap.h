/* SPDX-License-Identifier: MIT */
/*
 * zswap.h - the compressed pool in front of a swap device (zswap.c;
 * writeback in zswap_writeback.c).
 *
 * The pool is keyed by swap slot, as the kernel's zswap: reclaim gives a
 * victim its slots first, then offers its pages to the pool; what the pool
 * takes never reaches the device unless it is written back later, and what
 * it refuses goes to the device as before.  A region's swap entries never
 * say which tier holds a page: the slot is the page's name everywhere.
 */
#ifndef USWAP_ZSWAP_H
#define USWAP_ZSWAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compress.h"
#include "swap.h"

struct zswap;
struct zswap_ctx;

/*
 * Room for the pool's counters (zswap_pool.h's enum zswap_counter), for
 * an owner that keeps them where they outlive the process
 * (zswap_params.counters).
 */
#define ZSWAP_NR_COUNTERS	24

struct zswap_params {
	enum comp_alg alg;
	int level;
	bool unit;		/* a large folio is one compressed object */
	uint64_t max_bytes;	/* pool limit */
	unsigned accept_pct;	/* after hitting the limit, accept again
				   below this percentage of it */
	unsigned threads;	/* compression threads besides the caller */
	size_t max_unit;	/* largest folio stored: the folio size */
	bool store_incompressible; /* keep what does not compress, as it is,
				      also when there are devices */
	/* Pool memory grew (> 0) or shrank (< 0) by pages: charge it. */
	void (*account)(void *arg, long delta_pages);
	void *account_arg;
	/* Give nr slots from e back to their device; NULL: swap_slot_free. */
	void (*free_slots)(void *arg, swp_entry_t e, uint32_t nr);
	void *free_arg;
	/* Where the pool counts (ZSWAP_NR_COUNTERS, zeroed); NULL: its own. */
	_Atomic uint64_t *counters;
};

/*
 * Counters: *_pages and pool_bytes are gauges, the rest cumulative.
 * Indices of mthp_zswpout: 0 = 16 KiB, 1 = 64 KiB, 2 = 2 MiB folios.
 */
struct zswap_stats {
	uint64_t zswpout, zswpin, zswpwb;
	uint64_t stored_pages, same_filled_pages, stored_incompressible_pages;
	uint64_t pool_bytes, compressed_bytes;
	uint64_t reject_compress_poor, reject_pool_limit, reject_alloc_fail;
	uint64_t reject_compress_fail, decompress_fail, written_back_fail;
	uint64_t written_back_shared;
	uint64_t pool_limit_hit;
	uint64_t mthp_zswpout[3];
};

/*
 * Create a pool in front of the swap devices devs[0..nr) (indexed by swap
 * type; the pool keys its entries by swap entry and writes back to them).
 * A device with fd < 0 has no file: with such a device nothing is written
 * back, and pages that do not compress are stored as they are.  Starts
 * the compression and writeback threads.  0 or -errno.
 */
int zswap_create(struct zswap **zsp, const struct zswap_params *p,
		 struct swap_info *const *devs, unsigned nr_devs);
void zswap_destroy(struct zswap *zs);

/* A compressor context and buffers for one thread (created up front). */
struct zswap_ctx *zswap_ctx_create(struct zswap *zs);
void zswap_ctx_destroy(struct zswap *zs, struct zswap_ctx *c);

/* One folio offered to the pool: nr pages at src, entries slot..slot+nr-1. */
struct zswap_job {
	const void *src;
	swp_entry_t slot;
	uint32_t nr;
	uint32_t stored;	/* out: pages the pool took */
};

/*
 * Offer n folios to the pool, compressing them in parallel on the pool's
 * threads and the caller's.  Each job's `stored` tells how many pages the
 * pool took; the others must go to the device (zswap_present() is false
 * for them).
 */
void zswap_store_batch(struct zswap *zs, struct zswap_ctx *c,
		       struct zswap_job *jobs, unsigned n);

/* Does the pool hold the page of this slot? */
bool zswap_present(struct zswap *zs, swp_entry_t slot);
/* How many of the nr pages from slot on the pool does not hold, in a row. */
uint32_t zswap_absent_run(struct zswap *zs, swp_entry_t slot, uint32_t nr);

/*
 * Copy pages from the pool, starting at slot, for at most nr pages: returns
 * the number of consecutive pages starting at slot that the pool held and
 * wrote to dst (0: the pool does not hold slot), or -EBADMSG when the
 * stored object is corrupt (nothing usable is written).
 */
int zswap_load(struct zswap *zs, struct zswap_ctx *c, swp_entry_t slot,
	       unsigned nr, void *dst);

/*
 * The owner drops nr slots from `slot`: their pool copies go, and the slots
 * are freed (swap_slot_free) -- except those that a writeback is writing
 * at that moment, which it frees when done.  Replaces swap_slot_free for
 * every slot of a device with a pool in front.
 */
void zswap_slot_free(struct zswap *zs, swp_entry_t slot, uint32_t nr);

/*
 * Write the coldest entries back to the device until the pool holds at
 * most target bytes or nothing more can go.  Returns pages written.  The
 * pool's own thread does this when the pool reaches its limit; tests call
 * it directly.
 */
uint64_t zswap_writeback(struct zswap *zs, struct zswap_ctx *c,
			 uint64_t target_bytes);
/*
 * Write back until the pool holds `pages` fewer pages (under the lock the
 * writeback thread works under): the reclaimer, when all it holds is in
 * the pool.  Returns pages written.
 */
uint64_t zswap_shrink(struct zswap *zs, struct zswap_ctx *c, uint64_t pages);

void zswap_get_stats(struct zswap *zs, struct zswap_stats *st);
/*
 * The counters kept in a block of ZSWAP_NR_COUNTERS (zswap_params.counters)
 * of a pool that may be gone: pool_bytes is 0.
 */
void zswap_counters_stats(const _Atomic uint64_t *ctr, struct zswap_stats *st);
/* Before fork: the child's block starts with the pool's gauges, no events. */
void zswap_counters_fork(struct zswap *zs, _Atomic uint64_t *child);
/* Count in ctr from now on (NULL: the pool's own block). */
void zswap_counters_set(struct zswap *zs, _Atomic uint64_t *ctr);

/*
 * fork: pause the writeback thread (the only pool user that runs while
 * the runtime is settled), and let it go on in the parent and the child.
 */
void zswap_fork_prepare(struct zswap *zs);
void zswap_fork_done(struct zswap *zs);
/* In the child after fork: new locks and threads for its copy. */
int zswap_fork_child(struct zswap *zs);

#endif /* USWAP_ZSWAP_H */
