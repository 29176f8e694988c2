// SPDX-License-Identifier: MIT
/*
 * memcontrol.c - the budget, as a cgroup v2 memory controller's limits.
 *
 * Every resident managed page is charged.  Past `high` the reclaimer is
 * woken and reclaims until charges fall to `low`, a little below high
 * (hysteresis, so that it works in batches rather than a folio at a time).
 * `max` is a hard limit: a fault that would pass it waits until reclaim has
 * made room.  When reclaim can make no room at all (every tier full), the
 * budget is "stuck" and faults are admitted past max, counted and logged:
 * uswap never kills or deadlocks its program for lack of swap space.
 *
 * Lock: mc->lock protects the condition variables; charges are atomics
 * and never need it.  It is a leaf lock.
 */
#include <errno.h>
#include <time.h>

#include "internal.h"

void memcg_init(struct memcg *mc, uint64_t max_bytes, uint64_t high_bytes,
		unsigned folio_pages)
{
	uint64_t delta;
	pthread_condattr_t ca;

	mc->max = max_bytes >> PAGE_SHIFT;
	mc->high = high_bytes >> PAGE_SHIFT;
	/* Stop 2% of max (at least a 2 MiB batch, two folios) below high. */
	delta = MAX(mc->max / 50, MAX(512u, 2u * folio_pages));
	mc->low = mc->high > 2 * delta ? mc->high - delta : mc->high / 2;
	atomic_init(&mc->resident, 0);
	atomic_init(&mc->peak, 0);
	atomic_init(&mc->waiters, 0);
	atomic_init(&mc->stuck, false);
	pthread_mutex_init(&mc->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&mc->room, &ca);
	pthread_cond_init(&mc->kick, &ca);
	pthread_condattr_destroy(&ca);
}

void memcg_destroy(struct memcg *mc)
{
	pthread_cond_destroy(&mc->room);
	pthread_cond_destroy(&mc->kick);
	pthread_mutex_destroy(&mc->lock);
}

static void deadline_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += ms * 1000000L;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

void memcg_kick_reclaim(struct memcg *mc)
{
	pthread_mutex_lock(&mc->lock);
	pthread_cond_signal(&mc->kick);
	pthread_mutex_unlock(&mc->lock);
}

/* Try to charge nr pages without passing max.  true when charged. */
static bool try_charge(struct memcg *mc, unsigned nr, bool force)
{
	uint64_t cur = atomic_load(&mc->resident), peak;

	do {
		if (!force && cur + nr > mc->max)
			return false;
	} while (!atomic_compare_exchange_weak(&mc->resident, &cur, cur + nr));
	peak = atomic_load(&mc->peak);
	while (cur + nr > peak &&
	       !atomic_compare_exchange_weak(&mc->peak, &peak, cur + nr))
		;
	return true;
}

/* Charge nr pages if that stays within max, without waiting (readahead). */
bool memcg_try_charge(struct uswap_runtime *rt, unsigned nr)
{
	return try_charge(&rt->memcg, nr, false);
}

/*
 * Charge nr pages for a folio about to be installed.  Waits while the
 * charge would pass max (the reclaimer is kicked), unless the budget is
 * stuck or the runtime is stopping.  Must be called with no lock held.
 * Returns the microseconds spent waiting.
 */
uint64_t memcg_charge(struct uswap_runtime *rt, unsigned nr)
{
	struct memcg *mc = &rt->memcg;
	uint64_t t0, waited;

	if (likely(try_charge(mc, nr, false)))
		goto charged;

	t0 = prim_now_us();
	pthread_mutex_lock(&mc->lock);
	atomic_fetch_add(&mc->waiters, 1);
	while (!try_charge(mc, nr, false)) {
		struct timespec ts;

		if (atomic_load(&mc->stuck) || rt->stopping) {
			try_charge(mc, nr, true);
			count_event(rt, USWAP_MAX_OVERRUN, 1);
			uswap_log_once(&rt->logged_overrun,
				       "no tier has room: resident memory goes past --max (counted as max_overrun)");
			break;
		}
		pthread_cond_signal(&mc->kick);
		deadline_in(&ts, 10);
		pthread_cond_timedwait(&mc->room, &mc->lock, &ts);
	}
	atomic_fetch_sub(&mc->waiters, 1);
	pthread_mutex_unlock(&mc->lock);
	waited = prim_now_us() - t0;
	count_event(rt, USWAP_RECLAIM_STALL, 1);
	count_event(rt, USWAP_RECLAIM_STALL_US, waited);
	return waited;

charged:
	if (atomic_load(&mc->resident) > mc->high)
		memcg_kick_reclaim(mc);
	return 0;
}

void memcg_uncharge(struct uswap_runtime *rt, uint64_t nr)
{
	struct memcg *mc = &rt->memcg;
	uint64_t old = atomic_fetch_sub(&mc->resident, nr);

	assert(old >= nr);
	(void)old;
	if (atomic_load(&mc->waiters)) {
		pthread_mutex_lock(&mc->lock);
		pthread_cond_broadcast(&mc->room);
		pthread_mutex_unlock(&mc->lock);
	}
}

/*
 * The compressed pool grew or shrank (zswap's account callback, arg is
 * the runtime).  Pool memory is charged like resident memory, as the
 * kernel charges zswap to the memory cgroup, but it never waits: the pool
 * grows while reclaim frees the larger folios it stores.
 */
void memcg_account_pool(void *arg, long delta_pages)
{
	struct uswap_runtime *rt = arg;
	if (delta_pages < 0) {
		atomic_fetch_sub(&rt->pool_pages, (uint64_t)-delta_pages);
		memcg_uncharge(rt, (uint64_t)-delta_pages);
		return;
	}
	atomic_fetch_add(&rt->pool_pages, (uint64_t)delta_pages);
	try_charge(&rt->memcg, (unsigned)delta_pages, true);
}

bool memcg_above_high(struct memcg *mc)
{
	return atomic_load(&mc->resident) > mc->high ||
	       atomic_load(&mc->waiters) > 0;
}

bool memcg_above_low(struct memcg *mc)
{
	return atomic_load(&mc->resident) > mc->low ||
	       atomic_load(&mc->waiters) > 0;
}

/*
 * The reclaimer says whether it can make room.  Waiters are released when
 * it cannot, and held again as soon as it can.
 */
void memcg_set_stuck(struct uswap_runtime *rt, bool stuck)
{
	struct memcg *mc = &rt->memcg;

	if (atomic_exchange(&mc->stuck, stuck) == stuck)
		return;
	if (stuck) {
		pthread_mutex_lock(&mc->lock);
		pthread_cond_broadcast(&mc->room);
		pthread_mutex_unlock(&mc->lock);
	}
}
