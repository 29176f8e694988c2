#!/bin/sh
# Description: statistics files are never written through a symbolic link: as root, --stats FILE with a symlink planted by another user at FILE.tmp or at FILE, and the preload's USWAP_STATS at a symlink, leave the root-owned file they point to unchanged; FILE becomes a regular file of root's and uswap says it replaced the link.
# Timeout: 120
. "$(dirname "$0")/lib.sh"
need_built uswap
need_root "the victim of the planted links"
EVIL=uswap_t_g_1_$$
user_new "$EVIL"
as_evil() {
	as_user "$EVIL" "$@"
}
# The other user's own directory, where root is asked to write.
chmod 755 "$T"
mkdir "$T/evil" && chown "$EVIL" "$T/evil" || exit 1
echo precious >"$T/victim" && chmod 600 "$T/victim" || exit 1
victim_intact() {
	[ "$(cat "$T/victim")" = precious ] || fail "$1: the root-owned file was overwritten: $(head -c 200 "$T/victim")"
	[ "$(stat -c %U:%a "$T/victim")" = root:600 ] || fail "$1: the root-owned file changed: $(stat -c %U:%a "$T/victim")"
}
usable() {
	case $1 in
	0) ;;
	125) skip "$(cat "$T/err")" ;;
	*) fail "$2: exit $1 ($(cat "$T/err"))" ;;
	esac
}

# A link at FILE.tmp, the name uswap wrote first.
as_evil ln -s "$T/victim" "$T/evil/s.json.tmp" || exit 1
"$U" run --stats "$T/evil/s.json" -- true 2>"$T/err"
usable $? "--stats with a link at s.json.tmp"
victim_intact "--stats with a link at s.json.tmp"
[ -L "$T/evil/s.json.tmp" ] || fail "the planted s.json.tmp link was removed or replaced"
[ -f "$T/evil/s.json" ] && [ ! -L "$T/evil/s.json" ] || fail "no regular s.json written: $(ls -la "$T/evil")"
grep -q '"vmstat"' "$T/evil/s.json" || fail "s.json: $(cat "$T/evil/s.json")"
[ "$(stat -c %U "$T/evil/s.json")" = root ] || fail "s.json is not root's: $(stat -c %U "$T/evil/s.json")"
ls -A "$T/evil" | grep -v '^s\.json\(\.tmp\)\?$' && fail "temporary files left in the directory: $(ls -A "$T/evil")"

# A link at FILE itself: replaced by the file, not followed; uswap says so.
rm -f "$T/evil/s.json"
as_evil ln -s "$T/victim" "$T/evil/s.json" || exit 1
"$U" run --stats "$T/evil/s.json" -- true 2>"$T/err"
usable $? "--stats with a link at s.json"
victim_intact "--stats with a link at s.json"
[ -f "$T/evil/s.json" ] && [ ! -L "$T/evil/s.json" ] || fail "s.json is still a link: $(ls -la "$T/evil")"
grep -q '"vmstat"' "$T/evil/s.json" || fail "s.json: $(cat "$T/evil/s.json")"
grep -qx "uswap: --stats $T/evil/s.json was a symbolic link (to $T/victim): replaced by the statistics file; $T/victim is left as it was" "$T/err" ||
	fail "uswap did not say it replaced the link: $(cat "$T/err")"

# The preload library alone, with USWAP_STATS at a link (no uswap run).
P=$B/libuswap_preload.so
if [ -f "$P" ]; then
	as_evil ln -s "$T/victim" "$T/evil/p.json" || exit 1
	env LD_PRELOAD="$P" USWAP_STATS="$T/evil/p.json" USWAP_MAX=16M true 2>"$T/err"
	rc=$?
	case $rc in
	0) ;;
	125) echo "SKIP (preload part): $(cat "$T/err")" >&2 ;;
	*) fail "preload with USWAP_STATS: exit $rc ($(cat "$T/err"))" ;;
	esac
	victim_intact "USWAP_STATS at a link"
	if [ $rc -eq 0 ]; then
		[ -f "$T/evil/p.json" ] && [ ! -L "$T/evil/p.json" ] || fail "p.json is still a link: $(ls -la "$T/evil")"
		grep -q '"vmstat"' "$T/evil/p.json" || fail "p.json: $(cat "$T/evil/p.json")"
	fi
fi
exit 0
