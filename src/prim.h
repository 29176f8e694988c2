/* SPDX-License-Identifier: MIT */
/*
 * prim.h - the system call layer (prim.c): every system call the library
 * makes, and fault injection for tests.  It knows nothing of the runtime,
 * so that the pool, the slot allocator and the log use it.
 */
#ifndef USWAP_PRIM_H
#define USWAP_PRIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "fdtable.h"

struct iovec;
/* prim.c: the system call layer. */
int prim_uffd_open(uint64_t features_wanted, uint64_t features_off,
		   uint64_t *features_got, int *uffdp);
int prim_uffd_register(int uffd, uintptr_t start, size_t len, bool wp);
int prim_uffd_unregister(int uffd, uintptr_t start, size_t len);
int prim_uffd_copy(int uffd, uintptr_t dst, const void *src, size_t len,
		   bool wp, size_t *copied);
unsigned prim_uffd_eagain_take(void);
int prim_uffd_wp(int uffd, uintptr_t start, size_t len, bool protect,
		 bool wake);
int prim_uffd_wake(int uffd, uintptr_t start, size_t len);
int prim_uffd_poison(int uffd, uintptr_t start, size_t len);
/* Read fault messages: the bytes read, or -errno (-EAGAIN: none now). */
ssize_t prim_uffd_read(int uffd, void *msgs, size_t len);
int prim_move_pages(unsigned n, void **pages, int *nodes);
void *prim_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int prim_munmap(void *addr, size_t len);
void *prim_mremap(void *old, size_t old_len, size_t new_len, int flags,
		  void *new_addr);
int prim_madvise(void *addr, size_t len, int advice);
void prim_dontdump(void *addr, size_t len);
/* uswap's own memory, kept out of core dumps and mlockall (prim.c). */
void *prim_map_own(size_t len, int flags, int fd);
void prim_own_future(bool on);
bool prim_own_next(uintptr_t addr, uintptr_t end, uintptr_t *s, uintptr_t *e);
void prim_own_munlock(void);
int prim_maps_each(void (*fn)(uintptr_t start, uintptr_t end, void *arg),
		   void *arg);
/* Zap many ranges at once (process_madvise, else one madvise each). */
int prim_zap_ranges(const struct iovec *iov, size_t n);
/* The same, each range's 0 or -errno in errs[], every range tried. */
int prim_zap_ranges_each(const struct iovec *iov, size_t n, int *errs);
/* UFFD_FEATURE_MOVE (Linux 6.8): UFFDIO_MOVE of anonymous pages. */
#define PRIM_UFFD_FEATURE_MOVE	(1ull << 16)
int prim_uffd_move(int uffd, uintptr_t dst, uintptr_t src, size_t len,
		   bool allow_holes, size_t *moved);
/* Register [start, start+len) for write-protect faults only. */
int prim_uffd_register_wp(int uffd, uintptr_t start, size_t len);
int prim_self_mem_open(void);
/* mlock2(2) (lock) or munlock(2) of [addr, addr+len): 0 or -errno. */
int prim_mlock(void *addr, size_t len, bool lock, bool onfault);
ssize_t prim_read_pinned(void *buf, uintptr_t addr, size_t len);
/* The pidfd prim_zap_ranges keeps: opened as a runtime is created,
   closed when the last one is gone. */
void prim_self_pidfd_open(void);
void prim_self_pidfd_close(void);
/* uswap's descriptors (fdtable.c): close one; a close-on-exec copy of
   one, installed as kind (or -errno); a byte written to one. */
void prim_fd_close(int fd);
int prim_fd_dup(int fd, enum fd_kind kind);
void prim_fd_poke(int fd);
void *prim_alloc(size_t len);		/* internal memory: zeroed, page-rounded */
void prim_free(void *p, size_t len);	/* either kind */
void *prim_alloc_shared(size_t len);	/* stays shared across fork */
/* Room for more elements in a growing array of internal memory. */
int prim_array_grow(void **arr, size_t *len, unsigned *cap, unsigned nr,
		    unsigned more, size_t elem);
void *prim_alloc_stack(size_t len);	/* a thread's, above a guard page */
void prim_free_stack(void *stack, size_t len);
int prim_shared_mutex_init(pthread_mutex_t *m);
void prim_mutex_lock(pthread_mutex_t *m);	/* takes over a dead holder's */
void prim_futex_wait(_Atomic uint32_t *word, uint32_t val, long timeout_ms);
void prim_futex_wake_all(_Atomic uint32_t *word);
ssize_t prim_pwritev(int fd, const struct iovec *iov, int n, off_t off);
ssize_t prim_pread(int fd, void *buf, size_t len, off_t off);
int prim_fallocate(int fd, int mode, off_t off, off_t len);
/* Descriptors, installed (canonical numbers) or not: the call's result
   or -errno.  prim_close is for those uswap did not install. */
