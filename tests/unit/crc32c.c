/* SPDX-License-Identifier: MIT */
/*
 * Description: crc32c (src/crc32c.c) gives the known CRC-32C values, and the
 * hardware path (SSE4.2, three interleaved streams) agrees with the table
 * path on random buffers of random lengths, alignments and starting values.
 *
 *  - known vectors: "123456789" (0xE3069283), the empty string, and the
 *    iSCSI test patterns of RFC 3720 B.4 (32 bytes of 0x00, of 0xFF,
 *    ascending, descending);
 *  - chaining: crc32c(crc32c(0, a, n), a + n, m) == crc32c(0, a, n + m)
 *    at every split of a buffer;
 *  - crc32c() == crc32c_sw() on random buffers, with lengths 0..64 KiB
 *    (and every length around the stripe sizes), offsets 0..63 from an
 *    aligned base, random initial values, and on 2 MiB;
 *  - a reference: a bit-at-a-time CRC written here from the definition.
 *
 * When the CPU has no SSE4.2 both paths are the table: the test says so
 * and still checks the table against the vectors and the reference.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "unitlib.h"

#define MAX_BUF		(2u << 20)
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static uint64_t seed;		/* t_seed at the start of each case */
static uint8_t *rnd;		/* MAX_BUF + 64 random bytes */

/* The definition: reflected, polynomial 0x82F63B78, inverted in and out. */
static uint32_t crc_ref(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	return ~crc;
}

static void expect(const char *what, const void *buf, size_t len,
		   uint32_t want)
{
	uint32_t hw = crc32c(0, buf, len), sw = crc32c_sw(0, buf, len);
	uint32_t ref = crc_ref(0, buf, len);

	if (hw != want || sw != want || ref != want)
		t_fail("%s: crc32c %08x, crc32c_sw %08x, reference %08x, "
		       "expected %08x", what, hw, sw, ref, want);
}

static void test_vectors(void)
{
	uint8_t b[32];

	expect("\"123456789\"", "123456789", 9, 0xe3069283);
	expect("empty", "", 0, 0);
	memset(b, 0, sizeof(b));
	expect("32 x 0x00", b, sizeof(b), 0x8a9136aa);
	memset(b, 0xff, sizeof(b));
	expect("32 x 0xff", b, sizeof(b), 0x62a8ab43);
	for (unsigned i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	expect("0x00..0x1f", b, sizeof(b), 0x46dd794e);
	for (unsigned i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	expect("0x1f..0x00", b, sizeof(b), 0x113fdb5c);
	/* A non-zero starting value is the checksum so far. */
	if (crc32c(crc32c(0, "1234", 4), "56789", 5) != 0xe3069283 ||
	    crc32c_sw(crc32c_sw(0, "1234", 4), "56789", 5) != 0xe3069283)
		t_fail("\"1234\" + \"56789\"");
}

static void compare(const uint8_t *p, size_t len, uint32_t init)
{
	uint32_t hw = crc32c(init, p, len), sw = crc32c_sw(init, p, len);

	if (hw != sw)
		t_fail("len %zu, offset %zu, init %08x: crc32c %08x, "
		       "crc32c_sw %08x", len, (size_t)((uintptr_t)p & 63),
		       init, hw, sw);
}

static void setup(void)
{
	uint64_t s = t_seed;

	rnd = aligned_alloc(64, MAX_BUF + 64);
	if (!rnd)
		t_fail("out of memory");
	printf("crc32c: %s path\n", crc32c_hw_available() ?
	       "SSE4.2 (hardware)" : "table (no SSE4.2: both paths are the "
	       "table)");
	for (size_t i = 0; i < MAX_BUF + 64; i += 8) {
		uint64_t r = t_rand(&s);

		memcpy(rnd + i, &r, 8);
	}
}

static void teardown(void)
{
	free(rnd);
}

/* The reference agrees on a few random buffers. */
static void test_reference(void)
{
	for (unsigned k = 0; k < 50; k++) {
		size_t off = t_rand(&seed) % 64, len = t_rand(&seed) % 5000;
		uint32_t init = (uint32_t)t_rand(&seed);

		if (crc_ref(init, rnd + off, len) !=
		    crc32c_sw(init, rnd + off, len))
			t_fail("table vs reference: len %zu offset %zu", len,
			       off);
	}
}

/* Every split point of a buffer chains. */
static void test_chaining(void)
{
	for (size_t split = 0; split <= 4100; split++) {
		uint32_t whole = crc32c(0, rnd + 3, 4100);

		if (crc32c(crc32c(0, rnd + 3, split), rnd + 3 + split,
			   4100 - split) != whole)
			t_fail("chaining at %zu of 4100", split);
	}
}

static void test_hw_table(void)
{
	/* Lengths around the three-way chunks (3 x 128 and 3 x 1024 bytes). */
	static const size_t edges[] = { 8, 384, 768, 3072, 3456, 4096, 6144 };
	size_t n = 0;

	for (unsigned e = 0; e < ARRAY_LEN(edges); e++)
		for (size_t len = edges[e] - 8; len <= edges[e] + 8; len++)
			for (size_t off = 0; off < 64; off++, n++)
				compare(rnd + off, len, (uint32_t)len);
	for (unsigned k = 0; k < 4000; k++, n++) {
		size_t off = t_rand(&seed) % 64;
		size_t len = k & 1 ? t_rand(&seed) % 65537 :
				     t_rand(&seed) % 600;

		compare(rnd + off, len, (uint32_t)t_rand(&seed));
	}
	compare(rnd, MAX_BUF, 0);
	compare(rnd + 1, MAX_BUF - 1, ~0u);
	printf("crc32c: %zu buffers, hardware == table\n", n + 2);
}

static const struct t_case cases[] = {
	T_CASE(vectors, "the known values: \"123456789\", RFC 3720's patterns"),
	T_CASE(reference, "the table path agrees with a bit-at-a-time reference"),
	T_CASE(chaining, "a checksum continued at every split is the whole one"),
	T_CASE(hw_table, "the hardware path agrees with the table on random buffers"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .setup = setup, .teardown = teardown,
		.seed = 0xc4c32c, .rng = &seed,
	});
}
