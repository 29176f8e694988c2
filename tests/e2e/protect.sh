#!/usr/bin/env bash
# Weight: 30
# Timeout: 600
# Protections of managed memory are the program's and reclaim keeps them
# (tests/e2e/protect.c), under `uswap run --max 16M`: PROT_READ, PROT_NONE
# and back over 8 MiB with eviction in between, guard pages inside folios,
# a protection key; with 4K, 64K and 2M folios and with the compressed pool.
# Every page read back right, every SIGSEGV the program's own (its handler
# runs, at the address touched), reclaim ran (pswpout or zswpout) and
# nothing crashed.
B=${USWAP_BUILD:-build}
set -u
T=$B/tests/e2e/protect
[ -x "$T" ] && [ -x "$B/uswap" ] || { echo "SKIP: $T or $B/uswap is not built" >&2; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the statistics" >&2; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$B/uswap" run --max 16M -- true 2>"$tmp/err"
[ $? -eq 125 ] && { echo "SKIP: $(cat "$tmp/err")" >&2; exit 77; }
"$T" >"$tmp/out" 2>&1 || { echo "FAIL: the test fails without uswap"; cat "$tmp/out"; exit 1; }

fail=0
for args in "--folio 4K" "--folio 64K" "--folio 2M" "--folio 16K --zswap lz4"; do
	for step in whole guard pkey; do
		name="$step $args"
		timeout 120 "$B/uswap" run --max 16M $args --stats "$tmp/s.json" -- \
			"$T" $step >"$tmp/out" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "FAIL: $name: exit $rc$([ $rc -eq 124 ] && echo ' (timed out)')"
			tail -5 "$tmp/out"
			fail=1
			continue
		fi
		python3 - "$name" "$tmp/s.json" <<'PY' || fail=1
import json, sys
name, path = sys.argv[1:3]
v = json.load(open(path))["vmstat"]
print(f"{name}: pswpout {v['pswpout']} zswpout {v['zswpout']} pswpin {v['pswpin']}")
assert v["swap_corrupt"] == 0 and v["swap_io_error"] == 0, "swap errors"
assert v["pswpout"] + v["zswpout"] > 0, "nothing was evicted"
PY
	done
done
exit $fail
