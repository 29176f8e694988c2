/* SPDX-License-Identifier: MIT */
/*
 * swap_map.c - the swap device's slot map: one use count per slot, shared
 * by a process and its fork children.
 *
 * This rebuilds the swap_map half of the kernel's mm/swapfile.c: the
 * array of use counts a device gets when it is set up, swap_duplicate()
 * for a fork (here swap_slot_dup()), swap_free() (swap_slot_free()), and
 * the counts swp_swapcount() reads (swap_slot_count(),
 * swap_slots_max_count()).  Which slots a new entry gets is the cluster
 * allocator's business, swapfile.c; this file holds what the slots count,
 * and the check that the allocator's clusters agree with it.
 *
 * Slot map.  A device is an array of 4 KiB slots.  swap_map[] holds one
 * byte per slot: how many swap entries name it.  0 is free, 1 after
 * swap_slot_alloc(), more after swap_slot_dup() (fork), at most
 * SWAP_MAP_MAX.  swap_slot_free() drops one use of each slot of a range; a
 * slot whose count reaches 0 is free again.
 *
 * The map is the truth the clusters summarise: a free that brings slots
 * to 0 hands their number, cluster by cluster, to swap_cluster_put_locked()
 * (swapfile.c), which moves the cluster between its lists; a dup never
 * changes a cluster.  swap_info_validate() recounts every cluster from the
 * map.
 *
 * Fork.  The map, the cluster array and the locks live in shared memory
 * (swap_info_init()), so a child forked from the process counts its slots
 * in the same map, as the kernel's swap_map counts references from every
 * page table: a slot a parent and a child both name has count 2, and is
 * free once both have dropped it.
 *
 * Locking, as swapfile.c describes it.  A slot's count is under the lock
 * of its cluster (swap_cluster_lock()): a free, a dup or a count takes
 * only that, one cluster at a time.  A free that must move its cluster
 * to another list drops it and calls swap_cluster_settle(), which takes
 * si->lock and then the cluster's lock again.  swap_info_init() and
 * swap_info_destroy() run while no other thread uses si;
 * swap_info_validate() takes every lock.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "base.h"
#include "ilist.h"
#include "prim.h"
#include "swap.h"
#include "swap_io.h"

/* Bytes of a word, for slots_used(). */
#define BYTES_01	0x0101010101010101ull
#define BYTES_7F	0x7f7f7f7f7f7f7f7full
#define BYTES_80	0x8080808080808080ull

void swap_slot_free(struct swap_info *si, uint32_t offset, uint32_t nr)
{
	assert(offset <= si->nr_slots && nr <= si->nr_slots - offset);

	while (nr) {
		const uint32_t idx = offset >> SWAP_CLUSTER_SHIFT;
		const uint32_t end = swap_cluster_base(idx + 1);
		const uint32_t n = nr < end - offset ? nr : end - offset;
		uint32_t i, freed = 0;
		bool settle = false;

		swap_cluster_lock(si, idx);
		for (i = offset; i < offset + n; i++) {
			uint8_t *p = &si->swap_map[i];

			assert(*p > 0);	/* freeing a free slot */
			if (*p == 0)
				continue;
			if (--*p == 0)
				freed++;
		}
		if (freed)
			settle = swap_cluster_put_locked(si, idx, freed);
		swap_cluster_unlock(si, idx);
		if (settle)
			swap_cluster_settle(si, idx);
		offset += n;
		nr -= n;
	}
}

int swap_slot_dup(struct swap_info *si, uint32_t offset)
{
	const uint32_t idx = offset >> SWAP_CLUSTER_SHIFT;
	uint8_t *p;
	int err = 0;

	assert(offset < si->nr_slots);
	swap_cluster_lock(si, idx);
	p = &si->swap_map[offset];
	assert(*p > 0);		/* dup of a free slot */
	if (*p == 0)
		err = -EINVAL;
	else if (*p >= SWAP_MAP_MAX)
		err = -EOVERFLOW;
	else
		++*p;
	swap_cluster_unlock(si, idx);
	return err;
}

