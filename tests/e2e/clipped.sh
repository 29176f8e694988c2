#!/usr/bin/env bash
# Folios clipped by their region's ends get exactly their own slots.
. "$(dirname "$0")/lib.sh"
need_built tests/e2e/clipped
"$B/tests/e2e/clipped"
