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
 *
 * uswap's descriptors live high in the table, out of the program's reach
 * (fdtable.c): every one is installed as it is made, and every call here
 * that takes one translates the number uswap holds into the one the
 * calling thread's table has (fd_use), and closes through prim_fd_close.
 *
 * scripts/lint (its syscalls check) finds a call of these outside this
 * file; the few files that must call the kernel themselves say why on a
 * "raw:" line (fdtable.c, the descriptor layer; crash.c, a crash report).
 *
 * It is also where tests inject faults (USWAP_INJECT, at the end of this
 * file): a failing device, a full disk, an mmap that finds no memory, an
 * address space that changes under a userfaultfd ioctl, a compressor that
 * fails.  The hooks are compiled in always; unset, each costs one load and
 * one branch.
 */
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "log.h"
#include "prim.h"
#include "crash.h"
#include "fdtable.h"

#if defined(__SANITIZE_ADDRESS__)
#define USWAP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define USWAP_ASAN 1
#endif
#endif
#ifdef USWAP_ASAN
#include <sanitizer/asan_interface.h>
#endif

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
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW		_IO(0xAA, 0x00)
#endif
#ifndef UFFDIO_MOVE
struct uffdio_move {
	__u64 dst;
	__u64 src;
	__u64 len;
	__u64 mode;
	__s64 move;
};
#define UFFDIO_MOVE	_IOWR(UFFDIO, 0x05, struct uffdio_move)
#endif
#ifndef UFFDIO_MOVE_MODE_DONTWAKE
#define UFFDIO_MOVE_MODE_DONTWAKE		((__u64)1 << 0)
#define UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES	((__u64)1 << 1)
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise		440
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open			434
#endif

/* Pseudo-feature bit of uffd_features_off: pretend process_madvise is absent. */
#define PRIM_NO_PROCESS_MADVISE		(1ull << 63)

/*
 * This process's pidfd for process_madvise, opened on first use and kept
 * until the last runtime goes (prim_self_pidfd_close): one open only for
 * the call would come and go under a program that watches its
 * descriptors, and one open at fork would go to the child, unclosed.
 * pid << 32 | fd, 0 when none, so that one load tells whose it is: a fork
 * child finds its parent's, closes that copy and opens its own.
 */
static _Atomic uint64_t self_pidfd;
static _Atomic bool no_process_madvise;

/*
 * A new userfaultfd: the system call, or when it is refused (EPERM:
 * vm.unprivileged_userfaultfd=0 and no CAP_SYS_PTRACE), /dev/userfaultfd
 * (Linux 6.1), which an administrator may open to a group.  Either gives
 * the same descriptor, for faults in user and kernel mode alike.
 * (UFFD_USER_MODE_ONLY, which the system call allows everyone, is no way
 * out: a system call that touched a missing page would fail with EFAULT.)
 * -EPERM when neither is allowed.
 */
static int uffd_new(int flags)
{
	int fd = (int)syscall(SYS_userfaultfd, flags);
	int dev;

	if (fd >= 0 || errno != EPERM)
		return fd >= 0 ? fd : -errno;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -EPERM;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, flags);
	close(dev);
	return fd >= 0 ? fd : -EPERM;
}

int prim_uffd_open(uint64_t wanted, uint64_t off, uint64_t *got, int *uffdp)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd;

	if (off & PRIM_NO_PROCESS_MADVISE)
		no_process_madvise = true;
	/* A probe descriptor tells which features this kernel has. */
	fd = uffd_new(O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fd;
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);

	fd = uffd_new(O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fd;
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
	*uffdp = fd_install(fd, FD_UFFD);
	return 0;
}

/*
 * Close a descriptor uswap installed (fdtable.c): where it is in the
 * calling thread's table, with the raw system call (the preload library's
 * close() refuses uswap's numbers).
 */
void prim_fd_close(int fd)
{
	int n = fd_release(fd);

	if (n >= 0)
		syscall(SYS_close, n);
}

/* A close-on-exec copy of installed descriptor fd, installed as kind. */
int prim_fd_dup(int fd, enum fd_kind kind)
{
	struct fd_entry *e;
	int n = fcntl(fd_use(fd, &e), F_DUPFD_CLOEXEC, 3);

	fd_unuse(e);
	return n < 0 ? -errno : fd_install(n, kind);
}

/* Write one byte to installed descriptor fd (a wake-up pipe). */
void prim_fd_poke(int fd)
{
	struct fd_entry *e;

	(void)!write(fd_use(fd, &e), "x", 1);
	fd_unuse(e);
}

/* ioctl(fd, req, arg) on installed descriptor fd: 0 or -errno. */
static int fd_ioctl(int fd, unsigned long req, void *arg)
{
	struct fd_entry *e;
	int r = ioctl(fd_use(fd, &e), req, arg) < 0 ? -errno : 0;

	fd_unuse(e);
	return r;
}

/* ioctl(2) on a descriptor, installed or not: 0 or -errno. */
int prim_ioctl(int fd, unsigned long req, void *arg)
{
	return fd_ioctl(fd, req, arg);
}

int prim_uffd_register(int uffd, uintptr_t start, size_t len, bool wp)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING |
			(wp ? UFFDIO_REGISTER_MODE_WP : 0),
	};

	return fd_ioctl(uffd, UFFDIO_REGISTER, &reg);
}

/*
 * uswap's own staging area (vmscan.c): registered so that pages may be
 * moved into it (UFFDIO_MOVE wants its destination registered with the
 * same userfaultfd), for write-protect faults only, so that a page never
 * moved there reads as zeros rather than raising a fault no one serves.
 */
int prim_uffd_register_wp(int uffd, uintptr_t start, size_t len)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	return ioctl(uffd, UFFDIO_REGISTER, &reg) < 0 ? -errno : 0;
}

