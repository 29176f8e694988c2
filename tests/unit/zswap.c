// SPDX-License-Identifier: MIT
/*
 * zswap.c - the compressed pool in front of a swap device, on its own:
 * round trips for every compressor, unit mode and folio size; refusals
 * (incompressible data, pool limit) and the acceptance hysteresis;
 * writeback to the device and reads back from it; partial frees of a
 * unit; a corrupt object is refused, never returned; frees racing with
 * writeback; entries whose slots another process shares stay in the pool.
 *
 * The test includes zswap.c itself to reach an object's bytes (to corrupt
 * them); everything else goes through zswap.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "unitlib.h"
#include "../../src/zswap/zswap.c"
#include "swap_io.h"

#define FOLIOS	24

static _Atomic long charged;	/* pages, from the account callback */

static void account(void *arg, long delta)
{
	(void)arg;
	atomic_fetch_add(&charged, delta);
}

/* Page k of folio f, version v: the mixed kinds of t_fill, plus same-filled. */
static void fill_page(void *p, uint64_t f, unsigned k, uint64_t v)
{
	uint64_t page = f * 1001 + k;

	if ((page + v) % 5 == 4)
		mem_fill_word(p, T_PAGE, 0x0101010101010101ull * (page & 0xff));
	else
		t_fill(p, page, v + page);
}

static int check_page(const void *p, uint64_t f, unsigned k, uint64_t v)
{
	static __thread _Alignas(64) char buf[T_PAGE];

	fill_page(buf, f, k, v);
	return memcmp(p, buf, T_PAGE);
}

struct fixture {
	struct swap_info si;
	struct swap_alloc_ctx actx;
	struct zswap *zs;
	struct zswap_ctx *c;
	char *data;		/* FOLIOS folios of nr pages */
	swp_entry_t slot[FOLIOS];	/* each folio's first entry */
	unsigned nr;
};

static unsigned setup_threads = 1;	/* compression threads of the next setup */
static bool setup_store_incomp;	/* the next setup keeps incompressible pages */

static void setup(struct fixture *fx, const char *comp, bool unit,
		  unsigned nr, bool device, uint64_t pool_max)
{
	char dir[] = "/tmp/uswap-zswap-XXXXXX", why[160];
	struct swap_info *devs[1];
	struct zswap_params p = {
		.unit = unit, .max_bytes = pool_max, .accept_pct = 90,
		.threads = setup_threads, .max_unit = (size_t)nr * T_PAGE,
		.account = account, .store_incompressible = setup_store_incomp,
	};
	unsigned f, k;

	memset(fx, 0, sizeof(*fx));
	if (comp_parse(comp, &p.alg, &p.level, why, sizeof(why)))
		t_fail("comp_parse %s: %s", comp, why);
	if (swap_info_init(&fx->si, 0, 256u << 20))
		t_fail("swap_info_init");
	if (device) {
		if (!mkdtemp(dir))
			t_fail("mkdtemp");
		if (swap_file_create(&fx->si, dir, 256u << 20))
			t_fail("swap_file_create");
		rmdir(dir);
	}
	devs[0] = &fx->si;
	if (zswap_create(&fx->zs, &p, devs, 1))
		t_fail("zswap_create %s", comp);
	fx->c = zswap_ctx_create(fx->zs);
	if (!fx->c)
		t_fail("zswap_ctx_create");
	swap_alloc_ctx_init(&fx->actx);
	fx->nr = nr;
	fx->data = aligned_alloc(T_PAGE, (size_t)FOLIOS * nr * T_PAGE);
	for (f = 0; f < FOLIOS; f++)
		for (k = 0; k < nr; k++)
			fill_page(fx->data + ((size_t)f * nr + k) * T_PAGE, f, k, 0);
}

