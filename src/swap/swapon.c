// SPDX-License-Identifier: MIT
/*
 * swapon.c - the runtime's swap devices (the kernel's swapon, and the
 * device choice of folio_alloc_swap / get_swap_pages).
 *
 * Devices come from the options: each --swap SPEC and each line of the
 * --swaptab file is one device, numbered (its swap type) in that order; with
 * neither, one unnamed file in the swap directory; with "swap none", one
 * device without a file, which only gives the compressed pool slots to key
 * its entries by.  A named path is a block device (opened O_EXCL, so that
 * nothing else uses it meanwhile) or a regular file.  Every one is opened
 * through its directory and checked on descriptors, never on a path
 * (swap_open.c): no symbolic link, no other type of file ever opened, an
 * existing regular file the user's and nobody else's to read or write
 * (the program's memory goes there).  A path that does not exist gets an
 * unnamed file of ours in its directory, as the default one (swap_file.c):
 * nothing is left behind, whatever happens to the process, and each
 * process of a tree makes its own until they share one runtime.  An
 * existing file that another uswap process holds (flock) is replaced, for
 * this process, by an unnamed file in the same directory, so that it lands
 * on the same file system and node.  An existing file is emptied when it
 * is taken, and by uswap run when PROG has ended (swap_open.c), so that
 * what the program swapped does not outlive the run.
 *
 * Size.  A block device is used whole, or up to size=; a file up to
 * size= or --swap-size; a file without either grows with the free space
 * of its file system and shrinks as clusters are freed (swap_file.c).
 *
 * Choosing a device.  swapavail.c keeps one list per NUMA node, as the
 * kernel does: by priority, high first, equal priorities in turn, a device
 * attached to the node promoted on that node's list.  The node is the one
 * of the memory going out (policy "page") or of the reclaiming thread
 * ("cpu").  A reclaimer keeps using the device it got for a node for a
 * cluster's worth of slots (2 MiB), so that consecutive folios go to
 * consecutive slots and out in one write; then it asks the list again,
 * which rotates equals (the kernel's per-CPU cluster does the same).  A
 * device with no slot left leaves the lists and comes back when a slot is
 * freed (also one whose file system is full: ENOSPC); one whose writes
 * fail leaves them for good.  A large folio needs 2^order contiguous
 * slots on one device; when no device has such a run, it is split: each
 * page gets a slot of its own (thp_swpout_fallback, mthp_*_swpout_fallback).
 *
 * Each device with a file also keeps the crc32c of every slot (swap_io.h),
 * allocated here beside the owners, in shared memory as they are; or, with
 * --encrypt on, its encryption state (crypt.h: a salt, a nonce counter, a
 * tag per slot, and a reference on the runtime's one key) instead.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "crypt.h"
#include "base.h"
#include "fdtable.h"
#include "log.h"
#include "memcontrol.h"
#include "prim.h"
#include "runtime.h"
#include "swap.h"
#include "threadcpu.h"
#include "uswap.h"
#include "zswap.h"
#include "swap_io.h"
#include "swapdev.h"
#include "swap_remote.h"

static int provision(struct swap_info *si, uint32_t cluster)
{
	return swap_cluster_provision(si, cluster);
}

/*
 * Make si an unnamed file of ours in dir, of size bytes, or, with size 0,
 * one that grows with the free space of dir's file system and gives freed
 * clusters back (discard, as with discard set).  0 or -errno (logged).
 */
static int own_file(struct swap_info *si, unsigned type, const char *dir,
		    uint64_t size, bool discard)
{
	bool grow = !size;
	int dirfd, err;

	if (grow) {
		dirfd = swap_dir_open(dir, false);
		if (dirfd < 0)
			return dirfd;
		size = swap_share_size(dirfd);
		prim_close(dirfd);
	}
	err = swap_info_init(si, type, size);
	if (err)
		goto err_log;
	err = swap_file_create(si, dir, size);
	if (err) {
		swap_info_destroy(si);
		goto err_log;
	}
	si->grow_free = grow;
	if (grow || discard) {
		err = swap_discard_enable(si);
		if (err)
			uswap_log("swap file in %s: cannot give freed space back (%s); going on without",
				  dir, strerror(-err));
		else
			si->discard->lazy = !discard;
	}
	return 0;
err_log:
	uswap_log("cannot create a swap file in %s: %s", dir, strerror(-err));
	return err;
}

