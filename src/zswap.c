// SPDX-License-Identifier: MIT
/*
 * zswap.c - the compressed pool in front of the swap device (the kernel's
 * zswap).
 *
 * Reclaim gives each victim folio its slots on the device first, then
 * offers its pages here.  The pool keys what it stores by slot, so a
 * region's swap entry names a page wherever it is: in the pool, or on the
 * device.  An entry is one stored unit:
 *
 *   - a same-filled unit (every 8-byte word equal) is stored as that word,
 *     with no pool memory;
 *   - otherwise the unit is compressed; if the result is larger than 7/8
 *     of the input the unit is refused and goes to the device, or, when
 *     there is no device, is stored as it is (the zram case);
 *   - the object goes into the zsmalloc pool, with the crc32c of its bytes:
 *     a load that finds another checksum fails instead of returning data.
 *
 * A unit is one page, or with `unit` set a whole large folio: one
 * compressed object for 16 pages or 512, one decompression to bring the
 * folio back, a better ratio.  Pages of a unit can be freed one by one
 * (munmap of half a folio); the unit goes when its last page does.
 *
 * Limit and writeback.  The pool may hold max_bytes.  When a store finds
 * it there, the pool turns "full" and refuses compressible pages until it
 * is back under accept_pct of the limit (the kernel's
 * accept_threshold_percent: without the gap, a pool at its limit would
 * flip between accepting and refusing on every page).  Meanwhile the
 * writeback thread moves the oldest entries to their slots on the device,
 * so a full pool degrades to device speed instead of stalling reclaim.
 *
 * Slots and writeback.  A slot is freed by its owner (the region) through
 * zswap_slot_free().  If a writeback is writing that slot's entry at that
 * moment, the slot stays allocated until the writeback is done: otherwise
 * the slot could be handed to another folio and written by the device
 * path, and then overwritten with the stale data.
 *
 * Locking: zs->lock protects the slot map, the entries and the LRU, and is
 * never held across compression or I/O; the pool allocator's locks nest
 * inside it; the swap device's lock is taken only without it.  Loads copy
 * the object out under zs->lock and decompress after dropping it.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "internal.h"
#include "zsmalloc.h"
#include "zswap.h"

#define ZE_SAME		0x1	/* value is the word filling the unit */
#define ZE_RAW		0x2	/* the object is the pages as they are */
#define ZE_WRITEBACK	0x4	/* being written back: frees wait for it */
#define ZE_BAD		0x8	/* failed its checksum: never written back */
#define ZE_OFF_LRU	(ZE_WRITEBACK | ZE_BAD)

#define SLOT_FREED	(1u << 31)	/* owner freed it during writeback */
#define ENT_NIL		0u
#define MAX_THREADS	16u
#define WB_SHARED_SKIP	64u	/* shared entries passed over in a row */

struct zswap_entry {
	uint64_t value;		/* ZE_SAME: the word; else the pool handle */
	uint32_t clen;		/* bytes of the pool object */
	uint32_t crc;		/* crc32c of those bytes */
	uint32_t next, prev;	/* LRU, newest at the head; free list: next */
	uint32_t slot;		/* the unit's first slot */
	uint16_t nr;		/* pages in the unit */
	uint16_t live;		/* slots still mapped to the entry */
	uint8_t flags;
};

enum zswap_counter {
	ZC_ZSWPOUT, ZC_ZSWPIN, ZC_ZSWPWB, ZC_STORED, ZC_SAME, ZC_CBYTES,
	ZC_POOR, ZC_LIMIT, ZC_ALLOC, ZC_CFAIL, ZC_DFAIL, ZC_WBFAIL,
	ZC_LIMIT_HIT, ZC_MTHP16, ZC_MTHP64, ZC_MTHP2M, ZC_WBSHARED, ZC_NR
};

struct zswap_ctx {
	struct comp_ctx *comp;
	uint8_t *cbuf;		/* a unit's object, max_unit bytes */
	uint8_t *dbuf;		/* a unit's pages, max_unit bytes */
	uint64_t live[MAX_FOLIO_PAGES / 64];	/* writeback: pages to write */
};

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
	uint32_t lru_head, lru_tail;

	uint64_t max_pages, accept_pages;
	_Atomic int64_t pool_pages;
	_Atomic bool full;
	_Atomic uint64_t ctr[ZC_NR];

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
static inline uint32_t *slot_ref(struct zswap *zs, swp_entry_t e)
{
	return &zs->slot_ent[swp_type(e)][swp_offset(e)];
}