struct stat;
struct pollfd;
int prim_open(const char *path, int flags, mode_t mode);
int prim_openat(int dirfd, const char *path, int flags, mode_t mode);
int prim_close(int fd);
ssize_t prim_read(int fd, void *buf, size_t len);
ssize_t prim_read_all(int fd, void *buf, size_t len);	/* to len or EOF */
ssize_t prim_write(int fd, const void *buf, size_t len);
int prim_fstat(int fd, struct stat *st);
int prim_ftruncate(int fd, off_t len);
int prim_fcntl(int fd, int cmd, int arg);
int prim_ioctl(int fd, unsigned long req, void *arg);
int prim_pipe2(int fds[2], int flags);
int prim_poll(struct pollfd *pfd, unsigned n, int timeout_ms);	/* uswap's threads */
/*
 * An epoll set (close-on-exec): its descriptor or -errno.  prim_epoll_add
 * adds fd for reading; `exclusive` (EPOLLEXCLUSIVE): an event on fd wakes
 * one of the sets that hold it so and wait, not all.  prim_epoll_wait:
 * the number of descriptors ready, 0 at the timeout, or -errno.
 */
int prim_epoll_create(void);
int prim_epoll_add(int ep, int fd, bool exclusive);
int prim_epoll_wait(int ep, int timeout_ms);
ssize_t prim_getdents(int fd, void *buf, size_t len);
ssize_t prim_readlink(const char *path, char *buf, size_t len);
/* A small regular file (/proc, /sys) into buf, NUL-terminated: its length. */
ssize_t prim_read_file(const char *path, char *buf, size_t len);
int prim_stat(const char *path, struct stat *st);
int prim_lstat(const char *path, struct stat *st);
int prim_access(const char *path, int mode);
int prim_unlinkat(int dirfd, const char *name, int flags);
int prim_flock(int fd, int op);
int prim_memfd_create(const char *name, unsigned flags);
int prim_kill(pid_t pid, int sig);
int prim_set_thread_name(const char *name);
int prim_pin_to_cpu(int cpu);		/* the calling thread: 0 or -errno */
/* The program's mlock family and mprotect (pkey >= 0: pkey_mprotect). */
int prim_mlock2(const void *addr, size_t len, unsigned flags);
int prim_munlock(const void *addr, size_t len);
int prim_mlockall(int flags);
int prim_munlockall(void);
int prim_mprotect(void *addr, size_t len, int prot, int pkey);
/* 0 or -errno as the C library answers: 0, or -1 with errno set. */
int prim_libc_result(int err);
/* move_pages(2) moving: pages not moved, or -errno. */
long prim_move_pages_to(unsigned n, void **pages, const int *nodes,
			int *status, int flags);
uint64_t prim_now_us(void);
/*
 * Fault injection for tests (USWAP_INJECT; prim.c documents the syntax).
 * prim_inject_init() reads it when a runtime sets up its devices (their
 * descriptors, by index): 0, or -EINVAL (logged) for a bad spec.
 * prim_inject(f, fd) says whether this call of kind f (on the device
 * whose descriptor is fd, for device faults; -1 for the others) fails.
 */
enum inject_fault {
	INJECT_WRITE_EIO, INJECT_READ_EIO, INJECT_SHORT_WRITE,
	INJECT_SHORT_READ, INJECT_ENOSPC, INJECT_CORRUPT,	/* devices */
	INJECT_MMAP_ENOMEM, INJECT_UFFD_EAGAIN, INJECT_UFFD_EEXIST,
	INJECT_COMPRESS_FAIL, INJECT_THREAD_CRASH, INJECT_THREAD_ABORT,
	INJECT_UFFD_READ_EIO, INJECT_FAULT_STALL,
	NR_INJECT
};
int prim_inject_init(const int *dev_fds, unsigned nr_devs);
bool prim_inject_hit(enum inject_fault f, int fd);
extern _Atomic bool prim_inject_armed;
static inline bool prim_inject(enum inject_fault f, int fd)
{
	return unlikely(atomic_load_explicit(&prim_inject_armed,
					     memory_order_acquire)) &&
	       prim_inject_hit(f, fd);
}

#endif /* USWAP_PRIM_H */
