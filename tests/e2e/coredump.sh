#!/usr/bin/env bash
# Weight: 25
# Timeout: 300
# Core dumps of a uswap program hold its swapped memory (tests/e2e/coredump.c):
# 32 MiB under --max 8M, most of it swapped out, then the program dies of
# SIGSEGV (in its main thread, in another thread), abort(), SIGQUIT or
# SIGBUS with `ulimit -c unlimited` (also after the program set a handler
# and SIG_DFL again, and from the program's own handler that puts SIG_DFL
# back and raises the signal again): the core file's segment of the region
# holds every byte, gdb reads the crash from it, uswap run dies of the same
# signal; the core is the program's memory and not uswap's shared maps
# (at most 16 MiB more on disk).  With RLIMIT_CORE 20 MiB (64 MiB under
# --max 16M) at most 20 MiB is brought back; with 0 nothing is (no core
# is written).
# A program's own SIGSEGV handler, set with sigaction or signal, catches
# its fault as without uswap and sees its own dispositions.
#
# core_pattern is global: it is saved, pointed at this test's directory
# while the test runs, and restored (needs root; skipped otherwise); two
# runs of the test at once take turns (a lock file in /tmp).
B=${USWAP_BUILD:-build}
set -u
cd "$(dirname "$0")/../.." || exit 1
C=$B/tests/e2e/coredump
U=$B/uswap
[ -x "$C" ] && [ -x "$U" ] || { echo "SKIP: $C or $U is not built"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

echo "the program's own SIGSEGV handler"
"$U" run --max 16M -- "$C" handler || fail "the program's handler under uswap"

pattern=/proc/sys/kernel/core_pattern
[ "$(id -u)" -eq 0 ] && [ -w $pattern ] || { echo "SKIP: core_pattern cannot be set (not root)"; exit 77; }
# Another run of this test (a second make check) would point it elsewhere
# meanwhile: one at a time, machine-wide.
exec 9>/tmp/uswap-test-core_pattern.lock
flock 9
tmp=$(mktemp -d)
chmod 777 "$tmp"
saved=$(cat $pattern)
trap 'echo "$saved" >$pattern; rm -rf "$tmp"' EXIT
echo "$tmp/core.%p" >$pattern || { echo "SKIP: cannot write core_pattern"; exit 77; }

# crash HOW SIGNAL: the program dies of SIGNAL, its core holds every page.
crash() {
	local how=$1 sig=$2 rc pid addr len resident want
	rm -f "$tmp"/core.*
	( ulimit -c unlimited; exec "$U" run --max 8M -- "$C" crash 32M "$how" >"$tmp/out" 2>"$tmp/err" )
	rc=$?
	want=$((128 + $(kill -l "$sig")))
	read -r _ pid addr len resident <"$tmp/out" || fail "$how: the program did not start: $(cat "$tmp/err")"
	echo "$how: exit $rc, $resident of $((len / 4096)) pages resident when it crashed"
	sed 's/^/  /' "$tmp/err"
	[ "$rc" -eq "$want" ] || fail "$how: exit $rc, expected $want (SIG$sig)"
	[ "$resident" -lt $((len / 4096 / 2)) ] || fail "$how: too little was swapped out"
	[ -f "$tmp/core.$pid" ] || { echo "SKIP: no core file was written ($(ls "$tmp"))"; exit 77; }
	"$C" check "$tmp/core.$pid" "$addr" "$len" >"$tmp/chk" || { cat "$tmp/chk"; fail "$how: the core file"; }
	# The program's memory, not uswap's shared maps (a slot map sized
	# for a large device dumped page by page made 1.3 GB cores).
	kib=$(du -k "$tmp/core.$pid" | cut -f1)
	[ "$kib" -le $((len / 1024 + 16384)) ] || fail "$how: a core of $kib KiB on disk for $((len / 1024)) KiB of memory"
	echo "  core: $kib KiB on disk"
	sed 's/^/  core: /' "$tmp/chk"
	grep -q "^uswap\[$pid\]: SIG$sig: [0-9]* swapped pages ([0-9]* MiB) brought back for the core dump$" "$tmp/err" ||
		fail "$how: no word of what was brought back"
	grep -q "uswap's thread" "$tmp/err" && fail "$how: the program's crash taken for uswap's"
	last_pid=$pid
}

crash segv SEGV
if command -v gdb >/dev/null; then
	gdb -batch -ex bt "$C" "$tmp/core.$last_pid" >"$tmp/gdb" 2>&1
	grep -q "terminated with signal SIGSEGV" "$tmp/gdb" && grep -q "in crash" "$tmp/gdb" ||
		{ cat "$tmp/gdb"; fail "gdb does not see the crash in the core"; }
	echo "  gdb: $(grep 'terminated with signal' "$tmp/gdb")"
fi
crash thread-segv SEGV
crash segv-reset SEGV
crash segv-chain SEGV
grep -q "the program's own handler ran" "$tmp/err" || fail "segv-chain: the program's handler did not run"
crash abort ABRT
crash quit QUIT
crash bus BUS

echo "RLIMIT_CORE 20 MiB: at most that much brought back"
rm -f "$tmp"/core.*
( ulimit -c 20480; exec "$U" run --max 16M -- "$C" crash 64M segv >"$tmp/out" 2>"$tmp/err" )
rc=$?
[ $rc -eq 139 ] || fail "exit $rc, expected 139"
sed 's/^/  /' "$tmp/err"
n=$(sed -n 's/.*SIGSEGV: \([0-9]*\) swapped pages.*/\1/p' "$tmp/err")
[ -n "$n" ] && [ "$n" -ge 4096 ] && [ "$n" -le $((5120 + 16)) ] ||
	fail "${n:-no} pages brought back under a 20 MiB RLIMIT_CORE"

echo "RLIMIT_CORE 0: no core, nothing brought back"
rm -f "$tmp"/core.*
( ulimit -c 0; exec "$U" run --max 16M -- "$C" crash 64M segv >"$tmp/out" 2>"$tmp/err" )
rc=$?
[ $rc -eq 139 ] || fail "exit $rc, expected 139"
grep -q "brought back" "$tmp/err" && fail "memory brought back for no core: $(cat "$tmp/err")"
ls "$tmp"/core.* >/dev/null 2>&1 && fail "a core file with RLIMIT_CORE 0"
echo ok
