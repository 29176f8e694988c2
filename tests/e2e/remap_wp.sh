#!/bin/sh
# Description: a region that mremap(2) moves keeps the write protection of its armed and clean folios (the kernel drops uffd-wp bits when it moves ptes; region_move protects them again): writes after the move are never lost to a clean eviction (mremap_clean.c, the soak's first data-loss find).
B=${USWAP_BUILD:-$(dirname "$0")/../../build}
[ -x "$B/uswap" ] && [ -x "$B/tests/e2e/mremap_clean" ] || { echo "SKIP: not built" >&2; exit 77; }
for folio in 64K 4K 2M; do
	"$B/uswap" run --max 16M --folio $folio -- "$B/tests/e2e/mremap_clean" ||
		{ echo "FAIL: folio $folio" >&2; exit 1; }
done
exit 0
