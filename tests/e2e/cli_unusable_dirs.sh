#!/bin/sh
# Description: a swap directory (given, or $TMPDIR) or a --stats file that cannot be used makes uswap run exit 125 before PROG starts, naming it.
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
