#!/usr/bin/env bash
# Weight: 25
# A program's close, close_range, closefrom, dup2 and dup3 never reach
# uswap's descriptors, and a raw close_range that does stops the program
# with a message and status 124 before any page reads back wrong
# (tests/e2e/descriptors_high.c): each mode under uswap run with a 16 MiB
# budget for 64 MiB, swap file only and with the compressed pool; every
# page byte-exact, the program's log file never gets its memory, and
# pages did go out and come back (pswpout and zswpout, pswpin and zswpin).
set -u
B=${USWAP_BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
P=$B/tests/e2e/descriptors_high
[ -x "$P" ] || { echo "SKIP: $P is not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# MODE POOL EXPECTED_STATUS
run() {
	local mode=$1 pool=$2 want=$3 rc
	rm -f "$tmp/log" "$tmp/stats.json"
	"$B/uswap" run --max 16M --zswap "$pool" --stats "$tmp/stats.json" -- \
		"$P" "$mode" "$tmp/log" >"$tmp/out" 2>&1 </dev/null
	rc=$?
	echo "$mode (pool $pool): exit $rc"
	sed 's/^/  /' "$tmp/out"
	[ "$rc" = "$want" ] || fail "$mode (pool $pool): exit $rc, expected $want"
	if [ -e "$tmp/log" ] && [ -s "$tmp/log" ]; then
		fail "$mode (pool $pool): the program's log file got $(stat -c %s "$tmp/log") bytes it never wrote"
	fi
}

counters() {	# pages out and pages in (devices and pool) of the last run
	awk -F'[:,]' '/"(pswpout|zswpout)"/ && !seen[$1]++ {o += $2}
		/"(pswpin|zswpin)"/ && !seen[$1]++ {i += $2}
		END {print o + 0, i + 0}' "$tmp/stats.json"
}

for pool in off lz4; do
	for mode in close_range closefrom dup2_low dup2_uswap dup2_device; do
		run "$mode" "$pool" 0
		read -r pout pin <<<"$(counters)"
		echo "  pages out $pout, in $pin (pswp + zswp)"
		[ "${pout:-0}" -gt 0 ] && [ "${pin:-0}" -gt 0 ] ||
			fail "$mode (pool $pool): nothing went out and came back: the test tested nothing"
	done
	run raw "$pool" 124
	grep -q "uswap.*descriptor.*stop" "$tmp/out" ||
		fail "raw (pool $pool): no message saying why the program was stopped"
done
echo ok
