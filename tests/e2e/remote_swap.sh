#!/usr/bin/env bash
# Swap on a Redis Cluster (--swap redis://..., src/swap/swap_remote.c),
# with real redis-server processes on loopback, started here and stopped at
# exit whatever happens:
#  - a cluster of 3 masters with a replica each: round trips of 4K, 16K,
#    64K and 2M folios, with and without the compressed pool in front, with
#    and without encryption (on by default for a remote device): every
#    byte verified (stress), pages out and back, sealed unless
#    encrypt=off, no error counted, and no key left once uswap run ends;
#  - a master killed with SIGKILL in the middle of a write-heavy run with
#    replicas=1: the cluster fails over, nothing is lost (every byte
#    verified), no key left;
#  - one plain server: a forking Python program whose children read what
#    their parent swapped out and swap out their own changes; a value
#    changed on the server gives the program
#    SIGBUS, never other bytes (encrypted, and encrypt=off with its
#    crc32c); the server killed under a running program gives SIGBUS or a
#    clear error, never wrong data; a server at its maxmemory makes the
#    device full and the next device takes the folios;
#  - cleanup: the program killed with SIGKILL leaves no key once uswap run
#    ends; uswap run itself killed leaves them, and uswap gc deletes them
#    (and leaves a run that still lives alone).
# Weight: 150
set -u
. "$(dirname "$0")/lib.sh"
need_built uswap tests/e2e/stress
need_cmd redis-server redis-cli python3 pgrep pkill setsid
need_uffd
. "$(dirname "$0")/redis.lib"

S=$B/tests/e2e/stress
# uswap run's lock files (and statistics directories) go into $T.
export TMPDIR=$T

keys() {	# PORT...: keys on the masters among them
	local p n=0 k
	for p in "$@"; do
		redis-cli -p "$p" role 2>/dev/null | head -1 | grep -q master || continue
		k=$(redis-cli -p "$p" dbsize) || return 1
		n=$((n + k))
	done
	echo "$n"
}

check_stats() {	# FILE WHAT ENCRYPTED(yes|no)
	python3 - "$@" <<'PY' || return 1
import json, sys
f, what, sealed = sys.argv[1:]
v = json.load(open(f))["vmstat"]
c = {k: v.get(k, 0) for k in ("pswpout", "pswpin", "swap_encrypt", "swap_corrupt",
                             "swap_io_error", "zswpout", "zswpwb")}
print("  %s: %s" % (what, c))
assert c["pswpout"] > 0 and c["pswpin"] > 0, "no swap I/O to the remote device"
assert c["swap_io_error"] == 0 and c["swap_corrupt"] == 0, "an error was counted"
if sealed == "yes":
    assert c["swap_encrypt"] >= c["pswpout"], "pages went out unencrypted"
else:
    assert c["swap_encrypt"] == 0, "encrypt=off, yet pages were sealed"
PY
}

roundtrip() {	# WHAT SEALED SPEC-SUFFIX OPS [uswap run options...]
	local what=$1 sealed=$2 suffix=$3 ops=$4 left
	shift 4
	"$U" run --max 12M --swap "redis://$seed$suffix" --stats "$T/s.json" "$@" -- \
		"$S" --mmap --size 32M --threads 2 --ops "$ops" >"$T/out" 2>&1 ||
		fail "$what: exit $?: $(cat "$T/out")"
	grep -q 'all bytes verified' "$T/out" || fail "$what: $(cat "$T/out")"
	check_stats "$T/s.json" "$what" "$sealed" || fail "$what: $(cat "$T/out")"
	left=$(keys "${ports[@]}")
	[ "$left" = 0 ] || fail "$what: $left keys left after the run"
}

start_cluster
# Every node a seed: cleanup finds the cluster whichever node is down.
seed=$(printf '127.0.0.1:%s,' "${ports[@]}")
seed=${seed%,}
roundtrip "4K folios" yes "" 1000 --folio 4K
roundtrip "64K folios" yes "" 1000 --folio 64K
roundtrip "16K folios" yes "" 1000 --folio 16K
roundtrip "2M folios" yes "" 200 --folio 2M	# each access moves 2 MiB
roundtrip "2M folios, encrypt=off" no ",encrypt=off" 200 --folio 2M
roundtrip "64K folios, the pool in front" yes "" 1000 --folio 64K --zswap lz4 --zswap-max 10
roundtrip "64K folios, encrypt=off" no ",encrypt=off" 1000 --folio 64K
roundtrip "16K folios, the pool in front, encrypt=off" no ",encrypt=off" 1000 --folio 16K --zswap lz4 --zswap-max 10
roundtrip "4K folios, --verify off, encrypt=off (crc32c kept)" no ",encrypt=off" 1000 --folio 4K --verify off
say "ok: round trips through the cluster, no key left"

