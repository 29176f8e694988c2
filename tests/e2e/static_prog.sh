#!/usr/bin/env bash
# Weight: 15
# Timeout: 300
# Programs uswap cannot manage are said to be so, every time:
#  - a static program (no PT_INTERP; built here with cc -static, and a Go
#    program when a Go toolchain is installed) under --fallback fail (the
#    default) is not started: exit 125 and why; under --fallback run it
#    runs, with a warning, and its status is uswap's;
#  - so is a script whose interpreter is static, a "#!/usr/bin/env NAME"
#    script whose NAME is, and a set-user-ID program of another user;
#  - a dynamic program that maps 256 MiB with the raw mmap system call
#    under --max 64M: anon_unmanaged_bytes counts it (--stats, uswap stat,
#    the --verbose summary) and a warning says it passes the budget.
B=${USWAP_BUILD:-build}
set -u
cd "$(dirname "$0")/../.." || exit 1
U=$B/uswap
R=$B/tests/e2e/rawmap
[ -x "$U" ] && [ -x "$R" ] || { echo "SKIP: $U or $R is not built"; exit 77; }
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/err" 2>/dev/null; exit 1; }

cat >"$tmp/st.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
int main(int argc, char **argv)
{
	size_t len = 256u << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	memset(p, 1, len);
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");
		fputs("ran\n", f);
		fclose(f);
	}
	return 7;
}
C
${CC:-cc} -static -O2 -o "$tmp/static" "$tmp/st.c" 2>"$tmp/cc" ||
	{ echo "SKIP: cannot link a static program: $(cat "$tmp/cc")"; exit 77; }

# refused PROG WHAT FILE: not started, exit 125, FILE named as WHAT.
refused() {
	rm -f "$tmp/ran"
	"$U" run --max 64M -- "$1" "$tmp/ran" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 125 ] || fail "$1: exit $rc, expected 125"
	grep -q "^uswap: .*$3.* is $2.*: uswap cannot go into it and would not manage its memory$" "$tmp/err" ||
		fail "$1: no word of why"
	grep -qx "uswap: $1 was not started (--fallback run would run it without uswap)" "$tmp/err" ||
		fail "$1: no word of the refusal"
	[ -e "$tmp/ran" ] && fail "$1 ran"
	sed 's/^/  /' "$tmp/err"
}

echo "a static program, --fallback fail (the default)"
refused "$tmp/static" "statically linked (no program interpreter, PT_INTERP)" "$tmp/static"
echo "a static program, --fallback run"
rm -f "$tmp/ran"
"$U" run --max 64M --fallback run --stats "$tmp/s.json" -- "$tmp/static" "$tmp/ran" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 7 ] || fail "--fallback run: exit $rc, expected the program's 7"
grep -q "is statically linked" "$tmp/err" && grep -qx "uswap: --fallback run: $tmp/static runs without uswap, with no memory budget" "$tmp/err" ||
	fail "--fallback run: no warning"
[ -f "$tmp/ran" ] || fail "--fallback run: the program did not run"
sed 's/^/  /' "$tmp/err"
echo "USWAP_FALLBACK=run"
USWAP_FALLBACK=run "$U" run --max 64M -- "$tmp/static" >/dev/null 2>"$tmp/err"
[ $? -eq 7 ] || fail "USWAP_FALLBACK=run: not run"

echo "a script with a static interpreter"
printf '#!%s\n' "$tmp/static" >"$tmp/script"
chmod 755 "$tmp/script"
refused "$tmp/script" "statically linked" "$tmp/static"
echo "a #!/usr/bin/env NAME script, NAME static"
ln -s "$tmp/static" "$tmp/staticprog"
printf '#!/usr/bin/env staticprog\n' >"$tmp/envscript"
chmod 755 "$tmp/envscript"
PATH="$tmp:$PATH" refused "$tmp/envscript" "statically linked" "$tmp/staticprog"
echo "a dynamic program and a dynamic script are started"
"$U" run --max 64M -- sh -c 'exit 3' 2>"$tmp/err"
[ $? -eq 3 ] || fail "sh: not started"

