/* SPDX-License-Identifier: MIT */
/*
 * lockdep.c - the debug build's record of the locks each thread holds,
 * for lock_assert_held() (lockdep.h).
 *
 * The kernel's lockdep keeps, in each task, the stack of locks it holds
 * (held_locks); this keeps the same, in thread-local storage, for pthread
 * mutexes and rwlocks.  The Makefile's debug flavour links every program
 * and library with -Wl,--wrap=pthread_mutex_lock (and the rest of the
 * family below): the linker sends each call of the program's own code to
 * the __wrap_ function here, which calls the C library's (__real_) and
 * records what the call acquired or released.  Only code linked so goes
 * through here: in a program run under the preload library, the locks of
 * uswap's code, not the program's.
 *
 * What is recorded is exact for the thread that asks:
 *   - a lock call that succeeds (0, or EOWNERDEAD for a robust mutex whose
 *     holder died: the caller holds it then) pushes (lock, mode);
 *   - an unlock that succeeds pops the latest entry of that lock, so a
 *     rwlock read-locked twice stays held until its second unlock;
 *   - pthread_cond_wait() releases and takes the mutex again inside the C
 *     library: the entry stays, and is true again when the wait returns;
 *   - pthread_mutex_init(), pthread_rwlock_init() and their destroy calls
 *     forget the lock: a fork child re-initialises the locks its parent's
 *     fork handlers took (runtime.c fork_child), and the copy of the
 *     record it inherits must drop them with them.
 * A thread that ever holds more than LOCKDEP_MAX locks at once stops
 * checking for good: its record is no longer whole.
 *
 * Nothing here allocates or takes a lock: the wrappers run on the fault
 * path and in fork handlers.
 */
#ifdef USWAP_DEBUG

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "lockdep.h"

#define LOCKDEP_MAX	128

struct held_lock {
	const void *lock;
	enum lockdep_mode mode;		/* LOCKDEP_READ or LOCKDEP_WRITE */
};

static __thread struct held_lock held[LOCKDEP_MAX];
static __thread unsigned nr_held;
static __thread bool overflowed;	/* held more than LOCKDEP_MAX once */

static void held_push(const void *lock, enum lockdep_mode mode)
{
	if (nr_held == LOCKDEP_MAX) {
		overflowed = true;
		return;
	}
	held[nr_held].lock = lock;
	held[nr_held].mode = mode;
	nr_held++;
}

static void held_pop(const void *lock)
{
	unsigned i;

	for (i = nr_held; i--;) {
		if (held[i].lock != lock)
			continue;
		for (; i + 1 < nr_held; i++)
			held[i] = held[i + 1];
		nr_held--;
		return;
	}
}

static void held_forget(const void *lock)
{
	unsigned i = 0, n = 0;

	for (i = 0; i < nr_held; i++)
		if (held[i].lock != lock)
			held[n++] = held[i];
	nr_held = n;
}

static const char *mode_name(enum lockdep_mode mode)
{
	return mode == LOCKDEP_READ ? " for reading" :
	       mode == LOCKDEP_WRITE ? " for writing" : "";
}

static void __attribute__((noreturn)) lockdep_fail(const char *msg,
						   const char *func,
						   const char *file, int line)
{
	char list[384];
	int n = 0;
	unsigned i;

	list[0] = 0;
	for (i = 0; i < nr_held && n < (int)sizeof(list) - 32; i++)
		n += snprintf(list + n, sizeof(list) - (size_t)n, " %p%s",
			      held[i].lock,
			      held[i].mode == LOCKDEP_READ ? "(r)" : "");
	uswap_log("lockdep: %s:%d %s(): %s; this thread (tid %d) holds:%s",
		  file, line, func, msg, (int)gettid(),
		  nr_held ? list : " nothing");
	abort();
}

void lockdep_assert_held(const void *lock, enum lockdep_mode mode,
			 const char *what, const char *func, const char *file,
			 int line)
{
	char msg[160];
	unsigned i;

	if (overflowed)
		return;
	for (i = 0; i < nr_held; i++)
		if (held[i].lock == lock &&
		    (mode == LOCKDEP_ANY || held[i].mode == mode))
			return;
	snprintf(msg, sizeof(msg), "%s (%p) not held%s", what, lock,
		 mode_name(mode));
	lockdep_fail(msg, func, file, line);
}

void lockdep_assert_not_held(const void *lock, const char *what,
			     const char *func, const char *file, int line)
{
	char msg[160];
	unsigned i;

	for (i = 0; i < nr_held; i++) {
		if (held[i].lock != lock)
			continue;
		snprintf(msg, sizeof(msg), "%s (%p) held", what, lock);
		lockdep_fail(msg, func, file, line);
	}
}

void lockdep_assert_none_held(const char *func, const char *file, int line)
{
	if (nr_held && !overflowed)
		lockdep_fail("a lock is held", func, file, line);
}

/* The wrappers.  Each --wrap=NAME in the Makefile needs its pair here. */
#define WRAP(ret, name, ...)				\
	ret __real_##name(__VA_ARGS__);			\
	ret __wrap_##name(__VA_ARGS__)

static int took(int err, const void *lock, enum lockdep_mode mode)
{
	if (err == 0 || err == EOWNERDEAD)
		held_push(lock, mode);
	return err;
}

WRAP(int, pthread_mutex_lock, pthread_mutex_t *m);
WRAP(int, pthread_mutex_lock, pthread_mutex_t *m)
{
	return took(__real_pthread_mutex_lock(m), m, LOCKDEP_WRITE);
}

