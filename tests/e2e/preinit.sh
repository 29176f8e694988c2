#!/usr/bin/env bash
# A program that maps memory before the C library has its environment
# (tests/e2e/preinit.c: a preinit function, as an ASan program's runtime
# has) gets the budget uswap run gives it, not the default (soak bug 4);
# in a sanitizer build, the uswap of that build runs the build's programs
# with its preload library (soak bug 5: an ASan preload library crashed
# every program).
set -u
B=${USWAP_BUILD:-build}
T=$B/tests/e2e/preinit
[ -x "$T" ] && [ -x "$B/uswap" ] || { echo "SKIP: $T or $B/uswap is not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the statistics"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$B/uswap" run --max 16M -- true 2>"$tmp/err"
case $? in
0) ;;
125) echo "SKIP: $(cat "$tmp/err")"; exit 77 ;;
*) echo "FAIL: uswap run true: exit $? ($(cat "$tmp/err"))"; exit 1 ;;
esac
"$B/uswap" run --max 16M --stats "$tmp/s.json" -- "$T" 64M || { echo "FAIL: preinit under uswap run"; exit 1; }
python3 - "$tmp/s.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
print("max_bytes %d pswpout %d zswpout %d" % (v["max_bytes"], v["pswpout"], v["zswpout"]))
if v["max_bytes"] != 16 << 20:
    sys.exit("FAIL: the budget is %d bytes, not --max 16M: USWAP_* were not read" % v["max_bytes"])
if v["pswpout"] + v["zswpout"] == 0:
    sys.exit("FAIL: nothing went out under a 16 MiB budget")
PY
