// SPDX-License-Identifier: MIT
/*
 * swapfile_fuzz.c - the slot map and cluster allocator (src/swap/swap_map.c,
 * src/swap/swapfile.c) against a reference model of use counts, driven by fuzz
 * input.
 *
 * The first byte h sets up the device: 1..8 clusters (h & 7; more than
 * SWAP_NONFULL_PROBE, so that allocation also walks NONFULL), 2..4
 * allocating contexts (2 + ((h >> 3) & 3) % 3), discard on (h & 0x20),
 * and a partial cluster of junk at the end that init must drop (h >> 6).
 * A provision() callback is installed; it fails with -EIO while the input
 * says so.  With discard on, a hand-made struct swap_discard parks freed
 * clusters and its punch() succeeds, fails with -EIO, or with -EOPNOTSUPP
 * (which turns parking off), as the input says.  Then each byte is an
 * operation, its arguments the bytes that follow (missing bytes read as
 * 0):
 *
 *	op & 7	0..2	alloc from context (op >> 3) % nr_ctx, order [byte] % 11
 *			(10: an order above SWAP_MAX_ORDER, -EINVAL)
 *		3	free what is still in use of recorded run [byte]
 *		4	free part of run [byte]: from [byte], [byte] slots
 *		5	free a span of slots in use from slot [word], up to
 *			[byte] * 8 + 1 of them (crosses clusters)
 *		6	dup a slot of run [byte] at [byte]; once, or with
 *			op & 8 [byte] times (up to SWAP_MAP_MAX and past it)
 *		7	by (op >> 3) & 7, with a = op >> 6:
 *			0, 6, 7	release context a % nr_ctx
 *			1	count of slot [word]
 *			2	toggle provision failure
 *			3	count of each slot of cluster [byte]
 *			4	punch() result a: 1 -EIO, 2 -EOPNOTSUPP,
 *				else 0
 *			5	swap_discard_run()
 *
 * The model is a use count per slot; the last NR_RUNS allocations are
 * remembered only to aim frees and dups (a run may since be partly freed
 * or reused: only slots the model has in use are freed).  What is checked,
 * from what swap.h and the tops of swapfile.c and swap_map.c promise:
 *
 *  - after every step: swap_map equals the model byte for byte,
 *    inuse_slots matches, swap_info_validate() is 0, the contexts own
 *    distinct clusters, all on CURRENT, and nothing else is but parked
 *    clusters, which are empty; each cluster is provisioned iff
 *    provision() said yes and no punch() succeeded since; frees, dups and
 *    counts leave every context's cluster where it was;
 *  - a successful allocation is 2^order slots, naturally aligned, inside
 *    the device, all free in the model, in a provisioned cluster that no
 *    other context owns; if the caller's own cluster had such a run it
 *    comes from there: the first at or after the context's cursor, else
 *    the first in the cluster; the caller then owns the run's cluster, or
 *    nothing when it just became full; no other context changes;
 *  - -ENOSPC exactly when no cluster outside the other contexts' current
 *    clusters has a free aligned run of that order (the caller's own
 *    cluster counts: it gives it back and looks again); for order 0 that
 *    is every slot in use or owned by another context; nothing is left
 *    parked then (parked clusters are discarded before giving up);
 *  - provision's -EIO only while it fails, and only when no used cluster
 *    outside the others' has such a run and no free, unparked one is
 *    provisioned (FREE order keeps provisioned clusters at its head, also
 *    after a failed punch());
 *  - provision() is called with the lock held, for a free, empty cluster
 *    not provisioned; punch() without the lock, for an empty cluster on
 *    CURRENT that no context owns; a failed allocation leaves the caller
 *    with no cluster;
 *  - dup adds one use, -EOVERFLOW at SWAP_MAP_MAX; counts read back right;
 *  - after freeing everything, releasing the contexts and discarding
 *    what is parked, every cluster is FREE.
 *
 * Any mismatch abort()s.  Built with tests/fuzz/replay.c by make, for
 * libFuzzer by make fuzz.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swap.h"
#include "swap_io.h"
#include "fuzzlib.h"

#define MAX_CLUSTERS	8
#define MAX_SLOTS	(MAX_CLUSTERS * SWAP_CLUSTER_SLOTS)
#define MAX_CTX		4
#define NR_RUNS		64

struct run {
	uint32_t off, nr;
};

struct fuzz {
	const uint8_t *p, *end;
	struct swap_info si;
	struct swap_alloc_ctx ctx[MAX_CTX];
	unsigned nr_ctx;
	uint8_t counts[MAX_SLOTS];	/* the model: use count per slot */
	uint32_t inuse;
	struct run runs[NR_RUNS];	/* recent allocations, a ring */
	unsigned nr_runs, next_run;
	bool provisioned[MAX_CLUSTERS];
	bool prov_fail;
	struct swap_discard discard;
	uint32_t discard_queue[MAX_CLUSTERS];
	int punch_ret;
	bool punch_failed;		/* some punch() failed (see below) */
};

