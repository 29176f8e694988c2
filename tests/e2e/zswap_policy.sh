#!/usr/bin/env bash
# The pool's two policies, end to end, on mixed data (a quarter of the
# pages random, so incompressible) at 4K folios, 96 MiB under --max 48M,
# written, read back, rewritten and verified by usemem:
#  - --zswap-incompressible device (the default): pages that do not
#    compress go straight to the swap file, and only they (the pool never
#    fills, nothing is written back);
#  - --zswap-incompressible store: the same pages stay in the pool as they
#    are and nothing reaches the swap file; with --zswap-charge off the
#    pool is not charged: the budget's charge stays within --max while the
#    process holds more than --max plus the runtime's overhead (the pool
#    on top, as the kernel's zswap under cgroup v1);
#  - store with the pool charged: the pool fills and writes back, so some
#    pages reach the swap file, but far fewer than compressed poorly (in
#    the default mode, all of them); the charge stays within --max plus
#    what the raw pages of the batches in flight add before their folios
#    are unmapped (see docs/uswap.1).
set -u
. "$(dirname "$0")/lib.sh"
need_built uswap bench/usemem
need_cmd python3

run() {	# NAME CHECK-EXPR USWAP-OPTIONS...
	local name=$1 check=$2; shift 2
	"$B/uswap" run --max 48M --folio 4K --zswap lz4 "$@" --stats "$T/s.json" -- \
		"$B/bench/usemem" --size 96M --rw --verify --data mixed \
		>"$T/out" 2>"$T/err" ||
		{ echo "$name: exit $?"; cat "$T/out" "$T/err"; exit 1; }
	python3 - "$T/s.json" "$name" "$check" <<'PY' || { cat "$T/err"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1])); v = d["vmstat"]; rss = d["process"]["rss_peak_kib"]
name, check = sys.argv[2], sys.argv[3]
print(f"{name}: zswpout {v['zswpout']} zswpin {v['zswpin']} zswpwb {v['zswpwb']} "
      f"pswpout {v['pswpout']} poor {v['zswap_reject_compress_poor']} "
      f"limit {v['zswap_reject_pool_limit']} "
      f"charge peak {v['resident_peak']/2**20:.1f} MiB rss peak {rss/1024:.1f} MiB")
assert v["zswap_reject_compress_poor"] > 1000, "too few incompressible pages to test"
assert v["zswap_decompress_fail"] == 0 and v["swap_corrupt"] == 0, "corruption"
ok = eval(" ".join(check.split()), {}, {"v": v, "rss": rss, "MiB": 2**20})
assert ok, f"check failed: {check}"
PY
}

run "device" \
	'v["pswpout"] == v["zswap_reject_compress_poor"] and v["zswpwb"] == 0 and
	 v["zswap_reject_pool_limit"] == 0 and v["resident_peak"] <= 50*MiB' \
	--zswap-max 100
run "store, uncharged" \
	'v["pswpout"] == 0 and v["zswpwb"] == 0 and v["zswap_reject_pool_limit"] == 0 and
	 v["resident_peak"] <= 50*MiB and rss > (48 + 8) * 1024' \
	--zswap-max 100 --zswap-incompressible store --zswap-charge off
run "store, charged" \
	'v["pswpout"] < v["zswap_reject_compress_poor"] / 2 and v["resident_peak"] <= 52*MiB' \
	--zswap-max 100 --zswap-incompressible store
