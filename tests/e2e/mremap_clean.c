// SPDX-License-Identifier: MIT
/*
 * mremap_clean.c - the soak's first data-loss find, as a small program:
 * a region that mremap(2) moves loses the write protection of its clean
 * folios, so that writes to them after the move go unseen, and when such
 * a folio is evicted as clean (no write: its slots are thought to hold
 * it) the old contents come back.
 *
 *   uswap run --max 16M --folio 64K -- mremap_clean   (tests/e2e/remap_wp.sh)
 *
 * 64 MiB are written (version 1) and cycled through swap; the first 4 MiB
 * are read back (clean: their slots stay); a neighbour mapped after the
 * region makes growing it move it; the first 4 MiB are written again
 * (version 2), pushed out by reading the rest, and checked.  Exit 0 when
 * every page holds version 2, 1 otherwise (with the count).
 *
 * Why: without UFFD_FEATURE_EVENT_REMAP the kernel (6.x) clears the
 * uffd-wp bits of the ptes it moves and drops the range's registration;
 * uswap registered the new range again (region_move) but did not protect
 * its clean and armed folios again; rearm_moved() in region.c does now.
 */
#include <stdbool.h>
#include <sys/mman.h>

#include "testlib.h"

#define PAGES	16384u		/* 64 MiB */
#define CLEAN	1024u		/* 4 MiB read back clean, then moved */

int main(void)
{
	char *base, *old;
	static volatile char sink;
	unsigned k, bad = 0;

	base = mmap(NULL, (size_t)PAGES * T_PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	/* Unmanaged (below --min-region): growing in place is impossible. */
	mmap(base + (size_t)PAGES * T_PAGE, T_PAGE, PROT_READ,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	for (k = 0; k < PAGES; k++)
		t_fill(base + (size_t)k * T_PAGE, k, 1);
	for (k = 0; k < PAGES; k++)
		sink += base[(size_t)k * T_PAGE + 100];
	for (k = 0; k < CLEAN; k++)
		sink += base[(size_t)k * T_PAGE + 100];
	old = base;
	base = mremap(base, (size_t)PAGES * T_PAGE, (size_t)(PAGES + 16) * T_PAGE,
		      MREMAP_MAYMOVE);
	if (base == MAP_FAILED)
		t_fail("mremap: %s", strerror(errno));
	for (k = 0; k < CLEAN; k++)
		t_fill(base + (size_t)k * T_PAGE, k, 2);
	for (k = CLEAN; k < PAGES; k++)
		sink += base[(size_t)k * T_PAGE + 100];
	for (k = 0; k < CLEAN; k++)
		bad += t_check(base + (size_t)k * T_PAGE, k, 2) != 0;
	printf("mremap_clean: region %s; %u of %u pages written after the move lost their write\n",
	       base != old ? "moved" : "grew in place", bad, CLEAN);
	(void)sink;	/* the reads above are what matters */
	return bad ? T_FAIL : T_PASS;
}