/* Give slots back to their device (through the owner's hook). */
static void free_slots(struct zswap *zs, swp_entry_t e, uint32_t nr)
{
	if (zs->p.free_slots)
		zs->p.free_slots(zs->p.free_arg, e, nr);
	else
		swap_slot_free(zs->si[swp_type(e)], swp_offset(e), nr);
}

static inline void zc_add(struct zswap *zs, enum zswap_counter c, int64_t n)
{
	atomic_fetch_add_explicit(&zs->ctr[c], (uint64_t)n,
				  memory_order_relaxed);
}

/* Pool memory changed: keep our count and charge the budget. */
static void pool_account(void *arg, long delta)
{
	struct zswap *zs = arg;

	atomic_fetch_add(&zs->pool_pages, delta);
	if (zs->p.account)
		zs->p.account(zs->p.account_arg, delta);
}

/* --- entries, under zs->lock --- */

static uint32_t entry_alloc(struct zswap *zs)
{
	uint32_t id = zs->free_head;

	if (id != ENT_NIL) {
		zs->free_head = zs->ent[id].next;
		return id;
	}
	return zs->next_unused++;	/* sized for one entry per slot */
}

static void lru_unlink(struct zswap *zs, uint32_t id)
{
	struct zswap_entry *e = &zs->ent[id];

	if (e->prev != ENT_NIL)
		zs->ent[e->prev].next = e->next;
	else
		zs->lru_head = e->next;
	if (e->next != ENT_NIL)
		zs->ent[e->next].prev = e->prev;
	else
		zs->lru_tail = e->prev;
	e->next = e->prev = ENT_NIL;
}

static void lru_push(struct zswap *zs, uint32_t id)
{
	struct zswap_entry *e = &zs->ent[id];

	e->prev = ENT_NIL;
	e->next = zs->lru_head;
	if (zs->lru_head != ENT_NIL)
		zs->ent[zs->lru_head].prev = id;
	else
		zs->lru_tail = id;
	zs->lru_head = id;
}

/* The entry's last page went: free its object and the entry. */
static void entry_release(struct zswap *zs, uint32_t id)
{
	struct zswap_entry *e = &zs->ent[id];

	if (!(e->flags & ZE_OFF_LRU))
		lru_unlink(zs, id);
	if (e->flags & ZE_SAME) {
		zc_add(zs, ZC_SAME, -(int64_t)e->nr);
	} else {
		zs_free(zs->pool, (uint32_t)e->value);
		zc_add(zs, ZC_CBYTES, -(int64_t)e->clen);
	}
	memset(e, 0, sizeof(*e));
	e->next = zs->free_head;
	zs->free_head = id;
}

/* Unmap one page of entry id from its slot. */
static void entry_drop_page(struct zswap *zs, uint32_t id, uint32_t slot)
{
	struct zswap_entry *e = &zs->ent[id];

	*slot_ref(zs, slot) = 0;
	zc_add(zs, ZC_STORED, -1);
	if (--e->live == 0)
		entry_release(zs, id);
}

/* --- limit --- */

static void wb_kick(struct zswap *zs)
{
	if (!zs->wb_started)
		return;
	pthread_mutex_lock(&zs->work_lock);
	zs->wb_kick = true;
	pthread_cond_signal(&zs->wb_cv);
	pthread_mutex_unlock(&zs->work_lock);
}

/* May the pool take a compressed object now?  (zswap_check_limits) */
static bool pool_accepting(struct zswap *zs)
{
	int64_t pages = atomic_load(&zs->pool_pages);

	if (atomic_load(&zs->full)) {
		if (pages > (int64_t)zs->accept_pages)
			return false;
		atomic_store(&zs->full, false);
	}
	if (pages >= (int64_t)zs->max_pages) {
		if (!atomic_exchange(&zs->full, true))
			zc_add(zs, ZC_LIMIT_HIT, 1);
		wb_kick(zs);
		return false;
	}
	return true;
}

/* --- store --- */

/*
 * Store nr pages at src as one entry for slots slot..slot+nr-1.  Returns
 * false when the pool refuses them (counted by reason).
 */
