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
 * writeback thread (zswap_writeback.c) moves the oldest entries to their
 * slots on the device, so a full pool degrades to device speed instead of
 * stalling reclaim.
 *
 * Slots and writeback.  A slot is freed by its owner (the region) through
 * zswap_slot_free().  If a writeback is writing that slot's entry at that
 * moment, the slot stays allocated until the writeback is done: otherwise
 * the slot could be handed to another folio and written by the device
 * path, and then overwritten with the stale data.
 *
 * Writeback itself, the writeback thread and the fork pause are in
 * zswap_writeback.c; the structures both files share, and their locking,
 * in zswap_pool.h.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc32c.h"
#include "base.h"
#include "ilist.h"
#include "lockdep.h"
#include "log.h"
#include "prim.h"
#include "swap.h"
#include "thread.h"
#include "swap_io.h"
#include "zsmalloc.h"
#include "zswap.h"
#include "zswap_pool.h"

/* Give slots back to their device (through the owner's hook). */
void zswap_free_dev_slots(struct zswap *zs, swp_entry_t e, uint32_t nr)
{
	if (zs->p.free_slots)
		zs->p.free_slots(zs->p.free_arg, e, nr);
	else
		swap_slot_free(zs->si[swp_type(e)], swp_offset(e), nr);
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
		zs->free_head = zs->ent[id].lru.next;
		return id;
	}
	return zs->next_unused++;	/* sized for one entry per slot */
}

/* The entries handed out so far, as the LRU's element array (ilist.h). */
static struct ilist_array lru_entries(struct zswap *zs)
{
	return ILIST_ARRAY(zs->ent, zs->next_unused, lru);
}

void zswap_lru_unlink(struct zswap *zs, uint32_t id)
{
	lock_assert_held(&zs->lock);
	ilist_del(&zs->lru, lru_entries(zs), id);
}

void zswap_lru_push(struct zswap *zs, uint32_t id)
{
	lock_assert_held(&zs->lock);
	ilist_add_head(&zs->lru, lru_entries(zs), id);
}

/* The entry's last page went: free its object and the entry. */
static void entry_release(struct zswap *zs, uint32_t id)
{
	struct zswap_entry *e = &zs->ent[id];

	if (!(e->flags & ZE_OFF_LRU))
		zswap_lru_unlink(zs, id);
	if (e->flags & ZE_SAME) {
		zswap_ctr_add(zs, ZC_SAME, -(int64_t)e->nr);
	} else {
		zs_free(zs->pool, (uint32_t)e->value);
		zswap_ctr_add(zs, ZC_CBYTES, -(int64_t)e->clen);
	}
	memset(e, 0, sizeof(*e));
	e->lru.next = zs->free_head;
	zs->free_head = id;
}

/* Unmap one page of entry id from its slot. */
void zswap_entry_drop_page(struct zswap *zs, uint32_t id, uint32_t slot)
{
	struct zswap_entry *e = &zs->ent[id];

	*zswap_slot_ref(zs, slot) = 0;
	zswap_ctr_add(zs, ZC_STORED, -1);
	if (e->flags & ZE_RAW)
		zswap_ctr_add(zs, ZC_INCOMP, -1);
	if (--e->live == 0)
		entry_release(zs, id);
}

/* --- limit --- */

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
			zswap_ctr_add(zs, ZC_LIMIT_HIT, 1);
		zswap_writeback_kick(zs);
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
			zswap_ctr_add(zs, ZC_LIMIT, nr);
			return false;
		}
		n = prim_inject(INJECT_COMPRESS_FAIL, -1) ? -EIO :	/* tests */
		    comp_compress(c->comp, src, len, c->cbuf, len - len / 8);
		if (n == -ENOSPC) {
			zswap_ctr_add(zs, ZC_POOR, nr);
			if (zs->can_writeback && !zs->p.store_incompressible) {
				program_memory_read_end();
				return false;
			}
			/* No device, or asked to: keep it as it is. */
			flags = ZE_RAW;
			data = src;
			n = (ssize_t)len;
		} else if (n <= 0) {
			program_memory_read_end();
			zswap_ctr_add(zs, ZC_CFAIL, nr);
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
			zswap_ctr_add(zs, ZC_ALLOC, nr);
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
		assert(*zswap_slot_ref(zs, slot + k) == 0);
		*zswap_slot_ref(zs, slot + k) = id;
	}
	zswap_lru_push(zs, id);
	pthread_mutex_unlock(&zs->lock);

	zswap_ctr_add(zs, ZC_STORED, nr);
	zswap_ctr_add(zs, ZC_ZSWPOUT, nr);
	if (flags & ZE_SAME)
		zswap_ctr_add(zs, ZC_SAME, nr);
	else
		zswap_ctr_add(zs, ZC_CBYTES, clen);
	if (flags & ZE_RAW)
		zswap_ctr_add(zs, ZC_INCOMP, nr);
	return true;
}