# A master killed while a write-heavy run swaps through it, replicas=1.
victim=$(master_port "$(master_id 3)")
vpid=$(server_pid "$victim")
[ -n "$vpid" ] || fail "no process id for the master on port $victim"
"$U" run --max 16M --swap "redis://$seed,replicas=1" --stats "$T/k.json" -- \
	"$S" --mmap --size 48M --threads 2 --ops 20000 --write-ratio 80 >"$T/out" 2>&1 &
run=$!
sleep 1
kill -0 "$run" 2>/dev/null || fail "a master killed: the run ended before the kill: $(cat "$T/out")"
kill -KILL "$vpid"
wait "$run" || fail "a master killed: exit $?: $(cat "$T/out")"
grep -q 'all bytes verified' "$T/out" || fail "a master killed: $(cat "$T/out")"
remaining=()
for p in "${ports[@]}"; do [ "$p" != "$victim" ] && remaining+=("$p"); done
wait_cluster_ok "${remaining[@]}"
python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["vmstat"]; print("  ", {k: v.get(k, 0) for k in ("pswpout", "pswpin", "swap_io_error", "swap_corrupt")})' "$T/k.json"
[ "$(vmstat "$T/k.json" swap_corrupt)" = 0 ] || fail "a master killed: swap_corrupt"
left=$(keys "${remaining[@]}")
[ "$left" = 0 ] || fail "a master killed: $left keys left: $(cat "$T/out")"
say "ok: a master killed with SIGKILL during a write-heavy run (replicas=1): every byte verified"

# One plain server.
read -r single <<<"$(free_ports 1)"
start_server "$single" --maxmemory-policy noeviction
one=127.0.0.1:$single

# A value changed on the server: SIGBUS, never other bytes.
cat >"$T/tamper.py" <<'PY'
import hashlib, sys
n = 32 << 20
m = bytearray(n)
for i in range(0, n, 4096):
    m[i:i + 16] = (b"%015d|" % i)
want = hashlib.sha256(m).hexdigest()
print("ready", flush=True)
sys.stdin.readline()
got = hashlib.sha256(m).hexdigest()
print("same" if got == want else "DIFFERENT", flush=True)
PY
tamper() {	# SPEC-SUFFIX WHAT
	local fifo=$T/fifo rc
	rm -f "$fifo" "$T/out"
	mkfifo "$fifo"
	"$U" run --max 8M --folio 4K --swap "redis://$one$1" -- \
		python3 "$T/tamper.py" <"$fifo" >"$T/out" 2>"$T/err" &
	run=$!
	exec 7>"$fifo"
	wait_line "$T/out" ready || fail "tamper: the program did not start: $(cat "$T/err")"
	n=0
	for k in $(redis-cli -p "$single" --scan --pattern 'us:{*'); do
		redis-cli -p "$single" setrange "$k" 100 X >/dev/null
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || fail "tamper $2: nothing was swapped out"
	echo go >&7
	exec 7>&-
	wait "$run"
	rc=$?
	grep -q DIFFERENT "$T/out" && fail "tamper $2: the program read other bytes"
	[ "$rc" = 135 ] || fail "tamper $2: exit $rc, not SIGBUS: $(cat "$T/out" "$T/err")"
	grep -q 'SIGBUS' "$T/err" || fail "tamper $2: no message: $(cat "$T/err")"
	say "ok: $n values changed on the server ($2): SIGBUS, $(grep -c . "$T/err") line(s) said"
}
tamper "" "encrypted"
tamper ",encrypt=off" "encrypt=off, crc32c"
redis-cli -p "$single" flushall >/dev/null

# Fork: three children read what their parent swapped out (the tree's
# one slot space; each child's fault threads open their own connections)
# and swap out their own copy-on-write changes.
cat >"$T/fork.py" <<'PY'
import hashlib, os
n = 32 << 20
m = bytearray(n)
for i in range(0, n, 4096):
    m[i:i + 16] = (b"%015d|" % i)
want = hashlib.sha256(m).hexdigest()
kids = []
for k in range(3):
    pid = os.fork()
    if pid == 0:
        ok = hashlib.sha256(m).hexdigest() == want
        for i in range(k * 4096, n, 3 * 4096):
            m[i + 20] = 65 + k
        ok = ok and all(m[i + 20] == 65 + k for i in range(k * 4096, n, 3 * 4096))
        os._exit(0 if ok else 1)
    kids.append(pid)
bad = sum(os.waitpid(p, 0)[1] != 0 for p in kids)
print("children bad:", bad, "parent intact:", hashlib.sha256(m).hexdigest() == want)
PY
"$U" run --max 8M --swap "redis://$one" --stats "$T/fork.json" -- python3 "$T/fork.py" >"$T/out" 2>&1 ||
	fail "fork: exit $?: $(cat "$T/out")"
grep -q 'children bad: 0 parent intact: True' "$T/out" || fail "fork: $(cat "$T/out")"
[ "$(vmstat "$T/fork.json" pswpin)" -gt 0 ] || fail "fork: nothing came back from the server"
[ "$(keys "$single")" = 0 ] || fail "fork: keys left"
say "ok: fork: children read their parent's swapped pages and swap their own"

