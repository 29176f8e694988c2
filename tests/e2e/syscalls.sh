#!/usr/bin/env bash
# System calls and signal handlers on swapped-out managed memory (tests/e2e/syscalls.c).
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/syscalls
"$B/tests/e2e/syscalls"
