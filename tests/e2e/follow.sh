#!/usr/bin/env bash
# The fault threads serve a thread's faults from its CPU (tests/e2e/follow.c).
set -u
${USWAP_BUILD:-build}/tests/e2e/follow
