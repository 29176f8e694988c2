// SPDX-License-Identifier: MIT
/*
 * compress_fuzz.c - the compressor front end (src/zswap/compress.c), the
 * same-filled test and crc32c (src/crc32c.c), driven by fuzz input.
 *
 * Input: seven header bytes, then the payload (missing bytes read as 0):
 *
 *	[0]	bits 0-1 algorithm (lz4, zstd, deflate, zstd), 2-3 the
 *		context's max_len (64K, len, len rounded up to a power of
 *		two, 2M), 4-5 the length len (4K, 64K, the payload's, [3..4]),
 *		6 padding (payload repeated, or zeros after it), 7 cap
 *		(generous, or a fraction [5] / 256 of len)
 *	[1..2]	level: lz4 1..16 or 1..65537, zstd 1..max or negative,
 *		deflate 1..9
 *	[3..4]	len when [0] says so: 1..64K
 *	[5]	cap fraction
 *	[6]	crc32c seed and split point, mem_same_filled flip position
 *
 * Checks, from what compress.h and crc32c.h promise:
 *
 *  a. the payload decompressed as an object of len bytes: 0 or -EBADMSG,
 *     no read past the payload (it ends at a PROT_NONE page), no write
 *     past dst + len (likewise) nor before dst (a canary);
 *  b. the payload, padded to len, compressed with cap: the length (1..cap)
 *     or -ENOSPC, -ENOSPC never when cap is at least len + len / 64 +
 *     1024 (more than any of the three formats' worst case), no write
 *     past dst + cap; on success it decompresses to exactly the input,
 *     and as len - 1 or len + 1 bytes it is -EBADMSG;
 *  c. crc32c() == crc32c_sw() on the payload and on the padded buffer from
 *     byte 1..7, with a seed; crc32c(crc32c(s, a), b) == crc32c(s, ab) at
 *     a split point; the check value of "123456789";
 *  d. mem_same_filled() agrees with a plain loop on the padded buffer, and
 *     is true on a buffer mem_fill_word() filled, false after one word
 *     changes;
 *  e. comp_parse() on the payload as text, up to its first NUL (control
 *     characters in the spec are escaped in the message, which stays one
 *     line): 0 with a level comp_ctx_create()
 *     accepts, or -EINVAL with a one-line message and *alg, *level
 *     untouched; the spec "NAME:LEVEL" built from the header parses back
 *     to the same algorithm and level.
 *
 * Once: comp_ctx_create() refuses levels out of range, a max_len of 0
 * and an unknown algorithm with EINVAL; comp_decompress() refuses empty
 * lengths with -EBADMSG.
 *
 * Contexts are kept (a few, by algorithm, level and max_len), so inputs
 * also run on contexts that earlier inputs used.  Any mismatch abort()s.
 * Built with tests/fuzz/replay.c by make, for libFuzzer by make fuzz.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "compress.h"
#include "crc32c.h"
#include "fuzzlib.h"

#define MAX_LEN		(64u << 10)
#define BIG_MAX_LEN	(2u << 20)
/* More than lz4, zstd or raw deflate can grow MAX_LEN + 1 bytes. */
#define BOUND(len)	((len) + (len) / 64 + 1024)
#define COMP_AREA	BOUND(MAX_LEN + 1)
#define NR_CACHED	6
#define CANARY		0xa5
#define CANARY_LEN	64


struct cached {
	struct comp_ctx *ctx;
	enum comp_alg alg;
	int level;
	size_t max_len;
};

static struct {
	uint8_t *in_end, *comp_end, *out_end;	/* each ends at a guard page */
	struct cached cache[NR_CACHED];
	unsigned next;
} fz;

/*
 * An area of size bytes (plus a canary's room) ending at a PROT_NONE
 * page: returns its end, where data placed flush against it stops.
 */
static uint8_t *guarded_area(size_t size)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (size + CANARY_LEN + page - 1) / page * page;
	uint8_t *p = mmap(NULL, len + page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	CHECK(!mprotect(p + len, page, PROT_NONE));
	return p + len;
}