static void teardown(struct fixture *fx)
{
	swap_alloc_ctx_release(&fx->si, &fx->actx);
	zswap_ctx_destroy(fx->zs, fx->c);
	zswap_destroy(fx->zs);
	if (swap_info_validate(&fx->si))
		t_fail("slot map invalid after the test");
	if (swap_inuse_slots(&fx->si))
		t_fail("%u slots still in use", swap_inuse_slots(&fx->si));
	swap_file_close(&fx->si);
	swap_info_destroy(&fx->si);
	free(fx->data);
}

static unsigned order_of(unsigned nr)
{
	unsigned o = 0;

	while ((1u << o) < nr)
		o++;
	return o;
}

/* Store every folio: pool first, the rest to the device.  Returns pooled pages. */
static uint64_t store_all(struct fixture *fx)
{
	struct zswap_job jobs[FOLIOS];
	uint64_t pooled = 0;
	unsigned f, k;

	for (f = 0; f < FOLIOS; f++) {
		uint32_t off;

		if (swap_slot_alloc(&fx->si, &fx->actx, order_of(fx->nr), &off))
			t_fail("swap_slot_alloc");
		fx->slot[f] = swp_entry(0, off);	/* entries, as regions hold */
		jobs[f] = (struct zswap_job){
			.src = fx->data + (size_t)f * fx->nr * T_PAGE,
			.slot = fx->slot[f], .nr = fx->nr,
		};
	}
	zswap_store_batch(fx->zs, fx->c, jobs, FOLIOS);
	for (f = 0; f < FOLIOS; f++) {
		pooled += jobs[f].stored;
		for (k = 0; k < fx->nr; k++) {
			struct iovec iov = {
				(char *)jobs[f].src + (size_t)k * T_PAGE, T_PAGE
			};

			if (zswap_present(fx->zs, fx->slot[f] + k))
				continue;
			if (fx->si.fd < 0)
				t_fail("a page was refused with no device behind the pool");
			if (swap_write(&fx->si, swp_offset(fx->slot[f]) + k, &iov, 1,
				       T_PAGE))
				t_fail("swap_write");
		}
	}
	return pooled;
}

/* Read pages [k0, k0+n) of folio f from pool or device and check them. */
static void load_check(struct fixture *fx, unsigned f, unsigned k0, unsigned n)
{
	char *buf = aligned_alloc(T_PAGE, (size_t)n * T_PAGE);
	unsigned k = 0;

	while (k < n) {
		int got = zswap_load(fx->zs, fx->c, fx->slot[f] + k0 + k, n - k,
				     buf + (size_t)k * T_PAGE);

		if (got < 0)
			t_fail("zswap_load: %d", got);
		if (got == 0) {
			if (swap_read(&fx->si, swp_offset(fx->slot[f]) + k0 + k,
				      buf + (size_t)k * T_PAGE, T_PAGE))
				t_fail("swap_read");
			got = 1;
		}
		k += (unsigned)got;
	}
	for (k = 0; k < n; k++)
		if (check_page(buf + (size_t)k * T_PAGE, f, k0 + k, 0))
			t_fail("folio %u page %u: wrong data after load", f, k0 + k);
	free(buf);
}

static void free_all(struct fixture *fx)
{
	unsigned f;

	for (f = 0; f < FOLIOS; f++)
		zswap_slot_free(fx->zs, fx->slot[f], fx->nr);
}