static struct fuzz fz;


static unsigned byte(void)
{
	return fz.p < fz.end ? *fz.p++ : 0;
}

static unsigned word(void)
{
	return byte() | byte() << 8;
}

static int provision(struct swap_info *si, uint32_t c)
{
	CHECK(si == &fz.si && c < si->nr_clusters);
	CHECK(pthread_mutex_trylock(&si->lock) == EBUSY);
	CHECK(si->clusters[c].list == CLUSTER_FREE);
	CHECK(si->clusters[c].count == 0 && !si->clusters[c].provisioned);
	CHECK(!fz.provisioned[c]);
	if (fz.prov_fail)
		return -EIO;
	fz.provisioned[c] = true;
	return 0;
}

static bool owned(uint32_t c)
{
	for (unsigned i = 0; i < fz.nr_ctx; i++)
		if (fz.ctx[i].cluster == c)
			return true;
	return false;
}

static int punch(struct swap_info *si, uint32_t c)
{
	CHECK(si == &fz.si && c < si->nr_clusters);
	CHECK(pthread_mutex_trylock(&si->lock) == 0);
	pthread_mutex_unlock(&si->lock);
	CHECK(si->clusters[c].list == CLUSTER_CURRENT);
	CHECK(si->clusters[c].count == 0 && !owned(c));
	if (!fz.punch_ret)
		fz.provisioned[c] = false;
	else
		fz.punch_failed = true;
	return fz.punch_ret;
}

static bool parked(uint32_t c)
{
	const struct swap_discard *d = fz.si.discard;

	for (uint32_t i = 0; d && i < d->nr; i++)
		if (d->queue[(d->head + i) % fz.si.nr_clusters] == c)
			return true;
	return false;
}

static bool owned_by_other(unsigned self, uint32_t c)
{
	for (unsigned i = 0; i < fz.nr_ctx; i++)
		if (i != self && fz.ctx[i].cluster == c)
			return true;
	return false;
}

/* First free aligned run of 2^order slots in [from, to), or UINT32_MAX. */
static uint32_t model_find_run(uint32_t from, uint32_t to, unsigned order)
{
	const uint32_t nr = 1u << order;

	for (uint32_t off = from; off < to; off += nr) {
		uint32_t i = 0;

		while (i < nr && !fz.counts[off + i])
			i++;
		if (i == nr)
			return off;
	}
	return UINT32_MAX;
}

static bool model_cluster_has_run(uint32_t c, unsigned order)
{
	const uint32_t base = c * SWAP_CLUSTER_SLOTS;

	return model_find_run(base, base + SWAP_CLUSTER_SLOTS, order) !=
	       UINT32_MAX;
}

static bool model_cluster_empty(uint32_t c)
{
	return model_cluster_has_run(c, SWAP_MAX_ORDER);
}