int prim_uffd_unregister(int uffd, uintptr_t start, size_t len)
{
	struct uffdio_range range = { .start = start, .len = len };

	return fd_ioctl(uffd, UFFDIO_UNREGISTER, &range);
}

/*
 * EAGAIN retries of this thread's userfaultfd ioctls since its last
 * prim_uffd_eagain_take(): the caller knows the runtime and counts them
 * (uffd_eagain).  Initial-exec TLS: nothing is allocated on first use,
 * which is on the fault path.
 */
static __thread unsigned uffd_eagain __attribute__((tls_model("initial-exec")));

unsigned prim_uffd_eagain_take(void)
{
	unsigned n = uffd_eagain;

	uffd_eagain = 0;
	return n;
}

/*
 * Tests (uffd_eexist): another thread installs the first page of the copy
 * just before us, with the same contents, as a racing resolver would.
 */
static void uffd_copy_race(int uffd, const struct uffdio_copy *c)
{
	struct uffdio_copy first = *c;

	first.len = PAGE_SIZE;
	(void)ioctl(uffd, UFFDIO_COPY, &first);
}

/* An address nothing is mapped at, out of the compiler's sight. */
static volatile uintptr_t inject_bad_address = 8;

/*
 * Tests (thread_crash, thread_abort): a thread of uswap crashes, as a bug
 * in uswap would make it (never a thread of the program).
 */
static void inject_thread_crash(void)
{
	if (!crash_thread_name())
		return;
	if (prim_inject(INJECT_THREAD_CRASH, -1))
		*(volatile int *)inject_bad_address = 1;
	if (prim_inject(INJECT_THREAD_ABORT, -1))
		abort();
}

/* One UFFDIO_COPY: 0 or the errno, c->copy as the kernel leaves it. */
static int uffd_copy_once(int uffd, struct uffdio_copy *c)
{
	if (unlikely(atomic_load_explicit(&prim_inject_armed,
					  memory_order_relaxed)))
		inject_thread_crash();
	if (prim_inject(INJECT_UFFD_EAGAIN, -1)) {
		c->copy = -EAGAIN;
		return EAGAIN;
	}
	if (prim_inject(INJECT_UFFD_EEXIST, -1))
		uffd_copy_race(uffd, c);
	return ioctl(uffd, UFFDIO_COPY, c) == 0 ? 0 : errno;
}

/*
 * Install len bytes at dst from src.  EAGAIN (the address space is
 * changing) is retried from where the copy stopped.  A page that is
 * mapped already (EEXIST: another thread resolved it, or the mapping
 * changed under us) is left as it is, its waiters are woken, and the copy
 * goes on past it: stopping there would leave the pages after it missing
 * in a folio taken for resident.  The call then returns -EEXIST after the
 * rest is installed, so that the caller knows one page is not its copy.
 * A range that spans several mappings (a folio part of which the program
 * gave another protection, splitting its mapping) is refused whole with
 * ENOENT: it is installed piece by piece, halving the length tried until
 * a piece fits in one mapping; a single page refused so has no mapping.
 * *copied says how far it got (len unless another error stopped it).
 */
int prim_uffd_copy(int uffd, uintptr_t dst, const void *src, size_t len,
		   bool wp, size_t *copied)
{
	struct fd_entry *fe;
	const int canonical = uffd;
	size_t done = 0, want = len;
	int ret = 0;

	uffd = fd_use(canonical, &fe);
	while (done < len) {
		struct uffdio_copy c = {
			.dst = dst + done,
			.src = (uintptr_t)src + done,
			.len = MIN(want, len - done),
			.mode = wp ? UFFDIO_COPY_MODE_WP : 0,
		};
		int err = uffd_copy_once(uffd, &c);

		if (!err) {
			done += c.len;
			want = len;
			continue;
		}
		if (c.copy > 0)
			done += (size_t)c.copy;
		if (err == EAGAIN) {
			uffd_eagain++;
			continue;
		}
		if (err == ENOENT && c.copy <= 0 && c.len > PAGE_SIZE) {
			want = (c.len / 2 + PAGE_SIZE - 1) & PAGE_MASK;
			continue;
		}
		if (err != EEXIST) {
			ret = -err;
			break;
		}
		prim_uffd_wake(canonical, dst + done, PAGE_SIZE);
		done += PAGE_SIZE;
		ret = -EEXIST;
	}
	fd_unuse(fe);
	if (copied)
		*copied = MIN(done, len);
	return ret;
}

ssize_t prim_uffd_read(int uffd, void *msgs, size_t len)
{
	ssize_t n;

	if (prim_inject(INJECT_UFFD_READ_EIO, -1))
		return -EIO;
	n = read(uffd, msgs, len);
	return n < 0 ? -errno : n;
}

/*
 * Move len bytes of present anonymous pages from src to dst, which lies
 * in a range registered with uffd and has no page mapped (UFFDIO_MOVE,
 * Linux 6.8): atomically, page by page, so that after the move nobody
 * can reach a page at src.  With allow_holes, a page missing at src
 * leaves dst missing too.  Returns 0, or the -errno of the page that
 * could not move (EBUSY: pinned, or shared with another process; EINVAL:
 * the two mappings differ in protection or lock, or src spans two
 * mappings; ENOENT: a hole); *moved says how many bytes moved before it.
 * Nobody is woken.
 */
int prim_uffd_move(int uffd, uintptr_t dst, uintptr_t src, size_t len,
		   bool allow_holes, size_t *moved)
{
	struct fd_entry *fe;
	size_t done = 0;
	unsigned again = 0;
	int ret = 0;

	uffd = fd_use(uffd, &fe);
	while (done < len) {
		struct uffdio_move m = {
			.dst = dst + done,
			.src = src + done,
			.len = len - done,
			.mode = UFFDIO_MOVE_MODE_DONTWAKE |
				(allow_holes ? UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES : 0),
		};
		int err;

		if (ioctl(uffd, UFFDIO_MOVE, &m) == 0) {
			done = len;
			break;
		}
		err = errno;
		if (m.move > 0) {
			/* Short: the next call says what stopped it. */
			done += (size_t)m.move;
			continue;
		}
		if (err == EAGAIN && ++again < 1000) {
			uffd_eagain++;
			continue;
		}
		ret = -err;
		break;
	}
	fd_unuse(fe);
	*moved = done;
	return ret;
}

