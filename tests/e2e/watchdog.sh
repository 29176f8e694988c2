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
B=${USWAP_BUILD:-build}
set -u
T=$B/tests/e2e/watchdog
[ -x "$T" ] || { echo "SKIP: $T is not built" >&2; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

# run NAME BOUND EXPECTED-STATUS [VAR=VALUE...] MODE
run() {
	local name=$1 bound=$2 want=$3 mode=${*: -1} rc; shift 3
	env "${@:1:$#-1}" timeout -s KILL "$bound" "$T" "$mode" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 77 ] && { echo "SKIP: $(cat "$tmp/err")" >&2; exit 77; }
	if [ $rc -eq 137 ]; then
		echo "FAIL: $name: still running after $bound s (killed)"
	elif [ $rc -ne "$want" ]; then
		echo "FAIL: $name: exit status $rc, expected $want"
	else
		echo "$name: exit status $rc as expected"
		return 0
	fi
	cat "$tmp/out" "$tmp/err" | tail -20
	fail=1
	return 1
}

run "reads that fail" 120 0 USWAP_INJECT=uffd_read_eio=300 serve &&
	{ grep -q "reading userfaultfd failed" "$tmp/err" ||
	  { echo "FAIL: no read failed (was the fault injected?)"; fail=1; }; }
run "a thread that stops serving" 120 0 USWAP_INJECT=fault_stall=2000 serve
if run "every read fails" 120 123 USWAP_INJECT=uffd_read_eio=1 serve; then
	grep -q "exiting with status 123" "$tmp/err" ||
		{ echo "FAIL: no message says why"; cat "$tmp/err"; fail=1; }
fi
if run "userfaultfd closed" 120 124 close; then
	grep -q "stopped with status 124" "$tmp/err" ||
		{ echo "FAIL: no message says why"; cat "$tmp/err"; fail=1; }
fi
if grep -q "went on" "$tmp/out"; then
	echo "FAIL: userfaultfd closed: the program went on and read its memory"
	fail=1
fi
run "a member stopped" 120 0 stopped && cat "$tmp/out"
exit $fail
