/* SPDX-License-Identifier: MIT */
/*
 * swapfile.c - the swap device's cluster allocator.
 *
 * This rebuilds in user space the allocator half of the kernel's
 * mm/swapfile.c: the 2 MiB clusters and their free / nonfull / fragmented /
 * nearly full / full lists, the per-CPU current cluster (here one per
 * allocating context), and the discard of freed clusters.  The slot map
 * the clusters summarise (the swap_map of use counts, its set-up, frees
 * and dups) lives in swap_map.c; the I/O half of a device in page_io.c.
 *
 * Slots.  A device is an array of 4 KiB slots, each with a use count in
 * swap_map[] (swap_map.c): 0 is free.  swap_slot_alloc() hands out free
 * slots and sets their counts to 1; when a free brings slots of a cluster
 * back to 0, swap_slot_free() (swap_map.c) passes their number to
 * swap_cluster_put_locked().
 *
 * Clusters.  512 slots (2 MiB) make a cluster; struct swap_cluster counts
 * the slots of the cluster in use and links the cluster into the one list
 * it is on.  Clusters are what makes large folios possible: a folio of
 * order 1..9 (8 KiB .. 2 MiB) goes out as one run of 2^order contiguous
 * slots, naturally aligned (its offset is a multiple of 2^order), so that it
 * is one write and one read, and such a run never crosses a cluster.  A
 * context that fills a cluster of its own also keeps its writes sequential
 * in the file and away from the other threads' clusters.
 *
 * Lists.  Every cluster is on exactly one of six lists, doubly linked
 * through cluster indices (4-byte links in one mmap'd array, no pointers):
 *
 *	FREE		count == 0, owned by nobody
 *	NONFULL		count > 0, SWAP_CLUSTER_REUSE (64) or more slots
 *			free, owned by nobody
 *	FRAG		(fragmented) as NONFULL, but a large folio looked
 *			for a run in it and found none
 *	NEARLY		(nearly full) 1 to 63 slots free, owned by nobody
 *	FULL		count == 512
 *	CURRENT		owned by a context, count < 512 (possibly 0)
 *
 * Why NEARLY.  A cluster that was full goes back to NONFULL only once a
 * good part of it is free again.  Programs fault their memory back much
 * in the order it went out, so frees come oldest first: with one free
 * slot enough, the oldest cluster would rejoin NONFULL at each free, the
 * next allocation would take it and fill it at once, and every slot would
 * cost a cluster change (si->lock, below) and land in another cluster, one
 * write per slot instead of one per batch.  With the threshold a context
 * takes a cluster only when it can fill 64 slots or more in a row there.
 *
 * Why FRAG.  Large folios need aligned runs, which frees in random order
 * break up: a cluster with many free slots may have no run of 16.  Such a
 * cluster leaves NONFULL for FRAG the first time a large folio probes it
 * in vain, so that large folios stop probing it, and order-0 allocations
 * take FRAG clusters first, filling their holes and leaving free clusters
 * and runs to the large folios (the kernel's frag_clusters do the same).
 * Frees leave a FRAG cluster there (unless they empty it); it goes back
 * to NONFULL when the context that fills it lets it go.
 *
 *                 (1) take                      (2) take
 *     +------+ ---------------> +---------+ <------------------ +---------+
 *     | FREE |                  | CURRENT |                     | NONFULL |
 *     +------+ <--------------- +---------+ ------------------> +---------+
 *      ^    ^    (3) release        |        (4) release,          |    ^
 *      |    |        (empty)        |            no room           |    |
 *      |    |                   (5) | last slot handed out         |    |
 *      |    |                       v                              |    |
 *      |    |   (7) all freed   +---------+   (6) some freed       |    |
 *      |    +------------------ |  FULL   | ---------> NEARLY -----+----+
 *      |                        +---------+   then 64 or more free |
 *      +-----------------------------------------------------------+
 *                          (8) last slot freed
 *
 *	(1), (2)  swap_slot_alloc() -> cluster_take_locked(); also from
 *		  FRAG (first for order 0) and NEARLY (when nothing else has
 *		  room, step d below); NONFULL -> FRAG in step b
 *	(3), (4)  swap_alloc_ctx_release(), and swap_slot_alloc() when the
 *		  context's cluster has no run of the order asked for (to
 *		  NEARLY if fewer than 64 slots are free)
 *	(5)	  swap_slot_alloc(): the context drops its full cluster
 *	(6)-(8)	  swap_slot_free() (swap_map.c) -> swap_cluster_put_locked(),
 *		  swap_cluster_settle(); a FRAG or NEARLY cluster freed to
 *		  empty goes to FREE as well
 *
 * A CURRENT cluster never moves because of frees: it stays with its owner,
 * even when it becomes empty, until the owner lets it go.
 *
 * Allocation.  Each allocating thread has a struct swap_alloc_ctx (the
 * kernel's per-CPU cluster): its current cluster and a cursor, the offset
 * after its last allocation.  swap_slot_alloc(order) tries in turn:
 *
 *   a. the context's cluster: the first free aligned run at or after the
 *	cursor, else anywhere in the cluster.  Order 0 usually finds the very
 *	slot under the cursor: O(1) amortised, a cluster scan (512 bytes) at
 *	worst, never a scan of the whole map;
 *   b. otherwise the context hands its cluster back (4) and takes another
 *	(1, 2): for order 0 the head of FRAG, else of NONFULL (both always
 *	fit); for a larger order up to SWAP_NONFULL_PROBE clusters from the
 *	head of NONFULL, a probed cluster without room for the order moving
 *	to FRAG;
 *   c. the head of FREE, passed first to si->provision if never used;
 *   d. every NONFULL cluster left, then every FRAG one, then every NEARLY
 *	one.  This walk is what a nearly full or fragmented device pays for
 *	an order that has no room: a lock and a count test per cluster, and
 *	a map pass (64 words) for those whose count leaves room; about
 *	0.1-0.3 ms on an 8 GiB device.
 *
 * So -ENOSPC is exact: it is returned only when no cluster outside the
 * other contexts' current clusters has a free aligned run of that order.
 * Order 0 may succeed where a larger order fails (fragmentation): callers
 * split the folio.
 *
 * FREE order.  Clusters that come back to FREE are pushed at its head; those
 * never used stay behind them in index order.  So space already provisioned
 * is reused before the file grows, and when the head of FREE needs
 * provisioning no free cluster has been provisioned.  If provisioning fails
 * the cluster stays at the head of FREE, unprovisioned, and the allocation
 * fails with provision's error unless step d finds room.  (With discard on,
 * a cluster comes back to FREE unprovisioned: see below.)
 *
 * Discard.  With si->discard set (the device's "discard" option), a
 * cluster whose last slot is freed gives its space back to the file system
 * (a hole punched in the file) or the device (BLKDISCARD), and is
 * provisioned again when next used.  The danger is a write that lands in
 * the cluster between the free and the discard: the discard would destroy
 * it.  So the cluster does not go back to FREE at once.  cluster_settle()
 * parks it: it goes on CURRENT, owned by no context, and its index goes on
 * the discard queue.  Allocation takes clusters only from FREE, NONFULL,
 * FRAG and NEARLY (and a context's own), and a cluster with no slot in use
 * sees no free or dup, so nothing touches a parked cluster.
 * swap_discard_run() takes a cluster off the queue under si->lock, drops
 * the lock for the system call (which can be slow: a hole punch waits for
 * the file's direct I/O in flight, a discard for the device), then retakes
 * it to clear provisioned and push the cluster at the head of FREE.  Every allocation in that
 * cluster is therefore made after the discard returned, and every write
 * after that allocation:
 *
 *	free last slot -> parked (CURRENT, queued)	 under lock
 *	queue -> punch in progress (CURRENT)		 under lock
 *	punch							 no lock
 *	-> FREE, unprovisioned				 under lock
 *	alloc -> provision (fallocate) -> write		 as any cluster
 *
 * A lazy discard (d->lazy: the file that grows with the free space,
 * swap_file.c) parks nothing when slots are freed: an emptied cluster goes
 * back to FREE as it is and is reused without a system call, which keeps
 * a busy device from punching and reserving the same clusters over and
 * over (and a punch waits for the file's direct I/O).  swap_discard_run(),
 * called by an idle reclaimer, first parks free clusters that still hold
 * space (the provisioned ones, at the head of FREE; SWAP_TRIM_BATCH per
 * call), then discards them as above: the file shrinks once the program
 * has freed its memory and reclaim has gone quiet.
 *
 * Frees only park (they run on the fault path and in the pool, under
 * other locks, where a system call does not belong).  swap_slot_alloc()
 * discards up to SWAP_DISCARD_BATCH parked clusters first, without any
 * lock (so that a large unmap does not stall one allocation behind
 * thousands of discards), and all of them before it returns -ENOSPC; an
 * idle reclaimer may call swap_discard_run() too.  So -ENOSPC is exact
 * except for a cluster whose discard another thread has in progress at
 * that moment.  A discard that
 * fails leaves the cluster provisioned as it was; one that is not
 * supported (EOPNOTSUPP) turns parking off for the device.
 *
 * Locking.  Two levels, as the kernel's per-cluster locks have them since
 * its swap allocator rework, so that threads filling their own clusters
 * and faults freeing slots do not meet on one lock:
 *
 *	si->lock	the lists (heads, links), which cluster a context
 *			owns, provisioned and nr_provisioned (the space the
 *			file holds, swap_file.c), the discard queue;
 *	cluster lock	a cluster's slots in swap_map and its count
 *			(swap_cluster_lock(): SWAP_CLUSTER_LOCKS locks,
 *			cluster i under lock i % SWAP_CLUSTER_LOCKS);
 *	both		a cluster's list field: read under either.
 *
 * si->lock comes first; a thread holds at most one cluster lock (but
 * swap_info_validate(), which takes them all in order), and takes nothing
 * else under either.  The slots in use are counted per cluster lock
 * (struct swap_cluster_lock), under it; swap_inuse_slots() adds them up.
 *
 * The common path takes only a cluster lock: an allocation that fits in
 * the context's current cluster without filling it (the cluster is
 * CURRENT and the context's, so no list can change under it), and a free
 * or dup that leaves its cluster where it is.  The rest (taking a new
 * cluster, the allocation that fills one, a free that moves its cluster)
 * takes si->lock and then the cluster lock; a free drops its cluster lock
 * first and checks again once it holds both (swap_cluster_settle()).
 * Functions ending in _locked expect si->lock held and assert it, and the
 * cluster lock where they say so.  si->provision is called with si->lock
 * held; si->discard->punch with neither.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ilist.h"
#include "lockdep.h"
#include "prim.h"
#include "swap.h"
#include "swap_io.h"

/* Nonfull clusters probed for a run before a free cluster is taken (b). */
#define SWAP_NONFULL_PROBE	4
/* Parked clusters an allocation discards before it allocates. */
#define SWAP_DISCARD_BATCH	4
/*
 * Free clusters a lazy discard parks and punches per swap_discard_run()
 * (64 MiB): an idle reclaimer that is needed again is back within that
 * many punches.
 */