int prim_uffd_wp(int uffd, uintptr_t start, size_t len, bool protect, bool wake)
{
	struct uffdio_writeprotect w = {
		.range = { .start = start, .len = len },
		/* The kernel refuses DONTWAKE together with WP. */
		.mode = protect ? UFFDIO_WRITEPROTECT_MODE_WP :
			(wake ? 0 : UFFDIO_WRITEPROTECT_MODE_DONTWAKE),
	};

	int err;

	for (;;) {
		if (prim_inject(INJECT_UFFD_EAGAIN, -1)) {
			uffd_eagain++;	/* as the kernel's EAGAIN: again */
			continue;
		}
		err = fd_ioctl(uffd, UFFDIO_WRITEPROTECT, &w);
		if (err != -EAGAIN)
			return err;
		uffd_eagain++;
	}
}

/*
 * Make [start, start+len) raise SIGBUS on access (a memory error), and
 * wake the threads waiting there.  -EINVAL without UFFD_FEATURE_POISON.
 */
int prim_uffd_poison(int uffd, uintptr_t start, size_t len)
{
	struct uffdio_poison p = { .range = { .start = start, .len = len } };

	return fd_ioctl(uffd, UFFDIO_POISON, &p);
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

/*
 * Move n pages each to its node nodes[k] (move_pages, flags MPOL_MF_*),
 * status[k] its node after or -errno: the number of pages not moved, or
 * -errno when the call failed as a whole.
 */
long prim_move_pages_to(unsigned n, void **pages, const int *nodes,
			int *status, int flags)
{
	long r = syscall(SYS_move_pages, 0, (unsigned long)n, pages, nodes,
			 status, flags);

	return r < 0 ? -errno : r;
}

int prim_uffd_wake(int uffd, uintptr_t start, size_t len)
{
	struct uffdio_range range = { .start = start, .len = len };

	return fd_ioctl(uffd, UFFDIO_WAKE, &range);
}

/*
 * The raw system calls: the preload library interposes mmap and munmap.
 * A ThreadSanitizer build (never the preload's) goes through the C
 * library's, which ThreadSanitizer follows: a range unmapped and mapped
 * again by another thread (a region's tables freed by one thread and
 * made by the next mmap) is new memory to it, not a race.
 */
static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off)
{
#ifdef USWAP_TSAN
	return mmap(addr, len, prot, flags, fd, off);
#else
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
#endif
}

/* mmap(2) with errno set on failure; tests may make it fail (mmap_enomem). */
void *prim_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (prim_inject(INJECT_MMAP_ENOMEM, -1)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return sys_mmap(addr, len, prot, flags, fd, off);
}

static void own_del(void *p, size_t len);

int prim_munmap(void *addr, size_t len)
{
	own_del(addr, len);
#ifdef USWAP_TSAN
	return munmap(addr, len) < 0 ? -errno : 0;
#else
	return syscall(SYS_munmap, addr, len) < 0 ? -errno : 0;
#endif
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

/*
 * This process's pidfd (self_pidfd), or -errno.  One of uswap's threads,
 * whose table is its own (fdtable.c), never opens it: one it opened would
 * be in its table only.
 */
static int self_pidfd_get(void)
{
	uint64_t cur = atomic_load(&self_pidfd), mine;
	pid_t pid = getpid();
	int fd;

	for (;;) {
		if (cur && (pid_t)(cur >> 32) == pid)
			return (int)(uint32_t)cur;
		if (fd_thread_is_private())
			return -EBADF;
		/* Close-on-exec: every pidfd is. */
		fd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (fd < 0)
			return -errno;
		fd = fd_install_process(fd, FD_PIDFD);
		mine = (uint64_t)pid << 32 | (uint32_t)fd;
		if (atomic_compare_exchange_strong(&self_pidfd, &cur, mine)) {
			/* The parent's, inherited at fork: nobody here uses it. */
			if (cur)
				prim_fd_close((int)(uint32_t)cur);
			return fd;
		}
		prim_fd_close(fd);	/* another thread was first: cur is its */
	}
}

/*
 * A fork child that had the pidfd opens its own at once, in the program's
 * table, before its runtimes start their threads (registered before the
 * runtime's own fork handlers, which run after this one).
 */
static void self_pidfd_fork_child(void)
{
	if (atomic_load(&self_pidfd))
		(void)self_pidfd_get();
}

static void self_pidfd_atfork(void)
{
	pthread_atfork(NULL, NULL, self_pidfd_fork_child);
}

/*
 * Open this process's pidfd now, at a runtime's creation, rather than at
 * its first batch of zaps: a descriptor of uswap's should not appear in
 * the middle of a program's life.  Failures are left to prim_zap_ranges.
 */
void prim_self_pidfd_open(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, self_pidfd_atfork);
	(void)self_pidfd_get();
}

void prim_self_pidfd_close(void)
{
	uint64_t cur = atomic_exchange(&self_pidfd, 0);

	if (cur)
		prim_fd_close((int)(uint32_t)cur);
}

/*
 * MADV_DONTNEED many ranges with as few calls as possible: process_madvise
 * on our own pidfd batches up to 1024 ranges and one TLB flush; kernels
 * that lack it (or refuse MADV_DONTNEED through it) get one madvise per
 * range.  With errs, errs[i] gets range i's 0 or -errno (a range the
 * kernel refused, a locked one, may have been dropped in part), and every
 * range is tried; without, the first failure stops it.  Returns 0, or
 * the first -errno.
 */
