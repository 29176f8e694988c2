#!/bin/sh
# Description: uswap --help, -h, run --help and --version print to stdout and exit 0; no arguments or an unknown command exit 2.
. "$(dirname "$0")/lib.sh"
need_built uswap

for args in "--help" "-h" "run --help" "run -h" "run --max 64M --help" "help"; do
	# shellcheck disable=SC2086
	"$U" $args >"$T/out" 2>"$T/err" || fail "uswap $args: exit $?"
	[ -s "$T/err" ] && fail "uswap $args wrote to stderr"
	for word in "uswap run [OPTIONS] [--] PROG" --max --high --folio --min-region \
		--swap-size --swap-dir --stats --fault-threads --verbose \
		--verify --fallback --zswap --swap-node-policy "uswap stat" "uswap top" \
		USWAP_MAX TMPDIR LD_PRELOAD 125 126 127 "Examples" \
		"uswap run --max 2G -- ./prog" \
		"uswap run --max 64M --folio 64K --stats s.json -- python3 big.py" \
		"default 4K" "default 1M" "default 2"; do
		grep -qF -- "$word" "$T/out" || fail "uswap $args: help lacks '$word'"
	done
	grep -q -- "--uffd-features-off" "$T/out" && fail "help shows the hidden option"
done
# The help fits a terminal: no line longer than 80 columns.
awk 'length > 80 { exit 1 }' "$T/out" || fail "help has lines over 80 columns"

v=$("$U" --version) || fail "--version: exit $?"
[ "$v" = "uswap 0.1.0" ] || fail "--version printed '$v'"

"$U" >"$T/out" 2>"$T/err"
[ $? -eq 2 ] || fail "no arguments: exit is not 2"
grep -q "Usage: uswap run" "$T/err" || fail "no arguments: no usage on stderr"
[ -s "$T/out" ] && fail "no arguments: wrote to stdout"

"$U" frobnicate >/dev/null 2>"$T/err"
[ $? -eq 2 ] || fail "unknown command: exit is not 2"
grep -q "unknown command 'frobnicate'" "$T/err" || fail "unknown command: message"
exit 0
