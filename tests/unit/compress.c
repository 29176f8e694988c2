/* SPDX-License-Identifier: MIT */
/*
 * Description: the compressor front end (src/zswap/compress.c) round-trips mixed
 * data with every compressor, refuses what does not fit, survives corrupt
 * input, parses specs, finds same-filled pages, and never calls malloc
 * after comp_ctx_create().
 *
 *  - comp_parse(): accepted specs give the right compressor and level,
 *    refused ones the right one-line message, and leave the outputs alone;
 *  - mem_same_filled() / mem_fill_word(): zero, pattern and byte-pattern
 *    buffers, and a difference in any word, including the last byte;
 *  - round trips of mixed data (bench/pagedata.h: zero, text, struct and
 *    random pages) as 4 KiB, 64 KiB and 2 MiB chunks, for several levels
 *    of each compressor; prints the ratios.  A context sized for 4 KiB
 *    makes the same bytes as one sized for 2 MiB;
 *  - -ENOSPC: random data with cap = 90% of len, caps below a page's
 *    compressed length (down to 0); the context works afterwards.  A cap
 *    of exactly the compressed length is not promised to be enough
 *    (zstd wants a little slack);
 *  - corrupt input: every truncation, a wrong len and bytes after the end
 *    are refused by every compressor; bit flips, byte overwrites and
 *    garbage never crash and return 0 or -EBADMSG.  The outcomes are
 *    counted, not judged: lz4 blocks and raw deflate carry no checksum,
 *    nor do zstd frames as uswap makes them, so all three can decode a
 *    damaged buffer into wrong bytes without noticing (which is why
 *    stored data carries a crc32c);
 *  - every buffer a compressor writes or reads ends at a PROT_NONE page,
 *    so writing past dst + cap (or dst + len) or reading past src + clen
 *    crashes the test;
 *  - no malloc: malloc and friends are interposed and counted while every
 *    compressor compresses and decompresses good, incompressible and
 *    corrupt data of every size, starting right after comp_ctx_create()
 *    (library calls that do allocate, ZSTD_compress() and compress2(),
 *    show that the counter sees the libraries).  Not under sanitizers,
 *    which own malloc themselves.
 */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>
#include <zstd.h>

#include "compress.h"
#include "unitlib.h"
#include "../../bench/pagedata.h"

#define KiB		1024ul
#define MiB		(1024ul * KiB)
#define MAX_LEN		(2 * MiB)
#define BOUND(n)	((n) + (n) / 8 + 1024)	/* room for any expansion */
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))

static const char *const specs[] = {
	"lz4", "lz4:8", "zstd:-5", "zstd:1", "zstd:3", "zstd:9",
	"deflate:1", "deflate:6", "deflate:9",
};

static uint64_t seed;		/* t_seed at the start of each case */

static struct comp_ctx *ctx_for(const char *spec, size_t max_len)
{
	enum comp_alg alg;
	char err[160];
	int level;
	struct comp_ctx *ctx;

	if (comp_parse(spec, &alg, &level, err, sizeof(err)))
		t_fail("comp_parse(%s): %s", spec, err);
	ctx = comp_ctx_create(alg, level, max_len);
	if (!ctx)
		t_fail("comp_ctx_create(%s, %zu): %s", spec, max_len,
		       strerror(errno));
	return ctx;
}

/* --- buffers that end at a PROT_NONE page ------------------------------ */

struct guarded {
	uint8_t *map, *end;
	size_t len;
};

