/* SPDX-License-Identifier: MIT */
/*
 * zswap_pool.h - the insides of the compressed pool, for zswap.c (entries,
 * store, load, frees, the pool's life) and zswap_writeback.c (writeback of
 * the coldest entries to the device, the writeback thread) only; the rest
 * of uswap sees the pool through zswap.h.
 *
 * The slot map names each slot's entry; an entry is one stored unit (a
 * page, or a whole large folio) with its object in the zsmalloc pool.
 * Entries sit on an LRU, newest at the head, from whose tail writeback
 * takes them.
 */
#ifndef USWAP_ZSWAP_POOL_H
#define USWAP_ZSWAP_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ilist.h"
#include "swap.h"
#include "zswap.h"

struct zs_pool;

#define ZE_SAME		0x1	/* value is the word filling the unit */
#define ZE_RAW		0x2	/* the object is the pages as they are */
#define ZE_WRITEBACK	0x4	/* being written back: frees wait for it */
#define ZE_BAD		0x8	/* failed its checksum: never written back */
#define ZE_OFF_LRU	(ZE_WRITEBACK | ZE_BAD)

#define SLOT_FREED	(1u << 31)	/* owner freed it during writeback */
#define ENT_NIL		0u
#define MAX_THREADS	16u

struct zswap_entry {
	uint64_t value;		/* ZE_SAME: the word; else the pool handle */
	uint32_t clen;		/* bytes of the pool object */
	uint32_t crc;		/* crc32c of those bytes */
	struct ilist_link lru;	/* LRU, newest first; free list: lru.next */
	uint32_t slot;		/* the unit's first slot */
	uint16_t nr;		/* pages in the unit */
	uint16_t live;		/* slots still mapped to the entry */
	uint8_t flags;
};

enum zswap_counter {
	ZC_ZSWPOUT, ZC_ZSWPIN, ZC_ZSWPWB, ZC_STORED, ZC_SAME, ZC_INCOMP, ZC_CBYTES,
	ZC_POOR, ZC_LIMIT, ZC_ALLOC, ZC_CFAIL, ZC_DFAIL, ZC_WBFAIL,
	ZC_LIMIT_HIT, ZC_MTHP16, ZC_MTHP64, ZC_MTHP2M, ZC_WBSHARED, ZC_NR
};

_Static_assert(ZC_NR <= ZSWAP_NR_COUNTERS, "ZSWAP_NR_COUNTERS is too small");

struct zswap_wb_batch;

struct zswap_ctx {
	struct comp_ctx *comp;
	uint8_t *cbuf;		/* a unit's object, max_unit bytes */
	uint8_t *dbuf;		/* a unit's pages, max_unit bytes */
	/* Writeback only: its batch (made on first use) and I/O context. */
	struct zswap_wb_batch *wb;
	struct swap_io *io;	/* NULL: pwritev */
};

/*
 * Locking: zs->lock protects the slot map, the entries and the LRU, and is
 * never held across compression or I/O; the pool allocator's locks nest
 * inside it; the swap device's lock is taken only without it.  Loads copy
 * the object out under zs->lock and decompress after dropping it;
 * writeback copies it out without the lock, since an entry marked
 * ZE_WRITEBACK keeps its object until writeback gives it back.
 */
struct zswap {
	struct zswap_params p;
	struct swap_info *si[SWAP_MAX_TYPES];	/* by swap type */
	unsigned nr_si;
	struct zs_pool *pool;
	bool can_writeback;		/* the devices have files */
	bool logged_cfail;		/* a compressor failure was logged */

	pthread_mutex_t lock;
	uint32_t *slot_ent[SWAP_MAX_TYPES];	/* per slot: entry index, 0 for none */
	size_t slot_ent_len[SWAP_MAX_TYPES];
	struct zswap_entry *ent;	/* index 0 unused */
	size_t ent_len;
	uint32_t free_head, next_unused;
	struct ilist lru;		/* entries on the LRU (ilist.h) */

	uint64_t max_pages, accept_pages;
	_Atomic int64_t pool_pages;
	_Atomic bool full;
	_Atomic uint64_t *ctr;		/* ZC_NR counters: p.counters or ctr_own */
	_Atomic uint64_t ctr_own[ZC_NR];

	/*
	 * Compression threads: a batch is shared out by job index, claimed
	 * in `claim` (the batch's gen << 32 | the next index).
	 */
	pthread_mutex_t work_lock;
	pthread_cond_t work_cv, done_cv;
	struct zswap_job *jobs;
	unsigned nr_jobs;
	_Atomic uint64_t claim;
	unsigned jobs_done, busy;
	uint64_t batch_gen;
	bool stopping;
	struct zswap_worker {
		struct zswap *zs;
		struct zswap_ctx *ctx;
		pthread_t tid;
	} workers[MAX_THREADS];
	unsigned nr_threads;

	/* Writeback thread; wb_mutex is held while it works (fork waits). */
	pthread_mutex_t wb_mutex;
	pthread_t wb_thread;
	bool wb_started, wb_kick;
	pthread_cond_t wb_cv;
	struct zswap_ctx *wb_ctx;
};

/* The slot map word of a swap entry. */
static inline uint32_t *zswap_slot_ref(struct zswap *zs, swp_entry_t e)
{
	return &zs->slot_ent[swp_type(e)][swp_offset(e)];
}

static inline void zswap_ctr_add(struct zswap *zs, enum zswap_counter c,
				 int64_t n)
{
	atomic_fetch_add_explicit(&zs->ctr[c], (uint64_t)n,
				  memory_order_relaxed);
}

/* --- zswap.c --- */

/* Give slots back to their device (through the owner's hook). */
void zswap_free_dev_slots(struct zswap *zs, swp_entry_t e, uint32_t nr);
/* Entries and the LRU: the caller holds zs->lock. */
void zswap_lru_unlink(struct zswap *zs, uint32_t id);
void zswap_lru_push(struct zswap *zs, uint32_t id);
/* Unmap one page of entry id from its slot. */
void zswap_entry_drop_page(struct zswap *zs, uint32_t id, uint32_t slot);
/* Rebuild a unit's pages from a copy of its entry: 0 or -EBADMSG. */
int zswap_unpack(struct zswap *zs, struct zswap_ctx *c,
		 const struct zswap_entry *e, void *dst);

/* --- zswap_writeback.c --- */

/* The pool reached its limit: wake the writeback thread. */
void zswap_writeback_kick(struct zswap *zs);
/* Free a writeback context's batch (zswap_ctx_destroy). */
void zswap_wb_batch_free(struct zswap_ctx *c);
/* The writeback thread's body; arg is the pool. */
void *zswap_writeback_thread(void *arg);

#endif /* USWAP_ZSWAP_POOL_H */
