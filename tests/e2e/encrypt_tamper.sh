#!/usr/bin/env bash
# Encryption at rest, what is on the device (tests/e2e/encrypt.c):
#  - the swap file, read behind uswap's back, holds none of the program's
#    text with --encrypt on, whether reclaim or the pool's writeback wrote
#    it; with --encrypt off it does (so the search can see it);
#  - a flipped ciphertext byte (also with --verify off, and at 16K where
#    readahead meets it first), a flipped tag, another slot's ciphertext
#    copied over a slot (also with its counter and tag): SIGBUS in that
#    folio only, swap_corrupt 1, one line naming the device and the slot.
B=${USWAP_BUILD:-build}
set -u
cd "$(dirname "$0")/../.." || exit 1
E=$B/tests/e2e/encrypt
[ -x "$E" ] || { echo "SKIP: $E is not built"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

scenario() {	# ARGS
	echo "encrypt $*"
	"$E" "$@" >"$tmp/out" 2>&1 </dev/null
	local rc=$?
	case $rc in
	0|77) sed 's/^/  /' "$tmp/out" ;;	# 77: no UFFDIO_POISON (kernel < 6.6)
	*) echo "encrypt $*: exit $rc"; cat "$tmp/out"; exit 1 ;;
	esac
}

scenario plaintext on
scenario plaintext on pool
scenario plaintext off
scenario plaintext off pool
for how in byte tag move move_seal verify_off; do
	scenario tamper $how
done
scenario tamper byte 16K
echo ok
