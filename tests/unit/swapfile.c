/* SPDX-License-Identifier: MIT */
/*
 * Description: the swap slot allocator (src/swap/swapfile.c, src/swap/swap_map.c)
 * matches a reference model of use counts under random alloc / free / dup /
 * release sequences.
 *
 * The model is a plain array of use counts.  After every step the test
 * checks the device's swap_map against it byte for byte, swap_info_validate(),
 * inuse_slots, and which clusters the contexts own.  Allocation rules:
 *
 *  - a run is 2^order slots, offset a multiple of 2^order, inside the
 *    device, all free in the model, and not inside the current cluster of
 *    another context;
 *  - if the calling context's cluster has such a run, the run comes from it:
 *    the first at or after the context's cursor, else the first in it;
 *  - afterwards the context owns the run's cluster, or nothing if the
 *    cluster just became full;
 *  - -ENOSPC exactly when the model has no free aligned run of that order in
 *    any cluster other than the other contexts' current clusters (the
 *    caller's own cluster counts: it gives its cluster back and retries).
 *
 * Also: device sizes (rounding, -EINVAL, the SWP_MAX_SLOTS cap), fill with
 * order 0 then free all, use count overflow, and the provision() callback
 * (threads: swapfile_threads.c).  Usage: swapfile [--seed N] [CASE...]
 * (tests/unit/unitlib.h); 0 pass, 1 fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "swap.h"
#include "unitlib.h"

/* Under ThreadSanitizer the per-step checks cost 10x: fewer steps. */
#define SLOW		(T_TSAN ? 10 : 1)

#define NR_CTX		3
#define NO_CTX		NR_CTX

static uint64_t rng_state;	/* t_seed at the start of each case */
static const char *step_what = "setup";
static unsigned long step_nr;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