/*
 * A device on a Redis Cluster (swap_remote.c): slots without a file, of
 * size= or --swap-size, else SWAP_REMOTE_DEFAULT_SIZE; its freed clusters
 * are discarded (their values deleted) before they are used again.
 */
static int swapon_remote(struct uswap_runtime *rt, unsigned type,
			 const struct swap_spec *sp)
{
	struct swap_info *si = &rt->swap[type];
	uint64_t size = sp->size ? sp->size : rt->opt.swap_size;
	char why[384];
	int err;

	if (!size)
		size = SWAP_REMOTE_DEFAULT_SIZE;
	size = MIN(size, SWAP_SPEC_MAX_SIZE) & ~((uint64_t)SWAP_CLUSTER_BYTES - 1);
	err = swap_info_init(si, type, size);
	if (err)
		return err;
	err = swap_remote_create(si, sp, why, sizeof(why));
	if (!err)
		err = swap_discard_enable(si);
	if (err) {
		uswap_log("swap device %s: %s", sp->path,
			  si->remote ? strerror(-err) : why);
		swap_remote_destroy(si);
		swap_info_destroy(si);
		return err;
	}
	_Static_assert(sizeof(si->path) == sizeof(sp->path), "path sizes");
	memcpy(si->path, sp->path, sizeof(si->path));
	rt->swap_kind[type] = "remote";
	return 0;
}

/* Set up device `type` from a spec.  0 or -errno (logged). */
static int swapon_spec(struct uswap_runtime *rt, unsigned type,
		       const struct swap_spec *sp)
{
	struct swap_info *si = &rt->swap[type];
	uint64_t size = sp->size ? sp->size : rt->opt.swap_size;
	char dir[SWAP_PATH_MAX];
	bool blk, direct;
	int fd, err;

	if (sp->remote)
		return swapon_remote(rt, type, sp);
	fd = swap_spec_open(sp->path, sp->direct, true, false, &blk, &direct);
	if (fd >= 0 && !blk && prim_flock(fd, LOCK_EX | LOCK_NB) < 0) {
		prim_close(fd);
		fd = -EBUSY;	/* another uswap process holds it */
	}
	if (fd == -ENOENT || fd == -EBUSY) {
		/*
		 * Missing: a file of our own there, unnamed, as the default
		 * one.  Held by another process of the tree: the same, beside
		 * it, so that it lands on the same file system and node.
		 */
		swap_dir_of(sp->path, dir, sizeof(dir));
		err = own_file(si, type, dir, size, sp->discard);
		if (err) {
			if (fd == -EBUSY)
				uswap_log("swap file %s is in use and no file can be made beside it",
					  sp->path);
			return err;
		}
		if (fd == -ENOENT)
			snprintf(si->path, sizeof(si->path), "%.240s (deleted)",
				 sp->path);
		rt->swap_kind[type] = "file";
		return 0;
	}
	if (fd < 0) {
		uswap_log("cannot open swap device %s: %s", sp->path,
			  strerror(-fd));
		return fd;
	}
	if (blk) {
		uint64_t bytes = 0;

		if (prim_ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			bytes = 0;
		size = size ? MIN(size, bytes) : bytes;
	} else {
		/* Ours now: what an earlier run left in it goes first. */
		err = swap_file_wipe(fd, false, 0, false);
		if (err) {
			uswap_log("swap file %s: cannot empty it: %s", sp->path,
				  strerror(-err));
			prim_close(fd);
			return err;
		}
		if (!size)
			size = swap_share_size(fd);
	}
	size &= ~((uint64_t)SWAP_CLUSTER_BYTES - 1);
	if (size < SWAP_CLUSTER_BYTES) {
		uswap_log("swap device %s is smaller than one 2 MiB cluster", sp->path);
		prim_close(fd);
		return -ENOSPC;
	}
	err = swap_info_init(si, type, size);
	if (err) {
		prim_close(fd);
		return err;
	}
	si->fd = fd_install(fd, FD_DEVICE);
	si->direct = direct;
	si->blkdev = blk;
	si->wipe = true;
	si->grow_free = !blk && !sp->size && !rt->opt.swap_size;
	si->provision = provision;
	if (sp->discard || si->grow_free) {
		err = swap_discard_enable(si);
		if (err)
			uswap_log("swap device %s: discard unavailable (%s); going on without",
				  sp->path, strerror(-err));
		else
			si->discard->lazy = !sp->discard;
	}
	_Static_assert(sizeof(si->path) == sizeof(sp->path), "path sizes");
	memcpy(si->path, sp->path, sizeof(si->path));
	rt->swap_kind[type] = blk ? "partition" : "file";
	return 0;
}

/* The devices the options name: --swap lines, then the swaptab's. */
static int gather_specs(struct uswap_runtime *rt, struct swap_spec *specs,
			unsigned *n)
{
	const char *p = rt->opt.swap;
	char why[384], line[512];
	unsigned got = 0;
	int err;

	*n = 0;
	while (*p) {
		size_t len = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		if (!len)
			continue;
		if (*n == SWAP_MAX_DEVICES) {
			uswap_log("too many swap devices (at most %u)", SWAP_MAX_DEVICES);
			return -E2BIG;
		}
		if (swap_spec_parse(line, &specs[*n], why, sizeof(why))) {
			uswap_log("%s", why);
			return -EINVAL;
		}
		++*n;
	}
	if (!rt->opt.swaptab[0])
		return 0;
	err = swaptab_parse_file(rt->opt.swaptab, specs + *n,
				 SWAP_MAX_DEVICES - *n, &got, why, sizeof(why));
	if (err) {
		uswap_log("%s", why);
		return err;
	}
	*n += got;
	return 0;
}

/* Node of every CPU, for the "cpu" policy. */
static void read_cpu_nodes(struct uswap_runtime *rt, const char *root)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	unsigned c;

	rt->nr_cpus = (unsigned)MIN(MAX(cpus, 1L), (long)MAX_CPUS);
	for (c = 0; c < rt->nr_cpus; c++)
		rt->cpu_node[c] = (int16_t)MAX(sysfs_cpu_node(root, c), 0);
}