static void guarded_init(struct guarded *g, size_t max)
{
	g->len = (max + T_PAGE - 1) / T_PAGE * T_PAGE;
	g->map = mmap(NULL, g->len + T_PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	if (mprotect(g->map + g->len, T_PAGE, PROT_NONE))
		t_fail("mprotect: %s", strerror(errno));
	g->end = g->map + g->len;
}

/* n bytes that end at the guard page. */
static uint8_t *guarded_at(const struct guarded *g, size_t n)
{
	if (n > g->len)
		t_fail("guarded buffer of %zu for %zu bytes", g->len, n);
	return g->end - n;
}

/* A copy of n bytes of src that ends at the guard page. */
static uint8_t *guarded_copy(const struct guarded *g, const void *src, size_t n)
{
	uint8_t *p = guarded_at(g, n);

	memmove(p, src, n);
	return p;
}

static struct guarded gsrc, gdst, gout;

/* --- data -------------------------------------------------------------- */

static uint8_t *mixed;		/* MAX_LEN of mixed pages */
static uint8_t *noise;		/* MAX_LEN of random bytes */

static void data_init(void)
{
	mixed = aligned_alloc(T_PAGE, MAX_LEN);
	noise = aligned_alloc(T_PAGE, MAX_LEN);
	if (!mixed || !noise)
		t_fail("out of memory");
	text_templates_init();
	for (size_t i = 0; i < MAX_LEN / UM_PAGE; i++) {
		page_fill(mixed + i * UM_PAGE, DATA_MIXED, i, 1);
		page_fill(noise + i * UM_PAGE, DATA_RANDOM, i, 1);
	}
}

/* --- comp_parse -------------------------------------------------------- */

static void parse_ok(const char *spec, enum comp_alg want_alg, int want_level)
{
	enum comp_alg alg = (enum comp_alg)-1;
	char err[160] = "";
	int level = -12345;

	if (comp_parse(spec, &alg, &level, err, sizeof(err)))
		t_fail("comp_parse(\"%s\") refused: %s", spec, err);
	if (alg != want_alg || level != want_level)
		t_fail("comp_parse(\"%s\") = %d:%d, expected %d:%d", spec, alg,
		       level, want_alg, want_level);
	if (strncmp(spec, comp_name(alg), strlen(comp_name(alg))))
		t_fail("comp_name(%d) = %s for \"%s\"", alg, comp_name(alg),
		       spec);
}

static void parse_bad(const char *spec, const char *want_err)
{
	enum comp_alg alg = (enum comp_alg)77;
	char err[256];
	int level = 12345;
	int ret;

	memset(err, 'x', sizeof(err));
	ret = comp_parse(spec, &alg, &level, err, sizeof(err));
	if (ret != -EINVAL)
		t_fail("comp_parse(\"%s\") = %d, expected -EINVAL", spec, ret);
	if (strcmp(err, want_err))
		t_fail("comp_parse(\"%s\") said\n  \"%s\"\nexpected\n  \"%s\"",
		       spec, err, want_err);
	if (alg != (enum comp_alg)77 || level != 12345)
		t_fail("comp_parse(\"%s\") changed its outputs on error", spec);
	/* A short buffer gets a cut but terminated message; none, nothing. */
	memset(err, 'x', sizeof(err));
	if (comp_parse(spec, &alg, &level, err, 8) != -EINVAL ||
	    strlen(err) != 7 || err[8] != 'x')
		t_fail("comp_parse(\"%s\") with errlen 8", spec);
	if (comp_parse(spec, &alg, &level, NULL, 0) != -EINVAL)
		t_fail("comp_parse(\"%s\") without err", spec);
}

static void test_parse(void)
{
	const int zmax = ZSTD_maxCLevel(), zmin = ZSTD_minCLevel();
	const char *all = "(expected lz4[:ACCEL], zstd[:LEVEL] or "
			  "deflate[:LEVEL])";
	char spec[64], zrange[64], want[256];

	parse_ok("lz4", COMP_LZ4, 1);
	parse_ok("lz4:1", COMP_LZ4, 1);
	parse_ok("lz4:65537", COMP_LZ4, 65537);
	parse_ok("zstd", COMP_ZSTD, 1);
	parse_ok("zstd:3", COMP_ZSTD, 3);
	parse_ok("zstd:-1", COMP_ZSTD, -1);
	parse_ok("zstd:-5", COMP_ZSTD, -5);
	parse_ok("zstd:007", COMP_ZSTD, 7);
	snprintf(spec, sizeof(spec), "zstd:%d", zmax);
	parse_ok(spec, COMP_ZSTD, zmax);
	snprintf(spec, sizeof(spec), "zstd:%d", zmin);
	parse_ok(spec, COMP_ZSTD, zmin);
	parse_ok("deflate", COMP_DEFLATE, 1);
	parse_ok("deflate:1", COMP_DEFLATE, 1);
	parse_ok("deflate:9", COMP_DEFLATE, 9);

	snprintf(zrange, sizeof(zrange), "(expected 1..%d or -1..%d)", zmax,
		 zmin);
	snprintf(want, sizeof(want), "empty compressor %s", all);
	parse_bad("", want);
	parse_bad(NULL, want);
	snprintf(want, sizeof(want), "lzo: unknown compressor \"lzo\" %s", all);
	parse_bad("lzo", want);
	snprintf(want, sizeof(want), "ZSTD: unknown compressor \"ZSTD\" %s",
		 all);
	parse_bad("ZSTD", want);
	snprintf(want, sizeof(want), "lz4hc:3: unknown compressor \"lz4hc\" %s",
		 all);
	parse_bad("lz4hc:3", want);
	snprintf(want, sizeof(want), ":3: unknown compressor \"\" %s", all);
	parse_bad(":3", want);

	snprintf(want, sizeof(want), "zstd:99: level 99 is out of range %s",
		 zrange);
	parse_bad("zstd:99", want);
	snprintf(want, sizeof(want), "zstd:0: level 0 is out of range %s",
		 zrange);
	parse_bad("zstd:0", want);
	snprintf(spec, sizeof(spec), "zstd:%d", zmax + 1);
	snprintf(want, sizeof(want), "%s: level %d is out of range %s", spec,
		 zmax + 1, zrange);
	parse_bad(spec, want);
	snprintf(spec, sizeof(spec), "zstd:%d", zmin - 1);
	snprintf(want, sizeof(want), "%s: level %d is out of range %s", spec,
		 zmin - 1, zrange);
	parse_bad(spec, want);
	snprintf(want, sizeof(want), "zstd:99999999999999999999999: level "
		 "99999999999999999999999 is out of range %s", zrange);
	parse_bad("zstd:99999999999999999999999", want);
	snprintf(want, sizeof(want), "zstd:: missing level after ':' %s",
		 zrange);
	parse_bad("zstd:", want);
	snprintf(want, sizeof(want), "zstd:fast: level \"fast\" is not a "
		 "number %s", zrange);
	parse_bad("zstd:fast", want);
	snprintf(want, sizeof(want), "zstd:3x: level \"3x\" is not a number %s",
		 zrange);
	parse_bad("zstd:3x", want);
	snprintf(want, sizeof(want), "zstd:+3: level \"+3\" is not a number %s",
		 zrange);
	parse_bad("zstd:+3", want);
	snprintf(want, sizeof(want), "zstd: 3: level \" 3\" is not a number %s",
		 zrange);
	parse_bad("zstd: 3", want);
	snprintf(want, sizeof(want), "zstd:-: level \"-\" is not a number %s",
		 zrange);
	parse_bad("zstd:-", want);
	snprintf(want, sizeof(want), "zstd:3:4: level \"3:4\" is not a "
		 "number %s", zrange);
	parse_bad("zstd:3:4", want);

	parse_bad("deflate:0", "deflate:0: level 0 is out of range "
		  "(expected 1..9)");
	parse_bad("deflate:10", "deflate:10: level 10 is out of range "
		  "(expected 1..9)");
	parse_bad("deflate:-1", "deflate:-1: level -1 is out of range "
		  "(expected 1..9)");
	parse_bad("lz4:0", "lz4:0: acceleration 0 is out of range "
		  "(expected 1..65537)");
	parse_bad("lz4:65538", "lz4:65538: acceleration 65538 is out of range "
		  "(expected 1..65537)");
	parse_bad("lz4:", "lz4:: missing acceleration after ':' "
		  "(expected 1..65537)");

	if (strcmp(comp_name(COMP_LZ4), "lz4") ||
	    strcmp(comp_name(COMP_ZSTD), "zstd") ||
	    strcmp(comp_name(COMP_DEFLATE), "deflate"))
		t_fail("comp_name");

	/* A level comp_parse() refuses, or no length, makes no context. */
	errno = 0;
	if (comp_ctx_create(COMP_ZSTD, 0, T_PAGE) || errno != EINVAL ||
	    comp_ctx_create(COMP_DEFLATE, 10, T_PAGE) ||
	    comp_ctx_create(COMP_LZ4, 0, T_PAGE) ||
	    comp_ctx_create(COMP_LZ4, 1, 0) ||
	    comp_ctx_create((enum comp_alg)3, 1, T_PAGE))
		t_fail("comp_ctx_create accepted a bad argument");
	printf("comp_parse: ok\n");
}

/* --- same-filled pages ------------------------------------------------- */

static void same(const void *buf, size_t len, bool want, uint64_t want_value,
		 const char *what)
{
	uint64_t v = ~want_value;

	if (mem_same_filled(buf, len, &v) != want)
		t_fail("mem_same_filled(%s, %zu) != %d", what, len, want);
	if (want && v != want_value)
		t_fail("mem_same_filled(%s): value %#llx, expected %#llx", what,
		       (unsigned long long)v, (unsigned long long)want_value);
}

static void test_same_filled(void)
{
	static uint64_t page[T_PAGE / 8];
	const uint64_t pat = 0x0123456789abcdefull;
	uint8_t *b = (uint8_t *)page;
	uint8_t *big = guarded_at(&gdst, MAX_LEN);

	memset(page, 0, sizeof(page));
	same(page, T_PAGE, true, 0, "zero page");
	mem_fill_word(page, T_PAGE, pat);
	for (size_t i = 0; i < T_PAGE / 8; i++)
		if (page[i] != pat)
			t_fail("mem_fill_word: word %zu", i);
	same(page, T_PAGE, true, pat, "pattern page");
	memset(page, 0xab, sizeof(page));
	same(page, T_PAGE, true, 0xababababababababull, "0xab page");

	/* One byte different in any word, zero and pattern pages alike. */
	for (int p = 0; p < 2; p++) {
		const uint64_t v = p ? pat : 0;

		/* (every byte near the ends, a sample in between) */
		for (size_t i = 0; i < T_PAGE;
		     i += i < 64 || i > T_PAGE - 64 ? 1 : 61) {
			mem_fill_word(page, T_PAGE, v);
			b[i] ^= 0x10;
			same(page, T_PAGE, false, 0, "page with one byte off");
		}
	}
	mem_fill_word(page, T_PAGE, pat);
	b[T_PAGE - 1] ^= 1;
	same(page, T_PAGE, false, 0, "last byte off");

	/* Short lengths: the tail after the 4-word steps. */
	for (size_t len = 8; len <= 72; len += 8) {
		mem_fill_word(page, len, pat);
		same(page, len, true, pat, "short buffer");
		/* (the first word is the value: a lone word is same-filled) */
		for (size_t i = len == 8 ? 8 : 0; i < len; i++) {
			mem_fill_word(page, len, pat);
			b[i] ^= 0x80;
			same(page, len, false, 0, "short buffer, one byte off");
		}
	}

	mem_fill_word(big, MAX_LEN, 0);
	same(big, MAX_LEN, true, 0, "2 MiB of zeros");
	big[MAX_LEN - 1] = 1;
	same(big, MAX_LEN, false, 0, "2 MiB, last byte off");
	mem_fill_word(big, MAX_LEN, ~0ull);
	same(big, MAX_LEN, true, ~0ull, "2 MiB of ones");
	printf("mem_same_filled: ok\n");
}

/* --- round trips ------------------------------------------------------- */

/* Compress and decompress one chunk; returns the compressed length. */
static size_t round_trip(struct comp_ctx *ctx, const char *spec,
			 const uint8_t *src, size_t len, uint8_t *copy)
{
	uint8_t *dst = guarded_at(&gdst, BOUND(len)), *c, *out;
	ssize_t n = comp_compress(ctx, src, len, dst, BOUND(len));
	int ret;

	if (n <= 0)
		t_fail("%s: compress %zu bytes: %zd", spec, len, n);
	if (copy)
		memcpy(copy, dst, (size_t)n);
	c = guarded_copy(&gsrc, dst, (size_t)n);
	out = guarded_at(&gout, len);
	memset(out, 0x5a, len);
	ret = comp_decompress(ctx, c, (size_t)n, out, len);
	if (ret)
		t_fail("%s: decompress %zd -> %zu bytes: %d", spec, n, len,
		       ret);
	if (memcmp(out, src, len))
		t_fail("%s: %zu bytes came back different", spec, len);
	return (size_t)n;
}

static void test_round_trips(void)
{
	static const size_t sizes[] = { 4 * KiB, 64 * KiB, 2 * MiB };
	uint8_t *small_out = malloc(BOUND(T_PAGE));
	uint8_t *big_out = malloc(BOUND(MAX_LEN));

	printf("\nratios on mixed data (input / compressed; chunks over 90%% "
	       "of their size in brackets)\n%-10s", "");
	for (unsigned s = 0; s < ARRAY_LEN(sizes); s++)
		printf("  %14zu KiB", sizes[s] / KiB);
	printf("\n");
	for (unsigned i = 0; i < ARRAY_LEN(specs); i++) {
		struct comp_ctx *ctx = ctx_for(specs[i], MAX_LEN);
		struct comp_ctx *small = ctx_for(specs[i], T_PAGE);

		printf("%-10s", specs[i]);
		for (unsigned s = 0; s < ARRAY_LEN(sizes); s++) {
			const size_t len = sizes[s];
			size_t in = 0, out = 0, big_chunks = 0;

			for (size_t off = 0; off < MAX_LEN; off += len) {
				size_t n = round_trip(ctx, specs[i],
						      mixed + off, len,
						      big_out);

				in += len;
				out += n;
				big_chunks += n > len / 10 * 9;
				if (len != T_PAGE)
					continue;
				/* A context sized for a page: same bytes. */
				if (round_trip(small, specs[i], mixed + off,
					       len, small_out) != n ||
				    memcmp(small_out, big_out, n))
					t_fail("%s: 4 KiB context differs",
					       specs[i]);
			}
			printf("  %6.2f [%3zu/%3zu]", (double)in / (double)out,
			       big_chunks, MAX_LEN / len);
		}
		printf("\n");
		comp_ctx_destroy(small);
		comp_ctx_destroy(ctx);
	}
	free(small_out);
	free(big_out);
	printf("\n");
}

/* --- -ENOSPC ----------------------------------------------------------- */

static void test_enospc(void)
{
	static const size_t sizes[] = { 4 * KiB, 64 * KiB, 2 * MiB };

	for (unsigned i = 0; i < ARRAY_LEN(specs); i++) {
		struct comp_ctx *ctx = ctx_for(specs[i], MAX_LEN);

		for (unsigned s = 0; s < ARRAY_LEN(sizes); s++) {
			const size_t len = sizes[s], cap = len / 10 * 9;
			uint8_t *dst = guarded_at(&gdst, cap);
			ssize_t n = comp_compress(ctx, noise, len, dst, cap);

			if (n != -ENOSPC)
				t_fail("%s: random %zu bytes in %zu: %zd",
				       specs[i], len, cap, n);
			/* The context is fine after a failure. */
			round_trip(ctx, specs[i], mixed, len, NULL);
		}

		/*
		 * Every cap short of a page's compressed size fails cleanly.
		 * (Its own size need not be enough: zstd wants some slack.)
		 */
		for (size_t p = 0; p < 24; p++) {
			const uint8_t *src = mixed + p * T_PAGE;
			uint64_t v;
			size_t n;

			if (mem_same_filled(src, T_PAGE, &v))
				continue;
			n = round_trip(ctx, specs[i], src, T_PAGE, NULL);
			for (size_t cap = 0; cap < n;
			     cap += cap < 16 ? 1 : 97) {
				uint8_t *dst = guarded_at(&gdst, cap);
				ssize_t r = comp_compress(ctx, src, T_PAGE, dst,
							  cap);

				if (r != -ENOSPC)
					t_fail("%s: page %zu (%zu bytes) in "
					       "%zu: %zd", specs[i], p, n, cap,
					       r);
			}
			if (comp_compress(ctx, src, T_PAGE,
					  guarded_at(&gdst, n - 1),
					  n - 1) != -ENOSPC)
				t_fail("%s: page %zu (%zu bytes) in one less",
				       specs[i], p, n);
		}
		comp_ctx_destroy(ctx);
	}
	printf("-ENOSPC: ok\n");
}

/* --- corrupt input ----------------------------------------------------- */

struct outcome {
	unsigned long trials, refused, wrong, same;
};

/* Decompress a damaged copy; it may fail or succeed, but not crash. */
static void try_damaged(struct comp_ctx *ctx, const char *spec,
			const uint8_t *bad, size_t clen, const uint8_t *orig,
			size_t len, struct outcome *o)
{
	const uint8_t *c = guarded_copy(&gsrc, bad, clen);
	uint8_t *out = guarded_at(&gout, len);
	int ret = comp_decompress(ctx, c, clen, out, len);

	o->trials++;
	if (ret == -EBADMSG)
		o->refused++;
	else if (ret)
		t_fail("%s: damaged input: %d", spec, ret);
	else if (memcmp(out, orig, len))
		o->wrong++;
	else
		o->same++;
}

static void must_refuse(struct comp_ctx *ctx, const char *spec,
			const uint8_t *c, size_t clen, size_t len,
			const char *what)
{
	uint8_t *cc = guarded_copy(&gsrc, c, clen);
	int ret = comp_decompress(ctx, cc, clen, guarded_at(&gout, len), len);

	if (ret != -EBADMSG)
		t_fail("%s: %s (clen %zu, len %zu): %d", spec, what, clen, len,
		       ret);
}

static void corrupt_one(struct comp_ctx *ctx, const char *spec,
			const uint8_t *src, size_t len, struct outcome *o)
{
	uint8_t *good = malloc(BOUND(len)), *bad = malloc(2 * BOUND(len));
	const size_t wrong_lens[] = { len - 1, len + 1, len - 8, len + 8,
				      len / 2, 2 * len, 1 };
	size_t n = round_trip(ctx, spec, src, len, good);
	/* Every bit of a small buffer; samples of a large one. */
	const unsigned trials = len > T_PAGE ? 300 : 1000;
	size_t bits = n * 8, flips = bits <= 16000 ? bits : 3 * trials;

	if (!good || !bad)
		t_fail("out of memory");
	for (size_t k = 0; k < n; k++)
		must_refuse(ctx, spec, good, k, len, "truncated");
	for (unsigned k = 0; k < ARRAY_LEN(wrong_lens); k++)
		must_refuse(ctx, spec, good, n, wrong_lens[k], "wrong len");

	/* One bit flipped. */
	for (size_t k = 0; k < flips; k++) {
		size_t bit = flips == bits ? k : t_rand(&seed) % bits;

		memcpy(bad, good, n);
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		try_damaged(ctx, spec, bad, n, src, len, o);
	}
	/* A few bytes overwritten. */
	for (unsigned k = 0; k < trials; k++) {
		unsigned nr = 1 + (unsigned)(t_rand(&seed) % 8);

		memcpy(bad, good, n);
		while (nr--)
			bad[t_rand(&seed) % n] = (uint8_t)t_rand(&seed);
		try_damaged(ctx, spec, bad, n, src, len, o);
	}
	/* Garbage, alone and after the first bytes of a good buffer. */
	for (unsigned k = 0; k < trials; k++) {
		size_t glen = 1 + t_rand(&seed) % (2 * n);
		size_t keep = k & 1 ? MIN(t_rand(&seed) % 16, glen) : 0;

		for (size_t j = 0; j < glen; j++)
			bad[j] = (uint8_t)t_rand(&seed);
		memcpy(bad, good, keep);
		try_damaged(ctx, spec, bad, glen, src, len, o);
	}
	/* Good data followed by more: twice over, or one more byte. */
	memcpy(bad, good, n);
	memcpy(bad + n, good, n);
	must_refuse(ctx, spec, bad, 2 * n, len, "data after the end");
	for (unsigned k = 0; k < 256; k += 51) {
		bad[n] = (uint8_t)k;
		must_refuse(ctx, spec, bad, n + 1, len, "a byte after the end");
	}
	free(good);
	free(bad);
}

static void test_corrupt(void)
{
	static const char *const algs[] = { "lz4", "zstd:1", "deflate:1" };

	printf("damaged input (trials: refused / decoded wrong bytes / "
	       "decoded the original):\n");
	for (unsigned i = 0; i < ARRAY_LEN(algs); i++) {
		struct comp_ctx *ctx = ctx_for(algs[i], MAX_LEN);
		struct outcome o = { 0 };
		unsigned pages = 0;

		for (size_t p = 0; p < MAX_LEN / T_PAGE && pages < 2; p++) {
			const uint8_t *src = mixed + p * T_PAGE;
			uint64_t v;

			/* The first two pages that compress (text or struct). */
			if (mem_same_filled(src, T_PAGE, &v) ||
			    page_kind(DATA_MIXED, page_hash(p, 1)) ==
			    KIND_RANDOM)
				continue;
			corrupt_one(ctx, algs[i], src, T_PAGE, &o);
			pages++;
		}
		corrupt_one(ctx, algs[i], mixed, 64 * KiB, &o);
		corrupt_one(ctx, algs[i], noise, T_PAGE, &o);
		printf("  %-10s %7lu: %7lu / %6lu / %6lu\n", algs[i], o.trials,
		       o.refused, o.wrong, o.same);
		/* The context still works. */
		round_trip(ctx, algs[i], mixed, 64 * KiB, NULL);
		comp_ctx_destroy(ctx);
	}
	printf("  (every truncation, wrong length and trailing byte "
	       "refused)\n");
}

/* --- no malloc --------------------------------------------------------- */

#if !T_SANITIZED
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t nmemb, size_t n);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);

