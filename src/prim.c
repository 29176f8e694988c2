// SPDX-License-Identifier: MIT
/*
 * prim.c - the system call layer.
 *
 * Every system call uswap makes goes through here: one place that probes
 * what the running kernel offers (the distribution's headers may be older
 * than the kernel, so the userfaultfd constants uswap needs are defined
 * below when missing), turns failures into -errno, and falls back when a
 * call is absent (process_madvise).  mmap and friends are called through
 * syscall(2), never through the libc symbols, because the preload library
 * interposes those.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED	(1 << 13)
#endif
#ifndef UFFDIO_COPY_MODE_WP
#define UFFDIO_COPY_MODE_WP		((__u64)1 << 1)
#endif
#ifndef UFFDIO_WRITEPROTECT_MODE_DONTWAKE
#define UFFDIO_WRITEPROTECT_MODE_DONTWAKE	((__u64)1 << 1)
#endif
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON		(1 << 14)
#endif
#ifndef UFFDIO_POISON
struct uffdio_poison {
	struct uffdio_range range;
	__u64 mode;
	__s64 updated;
};
#define UFFDIO_POISON	_IOWR(UFFDIO, 0x08, struct uffdio_poison)
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise		440
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open			434
#endif

/* Pseudo-feature bit of uffd_features_off: pretend process_madvise is absent. */
#define PRIM_NO_PROCESS_MADVISE		(1ull << 63)

static _Atomic int self_pidfd = -1;
static _Atomic pid_t self_pidfd_pid;
static _Atomic bool no_process_madvise;

int prim_uffd_open(uint64_t wanted, uint64_t off, uint64_t *got, int *uffdp)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd;

	if (off & PRIM_NO_PROCESS_MADVISE)
		no_process_madvise = true;
	/* A probe descriptor tells which features this kernel has. */
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);

	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	wanted &= api.features & ~off;
	memset(&api, 0, sizeof(api));
	api.api = UFFD_API;
	api.features = wanted;
	*got = 0;
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	/* The kernel answers with every feature it has: keep what we asked. */
	*got = wanted & api.features;
	*uffdp = fd;
	return 0;
}

int prim_uffd_register(int uffd, uintptr_t start, size_t len, bool wp)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING |
			(wp ? UFFDIO_REGISTER_MODE_WP : 0),
	};

	return ioctl(uffd, UFFDIO_REGISTER, &reg) < 0 ? -errno : 0;
}

int prim_uffd_unregister(int uffd, uintptr_t start, size_t len)
{
	struct uffdio_range range = { .start = start, .len = len };

	return ioctl(uffd, UFFDIO_UNREGISTER, &range) < 0 ? -errno : 0;
}

/*
 * Install len bytes at dst from src.  A page that is already present stops
 * the copy with -EEXIST; *copied says how far it got.
 */
int prim_uffd_copy(int uffd, uintptr_t dst, const void *src, size_t len,
		   bool wp, size_t *copied)
{
	size_t done = 0;

	while (done < len) {
		struct uffdio_copy c = {
			.dst = dst + done,
			.src = (uintptr_t)src + done,
			.len = len - done,
			.mode = wp ? UFFDIO_COPY_MODE_WP : 0,
		};

		if (ioctl(uffd, UFFDIO_COPY, &c) == 0) {
			done = len;
			break;
		}
		if (c.copy > 0)
			done += (size_t)c.copy;
		if (errno == EAGAIN)
			continue;
		if (copied)
			*copied = done;
		return -errno;
	}
	if (copied)
		*copied = done;
	return 0;
}

int prim_uffd_wp(int uffd, uintptr_t start, size_t len, bool protect, bool wake)
{
	struct uffdio_writeprotect w = {
		.range = { .start = start, .len = len },
		/* The kernel refuses DONTWAKE together with WP. */
		.mode = protect ? UFFDIO_WRITEPROTECT_MODE_WP :
			(wake ? 0 : UFFDIO_WRITEPROTECT_MODE_DONTWAKE),
	};

	for (;;) {
		if (ioctl(uffd, UFFDIO_WRITEPROTECT, &w) == 0)
			return 0;
		if (errno != EAGAIN)
			return -errno;
	}
}

/*
 * Make [start, start+len) raise SIGBUS on access (a memory error), and
 * wake the threads waiting there.  -EINVAL without UFFD_FEATURE_POISON.
 */
int prim_uffd_poison(int uffd, uintptr_t start, size_t len)
{
	struct uffdio_poison p = { .range = { .start = start, .len = len } };

	return ioctl(uffd, UFFDIO_POISON, &p) < 0 ? -errno : 0;
}

/*
 * The NUMA node of each of n pages (move_pages with no target: a query),
 * nodes[k] < 0 for a page that is not resident.  0 or -errno.
 */
int prim_move_pages(unsigned n, void **pages, int *nodes)
{
	long r = syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL,
			 nodes, 0);

	return r < 0 ? -errno : 0;
}

int prim_uffd_wake(int uffd, uintptr_t start, size_t len)
{
	struct uffdio_range range = { .start = start, .len = len };

	return ioctl(uffd, UFFDIO_WAKE, &range) < 0 ? -errno : 0;
}