/* Does device si encrypt: --encrypt on, or a remote one not encrypt=off. */
static bool dev_encrypts(const struct uswap_runtime *rt,
			 const struct swap_info *si)
{
	if (si->remote)
		return (rt->opt.flags & USWAP_OPT_ENCRYPT) ||
		       swap_remote_wants_crypt(si);
	return (rt->opt.flags & USWAP_OPT_ENCRYPT) && si->fd >= 0;
}

/*
 * The checksum of every slot (swap_io.h), beside the slot map and in
 * shared memory as it is: after fork, a slot one process wrote may be read
 * by the other.  None with --verify off, or without a file, or when the
 * device encrypts (each slot's tag authenticates it).  A remote device
 * always has one check or the other (swap_remote.c).
 */
static int csum_alloc(struct uswap_runtime *rt, struct swap_info *si)
{
	if (!swap_has_storage(si) || dev_encrypts(rt, si) ||
	    ((rt->opt.flags & USWAP_OPT_NO_VERIFY) && !si->remote))
		return 0;
	si->csum = prim_alloc_shared(swap_csum_bytes(si));
	return si->csum ? 0 : -ENOMEM;
}

static void csum_free(struct swap_info *si)
{
	prim_free(si->csum, swap_csum_bytes(si));
	si->csum = NULL;
}

/*
 * --encrypt on, or a remote device: one new key for the runtime, and each
 * device that encrypts its encryption state, which holds a reference on
 * the key.
 */
static int crypt_alloc(struct uswap_runtime *rt)
{
	struct crypt_key *key;
	unsigned k, nr = 0;
	int err;

	for (k = 0; k < rt->nr_swap; k++)
		nr += dev_encrypts(rt, &rt->swap[k]);
	if (!nr)
		return 0;
	err = crypt_key_create(&key);
	if (err)
		goto out;
	for (k = 0; !err && k < rt->nr_swap; k++)
		if (dev_encrypts(rt, &rt->swap[k]))
			err = crypt_dev_create(key, rt->swap[k].nr_slots,
					       &rt->swap[k].crypt);
	crypt_key_put(key);	/* the devices hold it now */
out:
	if (err)
		uswap_log("cannot set up swap encryption: %s", strerror(-err));
	return err;
}