WRAP(int, pthread_mutex_trylock, pthread_mutex_t *m);
WRAP(int, pthread_mutex_trylock, pthread_mutex_t *m)
{
	return took(__real_pthread_mutex_trylock(m), m, LOCKDEP_WRITE);
}

WRAP(int, pthread_mutex_timedlock, pthread_mutex_t *m,
     const struct timespec *t);
WRAP(int, pthread_mutex_timedlock, pthread_mutex_t *m,
     const struct timespec *t)
{
	return took(__real_pthread_mutex_timedlock(m, t), m, LOCKDEP_WRITE);
}

WRAP(int, pthread_mutex_clocklock, pthread_mutex_t *m, clockid_t c,
     const struct timespec *t);
WRAP(int, pthread_mutex_clocklock, pthread_mutex_t *m, clockid_t c,
     const struct timespec *t)
{
	return took(__real_pthread_mutex_clocklock(m, c, t), m, LOCKDEP_WRITE);
}

WRAP(int, pthread_mutex_unlock, pthread_mutex_t *m);
WRAP(int, pthread_mutex_unlock, pthread_mutex_t *m)
{
	int err = __real_pthread_mutex_unlock(m);

	if (!err)
		held_pop(m);
	return err;
}

WRAP(int, pthread_mutex_init, pthread_mutex_t *m,
     const pthread_mutexattr_t *a);
WRAP(int, pthread_mutex_init, pthread_mutex_t *m,
     const pthread_mutexattr_t *a)
{
	held_forget(m);
	return __real_pthread_mutex_init(m, a);
}

WRAP(int, pthread_mutex_destroy, pthread_mutex_t *m);
WRAP(int, pthread_mutex_destroy, pthread_mutex_t *m)
{
	held_forget(m);
	return __real_pthread_mutex_destroy(m);
}

WRAP(int, pthread_rwlock_rdlock, pthread_rwlock_t *l);
WRAP(int, pthread_rwlock_rdlock, pthread_rwlock_t *l)
{
	return took(__real_pthread_rwlock_rdlock(l), l, LOCKDEP_READ);
}

WRAP(int, pthread_rwlock_tryrdlock, pthread_rwlock_t *l);
WRAP(int, pthread_rwlock_tryrdlock, pthread_rwlock_t *l)
{
	return took(__real_pthread_rwlock_tryrdlock(l), l, LOCKDEP_READ);
}

WRAP(int, pthread_rwlock_timedrdlock, pthread_rwlock_t *l,
     const struct timespec *t);
WRAP(int, pthread_rwlock_timedrdlock, pthread_rwlock_t *l,
     const struct timespec *t)
{
	return took(__real_pthread_rwlock_timedrdlock(l, t), l, LOCKDEP_READ);
}

WRAP(int, pthread_rwlock_clockrdlock, pthread_rwlock_t *l, clockid_t c,
     const struct timespec *t);
WRAP(int, pthread_rwlock_clockrdlock, pthread_rwlock_t *l, clockid_t c,
     const struct timespec *t)
{
	return took(__real_pthread_rwlock_clockrdlock(l, c, t), l,
		    LOCKDEP_READ);
}

WRAP(int, pthread_rwlock_wrlock, pthread_rwlock_t *l);
WRAP(int, pthread_rwlock_wrlock, pthread_rwlock_t *l)
{
	return took(__real_pthread_rwlock_wrlock(l), l, LOCKDEP_WRITE);
}

WRAP(int, pthread_rwlock_trywrlock, pthread_rwlock_t *l);
WRAP(int, pthread_rwlock_trywrlock, pthread_rwlock_t *l)
{
	return took(__real_pthread_rwlock_trywrlock(l), l, LOCKDEP_WRITE);
}

WRAP(int, pthread_rwlock_timedwrlock, pthread_rwlock_t *l,
     const struct timespec *t);
WRAP(int, pthread_rwlock_timedwrlock, pthread_rwlock_t *l,
     const struct timespec *t)
{
	return took(__real_pthread_rwlock_timedwrlock(l, t), l, LOCKDEP_WRITE);
}

WRAP(int, pthread_rwlock_clockwrlock, pthread_rwlock_t *l, clockid_t c,
     const struct timespec *t);
WRAP(int, pthread_rwlock_clockwrlock, pthread_rwlock_t *l, clockid_t c,
     const struct timespec *t)
{
	return took(__real_pthread_rwlock_clockwrlock(l, c, t), l,
		    LOCKDEP_WRITE);
}

WRAP(int, pthread_rwlock_unlock, pthread_rwlock_t *l);
WRAP(int, pthread_rwlock_unlock, pthread_rwlock_t *l)
{
	int err = __real_pthread_rwlock_unlock(l);

	if (!err)
		held_pop(l);
	return err;
}

WRAP(int, pthread_rwlock_init, pthread_rwlock_t *l,
     const pthread_rwlockattr_t *a);
WRAP(int, pthread_rwlock_init, pthread_rwlock_t *l,
     const pthread_rwlockattr_t *a)
{
	held_forget(l);
	return __real_pthread_rwlock_init(l, a);
}

WRAP(int, pthread_rwlock_destroy, pthread_rwlock_t *l);
WRAP(int, pthread_rwlock_destroy, pthread_rwlock_t *l)
{
	held_forget(l);
	return __real_pthread_rwlock_destroy(l);
}

#endif /* USWAP_DEBUG */
