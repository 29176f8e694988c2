# SPDX-License-Identifier: MIT
"""Read-only readings of the machine: counters, load, what it is.  Nothing
here changes the machine (machine.py does)."""

import os
import subprocess
import time

from .util import read_first_line, read_text

# The kernel's counters every run records (/proc/vmstat deltas).
VMSTAT_KEYS = ("pswpin", "pswpout", "pgmajfault", "zswpin", "zswpout", "zswpwb",
               "thp_swpout", "thp_swpout_fallback")


def vmstat(keys=VMSTAT_KEYS):
    """The /proc/vmstat counters named by keys (0 when absent)."""
    v = dict.fromkeys(keys, 0)
    for line in (read_text("/proc/vmstat") or "").splitlines():
        p = line.split()
        if len(p) == 2 and p[0] in v:
            v[p[0]] = int(p[1])
    return [v[k] for k in keys]


def delta(before, after):
    """Counter deltas, element by element."""
    return [b - a for a, b in zip(before, after)]


def ipis():
    """Interprocessor interrupts so far on all CPUs: function calls (CAL:
    remote wakeups, TLB shootdowns) and reschedules (RES:), or None."""
    text = read_text("/proc/interrupts")
    if text is None:
        return None
    v = {"CAL:": 0, "RES:": 0}
    for line in text.splitlines():
        p = line.split()
        if p and p[0] in v:
            t = 0
            for x in p[1:]:
                if not x.isdigit():
                    break
                t += int(x)
            v[p[0]] = t
    return v["CAL:"], v["RES:"]


def nproc():
    """The CPUs this process may run on (nproc's figure)."""
    return len(os.sched_getaffinity(0))


def _cpu_jiffies():
    p = read_first_line("/proc/stat").split()
    # user nice system idle iowait irq softirq steal
    f = [int(x) for x in p[1:9]]
    busy = f[0] + f[1] + f[2] + f[5] + f[6]
    return busy, sum(f)


def busy_cores(settle=1.0):
    """How many cores were busy (all CPUs' non-idle time) over the next
    settle seconds, while we sleep: the machine's own load, since we run
    nothing."""
    b0, t0 = _cpu_jiffies()
    time.sleep(settle)
    b1, t1 = _cpu_jiffies()
    tot = t1 - t0
    return (b1 - b0) / tot * nproc() if tot > 0 else 0.0


def kernel_release():
    return os.uname().release


def mem_total_kib():
    for line in (read_text("/proc/meminfo") or "").splitlines():
        p = line.split()
        if p and p[0] == "MemTotal:":
            return int(p[1])
    return 0


def cpu_model():
    """The first 'model name' of /proc/cpuinfo."""
    for line in (read_text("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(": ", 1)[1] if ": " in line else ""
    return ""


def thp_mode():
    """The bracketed word of transparent_hugepage/enabled (madvise here)."""
    s = read_first_line("/sys/kernel/mm/transparent_hugepage/enabled")
    if "[" in s and "]" in s:
        return s[s.index("[") + 1:s.index("]")]
    return s


def cgroup_version():
    """v2 when the unified hierarchy has the memory controller, else v1."""
    for d in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if "memory" in (read_text(os.path.join(d, "cgroup.controllers")) or "").split():
            return "v2"
    return "v1"


def active_swaps():
    """The paths of the active swap devices (/proc/swaps)."""
    lines = (read_text("/proc/swaps") or "").splitlines()[1:]
    return [line.split()[0] for line in lines if line.split()]


def fs_of(path):
    """'TYPE on DEVICE' of the file system holding path (df -T), or ''."""
    try:
        out = subprocess.run(["df", "-T", path], capture_output=True, text=True).stdout
    except OSError:
        return ""
    lines = out.splitlines()
    if len(lines) < 2:
        return ""
    p = lines[1].split()
    return f"{p[1]} on {p[0]}" if len(p) >= 2 else ""


def version_of(binary):
    """The first line of `BINARY --version`, or ''."""
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""
    return out.split("\n", 1)[0]
