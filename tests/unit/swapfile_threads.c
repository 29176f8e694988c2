/* SPDX-License-Identifier: MIT */
/*
 * Description: the slot allocator's two levels of locks (src/swap/swapfile.c,
 * src/swap/swap_map.c) under threads that allocate, free, dup and count at once,
 * and free each other's slots, on a device small enough that clusters
 * change lists all the time.
 *
 * What the device does is checked against what the threads hold: a shared
 * array of expected use counts, changed with atomics by the thread that
 * allocates, dups or frees a slot.  An allocation must find its slots at
 * 0 there (a slot handed out twice is caught at once), a free must find
 * them above 0, and a slot that only its allocator names must read 1 in
 * the device's map.  Every few thousand steps a thread checks every
 * invariant of the device (swap_info_validate(), which takes every lock);
 * at the end the map, the expected counts and inuse_slots are all 0 and
 * every cluster is free.
 *
 * Handles go from thread to thread through a shared exchange, as slots do
 * in uswap (a reclaimer allocates, a fault in another thread frees; a
 * fork child drops its copy), so frees land in clusters other contexts
 * are allocating from.  Run under ThreadSanitizer by tests/e2e/sanitizers.lib.
 * Usage: swapfile_threads [--seed N] [CASE...] (tests/unit/unitlib.h);
 * 0 pass, 1 fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "swap.h"
#include "unitlib.h"

#define NR_THREADS	4
#define NR_CLUSTERS	8
#define MAX_HELD	1024	/* runs one thread holds */
#define EXCHANGE	256	/* runs in flight between threads */

struct run {
	uint32_t off, nr;
};

static struct swap_info si;
static _Atomic uint8_t *expected;	/* expected use count per slot */

static struct {
	pthread_mutex_t lock;
	struct run runs[EXCHANGE];
	unsigned nr;
} exchange = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct thread_arg {
	unsigned id;
	uint64_t seed;
	unsigned long ops;
	char failure[160];	/* empty while all is well */
	unsigned long allocs, frees, dups, given, taken, full;
};

static uint64_t next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 17;
}

/* Count one more use of each slot of r; false if one was free and wasn't. */
static bool expect_get(struct run r, bool was_free)
{
	uint32_t i;

	for (i = r.off; i < r.off + r.nr; i++) {
		uint8_t old = atomic_fetch_add(&expected[i], 1);

		if ((old == 0) != was_free)
			return false;
	}
	return true;
}

/* Count one use less of each slot of r; false if one was free already. */
static bool expect_put(struct run r)
{
	uint32_t i;

	for (i = r.off; i < r.off + r.nr; i++)
		if (atomic_fetch_sub(&expected[i], 1) == 0)
			return false;
	return true;
}

static bool give(struct run r)
{
	bool ok = false;

	pthread_mutex_lock(&exchange.lock);
	if (exchange.nr < EXCHANGE) {
		exchange.runs[exchange.nr++] = r;
		ok = true;
	}
	pthread_mutex_unlock(&exchange.lock);
	return ok;
}

static bool take(struct run *r, uint64_t rnd)
{
	bool ok = false;

	pthread_mutex_lock(&exchange.lock);
	if (exchange.nr) {
		unsigned i = (unsigned)(rnd % exchange.nr);

		*r = exchange.runs[i];
		exchange.runs[i] = exchange.runs[--exchange.nr];
		ok = true;
	}
	pthread_mutex_unlock(&exchange.lock);
	return ok;
}

