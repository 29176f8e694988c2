#!/usr/bin/env bash
# A --swaptab that is not a plain file of the user's is refused at once
# with one message naming it: a FIFO (which would block a reader for
# ever), a symbolic link, a device, a file others may write, one owned by
# another user; the same FIFO in USWAP_SWAPTAB, read by the runtime of a
# program started without uswap run, does not hang it either, nor a FIFO
# among the sysfs files of the device topology.  A good table still works.
# Timeout: 120
B=$(realpath "${USWAP_BUILD:-build}")
set -u
[ -x "$B/uswap" ] || { echo "SKIP: $B/uswap is not built"; exit 77; }
T=$(mktemp -d)
O=uswap_t_F_5_$$
cleanup() {
	userdel "$O" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; bad=1; }
bad=0
chmod 755 "$T"

# refused TAB EXPECTED...: uswap run --swaptab TAB ends within 20 s, exit 2,
# with a message naming TAB and saying EXPECTED.
refused() {
	local tab=$1 rc
	shift
	timeout 20 "$B/uswap" run --max 16M --swaptab "$tab" -- true >/dev/null 2>"$T/err"
	rc=$?
	echo "--swaptab $tab: exit $rc: $(head -1 "$T/err")"
	[ $rc -ne 124 ] || { fail "uswap run hung on $tab"; return; }
	[ $rc -eq 2 ] || fail "exit $rc, expected 2"
	grep -qF "$tab" "$T/err" || fail "the message does not name $tab"
	for want in "$@"; do
		grep -qF -- "$want" "$T/err" || fail "the message does not say \"$want\""
	done
}

echo "$T/swapfile,size=16M" >"$T/good"
chmod 644 "$T/good"
mkfifo "$T/fifo"
refused "$T/fifo" "is a FIFO" "expected a regular file"
ln -s "$T/good" "$T/link"
refused "$T/link" "is a symbolic link" "expected a regular file"
refused /dev/null "is a character device" "expected a regular file"
cp "$T/good" "$T/open" && chmod 666 "$T/open"
refused "$T/open" "others may write" "expected"
cp "$T/good" "$T/group" && chmod 664 "$T/group"
refused "$T/group" "others may write" "expected"
head -c 70000 /dev/zero | tr '\0' '#' >"$T/big"
refused "$T/big" "too large"

if [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null; then
	userdel "$O" 2>/dev/null
	useradd -M -U -s /usr/sbin/nologin "$O" || fail "useradd $O"
	cp "$T/good" "$T/theirs" && chown "$O:$O" "$T/theirs" && chmod 644 "$T/theirs"
	# root runs uswap here: a table owned by another user is refused.
	refused "$T/theirs" "belongs to another user" "expected"
fi

# The runtime reads USWAP_SWAPTAB itself in a program started without
# uswap run: the FIFO must not hang it either.
timeout 20 env USWAP_SWAPTAB="$T/fifo" USWAP_MAX=16M \
	LD_PRELOAD="$B/libuswap_preload.so" true 2>"$T/err"
rc=$?
echo "USWAP_SWAPTAB=fifo in the runtime: exit $rc: $(head -1 "$T/err")"
[ $rc -ne 124 ] || fail "the runtime hung on the FIFO"
grep -qF "is a FIFO" "$T/err" || fail "the runtime did not say the swaptab is a FIFO"

# The device topology read under USWAP_SYSFS_ROOT: a FIFO there is no
# file to read either (the runtime goes on as with an unknown topology).
mkdir -p "$T/sys/devices/system/node"
mkfifo "$T/sys/devices/system/node/possible" "$T/sys/devices/system/node/online"
USWAP_SYSFS_ROOT=$T/sys timeout 20 "$B/uswap" run --max 16M -- true 2>"$T/err"
rc=$?
echo "a FIFO in the sysfs root: exit $rc"
[ $rc -ne 124 ] || fail "the runtime hung on a FIFO in the sysfs root"
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$T/err")"

timeout 60 "$B/uswap" run --max 16M --swaptab "$T/good" -- true 2>"$T/err"
rc=$?
echo "--swaptab good: exit $rc"
[ $rc -eq 0 ] || fail "a good table failed: $(cat "$T/err")"
[ $bad -eq 0 ] || exit 1
exit 0
