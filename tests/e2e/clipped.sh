#!/usr/bin/env bash
# Folios clipped by their region's ends get exactly their own slots.
exec "${USWAP_BUILD:-build}/tests/e2e/clipped"
