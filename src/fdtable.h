/* SPDX-License-Identifier: MIT */
/*
 * fdtable.h - uswap's descriptors, out of the program's reach (fdtable.c).
 */
#ifndef USWAP_FDTABLE_H
#define USWAP_FDTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "uswap.h"

/* What a descriptor is, for messages. */
enum fd_kind {
	FD_UFFD,		/* the userfaultfd */
	FD_DEVICE,		/* a swap device's file */
	FD_BUDGET,		/* the tree's budget (memfd) */
	FD_BUDGET_EXEC,		/* its copy handed to exec'd programs */
	FD_PAGEMAP,		/* /proc/self/pagemap */
	FD_SELF_MEM,		/* /proc/self/mem (the reclaimer's) */
	FD_PIDFD,		/* this process's pidfd */
	FD_WAKE,		/* a fault threads' wake-up pipe */
	FD_RING,		/* an io_uring instance */
	FD_WAITSET,		/* a fault thread's epoll set */
	FD_REMOTE,		/* a connection to a Redis node */
	NR_FD_KINDS
};

struct fd_entry;

/*
 * A new descriptor of uswap's: moved to the top of the descriptor table
 * (close-on-exec) and recorded, owned by the runtime being set up by this
 * thread (fd_owner_set), or by the process (any runtime) with
 * fd_install_process.  Returns the number uswap's code holds from now on
 * (its canonical number), or fd < 0 as it was.
 */
int fd_install(int fd, enum fd_kind kind);
int fd_install_process(int fd, enum fd_kind kind);
/* The same for a descriptor inherited at a number that must not change. */
int fd_install_in_place(int fd, enum fd_kind kind);
/*
 * The same, for a descriptor that one of uswap's threads may make in its
 * own table (an io_uring instance): `tag` (its holder) tells it from a
 * descriptor of the same number elsewhere, and is given back to
 * fd_release_tagged.  In a fork child, one made by a thread of the parent
 * is in no table: releasing it gives -1.
 */
int fd_install_tagged(int fd, enum fd_kind kind, const void *tag);
int fd_release_tagged(int fd, const void *tag);
/* The runtime this thread is setting up: the owner of what it installs. */
void fd_owner_set(const void *owner);
const void *fd_owner_get(void);

/*
 * uswap lets go of its descriptor fd (canonical): the number to close in
 * the calling thread's table, or -1 when it has none there (already lost,
 * or a descriptor of another thread's table).  prim_fd_close() closes it.
 */
int fd_release(int fd);

/*
 * Use of a canonical descriptor by the calling thread: the number it has
 * in this thread's table.  A program thread is checked: a descriptor of
 * uswap's that the program closed or replaced (a raw system call) stops
 * the program (fd_lost).  fd_unuse() ends the use (a dup2 onto the number
 * waits for it).
 */
int fd_use(int fd, struct fd_entry **ep);
void fd_unuse(struct fd_entry *e);

/*
 * Called by each of uswap's threads as it starts (runtime.c): it takes a
 * descriptor table of its own, holding owner's descriptors (and the
 * process's) under their canonical numbers and nothing else, so that
 * nothing the program does to its table reaches the thread's I/O.
 */
void fd_thread_private(const void *owner);
/* This thread is one of uswap's with a table of its own. */
bool fd_thread_is_private(void);

/*
 * From a fault thread: is every descriptor of uswap's still where it is in
 * the program's table?  At most every FD_CHECK_MS; stops the program when
 * one is gone (fd_lost).
 */
void fd_check_program(void);
/* The same from a program thread, every descriptor, now. */
void fd_check_all(void);

/* --- for the preload library's interposers (preload/fds.c, exec.c) --- */

/* Is fd (in the program's table) one of uswap's? */
bool fd_is_uswap(int fd);
/*
 * The program is about to dup2 onto fd, one of uswap's: move uswap's
 * descriptor to another number first.  0, or -errno (nothing moved).
 */
int fd_move(int fd);
/*
 * uswap's numbers in the program's table within [first, last], sorted;
 * returns how many (at most max).
 */
unsigned fd_program_numbers(unsigned first, unsigned last, int *out,
			    unsigned max);
/* Where canonical descriptor fd is in the program's table now. */
int fd_current(int fd);
/* The canonical descriptor whose program number is fd, or -1. */
int fd_canonical_of(int fd);
/*
 * The calling process is a child made by vfork (or clone) that shares
 * its parent's memory: the table above is the parent's, not its own.
 */
void fd_table_init(void);
bool fd_in_vfork_child(void);
/* Close, in the calling process's table only, every descriptor of uswap's. */
void fd_close_all_here(void);

/*
 * Write a message to the program's standard error from any thread (one of
 * uswap's has no descriptor 2 of its own).
 */
void fd_stderr_write(const char *buf, size_t len);

/* The status of a program stopped because uswap lost a descriptor. */
#define FD_LOST_EXIT_STATUS	USWAP_EXIT_LOST_FD

#endif /* USWAP_FDTABLE_H */
