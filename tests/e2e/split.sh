#!/usr/bin/env bash
# A large folio without a contiguous run of slots is split, nothing lost.
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/split
"$B/tests/e2e/split"