static bool store_unit(struct zswap *zs, struct zswap_ctx *c, const void *src,
		       uint32_t slot, uint32_t nr)
{
	size_t len = (size_t)nr << PAGE_SHIFT;
	const void *data = c->cbuf;
	uint32_t handle = 0, clen = 0, crc = 0, id, k;
	uint8_t flags = 0;
	uint64_t word;

	program_memory_read_begin();
	if (mem_same_filled(src, len, &word)) {
		flags = ZE_SAME;
	} else {
		ssize_t n;

		if (!pool_accepting(zs)) {
			program_memory_read_end();
			zc_add(zs, ZC_LIMIT, nr);
			return false;
		}
		n = prim_inject(INJECT_COMPRESS_FAIL, -1) ? -EIO :	/* tests */
		    comp_compress(c->comp, src, len, c->cbuf, len - len / 8);
		if (n == -ENOSPC) {
			zc_add(zs, ZC_POOR, nr);
			if (zs->can_writeback) {
				program_memory_read_end();
				return false;
			}
			flags = ZE_RAW;		/* no device: keep it as it is */
			data = src;
			n = (ssize_t)len;
		} else if (n <= 0) {
			program_memory_read_end();
			zc_add(zs, ZC_CFAIL, nr);
			uswap_log_once(&zs->logged_cfail, "the compressor failed (%s): "
				       "such pages go to the swap device as they are "
				       "(counted as zswap_reject_compress_fail)",
				       n < 0 ? strerror((int)-n) : "no output");
			return false;
		}
		clen = (uint32_t)n;
		handle = zs_malloc(zs->pool, clen);
		if (!handle) {
			program_memory_read_end();
			zc_add(zs, ZC_ALLOC, nr);
			return false;
		}
		zs_write(zs->pool, handle, data, clen);
		crc = crc32c(0, data, clen);
		word = handle;
	}
	program_memory_read_end();

	pthread_mutex_lock(&zs->lock);
	id = entry_alloc(zs);
	zs->ent[id] = (struct zswap_entry){
		.value = word, .clen = clen, .crc = crc, .slot = slot,
		.nr = (uint16_t)nr, .live = (uint16_t)nr, .flags = flags,
	};
	for (k = 0; k < nr; k++) {
		assert(*slot_ref(zs, slot + k) == 0);
		*slot_ref(zs, slot + k) = id;
	}
	lru_push(zs, id);
	pthread_mutex_unlock(&zs->lock);

	zc_add(zs, ZC_STORED, nr);
	zc_add(zs, ZC_ZSWPOUT, nr);
	if (flags & ZE_SAME)
		zc_add(zs, ZC_SAME, nr);
	else
		zc_add(zs, ZC_CBYTES, clen);
	return true;
}

static void count_mthp(struct zswap *zs, uint32_t nr)
{
	if (nr == 4)
		zc_add(zs, ZC_MTHP16, 1);
	else if (nr == 16)
		zc_add(zs, ZC_MTHP64, 1);
	else if (nr == 512)
		zc_add(zs, ZC_MTHP2M, 1);
}

/* One folio: as one unit, or page by page. */
static void store_job(struct zswap *zs, struct zswap_ctx *c,
		      struct zswap_job *j)
{
	uint32_t k;

	j->stored = 0;
	if (zs->p.unit && j->nr > 1) {
		if (store_unit(zs, c, j->src, j->slot, j->nr))
			j->stored = j->nr;
	} else {
		for (k = 0; k < j->nr; k++)
			if (store_unit(zs, c,
				       (const char *)j->src + ((size_t)k << PAGE_SHIFT),
				       j->slot + k, 1))
				j->stored++;
	}
	if (j->nr > 1 && j->stored == j->nr)
		count_mthp(zs, j->nr);
}

/*
 * Take jobs of batch gen (n jobs) until none is left.  A job is claimed by
 * moving the claim word from (gen, i) to (gen, i + 1).  A thread that was
 * woken for a batch but runs only once the next one is out finds another
 * gen there and takes nothing: an index drawn in one batch is never used
 * in the next, where another thread draws it too and the job would be
 * stored twice (one slot, two entries: the soak found it).
 */
static void run_jobs(struct zswap *zs, struct zswap_ctx *c, uint32_t gen,
		     struct zswap_job *jobs, unsigned n)
{
	uint64_t v = atomic_load(&zs->claim);
	unsigned done = 0;

	while ((uint32_t)(v >> 32) == gen && (uint32_t)v < n) {
		if (!atomic_compare_exchange_weak(&zs->claim, &v, v + 1))
			continue;
		store_job(zs, c, &jobs[(uint32_t)v]);
		done++;
		v = atomic_load(&zs->claim);
	}
	if (done) {
		pthread_mutex_lock(&zs->work_lock);
		zs->jobs_done += done;
		if (zs->jobs_done == zs->nr_jobs)
			pthread_cond_broadcast(&zs->done_cv);
		pthread_mutex_unlock(&zs->work_lock);
	}
}