if [ "$(id -u)" -eq 0 ]; then
	echo "a set-user-ID program of another user"
	cp "$R" "$tmp/suid" && chown 65534 "$tmp/suid" && chmod 4755 "$tmp/suid" || fail "cannot make a set-user-ID copy"
	refused "$tmp/suid" "set-user-ID or set-group-ID" "$tmp/suid"
fi

if command -v go >/dev/null 2>&1; then
	echo "a Go program (go $(go env GOVERSION 2>/dev/null), CGO_ENABLED=0)"
	mkdir -p "$tmp/go"
	cat >"$tmp/go/main.go" <<'GO'
package main

import "os"

func main() {
	b := make([]byte, 256<<20)
	for i := range b {
		b[i] = 1
	}
	if len(os.Args) > 1 {
		os.WriteFile(os.Args[1], []byte("ran\n"), 0644)
	}
}
GO
	if (cd "$tmp/go" && HOME=$tmp/go GOCACHE=$tmp/go/cache GOPATH=$tmp/go/path GO111MODULE=off CGO_ENABLED=0 \
		go build -o "$tmp/gostatic" main.go) >"$tmp/cc" 2>&1; then
		refused "$tmp/gostatic" "statically linked" "$tmp/gostatic"
	else
		echo "SKIP (part): go build failed: $(cat "$tmp/cc")"
	fi
else
	echo "SKIP (part): no Go toolchain (golang-go): the Go program is not tried"
fi

echo "raw mmap of 256 MiB under --max 64M: the gauge and the warning"
"$U" run --max 64M --verbose --stats "$tmp/s.json" -- "$R" 256M 3 >"$tmp/out" 2>"$tmp/err" &
run=$!
seen=
for _ in $(seq 50); do
	pid=$(pgrep -P "$run" | head -1)
	if [ -n "$pid" ] && "$U" stat "$pid" >"$tmp/stat" 2>/dev/null &&
		grep -q "^outside .* anonymous memory not managed by uswap: more than the budget" "$tmp/stat"; then
		seen=1
		break
	fi
	sleep 0.1
done
wait $run || fail "rawmap: exit $?"
[ -n "$seen" ] || fail "uswap stat did not show the memory outside: $(cat "$tmp/stat")"
grep "^outside" "$tmp/stat" | sed 's/^/  stat: /'
sed 's/^/  /' "$tmp/err"
[ "$(grep -c "MiB of this process's memory is outside uswap's management, more than --max (64 MiB)" "$tmp/err")" -eq 1 ] ||
	fail "not one warning from the process"
grep -q "anon_unmanaged 2[0-9][0-9] MiB" "$tmp/err" || fail "the summary does not show it"
grep -q "MiB of the tree's memory was outside uswap's management at the end" "$tmp/err" || fail "no warning in the summary"
python3 - "$tmp/s.json" <<'PY' || fail "--stats"
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
u = v["anon_unmanaged_bytes"] >> 20
print("  --stats: anon_unmanaged_bytes %d MiB, resident_peak %d MiB" % (u, v["resident_peak"] >> 20))
assert 250 <= u <= 300, "anon_unmanaged_bytes %d MiB, expected about 256" % u
PY
echo "memory uswap manages is not counted outside it"
"$U" run --max 64M --stats "$tmp/s.json" -- "$B/tests/e2e/procmem" target 128M </dev/null >/dev/null 2>"$tmp/err" || fail "procmem"
grep -q "outside uswap's management" "$tmp/err" && fail "managed memory counted outside"
python3 - "$tmp/s.json" <<'PY' || fail "--stats"
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
u = v["anon_unmanaged_bytes"] >> 20
print("  --stats: anon_unmanaged_bytes %d MiB with 128 MiB managed" % u)
assert u < 32, "anon_unmanaged_bytes %d MiB" % u
PY
echo ok
