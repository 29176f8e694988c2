#!/usr/bin/env bash
# Weight: 45
# Timeout: 1800
# A jemalloc program forks after its heap was swapped out
# (tests/e2e/jemalloc_fork.c): jemalloc preloaded, its extents managed
# memory, 128 MiB of blocks under --max 16M, three forks, each child
# allocating at once and checking every block, a grandchild too.  The
# child's runtime must not live in, nor wait for, the memory it is about to
# manage (uswap's own allocations never come from the program's
# allocator): a child that does not end in 300 s (a few at rest) fails
# the test.  With and
# without the compressed pool; the test program passes with jemalloc alone
# first.  64K folios: what is tested is the fork, and its blocks, checked
# in index order, scatter over the heap (with 4K folios it took 110 s;
# redis_bgsave forks a jemalloc heap at the default 4K).
set -u
B=${USWAP_BUILD:-build}
T=$B/tests/e2e/jemalloc_fork
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

jemalloc=$(ldconfig -p 2>/dev/null | awk '/libjemalloc\.so\.2 /{ print $NF; exit }')
[ -n "$jemalloc" ] || { echo "SKIP: libjemalloc.so.2 is not installed (scripts/deps.sh installs libjemalloc2)"; exit 77; }
if ldd "$T" 2>/dev/null | grep -q "libasan\|libtsan"; then
	echo "SKIP: a sanitizer's allocator and jemalloc cannot both replace the C library's"
	exit 77
fi
"$B/uswap" run --max 16M -- true 2>"$tmp/err"
[ $? -eq 125 ] && { echo "SKIP: $(cat "$tmp/err")"; exit 77; }

LD_PRELOAD=$jemalloc "$T" >"$tmp/plain" 2>&1 || { cat "$tmp/plain"; fail "the test fails with jemalloc alone"; }

vm() {	# FILE KEY: a vmstat value of a --stats file
	python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['vmstat'].get(sys.argv[2], 0))" "$1" "$2"
}

for pool in off lz4; do
	# In a session of its own: whatever hangs goes with the group.
	LD_PRELOAD=$jemalloc setsid "$B/uswap" run --max 16M --folio 64K --zswap $pool \
		--stats "$tmp/stats.json" -- "$T" 3 >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 15000); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		kill -KILL -- -$pid; wait $pid
		fail "--zswap $pool: still running after 1500 s"
	fi
	wait $pid
	rc=$?
	cat "$tmp/out" "$tmp/err"
	[ $rc = 0 ] || fail "--zswap $pool: exit status $rc"
	grep -q "cannot read swapped\|cannot keep its memory\|is lost" "$tmp/err" &&
		fail "--zswap $pool: the child's memory was not carried on"
	out=$(( $(vm "$tmp/stats.json" pswpout) + $(vm "$tmp/stats.json" zswpout) ))
	mat=$(vm "$tmp/stats.json" fork_materialized)
	echo "--zswap $pool: pages out $out, pages read in at fork $mat"
	[ "$out" -gt 10000 ] || fail "--zswap $pool: the heap was not swapped out ($out pages): jemalloc's extents are not managed"
	[ "$mat" = 0 ] || fail "--zswap $pool: a child's memory was read in at fork, not managed"
done
exit 0
