#!/bin/sh
# Description: a fork whose environment was moved into managed memory and swapped out (as redis, postgres, nginx move theirs to set a process title): the child's runtime starts without reading it, and the child finds its environment (a child stuck 60 s fails).
# Weight: 10
. "$(dirname "$0")/lib.sh"
need_built uswap tests/e2e/fork_environ
"$U" run --max 16M --zswap off -- "$B/tests/e2e/fork_environ" >"$T/out" 2>&1 ||
	{ cat "$T/out"; fail "fork_environ under uswap run"; }
grep -q "fork_environ: 5 forks" "$T/out" || { cat "$T/out"; fail "no summary"; }
cat "$T/out"