static void *compress_thread(void *arg)
{
	struct zswap_worker *w = arg;
	struct zswap *zs = w->zs;
	uint64_t seen = 0;

	pthread_mutex_lock(&zs->work_lock);
	for (;;) {
		struct zswap_job *jobs;
		unsigned n;

		while (!zs->stopping && zs->batch_gen == seen)
			pthread_cond_wait(&zs->work_cv, &zs->work_lock);
		if (zs->stopping)
			break;
		seen = zs->batch_gen;
		jobs = zs->jobs;
		n = zs->nr_jobs;
		zs->busy++;
		pthread_mutex_unlock(&zs->work_lock);
		run_jobs(zs, w->ctx, (uint32_t)seen, jobs, n);
		pthread_mutex_lock(&zs->work_lock);
		if (--zs->busy == 0)
			pthread_cond_broadcast(&zs->done_cv);
	}
	pthread_mutex_unlock(&zs->work_lock);
	return NULL;
}

void zswap_store_batch(struct zswap *zs, struct zswap_ctx *c,
		       struct zswap_job *jobs, unsigned n)
{
	uint32_t gen;
	unsigned i;

	if (!zs->nr_threads || n < 2) {
		for (i = 0; i < n; i++)
			store_job(zs, c, &jobs[i]);
		return;
	}
	pthread_mutex_lock(&zs->work_lock);
	zs->jobs = jobs;
	zs->nr_jobs = n;
	zs->jobs_done = 0;
	gen = (uint32_t)++zs->batch_gen;
	atomic_store(&zs->claim, (uint64_t)gen << 32);
	pthread_cond_broadcast(&zs->work_cv);
	pthread_mutex_unlock(&zs->work_lock);

	run_jobs(zs, c, gen, jobs, n);

	/* Every job done, and no thread still looking at this batch. */
	pthread_mutex_lock(&zs->work_lock);
	while (zs->jobs_done < n || zs->busy)
		pthread_cond_wait(&zs->done_cv, &zs->work_lock);
	zs->jobs = NULL;
	zs->nr_jobs = 0;
	pthread_mutex_unlock(&zs->work_lock);
}

/* --- load --- */

bool zswap_present(struct zswap *zs, swp_entry_t slot)
{
	bool present;

	pthread_mutex_lock(&zs->lock);
	present = (*slot_ref(zs, slot) & ~SLOT_FREED) != 0;
	pthread_mutex_unlock(&zs->lock);
	return present;
}

uint32_t zswap_absent_run(struct zswap *zs, swp_entry_t slot, uint32_t nr)
{
	uint32_t k;

	pthread_mutex_lock(&zs->lock);
	for (k = 0; k < nr; k++)
		if (*slot_ref(zs, slot + k) & ~SLOT_FREED)
			break;
	pthread_mutex_unlock(&zs->lock);
	return k;
}

/*
 * Rebuild the unit's pages from a copy of its entry and object: into dst
 * when it wants the whole unit, else into c->dbuf.  0 or -EBADMSG.
 */
static int unpack(struct zswap *zs, struct zswap_ctx *c,
		  const struct zswap_entry *e, void *dst)
{
	size_t len = (size_t)e->nr << PAGE_SHIFT;

	if (e->flags & ZE_SAME) {
		mem_fill_word(dst, len, e->value);
		return 0;
	}
	if (crc32c(0, c->cbuf, e->clen) != e->crc)
		return -EBADMSG;
	if (e->flags & ZE_RAW) {
		if (dst != c->cbuf)
			memcpy(dst, c->cbuf, len);
		return 0;
	}
	return comp_decompress(c->comp, c->cbuf, e->clen, dst, len);
}

int zswap_load(struct zswap *zs, struct zswap_ctx *c, swp_entry_t slot,
	       unsigned nr, void *dst)
{
	struct zswap_entry e;
	uint32_t id, idx, count;
	int err;

	pthread_mutex_lock(&zs->lock);
	id = *slot_ref(zs, slot) & ~SLOT_FREED;
	if (id == ENT_NIL) {
		pthread_mutex_unlock(&zs->lock);
		return 0;
	}
	e = zs->ent[id];
	idx = slot - e.slot;
	count = 1;
	while (count < nr && idx + count < e.nr &&
	       (*slot_ref(zs, slot + count) & ~SLOT_FREED) == id)
		count++;
	if (!(e.flags & ZE_SAME))
		zs_read(zs->pool, (uint32_t)e.value, c->cbuf, e.clen);
	pthread_mutex_unlock(&zs->lock);

	if (idx == 0 && count == e.nr) {
		err = unpack(zs, c, &e, dst);
	} else {
		err = unpack(zs, c, &e, c->dbuf);
		if (!err)
			memcpy(dst, c->dbuf + ((size_t)idx << PAGE_SHIFT),
			       (size_t)count << PAGE_SHIFT);
	}
	if (err) {
		zc_add(zs, ZC_DFAIL, 1);
		return -EBADMSG;
	}
	zc_add(zs, ZC_ZSWPIN, count);
	return (int)count;
}