/* The buffers, and the arguments every context refuses. */
static void setup(void)
{
	static const int bad_level[] = { 0, 0, 10 };	/* by algorithm */
	uint8_t b[16] = { 0 };

	if (fz.in_end)
		return;
	fz.in_end = guarded_area(MAX_LEN + 8);
	fz.comp_end = guarded_area(COMP_AREA);
	fz.out_end = guarded_area(MAX_LEN + 8);
	for (int a = COMP_LZ4; a <= COMP_DEFLATE; a++) {
		struct comp_ctx *ctx;

		errno = 0;
		CHECK(!comp_ctx_create((enum comp_alg)a, bad_level[a], 4096) &&
		      errno == EINVAL);
		errno = 0;
		CHECK(!comp_ctx_create((enum comp_alg)a, 1, 0) && errno == EINVAL);
		ctx = comp_ctx_create((enum comp_alg)a, 1, 4096);
		CHECK(ctx);
		CHECK(comp_decompress(ctx, b, 0, b, 8) == -EBADMSG);
		CHECK(comp_decompress(ctx, b, 8, b, 0) == -EBADMSG);
		comp_ctx_destroy(ctx);
	}
	errno = 0;
	CHECK(!comp_ctx_create((enum comp_alg)3, 1, 4096) && errno == EINVAL);
	CHECK(comp_ctx_create(COMP_ZSTD, ZSTD_maxCLevel() + 1, 4096) == NULL);
	CHECK(comp_ctx_create(COMP_ZSTD, ZSTD_minCLevel() - 1, 4096) == NULL);
	CHECK(comp_ctx_create(COMP_LZ4, 65538, 4096) == NULL);
	comp_ctx_destroy(NULL);
}

static void canary_set(uint8_t *dst)
{
	memset(dst - CANARY_LEN, CANARY, CANARY_LEN);
}

static void canary_check(const uint8_t *dst)
{
	for (unsigned i = 1; i <= CANARY_LEN; i++)
		CHECK(dst[-(int)i] == CANARY);
}

static struct comp_ctx *ctx_get(enum comp_alg alg, int level, size_t max_len)
{
	struct cached *c;

	for (unsigned i = 0; i < NR_CACHED; i++) {
		c = &fz.cache[i];
		if (c->ctx && c->alg == alg && c->level == level &&
		    c->max_len == max_len)
			return c->ctx;
	}
	c = &fz.cache[fz.next++ % NR_CACHED];
	comp_ctx_destroy(c->ctx);
	c->ctx = comp_ctx_create(alg, level, max_len);
	CHECK(c->ctx);
	c->alg = alg;
	c->level = level;
	c->max_len = max_len;
	return c->ctx;
}

static int pick_level(enum comp_alg alg, unsigned w)
{
	switch (alg) {
	case COMP_LZ4:
		return w & 0x8000 ? 1 + (int)(w % 65537) : 1 + (int)(w & 15);
	case COMP_ZSTD:
		if (w & 0x8000)
			return -1 - (int)((w & 0x7fff) * 5u %
					  (unsigned)-ZSTD_minCLevel());
		return 1 + (int)(w % (unsigned)ZSTD_maxCLevel());
	case COMP_DEFLATE:
		return 1 + (int)(w % 9);
	}
	return 1;
}

static size_t pick_max_len(unsigned mode, size_t len)
{
	size_t n = 1;

	switch (mode) {
	case 0:
		return MAX_LEN;
	case 1:
		return len;
	case 2:
		while (n < len)
			n *= 2;
		return n;
	default:
		return BIG_MAX_LEN;
	}
}

static size_t pick_len(unsigned mode, unsigned w, size_t psize)
{
	switch (mode) {
	case 0:
		return 4096;
	case 1:
		return MAX_LEN;
	case 2:
		return psize ? (psize < MAX_LEN ? psize : MAX_LEN) : 1;
	default:
		return 1 + w % MAX_LEN;
	}
}

static void check_message(const char *err, size_t errlen)
{
	CHECK(memchr(err, 0, errlen));
	CHECK(err[0]);
	CHECK(!strchr(err, '\n'));
}

/* e: the payload as a spec, and the header's spec built and parsed back. */
static void fuzz_parse(const uint8_t *p, size_t n, enum comp_alg alg,
		       int level)
{
	char spec[80], err[256];
	enum comp_alg a = (enum comp_alg)77;
	int l = 77777, ret;

	/* Up to the first NUL; a newline in it must not break the message. */
	n = strnlen((const char *)p, n < 64 ? n : 64);
	memcpy(spec, p, n);
	spec[n] = 0;
	ret = comp_parse(spec, &a, &l, err, sizeof(err));
	if (ret) {
		CHECK(ret == -EINVAL);
		CHECK(a == (enum comp_alg)77 && l == 77777);
		check_message(err, sizeof(err));
	} else {
		struct comp_ctx *ctx = comp_ctx_create(a, l, 4096);

		CHECK(ctx);
		comp_ctx_destroy(ctx);
		CHECK(!strncmp(spec, comp_name(a), strlen(comp_name(a))));
	}

	snprintf(spec, sizeof(spec), "%s:%d", comp_name(alg), level);
	CHECK(comp_parse(spec, &a, &l, err, sizeof(err)) == 0);
	CHECK(a == alg && l == level);
}

/* a: the payload as a compressed object of len bytes. */
static void fuzz_decompress(struct comp_ctx *ctx, const uint8_t *p,
			    size_t n, size_t len)
{
	uint8_t *src = fz.comp_end - n, *dst = fz.out_end - len;
	int ret;

	if (!n || n > COMP_AREA)
		return;
	memcpy(src, p, n);
	canary_set(dst);
	ret = comp_decompress(ctx, src, n, dst, len);
	CHECK(ret == 0 || ret == -EBADMSG);
	canary_check(dst);
}

