// SPDX-License-Identifier: MIT
/*
 * watchdog.c - nobody waits forever on the fault threads (DESIGN.md,
 * invariant 8), in the spirit of the kernel's hung-task detector.
 *
 * A program thread that touches a page that is not resident sleeps in the
 * kernel until a fault thread installs the page.  If no fault thread
 * serves its fault, it sleeps for ever, and nothing says why.  One thread
 * per runtime looks at the fault threads every WATCHDOG_TICK_MS:
 *
 *   ended      a fault thread whose read of the userfaultfd failed has
 *              returned: it is started again (its message, still queued,
 *              is read by the next thread free);
 *   stuck      one that has served the same fault for WATCHDOG_STALL_TICKS
 *              ticks, not waiting for room at --max (the budget bounds that
 *              wait, memcontrol.c): a device that does not answer, a lock.
 *              A spare fault thread is started, which serves that fault
 *              again first (serving a fault twice is harmless: the second
 *              finds the folio resident, or loading), then the faults after
 *              it.  Up to WATCHDOG_MAX_SPARES of them, each with a folio
 *              buffer of its own, kept until the runtime stops: the bound
 *              is long, as a thread on a busy machine can take a second to
 *              bring a 2 MiB folio in.  A fault whose folio the stuck
 *              thread holds (LOADING) waits for that thread still;
 *   gone       the userfaultfd itself was closed or replaced behind the
 *              runtime's back (a program that closes every descriptor):
 *              the kernel dropped the registrations with it, so the
 *              program's swapped-out memory can never be served again and
 *              reads there find zeros.  The process ends at once, with a
 *              message and exit status USWAP_EXIT_UNSERVED, before it can
 *              use such memory.  So does one whose fault threads keep
 *              failing (WATCHDOG_MAX_RESTARTS in a row, no fault served
 *              between).
 *
 * Ticks, not the clock, measure "stuck": a process that was stopped
 * (SIGSTOP) for a while has not been stuck meanwhile.
 *
 * The watchdog changes the fault thread table (rt->fault_threads,
 * fault_tids, nr_fault_threads) only under op_lock held for reading: a
 * fork holds it for writing, and sees a whole table.  It is stopped before
 * the fault threads are joined (stop_threads()).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "prim.h"
#include "runtime.h"
#include "thread.h"
#include "uswap.h"

#define WATCHDOG_TICK_MS	100
#define WATCHDOG_STALL_TICKS	50
#define WATCHDOG_MAX_SPARES	4
#define WATCHDOG_MAX_RESTARTS	8
#define MAX_FAULT_THREADS	64	/* ARRAY_SIZE(rt->fault_tids) */

/* The process ends: say why, and exit with USWAP_EXIT_UNSERVED. */
static void __attribute__((noreturn, format(printf, 1, 2)))
unserved(const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	uswap_log("%s: the program's swapped-out memory can no longer be served; exiting with status %d",
		  why, USWAP_EXIT_UNSERVED);
	_exit(USWAP_EXIT_UNSERVED);
}

/*
 * Is descriptor fd no longer a userfaultfd in this thread's table (uswap's
 * threads have tables of their own: fdtable.c)?  /proc/thread-self/fd says
 * what it is; without /proc, whether it is open at all.
 */
