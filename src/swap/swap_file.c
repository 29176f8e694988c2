// SPDX-License-Identifier: MIT
/*
 * swap_file.c - a swap device's file (the file side of the kernel's
 * swapon): where it is made, how it grows and shrinks, how the user's own
 * file is emptied; and the checks of what each of its slots holds.
 *
 * Where.  Files are made in a directory opened first and checked on its
 * descriptor (swap_dir_open): owned by the user or root, and written by
 * nobody else unless sticky, as /tmp is, so that no other user can
 * rename a name uswap makes or uses there.  The file is created with
 * O_TMPFILE through that descriptor, so that it never has a name
 * (nothing is left behind, whatever happens to the process); where the
 * file system lacks O_TMPFILE, a random name is created with
 * O_EXCL|O_NOFOLLOW and unlinked at once.  Mode 0600.
 *
 * Growth.  The file is sparse: each 2 MiB cluster is reserved with
 * fallocate when it is first used (swap_cluster_provision), so that a
 * full disk shows up as "no room" at allocation time, never as a failed
 * write of data that must not be lost.  A file without a size (si->
 * grow_free: no size=, no --swap-size) has the slot space of half its
 * file system (swapon.c) and takes a new cluster only while, once it
 * has, the file system keeps as much free space as the file holds: it
 * never takes more than half of the space free for it, checked at each
 * cluster against what the file system has then, as other users fill it
 * too.  Its free clusters are punched out again when reclaim is idle (a
 * lazy discard, swapfile.c), so that it shrinks once the program has
 * freed memory.  A device that is full
 * says so once, with its figures: used, cap and free space (say_full).
 *
 * The user's file.  A file the user named that existed (swapon.c) is
 * emptied when a run takes it and when its use ends (swap_file_wipe):
 * truncated to nothing; a block device is zeroed or discarded.  What the
 * program swapped never stays there for a later reader; only --encrypt
 * protects it from a reader of the raw device while the run lasts.
 *
 * Checks (swap_io.h).  swap_csum_record() and swap_csum_verify() keep and
 * check the crc32c of every slot written; swap_slots_check() is what a
 * reader calls after a read: it authenticates and decrypts the slots of an
 * encrypting device in place (crypt.c), then checks the crc32c if the
 * device keeps one.  The callers decide when (after a write completed,
 * after a read) and what a mismatch means (-EBADMSG: a lost folio).
 *
 * Discard.  swapfile.c parks a cluster whose last slot was freed and calls
 * discard_punch() for it without its lock (the race with allocation is
 * explained there): a hole punched in a file (FALLOC_FL_PUNCH_HOLE, which
 * keeps the size), BLKDISCARD on a block device.  A file system or device
 * that cannot do it gets one log line and no more discards.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crc32c.h"
#include "crypt.h"
#include "base.h"
#include "fdtable.h"
#include "lockdep.h"
#include "log.h"
#include "prim.h"
#include "swap.h"
#include "swap_io.h"
#include "swap_remote.h"

#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif
#ifndef BLKDISCARD
#define BLKDISCARD	_IO(0x12, 119)
#endif
#ifndef BLKZEROOUT
#define BLKZEROOUT	_IO(0x12, 127)
#endif
#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE	0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE	0x02
#endif

/* --- the swap file --- */

/*
 * Is a directory with this owner and mode safe to create uswap's files
 * in?  Owned by the user or root, and nobody else may add, remove or
 * rename names in it, unless it is sticky (as /tmp): then others cannot
 * touch the user's names.  Otherwise another user could swap a name for
 * one of theirs between uswap's calls.
 */
static bool dir_is_safe(const struct stat *st)
{
	if (st->st_uid != geteuid() && st->st_uid != 0)
		return false;
	return !(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX);
}

/* Log why directory dir (st: not dir_is_safe) is refused. */
static void say_unsafe_dir(const char *dir, const struct stat *st)
{
	if (st->st_uid != geteuid() && st->st_uid != 0)
		uswap_log("swap directory %s belongs to another user (uid %u): refused "
			  "(expected a directory of yours or root's)",
			  dir, (unsigned)st->st_uid);
	else
		uswap_log("swap directory %s may be written by %s and is not sticky (mode %04o): "
			  "refused, since another user could replace the names uswap makes there "
			  "(expected chmod go-w or +t, or another directory)",
			  dir, st->st_mode & S_IWOTH ? "others" : "its group",
			  (unsigned)(st->st_mode & 07777));
}