#define FAIL(a, ...)	do {						\
		snprintf((a)->failure, sizeof((a)->failure), __VA_ARGS__); \
		goto out;						\
	} while (0)

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	struct swap_alloc_ctx ctx;
	struct run *held = calloc(MAX_HELD, sizeof(*held));
	uint64_t s = a->seed;
	unsigned long n;
	size_t nr_held = 0;
	struct run r;

	swap_alloc_ctx_init(&ctx);
	if (!held)
		FAIL(a, "out of memory");
	for (n = 0; n < a->ops; n++) {
		uint64_t x = next_rand(&s);
		unsigned what = (unsigned)(x % 16), order = (unsigned)(x >> 8) % 6;
		size_t i = nr_held ? (size_t)((x >> 16) % nr_held) : 0;
		int err;

		if (what < 7 && nr_held < MAX_HELD) {
			/* allocate: up to 32 slots, so that runs fragment */
			err = swap_slot_alloc(&si, &ctx, order, &r.off);
			if (err == -ENOSPC) {
				a->full++;
				continue;
			}
			if (err)
				FAIL(a, "alloc order %u: %d", order, err);
			r.nr = 1u << order;
			if (r.off % r.nr || r.off + r.nr > si.nr_slots)
				FAIL(a, "alloc order %u: bad offset %u", order,
				     r.off);
			if (!expect_get(r, true))
				FAIL(a, "slots %u+%u handed out twice", r.off,
				     r.nr);
			/* Only this thread names them: nobody can dup them. */
			if (swap_slots_max_count(&si, r.off, r.nr) != 1 ||
			    swap_slot_count(&si, r.off + r.nr - 1) != 1)
				FAIL(a, "fresh slots %u+%u: count not 1", r.off,
				     r.nr);
			held[nr_held++] = r;
			a->allocs++;
		} else if (what < 10 && nr_held) {
			/* free one held */
			r = held[i];
			held[i] = held[--nr_held];
			if (!expect_put(r))
				FAIL(a, "freeing free slots %u+%u", r.off, r.nr);
			swap_slot_free(&si, r.off, r.nr);
			a->frees++;
		} else if (what < 12 && nr_held) {
			/* hand one to another thread */
			if (give(held[i])) {
				held[i] = held[--nr_held];
				a->given++;
			}
		} else if (what < 14 && nr_held < MAX_HELD) {
			/* free one another thread handed over */
			if (take(&r, x >> 20)) {
				if (!expect_put(r))
					FAIL(a, "freeing free slots %u+%u",
					     r.off, r.nr);
				swap_slot_free(&si, r.off, r.nr);
				a->taken++;
			}
		} else if (what == 14 && nr_held) {
			/* dup one (a fork), keep a use, hand the other on */
			uint32_t k;

			r = held[i];
			if (!expect_get(r, false))
				FAIL(a, "dup of free slots %u+%u", r.off, r.nr);
			for (k = r.off; k < r.off + r.nr; k++) {
				err = swap_slot_dup(&si, k);
				if (err)
					FAIL(a, "dup slot %u: %d", k, err);
			}
			if (swap_slot_count(&si, r.off) < 2)
				FAIL(a, "dup'd slot %u: count below 2", r.off);
			if (!give(r)) {
				if (!expect_put(r))
					FAIL(a, "freeing free slots %u+%u",
					     r.off, r.nr);
				swap_slot_free(&si, r.off, r.nr);
			}
			a->dups++;
		} else if (what == 15) {
			/* give the cluster back now and then (thread exit) */
			swap_alloc_ctx_release(&si, &ctx);
		}
		if (n % 4096 == 4095 && swap_info_validate(&si))
			FAIL(a, "device invalid after %lu steps", n + 1);
	}
out:
	while (nr_held) {
		r = held[--nr_held];
		if (!expect_put(r) && !a->failure[0])
			snprintf(a->failure, sizeof(a->failure),
				 "freeing free slots %u+%u", r.off, r.nr);
		swap_slot_free(&si, r.off, r.nr);
	}
	swap_alloc_ctx_release(&si, &ctx);
	free(held);
	return NULL;
}

static void test_threads(void)
{
	struct thread_arg a[NR_THREADS];
	pthread_t t[NR_THREADS];
	unsigned long ops = T_TSAN ? 20000 : 200000;
	const uint64_t seed = t_seed;
	unsigned i, failed = 0;
	uint32_t k, left = 0;
	struct run r;

	if (swap_info_init(&si, 0, NR_CLUSTERS * (uint64_t)SWAP_CLUSTER_BYTES))
		t_fail("swap_info_init");
	expected = calloc(si.nr_slots, sizeof(*expected));
	if (!expected)
		t_fail("out of memory");
	for (i = 0; i < NR_THREADS; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].id = i;
		a[i].seed = seed + 0x9e3779b97f4a7c15ull * (i + 1);
		a[i].ops = ops;
		if (pthread_create(&t[i], NULL, thread_main, &a[i]))
			t_fail("pthread_create");
	}
	for (i = 0; i < NR_THREADS; i++) {
		pthread_join(t[i], NULL);
		printf("thread %u: %lu allocs (%lu -ENOSPC), %lu frees, %lu "
		       "given, %lu taken, %lu dups%s%s\n", i, a[i].allocs,
		       a[i].full, a[i].frees, a[i].given, a[i].taken,
		       a[i].dups, a[i].failure[0] ? ": FAIL: " : "",
		       a[i].failure);
		failed += a[i].failure[0] != 0;
	}
	/* What is still in the exchange. */
	while (take(&r, 0)) {
		if (!expect_put(r))
			failed++;
		swap_slot_free(&si, r.off, r.nr);
	}
	for (k = 0; k < si.nr_slots; k++)
		left += expected[k] != 0 || si.swap_map[k] != 0;
	if (left || swap_info_validate(&si) || swap_inuse_slots(&si) ||
	    si.lists[CLUSTER_FREE].nr != si.nr_clusters) {
		printf("swapfile_threads: FAIL: at the end %u slots in use, "
		       "inuse_slots %u, %u of %u clusters free, validate %d\n",
		       left, swap_inuse_slots(&si), si.lists[CLUSTER_FREE].nr,
		       si.nr_clusters, swap_info_validate(&si));
		failed++;
	}
	/* The run must have met both a full device and every kind of step. */
	for (i = 0; i < NR_THREADS; i++)
		if (!a[i].failure[0] && (!a[i].allocs || !a[i].frees ||
					 !a[i].taken || !a[i].dups)) {
			printf("swapfile_threads: FAIL: thread %u did not "
			       "exercise every step\n", i);
			failed++;
		}
	swap_info_destroy(&si);
	free(expected);
	if (failed)
		t_fail("%u failures (seed %" PRIu64 ")", failed, seed);
}

static const struct t_case cases[] = {
	T_CASE(threads, "threads allocating, freeing, duping each other's slots"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .seed = T_SEED_CLOCK,
	});
}
