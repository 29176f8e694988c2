#!/usr/bin/env bash
# Charges follow resident folios when region ends move (tests/e2e/charge.c).
exec "${USWAP_BUILD:-build}/tests/e2e/charge"