static void test_roundtrip(const char *comp, bool unit, unsigned nr,
			   bool device)
{
	struct fixture fx;
	struct zswap_stats st;
	uint64_t pooled;
	unsigned f;

	setup(&fx, comp, unit, nr, device, 64u << 20);
	pooled = store_all(&fx);
	zswap_get_stats(fx.zs, &st);
	if (st.stored_pages != pooled || st.zswpout != pooled)
		t_fail("%s: stored_pages %llu zswpout %llu, pooled %llu", comp,
		       (unsigned long long)st.stored_pages,
		       (unsigned long long)st.zswpout, (unsigned long long)pooled);
	if (!pooled || ((!unit || nr == 1) && !st.same_filled_pages))
		t_fail("%s unit=%d nr=%u: nothing pooled or no same-filled page",
		       comp, unit, nr);
	if (device && nr == 1 && !st.reject_compress_poor)
		t_fail("%s: random pages were not refused as incompressible", comp);
	if (!device && pooled != (uint64_t)FOLIOS * nr)
		t_fail("%s: without a device every page must be pooled", comp);
	if (st.stored_incompressible_pages !=
	    (device ? 0 : st.reject_compress_poor))
		t_fail("%s device=%d: %llu pages stored as they are, %llu poor",
		       comp, device,
		       (unsigned long long)st.stored_incompressible_pages,
		       (unsigned long long)st.reject_compress_poor);
	if (charged <= 0 || (uint64_t)charged << 12 != st.pool_bytes)
		t_fail("%s unit=%d nr=%u: charged %ld pages, pool holds %llu bytes "
		       "(pooled %llu, same-filled %llu, poor %llu, fail %llu)",
		       comp, unit, nr, (long)charged,
		       (unsigned long long)st.pool_bytes,
		       (unsigned long long)pooled,
		       (unsigned long long)st.same_filled_pages,
		       (unsigned long long)st.reject_compress_poor,
		       (unsigned long long)st.reject_compress_fail);
	for (f = 0; f < FOLIOS; f++)
		load_check(&fx, f, 0, nr);
	if (nr > 1) {
		/* A part of a unit; then free its first half and read the rest. */
		load_check(&fx, 1, nr / 2, nr - nr / 2);
		zswap_slot_free(fx.zs, fx.slot[2], nr / 2);
		load_check(&fx, 2, nr / 2, nr - nr / 2);
		zswap_slot_free(fx.zs, fx.slot[2] + nr / 2, nr - nr / 2);
		for (f = 0; f < FOLIOS; f++)
			if (f != 2)
				zswap_slot_free(fx.zs, fx.slot[f], fx.nr);
	} else {
		free_all(&fx);
	}
	zswap_get_stats(fx.zs, &st);
	if (st.stored_pages || st.same_filled_pages || st.compressed_bytes ||
	    st.stored_incompressible_pages)
		t_fail("%s: pool not empty after every slot was freed", comp);
	printf("  %-8s unit=%d folio=%3u pages device=%d: pooled %llu of %u pages, zswpin %llu\n",
	       comp, unit, fx.nr, device, (unsigned long long)pooled,
	       FOLIOS * fx.nr, (unsigned long long)st.zswpin);
	teardown(&fx);
}

/*
 * --zswap-incompressible store: with a device behind the pool, pages that
 * do not compress stay in the pool as they are (counted while there),
 * read back whole, and go to the device with the rest on writeback; in
 * the default mode the same pages are refused and none is stored so.
 */
