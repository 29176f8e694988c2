// SPDX-License-Identifier: MIT
/*
 * protect.c - the preload library's interposers of protections, locks
 * and io_uring buffer registration: mprotect, pkey_mprotect, mlock,
 * mlock2, munlock, mlockall, munlockall, and liburing's
 * io_uring_register, io_uring_register_buffers (and _tags,
 * _update_tag), io_uring_unregister_buffers, io_uring_queue_exit.
 *
 * Each does what the program asked for, through the runtime when the
 * process has one (the library's uswap_mprotect() and friends: they make
 * the system call and keep uswap's view of managed memory right), or the
 * system call itself.  None of them creates a runtime: memory mapped
 * before there was one is not managed.
 *
 * io_uring: registering buffers pins their pages for as long as they are
 * registered; uswap keeps such pages resident and charged (uswap_pin()).
 * liburing itself makes the system calls inline, not through the C
 * library, so only its entry points can be seen: a program (or library)
 * that registers buffers with the raw system call is not seen, and the
 * kernel's refusal to move a pinned page (UFFDIO_MOVE) is then what keeps
 * reclaim away from them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <liburing.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "uswap.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef IORING_REGISTER_USE_REGISTERED_RING
#define IORING_REGISTER_USE_REGISTERED_RING	(1U << 31)
#endif

/* preload.c: this process's runtime, if it has one now (never made). */
struct uswap_runtime *preload_runtime_now(void);

EXPORT int mprotect(void *addr, size_t len, int prot)
{
	struct uswap_runtime *rt = preload_runtime_now();

	if (rt)
		return uswap_mprotect(rt, addr, len, prot);
	return syscall(SYS_mprotect, addr, len, prot) < 0 ? -1 : 0;
}

EXPORT int pkey_mprotect(void *addr, size_t len, int prot, int pkey)
{
	struct uswap_runtime *rt = preload_runtime_now();

	if (rt)
		return uswap_pkey_mprotect(rt, addr, len, prot, pkey);
	return syscall(SYS_pkey_mprotect, addr, len, prot, pkey) < 0 ? -1 : 0;
}

EXPORT int mlock2(const void *addr, size_t len, unsigned int flags)
{
	struct uswap_runtime *rt = preload_runtime_now();

	if (rt)
		return uswap_mlock2(rt, addr, len, flags);
	return syscall(SYS_mlock2, addr, len, flags) < 0 ? -1 : 0;
}

EXPORT int mlock(const void *addr, size_t len)
{
	return mlock2(addr, len, 0);
}

EXPORT int munlock(const void *addr, size_t len)
{
	struct uswap_runtime *rt = preload_runtime_now();

	if (rt)
		return uswap_munlock(rt, addr, len);
	return syscall(SYS_munlock, addr, len) < 0 ? -1 : 0;
}

EXPORT int mlockall(int flags)
{
	struct uswap_runtime *rt = preload_runtime_now();

	if (rt)
		return uswap_mlockall(rt, flags);
	return syscall(SYS_mlockall, flags) < 0 ? -1 : 0;
}

EXPORT int munlockall(void)
{
	struct uswap_runtime *rt = preload_runtime_now();

	if (rt)
		return uswap_munlockall(rt);
	return syscall(SYS_munlockall) < 0 ? -1 : 0;
}

/* ---- io_uring fixed buffers (liburing's entry points) ---- */

#define NEXT(name)	((__typeof__(&name))next_sym(#name))

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/*
 * Before a registration of nr buffers with the ring whose descriptor is
 * fd (or, owner -1 - fd, an update of its buffers): pin them in uswap's
 * view.  0 when pinned, 1 when nothing was to be done (no runtime, or the
 * ring has buffers already), or -errno: the registration must not be
 * made.
 */
static int pin(int owner, const struct iovec *iov, unsigned nr)
{
	struct uswap_runtime *rt = preload_runtime_now();

	return rt ? uswap_pin(rt, owner, iov, nr) : 1;
}

static void unpin(int owner)
{
	struct uswap_runtime *rt = preload_runtime_now();

	if (rt)
		uswap_unpin(rt, owner);
}

/* A registration that failed was never made: what it pinned goes. */
static int registered(int owner, int pinned, int ret)
{
	if (ret < 0 && pinned == 0)
		unpin(owner);
	return ret;
}