int prim_zap_ranges_each(const struct iovec *iov, size_t n, int *errs)
{
	size_t i = 0, j;
	int first = 0, err, perr;
	bool refused;

	while (i < n && !no_process_madvise) {
		size_t batch = MIN(n - i, (size_t)1024), want = 0, got = 0;
		int fd = self_pidfd_get();
		ssize_t done;

		if (fd < 0) {
			if (fd == -ENOSYS || fd == -EINVAL || fd == -EPERM)
				no_process_madvise = true;
			break;		/* or out of descriptors: this time */
		}
		struct fd_entry *e;

		for (j = 0; j < batch; j++)
			want += iov[i + j].iov_len;
		done = syscall(SYS_process_madvise, fd_use(fd, &e), iov + i,
			       batch, MADV_DONTNEED, 0);
		perr = done < 0 ? errno : 0;
		fd_unuse(e);
		if (done == (ssize_t)want) {
			if (errs)
				memset(errs + i, 0, batch * sizeof(*errs));
			i += batch;
			continue;
		}
		if (perr == ENOSYS || perr == EPERM || perr == EBADF)
			no_process_madvise = true;
		/*
		 * Short or refused: the ranges wholly done are done, and the
		 * others are tried one by one, to know which the kernel
		 * refuses (a refused range stops process_madvise).  EINVAL
		 * for a batch whose every range madvise takes: this kernel's
		 * process_madvise does not do MADV_DONTNEED.
		 */
		refused = false;
		for (j = 0; j < batch; j++) {
			if (done > 0 && got + iov[i + j].iov_len <= (size_t)done) {
				got += iov[i + j].iov_len;
				if (errs)
					errs[i + j] = 0;
				continue;
			}
			done = 0;
			err = prim_madvise(iov[i + j].iov_base,
					   iov[i + j].iov_len, MADV_DONTNEED);
			if (errs)
				errs[i + j] = err;
			if (!err)
				continue;
			refused = true;
			if (!first)
				first = err;
			if (!errs)
				return err;
		}
		if (!refused && perr == EINVAL)
			no_process_madvise = true;
		i += batch;
	}
	for (; i < n; i++) {
		err = prim_madvise(iov[i].iov_base, iov[i].iov_len,
				   MADV_DONTNEED);
		if (errs)
			errs[i] = err;
		if (err && !first)
			first = err;
		if (err && !errs)
			return err;
	}
	return first;
}

int prim_zap_ranges(const struct iovec *iov, size_t n)
{
	return prim_zap_ranges_each(iov, n, NULL);
}

int prim_mlock(void *addr, size_t len, bool lock, bool onfault)
{
	long r = lock ? syscall(SYS_mlock2, addr, len, onfault ? 1 : 0) :
			syscall(SYS_munlock, addr, len);

	return r < 0 ? -errno : 0;
}

/*
 * The program's own calls (mlock.c, mprotect.c), raw: the preload library
 * interposes the libc symbols, and sanitizers replace mlock's with one
 * that does nothing.  flags go to the kernel as the program gave them.
 */
int prim_mlock2(const void *addr, size_t len, unsigned flags)
{
	return syscall(SYS_mlock2, addr, len, flags) < 0 ? -errno : 0;
}

int prim_munlock(const void *addr, size_t len)
{
	return syscall(SYS_munlock, addr, len) < 0 ? -errno : 0;
}

int prim_mlockall(int flags)
{
	return syscall(SYS_mlockall, flags) < 0 ? -errno : 0;
}

int prim_munlockall(void)
{
	return syscall(SYS_munlockall) < 0 ? -errno : 0;
}

/* For the program's calls: 0, or -1 with errno = -err. */
int prim_libc_result(int err)
{
	if (!err)
		return 0;
	errno = -err;
	return -1;
}

/* mprotect(2), or pkey_mprotect(2) when pkey >= 0: 0 or -errno. */
int prim_mprotect(void *addr, size_t len, int prot, int pkey)
{
	long r = pkey < 0 ? syscall(SYS_mprotect, addr, len, prot) :
			    syscall(SYS_pkey_mprotect, addr, len, prot, pkey);

	return r < 0 ? -errno : 0;
}

/* This process's memory as a file (/proc/self/mem), or -errno. */
int prim_self_mem_open(void)
{
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd_install(fd, FD_SELF_MEM);
}

/*
 * Read len bytes of this process's memory at addr into buf through a
 * read-only pin of its pages (process_vm_readv on ourselves): a page
 * mapped by this process alone that a fork left marked shared becomes
 * its own again, as the kernel makes a page it pins (a page still mapped
 * by another process would be copied: the caller checks first).  Returns
 * the bytes read, or -errno.
 */
ssize_t prim_read_pinned(void *buf, uintptr_t addr, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)addr, len };
	ssize_t r = syscall(SYS_process_vm_readv, getpid(), &local, 1UL,
			    &remote, 1UL, 0UL);

	return r < 0 ? -errno : r;
}

/* --- uswap's own memory --- */

/*
 * uswap's own large mappings (OWN_MIN bytes and more: slot maps,
 * checksums and seals, the pool's arena and tables, the slab, page-state
 * tables), so that a program's mlockall() locks and brings in the
 * program's memory and not these (mlock.c).  A slot map is sized for the
 * largest device (a growing swap file: half its file system), a gigabyte
 * or more of address space of which a few pages are used: the kernel's
 * MCL_CURRENT brought 1.2 GB of it in for a program of 16 MiB.
 *
 * Lock-free (a fork may come at any time): an entry is claimed by
 * compare-and-swap of its start and given back by clearing it; a reader
 * that sees one half made or half gone at most leaves a range locked
 * that need not be.
 */
