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
 * acceptance threshold.  It works in rounds of 256 KiB (or of one unit,
 * if larger): a round's entries are taken together, their pages rebuilt
 * side by side, written as runs of consecutive slots in one batch (the
 * thread's own io_uring), and given back together.  One entry at a time,
 * each with a synchronous write, the thread woke some 5,000 times a
 * second under a random workload and took zs->lock twice per entry.
 * Every second, whether kicked or not, the thread also compacts a
 * fragmented pool.
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

#include "base.h"
#include "ilist.h"
#include "lockdep.h"
#include "prim.h"
#include "swap.h"
#include "swap_io.h"
#include "zsmalloc.h"
#include "zswap.h"
#include "zswap_pool.h"

#define WB_SHARED_SKIP	64u	/* shared entries passed over in a row */
#define WB_BATCH_PAGES	64u	/* pages written back per round: 256 KiB */
#define WB_BATCH_UNITS	64u	/* entries per round */
_Static_assert(WB_BATCH_PAGES <= MAX_FOLIO_PAGES, "a round's requests");

/* --- writeback --- */

/* One entry of a round. */
struct wb_unit {
	struct zswap_entry e;	/* a copy, taken with the entry */
	uint32_t id;
	uint32_t at;		/* its first page in the batch buffer */
	int err;		/* 0, -EBUSY (shared), -EBADMSG, write error */
	uint64_t live[MAX_FOLIO_PAGES / 64];	/* pages to write */
};

/*
 * A round: entries taken off the LRU tail together, their pages rebuilt
 * side by side in one buffer, written as runs of consecutive slots (across
 * entries) in one batch, and given back together: two turns of zs->lock
 * and one submission per round, where each entry used to take two turns
 * and a synchronous write of its own.
 */
struct zswap_wb_batch {
	struct wb_unit unit[WB_BATCH_UNITS];
	uint8_t *buf;		/* cap pages */
	uint32_t cap;
	bool own_buf;		/* else the context's dbuf */
	/* A request per run: at most one per page of the round. */
	struct iovec iov[MAX_FOLIO_PAGES];
	struct swap_io_req req[MAX_FOLIO_PAGES];
	uint8_t req_first[MAX_FOLIO_PAGES];	/* units of each request */
	uint8_t req_last[MAX_FOLIO_PAGES];
};

static struct zswap_wb_batch *wb_batch(struct zswap *zs, struct zswap_ctx *c)
{
	struct zswap_wb_batch *b = c->wb;

	if (b)
		return b;
	b = prim_alloc(sizeof(*b));
	if (!b)
		return NULL;
	/*
	 * Room for a round, or for the largest unit alone: the context's
	 * dbuf (the size of the largest unit) when that is as large.
	 */
	b->cap = (uint32_t)(zs->p.max_unit >> PAGE_SHIFT);
	if (b->cap >= WB_BATCH_PAGES) {
		b->buf = c->dbuf;
	} else {
		b->cap = WB_BATCH_PAGES;
		b->own_buf = true;
		b->buf = prim_alloc((size_t)b->cap << PAGE_SHIFT);
		if (!b->buf) {
			prim_free(b, sizeof(*b));
			return NULL;
		}
	}
	c->wb = b;
	return b;
}

void zswap_wb_batch_free(struct zswap_ctx *c)
{
	struct zswap_wb_batch *b = c->wb;

	if (!b)
		return;
	if (b->own_buf)
		prim_free(b->buf, (size_t)b->cap << PAGE_SHIFT);
	prim_free(b, sizeof(*b));
	c->wb = NULL;
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
 * Under zs->lock: take entries from the LRU tail, the oldest first, while
 * their pages fit in the buffer.  Each goes off the LRU, marked
 * ZE_WRITEBACK: its object stays until the round gives it back (a free of
 * one of its slots only marks the slot), so it is read without the lock.
 */
static unsigned take_units(struct zswap *zs, struct zswap_wb_batch *b)
{
	uint32_t pages = 0, id, k;
	unsigned n = 0;

	pthread_mutex_lock(&zs->lock);
	while (n < WB_BATCH_UNITS &&
	       (id = ilist_last(&zs->lru)) != ILIST_NIL &&
	       pages + zs->ent[id].nr <= b->cap) {
		struct wb_unit *u = &b->unit[n++];

		zswap_lru_unlink(zs, id);
		zs->ent[id].flags |= ZE_WRITEBACK;
		u->e = zs->ent[id];
		u->id = id;
		u->at = pages;
		u->err = 0;
		memset(u->live, 0, sizeof(u->live));
		for (k = 0; k < u->e.nr; k++)
			if (*zswap_slot_ref(zs, u->e.slot + k) == id)
				u->live[k / 64] |= 1ull << (k % 64);
		pages += u->e.nr;
	}
	pthread_mutex_unlock(&zs->lock);
	return n;
}

/*
 * Queue unit i's live pages: each run of them extends the last request
 * when it follows it on the device and in the buffer, else starts one.
 */
static unsigned queue_unit(struct zswap *zs, struct zswap_wb_batch *b,
			   unsigned i, unsigned nreq)
{
	struct wb_unit *u = &b->unit[i];
	uint32_t k = 0, run;

	while (k < u->e.nr) {
		struct swap_info *si = zs->si[swp_type(u->e.slot)];
		uint32_t off = swp_offset(u->e.slot) + k;
		uint8_t *p = b->buf + ((size_t)(u->at + k) << PAGE_SHIFT);
		struct swap_io_req *last = nreq ? &b->req[nreq - 1] : NULL;
		size_t len;

		if (!(u->live[k / 64] >> (k % 64) & 1)) {
			k++;
			continue;
		}
		run = 1;
		while (k + run < u->e.nr &&
		       (u->live[(k + run) / 64] >> ((k + run) % 64) & 1))
			run++;
		len = (size_t)run << PAGE_SHIFT;
		if (last && last->si == si &&
		    last->offset + (last->len >> PAGE_SHIFT) == off &&
		    (uint8_t *)b->iov[nreq - 1].iov_base + last->len == p) {
			b->iov[nreq - 1].iov_len += len;
			last->len += len;
			b->req_last[nreq - 1] = (uint8_t)i;
		} else {
			b->iov[nreq] = (struct iovec){ .iov_base = p, .iov_len = len };
			b->req[nreq] = (struct swap_io_req){
				.si = si, .offset = off, .iov = &b->iov[nreq],
				.iovcnt = 1, .len = len,
			};
			b->req_first[nreq] = b->req_last[nreq] = (uint8_t)i;
			nreq++;
		}
		k += run;
	}
	return nreq;
}

/*
 * Give unit u back under zs->lock.  Written: every page leaves the pool
 * (its slot now holds it).  Otherwise only the pages freed meanwhile go,
 * and the entry stays: at the head of the LRU, or, failing its checksum,
 * off it for good.  The freed pages' slots are noted in freed, for the
 * caller to give back once the lock is dropped.  Returns pages written.
 */
static uint32_t put_unit_locked(struct zswap *zs, struct wb_unit *u,
				uint64_t *freed)
{
	uint32_t id = u->id, first = u->e.slot, k, written = 0;

	lock_assert_held(&zs->lock);
	memset(freed, 0, MAX_FOLIO_PAGES / 8);
	for (k = 0; k < u->e.nr && zs->ent[id].live; k++) {
		uint32_t v = *zswap_slot_ref(zs, first + k);

		if (v == (id | SLOT_FREED)) {
			freed[k / 64] |= 1ull << (k % 64);
			zswap_entry_drop_page(zs, id, first + k);
		} else if (v == id && !u->err) {
			zswap_entry_drop_page(zs, id, first + k);
			written++;
		}
	}
	if (zs->ent[id].live) {
		zs->ent[id].flags &= ~ZE_WRITEBACK;
		if (u->err == -EBADMSG)
			zs->ent[id].flags |= ZE_BAD;	/* off the LRU for good */
		else
			zswap_lru_push(zs, id);
	}
	return written;
}

struct wb_round {
	unsigned taken, shared, failed;
	uint64_t written;
};

/* One round of writeback: the oldest entries, as many as fit a batch. */
static void writeback_round(struct zswap *zs, struct zswap_ctx *c,
			    struct zswap_wb_batch *b, struct wb_round *r)
{
	uint64_t freed[WB_BATCH_UNITS][MAX_FOLIO_PAGES / 64];
	unsigned i, n, nreq = 0;
	uint32_t k;

	*r = (struct wb_round){ 0 };
	n = take_units(zs, b);
	r->taken = n;
	for (i = 0; i < n; i++) {
		struct wb_unit *u = &b->unit[i];
		uint8_t *dst = b->buf + ((size_t)u->at << PAGE_SHIFT);

		if (unit_shared(zs, u->e.slot, u->e.nr)) {
			u->err = -EBUSY;
			continue;
		}
		if (!(u->e.flags & ZE_SAME))
			zs_read(zs->pool, (uint32_t)u->e.value, c->cbuf, u->e.clen);
		if (zswap_unpack(zs, c, &u->e, dst)) {
			zswap_ctr_add(zs, ZC_DFAIL, 1);
			u->err = -EBADMSG;
			continue;
		}
		nreq = queue_unit(zs, b, i, nreq);
	}

	if (nreq)
		swap_io_write_batch(c->io, b->req, nreq);
	for (i = 0; i < nreq; i++) {
		struct swap_io_req *req = &b->req[i];

		if (!req->result) {
			if (req->si->csum)
				swap_csum_record(req->si, req->offset, req->iov,
						 req->iovcnt);
			continue;
		}
		for (k = b->req_first[i]; k <= b->req_last[i]; k++)
			if (!b->unit[k].err)
				b->unit[k].err = req->result;
	}

	pthread_mutex_lock(&zs->lock);
	for (i = 0; i < n; i++)
		r->written += put_unit_locked(zs, &b->unit[i], freed[i]);
	pthread_mutex_unlock(&zs->lock);

	for (i = 0; i < n; i++) {
		struct wb_unit *u = &b->unit[i];

		for (k = 0; k < u->e.nr; k++)
			if (freed[i][k / 64] >> (k % 64) & 1)
				zswap_free_dev_slots(zs, u->e.slot + k, 1);
		if (u->err == -EBUSY)
			r->shared++;
		else if (u->err)
			r->failed++;
	}
	zswap_ctr_add(zs, ZC_WBSHARED, r->shared);
	zswap_ctr_add(zs, ZC_WBFAIL, r->failed);
	zswap_ctr_add(zs, ZC_ZSWPWB, (int64_t)r->written);
}

uint64_t zswap_writeback(struct zswap *zs, struct zswap_ctx *c,
			 uint64_t target_bytes)
{
	struct zswap_wb_batch *b;
	struct wb_round r;
	uint64_t pages = 0;
	unsigned shared = 0;

	if (!zs->can_writeback || !(b = wb_batch(zs, c)))
		return 0;
	while ((uint64_t)atomic_load(&zs->pool_pages) << PAGE_SHIFT > target_bytes) {
		writeback_round(zs, c, b, &r);
		pages += r.written;
		if (!r.taken || r.failed)
			break;		/* nothing left, or the device fails */
		if (r.written)
			shared = 0;
		else if ((shared += r.shared) >= WB_SHARED_SKIP)
			break;		/* what is left is shared */
	}
	return pages;
}

uint64_t zswap_shrink(struct zswap *zs, struct zswap_ctx *c, uint64_t pages)
{
	uint64_t now = (uint64_t)atomic_load(&zs->pool_pages), written;

	if (!now)
		return 0;
	pthread_mutex_lock(&zs->wb_mutex);
	written = zswap_writeback(zs, c, (now - MIN(now, pages)) << PAGE_SHIFT);
	pthread_mutex_unlock(&zs->wb_mutex);
	return written;
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

	/* Its own I/O context (NULL when out of memory: pwritev). */
	zs->wb_ctx->io = swap_io_create(SWAP_IO_DEPTH_DEFAULT);
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
	swap_io_destroy(zs->wb_ctx->io);
	zs->wb_ctx->io = NULL;
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