static void test_store_incompressible(bool unit, unsigned nr)
{
	struct fixture fx;
	struct zswap_stats st;
	uint64_t pooled, wb;
	unsigned f;

	setup(&fx, "lz4", unit, nr, true, 64u << 20);
	pooled = store_all(&fx);
	zswap_get_stats(fx.zs, &st);
	if (st.stored_incompressible_pages || !st.reject_compress_poor ||
	    pooled == (uint64_t)FOLIOS * nr)
		t_fail("device mode: %llu pages stored as they are, %llu poor, "
		       "%llu of %u pooled", (unsigned long long)st.stored_incompressible_pages,
		       (unsigned long long)st.reject_compress_poor,
		       (unsigned long long)pooled, FOLIOS * nr);
	free_all(&fx);
	teardown(&fx);

	setup_store_incomp = true;
	setup(&fx, "lz4", unit, nr, true, 64u << 20);
	setup_store_incomp = false;
	pooled = store_all(&fx);
	zswap_get_stats(fx.zs, &st);
	if (pooled != (uint64_t)FOLIOS * nr)
		t_fail("store mode: %llu of %u pages pooled", (unsigned long long)pooled,
		       FOLIOS * nr);
	if (!st.reject_compress_poor ||
	    st.stored_incompressible_pages != st.reject_compress_poor)
		t_fail("store mode: %llu pages compressed poorly, %llu stored as they are",
		       (unsigned long long)st.reject_compress_poor,
		       (unsigned long long)st.stored_incompressible_pages);
	if (st.compressed_bytes < st.stored_incompressible_pages * T_PAGE)
		t_fail("store mode: %llu bytes held for %llu raw pages",
		       (unsigned long long)st.compressed_bytes,
		       (unsigned long long)st.stored_incompressible_pages);
	for (f = 0; f < FOLIOS; f++)
		load_check(&fx, f, 0, nr);

	/* Writeback takes them to the device like the rest. */
	zswap_fork_prepare(fx.zs);	/* pause background writeback */
	wb = zswap_writeback(fx.zs, fx.c, 0);
	zswap_get_stats(fx.zs, &st);
	if (st.stored_incompressible_pages || st.stored_pages || !wb ||
	    wb > pooled)
		t_fail("store mode: after writeback of %llu pages, %llu raw and "
		       "%llu pages still stored", (unsigned long long)wb,
		       (unsigned long long)st.stored_incompressible_pages,
		       (unsigned long long)st.stored_pages);
	for (f = 0; f < FOLIOS; f++)
		load_check(&fx, f, 0, nr);
	free_all(&fx);
	zswap_fork_done(fx.zs);
	printf("  incompressible store unit=%d folio=%u pages: %llu stored as they "
	       "are, then written back with the rest (%llu pages)\n", unit, nr,
	       (unsigned long long)st.reject_compress_poor, (unsigned long long)wb);
	teardown(&fx);
}

/* The limit refuses, the hysteresis holds, writeback empties the pool. */
static void test_limit_writeback(bool unit)
{
	struct fixture fx;
	struct zswap_stats st;
	uint64_t pooled, wb;
	unsigned f;

	/* 16 folios of 16 pages; a limit far below what they compress to. */
	setup(&fx, "lz4", unit, 16, true, 64u << 10);
	zswap_fork_prepare(fx.zs);	/* pause background writeback: test it here */
	pooled = store_all(&fx);
	zswap_get_stats(fx.zs, &st);
	if (!st.reject_pool_limit || !st.pool_limit_hit || !atomic_load(&fx.zs->full))
		t_fail("pool limit never refused a page (pooled %llu)",
		       (unsigned long long)pooled);
	/* Full until under the acceptance threshold. */
	if (pool_accepting(fx.zs))
		t_fail("a full pool accepted a page above the acceptance threshold");
	wb = zswap_writeback(fx.zs, fx.c, 0);
	zswap_get_stats(fx.zs, &st);
	if (!wb || st.zswpwb != wb || st.compressed_bytes)
		t_fail("writeback wrote %llu pages, zswpwb %llu, %llu still stored",
		       (unsigned long long)wb, (unsigned long long)st.zswpwb,
		       (unsigned long long)st.stored_pages);
	zs_compact(fx.zs->pool);
	if (!pool_accepting(fx.zs))
		t_fail("an empty pool does not accept (%lld pages held, %llu objects' bytes)",
		       (long long)atomic_load(&fx.zs->pool_pages),
		       (unsigned long long)st.compressed_bytes);
	for (f = 0; f < FOLIOS; f++)
		load_check(&fx, f, 0, fx.nr);
	free_all(&fx);
	zswap_fork_done(fx.zs);
	printf("  limit unit=%d: pooled %llu, refused %llu at the limit, wrote back %llu\n",
	       unit, (unsigned long long)pooled,
	       (unsigned long long)st.reject_pool_limit, (unsigned long long)wb);
	teardown(&fx);
}

/*
 * A slot used twice (a fork: parent and child hold the same entry in their
 * copies of the pool) is never written back: both could write it at once.
 * Once the other use is gone it is.
 */