unsigned swap_slots_max_count(struct swap_info *si, uint32_t offset,
			      uint32_t nr)
{
	unsigned max = 0;
	uint32_t i, idx = CLUSTER_NONE;

	assert(offset <= si->nr_slots && nr <= si->nr_slots - offset);
	for (i = offset; i < offset + nr; i++) {
		if (i >> SWAP_CLUSTER_SHIFT != idx) {
			if (idx != CLUSTER_NONE)
				swap_cluster_unlock(si, idx);
			idx = i >> SWAP_CLUSTER_SHIFT;
			swap_cluster_lock(si, idx);
		}
		max = MAX(max, si->swap_map[i]);
	}
	if (idx != CLUSTER_NONE)
		swap_cluster_unlock(si, idx);
	return max;
}

unsigned swap_slot_count(struct swap_info *si, uint32_t offset)
{
	return swap_slots_max_count(si, offset, 1);
}

uint32_t swap_inuse_slots(struct swap_info *si)
{
	uint32_t inuse = 0;
	unsigned i;

	for (i = 0; i < SWAP_CLUSTER_LOCKS; i++)
		inuse += atomic_load_explicit(&si->cluster_locks[i].inuse,
					      memory_order_relaxed);
	return inuse;
}

uint32_t swap_peak_inuse_slots(struct swap_info *si)
{
	uint32_t peak = atomic_load_explicit(&si->peak_inuse_slots,
					     memory_order_relaxed);

	return MAX(peak, swap_inuse_slots(si));
}

/*
 * Set up si for a device of size_bytes, rounded down to whole clusters and
 * capped at SWP_MAX_SLOTS slots, with every cluster free.  The map and the
 * cluster array come from mmap, not malloc: this runs inside someone else's
 * process, and the pages of a large map are only touched as it fills.
 * They are shared mappings, and the lock a robust process-shared mutex:
 * a child forked from the process uses the same device (its slots are
 * counted in the same map, as the kernel's swap_map counts references
 * from every page table).  The caller puts si itself in shared memory.
 * Returns 0, -EINVAL for less than one cluster, or the mmap error.
 */
int swap_info_init(struct swap_info *si, unsigned type, uint64_t size_bytes)
{
	const int flags = MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE;
	uint64_t nr_clusters = size_bytes / SWAP_CLUSTER_BYTES;
	uint32_t i;
	void *p;
	int err;

	memset(si, 0, sizeof(*si));
	if (nr_clusters > SWP_MAX_SLOTS / SWAP_CLUSTER_SLOTS)
		nr_clusters = SWP_MAX_SLOTS / SWAP_CLUSTER_SLOTS;
	if (nr_clusters == 0)
		return -EINVAL;
	si->type = type;
	si->nr_clusters = (uint32_t)nr_clusters;
	si->nr_slots = si->nr_clusters << SWAP_CLUSTER_SHIFT;
	si->fd = -1;
	si->provision = NULL;
	si->prio = -2;
	si->node = -1;

	p = prim_map_own(si->nr_slots, flags, -1);
	if (p == MAP_FAILED)
		return -errno;
	si->swap_map = p;
	p = prim_map_own((size_t)si->nr_clusters * sizeof(*si->clusters),
			 flags, -1);
	if (p == MAP_FAILED) {
		err = -errno;
		goto err_unmap_map;
	}
	si->clusters = p;
	err = prim_shared_mutex_init(&si->lock);
	if (err)
		goto err_unmap_clusters;
	for (i = 0; i < SWAP_CLUSTER_LOCKS; i++) {
		err = prim_shared_mutex_init(&si->cluster_locks[i].m);
		if (err)
			goto err_destroy_locks;
	}

	/*
	 * Zero-filled: count 0, not provisioned, on FREE (0) with implicit
	 * links (swap_cluster_links()): all on FREE, in order, and no page of
	 * the array touched.
	 */
	_Static_assert(CLUSTER_FREE == 0, "a zero-filled cluster is free");
	for (i = 0; i < CLUSTER_NR_LISTS; i++)
		ilist_init(&si->lists[i]);
	ilist_init_all(&si->lists[CLUSTER_FREE], swap_cluster_links(si));
	return 0;

err_destroy_locks:
	while (i--)
		pthread_mutex_destroy(&si->cluster_locks[i].m);
	pthread_mutex_destroy(&si->lock);
err_unmap_clusters:
	prim_munmap(si->clusters, (size_t)si->nr_clusters * sizeof(*si->clusters));
	si->clusters = NULL;
err_unmap_map:
	prim_munmap(si->swap_map, si->nr_slots);
	si->swap_map = NULL;
	return err;
}

