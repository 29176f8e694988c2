#!/bin/sh
# Description: --stats merges the <pid>.json files of every process (sums, maxima of levels, swaps concatenated), --verbose prints the summary line, the directory is removed, and no files give an empty object.
. "$(dirname "$0")/lib.sh"
need_built uswap
stand_in_preload	# this tests the command, not the library
need_uffd

# Two processes' statistics, as the preload library writes them, and a
# third file cut short (a process killed while writing).
cat >"$T/a.json" <<'J'
{"vmstat": {"pgfault": 100, "pgmajfault": 10, "pswpin": 40, "pswpout": 50, "resident_bytes": 0, "resident_peak": 67108864, "swap_used_bytes": 4096, "max_bytes": 67108864, "high_bytes": 60358656, "reclaim_stall_us": 7},
 "swaps": [{"path": "/tmp/uswap-swap.1 (deleted)", "type": "file", "size_kib": 1048576, "used_kib": 4, "prio": -2, "node": 0, "direct_io": true}],
 "tiers": [{"node": 2, "max_kib": 65536, "high_kib": 58980, "charged_kib": 1024, "peak_kib": 2048, "own_kib": 1024}],
 "fault_latency_us": {"1": 1, "2": 5, "4": 0},
 "process": {"pid": 11, "rss_peak_kib": 70000, "rss_kib": 100, "folio_size": 65536, "uffd_features": 1, "write_protect": true}}
J
cat >"$T/b.json" <<'J'
{"vmstat": {"pgfault": 1, "pgmajfault": 2, "pswpin": 3, "pswpout": 4, "resident_bytes": 8192, "resident_peak": 33554432, "swap_used_bytes": 8192, "max_bytes": 134217728, "high_bytes": 1, "reclaim_stall_us": 5},
 "swaps": [{"path": "/tmp/with \"quote\"", "type": "file", "size_kib": 2048, "used_kib": 0, "prio": -2, "node": 0, "direct_io": false}],
 "fault_latency_us": {"1": 2, "8": 3},
 "process": {"pid": 12, "rss_peak_kib": 3000}}
J
printf '{"vmstat": {"pgfault": 1000' >"$T/c.json"

"$U" run --stats "$T/s.json" --verbose -- sh -c \
	'cp "$1/a.json" "$USWAP_STATS_DIR/11.json" && cp "$1/b.json" "$USWAP_STATS_DIR/12.json" &&
	 cp "$1/c.json" "$USWAP_STATS_DIR/13.json" && echo "$USWAP_STATS_DIR" >"$1/dir"' sh "$T" \
	2>"$T/err" || fail "uswap run: exit $? ($(cat "$T/err"))"
dir=$(cat "$T/dir")
[ -e "$dir" ] && fail "the statistics directory $dir was not removed"
[ -e "$T/s.json.tmp" ] && fail "s.json.tmp left behind"
grep -qx "uswap: pgfault 101 pgmajfault 12 pswpin 43 pswpout 54 resident_peak 64 MiB max 128 MiB rss_peak 68 MiB" "$T/err" ||
	fail "summary line: $(cat "$T/err")"
grep -q "13.json" "$T/err" || fail "the broken file was not reported with --verbose"

if command -v python3 >/dev/null 2>&1; then
	python3 - "$T/s.json" <<'PY' || fail "merged statistics: $(cat "$T/s.json")"
import json, sys
s = json.load(open(sys.argv[1]))
v = s["vmstat"]
want = {"pgfault": 101, "pgmajfault": 12, "pswpin": 43, "pswpout": 54,
        "resident_bytes": 8192, "resident_peak": 67108864,
        "swap_used_bytes": 8192, "max_bytes": 134217728,
        "high_bytes": 60358656, "reclaim_stall_us": 12}
assert v == want, v
assert len(s["swaps"]) == 2, s["swaps"]
paths = sorted(x["path"] for x in s["swaps"])
assert paths == ["/tmp/uswap-swap.1 (deleted)", '/tmp/with "quote"'], paths
assert {x["direct_io"] for x in s["swaps"]} == {True, False}
assert s["fault_latency_us"] == {"1": 3, "2": 5, "4": 0, "8": 3}, s["fault_latency_us"]
assert s["tiers"] == [{"pid": 11, "node": 2, "max_kib": 65536, "high_kib": 58980,
                       "charged_kib": 1024, "peak_kib": 2048, "own_kib": 1024}], s["tiers"]
assert s["process"] == {"rss_peak_kib": 70000, "processes": 2}, s["process"]
PY
else
	grep -q '"pgfault": 101' "$T/s.json" || fail "pgfault not summed"
	grep -q '"processes": 2' "$T/s.json" || fail "processes not counted"
fi

# No statistics at all: an empty object, and one warning with --verbose.
"$U" run --stats "$T/e.json" -- true 2>"$T/err" || fail "no statistics: exit $?"
[ -s "$T/err" ] && fail "no statistics without --verbose warned: $(cat "$T/err")"
tr -d ' \n' <"$T/e.json" >"$T/e.flat"
[ "$(cat "$T/e.flat")" = '{"vmstat":{},"swaps":[],"tiers":[],"fault_latency_us":{},"process":{"rss_peak_kib":0,"processes":0}}' ] ||
	fail "empty statistics: $(cat "$T/e.json")"
"$U" run --verbose -- true 2>"$T/err" || fail "--verbose: exit $?"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "no process wrote statistics" "$T/err" ||
	fail "--verbose without statistics: $(cat "$T/err")"

# The directory is private and gone afterwards, also when PROG fails.
"$U" run --stats "$T/f.json" -- sh -c 'stat -c %a "$USWAP_STATS_DIR" >"$0"; echo "$USWAP_STATS_DIR" >"$0.dir"; exit 5' "$T/mode"
[ $? -eq 5 ] || fail "exit status with --stats"
[ "$(cat "$T/mode")" = 700 ] || fail "statistics directory mode $(cat "$T/mode")"
[ -e "$(cat "$T/mode.dir")" ] && fail "statistics directory left after a failing PROG"
[ -f "$T/f.json" ] || fail "no statistics file after a failing PROG"
exit 0
