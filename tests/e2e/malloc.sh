#!/usr/bin/env bash
# Weight: 8
# The malloc family under `uswap run --max 16M` (tests/e2e/malloc.c): large
# blocks from every function are managed, swapped out and back with every
# byte kept, and all given back at free; small ones stay with the C library.
#  - the test program passes on the C library alone (the test is right);
#  - under uswap: swapped out and in, the budget kept, the peak RSS below
#    one 64 MiB block, nothing managed or in swap left at exit;
#  - a forked child uses and frees its parent's blocks;
#  - hundreds of blocks at once (the library's table of blocks);
#  - the threshold is --min-region (default and 256K);
#  - python3 fills and sums a 48 MiB bytearray under uswap;
#  - with jemalloc (if installed) preloaded too, small blocks stay with it.
B=${USWAP_BUILD:-build}
set -u
T=$B/tests/e2e/malloc
[ -x "$T" ] && [ -x "$B/uswap" ] || { echo "SKIP: $T or $B/uswap is not built" >&2; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the statistics" >&2; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$B/uswap" run --max 16M -- true 2>"$tmp/err"
[ $? -eq 125 ] && { echo "SKIP: $(cat "$tmp/err")" >&2; exit 77; }

"$T" plain || { echo "FAIL: the test fails on the C library alone"; exit 1; }

# AddressSanitizer's shadow memory and quarantine are in the test
# program's RSS (hundreds of MiB here): its bound holds in plain builds
# only; the budget's charge is checked in every build.
asan=false rss_bound='rss < 64 * MiB'
if ldd "$T" 2>/dev/null | grep -q libasan; then
	asan=true rss_bound=True
	echo "NOTE: AddressSanitizer build: the test program's peak RSS is not bounded (shadow memory)"
fi

# check NAME STATS PYTHON-EXPR: assert an expression over the counters.
check() {
	python3 - "$@" <<'PY'
import json, sys
name, path, expr = sys.argv[1:4]
d = json.load(open(path)); v = d["vmstat"]; rss = d["process"]["rss_peak_kib"] * 1024
MiB = 2**20
print(f"{name}: pswpout {v['pswpout']} pswpin {v['pswpin']} zswpout {v['zswpout']} "
      f"charge peak {v['resident_peak']/MiB:.1f} MiB rss peak {rss/MiB:.1f} MiB "
      f"managed at exit {v['managed_bytes']} swap used at exit {v['swap_used_bytes']}")
assert v["swap_corrupt"] == 0 and v["swap_io_error"] == 0, "swap errors"
assert eval("(" + expr + ")", {}, {"v": v, "rss": rss, "MiB": MiB}), f"{name}: check failed: {expr}"
PY
}

t0=$SECONDS
"$B/uswap" run --max 16M --stats "$tmp/s.json" -- "$T" managed 2>"$tmp/err" ||
	{ echo "FAIL: under uswap (exit $?)"; cat "$tmp/err"; exit 1; }
# Swapped out and in; the charge within --max (plus one reclaim batch);
# no 64 MiB block was ever wholly resident; everything given back at free.
check "malloc managed ($((SECONDS - t0))s)" "$tmp/s.json" \
	'(v["pswpout"] + v["zswpout"]) > 0 and (v["pswpin"] + v["zswpin"]) > 0 and
	 v["resident_peak"] <= 18 * MiB and v["max_overrun"] == 0 and
	 '"$rss_bound"' and
	 v["managed_bytes"] == 0 and v["resident_bytes"] == 0 and v["swap_used_bytes"] == 0' ||
	{ cat "$tmp/err"; exit 1; }

# A forked child reads, moves and frees its parent's blocks.  Its budget
# is not checked: a child's faults may pass --max (max_overrun) while it
# takes over the runtime, with or without malloc.
"$B/uswap" run --max 16M --stats "$tmp/f.json" -- "$T" fork 2>"$tmp/err" ||
	{ echo "FAIL: fork under uswap (exit $?)"; cat "$tmp/err"; exit 1; }
check "malloc fork" "$tmp/f.json" \
	'v["pswpout"] + v["zswpout"] > 0 and v["managed_bytes"] == 0 and v["swap_used_bytes"] == 0' ||
	{ cat "$tmp/err"; exit 1; }

# Hundreds of blocks at once, freed in random order and made again.
"$B/uswap" run --max 16M --min-region 64K --folio 64K --stats "$tmp/m.json" -- "$T" many 2>"$tmp/err" ||
	{ echo "FAIL: many blocks (exit $?)"; cat "$tmp/err"; exit 1; }
check "malloc many" "$tmp/m.json" \
	'v["pswpout"] + v["zswpout"] > 0 and v["managed_bytes"] == 0 and v["swap_used_bytes"] == 0' ||
	{ cat "$tmp/err"; exit 1; }

"$B/uswap" run --max 16M -- "$T" threshold 1M ||
	{ echo "FAIL: threshold at the default --min-region"; exit 1; }
"$B/uswap" run --max 16M --min-region 256K -- "$T" threshold 256K ||
	{ echo "FAIL: threshold at --min-region 256K"; exit 1; }

# A real program: CPython, whose allocator hands large objects to malloc.
"$B/uswap" run --max 16M --stats "$tmp/py.json" -- python3 -c '
n = 48 << 20
b = bytearray(n)
b[:] = bytes(range(256)) * (n // 256)
want = 32640 * (n // 256)
s = sum(b)
assert s == want, (s, want)
print("python: sum", s)
' 2>"$tmp/err" || { echo "FAIL: python3 under uswap (exit $?)"; cat "$tmp/err"; exit 1; }
check "python3 bytearray" "$tmp/py.json" \
	'(v["pswpout"] + v["zswpout"]) > 0 and (v["pswpin"] + v["zswpin"]) > 0 and
	 v["resident_peak"] <= 18 * MiB and rss < 48 * MiB' ||
	{ cat "$tmp/err"; exit 1; }

# A program with an allocator of its own keeps it for small blocks.  Run
# in a session of its own: a hang (the allocator re-entered while it
# initialises) is killed with the whole process group.
jemalloc=$(ldconfig -p 2>/dev/null | awk '/libjemalloc\.so\.2 /{ print $NF; exit }')
if [ -n "$jemalloc" ] && $asan; then
	# Its malloc and AddressSanitizer's cannot both replace the C library's.
	echo "NOTE: AddressSanitizer build: the jemalloc part is skipped"
elif [ -n "$jemalloc" ]; then
	LD_PRELOAD=$jemalloc setsid "$B/uswap" run --max 16M -- "$T" jemalloc \
		>"$tmp/out" 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		kill -KILL -- -$pid; wait $pid
		echo "FAIL: hung with jemalloc preloaded (60 s)"; exit 1
	fi
	wait $pid || { echo "FAIL: with jemalloc (exit $?)"; cat "$tmp/out" "$tmp/err"; exit 1; }
	cat "$tmp/out"
else
	echo "NOTE: libjemalloc.so.2 is not installed: the jemalloc part is skipped"
fi
echo "PASS: malloc"
