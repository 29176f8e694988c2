#!/usr/bin/env bash
# Fallbacks keep every byte: without process_madvise (one madvise per
# range), eviction still works; without userfaultfd write-protect, nothing
# is evicted (it could not be done safely), the budget is overrun (counted)
# and the program still runs correctly.
set -u
. "$(dirname "$0")/lib.sh"
need_built uswap tests/e2e/stress
need_cmd python3
"$B/uswap" run --max 16M --uffd-features-off 0x8000000000000000 --stats "$T/a.json" -- \
	"$B/tests/e2e/stress" --mmap --size 64M --threads 2 --ops 3000 || exit 1
"$B/uswap" run --max 16M --uffd-features-off 1 --stats "$T/b.json" -- \
	"$B/tests/e2e/stress" --mmap --size 32M --threads 2 --ops 3000 2>"$T/err" || { cat "$T/err"; exit 1; }
grep -q "write-protect is unavailable" "$T/err" || { echo "no warning about write-protect"; cat "$T/err"; exit 1; }
python3 - "$T/a.json" "$T/b.json" <<'PY' || exit 1
import json, sys
a = json.load(open(sys.argv[1]))["vmstat"]; b = json.load(open(sys.argv[2]))["vmstat"]
print("no process_madvise:", a["pswpout"], a["pswpin"], "| no WP:", b["pswpout"], b["max_overrun"])
assert a["pswpout"] > 0 and a["pswpin"] > 0
assert b["pswpout"] == 0 and b["max_overrun"] > 0
PY
