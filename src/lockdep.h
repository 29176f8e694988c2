/* SPDX-License-Identifier: MIT */
/*
 * lockdep.h - assertions of the locks a function's caller must hold, as the
 * kernel's lockdep_assert_held(), checked in the debug build only.
 *
 * A function whose comment says "Caller holds X" opens with
 * lock_assert_held(&X) (or _read/_write for a rwlock's mode).  Built with
 * USWAP_DEBUG (make debug), every pthread mutex and rwlock call of the
 * program is sent by the linker (-Wl,--wrap, see the Makefile) through
 * lockdep.c, which records, per thread, the locks the thread holds and in
 * which mode; an assertion looks the lock up in the calling thread's
 * record and, when it is not there, logs the lock, the function and what
 * the thread holds, and aborts.  The record is the thread's own, so the
 * check is exact: a lock held by another thread does not pass (as it does
 * with pthread_mutex_trylock() == EBUSY).  A fork child's thread inherits
 * the record with the memory; pthread_mutex_init() and the like forget a
 * lock (a fork child re-initialises the locks its parent held).
 *
 * Without USWAP_DEBUG the macros compile to nothing: no cost.
 */
#ifndef USWAP_LOCKDEP_H
#define USWAP_LOCKDEP_H

#include <stdbool.h>

/* How a lock is held, as an assertion asks (LOCKDEP_ANY: either mode). */
enum lockdep_mode {
	LOCKDEP_ANY,
	LOCKDEP_READ,	/* a rwlock for reading */
	LOCKDEP_WRITE,	/* a rwlock for writing, or a mutex */
};

#ifdef USWAP_DEBUG

void lockdep_assert_held(const void *lock, enum lockdep_mode mode,
			 const char *what, const char *func, const char *file,
			 int line);
void lockdep_assert_not_held(const void *lock, const char *what,
			     const char *func, const char *file, int line);
void lockdep_assert_none_held(const char *func, const char *file, int line);

/* The calling thread holds mutex or rwlock l (in any mode). */
#define lock_assert_held(l) \
	lockdep_assert_held((l), LOCKDEP_ANY, #l, __func__, __FILE__, __LINE__)
/* The calling thread holds rwlock l for reading (not writing). */
#define lock_assert_held_read(l) \
	lockdep_assert_held((l), LOCKDEP_READ, #l, __func__, __FILE__, __LINE__)
/* The calling thread holds rwlock l for writing. */
#define lock_assert_held_write(l) \
	lockdep_assert_held((l), LOCKDEP_WRITE, #l, __func__, __FILE__, __LINE__)
/* The calling thread does not hold l (another thread may). */
#define lock_assert_not_held(l) \
	lockdep_assert_not_held((l), #l, __func__, __FILE__, __LINE__)
/* The calling thread holds no lock of uswap's (nor of the test's). */
#define lock_assert_none_held() \
	lockdep_assert_none_held(__func__, __FILE__, __LINE__)

#else

#define lock_assert_held(l)		((void)sizeof(l))
#define lock_assert_held_read(l)	((void)sizeof(l))
#define lock_assert_held_write(l)	((void)sizeof(l))
#define lock_assert_not_held(l)		((void)sizeof(l))
#define lock_assert_none_held()		((void)0)

#endif /* USWAP_DEBUG */

#endif /* USWAP_LOCKDEP_H */
