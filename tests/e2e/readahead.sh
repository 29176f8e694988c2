#!/usr/bin/env bash
# Swap-in readahead (with and without a pool) and write-around for small
# folios: counted, and every byte right.
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/readahead
"$B/tests/e2e/readahead"
