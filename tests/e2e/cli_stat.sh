#!/bin/sh
# Description: uswap stat and top show a running tree: stat --json (by uswap run's pid or PROG's) has the tree's counters, its swaps and per-process sizes with resident and swapped memory; the text view and top -n 2 -d 0.5 (two frames without a terminal; q and Ctrl-C on one) show it; exited processes leave a final file and no live one; uswap's threads in PROG are named (uswap-fault, uswap-reclaim); stat fails with 1 outside a tree and after it ended, with 3 on another user's tree.
. "$(dirname "$0")/lib.sh"
need_built uswap bench/usemem
need_cmd python3	# to read the JSON

# Every process publishes while it runs and leaves only its final file.
out=$("$U" run --max 16M -- sh -c '/bin/true & p=$!; wait; echo "p=$p"; echo "dir=$USWAP_STATS_DIR"; ls "$USWAP_STATS_DIR"' 2>"$T/err")
case $? in
0) ;;
125) skip "$(cat "$T/err")" ;;
*) fail "uswap run sh: exit $? ($(cat "$T/err"))" ;;
esac
p=$(echo "$out" | sed -n 's/^p=//p')
dir=$(echo "$out" | sed -n 's/^dir=//p')
case $dir in /*/uswap-stats.*) ;; *) fail "no USWAP_STATS_DIR without --stats: $out" ;; esac
echo "$out" | grep -qx "$p.json" || fail "no final $p.json: $out"
echo "$out" | grep -qx "$p.live.json" && fail "$p.live.json left after exit: $out"
[ -e "$dir" ] && fail "statistics directory $dir left behind"
# A child forked (not started anew) publishes too.
out=$("$U" run --max 16M -- sh -c '(me=$(exec sh -c "echo \$PPID"); i=0
	while [ ! -f "$USWAP_STATS_DIR/$me.live.json" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	echo "me=$me"; ls "$USWAP_STATS_DIR")' 2>"$T/err") || fail "uswap run sh: exit $? ($(cat "$T/err"))"
me=$(echo "$out" | sed -n 's/^me=//p')
echo "$out" | grep -qx "$me.live.json" || fail "the forked child $me did not publish: $out"

# A tree that swaps: 64M written over and over under a 16M budget.
spawn "$U" run --max 16M -- "$B/bench/usemem" --size 64M --passes 65535 >"$T/out" 2>"$T/err"
RUN=$!
i=0
until "$U" stat --json "$RUN" >"$T/s.json" 2>"$T/stat.err" &&
	python3 - "$T/s.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if any(p["command"] == "usemem" and p["swapped_bytes"] > 0
                  for p in s["processes"]) else 1)
PY
do
	kill -0 "$RUN" 2>/dev/null || fail "uswap run ended: $(cat "$T/err")"
	i=$((i + 1))
	[ $i -lt 600 ] || fail "stat never showed usemem swapping: $(cat "$T/stat.err" "$T/s.json")"
	sleep 0.1
done
python3 - "$T/s.json" "$RUN" <<'PY' || fail "stat --json: $(cat "$T/s.json")"
import json, os, sys
s = json.load(open(sys.argv[1])); run = int(sys.argv[2])
assert set(s) == {"tree", "vmstat", "swaps", "tiers", "fault_latency_us", "process", "processes"}, list(s)
t = s["tree"]
assert t["run_pid"] == run and "usemem" in t["command"], t
assert os.path.isdir(t["stats_dir"]), t
v = s["vmstat"]
assert v["pgfault"] > 0 and v["pswpout"] > 0 and v["max_bytes"] == 16 << 20, v
u = [p for p in s["processes"] if p["command"] == "usemem"]
assert len(u) == 1, s["processes"]
u = u[0]
assert u["resident_bytes"] > 0 and u["swapped_bytes"] > 0, u
assert u["max_bytes"] == 16 << 20 and u["pswpout"] > 0, u
rows = [r for r in s["swaps"] if r["pid"] == u["pid"]]
assert rows and rows[0]["used_kib"] > 0 and rows[0]["size_kib"] > 0, s["swaps"]
assert s["process"]["processes"] == len(s["processes"]), s["process"]
assert all("budget" in p for p in s["processes"]), s["processes"]
PY
set -- $(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print([p["pid"] for p in s["processes"] if p["command"] == "usemem"][0], s["tree"]["stats_dir"])' "$T/s.json")
PROG=$1
DIR=$2
[ -f "$DIR/$PROG.live.json" ] || fail "no $DIR/$PROG.live.json"
# uswap's threads in PROG carry names (top -H, ps -L, perf).
names=$(cat /proc/"$PROG"/task/*/comm 2>/dev/null | sort | uniq -c)
for want in uswap-fault uswap-reclaim; do
	echo "$names" | grep -q " $want\$" || fail "no thread named $want in usemem: $names"
done

# PROG's pid finds the same tree; so does no pid, unless several run.
"$U" stat --json "$PROG" >"$T/p.json" 2>"$T/stat.err" || fail "stat $PROG: exit $? ($(cat "$T/stat.err"))"
grep -q "\"stats_dir\": \"$DIR\"" "$T/p.json" || fail "stat $PROG: another tree: $(head -3 "$T/p.json")"
grep -q "\"run_pid\": $RUN," "$T/p.json" || fail "stat $PROG: uswap run not found: $(head -3 "$T/p.json")"
"$U" stat --json >"$T/n.json" 2>"$T/stat.err"
case $? in
0) grep -q "\"stats_dir\": " "$T/n.json" || fail "stat without PID: $(cat "$T/n.json")" ;;
1) grep -q "uswap trees are running; give the PID of one:" "$T/stat.err" &&
	grep -q "^ *$RUN  uswap run (" "$T/stat.err" || fail "stat without PID: $(cat "$T/stat.err")" ;;
