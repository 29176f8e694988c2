#!/bin/sh
# Description: uswap stat and top, run by root on another user's tree, trust nothing that user wrote: a FIFO, a symlink to /dev/zero, a 100 MB file and a file of another owner as live files are skipped with a note (no hang, bounded memory); control characters in a program's name and title, a swap device's path and a crafted file's strings are printed escaped, never raw.
# Timeout: 300
# Weight: 30
. "$(dirname "$0")/lib.sh"
need_built uswap libuswap_preload.so tests/e2e/stat_proctitle
need_root "to watch another user's tree"
need_cmd python3 timeout
P=$B/tests/e2e/stat_proctitle
EVIL=uswap_t_g_2_$$
user_new "$EVIL"
as_evil() {
	as_user "$EVIL" "$@"
}
ESC=$(printf '\033')
chmod 755 "$T"
mkdir "$T/bin" "$T/e" && chown "$EVIL" "$T/e" || exit 1
cp "$U" "$B/libuswap_preload.so" "$T/bin/" || exit 1
# The program's name and title, and its swap directory, with escapes.
EXE="$T/e/ev${ESC}[2Jil"
cp "$P" "$EXE" && chmod 755 "$EXE" "$T/bin/uswap" "$T/bin/libuswap_preload.so" || exit 1
TITLE="title${ESC}[2J${ESC}]0;pwned$(printf '\007')"
SWAPDIR="$T/e/s${ESC}[31m"
mkfifo "$T/in" && chmod 644 "$T/in" || exit 1
as_evil mkdir "$T/e/tmp" "$SWAPDIR" || exit 1

# The other user's tree: PROG forks five sleeps, then becomes the program,
# which writes its title over its arguments (and keeps its environment).
# uswap run needs userfaultfd: the other user gets CAP_SYS_PTRACE for it
# (one of the ways docs/uswap.1 names), whatever vm.unprivileged_userfaultfd.
# (The FIFO is opened in the child: the open waits for the writer, fd 3.)
spawn sh -c 'exec "$@" <"$0"' "$T/in" \
	setpriv --reuid="$EVIL" --regid="$(id -g "$EVIL")" --clear-groups \
	--inh-caps=-all,+sys_ptrace --ambient-caps=+sys_ptrace --bounding-set=-all,+sys_ptrace \
	env TMPDIR="$T/e/tmp" "$T/bin/uswap" run --max 16M --swap-dir "$SWAPDIR" -- \
	sh -c 'for i in 1 2 3 4 5; do sleep 1000 & done; exec "$0" 8 "$1" args' "$EXE" "$TITLE" \
	>"$T/out" 2>"$T/err"
RUN=$!
exec 3>"$T/in"
i=0
until grep -q "^ready " "$T/out" 2>/dev/null; do
	kill -0 "$RUN" 2>/dev/null || fail "the other user's uswap run ended: $(cat "$T/err")"
	i=$((i + 1))
	[ $i -lt 600 ] || fail "the program did not start: $(cat "$T/err")"
	sleep 0.1
done
PROG=$(sed -n 's/^ready //p' "$T/out")
KIDS=$(pgrep -P "$PROG" -x sleep | tr '\n' ' ')
set -- $KIDS
[ $# -eq 5 ] || fail "expected five sleeps under $PROG: $KIDS"
DIR=$(ls -d "$T/e/tmp"/uswap-stats.* 2>/dev/null | head -1)
[ -d "$DIR" ] || fail "no statistics directory in $T/e/tmp"
# Each sleep has published once; then it is stopped and its file replaced.
for k in $KIDS; do
	i=0
	until [ -f "$DIR/$k.live.json" ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || fail "sleep $k never published"
		sleep 0.1
	done
	kill -STOP "$k"
done
set -- $KIDS
BUDGET=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]), strict=False)["process"]["budget"])' "$DIR/$1.live.json") ||
	fail "no budget in $DIR/$1.live.json"
as_evil rm -f "$DIR/$1.live.json" "$DIR/$2.live.json" "$DIR/$3.live.json" "$DIR/$4.live.json" "$DIR/$5.live.json"
as_evil mkfifo "$DIR/$1.live.json" || exit 1
as_evil ln -s /dev/zero "$DIR/$2.live.json" || exit 1
as_evil dd if=/dev/zero of="$DIR/$3.live.json" bs=1M count=100 status=none || exit 1
# A file the tree's user crafted: control characters in its strings.
python3 - "$T/crafted.json" "$4" "$BUDGET" <<'PY' || exit 1
import json, sys
path, pid, budget = sys.argv[1], int(sys.argv[2]), sys.argv[3]
doc = {"vmstat": {"pgfault": 1, "pg\x1b[2Jevil": 7, "max_bytes": 16 << 20},
       "swaps": [{"path": "/dev/\x1b]0;owned\x07disk", "type": "file\x1b[5m",
                  "size_kib": 1024, "used_kib": 4, "prio": -2, "node": 0}],
       "process": {"pid": pid, "rss_kib": 1, "budget": budget}}