/* Tests: the faults USWAP_INJECT names for these devices (prim.c). */
static int inject_faults(struct uswap_runtime *rt)
{
	int fds[SWAP_MAX_TYPES];
	unsigned k;

	for (k = 0; k < rt->nr_swap; k++)
		fds[k] = rt->swap[k].fd;
	return prim_inject_init(fds, rt->nr_swap);
}

int swapon_all(struct uswap_runtime *rt)
{
	struct swap_spec specs[SWAP_MAX_DEVICES];
	int prio[SWAP_MAX_DEVICES], node[SWAP_MAX_DEVICES];
	const char *root = sysfs_root();
	unsigned n = 0, k;
	int err;

	err = gather_specs(rt, specs, &n);
	if (err)
		return err;
	rt->swap = prim_alloc_shared(SWAP_MAX_TYPES * sizeof(*rt->swap));
	if (!rt->swap)
		return -ENOMEM;
	rt->nr_nodes = (unsigned)MAX(sysfs_nr_nodes(root), 1);
	read_cpu_nodes(rt, root);
	if (!n) {
		/* One unnamed file in the swap directory, or none at all. */
		uint64_t size = rt->opt.swap_size;

		if (rt->opt.flags & USWAP_OPT_NO_SWAP_FILE) {
			/* Room to name 64 budgets' worth of pages: 1 byte each. */
			size = MAX(rt->opt.max * 64, 1ull << 30);
			size = MIN(size, (uint64_t)SWP_MAX_SLOTS << SWAP_SLOT_SHIFT);
			size &= ~((uint64_t)SWAP_CLUSTER_BYTES - 1);
		}
		if (rt->opt.flags & USWAP_OPT_NO_SWAP_FILE) {
			err = swap_info_init(&rt->swap[0], 0, size);
			if (err) {
				swapoff_all(rt);
				return err;
			}
			snprintf(rt->swap[0].path, sizeof(rt->swap[0].path), "(none)");
			rt->swap_kind[0] = "virtual";
		} else {
			/* size 0 (no --swap-size): it grows on demand. */
			err = own_file(&rt->swap[0], 0, rt->opt.swap_dir, size,
				       false);
			if (err) {
				swapoff_all(rt);
				return err;
			}
			rt->swap_kind[0] = "file";
		}
		rt->nr_swap = 1;
		prio[0] = SWAP_PRIO_AUTO;
		node[0] = (rt->opt.flags & USWAP_OPT_NO_SWAP_FILE) ? -1 :
			  sysfs_path_node(root, rt->opt.swap_dir);
	}
	for (k = 0; k < n; k++) {
		err = swapon_spec(rt, k, &specs[k]);
		if (err) {
			swapoff_all(rt);
			return err;
		}
		rt->nr_swap = k + 1;
		prio[k] = specs[k].prio;
		node[k] = specs[k].node >= 0 ? specs[k].node :
			  specs[k].remote ? -1 :
			  sysfs_path_node(root, specs[k].path);
	}
	for (k = 0; k < rt->nr_swap; k++) {
		if (node[k] >= (int)rt->nr_nodes)
			node[k] = -1;	/* a node this machine lacks */
		rt->swap[k].node = node[k];
	}
	err = swap_avail_create(&rt->avail, rt->nr_nodes, prio, node,
				rt->nr_swap);
	if (err) {
		uswap_log("cannot build the swap device lists: %s", strerror(-err));
		swapoff_all(rt);
		return err;
	}
	for (k = 0; k < rt->nr_swap; k++) {
		struct swap_info *si = &rt->swap[k];

		si->prio = swap_avail_prio(rt->avail, k);
		si->owner_words = (si->nr_slots + 63) / 64;
		si->owners = prim_alloc_shared((size_t)TREE_MAX_MEMBERS *
					       si->owner_words * sizeof(uint64_t));
		if (!si->owners || csum_alloc(rt, si)) {
			swapoff_all(rt);
			return -ENOMEM;
		}
	}
	err = crypt_alloc(rt);
	if (!err)
		err = inject_faults(rt);
	if (err)
		swapoff_all(rt);
	return err;
}

/*
 * Another process of the tree still uses the devices: let go of this
 * process's descriptors and mappings, and write nothing in them.
 */