#define SWAP_TRIM_BATCH		32

/* The list a cluster that nobody owns belongs on, by its count. */
enum swap_cluster_list swap_cluster_list_for(const struct swap_cluster *c)
{
	if (c->count == 0)
		return CLUSTER_FREE;
	if (c->count == SWAP_CLUSTER_SLOTS)
		return CLUSTER_FULL;
	if (c->count > SWAP_CLUSTER_SLOTS - SWAP_CLUSTER_REUSE)
		return CLUSTER_NEARLY;
	return CLUSTER_NONFULL;
}

bool swap_cluster_list_ok(const struct swap_cluster *c)
{
	const enum swap_cluster_list list = swap_cluster_list_for(c);

	return c->list == list ||
	       (c->list == CLUSTER_FRAG && list == CLUSTER_NONFULL);
}

/*
 * Count delta more slots in use under the lock of cluster idx, held: a
 * plain update (no other thread writes it), atomic for the readers.
 */
static void cluster_lock_inuse_add(struct swap_info *si, uint32_t idx,
				   int32_t delta)
{
	_Atomic uint32_t *inuse =
		&si->cluster_locks[idx % SWAP_CLUSTER_LOCKS].inuse;

	atomic_store_explicit(inuse,
			      atomic_load_explicit(inuse, memory_order_relaxed) +
				      (uint32_t)delta,
			      memory_order_relaxed);
}

