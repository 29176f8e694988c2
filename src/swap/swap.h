/* SPDX-License-Identifier: MIT */
/*
 * swap.h - the swap device: slot map (swap_map.c), cluster allocator
 * (swapfile.c), device I/O (page_io.c).
 *
 * A device is carved into 4 KiB slots; 512 slots make a 2 MiB cluster.
 * Each slot has a use count (swap_map, as the kernel's): 0 is free, n is
 * referenced by n page table entries (more than one after fork).
 * Allocation hands out 2^order contiguous slots, naturally aligned, from the
 * allocating context's current cluster; a context that has none takes a
 * partially used cluster that has room, else a free one.
 *
 * Swap entries name a slot on a device: a 32-bit value, type (device index
 * + 1) in the top SWP_TYPE_BITS bits, offset below; 0 means "no entry".
 */
#ifndef USWAP_SWAP_H
#define USWAP_SWAP_H

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ilist.h"
#include "lockdep.h"

#define SWP_TYPE_BITS		4
#define SWP_OFFSET_BITS		(32 - SWP_TYPE_BITS)
#define SWP_OFFSET_MASK		((1u << SWP_OFFSET_BITS) - 1)
#define SWP_MAX_SLOTS		(1u << SWP_OFFSET_BITS)	/* 1 TiB of 4 KiB slots */
#define SWAP_MAX_TYPES		((1u << SWP_TYPE_BITS) - 1)	/* devices */

#define SWAP_SLOT_SHIFT		12
#define SWAP_SLOT_SIZE		(1u << SWAP_SLOT_SHIFT)
#define SWAP_CLUSTER_SHIFT	9			/* 512 slots */
#define SWAP_CLUSTER_SLOTS	(1u << SWAP_CLUSTER_SHIFT)
#define SWAP_CLUSTER_BYTES	(SWAP_CLUSTER_SLOTS * SWAP_SLOT_SIZE)
#define SWAP_MAP_MAX		0xfe			/* largest use count */
#define SWAP_MAX_ORDER		SWAP_CLUSTER_SHIFT	/* 2 MiB folios */

typedef uint32_t swp_entry_t;

static inline swp_entry_t swp_entry(unsigned type, uint32_t offset)
{
	return ((swp_entry_t)(type + 1) << SWP_OFFSET_BITS) | offset;
}

static inline unsigned swp_type(swp_entry_t e)
{
	return (e >> SWP_OFFSET_BITS) - 1;
}

static inline uint32_t swp_offset(swp_entry_t e)
{
	return e & SWP_OFFSET_MASK;
}

/* Cluster list membership (struct swap_cluster.list). */
enum swap_cluster_list {
	CLUSTER_FREE,		/* no slot used */
	CLUSTER_NONFULL,	/* some slots used, SWAP_CLUSTER_REUSE or more free */
	CLUSTER_FRAG,		/* as NONFULL, but a large folio found no run */
	CLUSTER_NEARLY,		/* fewer than SWAP_CLUSTER_REUSE free, not full */
	CLUSTER_FULL,		/* every slot used */
	CLUSTER_CURRENT,	/* owned by an allocating context */
	CLUSTER_NR_LISTS
};

#define CLUSTER_NONE	UINT32_MAX

struct swap_cluster {
	uint16_t count;		/* slots in use */
	/*
	 * Frees that changed count and will move the cluster to the list it
	 * now calls for (swap_cluster_settle()): until then the cluster may
	 * be on another.  Under the cluster's lock.
	 */
	uint16_t settling;
	uint8_t list;		/* enum swap_cluster_list */
	uint8_t provisioned;	/* file space reserved (fallocate done) */
	struct ilist_link link;	/* on its list: swap_cluster_links() */
};

/*
 * Per allocating context state (the kernel's per-CPU cluster): one per
 * reclaiming thread, so that threads fill different clusters.  Lives in
 * the thread's own struct; initialise with swap_alloc_ctx_init().
 */
struct swap_alloc_ctx {
	uint32_t cluster;	/* current cluster, or CLUSTER_NONE */
	uint32_t next;		/* next offset to try inside it */
};

/*
 * A cluster that was full is taken for allocation again only once this many
 * of its slots are free (swapfile.c, "Why NEARLY").
 */
#define SWAP_CLUSTER_REUSE	64

/* Locks over the clusters: cluster i is under cluster_locks[i % this]. */
#define SWAP_CLUSTER_LOCKS	32

/*
 * One of them, with the count of slots in use in the clusters it covers
 * (changed under m, read without it: swap_inuse_slots() adds them up),
 * alone on its cache line: threads that allocate and free in different
 * clusters touch no line in common, not even a device-wide counter.
 */
struct swap_cluster_lock {
	_Alignas(64) pthread_mutex_t m;
	_Atomic uint32_t inuse;
};

/*
 * One swap device.  Two levels of locks, as swapfile.c details: `lock`
 * protects the cluster lists, and cluster_locks[] the slot map and counts
 * of the clusters they cover; `lock` is taken before a cluster lock, never
 * after, and nothing else is taken while either is held.
 */
