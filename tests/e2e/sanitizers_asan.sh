#!/usr/bin/env bash
# Weight: 130
# uswap's stress, fault-path and unit tests built with AddressSanitizer+UBSan (build/asan); any
# sanitizer report fails (what runs: tests/e2e/sanitizers.lib).
exec bash "$(dirname "$0")/sanitizers.lib" asan
