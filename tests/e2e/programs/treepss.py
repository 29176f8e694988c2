# SPDX-License-Identifier: MIT
"""treepss.py OUT CMD... - run CMD (its output is this script's), sample the
summed proportional set size (Pss, /proc/PID/smaps_rollup) of its process
tree every 50 ms, and write the peak in KiB and the number of processes
then to OUT.  Pss counts a page shared by fork once over the tree, which
the sum of RSS would not.  Exits with CMD's status."""
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


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    p = subprocess.Popen(cmd)
    peak = procs = 0
    while p.poll() is None:
        pids = tree(p.pid)
        total = sum(pss(pid) for pid in pids)
        if total > peak:
            peak, procs = total, len(pids)
        time.sleep(0.05)
    with open(out, "w") as f:
        f.write(f"{peak} {procs}\n")
    sys.exit(p.returncode)


main()