/* --- freeing slots --- */

void zswap_slot_free(struct zswap *zs, swp_entry_t slot, uint32_t nr)
{
	uint64_t now[SWAP_CLUSTER_SLOTS / 64];
	uint32_t done = 0;

	while (done < nr) {
		uint32_t chunk = MIN(nr - done, SWAP_CLUSTER_SLOTS), k, run;
		uint32_t base = slot + done;

		memset(now, 0, sizeof(now));
		pthread_mutex_lock(&zs->lock);
		for (k = 0; k < chunk; k++) {
			uint32_t id = *slot_ref(zs, base + k);

			if (id & SLOT_FREED)
				continue;	/* cannot happen: freed twice */
			if (id != ENT_NIL &&
			    (zs->ent[id].flags & ZE_WRITEBACK)) {
				*slot_ref(zs, base + k) = id | SLOT_FREED;
				continue;	/* the writeback frees it */
			}
			if (id != ENT_NIL)
				entry_drop_page(zs, id, base + k);
			now[k / 64] |= 1ull << (k % 64);
		}
		pthread_mutex_unlock(&zs->lock);
		for (k = 0; k < chunk; k += run) {
			run = 0;
			while (k + run < chunk &&
			       (now[(k + run) / 64] >> ((k + run) % 64) & 1))
				run++;
			if (run)
				free_slots(zs, base + k, run);
			else
				run = 1;
		}
		done += chunk;
	}
}

/* --- writeback --- */

/* Write the live pages of the unit in c->dbuf to their slots. */
static int write_unit(struct zswap *zs, struct zswap_ctx *c, uint32_t first,
		      uint32_t nr)
{
	uint32_t k = 0, run;
	int err = 0;

	while (k < nr && !err) {
		struct iovec iov;

		if (!(c->live[k / 64] >> (k % 64) & 1)) {
			k++;
			continue;
		}
		run = 1;
		while (k + run < nr && (c->live[(k + run) / 64] >> ((k + run) % 64) & 1))
			run++;
		iov.iov_base = c->dbuf + ((size_t)k << PAGE_SHIFT);
		iov.iov_len = (size_t)run << PAGE_SHIFT;
		err = swap_write(zs->si[swp_type(first)], swp_offset(first) + k,
				 &iov, 1, iov.iov_len);
		k += run;
	}
	return err;
}

/*
 * Is a slot of the unit at first shared with another process of the tree
 * (used more than once: fork)?  Both processes hold the same entry in
 * their copies of the pool, and both could write it back to the one slot
 * at once: with --encrypt each seals it under its own nonce, and the
 * slot's ciphertext and tag could come from different writes.  Such an
 * entry stays in the pool until one of them frees its use.  The count
 * cannot grow meanwhile: only a fork of this process could add a use, and
 * fork waits for writeback (zswap_fork_prepare).  The unit's pages freed
 * already count too (their slots may be another folio's now): at worst an
 * entry waits one more round.
 */
static bool unit_shared(struct zswap *zs, uint32_t first, uint32_t nr)
{
	return swap_slots_max_count(zs->si[swp_type(first)],
				    swp_offset(first), nr) > 1;
}

/*
 * Write back the oldest entry.  Returns the pages written, 0 when there is
 * nothing to write back, -EBUSY when the entry is shared (unit_shared: it
 * goes to the head of the LRU), -errno when it failed (the entry stays).
 */
