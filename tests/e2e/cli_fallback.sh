#!/bin/sh
# Description: when userfaultfd is not permitted, uswap run --fallback fail (the default) exits 125 without running PROG, --fallback run (or USWAP_FALLBACK=run) warns and runs PROG unmanaged with PROG's exit status; a process whose preload library cannot start a runtime exits 125 before main unless USWAP_FALLBACK=run (with a hint when ulimit -v leaves no room for uswap's tables); bad values are usage errors.
. "$(dirname "$0")/lib.sh"
need_built uswap libuswap_preload.so

# Bad values: usage errors, before anything is checked.
for args in "--fallback maybe" "--fallback=" "--fallback"; do
	# shellcheck disable=SC2086
	"$U" run $args >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 2 ] || fail "run $args: exit $rc, expected 2"
done
"$U" run --fallback maybe true 2>"$T/err"
grep -qx 'uswap: --fallback: "maybe" is not a fallback (expected run or fail)' "$T/err" || fail "message: $(cat "$T/err")"
"$U" run --fallback 2>"$T/err"
grep -qx "uswap: option '--fallback' needs a value" "$T/err" || fail "message: $(cat "$T/err")"
USWAP_FALLBACK=maybe "$U" run true 2>"$T/err"
[ $? -eq 2 ] || fail "USWAP_FALLBACK=maybe: not a usage error"
grep -qx 'uswap: USWAP_FALLBACK: "maybe" is not a fallback (expected run or fail)' "$T/err" || fail "message: $(cat "$T/err")"
# The flag wins over a bad variable.
USWAP_FALLBACK=maybe "$U" run --fallback fail --max 16M true 2>"$T/err"
[ $? -eq 2 ] && fail "a bad USWAP_FALLBACK is an error although --fallback was given ($(cat "$T/err"))"

# No room in the address space (ulimit -v) for uswap's tables, sized for
# the swap device (--swap-size 64G: some 600 MiB of them): exit 125 before
# main, naming the limit and what needs less; with a 1G swap file it runs.
if "$U" run --max 16M true 2>/dev/null; then
	( ulimit -v 400000; exec "$U" run --max 64M --swap-size 64G -- sh -c 'exit 3' ) 2>"$T/err"
	rc=$?
	[ $rc -eq 125 ] || fail "ulimit -v 400000, --swap-size 64G: exit $rc, expected 125 ($(cat "$T/err"))"
	grep -q "cannot start (Cannot allocate memory; the address space limit (ulimit -v, 390 MiB) leaves too little for uswap's tables, which grow with the swap device: a smaller --swap-size needs less)" "$T/err" ||
		fail "ulimit -v: $(cat "$T/err")"
	( ulimit -v 400000; exec "$U" run --max 64M --swap-size 1G -- sh -c 'exit 3' ) 2>"$T/err"
	rc=$?
	[ $rc -eq 3 ] || fail "ulimit -v 400000, --swap-size 1G: exit $rc, expected 3 ($(cat "$T/err"))"
fi

# Userfaultfd refused: as an unprivileged user with vm.unprivileged_userfaultfd=0.
need_root "to run uswap as another user"
need_cmd setpriv
[ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" = 0 ] ||
	{ echo "SKIP: vm.unprivileged_userfaultfd is not 0: userfaultfd is allowed to everyone" >&2; exit 77; }
chmod 777 "$T"
cp "$U" "$B/libuswap_preload.so" "$T/" && chmod 755 "$T/uswap" "$T/libuswap_preload.so" || exit 1
nobody() {
	as_user nobody env TMPDIR=/tmp "$@"
}
denied="uswap: userfaultfd is not permitted for this user (vm.unprivileged_userfaultfd is 0; /dev/userfaultfd: Permission denied): an administrator can set vm.unprivileged_userfaultfd=1, give a group of the user read and write access to /dev/userfaultfd (see uswap(1)), or give the process CAP_SYS_PTRACE"
prog='echo "$LD_PRELOAD" >"$0"; exit 3'

# fail, the default: 125, PROG not run.
for args in "" "--fallback fail" "--fallback=fail"; do
	rm -f "$T/ran"
	# shellcheck disable=SC2086
	nobody "$T/uswap" run $args -- sh -c "$prog" "$T/ran" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 125 ] || fail "run $args: exit $rc, expected 125 ($(cat "$T/err"))"
	grep -qxF "$denied" "$T/err" || fail "run $args: $(cat "$T/err")"
	grep -qx "uswap: sh was not started (--fallback run would run it without uswap)" "$T/err" ||
		fail "run $args: $(cat "$T/err")"
	[ -e "$T/ran" ] && fail "run $args: PROG ran"