/* Where the context's own cluster c puts a run (see the top). */
static uint32_t model_own_run(uint32_t c, uint32_t cursor, unsigned order)
{
	const uint32_t base = c * SWAP_CLUSTER_SLOTS, nr = 1u << order;
	uint32_t start = base, off;

	if (cursor >= base && cursor - base < SWAP_CLUSTER_SLOTS)
		start = (cursor + nr - 1) & ~(nr - 1);
	off = model_find_run(start, base + SWAP_CLUSTER_SLOTS, order);
	if (off == UINT32_MAX)
		off = model_find_run(base, start, order);
	return off;
}

static void check_all(void)
{
	struct swap_info *si = &fz.si;
	const uint32_t nr_parked = si->discard ? si->discard->nr : 0;
	unsigned nr_owned = 0;

	CHECK(!memcmp(si->swap_map, fz.counts, si->nr_slots));
	CHECK(swap_inuse_slots(si) == fz.inuse);
	CHECK(swap_info_validate(si) == 0);
	for (unsigned i = 0; i < fz.nr_ctx; i++) {
		uint32_t c = fz.ctx[i].cluster;

		if (c == CLUSTER_NONE)
			continue;
		nr_owned++;
		CHECK(c < si->nr_clusters);
		CHECK(si->clusters[c].list == CLUSTER_CURRENT);
		CHECK(!owned_by_other(i, c));
	}
	CHECK(si->lists[CLUSTER_CURRENT].nr == nr_owned + nr_parked);
	for (uint32_t c = 0; c < si->nr_clusters; c++) {
		CHECK(!!si->clusters[c].provisioned == fz.provisioned[c]);
		if (parked(c))
			CHECK(!owned(c) && model_cluster_empty(c));
	}
}

static void record_run(uint32_t off, uint32_t nr)
{
	fz.runs[fz.next_run] = (struct run){ off, nr };
	fz.next_run = (fz.next_run + 1) % NR_RUNS;
	if (fz.nr_runs < NR_RUNS)
		fz.nr_runs++;
}

/* The allocation failed: was it allowed to? */
static void check_alloc_failure(unsigned x, unsigned order, int err)
{
	for (uint32_t c = 0; c < fz.si.nr_clusters; c++) {
		if (owned_by_other(x, c))
			continue;
		if (err == -ENOSPC) {
			CHECK(!model_cluster_has_run(c, order));
		} else {
			CHECK(err == -EIO && fz.prov_fail);
			if (!model_cluster_empty(c))
				CHECK(!model_cluster_has_run(c, order));
			else
				CHECK(!fz.provisioned[c] || parked(c));
		}
	}
	CHECK(err != -ENOSPC || !fz.si.discard || !fz.si.discard->nr);
	CHECK(fz.ctx[x].cluster == CLUSTER_NONE);
}

/* Order 10 + b / 11 when b % 11 is 10: -EINVAL, nothing changes. */
static bool op_alloc_bad_order(unsigned x, unsigned b)
{
	const struct swap_alloc_ctx before = fz.ctx[x];
	uint32_t off = 12345;

	if (b % 11 != SWAP_MAX_ORDER + 1)
		return false;
	CHECK(swap_slot_alloc(&fz.si, &fz.ctx[x], SWAP_MAX_ORDER + 1 + b / 11,
			      &off) == -EINVAL);
	CHECK(off == 12345 && fz.ctx[x].cluster == before.cluster &&
	      fz.ctx[x].next == before.next);
	return true;
}

