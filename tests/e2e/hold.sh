#!/usr/bin/env bash
# Weight: 10
# The library's hold, in-process and through the budget (tests/e2e/hold.c).
exec "${USWAP_BUILD:-build}/tests/e2e/hold"
