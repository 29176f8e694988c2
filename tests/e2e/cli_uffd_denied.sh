#!/bin/sh
# Description: when userfaultfd is not permitted (an unprivileged user, vm.unprivileged_userfaultfd=0), uswap run exits 125 and says why and what to change.
. "$(dirname "$0")/lib.sh"
need_built uswap
need_root "to run uswap as another user"
need_cmd setpriv
[ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" = 0 ] ||
	skip "vm.unprivileged_userfaultfd is not 0: userfaultfd is allowed to everyone"
chmod 755 "$T"
cp "$B/uswap" "$T/uswap" && chmod 755 "$T/uswap" || exit 1
touch "$T/libuswap_preload.so"

as_user nobody env TMPDIR=/tmp "$T/uswap" run -- true >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 125 ] || fail "exit $rc, expected 125 ($(cat "$T/err"))"
grep -qx "uswap: userfaultfd is not permitted for this user (vm.unprivileged_userfaultfd is 0; /dev/userfaultfd: Permission denied): an administrator can set vm.unprivileged_userfaultfd=1, give a group of the user read and write access to /dev/userfaultfd (see uswap(1)), or give the process CAP_SYS_PTRACE" "$T/err" ||
	fail "message: $(cat "$T/err")"
exit 0
