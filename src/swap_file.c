// SPDX-License-Identifier: MIT
/*
 * swap_file.c - a swap device's file (the file side of the kernel's
 * swapon), and the checks of what each of its slots holds.
 *
 * The swap file is created in the swap directory with O_TMPFILE, so that
 * it never has a name (nothing is left behind, whatever happens to the
 * process); where the file system lacks O_TMPFILE, a name is created with
 * O_EXCL|O_NOFOLLOW and unlinked at once.  Mode 0600.  The file is sparse:
 * each 2 MiB cluster is reserved with fallocate when it is first used, so
 * that a full disk shows up as "no room" at allocation time, never as a
 * failed write of data that must not be lost.
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
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crc32c.h"
#include "crypt.h"
#include "internal.h"
#include "swap_io.h"

#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif
#ifndef BLKDISCARD
#define BLKDISCARD	_IO(0x12, 119)
#endif
#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE	0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE	0x02
#endif

/* --- the swap file --- */

static int open_tmpfile(const char *dir, int extra)
{
	char name[300];
	unsigned n;
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC | extra, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
			errno != EINVAL))
		return fd < 0 ? -errno : fd;
	if (extra && errno == EINVAL)
		return -EINVAL;		/* maybe O_DIRECT: caller retries */
	for (n = 0; n < 100; n++) {
		snprintf(name, sizeof(name), "%s/.uswap-%d-%u", dir,
			 (int)getpid(), n);
		fd = open(name, O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR |
			  O_CLOEXEC | extra, 0600);
		if (fd >= 0) {
			unlink(name);
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int provision_cluster(struct swap_info *si, uint32_t cluster)
{
	return swap_cluster_provision(si, cluster);
}

/*
 * Create the swap file for si (already initialised with swap_info_init)
 * in dir, sparse, of size bytes.
 */
int swap_file_create(struct swap_info *si, const char *dir, uint64_t size)
{
	int fd = open_tmpfile(dir, O_DIRECT);

	si->direct = fd >= 0;
	if (fd < 0)
		fd = open_tmpfile(dir, 0);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)size) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	si->fd = fd_install(fd, FD_DEVICE);
	si->provision = provision_cluster;
	snprintf(si->path, sizeof(si->path), "%s/uswap-%d (deleted)", dir,
		 (int)getpid());
	return 0;
}

/* Close the device's file and drop its discard state (no other users). */
void swap_file_close(struct swap_info *si)
{
	swap_discard_disable(si);
	if (si->fd >= 0)
		prim_fd_close(si->fd);
	si->fd = -1;
}

/*
 * Reserve a cluster's blocks.  A file system without room (ENOSPC) makes
 * the device count as full (swapon.c): the allocation fails and the folio
 * goes to another device or stays resident; logged once per device.
 */
int swap_cluster_provision(struct swap_info *si, uint32_t cluster)
{
	static _Atomic bool unsupported;
	int err;

	if (si->fd < 0 || unsupported)
		return 0;
	err = prim_fallocate(si->fd, 0, (off_t)cluster * SWAP_CLUSTER_BYTES,
			     SWAP_CLUSTER_BYTES);
	if (err == -EOPNOTSUPP) {
		unsupported = true;
		return 0;
	}
	if (err && swap_log_first(si, SWAP_LOGGED_NOSPACE))
		uswap_log("swap device %s: reserving 2 MiB for cluster %u failed (%s): "
			  "it counts as full until slots are freed",
			  si->path, cluster, strerror(-err));
	return err;
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

		r = ioctl(si->fd, BLKDISCARD, range) < 0 ? -errno : 0;
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

	if (si->discard)
		return 0;
	if (si->fd < 0)
		return -EBADF;
	if (fstat(si->fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return -EOPNOTSUPP;
	len = sizeof(*d) + (size_t)si->nr_clusters * sizeof(d->queue[0]);
	d = prim_alloc_shared(len);	/* the queue is the device's, not ours */
	if (!d)
		return -ENOMEM;
	d->queue = (uint32_t *)(d + 1);
	d->punch = discard_punch;
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