int swap_dir_open(const char *dir, bool quiet)
{
	struct stat st;
	int fd, err;

	fd = prim_open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0) {
		if (!quiet)
			uswap_log("swap directory %s: %s", dir, strerror(-fd));
		return fd;
	}
	err = prim_fstat(fd, &st);
	if (err) {
		if (!quiet)
			uswap_log("swap directory %s: %s", dir, strerror(-err));
		goto err_close;
	}
	if (!dir_is_safe(&st)) {
		err = -EPERM;
		if (!quiet)
			say_unsafe_dir(dir, &st);
		goto err_close;
	}
	return fd;

err_close:
	prim_close(fd);
	return err;
}

/*
 * A new file of the user's in directory dirfd, readable by nobody else:
 * unnamed (O_TMPFILE) so that nothing is left behind whatever happens to
 * the process; where the file system lacks O_TMPFILE, a random name made
 * with O_EXCL and unlinked at once (the directory is one nobody else can
 * rename in: swap_dir_open).  extra: O_DIRECT or 0.  fd or -errno.
 */
static int open_tmpfile(int dirfd, int extra)
{
	char name[64];
	unsigned n;
	int fd;

	fd = prim_openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC | extra,
			 0600);
	if (fd >= 0 || (fd != -EOPNOTSUPP && fd != -EISDIR && fd != -EINVAL))
		return fd;
	if (extra && fd == -EINVAL)
		return -EINVAL;		/* maybe O_DIRECT: caller retries */
	for (n = 0; n < 100; n++) {
		snprintf(name, sizeof(name), ".uswap-%d-%016llx", (int)getpid(),
			 (unsigned long long)(prim_now_us() * 0x9e3779b97f4a7c15ull +
					      n));
		fd = prim_openat(dirfd, name, O_CREAT | O_EXCL | O_NOFOLLOW |
				 O_RDWR | O_CLOEXEC | extra, 0600);
		if (fd >= 0) {
			prim_unlinkat(dirfd, name, 0);
			return fd;
		}
		if (fd != -EEXIST)
			return fd;
	}
	return -EEXIST;
}

static int provision_cluster(struct swap_info *si, uint32_t cluster)
{
	return swap_cluster_provision(si, cluster);
}

int swap_file_create(struct swap_info *si, const char *dir, uint64_t size)
{
	struct stat st;
	int dirfd, fd, err;

	dirfd = swap_dir_open(dir, false);
	if (dirfd < 0)
		return dirfd;
	fd = open_tmpfile(dirfd, O_DIRECT);
	si->direct = fd >= 0;
	if (fd < 0)
		fd = open_tmpfile(dirfd, 0);
	prim_close(dirfd);
	if (fd < 0)
		return fd;
	/* What was made is what was asked for: a file of ours alone. */
	if (prim_fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077)) {
		err = -EPERM;
		goto err_close;
	}
	err = prim_ftruncate(fd, (off_t)size);
	if (err)
		goto err_close;
	si->fd = fd_install(fd, FD_DEVICE);
	si->file_end = size;
	si->provision = provision_cluster;
	snprintf(si->path, sizeof(si->path), "%s/uswap-%d (deleted)", dir,
		 (int)getpid());
	return 0;

err_close:
	prim_close(fd);
	return err;
}

/* Close the device's file and drop its discard state (no other users). */
void swap_file_close(struct swap_info *si)
{
	swap_discard_disable(si);
	if (si->fd >= 0)
		prim_fd_close(si->fd);
	si->fd = -1;
}

int swap_file_wipe(int fd, bool blkdev, uint64_t len, bool zero)
{
	uint64_t range[2] = { 0, len };

	if (blkdev) {
		if (!len)
			return 0;
		if (zero && prim_ioctl(fd, BLKZEROOUT, range) == 0)
			return 0;
		return prim_ioctl(fd, BLKDISCARD, range);
	}
	return prim_ftruncate(fd, 0);
}

/* --- growth --- */

/* Bytes free for the user on fd's file system, or -1 when unknown. */
static int64_t fs_free_bytes(int fd)
{
	struct statvfs sv;

	if (fstatvfs(fd, &sv) < 0)
		return -1;
	return (int64_t)MIN((uint64_t)sv.f_bavail * sv.f_frsize,
			    (uint64_t)INT64_MAX);
}

/*
 * The device is full: say so once, with its figures.  why: what stopped
 * it.  Caller holds si->lock (nr_provisioned).
 */