static int writeback_one(struct zswap *zs, struct zswap_ctx *c)
{
	uint64_t freed[MAX_FOLIO_PAGES / 64] = { 0 };
	uint32_t id, k, first, nr, written = 0;
	struct zswap_entry e;
	bool bad = false;
	int err;

	pthread_mutex_lock(&zs->lock);
	id = zs->lru_tail;
	if (id == ENT_NIL) {
		pthread_mutex_unlock(&zs->lock);
		return 0;
	}
	lru_unlink(zs, id);
	zs->ent[id].flags |= ZE_WRITEBACK;
	e = zs->ent[id];
	first = e.slot;
	nr = e.nr;
	memset(c->live, 0, sizeof(c->live));
	for (k = 0; k < nr; k++)
		if (*slot_ref(zs, first + k) == id)
			c->live[k / 64] |= 1ull << (k % 64);
	if (!(e.flags & ZE_SAME))
		zs_read(zs->pool, (uint32_t)e.value, c->cbuf, e.clen);
	pthread_mutex_unlock(&zs->lock);

	if (unit_shared(zs, first, nr)) {
		err = -EBUSY;
	} else {
		err = unpack(zs, c, &e, c->dbuf);
		if (err) {
			zc_add(zs, ZC_DFAIL, 1);
			bad = true;
		} else {
			err = write_unit(zs, c, first, nr);
		}
	}

	/*
	 * Written: every page leaves the pool (its slot now holds it).  Failed:
	 * only the pages freed meanwhile go, and the entry stays.
	 */
	pthread_mutex_lock(&zs->lock);
	for (k = 0; k < nr && zs->ent[id].live; k++) {
		uint32_t v = *slot_ref(zs, first + k);

		if (v == (id | SLOT_FREED)) {
			freed[k / 64] |= 1ull << (k % 64);
			entry_drop_page(zs, id, first + k);
		} else if (v == id && !err) {
			entry_drop_page(zs, id, first + k);
			written++;
		}
	}
	if (zs->ent[id].live) {
		zs->ent[id].flags &= ~ZE_WRITEBACK;
		if (bad)
			zs->ent[id].flags |= ZE_BAD;	/* off the LRU for good */
		else
			lru_push(zs, id);
	}
	pthread_mutex_unlock(&zs->lock);

	for (k = 0; k < nr; k++)
		if (freed[k / 64] >> (k % 64) & 1)
			free_slots(zs, first + k, 1);
	if (err == -EBUSY) {
		zc_add(zs, ZC_WBSHARED, 1);
		return err;
	}
	if (err) {
		zc_add(zs, ZC_WBFAIL, 1);
		return err;
	}
	zc_add(zs, ZC_ZSWPWB, written);
	return (int)MAX(written, 1u);
}

uint64_t zswap_writeback(struct zswap *zs, struct zswap_ctx *c,
			 uint64_t target_bytes)
{
	uint64_t pages = 0;
	unsigned shared = 0;
	int n;

	if (!zs->can_writeback)
		return 0;
	while ((uint64_t)atomic_load(&zs->pool_pages) << PAGE_SHIFT > target_bytes) {
		n = writeback_one(zs, c);
		if (n == -EBUSY && ++shared < WB_SHARED_SKIP)
			continue;	/* the next oldest, then */
		if (n <= 0)
			break;
		pages += (uint64_t)n;
		shared = 0;
	}
	return pages;
}

/* Compact when the pool holds a tenth more than its objects need. */
static void maybe_compact(struct zswap *zs)
{
	struct zs_stats ps;

	zs_get_stats(zs->pool, &ps);
	if (ps.pool_bytes > ps.obj_bytes + ps.obj_bytes / 10 + (1u << 20))
		zs_compact(zs->pool);
}

/*
 * The writeback thread: when the pool reaches its limit, write back down
 * to the acceptance threshold; every second, compact a fragmented pool.
 */
static void *writeback_thread(void *arg)
{
	struct zswap *zs = arg;
	struct timespec ts;

	pthread_mutex_lock(&zs->work_lock);
	while (!zs->stopping) {
		bool kick = zs->wb_kick;

		if (!kick) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&zs->wb_cv, &zs->work_lock, &ts);
			kick = zs->wb_kick;
		}
		zs->wb_kick = false;
		if (zs->stopping)
			break;
		pthread_mutex_unlock(&zs->work_lock);
		pthread_mutex_lock(&zs->wb_mutex);
		if (kick)
			zswap_writeback(zs, zs->wb_ctx,
					zs->accept_pages << PAGE_SHIFT);
		maybe_compact(zs);
		pthread_mutex_unlock(&zs->wb_mutex);
		pthread_mutex_lock(&zs->work_lock);
	}
	pthread_mutex_unlock(&zs->work_lock);
	return NULL;
}

void zswap_fork_prepare(struct zswap *zs)
{
	pthread_mutex_lock(&zs->wb_mutex);
}

void zswap_fork_done(struct zswap *zs)
{
	pthread_mutex_unlock(&zs->wb_mutex);
}

