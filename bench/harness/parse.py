# SPDX-License-Identifier: MIT
"""Reading what the tools write: the workloads' result line, uswap's --stats
JSON, runs.tsv, latency histograms, perf reports and key=value files."""

import json
import math
import os
import re

from .configs import per_access


class Num(float):
    """A figure read from a file: a float that remembers how it was
    written, so that a median that is one of the figures is printed as the
    file had it."""

    def __new__(cls, text):
        v = super().__new__(cls, text)
        v.text = text
        return v


def num(x):
    """A field as a number (Num), or None for '-', '' or not a number."""
    if x is None or isinstance(x, float):
        return x
    if x in ("", "-"):
        return None
    try:
        v = Num(x)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def result_line(path):
    """The workload's result line, 'usemem ...', 'pmbench ...' or 'redis
    ...' (bench/redisbench), as a dict of its key=value pairs; None when
    there is none."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(("usemem ", "pmbench ", "redis ")):
                    return dict(w.split("=", 1) for w in line.split() if "=" in w)
    except OSError:
        pass
    return None


class UswapStats:
    """uswap's --stats JSON of one run."""

    def __init__(self, path):
        self.text = ""
        try:
            with open(path) as f:
                self.text = f.read()
        except OSError:
            pass

    @property
    def present(self):
        return bool(self.text)

    def get(self, key):
        """The first '"key": N' of the file (its "vmstat" object comes
        first), as written, or '-'.  A truncated file still gives what it
        has."""
        m = re.search(r'"' + re.escape(key) + r'"\s*:\s*([0-9]*)', self.text)
        return m.group(1) if m and m.group(1) else "-"

    def swaps(self):
        """Its devices, in the order given: 'pswpout:pswpin:write_p50_us:
        write_p99_us' per row of "swaps", comma-separated; '-' without rows."""
        try:
            rows = json.loads(self.text).get("swaps") or []
        except ValueError:
            return "-"
        out = []
        for r in rows:
            if "pswpout" not in r:
                continue
            out.append(":".join(str(r[k]) if isinstance(r.get(k), int) else "-"
                                for k in ("pswpout", "pswpin", "write_p50_us", "write_p99_us")))
        return ",".join(out) if out else "-"


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# runs.tsv: one line per run.  Columns 13-20 are the configuration's own
# counters (the kernel's /proc/vmstat deltas for kernel runs, uswap's --stats
# for uswap's); 21-28 the kernel's /proc/vmstat deltas for every run; 30
# uswap's devices (UswapStats.swaps); 31-36 the workload's accesses per
# second and latency (µs); 37-38 the machine's IPIs during the run; 39 the
# run's total memory in bytes (Run.own_counters).
RUNS_COLUMNS = (
    "round", "workload", "config", "status", "mbps", "secs", "bytes", "cpu_user", "cpu_sys",
    "cpu_tree", "load1", "busy", "pswpin", "pswpout", "pgmajfault", "zswpin", "zswpout",
    "zswpwb", "thp_swpout", "peak", "k_pswpin", "k_pswpout", "k_pgmajfault", "k_zswpin",
    "k_zswpout", "k_zswpwb", "k_thp_swpout", "k_thp_swpout_fallback", "note", "swaps", "aps",
    "p50_us", "p90_us", "p99_us", "p999_us", "mean_us", "ipi_call", "ipi_resched", "total")

POOL_COLUMNS = (
    "config", "stored_pages", "same_filled_pages", "pool_bytes", "compressed_bytes", "zswpout",
    "zswpwb", "reject_compress_poor", "stored_raw", "reject_pool_limit", "swpout_zero", "peak",
    "footprint", "source", "note")


def tsv_line(fields):
    return "\t".join(str(f) for f in fields) + "\n"


def read_tsv(path):
    """A TSV file with a header line as a list of dicts ([] if absent)."""
    if not os.path.exists(path):
        return []
    rows = []
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            rows.append(dict(zip(head, line.rstrip("\n").split("\t"))))
    return rows


def read_runs(path):
    """runs.tsv as a list of runs, each with the figures every tool reads
    derived once: tput (MB/s, or accesses per second for pmbench, requests
    per second for redis), cpu (CPU seconds per GB accessed), tree (the
    same for the whole process tree), p50, p99."""
    runs = []
    for r in read_tsv(path):
        try:
            r["round"] = int(r["round"])
        except (KeyError, ValueError):
            continue
        byts = num(r.get("bytes"))
        cu, cs, tree = num(r.get("cpu_user")), num(r.get("cpu_sys")), num(r.get("cpu_tree"))
        gb = byts / 1e9 if byts else None
        r["cpu"] = (cu + cs) / gb if gb and cu is not None and cs is not None else None
        r["tree"] = tree / gb if gb and tree is not None else None
        r["tput"] = num(r.get("aps")) if per_access(r["workload"]) else num(r.get("mbps"))
        r["p50"] = num(r.get("p50_us"))
        r["p99"] = num(r.get("p99_us"))
        runs.append(r)
    return runs


def read_hist(path):
    """A latency histogram (lower_ns upper_ns count cdf lines) as
    [(upper_ns, count)]; [] when absent."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("#"):
                    continue
                p = line.split()
                if len(p) >= 3:
                    out.append((int(p[1]), int(p[2])))
    except OSError:
        pass
    return out


def read_kv(path):
    """key=value lines as a dict ({} when absent)."""
    kv = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    kv[k] = v
    return kv


def read_perf(path):
    """perf report lines: [(percent, comm, dso, symbol)], largest first."""
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            m = re.match(r"([\d.]+)%\s+(\S+)\s+(\S+)\s+\[[.k]\]\s+(.*)$", s)
            if m:
                out.append((float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()))
    return sorted(out, reverse=True)
