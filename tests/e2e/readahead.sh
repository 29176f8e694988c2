#!/usr/bin/env bash
# Swap-in readahead for small folios: counted, and every byte right.
exec "${USWAP_BUILD:-build}/tests/e2e/readahead"