static void *compress_thread(void *arg);
static void *writeback_thread(void *arg);

/*
 * In a child after fork: the pool is the child's own copy (its entries
 * name slots the child holds a reference on too), but its threads stayed
 * in the parent and its locks may be copies of held ones.  Fresh locks,
 * fresh threads.  Returns 0 or -errno (the pool then has fewer threads:
 * stores compress inline, writeback waits for the next store).
 */
int zswap_fork_child(struct zswap *zs)
{
	unsigned k, n = zs->nr_threads;
	int err = 0;

	pthread_mutex_init(&zs->lock, NULL);
	pthread_mutex_init(&zs->work_lock, NULL);
	pthread_mutex_init(&zs->wb_mutex, NULL);
	pthread_cond_init(&zs->work_cv, NULL);
	pthread_cond_init(&zs->done_cv, NULL);
	pthread_cond_init(&zs->wb_cv, NULL);
	zs->stopping = false;
	zs->busy = 0;
	zs->nr_jobs = 0;
	zs->nr_threads = 0;
	for (k = 0; k < n && !err; k++) {
		err = start_thread(&zs->workers[k].tid, compress_thread,
				   &zs->workers[k]);
		if (!err)
			zs->nr_threads++;
	}
	zs->wb_started = false;
	if (!err) {
		err = start_thread(&zs->wb_thread, writeback_thread, zs);
		zs->wb_started = !err;
	}
	return err;
}

/* --- life --- */

struct zswap_ctx *zswap_ctx_create(struct zswap *zs)
{
	struct zswap_ctx *c = prim_alloc(sizeof(*c));

	if (!c)
		return NULL;
	c->comp = comp_ctx_create(zs->p.alg, zs->p.level, zs->p.max_unit);
	c->cbuf = prim_alloc(zs->p.max_unit);
	c->dbuf = prim_alloc(zs->p.max_unit);
	if (!c->comp || !c->cbuf || !c->dbuf) {
		zswap_ctx_destroy(zs, c);
		return NULL;
	}
	return c;
}

void zswap_ctx_destroy(struct zswap *zs, struct zswap_ctx *c)
{
	if (!c)
		return;
	if (c->comp)
		comp_ctx_destroy(c->comp);
	prim_free(c->cbuf, zs->p.max_unit);
	prim_free(c->dbuf, zs->p.max_unit);
	prim_free(c, sizeof(*c));
}

static void stop_threads(struct zswap *zs)
{
	unsigned k;

	pthread_mutex_lock(&zs->work_lock);
	zs->stopping = true;
	pthread_cond_broadcast(&zs->work_cv);
	pthread_cond_broadcast(&zs->wb_cv);
	pthread_mutex_unlock(&zs->work_lock);
	for (k = 0; k < zs->nr_threads; k++)
		pthread_join(zs->workers[k].tid, NULL);
	zs->nr_threads = 0;
	if (zs->wb_started)
		pthread_join(zs->wb_thread, NULL);
	zs->wb_started = false;
}

int zswap_create(struct zswap **zsp, const struct zswap_params *p,
		 struct swap_info *const *devs, unsigned nr_devs)
{
	struct zswap *zs = prim_alloc(sizeof(*zs));
	size_t slots = 0;
	unsigned k;
	int err = -ENOMEM;

	if (!zs)
		return -ENOMEM;
	if (!nr_devs || nr_devs > SWAP_MAX_TYPES) {
		prim_free(zs, sizeof(*zs));
		return -EINVAL;
	}
	zs->p = *p;
	zs->nr_si = nr_devs;
	zs->can_writeback = true;
	for (k = 0; k < nr_devs; k++) {
		zs->si[k] = devs[k];
		if (devs[k]->fd < 0)
			zs->can_writeback = false;
		slots += devs[k]->nr_slots;
	}
	zs->max_pages = MAX(p->max_bytes >> PAGE_SHIFT, 1u);
	zs->accept_pages = zs->max_pages * MIN(p->accept_pct, 100u) / 100;
	pthread_mutex_init(&zs->lock, NULL);
	pthread_mutex_init(&zs->work_lock, NULL);
	pthread_mutex_init(&zs->wb_mutex, NULL);
	pthread_cond_init(&zs->work_cv, NULL);
	pthread_cond_init(&zs->done_cv, NULL);
	pthread_cond_init(&zs->wb_cv, NULL);

