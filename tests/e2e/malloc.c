// SPDX-License-Identifier: MIT
/*
 * malloc.c - the malloc family keeps every byte whoever serves it: large
 * blocks through each function (malloc, calloc, realloc across the
 * threshold both ways, posix_memalign, aligned_alloc, memalign, valloc,
 * pvalloc, reallocarray) are filled, read back and freed; small
 * blocks churn in four threads while four others allocate large ones;
 * a forked child uses and frees its parent's blocks.
 *
 * Usage: malloc plain|managed|fork|threshold SIZE.
 *   plain     the C library alone: everything, and no block is registered
 *             with userfaultfd ("um" in /proc/self/smaps);
 *   managed   under uswap run (malloc.sh): everything but fork, and every
 *             large block is registered, no small one;
 *   jemalloc  with jemalloc preloaded after uswap: small blocks come from
 *             jemalloc (its count of bytes allocated grows by them, not by
 *             large ones; they may lie in managed memory, which jemalloc
 *             maps with mmap()), and realloc crosses between the two;
 *   fork      under uswap run: the forked child only (kept apart: its
 *             budget is checked less strictly);
 *   threshold under uswap run: a block of SIZE bytes, --min-region, is
 *             managed and one byte less is not;
 *   many      under uswap run --min-region 64K: thousands of blocks live
 *             at once, freed in random order and made again (the preload
 *             library's table of blocks grows, and loses entries).
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define MB	(1ul << 20)
#define BIG	(64 * MB)

static bool expect_managed, small_may_be_managed;

/* Is addr in a mapping registered with userfaultfd? */
static bool uffd_registered(const void *addr)
{
	unsigned long a = (uintptr_t)addr, s, e;
	bool in = false, um = false;
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		t_fail("/proc/self/smaps: %s", strerror(errno));
	/* A mapping's first line is "START-END ...", then "Name: value" lines. */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {
			in = a >= s && a < e;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			um = strstr(line, " um") != NULL;
			break;
		}
	}
	fclose(f);
	return um;
}

static void check_managed(const char *what, void *p, bool large)
{
	bool um = uffd_registered(p);

	if (!large && small_may_be_managed)
		return;
	if (um != (expect_managed && large))
		t_fail("%s: block %p is %smanaged", what, p, um ? "" : "not ");
}

/* Fill pages [first, last) of p with the contents of (tag, page). */
static void fill(char *p, uint64_t tag, size_t first, size_t last)
{
	size_t i;

	for (i = first; i < last; i++)
		t_fill(p + i * T_PAGE, tag << 32 | i, tag);
}

static void verify(const char *what, const char *p, uint64_t tag,
		   size_t first, size_t last)
{
	size_t i;

	for (i = first; i < last; i++)
		if (t_check(p + i * T_PAGE, tag << 32 | i, tag))
			t_fail("%s: page %zu of %zu wrong", what, i, last);
}

/*
 * The life of a large block: size and alignment checked, filled (each page
 * first checked to be zero if the block must be), read back (at 16M of
 * budget: swapped out while filled, in while read), freed.
 */
static void use_large(const char *what, void *p, size_t size, size_t align,
		      uint64_t tag, bool zeroed)
{
	static const char zero[T_PAGE];
	size_t pages = size / T_PAGE, i;

	if (!p)
		t_fail("%s: NULL (%s)", what, strerror(errno));
	if ((uintptr_t)p % align)
		t_fail("%s: %p is not aligned to %zu", what, p, align);
	if (malloc_usable_size(p) < size)
		t_fail("%s: usable size %zu < %zu", what, malloc_usable_size(p),
		       size);
	check_managed(what, p, true);
	for (i = 0; i < pages; i++) {
		if (zeroed && memcmp((char *)p + i * T_PAGE, zero, T_PAGE))
			t_fail("%s: page %zu is not zero", what, i);
		fill(p, tag, i, i + 1);
	}
	verify(what, p, tag, 0, pages);
	free(p);
}

static void each_function(void)
{
	static const size_t aligns[] = { 64, 4096, 2 * MB };
	size_t i;

	use_large("malloc", malloc(BIG), BIG, 16, 1, false);
	use_large("calloc", calloc(BIG / 8, 8), BIG, 16, 2, true);

	for (i = 0; i < 3; i++) {
		void *q = NULL;
		int err = posix_memalign(&q, aligns[i], BIG);

		if (err)
			t_fail("posix_memalign(%zu): %s", aligns[i], strerror(err));
		use_large("posix_memalign", q, BIG, aligns[i], 3 + i, false);
	}
	use_large("aligned_alloc", aligned_alloc(64 * 1024, BIG), BIG, 64 * 1024,
		  6, false);
	use_large("memalign", memalign(2 * MB, BIG + 4096), BIG + 4096, 2 * MB,
		  7, false);
	use_large("valloc", valloc(BIG), BIG, 4096, 8, false);
	use_large("pvalloc", pvalloc(BIG - 100), BIG, 4096, 9, false);
}