static void test_shared_writeback(void)
{
	struct fixture fx;
	struct zswap_stats st;
	uint64_t wb;
	unsigned f, k;

	setup(&fx, "lz4", false, 4, true, 64u << 20);
	zswap_fork_prepare(fx.zs);	/* no background writeback meanwhile */
	store_all(&fx);
	for (f = 0; f < FOLIOS; f++)
		for (k = 0; k < fx.nr; k++)
			if (swap_slot_dup(&fx.si, swp_offset(fx.slot[f]) + k))
				t_fail("swap_slot_dup");
	wb = zswap_writeback(fx.zs, fx.c, 0);
	zswap_get_stats(fx.zs, &st);
	if (wb || st.zswpwb)
		t_fail("wrote back %llu pages of shared slots", (unsigned long long)wb);
	if (!st.written_back_shared || !st.stored_pages)
		t_fail("shared entries: %llu passed over, %llu pages stored",
		       (unsigned long long)st.written_back_shared,
		       (unsigned long long)st.stored_pages);
	/* The other process lets go: now they go out. */
	for (f = 0; f < FOLIOS; f++)
		swap_slot_free(&fx.si, swp_offset(fx.slot[f]), fx.nr);
	wb = zswap_writeback(fx.zs, fx.c, 0);
	zswap_get_stats(fx.zs, &st);
	if (!wb || st.compressed_bytes)
		t_fail("after the other use went: wrote back %llu, %llu bytes still stored",
		       (unsigned long long)wb, (unsigned long long)st.compressed_bytes);
	for (f = 0; f < FOLIOS; f++)
		load_check(&fx, f, 0, fx.nr);
	free_all(&fx);
	zswap_fork_done(fx.zs);
	printf("  shared: %llu entries passed over while shared, %llu pages written back after\n",
	       (unsigned long long)st.written_back_shared, (unsigned long long)wb);
	teardown(&fx);
}

/* Flip a byte of a stored object: the load fails, never returns it. */
static void test_corrupt(void)
{
	struct fixture fx;
	struct zswap_entry *e = NULL;
	unsigned f;
	char *buf = aligned_alloc(T_PAGE, 16 * T_PAGE), *obj;

	setup(&fx, "lz4", true, 16, false, 64u << 20);
	store_all(&fx);
	for (f = 0; f < FOLIOS && !e; f++) {
		uint32_t id = *zswap_slot_ref(fx.zs, fx.slot[f]);

		if (!(fx.zs->ent[id].flags & ZE_SAME))
			e = &fx.zs->ent[id];
	}
	if (!e)
		t_fail("no compressed entry to corrupt");
	f--;
	obj = malloc(e->clen);
	zs_read(fx.zs->pool, (uint32_t)e->value, obj, e->clen);
	obj[e->clen / 2] ^= 0x40;
	zs_write(fx.zs->pool, (uint32_t)e->value, obj, e->clen);
	if (zswap_load(fx.zs, fx.c, fx.slot[f], 16, buf) != -EBADMSG)
		t_fail("a corrupt object was loaded");
	if (zswap_load(fx.zs, fx.c, fx.slot[f] + 3, 2, buf) != -EBADMSG)
		t_fail("a corrupt object was loaded in part");
	free_all(&fx);
	free(obj);
	free(buf);
	teardown(&fx);
}

/*
 * A device that fails writes in the middle of writeback: the entries whose
 * writes failed stay in the pool (counted), the others leave it, and once
 * the device is well again everything goes out and reads back -- with
 * pwritev (ring false) and with io_uring.  Folios of 4 pages stored page
 * by page: a round writes runs that span several entries.
 */