EXPORT int io_uring_register_buffers(struct io_uring *ring,
				     const struct iovec *iovecs,
				     unsigned nr_iovecs)
{
	int (*next)(struct io_uring *, const struct iovec *, unsigned) =
		NEXT(io_uring_register_buffers);
	int pinned = pin(ring->ring_fd, iovecs, nr_iovecs);

	if (pinned < 0)
		return pinned;
	return registered(ring->ring_fd, pinned,
			  next ? next(ring, iovecs, nr_iovecs) : -ENOSYS);
}

EXPORT int io_uring_register_buffers_tags(struct io_uring *ring,
					  const struct iovec *iovecs,
					  const __u64 *tags, unsigned nr)
{
	int (*next)(struct io_uring *, const struct iovec *, const __u64 *,
		    unsigned) = NEXT(io_uring_register_buffers_tags);
	int pinned = pin(ring->ring_fd, iovecs, nr);

	if (pinned < 0)
		return pinned;
	return registered(ring->ring_fd, pinned,
			  next ? next(ring, iovecs, tags, nr) : -ENOSYS);
}

/*
 * An update replaces some buffers: the new ones are pinned on top of the
 * ring's (those replaced stay pinned in uswap's view until the ring's
 * buffers go: resident for longer than they need, never evicted early).
 */
EXPORT int io_uring_register_buffers_update_tag(struct io_uring *ring,
						unsigned off,
						const struct iovec *iovecs,
						const __u64 *tags, unsigned nr)
{
	int (*next)(struct io_uring *, unsigned, const struct iovec *,
		    const __u64 *, unsigned) =
		NEXT(io_uring_register_buffers_update_tag);
	int pinned = pin(-1 - ring->ring_fd, iovecs, nr);

	if (pinned < 0)
		return pinned;
	return next ? next(ring, off, iovecs, tags, nr) : -ENOSYS;
}

EXPORT int io_uring_unregister_buffers(struct io_uring *ring)
{
	int (*next)(struct io_uring *) = NEXT(io_uring_unregister_buffers);
	int ret = next ? next(ring) : -ENOSYS;

	if (ret >= 0) {
		unpin(ring->ring_fd);
		unpin(-1 - ring->ring_fd);
	}
	return ret;
}

EXPORT void io_uring_queue_exit(struct io_uring *ring)
{
	void (*next)(struct io_uring *) = NEXT(io_uring_queue_exit);
	int fd = ring->ring_fd;

	if (next)
		next(ring);
	unpin(fd);
	unpin(-1 - fd);
}

/*
 * liburing's raw io_uring_register(2): buffer registrations are pinned
 * as above (IORING_REGISTER_BUFFERS2 and updates carry their iovecs in a
 * structure), the rest passes.
 */
EXPORT int io_uring_register(unsigned int fd, unsigned int opcode,
			     const void *arg, unsigned int nr_args)
{
	const struct iovec *iov = NULL;
	unsigned nr = 0;
	int owner = (int)fd, err, pinned = 1;
	long ret;

	switch (opcode & ~IORING_REGISTER_USE_REGISTERED_RING) {
	case IORING_REGISTER_BUFFERS:
		iov = arg;
		nr = nr_args;
		break;
	case IORING_REGISTER_BUFFERS2: {
		const struct io_uring_rsrc_register *rr = arg;

		if (rr && nr_args == sizeof(*rr)) {
			iov = (const struct iovec *)(uintptr_t)rr->data;
			nr = rr->nr;
		}
		break;
	}
	case IORING_REGISTER_BUFFERS_UPDATE: {
		const struct io_uring_rsrc_update2 *up = arg;

		if (up && nr_args == sizeof(*up)) {
			iov = (const struct iovec *)(uintptr_t)up->data;
			nr = up->nr;
			owner = -1 - (int)fd;
		}
		break;
	}
	default:
		break;
	}
	if (opcode & IORING_REGISTER_USE_REGISTERED_RING)
		iov = NULL;	/* fd is an index: no ring to name the pins by */
	if (iov && nr) {
		pinned = pin(owner, iov, nr);
		if (pinned < 0)
			return pinned;
	}
	ret = syscall(__NR_io_uring_register, fd, opcode, arg, nr_args);
	if (ret < 0) {
		err = -errno;
		if (owner == (int)fd)
			registered(owner, pinned, err);
		return err;
	}
	if ((opcode & ~IORING_REGISTER_USE_REGISTERED_RING) ==
	    IORING_UNREGISTER_BUFFERS && !(opcode & IORING_REGISTER_USE_REGISTERED_RING)) {
		unpin((int)fd);
		unpin(-1 - (int)fd);
	}
	return (int)ret;
}