void swap_cluster_lock(struct swap_info *si, uint32_t idx)
{
	prim_mutex_lock(&si->cluster_locks[idx % SWAP_CLUSTER_LOCKS].m);
}

void swap_cluster_unlock(struct swap_info *si, uint32_t idx)
{
	pthread_mutex_unlock(&si->cluster_locks[idx % SWAP_CLUSTER_LOCKS].m);
}

/* Unlink cluster idx from the list it is on. */
static void cluster_list_del(struct swap_info *si, uint32_t idx)
{
	ilist_del(&si->lists[si->clusters[idx].list], swap_cluster_links(si),
		  idx);
}

/*
 * Link the unlinked cluster idx at the head or the tail of list.  Caller
 * holds si->lock and the cluster's lock (its list field changes).
 */
static void cluster_list_add(struct swap_info *si, uint32_t idx,
			     enum swap_cluster_list list, bool head)
{
	struct ilist *l = &si->lists[list];

	swap_assert_locked(si);
	swap_assert_cluster_locked(si, idx);
	si->clusters[idx].list = list;
	if (head)
		ilist_add_head(l, swap_cluster_links(si), idx);
	else
		ilist_add_tail(l, swap_cluster_links(si), idx);
}

/*
 * Put an unprovisioned cluster on FREE after the provisioned ones at its
 * head.  A walk over those: discards are rare next to allocations.
 */