done
rm -f "$T/ran"
nobody USWAP_FALLBACK=run "$T/uswap" run --fallback fail -- sh -c "$prog" "$T/ran" 2>/dev/null
[ $? -eq 125 ] || fail "--fallback fail did not win over USWAP_FALLBACK=run"

# run: a warning, PROG runs without the preload library, its status is uswap's.
for how in flag env; do
	rm -f "$T/ran" "$T/s.json"
	if [ $how = flag ]; then
		nobody "$T/uswap" run --fallback run --stats "$T/s.json" -- sh -c "$prog" "$T/ran" >/dev/null 2>"$T/err"
	else
		nobody USWAP_FALLBACK=run "$T/uswap" run --stats "$T/s.json" -- sh -c "$prog" "$T/ran" >/dev/null 2>"$T/err"
	fi
	rc=$?
	[ $rc -eq 3 ] || fail "fallback run ($how): exit $rc, expected PROG's 3 ($(cat "$T/err"))"
	grep -qxF "$denied" "$T/err" || fail "fallback run ($how): $(cat "$T/err")"
	grep -qx "uswap: --fallback run: sh runs without uswap, with no memory budget" "$T/err" ||
		fail "fallback run ($how): $(cat "$T/err")"
	[ -f "$T/ran" ] || fail "fallback run ($how): PROG did not run"
	grep -q libuswap_preload "$T/ran" && fail "fallback run ($how): PROG got the preload library: $(cat "$T/ran")"
	grep -q '"processes": 0' "$T/s.json" || fail "fallback run ($how): statistics $(cat "$T/s.json")"
done

# In the process: the preload library cannot start a runtime.
for fb in "" fail; do
	rm -f "$T/ran"
	nobody ${fb:+USWAP_FALLBACK=$fb} LD_PRELOAD="$T/libuswap_preload.so" \
		sh -c 'echo ran >"$0"; exit 5' "$T/ran" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 125 ] || fail "preload, USWAP_FALLBACK=$fb: exit $rc, expected 125 ($(cat "$T/err"))"
	grep -qx "uswap\[[0-9]*\]: cannot start (Operation not permitted): exiting with status 125 (USWAP_FALLBACK=run would run the program without uswap)" "$T/err" ||
		fail "preload, USWAP_FALLBACK=$fb: $(cat "$T/err")"
	[ -e "$T/ran" ] && fail "preload, USWAP_FALLBACK=$fb: main ran"
done
rm -f "$T/ran"
nobody USWAP_FALLBACK=run LD_PRELOAD="$T/libuswap_preload.so" \
	sh -c 'echo ran >"$0"; exit 5' "$T/ran" >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 5 ] || fail "preload, USWAP_FALLBACK=run: exit $rc, expected 5 ($(cat "$T/err"))"
grep -qx "uswap\[[0-9]*\]: cannot start (Operation not permitted): the program runs without uswap (USWAP_FALLBACK=run)" "$T/err" ||
	fail "preload, USWAP_FALLBACK=run: $(cat "$T/err")"
[ -f "$T/ran" ] || fail "preload, USWAP_FALLBACK=run: main did not run"
exit 0
