// SPDX-License-Identifier: MIT
/*
 * page_io.c - swap file creation and I/O (the kernel's page_io.c and the
 * file side of swapon).
 *
 * The swap file is created in the swap directory with O_TMPFILE, so that
 * it never has a name (nothing is left behind, whatever happens to the
 * process); where the file system lacks O_TMPFILE, a name is created with
 * O_EXCL|O_NOFOLLOW and unlinked at once.  Mode 0600.  The file is sparse:
 * each 2 MiB cluster is reserved with fallocate when it is first used, so
 * that a full disk shows up as "no room" at allocation time, never as a
 * failed write of data that must not be lost.  I/O is O_DIRECT where the
 * file system allows it (the page cache would only hold a second copy of
 * what was just evicted); pread/pwrite for now, io_uring comes with the
 * device layer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

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
	si->fd = fd;
	si->provision = provision_cluster;
	snprintf(si->path, sizeof(si->path), "%s/uswap-%d (deleted)", dir,
		 (int)getpid());
	return 0;
}

void swap_file_close(struct swap_info *si)
{
	if (si->fd >= 0)
		close(si->fd);
	si->fd = -1;
}

int swap_cluster_provision(struct swap_info *si, uint32_t cluster)
{
	static _Atomic bool unsupported;

	if (si->fd < 0 || unsupported)
		return 0;
	if (fallocate(si->fd, 0, (off_t)cluster * SWAP_CLUSTER_BYTES,
		      SWAP_CLUSTER_BYTES) == 0)
		return 0;
	if (errno == EOPNOTSUPP) {
		unsupported = true;
		return 0;
	}
	return -errno;
}

int swap_write(struct swap_info *si, uint32_t offset, const struct iovec *iov,
	       int iovcnt, size_t len)
{
	ssize_t n = prim_pwritev(si->fd, iov, iovcnt,
				 (off_t)offset << SWAP_SLOT_SHIFT);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

int swap_read(struct swap_info *si, uint32_t offset, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = prim_pread(si->fd, (char *)buf + done, len - done,
				       ((off_t)offset << SWAP_SLOT_SHIFT) +
				       (off_t)done);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}
