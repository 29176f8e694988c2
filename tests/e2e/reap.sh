#!/usr/bin/env bash
# Members killed without a word are reaped by the rest of the tree, whoever
# checks /proc that second, also when no process on their devices is left
# (tests/e2e/reap.c).
set -u
${USWAP_BUILD:-build}/tests/e2e/reap
