#!/usr/bin/env bash
# A swap file is checked on the descriptor uswap writes to, never on a
# path: another user who swaps names with renameat2(RENAME_EXCHANGE) in a
# world-writable directory without the sticky bit, while uswap starts, gets
# none of the program's data in their own file (up to 150 runs); a symbolic
# link or a file of theirs planted at the swap file's name in a sticky
# directory is refused.  Two users made here, as root: the victim runs
# uswap (with CAP_SYS_PTRACE for userfaultfd), the attacker races.
# Timeout: 600
# Weight: 60
B=$(realpath "${USWAP_BUILD:-build}")
set -u
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to create the users"; exit 77; }
command -v setpriv >/dev/null && command -v useradd >/dev/null ||
	{ echo "SKIP: needs setpriv and useradd"; exit 77; }
R=$B/tests/e2e/swap_race
[ -x "$R" ] || { echo "SKIP: $R is not built"; exit 77; }
V=uswap_t_F_4v_$$ A=uswap_t_F_4a_$$
T=$(mktemp -d)
racer=
cleanup() {
	[ -n "$racer" ] && kill -9 "$racer" 2>/dev/null
	wait 2>/dev/null
	userdel "$V" 2>/dev/null; userdel "$A" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
for u in "$V" "$A"; do
	userdel "$u" 2>/dev/null
	useradd -M -U -s /usr/sbin/nologin "$u" || fail "useradd $u"
done
chmod 755 "$T"
mkdir "$T/home" && chown "$V:$V" "$T/home" && chmod 700 "$T/home"

asv() {
	setpriv --reuid="$V" --regid="$V" --clear-groups --inh-caps=+sys_ptrace \
		--ambient-caps=+sys_ptrace env TMPDIR="$T/home" "$@"
}
asa() {
	setpriv --reuid="$A" --regid="$A" --clear-groups --inh-caps=-all \
		--bounding-set=-all "$@"
}
# The program words in FILE, read as the attacker (0 if it cannot).
stolen() {
	local n
	n=$(asa "$R" scan "$1" 2>/dev/null) || n=0
	echo "$n"
}

# 1. The race: a world-writable directory without the sticky bit.
W=$T/shared
mkdir "$W" && chmod 0777 "$W"
asv sh -c "umask 077; : >'$W/swap'"
# The attacker's file has a second name in a directory of theirs, where
# it stays put whatever the race does.
mkdir "$T/att" && chown "$A:$A" "$T/att" && chmod 700 "$T/att"
asa sh -c "umask 0; : >'$T/att/keep' && ln '$T/att/keep' '$W/evil'" ||
	fail "cannot plant the attacker's file"
# setpriv execs the racer: $! is its pid.
setpriv --reuid="$A" --regid="$A" --clear-groups --inh-caps=-all \
	--bounding-set=-all "$R" exchange "$W/swap" "$W/evil" 600000 >/dev/null &
racer=$!
tries=0 refused=0 got=0 start=$SECONDS
while [ $tries -lt 150 ] && [ $((SECONDS - start)) -lt 240 ]; do
	tries=$((tries + 1))
	asv "$B/uswap" run --max 8M --swap "$W/swap" -- "$R" fill 16M >/dev/null 2>"$T/err"
	[ $? -eq 0 ] || refused=$((refused + 1))
	got=$(stolen "$T/att/keep")
	[ "$got" -gt 0 ] && break
done
kill -9 "$racer"
wait "$racer" 2>/dev/null
racer=
echo "race: $tries runs ($refused did not run), the attacker's file holds $got program words"
[ "$got" -eq 0 ] || { cat "$T/err"; fail "run $tries put the program's data in the attacker's file"; }
[ "$refused" -eq 0 ] || grep -q "$W" "$T/err" ||
	fail "runs failed without naming the directory: $(cat "$T/err")"

# 2. Planted at the name, in a sticky directory: a link to the attacker's
# file, and a file of the attacker's.
S=$T/sticky
mkdir "$S" && chmod 1777 "$S"
asa sh -c "umask 0; : >'$S/theirs' && ln -s '$S/theirs' '$S/link' && : >'$S/planted'"
for name in link planted; do
	asv "$B/uswap" run --max 8M --swap "$S/$name" -- "$R" fill 16M >/dev/null 2>"$T/err"
	rc=$?
	got=$(( $(stolen "$S/theirs") + $(stolen "$S/planted") ))
	echo "planted $name: exit $rc, the attacker's files hold $got program words"
	[ "$got" -eq 0 ] || fail "the planted $name got the program's data"
	[ $rc -ne 0 ] || fail "uswap ran with a planted $name as its swap file"
	grep -q "$S/$name" "$T/err" || fail "no message naming $S/$name: $(cat "$T/err")"
done
exit 0