static void swap_detach(struct uswap_runtime *rt)
{
	unsigned k;

	for (k = 0; k < rt->nr_swap; k++) {
		struct swap_info *si = &rt->swap[k];

		if (si->fd >= 0)
			prim_fd_close(si->fd);
		if (si->discard)
			prim_munmap(si->discard, si->discard->alloc_len);
		prim_free((void *)si->owners, (size_t)TREE_MAX_MEMBERS *
			  si->owner_words * sizeof(uint64_t));
		prim_free(si->csum, swap_csum_bytes(si));
		crypt_dev_release(si->crypt);	/* si->crypt stays: shared */
		swap_remote_detach(si);
		prim_munmap(si->clusters,
			    (size_t)si->nr_clusters * sizeof(*si->clusters));
		prim_munmap(si->swap_map, si->nr_slots);
	}
}

void swapoff_all(struct uswap_runtime *rt)
{
	unsigned k;

	if (rt->avail)
		swap_avail_destroy(rt->avail);
	rt->avail = NULL;
	if (rt->swap && rt->memcg && atomic_load(&rt->memcg->nr_live) > 1) {
		swap_detach(rt);
		rt->nr_swap = 0;
	}
	for (k = 0; k < rt->nr_swap; k++) {
		struct swap_info *si = &rt->swap[k];

		if (si->owners)
			prim_free((void *)si->owners, (size_t)TREE_MAX_MEMBERS *
				  si->owner_words * sizeof(uint64_t));
		csum_free(si);
		crypt_dev_release(si->crypt);
		si->crypt = NULL;
		if (si->wipe && si->fd >= 0)
			swap_file_wipe(si->fd, si->blkdev, si->file_end, true);
		swap_remote_destroy(si);
		swap_file_close(si);
		swap_info_destroy(si);
	}
	rt->nr_swap = 0;
	if (rt->swap)
		prim_free(rt->swap, SWAP_MAX_TYPES * sizeof(*rt->swap));
	rt->swap = NULL;
}

/* Leave the lists: no slot left on dev. */
static void device_full(struct uswap_runtime *rt, unsigned dev)
{
	if (atomic_exchange(&rt->swap_dev_full[dev], true))
		return;
	swap_avail_full(rt->avail, dev);
	if (rt->swap[dev].fd >= 0)
		swap_file_full(&rt->swap[dev]);
}

/* --- who holds which slot --- */

static _Atomic uint64_t *owner_words(struct swap_info *si, unsigned m)
{
	return si->owners + (size_t)m * si->owner_words;
}

/* Mark (or clear) nr slots from off as held by member m. */
static void owners_mark(struct swap_info *si, unsigned m, uint32_t off,
			uint32_t nr, bool held)
{
	_Atomic uint64_t *w = owner_words(si, m);
	uint32_t i;

	for (i = off; i < off + nr; i++) {
		uint64_t bit = 1ull << (i % 64);

		if (held)
			atomic_fetch_or_explicit(&w[i / 64], bit,
						 memory_order_relaxed);
		else
			atomic_fetch_and_explicit(&w[i / 64], ~bit,
						  memory_order_relaxed);
	}
}

/* A slot was freed on a full device: it may join the lists again. */
static void device_room(struct uswap_runtime *rt, unsigned dev)
{
	if (atomic_load(&rt->swap_dev_full[dev]) &&
	    !atomic_load(&rt->swap_dev_failed[dev]) &&
	    swap_remote_may_have_room(&rt->swap[dev]) &&
	    atomic_exchange(&rt->swap_dev_full[dev], false))
		swap_avail_room(rt->avail, dev);
}

/*
 * fork: the child, member m, holds e too (one more use of the slot, as
 * the kernel's copy_pte_range duplicates swap entries).  A slot has at
 * most one use per member, and a count holds more uses than there are
 * members (memcontrol.h), so the count cannot overflow.
 */
_Static_assert(TREE_MAX_MEMBERS + TREE_USE_MARGIN <= SWAP_MAP_MAX,
	       "a slot's use count must hold one use per member");
void swap_dup_for(struct uswap_runtime *rt, swp_entry_t e, unsigned m)
{
	struct swap_info *si = &rt->swap[swp_type(e)];
	int err = swap_slot_dup(si, swp_offset(e));

	assert(!err);
	(void)err;
	owners_mark(si, m, swp_offset(e), 1, true);
}

