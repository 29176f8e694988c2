#!/usr/bin/env bash
# Weight: 9
# Faults injected through the system-call layer (USWAP_INJECT) and a swap
# file corrupted behind uswap's back (tests/e2e/inject.c has the checks of
# each scenario: data intact, or SIGBUS exactly in the folios lost; the
# right counter; one log line):
#  - every scenario with io_uring; a failing read and short transfers also
#    with pread/pwrite; a corrupt read, a failing read and EEXIST also at
#    4K / 16K folios, where swap-in reads ahead (a failed read of a folio
#    and its readahead reads the folio alone again);
#  - under `uswap run`: harmless faults (short transfers, EAGAIN and
#    EEXIST from userfaultfd) leave a threaded stress run intact;
#  - --verify on|off and USWAP_VERIFY reach the program; a bad value is a
#    usage error, a bad USWAP_INJECT stops the runtime from starting.
set -u
. "$(dirname "$0")/lib.sh"
need_built uswap tests/e2e/inject tests/e2e/stress
need_cmd python3
I=$B/tests/e2e/inject

inject() {	# [ENV=VALUE...] -- SCENARIO [FOLIO]
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
	echo "inject $*${envs[*]:+ (${envs[*]})}"
	env "${envs[@]}" "$I" "$@" >"$T/out" 2>&1 </dev/null
	local rc=$?
	case $rc in
	0) grep -v "^uswap\[" "$T/out" | sed 's/^/  /' ;;
	77) sed 's/^/  /' "$T/out" ;;	# e.g. no UFFDIO_POISON: the others go on
	*) echo "inject $*: exit $rc"; cat "$T/out"; exit 1 ;;
	esac
}

for s in write_eio read_eio corrupt short_io enospc enospc_some mmap_enomem \
	uffd_eagain uffd_eexist compress_fail tamper tamper_off; do
	inject -- $s
done
for s in read_eio short_io; do
	inject USWAP_NO_IO_URING=1 -- $s
done
inject -- corrupt 4K
inject -- read_eio 4K
inject -- uffd_eexist 16K

echo "uswap run: short transfers and userfaultfd EAGAIN / EEXIST lose nothing"
USWAP_INJECT=short_write=0,short_read=0,uffd_eagain=5,uffd_eexist=7 \
	"$B/uswap" run --max 16M --stats "$T/s.json" -- \
	"$B/tests/e2e/stress" --mmap --size 48M --threads 2 --ops 2000 >"$T/out" 2>&1 ||
	{ echo "stress under injection: exit $?"; cat "$T/out"; exit 1; }
python3 - "$T/s.json" <<'PY' || { cat "$T/out"; exit 1; }
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
print({k: v[k] for k in ("pswpout", "pswpin", "swap_io_short", "swap_io_error", "swap_corrupt")})
assert v["pswpout"] > 0 and v["pswpin"] > 0, "no swap I/O"
assert v["swap_io_short"] > 0, "the short transfers were not counted"
assert v["swap_io_error"] == 0 and v["swap_corrupt"] == 0, "an error was counted"
PY
grep -q "fault injection on" "$T/out" || { echo "the injection was not announced"; cat "$T/out"; exit 1; }

echo "--verify reaches the program"
"$B/uswap" run --max 16M --verify off -- sh -c 'echo "$USWAP_VERIFY"' >"$T/out" 2>&1 &&
	[ "$(cat "$T/out")" = off ] || { echo "--verify off: USWAP_VERIFY is not off"; cat "$T/out"; exit 1; }
USWAP_VERIFY=off "$B/uswap" run --max 16M --verify on -- sh -c 'echo "${USWAP_VERIFY-unset}"' >"$T/out" 2>&1 &&
	[ "$(cat "$T/out")" = unset ] || { echo "--verify on: USWAP_VERIFY is set"; cat "$T/out"; exit 1; }
"$B/uswap" run --max 16M --verify off -- "$B/tests/e2e/stress" --mmap --size 48M --threads 2 --ops 2000 >"$T/out" 2>&1 ||
	{ echo "stress with --verify off: exit $?"; cat "$T/out"; exit 1; }
"$B/uswap" run --verify maybe -- true 2>"$T/err"
[ $? -eq 2 ] && grep -q -- '--verify: "maybe" is not a setting (expected on or off)' "$T/err" ||
	{ echo "--verify maybe: not a usage error"; cat "$T/err"; exit 1; }

echo "a bad USWAP_INJECT stops the runtime"
USWAP_INJECT=read_eio=7 "$B/uswap" run --max 16M -- true 2>"$T/err"
[ $? -eq 125 ] && grep -q 'USWAP_INJECT: "read_eio=7"' "$T/err" ||
	{ echo "USWAP_INJECT=read_eio=7 (no device 7): not refused"; cat "$T/err"; exit 1; }
echo ok
