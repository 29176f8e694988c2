#!/usr/bin/env bash
# A program that maps memory before the C library has its environment
# (tests/e2e/preinit.c: a preinit function, as an ASan program's runtime
# has) gets the budget uswap run gives it, not the default (soak bug 4);
# in a sanitizer build, the uswap of that build runs the build's programs
# with its preload library (soak bug 5: an ASan preload library crashed
# every program).
set -u
. "$(dirname "$0")/lib.sh"
need_built uswap tests/e2e/preinit
need_cmd python3	# to read the statistics
need_uffd
"$U" run --max 16M --stats "$T/s.json" -- "$B/tests/e2e/preinit" 64M || fail "preinit under uswap run"
python3 - "$T/s.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
print("max_bytes %d pswpout %d zswpout %d" % (v["max_bytes"], v["pswpout"], v["zswpout"]))
if v["max_bytes"] != 16 << 20:
    sys.exit("FAIL: the budget is %d bytes, not --max 16M: USWAP_* were not read" % v["max_bytes"])
if v["pswpout"] + v["zswpout"] == 0:
    sys.exit("FAIL: nothing went out under a 16 MiB budget")
PY
