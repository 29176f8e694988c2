/* SPDX-License-Identifier: MIT */
/*
 * testlib.h - small helpers shared by the test programs: exit codes,
 * sizes, deterministic page contents and checks.
 */
#ifndef USWAP_TESTLIB_H
#define USWAP_TESTLIB_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uswap.h"

#define T_PASS	0
#define T_FAIL	1
#define T_SKIP	77

#define T_PAGE	4096u

static inline void t_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static inline void t_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(T_FAIL);
}

static inline void t_skip(const char *why) __attribute__((noreturn));
static inline void t_skip(const char *why)
{
	fprintf(stderr, "SKIP: %s\n", why);
	exit(T_SKIP);
}

static inline uint64_t t_size(const char *s)
{
	uint64_t v;

	if (uswap_size_parse(s, &v))
		t_fail("bad size %s", s);
	return v;
}

/* The tests' usage "[FOLIO] [COMPRESSOR|off]": folio size and pool. */
static inline void t_folio_pool_args(struct uswap_options *opt, int argc,
				     char **argv, uint64_t folio)
{
	opt->folio_size = argc > 1 ? t_size(argv[1]) : folio;
	if (argc > 2 && strcmp(argv[2], "off"))
		snprintf(opt->zswap, sizeof(opt->zswap), "%s", argv[2]);
}

/* A runtime from opt: skip when userfaultfd is unavailable, fail on errors. */
static inline struct uswap_runtime *t_runtime(const struct uswap_options *opt)
{
	struct uswap_runtime *rt;
	int err = uswap_runtime_create(opt, &rt);

	if (err == -EPERM || err == -ENOSYS)
		t_skip("userfaultfd is not available");
	if (err)
		t_fail("uswap_runtime_create: %s", strerror(-err));
	return rt;
}

/* xorshift64*: deterministic, per-thread. */
static inline uint64_t t_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/*
 * Deterministic contents of (page, version): a header naming both, then by
 * version one of four kinds, so that a compressed tier sees mixed data:
 * random (incompressible), small numbers (compresses ~3:1), a repeated
 * record (compresses well), almost all zeros.
 */
static inline void t_fill(void *p, uint64_t page, uint64_t version)
{
	uint64_t *w = p, s = page * 0x9E3779B97F4A7C15ull + version + 1;
	unsigned i;

	w[0] = page;
	w[1] = version;
	switch (version & 3) {
	case 0:
		for (i = 2; i < T_PAGE / 8; i++)
			w[i] = t_rand(&s);
		return;
	case 1:
		for (i = 2; i < T_PAGE / 8; i++)
			w[i] = t_rand(&s) & 0xff;
		return;
	case 2:
		for (i = 2; i < 10; i++)
			w[i] = t_rand(&s);
		for (; i < T_PAGE / 8; i++)
			w[i] = w[i - 8];
		return;
	default:
		memset(w + 2, 0, T_PAGE - 24);
		w[T_PAGE / 8 - 1] = s;
		return;
	}
}

/* 0 if p holds (page, version)'s contents. */
static inline int t_check(const void *p, uint64_t page, uint64_t version)
{
	uint64_t buf[T_PAGE / 8];

	t_fill(buf, page, version);
	return memcmp(p, buf, T_PAGE) != 0;
}

/* The version a page claims (its header); the header must name the page. */
static inline int t_header(const void *p, uint64_t page, uint64_t *version)
{
	const uint64_t *w = p;

	if (w[0] != page)
		return -1;
	*version = w[1];
	return 0;
}

#endif
