#!/usr/bin/env bash
# One budget per process tree: programs exec'd by a process of the tree
# (here a shell) join its budget, and processes forked by them too.
#  1. sh starts two usemem: their stats name the same budget (the shell's)
#     with distinct members, and every byte verifies.
#  2. Two usemem of 12 MiB each, running side by side (60 passes each)
#     under a 16 MiB budget: together they pass it, so pages go out (alone, each would fit:
#     with a budget each, nothing would be swapped).
#  3. usemem --procs 2 (fork) under uswap run: every byte verifies.
set -u
B=${USWAP_BUILD:-build}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run_tree() {	# DIR MAX CMD: the preload in a shell, as uswap run sets it up
	local dir=$1 max=$2
	shift 2
	rm -f "$dir"/*.json
	LD_PRELOAD=$PWD/$B/libuswap_preload.so USWAP_MAX=$max USWAP_STATS_DIR=$dir \
		sh -c "$*"
}
grep_all() { grep -ho "$1" "$d"/[0-9]*.json | sort; }

out=$(run_tree "$d" 16M "$B/bench/usemem --size 48M --passes 2 --verify & $B/bench/usemem --size 48M --passes 2 --verify & wait") ||
	fail "usemem under the shell failed: $out"
[ "$(grep -c 'verified=1' <<<"$out")" = 2 ] || fail "not every byte verified: $out"
budgets=$(grep_all '"budget": "[^"]*"' | uniq | wc -l)
members=$(grep_all '"member": [0-9]*' | uniq | wc -l)
files=$(ls "$d"/[0-9]*.json | wc -l)
echo "exec: $files processes wrote stats, $budgets budget(s), $members distinct members"
[ "$files" -ge 2 ] || fail "expected the stats of both usemem"
[ "$budgets" = 1 ] || fail "the exec'd programs did not join the shell's budget: $(grep_all '"budget": "[^"]*"')"
[ "$members" = "$files" ] || fail "two processes share a member"

out=$(run_tree "$d" 16M "$B/bench/usemem --size 12M --passes 60 --verify & $B/bench/usemem --size 12M --passes 60 --verify & wait") ||
	fail "side by side usemem failed: $out"
[ "$(grep -c 'verified=1' <<<"$out")" = 2 ] || fail "not every byte verified: $out"
out_pages=$(grep -ho '"pswpout": [0-9]*' "$d"/[0-9]*.json | awk '{s += $2} END {print s + 0}')
echo "side by side: 2 x 12 MiB under one 16 MiB budget: pswpout $out_pages"
[ "$out_pages" -gt 0 ] || fail "nothing went out: the two did not share one budget"

out=$("$B/uswap" run --max 16M -- "$B/bench/usemem" --size 64M --procs 2 --passes 2 --verify) ||
	fail "usemem --procs 2 failed: $out"
grep -q 'verified=1' <<<"$out" || fail "fork: not verified: $out"
echo "fork under uswap run: $out"
