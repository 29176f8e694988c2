#!/usr/bin/env bash
# Weight: 20
# Timeout: 300
# A debugger's view of a uswap program (tests/e2e/procmem.c): 64 MiB under
# --max 16M, most of it swapped out.  Under `uswap debug PID -- COMMAND`
# another process reads every byte through /proc/PID/mem and with
# PTRACE_PEEKDATA, and writes through /proc/PID/mem, and the program
# reads back what was written; once COMMAND ends the memory is evicted
# again.  Without the hold, /proc/PID/mem reads fail where memory is
# swapped (what the man page says), process_vm_readv reads it all.  A
# holder killed with -9 lets go within seconds.  Bad uses of uswap debug
# (another user's process among them): their messages and exit statuses.
B=${USWAP_BUILD:-build}
set -u
cd "$(dirname "$0")/../.." || exit 1
P=$B/tests/e2e/procmem
U=$B/uswap
[ -x "$P" ] && [ -x "$U" ] || { echo "SKIP: $P or $U is not built"; exit 77; }
tmp=$(mktemp -d)
exec 8>/dev/null
target=
cleanup() {
	exec 9>&- 2>/dev/null
	[ -n "$target" ] && kill -9 "$target" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- target:"; cat "$tmp/out" "$tmp/err" 2>/dev/null; exit 1; }

mkfifo "$tmp/in" || exit 1
"$U" run --max 16M --stats "$tmp/s.json" -- "$P" target 64M <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
target=$!
exec 9>"$tmp/in"
for _ in $(seq 300); do grep -q ready "$tmp/out" && break; sleep 0.1; done
read -r _ pid addr len resident <"$tmp/out" || fail "the target did not start"
echo "target $pid: $len bytes at $addr, $resident pages resident"
[ "$resident" -lt $((len / 4096 / 2)) ] || fail "too little was swapped out ($resident pages resident)"

# A command to the target and its answer: "checked BAD RESIDENT".
ask() {
	local n
	n=$(grep -c checked "$tmp/out")
	echo "$1" >&9
	for _ in $(seq 600); do
		[ "$(grep -c checked "$tmp/out")" -gt "$n" ] && break
		sleep 0.1
	done
	grep checked "$tmp/out" | tail -1
}

echo "without a hold: /proc/PID/mem fails where memory is swapped"
"$P" mem "$pid" "$addr" "$len" 1 >"$tmp/r" && fail "/proc/PID/mem read everything without a hold: nothing was swapped?"
sed 's/^/  /' "$tmp/r"
echo "without a hold: process_vm_readv reads every byte"
"$P" vmread "$pid" "$addr" "$len" 1 || fail "process_vm_readv"

echo "uswap debug: /proc/PID/mem and PTRACE_PEEKDATA read every byte"
"$U" debug "$pid" -- sh -c "'$P' mem $pid $addr $len 1 && '$P' peek $pid $addr $len 1" >"$tmp/r" 2>&1 ||
	{ cat "$tmp/r"; fail "reading under uswap debug"; }
sed 's/^/  /' "$tmp/r"
grep -q "^uswap: $pid's memory is resident ([0-9]* swapped pages" "$tmp/r" || fail "no word of the hold"

echo "uswap debug: a write through /proc/PID/mem is what the program reads"
"$U" debug "$pid" -- "$P" write "$pid" "$addr" "$len" 7 >"$tmp/r" 2>&1 || { cat "$tmp/r"; fail "writing under uswap debug"; }
line=$(ask "version 7")
echo "  $line"
[ "$(echo "$line" | cut -d' ' -f2)" = 0 ] || fail "the program read back something else: $line"

echo "after uswap debug: the memory is evicted again"
line=$(ask evict)
echo "  $line"
set -- $line
[ "$2" = 0 ] || fail "bad pages after a rewrite: $line"
[ "$3" -le $((16 * 256 + 512)) ] || fail "$3 pages resident after the hold ended: still held?"

echo "a holder killed with -9 lets go"
"$U" debug "$pid" -- sleep 60 >"$tmp/r" 2>&1 9>&- &
holder=$!
for _ in $(seq 300); do grep -q resident "$tmp/r" && break; sleep 0.1; done
grep -q resident "$tmp/r" || fail "the holder did not hold: $(cat "$tmp/r")"
sleeper=$(pgrep -P "$holder")
kill -9 "$holder"
wait "$holder" 2>/dev/null
[ -n "$sleeper" ] && kill "$sleeper"
sleep 3
line=$(ask evict)
echo "  $line"
set -- $line
[ "$2" = 0 ] && [ "$3" -le $((16 * 256 + 512)) ] || fail "still held after its holder died: $line"

echo "bad uses"
"$U" debug $$ -- true 2>"$tmp/e"
rc=$?
[ $rc -eq 1 ] && grep -q "^uswap: $$ is not a process of a uswap tree" "$tmp/e" ||
	fail "a process outside uswap: exit $rc, $(cat "$tmp/e")"
"$U" debug 12x 2>"$tmp/e"
rc=$?
[ $rc -eq 2 ] && grep -q '"12x" is not a process id' "$tmp/e" || fail "a bad PID: exit $rc, $(cat "$tmp/e")"
"$U" debug "$pid" -- /nonexistent/debugger 2>"$tmp/e"
rc=$?
[ $rc -eq 127 ] || fail "a missing command: exit $rc, $(cat "$tmp/e")"
"$U" debug "$pid" -- sh -c 'exit 5' 2>/dev/null
rc=$?
[ $rc -eq 5 ] || fail "the command's status: $rc, expected 5"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	# Another user cannot hold (nor open the budget of) this process.
	cp "$U" "$tmp/uswap" && chmod 755 "$tmp" "$tmp/uswap"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/uswap" debug "$pid" -- true 2>"$tmp/e"
	rc=$?
	[ $rc -eq 3 ] && grep -q "cannot open the descriptors of $pid" "$tmp/e" ||
		fail "another user: exit $rc, $(cat "$tmp/e")"
fi

exec 9>&-
wait "$target"
rc=$?
target=
[ $rc -eq 0 ] || fail "the target exited $rc"
python3 - "$tmp/s.json" <<'PY' || fail "counters"
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
print("  " + str({k: v[k] for k in ("hold_pages", "hold_overrun", "pswpout", "pswpin")}))
assert v["hold_pages"] > 0, "hold_pages not counted"
assert v["hold_overrun"] > 0, "hold_overrun not counted"
PY
echo ok
