#!/usr/bin/env bash
# An existing file given as --swap keeps none of the program's memory for
# others: one that others may read or write is refused before anything is
# written to it (another user reads no program data, after the run and
# after kill -9), and one of mode 0600 holds none of it once the run ends,
# normally, after kill -9 of the program, and after kill -9 of the whole
# run once the next run on it has started.  Two users made here, as root:
# the victim runs uswap (with CAP_SYS_PTRACE for userfaultfd), the
# attacker reads the file.
# Timeout: 600
# Weight: 20
B=$(realpath "${USWAP_BUILD:-build}")
set -u
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to create the users"; exit 77; }
command -v setpriv >/dev/null && command -v useradd >/dev/null ||
	{ echo "SKIP: needs setpriv and useradd"; exit 77; }
R=$B/tests/e2e/swap_race
[ -x "$R" ] || { echo "SKIP: $R is not built"; exit 77; }
V=uswap_t_F_3v_$$ A=uswap_t_F_3a_$$
T=$(mktemp -d)
runpid= loop=
cleanup() {
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	[ -n "$runpid" ] && kill -9 "$runpid" $(pgrep -P "$runpid") 2>/dev/null
	sleep 0.2
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
D=$T/v
mkdir "$D" && chown "$V:$V" "$D" && chmod 755 "$D"

asv() {
	setpriv --reuid="$V" --regid="$V" --clear-groups --inh-caps=+sys_ptrace \
		--ambient-caps=+sys_ptrace env TMPDIR="$D" "$@"
}
asa() {
	setpriv --reuid="$A" --regid="$A" --clear-groups --inh-caps=-all \
		--bounding-set=-all "$@"
}
# The tagged words another user reads in FILE (0 when it cannot read it).
attacker_reads() {
	local n
	n=$(asa "$R" scan "$1" 2>/dev/null) || n=0
	echo "$n"
}
# The tagged words FILE holds, read as root: what the device keeps.
held() { "$R" scan "$1"; }

# run FILE [kill|killall]: uswap run with FILE as --swap over 64 MiB under
# 16 MiB; with "kill", kill -9 the program once its data is written (with
# "killall", uswap run too).  Sets rc, and during: the program words the
# file held then.
run() {
	local file=$1 how=${2:-} i
	rm -f "$D/ready"
	during=
	if [ -z "$how" ]; then
		asv "$B/uswap" run --max 16M --swap "$file" -- "$R" fill 64M \
			>"$T/out" 2>"$T/err"
		rc=$?
		return
	fi
	# setpriv execs env, which execs uswap: $! is uswap run's pid.
	setpriv --reuid="$V" --regid="$V" --clear-groups --inh-caps=+sys_ptrace \
		--ambient-caps=+sys_ptrace env TMPDIR="$D" \
		"$B/uswap" run --max 16M --swap "$file" -- "$R" fill 64M "$D/ready" \
		>"$T/out" 2>"$T/err" &
	runpid=$!
	for i in $(seq 600); do
		[ -e "$D/ready" ] && break
		kill -0 "$runpid" 2>/dev/null || break
		sleep 0.1
	done
	during=0
	if [ -e "$D/ready" ]; then
		during=$(held "$file")
		progpid=$(pgrep -P "$runpid")
		[ "$how" = kill ] || kill -9 "$runpid"
		[ -n "$progpid" ] && kill -9 $progpid
	fi
	{ wait "$runpid"; } 2>/dev/null
	rc=$?
	runpid=
	# kill -9 returns before the program has exited: until it has, its
	# descriptors (and its lock on FILE) are still open.
	[ -n "${progpid:-}" ] && gone "$progpid"
	progpid=
}

# gone PID: wait until PID has exited (gone, or a zombie: its files closed).
gone() {
	local i
	for i in $(seq 600); do
		[ -e "/proc/$1" ] || return 0
		grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null && return 0
		sleep 0.1
	done
}

bad=0
# 1. Modes that let others in are refused, and say so.
for mode in 0644 0660 0602; do
	for how in "" kill; do
		f=$D/swap$mode
		rm -f "$f"
		asv sh -c ": >'$f' && chmod $mode '$f'"
		run "$f" $how
		n=$(attacker_reads "$f")
		echo "mode $mode ${how:-end}: exit $rc, another user reads $n program words"
		[ "$n" -eq 0 ] || { bad=1; cat "$T/err"; }
		grep -q "swap file $f .*others" "$T/err" ||
			{ bad=1; echo "  no message refusing $f"; cat "$T/err"; }
		m=$(stat -c %a "$f")
		[ "$m" = "${mode#0}" ] || { bad=1; echo "  its mode changed to $m"; }
	done
done

# 2. A 0600 file holds no program data after the run.
f=$D/swap600
asv sh -c "umask 077; : >'$f'"
run "$f"
n=$(held "$f")
echo "mode 0600 end: exit $rc, the file holds $n program words"
[ $rc -eq 0 ] || { bad=1; cat "$T/err"; }
[ "$n" -eq 0 ] || bad=1

run "$f" kill
n=$(held "$f")
echo "mode 0600 kill -9 of the program: $during program words in the file while it ran; exit $rc, then $n"
[ "$during" -gt 0 ] || { bad=1; echo "  (the test proves nothing: no data went to the file)"; }
[ "$n" -eq 0 ] || { bad=1; cat "$T/err"; }

# 3. kill -9 of uswap run and the program: nobody is left to wipe; the
# next run on the file does, as it starts.
run "$f" killall
n=$(held "$f")
echo "mode 0600 kill -9 of the whole run: the file holds $n program words"
asv "$B/uswap" run --max 16M --swap "$f" -- sh -c "$R scan '$f'" >"$T/out" 2>"$T/err"
rc=$?
n=$(cat "$T/out")
echo "  the next run starts and finds ${n:-?} program words in it (exit $rc)"
[ $rc -eq 0 ] && [ "${n:-1}" -eq 0 ] || { bad=1; cat "$T/err"; }
n=$(held "$f")
echo "  after it, the file holds $n"
[ "$n" -eq 0 ] || bad=1

# 4. A block device the victim names (a loop device, theirs): discarded
# once the program has ended, normally or by kill -9.
if command -v losetup >/dev/null && truncate -s 128M "$T/loop.img" &&
	loop=$(losetup -f --show "$T/loop.img" 2>/dev/null); then
	chown "$V" "$loop"
	for how in "" kill; do
		run "$loop" $how
		n=$(held "$loop")
		echo "block device ${how:-end}: exit $rc, ${during:-?} program words while it ran, then $n"
		[ "$n" -eq 0 ] || { bad=1; cat "$T/err"; }
		[ -z "$how" ] || [ "$during" -gt 0 ] ||
			{ bad=1; echo "  (the test proves nothing: no data went to the device)"; }
	done
	losetup -d "$loop"
	loop=
else
	echo "SKIP (part): no loop device for the block device case"
fi
[ $bad -eq 0 ] || fail "program data left where it should not be (above)"
exit 0
