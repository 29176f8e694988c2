#!/usr/bin/env bash
# Weight: 40
# Timeout: 900
# The kernel writes into managed memory under heavy reclaim, and every byte
# it wrote is read back (tests/e2e/pinned.c), under `uswap run --max 16M`:
# io_uring fixed buffers (registered through liburing, and with the raw
# system call no interposer sees), O_DIRECT reads from three threads,
# vmsplice(2) from a pipe, process_vm_writev(2) from another process;
# 4K folios with slot checksums, 64K folios without.  Reclaim really ran
# (pswpout), nothing failed its checksum, buffers registered through
# liburing are counted pinned (nr_unevictable, 32 MiB of them refused
# under the 16 MiB budget) and those registered behind uswap's back were
# refused by the kernel's move (evict_busy).
B=${USWAP_BUILD:-build}
set -u
T=$B/tests/e2e/pinned
[ -x "$T" ] && [ -x "$B/uswap" ] || { echo "SKIP: $T or $B/uswap is not built" >&2; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the statistics" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/uswap-pinned.XXXXXX"); trap 'rm -rf "$tmp"' EXIT

"$B/uswap" run --max 16M -- true 2>"$tmp/err"
[ $? -eq 125 ] && { echo "SKIP: $(cat "$tmp/err")" >&2; exit 77; }

# check NAME STATS PYTHON-EXPR: assert an expression over the counters.
check() {
	python3 - "$@" <<'PY'
import json, sys
name, path, expr = sys.argv[1:4]
v = json.load(open(path))["vmstat"]
print(f"{name}: pswpout {v['pswpout']} pswpin {v['pswpin']} "
      + " ".join(f"{k} {v[k]}" for k in ("evict_move", "evict_busy", "evict_wait", "nr_unevictable") if k in v))
assert v["swap_corrupt"] == 0 and v["swap_io_error"] == 0, "swap errors"
assert eval("(" + expr + ")", {}, {"v": v}), f"{name}: check failed: {expr}"
PY
}

fail=0
for mode in uring uring-raw odirect vmsplice vm_writev; do
	# Folio size and checksums two ways (not all four: each run takes
	# seconds, and neither choice touches how the other works).
	for fv in "4K on" "64K off"; do
		read -r folio verify <<<"$fv"
		name="$mode folio $folio verify $verify"
		"$B/uswap" run --max 16M --folio $folio --verify $verify \
			--stats "$tmp/s.json" -- "$T" $mode "$tmp" >"$tmp/out" 2>&1
		rc=$?
		if [ $rc -eq 77 ]; then
			echo "SKIP: $name: $(tail -1 "$tmp/out")"
			continue
		fi
		if [ $rc -ne 0 ]; then
			echo "FAIL: $name: exit $rc"
			tail -5 "$tmp/out"
			fail=1
			continue
		fi
		case $mode in
		uring) want='v["nr_unevictable"] == 2048' ;;	# 8 MiB registered at exit
		uring-raw) want='v["evict_busy"] > 0' ;;	# refused: pinned
		*) want=True ;;
		esac
		check "$name" "$tmp/s.json" 'v["pswpout"] > 0 and '"$want" || fail=1
	done
done
exit $fail
