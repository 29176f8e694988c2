#!/usr/bin/env bash
# Swap-in readahead for small folios: counted, and every byte right.
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/readahead
"$B/tests/e2e/readahead"
