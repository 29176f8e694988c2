#!/usr/bin/env bash
# Weight: 20
# A worker that drops privileges keeps nothing of the tree
# (tests/e2e/setuid_worker.c): as root, under uswap run, a parent forks a
# worker that becomes a user made by this test; the worker then holds no
# descriptor and no shared mapping of uswap's, cannot read the secret the
# parent wrote after the fork, cannot plant pages the parent reads back
# (--verify off, where nothing else would catch them), and its own
# memory, swapped out when it dropped privileges (--verbose says how
# many pages it read back in), is byte-exact.  With the swap file only, with the
# compressed pool, with --encrypt on.
set -u
B=${USWAP_BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
P=$B/tests/e2e/setuid_worker
[ -x "$P" ] || { echo "SKIP: $P is not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v useradd >/dev/null || { echo "SKIP: no useradd"; exit 77; }
user=uswap_t_e_1_$$
userdel "$user" >/dev/null 2>&1
useradd --system --no-create-home --shell /usr/sbin/nologin "$user" ||
	{ echo "FAIL: useradd $user"; exit 1; }
tmp=$(mktemp -d)
trap 'userdel "$user" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
uid=$(id -u "$user")
gid=$(id -g "$user")
fail() { echo "FAIL: $*"; exit 1; }

# "via sh": the program is exec'd by a shell of the tree, so it joined
# the tree's budget through the descriptor that shell handed on.
for opts in "--zswap off" "--zswap off --verify off" "--zswap lz4 --verify off" \
	    "--zswap off --encrypt on" "--zswap off via sh"; do
	(
		# Only 0, 1 and 2: any other descriptor is uswap's.
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] && eval "exec $fd>&-"
		done
		cmd=("$P" "$uid" "$gid")
		case $opts in
		*"via sh")
			opts=${opts% via sh}
			# Not the shell's last command: it forks, then execs it.
			cmd=(sh -c '"$0" "$@"; exit $?' "$P" "$uid" "$gid") ;;
		esac
		# shellcheck disable=SC2086
		exec "$B/uswap" run --max 16M --verbose $opts -- "${cmd[@]}"
	) >"$tmp/out" 2>&1 </dev/null
	rc=$?
	echo "$opts: exit $rc"
	sed 's/^/  /' "$tmp/out"
	[ $rc = 0 ] || fail "$opts: exit $rc"
	# The worker's memory was out when it left: it was read back in.
	read_in=$(sed -n 's/.*leaves its tree (\([0-9]*\) swapped pages read in).*/\1/p' "$tmp/out")
	[ "${read_in:-0}" -ge 4096 ] ||
		fail "$opts: the worker's memory was not swapped out when it dropped privileges (${read_in:-no} pages read in): the test tested nothing"
done
echo ok
