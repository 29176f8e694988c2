#!/usr/bin/env bash
# Children killed with SIGKILL at random moments, hundreds of them faster
# than the reaper notices (tests/e2e/fork_kill.c): the parent keeps every
# byte, the tree's member limit is met without a crash (a full member
# table and a use leaked by a killed child overflowed a slot's use count:
# an assertion; docs/reliability.md, soak item 20), and the dead are
# reaped.  With the pool, where forks share
# its entries too, and without.
set -u
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/fork_kill
need_uffd
for args in "16K lz4 600" "4K off 150"; do
	rc=0
	"$B/tests/e2e/fork_kill" $args >"$T/out" 2>&1 || rc=$?
	[ $rc -eq 0 ] ||
		fail "fork_kill $args: exit $rc: $(grep -E 'FAIL|Assertion|fork_kill' "$T/out" | head -3)"
	say "$(tail -1 "$T/out")"
done
