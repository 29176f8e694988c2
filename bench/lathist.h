/* SPDX-License-Identifier: MIT */
/*
 * lathist.h - latency histograms for the benchmarks (pmbench, usemem).
 *
 * A benchmark that times every access cannot keep every sample, and a
 * power-of-two histogram is too coarse to tell a 20 µs fault from a 30 µs
 * one.  This one is log-linear: below 16 ns one bucket per nanosecond,
 * above that 16 buckets per power of two, so every bucket is at most 1/16
 * (6%) wide relative to its lower bound, from nanoseconds to centuries, in
 * under a thousand counters.  Each thread fills its own histogram with no lock; the caller
 * merges them at the end.
 *
 * Percentiles are reported as the upper bound of the bucket that holds
 * them (never optimistic), and the whole histogram can be written as a
 * table for plotting a CDF: one line per non-empty bucket, "lower_ns
 * upper_ns count cumulative_fraction".
 *
 * Everything is static: include this header from one benchmark file.
 */
#ifndef USWAP_BENCH_LATHIST_H
#define USWAP_BENCH_LATHIST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LH_SUB_BITS	4
#define LH_SUB		(1U << LH_SUB_BITS)
#define LH_BUCKETS	(LH_SUB + (64 - LH_SUB_BITS) * LH_SUB)

struct lathist {
	uint64_t count[LH_BUCKETS];
	uint64_t n;
	uint64_t sum_ns;
	uint64_t max_ns;
};

/* Monotonic nanoseconds: a vDSO call, some 20-30 ns here. */
static inline uint64_t lh_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline unsigned lh_bucket(uint64_t ns)
{
	unsigned e;

	if (ns < LH_SUB)
		return (unsigned)ns;
	e = 63U - (unsigned)__builtin_clzll(ns);	/* >= LH_SUB_BITS */
	return LH_SUB + (e - LH_SUB_BITS) * LH_SUB +
	       (unsigned)((ns >> (e - LH_SUB_BITS)) & (LH_SUB - 1));
}

/* The smallest value of bucket b; lh_lower(b + 1) is its upper bound. */
static inline uint64_t lh_lower(unsigned b)
{
	unsigned e;

	if (b < LH_SUB)
		return b;
	if (b >= LH_BUCKETS)
		return UINT64_MAX;
	e = (b - LH_SUB) / LH_SUB + LH_SUB_BITS;
	return (uint64_t)(LH_SUB + (b - LH_SUB) % LH_SUB) << (e - LH_SUB_BITS);
}

static inline void lh_add(struct lathist *h, uint64_t ns)
{
	h->count[lh_bucket(ns)]++;
	h->n++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

static inline void lh_merge(struct lathist *into, const struct lathist *h)
{
	for (unsigned b = 0; b < LH_BUCKETS; b++)
		into->count[b] += h->count[b];
	into->n += h->n;
	into->sum_ns += h->sum_ns;
	if (h->max_ns > into->max_ns)
		into->max_ns = h->max_ns;
}

/* The upper bound, in ns, of the bucket holding quantile q (0 < q <= 1). */
static inline uint64_t lh_quantile_ns(const struct lathist *h, double q)
{
	uint64_t want, seen = 0;

	if (!h->n)
		return 0;
	want = (uint64_t)(q * (double)h->n + 0.5);
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < LH_BUCKETS; b++) {
		seen += h->count[b];
		if (seen >= want) {
			uint64_t up = lh_lower(b + 1);

			return up < h->max_ns ? up : h->max_ns;
		}
	}
	return h->max_ns;
}

static inline double lh_quantile_us(const struct lathist *h, double q)
{
	return (double)lh_quantile_ns(h, q) / 1000.0;
}

static inline double lh_mean_us(const struct lathist *h)
{
	return h->n ? (double)h->sum_ns / (double)h->n / 1000.0 : 0;
}

/* The share of samples at or above ns (bucket resolution). */
static inline double lh_share_above(const struct lathist *h, uint64_t ns)
{
	uint64_t above = 0;

	if (!h->n)
		return 0;
	for (unsigned b = lh_bucket(ns); b < LH_BUCKETS; b++)
		above += h->count[b];
	return (double)above / (double)h->n;
}

/* Write the non-empty buckets as a table; 0 or -1 (errno set). */
static inline int lh_write(const struct lathist *h, const char *path)
{
	FILE *f = fopen(path, "w");
	uint64_t seen = 0;

	if (!f)
		return -1;
	fprintf(f, "# lower_ns upper_ns count cdf (samples %llu, max %llu ns)\n",
		(unsigned long long)h->n, (unsigned long long)h->max_ns);
	for (unsigned b = 0; b < LH_BUCKETS; b++) {
		if (!h->count[b])
			continue;
		seen += h->count[b];
		fprintf(f, "%llu %llu %llu %.6f\n",
			(unsigned long long)lh_lower(b),
			(unsigned long long)lh_lower(b + 1),
			(unsigned long long)h->count[b],
			(double)seen / (double)h->n);
	}
	return fclose(f);
}

#endif /* USWAP_BENCH_LATHIST_H */
