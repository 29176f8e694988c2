#!/usr/bin/env bash
# Weight: 35
# The compressed tier end to end, under `uswap run --max 64M --zswap ...`:
# a program maps 256 MiB (four times the budget), writes and verifies it from two threads (mixed
# data: random, small numbers, repeated records, nearly zero pages).
#  - every compressor, both unit modes, folios 4K / 64K / 2M: zswpout and
#    zswpin non-zero, the budget's charge (resident + pool) within --max
#    (see below) and the peak RSS within it plus the runtime's overhead;
#  - a small pool limit: the pool fills, refuses (zswap_reject_pool_limit)
#    and writes back (zswpwb), and nothing is lost;
#  - --swap none: the pool is the only tier;
#  - pool full and swap file full together: nothing is lost.
B=${USWAP_BUILD:-build}
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

run() {	# NAME CHECK-EXPR USWAP-OPTIONS... -- STRESS-OPTIONS...
	local name=$1 check=$2; shift 2
	local uopts=() sopts=()
	while [ "$1" != -- ]; do uopts+=("$1"); shift; done; shift
	sopts=("$@")
	"$B/uswap" run "${uopts[@]}" --stats "$tmp/s.json" -- \
		"$B/tests/e2e/stress" --mmap "${sopts[@]}" 2>"$tmp/err" ||
		{ echo "$name: exit $?"; cat "$tmp/err"; exit 1; }
	python3 - "$tmp/s.json" "$name" "$check" <<'PY' || { cat "$tmp/err"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1])); v = d["vmstat"]; rss = d["process"]["rss_peak_kib"]
name, check = sys.argv[2], sys.argv[3]
pool = v["zswap_pool_total_size"]
print(f"{name}: zswpout {v['zswpout']} zswpin {v['zswpin']} zswpwb {v['zswpwb']} "
      f"pswpout {v['pswpout']} reject poor/limit {v['zswap_reject_compress_poor']}/"
      f"{v['zswap_reject_pool_limit']} same {v['zswap_same_filled_pages']} "
      f"charge peak {v['resident_peak']/2**20:.1f} MiB rss peak {rss/1024:.1f} MiB")
assert v["zswpout"] > 0 and v["zswpin"] > 0, "the pool was not used both ways"
assert v["zswap_decompress_fail"] == 0 and v["swap_corrupt"] == 0, "corruption"
ok = eval(check, {}, {"v": v, "rss": rss, "MiB": 2**20})
assert ok, f"check failed: {check}"
PY
}

# The pool's growth in a reclaim batch is charged in the step that
# uncharges the batch's victims, so the charge stays within max unless an
# overrun was admitted and counted (a fault starved at max under load).
# The peak RSS adds the runtime's overhead: the reclaimer's staging area
# (one batch), compression contexts, fault threads' buffers (and a
# watchdog's spare's under load: 72.6 MiB seen); with 2 MiB folios each
# compression context holds two 2 MiB buffers: 18 MiB instead of 10 (the
# peak RSS with 2 MiB folios was 80.5 MiB on a fresh machine, 2026-12-04).
charge='v["resident_peak"] <= (64 if v["max_overrun"] == 0 else 66) * MiB'
budget="$charge and rss <= (64 + 10) * 1024"
budget2m="$charge and rss <= (64 + 18) * 1024"
run "lz4 folio 4K" "$budget" --max 64M --folio 4K --zswap lz4 -- --size 256M --threads 2 --ops 6000
run "lz4 folio 64K" "$budget" --max 64M --folio 64K --zswap lz4 -- --size 256M --threads 2 --ops 6000
run "lz4 folio 2M" "$budget2m" --max 64M --folio 2M --zswap lz4 -- --size 256M --threads 2 --ops 800
run "lz4 64K page unit" "$budget and v['mthp_64kB_zswpout'] > 0" \
	--max 64M --folio 64K --zswap lz4 --zswap-unit page -- --size 256M --threads 2 --ops 6000
run "zstd:3 64K" "$budget" --max 64M --folio 64K --zswap zstd:3 -- --size 256M --threads 2 --ops 6000
run "deflate 2M page unit" "$budget2m" --max 64M --folio 2M --zswap deflate --zswap-unit page -- \
	--size 256M --threads 2 --ops 800
run "small pool writes back" 'v["zswap_reject_pool_limit"] > 0 and v["zswpwb"] > 0 and v["pswpout"] > 0' \
	--max 64M --zswap lz4 --zswap-max 5 -- --size 256M --threads 2 --ops 6000
run "swap none" 'v["pswpout"] == 0 and v["pswpin"] == 0' \
	--max 64M --zswap lz4 --zswap-max 60 --swap none -- --size 128M --threads 2 --ops 6000
run "pool and swap file full" 'v["max_overrun"] > 0' \
	--max 16M --swap-size 8M --zswap lz4 --zswap-max 10 -- --size 128M --threads 2 --ops 4000