static _Atomic bool counting;
static _Atomic unsigned long nr_allocs;

static void count_alloc(void)
{
	if (atomic_load_explicit(&counting, memory_order_relaxed))
		atomic_fetch_add_explicit(&nr_allocs, 1, memory_order_relaxed);
}

void *malloc(size_t n)
{
	count_alloc();
	return __libc_malloc(n);
}

void *calloc(size_t nmemb, size_t n)
{
	count_alloc();
	return __libc_calloc(nmemb, n);
}

void *realloc(void *p, size_t n)
{
	count_alloc();
	return __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
	count_alloc();
	return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	count_alloc();
	return __libc_memalign(align, n);
}

int posix_memalign(void **pp, size_t align, size_t n)
{
	void *p;

	count_alloc();
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*pp = p;
	return 0;
}

static unsigned long count_stop(void)
{
	atomic_store(&counting, false);
	return atomic_exchange(&nr_allocs, 0);
}

static void count_start(void)
{
	atomic_store(&nr_allocs, 0);
	atomic_store(&counting, true);
}

/* Everything the fault path and the reclaimer do with a context. */
static void exercise(struct comp_ctx *ctx, uint8_t *dst, uint8_t *out)
{
	static const size_t sizes[] = { 4 * KiB, 64 * KiB, 2 * MiB };
	unsigned long bad = 0;

	for (unsigned s = 0; s < ARRAY_LEN(sizes); s++) {
		const size_t len = sizes[s];

		for (size_t off = 0; off < MAX_LEN; off += len) {
			ssize_t n = comp_compress(ctx, mixed + off, len, dst,
						  BOUND(len));

			if (n <= 0) {
				bad++;
				continue;
			}
			bad += !!comp_decompress(ctx, dst, (size_t)n, out,
						 len);
			/* Corrupt: truncated, flipped, garbage, wrong len. */
			comp_decompress(ctx, dst, (size_t)n / 2, out, len);
			dst[n / 3] ^= 4;
			comp_decompress(ctx, dst, (size_t)n, out, len);
			comp_decompress(ctx, noise, (size_t)n, out, len);
			comp_decompress(ctx, dst, (size_t)n, out, len / 2);
			if (off >= 8 * len)
				break;
		}
		bad += comp_compress(ctx, noise, len, dst, len / 10 * 9) !=
		       -ENOSPC;
	}
	if (bad)
		t_fail("no-malloc run: %lu unexpected results", bad);
}

