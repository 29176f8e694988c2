#!/usr/bin/env bash
# Weight: 6
# A thread of uswap that crashes says so before the process dies of it
# (USWAP_INJECT thread_crash, thread_abort: a fault thread stores to
# address 8, or calls abort()): one line naming the thread, the signal,
# the address and where the instruction is, then uswap run dies of the
# same signal.  A crash of the program's own thread gets no such line.
set -u
. "$(dirname "$0")/lib.sh"
need_built uswap tests/e2e/procmem tests/e2e/coredump
P=$B/tests/e2e/procmem
C=$B/tests/e2e/coredump
fail() { echo "FAIL: $*"; cat "$T/err"; exit 1; }

# inject KIND SIGNAL LINE: the fault thread dies of SIGNAL, LINE is said.
inject() {
	local rc want=$((128 + $(kill -l "$2")))
	( ulimit -c 0; USWAP_INJECT=$1=3 exec "$U" run --max 16M -- "$P" target 64M </dev/null >/dev/null 2>"$T/err" )
	rc=$?
	echo "$1: exit $rc"
	grep -v "fault injection on" "$T/err" | sed 's/^/  /'
	[ $rc -eq "$want" ] || fail "$1: exit $rc, expected $want (SIG$2)"
	[ "$(grep -c "uswap's thread" "$T/err")" -eq 1 ] || fail "$1: not one line"
	grep -Eq "^uswap\[[0-9]+\]: uswap's thread uswap-fault \(tid [0-9]+\) crashed: $3, instruction 0x[0-9a-f]+ in [^ ]+\+0x[0-9a-f]+; the process dies of it \(a bug in uswap: please report it\)$" "$T/err" ||
		fail "$1: the line"
}
inject thread_crash SEGV "SIGSEGV at address 0x8"
grep -q "in libuswap_preload.so+" "$T/err" || fail "the instruction is not placed in the preload library"
inject thread_abort ABRT "SIGABRT"

echo "the program's own crash: no such line"
( ulimit -c 0; exec "$U" run --max 16M -- "$C" crash 8M segv >/dev/null 2>"$T/err" )
rc=$?
[ $rc -eq 139 ] || fail "exit $rc, expected 139"
grep -q "uswap's thread" "$T/err" && fail "the program's crash taken for uswap's"
echo ok