/* Allocate order b % 11 (see above) from context x. */
static void op_alloc(unsigned x, unsigned b)
{
	struct swap_info *si = &fz.si;
	const unsigned order = b % 11;
	const uint32_t nr = 1u << order;
	uint32_t before[MAX_CTX], expect = UINT32_MAX, off = UINT32_MAX, c;
	int err;

	if (op_alloc_bad_order(x, b))
		return;
	for (unsigned i = 0; i < fz.nr_ctx; i++)
		before[i] = fz.ctx[i].cluster;
	if (before[x] != CLUSTER_NONE)
		expect = model_own_run(before[x], fz.ctx[x].next, order);
	err = swap_slot_alloc(si, &fz.ctx[x], order, &off);
	for (unsigned i = 0; i < fz.nr_ctx; i++)
		CHECK(i == x || fz.ctx[i].cluster == before[i]);
	if (err) {
		check_alloc_failure(x, order, err);
		return;
	}
	CHECK(off % nr == 0);
	CHECK(off < si->nr_slots && si->nr_slots - off >= nr);
	c = off / SWAP_CLUSTER_SLOTS;
	CHECK(!owned_by_other(x, c));
	CHECK(expect == UINT32_MAX || off == expect);
	CHECK(fz.provisioned[c]);
	for (uint32_t i = 0; i < nr; i++)
		CHECK(fz.counts[off + i] == 0);
	memset(fz.counts + off, 1, nr);
	fz.inuse += nr;
	CHECK(fz.ctx[x].cluster == c ||
	      (fz.ctx[x].cluster == CLUSTER_NONE &&
	       si->clusters[c].count == SWAP_CLUSTER_SLOTS));
	record_run(off, nr);
}

/* Drop one use of each slot of [a, b) that the model has in use. */
static void free_used(uint32_t a, uint32_t b)
{
	while (a < b) {
		uint32_t e;

		while (a < b && !fz.counts[a])
			a++;
		for (e = a; e < b && fz.counts[e]; e++)
			if (--fz.counts[e] == 0)
				fz.inuse--;
		if (e > a)
			swap_slot_free(&fz.si, a, e - a);
		a = e;
	}
}

static void op_free_run(bool part)
{
	const struct run *r;
	uint32_t a, n;

	if (!fz.nr_runs) {
		byte();
		return;
	}
	r = &fz.runs[byte() % fz.nr_runs];
	a = r->off;
	n = r->nr;
	if (part) {
		a += byte() % n;
		n = 1 + byte() % (r->off + r->nr - a);
	}
	free_used(a, a + n);
}

/* A span of slots in use, from the first in use at or after a slot. */
static void op_free_span(void)
{
	uint32_t s = word() % fz.si.nr_slots, n = byte() * 8 + 1, e;

	while (s < fz.si.nr_slots && !fz.counts[s])
		s++;
	for (e = s; e < fz.si.nr_slots && e - s < n && fz.counts[e]; e++)
		;
	free_used(s, e);
}

static void op_dup(bool many)
{
	const struct run *r;
	unsigned times;
	uint32_t slot;

	if (!fz.nr_runs) {
		byte();
		return;
	}
	r = &fz.runs[byte() % fz.nr_runs];
	slot = r->off + byte() % r->nr;
	times = many ? byte() : 1;
	/* A dup of a free slot is a caller bug (it asserts): not tried. */
	if (!fz.counts[slot])
		return;
	while (times--) {
		int err = swap_slot_dup(&fz.si, slot);

		if (fz.counts[slot] == SWAP_MAP_MAX) {
			CHECK(err == -EOVERFLOW);
		} else {
			CHECK(err == 0);
			fz.counts[slot]++;
		}
		CHECK(swap_slot_count(&fz.si, slot) == fz.counts[slot]);
	}
}

static void op_release(unsigned x)
{
	uint32_t c = fz.ctx[x].cluster;

	swap_alloc_ctx_release(&fz.si, &fz.ctx[x]);
	CHECK(fz.ctx[x].cluster == CLUSTER_NONE);
	if (c != CLUSTER_NONE)
		CHECK(fz.si.clusters[c].list != CLUSTER_CURRENT || parked(c));
}