static void test_no_malloc(void)
{
	uint8_t *dst = malloc(BOUND(MAX_LEN)), *out = malloc(MAX_LEN);
	struct comp_ctx *ctx[ARRAY_LEN(specs)];
	unsigned long n;
	size_t zlen = BOUND(T_PAGE);
	uLongf dlen = BOUND(T_PAGE);

	/* The counter sees allocations made inside the libraries. */
	count_start();
	ZSTD_compress(dst, zlen, mixed, T_PAGE, 1);
	n = count_stop();
	count_start();
	compress2(dst, &dlen, mixed, T_PAGE, 1);
	if (!n || !count_stop())
		t_fail("malloc interposition does not see libzstd or zlib");

	count_start();
	for (unsigned i = 0; i < ARRAY_LEN(specs); i++)
		ctx[i] = ctx_for(specs[i], MAX_LEN);
	n = count_stop();
	if (n)
		t_fail("comp_ctx_create called malloc %lu times", n);

	/* From the first use on: no warm-up needed. */
	for (unsigned i = 0; i < ARRAY_LEN(specs); i++) {
		count_start();
		exercise(ctx[i], dst, out);
		n = count_stop();
		if (n)
			t_fail("%s: %lu allocations while compressing",
			       specs[i], n);
	}
	for (unsigned i = 0; i < ARRAY_LEN(specs); i++)
		comp_ctx_destroy(ctx[i]);
	free(dst);
	free(out);
	printf("no malloc after comp_ctx_create: ok\n");
}
#else
static void test_no_malloc(void)
{
	t_skip_case("the sanitizer owns malloc: no count of allocations");
}
#endif

static void setup(void)
{
	guarded_init(&gsrc, 2 * BOUND(MAX_LEN));
	guarded_init(&gdst, 2 * BOUND(MAX_LEN));
	guarded_init(&gout, 2 * BOUND(MAX_LEN));
	data_init();
}

static void teardown(void)
{
	free(mixed);
	free(noise);
}

static const struct t_case cases[] = {
	T_CASE(parse, "comp_parse(): accepted and refused specs, outputs left alone"),
	T_CASE(same_filled, "mem_same_filled(): same-filled buffers, a difference anywhere"),
	T_CASE(round_trips, "mixed data round-trips through every compressor and level"),
	T_CASE(enospc, "-ENOSPC when the output does not fit; the context works after"),
	T_CASE(corrupt, "damaged input is refused or decoded, never a crash"),
	T_CASE(no_malloc, "no malloc after comp_ctx_create()"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .setup = setup, .teardown = teardown,
		.seed = 0x5eed, .rng = &seed,
	});
}
