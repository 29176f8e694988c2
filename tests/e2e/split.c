// SPDX-License-Identifier: MIT
/*
 * split.c - a large folio that finds no contiguous run of slots is split,
 * not kept resident: fill a small swap file with 64 KiB folios, free one
 * page in each swapped folio (so the file has free slots but no free
 * aligned run of 16), dirty the resident folios again, and check that
 * reclaim split some of them (mthp_64kB_swpout_fallback) and that every
 * byte reads back right.
 */
#include <errno.h>
#include <sys/mman.h>

#include "testlib.h"

#define MB	(1ul << 20)
#define FOLIO	16u		/* pages */

int main(void)
{
	struct uswap_options opt;
	uint64_t v[USWAP_NR_COUNTERS], p, n = 32 * MB / T_PAGE;
	struct uswap_runtime *rt;
	uint64_t *ver;
	char *base;
	int err;

	uswap_options_init(&opt);
	opt.max = 4 * MB;
	opt.folio_size = FOLIO * T_PAGE;
	opt.swap_size = 4 * MB;
	rt = t_runtime(&opt);
	err = uswap_region_create(rt, n * T_PAGE, (void **)&base);
	if (err)
		t_fail("uswap_region_create: %s", strerror(-err));
	ver = calloc(n, sizeof(*ver));

	/* Fill: the 4 MiB file fills up with whole folios. */
	for (p = 0; p < n; p++)
		t_fill(base + p * T_PAGE, p, ver[p] = 1);
	/* One page of every folio goes: holes, but no free run of 16. */
	for (p = 5; p < n; p += FOLIO) {
		if (uswap_madvise(rt, base + p * T_PAGE, T_PAGE, MADV_DONTNEED))
			t_fail("madvise: %s", strerror(errno));
		ver[p] = 0;
	}
	/* Dirty everything again: reclaim needs slots for 64 KiB folios. */
	for (p = 0; p < n; p++)
		if (ver[p])
			t_fill(base + p * T_PAGE, p, ++ver[p]);
	for (p = 0; p < n; p++) {
		const char *pg = base + p * T_PAGE;

		if (ver[p] ? t_check(pg, p, ver[p]) : (pg[0] || pg[T_PAGE - 1]))
			t_fail("page %llu wrong", (unsigned long long)p);
	}
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("split: mthp_64kB_swpout %llu fallback %llu pswpout %llu swap_full %llu, all bytes verified\n",
	       (unsigned long long)v[USWAP_MTHP_64KB_SWPOUT],
	       (unsigned long long)v[USWAP_MTHP_64KB_SWPOUT_FALLBACK],
	       (unsigned long long)v[USWAP_PSWPOUT],
	       (unsigned long long)v[USWAP_SWAP_FULL]);
	if (!v[USWAP_MTHP_64KB_SWPOUT])
		t_fail("no 64 KiB folio went out whole");
	if (!v[USWAP_MTHP_64KB_SWPOUT_FALLBACK])
		t_fail("no 64 KiB folio was split when no run was free");
	uswap_runtime_destroy(rt);
	free(ver);
	return T_PASS;
}
