/* SPDX-License-Identifier: MIT */
/*
 * zipf.h - seeded random numbers and a Zipf sampler for the benchmarks.
 *
 * A benchmark replays the same access pattern on uswap, on the kernel and in
 * simulations, so every random choice comes from one seeded generator whose
 * stream is the same on every machine and with every compiler: splitmix64
 * (Steele, Lea and Flood, 2014), 64 bits of state, any seed.
 *
 * The Zipf sampler draws k in [1, n] with probability proportional to
 * 1 / k^theta (YCSB's "zipfian" uses theta = 0.99) by rejection-inversion
 * (Hörmann and Derflinger, "Rejection-inversion to generate variates from
 * monotone discrete distributions", 1996).  It is exact for every theta >= 0
 * and n, needs O(1) set-up and memory, and accepts almost every first draw.
 * The generator of Gray et al. that YCSB uses is exact only for ranks 1 and
 * 2 and follows a continuous approximation beyond.
 *
 * Everything is static inline: include this header from one benchmark file.
 */
#ifndef USWAP_BENCH_ZIPF_H
#define USWAP_BENCH_ZIPF_H

#include <math.h>
#include <stdint.h>

/* The next 64 random bits of the stream *state. */
static inline uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1), 53 random bits. */
static inline double rng_double(uint64_t *state)
{
	return (double)(rng_next(state) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n) for n > 0, without modulo bias (Lemire, 2019). */
static inline uint64_t rng_below(uint64_t *state, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rng_next(state) * n;

	if ((uint64_t)m < n) {
		uint64_t lim = -n % n;	/* 2^64 mod n */

		while ((uint64_t)m < lim)
			m = (unsigned __int128)rng_next(state) * n;
	}
	return (uint64_t)(m >> 64);
}

/*
 * The law p(k) ~ h(k) = k^-theta is sampled through the area under the
 * continuous h: H(x) is its integral from 1, H^-1 its inverse.  A uniform
 * point of the area between 1.5 - 1 (the whole of bar 1) and n + 0.5 falls
 * under the bar of rank k = round(H^-1(u)); points between the bar and the
 * curve are rejected.
 */
struct zipf {
	uint64_t n;
	double theta;
	double h_x1;		/* H(1.5) - h(1): lower end of the area */
	double h_n;		/* H(n + 0.5): upper end */
	double squeeze;		/* k - x <= squeeze: accept without testing */
};

/* log1p(x) / x, continuous at 0. */
static inline double zipf_log1p_x(double x)
{
	if (fabs(x) > 1e-8)
		return log1p(x) / x;
	return 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

/* expm1(x) / x, continuous at 0. */
static inline double zipf_expm1_x(double x)
{
	if (fabs(x) > 1e-8)
		return expm1(x) / x;
	return 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}

static inline double zipf_h(const struct zipf *z, double x)
{
	return exp(-z->theta * log(x));
}

/* H(x) = (x^(1-theta) - 1) / (1 - theta), log(x) when theta = 1. */
static inline double zipf_H(const struct zipf *z, double x)
{
	double lx = log(x);

	return zipf_expm1_x((1 - z->theta) * lx) * lx;
}

static inline double zipf_H_inv(const struct zipf *z, double y)
{
	double t = y * (1 - z->theta);

	if (t < -1)	/* rounding at the end of a bounded area (theta > 1) */
		t = -1;
	return exp(zipf_log1p_x(t) * y);
}

/* Prepare to draw from [1, n] with exponent theta; n >= 1, theta >= 0. */
static inline void zipf_init(struct zipf *z, uint64_t n, double theta)
{
	z->n = n;
	z->theta = theta;
	z->h_x1 = zipf_H(z, 1.5) - 1;
	z->h_n = zipf_H(z, (double)n + 0.5);
	z->squeeze = 2 - zipf_H_inv(z, zipf_H(z, 2.5) - zipf_h(z, 2));
}

/* One draw in [1, n]. */
static inline uint64_t zipf_next(const struct zipf *z, uint64_t *state)
{
	for (;;) {
		double u = z->h_n + rng_double(state) * (z->h_x1 - z->h_n);
		double x = zipf_H_inv(z, u);
		double kd = floor(x + 0.5);
		uint64_t k;

		if (kd < 1)
			k = 1;
		else if (kd > (double)z->n)
			k = z->n;
		else
			k = (uint64_t)kd;
		if ((double)k - x <= z->squeeze ||
		    u >= zipf_H(z, (double)k + 0.5) - zipf_h(z, (double)k))
			return k;
	}
}

#endif /* USWAP_BENCH_ZIPF_H */