static void count_mthp(struct zswap *zs, uint32_t nr)
{
	if (nr == 4)
		zswap_ctr_add(zs, ZC_MTHP16, 1);
	else if (nr == 16)
		zswap_ctr_add(zs, ZC_MTHP64, 1);
	else if (nr == 512)
		zswap_ctr_add(zs, ZC_MTHP2M, 1);
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
	present = (*zswap_slot_ref(zs, slot) & ~SLOT_FREED) != 0;
	pthread_mutex_unlock(&zs->lock);
	return present;
}

uint32_t zswap_absent_run(struct zswap *zs, swp_entry_t slot, uint32_t nr)
{
	uint32_t k;

	pthread_mutex_lock(&zs->lock);
	for (k = 0; k < nr; k++)
		if (*zswap_slot_ref(zs, slot + k) & ~SLOT_FREED)
			break;
	pthread_mutex_unlock(&zs->lock);
	return k;
}

/*
 * Rebuild the unit's pages from a copy of its entry and object: into dst
 * when it wants the whole unit, else into c->dbuf.  0 or -EBADMSG.
 */
int zswap_unpack(struct zswap *zs, struct zswap_ctx *c,
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
	id = *zswap_slot_ref(zs, slot) & ~SLOT_FREED;
	if (id == ENT_NIL) {
		pthread_mutex_unlock(&zs->lock);
		return 0;
	}
	e = zs->ent[id];
	idx = slot - e.slot;
	count = 1;
	while (count < nr && idx + count < e.nr &&
	       (*zswap_slot_ref(zs, slot + count) & ~SLOT_FREED) == id)
		count++;
	if (!(e.flags & ZE_SAME))
		zs_read(zs->pool, (uint32_t)e.value, c->cbuf, e.clen);
	pthread_mutex_unlock(&zs->lock);

	if (idx == 0 && count == e.nr) {
		err = zswap_unpack(zs, c, &e, dst);
	} else {
		err = zswap_unpack(zs, c, &e, c->dbuf);
		if (!err)
			memcpy(dst, c->dbuf + ((size_t)idx << PAGE_SHIFT),
			       (size_t)count << PAGE_SHIFT);
	}
	if (err) {
		zswap_ctr_add(zs, ZC_DFAIL, 1);
		return -EBADMSG;
	}
	zswap_ctr_add(zs, ZC_ZSWPIN, count);
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
			uint32_t id = *zswap_slot_ref(zs, base + k);

			if (id & SLOT_FREED)
				continue;	/* cannot happen: freed twice */
			if (id != ENT_NIL &&
			    (zs->ent[id].flags & ZE_WRITEBACK)) {
				*zswap_slot_ref(zs, base + k) = id | SLOT_FREED;
				continue;	/* the writeback frees it */
			}
			if (id != ENT_NIL)
				zswap_entry_drop_page(zs, id, base + k);
			now[k / 64] |= 1ull << (k % 64);
		}
		pthread_mutex_unlock(&zs->lock);
		for (k = 0; k < chunk; k += run) {
			run = 0;
			while (k + run < chunk &&
			       (now[(k + run) / 64] >> ((k + run) % 64) & 1))
				run++;
			if (run)
				zswap_free_dev_slots(zs, base + k, run);
			else
				run = 1;
		}
		done += chunk;
	}
}