/* b: compress the padded input, decompress it back. */
static void fuzz_round_trip(struct comp_ctx *ctx, const uint8_t *in,
			    size_t len, size_t cap)
{
	uint8_t *dst = fz.comp_end - cap, *out;
	ssize_t n;
	int ret;

	canary_set(dst);
	n = comp_compress(ctx, in, len, dst, cap);
	canary_check(dst);
	CHECK(n == -ENOSPC || (n > 0 && (size_t)n <= cap));
	CHECK(n > 0 || cap < BOUND(len));
	if (n < 0)
		return;

	/* Flush against the guard page: no read past the object. */
	memmove(fz.comp_end - n, dst, (size_t)n);
	dst = fz.comp_end - n;
	out = fz.out_end - len;
	canary_set(out);
	ret = comp_decompress(ctx, dst, (size_t)n, out, len);
	CHECK(ret == 0);
	CHECK(!memcmp(out, in, len));
	canary_check(out);

	/* Exactly len bytes, no fewer, no more. */
	out = fz.out_end - (len + 1);
	canary_set(out);
	CHECK(comp_decompress(ctx, dst, (size_t)n, out, len + 1) == -EBADMSG);
	canary_check(out);
	if (len > 1) {
		out = fz.out_end - (len - 1);
		canary_set(out);
		CHECK(comp_decompress(ctx, dst, (size_t)n, out, len - 1) ==
		      -EBADMSG);
		canary_check(out);
	}
}

/* c: the instruction and the table agree, and crc32c extends. */
static void fuzz_crc(const uint8_t *p, size_t n, const uint8_t *in,
		     size_t len, unsigned x)
{
	const uint32_t seed = x * 0x9e3779b9u;
	const size_t split = n ? x * 257 % (n + 1) : 0;
	const size_t off = len > 8 ? 1 + x % 7 : 0;

	CHECK(crc32c(0, "123456789", 9) == 0xe3069283u);
	CHECK(crc32c(0, p, n) == crc32c_sw(0, p, n));
	CHECK(crc32c(seed, p, n) == crc32c_sw(seed, p, n));
	CHECK(crc32c(crc32c(seed, p, split), p + split, n - split) ==
	      crc32c(seed, p, n));
	CHECK(crc32c(seed, in + off, len - off) ==
	      crc32c_sw(seed, in + off, len - off));
}

/* d: mem_same_filled() against a plain loop; mem_fill_word(). */
static void fuzz_same_filled(const uint8_t *in, size_t len, unsigned x)
{
	const size_t n = len / 8 * 8;
	uint8_t *buf = fz.out_end - n;	/* 8-byte aligned */
	uint64_t first, w, v = 0;
	bool same = true;

	if (!n)
		return;
	memcpy(buf, in, n);
	memcpy(&first, buf, 8);
	for (size_t i = 8; i < n && same; i += 8) {
		memcpy(&w, buf + i, 8);
		same = w == first;
	}
	CHECK(mem_same_filled(buf, n, &v) == same);
	CHECK(!same || v == first);

	canary_set(buf);
	mem_fill_word(buf, n, first);
	canary_check(buf);
	CHECK(mem_same_filled(buf, n, &v) && v == first);
	if (n >= 16) {
		buf[x % n] ^= 1 << (x % 8);
		CHECK(!mem_same_filled(buf, n, &v));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t h[7] = { 0 };
	const uint8_t *p = data + (size < sizeof(h) ? size : sizeof(h));
	const size_t n = size - (size_t)(p - data);
	enum comp_alg alg;
	size_t len, cap, max_len;
	struct comp_ctx *ctx;
	uint8_t *in;
	int level;

	setup();
	memcpy(h, data, (size_t)(p - data));
	alg = (h[0] & 3) == 3 ? COMP_ZSTD : (enum comp_alg)(h[0] & 3);
	level = pick_level(alg, h[1] | h[2] << 8);
	len = pick_len((h[0] >> 4) & 3, h[3] | h[4] << 8, n);
	max_len = pick_max_len((h[0] >> 2) & 3, len);
	cap = h[0] & 0x80 ? BOUND(len) : 1 + len * h[5] / 256;

	/* The input, padded to len, ending at the guard page. */
	in = fz.in_end - len;
	for (size_t i = 0; i < len; i++)
		in[i] = i < n ? p[i] : (h[0] & 0x40) && n ? p[i % n] : 0;

	fuzz_parse(p, n, alg, level);
	ctx = ctx_get(alg, level, max_len);
	fuzz_decompress(ctx, p, n, len);
	fuzz_round_trip(ctx, in, len, cap);
	fuzz_crc(p, n, in, len, h[6]);
	fuzz_same_filled(in, len, h[6]);
	return 0;
}
