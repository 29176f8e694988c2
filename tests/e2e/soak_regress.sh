#!/usr/bin/env bash
# Weight: 55
# Timeout: 900
# Rounds of the soak (tests/soak/run) that found bugs now fixed, replayed
# from their seeds (docs/reliability.md, "What the soak found"); each
# must now pass: every byte checked, the counters checked, no hang,
# nothing left behind.  15-25 s each here (make check's time); longer
# replays are tests/soak/run --replay SEED --seconds N.
#
#   943089073182  2M folios, lz4 pool, read_eio: a write aborted an
#                 eviction, the program discarded the folio, and the
#                 reclaimer, still compressing it in place, faulted on the
#                 hole and waited for ever (bug 7; F_STORING).  Hung
#                 within 25 s before the fix.
#   151282538207  2M folios, two devices, no pool, forks and an exec: a
#                 write fault's late unprotect undid the reclaimer's new
#                 write-protection, and an eviction lost a write or
#                 stored a slot failing its checksum (bugs 10 and 6;
#                 lru_lock in fault_wp).  Rare: 2 of 2 on an instrumented
#                 build, 0 of 8 on a plain one.
#   327862789127  2M folios, lz4 pool of folios, forks and execs: pages
#                 read as zeros or at an older version (bug 9): the same
#                 race.  6 of 8 replays of 60 s failed on the build
#                 before the fix (at 5 to 58 s), none of 10 after.
#                 Later zeros again (item 15: a stale fault's zero fill
#                 racing the eviction's move): 2 of 30 replays of 30 s
#                 before that fix.
set -u
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
need_built tests/soak/worker
case $B in
*tsan*) skip "a TSan build ($B): fork children start threads TSan does not follow" ;;
esac
failed=0
replay() {	# SEED SECONDS
	tests/soak/run --replay "$1" --seconds "$2" --asan never --avoid-known \
		--build "$B" --log-dir "$T/$1" >"$T/out.$1" 2>&1
	local rc=$?
	cat "$T/out.$1"
	if [ $rc -ne 0 ] || ! grep -q "^failures: 0 rounds" "$T/out.$1"; then
		for f in "$T/$1"/round-*.log; do echo "--- $f"; tail -40 "$f"; done
		echo "FAIL: seed $1"
		failed=1
	fi
}
replay 943089073182 25
replay 151282538207 15
replay 327862789127 15
exit $failed
