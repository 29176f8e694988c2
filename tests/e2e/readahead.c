// SPDX-License-Identifier: MIT
/*
 * readahead.c - swap-in readahead and write-around for small folios: a
 * region eight times the budget is written, then read in order (the
 * window grows: swap_ra and swap_ra_hit count), then read at random and
 * written again (the window shrinks); every byte is checked at every
 * step, for 4K and 16K folios, without and with a compressed pool (whose
 * pages are read ahead too).  The region is 64 MiB, or the MiB given
 * (readahead 24: the sanitizer builds, where every access costs more).  Then write-around: pages read back clean
 * and written in order take a write-protect fault per window, not per
 * folio; the folios a window took that the program did not write keep
 * what they held through their next eviction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "testlib.h"

#define MB	(1ul << 20)

/* An 8 MiB budget, and a region of n pages written once (version 1). */
static struct uswap_runtime *setup(uint64_t folio, const char *pool,
				   uint64_t n, char **base)
{
	struct uswap_options opt;
	struct uswap_runtime *rt;
	uint64_t p;

	uswap_options_init(&opt);
	opt.max = 8 * MB;
	opt.folio_size = folio;
	if (pool)
		snprintf(opt.zswap, sizeof(opt.zswap), "%s", pool);
	rt = t_runtime(&opt);
	if (uswap_region_create(rt, n * T_PAGE, (void **)base))
		t_fail("uswap_region_create");
	for (p = 0; p < n; p++)
		t_fill(*base + p * T_PAGE, p, 1);
	return rt;
}

static void run(uint64_t folio, const char *pool, uint64_t size)
{
	uint64_t v[USWAP_NR_COUNTERS], p, n = size / T_PAGE, s = 5, k;
	char *base;
	struct uswap_runtime *rt = setup(folio, pool, n, &base);

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
	printf("folio %5llu, pool %s: swap_ra %llu swap_ra_hit %llu pswpin %llu zswpin %llu pgmajfault %llu clean_drop %llu, all bytes verified\n",
	       (unsigned long long)folio, pool ? pool : "off",
	       (unsigned long long)v[USWAP_SWAP_RA],
	       (unsigned long long)v[USWAP_SWAP_RA_HIT],
	       (unsigned long long)v[USWAP_PSWPIN],
	       (unsigned long long)v[USWAP_ZSWPIN],
	       (unsigned long long)v[USWAP_PGMAJFAULT],
	       (unsigned long long)v[USWAP_CLEAN_DROP]);
	if (!v[USWAP_SWAP_RA] || !v[USWAP_SWAP_RA_HIT])
		t_fail("no readahead on a sequential read");
	if (v[USWAP_SWAP_RA_HIT] > v[USWAP_SWAP_RA])
		t_fail("more readahead hits than pages read ahead");
	if (pool && !v[USWAP_ZSWPIN])
		t_fail("nothing was read back from the pool");
	uswap_runtime_destroy(rt);
}

static uint64_t counter(struct uswap_runtime *rt, enum uswap_counter c)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	return v[c];
}

/*
 * Write-around: 2 MiB of 16 read back in order under an 8 MiB budget
 * (resident, clean), then written in order but for one page in 16.  Each skipped
 * page is taken by a window as written, not written: after the region is
 * churned out and read again it must still hold version 1.
 */
static void write_around(uint64_t folio)
{
	uint64_t n = 16 * MB / T_PAGE, part = 2 * MB / T_PAGE, p, faults;
	uint64_t major, fp = folio / T_PAGE;
	char *base;
	struct uswap_runtime *rt = setup(folio, NULL, n, &base);

	for (p = 0; p < part; p++)
		if (t_check(base + p * T_PAGE, p, 1))
			t_fail("write-around: page %llu wrong read back",
			       (unsigned long long)p);
	/* Every fault of the writes: write-protect, or missing if one went out. */
	faults = counter(rt, USWAP_PGFAULT);
	for (p = 0; p < part; p++)
		if (p % 16 != 15)
			t_fill(base + p * T_PAGE, p, 2);
	faults = counter(rt, USWAP_PGFAULT) - faults;
	/* Out with them (first in line, then twice the budget written), and
	   back: read from their slots, or a lost write shows. */
	if (uswap_madvise(rt, base, part * T_PAGE, MADV_PAGEOUT))
		t_fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
	for (p = part; p < n; p++)
		t_fill(base + p * T_PAGE, p, 3);
	major = counter(rt, USWAP_PGMAJFAULT);
	for (p = 0; p < n; p++) {
		int want = p >= part ? 3 : p % 16 == 15 ? 1 : 2;

		if (t_check(base + p * T_PAGE, p, want))
			t_fail("write-around, folio %llu: page %llu is not version %d",
			       (unsigned long long)folio,
			       (unsigned long long)p, want);
	}
	major = counter(rt, USWAP_PGMAJFAULT) - major;
	if (major < part / 16 / fp)
		t_fail("write-around: the pages written did not go out (%llu major faults reading them back)",
		       (unsigned long long)major);
	printf("folio %5llu: write-around: %llu faults for %llu folios written in order; skipped pages kept\n",
	       (unsigned long long)folio, (unsigned long long)faults,
	       (unsigned long long)(part / fp));
	/* A window grows to 16 pages: far fewer faults than folios (one
	   per folio without write-around: 480 of 512 at 4K). */
	if (faults * 2 > part / fp)
		t_fail("write-around: %llu faults for %llu folios",
		       (unsigned long long)faults,
		       (unsigned long long)(part / fp));
	uswap_runtime_destroy(rt);
}

int main(int argc, char **argv)
{
	uint64_t size = (argc > 1 ? strtoull(argv[1], NULL, 0) : 64) * MB;

	if (size < 16 * MB)
		t_fail("usage: readahead [MiB, at least 16]");
	run(4096, NULL, size);
	run(16384, NULL, size);
	run(4096, "lz4", size);
	run(16384, "lz4", size);
	write_around(4096);
	write_around(16384);
	return T_PASS;
}
