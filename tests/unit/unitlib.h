/* SPDX-License-Identifier: MIT */
/*
 * unitlib.h - the named cases of a unit test program.
 *
 * A unit test (tests/unit/NAME.c) is a table of cases, each a function
 * that checks one behaviour and returns when it holds; a failed check
 * calls t_fail() (exit 1), a program that cannot run at all t_skip()
 * (exit 77), and a case that cannot run here t_skip_case() and returns:
 *
 *	static const struct t_case cases[] = {
 *		T_CASE(parse, "comp_parse(): accepted and refused specs"),
 *		T_CASE(corrupt, "damaged input is refused or decoded, never a crash"),
 *		{ 0 }
 *	};
 *
 *	int main(int argc, char **argv)
 *	{
 *		return t_main(argc, argv, &(struct t_suite){ .cases = cases });
 *	}
 *
 * T_CASE(parse, ...) names test_parse().  The program then takes:
 *
 *	NAME                 every case, in the table's order
 *	NAME CASE...         these cases, in the order given
 *	NAME --list          the names of the cases, one a line
 *	NAME --help          the cases and what each checks
 *	NAME --seed N ...    a randomized test's seed (decimal or 0x hex)
 *
 * and exits 0 when every case it ran passed, 77 when every one skipped,
 * 2 on a bad argument.  tests/run runs each case as a process of its
 * own (unit/NAME:CASE).
 *
 * A randomized test gives its default seed in the suite (a constant, or
 * T_SEED_CLOCK for a new one every run), reads it in t_seed, and names
 * its generator's state in .rng: the harness sets it to the seed before
 * every case, so that a case run alone draws the same numbers as in a
 * run of all of them, and prints the command line that repeats a run.
 */
#ifndef USWAP_UNITLIB_H
#define USWAP_UNITLIB_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

/* Which sanitizer the test is built with (0 or 1), with gcc and clang. */
#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN		1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN		1
#endif
#endif
#ifndef T_ASAN
#define T_ASAN		0
#endif
#if defined(__SANITIZE_THREAD__)
#define T_TSAN		1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN		1
#endif
#endif
#ifndef T_TSAN
#define T_TSAN		0
#endif
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define T_MSAN		1
#endif
#endif
#ifndef T_MSAN
#define T_MSAN		0
#endif
#define T_SANITIZED	(T_ASAN || T_TSAN || T_MSAN)

struct t_case {
	const char *name;
	void (*run)(void);
	const char *desc;	/* one line: what the case checks */
};

#define T_CASE(name, desc)	{ #name, test_##name, desc }

/* A new seed every run, from the clock and the pid. */
#define T_SEED_CLOCK	UINT64_MAX

struct t_suite {
	const struct t_case *cases;	/* ends with { 0 } */
	void (*setup)(void);		/* before the first case */
	void (*teardown)(void);		/* after the last, when all passed */
	uint64_t seed;			/* default; 0: the test takes none */
	uint64_t *rng;			/* set to t_seed before every case */
};

static uint64_t t_seed;
static bool t_case_skipped;

/*
 * The running case cannot check what it is for here (a kernel feature,
 * a privilege): say why; the caller returns.  The other cases still run.
 */
static inline void t_skip_case(const char *why)
{
	printf("SKIP: %s\n", why);
	t_case_skipped = true;
}

static inline const struct t_case *t_case_find(const struct t_suite *s,
					       const char *name)
{
	const struct t_case *c;

	for (c = s->cases; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static inline void t_usage(FILE *f, const char *prog, const struct t_suite *s)
{
	const struct t_case *c;

	fprintf(f, "usage: %s %s[--list | --help | CASE...]\ncases:\n", prog,
		s->seed ? "[--seed N] " : "");
	for (c = s->cases; c->name; c++)
		fprintf(f, "  %-22s %s\n", c->name, c->desc);
}

static inline uint64_t t_seed_new(void)
{
	struct timespec ts;
	uint64_t seed;

	clock_gettime(CLOCK_REALTIME, &ts);
	seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
	       (uint64_t)getpid();
	return seed ? seed : 1;
}

/* Run case c; true when it skipped. */
static inline bool t_case_run(const struct t_suite *s, const struct t_case *c)
{
	printf("== %s: %s\n", c->name, c->desc);
	if (s->rng)
		*s->rng = t_seed;
	t_case_skipped = false;
	c->run();
	return t_case_skipped;
}

/* Run the cases argv names (all without names); returns the exit status. */
static inline int t_main(int argc, char **argv, const struct t_suite *s)
{
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 :
						     argv[0];
	int i, first, nr = 0, skipped = 0;
	const struct t_case *c;
	char *end;

	for (first = 1; first < argc && argv[first][0] == '-'; first++) {
		if (!strcmp(argv[first], "--list")) {
			for (c = s->cases; c->name; c++)
				printf("%s\n", c->name);
			return T_PASS;
		}
		if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
			t_usage(stdout, prog, s);
			return T_PASS;
		}
		if (!strcmp(argv[first], "--seed") && s->seed && first + 1 < argc) {
			errno = 0;
			t_seed = strtoull(argv[++first], &end, 0);
			if (errno || *end || end == argv[first] || !t_seed) {
				fprintf(stderr, "%s: --seed %s: expected a number "
					"other than 0\n", prog, argv[first]);
				return 2;
			}
			continue;
		}
		fprintf(stderr, "%s: unknown option %s\n", prog, argv[first]);
		t_usage(stderr, prog, s);
		return 2;
	}
	for (i = first; i < argc; i++)
		if (!t_case_find(s, argv[i])) {
			fprintf(stderr, "%s: no case named %s\n", prog, argv[i]);
			t_usage(stderr, prog, s);
			return 2;
		}

	/* A case's output comes in order with its FAIL line (stderr). */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (s->seed && !t_seed)
		t_seed = s->seed == T_SEED_CLOCK ? t_seed_new() : s->seed;
	if (s->seed) {
		printf("%s: seed %" PRIu64 " (again: %s --seed %" PRIu64, prog,
		       t_seed, argv[0], t_seed);
		for (i = first; i < argc; i++)
			printf(" %s", argv[i]);
		printf(")\n");
	}
	if (s->setup)
		s->setup();
	if (first < argc) {
		for (i = first; i < argc; i++, nr++)
			skipped += t_case_run(s, t_case_find(s, argv[i]));
	} else {
		for (c = s->cases; c->name; c++, nr++)
			skipped += t_case_run(s, c);
	}
	if (s->teardown)
		s->teardown();
	printf("%s: %d of %d cases passed, %d skipped\n", prog, nr - skipped,
	       nr, skipped);
	return nr && skipped == nr ? T_SKIP : T_PASS;
}

#endif
