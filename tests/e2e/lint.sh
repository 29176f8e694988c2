#!/bin/sh
# Description: scripts/lint finds nothing in the tree (every prototype defined, every name a comment or doc cites exists, every option documented, every system call through prim.c), and finds a stale prototype, a comment naming no function and a raw system call when they are planted in a copy.
# Weight: 20
. "$(dirname "$0")/lib.sh"
need_built uswap

"$ROOT/scripts/lint" "$B" >"$T/out" 2>&1
case $? in
0) ;;
2) fail "scripts/lint cannot run (universal-ctags missing? scripts/deps.sh installs it): $(cat "$T/out")" ;;
*) cat "$T/out" >&2; fail "scripts/lint found the above" ;;
esac

# The check itself: a copy of the tree with two planted mistakes.
mkdir "$T/tree"
(cd "$ROOT" && git ls-files -z 2>/dev/null | xargs -0 cp -d --parents -t "$T/tree") ||
	skip "not a git checkout: cannot copy the tree"
printf 'int lint_planted_stale(void);\n' >>"$T/tree/src/runtime.h"
printf '/* lint_planted_missing() is named here. */\n' >>"$T/tree/src/log.c"
printf 'static int lint_planted_raw(void)\n{\n\treturn close(0);\n}\n' >>"$T/tree/src/log.c"
"$T/tree/scripts/lint" "$B" >"$T/out2" 2>&1 && fail "scripts/lint passed a tree with planted mistakes"
grep -q "lint_planted_stale() is declared but never defined" "$T/out2" ||
	{ cat "$T/out2" >&2; fail "the stale prototype was not found"; }
grep -q "src/log.c:.*lint_planted_missing() is named" "$T/out2" ||
	{ cat "$T/out2" >&2; fail "the missing name was not found"; }
grep -q "src/log.c:[0-9]*: close() is called directly" "$T/out2" ||
	{ cat "$T/out2" >&2; fail "the raw close() was not found"; }
[ "$(wc -l <"$T/out2")" -le 4 ] || { cat "$T/out2" >&2; fail "more findings than the three planted"; }
exit 0
