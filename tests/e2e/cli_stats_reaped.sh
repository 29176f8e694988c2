#!/bin/sh
# Description: --stats counts the processes that ended without writing their statistics: each budget's "reaped" totals once (the largest each document carries), and the last live file of a process that nobody reaped, but not one that was, nor one still running.
. "$(dirname "$0")/lib.sh"
need_built uswap
need_cmd python3	# to read the statistics
stand_in_preload	# this tests the command's merge, not the library
need_uffd

# doc PID BUDGET MEMBER GEN PSWPOUT REAPED: one process's statistics.
doc() {
	printf '{"vmstat": {"pswpout": %s, "resident_peak": 100},\n "swaps": [], "fault_latency_us": {"1": 1},\n "reaped": %s,\n "process": {"pid": %s, "rss_peak_kib": 1, "budget": "%s", "member": %s, "member_gen": %s}}\n' \
		"$5" "$6" "$1" "$2" "$3" "$4"
}
# Budget t1: three documents whose reaped totals grow as members are
# reaped (the largest counts, once); budget t2: totals of its own.  Pids
# past pid_max (2^22) name no process.
doc 11 t1 0 1 10 '{"budget": "t1", "processes": 1, "vmstat": {"pswpout": 100, "pgfault": 5}, "fault_latency_us": {"2": 4}, "members": {"3": 2}}' >"$T/11.json"
doc 12 t1 1 1 20 '{"budget": "t1", "processes": 2, "vmstat": {"pswpout": 150, "pgfault": 7, "max_overrun": 1}, "fault_latency_us": {"2": 6}, "members": {"3": 2, "4": 1}}' >"$T/12.json"
doc 13 t2 0 1 30 '{"budget": "t2", "processes": 1, "vmstat": {"pswpout": 1000}, "fault_latency_us": {}, "members": {"1": 1}}' >"$T/13.json"
# Live files left behind: 11's own (it wrote a final file too: not
# counted), one whose member t1 folded in (4, gen 1: not counted), one
# nobody reaped (counted, with the larger t1 totals it saw), and one of a
# process that still runs (uswap's own pid: not counted).
doc 11 t1 0 1 9 '{"budget": "t1", "processes": 0, "vmstat": {}, "fault_latency_us": {}, "members": {}}' >"$T/11.live.json"
doc 4194305 t1 4 1 500 '{"budget": "t1", "processes": 0, "vmstat": {}, "fault_latency_us": {}, "members": {}}' >"$T/4194305.live.json"
doc 4194306 t1 5 1 7 '{"budget": "t1", "processes": 3, "vmstat": {"pswpout": 160, "pgfault": 7}, "fault_latency_us": {"2": 6}, "members": {"3": 2, "4": 1, "6": 1}}' >"$T/4194306.live.json"

"$U" run --stats "$T/s.json" -- sh -c \
	'for f in "$1"/*.json; do cp "$f" "$USWAP_STATS_DIR/"; done
	 sed "s/\"pid\": 11,/\"pid\": $PPID,/" "$1/11.json" >"$USWAP_STATS_DIR/$PPID.live.json"' sh "$T" \
	2>"$T/err" || fail "uswap run: exit $? ($(cat "$T/err"))"

python3 - "$T/s.json" <<'PY' || fail "merged statistics: $(cat "$T/s.json")"
import json, sys
s = json.load(open(sys.argv[1]))
v = s["vmstat"]
# documents 10 + 20 + 30, live 7, reaped t1 160 (the largest) + t2 1000
assert v["pswpout"] == 10 + 20 + 30 + 7 + 160 + 1000, v
assert v["pgfault"] == 7 and v["max_overrun"] == 1, v
assert v["resident_peak"] == 100, v
assert s["fault_latency_us"] == {"1": 4, "2": 6}, s["fault_latency_us"]
# 3 final documents, 1 live one, 3 reaped in t1, 1 in t2
assert s["process"]["processes"] == 8, s["process"]
PY
exit 0
