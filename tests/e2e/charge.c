// SPDX-License-Identifier: MIT
/*
 * charge.c - the budget's charges follow resident folios whose region
 * ends move: a resident folio clipped by its region's end is charged for
 * its pages in the region, so growing the region with mremap charges the
 * new pages, unmapping part of the folio uncharges them, and after
 * everything is unmapped nothing is charged.  Every byte is checked on
 * the way (the grown part reads as zeros until written).
 */
#include <sys/mman.h>

#include "testlib.h"

#define KB 1024ul

static struct uswap_runtime *rt;

static uint64_t charged(void)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	return v[USWAP_RESIDENT_BYTES];
}

static void fill(char *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i += 512)
		p[i] = (char)(seed + i / 512);
}

static void check(const char *what, const char *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i += 512)
		if (p[i] != (char)(seed + i / 512))
			t_fail("%s: byte %zu wrong", what, i);
}

int main(void)
{
	struct uswap_options opt;
	unsigned round;

	uswap_options_init(&opt);
	opt.max = 64ul << 20;
	opt.folio_size = 64 * KB;
	opt.min_region = 64 * KB;
	rt = t_runtime(&opt);
	for (round = 0; round < 200; round++) {
		size_t a = 68 * KB, b = a + 64 * KB, i;
		char *p = uswap_mmap(rt, NULL, a, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;

		if (p == MAP_FAILED)
			t_fail("uswap_mmap: %s", strerror(errno));
		fill(p, a, round);
		q = uswap_mremap(rt, p, a, b, MREMAP_MAYMOVE, NULL);
		if (q == MAP_FAILED)
			t_fail("uswap_mremap: %s", strerror(errno));
		check("after growing", q, a, round);
		for (i = a; i < b; i++)
			if (q[i])
				t_fail("grown byte %zu is not zero", i);
		fill(q, b, round + 1);
		/* A hole inside the second folio, then the rest. */
		if (uswap_munmap(rt, q + 72 * KB, 8 * KB))
			t_fail("munmap of a hole: %s", strerror(errno));
		check("left of the hole", q, 72 * KB, round + 1);
		check("right of the hole", q + 80 * KB, b - 80 * KB,
		      round + 1 + 80 * KB / 512);
		if (uswap_munmap(rt, q, 72 * KB) ||
		    uswap_munmap(rt, q + 80 * KB, b - 80 * KB))
			t_fail("munmap: %s", strerror(errno));
		if (charged())
			t_fail("round %u: %llu bytes still charged with nothing mapped",
			       round, (unsigned long long)charged());
	}
	printf("charge: 200 rounds of grow, hole, unmap: nothing left charged\n");
	uswap_runtime_destroy(rt);
	return 0;
}