static void say_full(struct swap_info *si, const char *why)
{
	const unsigned long long used =
		(unsigned long long)si->nr_provisioned * (SWAP_CLUSTER_BYTES >> 20);
	const unsigned long long cap =
		(unsigned long long)si->nr_slots >> (20 - SWAP_SLOT_SHIFT);
	int64_t free_bytes;

	lock_assert_held(&si->lock);
	if (!swap_log_first(si, SWAP_LOGGED_NOSPACE))
		return;
	if (si->blkdev) {
		uswap_log("swap device %s is full: %llu MiB used of %llu MiB (%s); it counts as full "
			  "until slots are freed: folios stay resident or go to the next device "
			  "(counted as swap_full)",
			  si->path, used, cap, why);
		return;
	}
	free_bytes = fs_free_bytes(si->fd);
	uswap_log("swap file %s is full: %llu MiB used, cap %llu MiB, %lld MiB free on its file system (%s); "
		  "it counts as full until slots are freed: folios stay resident or go to the next device "
		  "(counted as swap_full)",
		  si->path, used, cap,
		  (long long)(free_bytes < 0 ? -1 : free_bytes >> 20), why);
}

void swap_file_full(struct swap_info *si)
{
	prim_mutex_lock(&si->lock);
	if (si->blkdev)
		say_full(si, "every slot of the device is in use");
	else if (si->grow_free)
		say_full(si, "it holds half of its file system's size, the most a swap file without a size takes");
	else
		say_full(si, "its size is reached: --swap-size or size= set it");
	pthread_mutex_unlock(&si->lock);
}

/*
 * May a file that grows with the free space (si->grow_free) take one more
 * cluster?  Only if, once it has, the file system still has as much free
 * as the file holds: a swap file without a size takes at most half of
 * the space free for it, checked at each step, as other users fill the
 * file system too.  0 or -ENOSPC.
 */
static int grow_check(struct swap_info *si)
{
	const uint64_t step = SWAP_CLUSTER_BYTES;
	const uint64_t held = (uint64_t)si->nr_provisioned * step;
	const int64_t free_bytes = fs_free_bytes(si->fd);

	if (free_bytes < 0)
		return 0;	/* unknown: fallocate says whether it fits */
	if ((uint64_t)free_bytes >= 2 * step &&
	    held + step <= (uint64_t)free_bytes - step)
		return 0;
	return -ENOSPC;
}

/*
 * Reserve a cluster's blocks, growing the file.  A file system without
 * room (ENOSPC), or a file that has taken its share of the free space,
 * makes the device count as full (swapon.c): the allocation fails and the
 * folio goes to another device or stays resident, said once per device
 * with the figures.  Where fallocate is not supported the file is only
 * extended (sparse: the writes take the blocks).  Called with si->lock.
 */
int swap_cluster_provision(struct swap_info *si, uint32_t cluster)
{
	const uint64_t pos = (uint64_t)cluster * SWAP_CLUSTER_BYTES;
	const uint64_t end = pos + SWAP_CLUSTER_BYTES;
	int err;

	lock_assert_held(&si->lock);
	if (si->fd < 0)
		return 0;
	if (si->blkdev) {
		si->file_end = MAX(si->file_end, end);
		return 0;
	}
	if (si->grow_free && grow_check(si)) {
		say_full(si, "a swap file without a size grows only while its file system keeps as much free as it holds: "
			 "give --swap-size, or a --swap-dir with more room");
		return -ENOSPC;
	}
	err = prim_fallocate(si->fd, 0, (off_t)pos, SWAP_CLUSTER_BYTES);
	if (err == -EOPNOTSUPP)
		err = end <= si->file_end ? 0 :
		      prim_ftruncate(si->fd, (off_t)end);
	if (err == -ENOSPC || err == -EDQUOT) {
		say_full(si, "the file system has no more room");
		return err;
	}
	if (err) {
		if (swap_log_first(si, SWAP_LOGGED_NOSPACE))
			uswap_log("swap file %s: reserving 2 MiB for cluster %u failed (%s): "
				  "it counts as full until slots are freed",
				  si->path, cluster, strerror(-err));
		return err;
	}
	si->file_end = MAX(si->file_end, end);
	return 0;
}

/* --- checksums --- */

void swap_csum_record(struct swap_info *si, uint32_t offset,
		      const struct iovec *iov, int iovcnt)
{
	if (si->csum)
		swap_csum_compute(iov, iovcnt, si->csum + offset);
}

void swap_csum_compute(const struct iovec *iov, int iovcnt, uint32_t *out)
{
	uint32_t slot = 0, crc = 0;
	size_t fill = 0;
	int i;

	for (i = 0; i < iovcnt; i++) {
		const char *p = iov[i].iov_base;
		size_t n = iov[i].iov_len;

		while (n) {
			size_t take = MIN(n, SWAP_SLOT_SIZE - fill);

			crc = crc32c(crc, p, take);
			p += take;
			n -= take;
			fill += take;
			if (fill == SWAP_SLOT_SIZE) {
				out[slot++] = crc;
				crc = 0;
				fill = 0;
			}
		}
	}
	assert(fill == 0);
}

