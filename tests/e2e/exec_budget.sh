#!/usr/bin/env bash
# Weight: 15
# The budget's descriptor crosses exec only into a program that runs the
# preload library (tests/e2e/exec_budget.c), whichever way it is run
# (execve, execv, execvp, execvpe, execl, execle, execlp, fexecve,
# posix_spawn, posix_spawnp, system, popen):
#  - a dynamic program under the preload joins the launcher's budget,
#    also after the launcher dup2()s a file onto the budget descriptor's
#    number (moved_*: uswap's descriptor moves, USWAP_TREE_FD follows);
#  - a static program, a set-user-ID program (run by root as another
#    user made by this test), and a dynamic program exec'd with
#    LD_PRELOAD taken out of its environment hold no descriptor of it.
set -u
B=${USWAP_BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
P=$B/tests/e2e/exec_budget
[ -x "$P" ] || { echo "SKIP: $P is not built"; exit 77; }
tmp=$(mktemp -d)
user=uswap_t_e_2_$$
cleanup() {
	[ "$(id -u)" = 0 ] && userdel "$user" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

cp "$P" "$tmp/dyn"
targets="dyn"
if cc -static -O2 -o "$tmp/static" tests/e2e/exec_budget.c 2>"$tmp/cc.err"; then
	targets="$targets static"
else
	echo "no static build (cc -static failed: $(head -1 "$tmp/cc.err")): static programs not tested"
fi
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null; then
	userdel "$user" >/dev/null 2>&1
	useradd --system --no-create-home --shell /usr/sbin/nologin "$user" ||
		fail "useradd $user"
	cp "$P" "$tmp/setid"
	chown "$user" "$tmp/setid"
	chmod 4755 "$tmp/setid"
	chmod 755 "$tmp"
	targets="$targets setid"
else
	echo "not root: set-user-ID programs not tested"
fi

export PATH="$tmp:$PATH"
hows="execve execv execvp execvpe execl execle execlp fexecve posix_spawn posix_spawnp system popen moved_execve moved_system"
for target in $targets nopreload; do
	for how in $hows; do
		prog=$tmp/$target
		case $how in execvp|execvpe|execlp|posix_spawnp) prog=$target ;; esac
		if [ "$target" = nopreload ]; then
			[ "$how" = execve ] || continue
			how=execve_nopreload
			prog=$tmp/dyn
		fi
		"$B/uswap" run --max 16M -- "$P" launch "$how" "$prog" >"$tmp/out" 2>&1 </dev/null
		rc=$?
		launcher=$(sed -n 's/^LAUNCHER //p' "$tmp/out" | head -1)
		[ $rc = 0 ] && [ -n "$launcher" ] || {
			cat "$tmp/out"
			fail "$target by $how: exit $rc (launcher's budget: ${launcher:-none})"
		}
		fds=$(grep -c '^TREE_FD' "$tmp/out")
		joined=$(grep -c "^JOINED $launcher\$" "$tmp/out")
		echo "$target by $how: $fds descriptor(s) of a budget, joined the launcher's: $joined"
		case $target in
		dyn)
			[ "$joined" = 1 ] || { cat "$tmp/out"; fail "$target by $how did not join the launcher's budget"; } ;;
		*)
			[ "$fds" = 0 ] || { cat "$tmp/out"; fail "$target by $how holds the budget's descriptor"; } ;;
		esac
	done
done
echo ok
