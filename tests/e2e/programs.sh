#!/usr/bin/env bash
# Weight: 13
# Real, unmodified programs from Debian's packages under a budget far below
# their footprint; their output must be exactly what they print without
# uswap (issue 5):
#  - python3 (an interpreter) building and checksumming 1 GiB in bytearrays,
#    then again in 4 multiprocessing workers (fork), under --max 128M: the
#    tree's Pss (sampled) within the budget plus what the interpreters
#    and uswap (its page-state tables) use of their own;
#  - sort --parallel=4 (multi-threaded, large malloc'd buffers; about
#    30 MiB without uswap) on 9 MiB of text under --max 12M;
#  - kill -9 of a whole tree leaves no process, no swap file and no
#    statistics directory once the next run has swept it.
set -u
B=${USWAP_BUILD:-build}
U=$B/uswap
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
have() { command -v "$1" >/dev/null; }
vm() {	# FILE KEY: a vmstat value of a --stats file
	python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['vmstat'].get(sys.argv[2], 0))" "$1" "$2"
}

have python3 || { echo "SKIP: python3 missing"; exit 77; }

# 1. python3 + multiprocessing, 1 GiB under 128 MiB.
py=tests/e2e/programs/bigdata.py
python3 $py 1024 4 >"$T/py.plain" || fail "python3 without uswap failed"
# The interpreters' own memory (not uswap's to manage: code, small
# objects), from a tree of the same shape whose data fits (64 MiB).
pss=tests/e2e/programs/treepss.py
python3 $pss "$T/pss.small" python3 $py 64 4 >/dev/null || fail "python3 with 64 MiB failed"
USWAP_STAT=$U python3 $pss "$T/pss.uswap" "$U" run --max 128M --swap-size 4G --stats "$T/py.json" -- python3 $py 1024 4 >"$T/py.uswap" ||
	fail "python3 under uswap failed"
cmp -s "$T/py.plain" "$T/py.uswap" || fail "python3 printed other checksums under uswap: $(diff "$T/py.plain" "$T/py.uswap" | head -5)"
grep -q MISMATCH "$T/py.uswap" && fail "a worker saw other data than its parent"
out=$(( $(vm "$T/py.json" pswpout) + $(vm "$T/py.json" zswpout) ))
peak=$(vm "$T/py.json" resident_peak)
read -r small _ <"$T/pss.small"
read -r tree procs tables <"$T/pss.uswap"
own=$(( small - 65536 ))	# KiB: the tree without its data
echo "python3: $(wc -l <"$T/py.uswap") lines identical; pages out $out; budget peak $((peak >> 20)) MiB of 128;" \
	"the tree's Pss peak $((tree >> 10)) MiB ($procs processes), its interpreters' own $((own >> 10)) MiB, uswap's page-state tables $((tables >> 10)) MiB"
[ "$out" -gt 100000 ] || fail "python3's data was not swapped (only $out pages): its bytearrays are not managed"
# The acceptance: the tree's resident memory within the budget plus the
# interpreters' own and uswap's: 8 MiB (supervisor, runtimes, buffers) and
# the page-state tables of every process at the peak (a fork child's own
# once it faults: about 5 MiB per GiB managed with 4 KiB folios).
# A budget that went past 128 MiB did so counted (max_overrun: on a busy
# machine a fault that waits too long at the budget is admitted past it):
# then the bound is the budget's own peak, so that memory uswap did not
# count still fails.
budget=131072
overrun=$(vm "$T/py.json" max_overrun)
if [ $((peak >> 10)) -gt $budget ]; then
	[ "$overrun" -gt 0 ] || fail "the budget peaked at $((peak >> 20)) MiB of 128 with max_overrun 0"
	budget=$((peak >> 10))
	echo "python3: the budget went past 128 MiB, counted (max_overrun $overrun): bound $((budget >> 10)) MiB"
fi
[ "$tree" -le $(( budget + own + 8192 + tables )) ] ||
	fail "the tree's Pss peaked at $((tree >> 10)) MiB: over $((budget >> 10)) MiB + $((own >> 10)) + 8 + $((tables >> 10))"

# 2. sort, multi-threaded, with a large buffer.
python3 -c "
import random
r = random.Random(5)
with open('$T/words', 'w') as f:
    for i in range(300_000):
        f.write('%08x %s\\n' % (r.getrandbits(32), 'uswap' * r.randrange(1, 8)))
"
sort --parallel=4 -S 64M "$T/words" | sha256sum >"$T/sort.plain"
"$U" run --max 12M --stats "$T/sort.json" -- sort --parallel=4 -S 64M "$T/words" |
	sha256sum >"$T/sort.uswap"
cmp -s "$T/sort.plain" "$T/sort.uswap" || fail "sort's output differs under uswap"
out=$(( $(vm "$T/sort.json" pswpout) + $(vm "$T/sort.json" zswpout) ))
echo "sort --parallel=4: output identical; pages out $out"
[ "$out" -gt 0 ] || fail "sort's memory was not swapped: its buffers are not managed"

# 4. kill -9 of the whole tree.
setsid "$U" run --max 64M --swap-size 2G -- python3 $py 512 4 >/dev/null 2>&1 &
sid=$!
for i in $(seq 100); do
	[ "$(pgrep -s $sid | wc -l)" -ge 4 ] && break
	sleep 0.1
done
pids=$(pgrep -s $sid | paste -sd'|')
[ -n "$pids" ] || fail "the tree did not start"
pkill -9 -s $sid
wait $sid 2>/dev/null
# Exiting processes may take a while on a loaded machine (their memory and
# io_uring go with them); what is still there after 15 s is reported.  A
# worker forked while pkill ran was not among those it saw: the kill is
# repeated, as a person would (a process that SIGKILL cannot end stays).
for i in $(seq 150); do
	pgrep -s $sid >/dev/null || break
	sleep 0.1
	pkill -9 -s $sid 2>/dev/null
done
pgrep -s $sid >/dev/null &&
	fail "processes of the tree survived kill -9: $(ps -o pid=,stat=,wchan:32=,etimes=,args= -s $sid | head -8)"
# Processes of the tree that are still exiting may hold them a moment.
for i in $(seq 50); do
	left=$(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -Ec "memfd:uswap-tree-($pids)-|uswap-($pids) \(deleted\)")
	[ "$left" = 0 ] && break
	sleep 0.1
done
[ "$left" = 0 ] || fail "$left swap files or budgets still open after kill -9"
"$U" run --max 16M -- true || fail "the next run failed"
# uswap run's own statistics directory is named after its pid ($sid).
ls -d "${TMPDIR:-/tmp}"/uswap-stats.$sid.* 2>/dev/null &&
	fail "kill -9 left its statistics directory behind, even after the next run"
echo "kill -9 of the tree: no process, swap file, budget or statistics directory left"