#define OWN_MIN		(1ul << 20)
#define OWN_MAX		512

static struct own_range {
	_Atomic uintptr_t start, end;
} own[OWN_MAX];
/* MCL_FUTURE in force: the kernel would lock, and bring in, a new mapping. */
static atomic_bool own_future;

static void own_add(void *p, size_t len)
{
	unsigned k;

	if (len < OWN_MIN)
		return;
	for (k = 0; k < OWN_MAX; k++) {
		uintptr_t none = 0;

		if (atomic_compare_exchange_strong(&own[k].start, &none,
						   (uintptr_t)p)) {
			atomic_store(&own[k].end, (uintptr_t)p + len);
			return;
		}
	}
	/* Full: this one is the program's to mlockall, as before. */
}

/* Forget the own mappings that start in [p, p+len): being unmapped. */
static void own_del(void *p, size_t len)
{
	uintptr_t s = (uintptr_t)p, e = s + len;
	unsigned k;

	if (len < OWN_MIN)
		return;
	for (k = 0; k < OWN_MAX; k++) {
		uintptr_t a = atomic_load(&own[k].start);

		if (a >= s && a < e) {
			atomic_store(&own[k].end, 0);
			atomic_store(&own[k].start, 0);
		}
	}
}

void prim_own_future(bool on)
{
	atomic_store(&own_future, on);
}

/*
 * The first own range that ends after addr and starts before end, into
 * *s and *e: false when there is none.
 */
bool prim_own_next(uintptr_t addr, uintptr_t end, uintptr_t *s, uintptr_t *e)
{
	uintptr_t best = UINTPTR_MAX, best_end = 0;
	unsigned k;

	for (k = 0; k < OWN_MAX; k++) {
		uintptr_t a = atomic_load(&own[k].start);
		uintptr_t b = atomic_load(&own[k].end);

		if (a && b > addr && a < end && a < best) {
			best = a;
			best_end = b;
		}
	}
	if (!best_end)
		return false;
	*s = best;
	*e = best_end;
	return true;
}

/* Unlock every own mapping (after the kernel's mlockall locked them). */
void prim_own_munlock(void)
{
	unsigned k;

	for (k = 0; k < OWN_MAX; k++) {
		uintptr_t a = atomic_load(&own[k].start);
		uintptr_t b = atomic_load(&own[k].end);

		if (a && b > a)
			(void)prim_munlock((void *)a, b - a);
	}
}

/*
 * A mapping of uswap's own, read-write: flags MAP_PRIVATE or MAP_SHARED
 * with MAP_ANONYMOUS, or a file's.  Kept out of the program's core dumps
 * when shared (prim_dontdump) and out of its mlockall (above): under
 * MCL_FUTURE it is made PROT_NONE (which the kernel locks but cannot
 * bring in), unlocked, then opened.  MAP_FAILED with errno on failure.
 */
void *prim_map_own(size_t len, int flags, int fd)
{
	const int rw = PROT_READ | PROT_WRITE;
	bool future = atomic_load(&own_future);
	void *p;

	len = (len + PAGE_SIZE - 1) & PAGE_MASK;
	p = sys_mmap(NULL, len, future ? PROT_NONE : rw, flags, fd, 0);
	if (p == MAP_FAILED)
		return p;
	if (future) {
		int err = prim_munlock(p, len);

		if (!err)
			err = prim_mprotect(p, len, rw, -1);
		if (err) {
			prim_munmap(p, len);
			errno = -err;
			return MAP_FAILED;
		}
	}
	if (flags & MAP_SHARED)
		prim_dontdump(p, len);
	own_add(p, len);
	return p;
}

