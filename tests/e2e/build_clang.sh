#!/usr/bin/env bash
# Weight: 9
# The whole tree builds warning-free (-Werror) with clang too.
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
need_cmd clang
make -s CC=clang B=build/clang -j2 all
