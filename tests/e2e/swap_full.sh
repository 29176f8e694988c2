#!/usr/bin/env bash
# A full swap file loses nothing: with 8 MiB of swap and a 16 MiB budget,
# a 64 MiB working set overruns the budget (counted), and every byte reads
# back right.
B=${USWAP_BUILD:-build}
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$B/uswap" run --max 16M --swap-size 8M --stats "$tmp/s.json" -- \
	"$B/tests/e2e/stress" --mmap --size 64M --threads 2 --ops 4000 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
python3 - "$tmp/s.json" <<'PY' || exit 1
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
print({k: v[k] for k in ("swap_full", "max_overrun", "pswpout", "resident_peak")})
assert v["swap_full"] > 0, "swap never reported full"
assert v["max_overrun"] > 0, "no folio was admitted past max"
PY
grep -q "swap space is full" "$tmp/err" || { echo "no log line about the full swap"; cat "$tmp/err"; exit 1; }
