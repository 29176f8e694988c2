#!/bin/sh
# Description: a swap directory (given, or $TMPDIR) or a --stats file that cannot be used makes uswap run exit 125 before PROG starts, naming it.
. "$(dirname "$0")/lib.sh"
need_built uswap
stand_in_preload	# this tests the command, not the library
need_uffd

# expect125 MESSAGE ARGS...
expect125() {
	msg=$1
	shift
	"$U" run "$@" -- sh -c 'echo ran >"$0"' "$T/ran" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 125 ] || fail "uswap run $*: exit $rc, expected 125 ($(cat "$T/err"))"
	grep -qxF "uswap: $msg" "$T/err" || fail "uswap run $*: message '$(cat "$T/err")', expected '$msg'"
	[ -e "$T/ran" ] && fail "uswap run $*: PROG ran"
	return 0
}

touch "$T/file"
expect125 "swap dir \"$T/none\": No such file or directory" --swap-dir "$T/none"
expect125 "swap dir \"$T/file\" is not a directory" --swap-dir "$T/file"
USWAP_SWAP_DIR=$T/none expect125 "swap dir \"$T/none\": No such file or directory"
TMPDIR=$T/none expect125 "swap dir \"$T/none\": No such file or directory"
expect125 "--stats $T/none/s.json: cannot write in $T/none: No such file or directory" --stats "$T/none/s.json"
exit 0
