#!/usr/bin/env bash
# Weight: 22
# The soak (tests/soak/run, docs/reliability.md) for one 20-second round:
# a fixed mix (seed 1734: 89 MiB in 2 areas under a 16 MiB budget, 64K
# folios, 5 threads, the zstd pool page by page in front of two swap
# files, an exec'd child joining the budget, short reads and writes and
# userfaultfd EAGAIN injected), every byte checked, the counters checked,
# nothing left behind, no descriptor leaked.  In an ASan build the worker
# is the ASan one, under the plain preload library (which every build
# has).  Skipped in TSan builds (a TSan program's fork children start
# uswap's threads, which TSan does not follow: tests/e2e/sanitizers.lib).
# --avoid-known would leave out the soak's known open bugs that this mix
# could draw (tests/soak/run, KNOWN: none at present).
set -u
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
need_built tests/soak/worker
case $B in
*tsan*) skip "a TSan build ($B): fork children start threads TSan does not follow" ;;
esac
tests/soak/run --replay 1734 --seconds 20 --asan never --avoid-known \
	--build "$B" --log-dir "$T" >"$T/out" 2>&1
rc=$?
cat "$T/out"
if [ $rc -ne 0 ]; then
	for f in "$T"/round-*.log; do echo "--- $f"; tail -40 "$f"; done
	exit 1
fi
grep -q "^failures: 0 rounds" "$T/out" || { echo "no summary"; exit 1; }
