#!/usr/bin/env bash
# Weight: 25
# Eviction by moving pages (tests/e2e/evict.c), the cases off the common
# path: a fork child evicting with a staging area of its own; a parent's
# pages a fork left marked shared, after the child left; a folio with one
# pinned page in its middle (refused, kept whole); pages dropped behind
# uswap's back inside folios being evicted (zeros, nothing hangs); reads
# that meet a folio whose pages are moving out wait (evict_wait), never zeros;
# folios side by side moved out together, the run cut by a pinned page and
# a dropped one (4K and 16K folios).
set -u
b=${USWAP_BUILD:-build}/tests/e2e/evict
for step in child sibling partial wait hole; do
	for folio in 16K 64K 2M; do
		out=$(timeout 120 "$b" $step $folio 2>&1)
		rc=$?
		[ $rc -eq 77 ] && { echo "SKIP: $step $folio: $out"; continue; }
		[ $rc -eq 0 ] || { echo "FAIL: $step $folio: exit $rc"; echo "$out"; exit 1; }
		echo "$step $folio: $(echo "$out" | tail -1)"
	done
done
# Runs of neighbours moved in one call, cut by a pin and a hole.
for folio in 4K 16K; do
	out=$(timeout 120 "$b" run $folio 2>&1)
	rc=$?
	[ $rc -eq 77 ] && { echo "SKIP: run $folio: $out"; continue; }
	[ $rc -eq 0 ] || { echo "FAIL: run $folio: exit $rc"; echo "$out"; exit 1; }
	echo "run $folio: $(echo "$out" | tail -1)"
done
# The write-protect path, as on kernels without UFFDIO_MOVE.
out=$(USWAP_UFFD_FEATURES_OFF=65536 timeout 120 "$b" hole 64K 2>&1) ||
	{ echo "FAIL: hole 64K, write-protect path"; echo "$out"; exit 1; }
echo "hole 64K, write-protect path: $(echo "$out" | tail -1)"
