#!/bin/sh
# Description: while PROG runs, uswap passes on SIGTERM, SIGUSR1 and SIGHUP sent to it, and does not bounce back a signal PROG sent to uswap.
. "$(dirname "$0")/lib.sh"
need_built uswap
stand_in_preload	# this tests the command, not the library
need_uffd

: >"$T/log"
spawn "$U" run -- sh -c '
	log=$1
	trap "echo usr1 >>$log" USR1
	trap "echo usr2 >>$log" USR2
	trap "echo hup >>$log" HUP
	trap "echo term >>$log; exit 42" TERM
	echo ready >>$log
	kill -USR2 $PPID
	while :; do sleep 0.05; done' sh "$T/log"
pid=$!
wait_line "$T/log" '^ready$' || fail "PROG did not start"
kill -USR1 $pid
wait_line "$T/log" '^usr1$' || fail "SIGUSR1 was not passed on"
kill -HUP $pid
wait_line "$T/log" '^hup$' || fail "SIGHUP was not passed on"
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 42 ] || fail "after SIGTERM: exit $rc, expected PROG's 42 ($(cat "$T/log"))"
grep -q term "$T/log" || fail "SIGTERM was not passed on"
grep -q usr2 "$T/log" && fail "a signal from PROG to uswap came back to PROG"
[ "$(grep -c usr1 "$T/log")" -eq 1 ] || fail "SIGUSR1 arrived more than once"
exit 0