void *prim_alloc(size_t len)
{
	void *p = prim_map_own(len, MAP_PRIVATE | MAP_ANONYMOUS |
				    MAP_NORESERVE, -1);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Room for `more` elements of elem bytes after the nr in use in *arr, an
 * array of internal memory of *cap elements (*len bytes; 0, 0 and NULL at
 * first): its capacity doubled from 64 until they fit, what was in use
 * copied, the old array freed.  0 or -ENOMEM (then *arr is as it was).
 */
int prim_array_grow(void **arr, size_t *len, unsigned *cap, unsigned nr,
		    unsigned more, size_t elem)
{
	unsigned want = *cap ? *cap : 64;
	size_t bytes;
	void *p;

	if (nr + more <= *cap)
		return 0;
	while (want < nr + more)
		want *= 2;
	bytes = want * elem;
	p = prim_alloc(bytes);
	if (!p)
		return -ENOMEM;
	if (nr)
		memcpy(p, *arr, nr * elem);
	prim_free(*arr, *len);
	*arr = p;
	*cap = want;
	*len = bytes;
	return 0;
}

/*
 * A thread's stack of len bytes (a page multiple) of uswap's own, above a
 * guard page: its lowest address, or NULL.  prim_free_stack() frees it.
 */
void *prim_alloc_stack(size_t len)
{
	char *p = prim_alloc(len + PAGE_SIZE);

	if (!p)
		return NULL;
	if (sys_mmap(p, PAGE_SIZE, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		prim_free(p, len + PAGE_SIZE);
		return NULL;
	}
	return p + PAGE_SIZE;
}

void prim_free_stack(void *stack, size_t len)
{
#ifdef USWAP_ASAN
	/* Its frames' redzones stay in AddressSanitizer's shadow (the raw
	   munmap is not seen): the next mapping here must not inherit them. */
	__asan_unpoison_memory_region(stack, len);
#endif
	prim_free((char *)stack - PAGE_SIZE, len + PAGE_SIZE);
}

/*
 * Memory shared with every process forked from this one (the slot maps,
 * the budget): it stays shared across fork, where prim_alloc's is copied.
 * Never in the program's core dump (prim_map_own).
 */
void *prim_alloc_shared(size_t len)
{
	void *p = prim_map_own(len, MAP_SHARED | MAP_ANONYMOUS |
				    MAP_NORESERVE, -1);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Keep shared memory of uswap's out of the program's core dumps.  The
 * kernel dumps shared mappings page by page, and for a page never
 * touched it allocates one: a slot map sized for a large device (1 GiB of
 * address space, a few pages used) turned a 32 MiB program's core into
 * 1.3 GB written, and as much memory taken, as it crashed.  Private
 * memory (never-touched pages are holes in the core) stays in the dump,
 * for whoever debugs uswap itself.
 */
void prim_dontdump(void *addr, size_t len)
{
	(void)prim_madvise(addr, len, MADV_DONTDUMP);
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
ssize_t prim_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	struct fd_entry *e;
	ssize_t r = syscall(SYS_pwritev, fd_use(fd, &e), iov, n, (long)off, 0L);

	r = r < 0 ? -errno : r;
	fd_unuse(e);
	return r;
}

/*
 * Reserve (mode 0) or punch file space; 0 or -errno.  Tests may make a
 * reservation on a device fail as on a full disk (enospc).
 */
int prim_fallocate(int fd, int mode, off_t off, off_t len)
{
	struct fd_entry *e;
	int r;

	if (mode == 0 && prim_inject(INJECT_ENOSPC, fd))
		return -ENOSPC;
	r = fallocate(fd_use(fd, &e), mode, off, len) < 0 ? -errno : 0;
	fd_unuse(e);
	return r;
}

ssize_t prim_pread(int fd, void *buf, size_t len, off_t off)
{
	struct fd_entry *e;
	ssize_t r = syscall(SYS_pread64, fd_use(fd, &e), buf, len, (long)off);

	r = r < 0 ? -errno : r;
	fd_unuse(e);
	return r;
}

/*
 * --- files and descriptors ---
 *
 * Through the C library, as a call site would make them (ThreadSanitizer
 * follows a pipe's write to its read).  A descriptor uswap installed is
 * given by its canonical number and used where the calling thread has it
 * (fd_use); any other passes as it is.  Results: the call's, or -errno.
 */
int prim_open(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags, mode);

	return fd < 0 ? -errno : fd;
}

int prim_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	struct fd_entry *e;
	int fd = openat(fd_use(dirfd, &e), path, flags, mode);

	fd = fd < 0 ? -errno : fd;
	fd_unuse(e);
	return fd;
}

int prim_stat(const char *path, struct stat *st)
{
	return stat(path, st) < 0 ? -errno : 0;
}

int prim_lstat(const char *path, struct stat *st)
{
	return lstat(path, st) < 0 ? -errno : 0;
}

int prim_access(const char *path, int mode)
{
	return access(path, mode) < 0 ? -errno : 0;
}

int prim_unlinkat(int dirfd, const char *name, int flags)
{
	struct fd_entry *e;
	int r = unlinkat(fd_use(dirfd, &e), name, flags) < 0 ? -errno : 0;

	fd_unuse(e);
	return r;
}

int prim_flock(int fd, int op)
{
	struct fd_entry *e;
	int r = flock(fd_use(fd, &e), op) < 0 ? -errno : 0;

	fd_unuse(e);
	return r;
}

int prim_memfd_create(const char *name, unsigned flags)
{
	int fd = memfd_create(name, flags);

	return fd < 0 ? -errno : fd;
}

int prim_pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

/* Close a descriptor uswap did not install (prim_fd_close closes those). */
int prim_close(int fd)
{
	return close(fd) < 0 ? -errno : 0;
}

ssize_t prim_read(int fd, void *buf, size_t len)
{
	struct fd_entry *e;
	ssize_t n = read(fd_use(fd, &e), buf, len);

	n = n < 0 ? -errno : n;
	fd_unuse(e);
	return n;
}

/* Read until len bytes or the end of the file (EINTR retried). */
ssize_t prim_read_all(int fd, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = prim_read(fd, (char *)buf + done, len - done);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t prim_write(int fd, const void *buf, size_t len)
{
	struct fd_entry *e;
	ssize_t n = write(fd_use(fd, &e), buf, len);

	n = n < 0 ? -errno : n;
	fd_unuse(e);
	return n;
}

int prim_fstat(int fd, struct stat *st)
{
	struct fd_entry *e;
	int r = fstat(fd_use(fd, &e), st) < 0 ? -errno : 0;

	fd_unuse(e);
	return r;
}

int prim_ftruncate(int fd, off_t len)
{
	struct fd_entry *e;
	int r = ftruncate(fd_use(fd, &e), len) < 0 ? -errno : 0;

	fd_unuse(e);
	return r;
}

/* fcntl(2) with an int argument (F_GETFL, F_SETFL, F_GETFD, F_DUPFD*). */
int prim_fcntl(int fd, int cmd, int arg)
{
	struct fd_entry *e;
	int r = fcntl(fd_use(fd, &e), cmd, arg);

	r = r < 0 ? -errno : r;
	fd_unuse(e);
	return r;
}

int prim_pipe2(int fds[2], int flags)
{
	return pipe2(fds, flags) < 0 ? -errno : 0;
}

/*
 * poll(2) for uswap's own threads, whose tables hold the canonical
 * numbers (fdtable.c): the numbers are not translated, since a use held
 * across a wait would hold up the program's dup2 onto one.
 */
int prim_poll(struct pollfd *pfd, unsigned n, int timeout_ms)
{
	int r = poll(pfd, n, timeout_ms);

	return r < 0 ? -errno : r;
}

/*
 * The epoll calls go to the kernel directly: the sets are made by uswap's
 * threads, each in a descriptor table of its own (fdtable.c), where one
 * number names different files in two threads; ThreadSanitizer, which
 * keeps one record per number for the whole process, takes that for a
 * race.
 */
int prim_epoll_create(void)
{
	long ep = syscall(SYS_epoll_create1, EPOLL_CLOEXEC);

	return ep < 0 ? -errno : (int)ep;
}

int prim_epoll_add(int ep, int fd, bool exclusive)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (exclusive ? EPOLLEXCLUSIVE : 0u),
		.data.fd = fd,
	};

	return syscall(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int prim_epoll_wait(int ep, int timeout_ms)
{
	struct epoll_event ev[2];
	long r = syscall(SYS_epoll_pwait, ep, ev, 2, timeout_ms, NULL, 0);

	return r < 0 ? -errno : (int)r;
}

/* Directory entries of fd (getdents64): bytes, 0 at the end, or -errno. */
ssize_t prim_getdents(int fd, void *buf, size_t len)
{
	struct fd_entry *e;
	ssize_t n = getdents64(fd_use(fd, &e), buf, len);

	n = n < 0 ? -errno : n;
	fd_unuse(e);
	return n;
}

/* The target of symbolic link path, not NUL-terminated: its length. */
ssize_t prim_readlink(const char *path, char *buf, size_t len)
{
	ssize_t n = readlink(path, buf, len);

	return n < 0 ? -errno : n;
}

/*
 * A small text file of /proc or /sys into buf, NUL-terminated: its
 * length (at most len - 1), or -errno.  Only a regular file (those are):
 * opened without waiting and checked on the descriptor, so that a FIFO
 * put in its place (under a test's sysfs root) cannot block the caller
 * (-EINVAL).  No allocation: fork handlers read /proc too.
 */
ssize_t prim_read_file(const char *path, char *buf, size_t len)
{
	struct stat st;
	ssize_t n;
	int fd = prim_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);

	if (fd < 0)
		return fd;
	n = prim_fstat(fd, &st);
	if (!n && !S_ISREG(st.st_mode))
		n = -EINVAL;
	if (!n)
		n = prim_read_all(fd, buf, len - 1);
	prim_close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

/*
 * Each mapping of /proc/self/maps, in address order: fn(start, end, arg).
 * The file is read a page at a time, so the mappings may change as it is
 * read (the kernel goes on from the last address it gave).  0 or -errno.
 */
int prim_maps_each(void (*fn)(uintptr_t start, uintptr_t end, void *arg),
		   void *arg)
{
	char buf[4096];
	size_t have = 0;
	ssize_t n;
	int fd = prim_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return fd;
	while ((n = prim_read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *s = buf, *nl;

		have += (size_t)n;
		buf[have] = 0;
		while ((nl = strchr(s, '\n'))) {
			char *dash;
			uintptr_t start = strtoull(s, &dash, 16);

			if (*dash == '-')
				fn(start, strtoull(dash + 1, NULL, 16), arg);
			s = nl + 1;
		}
		have = strlen(s);
		memmove(buf, s, have);
		if (have == sizeof(buf) - 1)
			have = 0;	/* no line is this long */
	}
	prim_close(fd);
	return n < 0 ? (int)n : 0;
}

/* --- processes and threads --- */

/* kill(2): 0 or -errno (sig 0: does pid exist?). */
int prim_kill(pid_t pid, int sig)
{
	return kill(pid, sig) < 0 ? -errno : 0;
}

/* The calling thread's name (its comm, in /proc): 0 or -errno. */
int prim_set_thread_name(const char *name)
{
	return prctl(PR_SET_NAME, name) < 0 ? -errno : 0;
}

uint64_t prim_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* --- fault injection (tests) --- */

/*
 * USWAP_INJECT names the faults to inject, comma-separated (a fault named
 * twice: the last wins):
 *
 *	write_eio=DEV[:N]	a write to device DEV fails with EIO
 *	read_eio=DEV[:N]	a read from DEV fails with EIO
 *	short_write=DEV[:N]	a write of more than a page to DEV reports
 *				half of it (in whole pages) done
 *	short_read=DEV[:N]	the same for a read
 *	enospc=DEV[:N]		reserving file space on DEV, or a write to
 *				it, fails with ENOSPC (a full file system)
 *	corrupt=DEV[:N]		a read from DEV completes with its first
 *				byte flipped (what the checksums are for)
 *	mmap_enomem=N		prim_mmap() fails with ENOMEM
 *	uffd_eagain=N		UFFDIO_COPY or UFFDIO_WRITEPROTECT fails with
 *				EAGAIN (the address space is changing); N >= 2
 *	uffd_eexist=N		UFFDIO_COPY finds the first page of its range
 *				mapped already (EEXIST), another thread having
 *				installed the same contents just before
 *	compress_fail=N		the compressed pool's compressor fails
 *	thread_crash=N		a thread of uswap about to install a folio
 *				(UFFDIO_COPY) stores to address 8: SIGSEGV
 *	thread_abort=N		the same thread calls abort(): SIGABRT
 *	uffd_read_eio=N		a fault thread's read of the userfaultfd fails
 *				with EIO (the message stays queued)
 *	fault_stall=N		a fault thread stops serving with the message
 *				it has just read, as if stuck, until the
 *				runtime stops
 *
 * DEV is a device index, in the order the devices were given (--swap,
 * then the swaptab); a call on another device does not count.  N picks
 * calls of that kind: the Nth, and every Nth after it (N = 1: every one);
 * DEV alone is DEV:1.  A call is one transfer (a short one's resubmission
 * is another), one fallocate, one ioctl, one prim_mmap (the program's
 * mappings, and the runtime's few tables made after its devices; the
 * internal memory of prim_alloc is never counted), one compressed unit,
 * one read of the userfaultfd (an empty one too), one message read.
 * USWAP_INJECT_WRITE_EIO=DEV, the older spelling, is write_eio=DEV.
 */
static const struct inject_kind {
	const char *name;
	bool device;		/* DEV[:N], else N */
	unsigned min_every;
} inject_kinds[NR_INJECT] = {
	[INJECT_WRITE_EIO]	= { "write_eio",	true,	1 },
	[INJECT_READ_EIO]	= { "read_eio",		true,	1 },
	[INJECT_SHORT_WRITE]	= { "short_write",	true,	1 },
	[INJECT_SHORT_READ]	= { "short_read",	true,	1 },
	[INJECT_ENOSPC]		= { "enospc",		true,	1 },
	[INJECT_CORRUPT]	= { "corrupt",		true,	1 },
	[INJECT_MMAP_ENOMEM]	= { "mmap_enomem",	false,	1 },
	[INJECT_UFFD_EAGAIN]	= { "uffd_eagain",	false,	2 },
	[INJECT_UFFD_EEXIST]	= { "uffd_eexist",	false,	1 },
	[INJECT_COMPRESS_FAIL]	= { "compress_fail",	false,	1 },
	[INJECT_THREAD_CRASH]	= { "thread_crash",	false,	1 },
	[INJECT_THREAD_ABORT]	= { "thread_abort",	false,	1 },
	[INJECT_UFFD_READ_EIO]	= { "uffd_read_eio",	false,	1 },
	[INJECT_FAULT_STALL]	= { "fault_stall",	false,	1 },
};

/* Written by prim_inject_init() while disarmed, read by the hooks. */
static struct {
	_Atomic int fd[NR_INJECT];		/* device faults: its descriptor */
	_Atomic uint64_t every[NR_INJECT];	/* 0: not injected */
	_Atomic uint64_t calls[NR_INJECT];
} inject;
_Atomic bool prim_inject_armed;

bool prim_inject_hit(enum inject_fault f, int fd)
{
	uint64_t every = atomic_load_explicit(&inject.every[f],
					      memory_order_relaxed);

	if (!every)
		return false;
	if (inject_kinds[f].device &&
	    (fd < 0 || fd != atomic_load_explicit(&inject.fd[f],
						  memory_order_relaxed)))
		return false;
	return (atomic_fetch_add_explicit(&inject.calls[f], 1,
					  memory_order_relaxed) + 1) % every == 0;
}

/* A whole decimal number in [min, max] from s[0..len). */
static bool inject_number(const char *s, size_t len, uint64_t min,
			  uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!len || len > 18)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return v >= min && v <= max;
}

/* One NAME=VALUE of the spec; false (logged) when it is not one. */
static bool inject_item(const char *item, size_t len, const int *dev_fds,
			unsigned nr_devs)
{
	const char *eq = memchr(item, '=', len), *val, *colon;
	uint64_t dev = 0, every = 1;
	size_t vlen;
	unsigned f;

	for (f = 0; eq && f < NR_INJECT; f++)
		if (strlen(inject_kinds[f].name) == (size_t)(eq - item) &&
		    !memcmp(item, inject_kinds[f].name, (size_t)(eq - item)))
			break;
	if (!eq || f == NR_INJECT) {
		uswap_log("USWAP_INJECT: \"%.*s\" is not a fault (expected write_eio, read_eio, short_write, short_read, enospc, corrupt, mmap_enomem, uffd_eagain, uffd_eexist, compress_fail, thread_crash, thread_abort, uffd_read_eio or fault_stall, then =VALUE)",
			  (int)len, item);
		return false;
	}
	val = eq + 1;
	vlen = len - (size_t)(val - item);
	if (inject_kinds[f].device) {
		colon = memchr(val, ':', vlen);
		if (!inject_number(val, colon ? (size_t)(colon - val) : vlen, 0,
				   nr_devs ? nr_devs - 1 : 0, &dev) ||
		    !nr_devs || (colon && !inject_number(colon + 1,
				vlen - (size_t)(colon + 1 - val), 1,
				UINT32_MAX, &every))) {
			uswap_log("USWAP_INJECT: \"%.*s\": expected DEV or DEV:N, DEV a device index below %u and N at least 1",
				  (int)len, item, nr_devs);
			return false;
		}
	} else if (!inject_number(val, vlen, inject_kinds[f].min_every,
				  UINT32_MAX, &every)) {
		uswap_log("USWAP_INJECT: \"%.*s\": expected a call count N of at least %u",
			  (int)len, item, inject_kinds[f].min_every);
		return false;
	}
	atomic_store(&inject.fd[f], inject_kinds[f].device ? dev_fds[dev] : -1);
	atomic_store(&inject.every[f], every);
	atomic_store(&inject.calls[f], 0);
	return true;
}

static bool inject_spec(const char *spec, const int *dev_fds, unsigned nr_devs)
{
	while (*spec) {
		size_t len = strcspn(spec, ",");

		if (len && !inject_item(spec, len, dev_fds, nr_devs))
			return false;
		spec += len + (spec[len] == ',');
	}
	return true;
}

int prim_inject_init(const int *dev_fds, unsigned nr_devs)
{
	const char *spec = getenv("USWAP_INJECT");
	const char *old = getenv("USWAP_INJECT_WRITE_EIO");
	char legacy[64];
	bool any = false;
	unsigned f;

	atomic_store(&prim_inject_armed, false);
	for (f = 0; f < NR_INJECT; f++)
		atomic_store(&inject.every[f], 0);
	if (old && *old) {
		snprintf(legacy, sizeof(legacy), "write_eio=%.40s", old);
		if (!inject_spec(legacy, dev_fds, nr_devs))
			return -EINVAL;
	}
	if (spec && !inject_spec(spec, dev_fds, nr_devs))
		return -EINVAL;
	for (f = 0; f < NR_INJECT; f++)
		any |= atomic_load(&inject.every[f]) != 0;
	if (any)
		uswap_log("fault injection on (USWAP_INJECT): a test hook");
	atomic_store_explicit(&prim_inject_armed, any, memory_order_release);
	return 0;
}
