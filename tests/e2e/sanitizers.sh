#!/usr/bin/env bash
# The stress and remap tests built with AddressSanitizer+UBSan and with
# ThreadSanitizer (build/asan, build/tsan), with and without the compressed
# pool; any sanitizer report fails.
set -u
cd "$(dirname "$0")/../.."
for san in asan tsan; do
	make -s SAN=$san -j2 build/$san/tests/e2e/stress build/$san/tests/e2e/remap \
		build/$san/tests/e2e/readahead >/dev/null || exit 1
	export TSAN_OPTIONS="halt_on_error=1 exitcode=66" ASAN_OPTIONS="halt_on_error=1 exitcode=66"
	build/$san/tests/e2e/stress --size 64M --max 8M --threads 3 --ops 2000 --expect-swap || { echo "$san: stress failed"; exit 1; }
	build/$san/tests/e2e/stress --size 64M --max 8M --folio 4K --threads 2 --ops 2000 --expect-swap || { echo "$san: stress 4K failed"; exit 1; }
	USWAP_ZSWAP=lz4 USWAP_ZSWAP_MAX=10 build/$san/tests/e2e/stress --size 64M --max 8M --threads 3 --ops 2000 --expect-swap ||
		{ echo "$san: stress with zswap failed"; exit 1; }
	USWAP_ZSWAP=zstd USWAP_ZSWAP_UNIT=page USWAP_SWAP=none USWAP_ZSWAP_MAX=80 \
		build/$san/tests/e2e/stress --size 32M --max 8M --folio 16K --threads 2 --ops 2000 --expect-swap ||
		{ echo "$san: stress with zswap and no swap file failed"; exit 1; }
	build/$san/tests/e2e/remap || { echo "$san: remap failed"; exit 1; }
	build/$san/tests/e2e/readahead || { echo "$san: readahead failed"; exit 1; }
done
