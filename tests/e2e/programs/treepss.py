# SPDX-License-Identifier: MIT
"""treepss.py OUT CMD... - run CMD (its output is this script's), sample the
summed proportional set size (Pss, /proc/PID/smaps_rollup) of its process
tree every 50 ms, and write the peak in KiB and the number of processes
then to OUT.  Pss counts a page shared by fork once over the tree, which
the sum of RSS would not.  With USWAP_STAT set (the uswap program, CMD a
uswap run), a third field: the KiB of uswap's page-state tables in the
tree's processes at the peak (their metadata_bytes, summed).
Exits with CMD's status."""
import json
import os
import subprocess
import sys
import time


def tree(root):
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        ppid = int(s[s.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(d))
    out = [root]
    for pid in out:
        out += children.get(pid, [])
    return out


def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tables(uswap, pid):
    """KiB of uswap's page-state tables in the processes of the tree of
    pid, summed from what each publishes in the tree's statistics
    directory (uswap stat's merge keeps the largest), or 0."""
    r = subprocess.run([uswap, "stat", "--json", str(pid)],
                       capture_output=True, text=True)
    if r.returncode:
        return 0
    d = json.loads(r.stdout)["tree"]["stats_dir"]
    total = 0
    for name in os.listdir(d):
        if name.endswith(".live.json"):
            try:
                with open(os.path.join(d, name)) as f:
                    total += json.load(f)["vmstat"].get("metadata_bytes", 0)
            except (OSError, ValueError, KeyError):
                pass
    return total >> 10


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    uswap = os.environ.get("USWAP_STAT")
    p = subprocess.Popen(cmd)
    peak = procs = meta = 0
    while p.poll() is None:
        pids = tree(p.pid)
        total = sum(pss(pid) for pid in pids)
        if total > peak:
            peak, procs = total, len(pids)
            if uswap:
                meta = tables(uswap, p.pid)
        time.sleep(0.05)
    with open(out, "w") as f:
        f.write(f"{peak} {procs} {meta}\n")
    sys.exit(p.returncode)


main()
