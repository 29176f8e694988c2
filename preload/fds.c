// SPDX-License-Identifier: MIT
/*
 * fds.c - the program's close, close_range, closefrom, dup2 and dup3
 * never reach uswap's descriptors (src/fdtable.c has the design).
 *
 *   close(fd)            one of uswap's: -1, EBADF, as for a descriptor
 *                        that is not open (a daemon's close loop goes on;
 *                        no program opened that number itself);
 *   close_range(a, b, f) the range is split around uswap's numbers, each
 *                        piece closed (or, with CLOSE_RANGE_CLOEXEC,
 *                        marked) as asked;
 *   closefrom(a)         close_range(a, ~0U, 0), as above (the C
 *                        library's own calls its internal close_range);
 *   dup2(o, n), dup3     onto one of uswap's: uswap's descriptor moves to
 *                        another number first (fd_move), then the
 *                        program's call replaces n as asked.
 *
 * A vfork child shares its parent's memory but has a table of its own:
 * nothing is moved there (the table above is the parent's); the child is
 * about to exec, where uswap's close-on-exec descriptors go anyway.
 *
 * What the C library does internally (its own closefrom, posix_spawn's
 * file actions in the child, the close-on-exec of exec) does not come
 * here and needs not: it either calls these symbols' internal twins in a
 * child about to exec, or closes descriptors of the program's own.  A raw
 * system call is caught afterwards (fdtable.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdtable.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef SYS_close_range
#define SYS_close_range		436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)
#endif

/* preload.c: uswap's descriptor `canonical` moved (USWAP_TREE_FD follows). */
void preload_tree_fd_moved(int canonical);

static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

EXPORT int close(int fd)
{
	if (fd_is_uswap(fd)) {
		errno = EBADF;
		return -1;
	}
	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (!real_close)
		return syscall(SYS_close, fd) ? -1 : 0;
	return real_close(fd);
}

/*
 * close_range(first, last, flags) with uswap's numbers left out: one call
 * per piece between them.  The first error is the program's answer.
 */
EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	int mine[512];
	unsigned n, k, from = first;
	int ret = 0;

	if (first > last) {
		errno = EINVAL;
		return -1;
	}
	n = fd_program_numbers(first, last, mine, 512);
	for (k = 0; k < n; k++) {
		unsigned m = (unsigned)mine[k];

		if (m > from && syscall(SYS_close_range, from, m - 1, flags) &&
		    !ret)
			ret = -1;
		from = m + 1;
	}
	if ((!n || (unsigned)mine[n - 1] < last) &&
	    syscall(SYS_close_range, from, last, flags) && !ret)
		ret = -1;
	return ret;
}

EXPORT void closefrom(int lowfd)
{
	int err = errno;

	if (lowfd < 0)
		lowfd = 0;
	(void)close_range((unsigned)lowfd, ~0U, 0);
	errno = err;
}

/* Before the program's dup onto newfd: uswap's descriptor there moves. */
static int make_room(int newfd)
{
	int canonical, err;

	if (!fd_is_uswap(newfd) || fd_in_vfork_child())
		return 0;
	canonical = fd_canonical_of(newfd);
	err = fd_move(newfd);
	if (err) {
		errno = -err;
		return -1;
	}
	preload_tree_fd_moved(canonical);
	return 0;
}

EXPORT int dup2(int oldfd, int newfd)
{
	if (oldfd != newfd && make_room(newfd))
		return -1;
	if (!real_dup2)
		real_dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
	if (!real_dup2)
		return (int)syscall(SYS_dup2, oldfd, newfd);
	return real_dup2(oldfd, newfd);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (oldfd != newfd && make_room(newfd))
		return -1;
	if (!real_dup3)
		real_dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
	if (!real_dup3)
		return (int)syscall(SYS_dup3, oldfd, newfd, flags);
	return real_dup3(oldfd, newfd, flags);
}
