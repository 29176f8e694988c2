// SPDX-License-Identifier: MIT
/*
 * swap_open.c - opening the files and block devices that hold swap, and
 * emptying the user's own once a run is over.
 *
 * Every file is checked on the descriptor that is used, never on a path:
 * another user who can rename names in a directory could swap one for a
 * file of theirs between a check and an open.  So a named device is opened through its directory, itself
 * opened first and checked on its descriptor (swap_dir_open: the user's
 * or root's, and nobody else may rename in it unless it is sticky); the
 * name is looked up without following a link, on an O_PATH descriptor
 * whose type is checked before anything is really opened (no FIFO, no
 * character device: opening either can block or act); the file or
 * device is then opened and must be that same inode, and a regular file
 * must be the user's and nobody else's to read or write, since the
 * program's memory goes there.
 *
 * What a run wrote in a file or device the user named would stay there
 * for whoever reads it later: the runtime of a process never tears its
 * devices down (other threads may still run at exit), so uswap run
 * empties them once PROG has ended (swap_wipe_open(), swap_wipe_run()),
 * unless a process of the tree still holds one; the runtime empties a
 * file again when it takes it (swapon.c), which covers a uswap run that
 * was killed itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base.h"
#include "log.h"
#include "prim.h"
#include "swap.h"
#include "uswap.h"
#include "swapdev.h"
#include "swap_remote.h"

/* The directory part of path, or "." */
void swap_dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

uint64_t swap_share_size(int fd)
{
	uint64_t size = 1ull << 30;
	struct statvfs sv;

	if (fstatvfs(fd, &sv) == 0)
		size = (uint64_t)sv.f_blocks * sv.f_frsize / 2;
	size = MIN(size, (uint64_t)SWP_MAX_SLOTS << SWAP_SLOT_SHIFT);
	size &= ~((uint64_t)SWAP_CLUSTER_BYTES - 1);
	return MAX(size, (uint64_t)SWAP_CLUSTER_BYTES);
}

/* Log (unless quiet) why an existing swap file is refused; -EPERM. */
static int refuse_file(const char *path, const struct stat *st, bool quiet)
{
	if (quiet)
		return -EPERM;
	if (st->st_uid != geteuid()) {
		uswap_log("swap file %s belongs to another user (uid %u): refused",
			  path, (unsigned)st->st_uid);
		return -EPERM;
	}
	uswap_log("swap file %s may be read or written by others (mode %04o): refused "
		  "(expected a file only you can read and write, as the program's memory "
		  "goes there: chmod 600 %s)",
		  path, (unsigned)(st->st_mode & 07777), path);
	return -EPERM;
}

int swap_spec_open(const char *path, bool need_direct, bool excl, bool quiet,
		   bool *blk, bool *direct)
{
	int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char dir[SWAP_PATH_MAX];
	struct stat st, got;
	int dirfd, pfd, fd, err;

	*blk = false;
	if (!*base) {
		if (!quiet)
			uswap_log("swap device %s is neither a file nor a block device",
				  path);
		return -EINVAL;
	}
	swap_dir_of(path, dir, sizeof(dir));
	dirfd = swap_dir_open(dir, quiet);
	if (dirfd < 0)
		return dirfd;
	pfd = prim_openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (pfd < 0) {
		err = pfd;
		goto err_dir;
	}
	err = prim_fstat(pfd, &st);
	prim_close(pfd);
	if (err)
		goto err_dir;
	if (S_ISLNK(st.st_mode)) {
		if (!quiet)
			uswap_log("swap device %s is a symbolic link: refused", path);
		err = -ELOOP;
		goto err_dir;
	}
	if (S_ISBLK(st.st_mode)) {
		*blk = true;
		if (excl)
			flags |= O_EXCL;
	} else if (!S_ISREG(st.st_mode)) {
		if (!quiet)
			uswap_log("swap device %s is neither a file nor a block device",
				  path);
		err = -EINVAL;
		goto err_dir;
	} else if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		err = refuse_file(path, &st, quiet);
		goto err_dir;
	}
	fd = prim_openat(dirfd, base, flags | O_DIRECT, 0);
	*direct = fd >= 0;
	if (fd == -EINVAL && !need_direct)
		fd = prim_openat(dirfd, base, flags, 0);
	if (fd < 0) {
		err = fd;
		goto err_dir;
	}
	prim_close(dirfd);
	if (prim_fstat(fd, &got) || got.st_dev != st.st_dev ||
	    got.st_ino != st.st_ino || (got.st_mode & S_IFMT) != (st.st_mode & S_IFMT)) {
		if (!quiet)
			uswap_log("swap device %s changed while it was opened: refused",
				  path);
		err = -EAGAIN;
		goto err_close;
	}
	if (S_ISREG(got.st_mode) && (got.st_uid != geteuid() || (got.st_mode & 077))) {
		err = refuse_file(path, &got, quiet);
		goto err_close;
	}
	flags = prim_fcntl(fd, F_GETFL, 0);
	if (flags >= 0)
		flags = prim_fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	if (flags < 0) {
		err = flags;
		goto err_close;
	}
	return fd;

