#!/usr/bin/env bash
# System calls and signal handlers on swapped-out managed memory (tests/e2e/syscalls.c).
exec "${USWAP_BUILD:-build}/tests/e2e/syscalls"