static bool uffd_gone(int fd, char *what, size_t len)
{
	char path[64], target[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", fd);
	n = prim_readlink(path, target, sizeof(target) - 1);
	if (n >= 0) {
		target[n] = 0;
		if (strstr(target, "[userfaultfd]"))
			return false;
		snprintf(what, len, "descriptor %d is now %s", fd, target);
		return true;
	}
	if (prim_fcntl(fd, F_GETFD, 0) >= 0)
		return false;
	snprintf(what, len, "descriptor %d was closed", fd);
	return true;
}

void watchdog_check_uffd(struct uswap_runtime *rt)
{
	char what[200];

	if (!rt->stopping && uffd_gone(rt->uffd, what, sizeof(what)))
		unserved("the userfaultfd of this process is gone behind uswap's back (%s)",
			 what);
}

/* Join the fault threads that ended: the process is about to end. */
static void join_ended(struct uswap_runtime *rt)
{
	unsigned k;

	for (k = 0; k < rt->nr_fault_threads; k++) {
		struct fault_thread_state st;

		fault_thread_look(rt->fault_threads[k], &st);
		if (st.ended)
			pthread_join(rt->fault_tids[k], NULL);
	}
}

/*
 * Fault thread k ended (a read failed with err): start it again, or if
 * that fails, leave it ended for the next tick.
 */
static void restart(struct uswap_runtime *rt, unsigned k, int err,
		    unsigned *restarts)
{
	struct fault_thread *ft = rt->fault_threads[k];
	pthread_t tid;

	if (++*restarts > WATCHDOG_MAX_RESTARTS) {
		join_ended(rt);
		unserved("the fault threads keep failing (%s) and serve nothing",
			 strerror(-err));
	}
	fault_thread_reset(ft);
	if (start_thread(&tid, "uswap-fault", fault_thread_main, ft)) {
		fault_thread_end(ft, err);
		return;
	}
	pthread_join(rt->fault_tids[k], NULL);
	rt->fault_tids[k] = tid;
	count_event(rt, USWAP_FAULT_THREAD_RESTARTS, 1);
	uswap_log_once(&rt->logged_restart,
		       "a fault thread ended (%s): started again (counted as fault_thread_restarts)",
		       strerror(-err));
}

/*
 * A fault thread is stuck on the fault st describes: a spare thread
 * serves it, and the faults after it.
 */
static void spare(struct uswap_runtime *rt, const struct fault_thread_state *st)
{
	unsigned n = rt->nr_fault_threads;
	struct fault_thread *ft;

	if (n >= MAX_FAULT_THREADS ||
	    n >= rt->opt.fault_threads + WATCHDOG_MAX_SPARES)
		return;
	ft = fault_thread_alloc(rt, NULL);
	if (!ft)
		return;
	fault_thread_give(ft, st->addr, st->flags);
	rt->fault_threads[n] = ft;
	if (start_thread(&rt->fault_tids[n], "uswap-fault", fault_thread_main,
			 ft)) {
		fault_thread_free(ft);
		return;
	}
	rt->nr_fault_threads = n + 1;
	count_event(rt, USWAP_FAULT_THREAD_RESTARTS, 1);
	uswap_log_once(&rt->logged_stuck,
		       "a fault thread has served the fault at %p for %u ms and is stuck: another thread serves it, and the faults after it (counted as fault_thread_restarts)",
		       (void *)st->addr, WATCHDOG_STALL_TICKS * WATCHDOG_TICK_MS);
}

static void *watchdog_main(void *arg)
{
	struct uswap_runtime *rt = arg;
	struct pollfd pfd = { .fd = rt->wake_pipe[0], .events = POLLIN };
	uint64_t seen[MAX_FAULT_THREADS] = { 0 };	/* busy_since last tick */
	unsigned ticks[MAX_FAULT_THREADS] = { 0 };	/* ... the same since */
	unsigned restarts = 0;	/* since the last fault served */
	uint64_t served = 0;

	while (!rt->stopping) {
		uint64_t total = 0;
		unsigned k;

		prim_poll(&pfd, 1, WATCHDOG_TICK_MS);
		if (rt->stopping)
			break;
		watchdog_check_uffd(rt);
		if (pthread_rwlock_tryrdlock(&rt->op_lock))
			continue;	/* a change (fork) holds the table */
		for (k = 0; k < rt->nr_fault_threads; k++) {
			struct fault_thread_state st;

			fault_thread_look(rt->fault_threads[k], &st);
			total += st.served;
			if (st.ended) {
				restart(rt, k, st.end_err, &restarts);
				ticks[k] = 0;
				continue;
			}
			if (!st.busy_since || st.waiting ||
			    st.busy_since != seen[k]) {
				seen[k] = st.busy_since;
				ticks[k] = 0;
				continue;
			}
			if (++ticks[k] == WATCHDOG_STALL_TICKS)
				spare(rt, &st);
		}
		pthread_rwlock_unlock(&rt->op_lock);
		if (total != served) {
			served = total;
			restarts = 0;
		}
	}
	return NULL;
}

int watchdog_start(struct uswap_runtime *rt)
{
	int err = start_thread(&rt->watchdog_thread, "uswap-watchdog",
			       watchdog_main, rt);

	rt->watchdog_started = !err;
	return err;
}

void watchdog_stop(struct uswap_runtime *rt)
{
	if (!rt->watchdog_started)
		return;
	pthread_join(rt->watchdog_thread, NULL);
	rt->watchdog_started = false;
}
