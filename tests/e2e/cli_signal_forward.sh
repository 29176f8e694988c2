#!/bin/sh
# Description: while PROG runs, uswap passes on SIGTERM, SIGUSR1 and SIGHUP sent to it, and does not bounce back a signal PROG sent to uswap.
B=${USWAP_BUILD:-$(dirname "$0")/../../build}
[ -x "$B/uswap" ] || { echo "SKIP: $B/uswap is not built" >&2; exit 77; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# A copy of uswap next to a stand-in preload library (any harmless shared
# library: libm), so that this tests the command, not the library.
cp "$B/uswap" "$T/uswap" || exit 1
U=$T/uswap
for lib in $(ldconfig -p 2>/dev/null | awk '$1 == "libm.so.6" { print $NF }'); do
	cp "$lib" "$T/libuswap_preload.so" 2>/dev/null &&
		[ -z "$(LD_PRELOAD=$T/libuswap_preload.so /bin/true 2>&1)" ] && break
	rm -f "$T/libuswap_preload.so"
done
[ -f "$T/libuswap_preload.so" ] || { echo "SKIP: no libm.so.6 to stand in for the preload library" >&2; exit 77; }
"$U" run true 2>"$T/err"
case $? in
0) ;;
125) echo "SKIP: $(cat "$T/err")" >&2; exit 77 ;;
*) fail "uswap run true: $(cat "$T/err")" ;;
esac

# wait_for FILE PATTERN: up to 10 s for a line PATTERN in FILE.
wait_for() {
	i=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 200 ] && return 1
		sleep 0.05
	done
	return 0
}

: >"$T/log"
"$U" run -- sh -c '
	log=$1
	trap "echo usr1 >>$log" USR1
	trap "echo usr2 >>$log" USR2
	trap "echo hup >>$log" HUP
	trap "echo term >>$log; exit 42" TERM
	echo ready >>$log
	kill -USR2 $PPID
	while :; do sleep 0.05; done' sh "$T/log" &
pid=$!
wait_for "$T/log" ready || { kill -KILL $pid; fail "PROG did not start"; }
kill -USR1 $pid
wait_for "$T/log" usr1 || { kill -KILL $pid; fail "SIGUSR1 was not passed on"; }
kill -HUP $pid
wait_for "$T/log" hup || { kill -KILL $pid; fail "SIGHUP was not passed on"; }
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 42 ] || fail "after SIGTERM: exit $rc, expected PROG's 42 ($(cat "$T/log"))"
grep -q term "$T/log" || fail "SIGTERM was not passed on"
grep -q usr2 "$T/log" && fail "a signal from PROG to uswap came back to PROG"
[ "$(grep -c usr1 "$T/log")" -eq 1 ] || fail "SIGUSR1 arrived more than once"
exit 0