__attribute__((format(printf, 2, 3)))
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	fprintf(stderr, "swapfile: FAIL in %s, step %lu: ", step_what, step_nr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* One reference on each slot of [off, off + nr): what a caller holds. */
struct handle {
	uint32_t off, nr;
};

struct model {
	struct swap_info si;
	struct swap_alloc_ctx ctx[NR_CTX];
	uint8_t *counts;		/* reference use count per slot */
	uint64_t inuse;
	struct handle *h;
	size_t nr_h, cap_h;
	/* provision() bookkeeping, per cluster */
	unsigned *prov_ok, *prov_failed;
	bool *ever_used;
	int prov_error;			/* provision() returns this */
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	check(p != NULL, "out of memory");
	return p;
}

static void handle_add(struct model *m, uint32_t off, uint32_t nr)
{
	if (m->nr_h == m->cap_h) {
		m->cap_h = m->cap_h ? 2 * m->cap_h : 1024;
		m->h = realloc(m->h, m->cap_h * sizeof(*m->h));
		check(m->h != NULL, "out of memory");
	}
	m->h[m->nr_h].off = off;
	m->h[m->nr_h].nr = nr;
	m->nr_h++;
}

static void handle_del(struct model *m, size_t i)
{
	m->h[i] = m->h[--m->nr_h];
}

static int provision_cb(struct swap_info *si, uint32_t cluster)
{
	struct model *m = (struct model *)((char *)si -
					   offsetof(struct model, si));

	check(cluster < si->nr_clusters, "provision of cluster %u", cluster);
	check(pthread_mutex_trylock(&si->lock) == EBUSY,
	      "provision called without the lock");
	check(!si->clusters[cluster].provisioned,
	      "provision of provisioned cluster %u", cluster);
	check(si->clusters[cluster].list == CLUSTER_FREE &&
	      si->clusters[cluster].count == 0,
	      "provision of cluster %u that is not free", cluster);
	if (m->prov_error) {
		m->prov_failed[cluster]++;
		return m->prov_error;
	}
	m->prov_ok[cluster]++;
	return 0;
}

static void model_init(struct model *m, uint64_t bytes)
{
	unsigned i;
	int err;

	memset(m, 0, sizeof(*m));
	err = swap_info_init(&m->si, 0, bytes);
	check(err == 0, "swap_info_init(%" PRIu64 "): %d", bytes, err);
	m->si.provision = provision_cb;
	m->counts = xcalloc(m->si.nr_slots, 1);
	m->prov_ok = xcalloc(m->si.nr_clusters, sizeof(unsigned));
	m->prov_failed = xcalloc(m->si.nr_clusters, sizeof(unsigned));
	m->ever_used = xcalloc(m->si.nr_clusters, sizeof(bool));
	for (i = 0; i < NR_CTX; i++)
		swap_alloc_ctx_init(&m->ctx[i]);
}

static void model_fini(struct model *m)
{
	swap_info_destroy(&m->si);
	free(m->counts);
	free(m->h);
	free(m->prov_ok);
	free(m->prov_failed);
	free(m->ever_used);
}

/* Everything that must hold after every step. */
static void model_check(struct model *m)
{
	struct swap_info *si = &m->si;
	unsigned i, j, owned = 0;
	int err;

	check(memcmp(m->counts, si->swap_map, si->nr_slots) == 0,
	      "swap_map differs from the model");
	check(swap_inuse_slots(si) == m->inuse, "inuse_slots %u, model %" PRIu64,
	      swap_inuse_slots(si), m->inuse);
	err = swap_info_validate(si);
	check(err == 0, "swap_info_validate: %d", err);
	for (i = 0; i < NR_CTX; i++) {
		uint32_t c = m->ctx[i].cluster;

		if (c == CLUSTER_NONE)
			continue;
		owned++;
		check(c < si->nr_clusters &&
		      si->clusters[c].list == CLUSTER_CURRENT,
		      "context %u owns cluster %u, not on CURRENT", i, c);
		for (j = 0; j < i; j++)
			check(m->ctx[j].cluster != c,
			      "contexts %u and %u share cluster %u", j, i, c);
	}
	check(si->lists[CLUSTER_CURRENT].nr == owned,
	      "%u clusters on CURRENT, %u owned", si->lists[CLUSTER_CURRENT].nr,
	      owned);
	for (i = 0; i < si->nr_clusters; i++)
		check(m->prov_ok[i] <= 1, "cluster %u provisioned %u times", i,
		      m->prov_ok[i]);
}

/* First free aligned run of 2^order slots in [from, to), or UINT32_MAX. */
static uint32_t model_find_run(const struct model *m, uint32_t from,
			       uint32_t to, unsigned order)
{
	const uint32_t nr = 1u << order;
	uint32_t off, i;

	for (off = from; off < to; off += nr) {
		for (i = 0; i < nr && !m->counts[off + i]; i++)
			;
		if (i == nr)
			return off;
	}
	return UINT32_MAX;
}

/* Does the model have a free aligned run of 2^order slots in cluster c? */
static bool model_cluster_has_run(const struct model *m, uint32_t c,
				  unsigned order)
{
	const uint32_t base = c * SWAP_CLUSTER_SLOTS;

	return model_find_run(m, base, base + SWAP_CLUSTER_SLOTS, order) !=
	       UINT32_MAX;
}

/*
 * Where the context's own cluster c must put the run: the first free one at
 * or after the cursor, else the first from the cluster's start.
 */
static uint32_t model_expected_run(const struct model *m, uint32_t c,
				   uint32_t cursor, unsigned order)
{
	const uint32_t base = c * SWAP_CLUSTER_SLOTS, nr = 1u << order;
	uint32_t start = base, off;

	if (cursor >= base && cursor < base + SWAP_CLUSTER_SLOTS)
		start = (cursor + nr - 1) & ~(nr - 1);
	off = model_find_run(m, start, base + SWAP_CLUSTER_SLOTS, order);
	if (off == UINT32_MAX)
		off = model_find_run(m, base, start, order);
	return off;
}

static bool owned_by_other(const struct model *m, unsigned self, uint32_t c)
{
	unsigned i;

	for (i = 0; i < NR_CTX; i++)
		if (i != self && m->ctx[i].cluster == c)
			return true;
	return false;
}

static int step_alloc(struct model *m, unsigned x, unsigned order)
{
	struct swap_info *si = &m->si;
	const uint32_t nr = 1u << order;
	uint32_t before[NR_CTX], off = UINT32_MAX, c, i;
	uint32_t expect = UINT32_MAX;
	bool any_run = false;
	int err;

	step_what = "alloc";
	for (i = 0; i < NR_CTX; i++)
		before[i] = m->ctx[i].cluster;
	if (before[x] != CLUSTER_NONE)
		expect = model_expected_run(m, before[x], m->ctx[x].next,
					    order);
	err = swap_slot_alloc(si, &m->ctx[x], order, &off);

	for (i = 0; i < NR_CTX; i++)
		check(i == x || m->ctx[i].cluster == before[i],
		      "alloc by context %u changed context %u", x, i);
	if (err == -ENOSPC) {
		for (c = 0; c < si->nr_clusters && !any_run; c++)
			any_run = !owned_by_other(m, x, c) &&
				  model_cluster_has_run(m, c, order);
		check(!any_run, "-ENOSPC for order %u, but cluster %u has room",
		      order, c - 1);
		return err;
	}
	check(err == 0, "swap_slot_alloc(order %u): %d", order, err);
	check(off % nr == 0, "order %u run at %u is not aligned", order, off);
	check(off < si->nr_slots && si->nr_slots - off >= nr,
	      "order %u run at %u beyond %u slots", order, off, si->nr_slots);
	c = off / SWAP_CLUSTER_SLOTS;
	check(!owned_by_other(m, x, c),
	      "run at %u is in another context's cluster %u", off, c);
	check(expect == UINT32_MAX || off == expect,
	      "run at %u, expected %u in the context's own cluster %u", off,
	      expect, before[x]);
	for (i = 0; i < nr; i++)
		check(m->counts[off + i] == 0, "slot %u allocated while in use",
		      off + i);
	memset(m->counts + off, 1, nr);
	m->inuse += nr;
	m->ever_used[c] = true;
	handle_add(m, off, nr);
	check(m->ctx[x].cluster == c ||
	      (m->ctx[x].cluster == CLUSTER_NONE &&
	       si->clusters[c].count == SWAP_CLUSTER_SLOTS),
	      "after allocating in cluster %u the context owns %u", c,
	      m->ctx[x].cluster);
	check(m->prov_ok[c] == 1 || !m->si.provision,
	      "cluster %u used without provisioning", c);
	for (i = 0; i < nr; i++)
		check(swap_slot_count(si, off + i) == 1, "count of new slot %u",
		      off + i);
	return 0;
}

/* Drop handle i whole, or a random part of it. */
static void step_free(struct model *m, size_t hi, bool whole)
{
	struct handle h = m->h[hi];
	uint32_t a = h.off, b = h.off + h.nr, i;

	step_what = "free";
	if (!whole) {
		a = h.off + rnd_below(h.nr);
		b = a + 1 + rnd_below(h.off + h.nr - a);
	}
	swap_slot_free(&m->si, a, b - a);
	for (i = a; i < b; i++) {
		check(m->counts[i] > 0, "model underflow at %u", i);
		if (--m->counts[i] == 0)
			m->inuse--;
		check(swap_slot_count(&m->si, i) == m->counts[i],
		      "slot %u count %u, model %u", i,
		      swap_slot_count(&m->si, i), m->counts[i]);
	}
	handle_del(m, hi);
	if (a > h.off)
		handle_add(m, h.off, a - h.off);
	if (b < h.off + h.nr)
		handle_add(m, b, h.off + h.nr - b);
}

static void step_dup(struct model *m, size_t hi)
{
	uint32_t slot = m->h[hi].off + rnd_below(m->h[hi].nr);
	int err;

	step_what = "dup";
	err = swap_slot_dup(&m->si, slot);
	if (m->counts[slot] >= SWAP_MAP_MAX) {
		check(err == -EOVERFLOW, "dup of slot %u at max: %d", slot,
		      err);
		return;
	}
	check(err == 0, "dup of slot %u: %d", slot, err);
	m->counts[slot]++;
	handle_add(m, slot, 1);
	check(swap_slot_count(&m->si, slot) == m->counts[slot],
	      "slot %u count after dup", slot);
}

static void step_release(struct model *m, unsigned x)
{
	uint32_t c = m->ctx[x].cluster;

	step_what = "release";
	swap_alloc_ctx_release(&m->si, &m->ctx[x]);
	check(m->ctx[x].cluster == CLUSTER_NONE, "context kept its cluster");
	if (c != CLUSTER_NONE)
		check(m->si.clusters[c].list != CLUSTER_CURRENT,
		      "released cluster %u still CURRENT", c);
}

static unsigned random_order(void)
{
	uint32_t r = rnd_below(100);

	if (r < 40)
		return 0;
	if (r < 80)
		return 1 + rnd_below(4);
	return 5 + rnd_below(SWAP_MAX_ORDER - 4);
}

/* Random operations on a device of nr_clusters clusters (plus a tail). */
static void random_ops(uint32_t nr_clusters, unsigned long ops)
{
	static struct model m;
	unsigned long n;
	bool grow = true;
	unsigned long phase_end = 0;
	uint32_t i;

	/* A partial cluster at the end is dropped. */
	model_init(&m, (uint64_t)nr_clusters * SWAP_CLUSTER_BYTES +
			       rnd_below(SWAP_CLUSTER_BYTES));
	step_what = "init";
	check(m.si.nr_clusters == nr_clusters && m.si.nr_slots ==
	      nr_clusters * SWAP_CLUSTER_SLOTS, "device size %u clusters",
	      m.si.nr_clusters);
	check(m.si.lists[CLUSTER_FREE].nr == nr_clusters && m.si.fd == -1 &&
	      m.si.prio == -2 && m.si.node == -1, "initial state");
	model_check(&m);

	for (n = 0; n < ops; n++) {
		uint32_t r = rnd_below(100);

		step_nr++;
		if (n >= phase_end) {
			grow = !grow;
			phase_end = n + 200 + rnd_below(3000);
		}
		/* One rnd() call per statement: the same seed, the same run. */
		if (r < (grow ? 55u : 20u) || m.nr_h == 0) {
			unsigned x = rnd_below(NR_CTX);

			step_alloc(&m, x, random_order());
		} else if (r < 90) {
			size_t hi = rnd_below(m.nr_h);

			step_free(&m, hi, rnd_below(2));
		} else if (r < 99)
			step_dup(&m, rnd_below(m.nr_h));
		else
			step_release(&m, rnd_below(NR_CTX));
		model_check(&m);
	}

	/* Drop everything: every cluster goes back to FREE. */
	while (m.nr_h) {
		step_nr++;
		step_free(&m, m.nr_h - 1, true);
	}
	for (i = 0; i < NR_CTX; i++)
		step_release(&m, i);
	model_check(&m);
	step_what = "drained";
	check(m.inuse == 0 && m.si.lists[CLUSTER_FREE].nr == nr_clusters,
	      "not all clusters free after freeing everything");
	for (i = 0; i < nr_clusters; i++)
		check(m.prov_ok[i] == (m.ever_used[i] ? 1u : 0u),
		      "cluster %u provisioned %u times", i, m.prov_ok[i]);
	model_fini(&m);
}

/* Fill with order 0 from two contexts, free in random chunks, refill. */
static void fill_free_refill(uint32_t nr_clusters)
{
	static struct model m;
	uint32_t *chunks, nr_chunks = 0, off, i;
	int ea = 0, eb = 0;

	model_init(&m, (uint64_t)nr_clusters * SWAP_CLUSTER_BYTES);
	while (ea != -ENOSPC || eb != -ENOSPC) {
		step_nr++;
		ea = step_alloc(&m, 0, 0);
		eb = step_alloc(&m, 1, 0);
	}
	model_check(&m);
	step_what = "filled";
	check(swap_inuse_slots(&m.si) == m.si.nr_slots &&
	      m.si.lists[CLUSTER_FULL].nr == nr_clusters,
	      "device not full: %u of %u slots", swap_inuse_slots(&m.si),
	      m.si.nr_slots);
	check(m.ctx[0].cluster == CLUSTER_NONE &&
	      m.ctx[1].cluster == CLUSTER_NONE, "contexts kept full clusters");

	/* Chunks that cross cluster boundaries, freed in random order. */
	chunks = xcalloc(m.si.nr_slots, 2 * sizeof(*chunks));
	for (off = 0; off < m.si.nr_slots; nr_chunks++) {
		chunks[2 * nr_chunks] = off;
		off += 1 + rnd_below(1500);
		if (off > m.si.nr_slots)
			off = m.si.nr_slots;
		chunks[2 * nr_chunks + 1] = off;
	}
	for (i = nr_chunks - 1; i > 0; i--) {
		uint32_t j = rnd_below(i + 1);
		uint32_t a = chunks[2 * i], b = chunks[2 * i + 1];

		chunks[2 * i] = chunks[2 * j];
		chunks[2 * i + 1] = chunks[2 * j + 1];
		chunks[2 * j] = a;
		chunks[2 * j + 1] = b;
	}
	for (i = 0; i < nr_chunks; i++) {
		uint32_t a = chunks[2 * i], b = chunks[2 * i + 1];

		step_nr++;
		step_what = "free chunk";
		swap_slot_free(&m.si, a, b - a);
		for (off = a; off < b; off++) {
			check(m.counts[off] == 1, "chunk overlap at %u", off);
			m.counts[off] = 0;
		}
		m.inuse -= b - a;
		model_check(&m);
	}
	free(chunks);
	m.nr_h = 0;
	model_check(&m);
	step_what = "emptied";
	check(swap_inuse_slots(&m.si) == 0 &&
	      m.si.lists[CLUSTER_FREE].nr == nr_clusters,
	      "%u of %u clusters free after freeing everything",
	      m.si.lists[CLUSTER_FREE].nr, nr_clusters);

	/* Every cluster takes a 2 MiB folio again, then the device is full. */
	for (i = 0; i < nr_clusters; i++) {
		step_nr++;
		check(step_alloc(&m, 2, SWAP_MAX_ORDER) == 0,
		      "order 9 allocation %u failed", i);
		model_check(&m);
	}
	check(step_alloc(&m, 2, SWAP_MAX_ORDER) == -ENOSPC &&
	      step_alloc(&m, 0, 0) == -ENOSPC, "full device allocates");
	for (i = 0; i < nr_clusters; i++)
		check(m.prov_ok[i] == 1, "cluster %u provisioned %u times", i,
		      m.prov_ok[i]);
	model_fini(&m);
}

/* provision(): an error fails the allocation and leaves the cluster free. */
static void test_provision(void)
{
	static struct model m;
	struct swap_info *si = &m.si;
	uint32_t off, i;
	int err;

	model_init(&m, 3 * SWAP_CLUSTER_BYTES);
	step_what = "provision";
	m.prov_error = -EIO;
	err = swap_slot_alloc(si, &m.ctx[0], 0, &off);
	check(err == -EIO, "alloc with failing provision: %d", err);
	err = swap_slot_alloc(si, &m.ctx[0], 4, &off);
	check(err == -EIO, "order 4 alloc with failing provision: %d", err);
	check(m.prov_failed[0] == 2 && m.prov_ok[0] == 0,
	      "provision not tried on cluster 0");
	check(si->clusters[0].list == CLUSTER_FREE &&
	      !si->clusters[0].provisioned &&
	      si->lists[CLUSTER_FREE].nr == 3 &&
	      ilist_first(&si->lists[CLUSTER_FREE]) == 0 &&
	      m.ctx[0].cluster == CLUSTER_NONE && swap_inuse_slots(si) == 0,
	      "failed provision changed the device");
	model_check(&m);

	m.prov_error = 0;
	check(step_alloc(&m, 0, 0) == 0 && m.prov_ok[0] == 1 &&
	      si->clusters[0].provisioned, "provision of cluster 0");
	model_check(&m);

	/* Context 1 needs a new cluster: that fails, cluster 1 stays free. */
	m.prov_error = -ENOSPC - 1000;	/* any error passes through */
	err = swap_slot_alloc(si, &m.ctx[1], 0, &off);
	check(err == -ENOSPC - 1000 && m.prov_failed[1] == 1 &&
	      si->clusters[1].list == CLUSTER_FREE &&
	      !si->clusters[1].provisioned,
	      "failing provision of cluster 1: %d", err);
	model_check(&m);

	/* A used cluster needs no provisioning: context 1 gets cluster 0. */
	step_release(&m, 0);
	check(step_alloc(&m, 1, 0) == 0 && m.ctx[1].cluster == 0,
	      "no room in a nonfull cluster while provisioning fails");
	check(m.prov_failed[1] == 1 && m.prov_ok[0] == 1,
	      "provision called for a used cluster");
	model_check(&m);

	/* Succeeding: each cluster provisioned once, also after a refill. */
	m.prov_error = 0;
	for (i = 0; i < 2; i++) {
		int ea = 0, eb = 0;

		while (ea != -ENOSPC || eb != -ENOSPC) {
			step_nr++;
			ea = step_alloc(&m, 0, 0);
			eb = step_alloc(&m, 1, 0);
			model_check(&m);
		}
		check(swap_inuse_slots(si) == si->nr_slots, "refill %u", i);
		while (m.nr_h) {
			step_nr++;
			step_free(&m, rnd_below(m.nr_h), true);
		}
		model_check(&m);
	}
	step_what = "provision";
	for (i = 0; i < 3; i++)
		check(m.prov_ok[i] == 1, "cluster %u provisioned %u times", i,
		      m.prov_ok[i]);
	model_fini(&m);
}

/* A cluster that comes back free is reused before a never-used one. */
static void test_reuse(void)
{
	static struct model m;

	model_init(&m, 3 * SWAP_CLUSTER_BYTES);
	check(step_alloc(&m, 0, 2) == 0 && m.ctx[0].cluster == 0, "first");
	step_free(&m, 0, true);
	step_release(&m, 0);
	model_check(&m);
	step_what = "reuse";
	check(ilist_first(&m.si.lists[CLUSTER_FREE]) == 0,
	      "freed cluster not at head");
	check(step_alloc(&m, 1, 0) == 0 && m.ctx[1].cluster == 0 &&
	      m.prov_ok[1] == 0, "a new cluster was provisioned");
	model_check(&m);
	model_fini(&m);
}

/*
 * Frees in allocation order (a program faulting its memory back in the
 * order it went out): a cluster that was full is reused only once
 * SWAP_CLUSTER_REUSE of its slots are free, so a context changes clusters
 * once per 64 slots or fewer, not at every slot.
 */
static void test_fifo(void)
{
	enum { HELD = 2 * SWAP_CLUSTER_SLOTS, ROUNDS = 16 * SWAP_CLUSTER_SLOTS };
	static uint32_t queue[HELD];
	struct swap_alloc_ctx ctx;
	struct swap_info si;
	uint32_t off, head = 0, switches = 0, last = CLUSTER_NONE, i;

	step_what = "fifo";
	check(swap_info_init(&si, 0, 8 * SWAP_CLUSTER_BYTES) == 0, "init");
	swap_alloc_ctx_init(&ctx);
	for (i = 0; i < HELD + ROUNDS; i++) {
		if (i >= HELD) {
			swap_slot_free(&si, queue[head % HELD], 1);
			head++;
		}
		check(swap_slot_alloc(&si, &ctx, 0, &off) == 0, "alloc %u", i);
		queue[i % HELD] = off;
		if (off >> SWAP_CLUSTER_SHIFT != last)
			switches++;
		last = off >> SWAP_CLUSTER_SHIFT;
		if (i == HELD) {
			/* The first free left cluster 0 nearly full. */
			check(si.clusters[0].list == CLUSTER_NEARLY &&
			      si.clusters[0].count == SWAP_CLUSTER_SLOTS - 1,
			      "cluster 0 after one free: list %u count %u",
			      si.clusters[0].list, si.clusters[0].count);
		}
	}
	check(switches <= (HELD + ROUNDS) / SWAP_CLUSTER_REUSE + 8,
	      "%u cluster changes for %u allocations", switches,
	      HELD + ROUNDS);
	check(swap_info_validate(&si) == 0, "device invalid");
	printf("swapfile: fifo: %u cluster changes for %u allocations\n",
	       switches, HELD + ROUNDS);
	swap_alloc_ctx_release(&si, &ctx);
	swap_info_destroy(&si);
}

/*
 * A cluster where a large folio found no run goes to FRAG: large folios
 * stop probing it, and order-0 allocations fill it before they take a free
 * cluster, which stays whole for the large ones.
 */
static void test_frag(void)
{
	struct swap_alloc_ctx ctx[2];
	struct swap_info si;
	uint32_t off, i;

	step_what = "frag";
	check(swap_info_init(&si, 0, 4 * SWAP_CLUSTER_BYTES) == 0, "init");
	swap_alloc_ctx_init(&ctx[0]);
	swap_alloc_ctx_init(&ctx[1]);
	/* Fill clusters 0 and 1, then free every other slot of both. */
	for (i = 0; i < 2 * SWAP_CLUSTER_SLOTS; i++)
		check(swap_slot_alloc(&si, &ctx[0], 0, &off) == 0 && off == i,
		      "fill: slot %u at %u", i, off);
	for (i = 0; i < 2 * SWAP_CLUSTER_SLOTS; i += 2)
		swap_slot_free(&si, i, 1);
	check(si.clusters[0].list == CLUSTER_NONFULL &&
	      si.clusters[1].list == CLUSTER_NONFULL, "holed clusters: lists %u %u",
	      si.clusters[0].list, si.clusters[1].list);
	/* A 16K folio probes both in vain and takes cluster 2. */
	check(swap_slot_alloc(&si, &ctx[1], 2, &off) == 0 &&
	      off == swap_cluster_base(2), "order 2: %u", off);
	check(si.clusters[0].list == CLUSTER_FRAG &&
	      si.clusters[1].list == CLUSTER_FRAG &&
	      si.lists[CLUSTER_FRAG].nr == 2, "probed clusters not on FRAG");
	/* Order 0 takes a FRAG cluster, not cluster 3, which is free. */
	swap_alloc_ctx_release(&si, &ctx[0]);
	check(swap_slot_alloc(&si, &ctx[0], 0, &off) == 0 && off < 1024 &&
	      off % 2 == 0, "order 0 from FRAG: %u", off);
	check(si.clusters[3].list == CLUSTER_FREE, "cluster 3 taken");
	/* Frees leave a FRAG cluster there; emptying it frees it. */
	for (i = 0; i < SWAP_CLUSTER_SLOTS; i++)
		if (si.swap_map[swap_cluster_base(1) + i])
			swap_slot_free(&si, swap_cluster_base(1) + i, 1);
	check(si.clusters[1].list == CLUSTER_FREE, "emptied FRAG cluster on %u",
	      si.clusters[1].list);
	/* The large folio's context fills cluster 2, then gets cluster 1. */
	for (i = 1; i < SWAP_CLUSTER_SLOTS / 4; i++)
		check(swap_slot_alloc(&si, &ctx[1], 2, &off) == 0 &&
		      off == swap_cluster_base(2) + 4 * i, "fill 2: %u", off);
	check(swap_slot_alloc(&si, &ctx[1], 2, &off) == 0 &&
	      off >> SWAP_CLUSTER_SHIFT == 1, "after cluster 2: %u", off);
	check(swap_info_validate(&si) == 0, "device invalid");
	swap_alloc_ctx_release(&si, &ctx[0]);
	swap_alloc_ctx_release(&si, &ctx[1]);
	swap_info_destroy(&si);
}

/* Sizes, argument checks, and the use count ceiling. */
static void test_edges(void)
{
	static struct model m;
	struct swap_info si;
	uint32_t off, i;
	int err;

	step_what = "sizes";
	check(swap_info_init(&si, 0, SWAP_CLUSTER_BYTES - 1) == -EINVAL,
	      "device smaller than a cluster");
	check(swap_info_init(&si, 0, 0) == -EINVAL, "empty device");
	err = swap_info_init(&si, 3, 4ull << 40);
	check(err == 0 && si.nr_slots == SWP_MAX_SLOTS && si.type == 3 &&
	      si.nr_clusters == SWP_MAX_SLOTS / SWAP_CLUSTER_SLOTS,
	      "4 TiB device: %d, %u slots", err, si.nr_slots);
	swap_info_destroy(&si);

	model_init(&m, SWAP_CLUSTER_BYTES);
	step_what = "edges";
	check(swap_slot_alloc(&m.si, &m.ctx[0], SWAP_MAX_ORDER + 1, &off) ==
	      -EINVAL, "order above SWAP_MAX_ORDER");
	check(step_alloc(&m, 0, 3) == 0, "order 3");
	off = m.h[0].off;
	for (i = 1; i < SWAP_MAP_MAX; i++) {
		check(swap_slot_dup(&m.si, off) == 0, "dup %u", i);
		m.counts[off]++;
	}
	check(swap_slot_count(&m.si, off) == SWAP_MAP_MAX, "count at max");
	check(swap_slot_dup(&m.si, off) == -EOVERFLOW, "dup past SWAP_MAP_MAX");
	model_check(&m);
	swap_slot_free(&m.si, off, 8);
	for (i = 0; i < 8; i++)
		m.counts[off + i]--;
	m.inuse -= 7;
	model_check(&m);
	for (i = 1; i < SWAP_MAP_MAX; i++) {
		swap_slot_free(&m.si, off, 1);
		m.counts[off]--;
	}
	m.inuse--;
	m.nr_h = 0;
	model_check(&m);
	/* The context still owns its (now empty) cluster until release. */
	check(m.si.lists[CLUSTER_CURRENT].nr == 1, "empty current cluster");
	step_release(&m, 0);
	check(m.si.lists[CLUSTER_FREE].nr == 1, "released empty cluster");
	model_check(&m);
	model_fini(&m);
}

static void test_fill(void)
{
	fill_free_refill(64);
}

static void test_random_1(void)
{
	random_ops(1, 40000 / SLOW);
}

static void test_random_3(void)
{
	random_ops(3, 60000 / SLOW);
}

static void test_random_64(void)
{
	random_ops(64, 100000 / SLOW);
}

static struct timespec t0;

static void setup(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t0);
}

static void teardown(void)
{
	struct timespec t1;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("swapfile: %lu checked steps in %.2f s\n", step_nr, secs);
}

static const struct t_case cases[] = {
	T_CASE(edges, "device sizes, argument checks, the use count ceiling"),
	T_CASE(provision, "provision() failing fails the allocation, frees the cluster"),
	T_CASE(reuse, "a cluster that comes back free is reused first"),
	T_CASE(fifo, "a full cluster is reused once enough of it is free"),
	T_CASE(frag, "order-0 allocations fill fragmented clusters first"),
	T_CASE(fill, "fill with order 0 from two contexts, free, refill"),
	T_CASE(random_1, "random steps against the model, one cluster"),
	T_CASE(random_3, "random steps against the model, three clusters"),
	T_CASE(random_64, "random steps against the model, 64 clusters"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .setup = setup, .teardown = teardown,
		.seed = T_SEED_CLOCK, .rng = &rng_state,
	});
}