/*
 * Free every slot member m still holds: its process ended (or fork
 * failed) without freeing them.  Its pool went with it.
 */
void swap_reap_member(struct uswap_runtime *rt, unsigned m)
{
	unsigned k;

	for (k = 0; k < rt->nr_swap; k++) {
		struct swap_info *si = &rt->swap[k];
		_Atomic uint64_t *w = owner_words(si, m);
		uint32_t i;
		bool freed = false;

		for (i = 0; i < si->owner_words; i++) {
			uint64_t bits = atomic_load(&w[i]) ?
					atomic_exchange(&w[i], 0) : 0;

			while (bits) {
				unsigned b = (unsigned)__builtin_ctzll(bits);

				bits &= bits - 1;
				swap_slot_free(si, i * 64 + b, 1);
				freed = true;
			}
		}
		if (freed)
			device_room(rt, k);
	}
}

void swap_free_slots(struct uswap_runtime *rt, swp_entry_t e, uint32_t nr)
{
	if (rt->zswap)
		zswap_slot_free(rt->zswap, e, nr);
	else
		swap_release_slots(rt, e, nr);
}

void swap_release_slots(void *arg, swp_entry_t e, uint32_t nr)
{
	struct uswap_runtime *rt = arg;
	unsigned dev = swp_type(e);

	owners_mark(&rt->swap[dev], rt->member, swp_offset(e), nr, false);
	swap_slot_free(&rt->swap[dev], swp_offset(e), nr);
	device_room(rt, dev);
}

/*
 * Writes to dev fail: it leaves every list for good, as a device the
 * kernel cannot write to is no use.  What it holds already stays
 * readable; folios whose write failed stay resident and go elsewhere
 * next time.
 */
void swap_device_error(struct uswap_runtime *rt, unsigned dev, int err)
{
	struct swap_info *si = &rt->swap[dev];

	if (err == -ENOSPC) {
		/* The file system is full: a full device, until slots free. */
		if (swap_log_first(si, SWAP_LOGGED_NOSPACE))
			uswap_log("swap device %s: write failed (%s): it counts as "
				  "full until slots are freed; its folios stay "
				  "resident or go to the next device",
				  si->path, strerror(-err));
		swap_remote_full(si);
		device_full(rt, dev);
		return;
	}
	if (swap_remote_is(si)) {
		/*
		 * A cluster failing over, or a node out of reach for longer
		 * than a batch retries: out of use for a while, not for good.
		 */
		if (swap_log_first(si, SWAP_LOGGED_NOSPACE))
			uswap_log("swap device %s: write failed (%s): out of use "
				  "for %u ms at a time while it fails; its folios "
				  "stay resident or go to the next device",
				  si->path, strerror(-err), SWAP_REMOTE_FULL_MS);
		swap_remote_full(si);
		device_full(rt, dev);
		return;
	}
	if (atomic_exchange(&rt->swap_dev_failed[dev], true))
		return;
	uswap_log("swap device %s: write failed (%s): taken out of use; "
		  "its folios stay resident or go to the next device",
		  si->path, strerror(-err));
	atomic_store(&rt->swap_dev_full[dev], true);
	swap_avail_full(rt->avail, dev);
}

/* 2^order contiguous slots on dev; the tail past nr freed again. */
static bool alloc_on(struct uswap_runtime *rt, struct swap_alloc_ctx *ctx,
		     unsigned dev, unsigned order, uint32_t nr,
		     swp_entry_t *ents)
{
	struct swap_info *si = &rt->swap[dev];
	uint32_t off, k;

	if (swap_slot_alloc(si, &ctx[dev], order, &off)) {
		if (order == 0)
			device_full(rt, dev);
		return false;
	}
	if ((1u << order) > nr)
		swap_slot_free(si, off + nr, (1u << order) - nr);
	owners_mark(si, rt->member, off, nr, true);
	for (k = 0; k < nr; k++)
		ents[k] = swp_entry(dev, off + k);
	return true;
}

/*
 * Another process of the tree may have freed slots on a device this one
 * took off its lists as full: put back those that have room again.
 */
