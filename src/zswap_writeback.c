// SPDX-License-Identifier: MIT
/*
 * zswap_writeback.c - writeback from the compressed pool to the swap
 * device (the kernel's zswap_writeback_entry() and shrink_worker(), in
 * mm/zswap.c).
 *
 * When a store finds the pool at its limit (zswap.c) it kicks the
 * writeback thread, which takes entries from the tail of the LRU, the
 * oldest first, rebuilds each unit's pages and writes those still mapped
 * to their own slots on the device, until the pool is back under its
 * acceptance threshold.  Every second, whether kicked or not, the thread
 * also compacts a fragmented pool.
 *
 * An entry being written back is off the LRU and marked ZE_WRITEBACK: a
 * load still finds it (its slots still name it), and an owner that frees
 * one of its slots meanwhile only marks the slot (SLOT_FREED), which the
 * writeback frees once its write is done; it never goes to another folio
 * while the stale data may still land on it.  An entry whose slots another
 * process of the tree shares (fork) is passed over (unit_shared), and one
 * that fails its checksum is never written back.
 *
 * fork waits for writeback: zswap_fork_prepare() holds wb_mutex, which the
 * thread holds while it works.  Locking is described in zswap_pool.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "internal.h"
#include "zsmalloc.h"
#include "zswap.h"
#include "zswap_pool.h"

#define WB_SHARED_SKIP	64u	/* shared entries passed over in a row */

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
	zswap_lru_unlink(zs, id);
	zs->ent[id].flags |= ZE_WRITEBACK;
	e = zs->ent[id];
	first = e.slot;
	nr = e.nr;
	memset(c->live, 0, sizeof(c->live));
	for (k = 0; k < nr; k++)
		if (*zswap_slot_ref(zs, first + k) == id)
			c->live[k / 64] |= 1ull << (k % 64);
	if (!(e.flags & ZE_SAME))
		zs_read(zs->pool, (uint32_t)e.value, c->cbuf, e.clen);
	pthread_mutex_unlock(&zs->lock);

	if (unit_shared(zs, first, nr)) {
		err = -EBUSY;
	} else {
		err = zswap_unpack(zs, c, &e, c->dbuf);
		if (err) {
			zswap_ctr_add(zs, ZC_DFAIL, 1);
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
		uint32_t v = *zswap_slot_ref(zs, first + k);

		if (v == (id | SLOT_FREED)) {
			freed[k / 64] |= 1ull << (k % 64);
			zswap_entry_drop_page(zs, id, first + k);
		} else if (v == id && !err) {
			zswap_entry_drop_page(zs, id, first + k);
			written++;
		}
	}
	if (zs->ent[id].live) {
		zs->ent[id].flags &= ~ZE_WRITEBACK;
		if (bad)
			zs->ent[id].flags |= ZE_BAD;	/* off the LRU for good */
		else
			zswap_lru_push(zs, id);
	}
	pthread_mutex_unlock(&zs->lock);

	for (k = 0; k < nr; k++)
		if (freed[k / 64] >> (k % 64) & 1)
			zswap_free_dev_slots(zs, first + k, 1);
	if (err == -EBUSY) {
		zswap_ctr_add(zs, ZC_WBSHARED, 1);
		return err;
	}
	if (err) {
		zswap_ctr_add(zs, ZC_WBFAIL, 1);
		return err;
	}
	zswap_ctr_add(zs, ZC_ZSWPWB, written);
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

/* The pool reached its limit: wake the writeback thread. */
void zswap_writeback_kick(struct zswap *zs)
{
	if (!zs->wb_started)
		return;
	pthread_mutex_lock(&zs->work_lock);
	zs->wb_kick = true;
	pthread_cond_signal(&zs->wb_cv);
	pthread_mutex_unlock(&zs->work_lock);
}

/*
 * The writeback thread: when the pool reaches its limit, write back down
 * to the acceptance threshold; every second, compact a fragmented pool.
 */
void *zswap_writeback_thread(void *arg)
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
