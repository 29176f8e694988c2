#!/usr/bin/env bash
# Weight: 10
# The library's hold, in-process and through the budget (tests/e2e/hold.c).
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/hold
"$B/tests/e2e/hold"
