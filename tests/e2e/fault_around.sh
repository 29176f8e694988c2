#!/usr/bin/env bash
# First touch in order fills the folios ahead, and nothing else (tests/e2e/fault_around.c).
set -u
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/fault_around
"$B/tests/e2e/fault_around"
