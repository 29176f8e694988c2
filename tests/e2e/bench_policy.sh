#!/usr/bin/env bash
# bench/policy's simulators (FIFO, LRU, CLOCK, CLOCK-W, S3-FIFO, S3-FIFO-W,
# OPT) against hand-made traces with known answers and against plain
# models on random traces, and its Zipf sampler against the exact law
# (`policy --self-test`); then one short run of the simulations alone,
# whose table must name every policy.  docs/fault-cost.md quotes them.
set -u
. "$(dirname "$0")/lib.sh"
need_built bench/policy

"$B/bench/policy" --self-test >"$T/st" 2>&1 ||
	{ echo "policy --self-test failed:"; cat "$T/st"; exit 1; }
grep -q 'all checks passed' "$T/st" || { cat "$T/st"; exit 1; }
"$B/bench/policy" --no-uswap --pages 4096 --capacity 1024 \
	--accesses 50000 >"$T/out" 2>&1 ||
	{ echo "policy --no-uswap: exit $?"; cat "$T/out"; exit 1; }
for p in FIFO LRU CLOCK CLOCK-W S3-FIFO S3-FIFO-W OPT; do
	grep -q "^$p " "$T/out" || { echo "no $p row:"; cat "$T/out"; exit 1; }
done
echo "ok: policy --self-test and the simulations"