	/* One entry per slot at most; both tables touched only where used. */
	zs->ent_len = (slots + 1) * sizeof(*zs->ent);
	zs->ent = prim_mmap(NULL, zs->ent_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (zs->ent == MAP_FAILED)
		goto fail;
	for (k = 0; k < nr_devs; k++) {
		zs->slot_ent_len[k] = (size_t)devs[k]->nr_slots * sizeof(uint32_t);
		zs->slot_ent[k] = prim_mmap(NULL, zs->slot_ent_len[k],
					    PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS |
					    MAP_NORESERVE, -1, 0);
		if (zs->slot_ent[k] == MAP_FAILED) {
			zs->slot_ent[k] = NULL;
			goto fail;
		}
	}
	zs->next_unused = 1;

	/* The arena holds the limit plus what one store may overshoot it by. */
	zs->pool = zs_create(p->max_bytes + 2 * p->max_unit + (4u << 20),
			     pool_account, zs);
	if (!zs->pool)
		goto fail;

	for (k = 0; k < MIN(p->threads, MAX_THREADS); k++) {
		struct zswap_worker *w = &zs->workers[k];

		err = -ENOMEM;
		w->zs = zs;
		w->ctx = zswap_ctx_create(zs);
		if (!w->ctx)
			goto fail;
		err = start_thread(&w->tid, compress_thread, w);
		if (err)
			goto fail;
		zs->nr_threads++;
	}
	err = -ENOMEM;
	zs->wb_ctx = zswap_ctx_create(zs);
	if (!zs->wb_ctx)
		goto fail;
	err = start_thread(&zs->wb_thread, writeback_thread, zs);
	if (err)
		goto fail;
	zs->wb_started = true;
	*zsp = zs;
	return 0;
fail:
	zswap_destroy(zs);
	return err;
}

void zswap_destroy(struct zswap *zs)
{
	unsigned k;

	if (!zs)
		return;
	stop_threads(zs);
	for (k = 0; k < MAX_THREADS; k++)
		zswap_ctx_destroy(zs, zs->workers[k].ctx);
	zswap_ctx_destroy(zs, zs->wb_ctx);
	if (zs->pool)
		zs_destroy(zs->pool);
	for (k = 0; k < SWAP_MAX_TYPES; k++)
		if (zs->slot_ent[k])
			prim_munmap(zs->slot_ent[k], zs->slot_ent_len[k]);
	if (zs->ent && zs->ent != MAP_FAILED)
		prim_munmap(zs->ent, zs->ent_len);
	pthread_mutex_destroy(&zs->lock);
	pthread_mutex_destroy(&zs->work_lock);
	pthread_mutex_destroy(&zs->wb_mutex);
	pthread_cond_destroy(&zs->work_cv);
	pthread_cond_destroy(&zs->done_cv);
	pthread_cond_destroy(&zs->wb_cv);
	prim_free(zs, sizeof(*zs));
}

void zswap_get_stats(struct zswap *zs, struct zswap_stats *st)
{
	struct zs_stats ps;

	zs_get_stats(zs->pool, &ps);
	*st = (struct zswap_stats){
		.zswpout = atomic_load(&zs->ctr[ZC_ZSWPOUT]),
		.zswpin = atomic_load(&zs->ctr[ZC_ZSWPIN]),
		.zswpwb = atomic_load(&zs->ctr[ZC_ZSWPWB]),
		.stored_pages = atomic_load(&zs->ctr[ZC_STORED]),
		.same_filled_pages = atomic_load(&zs->ctr[ZC_SAME]),
		.pool_bytes = ps.pool_bytes,
		.compressed_bytes = atomic_load(&zs->ctr[ZC_CBYTES]),
		.reject_compress_poor = atomic_load(&zs->ctr[ZC_POOR]),
		.reject_pool_limit = atomic_load(&zs->ctr[ZC_LIMIT]),
		.reject_alloc_fail = atomic_load(&zs->ctr[ZC_ALLOC]),
		.reject_compress_fail = atomic_load(&zs->ctr[ZC_CFAIL]),
		.decompress_fail = atomic_load(&zs->ctr[ZC_DFAIL]),
		.written_back_fail = atomic_load(&zs->ctr[ZC_WBFAIL]),
		.written_back_shared = atomic_load(&zs->ctr[ZC_WBSHARED]),
		.pool_limit_hit = atomic_load(&zs->ctr[ZC_LIMIT_HIT]),
		.mthp_zswpout = { atomic_load(&zs->ctr[ZC_MTHP16]),
				  atomic_load(&zs->ctr[ZC_MTHP64]),
				  atomic_load(&zs->ctr[ZC_MTHP2M]) },
	};
}
