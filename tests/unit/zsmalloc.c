// SPDX-License-Identifier: MIT
/*
 * Description: the compressed pool's allocator (src/zswap/zsmalloc.c) keeps every
 * object's bytes, its counters and its memory limit, and packs objects
 * tightly once compacted.
 *
 *  - random alloc (1 B .. ZS_MAX_OBJECT) / write / read / rewrite / free /
 *    compact sequences against a reference model: contents, zs_size, the
 *    objects and obj_bytes counters, zs_validate();
 *  - fragmentation (pool_bytes / obj_bytes) below 1.1 after zs_compact() on
 *    a mix of sizes like lz4-compressed pages, once after freeing a random
 *    half and once after churn (the figures are printed);
 *  - a full pool returns 0 and stays usable; invalid sizes return 0;
 *  - the deltas passed to account() always add up to pool_bytes, and to 0
 *    after zs_destroy();
 *  - threads allocating, reading and freeing while another compacts in a
 *    loop, every read verified.
 *
 * Usage: zsmalloc [--seed N] [CASE...] (tests/unit/unitlib.h); exits 0 on
 * pass, 1 on failure.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unitlib.h"
#include "zsmalloc.h"

/* ThreadSanitizer and AddressSanitizer slow every step: fewer of them. */
#define SLOW		(T_TSAN || T_ASAN ? 4 : 1)

#define MiB		(1ull << 20)

struct obj {
	uint32_t h;
	uint32_t size;
	uint64_t seed;
};


/* Deterministic contents of an object: a function of (seed, offset). */
static void pattern(void *buf, size_t len, uint64_t seed)
{
	uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t w = t_rand(&s);

		memcpy(p + i, &w, len - i < 8 ? len - i : 8);
	}
}

static __thread unsigned char *scratch_buf;

/* A per-thread buffer of twice the largest object. */
static unsigned char *scratch(void)
{
	unsigned char *buf = scratch_buf;

	if (!buf) {
		buf = malloc(2 * ZS_MAX_OBJECT);
		if (!buf)
			t_fail("out of memory");
		scratch_buf = buf;
	}
	return buf;
}

static void scratch_release(void)
{
	free(scratch_buf);
	scratch_buf = NULL;
}

static void obj_write(struct zs_pool *pool, const struct obj *o)
{
	unsigned char *buf = scratch();

	pattern(buf, o->size, o->seed);
	zs_write(pool, o->h, buf, o->size);
}

static void obj_verify(struct zs_pool *pool, const struct obj *o)
{
	unsigned char *buf = scratch(), *want = buf + ZS_MAX_OBJECT;

	if (zs_size(pool, o->h) != o->size)
		t_fail("handle %u: size %zu, expected %u", o->h,
		       zs_size(pool, o->h), o->size);
	zs_read(pool, o->h, buf, o->size);
	pattern(want, o->size, o->seed);
	if (memcmp(buf, want, o->size))
		t_fail("handle %u (%u bytes): contents differ", o->h, o->size);
}

/* ---- accounting ---- */

static void account(void *arg, long delta)
{
	atomic_fetch_add_explicit((_Atomic long *)arg, delta,
				  memory_order_relaxed);
}

static void check_account(struct zs_pool *pool, _Atomic long *charged,
			  const char *when)
{
	struct zs_stats st;

	zs_get_stats(pool, &st);
	if ((uint64_t)atomic_load(charged) * T_PAGE != st.pool_bytes)
		t_fail("%s: account() deltas add up to %ld pages, pool_bytes %"
		       PRIu64, when, atomic_load(charged), st.pool_bytes);
}

static void check_valid(struct zs_pool *pool, const char *when)
{
	const char *err = zs_validate(pool);

	if (err)
		t_fail("%s: zs_validate: %s", when, err);
}

static void check_stats(struct zs_pool *pool, const struct obj *objs,
			unsigned n, const char *when)
{
	uint64_t bytes = 0;
	struct zs_stats st;
	unsigned i;

	for (i = 0; i < n; i++)
		bytes += objs[i].size;
	zs_get_stats(pool, &st);
	if (st.objects != n || st.obj_bytes != bytes)
		t_fail("%s: stats say %" PRIu64 " objects, %" PRIu64
		       " bytes; model %u, %" PRIu64, when, st.objects,
		       st.obj_bytes, n, bytes);
}

static uint32_t rnd_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(t_rand(s) % n);
}

/* ---- random sequences against a model ---- */