static void test_writeback_fail(bool ring)
{
	struct fixture fx;
	struct zswap_stats st;
	uint64_t wb = 0, left;
	unsigned f, tries;

	setup(&fx, "lz4", false, 4, true, 64u << 20);
	zswap_fork_prepare(fx.zs);	/* no background writeback meanwhile */
	if (ring && !(fx.c->io = swap_io_create(0)))
		t_fail("swap_io_create");
	store_all(&fx);
	zswap_get_stats(fx.zs, &st);
	left = st.stored_pages;
	/* Every write fails: nothing leaves. */
	setenv("USWAP_INJECT", "write_eio=0", 1);
	if (prim_inject_init(&fx.si.fd, 1))
		t_fail("prim_inject_init");
	wb = zswap_writeback(fx.zs, fx.c, 0);
	zswap_get_stats(fx.zs, &st);
	if (wb || !st.written_back_fail || st.stored_pages != left)
		t_fail("ring=%d, every write failing: %llu written, %llu entries "
		       "failed, %llu of %llu pages stay", ring,
		       (unsigned long long)wb,
		       (unsigned long long)st.written_back_fail,
		       (unsigned long long)st.stored_pages,
		       (unsigned long long)left);
	/* Every other write fails: some leave, some stay. */
	setenv("USWAP_INJECT", "write_eio=0:2", 1);
	prim_inject_init(&fx.si.fd, 1);
	for (tries = 0; tries < 4; tries++)
		wb += zswap_writeback(fx.zs, fx.c, 0);
	unsetenv("USWAP_INJECT");
	prim_inject_init(&fx.si.fd, 1);
	zswap_get_stats(fx.zs, &st);
	if (st.zswpwb != wb || st.stored_pages + wb != left)
		t_fail("ring=%d: zswpwb %llu, written %llu, %llu of %llu pages stay",
		       ring, (unsigned long long)st.zswpwb, (unsigned long long)wb,
		       (unsigned long long)st.stored_pages,
		       (unsigned long long)left);
	for (f = 0; f < FOLIOS; f++)
		load_check(&fx, f, 0, fx.nr);
	wb += zswap_writeback(fx.zs, fx.c, 0);
	zswap_get_stats(fx.zs, &st);
	if (st.stored_pages || st.compressed_bytes)
		t_fail("ring=%d: %llu pages stay after the device recovered", ring,
		       (unsigned long long)st.stored_pages);
	for (f = 0; f < FOLIOS; f++)
		load_check(&fx, f, 0, fx.nr);
	free_all(&fx);
	swap_io_destroy(fx.c->io);
	fx.c->io = NULL;
	zswap_fork_done(fx.zs);
	printf("  writeback with failing writes, ring=%d: %llu entries failed, "
	       "then all %llu of %llu pages written back\n", ring,
	       (unsigned long long)st.written_back_fail, (unsigned long long)wb,
	       (unsigned long long)left);
	teardown(&fx);
}

/* Writeback racing with loads and frees: data and slot map stay right. */
struct race {
	struct fixture *fx;
	_Atomic bool stop;
};

static void *writeback_loop(void *arg)
{
	struct race *ra = arg;
	struct zswap_ctx *c = zswap_ctx_create(ra->fx->zs);

	c->io = swap_io_create(0);	/* as the writeback thread has */
	while (!ra->stop)
		zswap_writeback(ra->fx->zs, c, 0);
	swap_io_destroy(c->io);
	c->io = NULL;
	zswap_ctx_destroy(ra->fx->zs, c);
	return NULL;
}

static void test_race(unsigned rounds)
{
	struct fixture fx;
	struct race ra = { .fx = &fx };
	pthread_t tid;
	unsigned round;

	setup(&fx, "lz4", true, 16, true, 64u << 20);
	pthread_create(&tid, NULL, writeback_loop, &ra);
	for (round = 0; round < rounds; round++) {
		unsigned f;

		store_all(&fx);
		for (f = 0; f < FOLIOS; f++)
			load_check(&fx, f, 0, fx.nr);
		free_all(&fx);
	}
	ra.stop = true;
	pthread_join(tid, NULL);
	teardown(&fx);
}

/*
 * Many small batches back to back, with more compression threads than
 * jobs: the caller often does a batch alone before the threads it woke
 * are running, and a thread that wakes late must not take a job of the
 * next batch by an index it drew from the last one (that job would be
 * stored twice: store_unit finds its slot taken, and one of the two
 * entries is lost).  Every job is stored exactly once, every batch.
 * (The interleaving that did it is a few instructions wide: this cannot
 * force it, only walk the protocol many times; the soak found it.)
 */
