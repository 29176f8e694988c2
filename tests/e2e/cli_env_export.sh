#!/bin/sh
# Description: PROG gets the preload library first in LD_PRELOAD, the given options as USWAP_* in bytes (flags over variables), no USWAP_STATS, and always USWAP_STATS_DIR (for uswap stat and top).
. "$(dirname "$0")/lib.sh"
need_built uswap
stand_in_preload	# this tests the command, not the library
need_uffd

# env_of ARGS...: PROG's environment, one variable a line, in $T/env.
env_of() {
	"$U" run "$@" -- sh -c 'env >"$0"' "$T/env" 2>"$T/err" ||
		fail "uswap run $*: exit $? ($(cat "$T/err"))"
}
has() { grep -qx "$1" "$T/env" || fail "PROG's environment lacks $1 ($(grep -E 'USWAP|LD_PRELOAD' "$T/env" | tr '\n' ' '))"; }
hasnt() { grep -q "^$1=" "$T/env" && fail "PROG's environment has $(grep "^$1=" "$T/env")"; return 0; }

mkdir "$T/swap"
env_of --max 64M --high=48M --folio 4K --min-region 2M --swap-size 1.5G \
	--swap-dir "$T/swap" --fault-threads 3 --uffd-features-off 0x10 -v
has "LD_PRELOAD=$T/libuswap_preload.so"
has USWAP_MAX=67108864
has USWAP_HIGH=50331648
has USWAP_FOLIO=4096
has USWAP_MIN_REGION=2097152
has USWAP_SWAP_SIZE=1610612736
has "USWAP_SWAP_DIR=$(cd "$T/swap" && pwd -P)"
has USWAP_FAULT_THREADS=3
has USWAP_UFFD_FEATURES_OFF=0x10
has USWAP_VERBOSE=1
hasnt USWAP_STATS
grep -q '^USWAP_STATS_DIR=/' "$T/env" || fail "--verbose: no USWAP_STATS_DIR"

# The options given as text or words are passed on as given.
env_of --zswap zstd:3 --zswap-unit page --swap "$T/sw,size=64M" \
	--swap-node-policy cpu --verify off --encrypt on --demotion none \
	--zswap-incompressible store --zswap-charge off
has USWAP_ZSWAP_INCOMPRESSIBLE=store
has USWAP_ZSWAP_CHARGE=off
has USWAP_ZSWAP=zstd:3
has USWAP_ZSWAP_UNIT=page
has "USWAP_SWAP=$T/sw,size=64M"
has USWAP_SWAP_NODE_POLICY=cpu
has USWAP_VERIFY=off
has USWAP_ENCRYPT=on
has USWAP_DEMOTION=none
hasnt USWAP_SWAPTAB
printf '%s size=64M\n' "$T/sw2" >"$T/tab"
env_of --swaptab "$T/tab" --zswap-unit folio --swap-node-policy page
has "USWAP_SWAPTAB=$T/tab"
has USWAP_ZSWAP_UNIT=folio
has USWAP_SWAP_NODE_POLICY=page
hasnt USWAP_SWAP
env_of --swap none --zswap lz4 --tier-max 0=1G
hasnt USWAP_ZSWAP_INCOMPRESSIBLE
hasnt USWAP_ZSWAP_CHARGE
has USWAP_SWAP=none
has USWAP_TIER_MAX=0=1G

# Nothing given: nothing exported, the runtime uses its defaults; existing
# LD_PRELOAD entries stay after the library.
# (verify_asan_link_order=0: an ASan build of uswap must accept the preload.)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD=libm.so.6 USWAP_VERBOSE=0 env_of
has "LD_PRELOAD=$T/libuswap_preload.so:libm.so.6"
for v in USWAP_MAX USWAP_HIGH USWAP_FOLIO USWAP_MIN_REGION USWAP_SWAP_SIZE \
	USWAP_SWAP_DIR USWAP_FAULT_THREADS USWAP_UFFD_FEATURES_OFF USWAP_VERBOSE \
	USWAP_STATS USWAP_FALLBACK USWAP_ZSWAP USWAP_ZSWAP_UNIT USWAP_SWAP \
	USWAP_SWAPTAB USWAP_SWAP_NODE_POLICY USWAP_VERIFY USWAP_ENCRYPT \
	USWAP_DEMOTION USWAP_TIER_MAX; do
	hasnt $v
done
grep -q '^USWAP_STATS_DIR=/' "$T/env" || fail "no USWAP_STATS_DIR without --stats"

# USWAP_STATS is uswap's own: PROG gets a statistics directory instead.
USWAP_STATS=$T/s.json env_of
hasnt USWAP_STATS
grep -q '^USWAP_STATS_DIR=/' "$T/env" || fail "USWAP_STATS: no USWAP_STATS_DIR"
[ -f "$T/s.json" ] || fail "USWAP_STATS: no statistics file written"

# Variables are read and passed on normalised; a flag wins over its variable.
USWAP_MAX=1G USWAP_FOLIO=2M USWAP_HIGH=512M env_of --high 256M
has USWAP_MAX=1073741824
has USWAP_FOLIO=2097152
has USWAP_HIGH=268435456

# A relative swap dir becomes absolute: every process finds the same one.
(cd "$T" && "$U" run --swap-dir swap -- sh -c 'env >"$0"' "$T/env") || fail "relative swap dir"
has "USWAP_SWAP_DIR=$(cd "$T/swap" && pwd -P)"
exit 0
