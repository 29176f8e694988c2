// SPDX-License-Identifier: MIT
/*
 * fault_around.c - the first touch of small folios in order fills the
 * folios after the touched one with zeros in the same fault (memory.c,
 * za_begin), and nothing else:
 *
 *  1. in order: 4K folios, 16 MiB written page after page: most pages
 *     come in ahead (fault_around), zero fills are a fraction of the
 *     pages, every page reads back as written, the pages filled past the
 *     end of the writes read as zeros;
 *  2. scattered: the pages of another region touched in a scattered
 *     order (a stride prime to their number): almost nothing is filled
 *     ahead;
 *  3. protections: a region whose second half is read-only is written in
 *     order up to the boundary: no page of the read-only half is mapped
 *     (mincore), and it reads as zeros;
 *  4. under eviction: 32 MiB in order under an 8 MiB budget, every page
 *     checked after.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "uswap.h"
#include "testlib.h"

#define MB (1ul << 20)

static uint64_t counter(struct uswap_runtime *rt, unsigned id)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	return v[id];
}

static char *map(struct uswap_runtime *rt, size_t len)
{
	char *p = uswap_mmap(rt, NULL, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		t_fail("uswap_mmap: %s", strerror(errno));
	return p;
}

static void check_zero(const char *p, size_t len, const char *what)
{
	size_t k;

	for (k = 0; k < len; k++)
		if (p[k])
			t_fail("%s: byte %zu is %d, not 0", what, k, p[k]);
}

static struct uswap_runtime *runtime(uint64_t max)
{
	struct uswap_options opt;

	uswap_options_init(&opt);
	opt.max = max;
	opt.folio_size = 4096;
	return t_runtime(&opt);
}

int main(void)
{
	const size_t len = 16 * MB, n = len / T_PAGE, tail = 8;
	uint64_t fill0, around0, fills, around;
	struct uswap_runtime *rt = runtime(256 * MB);
	unsigned char vec[256];
	char *p, *q;
	size_t k;

	/* 1. In order. */
	p = map(rt, len);
	fill0 = counter(rt, USWAP_ZERO_FILL);
	around0 = counter(rt, USWAP_FAULT_AROUND);
	for (k = 0; k < n - tail; k++)
		t_fill(p + k * T_PAGE, k, 1);
	fills = counter(rt, USWAP_ZERO_FILL) - fill0;
	around = counter(rt, USWAP_FAULT_AROUND) - around0;
	printf("in order: %zu pages, %llu zero fills, %llu pages filled ahead\n",
	       n - tail, (unsigned long long)fills, (unsigned long long)around);
	if (around < n / 2 || fills > n / 4)
		t_fail("in order: %llu fills and %llu pages ahead for %zu pages",
		       (unsigned long long)fills, (unsigned long long)around, n - tail);
	for (k = 0; k < n - tail; k++)
		if (t_check(p + k * T_PAGE, k, 1))
			t_fail("in order: page %zu changed", k);
	check_zero(p + (n - tail) * T_PAGE, tail * T_PAGE, "in order, past the writes");

	/* 2. Scattered: stride 4099 (prime) over 4096 pages. */
	q = map(rt, len);
	around0 = counter(rt, USWAP_FAULT_AROUND);
	for (k = 0; k < n; k++)
		t_fill(q + (k * 4099 % n) * T_PAGE, k, 2);
	around = counter(rt, USWAP_FAULT_AROUND) - around0;
	printf("scattered: %zu pages, %llu pages filled ahead\n", n,
	       (unsigned long long)around);
	if (around > n / 16)
		t_fail("scattered: %llu pages filled ahead of %zu touched out of order",
		       (unsigned long long)around, n);
	for (k = 0; k < n; k++)
		if (t_check(q + (k * 4099 % n) * T_PAGE, k, 2))
			t_fail("scattered: page %zu changed", k);
	uswap_munmap(rt, q, len);

	/* 3. Protections: the second MiB of a 2 MiB region read-only. */
	q = map(rt, 2 * MB);
	if (uswap_mprotect(rt, q + MB, MB, PROT_READ))
		t_fail("mprotect: %s", strerror(errno));
	for (k = 0; k < MB / T_PAGE; k++)
		t_fill(q + k * T_PAGE, k, 3);
	if (mincore(q + MB, MB, vec))
		t_fail("mincore: %s", strerror(errno));
	for (k = 0; k < MB / T_PAGE; k++)
		if (vec[k] & 1)
			t_fail("protections: page %zu of the read-only half was filled", k);
	check_zero(q + MB, MB, "protections, the read-only half");
	for (k = 0; k < MB / T_PAGE; k++)
		if (t_check(q + k * T_PAGE, k, 3))
			t_fail("protections: page %zu changed", k);
	uswap_munmap(rt, q, 2 * MB);
	uswap_munmap(rt, p, len);
	uswap_runtime_destroy(rt);

	/* 4. Under eviction. */
	rt = runtime(8 * MB);
	p = map(rt, 2 * len);
	for (k = 0; k < 2 * n; k++)
		t_fill(p + k * T_PAGE, k, 4);
	for (k = 0; k < 2 * n; k++)
		if (t_check(p + k * T_PAGE, k, 4))
			t_fail("under eviction: page %zu changed", k);
	around = counter(rt, USWAP_FAULT_AROUND);
	printf("under eviction: %zu pages, %llu filled ahead, %llu swapped out\n",
	       2 * n, (unsigned long long)around,
	       (unsigned long long)counter(rt, USWAP_PSWPOUT));
	if (!counter(rt, USWAP_PSWPOUT))
		t_fail("under eviction: nothing was evicted: the test tested nothing");
	uswap_munmap(rt, p, 2 * len);
	uswap_runtime_destroy(rt);
	return 0;
}
