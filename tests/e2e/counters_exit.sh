#!/usr/bin/env bash
# Weight: 20
# Timeout: 300
# Every process's counters reach uswap run's --stats however it ends
# (tests/e2e/counters_exit.c), and every pass of --max is counted:
#  - a child that writes 64 MiB under --max 16M (at least 48 MiB of it
#    must go to swap) and ends with _exit(), exit() or SIGKILL: the tree's
#    pswpout holds its swap-outs, and "processes" counts it;
#  - a lone process that ends with _exit(), nobody left to take its
#    counters over: its last published counters are taken;
#  - usemem under --zswap lz4 (one process, then two that _exit): the
#    budget's peak charge stays within --max, or max_overrun says it did not.
B=${USWAP_BUILD:-build}
set -u
T=$B/tests/e2e/counters_exit
[ -x "$T" ] && [ -x "$B/uswap" ] || { echo "SKIP: $T or $B/uswap is not built" >&2; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the statistics" >&2; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$B/uswap" run --max 16M -- true 2>"$tmp/err"
[ $? -eq 125 ] && { echo "SKIP: $(cat "$tmp/err")" >&2; exit 77; }

# check NAME STATS PYTHON-EXPR: assert an expression over the merged counters.
check() {
	python3 - "$@" <<'PY'
import json, sys
name, path, expr = sys.argv[1:4]
d = json.load(open(path)); v = d["vmstat"]; procs = d["process"]["processes"]
MiB = 2**20
print(f"{name}: processes {procs} pswpout {v.get('pswpout')} zswpout {v.get('zswpout')} "
      f"max_overrun {v.get('max_overrun')} resident_peak {v.get('resident_peak')} "
      f"max_bytes {v.get('max_bytes')}")
assert eval("(" + expr + ")", {}, {"v": v, "procs": procs, "MiB": MiB}), f"{name}: check failed: {expr}"
PY
}

# 48 MiB of 4 KiB pages at least went out.
out=$((48 * 256))
fail=0
for how in _exit kill exit; do
	"$B/uswap" run --max 16M --stats "$tmp/$how.json" -- "$T" child "$how" 64 \
		2>"$tmp/err" || { echo "FAIL: child $how: exit $?"; cat "$tmp/err"; exit 1; }
	check "child $how" "$tmp/$how.json" \
		"procs == 2 and v['pswpout'] >= $out and v['pgfault'] > 0" ||
		{ cat "$tmp/err"; fail=1; }
done

"$B/uswap" run --max 16M --stats "$tmp/self.json" -- "$T" self 64 2>"$tmp/err" ||
	{ echo "FAIL: self: exit $?"; cat "$tmp/err"; exit 1; }
check "self _exit" "$tmp/self.json" "procs == 1 and v['pswpout'] >= $out" ||
	{ cat "$tmp/err"; fail=1; }

U=$B/bench/usemem
if [ -x "$U" ]; then
	for procs in 1 2; do
		"$B/uswap" run --max 128M --zswap lz4 --stats "$tmp/u$procs.json" -- \
			"$U" --size 512M --procs $procs --rw --verify >"$tmp/out" 2>"$tmp/err" ||
			{ echo "FAIL: usemem --procs $procs: exit $?"; cat "$tmp/out" "$tmp/err"; exit 1; }
		check "usemem --zswap lz4 --procs $procs" "$tmp/u$procs.json" \
			"procs == ($procs if $procs == 1 else $procs + 1) and
			 v['pswpout'] + v['zswpout'] >= 384 * 256 and
			 (v['resident_peak'] <= v['max_bytes'] or v['max_overrun'] > 0)" ||
			{ cat "$tmp/err"; fail=1; }
	done
else
	echo "NOTE: $U is not built: the --zswap lz4 overrun case is not run"
fi
exit $fail
