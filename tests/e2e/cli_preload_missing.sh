#!/bin/sh
# Description: without libuswap_preload.so next to it or in ../lib/uswap/, uswap run exits 125 naming both places, and finds an installed layout.
. "$(dirname "$0")/lib.sh"
need_built uswap

mkdir -p "$T/bin" "$T/lib/uswap"
cp "$B/uswap" "$T/bin/uswap" || exit 1
"$T/bin/uswap" run -- true >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 125 ] && grep -q userfaultfd "$T/err" && skip "$(cat "$T/err")"
[ $rc -eq 125 ] || fail "exit $rc, expected 125"
grep -qx "uswap: preload library not found: looked for $T/bin/libuswap_preload.so and $T/lib/uswap/libuswap_preload.so" "$T/err" ||
	fail "message: $(cat "$T/err")"

# Installed layout: bin/uswap and lib/uswap/libuswap_preload.so.
lib=$(ldconfig -p 2>/dev/null | awk '$1 == "libm.so.6" { print $NF; exit }')
[ -n "$lib" ] || skip "no libm.so.6 to stand in for the preload library"
cp "$lib" "$T/lib/uswap/libuswap_preload.so"
out=$("$T/bin/uswap" run -- sh -c 'echo "$LD_PRELOAD"' 2>"$T/err") || fail "installed layout: $(cat "$T/err")"
[ "$out" = "$T/lib/uswap/libuswap_preload.so" ] || fail "installed layout: LD_PRELOAD=$out"
exit 0
