// SPDX-License-Identifier: MIT
/*
 * crc32c.c - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), by the
 * SSE4.2 crc32 instruction when the CPU has it, by table otherwise.
 *
 * The arithmetic.  Without its pre- and post-inversion a CRC is a state c,
 * a polynomial of degree < 32 over GF(2) (stored reflected: bit 31 is the
 * x^0 coefficient), and feeding a zero bit multiplies it by x modulo P.
 * So feeding a string B of n bytes into state c gives
 *
 *	raw(c, B) = c * x^(8n) mod P  xor  raw(0, B)
 *
 * which is what makes the hardware path fast.  One crc32 instruction
 * takes three cycles but a new one can start every cycle, so a chunk of
 * three stripes A, B, C of s bytes each is checksummed as three
 * independent streams, c0 = raw(c, A), c1 = raw(0, B), c2 = raw(0, C),
 * and joined with two multiplications by the constant x^(8s):
 *
 *	raw(c, ABC) = ((c0 * x^8s) ^ c1) * x^8s ^ c2
 *
 * Multiplying by a constant is linear, so it is four lookups in tables
 * made at first use (one set per stripe length: a long one for bulk data,
 * a short one for what is left of a page).  The tail shorter than three
 * short stripes goes through one stream.
 *
 * The software path is the table-driven "slicing by 8": one lookup per
 * byte, eight bytes a step, each table the previous one advanced by a
 * zero byte.
 */
#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define CRC32C_HAVE_HW	1
#endif

#include "crc32c.h"

#define CRC32C_POLY	0x82f63b78u
#define X0		0x80000000u	/* the polynomial 1, reflected */
#define X1		0x40000000u	/* x */
#define STRIPE_LONG	1024
#define STRIPE_SHORT	128

/* Written once under crc32c_once, read-only afterwards. */
static struct {
	uint32_t sw[8][256];		/* [k][b]: byte b, then k zero bytes */
	uint32_t shift_long[4][256];	/* times x^(8 * STRIPE_LONG) */
	uint32_t shift_short[4][256];	/* times x^(8 * STRIPE_SHORT) */
	bool hw;
} crc32c_tab;
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;

/* a * b mod P, reflected. */
static uint32_t gf2_mulmod(uint32_t a, uint32_t b)
{
	uint32_t prod = 0;

	/* Bit 31 of a is its x^0 coefficient; b steps through b * x^i. */
	for (int i = 31; i >= 0; i--) {
		if ((a >> i) & 1)
			prod ^= b;
		b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
	}
	return prod;
}

/* x^n mod P, by squaring. */
static uint32_t gf2_xpow(uint64_t n)
{
	uint32_t r = X0, sq = X1;

	for (; n; n >>= 1) {
		if (n & 1)
			r = gf2_mulmod(r, sq);
		sq = gf2_mulmod(sq, sq);
	}
	return r;
}

static void shift_table_init(uint32_t t[4][256], size_t bytes)
{
	const uint32_t k = gf2_xpow(8 * (uint64_t)bytes);

	for (unsigned i = 0; i < 4; i++)
		for (unsigned b = 0; b < 256; b++)
			t[i][b] = gf2_mulmod((uint32_t)b << (8 * i), k);
}

static void crc32c_init(void)
{
	for (unsigned b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int i = 0; i < 8; i++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc32c_tab.sw[0][b] = c;
	}
	for (unsigned k = 1; k < 8; k++)
		for (unsigned b = 0; b < 256; b++) {
			uint32_t c = crc32c_tab.sw[k - 1][b];

			c = (c >> 8) ^ crc32c_tab.sw[0][c & 0xff];
			crc32c_tab.sw[k][b] = c;
		}
	shift_table_init(crc32c_tab.shift_long, STRIPE_LONG);
	shift_table_init(crc32c_tab.shift_short, STRIPE_SHORT);
#ifdef CRC32C_HAVE_HW
	__builtin_cpu_init();
	crc32c_tab.hw = __builtin_cpu_supports("sse4.2");
#endif
}

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* --- software ---------------------------------------------------------- */

static uint32_t sw_update(uint32_t c, const unsigned char *p, size_t len)
{
	const uint32_t (*t)[256] = crc32c_tab.sw;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w = load64(p) ^ c;

		c = t[7][w & 0xff] ^ t[6][(w >> 8) & 0xff] ^
		    t[5][(w >> 16) & 0xff] ^ t[4][(w >> 24) & 0xff] ^
		    t[3][(w >> 32) & 0xff] ^ t[2][(w >> 40) & 0xff] ^
		    t[1][(w >> 48) & 0xff] ^ t[0][w >> 56];
	}
#endif
	while (len--)
		c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
	return c;
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc32c_once, crc32c_init);
	return ~sw_update(~crc, buf, len);
}

/* --- hardware ---------------------------------------------------------- */

#ifdef CRC32C_HAVE_HW
/* c * x^(8 * stripe) mod P, by the stripe's table. */
static inline uint32_t shift_by(const uint32_t t[4][256], uint32_t c)
{
	return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^
	       t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

/* raw(c, p[0 .. 3 * stripe)), as three streams joined (see the top). */
__attribute__((target("sse4.2")))
static inline uint32_t hw_chunk(uint32_t c, const unsigned char *p,
				size_t stripe, const uint32_t t[4][256])
{
	uint64_t c0 = c, c1 = 0, c2 = 0;

	for (size_t i = 0; i < stripe; i += 8) {
		c0 = _mm_crc32_u64(c0, load64(p + i));
		c1 = _mm_crc32_u64(c1, load64(p + stripe + i));
		c2 = _mm_crc32_u64(c2, load64(p + 2 * stripe + i));
	}
	c = shift_by(t, (uint32_t)c0) ^ (uint32_t)c1;
	return shift_by(t, c) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2")))
static uint32_t hw_update(uint32_t c, const unsigned char *p, size_t len)
{
	uint64_t c64;

	for (; len && ((uintptr_t)p & 7); len--)
		c = _mm_crc32_u8(c, *p++);
	for (; len >= 3 * STRIPE_LONG; p += 3 * STRIPE_LONG,
	     len -= 3 * STRIPE_LONG)
		c = hw_chunk(c, p, STRIPE_LONG, crc32c_tab.shift_long);
	for (; len >= 3 * STRIPE_SHORT; p += 3 * STRIPE_SHORT,
	     len -= 3 * STRIPE_SHORT)
		c = hw_chunk(c, p, STRIPE_SHORT, crc32c_tab.shift_short);
	c64 = c;
	for (; len >= 8; p += 8, len -= 8)
		c64 = _mm_crc32_u64(c64, load64(p));
	c = (uint32_t)c64;
	while (len--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}
#endif

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc32c_once, crc32c_init);
#ifdef CRC32C_HAVE_HW
	if (crc32c_tab.hw)
		return ~hw_update(~crc, buf, len);
#endif
	return ~sw_update(~crc, buf, len);
}

bool crc32c_hw_available(void)
{
	pthread_once(&crc32c_once, crc32c_init);
	return crc32c_tab.hw;
}
