#!/usr/bin/env bash
# The fault threads serve a thread's faults from its CPU (tests/e2e/follow.c).
set -u
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/follow
"$B/tests/e2e/follow"