static void test_small_batches(void)
{
	struct fixture fx;
	unsigned round, f;

	setup_threads = 3;
	setup(&fx, "lz4", false, 1, false, 64u << 20);
	setup_threads = 1;
	for (round = 0; round < 3000; round++) {
		struct zswap_job jobs[3];
		unsigned n = 2 + round % 2;
		struct zswap_stats st;

		for (f = 0; f < n; f++) {
			uint32_t off;

			if (swap_slot_alloc(&fx.si, &fx.actx, 0, &off))
				t_fail("swap_slot_alloc");
			fx.slot[f] = swp_entry(0, off);
			jobs[f] = (struct zswap_job){
				.src = fx.data + (size_t)f * T_PAGE,
				.slot = fx.slot[f], .nr = 1,
			};
		}
		zswap_store_batch(fx.zs, fx.c, jobs, n);
		zswap_get_stats(fx.zs, &st);
		if (st.stored_pages != n)
			t_fail("round %u: %llu pages in the pool after a batch of %u",
			       round, (unsigned long long)st.stored_pages, n);
		for (f = 0; f < n; f++) {
			if (jobs[f].stored != 1)
				t_fail("round %u: job %u stored %u times", round,
				       f, jobs[f].stored);
			load_check(&fx, f, 0, 1);
		}
		for (f = 0; f < n; f++)
			zswap_slot_free(fx.zs, fx.slot[f], 1);
	}
	teardown(&fx);
}

/* Every compressor, unit and page mode, every folio size, to a device. */
static void roundtrips(const char *comp)
{
	static const unsigned sizes[] = { 1, 4, 16, 512 };
	unsigned j;

	for (j = 0; j < ARRAY_SIZE(sizes); j++) {
		test_roundtrip(comp, true, sizes[j], true);
		if (sizes[j] > 1)
			test_roundtrip(comp, false, sizes[j], true);
	}
}

static void test_roundtrip_lz4(void)
{
	roundtrips("lz4");
}

static void test_roundtrip_zstd(void)
{
	roundtrips("zstd");
}

static void test_roundtrip_zstd5(void)
{
	roundtrips("zstd:5");
}

static void test_roundtrip_deflate(void)
{
	roundtrips("deflate");
}

static void test_roundtrip_nodevice(void)
{
	test_roundtrip("lz4", true, 16, false);
	test_roundtrip("lz4", false, 16, false);
}

static void test_incompressible(void)
{
	test_store_incompressible(true, 1);
	test_store_incompressible(false, 16);
}

/*
 * What the sanitizer builds run (tests/e2e/sanitizers.lib), with fewer
 * rounds of the race there: every compressor and folio size take a
 * minute under ThreadSanitizer, these take seconds.
 */
static void test_writeback(void)
{
	test_limit_writeback(true);
	test_limit_writeback(false);
	test_shared_writeback();
	test_writeback_fail(false);
	test_writeback_fail(true);
	test_race(T_SANITIZED ? 40 : 200);
}

static const struct t_case cases[] = {
	T_CASE(roundtrip_lz4, "lz4: every unit mode and folio size, to a device"),
	T_CASE(roundtrip_zstd, "zstd: every unit mode and folio size, to a device"),
	T_CASE(roundtrip_zstd5, "zstd:5: every unit mode and folio size, to a device"),
	T_CASE(roundtrip_deflate, "deflate: every unit mode and folio size, to a device"),
	T_CASE(roundtrip_nodevice, "without a device every page is pooled"),
	T_CASE(incompressible, "incompressible pages refused, or stored as they are"),
	T_CASE(writeback, "pool limit, shared slots, failing writes, frees racing writeback"),
	T_CASE(corrupt, "a corrupt object is refused, never returned"),
	T_CASE(small_batches, "every job of many small batches is stored once"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){ .cases = cases });
}
