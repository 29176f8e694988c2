#!/usr/bin/env bash
# Encryption at rest, round trips (tests/e2e/encrypt.c has the checks):
#  - every page intact with --encrypt on at 16K (swap-in readahead), 64K and
#    2M folios, through io_uring and pread/pwrite, with and without the
#    compressed pool writing back to the device; the key locked;
#  - a child after fork reads what its parent swapped out and swaps out its
#    own (64K; 2M with the pool writing back);
#  - under `uswap run`: --encrypt reaches the program (USWAP_ENCRYPT), a
#    threaded stress run with --verify off stays intact and counts
#    swap_encrypt, a bad value is a usage error.
# tests/e2e/encrypt_tamper.sh: the device's bytes, and what tampering does.
B=${USWAP_BUILD:-build}
set -u
cd "$(dirname "$0")/../.." || exit 1
E=$B/tests/e2e/encrypt
[ -x "$E" ] || { echo "SKIP: $E is not built"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

scenario() {	# [ENV=VALUE...] -- ARGS
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
	echo "encrypt $*${envs[*]:+ (${envs[*]})}"
	env "${envs[@]}" "$E" "$@" >"$tmp/out" 2>&1 </dev/null
	local rc=$?
	case $rc in
	0|77) sed 's/^/  /' "$tmp/out" ;;
	*) echo "encrypt $*: exit $rc"; cat "$tmp/out"; exit 1 ;;
	esac
}

scenario -- roundtrip 16K
scenario -- roundtrip 64K
scenario -- roundtrip 2M
scenario USWAP_NO_IO_URING=1 -- roundtrip 64K
scenario -- pool 64K
scenario -- fork 64K
scenario -- fork 2M pool	# 2M folios through the pool's writeback

stats() {	# FILE: the counters that matter, and no error
	python3 - "$1" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
print("  ", {k: v[k] for k in ("pswpout", "pswpin", "swap_encrypt", "swap_corrupt", "swap_io_error")})
assert v["pswpout"] > 0 and v["pswpin"] > 0, "no swap I/O"
assert v["swap_encrypt"] >= v["pswpout"], "pages went out unencrypted"
assert v["swap_io_error"] == 0 and v["swap_corrupt"] == 0, "an error was counted"
PY
}

echo "uswap run --encrypt on --verify off: stress"
"$B/uswap" run --max 16M --encrypt on --verify off --stats "$tmp/s.json" -- \
	"$B/tests/e2e/stress" --mmap --size 48M --threads 2 --ops 2000 >"$tmp/out" 2>&1 ||
	{ echo "stress: exit $?"; cat "$tmp/out"; exit 1; }
stats "$tmp/s.json" || { cat "$tmp/out"; exit 1; }

echo "--encrypt reaches the program"
"$B/uswap" run --max 16M --encrypt on -- sh -c 'echo "$USWAP_ENCRYPT"' >"$tmp/out" 2>&1 &&
	[ "$(cat "$tmp/out")" = on ] || { echo "--encrypt on: USWAP_ENCRYPT is not on"; cat "$tmp/out"; exit 1; }
USWAP_ENCRYPT=on "$B/uswap" run --max 16M --encrypt off -- sh -c 'echo "${USWAP_ENCRYPT-unset}"' >"$tmp/out" 2>&1 &&
	[ "$(cat "$tmp/out")" = unset ] || { echo "--encrypt off: USWAP_ENCRYPT is set"; cat "$tmp/out"; exit 1; }
"$B/uswap" run --encrypt maybe -- true 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- '--encrypt: "maybe" is not a setting (expected on or off)' "$tmp/err" ||
	{ echo "--encrypt maybe: not a usage error"; cat "$tmp/err"; exit 1; }
USWAP_ENCRYPT=yes "$B/uswap" run -- true 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'USWAP_ENCRYPT: "yes" is not a setting' "$tmp/err" ||
	{ echo "USWAP_ENCRYPT=yes: not a usage error"; cat "$tmp/err"; exit 1; }
"$B/uswap" run --help | grep -q -- "--encrypt on|off" || { echo "--help lacks --encrypt"; exit 1; }
echo ok
