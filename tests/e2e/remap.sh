#!/usr/bin/env bash
# munmap / mremap / madvise / fork on swapped-out managed memory (tests/e2e/remap.c).
exec "${USWAP_BUILD:-build}/tests/e2e/remap"