open(path, "w").write(json.dumps(doc))
PY
chmod 644 "$T/crafted.json" && as_evil cp "$T/crafted.json" "$DIR/$4.live.json" || exit 1
# A file that is not the tree's user's.
python3 - "$DIR/$5.live.json" "$5" "$BUDGET" <<'PY' || exit 1
import json, sys
path, pid, budget = sys.argv[1], int(sys.argv[2]), sys.argv[3]
json.dump({"vmstat": {"pgfault": 5}, "process": {"pid": pid, "budget": budget}},
          open(path, "w"))
PY
chown 65534 "$DIR/$5.live.json" || exit 1

# What root sees.  A bounded wait catches a hang; bounded memory, a read
# without end (not under a sanitizer, which reserves terabytes).
LIMIT="ulimit -v 4000000;"
ldd "$U" 2>/dev/null | grep -q 'lib[at]san' && LIMIT=
watch() {
	name=$1
	shift
	(eval "$LIMIT"; timeout 60 "$U" "$@") >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ $rc -eq 124 ] && fail "uswap $*: still running after 60 s (hung on a file?)"
	[ $rc -eq 0 ] || fail "uswap $*: exit $rc ($(cat "$T/$name.err"))"
	python3 - "$T/$name.out" "$T/$name.err" <<'PY' || fail "uswap $*: raw control characters in its output"
import sys
for f in sys.argv[1:]:
    data = open(f, "rb").read()
    bad = sorted({b for b in data if (b < 0x20 and b not in b"\n") or b == 0x7f})
    if bad:
        i = min(data.index(bytes([b])) for b in bad)
        sys.exit("%s: bytes %s, as in %r" % (f, bad, data[max(0, i - 40):i + 40]))
PY
}
set -- $KIDS
watch stat stat "$RUN"
watch statp stat "$PROG"
watch top top -n 1 "$RUN"
watch json stat --json "$RUN"
for f in stat top; do
	# The program: its name and its command line (the title), escaped.
	grep -q "^tree   uswap run $RUN: title\\\\x1b\[2J\\\\x1b\]0;pwned\\\\x07" "$T/$f.out" ||
		fail "uswap $f: the title is not shown escaped: $(grep '^tree' "$T/$f.out")"
	grep -q "^ *$PROG .* ev\\\\x1b\[2Jil\$" "$T/$f.out" ||
		fail "uswap $f: the program's name is not shown escaped: $(cat "$T/$f.out")"
	# The swap device's path, as the program published it, escaped.
	grep -q "\\\\x1b\[31m/uswap-" "$T/$f.out" ||
		fail "uswap $f: the swap device is not shown escaped: $(cat "$T/$f.out")"
	# The crafted file: shown, with its strings escaped.
	grep -q "^ *$4 " "$T/$f.out" || fail "uswap $f: the crafted file of $4 is not shown: $(cat "$T/$f.out")"
	grep -q "/dev/\\\\x1b\]0;owned\\\\x07disk" "$T/$f.out" ||
		fail "uswap $f: the crafted device path is not shown escaped: $(cat "$T/$f.out")"
	grep -q "file\\\\x1b\[5m" "$T/$f.out" ||
		fail "uswap $f: the crafted device type is not shown escaped: $(cat "$T/$f.out")"
	grep -q "pg\\\\x1b\[2Jevil  *7" "$T/$f.out" ||
		fail "uswap $f: the crafted counter is not shown escaped: $(cat "$T/$f.out")"
	# The others: skipped, each with a note.
	for k in $1 $2 $3 $5; do
		grep -q "^ *$k " "$T/$f.out" && fail "uswap $f: process $k's hostile file was shown: $(cat "$T/$f.out")"
		grep -q "^uswap: .*/$k\.live\.json.*: skipped" "$T/$f.err" ||
			fail "uswap $f: no note on $k.live.json: $(cat "$T/$f.err")"
	done
done
# JSON: the same strings, escaped as JSON.
python3 - "$T/json.out" "$4" "$EXE" "$TITLE" <<'PY' || fail "stat --json: $(cat "$T/json.out")"
import json, os, sys
s = json.load(open(sys.argv[1]))
pid, exe, title = int(sys.argv[2]), os.path.basename(sys.argv[3]), sys.argv[4]
assert s["tree"]["command"] == title, s["tree"]
procs = {p["pid"]: p for p in s["processes"]}
assert pid in procs, procs
assert any(p["command"] == exe for p in procs.values()), procs
assert any(r["path"] == "/dev/\x1b]0;owned\x07disk" for r in s["swaps"]), s["swaps"]
assert any("\x1b[31m/uswap-" in r["path"] for r in s["swaps"]), s["swaps"]
assert s["vmstat"].get("pg\x1b[2Jevil") == 7, s["vmstat"]
PY
exec 3>&-
for k in $KIDS; do
	kill -CONT "$k" 2>/dev/null
	kill -KILL "$k" 2>/dev/null
done
wait "$RUN"
exit 0