# A full server: the device is full, the next one takes the folios.
read -r small <<<"$(free_ports 1)"
start_server "$small" --maxmemory 12mb --maxmemory-policy noeviction
"$U" run --max 16M --swap "redis://127.0.0.1:$small,prio=10" --swap "$T/file,prio=1" \
	--stats "$T/f.json" -- "$S" --mmap --size 64M --threads 2 --ops 2000 >"$T/out" 2>&1 ||
	fail "a full server: exit $?: $(cat "$T/out")"
grep -q 'all bytes verified' "$T/out" || fail "a full server: $(cat "$T/out")"
python3 - "$T/f.json" <<'PY' || fail "a full server: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
devs = {x["type"]: x["pswpout"] for x in d["swaps"]}
print("   pages out:", devs, "swap_full:", d["vmstat"]["swap_full"])
assert devs["remote"] > 0 and devs["file"] > 0, "both devices should have taken pages"
assert d["vmstat"]["max_overrun"] == 0, "resident memory went past --max"
PY
say "ok: a server at its maxmemory: the device fills, the file takes the rest, every byte verified"

# A program that swaps most of its 32 MiB out, says its pid and waits.
cat >"$T/hold.py" <<'PY'
import os, time
m = bytearray(32 << 20)
for i in range(0, len(m), 4096): m[i] = 1
print(os.getpid(), flush=True)
time.sleep(60)
PY

# The program killed with SIGKILL: no key left when uswap run ends.
# (Each output file is emptied first: wait_line must not find what an
# earlier run wrote there.)
: >"$T/out"
"$U" run --max 8M --swap "redis://$one" -- python3 "$T/hold.py" >"$T/out" 2>&1 &
run=$!
wait_line "$T/out" '^[0-9]' || fail "the program did not start"
[ "$(keys "$single")" -gt 0 ] || fail "nothing swapped to the server"
kill -KILL "$(head -1 "$T/out")"
wait "$run"
left=$(keys "$single")
[ "$left" = 0 ] || fail "the program killed: $left keys left after uswap run"
say "ok: the program killed with SIGKILL: uswap run deleted its keys"

# uswap run killed too, with every process of its session (a python3 may
# be a wrapper script's child): the keys stay, uswap gc deletes them; a
# live run's keys are left alone.
gone() {	# SID: wait until no process of session SID is left
	local i
	for i in $(seq 100); do
		pgrep -s "$1" >/dev/null || return 0
		sleep 0.1
	done
	fail "session $1 did not end"
}
: >"$T/live"
setsid "$U" run --max 8M --swap "redis://$one" -- python3 "$T/hold.py" >"$T/live" 2>&1 &
live=$!
wait_line "$T/live" '^[0-9]' || fail "the live program did not start"
: >"$T/out"
setsid "$U" run --max 8M --swap "redis://$one" -- python3 "$T/hold.py" >"$T/out" 2>&1 &
run=$!
wait_line "$T/out" '^[0-9]' || fail "the program did not start"
before=$(keys "$single")
pkill -KILL -s "$run"
gone "$run"
[ "$(keys "$single")" = "$before" ] || fail "keys went without uswap run"
"$U" gc "redis://$one" >"$T/gc" 2>&1 || fail "uswap gc: exit $?: $(cat "$T/gc")"
grep -q ': 1 ended run, ' "$T/gc" || fail "uswap gc: $(cat "$T/gc")"
after=$(keys "$single")
[ "$after" -gt 0 ] && [ "$after" -lt "$before" ] ||
	fail "uswap gc: $before keys before, $after after (the live run's must stay)"
kill -KILL "$(head -1 "$T/live")"
wait "$live"
[ "$(keys "$single")" = 0 ] || fail "the live run's keys stayed after it ended"
say "ok: uswap run killed: uswap gc deleted $((before - after)) keys, and left the live run's"

# The server killed under a running program: SIGBUS or a clear error,
# never wrong data (stress checks every byte it reads).
"$U" run --max 16M --swap "redis://$one" -- \
	"$S" --mmap --size 48M --threads 2 --ops 200000 >"$T/out" 2>&1 &
run=$!
sleep 1
kill -0 "$run" 2>/dev/null || fail "the server killed: the run ended before the kill: $(cat "$T/out")"
kill -KILL "$(server_pid "$single")"
wait "$run"
rc=$?
grep -qi 'mismatch\|wrong\|expected' "$T/out" && fail "the server killed: the program read other bytes: $(cat "$T/out")"
[ "$rc" = 135 ] || [ "$rc" = 125 ] || fail "the server killed: exit $rc: $(cat "$T/out")"
grep -q 'SIGBUS\|swap device' "$T/out" || fail "the server killed: no message: $(cat "$T/out")"
say "ok: the server killed: exit $rc, $(grep -m1 'SIGBUS\|swap device' "$T/out")"
