#!/usr/bin/env bash
# Weight: 8
# Several swap devices, as the kernel uses them:
#  - two files of equal priority are both used, within 10% of each other;
#  - with different priorities the lower stays unused until the higher is
#    full, then takes the rest (a full device spills to the next);
#  - on a two-node fixture topology, devices without a priority: memory of
#    node 0 goes only to the device on node 0; with --swap-node-policy cpu
#    the reclaiming CPU's node decides;
#  - files uswap created are removed at the end, an existing file is kept;
#    a symbolic link and a bad spec are refused;
#  - a device whose writes fail (EIO injected through the system-call
#    layer) is taken out of use with a message, and nothing is lost;
#  - a uswaptab gives the same devices as --swap.
# Every run checks every byte (stress).
B=${USWAP_BUILD:-build}
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$0")/../.." || exit 1

run() {	# CHECK USWAP-OPTIONS... -- STRESS-OPTIONS...
	local check=$1; shift
	local uopts=()
	while [ "$1" != -- ]; do uopts+=("$1"); shift; done; shift
	"$B/uswap" run "${uopts[@]}" --stats "$tmp/s.json" -- \
		"$B/tests/e2e/stress" --mmap "$@" >"$tmp/out" 2>&1 ||
		{ echo "uswap ${uopts[*]}: exit $?"; cat "$tmp/out"; exit 1; }
	python3 - "$tmp/s.json" "$check" <<'PY' || { cat "$tmp/out"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1])); v = d["vmstat"]; sw = d["swaps"]
for s in sw:
    print(f"  {s['path']}: prio {s['prio']} node {s['node']} pswpout {s['pswpout']} "
          f"pswpin {s['pswpin']} peak {s['peak_used_kib']} KiB of {s['size_kib']} "
          f"write p50/p99 {s['write_p50_us']}/{s['write_p99_us']} us")
out = [s["pswpout"] for s in sw]
assert eval(sys.argv[2]), "check failed: " + sys.argv[2]
PY
}

echo "equal priorities"
run 'min(out) > 0 and abs(out[0] - out[1]) <= 0.1 * max(out)' \
	--max 32M --swap "$tmp/a,prio=5" --swap "$tmp/b,prio=5" -- --size 256M --threads 2 --ops 4000
echo "different priorities, the higher large enough"
run 'out[0] > 0 and out[1] == 0' \
	--max 32M --swap "$tmp/a,prio=10" --swap "$tmp/b,prio=5" -- --size 128M --threads 2 --ops 4000
echo "different priorities, the higher full"
run 'out[1] > 0 and sw[0]["peak_used_kib"] >= sw[0]["size_kib"] - 2048' \
	--max 32M --swap "$tmp/a,prio=10,size=16M" --swap "$tmp/b,prio=5" -- --size 128M --threads 2 --ops 4000
echo "two nodes (fixture): memory of node 0 goes to the device on node 0"
USWAP_SYSFS_ROOT=tests/fixtures/sysfs/two \
run 'out[0] == 0 and out[1] > 0 and sw[0]["prio"] == -2 and sw[1]["prio"] == -3' \
	--max 32M --swap "$tmp/a,node=1" --swap "$tmp/b,node=0" -- --size 128M --threads 2 --ops 4000
echo "two nodes, every CPU on node 1: policy cpu picks node 1's device, page node 0's"
mkdir -p "$tmp/sys/devices/system/node/node0" "$tmp/sys/devices/system/node/node1"
echo 0-1 >"$tmp/sys/devices/system/node/possible"
echo "" >"$tmp/sys/devices/system/node/node0/cpulist"
echo 0-255 >"$tmp/sys/devices/system/node/node1/cpulist"
USWAP_SYSFS_ROOT="$tmp/sys" \
run 'out[0] > 0 and out[1] == 0' \
	--max 32M --swap-node-policy cpu --swap "$tmp/a,node=1" --swap "$tmp/b,node=0" -- --size 128M --threads 2 --ops 4000
USWAP_SYSFS_ROOT="$tmp/sys" \
run 'out[0] == 0 and out[1] > 0' \
	--max 32M --swap-node-policy page --swap "$tmp/a,node=1" --swap "$tmp/b,node=0" -- --size 128M --threads 2 --ops 4000
echo "a device whose writes fail (EIO injected) is taken out of use, nothing lost"
USWAP_INJECT_WRITE_EIO=0 \
run 'out[0] == 0 and out[1] > 0 and v["swap_io_error"] > 0' \
	--max 32M --swap "$tmp/a,prio=10" --swap "$tmp/b,prio=5" -- --size 128M --threads 2 --ops 4000
grep -q "write failed (Input/output error): taken out of use" "$tmp/out" ||
	{ echo "no log line about the failed device"; cat "$tmp/out"; exit 1; }
echo "a uswaptab"
printf '# two devices\n%s/a,prio=5   # first\n\n%s/b,prio=5\n' "$tmp" "$tmp" >"$tmp/tab"
run 'min(out) > 0' --max 32M --swaptab "$tmp/tab" -- --size 128M --threads 2 --ops 2000

echo "created files are removed, existing ones kept"
[ ! -e "$tmp/a" ] && [ ! -e "$tmp/b" ] || { echo "swap files left behind"; ls -l "$tmp"; exit 1; }
( "$B/uswap" run --max 32M --swap "$tmp/c" -- sh -c "$B/tests/e2e/stress --mmap --size 64M --ops 500 >/dev/null; kill -9 \$\$" ) 2>/dev/null
[ ! -e "$tmp/c" ] || { echo "a swap file was left behind after kill -9"; exit 1; }
(umask 077; : >"$tmp/keep")
run 'out[0] > 0' --max 32M --swap "$tmp/keep" -- --size 64M --threads 1 --ops 1000
[ -e "$tmp/keep" ] || { echo "an existing swap file was removed"; exit 1; }
echo "a symbolic link is refused"
ln -s "$tmp/keep" "$tmp/link"
"$B/uswap" run --max 32M --swap "$tmp/link" -- "$B/tests/e2e/stress" --mmap --size 16M --ops 10 >"$tmp/out" 2>&1
grep -q "symbolic link" "$tmp/out" || { echo "no refusal of a symlink"; cat "$tmp/out"; exit 1; }
echo "a bad spec is a usage error naming the field"
"$B/uswap" run --swap "$tmp/x,prio=99999" -- true 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "prio 99999 is out of range" "$tmp/err" || { echo "rc $rc"; cat "$tmp/err"; exit 1; }
echo ok
