#!/bin/sh
# Description: without libuswap_preload.so next to it or in ../lib/uswap/, uswap run exits 125 naming both places, and finds an installed layout.
B=${USWAP_BUILD:-$(dirname "$0")/../../build}
[ -x "$B/uswap" ] || { echo "SKIP: $B/uswap is not built" >&2; exit 77; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$T/bin" "$T/lib/uswap"
cp "$B/uswap" "$T/bin/uswap" || exit 1
"$T/bin/uswap" run -- true >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 125 ] && grep -q userfaultfd "$T/err"; then
	echo "SKIP: $(cat "$T/err")" >&2
	exit 77
fi
[ $rc -eq 125 ] || fail "exit $rc, expected 125"
grep -qx "uswap: preload library not found: looked for $T/bin/libuswap_preload.so and $T/lib/uswap/libuswap_preload.so" "$T/err" ||
	fail "message: $(cat "$T/err")"

# Installed layout: bin/uswap and lib/uswap/libuswap_preload.so.
lib=$(ldconfig -p 2>/dev/null | awk '$1 == "libm.so.6" { print $NF; exit }')
[ -n "$lib" ] || { echo "SKIP: no libm.so.6 to stand in for the preload library" >&2; exit 77; }
cp "$lib" "$T/lib/uswap/libuswap_preload.so"
out=$("$T/bin/uswap" run -- sh -c 'echo "$LD_PRELOAD"' 2>"$T/err") || fail "installed layout: $(cat "$T/err")"
[ "$out" = "$T/lib/uswap/libuswap_preload.so" ] || fail "installed layout: LD_PRELOAD=$out"
exit 0
