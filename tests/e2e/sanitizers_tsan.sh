#!/usr/bin/env bash
# Weight: 110
# uswap's stress, fault-path and unit tests built with ThreadSanitizer (build/tsan); any
# sanitizer report fails (what runs: tests/e2e/sanitizers.lib).
exec bash "$(dirname "$0")/sanitizers.lib" tsan
