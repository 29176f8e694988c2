#!/bin/sh
# Description: uswap stat and top find a process that set its process title (its arguments and environment written over, as redis, postgres, nginx do): by its pid, by uswap run's, and without a pid; also one that left its parent (no uswap run above it); redis-server too, when installed.
# Timeout: 300
# Weight: 20
B=${USWAP_BUILD:-$(dirname "$0")/../../build}
U=$B/uswap
P=$B/tests/e2e/stat_proctitle
[ -x "$U" ] && [ -x "$P" ] || { echo "SKIP: $U or $P is not built" >&2; exit 77; }
T=$(mktemp -d) || exit 1
RUN=
cleanup() {
	exec 3>&- 4>&- 2>/dev/null
	if [ -n "$RUN" ]; then
		kill "$RUN" 2>/dev/null
		wait "$RUN" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Wait (up to 60 s, only to catch a hang) until file has a line matching re.
wait_line() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		kill -0 "$RUN" 2>/dev/null || fail "uswap run ended: $(cat "$T/err")"
		i=$((i + 1))
		[ $i -lt 600 ] || fail "no '$2' in $1 after 60 s: $(cat "$1")"
		sleep 0.1
	done
}

# stat and top find process $1 of the tree of uswap run $RUN, whose
# PROG shows as $2 in the table.
check_found() {
	for pid in "$1" "$RUN"; do
		"$U" stat "$pid" >"$T/stat.txt" 2>"$T/stat.err" ||
			fail "stat $pid: exit $? ($(cat "$T/stat.err"))"
		grep -q "^tree   uswap run $RUN: " "$T/stat.txt" || fail "stat $pid: $(cat "$T/stat.txt")"
		grep -q "^ *$1 .* $2\$" "$T/stat.txt" || fail "stat $pid lacks process $1: $(cat "$T/stat.txt")"
		"$U" top -n 1 "$pid" >"$T/top.txt" 2>"$T/top.err" ||
			fail "top -n 1 $pid: exit $? ($(cat "$T/top.err"))"
		grep -q "^ *$1 .* $2\$" "$T/top.txt" || fail "top -n 1 $pid lacks process $1: $(cat "$T/top.txt")"
	done
	"$U" stat --json "$1" >"$T/s.json" 2>"$T/stat.err" || fail "stat --json $1: exit $? ($(cat "$T/stat.err"))"
	grep -q "\"run_pid\": $RUN," "$T/s.json" || fail "stat --json $1: uswap run not found: $(head -3 "$T/s.json")"
	grep -q "{\"pid\": $1," "$T/s.json" || fail "stat --json $1: no process $1: $(cat "$T/s.json")"
	# Without a pid: this tree, or a list of trees that has it.
	"$U" stat >"$T/n.txt" 2>"$T/stat.err"
	case $? in
	0) grep -q "^tree   uswap run $RUN: " "$T/n.txt" || fail "stat without PID: $(cat "$T/n.txt")" ;;
	1) grep -q "^ *$RUN  uswap run " "$T/stat.err" || fail "stat without PID: $(cat "$T/stat.err")" ;;
	*) fail "stat without PID: exit $? ($(cat "$T/stat.err"))" ;;
	esac
}

# The title really hides the environment: else this tests nothing.
check_hidden() {
	tr '\0' '\n' <"/proc/$1/environ" >"$T/env" 2>/dev/null || fail "cannot read /proc/$1/environ"
	grep -q "USWAP_STATS_DIR" "$T/env" && fail "process $1 still shows USWAP_STATS_DIR in /proc/$1/environ"
	return 0
}

mkfifo "$T/in" || exit 1
"$U" run --max 8M -- "$P" 16 "proctitle: serving" <"$T/in" >"$T/out" 2>"$T/err" &
RUN=$!
exec 3>"$T/in"
wait_line "$T/out" "^ready "
PROG=$(sed -n 's/^ready //p' "$T/out")
[ "$(tr -d '\0' <"/proc/$PROG/cmdline")" = "proctitle: serving" ] ||
	fail "the title is not set: $(tr '\0' ' ' <"/proc/$PROG/cmdline" | od -c | head -3)"
check_hidden "$PROG"
check_found "$PROG" stat_proctitle
exec 3>&-
wait "$RUN"
rc=$?
RUN=
[ $rc -eq 0 ] || fail "stat_proctitle: exit $rc ($(cat "$T/err"))"

# A process that left its parent (a daemon): no uswap run above it.
mkfifo "$T/in2" || exit 1
"$U" run --max 8M -- sh -c '("$0" 16 "orphan: serving" <"$1" >"$2" 2>"$3" &); read x || :' \
	"$P" "$T/in2" "$T/out2" "$T/err2" <"$T/in" >"$T/out" 2>"$T/err" &
RUN=$!
exec 3>"$T/in" 4>"$T/in2"
wait_line "$T/out2" "^ready "
ORPHAN=$(sed -n 's/^ready //p' "$T/out2")
ppid=$(sed 's/.*) //' "/proc/$ORPHAN/stat" | cut -d' ' -f2)
[ "$ppid" != "$RUN" ] && ! pgrep -P "$RUN" | grep -qx "$ppid" ||
	fail "process $ORPHAN did not leave its parent (ppid $ppid)"
check_hidden "$ORPHAN"
check_found "$ORPHAN" stat_proctitle
exec 4>&-
i=0
while kill -0 "$ORPHAN" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "process $ORPHAN did not end"
	sleep 0.1
done
[ -s "$T/err2" ] && fail "the orphan: $(cat "$T/err2")"
exec 3>&-
wait "$RUN"
rc=$?
RUN=
[ $rc -eq 0 ] || fail "uswap run sh: exit $rc ($(cat "$T/err"))"

# redis-server rewrites its title the same way.
if ! command -v redis-server >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	echo "redis-server or python3 not installed: the redis part is not run" >&2
	exit 0
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$U" run --max 64M -- redis-server --port "$port" --bind 127.0.0.1 --save "" \
	--appendonly no --daemonize no --dir "$T" >"$T/out" 2>"$T/err" &
RUN=$!
i=0
until python3 - "$port" 2>/dev/null <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
s.sendall(b"PING\r\n")
sys.exit(0 if s.recv(64).startswith(b"+PONG") else 1)
PY
do
	kill -0 "$RUN" 2>/dev/null || fail "redis under uswap run ended: $(cat "$T/err" "$T/out")"
	i=$((i + 1))
	[ $i -lt 600 ] || fail "redis-server did not answer on port $port"
	sleep 0.1
done
REDIS=$(pgrep -P "$RUN" | head -1)
[ -n "$REDIS" ] || fail "no redis-server under uswap run $RUN"
# Its title is set once it serves; it may take a moment.
i=0
until tr '\0' ' ' <"/proc/$REDIS/cmdline" | grep -q "127.0.0.1:$port"; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "redis-server did not set its title: $(tr '\0' ' ' <"/proc/$REDIS/cmdline")"
	sleep 0.1
done
check_hidden "$REDIS"
check_found "$REDIS" redis-server
kill "$RUN"
wait "$RUN"
RUN=
exit 0
