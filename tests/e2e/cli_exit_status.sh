#!/bin/sh
# Description: uswap run exits with PROG's status, dies of PROG's signal, and exits 127 / 126 with a message when PROG is missing / not executable.
. "$(dirname "$0")/lib.sh"
need_built uswap
stand_in_preload	# this tests the command, not the library
need_uffd

"$U" run -- sh -c 'exit 3'
[ $? -eq 3 ] || fail "exit 3 was not passed on"
"$U" run sh -c 'exit 0' || fail "exit 0 was not passed on"
"$U" run sh -c 'exit 255'
[ $? -eq 255 ] || fail "exit 255 was not passed on"
"$U" run false
[ $? -eq 1 ] || fail "false did not give 1"

# Death by a signal: uswap dies of the same signal (not exit 128+N).
ulimit -c 0
if command -v python3 >/dev/null 2>&1; then
	for sig in TERM KILL INT ABRT; do
		python3 -c '
import signal, subprocess, sys
r = subprocess.run(sys.argv[2:]).returncode
sys.exit(0 if r == -getattr(signal, "SIG" + sys.argv[1]) else r or 99)
' "$sig" "$U" run -- sh -c "kill -$sig \$\$" ||
			fail "PROG killed by SIG$sig: uswap did not die of SIG$sig"
	done
else
	"$U" run -- sh -c 'kill -TERM $$'
	[ $? -eq 143 ] || fail "PROG killed by SIGTERM: status is not 143"
fi

"$U" run uswap-no-such-program-here >/dev/null 2>"$T/err"
[ $? -eq 127 ] || fail "missing PROG: exit is not 127"
grep -qx "uswap: uswap-no-such-program-here: No such file or directory" "$T/err" ||
	fail "missing PROG: message '$(cat "$T/err")'"
"$U" run -- "$T/missing" >/dev/null 2>"$T/err"
[ $? -eq 127 ] || fail "missing PROG path: exit is not 127"

printf 'echo hi\n' >"$T/noexec"
chmod 644 "$T/noexec"
"$U" run -- "$T/noexec" >/dev/null 2>"$T/err"
[ $? -eq 126 ] || fail "non-executable PROG: exit is not 126"
grep -qx "uswap: $T/noexec: Permission denied" "$T/err" ||
	fail "non-executable PROG: message '$(cat "$T/err")'"
"$U" run -- "$T" >/dev/null 2>&1
[ $? -eq 126 ] || fail "a directory as PROG: exit is not 126"

# PROG's arguments are its own, flags included; "--" is optional.
out=$("$U" run printf '%s|' --max -v -- x) || fail "printf failed"
[ "$out" = "--max|-v|--|x|" ] || fail "arguments after PROG: '$out'"
out=$("$U" run -- -not-an-option 2>&1)
[ $? -eq 127 ] || fail "PROG starting with '-' after --: $out"
exit 0
