#!/usr/bin/env bash
# Weight: 30
# Timeout: 400
# Nobody waits forever on uswap (tests/e2e/watchdog.c).  Each run has a
# generous bound that only catches a hang.
#  - fault threads whose reads of the userfaultfd fail now and then
#    (they stop), or that stop serving with a fault in hand: the program
#    completes, every byte read back as written;
#  - fault threads whose every read fails: the program is stopped with a
#    message and exit status 123; a userfaultfd closed behind the
#    runtime's back (a raw close): stopped with a message and status 124
#    (its descriptor lost, fdtable.c); neither reads wrong data;
#  - a process of the tree stopped (SIGSTOP) while it holds most of the
#    budget: the other gets through, and both read their data back.
set -u
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/watchdog
W=$B/tests/e2e/watchdog
failed=0

# run NAME BOUND EXPECTED-STATUS [VAR=VALUE...] MODE
run() {
	local name=$1 bound=$2 want=$3 mode=${*: -1} rc; shift 3
	env "${@:1:$#-1}" timeout -s KILL "$bound" "$W" "$mode" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -eq 77 ] && skip "$(cat "$T/err")"
	if [ $rc -eq 137 ]; then
		echo "FAIL: $name: still running after $bound s (killed)"
	elif [ $rc -ne "$want" ]; then
		echo "FAIL: $name: exit status $rc, expected $want"
	else
		echo "$name: exit status $rc as expected"
		return 0
	fi
	cat "$T/out" "$T/err" | tail -20
	failed=1
	return 1
}

run "reads that fail" 120 0 USWAP_INJECT=uffd_read_eio=300 serve &&
	{ grep -q "reading userfaultfd failed" "$T/err" ||
	  { echo "FAIL: no read failed (was the fault injected?)"; failed=1; }; }
run "a thread that stops serving" 120 0 USWAP_INJECT=fault_stall=2000 serve
if run "every read fails" 120 123 USWAP_INJECT=uffd_read_eio=1 serve; then
	grep -q "exiting with status 123" "$T/err" ||
		{ echo "FAIL: no message says why"; cat "$T/err"; failed=1; }
fi
if run "userfaultfd closed" 120 124 close; then
	grep -q "stopped with status 124" "$T/err" ||
		{ echo "FAIL: no message says why"; cat "$T/err"; failed=1; }
fi
if grep -q "went on" "$T/out"; then
	echo "FAIL: userfaultfd closed: the program went on and read its memory"
	failed=1
fi
run "a member stopped" 120 0 stopped && cat "$T/out"
exit $failed
