#!/bin/sh
# Description: a user who is not root, on a system with vm.unprivileged_userfaultfd=0, runs uswap through a group given read and write access to /dev/userfaultfd (a workload that swaps, checked byte for byte); without the group, uswap run exits 125 naming the ways an administrator can allow it.
# Timeout: 300
# Weight: 15
. "$(dirname "$0")/lib.sh"
need_built uswap libuswap_preload.so bench/usemem
need_root "to create a user and change /dev/userfaultfd"
need_cmd groupadd groupdel
[ -c /dev/userfaultfd ] || skip "no /dev/userfaultfd (Linux 6.1 or later, CONFIG_USERFAULTFD)"
SYSCTL=/proc/sys/vm/unprivileged_userfaultfd
[ -w "$SYSCTL" ] || skip "cannot set vm.unprivileged_userfaultfd"
W=$B/bench/usemem
USER_=uswap_t_g_3_$$
GROUP_=uswap_t_g_3uffd_$$
# The sysctl and the device are the machine's: another run of this test
# (a second make check) waits for this one.
exec 9>/tmp/uswap-test-userfaultfd.lock
flock 9
# What this test changes, as it was, put back whatever happens.
OLD_SYSCTL=$(cat "$SYSCTL") || exit 1
OLD_DEV=$(stat -c '%u:%g %a' /dev/userfaultfd) || exit 1
at_exit 'chown "${OLD_DEV% *}" /dev/userfaultfd; chmod "${OLD_DEV#* }" /dev/userfaultfd; echo "$OLD_SYSCTL" >"$SYSCTL"'
groupdel "$GROUP_" 2>/dev/null
groupadd "$GROUP_" || fail "groupadd $GROUP_"
at_exit 'groupdel "$GROUP_" 2>/dev/null'
user_new "$USER_"
GID=$(getent group "$GROUP_" | cut -d: -f3)
chmod 755 "$T"
mkdir "$T/bin" "$T/tmp" && cp "$U" "$B/libuswap_preload.so" "$W" "$T/bin/" &&
	chmod 755 "$T/bin"/* && chown "$USER_" "$T/tmp" || exit 1
echo 0 >"$SYSCTL" || fail "cannot set vm.unprivileged_userfaultfd=0"
chgrp "$GROUP_" /dev/userfaultfd && chmod 0660 /dev/userfaultfd || fail "cannot change /dev/userfaultfd"

# As the user, in the group: 64M written and read back under a 16M budget.
setpriv --reuid="$USER_" --regid="$(id -g "$USER_")" --groups="$GID" \
	--inh-caps=-all --bounding-set=-all \
	env TMPDIR="$T/tmp" "$T/bin/uswap" run --max 16M --stats "$T/tmp/s.json" -- \
	"$T/bin/usemem" --size 64M --rw --passes 2 --verify >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] || fail "uswap run as $USER_ in group $GROUP_: exit $rc ($(cat "$T/err"))"
grep -q "^usemem mode=" "$T/out" || fail "usemem: $(cat "$T/out" "$T/err")"
pswpout=$(sed -n 's/^ *"pswpout": \([0-9]*\),\{0,1\}$/\1/p' "$T/tmp/s.json" | head -1)
[ "${pswpout:-0}" -gt 0 ] || fail "the workload did not swap: $(cat "$T/tmp/s.json")"

# Without the group: exit 125, and the ways to allow it.
as_user "$USER_" env TMPDIR="$T/tmp" "$T/bin/uswap" run --max 16M -- "$T/bin/usemem" --size 8M >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 125 ] || fail "uswap run as $USER_ without the group: exit $rc, expected 125 ($(cat "$T/err"))"
grep -qx "uswap: userfaultfd is not permitted for this user (vm.unprivileged_userfaultfd is 0; /dev/userfaultfd: Permission denied): an administrator can set vm.unprivileged_userfaultfd=1, give a group of the user read and write access to /dev/userfaultfd (see uswap(1)), or give the process CAP_SYS_PTRACE" "$T/err" ||
	fail "message without the group: $(cat "$T/err")"
exit 0
