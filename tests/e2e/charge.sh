#!/usr/bin/env bash
# Charges follow resident folios when region ends move (tests/e2e/charge.c).
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/charge
"$B/tests/e2e/charge"
