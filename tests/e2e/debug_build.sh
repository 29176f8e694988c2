#!/usr/bin/env bash
# Weight: 60
# The debug build (make debug, build/debug: src/lockdep.h): the lock
# assertions fire when the rule is broken (tests/unit/lockdep.c), and the
# stress test, with and without the compressed pool, fork and fork advice
# run with every "Caller holds" asserted and the slot maps checked at the
# end of each reclaim batch, at munmap, at fork and at the end.  An
# assertion or a check that fails aborts its process: the test fails and
# shows what the process said.
set -u
cd "$(dirname "$0")/../.."
D=build/debug
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
	"$@" >"$log" 2>&1 || { echo "FAIL: $*"; tail -20 "$log"; exit 1; }
}
make -s DEBUG=1 -j2 $D/tests/unit/lockdep $D/tests/e2e/stress $D/tests/e2e/fork \
	$D/tests/e2e/fork_advice >/dev/null || { echo "FAIL: make debug"; exit 1; }
run $D/tests/unit/lockdep
run $D/tests/e2e/stress --size 64M --max 8M --threads 3 --ops 2000 --expect-swap
run env USWAP_ZSWAP=lz4 USWAP_ZSWAP_MAX=10 $D/tests/e2e/stress --size 64M --max 8M \
	--folio 16K --threads 3 --ops 2000 --expect-swap
run $D/tests/e2e/fork 16K lz4
run $D/tests/e2e/fork 4K off
# Regions split, cut and rebuilt (region_clone), then forked.
for mode in wipe dontfork pageout; do
	run $D/tests/e2e/fork_advice $mode 16K lz4
done
echo "debug build: lock assertions and consistency checks held"
