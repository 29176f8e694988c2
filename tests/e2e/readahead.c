// SPDX-License-Identifier: MIT
/*
 * readahead.c - swap-in readahead for small folios: a region eight times
 * the budget is written, then read in order (the window grows: swap_ra
 * and swap_ra_hit count), then read at random and written again (the
 * window shrinks); every byte is checked at every step, for 4K and 16K
 * folios.
 */
#include <errno.h>

#include "testlib.h"

#define MB	(1ul << 20)

static void run(uint64_t folio)
{
	struct uswap_options opt;
	uint64_t v[USWAP_NR_COUNTERS], p, n = 64 * MB / T_PAGE, s = 5, k;
	struct uswap_runtime *rt;
	char *base;

	uswap_options_init(&opt);
	opt.max = 8 * MB;
	opt.folio_size = folio;
	rt = t_runtime(&opt);
	if (uswap_region_create(rt, n * T_PAGE, (void **)&base))
		t_fail("uswap_region_create");
	for (p = 0; p < n; p++)
		t_fill(base + p * T_PAGE, p, 1);
	for (p = 0; p < n; p++)
		if (t_check(base + p * T_PAGE, p, 1))
			t_fail("folio %llu: page %llu wrong in the sequential read",
			       (unsigned long long)folio, (unsigned long long)p);
	for (k = 0; k < n; k++) {
		p = t_rand(&s) % n;
		if (t_check(base + p * T_PAGE, p, 1))
			t_fail("page %llu wrong in the random read",
			       (unsigned long long)p);
	}
	for (p = 0; p < n; p++)
		t_fill(base + p * T_PAGE, p, 2);
	for (p = 0; p < n; p++)
		if (t_check(base + p * T_PAGE, p, 2))
			t_fail("page %llu wrong after rewriting",
			       (unsigned long long)p);
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("folio %5llu: swap_ra %llu swap_ra_hit %llu pswpin %llu pgmajfault %llu clean_drop %llu, all bytes verified\n",
	       (unsigned long long)folio, (unsigned long long)v[USWAP_SWAP_RA],
	       (unsigned long long)v[USWAP_SWAP_RA_HIT],
	       (unsigned long long)v[USWAP_PSWPIN],
	       (unsigned long long)v[USWAP_PGMAJFAULT],
	       (unsigned long long)v[USWAP_CLEAN_DROP]);
	if (!v[USWAP_SWAP_RA] || !v[USWAP_SWAP_RA_HIT])
		t_fail("no readahead on a sequential read");
	if (v[USWAP_SWAP_RA_HIT] > v[USWAP_SWAP_RA])
		t_fail("more readahead hits than pages read ahead");
	uswap_runtime_destroy(rt);
}

int main(void)
{
	run(4096);
	run(16384);
	return T_PASS;
}
