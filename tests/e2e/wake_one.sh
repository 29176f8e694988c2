#!/usr/bin/env bash
# A fault wakes one waiting fault thread, not all of them (tests/e2e/wake_one.c).
set -u
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/wake_one
"$B/tests/e2e/wake_one"