static bool recheck_full(struct uswap_runtime *rt)
{
	bool any = false;
	unsigned k;

	for (k = 0; k < rt->nr_swap; k++) {
		struct swap_info *si = &rt->swap[k];
		uint32_t used;

		if (!atomic_load(&rt->swap_dev_full[k]))
			continue;
		used = swap_inuse_slots(si);
		if (used < si->nr_slots) {
			device_room(rt, k);
			any = true;
		}
	}
	return any;
}

/* Slots for nr (<= 2^order) contiguous pages, on the lists of node. */
static bool alloc_run(struct uswap_runtime *rt, struct swap_pick *pick,
		      int node, unsigned order, uint32_t nr, swp_entry_t *ents)
{
	unsigned tries;
	int dev;

	if (pick->node == node && pick->dev >= 0 &&
	    pick->used < SWAP_CLUSTER_SLOTS &&
	    alloc_on(rt, pick->ctx, (unsigned)pick->dev, order, nr, ents)) {
		pick->used += nr;
		return true;
	}
	for (tries = 0; tries < 2 * rt->nr_swap; tries++) {
		dev = swap_avail_next(rt->avail, node);
		if (dev < 0 && tries == 0 && recheck_full(rt))
			dev = swap_avail_next(rt->avail, node);
		if (dev < 0)
			return false;
		if (alloc_on(rt, pick->ctx, (unsigned)dev, order, nr, ents)) {
			pick->node = node;
			pick->dev = dev;
			pick->used = nr;
			return true;
		}
	}
	return false;
}

static unsigned order_for(uint32_t nr)
{
	unsigned order = 0;

	while ((1u << order) < nr)
		order++;
	return order;
}

static void count_swpout(struct uswap_runtime *rt, uint32_t nr, bool fallback)
{
	static const unsigned ok[] = { USWAP_MTHP_16KB_SWPOUT,
				       USWAP_MTHP_64KB_SWPOUT, USWAP_THP_SWPOUT };
	static const unsigned fb[] = { USWAP_MTHP_16KB_SWPOUT_FALLBACK,
				       USWAP_MTHP_64KB_SWPOUT_FALLBACK,
				       USWAP_THP_SWPOUT_FALLBACK };
	int i = nr == 4 ? 0 : nr == 16 ? 1 : nr == 512 ? 2 : -1;

	if (i >= 0)
		count_event(rt, fallback ? fb[i] : ok[i], 1);
}

int swap_alloc_folio(struct uswap_runtime *rt, struct swap_pick *pick,
		     int node, uint32_t nr, swp_entry_t *ents)
{
	uint32_t k;

	if (alloc_run(rt, pick, node, order_for(nr), nr, ents)) {
		count_swpout(rt, nr, false);
		return 0;
	}
	if (nr == 1)
		return -ENOSPC;
	/* No device has a run for it whole: one slot per page. */
	for (k = 0; k < nr; k++) {
		if (!alloc_run(rt, pick, node, 0, 1, &ents[k])) {
			while (k--)
				swap_release_slots(rt, ents[k], 1);
			return -ENOSPC;
		}
	}
	count_swpout(rt, nr, true);
	return 1;
}

void swap_pick_init(struct swap_pick *pick)
{
	unsigned k;

	pick->node = -2;
	pick->dev = -1;
	for (k = 0; k < SWAP_MAX_TYPES; k++)
		swap_alloc_ctx_init(&pick->ctx[k]);
}

void swap_pick_release(struct uswap_runtime *rt, struct swap_pick *pick)
{
	unsigned k;

	for (k = 0; k < rt->nr_swap; k++)
		swap_alloc_ctx_release(&rt->swap[k], &pick->ctx[k]);
}

int swap_node_now(struct uswap_runtime *rt)
{
	unsigned cpu = 0, node = 0;

	if (getcpu(&cpu, &node) == 0 && cpu < rt->nr_cpus)
		return rt->cpu_node[cpu];
	return 0;
}

/* I/O latency histograms per device, as the fault latency one. */
void swap_count_io(struct uswap_runtime *rt, unsigned dev, bool write,
		   uint32_t pages, uint64_t us)
{
	struct swap_dev_stat *st = &rt->swapstat[dev];
	unsigned b = 0;

	while (us > 1 && b < USWAP_LATENCY_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	atomic_fetch_add_explicit(write ? &st->pswpout : &st->pswpin, pages,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(write ? &st->wlat[b] : &st->rlat[b], 1,
				  memory_order_relaxed);
}
