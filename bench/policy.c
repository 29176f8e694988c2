/* SPDX-License-Identifier: MIT */
/*
 * policy.c - how well does uswap choose what to evict?
 *
 * Generates a seeded, skewed page trace (Zipf over a random permutation of
 * the pages, so that hot pages are scattered, optionally with sequential
 * scans mixed in) and replays it twice:
 *
 *  - on a real uswap region with a budget of --capacity pages, reading the
 *    counters before, half-way and after: pgmajfault (faults that read a
 *    tier) and the other reclaim counters;
 *  - offline, in exact simulations of FIFO, LRU, CLOCK, S3-FIFO and OPT
 *    (Belady's MIN) over the same trace, once with the capacity of uswap's
 *    max and once with that of its high: uswap keeps resident memory
 *    between the two, so its fair score lies between the two tables.
 *
 * LRU, CLOCK and S3-FIFO see every access, as the kernel's accessed bit
 * lets it.  uswap sees only misses and writes (a write-protect fault):
 * CLOCK-W and S3-FIFO-W are the same policies fed writes alone, what uswap
 * could run with the written bit of every resident page
 * (docs/fault-cost.md, "Which replacement policy").  S3-FIFO (Yang et
 * al., SOSP 2023): a small FIFO queue (10% of the capacity) takes new
 * units; one used while there moves to the main queue, one not used is
 * evicted and remembered in a ghost queue (as many units as the main
 * queue holds), from which a miss goes straight to the main queue; the
 * main queue is a FIFO with a 2-bit use count per unit, each trip past
 * its tail spending one use.
 *
 * The first access to a page is a cold miss: uswap serves it as a zero fill
 * without I/O.  The tables count "faults" = misses on pages accessed before,
 * as pgmajfault does, whole trace and second half (warm cache).  The unit of
 * the simulations is the folio (--folio), as uswap faults in whole folios.
 *
 * --self-test checks the simulators against hand-made traces with known
 * answers and naive reference models on random traces, and the Zipf sampler
 * against the exact law; it exits 1 on any mismatch.  -DPOLICY_SIM_ONLY
 * builds without the uswap replay, for when the library is not there.
 *
 * Exit status: 0 done; 1 failure (self-test mismatch, data read back wrong,
 * uswap unavailable with --require-uswap, out of memory); 2 bad arguments.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uswap.h"
#include "zipf.h"

#define PAGE_SHIFT	12
#define PAGE_SIZE	((uint64_t)1 << PAGE_SHIFT)
#define TRACE_WRITE	(1u << 31)		/* access is a write */
#define TRACE_PAGE(a)	((a) & ~TRACE_WRITE)
#define MAX_PAGES	((uint64_t)1 << 31)
#define NIL		UINT32_MAX
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX(a, b)	((a) > (b) ? (a) : (b))
#define SAMPLE_EVERY	4096		/* accesses between resident samples */

struct params {
	uint64_t pages;
	uint64_t accesses;		/* Zipf accesses; scans come on top */
	double theta;
	uint64_t seed;
	uint64_t capacity;		/* pages */
	double write_ratio;
	uint64_t folio;			/* bytes */
	uint64_t scan_every;		/* 0: no scans */
	uint64_t scan_len;		/* pages per scan */
	bool opt, json, require_uswap;
};

/* A trace: page numbers with TRACE_WRITE on writes. */
struct trace {
	uint32_t *acc;
	uint64_t len;
	uint64_t half;			/* second half: accesses [half, len) */
	uint64_t distinct;		/* pages touched at least once */
};

enum policy {
	POL_FIFO, POL_LRU, POL_CLOCK, POL_CLOCK_W, POL_S3FIFO, POL_S3FIFO_W,
	POL_OPT, NR_POLICIES
};

static const char *const policy_name[NR_POLICIES] = {
	"FIFO", "LRU", "CLOCK", "CLOCK-W", "S3-FIFO", "S3-FIFO-W", "OPT"
};

