#!/usr/bin/env bash
# Weight: 9
# The whole tree builds warning-free (-Werror) with clang too.
cd "$(dirname "$0")/../.."
command -v clang >/dev/null || { echo "SKIP: clang is not installed"; exit 77; }
make -s CC=clang B=build/clang -j2 all
