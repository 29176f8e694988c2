// SPDX-License-Identifier: MIT
/*
 * clipped.c - folios cut by the ends of their region: after the first and
 * last pages of a region are unmapped, its first and last folios hold
 * fewer pages than a folio.  Each must get as many slots as it has pages
 * (no more sharing a slot run with a neighbour), with and without the
 * compressed pool, for every folio size.
 */
#include <errno.h>
#include <sys/mman.h>

#include "testlib.h"

#define MB (1ul << 20)

static void run(uint64_t folio, const char *zswap)
{
	struct uswap_options opt;
	uint64_t v[USWAP_NR_COUNTERS], p, n = 48 * MB / T_PAGE, pass;
	struct uswap_runtime *rt;
	char *base, why[256];
	int err;

	uswap_options_init(&opt);
	opt.max = 8 * MB;
	opt.folio_size = folio;
	if (zswap && uswap_options_set(&opt, "zswap", zswap, why, sizeof(why)))
		t_fail("%s", why);
	rt = t_runtime(&opt);
	err = uswap_region_create(rt, n * T_PAGE, (void **)&base);
	if (err)
		t_fail("uswap_region_create: %s", strerror(-err));
	/* Cut one page off each end: the end folios are clipped. */
	if (uswap_munmap(rt, base, T_PAGE) ||
	    uswap_munmap(rt, base + (n - 1) * T_PAGE, T_PAGE))
		t_fail("munmap of the end pages: %s", strerror(errno));
	for (pass = 1; pass <= 3; pass++) {
		for (p = 1; p < n - 1; p++)
			t_fill(base + p * T_PAGE, p, pass);
		for (p = 1; p < n - 1; p++)
			if (t_check(base + p * T_PAGE, p, pass))
				t_fail("folio %llu, zswap %s, pass %llu: page %llu wrong",
				       (unsigned long long)folio, zswap ? zswap : "off",
				       (unsigned long long)pass, (unsigned long long)p);
	}
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	if (!v[USWAP_PSWPOUT] && !v[USWAP_ZSWPOUT])
		t_fail("nothing was swapped out");
	printf("folio %6llu zswap %-4s: pswpout %llu zswpout %llu, all bytes verified\n",
	       (unsigned long long)folio, zswap ? zswap : "off",
	       (unsigned long long)v[USWAP_PSWPOUT],
	       (unsigned long long)v[USWAP_ZSWPOUT]);
	uswap_munmap(rt, base + T_PAGE, (n - 2) * T_PAGE);
	uswap_runtime_destroy(rt);
}

int main(void)
{
	static const uint64_t folios[] = { 16384, 65536, 2 * MB };
	unsigned i;

	for (i = 0; i < 3; i++) {
		run(folios[i], NULL);
		run(folios[i], "lz4");
	}
	return T_PASS;
}