/* What one simulation counts; misses and evictions are in units (folios). */
struct sim_result {
	bool done;
	uint64_t capacity;		/* units */
	uint64_t major, major_2nd;	/* misses on units seen before */
	uint64_t cold, cold_2nd;	/* first touches */
	uint64_t swap_outs;		/* evictions of dirty units or units
					   without a copy in swap */
	double seconds;
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- The trace ---------------------------------------------------------- */

static void trace_free(struct trace *t)
{
	free(t->acc);
	t->acc = NULL;
}

/*
 * Build the trace of p: every access draws a Zipf rank, mapped to a page
 * through a random permutation, and a write with probability write_ratio;
 * every scan_every accesses, scan_len pages follow in address order from
 * where the last scan stopped.  The permutation, the ranks and the writes
 * use three streams of the seed, so a change of write ratio keeps the pages.
 */
static int trace_generate(const struct params *p, struct trace *t)
{
	uint64_t seed = p->seed, rng_perm, rng_rank, rng_write;
	uint64_t nscans = p->scan_every ? p->accesses / p->scan_every : 0;
	uint64_t i, j, n = 0, cursor = 0;
	uint8_t *seen;
	uint32_t *perm;
	struct zipf z;

	memset(t, 0, sizeof(*t));
	t->len = p->accesses + nscans * p->scan_len;
	if (t->len >= UINT32_MAX)
		return -E2BIG;
	rng_perm = rng_next(&seed);
	rng_rank = rng_next(&seed);
	rng_write = rng_next(&seed);

	perm = malloc(p->pages * sizeof(*perm));
	seen = calloc(p->pages, 1);
	t->acc = malloc((t->len ? t->len : 1) * sizeof(*t->acc));
	if (!perm || !seen || !t->acc) {
		free(perm);
		free(seen);
		trace_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < p->pages; i++)
		perm[i] = (uint32_t)i;
	for (i = p->pages - 1; i > 0; i--) {
		uint32_t tmp;

		j = rng_below(&rng_perm, i + 1);
		tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}

	zipf_init(&z, p->pages, p->theta);
	for (i = 0; i < p->accesses; i++) {
		uint32_t page = perm[zipf_next(&z, &rng_rank) - 1];

		t->acc[n++] = page | (rng_double(&rng_write) < p->write_ratio ?
				      TRACE_WRITE : 0);
		if (!p->scan_every || (i + 1) % p->scan_every)
			continue;
		for (j = 0; j < p->scan_len; j++) {
			t->acc[n++] = (uint32_t)cursor |
				(rng_double(&rng_write) < p->write_ratio ?
				 TRACE_WRITE : 0);
			if (++cursor == p->pages)
				cursor = 0;
		}
	}
	for (i = 0; i < n; i++) {
		uint32_t page = TRACE_PAGE(t->acc[i]);

		t->distinct += !seen[page];
		seen[page] = 1;
	}
	t->half = t->len / 2;
	free(perm);
	free(seen);
	return 0;
}

/* ---- Simulations -------------------------------------------------------- */

/* Per-unit state of a simulation. */
#define U_SEEN		(1u << 0)	/* touched before */
#define U_RESIDENT	(1u << 1)
#define U_DIRTY		(1u << 2)	/* written since it became resident */
#define U_COPY		(1u << 3)	/* swap has a copy (stale if dirty) */
#define U_REF		(1u << 4)	/* CLOCK: used since the hand passed */

struct sim {
	const struct trace *t;
	unsigned shift;			/* page >> shift = unit */
	uint64_t nunits;
	uint64_t cap;			/* units */
	uint8_t *st;
	struct sim_result *r;
};

static inline uint32_t sim_unit(const struct sim *s, uint64_t i)
{
	return TRACE_PAGE(s->t->acc[i]) >> s->shift;
}

/* Access i missed on unit u: count it, make u resident. */
static inline void sim_fault(struct sim *s, uint32_t u, uint64_t i)
{
	uint64_t second = i >= s->t->half;

	if (s->st[u] & U_SEEN) {
		s->r->major++;
		s->r->major_2nd += second;
	} else {
		s->r->cold++;
		s->r->cold_2nd += second;
	}
	s->st[u] |= U_SEEN | U_RESIDENT;
}

/* Access i to the resident unit u: a write makes its swap copy stale. */
static inline void sim_access(struct sim *s, uint32_t u, uint64_t i)
{
	if (s->t->acc[i] & TRACE_WRITE)
		s->st[u] |= U_DIRTY;
}

/* Evict u: it is written out unless swap holds its current contents. */
static inline void sim_evict(struct sim *s, uint32_t u)
{
	if ((s->st[u] & (U_DIRTY | U_COPY)) != U_COPY)
		s->r->swap_outs++;
	s->st[u] = U_SEEN | U_COPY;
}

/* FIFO: evict the unit made resident the longest ago. */
static int sim_fifo(struct sim *s)
{
	uint32_t *queue = malloc(s->cap * sizeof(*queue));
	uint64_t i, head = 0, used = 0;

	if (!queue)
		return -ENOMEM;
	for (i = 0; i < s->t->len; i++) {
		uint32_t u = sim_unit(s, i);

		if (!(s->st[u] & U_RESIDENT)) {
			if (used < s->cap) {
				queue[used++] = u;
			} else {
				sim_evict(s, queue[head]);
				queue[head] = u;
				if (++head == s->cap)
					head = 0;
			}
			sim_fault(s, u, i);
		}
		sim_access(s, u, i);
	}
	free(queue);
	return 0;
}

/* LRU list of units: head is the most recently used. */
struct lru {
	uint32_t *prev, *next;
	uint32_t head, tail;
};

static void lru_unlink(struct lru *l, uint32_t u)
{
	if (l->prev[u] != NIL)
		l->next[l->prev[u]] = l->next[u];
	else
		l->head = l->next[u];
	if (l->next[u] != NIL)
		l->prev[l->next[u]] = l->prev[u];
	else
		l->tail = l->prev[u];
}

static void lru_push(struct lru *l, uint32_t u)
{
	l->prev[u] = NIL;
	l->next[u] = l->head;
	if (l->head != NIL)
		l->prev[l->head] = u;
	else
		l->tail = u;
	l->head = u;
}

/* Exact LRU: evict the unit used the longest ago. */
static int sim_lru(struct sim *s)
{
	struct lru l = { .head = NIL, .tail = NIL };
	uint64_t i, used = 0;

	l.prev = malloc(s->nunits * sizeof(*l.prev));
	l.next = malloc(s->nunits * sizeof(*l.next));
	if (!l.prev || !l.next) {
		free(l.prev);
		free(l.next);
		return -ENOMEM;
	}
	for (i = 0; i < s->t->len; i++) {
		uint32_t u = sim_unit(s, i);

		if (s->st[u] & U_RESIDENT) {
			if (l.head != u) {
				lru_unlink(&l, u);
				lru_push(&l, u);
			}
		} else {
			if (used < s->cap) {
				used++;
			} else {
				uint32_t victim = l.tail;

				lru_unlink(&l, victim);
				sim_evict(s, victim);
			}
			lru_push(&l, u);
			sim_fault(s, u, i);
		}
		sim_access(s, u, i);
	}
	free(l.prev);
	free(l.next);
	return 0;
}

/*
 * CLOCK (second chance): frames in a circle, a hand at the oldest.  A hit
 * sets the unit's reference bit; a unit comes in with the bit clear (as the
 * kernel starts a new page unreferenced), so it must be used again to earn
 * its second chance.  To make room the hand clears set bits and takes the
 * first frame whose bit was clear.  writes_only: only writes set the bit
 * (CLOCK-W).
 */
static int sim_clock(struct sim *s, bool writes_only)
{
	uint32_t *frame = malloc(s->cap * sizeof(*frame));
	uint64_t i, hand = 0, used = 0;

	if (!frame)
		return -ENOMEM;
	for (i = 0; i < s->t->len; i++) {
		uint32_t u = sim_unit(s, i);

		if (s->st[u] & U_RESIDENT) {
			if (!writes_only || (s->t->acc[i] & TRACE_WRITE))
				s->st[u] |= U_REF;
		} else {
			if (used < s->cap) {
				frame[used++] = u;
			} else {
				while (s->st[frame[hand]] & U_REF) {
					s->st[frame[hand]] &= ~U_REF;
					if (++hand == s->cap)
						hand = 0;
				}
				sim_evict(s, frame[hand]);
				frame[hand] = u;
				if (++hand == s->cap)
					hand = 0;
			}
			sim_fault(s, u, i);
		}
		sim_access(s, u, i);
	}
	free(frame);
	return 0;
}

/* A FIFO queue of units in a ring. */
struct fifo {
	uint32_t *unit;
	uint64_t size, head, n;
};

static void fifo_push(struct fifo *q, uint32_t u)
{
	q->unit[(q->head + q->n++) % q->size] = u;
}

static uint32_t fifo_pop(struct fifo *q)
{
	uint32_t u = q->unit[q->head];

	q->head = (q->head + 1) % q->size;
	q->n--;
	return u;
}

#define S3_SMALL_PERCENT	10	/* the small queue's share */
#define S3_MAX_USES		3	/* a 2-bit use count */

/* The small queue's capacity of S3-FIFO with cap units, and the ghost's. */
static uint64_t s3_small(uint64_t cap)
{
	return MAX(cap * S3_SMALL_PERCENT / 100, 1);
}

static uint64_t s3_ghost(uint64_t cap)
{
	return MAX(cap - s3_small(cap), 1);
}

/*
 * S3-FIFO (see the top of the file); writes_only: only writes count as
 * uses (S3-FIFO-W).  The ghost queue is a stamp per unit: a unit is in it
 * while fewer than s3_ghost() units have entered it since.
 */
static int sim_s3fifo(struct sim *s, bool writes_only)
{
	struct fifo small = { .size = s->cap }, main_q = { .size = s->cap };
	uint64_t gcap = s3_ghost(s->cap), ghosts = 0, i, used = 0;
	uint64_t small_cap = s3_small(s->cap);
	uint8_t *uses = calloc(s->nunits, 1);
	uint64_t *ghost = calloc(s->nunits, sizeof(*ghost));
	int ret = -ENOMEM;

	small.unit = malloc(s->cap * sizeof(uint32_t));
	main_q.unit = malloc(s->cap * sizeof(uint32_t));
	if (!uses || !ghost || !small.unit || !main_q.unit)
		goto out;
	for (i = 0; i < s->t->len; i++) {
		uint32_t u = sim_unit(s, i);

		if (s->st[u] & U_RESIDENT) {
			if ((!writes_only || (s->t->acc[i] & TRACE_WRITE)) &&
			    uses[u] < S3_MAX_USES)
				uses[u]++;
			sim_access(s, u, i);
			continue;
		}
		while (used == s->cap) {
			uint32_t v;

			if (small.n >= small_cap || main_q.n == 0) {
				v = fifo_pop(&small);
				if (uses[v]) {		/* used: to main */
					uses[v] = 0;
					fifo_push(&main_q, v);
					continue;
				}
				ghost[v] = ++ghosts;
			} else {
				v = fifo_pop(&main_q);
				if (uses[v]) {		/* one more trip */
					uses[v]--;
					fifo_push(&main_q, v);
					continue;
				}
			}
			sim_evict(s, v);
			used--;
		}
		used++;
		uses[u] = 0;
		if (ghost[u] && ghosts - ghost[u] < gcap)
			fifo_push(&main_q, u);
		else
			fifo_push(&small, u);
		sim_fault(s, u, i);
		sim_access(s, u, i);
	}
	ret = 0;
out:
	free(small.unit);
	free(main_q.unit);
	free(uses);
	free(ghost);
	return ret;
}

/* OPT: resident units in a max-heap on the time of their next use. */
struct opt_heap {
	uint32_t *unit;			/* heap of units */
	uint32_t *pos;			/* unit -> index in the heap */
	uint32_t *key;			/* unit -> next use (NIL: never) */
	uint64_t n;
};

static void opt_heap_set(struct opt_heap *h, uint64_t i, uint32_t u)
{
	h->unit[i] = u;
	h->pos[u] = (uint32_t)i;
}

static void opt_heap_up(struct opt_heap *h, uint64_t i)
{
	uint32_t u = h->unit[i];

	while (i > 0 && h->key[h->unit[(i - 1) / 2]] < h->key[u]) {
		opt_heap_set(h, i, h->unit[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	opt_heap_set(h, i, u);
}

static void opt_heap_down(struct opt_heap *h, uint64_t i)
{
	uint32_t u = h->unit[i];

	for (;;) {
		uint64_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->key[h->unit[c + 1]] > h->key[h->unit[c]])
			c++;
		if (h->key[h->unit[c]] <= h->key[u])
			break;
		opt_heap_set(h, i, h->unit[c]);
		i = c;
	}
	opt_heap_set(h, i, u);
}

/* Belady's MIN: evict the unit whose next use is farthest (or never). */
static int sim_opt(struct sim *s)
{
	struct opt_heap h = { .n = 0 };
	uint32_t *next_use = malloc((s->t->len + 1) * sizeof(uint32_t));
	uint64_t i;
	int ret = -ENOMEM;

	h.unit = malloc(s->cap * sizeof(*h.unit));
	h.pos = malloc(s->nunits * sizeof(*h.pos));
	h.key = malloc(s->nunits * sizeof(*h.key));
	if (!next_use || !h.unit || !h.pos || !h.key)
		goto out;
	/* h.key holds "last seen" while next uses are computed backwards. */
	for (i = 0; i < s->nunits; i++)
		h.key[i] = NIL;
	for (i = s->t->len; i-- > 0;) {
		uint32_t u = sim_unit(s, i);

		next_use[i] = h.key[u];
		h.key[u] = (uint32_t)i;
	}
	for (i = 0; i < s->t->len; i++) {
		uint32_t u = sim_unit(s, i);

		if (s->st[u] & U_RESIDENT) {
			h.key[u] = next_use[i];
			opt_heap_up(&h, h.pos[u]);
		} else {
			h.key[u] = next_use[i];
			if (h.n < s->cap) {
				opt_heap_set(&h, h.n, u);
				opt_heap_up(&h, h.n++);
			} else {
				sim_evict(s, h.unit[0]);
				opt_heap_set(&h, 0, u);
				opt_heap_down(&h, 0);
			}
			sim_fault(s, u, i);
		}
		sim_access(s, u, i);
	}
	ret = 0;
out:
	free(next_use);
	free(h.unit);
	free(h.pos);
	free(h.key);
	return ret;
}

/* Simulate pol over t with cap units of 2^shift pages. */
static int sim_run(enum policy pol, const struct trace *t, unsigned shift,
		   uint64_t nunits, uint64_t cap, struct sim_result *r)
{
	struct sim s = { .t = t, .shift = shift, .nunits = nunits, .cap = cap,
			 .r = r };
	double start = now_seconds();
	int ret;

	memset(r, 0, sizeof(*r));
	r->capacity = cap;
	if (cap == 0 || nunits == 0)
		return -EINVAL;
	s.st = calloc(nunits, 1);
	if (!s.st)
		return -ENOMEM;
	switch (pol) {
	case POL_FIFO:
		ret = sim_fifo(&s);
		break;
	case POL_LRU:
		ret = sim_lru(&s);
		break;
	case POL_CLOCK:
	case POL_CLOCK_W:
		ret = sim_clock(&s, pol == POL_CLOCK_W);
		break;
	case POL_S3FIFO:
	case POL_S3FIFO_W:
		ret = sim_s3fifo(&s, pol == POL_S3FIFO_W);
		break;
	default:
		ret = sim_opt(&s);
		break;
	}
	free(s.st);
	r->seconds = now_seconds() - start;
	r->done = ret == 0;
	return ret;
}

/* ---- The uswap replay --------------------------------------------------- */

struct uswap_result {
	bool ran;
	char why[256];			/* why it did not run */
	uint64_t all[USWAP_NR_COUNTERS];	/* deltas over the trace */
	uint64_t second[USWAP_NR_COUNTERS];	/* ... over the second half */
	uint64_t end[USWAP_NR_COUNTERS];	/* values at the end */
	double resident_avg, resident_avg_2nd;	/* bytes */
	double seconds;
	uint64_t data_errors;		/* reads not seeing the last write */
};

#ifdef POLICY_SIM_ONLY

static int uswap_replay(const struct params *p, const struct trace *t,
			struct uswap_result *res)
{
	res->ran = false;
	snprintf(res->why, sizeof(res->why), "skipped: built with "
		 "POLICY_SIM_ONLY (%" PRIu64 " pages, %" PRIu64 " accesses "
		 "not replayed)", p->pages, t->len);
	return 0;
}

static const char *counter_name(enum uswap_counter c)
{
	return c == USWAP_PGMAJFAULT ? "pgmajfault" : "?";
}

#else

static const char *counter_name(enum uswap_counter c)
{
	return uswap_counter_name(c);
}

/*
 * Touch the pages of t in order in a uswap region of p->pages pages with a
 * budget of p->capacity pages.  A write stores the access number at the
 * start of the page; a read checks that it finds the last one stored.
 * Returns 0 (res->ran says whether uswap was there) or -errno.
 */
static int uswap_replay(const struct params *p, const struct trace *t,
			struct uswap_result *res)
{
	uint64_t v0[USWAP_NR_COUNTERS], vmid[USWAP_NR_COUNTERS];
	uint64_t now[USWAP_RESIDENT_BYTES + 1];
	double sum = 0, sum_2nd = 0, start;
	uint64_t i, samples = 0, samples_2nd = 0;
	struct uswap_options opt;
	struct uswap_runtime *rt;
	uint32_t *expect;
	char err[256];
	unsigned c;
	void *addr;
	char *base;
	int ret;

	uswap_options_init(&opt);
	ret = uswap_options_from_env(&opt, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "policy: %s\n", err);
		return ret;
	}
	opt.max = p->capacity * PAGE_SIZE;
	opt.folio_size = p->folio;
	ret = uswap_options_check(&opt, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "policy: %s\n", err);
		return ret;
	}
	expect = calloc(p->pages, sizeof(*expect));
	if (!expect)
		return -ENOMEM;
	ret = uswap_runtime_create(&opt, &rt);
	if (ret < 0) {
		snprintf(res->why, sizeof(res->why),
			 "skipped: uswap_runtime_create: %s", strerror(-ret));
		free(expect);
		return 0;
	}
	ret = uswap_region_create(rt, p->pages * PAGE_SIZE, &addr);
	if (ret < 0) {
		fprintf(stderr, "policy: uswap_region_create(%" PRIu64
			" bytes): %s\n", p->pages * PAGE_SIZE, strerror(-ret));
		goto out;
	}
	base = addr;
	ret = uswap_stats_read(rt, v0, USWAP_NR_COUNTERS);
	if (ret < 0)
		goto err_stats;
	memcpy(vmid, v0, sizeof(vmid));

	start = now_seconds();
	for (i = 0; i < t->len; i++) {
		uint32_t a = t->acc[i], page = TRACE_PAGE(a);
		volatile uint64_t *w = (volatile uint64_t *)
			(base + ((size_t)page << PAGE_SHIFT));

		if (i == t->half) {
			ret = uswap_stats_read(rt, vmid, USWAP_NR_COUNTERS);
			if (ret < 0)
				goto err_stats;
		}
		if (i % SAMPLE_EVERY == 0) {
			ret = uswap_stats_read(rt, now, ARRAY_SIZE(now));
			if (ret < 0)
				goto err_stats;
			sum += (double)now[USWAP_RESIDENT_BYTES];
			samples++;
			if (i >= t->half) {
				sum_2nd += (double)now[USWAP_RESIDENT_BYTES];
				samples_2nd++;
			}
		}
		if (a & TRACE_WRITE) {
			*w = i + 1;
			expect[page] = (uint32_t)(i + 1);
		} else if (*w != expect[page]) {
			if (res->data_errors++ < 5)
				fprintf(stderr, "policy: access %" PRIu64
					": page %" PRIu32 " reads %" PRIu64
					", expected %" PRIu32 "\n",
					i, page, (uint64_t)*w, expect[page]);
		}
	}
	res->seconds = now_seconds() - start;

	ret = uswap_stats_read(rt, res->end, USWAP_NR_COUNTERS);
	if (ret < 0)
		goto err_stats;
	for (c = 0; c < USWAP_NR_COUNTERS; c++) {
		res->all[c] = res->end[c] - v0[c];
		res->second[c] = res->end[c] - vmid[c];
	}
	res->resident_avg = samples ? sum / (double)samples : 0;
	res->resident_avg_2nd = samples_2nd ? sum_2nd / (double)samples_2nd : 0;
	res->ran = true;
	goto out;

err_stats:
	fprintf(stderr, "policy: uswap_stats_read: %s\n", strerror(-ret));
out:
	uswap_runtime_destroy(rt);
	free(expect);
	return ret;
}

#endif /* POLICY_SIM_ONLY */

/* ---- Reports ------------------------------------------------------------ */

/* A table's capacity: which uswap limit it stands for. */
struct table {
	const char *label;		/* "max" or "high" */
	uint64_t bytes;
	uint64_t units;
	struct sim_result r[NR_POLICIES];
};

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static double mib(double bytes)
{
	return bytes / (1024.0 * 1024.0);
}

static void report_table(const struct params *p, const struct trace *t,
			 const struct table *tb)
{
	uint64_t ppf = p->folio / PAGE_SIZE, n2 = t->len - t->half;
	const struct sim_result *fifo = &tb->r[POL_FIFO];
	unsigned pol;

	printf("\ncapacity = %s: %" PRIu64 " pages (%.1f MiB), %" PRIu64
	       " folios of %" PRIu64 " KiB\n", tb->label, tb->units * ppf,
	       mib((double)tb->bytes), tb->units, p->folio / 1024);
	printf("%-10s %12s %12s %11s %8s %12s %9s\n", "policy", "faults",
	       "2nd half", "miss ratio", "vs FIFO", "swap-outs", "sim time");
	for (pol = 0; pol < NR_POLICIES; pol++) {
		const struct sim_result *r = &tb->r[pol];

		if (!r->done)
			continue;
		printf("%-10s %12" PRIu64 " %12" PRIu64 " %11.4f %8.3f %12"
		       PRIu64 " %7.3f s\n", policy_name[pol], r->major,
		       r->major_2nd, ratio(r->major_2nd + r->cold_2nd, n2),
		       ratio(r->major, fifo->major), r->swap_outs * ppf,
		       r->seconds);
	}
}

static const enum uswap_counter report_counters[] = {
	USWAP_PGFAULT, USWAP_PGMAJFAULT, USWAP_ZERO_FILL, USWAP_PSWPIN,
	USWAP_PSWPOUT, USWAP_PGSCAN, USWAP_PGSTEAL, USWAP_PGACTIVATE,
	USWAP_PGDEACTIVATE, USWAP_WORKINGSET_REFAULT,
	USWAP_WORKINGSET_ACTIVATE, USWAP_WORKINGSET_RESTORE, USWAP_WP_FAULT,
	USWAP_EVICT_ABORT, USWAP_CLEAN_DROP, USWAP_RECLAIM_STALL,
	USWAP_RECLAIM_STALL_US, USWAP_MAX_OVERRUN,
};

static void report_uswap(const struct params *p, const struct trace *t,
			 const struct uswap_result *u, const struct table *tmax,
			 const struct table *thigh)
{
	uint64_t maj = u->all[USWAP_PGMAJFAULT];
	uint64_t maj2 = u->second[USWAP_PGMAJFAULT];
	uint64_t zf2 = u->second[USWAP_ZERO_FILL];
	unsigned i;

	if (!u->ran) {
		printf("\nuswap: %s\n", u->why);
		return;
	}
	printf("\nuswap: max %.1f MiB, high %.1f MiB, folio %" PRIu64
	       " KiB: %" PRIu64 " accesses in %.2f s (%.0f accesses/s)\n",
	       mib((double)u->end[USWAP_MAX_BYTES]),
	       mib((double)u->end[USWAP_HIGH_BYTES]), p->folio / 1024, t->len,
	       u->seconds, u->seconds > 0 ? (double)t->len / u->seconds : 0);
	printf("resident: peak %.1f MiB, average %.1f MiB (second half %.1f"
	       " MiB)\n", mib((double)u->end[USWAP_RESIDENT_PEAK]),
	       mib(u->resident_avg), mib(u->resident_avg_2nd));
	printf("%-10s %12s %12s %11s %12s %12s %12s %12s\n", "", "faults",
	       "2nd half", "miss ratio", "/FIFO@max", "/LRU@max",
	       "/FIFO@high", "/LRU@high");
	printf("%-10s %12" PRIu64 " %12" PRIu64 " %11.4f %12.3f %12.3f %12.3f"
	       " %12.3f\n", "uswap", maj, maj2,
	       ratio(maj2 + zf2, t->len - t->half),
	       ratio(maj, tmax->r[POL_FIFO].major),
	       ratio(maj, tmax->r[POL_LRU].major),
	       ratio(maj, thigh->r[POL_FIFO].major),
	       ratio(maj, thigh->r[POL_LRU].major));
	printf("%-22s %14s %14s\n", "counter", "whole trace", "second half");
	for (i = 0; i < ARRAY_SIZE(report_counters); i++) {
		enum uswap_counter c = report_counters[i];

		printf("%-22s %14" PRIu64 " %14" PRIu64 "\n", counter_name(c),
		       u->all[c], u->second[c]);
	}
	printf("data check: %" PRIu64 " reads did not see the last write\n",
	       u->data_errors);
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_table(const struct params *p, const struct trace *t,
		       const struct table *tb, bool *first)
{
	uint64_t ppf = p->folio / PAGE_SIZE, n2 = t->len - t->half;
	unsigned pol;

	for (pol = 0; pol < NR_POLICIES; pol++) {
		const struct sim_result *r = &tb->r[pol];

		if (!r->done)
			continue;
		printf("%s{\"policy\":\"%s\",\"at\":\"%s\",\"capacity_pages\":%"
		       PRIu64 ",\"capacity_folios\":%" PRIu64 ",\"faults\":%"
		       PRIu64 ",\"faults_2nd\":%" PRIu64 ",\"cold\":%" PRIu64
		       ",\"cold_2nd\":%" PRIu64 ",\"miss_ratio_2nd\":%.6f,"
		       "\"vs_fifo\":%.4f,\"vs_fifo_2nd\":%.4f,"
		       "\"swap_out_pages\":%" PRIu64 ",\"seconds\":%.4f}",
		       *first ? "" : ",", policy_name[pol], tb->label,
		       tb->units * ppf, tb->units, r->major, r->major_2nd,
		       r->cold, r->cold_2nd,
		       ratio(r->major_2nd + r->cold_2nd, n2),
		       ratio(r->major, tb->r[POL_FIFO].major),
		       ratio(r->major_2nd, tb->r[POL_FIFO].major_2nd),
		       r->swap_outs * ppf, r->seconds);
		*first = false;
	}
}

static void report_json(const struct params *p, const struct trace *t,
			double gen_seconds, const struct table *tmax,
			const struct table *thigh, const struct uswap_result *u)
{
	bool first = true;
	unsigned c;

	printf("{\"bench\":\"policy\",\"pages\":%" PRIu64 ",\"accesses\":%"
	       PRIu64 ",\"trace_len\":%" PRIu64 ",\"theta\":%g,\"seed\":%"
	       PRIu64 ",\"write_ratio\":%g,\"folio\":%" PRIu64
	       ",\"scan_every\":%" PRIu64 ",\"scan_len\":%" PRIu64
	       ",\"capacity\":%" PRIu64 ",\"distinct\":%" PRIu64
	       ",\"trace_seconds\":%.4f,\"sim\":[", p->pages, p->accesses,
	       t->len, p->theta, p->seed, p->write_ratio, p->folio,
	       p->scan_every, p->scan_len, p->capacity, t->distinct,
	       gen_seconds);
	json_table(p, t, tmax, &first);
	json_table(p, t, thigh, &first);
	printf("],\"uswap\":{\"ran\":%s", u->ran ? "true" : "false");
	if (!u->ran) {
		printf(",\"why\":");
		json_string(u->why);
		printf("}}\n");
		return;
	}
	printf(",\"seconds\":%.4f,\"accesses_per_sec\":%.0f,\"data_errors\":%"
	       PRIu64 ",\"resident_avg\":%.0f,\"resident_avg_2nd\":%.0f"
	       ",\"miss_ratio_2nd\":%.6f", u->seconds,
	       u->seconds > 0 ? (double)t->len / u->seconds : 0,
	       u->data_errors, u->resident_avg, u->resident_avg_2nd,
	       ratio(u->second[USWAP_PGMAJFAULT] + u->second[USWAP_ZERO_FILL],
		     t->len - t->half));
	printf(",\"vs_fifo_max\":%.4f,\"vs_lru_max\":%.4f,\"vs_fifo_high\":%.4f"
	       ",\"vs_lru_high\":%.4f",
	       ratio(u->all[USWAP_PGMAJFAULT], tmax->r[POL_FIFO].major),
	       ratio(u->all[USWAP_PGMAJFAULT], tmax->r[POL_LRU].major),
	       ratio(u->all[USWAP_PGMAJFAULT], thigh->r[POL_FIFO].major),
	       ratio(u->all[USWAP_PGMAJFAULT], thigh->r[POL_LRU].major));
	printf(",\"counters\":{");
	for (c = 0; c < USWAP_RESIDENT_BYTES; c++)
		printf("%s\"%s\":%" PRIu64, c ? "," : "", counter_name(c),
		       u->all[c]);
	printf("},\"counters_2nd\":{");
	for (c = 0; c < USWAP_RESIDENT_BYTES; c++)
		printf("%s\"%s\":%" PRIu64, c ? "," : "", counter_name(c),
		       u->second[c]);
	printf("},\"gauges\":{");
	for (c = USWAP_RESIDENT_BYTES; c < USWAP_NR_COUNTERS; c++)
		printf("%s\"%s\":%" PRIu64, c > USWAP_RESIDENT_BYTES ? "," : "",
		       counter_name(c), u->end[c]);
	printf("}}}\n");
}

/* ---- Self-test ---------------------------------------------------------- */

#define W		TRACE_WRITE
#define NAIVE_SLOTS	64
#define NAIVE_UNITS	256

static unsigned selftest_failures;

static void check_u64(const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return;
	fprintf(stderr, "self-test: %s: got %" PRIu64 ", want %" PRIu64 "\n",
		what, got, want);
	selftest_failures++;
}

static uint64_t units_of(const struct trace *t, unsigned shift)
{
	uint64_t i, max = 0;

	for (i = 0; i < t->len; i++)
		if (TRACE_PAGE(t->acc[i]) > max)
			max = TRACE_PAGE(t->acc[i]);
	return (max >> shift) + 1;
}

static unsigned log2_floor(uint64_t x)
{
	return 63 - (unsigned)__builtin_clzll(x);
}

/* Index of the slot that the naive model of pol evicts at access i. */
static uint64_t naive_victim(enum policy pol, const struct trace *t,
			     unsigned shift, uint64_t i, uint32_t *slot,
			     uint64_t *stamp, bool *ref, uint64_t used)
{
	uint64_t j, k, v = 0, best = 0;

	switch (pol) {
	case POL_FIFO:		/* slots are kept in order of arrival */
		return 0;
	case POL_LRU:
		for (j = 1; j < used; j++)
			if (stamp[j] < stamp[v])
				v = j;
		return v;
	case POL_CLOCK:		/* second chance: a referenced head goes back */
	case POL_CLOCK_W:
		while (ref[0]) {
			uint32_t u = slot[0];

			memmove(slot, slot + 1, (used - 1) * sizeof(*slot));
			memmove(ref, ref + 1, (used - 1) * sizeof(*ref));
			slot[used - 1] = u;
			ref[used - 1] = false;
		}
		return 0;
	default:
		for (j = 0; j < used; j++) {
			for (k = i + 1; k < t->len; k++)
				if (TRACE_PAGE(t->acc[k]) >> shift == slot[j])
					break;
			if (k > best) {
				best = k;
				v = j;
			}
		}
		return v;
	}
}

/* The naive models' miss at access i on unit u: cold or major. */
static void naive_miss(const struct trace *t, uint64_t i, uint32_t u,
		       bool *seen, struct sim_result *r)
{
	if (seen[u]) {
		r->major++;
		r->major_2nd += i >= t->half;
	} else {
		r->cold++;
		r->cold_2nd += i >= t->half;
	}
	seen[u] = true;
}

/* The naive models' eviction of unit x: written out unless clean. */
static void naive_out(uint32_t x, bool *dirty, bool *copy,
		      struct sim_result *r)
{
	if (dirty[x] || !copy[x])
		r->swap_outs++;
	dirty[x] = false;
	copy[x] = true;
}

/*
 * S3-FIFO as plainly as possible: each slot says which queue it is in, its
 * uses and when it entered that queue (the tail is the oldest); the ghost
 * queue is a list of units in order of entry, cut to its capacity.
 */
static void naive_s3fifo(const struct trace *t, unsigned shift, uint64_t cap,
			 bool writes_only, struct sim_result *r)
{
	uint32_t slot[NAIVE_SLOTS], ghost[NAIVE_SLOTS + 1];
	uint64_t entered[NAIVE_SLOTS], clock = 0, small_cap = s3_small(cap);
	uint64_t gcap = s3_ghost(cap), ng = 0, i, j, used = 0;
	bool in_main[NAIVE_SLOTS];
	unsigned uses[NAIVE_SLOTS];
	bool seen[NAIVE_UNITS] = { false }, dirty[NAIVE_UNITS] = { false };
	bool copy[NAIVE_UNITS] = { false };

	memset(r, 0, sizeof(*r));
	for (i = 0; i < t->len; i++) {
		uint32_t u = TRACE_PAGE(t->acc[i]) >> shift;
		bool write = t->acc[i] & TRACE_WRITE, ghosted = false;

		for (j = 0; j < used && slot[j] != u; j++)
			;
		if (j < used) {
			if ((!writes_only || write) && uses[j] < S3_MAX_USES)
				uses[j]++;
			if (write)
				dirty[u] = true;
			continue;
		}
		while (used == cap) {
			uint64_t n_small = 0, v = used;
			bool from_small;

			for (j = 0; j < used; j++)
				n_small += !in_main[j];
			from_small = n_small >= small_cap || n_small == used;
			for (j = 0; j < used; j++)	/* the queue's oldest */
				if (in_main[j] != from_small &&
				    (v == used || entered[j] < entered[v]))
					v = j;
			if (uses[v]) {
				if (from_small)
					uses[v] = 0;
				else
					uses[v]--;
				in_main[v] = true;
				entered[v] = clock++;
				continue;
			}
			if (from_small) {
				ghost[ng++] = slot[v];
				if (ng > gcap) {
					memmove(ghost, ghost + 1,
						(ng - 1) * sizeof(*ghost));
					ng--;
				}
			}
			naive_out(slot[v], dirty, copy, r);
			slot[v] = slot[--used];
			in_main[v] = in_main[used];
			uses[v] = uses[used];
			entered[v] = entered[used];
		}
		for (j = 0; j < ng; j++)
			if (ghost[j] == u)
				ghosted = true;
		slot[used] = u;
		in_main[used] = ghosted;
		uses[used] = 0;
		entered[used] = clock++;
		used++;
		naive_miss(t, i, u, seen, r);
		if (write)
			dirty[u] = true;
	}
}

/* The policies as plainly as possible: slots in an array, linear scans. */
static void naive_run(enum policy pol, const struct trace *t, unsigned shift,
		      uint64_t cap, struct sim_result *r)
{
	uint32_t slot[NAIVE_SLOTS];
	uint64_t stamp[NAIVE_SLOTS];
	bool ref[NAIVE_SLOTS];
	bool seen[NAIVE_UNITS] = { false }, dirty[NAIVE_UNITS] = { false };
	bool copy[NAIVE_UNITS] = { false };
	uint64_t i, j, used = 0;

	if (pol == POL_S3FIFO || pol == POL_S3FIFO_W) {
		naive_s3fifo(t, shift, cap, pol == POL_S3FIFO_W, r);
		return;
	}
	memset(r, 0, sizeof(*r));
	for (i = 0; i < t->len; i++) {
		uint32_t u = TRACE_PAGE(t->acc[i]) >> shift;

		for (j = 0; j < used && slot[j] != u; j++)
			;
		if (j < used) {
			stamp[j] = i;
			if (pol != POL_CLOCK_W || (t->acc[i] & TRACE_WRITE))
				ref[j] = true;
		} else {
			if (used == cap) {
				uint64_t v = naive_victim(pol, t, shift, i,
							  slot, stamp, ref,
							  used);
				uint32_t x = slot[v];

				naive_out(x, dirty, copy, r);
				used--;
				memmove(slot + v, slot + v + 1,
					(used - v) * sizeof(*slot));
				memmove(stamp + v, stamp + v + 1,
					(used - v) * sizeof(*stamp));
				memmove(ref + v, ref + v + 1,
					(used - v) * sizeof(*ref));
			}
			slot[used] = u;
			stamp[used] = i;
			ref[used] = false;
			used++;
			naive_miss(t, i, u, seen, r);
		}
		if (t->acc[i] & TRACE_WRITE)
			dirty[u] = true;
	}
}

/* Traces with known miss counts (cold + major) per policy. */
static uint32_t belady[] = { 1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5 };
static uint32_t second_chance[] = { 1, 2, 1, 3, 1, 4 };
static uint32_t cyclic[] = { 1, 2, 3, 1, 2, 3, 1, 2, 3 };
static uint32_t folios[] = { 0, 1, 2, 3, 0, 5, 4, 1 };

static const struct hand_case {
	const char *name;
	uint32_t *acc;
	uint64_t len;
	unsigned shift;
	uint64_t cap;
	/* FIFO, LRU, CLOCK, CLOCK-W, S3-FIFO, S3-FIFO-W, OPT */
	uint64_t misses[NR_POLICIES];
} hand_cases[] = {
	{ "belady/3", belady, 12, 0, 3, { 9, 10, 10, 9, 10, 10, 7 } },
	{ "belady/4", belady, 12, 0, 4, { 10, 8, 8, 10, 8, 10, 6 } },
	{ "second-chance/2", second_chance, 6, 0, 2, { 5, 4, 4, 5, 4, 5, 4 } },
	{ "cyclic/2", cyclic, 9, 0, 2, { 9, 9, 9, 9, 9, 9, 6 } },
	{ "cyclic/3", cyclic, 9, 0, 3, { 3, 3, 3, 3, 3, 3, 3 } },
	/* units 0 0 1 1 0 2 2 0 */
	{ "folios/1", folios, 8, 1, 1, { 5, 5, 5, 5, 5, 5, 5 } },
	{ "folios/2", folios, 8, 1, 2, { 4, 3, 4, 4, 4, 4, 3 } },
};

static void selftest_hand(void)
{
	/* Counts and swap-outs in detail: W1 R2 R1 R2 W2 R1, capacity 1. */
	static uint32_t detail[] = { 1 | W, 2, 1, 2, 2 | W, 1 };
	char what[96];
	unsigned c, pol;

	for (c = 0; c < ARRAY_SIZE(hand_cases); c++) {
		const struct hand_case *hc = &hand_cases[c];
		struct trace t = { .acc = hc->acc, .len = hc->len,
				   .half = hc->len / 2 };

		for (pol = 0; pol < NR_POLICIES; pol++) {
			struct sim_result r;

			snprintf(what, sizeof(what), "%s %s misses", hc->name,
				 policy_name[pol]);
			if (sim_run(pol, &t, hc->shift, units_of(&t, hc->shift),
				    hc->cap, &r) < 0) {
				check_u64(what, 1, 0);
				continue;
			}
			check_u64(what, r.cold + r.major, hc->misses[pol]);
		}
	}
	for (pol = 0; pol < NR_POLICIES; pol++) {
		struct trace t = { .acc = detail, .len = 6, .half = 3 };
		struct sim_result r;

		if (sim_run(pol, &t, 0, 3, 1, &r) < 0) {
			check_u64("detail sim_run", 1, 0);
			continue;
		}
		snprintf(what, sizeof(what), "detail %s", policy_name[pol]);
		check_u64(what, r.cold, 2);
		check_u64(what, r.cold_2nd, 0);
		/* misses at 0 1 2 3 5; the write at 4 hits */
		check_u64(what, r.major, 3);
		check_u64(what, r.major_2nd, 2);
		/* out: 1 dirty, 2 never stored, 1 clean, 2 dirty; 1 stays */
		check_u64(what, r.swap_outs, 3);
	}
}

/* Fast simulators against the naive models on random small traces. */
static void selftest_random(void)
{
	uint32_t acc[400];
	uint64_t rng = 42;
	unsigned iter, pol;
	char what[128];

	for (iter = 0; iter < 400; iter++) {
		uint64_t pages = 1 + rng_below(&rng, 96);
		unsigned shift = (unsigned)rng_below(&rng, 3);
		uint64_t nunits = ((pages - 1) >> shift) + 1;
		uint64_t cap = 1 + rng_below(&rng, nunits + 2);
		double theta = rng_double(&rng) * 1.5;
		double wr = rng_double(&rng);
		struct trace t = { .acc = acc };
		struct sim_result fast[NR_POLICIES], slow;
		struct zipf z;
		uint64_t i;

		if (cap > NAIVE_SLOTS)
			cap = NAIVE_SLOTS;
		t.len = 1 + rng_below(&rng, ARRAY_SIZE(acc));
		t.half = t.len / 2;
		zipf_init(&z, pages, theta);
		for (i = 0; i < t.len; i++)
			acc[i] = (uint32_t)(zipf_next(&z, &rng) - 1) |
				 (rng_double(&rng) < wr ? W : 0);
		for (pol = 0; pol < NR_POLICIES; pol++) {
			if (sim_run(pol, &t, shift, nunits, cap,
				    &fast[pol]) < 0) {
				check_u64("random sim_run", 1, 0);
				return;
			}
			naive_run(pol, &t, shift, cap, &slow);
			snprintf(what, sizeof(what), "random %u (%" PRIu64
				 " units, cap %" PRIu64 ", len %" PRIu64 ") %s",
				 iter, nunits, cap, t.len, policy_name[pol]);
			check_u64(what, fast[pol].major, slow.major);
			check_u64(what, fast[pol].major_2nd, slow.major_2nd);
			check_u64(what, fast[pol].cold, slow.cold);
			check_u64(what, fast[pol].cold_2nd, slow.cold_2nd);
			/* OPT's swap-outs depend on how ties are broken */
			if (pol != POL_OPT)
				check_u64(what, fast[pol].swap_outs,
					  slow.swap_outs);
		}
		for (pol = 0; pol < POL_OPT; pol++)
			if (fast[POL_OPT].major > fast[pol].major)
				check_u64("OPT beats all", fast[POL_OPT].major,
					  fast[pol].major);
	}
}

/*
 * Chi-square of z against the exact law: ranks one bin each for small n,
 * else bins [2^j, 2^(j+1)); bins are merged until each expects >= 5 draws.
 */
static void selftest_zipf_one(uint64_t n, double theta, uint64_t draws)
{
	double prob[64] = { 0 }, sum = 0, chi2 = 0, eg = 0, og = 0, limit;
	uint64_t count[64] = { 0 }, i, k;
	uint64_t rng = n * 1000 + (uint64_t)(theta * 100);
	unsigned nb = 0, b, df = 0;
	bool per_rank = n <= 48;
	struct zipf z;
	char what[96];

	for (k = 1; k <= n; k++) {
		double p = pow((double)k, -theta);

		b = per_rank ? (unsigned)(k - 1) : log2_floor(k);
		prob[b] += p;
		sum += p;
		nb = b + 1;
	}
	zipf_init(&z, n, theta);
	for (i = 0; i < draws; i++) {
		k = zipf_next(&z, &rng);
		if (k < 1 || k > n) {
			snprintf(what, sizeof(what), "zipf n=%" PRIu64
				 " theta=%g: draw out of range", n, theta);
			check_u64(what, k, 1);
			return;
		}
		count[per_rank ? k - 1 : log2_floor(k)]++;
	}
	for (b = 0; b < nb; b++) {
		eg += prob[b] / sum * (double)draws;
		og += (double)count[b];
		if (eg < 5 && b + 1 < nb)
			continue;
		chi2 += (og - eg) * (og - eg) / eg;
		df++;
		eg = og = 0;
	}
	df = df ? df - 1 : 0;
	limit = df + 6 * sqrt(2.0 * df) + 10;
	if (chi2 > limit) {
		fprintf(stderr, "self-test: zipf n=%" PRIu64 " theta=%g: "
			"chi-square %.1f with %u degrees of freedom\n",
			n, theta, chi2, df);
		selftest_failures++;
	}
}

static void selftest_zipf(void)
{
	static const uint64_t ns[] = { 1, 2, 10, 48, 1000, 65536, 1000000 };
	static const double thetas[] = { 0, 0.5, 0.99, 1.0, 1.2, 2.0 };
	unsigned i, j;

	for (i = 0; i < ARRAY_SIZE(ns); i++)
		for (j = 0; j < ARRAY_SIZE(thetas); j++)
			selftest_zipf_one(ns[i], thetas[j], 200000);
}

/* Same seed, same trace; scans where they belong; writes as asked. */
static void selftest_trace(void)
{
	struct params p = { .pages = 1000, .accesses = 20000, .theta = 0.99,
			    .seed = 7, .capacity = 100, .write_ratio = 0.25,
			    .folio = PAGE_SIZE, .scan_every = 10,
			    .scan_len = 3 };
	struct trace a, b;
	uint64_t i, writes = 0, cursor = 0;

	if (trace_generate(&p, &a) < 0 || trace_generate(&p, &b) < 0) {
		check_u64("trace_generate", 1, 0);
		return;
	}
	check_u64("trace length", a.len, 20000 + 2000 * 3);
	check_u64("same seed, same trace",
		  memcmp(a.acc, b.acc, a.len * sizeof(*a.acc)) != 0, 0);
	for (i = 0; i < a.len; i++) {
		writes += !!(a.acc[i] & W);
		if (i % 13 >= 10) {
			check_u64("scan page", TRACE_PAGE(a.acc[i]), cursor);
			cursor = (cursor + 1) % p.pages;
		}
	}
	/* 26000 draws at 1/4: sd 70 */
	check_u64("write ratio", writes > 6500 - 350 && writes < 6500 + 350, 1);
	trace_free(&b);
	p.seed = 8;
	if (trace_generate(&p, &b) < 0) {
		check_u64("trace_generate", 1, 0);
		trace_free(&a);
		return;
	}
	check_u64("other seed, other trace",
		  memcmp(a.acc, b.acc, a.len * sizeof(*a.acc)) != 0, 1);
	trace_free(&a);
	trace_free(&b);
}

static int selftest(void)
{
	double start = now_seconds();

	selftest_hand();
	selftest_random();
	selftest_trace();
	selftest_zipf();
	if (selftest_failures) {
		fprintf(stderr, "self-test: %u checks failed\n",
			selftest_failures);
		return 1;
	}
	printf("self-test: all checks passed (%.2f s)\n",
	       now_seconds() - start);
	return 0;
}

/* ---- Arguments ---------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: policy [OPTIONS]\n"
"Replays a seeded Zipf page trace on a uswap region and in FIFO, LRU, CLOCK,\n"
"S3-FIFO and OPT simulations with the same capacity (CLOCK-W and S3-FIFO-W:\n"
"fed writes only, as uswap sees accesses); reports faults on pages seen\n"
"before.\n"
"  --pages N          pages in the region (default 65536 = 256 MiB)\n"
"  --accesses N       Zipf accesses (default 2000000); scans come on top\n"
"  --theta X          Zipf exponent (default 0.99 as YCSB; 0 = uniform)\n"
"  --seed N           trace seed (default 1)\n"
"  --capacity P       budget in pages: uswap max = P * 4096\n"
"                     (default: pages / 4)\n"
"  --write-ratio X    fraction of accesses that write (default 0.5)\n"
"  --folio SIZE       uswap folio, the unit of the simulations: 4K (default),\n"
"                     16K, 64K or 2M\n"
"  --scan-every N     after every N accesses scan --scan-len pages in order\n"
"                     (default 0: no scans)\n"
"  --scan-len N       pages per scan (default: the capacity)\n"
"  --no-opt           skip the OPT simulation\n"
"  --no-uswap         simulations only\n"
"  --require-uswap    exit 1 when uswap cannot run here\n"
"  --json             one line of JSON instead of the tables\n"
"  --self-test        check the simulators and the sampler; exit 0 or 1\n"
"uswap options other than max and folio come from USWAP_* variables.\n"
"Exit status: 0 done, 1 failure, 2 bad arguments.\n");
}

static int bad_arg(const char *opt, const char *expected, const char *got)
{
	fprintf(stderr, "policy: %s: expected %s, got '%s'\n", opt, expected,
		got);
	return -EINVAL;
}

static int parse_u64(const char *opt, const char *s, uint64_t min,
		     uint64_t max, const char *expected, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		return bad_arg(opt, expected, s);
	*out = v;
	return 0;
}

static int parse_double(const char *opt, const char *s, double min,
			double max, const char *expected, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return bad_arg(opt, expected, s);
	*out = v;
	return 0;
}

static int parse_folio(const char *s, uint64_t *out)
{
	const char *expected = "4K, 16K, 64K or 2M";
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return bad_arg("--folio", expected, s);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || (v != 4096 && v != 16384 && v != 65536 && v != 2097152))
		return bad_arg("--folio", expected, s);
	*out = v;
	return 0;
}

enum {
	OPT_PAGES = 256, OPT_ACCESSES, OPT_THETA, OPT_SEED, OPT_CAPACITY,
	OPT_WRITE_RATIO, OPT_FOLIO, OPT_SCAN_EVERY, OPT_SCAN_LEN, OPT_NO_OPT,
	OPT_NO_USWAP, OPT_REQUIRE_USWAP, OPT_JSON, OPT_SELF_TEST, OPT_HELP,
};

static const struct option long_options[] = {
	{ "pages", required_argument, NULL, OPT_PAGES },
	{ "accesses", required_argument, NULL, OPT_ACCESSES },
	{ "theta", required_argument, NULL, OPT_THETA },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "capacity", required_argument, NULL, OPT_CAPACITY },
	{ "write-ratio", required_argument, NULL, OPT_WRITE_RATIO },
	{ "folio", required_argument, NULL, OPT_FOLIO },
	{ "scan-every", required_argument, NULL, OPT_SCAN_EVERY },
	{ "scan-len", required_argument, NULL, OPT_SCAN_LEN },
	{ "no-opt", no_argument, NULL, OPT_NO_OPT },
	{ "no-uswap", no_argument, NULL, OPT_NO_USWAP },
	{ "require-uswap", no_argument, NULL, OPT_REQUIRE_USWAP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "self-test", no_argument, NULL, OPT_SELF_TEST },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Fill p from the command line; 1 = run the self-test, 0 = run, -EINVAL. */
static int parse_args(int argc, char **argv, struct params *p, bool *no_uswap)
{
	const char *count = "an integer from 1 to 4294967295";
	uint64_t ppf;
	bool self_test = false;
	int c, ret = 0;

	*p = (struct params){ .pages = 65536, .accesses = 2000000,
			      .theta = 0.99, .seed = 1, .write_ratio = 0.5,
			      .folio = PAGE_SIZE, .opt = true };
	while (ret == 0 &&
	       (c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_PAGES:
			ret = parse_u64("--pages", optarg, 1, MAX_PAGES,
					"a page count from 1 to 2^31",
					&p->pages);
			break;
		case OPT_ACCESSES:
			ret = parse_u64("--accesses", optarg, 1, UINT32_MAX - 1,
					count, &p->accesses);
			break;
		case OPT_THETA:
			ret = parse_double("--theta", optarg, 0, 50,
					   "a number from 0 to 50", &p->theta);
			break;
		case OPT_SEED:
			ret = parse_u64("--seed", optarg, 0, UINT64_MAX,
					"an unsigned integer", &p->seed);
			break;
		case OPT_CAPACITY:
			ret = parse_u64("--capacity", optarg, 1, MAX_PAGES,
					"a page count from 1 to 2^31",
					&p->capacity);
			break;
		case OPT_WRITE_RATIO:
			ret = parse_double("--write-ratio", optarg, 0, 1,
					   "a fraction from 0 to 1",
					   &p->write_ratio);
			break;
		case OPT_FOLIO:
			ret = parse_folio(optarg, &p->folio);
			break;
		case OPT_SCAN_EVERY:
			ret = parse_u64("--scan-every", optarg, 0, UINT32_MAX,
					"an access count (0: no scans)",
					&p->scan_every);
			break;
		case OPT_SCAN_LEN:
			ret = parse_u64("--scan-len", optarg, 1, MAX_PAGES,
					"a page count from 1 to 2^31",
					&p->scan_len);
			break;
		case OPT_NO_OPT:
			p->opt = false;
			break;
		case OPT_NO_USWAP:
			*no_uswap = true;
			break;
		case OPT_REQUIRE_USWAP:
			p->require_uswap = true;
			break;
		case OPT_JSON:
			p->json = true;
			break;
		case OPT_SELF_TEST:
			self_test = true;
			break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (ret < 0)
		return ret;
	if (optind < argc) {
		fprintf(stderr, "policy: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (self_test)
		return 1;
	if (!p->capacity)
		p->capacity = p->pages / 4 ? p->pages / 4 : 1;
	if (!p->scan_len)
		p->scan_len = p->capacity;
	ppf = p->folio / PAGE_SIZE;
	if (p->capacity > p->pages) {
		fprintf(stderr, "policy: --capacity: expected at most --pages "
			"(%" PRIu64 "), got %" PRIu64 "\n", p->pages,
			p->capacity);
		return -EINVAL;
	}
	if (p->pages % ppf || p->capacity < ppf) {
		fprintf(stderr, "policy: --folio %" PRIu64 "K: expected "
			"--pages a multiple of %" PRIu64 " and --capacity at "
			"least %" PRIu64 "\n", p->folio >> 10, ppf, ppf);
		return -EINVAL;
	}
	if (p->accesses + (p->scan_every ? p->accesses / p->scan_every : 0) *
	    p->scan_len >= UINT32_MAX) {
		fprintf(stderr, "policy: --accesses, --scan-every, --scan-len: "
			"expected a trace under 2^32 accesses\n");
		return -EINVAL;
	}
	return 0;
}

/* ---- Main --------------------------------------------------------------- */

static int run_table(const struct params *p, const struct trace *t,
		     struct table *tb)
{
	unsigned shift = (unsigned)__builtin_ctzll(p->folio / PAGE_SIZE);
	uint64_t nunits = p->pages >> shift;
	unsigned pol;
	int ret;

	tb->units = tb->bytes / p->folio;
	if (tb->units < 1)
		tb->units = 1;
	for (pol = 0; pol < NR_POLICIES; pol++) {
		if (pol == POL_OPT && !p->opt)
			continue;
		ret = sim_run(pol, t, shift, nunits, tb->units, &tb->r[pol]);
		if (ret < 0) {
			fprintf(stderr, "policy: %s simulation: %s\n",
				policy_name[pol], strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct table tmax = { .label = "max" }, thigh = { .label = "high" };
	struct uswap_result u = { .ran = false };
	bool no_uswap = false;
	struct params p;
	struct trace t;
	double start, gen_seconds;
	int ret, status = 0;

	ret = parse_args(argc, argv, &p, &no_uswap);
	if (ret < 0)
		return 2;
	if (ret == 1)
		return selftest();

	start = now_seconds();
	ret = trace_generate(&p, &t);
	if (ret < 0) {
		fprintf(stderr, "policy: trace of %" PRIu64 " accesses: %s\n",
			p.accesses, strerror(-ret));
		return 1;
	}
	gen_seconds = now_seconds() - start;
	if (!p.json) {
		printf("policy: %" PRIu64 " pages (%.0f MiB), %" PRIu64
		       " Zipf accesses (theta %g, seed %" PRIu64 ") + %" PRIu64
		       " scan accesses, %.0f%% writes\n", p.pages,
		       mib((double)(p.pages * PAGE_SIZE)), p.accesses, p.theta,
		       p.seed, t.len - p.accesses, p.write_ratio * 100);
		printf("trace: %" PRIu64 " accesses to %" PRIu64
		       " distinct pages, generated in %.2f s; second half from"
		       " access %" PRIu64 "\n", t.len, t.distinct, gen_seconds,
		       t.half);
		fflush(stdout);
	}

	if (no_uswap) {
		snprintf(u.why, sizeof(u.why), "skipped: --no-uswap");
	} else {
		ret = uswap_replay(&p, &t, &u);
		if (ret < 0) {
			snprintf(u.why, sizeof(u.why), "FAILED: %s",
				 strerror(-ret));
			u.ran = false;
			status = 1;
		}
	}

	tmax.bytes = p.capacity * PAGE_SIZE;
	/* uswap's own high when it ran; else about its default, 97% of max */
	thigh.bytes = tmax.bytes - tmax.bytes / 32;
	if (u.ran && u.end[USWAP_HIGH_BYTES] &&
	    u.end[USWAP_HIGH_BYTES] <= tmax.bytes)
		thigh.bytes = u.end[USWAP_HIGH_BYTES];
	if (run_table(&p, &t, &tmax) < 0 || run_table(&p, &t, &thigh) < 0) {
		trace_free(&t);
		return 1;
	}

	if (p.json) {
		report_json(&p, &t, gen_seconds, &tmax, &thigh, &u);
	} else {
		printf("first touches (cold misses, zero fills in uswap): %"
		       PRIu64 " folios, %" PRIu64 " in the second half\n",
		       tmax.r[POL_FIFO].cold, tmax.r[POL_FIFO].cold_2nd);
		printf("faults = misses on folios touched before (pgmajfault); "
		       "miss ratio = all misses / accesses in the second half;"
		       "\nvs FIFO = faults / FIFO's; swap-outs in pages "
		       "(evictions of folios not clean in swap)\n");
		report_table(&p, &t, &tmax);
		report_table(&p, &t, &thigh);
		report_uswap(&p, &t, &u, &tmax, &thigh);
	}

	if (u.ran && u.data_errors) {
		fprintf(stderr, "policy: %" PRIu64 " reads did not see the last"
			" write\n", u.data_errors);
		status = 1;
	}
	if (!u.ran && p.require_uswap) {
		fprintf(stderr, "policy: --require-uswap: uswap did not run"
			" (%s)\n", u.why);
		status = 1;
	} else if (!u.ran && !p.json && !status) {
		printf("(uswap was skipped: simulations only)\n");
	}
	trace_free(&t);
	return status;
}