static size_t random_size(uint64_t *s)
{
	unsigned r = rnd_below(s, 100);

	if (r < 30)
		return 1 + rnd_below(s, 200);
	if (r < 75)
		return 1 + rnd_below(s, 4096);
	if (r < 88)
		return 4070 + rnd_below(s, 27);
	if (r < 99 || rnd_below(s, 2))
		return 4097 + rnd_below(s, 60000);
	return 4097 + rnd_below(s, (uint32_t)ZS_MAX_OBJECT - 4096);
}

static void alloc_new(struct zs_pool *pool, struct obj *objs, unsigned *n,
		      size_t size, uint64_t *s)
{
	struct obj *o = &objs[*n];
	unsigned i;

	o->h = zs_malloc(pool, size);
	if (!o->h)
		t_fail("zs_malloc(%zu) failed with %u objects", size, *n);
	for (i = 0; i < *n; i++)
		if (objs[i].h == o->h)
			t_fail("zs_malloc returned live handle %u", o->h);
	o->size = (uint32_t)size;
	o->seed = t_rand(s);
	obj_write(pool, o);
	++*n;
}

static void free_at(struct zs_pool *pool, struct obj *objs, unsigned *n,
		    unsigned i)
{
	zs_free(pool, objs[i].h);
	objs[i] = objs[--*n];
}

static void test_model(void)
{
	enum { CAP = 600 };
	static struct obj objs[CAP];
	uint64_t s = t_seed ^ 1, released;
	_Atomic long charged = 0;
	struct zs_pool *pool = zs_create(256 * MiB, account, &charged);
	struct zs_stats st, st2;
	unsigned n = 0, step, steps = 30000 / SLOW, i;

	if (!pool)
		t_fail("zs_create(256 MiB) failed");
	for (step = 0; step < steps; step++) {
		unsigned r = rnd_below(&s, 100);

		if (r < 40 && n < CAP) {
			alloc_new(pool, objs, &n, random_size(&s), &s);
		} else if (r < 70 && n) {
			free_at(pool, objs, &n, rnd_below(&s, n));
		} else if (r < 88 && n) {
			obj_verify(pool, &objs[rnd_below(&s, n)]);
		} else if (r < 99 && n) {
			i = rnd_below(&s, n);
			objs[i].seed = t_rand(&s);
			obj_write(pool, &objs[i]);
		} else {
			zs_get_stats(pool, &st);
			released = zs_compact(pool);
			zs_get_stats(pool, &st2);
			if (st.pool_bytes - st2.pool_bytes != released)
				t_fail("zs_compact released %" PRIu64
				       " bytes, pool_bytes fell by %" PRIu64,
				       released, st.pool_bytes - st2.pool_bytes);
			check_valid(pool, "model, after compaction");
			for (i = 0; i < n; i++)
				obj_verify(pool, &objs[i]);
		}
		check_stats(pool, objs, n, "model");
		if (step % 256 == 0) {
			check_valid(pool, "model");
			check_account(pool, &charged, "model");
		}
	}
	for (i = 0; i < n; i++)
		obj_verify(pool, &objs[i]);
	while (n)
		free_at(pool, objs, &n, n - 1);
	check_stats(pool, objs, 0, "model, all freed");
	zs_compact(pool);
	check_valid(pool, "model, all freed");
	check_account(pool, &charged, "model, all freed");
	zs_get_stats(pool, &st);
	/* Only the handle table and the page metadata remain. */
	if (st.pool_bytes > 2 * MiB)
		t_fail("all freed and compacted, pool still holds %" PRIu64
		       " bytes", st.pool_bytes);
	zs_destroy(pool);
	if (charged)
		t_fail("after zs_destroy, account() deltas add up to %ld",
		       (long)charged);
	printf("model: %u steps, ok\n", steps);
}

/* ---- fragmentation ---- */

/* Sizes like lz4 output of mixed pages. */
static size_t mixed_size(uint64_t *s)
{
	switch (rnd_below(s, 4)) {
	case 0:
		return 8 + rnd_below(s, 56);
	case 1:
		return 2000 + rnd_below(s, 601);
	case 2:
		return 1800 + rnd_below(s, 501);
	default:
		return 4096;
	}
}

static double frag(struct zs_pool *pool)
{
	struct zs_stats st;

	zs_get_stats(pool, &st);
	return (double)st.pool_bytes / (double)st.obj_bytes;
}

static void shuffle(struct obj *objs, unsigned n, uint64_t *s)
{
	unsigned i;

	for (i = n; i > 1; i--) {
		unsigned j = rnd_below(s, i);
		struct obj t = objs[i - 1];

		objs[i - 1] = objs[j];
		objs[j] = t;
	}
}

