#!/usr/bin/env bash
# The folio history (USWAP_TRACE=1, uswap_trace_dump(): src/trace.c) tells
# what happened to a page: the first page of 32 MiB under an 8 MiB budget
# was filled, picked, captured, swapped and loaded again, in that order;
# without USWAP_TRACE nothing is printed.
set -u
. "$(dirname "$0")/lib.sh"
need_built uswap tests/e2e/trace
USWAP_TRACE=1 "$U" run --max 8M --folio 64K -- "$B/tests/e2e/trace" 2>"$T/on" ||
	{ cat "$T/on"; fail "the program failed under uswap run"; }
grep -q "the history of" "$T/on" || { cat "$T/on"; fail "no history printed"; }
order=$(sed -n 's/.*flags [0-9a-fx]*: \([a-z ]*\).*/\1/p' "$T/on" | tr '\n' ',')
say "events: $order"
case $order in
*"filled "*"picked for eviction"*"swapped"*"loaded "*) ;;
*) cat "$T/on"; fail "the history lacks fill, pick, swap, load in order" ;;
esac
"$U" run --max 8M --folio 64K -- "$B/tests/e2e/trace" 2>"$T/off" ||
	{ cat "$T/off"; fail "the program failed under uswap run (no history)"; }
! grep -q "the history of" "$T/off" || fail "a history printed without USWAP_TRACE"
say "ok"