*) fail "stat without PID: exit $? ($(cat "$T/stat.err"))" ;;
esac

# The text view.
"$U" stat "$RUN" >"$T/stat.txt" 2>"$T/stat.err" || fail "stat: exit $? ($(cat "$T/stat.err"))"
for want in "^tree   uswap run $RUN: .*usemem --size 64M" "^budget \[[#-]*\] " \
	"^swap   .* swapped, on [0-9]* device" "^    PID  RESIDENT " \
	"^ *$PROG .* usemem\$" "^DEVICE " " $PROG\$" "pswpout  *[1-9]"; do
	grep -q "$want" "$T/stat.txt" || fail "stat lacks '$want': $(cat "$T/stat.txt")"
done
grep -q "^rates" "$T/stat.txt" && fail "stat shows rates: $(cat "$T/stat.txt")"

# top without a terminal: COUNT frames, each with the rates line.
"$U" top -n 2 -d 0.5 "$RUN" >"$T/top.txt" 2>"$T/top.err" || fail "top: exit $? ($(cat "$T/top.err"))"
[ "$(grep -c '^uswap top - [0-9:]* - every 0.5s$' "$T/top.txt")" -eq 2 ] || fail "top -n 2: $(cat "$T/top.txt")"
[ "$(grep -c '^rates  ' "$T/top.txt")" -eq 2 ] || fail "top: rates lines: $(cat "$T/top.txt")"
grep -m1 '^rates  ' "$T/top.txt" | grep -q "(from the next frame)" || fail "top: first frame has rates"
grep -q "$(printf '\033')" "$T/top.txt" && fail "top wrote escape sequences to a file"
grep -q "^ *$PROG .* usemem\$" "$T/top.txt" || fail "top lacks usemem: $(cat "$T/top.txt")"

# top on a terminal: redrawn in place, q quits; so does Ctrl-C.
python3 - "$U" "$RUN" <<'PY' || fail "top on a terminal"
import os, pty, select, sys, time
def run(key):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.argv[1], [sys.argv[1], "top", "-d", "0.2", sys.argv[2]])
    out, sent, status = b"", False, None
    end = time.time() + 30
    while time.time() < end:
        if not sent and out.count(b"uswap top - ") >= 2:
            os.write(fd, key)
            sent = True
        if select.select([fd], [], [], 0.1)[0]:
            try:
                out += os.read(fd, 65536)
            except OSError:
                pass
        w, st = os.waitpid(pid, os.WNOHANG)
        if w:
            status = st
            break
    if status is None:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        sys.exit("top did not quit on %r: %r" % (key, out[-300:]))
    assert sent, out[-300:]
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert b"\x1b[H" in out and b" - q quits" in out, out[:300]
    os.close(fd)
run(b"q")
run(b"\x03")
PY

# Another user cannot read uswap run's descriptors or PROG's memory map: 3.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$T" && cp "$U" "$T/uswap" && chmod 755 "$T/uswap" || exit 1
	for pid in "$PROG" "$RUN"; do
		as_user nobody "$T/uswap" stat "$pid" >"$T/out2" 2>"$T/stat.err"
		rc=$?
		[ $rc -eq 3 ] || fail "stat $pid as another user: exit $rc, expected 3 ($(cat "$T/stat.err"))"
		grep -q "^uswap: cannot read the descriptors of uswap run $RUN: Permission denied (another user's" "$T/stat.err" ||
			fail "stat $pid as another user: $(cat "$T/stat.err")"
	done
fi

# A process outside any tree: 1.
spawn sleep 60
SLEEPER=$!
"$U" stat "$SLEEPER" >"$T/out2" 2>"$T/stat.err"
rc=$?
[ $rc -eq 1 ] || fail "stat on a process outside a tree: exit $rc, expected 1"
grep -qx "uswap: process $SLEEPER is not in a uswap tree (no uswap run above it, and it maps no uswap budget)" "$T/stat.err" ||
	fail "stat on a process outside a tree: $(cat "$T/stat.err")"
[ -s "$T/out2" ] && fail "stat on a process outside a tree wrote to stdout"

# Usage errors: 2.
for args in "stat --bogus" "stat 12x" "stat 1 2" "top -d 0" "top -d" "top -n 0" "top -n x" "stat -d 1"; do
	# shellcheck disable=SC2086
	"$U" $args >/dev/null 2>"$T/stat.err"
	rc=$?
	[ $rc -eq 2 ] || fail "uswap $args: exit $rc, expected 2"
	grep -q "^Try 'uswap $(echo "$args" | cut -d' ' -f1) --help'.\$" "$T/stat.err" || fail "uswap $args: $(cat "$T/stat.err")"
done

# The tree ends: its directory goes, stat fails with 1.
kill "$RUN"
wait "$RUN" 2>/dev/null
RUN_DONE=$RUN
[ -e "$DIR" ] && fail "statistics directory $DIR left after the run"
for pid in "$RUN_DONE" "$PROG"; do
	"$U" stat "$pid" >"$T/out2" 2>"$T/stat.err"
	rc=$?
	[ $rc -eq 1 ] || fail "stat $pid after the run: exit $rc, expected 1"
	grep -qx "uswap: no process $pid" "$T/stat.err" || fail "stat $pid after the run: $(cat "$T/stat.err")"
done
exit 0
