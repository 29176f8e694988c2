#!/usr/bin/env bash
# Weight: 15
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
set -u
. "$(dirname "$0")/lib.sh"
need_built uswap tests/e2e/counters_exit
need_cmd python3	# to read the statistics
need_uffd
X=$B/tests/e2e/counters_exit

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
failed=0
for how in _exit kill exit; do
	"$B/uswap" run --max 16M --stats "$T/$how.json" -- "$X" child "$how" 64 \
		2>"$T/err" || { echo "FAIL: child $how: exit $?"; cat "$T/err"; exit 1; }
	check "child $how" "$T/$how.json" \
		"procs == 2 and v['pswpout'] >= $out and v['pgfault'] > 0" ||
		{ cat "$T/err"; failed=1; }
done

"$B/uswap" run --max 16M --stats "$T/self.json" -- "$X" self 64 2>"$T/err" ||
	{ echo "FAIL: self: exit $?"; cat "$T/err"; exit 1; }
check "self _exit" "$T/self.json" "procs == 1 and v['pswpout'] >= $out" ||
	{ cat "$T/err"; failed=1; }

M=$B/bench/usemem
if [ -x "$M" ]; then
	for procs in 1 2; do
		"$B/uswap" run --max 128M --zswap lz4 --stats "$T/u$procs.json" -- \
			"$M" --size 512M --procs $procs --rw --verify >"$T/out" 2>"$T/err" ||
			{ echo "FAIL: usemem --procs $procs: exit $?"; cat "$T/out" "$T/err"; exit 1; }
		check "usemem --zswap lz4 --procs $procs" "$T/u$procs.json" \
			"procs == ($procs if $procs == 1 else $procs + 1) and
			 v['pswpout'] + v['zswpout'] >= 384 * 256 and
			 (v['resident_peak'] <= v['max_bytes'] or v['max_overrun'] > 0)" ||
			{ cat "$T/err"; failed=1; }
	done
else
	echo "NOTE: $M is not built: the --zswap lz4 overrun case is not run"
fi
exit $failed