static void compact_and_check(struct zs_pool *pool, struct obj *objs,
			      unsigned n, const char *what, double before)
{
	double after;
	unsigned i;

	zs_compact(pool);
	after = frag(pool);
	printf("fragmentation %s: %.3f before zs_compact, %.3f after\n", what,
	       before, after);
	if (after >= 1.1)
		t_fail("%s: fragmentation %.3f after compaction", what, after);
	check_valid(pool, what);
	check_stats(pool, objs, n, what);
	for (i = 0; i < n; i++)
		obj_verify(pool, &objs[i]);
}

static void test_fragmentation(void)
{
	const unsigned total = 40000 / (SLOW > 1 ? 2 : 1);
	struct obj *objs = malloc(total * sizeof(*objs));
	uint64_t s = t_seed ^ 2;
	_Atomic long charged = 0;
	struct zs_pool *pool = zs_create(512 * MiB, account, &charged);
	unsigned n = 0, i;

	if (!pool || !objs)
		t_fail("zs_create(512 MiB) failed");
	while (n < total)
		alloc_new(pool, objs, &n, mixed_size(&s), &s);
	printf("fragmentation all %u allocated: %.3f\n", n, frag(pool));
	shuffle(objs, n, &s);
	while (n > total / 2)
		free_at(pool, objs, &n, n - 1);
	compact_and_check(pool, objs, n, "half freed", frag(pool));

	/* Churn at a constant size: the steady state without compaction. */
	for (i = 0; i < 2 * total / SLOW; i++) {
		free_at(pool, objs, &n, rnd_below(&s, n));
		alloc_new(pool, objs, &n, mixed_size(&s), &s);
	}
	compact_and_check(pool, objs, n, "steady state", frag(pool));
	check_account(pool, &charged, "fragmentation");
	zs_destroy(pool);
	free(objs);
}

/* ---- a full pool ---- */

static void test_full(void)
{
	enum { CAP = 4096 };
	static struct obj objs[CAP];
	const uint64_t max = 1 * MiB;
	uint64_t s = t_seed ^ 3;
	_Atomic long charged = 0;
	struct zs_pool *pool = zs_create(max, account, &charged);
	struct zs_stats st;
	unsigned n = 0, fails = 0, i;

	if (!pool)
		t_fail("zs_create(1 MiB) failed");
	if (zs_malloc(pool, 0) || zs_malloc(pool, ZS_MAX_OBJECT + 1))
		t_fail("zs_malloc of an invalid size succeeded");
	if (zs_malloc(pool, ZS_MAX_OBJECT))
		t_fail("a 2 MiB object fit in a 1 MiB pool");
	check_valid(pool, "full, after a failed chained object");
	check_stats(pool, objs, 0, "full, after a failed chained object");
	while (fails < 50 && n < CAP) {
		size_t size = rnd_below(&s, 8) ? 1 + rnd_below(&s, 4096) :
						  4097 + rnd_below(&s, 20000);
		uint32_t h = zs_malloc(pool, size);

		zs_get_stats(pool, &st);
		if (st.pool_bytes > max)
			t_fail("pool_bytes %" PRIu64 " past the limit",
			       st.pool_bytes);
		if (!h) {
			fails++;
			continue;
		}
		objs[n].h = h;
		objs[n].size = (uint32_t)size;
		objs[n].seed = t_rand(&s);
		obj_write(pool, &objs[n++]);
	}
	zs_get_stats(pool, &st);
	printf("full: %u objects, %" PRIu64 " bytes in a pool of %" PRIu64
	       " bytes\n", n, st.obj_bytes, st.pool_bytes);
	if (st.pool_bytes < max - 128 * 1024)
		t_fail("the pool said full at %" PRIu64 " of %" PRIu64
		       " bytes", st.pool_bytes, max);
	check_valid(pool, "full");
	check_stats(pool, objs, n, "full");
	check_account(pool, &charged, "full");
	for (i = 0; i < n; i++)
		obj_verify(pool, &objs[i]);

	/* Free half: there is room again. */
	shuffle(objs, n, &s);
	for (i = n / 2; n > i;)
		free_at(pool, objs, &n, n - 1);
	zs_compact(pool);
	alloc_new(pool, objs, &n, 3000, &s);
	alloc_new(pool, objs, &n, 9000, &s);
	check_valid(pool, "full, after freeing");
	for (i = 0; i < n; i++)
		obj_verify(pool, &objs[i]);
	while (n)
		free_at(pool, objs, &n, n - 1);
	zs_destroy(pool);
	if (charged)
		t_fail("full: account() deltas add up to %ld after destroy",
		       (long)charged);

	/* The largest object fits a pool sized for it. */
	pool = zs_create(4 * MiB, account, &charged);
	if (!pool)
		t_fail("zs_create(4 MiB) failed");
	alloc_new(pool, objs, &n, ZS_MAX_OBJECT, &s);
	obj_verify(pool, &objs[0]);
	check_account(pool, &charged, "largest object");
	free_at(pool, objs, &n, 0);
	check_valid(pool, "largest object freed");
	zs_destroy(pool);
	if (charged)
		t_fail("account() deltas add up to %ld after destroy",
		       (long)charged);
	if (zs_create(100, NULL, NULL))
		t_fail("zs_create of less than a page succeeded");
}

