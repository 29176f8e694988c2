#!/bin/sh
# Description: uswap run exits 2 with "uswap: <message>" and "Try 'uswap run --help'." for bad sizes, bad values, unknown flags, missing values and a missing PROG; flags win over bad variables.
. "$(dirname "$0")/lib.sh"
need_built uswap

# expect MESSAGE ARGS...: uswap ARGS exits 2, stderr is MESSAGE then the hint.
expect() {
	msg=$1
	shift
	"$U" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -eq 2 ] || fail "uswap $*: exit $rc, expected 2 ($(cat "$T/err"))"
	printf 'uswap: %s\nTry '\''uswap run --help'\''.\n' "$msg" >"$T/want"
	cmp -s "$T/err" "$T/want" || fail "uswap $*: stderr is '$(cat "$T/err")', expected '$msg'"
	[ -s "$T/out" ] && fail "uswap $*: wrote to stdout"
	return 0
}

expect '--max: "12Q" is not a size (expected a number with an optional K, M, G or T suffix)' run --max 12Q -- true
expect '--max: "12Q" is not a size (expected a number with an optional K, M, G or T suffix)' run --max=12Q true
expect '--max: "-1G" is not a size (expected a number with an optional K, M, G or T suffix)' run --max -1G true
expect '--max: "" is not a size (expected a number with an optional K, M, G or T suffix)' run --max= true
expect '--max: "99999999T" is too large (at most 2^64 - 1 bytes)' run --max 99999999T true
expect '--max: "512K" is too small (expected at least 1M)' run --max 512K true
expect '--high: "1.5" is not a size (expected a number with an optional K, M, G or T suffix)' run --high 1.5 true
expect '--swap-size: "1M" is too small (expected at least 2M)' run --swap-size 1M true
expect '--min-region: "64MB" is not a size (expected a number with an optional K, M, G or T suffix)' run --min-region 64MB true
expect '--folio: "8K" is not a folio size (expected 4K, 16K, 64K or 2M)' run --folio 8K true
expect '--fault-threads: "0" is not a thread count (expected a whole number from 1 to 64)' run --fault-threads 0 true
expect '--fault-threads: "65" is not a thread count (expected a whole number from 1 to 64)' run --fault-threads=65 true
expect '--verbose: "maybe" is not a boolean (expected 1, 0, yes, no, true or false)' run --verbose=maybe true
expect '--uffd-features-off: "0xZ" is not a bit mask (expected a decimal number, or hexadecimal with 0x)' run --uffd-features-off 0xZ true
expect '--swap-dir: empty path (expected a directory)' run --swap-dir "" true
expect "unknown option '--bogus'" run --bogus true
expect "unknown option '--bogus'" run --bogus=1 true
expect "unknown option '-x'" run -x true
expect "option '--max' needs a value" run --max
expect "no program to run" run
expect "no program to run" run --max 64M
expect "no program to run" run --max 64M --
# Consistency between options.
expect 'high 2G is greater than max 1G (expected high <= max)' run --max 1G --high 2G true
expect 'max 4M is less than 4 folios of 2M (expected at least 8M, or a smaller folio)' run --max 4M --folio 2M true
# The environment is checked the same way, naming the variable.
USWAP_MAX=12Q expect 'USWAP_MAX: "12Q" is not a size (expected a number with an optional K, M, G or T suffix)' run true
USWAP_FOLIO=3K expect 'USWAP_FOLIO: "3K" is not a folio size (expected 4K, 16K, 64K or 2M)' run true
USWAP_HIGH=2G expect 'high 2G is greater than max 1G (expected high <= max)' run --max 1G true

# A flag wins over its variable: a bad USWAP_MAX does not matter then.
USWAP_MAX=bogus "$U" run --max 64M -- true >/dev/null 2>"$T/err"
[ $? -eq 2 ] && fail "a bad USWAP_MAX is an error although --max was given ($(cat "$T/err"))"
exit 0
