# shellcheck shell=sh
# tests/e2e/lib.sh - what the shell tests share.  A test sources it first:
#
#	. "$(dirname "$0")/lib.sh"
#
# and has then
#	B	the build directory: $USWAP_BUILD (tests/run sets it), else
#		build/ of this checkout; always an absolute path
#	U	$B/uswap
#	T	a temporary directory of its own, removed at exit
#	ROOT	the checkout (the tests run from there; lib.sh does not cd)
#
# and the functions below.  A test exits 0 when it passes, 77 when it
# cannot run here (skip: "SKIP: why"), anything else when it fails (fail:
# "FAIL: what").  Whatever ends the test (its end, fail, a signal from
# tests/run's timeout), the processes it spawned are stopped, the
# commands it gave at_exit run, and $T is removed.  POSIX sh, fit for
# set -u and set -e: tests in sh and in bash source it alike; its own
# names start with _lib.

ROOT=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
B=${USWAP_BUILD:-$ROOT/build}
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
U=$B/uswap

say() { printf '%s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
skip() { printf 'SKIP: %s\n' "$*" >&2; exit 77; }

# need_built FILE...: skip unless every FILE (relative to $B) is built.
need_built() {
	for _lib_f in "$@"; do
		[ -e "$B/$_lib_f" ] || skip "$B/$_lib_f is not built"
	done
}

# need_cmd COMMAND...: skip unless every COMMAND is installed.
need_cmd() {
	for _lib_c in "$@"; do
		command -v "$_lib_c" >/dev/null 2>&1 || skip "no $_lib_c"
	done
}

# need_root WHY: skip unless root.
need_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root ($*)"
}

# need_uffd: skip when uswap run cannot manage a program here (it exits
# 125 without userfaultfd), with uswap's words; fail on any other error.
need_uffd() {
	_lib_rc=0
	"$U" run -- true 2>"$T/.need_uffd" || _lib_rc=$?
	case $_lib_rc in
	0) ;;
	125) skip "$(cat "$T/.need_uffd")" ;;
	*) fail "uswap run true: exit $_lib_rc ($(cat "$T/.need_uffd"))" ;;
	esac
	rm -f "$T/.need_uffd"
}

# stand_in_preload: U becomes a copy of uswap in $T next to a harmless
# shared library (libm) in place of the preload library, so that the test
# checks the command, not the library.
stand_in_preload() {
	cp "$B/uswap" "$T/uswap" || fail "cannot copy $B/uswap"
	U=$T/uswap
	for _lib_so in $(ldconfig -p 2>/dev/null | awk '$1 == "libm.so.6" { print $NF }'); do
		cp "$_lib_so" "$T/libuswap_preload.so" 2>/dev/null &&
			[ -z "$(LD_PRELOAD=$T/libuswap_preload.so /bin/true 2>&1)" ] && return 0
		rm -f "$T/libuswap_preload.so"
	done
	skip "no libm.so.6 to stand in for the preload library"
}

# at_exit COMMAND: run the shell command COMMAND at exit, after spawned
# processes are stopped and before $T is removed; the last given first.
_lib_at_exit=
at_exit() {
	_lib_at_exit="$1
$_lib_at_exit"
}

# spawn COMMAND...: COMMAND in the background ($! is its pid, wait works)
# in a session of its own, every process of which is stopped at exit
# (TERM, then KILL what is left after 5 s): PROG under uswap run too, and
# what outlived its parent.
_lib_sessions=
spawn() {
	setsid "$@" &
	_lib_sessions="$_lib_sessions $!"
}

# The processes of spawned sessions still running (not zombies).
_lib_alive() {
	[ -n "$_lib_sessions" ] || return 0
	ps -eo pid=,sid=,stat= | awk -v s="$_lib_sessions" '
		BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		($2 in want) && $3 !~ /^Z/ { printf "%s ", $1 }'
}

_lib_cleanup() {
	_lib_rc=$?
	set +e
	trap - EXIT HUP INT TERM
	_lib_live=$(_lib_alive)
	if [ -n "$_lib_live" ]; then
		kill -TERM $_lib_live 2>/dev/null
		kill -CONT $_lib_live 2>/dev/null
		_lib_i=0
		while [ -n "$(_lib_alive)" ] && [ $_lib_i -lt 50 ]; do
			sleep 0.1
			_lib_i=$((_lib_i + 1))
		done
		_lib_live=$(_lib_alive)
		[ -n "$_lib_live" ] && kill -KILL $_lib_live 2>/dev/null
	fi
	for _lib_p in $_lib_sessions; do
		wait "$_lib_p" 2>/dev/null
	done
	eval "$_lib_at_exit"
	rm -rf "$T"
	exit $_lib_rc
}

T=$(mktemp -d) || exit 2
trap _lib_cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# user_new NAME: a new user NAME (no home, no login), removed at exit.
# NAME must be unique to the test and the run (uswap_t_<letter>_<n>_$$):
# tests run at once, and so may two make checks.  Skips unless root and
# the tools are there.
user_new() {
	need_root "to create a user"
	need_cmd useradd userdel setpriv
	userdel "$1" 2>/dev/null || :
	useradd -M -N -d /nonexistent -s /usr/sbin/nologin "$1" || fail "useradd $1"
	at_exit "userdel '$1' 2>/dev/null"
}

# as_user NAME COMMAND...: COMMAND as user NAME, in NAME's group alone,
# without capabilities: what another user on the machine could do.
as_user() {
	_lib_u=$1
	shift
	setpriv --reuid="$_lib_u" --regid="$(id -g "$_lib_u")" --clear-groups \
		--inh-caps=-all --bounding-set=-all "$@"
}

# wait_line FILE REGEX [SECONDS]: wait until a line of FILE matches REGEX
# (grep); 1 after SECONDS (60: a bound that only catches a hang).
wait_line() {
	_lib_i=0
	until grep -q -- "$2" "$1" 2>/dev/null; do
		_lib_i=$((_lib_i + 1))
		[ $_lib_i -gt $((${3:-60} * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

# json FILE EXPR: the Python expression EXPR over d, the JSON in FILE
# (needs python3: need_cmd python3).
json() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]), strict=False)
print(eval(sys.argv[2]))' "$1" "$2"
}

# vmstat FILE KEY: the counter KEY of a --stats FILE, 0 when it has none.
vmstat() {
	json "$1" "d['vmstat'].get('$2', 0)"
}