int swap_csum_verify(struct swap_info *si, uint32_t offset, const void *buf,
		     uint32_t nr)
{
	uint32_t k;

	if (!si->csum)
		return 0;
	for (k = 0; k < nr; k++) {
		const uint32_t want = si->csum[offset + k];
		const uint32_t got = crc32c(0, (const char *)buf +
					    ((size_t)k << SWAP_SLOT_SHIFT),
					    SWAP_SLOT_SIZE);

		if (likely(got == want))
			continue;
		if (swap_log_first(si, SWAP_LOGGED_CSUM))
			uswap_log("swap device %s: slot %u failed its checksum "
				  "(expected crc32c %08x, found %08x): its data "
				  "is never used; the program gets SIGBUS where "
				  "it is mapped (counted as swap_corrupt)",
				  si->path, offset + k, want, got);
		return -EBADMSG;
	}
	return 0;
}

/* --- reading back --- */

/* Authenticate and decrypt nr slots from offset, read into buf. */
static int open_slots(struct swap_info *si, uint32_t offset, void *buf,
		      uint32_t nr)
{
	uint32_t k;

	for (k = 0; k < nr; k++) {
		if (likely(!crypt_open_slot(si->crypt, offset + k, (char *)buf +
					    ((size_t)k << SWAP_SLOT_SHIFT))))
			continue;
		if (swap_log_first(si, SWAP_LOGGED_AUTH))
			uswap_log("swap device %s: slot %u failed authentication "
				  "(XChaCha20-Poly1305): its data is never used; "
				  "the program gets SIGBUS where it is mapped "
				  "(counted as swap_corrupt)", si->path, offset + k);
		return -EBADMSG;
	}
	return 0;
}

int swap_slots_check(struct swap_info *si, uint32_t offset, void *buf,
		     uint32_t nr)
{
	int err = si->crypt ? open_slots(si, offset, buf, nr) : 0;

	return err ? err : swap_csum_verify(si, offset, buf, nr);
}

/* --- discard --- */

/* Give cluster's space back to the file system or the device. */
static int discard_punch(struct swap_info *si, uint32_t cluster)
{
	struct swap_discard *d = si->discard;
	const uint64_t pos = (uint64_t)cluster * SWAP_CLUSTER_BYTES;
	int r;

	if (d->blkdev) {
		uint64_t range[2] = { pos, SWAP_CLUSTER_BYTES };

		r = prim_ioctl(si->fd, BLKDISCARD, range);
	} else {
		r = prim_fallocate(si->fd, FALLOC_FL_PUNCH_HOLE |
				   FALLOC_FL_KEEP_SIZE, (off_t)pos,
				   SWAP_CLUSTER_BYTES);
	}
	if (r == 0)
		return 0;
	uswap_log_once(&d->logged, "discard on %s failed: %s", si->path,
		       strerror(-r));
	return r;
}

int swap_discard_enable(struct swap_info *si)
{
	struct swap_discard *d;
	struct stat st;
	size_t len;
	int err;

	if (si->discard)
		return 0;
	if (si->remote) {
		st.st_mode = 0;		/* discarding is deleting values */
	} else {
		if (si->fd < 0)
			return -EBADF;
		err = prim_fstat(si->fd, &st);
		if (err)
			return err;
		if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
			return -EOPNOTSUPP;
	}
	len = sizeof(*d) + (size_t)si->nr_clusters * sizeof(d->queue[0]);
	d = prim_alloc_shared(len);	/* the queue is the device's, not ours */
	if (!d)
		return -ENOMEM;
	d->queue = (uint32_t *)(d + 1);
	d->punch = si->remote ? swap_remote_punch : discard_punch;
	d->blkdev = S_ISBLK(st.st_mode);
	d->alloc_len = len;
	prim_mutex_lock(&si->lock);
	si->discard = d;
	pthread_mutex_unlock(&si->lock);
	return 0;
}

void swap_discard_disable(struct swap_info *si)
{
	struct swap_discard *d = si->discard;

	if (!d)
		return;
	si->discard = NULL;
	prim_free(d, d->alloc_len);
}

uint64_t swap_discard_count(const struct swap_info *si)
{
	return si->discard ? atomic_load_explicit(&si->discard->discards,
						  memory_order_relaxed) : 0;
}