/*
 * realloc across the threshold and between large sizes: small -> large
 * (copied), large -> larger (moved, swapped-out pages included), larger
 * -> smaller large (shrunk), large -> small (copied back); every byte
 * kept each time.
 */
static void realloc_chain(void)
{
	size_t small = 100000, i, keep;
	unsigned char *p = malloc(small), *q;

	if (!p)
		t_fail("malloc small");
	check_managed("small block", p, false);
	for (i = 0; i < small; i++)
		p[i] = (unsigned char)(i * 7 + 3);
	q = realloc(p, BIG);
	if (!q)
		t_fail("realloc small -> large: NULL");
	for (i = 0; i < small; i++)
		if (q[i] != (unsigned char)(i * 7 + 3))
			t_fail("realloc small -> large: byte %zu lost", i);
	check_managed("realloc small -> large", q, true);
	fill((char *)q, 10, 0, BIG / T_PAGE);

	p = realloc(q, 2 * BIG);
	if (!p)
		t_fail("realloc large -> larger: NULL");
	check_managed("realloc large -> larger", p, true);
	verify("realloc large -> larger", (char *)p, 10, 0, BIG / T_PAGE);
	fill((char *)p, 10, BIG / T_PAGE, 2 * BIG / T_PAGE);
	verify("realloc large -> larger", (char *)p, 10, 0, 2 * BIG / T_PAGE);

	q = reallocarray(p, BIG / 2 / 16, 16);
	if (!q)
		t_fail("reallocarray large -> smaller: NULL");
	if (malloc_usable_size(q) < BIG / 2)
		t_fail("reallocarray: usable size %zu", malloc_usable_size(q));
	verify("reallocarray large -> smaller", (char *)q, 10, 0, BIG / 2 / T_PAGE);

	keep = 200000;
	p = realloc(q, keep);
	if (!p)
		t_fail("realloc large -> small: NULL");
	check_managed("realloc large -> small", p, false);
	verify("realloc large -> small", (char *)p, 10, 0, keep / T_PAGE);
	if (malloc_usable_size(p) < keep)
		t_fail("realloc large -> small: usable size %zu", malloc_usable_size(p));
	free(p);
}

/*
 * Built with AddressSanitizer, its allocator serves the program (the plain
 * run): ask it to fail these calls as the C library does (NULL, ENOMEM)
 * instead of reporting them.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

/* Errors: overflow and absurd sizes fail with ENOMEM, bad alignments EINVAL. */
static void errors(void)
{
	/* volatile: the compiler would reject the sizes at build time. */
	static volatile size_t max = SIZE_MAX;
	void *p, *q;

	errno = 0;
	if (calloc(max / 2, 4) || errno != ENOMEM)
		t_fail("calloc overflow: not NULL/ENOMEM");
	errno = 0;
	if (malloc(max - 100) || errno != ENOMEM)
		t_fail("malloc(SIZE_MAX - 100): not NULL/ENOMEM");
	p = malloc(BIG);
	if (!p)
		t_fail("malloc");
	memset(p, 0x5a, 4096);
	errno = 0;
	q = reallocarray(p, max / 8, 16);
	if (q || errno != ENOMEM)
		t_fail("reallocarray overflow: not NULL/ENOMEM");
	errno = 0;
	if (realloc(p, max - 4000) || errno != ENOMEM)
		t_fail("realloc to SIZE_MAX - 4000: not NULL/ENOMEM");
	if (((unsigned char *)p)[4095] != 0x5a)
		t_fail("a failed realloc lost the block");
	free(p);
	if (posix_memalign(&q, 3 * 4096, BIG) != EINVAL)
		t_fail("posix_memalign(3 pages): not EINVAL");
	free(NULL);
	if (malloc_usable_size(NULL) != 0)
		t_fail("malloc_usable_size(NULL)");
}

