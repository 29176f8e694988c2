#!/usr/bin/env bash
# Weight: 30
# Timeout: 600
# Locked managed memory (tests/e2e/mlock.c) under `uswap run --max 16M`:
# mlock, mlock2(MLOCK_ONFAULT), mlockall(MCL_CURRENT | MCL_FUTURE),
# MAP_LOCKED, and a lock made with the raw system call.  Locked pages are
# never evicted and hold their data; the process's peak RSS stays near the
# budget; a lock larger than the budget fails at once (ENOMEM, EAGAIN);
# MADV_DONTNEED of locked memory fails as the kernel's; a lock made behind
# uswap's back is found when the kernel refuses to drop it
# (unevictable_pgs_culled), and the pages stay.  uswap never logs
# that dropping evicted pages failed, and at the end of "lock" the 8 MiB
# still locked are charged and counted (nr_mlock, nr_unevictable).
B=${USWAP_BUILD:-build}
set -u
T=$B/tests/e2e/mlock
[ -x "$T" ] && [ -x "$B/uswap" ] || { echo "SKIP: $T or $B/uswap is not built" >&2; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the statistics" >&2; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$B/uswap" run --max 16M -- true 2>"$tmp/err"
[ $? -eq 125 ] && { echo "SKIP: $(cat "$tmp/err")" >&2; exit 77; }
for step in lock onfault madvise raw; do
	"$T" $step >"$tmp/out" 2>&1 || { echo "FAIL: $step fails without uswap"; cat "$tmp/out"; exit 1; }
done

fail=0
for folio in 4K 64K; do
	for step in lock onfault toolarge future madvise raw; do
		name="$step --folio $folio"
		timeout 60 "$B/uswap" run --max 16M --folio $folio --stats "$tmp/s.json" -- \
			"$T" $step >"$tmp/out" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "FAIL: $name: exit $rc$([ $rc -eq 124 ] && echo ' (timed out)')"
			tail -5 "$tmp/out"
			fail=1
			continue
		fi
		if grep -q "dropping evicted pages failed" "$tmp/out"; then
			echo "FAIL: $name: uswap says: $(grep -m1 "dropping evicted pages failed" "$tmp/out")"
			fail=1
		fi
		python3 - "$name" "$step" "$tmp/s.json" <<'PY' || fail=1
import json, sys
name, step, path = sys.argv[1:4]
v = json.load(open(path))["vmstat"]
MiB = 2**20
print(f"{name}: pswpout {v['pswpout']} resident at exit {v['resident_bytes'] // MiB} MiB "
      f"peak {v['resident_peak'] // MiB} MiB nr_mlock {v.get('nr_mlock')} "
      f"nr_unevictable {v.get('nr_unevictable')} max_overrun {v['max_overrun']}")
assert v["swap_corrupt"] == 0 and v["swap_io_error"] == 0, "swap errors"
assert v["pswpout"] > 0 or step == "toolarge", "nothing was evicted"
assert v["resident_peak"] <= 17 * MiB, "the charge passed the budget"
if step == "raw":
    assert v.get("unevictable_pgs_culled", 0) > 0, \
        "the pages locked behind uswap's back were never found refused"
if step == "lock":
    assert v.get("nr_mlock") == 2048 and v.get("nr_unevictable") == 2048, \
        "the 8 MiB locked at exit are not counted as nr_mlock and nr_unevictable"
    assert v["resident_bytes"] >= 8 * MiB, "the 8 MiB locked at exit are not charged"
PY
	done
done
exit $fail