static void cluster_add_free_unprovisioned(struct swap_info *si, uint32_t idx)
{
	struct ilist *l = &si->lists[CLUSTER_FREE];
	uint32_t prev = ILIST_NIL, next = ilist_first(l);

	swap_assert_cluster_locked(si, idx);
	while (next != ILIST_NIL && si->clusters[next].provisioned) {
		prev = next;
		next = ilist_next(swap_cluster_links(si), next);
	}
	si->clusters[idx].list = CLUSTER_FREE;
	ilist_add_after(l, swap_cluster_links(si), prev, idx);
}

static void cluster_move(struct swap_info *si, uint32_t idx,
			 enum swap_cluster_list list, bool head)
{
	cluster_list_del(si, idx);
	cluster_list_add(si, idx, list, head);
}

/*
 * Put cluster idx, just unlinked from CURRENT or another list, on the list
 * its count calls for: empty ones at the head of FREE (reused first, see
 * "FREE order" above), others at the tail.
 */
static void cluster_settle(struct swap_info *si, uint32_t idx)
{
	enum swap_cluster_list list = swap_cluster_list_for(&si->clusters[idx]);
	struct swap_discard *d = si->discard;

	if (list == CLUSTER_FREE && d && !d->off && !d->lazy) {
		/* Park it until discarded (see "Discard" above). */
		assert(d->nr < si->nr_clusters);
		d->queue[(d->head + d->nr) % si->nr_clusters] = idx;
		d->nr++;
		atomic_store_explicit(&d->pending, d->nr, memory_order_relaxed);
		cluster_list_add(si, idx, CLUSTER_CURRENT, false);
		return;
	}
	cluster_list_add(si, idx, list, list == CLUSTER_FREE);
}

/* Are the 2^order slots from map all free?  map is 2^order aligned. */
static bool slot_run_free(const uint8_t *map, unsigned order)
{
	unsigned nr = 1u << order;
	unsigned i;

	if (nr >= 8) {
		for (i = 0; i < nr; i += 8) {
			uint64_t w;

			memcpy(&w, map + i, sizeof(w));
			if (w)
				return false;
		}
		return true;
	}
	for (i = 0; i < nr; i++)
		if (map[i])
			return false;
	return true;
}

/*
 * First free aligned run of 2^order slots starting in [from, to) of one
 * cluster's map: its index, or -1.  from is 2^order aligned, to <= 512.
 */