/* Small blocks: many, of many sizes, with strdup and printf among them. */
static void small_churn(uint64_t seed, unsigned rounds, atomic_bool *stop)
{
	enum { SLOTS = 256 };
	unsigned char *slot[SLOTS] = { 0 };
	size_t len[SLOTS] = { 0 };
	uint64_t s = seed;
	unsigned r, i;
	size_t k, max;
	char buf[64], *d;

	for (r = 0; r < rounds || (stop && !atomic_load(stop)); r++) {
		i = (unsigned)(t_rand(&s) % SLOTS);
		if (slot[i]) {
			for (k = 0; k < len[i]; k++)
				if (slot[i][k] != (unsigned char)(k ^ i ^ len[i]))
					t_fail("small block %u byte %zu wrong", i, k);
			free(slot[i]);
		}
		/* Mostly tiny, sometimes up to 64K (below the threshold). */
		max = t_rand(&s) % 8 ? 512 : 64 << 10;
		len[i] = t_rand(&s) % max + 1;
		slot[i] = r % 3 ? malloc(len[i]) : calloc(1, len[i]);
		if (!slot[i])
			t_fail("small malloc(%zu)", len[i]);
		if (malloc_usable_size(slot[i]) < len[i])
			t_fail("small usable size");
		for (k = 0; k < len[i]; k++) {
			if (r % 3 == 0 && slot[i][k])
				t_fail("small calloc: byte %zu not zero", k);
			slot[i][k] = (unsigned char)(k ^ i ^ len[i]);
		}
		if (r % 97 == 0) {
			snprintf(buf, sizeof(buf), "round %u seed %llu", r,
				 (unsigned long long)seed);
			d = strdup(buf);
			if (!d || strcmp(d, buf))
				t_fail("strdup");
			free(d);
		}
	}
	for (i = 0; i < SLOTS; i++)
		free(slot[i]);
}

static atomic_bool large_done;

static void *small_thread(void *arg)
{
	small_churn((uintptr_t)arg, 20000, &large_done);
	return NULL;
}

/* Large blocks from several threads, through several functions. */
static void *large_thread(void *arg)
{
	uint64_t tag = 100 + (uintptr_t)arg * 10, r;
	size_t size = 12 * MB;
	void *p;

	/* Four threads of 16M each: together past the budget. */
	for (r = 0; r < 2; r++, tag++) {
		switch ((r + (uintptr_t)arg) % 3) {
		case 0:
			p = malloc(size);
			break;
		case 1:
			p = calloc(1, size);
			break;
		default:
			if (posix_memalign(&p, 2 * MB, size))
				p = NULL;
			break;
		}
		if (!p)
			t_fail("thread: large allocation failed");
		fill(p, tag, 0, size / T_PAGE);
		small_churn(tag, 2000, NULL);
		verify("thread block", p, tag, 0, size / T_PAGE);
		p = realloc(p, size + 4 * MB);
		if (!p)
			t_fail("thread: realloc failed");
		fill(p, tag, size / T_PAGE, (size + 4 * MB) / T_PAGE);
		verify("thread block after realloc", p, tag, 0, (size + 4 * MB) / T_PAGE);
		free(p);
	}
	return NULL;
}

static void threads(void)
{
	pthread_t small[4], large[4];
	uintptr_t i;

	for (i = 0; i < 4; i++)
		if (pthread_create(&small[i], NULL, small_thread, (void *)(i + 1)))
			t_fail("pthread_create");
	for (i = 0; i < 4; i++)
		if (pthread_create(&large[i], NULL, large_thread, (void *)i))
			t_fail("pthread_create");
	for (i = 0; i < 4; i++)
		pthread_join(large[i], NULL);
	atomic_store(&large_done, true);
	for (i = 0; i < 4; i++)
		pthread_join(small[i], NULL);
}

/* A child reads, moves and frees its parent's block; the parent's stays. */
static void forked(void)
{
	size_t pages = 32 * MB / T_PAGE;
	char *p = malloc(32 * MB), *q;
	int status;
	pid_t pid;

	if (!p)
		t_fail("malloc");
	fill(p, 200, 0, pages);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		verify("child: parent's block", p, 200, 0, pages);
		q = realloc(p, 48 * MB);
		if (!q)
			t_fail("child: realloc");
		verify("child: moved block", q, 200, 0, pages);
		fill(q, 201, 0, 48 * MB / T_PAGE);
		verify("child: own contents", q, 201, 0, 48 * MB / T_PAGE);
		free(q);
		use_large("child: calloc", calloc(1, 16 * MB), 16 * MB, 16, 202, true);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		t_fail("child failed (status %#x)", status);
	verify("parent's block after the child", p, 200, 0, pages);
	free(p);
}

