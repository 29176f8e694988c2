#!/usr/bin/env bash
# A large folio without a contiguous run of slots is split, nothing lost.
exec "${USWAP_BUILD:-build}/tests/e2e/split"