static void op_misc(unsigned op)
{
	static const int punch_rets[] = { 0, -EIO, -EOPNOTSUPP, 0 };
	const unsigned a = op >> 6;
	uint32_t slot;

	switch ((op >> 3) & 7) {
	case 1:
		slot = word() % fz.si.nr_slots;
		CHECK(swap_slot_count(&fz.si, slot) == fz.counts[slot]);
		break;
	case 2:
		fz.prov_fail = !fz.prov_fail;
		break;
	case 3:
		slot = byte() % fz.si.nr_clusters * SWAP_CLUSTER_SLOTS;
		for (uint32_t i = 0; i < SWAP_CLUSTER_SLOTS; i++, slot++)
			CHECK(swap_slot_count(&fz.si, slot) == fz.counts[slot]);
		break;
	case 4:
		fz.punch_ret = punch_rets[a];
		break;
	case 5:
		swap_discard_run(&fz.si);
		CHECK(!fz.si.discard || !fz.si.discard->nr);
		break;
	default:
		op_release(a % fz.nr_ctx);
		break;
	}
}

static void step(void)
{
	uint32_t before[MAX_CTX];
	unsigned op = byte();

	for (unsigned i = 0; i < MAX_CTX; i++)
		before[i] = fz.ctx[i].cluster;
	switch (op & 7) {
	case 0:
	case 1:
	case 2:
		op_alloc((op >> 3) % fz.nr_ctx, byte());
		break;
	case 3:
	case 4:
		op_free_run((op & 7) == 4);
		break;
	case 5:
		op_free_span();
		break;
	case 6:
		op_dup(op & 8);
		break;
	default:
		op_misc(op);
		break;
	}
	/* Only allocations and releases move a context's cluster. */
	if ((op & 7) > 2 && (op & 7) < 7)
		for (unsigned i = 0; i < MAX_CTX; i++)
			CHECK(fz.ctx[i].cluster == before[i]);
	check_all();
}

static void setup(unsigned h)
{
	const uint32_t nr_clusters = 1 + (h & 7);
	const uint64_t junk = (uint64_t)(h >> 6) * (SWAP_CLUSTER_BYTES / 4);

	memset(&fz.counts, 0, sizeof(fz.counts));
	memset(&fz.provisioned, 0, sizeof(fz.provisioned));
	fz.inuse = 0;
	fz.nr_runs = 0;
	fz.next_run = 0;
	fz.prov_fail = false;
	fz.punch_ret = 0;
	fz.punch_failed = false;
	fz.nr_ctx = 2 + ((h >> 3) & 3) % 3;
	CHECK(swap_info_init(&fz.si, 0, nr_clusters * SWAP_CLUSTER_BYTES +
				       junk) == 0);
	CHECK(fz.si.nr_clusters == nr_clusters);
	CHECK(fz.si.nr_slots == nr_clusters * SWAP_CLUSTER_SLOTS);
	CHECK(fz.si.lists[CLUSTER_FREE].nr == nr_clusters);
	fz.si.provision = provision;
	if (h & 0x20) {
		memset(&fz.discard, 0, sizeof(fz.discard));
		fz.discard.punch = punch;
		fz.discard.queue = fz.discard_queue;
		fz.si.discard = &fz.discard;
	}
	for (unsigned i = 0; i < MAX_CTX; i++)
		swap_alloc_ctx_init(&fz.ctx[i]);
	check_all();
}

/* Free everything, release the contexts: every cluster is FREE again. */
static void drain(void)
{
	for (uint32_t s = 0, e; s < fz.si.nr_slots; s++) {
		/* Run by run, so a slot dup'ed 253 times costs 253 short frees. */
		while (fz.counts[s]) {
			for (e = s; e < fz.si.nr_slots && fz.counts[e]; e++)
				;
			free_used(s, e);
		}
	}
	for (unsigned i = 0; i < fz.nr_ctx; i++)
		op_release(i);
	swap_discard_run(&fz.si);
	check_all();
	CHECK(swap_inuse_slots(&fz.si) == 0);
	CHECK(fz.si.lists[CLUSTER_FREE].nr == fz.si.nr_clusters);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz.p = data;
	fz.end = data + size;
	setup(byte());
	while (fz.p < fz.end)
		step();
	drain();
	swap_info_destroy(&fz.si);
	return 0;
}
