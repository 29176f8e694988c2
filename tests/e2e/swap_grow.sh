#!/usr/bin/env bash
# The default swap file grows with what is swapped: 1280 MiB under a 64 MiB
# budget (more than the file's first size) reads back byte-exact with no
# overrun of --max, and unmapping most of it gives the file's blocks back.
# On a 200 MiB file system (a tmpfs mounted here, as root) with 80 MiB
# taken by another file, the file stops at its share of the free space
# (half: 60 MiB) with one message giving the figures, and the data still
# reads back right.
# Timeout: 900
# Weight: 60
B=${USWAP_BUILD:-build}
set -u
[ -x "$B/tests/e2e/swap_grow" ] || { echo "SKIP: $B/tests/e2e/swap_grow is not built"; exit 77; }
T=$(mktemp -d); mnt=
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# stat NAME FILE: a counter of the merged --stats file.
stat_of() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[2]))["vmstat"][sys.argv[1]])' "$1" "$2"
}

mkdir "$T/dir"
nice "$B/uswap" run --max 64M --stats "$T/s.json" --swap-dir "$T/dir" -- \
	"$B/tests/e2e/swap_grow" 1280M 128M "$T/dir" >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out"
[ $rc -eq 77 ] && { cat "$T/err"; echo "SKIP: no swap file found"; exit 77; }
[ $rc -eq 0 ] || { cat "$T/err"; fail "1280M under --max 64M: exit $rc"; }
grep -q "no tier has room\|swap space is full" "$T/err" && { cat "$T/err"; fail "the swap file ran out of room"; }
over=$(stat_of max_overrun "$T/s.json"); full=$(stat_of swap_full "$T/s.json")
out=$(stat_of pswpout "$T/s.json")
echo "pswpout $out swap_full $full max_overrun $over"
[ "$out" -gt $((1024 * 256)) ] || fail "only $out pages swapped out (expected more than 1 GiB)"
[ "$full" -eq 0 ] || fail "swap_full $full"
[ "$over" -eq 0 ] || fail "max_overrun $over"

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP (part): the small file system needs root to mount a tmpfs"
	exit 0
fi
mnt=$T/small
mkdir "$mnt"
mount -t tmpfs -o size=200M,mode=0700 uswap_t_F_grow "$mnt" || fail "cannot mount a tmpfs"
# Another user of the file system holds 80 MiB of it: 120 MiB free.
head -c 80M /dev/zero >"$mnt/other" || fail "cannot write the 80 MiB file"
timeout 600 nice "$B/uswap" run --max 32M --stats "$T/s2.json" --swap-dir "$mnt" -- \
	"$B/tests/e2e/swap_grow" 512M 512M "$mnt" >"$T/out" 2>"$T/err"
rc=$?
cat "$T/err"
[ $rc -eq 124 ] && fail "512M on a 200 MiB file system: no end within 600 s"
[ $rc -eq 0 ] || fail "512M on a 200 MiB file system: exit $rc"
full=$(stat_of swap_full "$T/s2.json")
peak=$(python3 -c 'import json,sys; print(max(r["peak_used_kib"] for r in json.load(open(sys.argv[1]))["swaps"]))' "$T/s2.json")
echo "swap_full $full peak_used_kib $peak"
[ "$full" -gt 0 ] || fail "swap_full 0 with 512M through a 200 MiB file system"
# Half of the free space at most (the file system keeps as much free as
# the file holds), 2 MiB of slack for the last cluster.
[ "$peak" -le $(( (60 + 2) * 1024 )) ] || fail "the swap file held $peak KiB with 120 MiB free"
[ "$peak" -ge $(( (60 - 4) * 1024 )) ] || fail "the swap file stopped at $peak KiB with 120 MiB free"
n=$(grep -c "swap file .* is full" "$T/err")
[ "$n" -ge 1 ] || fail "no message saying the swap file is full"
grep "swap file .* is full" "$T/err" | grep -q "[0-9] MiB used, cap [0-9]* MiB, [0-9]* MiB free" ||
	fail "the message does not give the figures (used, cap, free)"
exit 0
