#!/usr/bin/env bash
# Memory shared by fork is charged once; writes, evictions and exits move or
# free its charge exactly (tests/e2e/fork_share.c): folio sizes 4K..2M,
# with and without the compressed pool.
set -u
b=${USWAP_BUILD:-build}/tests/e2e/fork_share
for args in "4K off" "16K lz4" "64K off" "2M zstd"; do
	$b $args
	rc=$?
	[ $rc -eq 0 ] || { echo "fork_share $args: exit $rc"; exit $rc; }
done