/* Undo swap_info_init().  No context may use si any more. */
void swap_info_destroy(struct swap_info *si)
{
	unsigned i;

	if (!si->swap_map)
		return;
	prim_munmap(si->clusters, (size_t)si->nr_clusters * sizeof(*si->clusters));
	prim_munmap(si->swap_map, si->nr_slots);
	si->clusters = NULL;
	si->swap_map = NULL;
	for (i = 0; i < SWAP_CLUSTER_LOCKS; i++)
		pthread_mutex_destroy(&si->cluster_locks[i].m);
	pthread_mutex_destroy(&si->lock);
}

/*
 * Slots in use among the n (a multiple of 8) from map, or -1 if one holds
 * a count above SWAP_MAP_MAX.
 */
static int slots_used(const uint8_t *map, unsigned n)
{
	int used = 0;
	unsigned i;

	for (i = 0; i < n; i += 8) {
		uint64_t w, nonzero;

		memcpy(&w, map + i, sizeof(w));
		/* some byte is 0xff */
		if ((~w - BYTES_01) & w & BYTES_80)
			return -1;
		nonzero = (((w & BYTES_7F) + BYTES_7F) | w) & BYTES_80;
		/* Sum the eight 0/1 bytes into the top one (no popcnt). */
		used += (int)(((nonzero >> 7) * BYTES_01) >> 56);
	}
	return used;
}

static int swap_info_validate_locked(struct swap_info *si)
{
	uint64_t inuse = 0, seen = 0;
	uint32_t i, l;

	swap_assert_locked(si);
	for (i = 0; i < SWAP_CLUSTER_LOCKS; i++)
		swap_assert_cluster_locked(si, i);
	if (!si->swap_map || !si->clusters || si->nr_clusters == 0 ||
	    si->nr_slots != swap_cluster_base(si->nr_clusters))
		return -EUCLEAN;

	for (i = 0; i < si->nr_clusters; i++) {
		const struct swap_cluster *c = &si->clusters[i];
		int used = slots_used(si->swap_map + swap_cluster_base(i),
				      SWAP_CLUSTER_SLOTS);

		if (used < 0 || (unsigned)used != c->count)
			return -EUCLEAN;
		if (c->list >= CLUSTER_NR_LISTS)
			return -EUCLEAN;
		if (c->list == CLUSTER_CURRENT) {
			if (c->count >= SWAP_CLUSTER_SLOTS)
				return -EUCLEAN;
		} else if (!swap_cluster_list_ok(c) && !c->settling) {
			/* (a free about to move it may have left it behind) */
			return -EUCLEAN;
		}
		inuse += (unsigned)used;
	}
	if (inuse != swap_inuse_slots(si))
		return -EUCLEAN;

	for (l = 0; l < CLUSTER_NR_LISTS; l++) {
		const struct ilist *h = &si->lists[l];

		/* bad links, a cycle, or a wrong count */
		if (!ilist_is_valid(h, swap_cluster_links(si)))
			return -EUCLEAN;
		ilist_for_each(i, h, swap_cluster_links(si))
			if (si->clusters[i].list != l)
				return -EUCLEAN;
		seen += h->nr;
	}
	/* Each walk only meets its own clusters: all met means each once. */
	if (seen != si->nr_clusters)
		return -EUCLEAN;
	/* Parked clusters: on CURRENT, empty. */
	for (i = 0; si->discard && i < si->discard->nr; i++) {
		const struct swap_discard *d = si->discard;
		uint32_t idx = d->queue[(d->head + i) % si->nr_clusters];

		if (d->nr > si->nr_clusters || idx >= si->nr_clusters ||
		    si->clusters[idx].list != CLUSTER_CURRENT ||
		    si->clusters[idx].count)
			return -EUCLEAN;
	}
	return 0;
}

/*
 * Recount every cluster from swap_map and check counts, list membership,
 * links and lengths, and swap_inuse_slots().  0 or -EUCLEAN.  O(nr_slots):
 * for tests and debug assertions.  Takes every lock of the device: the
 * only function that holds more than one cluster lock (in index order).
 */
int swap_info_validate(struct swap_info *si)
{
	unsigned i;
	int err;

	prim_mutex_lock(&si->lock);
	for (i = 0; i < SWAP_CLUSTER_LOCKS; i++)
		prim_mutex_lock(&si->cluster_locks[i].m);
	err = swap_info_validate_locked(si);
	for (i = SWAP_CLUSTER_LOCKS; i--;)
		pthread_mutex_unlock(&si->cluster_locks[i].m);
	pthread_mutex_unlock(&si->lock);
	return err;
}
