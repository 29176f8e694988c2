#!/usr/bin/env bash
# Weight: 14
# fork keeps every byte and shares slots without leaking them (tests/e2e/fork.c):
# folio sizes 4K..2M, with and without the compressed pool.
set -u
b=${USWAP_BUILD:-build}/tests/e2e/fork
for args in "4K off" "16K lz4" "64K zstd" "2M off"; do
	$b $args || { echo "fork $args failed"; exit 1; }
done