void *prim_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int prim_munmap(void *addr, size_t len)
{
	return syscall(SYS_munmap, addr, len) < 0 ? -errno : 0;
}

void *prim_mremap(void *old, size_t old_len, size_t new_len, int flags,
		  void *new_addr)
{
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags,
			       new_addr);
}

int prim_madvise(void *addr, size_t len, int advice)
{
	return syscall(SYS_madvise, addr, len, advice) < 0 ? -errno : 0;
}

static int self_pidfd_get(void)
{
	pid_t pid = getpid();
	int fd = self_pidfd;

	/* A child after fork must not advise its parent. */
	if (fd >= 0 && self_pidfd_pid == pid)
		return fd;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		close(fd);
		return -errno;
	}
	self_pidfd = fd;
	self_pidfd_pid = pid;
	return fd;
}

/*
 * MADV_DONTNEED many ranges with as few calls as possible: process_madvise
 * on our own pidfd batches up to 1024 ranges and one TLB flush; kernels
 * that lack it (or refuse MADV_DONTNEED through it) get one madvise per
 * range.
 */
int prim_zap_ranges(const struct iovec *iov, size_t n)
{
	size_t i = 0;

	while (i < n && !no_process_madvise) {
		size_t batch = MIN(n - i, (size_t)1024), want = 0, j;
		int fd = self_pidfd_get();
		ssize_t done;

		if (fd < 0) {
			no_process_madvise = true;
			break;
		}
		for (j = 0; j < batch; j++)
			want += iov[i + j].iov_len;
		done = syscall(SYS_process_madvise, fd, iov + i, batch,
			       MADV_DONTNEED, 0);
		if (done < 0) {
			if (errno == EINVAL || errno == ENOSYS ||
			    errno == EPERM || errno == EBADF) {
				no_process_madvise = true;
				break;
			}
			return -errno;
		}
		if ((size_t)done != want) {
			/* Partial: finish this batch range by range. */
			for (j = 0; j < batch; j++)
				if (prim_madvise(iov[i + j].iov_base,
						 iov[i + j].iov_len,
						 MADV_DONTNEED))
					return -errno;
		}
		i += batch;
	}
	for (; i < n; i++) {
		int err = prim_madvise(iov[i].iov_base, iov[i].iov_len,
				       MADV_DONTNEED);
		if (err)
			return err;
	}
	return 0;
}

void *prim_alloc(size_t len)
{
	void *p = prim_mmap(NULL, (len + PAGE_SIZE - 1) & PAGE_MASK,
			    PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Memory shared with every process forked from this one (the slot maps,
 * the budget): it stays shared across fork, where prim_alloc's is copied.
 */
void *prim_alloc_shared(size_t len)
{
	void *p = prim_mmap(NULL, (len + PAGE_SIZE - 1) & PAGE_MASK,
			    PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * A mutex in shared memory, used by several processes.  Robust: when its
 * holder dies (kill -9 of one process of the tree), the next locker gets
 * it with EOWNERDEAD and takes it over, instead of waiting for ever.
 */
int prim_shared_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int err;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	err = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -err;
}

/*
 * Lock a shared mutex.  A holder that died mid-update may have left a
 * counter off by one folio; the structures it guards stay walkable (list
 * links are written in an order that keeps them so), and the alternative
 * is a tree that never makes progress again.
 */
void prim_mutex_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m) == EOWNERDEAD)
		pthread_mutex_consistent(m);
}

/*
 * Futexes on shared memory (no FUTEX_PRIVATE_FLAG): what several
 * processes wait on.  A process that dies while waiting leaves nothing
 * behind, unlike a process-shared condition variable.
 */
void prim_futex_wait(_Atomic uint32_t *word, uint32_t val, long timeout_ms)
{
	struct timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * 1000000L,
	};

	syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
}

void prim_futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void prim_free(void *p, size_t len)
{
	if (p)
		prim_munmap(p, (len + PAGE_SIZE - 1) & PAGE_MASK);
}

/*
 * Raw system calls: the kernel reads the application's pages under the
 * write-protect protocol, which ThreadSanitizer's interceptors cannot see.
 */
/*
 * Fault injection for tests: writes to one descriptor fail with EIO (the
 * runtime names it from USWAP_INJECT_WRITE_EIO, a device index).
 */
static _Atomic int inject_eio_fd = -1;

void prim_inject_write_eio(int fd)
{
	inject_eio_fd = fd;
}

bool prim_write_fails(int fd)
{
	return unlikely(fd >= 0 && fd == atomic_load_explicit(&inject_eio_fd,
							      memory_order_relaxed));
}

ssize_t prim_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	ssize_t r;

	if (prim_write_fails(fd))
		return -EIO;
	r = syscall(SYS_pwritev, fd, iov, n, (long)off, 0L);

	return r < 0 ? -errno : r;
}

ssize_t prim_pread(int fd, void *buf, size_t len, off_t off)
{
	ssize_t r = syscall(SYS_pread64, fd, buf, len, (long)off);

	return r < 0 ? -errno : r;
}

uint64_t prim_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}