err_close:
	prim_close(fd);
	return err;
err_dir:
	prim_close(dirfd);
	return err;
}


/* Each named device of the options, as gather_specs finds them. */
static unsigned named_specs(const struct uswap_options *opt,
			    struct swap_spec *specs)
{
	const char *p = opt->swap;
	char why[384], line[512];
	unsigned n = 0, got = 0;

	while (*p && n < SWAP_MAX_DEVICES) {
		size_t len = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		if (len && !swap_spec_parse(line, &specs[n], why, sizeof(why)))
			n++;
	}
	if (opt->swaptab[0] && n < SWAP_MAX_DEVICES &&
	    !swaptab_parse_file(opt->swaptab, specs + n, SWAP_MAX_DEVICES - n,
				&got, why, sizeof(why)))
		n += got;
	return n;
}

void swap_wipe_open(const struct uswap_options *opt, struct swap_wipe *w)
{
	struct swap_spec specs[SWAP_MAX_DEVICES];
	unsigned n = named_specs(opt, specs), k;

	w->nr = 0;
	w->nr_remote = 0;
	for (k = 0; k < n; k++)
		if (specs[k].remote)
			w->remote[w->nr_remote++] = specs[k];
	if (w->nr_remote &&
	    swap_remote_run_begin(w->run_id, w->run_lock, sizeof(w->run_lock))) {
		uswap_log("cannot make the run's lock in the temporary directory: the keys of its remote swap devices stay until uswap gc");
		w->nr_remote = 0;
	}
	for (k = 0; k < n; k++) {
		uint64_t bytes = 0;
		bool blk, direct;
		int fd;

		if (specs[k].remote)
			continue;
		fd = swap_spec_open(specs[k].path, false, false, true, &blk,
				   &direct);

		if (fd < 0)
			continue;	/* the runtime says why, if it matters */
		if (blk && prim_ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			bytes = 0;
		w->fd[w->nr] = fd;
		w->blk[w->nr] = blk;
		w->len[w->nr] = specs[k].size ? MIN(specs[k].size, bytes) : bytes;
		memcpy(w->path[w->nr], specs[k].path, sizeof(w->path[0]));
		w->nr++;
	}
}

/*
 * Is the device of w's entry k free of every other user?  A file: no
 * process holds its lock (swapon_spec takes it); a block device: it can
 * be opened O_EXCL (through the descriptor, so that it is the same one).
 * On success a block device's *fd is the exclusive descriptor.
 */
static bool wipe_claim(struct swap_wipe *w, unsigned k, int *fd)
{
	char self[64];

	*fd = w->fd[k];
	if (!w->blk[k])
		return prim_flock(*fd, LOCK_EX | LOCK_NB) == 0;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", w->fd[k]);
	*fd = prim_open(self, O_RDWR | O_EXCL | O_CLOEXEC, 0);
	return *fd >= 0;
}

void swap_wipe_run(struct swap_wipe *w)
{
	unsigned k;

	for (k = 0; k < w->nr; k++) {
		int fd, err;

		if (!wipe_claim(w, k, &fd)) {
			uswap_log("swap %s %s is still in use by a process of the tree: "
				  "what it holds stays until the next run on it empties it",
				  w->blk[k] ? "device" : "file", w->path[k]);
		} else {
			err = swap_file_wipe(fd, w->blk[k], w->len[k], false);
			if (err)
				uswap_log("swap %s %s: cannot empty it: %s",
					  w->blk[k] ? "device" : "file",
					  w->path[k], strerror(-err));
			if (fd != w->fd[k])
				prim_close(fd);
		}
		prim_close(w->fd[k]);
	}
	w->nr = 0;
	if (w->nr_remote && !swap_remote_run_over(w->run_lock)) {
		uswap_log("a process of the tree still uses its remote swap devices: their values stay until it has ended and uswap gc runs");
		w->nr_remote = 0;
	}
	for (k = 0; k < w->nr_remote; k++) {
		char err[384];
		uint64_t n = 0;

		if (swap_remote_delete_run(&w->remote[k], w->run_id, &n, err,
					   sizeof(err)))
			uswap_log("swap device %s: the run's values were not deleted (%s); uswap gc removes them",
				  w->remote[k].path, err);
	}
	w->nr_remote = 0;
}

/* The public form of the wipe, for uswap run (uswap.h). */
struct uswap_swap_wipe {
	struct swap_wipe w;
};

EXPORT struct uswap_swap_wipe *uswap_swap_wipe_open(const struct uswap_options *opt)
{
	struct uswap_swap_wipe *sw = prim_alloc(sizeof(*sw));

	if (sw)
		swap_wipe_open(opt, &sw->w);
	return sw;
}

EXPORT void uswap_swap_wipe_run(struct uswap_swap_wipe *sw)
{
	if (!sw)
		return;
	swap_wipe_run(&sw->w);
	prim_free(sw, sizeof(*sw));
}