static int map_find_run(const uint8_t *map, unsigned from, unsigned to,
			unsigned order)
{
	const unsigned nr = 1u << order;
	unsigned i;

	if (from >= to)
		return -1;
	if (order == 0) {
		const uint8_t *p = memchr(map + from, 0, to - from);

		return p ? (int)(p - map) : -1;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (order < 3) {
		/* A word at a time: the lowest all-zero 2- or 4-byte lane. */
		const uint64_t lo = order == 1 ? 0x0001000100010001ull :
						 0x0000000100000001ull;
		const uint64_t hi = lo << ((8u << order) - 1);

		for (i = from & ~7u; i < to; i += 8) {
			uint64_t w, zero;
			unsigned s;

			memcpy(&w, map + i, sizeof(w));
			if (i < from)	/* hide the lanes before from */
				w |= (1ull << (8 * (from - i))) - 1;
			zero = (w - lo) & ~w & hi;
			if (!zero)
				continue;
			/* The lowest flagged lane is exact (higher may not). */
			s = (unsigned)__builtin_ctzll(zero) >> 3;
			s = i + (s & ~(nr - 1));
			return s < to ? (int)s : -1;
		}
		return -1;
	}
#endif
	for (i = from; i < to; i += nr)
		if (slot_run_free(map + i, order))
			return (int)i;
	return -1;
}

/*
 * Find a free, naturally aligned run of 2^order slots in cluster idx: the
 * first at or after offset `from` if `from` is inside the cluster, else the
 * first from the cluster's start.  Return true and its offset in *offset,
 * or false if the cluster has no such run.  Costs at most one pass over the
 * cluster's 512 bytes of map.
 */
static bool cluster_find_run(const struct swap_info *si, uint32_t idx,
			     unsigned order, uint32_t from, uint32_t *offset)
{
	const uint32_t base = swap_cluster_base(idx);
	const uint8_t *map = si->swap_map + base;
	const unsigned nr = 1u << order;
	unsigned start = 0;
	int found;

	if (si->clusters[idx].count + nr > SWAP_CLUSTER_SLOTS)
		return false;
	if (from >= base && from - base < SWAP_CLUSTER_SLOTS)
		start = (from - base + nr - 1) & ~(nr - 1);

	found = map_find_run(map, start, SWAP_CLUSTER_SLOTS, order);
	if (found < 0)
		found = map_find_run(map, 0, start, order);
	/* count < 512: some slot is free */
	assert(found >= 0 || order > 0);
	if (found < 0)
		return false;
	*offset = base + (uint32_t)found;
	return true;
}

/* Reserve the space of cluster idx if it was never used; 0 or -errno. */
static int cluster_provision_locked(struct swap_info *si, uint32_t idx)
{
	struct swap_cluster *c = &si->clusters[idx];
	int err;

	swap_assert_locked(si);
	if (c->provisioned || !si->provision)
		return 0;
	err = si->provision(si, idx);
	assert(err <= 0);
	if (err)
		return err;
	c->provisioned = 1;
	si->nr_provisioned++;
	return 0;
}

/*
 * Does cluster idx, not the caller's, have a free aligned run of 2^order
 * slots?  If so, return true with the cluster's lock held and the run's
 * offset in *offset; else false, the lock dropped.
 */
static bool cluster_lock_run(struct swap_info *si, uint32_t idx,
			     unsigned order, uint32_t *offset)
{
	swap_cluster_lock(si, idx);
	if (cluster_find_run(si, idx, order, 0, offset))
		return true;
	swap_cluster_unlock(si, idx);
	return false;
}

/*
 * Take a cluster with a free aligned run of 2^order slots, for a context
 * that has none (steps b, c, d of the allocation).  On success the cluster
 * is on CURRENT, its lock held, *idx names it and *offset the run.
 * Returns 0, the provision error, or -ENOSPC.  Caller holds si->lock.
 */
static int cluster_take_locked(struct swap_info *si, unsigned order,
			       uint32_t *idx, uint32_t *offset)
{
	const struct ilist_array links = swap_cluster_links(si);
	struct ilist *nonfull = &si->lists[CLUSTER_NONFULL];
	struct ilist *frag = &si->lists[CLUSTER_FRAG];
	struct ilist *nearly = &si->lists[CLUSTER_NEARLY];
	struct ilist *free_list = &si->lists[CLUSTER_FREE];
	uint32_t probed = 0, i;
	int err = -ENOSPC;

	swap_assert_locked(si);
	/* A nonfull cluster never has 512 free slots: skip it for order 9. */
	if (order == SWAP_MAX_ORDER)
		goto free_cluster;

	/* Order 0: any slot does, fill the holes first (see "Why FRAG"). */
	if (order == 0 && (frag->nr || nonfull->nr)) {
		i = frag->nr ? ilist_first(frag) : ilist_first(nonfull);
		if (cluster_lock_run(si, i, 0, offset))
			goto take;
		assert(!"a FRAG or NONFULL cluster without a free slot");
	}
	while (order && probed < SWAP_NONFULL_PROBE && nonfull->nr) {
		i = ilist_first(nonfull);
		swap_cluster_lock(si, i);
		if (cluster_find_run(si, i, order, 0, offset))
			goto take;
		cluster_move(si, i, CLUSTER_FRAG, false);
		swap_cluster_unlock(si, i);
		probed++;
	}

free_cluster:
	if (free_list->nr) {
		i = ilist_first(free_list);
		err = cluster_provision_locked(si, i);
		if (!err) {
			/* Free: no slot to count or free, nothing to race. */
			swap_cluster_lock(si, i);
			*offset = swap_cluster_base(i);
			goto take;
		}
	}
	if (order == SWAP_MAX_ORDER)
		return err;

	/* The probed clusters went to FRAG: walk the others, then FRAG. */
	ilist_for_each(i, nonfull, links)
		if (cluster_lock_run(si, i, order, offset))
			goto take;
	ilist_for_each(i, frag, links)
		if (cluster_lock_run(si, i, order, offset))
			goto take;
	/* Then the nearly full. */
	ilist_for_each(i, nearly, links)
		if (cluster_lock_run(si, i, order, offset))
			goto take;
	return err;

take:
	cluster_move(si, i, CLUSTER_CURRENT, false);
	*idx = i;
	return 0;
}

/*
 * Hand the context's cluster back to the lists.  Caller holds si->lock and
 * the cluster's lock.
 */
static void swap_alloc_ctx_release_locked(struct swap_info *si,
					  struct swap_alloc_ctx *ctx)
{
	uint32_t idx = ctx->cluster;

	swap_assert_cluster_locked(si, idx);
	swap_assert_locked(si);
	assert(idx < si->nr_clusters);
	assert(si->clusters[idx].list == CLUSTER_CURRENT);
	cluster_list_del(si, idx);
	cluster_settle(si, idx);
	ctx->cluster = CLUSTER_NONE;
}

/*
 * Count the run of nr slots at off in cluster idx as used.  Caller holds
 * the cluster's lock (both callers took it just before: asserted in the
 * debug build only, a trylock per allocation would cost).
 */
static void cluster_use_run(struct swap_info *si, uint32_t idx, uint32_t off,
			    uint32_t nr)
{
	lock_assert_held(&si->cluster_locks[idx % SWAP_CLUSTER_LOCKS].m);
	memset(si->swap_map + off, 1, nr);
	si->clusters[idx].count += nr;
	cluster_lock_inuse_add(si, idx, (int32_t)nr);
}

/*
 * Note the slots in use now in peak_inuse_slots if more.  Caller holds
 * si->lock (and perhaps one cluster lock: the sum takes none).
 */
static void peak_update_locked(struct swap_info *si)
{
	uint32_t inuse = swap_inuse_slots(si);

	swap_assert_locked(si);
	if (inuse > atomic_load_explicit(&si->peak_inuse_slots,
					 memory_order_relaxed))
		atomic_store_explicit(&si->peak_inuse_slots, inuse,
				      memory_order_relaxed);
}

/*
 * The common path: a run in the context's own cluster that leaves the
 * cluster room, under the cluster's lock alone.  A CURRENT cluster stays
 * with its owner whatever frees do, so nothing but its slots can change.
 */
static bool swap_slot_alloc_fast(struct swap_info *si,
				 struct swap_alloc_ctx *ctx, unsigned order,
				 uint32_t *offset)
{
	const uint32_t nr = 1u << order, idx = ctx->cluster;
	uint32_t off;
	bool ok;

	if (idx == CLUSTER_NONE)
		return false;
	assert(idx < si->nr_clusters);
	swap_cluster_lock(si, idx);
	assert(si->clusters[idx].list == CLUSTER_CURRENT);
	ok = si->clusters[idx].count + nr < SWAP_CLUSTER_SLOTS &&
	     cluster_find_run(si, idx, order, ctx->next, &off);
	if (ok) {
		cluster_use_run(si, idx, off, nr);
		ctx->next = off + nr;
		*offset = off;
	}
	swap_cluster_unlock(si, idx);
	return ok;
}

static int swap_slot_alloc_locked(struct swap_info *si,
				  struct swap_alloc_ctx *ctx, unsigned order,
				  uint32_t *offset)
{
	const uint32_t nr = 1u << order;
	uint32_t idx = ctx->cluster, off;
	struct swap_cluster *c;
	int err;

	swap_assert_locked(si);
	assert(idx == CLUSTER_NONE ||
	       (idx < si->nr_clusters &&
		si->clusters[idx].list == CLUSTER_CURRENT));

	if (idx != CLUSTER_NONE) {
		swap_cluster_lock(si, idx);
		if (cluster_find_run(si, idx, order, ctx->next, &off))
			goto use;
		swap_alloc_ctx_release_locked(si, ctx);
		swap_cluster_unlock(si, idx);
	}
	err = cluster_take_locked(si, order, &idx, &off);
	if (err)
		return err;
	ctx->cluster = idx;

use:	/* the cluster's lock is held */
	c = &si->clusters[idx];
	cluster_use_run(si, idx, off, nr);
	peak_update_locked(si);
	ctx->next = off + nr;
	if (c->count == SWAP_CLUSTER_SLOTS) {
		cluster_move(si, idx, CLUSTER_FULL, false);
		ctx->cluster = CLUSTER_NONE;
	}
	swap_cluster_unlock(si, idx);
	*offset = off;
	return 0;
}

/*
 * Parked cluster idx was discarded (err 0) or not (-errno): put it at the
 * head of FREE, unprovisioned if discarded.  Caller holds si->lock and
 * the cluster's lock.
 */
static void cluster_unpark_locked(struct swap_info *si, uint32_t idx, int err)
{
	struct swap_discard *d = si->discard;
	struct swap_cluster *c = &si->clusters[idx];

	swap_assert_locked(si);
	swap_assert_cluster_locked(si, idx);
	assert(c->list == CLUSTER_CURRENT && c->count == 0);
	if (!err) {
		if (c->provisioned)
			si->nr_provisioned--;
		c->provisioned = 0;
		atomic_fetch_add_explicit(&d->discards, 1, memory_order_relaxed);
	} else {
		atomic_fetch_add_explicit(&d->failed, 1, memory_order_relaxed);
		if (err == -EOPNOTSUPP || err == -ENOTTY || err == -ENOSYS)
			d->off = true;
	}
	/*
	 * Still provisioned (the punch failed): at the head, reused first;
	 * discarded: behind the provisioned free clusters at the head, ahead
	 * of those never used (the FREE order).
	 */
	cluster_list_del(si, idx);
	if (err)
		cluster_list_add(si, idx, CLUSTER_FREE, true);
	else
		cluster_add_free_unprovisioned(si, idx);
}

/*
 * Discard up to max parked clusters (see "Discard" above); the caller holds
 * none of si's locks (the writeback thread holds its wb_mutex).  Returns
 * how many were taken off the queue.
 */
static uint32_t discard_run(struct swap_info *si, uint32_t max)
{
	struct swap_discard *d = si->discard;
	uint32_t idx, done = 0;
	int err;

	lock_assert_not_held(&si->lock);
	if (!d || !atomic_load_explicit(&d->pending, memory_order_relaxed))
		return 0;
	prim_mutex_lock(&si->lock);
	while (d->nr && done < max) {
		idx = d->queue[d->head];
		d->head = (d->head + 1) % si->nr_clusters;
		d->nr--;
		atomic_store_explicit(&d->pending, d->nr, memory_order_relaxed);
		/* Still on CURRENT: no allocation can reach it meanwhile. */
		pthread_mutex_unlock(&si->lock);
		err = d->punch(si, idx);
		assert(err <= 0);
		prim_mutex_lock(&si->lock);
		swap_cluster_lock(si, idx);
		cluster_unpark_locked(si, idx, err);
		swap_cluster_unlock(si, idx);
		done++;
	}
	pthread_mutex_unlock(&si->lock);
	return done;
}

/*
 * Lazy discard: park up to max of the free clusters that still hold
 * space, the provisioned ones at the head of FREE (see "FREE order"), so
 * that discard_run() gives their space back.
 */
static void discard_trim(struct swap_info *si, uint32_t max)
{
	struct swap_discard *d = si->discard;
	struct ilist *l = &si->lists[CLUSTER_FREE];
	uint32_t idx, n = 0;

	prim_mutex_lock(&si->lock);
	while (!d->off && l->nr && si->clusters[ilist_first(l)].provisioned &&
	       d->nr < si->nr_clusters && n++ < max) {
		idx = ilist_first(l);
		swap_cluster_lock(si, idx);
		cluster_list_del(si, idx);
		d->queue[(d->head + d->nr) % si->nr_clusters] = idx;
		d->nr++;
		cluster_list_add(si, idx, CLUSTER_CURRENT, false);
		swap_cluster_unlock(si, idx);
	}
	atomic_store_explicit(&d->pending, d->nr, memory_order_relaxed);
	pthread_mutex_unlock(&si->lock);
}

void swap_discard_run(struct swap_info *si)
{
	struct swap_discard *d = si->discard;

	if (d && d->lazy && !d->off)
		discard_trim(si, SWAP_TRIM_BATCH);
	discard_run(si, UINT32_MAX);
}

int swap_slot_alloc(struct swap_info *si, struct swap_alloc_ctx *ctx,
		    unsigned order, uint32_t *offset)
{
	int err;

	if (order > SWAP_MAX_ORDER)
		return -EINVAL;
	discard_run(si, SWAP_DISCARD_BATCH);
	if (swap_slot_alloc_fast(si, ctx, order, offset))
		return 0;
	prim_mutex_lock(&si->lock);
	err = swap_slot_alloc_locked(si, ctx, order, offset);
	pthread_mutex_unlock(&si->lock);
	if (err != -ENOSPC || !discard_run(si, UINT32_MAX))
		return err;
	/* Parked clusters were the only room left: they are free now. */
	prim_mutex_lock(&si->lock);
	err = swap_slot_alloc_locked(si, ctx, order, offset);
	pthread_mutex_unlock(&si->lock);
	return err;
}

bool swap_cluster_put_locked(struct swap_info *si, uint32_t idx,
			     uint32_t freed)
{
	struct swap_cluster *c = &si->clusters[idx];

	swap_assert_cluster_locked(si, idx);
	assert(c->count >= freed && c->list != CLUSTER_FREE);
	c->count -= freed;
	cluster_lock_inuse_add(si, idx, -(int32_t)freed);
	if (c->list == CLUSTER_CURRENT || swap_cluster_list_ok(c))
		return false;
	c->settling++;
	return true;
}

/*
 * The cluster's count changed while only its lock was held, and
 * swap_cluster_put_locked() counted this call in settling: under both
 * locks now, it may have moved or changed again (a context took it, more
 * slots were freed), so check again before moving it.
 */
void swap_cluster_settle(struct swap_info *si, uint32_t idx)
{
	struct swap_cluster *c = &si->clusters[idx];

	prim_mutex_lock(&si->lock);
	swap_cluster_lock(si, idx);
	assert(c->settling > 0);
	c->settling--;
	if (c->list != CLUSTER_CURRENT && !swap_cluster_list_ok(c)) {
		cluster_list_del(si, idx);
		cluster_settle(si, idx);
	}
	swap_cluster_unlock(si, idx);
	pthread_mutex_unlock(&si->lock);
}

void swap_alloc_ctx_init(struct swap_alloc_ctx *ctx)
{
	ctx->cluster = CLUSTER_NONE;
	ctx->next = 0;
}

void swap_alloc_ctx_release(struct swap_info *si, struct swap_alloc_ctx *ctx)
{
	const uint32_t idx = ctx->cluster;

	if (idx == CLUSTER_NONE)
		return;
	prim_mutex_lock(&si->lock);
	swap_cluster_lock(si, idx);
	swap_alloc_ctx_release_locked(si, ctx);
	swap_cluster_unlock(si, idx);
	pthread_mutex_unlock(&si->lock);
}
