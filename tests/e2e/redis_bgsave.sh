#!/usr/bin/env bash
# Weight: 90
# Timeout: 1800
# Redis BGSAVE under a budget (Debian's Redis, which allocates with
# jemalloc): 100,000 keys of 1 KiB loaded under `uswap run --max 48M`, so
# that most of its heap is swapped out, then BGSAVE forks a child that
# writes every key to an RDB file.  The child must finish (it takes 2 s
# without uswap, about 50 under it at rest: the wait fails only when the
# child's file stops growing for 120 s), and the RDB must hold the same
# data: loaded into a second redis-server without uswap, its DEBUG DIGEST
# equals the one the server under uswap gave before the fork and the one a
# server without uswap gives for the same load.  Every server the test
# starts is stopped (trap), the one under uswap with its whole session.
set -u
B=${USWAP_BUILD:-build}
T=$(mktemp -d)
pids=""
sids=""
cleanup() {
	local p
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	for p in $sids; do kill -KILL -- "-$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/uswap.log" ] && tail -20 "$T/uswap.log"; exit 1; }
# Every request bounded: a server that hangs fails the test, not the suite.
cli() { timeout 30 redis-cli "$@"; }

for c in redis-cli redis-check-rdb python3; do
	command -v $c >/dev/null || { echo "SKIP: $c missing (scripts/deps.sh installs redis-tools)"; exit 77; }
done
# Debian's redis-tools holds the server: the one binary, run by the name
# redis-server (the redis-server package adds only that link and a
# system service, which the test needs not).
mkdir -p "$T/bin"
ln -s "$(command -v redis-check-rdb)" "$T/bin/redis-server"
PATH=$T/bin:$PATH
"$B/uswap" run --max 48M -- true 2>"$T/err"
[ $? -eq 125 ] && { echo "SKIP: $(cat "$T/err")"; exit 77; }

# A free loopback port (bound and released: another process could take it
# meanwhile, which only fails the start below).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# 100,000 SETs of 1 KiB values in the protocol, for redis-cli --pipe.
python3 - "$T/load.resp" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(100000):
        k = b"key:%08d" % i
        v = (b"%08d" % (i * 7919 % 100000003)) * 128
        f.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
EOF

# start DIR PORT [uswap]: a server with no persistence of its own, its
# RDB file DIR/dump.rdb (loaded at start if there).
start() {
	local dir=$1 port=$2 i
	local args=(--port "$port" --bind 127.0.0.1 --dir "$dir" --dbfilename dump.rdb
		    --save "" --appendonly no --daemonize no --protected-mode yes)
	mkdir -p "$dir"
	if [ "${3:-}" = uswap ]; then
		setsid "$B/uswap" run --max 48M --stats "$T/stats.json" -- \
			redis-server "${args[@]}" >"$T/uswap.log" 2>&1 &
		sids="$sids $!"
	else
		redis-server "${args[@]}" >"$dir.log" 2>&1 &
		pids="$pids $!"
	fi
	for i in $(seq 300); do
		cli -p "$port" ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.1
	done
	fail "redis-server on port $port did not start"
}

# bgsave PORT DIR: BGSAVE and wait for it; $took: seconds.  The child
# writes DIR/temp-PID.rdb as it goes: it must end, or at least make that
# file grow, every 120 s (a child that deadlocks writes nothing; one that
# is slow on a loaded machine keeps writing).
bgsave() {
	local port=$1 dir=$2 t0=$SECONDS last=$SECONDS size=-1 now
	cli -p "$port" bgsave | grep -q "started" || fail "BGSAVE was refused on port $port"
	while :; do
		timeout 5 redis-cli -p "$port" info persistence 2>/dev/null |
			grep -q "rdb_bgsave_in_progress:0" && break
		now=$(cat "$dir"/temp-*.rdb 2>/dev/null | wc -c)
		[ "$now" != "$size" ] && { size=$now; last=$SECONDS; }
		if [ $((SECONDS - last)) -gt 120 ]; then
			ps -eo pid,ppid,stat,wchan:24,etime,args | grep "[r]edis"
			# Every thread of the redis processes, and where it waits.
			for pid in $(pgrep redis-server); do
				for t in /proc/$pid/task/*; do
					echo "$pid/${t##*/} $(cat $t/comm) $(cat $t/wchan)"
				done
				command -v gdb >/dev/null &&
					timeout 30 gdb -p "$pid" -batch -ex "thread apply all bt 12" 2>/dev/null | grep -E "^#|^Thread"
			done
			fail "BGSAVE on port $port: the child wrote nothing for 120 s ($size bytes in $((SECONDS - t0)) s): it is stuck"
		fi
		sleep 0.5
	done
	cli -p "$port" info persistence | grep -q "rdb_last_bgsave_status:ok" ||
		fail "BGSAVE on port $port failed: $(cli -p "$port" info persistence | grep status)"
	took=$((SECONDS - t0))
}

load() {
	local port=$1 t0=$SECONDS
	timeout 300 redis-cli -p "$port" --pipe <"$T/load.resp" >"$T/pipe.log" 2>&1 || fail "loading the keys: $(tail -2 "$T/pipe.log")"
	[ "$(cli -p "$port" dbsize)" = 100000 ] || fail "port $port holds $(cli -p "$port" dbsize) keys"
	echo "port $port: 100000 keys loaded in $((SECONDS - t0)) s"
}

# Without uswap: the digest of the data set, and how long BGSAVE takes.
p0=$(free_port)
start "$T/plain" "$p0"
load "$p0"
digest0=$(cli -p "$p0" debug digest)
bgsave "$p0" "$T/plain"
s0=$took
cli -p "$p0" shutdown nosave >/dev/null 2>&1

# Under uswap, most of the heap swapped out.
p1=$(free_port)
start "$T/uswap" "$p1" uswap
load "$p1"
digest1=$(cli -p "$p1" debug digest)
[ "$digest1" = "$digest0" ] || fail "the data set under uswap has digest $digest1, without $digest0"
bgsave "$p1" "$T/uswap"
s1=$took
[ -s "$T/uswap/dump.rdb" ] || fail "no RDB file was written"
cli -p "$p1" shutdown nosave >/dev/null 2>&1
for _ in $(seq 300); do [ -f "$T/stats.json" ] && break; sleep 0.1; done

# The RDB the child wrote, loaded by a server without uswap.
p2=$(free_port)
start "$T/uswap" "$p2"
[ "$(cli -p "$p2" dbsize)" = 100000 ] || fail "the RDB holds $(cli -p "$p2" dbsize) keys, not 100000"
digest2=$(cli -p "$p2" debug digest)
cli -p "$p2" shutdown nosave >/dev/null 2>&1
[ "$digest2" = "$digest0" ] || fail "the RDB written under uswap has digest $digest2, the data set $digest0"

out=0
if [ -f "$T/stats.json" ]; then
	out=$(python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['vmstat']; print(v['pswpout'] + v['zswpout'])" "$T/stats.json")
fi
echo "redis BGSAVE of 100000 keys: ${s0}s without uswap, ${s1}s under --max 48M ($out pages swapped out); the RDB's digest is the data set's"
[ "$out" -gt 10000 ] || fail "redis' heap was not swapped out ($out pages): the test tested nothing"
grep "cannot read swapped\|cannot keep its memory\|is lost" "$T/uswap.log" &&
	fail "the BGSAVE child's memory was not carried on"
exit 0
