#!/usr/bin/env bash
# Weight: 10
# Integrity stress through the library API at every folio size: 4 threads,
# random reads and writes and read(2)/write(2) over a region 8x the budget.
set -e
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/stress
for f in 4K 16K 64K; do
	"$B/tests/e2e/stress" --api --folio $f --size 128M --max 16M --threads 4 --ops 8000 --expect-swap
done
"$B/tests/e2e/stress" --api --folio 2M --size 256M --max 32M --threads 2 --ops 1500 --expect-swap