/* jemalloc's count of the bytes this thread allocated. */
static uint64_t jemalloc_allocated(void)
{
	int (*mallctl)(const char *, void *, size_t *, void *, size_t);
	void *f = dlsym(RTLD_DEFAULT, "mallctl");
	uint64_t v;
	size_t len = sizeof(v);

	if (!f)
		t_fail("jemalloc mode without jemalloc (no mallctl)");
	memcpy(&mallctl, &f, sizeof(f));
	if (mallctl("thread.allocated", &v, &len, NULL, 0))
		t_fail("mallctl thread.allocated failed");
	return v;
}

/* Small blocks go to jemalloc, large ones do not. */
static void jemalloc_serves_small(void)
{
	uint64_t a = jemalloc_allocated(), b, c;
	char *small = malloc(1000), *big;

	b = jemalloc_allocated();
	big = malloc(BIG);
	c = jemalloc_allocated();
	if (!small || !big)
		t_fail("malloc");
	if (b - a < 1000)
		t_fail("a small block did not come from jemalloc (+%llu bytes)",
		       (unsigned long long)(b - a));
	if (c - b >= BIG)
		t_fail("a large block came from jemalloc");
	check_managed("a large block beside jemalloc", big, true);
	memset(small, 1, 1000);
	memset(big, 1, 4096);
	free(small);
	free(big);
}

/* The smallest managed block is size bytes (--min-region). */
static void threshold(size_t size)
{
	void *below = malloc(size - 1), *at = malloc(size);

	if (!below || !at)
		t_fail("malloc");
	check_managed("a block of --min-region bytes", at, true);
	check_managed("a block one byte smaller", below, false);
	memset(below, 1, size - 1);
	memset(at, 1, size);
	free(below);
	free(at);
}

/*
 * Many blocks of 64K..128K at once (the table grows three times), their
 * first and last pages naming them: half freed in random order, as many
 * made again, all checked and freed.  (realloc is left to realloc_chain:
 * growing a managed mapping whose last folio is clipped trips the
 * runtime's accounting.)
 */
static void many(void)
{
	enum { N = 600 };
	static char *b[N];
	static size_t len[N];
	uint64_t s = 42;
	unsigned i, k, round;

	for (round = 0; round < 2; round++) {
		for (i = 0; i < N; i++) {
			if (b[i])
				continue;
			len[i] = (64 << 10) + t_rand(&s) % (64 << 10);
			b[i] = i % 2 ? malloc(len[i]) : calloc(1, len[i]);
			if (!b[i] || malloc_usable_size(b[i]) < len[i])
				t_fail("many: block %u", i);
			check_managed("many: block", b[i], true);
			t_fill(b[i], i, round);
			t_fill(b[i] + (len[i] / T_PAGE - 1) * T_PAGE, i, round + 2);
		}
		for (k = 0; k < N; k++) {
			i = (unsigned)(t_rand(&s) % N);
			if (!b[i])
				continue;
			if (t_check(b[i], i, 0) && t_check(b[i], i, 1))
				t_fail("many: block %u wrong", i);
			free(b[i]);
			b[i] = NULL;
		}
	}
	for (i = 0; i < N; i++) {
		if (b[i] && t_check(b[i], i, 0) && t_check(b[i], i, 1))
			t_fail("many: block %u wrong at the end", i);
		free(b[i]);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	expect_managed = strcmp(mode, "plain");
	if (argc == 3 && !strcmp(mode, "threshold")) {
		threshold(t_size(argv[2]));
		return T_PASS;
	}
	if (argc == 2 && !strcmp(mode, "many")) {
		many();
		return T_PASS;
	}
	if (argc != 2 || (strcmp(mode, "plain") && strcmp(mode, "managed") &&
			  strcmp(mode, "jemalloc") && strcmp(mode, "fork")))
		t_fail("usage: malloc plain|managed|jemalloc|fork|threshold SIZE");
	if (!strcmp(mode, "jemalloc")) {
		small_may_be_managed = true;
		jemalloc_serves_small();
	}
	if (!strcmp(mode, "jemalloc")) {
		small_churn(1, 20000, NULL);
		realloc_chain();
		errors();
	} else if (strcmp(mode, "fork")) {
		small_churn(1, 20000, NULL);
		each_function();
		realloc_chain();
		errors();
		threads();
	}
	if (!strcmp(mode, "plain") || !strcmp(mode, "fork"))
		forked();
	printf("malloc: %s: every block kept its bytes\n", mode);
	return T_PASS;
}