/* ---- threads ---- */

#define NR_WORKERS	3

struct worker {
	struct zs_pool *pool;
	uint64_t seed;
	unsigned steps;
	pthread_t tid;
	struct obj objs[256];
	unsigned n;
};

static _Atomic bool workers_done;

static size_t thread_size(uint64_t *s)
{
	unsigned r = rnd_below(s, 64);

	if (r == 0)
		return 4097 + rnd_below(s, 300000);
	if (r < 8)
		return 4097 + rnd_below(s, 12000);
	return mixed_size(s);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned step;

	for (step = 0; step < w->steps; step++) {
		unsigned r = rnd_below(&w->seed, 100);

		if (r < 35 && w->n < 256)
			alloc_new(w->pool, w->objs, &w->n,
				  thread_size(&w->seed), &w->seed);
		else if (r < 65 && w->n)
			free_at(w->pool, w->objs, &w->n,
				rnd_below(&w->seed, w->n));
		else if (w->n)
			obj_verify(w->pool,
				   &w->objs[rnd_below(&w->seed, w->n)]);
	}
	scratch_release();
	return NULL;
}

struct compactor {
	struct zs_pool *pool;
	unsigned long rounds;
};

static void *compactor_main(void *arg)
{
	struct compactor *c = arg;

	while (!atomic_load(&workers_done)) {
		zs_compact(c->pool);
		c->rounds++;
	}
	return NULL;
}

static void test_threads(void)
{
	static struct worker w[NR_WORKERS];
	_Atomic long charged = 0;
	struct zs_pool *pool = zs_create(512 * MiB, account, &charged);
	struct compactor comp = { .pool = pool };
	struct zs_stats st;
	pthread_t ctid;
	unsigned i, j, live = 0;
	uint64_t bytes = 0;

	if (!pool)
		t_fail("zs_create failed");
	for (i = 0; i < NR_WORKERS; i++) {
		w[i].pool = pool;
		w[i].seed = t_seed ^ (0x100 + i);
		w[i].steps = 40000 / SLOW / (SLOW > 1 ? 2 : 1);
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]))
			t_fail("pthread_create");
	}
	if (pthread_create(&ctid, NULL, compactor_main, &comp))
		t_fail("pthread_create");
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(w[i].tid, NULL);
	atomic_store(&workers_done, true);
	pthread_join(ctid, NULL);

	check_valid(pool, "threads");
	check_account(pool, &charged, "threads");
	for (i = 0; i < NR_WORKERS; i++) {
		for (j = 0; j < w[i].n; j++) {
			obj_verify(pool, &w[i].objs[j]);
			bytes += w[i].objs[j].size;
		}
		live += w[i].n;
	}
	zs_get_stats(pool, &st);
	if (st.objects != live || st.obj_bytes != bytes)
		t_fail("threads: stats %" PRIu64 " objects %" PRIu64
		       " bytes, model %u %" PRIu64, st.objects, st.obj_bytes,
		       live, bytes);
	printf("threads: %d workers x %u steps, %lu compaction rounds "
	       "(%" PRIu64 " moved something)\n", NR_WORKERS, w[0].steps,
	       comp.rounds, st.compactions);
	for (i = 0; i < NR_WORKERS; i++)
		while (w[i].n)
			free_at(pool, w[i].objs, &w[i].n, 0);
	zs_destroy(pool);
	if (charged)
		t_fail("threads: account() deltas add up to %ld after destroy",
		       (long)charged);
}

static const struct t_case cases[] = {
	T_CASE(model, "random alloc, write, free, compact against a reference model"),
	T_CASE(full, "a full pool refuses, stays usable; invalid sizes refused"),
	T_CASE(fragmentation, "objects packed tightly once compacted"),
	T_CASE(threads, "threads allocating and freeing while another compacts"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .teardown = scratch_release, .seed = 1,
	});
}