struct swap_info {
	pthread_mutex_t lock;
	struct swap_cluster_lock cluster_locks[SWAP_CLUSTER_LOCKS];
	unsigned type;			/* index in the runtime's device table */
	uint32_t nr_slots;		/* usable slots (whole clusters) */
	uint32_t nr_clusters;
	uint8_t *swap_map;		/* use count per slot */
	struct swap_cluster *clusters;
	struct ilist lists[CLUSTER_NR_LISTS];	/* of cluster indices */
	/* I/O side (page_io.c); fd < 0 for a device without a file (tests). */
	int fd;
	bool direct;			/* fd opened with O_DIRECT */
	/*
	 * Called with `lock` held when a cluster that was never used is about
	 * to hand out its first slot: reserve its space (fallocate).  NULL for
	 * no reservation.  On failure the cluster stays free and unreserved
	 * and the allocation fails with the error.
	 */
	int (*provision)(struct swap_info *si, uint32_t cluster);
	/*
	 * Growth (swap_file.c), under `lock`: clusters whose space is
	 * reserved (provisioned set), and how far the file extends (a block
	 * device: the end of the furthest cluster ever used, what a wipe
	 * covers).
	 */
	uint32_t nr_provisioned;
	uint64_t file_end;
	bool blkdev;			/* fd is a block device */
	bool wipe;			/* the user's file or device: emptied
					   when its use ends (swap_file_wipe) */
	/*
	 * A file without a size: it grows only while its file system keeps
	 * as much free space as it holds (swap_cluster_provision()).
	 */
	bool grow_free;
	/*
	 * Discard of freed clusters (swap_io.h), NULL when off: swap_file.c
	 * sets it up; swapfile.c parks and queues clusters in it under `lock`.
	 */
	struct swap_discard *discard;
	/*
	 * Who holds each slot (swapon.c): one bitmap per member of the
	 * process tree, owner_words words each, in shared memory, so that
	 * the slots of a process that ended without freeing them (kill -9,
	 * exec) can be freed by the others.
	 */
	_Atomic uint64_t *owners;
	uint32_t owner_words;
	/*
	 * Integrity (swap_io.h): the crc32c of each slot's 4 KiB as last
	 * written, one per slot, in shared memory as the owners are; NULL
	 * with checksums off (--verify off) or without a file.  A slot's
	 * entry is written by the thread that wrote the slot, before the
	 * slot is published to readers.
	 */
	uint32_t *csum;
	/*
	 * Encryption at rest (crypt.h, --encrypt on): the device's salt, nonce
	 * counter and per-slot tags, in shared memory; NULL when off or
	 * without a file.  When set, the device gets only ciphertext
	 * (swap_seal.c) and csum is NULL: the tag is the check.
	 */
	struct swap_crypt *crypt;
	/*
	 * A device on a Redis Cluster (swap_remote.h), NULL for the others;
	 * such a device has no file (fd < 0).
	 */
	struct swap_remote *remote;
	_Atomic unsigned logged;	/* SWAP_LOGGED_* (swap_io.h): said once */
	char path[256];			/* for /proc/swaps-like output */
	int prio;
	int node;
	/*
	 * The most slots in use at once, as seen by each allocation that
	 * takes `lock` (a context changing or filling its cluster) and when
	 * swap_peak_inuse_slots() is read: a high that lasts less than a
	 * cluster's worth of allocations of each context may be missed.
	 * Written under `lock`.
	 */
	_Atomic uint32_t peak_inuse_slots;
};

/* Does si store pages (a file, a block device or a remote store)? */
static inline bool swap_has_storage(const struct swap_info *si)
{
	return si->fd >= 0 || si->remote;
}

/* swap_map.c: the slot map (pure logic, testable without a file). */
int swap_info_init(struct swap_info *si, unsigned type, uint64_t size_bytes);
void swap_info_destroy(struct swap_info *si);
/* Drop one use of each of nr slots from offset; a slot reaching 0 is free. */
void swap_slot_free(struct swap_info *si, uint32_t offset, uint32_t nr);
/* Add one use to a slot (fork); -EOVERFLOW past SWAP_MAP_MAX. */
int swap_slot_dup(struct swap_info *si, uint32_t offset);
/* Use count of a slot. */
unsigned swap_slot_count(struct swap_info *si, uint32_t offset);
/* The highest use count among nr slots from offset (one lock). */
unsigned swap_slots_max_count(struct swap_info *si, uint32_t offset,
			      uint32_t nr);
/* Slots in use now (a sum over the cluster locks, taken by none). */
uint32_t swap_inuse_slots(struct swap_info *si);
/* The most slots in use at once so far (see peak_inuse_slots). */
uint32_t swap_peak_inuse_slots(struct swap_info *si);
/* Check every invariant of the lists and counts; 0 or -EUCLEAN. */
int swap_info_validate(struct swap_info *si);

