#!/usr/bin/env bash
# Weight: 40
# madvise advice on managed memory as the kernel has it (tests/e2e/fork_advice.c):
# MADV_WIPEONFORK/KEEPONFORK, MADV_DONTFORK/DOFORK, MADV_REMOVE,
# MADV_POPULATE_READ/WRITE, MADV_COLD, MADV_PAGEOUT, MADV_DONTDUMP/DODUMP,
# MADV_GUARD_INSTALL (refused),
# on swapped-out and resident memory, folio sizes 4K..2M, with and without
# the compressed pool; nothing said about unreadable or lost memory.  Then
# the same advice through the preload library: python3 under uswap run,
# its mmap advised and forked.
set -u
B=${USWAP_BUILD:-build}
b=$B/tests/e2e/fork_advice
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for args in "4K off" "16K lz4" "64K off" "2M off"; do
	for mode in wipe dontfork remove populate cold pageout dump guard; do
		$b $mode $args >"$T/out" 2>&1
		rc=$?
		[ $rc = 77 ] && { cat "$T/out"; exit 77; }
		[ $rc = 0 ] || { cat "$T/out"; fail "fork_advice $mode $args"; }
		if grep -q "cannot read swapped\|is lost\|cannot keep its memory\|went below zero" "$T/out"; then
			cat "$T/out"
			fail "fork_advice $mode $args: uswap complained"
		fi
	done
	echo "fork_advice $args: every mode passed"
done

command -v python3 >/dev/null || { echo "SKIP: python3 missing (the preload part)"; exit 77; }
cat >"$T/advice.py" <<'EOF'
import mmap, os, sys
MB = 1 << 20
n = 64 * MB
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, n, 4096):
    m[i:i + 8] = (i // 4096 + 1).to_bytes(8, "little")
wipe, dont = (4 * MB + 4096, 8 * MB), (60 * MB, 2 * MB)
m.madvise(getattr(mmap, "MADV_WIPEONFORK", 18), *wipe)
m.madvise(mmap.MADV_DONTFORK, *dont)
def page(i):
    return int.from_bytes(m[i:i + 8], "little")
pid = os.fork()
if pid == 0:
    bad = 0
    for i in range(0, 60 * MB, 4096):
        want = 0 if wipe[0] <= i < wipe[0] + wipe[1] else i // 4096 + 1
        bad += page(i) != want
    print("child: %d pages wrong" % bad)
    os._exit(1 if bad else 0)
_, st = os.waitpid(pid, 0)
bad = sum(page(i) != i // 4096 + 1 for i in range(0, n, 4096))
print("parent: %d pages wrong; child status %d" % (bad, st))
sys.exit(1 if bad or st else 0)
EOF
# The kernel's own answer, then under a budget that swaps most of it out.
python3 "$T/advice.py" >"$T/plain" 2>&1 || { cat "$T/plain"; fail "python3 without uswap"; }
$B/uswap run --max 16M -- python3 "$T/advice.py" >"$T/uswap" 2>&1
rc=$?
cat "$T/uswap"
[ $rc = 0 ] || fail "python3 under uswap: fork advice not as the kernel has it"
grep -q "cannot read swapped\|is lost\|cannot keep its memory" "$T/uswap" &&
	fail "uswap complained"
echo "python3: fork advice through the preload as without uswap"
exit 0