/* The pool's locks and conditions, new (at creation, and in a fork child). */
static void zswap_locks_init(struct zswap *zs)
{
	pthread_mutex_init(&zs->lock, NULL);
	pthread_mutex_init(&zs->work_lock, NULL);
	pthread_mutex_init(&zs->wb_mutex, NULL);
	pthread_cond_init(&zs->work_cv, NULL);
	pthread_cond_init(&zs->done_cv, NULL);
	pthread_cond_init(&zs->wb_cv, NULL);
}


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

	zswap_locks_init(zs);
	zs->stopping = false;
	zs->busy = 0;
	zs->nr_jobs = 0;
	zs->nr_threads = 0;
	for (k = 0; k < n && !err; k++) {
		err = start_thread(&zs->workers[k].tid, "uswap-zswap",
				   compress_thread,
				   &zs->workers[k]);
		if (!err)
			zs->nr_threads++;
	}
	/* The parent's writeback ring: close our copies (its thread makes one). */
	swap_io_destroy(zs->wb_ctx->io);
	zs->wb_ctx->io = NULL;
	zs->wb_started = false;
	if (!err) {
		err = start_thread(&zs->wb_thread, "uswap-zswap-wb",
				   zswap_writeback_thread, zs);
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
	zswap_wb_batch_free(c);
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
		join_thread(zs->workers[k].tid);
	zs->nr_threads = 0;
	if (zs->wb_started)
		join_thread(zs->wb_thread);
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
	zswap_counters_set(zs, p->counters);
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
	zswap_locks_init(zs);

	/* One entry per slot at most; both tables touched only where used. */
	zs->ent_len = (slots + 1) * sizeof(*zs->ent);
	zs->ent = prim_map_own(zs->ent_len, MAP_PRIVATE | MAP_ANONYMOUS |
					   MAP_NORESERVE, -1);
	if (zs->ent == MAP_FAILED)
		goto err_destroy;
	for (k = 0; k < nr_devs; k++) {
		zs->slot_ent_len[k] = (size_t)devs[k]->nr_slots * sizeof(uint32_t);
		zs->slot_ent[k] = prim_map_own(zs->slot_ent_len[k],
					       MAP_PRIVATE | MAP_ANONYMOUS |
					       MAP_NORESERVE, -1);
		if (zs->slot_ent[k] == MAP_FAILED) {
			zs->slot_ent[k] = NULL;
			goto err_destroy;
		}
	}
	zs->next_unused = 1;
	ilist_init(&zs->lru);

	/* The arena holds the limit plus what one store may overshoot it by. */
	zs->pool = zs_create(p->max_bytes + 2 * p->max_unit + (4u << 20),
			     pool_account, zs);
	if (!zs->pool)
		goto err_destroy;

	for (k = 0; k < MIN(p->threads, MAX_THREADS); k++) {
		struct zswap_worker *w = &zs->workers[k];

		err = -ENOMEM;
		w->zs = zs;
		w->ctx = zswap_ctx_create(zs);
		if (!w->ctx)
			goto err_destroy;
		err = start_thread(&w->tid, "uswap-zswap", compress_thread, w);
		if (err)
			goto err_destroy;
		zs->nr_threads++;
	}
	err = -ENOMEM;
	zs->wb_ctx = zswap_ctx_create(zs);
	if (!zs->wb_ctx)
		goto err_destroy;
	err = start_thread(&zs->wb_thread, "uswap-zswap-wb",
			   zswap_writeback_thread, zs);
	if (err)
		goto err_destroy;
	zs->wb_started = true;
	*zsp = zs;
	return 0;
err_destroy:
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

void zswap_counters_stats(const _Atomic uint64_t *ctr, struct zswap_stats *st)
{
	*st = (struct zswap_stats){
		.zswpout = atomic_load(&ctr[ZC_ZSWPOUT]),
		.zswpin = atomic_load(&ctr[ZC_ZSWPIN]),
		.zswpwb = atomic_load(&ctr[ZC_ZSWPWB]),
		.stored_pages = atomic_load(&ctr[ZC_STORED]),
		.same_filled_pages = atomic_load(&ctr[ZC_SAME]),
		.stored_incompressible_pages = atomic_load(&ctr[ZC_INCOMP]),
		.compressed_bytes = atomic_load(&ctr[ZC_CBYTES]),
		.reject_compress_poor = atomic_load(&ctr[ZC_POOR]),
		.reject_pool_limit = atomic_load(&ctr[ZC_LIMIT]),
		.reject_alloc_fail = atomic_load(&ctr[ZC_ALLOC]),
		.reject_compress_fail = atomic_load(&ctr[ZC_CFAIL]),
		.decompress_fail = atomic_load(&ctr[ZC_DFAIL]),
		.written_back_fail = atomic_load(&ctr[ZC_WBFAIL]),
		.written_back_shared = atomic_load(&ctr[ZC_WBSHARED]),
		.pool_limit_hit = atomic_load(&ctr[ZC_LIMIT_HIT]),
		.mthp_zswpout = { atomic_load(&ctr[ZC_MTHP16]),
				  atomic_load(&ctr[ZC_MTHP64]),
				  atomic_load(&ctr[ZC_MTHP2M]) },
	};
}

void zswap_get_stats(struct zswap *zs, struct zswap_stats *st)
{
	struct zs_stats ps;

	zs_get_stats(zs->pool, &ps);
	zswap_counters_stats(zs->ctr, st);
	st->pool_bytes = ps.pool_bytes;
}

/* The counters that are gauges of what the pool holds. */
static const enum zswap_counter gauges[] = {
	ZC_STORED, ZC_SAME, ZC_INCOMP, ZC_CBYTES,
};

void zswap_counters_fork(struct zswap *zs, _Atomic uint64_t *child)
{
	unsigned k;

	for (k = 0; k < ZC_NR; k++)
		atomic_store(&child[k], 0);
	for (k = 0; k < ARRAY_SIZE(gauges); k++)
		atomic_store(&child[gauges[k]], atomic_load(&zs->ctr[gauges[k]]));
}

void zswap_counters_set(struct zswap *zs, _Atomic uint64_t *ctr)
{
	zs->ctr = ctr ? ctr : zs->ctr_own;
}