/* swapfile.c: the cluster allocator (pure logic as well). */
void swap_alloc_ctx_init(struct swap_alloc_ctx *ctx);
/* Return the context's current cluster to the lists (thread exit). */
void swap_alloc_ctx_release(struct swap_info *si, struct swap_alloc_ctx *ctx);
/*
 * Allocate 2^order contiguous, naturally aligned slots with use count 1.
 * *offset gets the first.  -ENOSPC when no cluster has room for that order.
 * A cluster used for the first time is first passed to si->provision.
 */
int swap_slot_alloc(struct swap_info *si, struct swap_alloc_ctx *ctx,
		    unsigned order, uint32_t *offset);

/*
 * swapfile.c, for swap_map.c only: what a change of use counts needs of
 * the clusters.
 */
/* The list a cluster that nobody owns belongs on, by its count. */
enum swap_cluster_list swap_cluster_list_for(const struct swap_cluster *c);
/* Is a cluster that nobody owns on a list its count allows (FRAG too)? */
bool swap_cluster_list_ok(const struct swap_cluster *c);
/*
 * freed slots of cluster idx became free; the caller holds the cluster's
 * lock.  True if the cluster must change lists: the caller then drops the
 * cluster's lock and calls swap_cluster_settle().
 */
bool swap_cluster_put_locked(struct swap_info *si, uint32_t idx,
			     uint32_t freed);
/* Move cluster idx to the list its count calls for; takes both locks. */
void swap_cluster_settle(struct swap_info *si, uint32_t idx);
/* Lock and unlock the lock over cluster idx (after si->lock, if both). */
void swap_cluster_lock(struct swap_info *si, uint32_t idx);
void swap_cluster_unlock(struct swap_info *si, uint32_t idx);

/*
 * The clusters as the element array of the cluster lists (ilist.h), with
 * implicit links: a cluster that no list operation has touched since
 * swap_info_init() is linked to its neighbours in index order, so that a
 * new device has every cluster on FREE in index order without a write to
 * its cluster array, whose pages are then touched only where clusters
 * are used.
 */
static inline struct ilist_array swap_cluster_links(struct swap_info *si)
{
	return ILIST_ARRAY_IMPLICIT(si->clusters, si->nr_clusters, link);
}

/* swap_map.c and swapfile.c: the first slot of cluster idx. */
static inline uint32_t swap_cluster_base(uint32_t idx)
{
	return idx << SWAP_CLUSTER_SHIFT;
}

/* Debug check that the caller holds si->lock (by some thread; in the
   debug build, by this one: lockdep.h). */
static inline void swap_assert_locked(struct swap_info *si)
{
	assert(pthread_mutex_trylock(&si->lock) == EBUSY);
	lock_assert_held(&si->lock);
	(void)si;
}

/* Debug check that the lock over cluster idx is held (by some thread; in
   the debug build, by this one). */
static inline void swap_assert_cluster_locked(struct swap_info *si,
					      uint32_t idx)
{
	assert(pthread_mutex_trylock(
		       &si->cluster_locks[idx % SWAP_CLUSTER_LOCKS].m) == EBUSY);
	lock_assert_held(&si->cluster_locks[idx % SWAP_CLUSTER_LOCKS].m);
	(void)si;
	(void)idx;
}

/* swap_file.c: device files; page_io.c: their I/O. */
/*
 * Open directory dir to make or open swap files in: an O_PATH descriptor,
 * checked on itself (owned by the user or root; written by nobody else
 * unless sticky).  fd or -errno, the reason logged unless quiet.
 */
int swap_dir_open(const char *dir, bool quiet);
/*
 * Create the swap file for si (already initialised with swap_info_init)
 * in dir: unnamed, mode 0600, sparse, of size bytes.  0 or -errno.
 */
int swap_file_create(struct swap_info *si, const char *dir, uint64_t size);
void swap_file_close(struct swap_info *si);
/*
 * Discard what a device the user named holds: a file is truncated to
 * nothing; a block device's first len bytes are discarded (BLKDISCARD),
 * or with zero, zeroed (BLKZEROOUT, which may write every byte; else
 * discarded).  0 or -errno.
 */
int swap_file_wipe(int fd, bool blkdev, uint64_t len, bool zero);
/* No slot is left on si: say so once, with the figures. */
void swap_file_full(struct swap_info *si);
/*
 * Write nr slots from iov; whole or -errno (short writes are errors).  On
 * a device that encrypts, iov's buffer is encrypted in place (scratch).
 */
struct iovec;
int swap_write(struct swap_info *si, uint32_t offset, const struct iovec *iov,
	       int iovcnt, size_t len);
int swap_read(struct swap_info *si, uint32_t offset, void *buf, size_t len);
/* Reserve the file blocks of a cluster (fallocate); 0 or -errno. */
int swap_cluster_provision(struct swap_info *si, uint32_t cluster);

#endif /* USWAP_SWAP_H */
