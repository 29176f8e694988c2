# SPDX-License-Identifier: MIT
"""bench/report: write docs/benchmarks.md and its plots from a bench/suite run.

    bench/report SUITE-DIR [--docs DIR]

SUITE-DIR is what bench/suite left in build/bench/suite-DATE: one
bench/compare output directory per step (runs.tsv, results.json, logs/ with
each run's latency histogram, uswap's --stats and, for the perf step, the
profile), crypt/ from the crypt step (bench/crypt-cost --out: rounds.tsv,
params.txt), steps.tsv and machine.txt.  The report is computed from the runs
themselves (runs.tsv), not from compare's summaries, with the same
statistics as compare's (stats.py): medians of the runs, and every ratio
taken per round, the configuration's figure over the reference's in the
same round and step, then the median and the range of those ratios.

The kernel's best configuration for a workload is the kernel configuration
(swap file, THP or not, zswap, zram; never the unlimited ceiling) with the
best median figure in that step: the highest throughput, the lowest CPU
seconds per GB, the lowest p99 latency, the highest compression ratio.

Plots are SVG files drawn by gnuplot (plot.py), written beside the report in
DOCS/bench/; without gnuplot the report is written without them and says
so.
"""

import argparse
import glob
import math
import os
import re
import sys

from .configs import is_pm, per_access
from .parse import load_json, num, read_hist, read_kv, read_perf, read_runs, read_tsv
from .plot import Plotter
from .cryptcost import CryptRounds
from .stats import RunTable, median
from .util import ROOT

# uswap run's default folio size (src/options.h), and its configuration here.
DEFAULT_FOLIO = "4K"
DEFAULT = f"uswap-{DEFAULT_FOLIO}"

# Where perf's samples go, by symbol (first match wins).  The workload's own
# code (its binary and the vDSO clock) is matched by DSO, not here.
PERF_CATEGORIES = [
    ("compression", r"lz4|LZ4|lzo|zstd|ZSTD|deflate|inflate|crc32|adler|zlib|"
                    r"HUF_|FSE_|longest_match|fill_window|compress"),
    ("TLB flush, IPIs", r"smp_call_function|native_write_msr|flush_tlb|x2apic|"
                        r"native_flush|send_IPI|call_function"),
    ("copy, clear", r"copy_from_user|copy_to_user|copy_user|memcpy|memmove|"
                    r"clear_page|copy_page|memset|folio_copy|copy_mc"),
    ("scheduling, wakeups", r"finish_task_switch|schedule|__switch_to|wake_up|"
                            r"futex|pick_next|enqueue_|dequeue_|update_curr|"
                            r"ttwu|select_task|newidle|idle"),
    ("locks", r"_raw_spin|spin_lock|mutex|rwsem|queued_|osq_"),
    ("faults, page tables, userfaultfd", r"page_fault|handle_mm_fault|do_anonymous|"
                                         r"pte|pmd|zap_|unmap|mfill|userfault|uffd|"
                                         r"do_swap_page|do_fault|madvise|mprotect|"
                                         r"change_protection|walk_|pagemap|vma"),
    ("reclaim, LRU, memcg", r"mem_cgroup|memcg|lru|shrink_|folio_referenced|"
                            r"isolate|vmscan|list_del|rmap|try_to_unmap|"
                            r"charge|reclaim|folio_batch|workingset"),
    ("swap, zswap, zram, I/O", r"swap|zswap|zram|zs_|zpool|zsmalloc|submit_bio|blk_|"
                               r"io_uring|ext4|iomap|virtio|bio_|iov_|iowrite|ioread|"
                               r"vring|virtqueue|pread|pwrite|filemap"),
    ("system calls, poll", r"syscall|SYSCALL|poll|fdget|ioctl|rseq|epoll|eventfd"),
]




def unit(workload):
    return "accesses/s" if per_access(workload) else "MB/s"


def ipis(r):
    """A run's interprocessor interrupts (function calls + reschedules), or None."""
    a, b = num(r.get("ipi_call")), num(r.get("ipi_resched"))
    return a + b if a is not None and b is not None else None


def fmt(x, digits=3):
    """A figure with about `digits` significant digits, '—' for none."""
    if x is None:
        return "—"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    dec = max(0, digits - 1 - mag)
    if abs(x) >= 10000:
        return f"{x / 1000:.{max(0, digits - 1 - (mag - 3))}f}k" if abs(x) < 1e6 \
            else f"{x / 1e6:.2f}M"
    return f"{x:.{dec}f}"


def fmt_count(x):
    """A counter: whole below 10k, then k and M."""
    if x is None:
        return "—"
    if abs(x) < 10000:
        return f"{x:.0f}"
    if abs(x) < 1e6:
        return f"{x / 1000:.1f}k"
    return f"{x / 1e6:.2f}M"


def fmt_x(x):
    """A ratio: two decimals, or two significant digits below 0.1."""
    if x is None:
        return "—"
    if x >= 0.1 or x == 0:
        return f"{x:.2f}"
    return f"{x:.2g}"


def fmt_ratio(r):
    """'1.23 (1.10–1.40)' from (median, lo, hi), '—' for none."""
    if r is None or r[0] is None:
        return "—"
    med, lo, hi = r[:3]
    if lo == hi:
        return fmt_x(med)
    return f"{fmt_x(med)} ({fmt_x(lo)}–{fmt_x(hi)})"


class Step(RunTable):
    """One bench/compare directory: its runs (a RunTable), its results.json
    (the configurations, what could not run, the compression phase) and its
    logs."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path.rstrip("/"))
        self.res = load_json(os.path.join(path, "results.json")) or {}
        cfgs = self.res.get("configs", [])
        self.unavailable = {c["config"]: c.get("reason") for c in cfgs
                            if not c.get("available", True)}
        self.standin = {c["config"]: c.get("stands_in_for") for c in cfgs
                        if c.get("stands_in_for")}
        super().__init__(read_runs(os.path.join(path, "runs.tsv")),
                         {c["config"]: c["kind"] for c in cfgs})

    def label(self, config):
        return config + ("*" if config in self.standin else "")

    def log(self, workload, config, rnd, ext):
        return os.path.join(self.path, "logs", f"{rnd}-{workload}-{config}.{ext}")

    def pool(self):
        return {p["config"]: p for p in self.res.get("pool", [])}


def read_steps_tsv(path):
    rows = []
    for r in read_tsv(path):
        if len(r) >= 4:
            rows.append({"step": r["step"], "seconds": int(r["seconds"]), "status": r["status"],
                         "command": r["command"]})
    return rows


def merged_hist(step, workload, config):
    """Sum the latency histograms of the config's runs: [(upper_ns, count)]."""
    counts = {}
    for r in step.ok(workload, config):
        for up, n in read_hist(step.log(workload, config, r["round"], "hist")):
            counts[up] = counts.get(up, 0) + n
    return sorted(counts.items())


def slow_accesses(step, workload, config, slow_ns=2000):
    """From the merged histograms: the share of accesses of slow_ns or
    more (faults, almost surely), their median and their mean in µs."""
    h = merged_hist(step, workload, config)
    tot = sum(n for _, n in h)
    slow = [(up, n) for up, n in h if up > slow_ns]
    ns = sum(n for _, n in slow)
    if not tot or not ns:
        return None
    seen, med = 0, None
    for up, n in slow:
        seen += n
        if med is None and seen >= ns / 2:
            med = up / 1000.0
    mean = sum(up * n for up, n in slow) / ns / 1000.0
    return ns / tot, med, mean


def stats_json(step, workload, config, rnd):
    return load_json(step.log(workload, config, rnd, "stats.json"))


class Report:
    def __init__(self, suite, docs):
        self.suite = suite
        self.docs = docs
        self.imgrel = "bench"
        self.machine = read_kv(os.path.join(suite, "machine.txt"))
        self.steps_tsv = read_steps_tsv(os.path.join(suite, "steps.tsv"))
        self.steps = {}
        for d in sorted(glob.glob(os.path.join(suite, "*", "runs.tsv"))):
            st = Step(os.path.dirname(d))
            self.steps[st.name] = st
        self.crypt = CryptRounds(os.path.join(suite, "crypt"))
        self.plot = Plotter(os.path.join(docs, self.imgrel), os.path.join(suite, "plots"))
        self.out = []
        self.verdicts = []

    # -------------------------------------------------------------- output

    def w(self, line=""):
        self.out.append(line)

    def table(self, head, rows):
        self.w("| " + " | ".join(head) + " |")
        self.w("|" + "---|" * len(head))
        for r in rows:
            self.w("| " + " | ".join(str(x) for x in r) + " |")
        self.w()

    def image(self, fname, alt):
        if fname:
            self.w(f"![{alt}]({self.imgrel}/{fname})")
            self.w()

    # -------------------------------------------------------------- sections

    def header(self):
        m = self.machine
        mem = int(m.get("mem_total_kib", "0") or 0)
        total = sum(s["seconds"] for s in self.steps_tsv)
        self.w("# Benchmarks: uswap against the kernel's swap, zswap and zram")
        self.w()
        self.w("Generated by `make bench` (`bench/suite`, then `bench/report`); do not edit by "
               "hand. The method (`bench/README.md`): the same workload binary, "
               "arguments, data and budget for every configuration (uswap's `--max` is the "
               "kernel's memory cgroup limit), configurations interleaved round by round, "
               "medians with their range, and every ratio taken pair by pair, round by round, "
               "between runs of the same step. Absolute figures on this machine drift by tens "
               "of percent between runs; the ratios are what to read.")
        self.w()
        rows = [
            ("date", m.get("date", "?")),
            ("command", f"`make bench` → `{m.get('command', 'bench/suite')}`"),
            ("run time", f"{total // 60} min {total % 60} s for the runs "
                         f"({m.get('seconds', '?')} s with set-up)"),
            ("machine", f"{m.get('nproc', '?')} CPUs ({m.get('cpu', '?')}), "
                        f"{mem / 1048576:.1f} GiB memory"),
            ("kernel", f"{m.get('kernel', '?')}, THP `{m.get('thp', '?')}`, "
                       f"cgroup {m.get('cgroup', '?')}"),
            ("swap files", f"{m.get('swap_dir_fs', '?')} (uswap's and the kernel's, same file system)"),
            ("uswap", m.get("uswap", "?") or "?"),
            ("load average", f"{m.get('load_start', '?')} at the start, "
                             f"{m.get('load_end', '?')} at the end"),
            ("rounds", m.get("rounds", "?") + (f" (`crypt`: {self.crypt.params['rounds']})"
                                               if self.crypt.params.get("rounds") else "")),
        ]
        self.table(["", ""], rows)
        if m.get("mini") == "1":
            self.w("**This report was made with `bench/suite --mini`: tiny sizes and one "
                   "round, to try the pipeline. Its figures mean nothing.**")
            self.w()

    def steps_section(self):
        self.w("## What ran")
        self.w()
        crypt = (", but for `crypt`, which is one of `bench/crypt-cost` (see \"Integrity and "
                 "encryption cost\")" if any(s["step"] == "crypt" for s in self.steps_tsv) else "")
        self.w("Each step is one invocation of `bench/compare` (its configurations interleaved, "
               f"round after round){crypt}. Workloads: `usemem` walks its memory in 4 KiB pages "
               "(seq-write writes every page once; seq-read writes every page, untimed, then "
               "reads every word of every page, timed) and times every page access "
               "(`--latency`); `pmbench` writes every page once, untimed, then makes random "
               "one-word accesses, half reads and half writes, for a fixed time, each one timed; "
               "its pages follow a Zipf law of exponent 0.99 scattered over the region (a "
               "skewed working set whose hot pages are not neighbours). Page contents are "
               "mixed: a quarter each of zero, text, structured and random pages "
               "(`bench/pagedata.h`).")
        self.w()
        rows = []
        for s in self.steps_tsv:
            st = self.steps.get(s["step"])
            noisy = "—"
            if st:
                n, tot = st.noisy()
                noisy = f"{n}/{tot}"
            cmd = s["command"].replace("--json ", "").replace(f"--out {self.suite}/{s['step']} ", "")
            cmd = re.sub(r"--(uswap|usemem|pmbench|poolfill) \S+ ", "", cmd)
            rows.append((s["step"], f"{s['seconds']} s", s["status"], noisy, f"`{cmd}`"))
        self.table(["step", "time", "exit", "runs started busy", "command"], rows)
        self.w("Every step ran the same binaries (`uswap` with its preload library, `usemem`, "
               "`pmbench`, `poolfill`), copied once into the suite's `bin/` at the start.")
        self.w()
        self.w("\"Started busy\": at least half a core was busy in the second before the run "
               "(other sessions share this machine); such runs are kept, and the ranges show "
               "what they did.")
        self.w()

    @staticmethod
    def failed_mark(st, w, c):
        bad = st.failures(w, c)
        return f" ({len(bad)} of {len(st.all_runs(w, c))} runs failed)" if bad else ""

    @staticmethod
    def failure_note(r):
        note = r.get("note") or "?"
        # compare before the OOM fix called every SIGKILL a timeout
        if "oom_kill" in note:
            note = note.replace("timeout after 600s; ", "")
        return note

    def failures_section(self):
        rows = []
        for name, st in self.steps.items():
            for r in st.runs:
                if r["status"] != "ok":
                    rows.append((name, r["round"], r["workload"], f"`{r['config']}`",
                                 self.failure_note(r)))
        if not rows:
            return
        self.w("### Failed runs")
        self.w()
        self.w("Runs that did not finish are left out of the medians and ratios (their cells "
               "say how many failed):")
        self.w()
        self.table(["step", "round", "workload", "configuration", "what happened"], rows)

    def config_notes(self, st):
        notes = []
        for c, s in st.standin.items():
            notes.append(f"`{c}*` stands in for `kernel-zswap-{s}`, which this kernel's zswap "
                         f"does not have.")
        for c, why in st.unavailable.items():
            notes.append(f"`{c}` could not run: {why}.")
        for n in notes:
            self.w(f"- {n}")
        if notes:
            self.w()

    # The main tables: one per figure, rows = configurations, columns =
    # workloads, each cell with its ratio to the kernel's best.
    def metric_table(self, st, metric, highest, title, fmt_cell, note):
        self.w(f"### {title}")
        self.w()
        self.w(note)
        self.w()
        wls = st.workloads
        best = {w: st.best_kernel(w, metric, highest) for w in wls}
        head = ["configuration"] + [
            f"{w}: {('median (min–max)') if metric == 'tput' else 'median'} · × {best[w] or '—'}"
            for w in wls]
        rows = []
        for c in st.configs:
            row = [f"`{st.label(c)}`"]
            for w in wls:
                span = st.span(w, c, metric)
                if span is None:
                    fail = st.failures(w, c)
                    row.append(f"failed ({len(fail)})" if fail else "")
                    continue
                rat = "1" if c == best[w] else fmt_ratio(st.pair(w, c, best[w], metric))
                row.append(f"{fmt_cell(span)} · **×{rat}**{self.failed_mark(st, w, c)}")
            rows.append(row)
        self.table(head, rows)

    def main_section(self):
        st = self.steps.get("main")
        if not st:
            return
        r = st.res
        self.w("## Side by side at twice the budget")
        self.w()
        self.w(f"Step `main`: {r.get('size', 0) >> 20} MiB of mixed data under a "
               f"{r.get('budget', 0) >> 20} MiB budget, {r.get('rounds', '?')} rounds. "
               "Configurations: `ceiling` (no limit); `kernel-swapfile` (cgroup limit, swap "
               "file), `-thp` (the same with `MADV_HUGEPAGE`), `kernel-zswap-C` (its zswap "
               "in front of the same file), `zram-C` (a zram device instead of the file); "
               "`uswap-F` (`uswap run --max BUDGET --folio F`, its swap file in the same "
               "directory), `uswap-lz4-F[-folio]` (the same with its lz4 pool in front, a "
               "large folio stored as one object), `uswap-lz4-v1-F[-folio]` (the pool as the "
               "kernel's zswap is in this run, under cgroup v1 on a recent kernel: not charged "
               "to the budget, `--zswap-charge off --zswap-max 100`, and keeping pages that do "
               "not compress instead of writing them to the swap file, "
               "`--zswap-incompressible store`; and reclaiming at the limit as the cgroup does, "
               "`--high` equal to the budget; the default `uswap-lz4` charges its pool to the "
               "budget, as cgroup v2 charges zswap, and starts reclaim at 97% of it). uswap's 4K "
               "folios (the default) run every workload, its 2M folios only the sequential ones.")
        self.w()
        self.config_notes(st)
        self.metric_table(
            st, "tput", True, "Throughput",
            lambda s: f"{fmt(s[0])} ({fmt(s[1], 2)}–{fmt(s[2], 2)})",
            "MB/s for usemem (bytes accessed in the timed passes), accesses per second for "
            "pmbench. × = the configuration's figure over the kernel's best configuration's "
            "(named in the header) in the same round, median (min–max) of the rounds.")
        self.metric_table(
            st, "cpu", False, "CPU seconds per GB moved",
            lambda s: fmt(s[0]),
            "User + system CPU seconds of the workload process (all its threads: uswap's "
            "fault handlers and reclaimer run there; the kernel's direct reclaim and zram/zswap "
            "compression run in the faulting thread) over the timed window, per GB accessed "
            "(pmbench: 4 KiB per access). Work the kernel does in kswapd or kworkers is not "
            "counted (under a cgroup limit most reclaim is direct). × = over the kernel's "
            "lowest (named): below 1 is cheaper.")
        self.metric_table(
            st, "p99", False, "Access latency p99 (µs)",
            lambda s: f"{fmt(s[0])}",
            "Every access is timed (usemem: each 4 KiB page of the timed passes; pmbench: each "
            "one-word access); p99 is the 99th percentile of a run (histogram bucket upper "
            "bound, 6% resolution), median of the runs. A fault is a slow access, so p99 is "
            "the cost of faults whenever more than 1% of the accesses fault. × = over the "
            "kernel's lowest p99 (named): below 1 is faster.")
        self.metric_table(
            st, "p50", False, "Access latency p50 (µs)",
            lambda s: f"{fmt(s[0])}",
            "The median access (mostly a memory access when most accesses hit). × = over the "
            "kernel's lowest p50.")
        self.plots_cdf(st)
        self.counters_table(st)

    def plots_cdf(self, st):
        for w in st.workloads:
            series = []
            for c in st.configs:
                if c == "ceiling" and not is_pm(w):
                    pass
                h = merged_hist(st, w, c)
                tot = sum(n for _, n in h)
                if not tot:
                    continue
                pts, seen = [], 0
                for up, n in h:
                    seen += n
                    pts.append((max(up, 1) / 1000.0, seen / tot))
                series.append((st.label(c), pts))
            img = self.plot.plot(
                f"latency-cdf-{w}", f"{w}: access latency, all rounds "
                f"({st.res.get('size', 0) >> 20} MiB under {st.res.get('budget', 0) >> 20} MiB)",
                "latency (µs, log scale)", "fraction of accesses at or below", series,
                logx=True, yrange=(0, 1), points=False)
            if img:
                self.w(f"Latency CDF, {w} (kernel dashed, uswap solid):")
                self.w()
                self.image(img, f"latency CDF {w}")

    def counters_table(self, st):
        self.w("### Counters (median per run)")
        self.w()
        self.w("Kernel and ceiling: `/proc/vmstat` deltas over the run (machine-wide); uswap: "
               "its own `--stats` counters under the kernel's names. The kernel keeps zero "
               "pages out of its swap device and pool (since 6.12), so its `pswpout` and "
               "`zswpout` are about three quarters of uswap's for the same evictions. peak: "
               "the cgroup's peak usage, or uswap's resident peak (its pool included when "
               "charged). total: each side's memory at its peak, so that a ratio never hides "
               "a side that used more: the kernel's cgroup peak plus the peak of a pool the "
               "cgroup is not charged for (zram; zswap on cgroup v1; sampled every 100 ms), "
               "or the uswap process's peak RSS (its resident pages, its pool, uswap's own).")
        self.w()
        keys = ["pswpout", "pswpin", "zswpout", "zswpin", "zswpwb", "pgmajfault"]
        rows = []
        for w in st.workloads:
            for c in st.configs:
                ok = st.ok(w, c)
                if not ok:
                    continue
                cells = [w, f"`{st.label(c)}`"]
                for k in keys:
                    cells.append(fmt_count(median([num(r.get(k)) for r in ok])))
                for k in ("peak", "total"):
                    v = median([num(r.get(k)) for r in ok])
                    cells.append(f"{v / 1048576:.0f}" if v else "—")
                rows.append(cells)
        self.table(["workload", "configuration"] + keys + ["peak MiB", "total MiB"], rows)

    def targets_section(self):
        st = self.steps.get("main")
        if not st:
            return
        self.w("## The targets")
        self.w()
        self.w("The targets of `bench/README.md`, as ratios against the kernel in the same "
               "run (step `main`: 512 MiB of mixed data under a 256 MiB budget, twice the "
               "budget; step `redis` for redis-server). Each target is judged on the uswap "
               "configuration that does best on it "
               "(the best median of the pair-by-pair ratios; named), with uswap's default "
               f"configuration ({DEFAULT_FOLIO} folios, no pool) beside it. Met: that median is on the "
               "right side of the bound. The ranges are the rounds' ratios, min–max.")
        self.w()
        rows = []
        steps = [st] + ([self.steps["redis"]] if self.steps.get("redis") else [])
        pairs = [(step, w) for step in steps for w in step.workloads]
        for st, w in pairs:
            if not st.uswap_configs(w):
                continue
            default = DEFAULT if st.ok(w, DEFAULT) else None
            kbest = st.best_kernel(w, "tput", True)
            kcpu = st.best_kernel(w, "cpu", False)
            checks = []
            if w.startswith("redis-"):
                # A real program: requests/s against the same server under
                # the kernel's cgroup limit with zswap.
                if st.ok(w, "kernel-zswap-lzo-rle"):
                    checks.append(("requests/s ≥ 1× `kernel-zswap-lzo-rle`",
                                   "kernel-zswap-lzo-rle", "tput", 1.0, True))
            elif is_pm(w):
                for ref in ("kernel-zswap-lzo-rle", "zram-lz4"):
                    if st.ok(w, ref):
                        checks.append((f"throughput ≥ 1× `{st.label(ref)}`", ref, "tput", 1.0, True))
                if st.ok(w, "kernel-zswap-lzo-rle"):
                    checks.append(("p99 latency ≤ 1× `kernel-zswap-lzo-rle`",
                                   "kernel-zswap-lzo-rle", "p99", 1.0, False))
            else:
                if st.ok(w, "kernel-swapfile"):
                    checks.append(("throughput ≥ 2× `kernel-swapfile`", "kernel-swapfile",
                                   "tput", 2.0, True))
                if kbest:
                    checks.append((f"throughput ≥ 1× the kernel's best (`{kbest}`)", kbest,
                                   "tput", 1.0, True))
            if kcpu:
                checks.append((f"CPU s/GB ≤ 1× the kernel's lowest (`{st.label(kcpu)}`)", kcpu,
                               "cpu", 1.0, False))
            for text, ref, metric, bound, higher in checks:
                best, r = None, None
                for c in st.uswap_configs(w):
                    rc = st.pair(w, c, ref, metric)
                    if rc and (r is None or (rc[0] > r[0] if higher else rc[0] < r[0])):
                        best, r = c, rc
                rd = st.pair(w, default, ref, metric) if default else None
                met = None if r is None else (r[0] >= bound if higher else r[0] <= bound)
                verdict = "—" if met is None else ("**met**" if met else "**missed**")
                rows.append((w, text, f"`{best}`" if best else "—", fmt_ratio(r),
                             fmt_ratio(rd) if default and default != best else "(same)",
                             verdict))
                self.verdicts.append((w, text, best, r, met))
        self.table(["workload", "target", "uswap's best on it", "ratio, median (min–max)",
                    f"{DEFAULT} (default)", "verdict"], rows)
        missed = [v for v in self.verdicts if v[4] is False]
        if missed:
            self.w("Missed, plainly: " + "; ".join(
                f"{w}: {text.replace('`', '')} (median {fmt_x(r[0])}, best of uswap: `{ub}`)"
                for w, text, ub, r, _ in missed) + ".")
            self.w()
        else:
            self.w("Every target is met.")
            self.w()
        st = self.steps["main"]
        for w in dict.fromkeys(v[0] for v in missed):
            if is_pm(w):
                self.why(st, w)

    def why(self, st, w):
        """Where a missed workload's time went, from the access histograms:
        how often each side faulted and what a fault cost."""
        ub = st.best_uswap(w)
        refs = [c for c in ("kernel-zswap-lzo-rle", "zram-lz4", "kernel-swapfile")
                if st.ok(w, c)]
        su = slow_accesses(st, w, ub) if ub else None
        if not su or not refs:
            return
        parts = []
        for ref in refs[:2]:
            sk = slow_accesses(st, w, ref)
            if not sk:
                continue
            parts.append(f"`{ref}` {100 * sk[0]:.1f}% of its accesses, median {fmt(sk[1])} µs, "
                         f"mean {fmt(sk[2])} µs")
        if not parts:
            return
        self.w(f"Why, for {w}: accesses of 2 µs or more (faults, almost surely; all rounds "
               f"merged) were, for `{ub}`, {100 * su[0]:.1f}% of its accesses, median "
               f"{fmt(su[1])} µs, mean {fmt(su[2])} µs; for " + "; for ".join(parts) + ". "
               "A side that faults more often has less of the working set in memory (see the "
               "caveat on cgroup v1 below: the kernel's pools are outside its limit); a side "
               "whose faults cost more loses on every one of them. The perf profiles below "
               "say what a fault costs where.")
        self.w()

    def compressors_section(self):
        st = self.steps.get("compressors")
        if not st:
            return
        r = st.res
        self.w("## Compressors, pool units and devices")
        self.w()
        self.w(f"Step `compressors`: sequential write of {r.get('size', 0) >> 20} MiB under "
               f"{r.get('budget', 0) >> 20} MiB; every compressor the kernel has for zswap "
               "(lzo-rle, deflate: it has no lz4 or zstd) and zram (lz4), uswap's lz4, zstd "
               "(level 1) and deflate (level 1) with a large folio stored as one object "
               "(`-folio`) or page by page (`-page`, as the kernel), and uswap with one swap "
               "file against two of equal priority (`uswap-2dev`, both on the same disk). "
               "Then each pool was filled with the whole working set once "
               "(`bench/poolfill`) and read while full.")
        self.w()
        self.config_notes(st)
        w = "seq-write"
        kb = st.best_kernel(w, "tput", True)
        kc = st.best_kernel(w, "cpu", False)
        rows = []
        for c in st.configs:
            sp = st.span(w, c, "tput")
            if not sp:
                rows.append((f"`{c}`", "failed", "", "", ""))
                continue
            rows.append((f"`{st.label(c)}`", f"{fmt(sp[0])} ({fmt(sp[1], 2)}–{fmt(sp[2], 2)})",
                         "1" if c == kb else fmt_ratio(st.pair(w, c, kb, "tput")),
                         fmt(st.med(w, c, "cpu")),
                         "1" if c == kc else fmt_ratio(st.pair(w, c, kc, "cpu"))))
        self.table(["configuration", "MB/s", f"× {kb}", "CPU s/GB", f"CPU × {kc}"], rows)
        pool = st.pool()
        if pool:
            self.w("### Compression ratio")
            self.w()
            self.w("Stored pages × 4 KiB over the pool's bytes, without same-filled pages (the "
                   "kernel keeps zero pages out of zswap and zram altogether, uswap stores them "
                   "as a flag: neither costs pool memory). Incompressible pages: the kernel's "
                   "zswap (6.18) and zram keep them in the pool as they are; uswap sends them "
                   "to its swap file (unless `--zswap-incompressible store`). Footprint: peak memory, plus any pool the cgroup is not "
                   "charged for (on cgroup v1 neither zswap nor zram is charged to it: the kernel "
                   "uses its budget *and* its pool; uswap charges its pool to its budget). "
                   "The comparable figure is the ratio of the compressible pages only (uswap's "
                   "pool holds nothing else); × = that ratio over the kernel's highest.")
            self.w()
            comp = {c: p.get("ratio_compressible") for c, p in pool.items()}
            kr = [c for c in comp if st.is_kernel(c) and comp[c]]
            kbest = max(kr, key=lambda c: comp[c]) if kr else None
            rows = []
            for c, p in pool.items():
                rat = comp.get(c)
                x = "—"
                if rat and kbest:
                    x = "1" if c == kbest else f"{rat / comp[kbest]:.2f}"
                foot = p.get("footprint_bytes")
                rows.append((f"`{st.label(c)}`", fmt(p.get("ratio_excl_same_filled")), fmt(rat),
                             x, fmt(p.get("pool_overhead")),
                             fmt_count(p.get("reject_compress_poor")),
                             f"{foot / 1048576:.0f}" if foot else "—",
                             p.get("error") or ""))
            self.table(["configuration", "ratio, all stored", "ratio, compressible pages only",
                        f"× {kbest}", "pool / compressed bytes",
                        "refused as incompressible (to the swap file)", "footprint MiB",
                        "note"], rows)

    def crypt_section(self):
        """The crypt step: what the checksums and encryption cost, as ratios
        against uswap's default (a crc32c per slot)."""
        cr = self.crypt
        row = next((s for s in self.steps_tsv if s["step"] == "crypt"), None)
        self.w("## Integrity and encryption cost")
        self.w()
        if not cr.runs:
            if row:
                self.w(f"The `crypt` step exited {row['status']} and left no figures (see "
                       "`crypt.log` in the suite directory), so this report has none for what "
                       "checksums and encryption cost.")
            else:
                self.w("No `crypt` step in this run, so this report has no figures for what "
                       "checksums and encryption cost (`bench/suite --steps crypt`, or "
                       "`bench/crypt-cost --out DIR` alone, measures them).")
            self.w()
            return
        p = cr.params
        size = int(p.get("size", "0") or 0) >> 20
        rounds = sorted({r["round"] for r in cr.runs})
        passes = p.get("passes", "?")
        passes = f"{passes} timed pass" + ("" if passes == "1" else "es")
        self.w(f"Step `crypt`: `bench/crypt-cost` (not `compare`: uswap alone, no kernel "
               f"configuration). usemem walks {size} MiB of mixed data in order under "
               f"`uswap run --max {p.get('max', '?')} --folio {p.get('folio', '?')}`, one swap "
               f"file in {p.get('swap_dir', '?')} ({p.get('swap_dir_fs', '?')}), no compressed "
               f"pool, {passes}: seq-write writes every page in each, seq-read reads every "
               "page in each after an untimed pass that writes them. Three configurations, "
               f"interleaved in an order that rotates each round, {len(rounds)} rounds: "
               "`verify` is uswap's "
               "default (a CRC-32C per slot, checked on every read), `nocrc` is `--verify off` "
               "(no checksum), `encrypt` is `--encrypt on` (XChaCha20-Poly1305 per slot; the "
               "tag is the check, no CRC-32C). Each run's `--stats` was checked: pages went to "
               "the swap file, and with `encrypt` every one of them was encrypted.")
        self.w()
        if row and row["status"] != "0":
            self.w(f"**The `crypt` step exited {row['status']}** (see `crypt.log` in the suite "
                   "directory); the figures below are from the runs it finished.")
            self.w()
        self.w("MB/s: usemem's, median (min–max). × verify: the ratio of the medians / the "
               "median of the ratios round by round (their min–max), against `verify`; below 1 "
               "is slower. CPU: user + system seconds of the whole process (usemem and uswap's "
               "threads) over the timed window, median, and the ratio of the medians.")
        self.w()

        def mbps(w, c):
            sp = cr.span(w, c, "mbps")
            return f"{fmt(sp[0])} ({fmt(sp[1], 2)}–{fmt(sp[2], 2)})" if sp else "—"

        def ratios(w, c):
            mv, mc = cr.med(w, "verify", "mbps"), cr.med(w, c, "mbps")
            of_med = fmt_x(mc / mv) if mv and mc is not None else "—"
            return f"{of_med} / {fmt_ratio(cr.pair(w, c, 'mbps'))}"

        rows, per_page = [], []
        for w in cr.workloads:
            cv, ce, cn = (cr.med(w, c, "cpu") for c in ("verify", "encrypt", "nocrc"))
            cpu = "—"
            if cv and ce is not None:
                cpu = f"{fmt(cv)} → {fmt(ce)} (×{fmt_x(ce / cv)})"
            rows.append((w, mbps(w, "verify"), mbps(w, "nocrc"), ratios(w, "nocrc"),
                         mbps(w, "encrypt"), ratios(w, "encrypt"), cpu))
            # Per page only where every pass is timed: the counters are the
            # whole run's, the CPU seconds the timed window's.
            pe, pv = cr.med(w, "encrypt", "pages"), cr.med(w, "verify", "pages")
            if w == "seq-write" and cv is not None and ce is not None and cn is not None and pe and pv:
                def us(d):
                    return f"{fmt(d)} µs" if d > 0 else f"nothing measurable ({fmt(d)} µs)"
                per_page.append(f"encrypt − verify (the cipher): {us((ce - cv) / pe * 1e6)}; "
                                f"verify − nocrc (the CRC-32C): {us((cv - cn) / pv * 1e6)}; "
                                f"over {fmt_count(pe)} pages moved a run")
        self.table(["workload", "verify MB/s", "nocrc MB/s", "nocrc × verify",
                    "encrypt MB/s", "encrypt × verify", "CPU s, verify → encrypt"], rows)
        if per_page:
            self.w("CPU per page moved on seq-write (`pswpout` + `pswpin` of a run, median; "
                   "seq-read's counters include its untimed pass), from the differences of the "
                   "median CPU seconds, " + "; ".join(per_page) + ". The CPU seconds are the "
                   "steadier figure: throughput moves with the machine's load, the work done "
                   "per page does not.")
            self.w()
        loads = [r["load1"] for r in cr.runs if r["load1"] is not None]
        if loads:
            self.w(f"1-minute load average at the start of each run: median {median(loads):.2f} "
                   f"({min(loads):.2f}–{max(loads):.2f}), on {p.get('nproc', '?')} CPUs; "
                   "`crypt-cost` does not wait for a quiet machine. `docs/reliability.md` (\"What "
                   "it costs\") says where the cost goes.")
            self.w()

    def numbered(self, prefix):
        """Steps named PREFIX-N (or PREFIX-KIND-N), as [(N, step)] by N."""
        out = []
        for n, st in self.steps.items():
            if n.startswith(prefix + "-"):
                try:
                    out.append((float(n.rsplit("-", 1)[1]), st))
                except ValueError:
                    pass
        return sorted(out, key=lambda x: x[0])

    def series_table(self, w, steps, colname, what):
        """One row per configuration, one column per step: median · × the
        kernel's best in that step · CPU s/GB; and the plot's series."""
        configs = []
        for _, st in steps:
            for c in st.configs:
                if st.ok(w, c) and c not in configs:
                    configs.append(c)
        head = ["configuration"] + [colname(x) for x, _ in steps]
        rows, series, cpu_series = [], [], []
        for c in configs:
            row, pts, cpts = [f"`{c}`"], [], []
            for x, st in steps:
                v = st.med(w, c, "tput")
                if v is None:
                    fail = st.failures(w, c)
                    row.append(f"failed ({len(fail)})" if fail else "")
                    continue
                kb = st.best_kernel(w, "tput", True)
                rat = "1" if c == kb else fmt_ratio(st.pair(w, c, kb, "tput")).split(" ")[0]
                cpu = st.med(w, c, "cpu")
                row.append(f"{fmt(v)} · ×{rat} · {fmt(cpu)} s/GB{self.failed_mark(st, w, c)}")
                pts.append((x, v))
                if cpu:
                    cpts.append((x, cpu))
            rows.append(row)
            series.append((c, pts))
            cpu_series.append((c, cpts))
        self.w(f"{w}, {what}: median {unit(w)} · × the kernel's best configuration in the same "
               "step (pair by pair) · CPU s/GB.")
        self.w()
        self.table(head, rows)
        return series, cpu_series

    def sweep_section(self):
        sweeps = self.numbered("sweep")
        if not sweeps:
            return
        self.w("## The working set against a fixed budget")
        self.w()
        b = sweeps[0][1].res.get("budget", 0) >> 20
        ratios = sorted({r for r, _ in sweeps})
        self.w(f"Steps `sweep-seq-R` and `sweep-pm-R`: the working set is R × a {b} MiB budget, "
               f"R from {ratios[0]:g} to {ratios[-1]:g}; sequential write (usemem) and Zipf "
               "random access (pmbench). Each R is its own interleaved step, so the ratios are "
               "pair by pair within one R. uswap runs its 64K folios for the sequential "
               "workload and its 4K folios with the lz4 pool for the random one.")
        self.w()
        for w in ("seq-write", "pmbench-zipf"):
            steps = [(r, st) for r, st in sweeps if w in st.workloads]
            if not steps:
                continue
            series, cpu_series = self.series_table(w, steps, lambda r: f"{r:g}×",
                                                   "against working set / budget")
            xt = [f"{r:g}" for r, _ in steps]
            img = self.plot.plot(f"sweep-{w}", f"{w}: throughput against working set / budget "
                                 f"(budget {b} MiB)", "working set / budget", unit(w), series,
                                 logx=True, logy=True, xtics=xt)
            self.image(img, f"{w} throughput against the working-set ratio")
            img = self.plot.plot(f"sweep-cpu-{w}", f"{w}: CPU seconds per GB against "
                                 f"working set / budget (budget {b} MiB)",
                                 "working set / budget", "CPU s per GB", cpu_series,
                                 logx=True, logy=True, xtics=xt)
            self.image(img, f"{w} CPU per GB against the working-set ratio")

    def scaling_section(self):
        groups = [("threads", "seq-write", "threads"), ("procs", "seq-write", "processes"),
                  ("pmthreads", "pmbench-zipf", "threads")]
        have = [g for g in groups if self.numbered(g[0])]
        if not have:
            return
        self.w("## Threads and processes")
        self.w()
        st0 = self.numbered(have[0][0])[0][1]
        self.w(f"Steps `threads-N`, `procs-N`, `pmthreads-N`: {st0.res.get('size', 0) >> 20} MiB "
               f"under {st0.res.get('budget', 0) >> 20} MiB with N threads (each on its own "
               "slice for usemem, all over the whole region for pmbench) or N processes (each "
               "its own share of the size; uswap's budget is shared by the processes of one "
               "`uswap run`, the cgroup's by its members). The figure is the sum over all "
               f"threads and processes; the machine has {self.machine.get('nproc', '?')} CPUs.")
        self.w()
        for prefix, w, what in have:
            steps = [(int(x), st) for x, st in self.numbered(prefix)]
            if prefix == "procs":
                steps = [(int(x), st) for x, st in self.numbered("threads") if x == 1] + steps
            series, _ = self.series_table(w, steps, lambda n: f"N={n}", f"N {what}")
            img = self.plot.plot(f"scaling-{prefix}", f"{w}: throughput with N {what}",
                                 what, unit(w), series, xtics=[str(n) for n, _ in steps])
            self.image(img, f"{w} with N {what}")

    def remote_section(self):
        steps = [(int(x), st) for x, st in self.numbered("remote")]
        if not steps:
            return
        st0 = steps[0][1]
        self.w("## Far memory: a Redis Cluster as the swap device")
        self.w()
        self.w(f"Steps `remote-N`: {st0.res.get('size', 0) >> 20} MiB under "
               f"{st0.res.get('budget', 0) >> 20} MiB with N threads. `uswap-redis-F` has one "
               "swap device, a Redis Cluster of 3 masters on loopback (`--swap redis://...`, "
               "encrypted as by default; docs/far-memory.md), started and stopped by "
               "bench/compare; `uswap-F` has its swap file; the kernel its swap file. The "
               "servers run on the same CPUs as the workload. Goals: sequential write "
               ">= 1x the kernel's swap file, pmbench-zipf >= 0.5x.")
        self.w()
        for w in ("seq-write", "pmbench-zipf"):
            have = [(n, st) for n, st in steps if w in st.workloads]
            if not have:
                continue
            series, _ = self.series_table(w, have, lambda n: f"N={n}", "N threads")
            img = self.plot.plot(f"remote-{w}", f"{w}: a Redis Cluster as the swap device, "
                                 "N threads", "threads", unit(w), series,
                                 xtics=[str(n) for n, _ in have])
            self.image(img, f"{w} with a Redis Cluster as the swap device")

    def perf_section(self):
        st = self.steps.get("perf")
        main = self.steps.get("main")
        self.w("## Where the time goes")
        self.w()
        if main:
            self.uswap_stats(main)
        if not st:
            self.w("(No perf step in this run.)")
            self.w()
            return
        self.w("Step `perf`: one run per configuration of the sequential write and the random "
               "workload under `perf record -g` (the whole run: the untimed fill too; its "
               "figures are distorted by the profiling and are used nowhere else). Samples "
               "by where they fell (`perf report --no-children --sort comm,dso,sym`, entries "
               "above 0.05%, grouped by symbol name; \"workload\" is the benchmark's own code "
               "and its clock reads, \"uswap, user space\" is the rest of user space in the "
               "process: uswap's library, libc, the compressors' libraries are under "
               "compression):")
        self.w()
        for w in st.workloads:
            profiles = []
            for c in st.configs:
                for r in st.all_runs(w, c):
                    path = st.log(w, c, r["round"], "perf.txt")
                    entries = read_perf(path)
                    if entries:
                        profiles.append((c, r, entries))
            if not profiles:
                continue
            cats = ["workload"] + [n for n, _ in PERF_CATEGORIES] + ["uswap, user space",
                                                                     "other kernel"]
            rows = []
            for c, r, entries in profiles:
                share = self.perf_categories(entries)
                rest = max(0.0, 100.0 - sum(share.values()))
                rows.append([f"`{st.label(c)}`", f"{fmt(r['tput'])}"] +
                            [f"{share.get(k, 0):.0f}%" for k in cats] + [f"{rest:.0f}%"])
            self.w(f"{w} ({unit(w)} under perf in the second column):")
            self.w()
            self.table(["configuration", unit(w)] + cats + ["entries < 0.05%"], rows)
            tops = []
            for c, r, entries in profiles:
                share = self.perf_categories(entries)
                top = sorted(share.items(), key=lambda kv: -kv[1])[:2]
                tops.append(f"`{st.label(c)}` " + " and ".join(f"{k} ({v:.0f}%)" for k, v in top))
            self.w(f"Largest shares, {w}: " + "; ".join(tops) + ".")
            self.w()
            for c, r, entries in profiles:
                self.w(f"<details><summary>{w}, {st.label(c)}: the top entries</summary>")
                self.w()
                self.w("```")
                for pct, comm, dso, sym in entries[:14]:
                    self.w(f"{pct:6.2f}%  {comm:10s} {dso:22s} {sym}")
                self.w("```")
                self.w()
                self.w("</details>")
                self.w()

    @staticmethod
    def perf_categories(entries):
        share = {}
        for pct, comm, dso, sym in entries:
            if dso in (comm, "[vdso]") or dso.startswith(comm):
                cat = "workload"
            else:
                cat = None
                for name, rx in PERF_CATEGORIES:
                    if re.search(rx, sym) or (name == "compression" and
                                              re.search(r"lz4|zstd|libz\.", dso)):
                        cat = name
                        break
                if cat is None:
                    cat = "other kernel" if dso.startswith("[kernel") else "uswap, user space"
            share[cat] = share.get(cat, 0) + pct
        return share

    def uswap_stats(self, st):
        """uswap's own view of the random workload: faults, evictions, stalls."""
        w = next((w for w in st.workloads if is_pm(w)), None)
        if not w:
            return
        rows = []
        for c in st.uswap_configs(w):
            runs = st.ok(w, c)
            js = [stats_json(st, w, c, r["round"]) for r in runs]
            js = [j for j in js if j and "vmstat" in j]
            if not js:
                continue
            v = lambda k: median([j["vmstat"].get(k) for j in js])
            stalls, stall_us = v("reclaim_stall"), v("reclaim_stall_us")
            acc = median([num(r.get("bytes")) / 4096 for r in runs if num(r.get("bytes"))])
            maj = v("pgmajfault")
            hist = {}
            for j in js:
                for k, n in (j.get("fault_latency_us") or {}).items():
                    hist[int(k)] = hist.get(int(k), 0) + n
            tot = sum(hist.values())
            p50 = p99 = None
            seen = 0
            for k in sorted(hist):
                seen += hist[k]
                if p50 is None and seen >= 0.5 * tot:
                    p50 = k
                if p99 is None and seen >= 0.99 * tot:
                    p99 = k
            ipf = median([ipis(r) / j["vmstat"]["pgmajfault"] for r, j in
                          zip(runs, [stats_json(st, w, c, r["round"]) for r in runs])
                          if ipis(r) is not None and j and j.get("vmstat", {}).get("pgmajfault")])
            rows.append((f"`{c}`", fmt_count(acc), fmt_count(maj),
                         f"{100 * maj / acc:.1f}%" if maj and acc else "—",
                         fmt_count(v("pswpout")), fmt_count(v("zswpout")),
                         fmt_count(stalls), fmt(stall_us / stalls if stalls else None),
                         f"≤{p50} / ≤{p99}" if tot else "—", fmt(ipf)))
        if not rows:
            return
        kr = []
        for c in st.kernel_configs(w):
            runs = st.ok(w, c)
            acc = median([num(r.get("bytes")) / 4096 for r in runs if num(r.get("bytes"))])
            maj = median([num(r.get("pgmajfault")) for r in runs])
            kr.append((f"`{st.label(c)}`", fmt_count(acc), fmt_count(maj),
                       f"{100 * maj / acc:.1f}%" if maj and acc else "—",
                       fmt_count(median([num(r.get("pswpout")) for r in runs])),
                       fmt_count(median([num(r.get("zswpout")) for r in runs])), "", "", "",
                       fmt(median([ipis(r) / num(r.get("pgmajfault")) for r in runs
                                   if ipis(r) is not None and num(r.get("pgmajfault"))]))))
        self.w(f"The random workload ({w}, step `main`), median per run: accesses made in the "
               "timed window, major faults (uswap: folios read back from its pool or swap "
               "file; kernel: `pgmajfault`), evictions, how often a faulting thread had to wait "
               "for reclaim to make room under `max` and for how long, and uswap's own "
               "fault-handling latency (power-of-two buckets, µs); IPIs: the machine's "
               "interprocessor interrupts during the run (function calls and reschedules, "
               "from /proc/interrupts: a wakeup of a thread on another CPU, a TLB "
               "shootdown) per major fault, median of the runs' ratios.")
        self.w()
        self.table(["configuration", "accesses", "major faults", "of accesses", "pswpout",
                    "zswpout", "reclaim stalls", "µs per stall", "fault p50 / p99 µs",
                    "IPIs per major fault"],
                   rows + kr)

    def caveats(self):
        self.w("## Caveats")
        self.w()
        items = [
            "**The kernel's compressed pools are outside its budget here.** This machine has "
            "cgroup v1 only, which charges neither zswap's pool nor zram to the memory cgroup: "
            "under the same limit the kernel's zswap and zram configurations hold the budget "
            "*plus* their pool in memory (the footprint column above), while uswap charges its "
            "pool to its `--max`. On random access this is worth a large share of the kernel's "
            "advantage: it keeps more of the working set in (compressed) memory. The "
            "`uswap-lz4-v1` configurations run uswap the same way (`--zswap-charge off`, the pool "
            "up to the budget on top of it, and incompressible pages kept in the pool as this "
            "kernel's zswap keeps them) and measure that share. cgroup v2 "
            "(which charges zswap and has `memory.zswap.max`) would make the budgets equal; "
            "`bench/compare` takes that path where v2 has the memory controller, untested here.",
            "**No lz4 or zstd in this kernel's zswap** (only lzo, lzo-rle, deflate): uswap's lz4 "
            "is compared with zswap's lzo-rle (the kernel's fastest) and with zram's own lz4; "
            "uswap's zstd has no kernel counterpart.",
            "**Noise.** Other sessions ran tests on the two cores during the runs (the "
            "\"started busy\" column; the load averages above). Every ratio is pair by pair "
            "within a round, and the ranges show the spread; absolute figures are not "
            "comparable across steps or with other reports.",
            self.thp_caveat(),
            "**Latency is per access, not per fault**: for the kernel there is no other "
            "place to time a fault from user space. p99 is a fault's cost when more than 1% "
            "of the accesses fault, and a plain memory access's cost otherwise.",
            "**CPU counts the workload's process only** (`getrusage`): uswap's threads run "
            "inside it, so all of uswap's work is counted; the kernel's kswapd and kworkers "
            "(writeback, zswap's shrinker) are not, which favours the kernel slightly.",
        ]
        for i in items:
            self.w(f"- {i}")
        self.w()
        if self.plot.errors:
            self.w("Plot errors: " + "; ".join(self.plot.errors))
            self.w()
        if not self.plot.gnuplot:
            self.w("gnuplot was not found, so this report has no plots.")
            self.w()

    def thp_caveat(self):
        text = ("**THP.** The kernel runs in `madvise` mode; `kernel-swapfile-thp` is the same "
                "swap file with `MADV_HUGEPAGE`.")
        st = self.steps.get("main")
        runs = [r for r in st.ok("seq-write", "kernel-swapfile-thp")] if st else []
        out = median([num(r.get("k_thp_swpout")) for r in runs])
        fb = median([num(r.get("k_thp_swpout_fallback")) for r in runs])
        if runs and out is not None and fb is not None:
            text += (f" In its sequential-write runs the kernel swapped out {out:.0f} huge pages "
                     f"whole and split {fb:.0f} (`thp_swpout`, `thp_swpout_fallback`, median per "
                     "run)")
            if fb > out:
                text += (": it splits a huge page to swap it out to a file on this disk (which "
                         "reports itself rotational), so THP helps the kernel less here than on "
                         "machines where huge pages go out whole.")
            else:
                text += "."
        return text

    def reproduce(self):
        self.w("## Reproducing")
        self.w()
        self.w("```sh")
        self.w("make bench                      # needs root; installs gnuplot-nox when missing")
        self.w("bench/report build/bench/suite-DATE --docs docs   # the report again, from the runs")
        self.w("bench/compare --quick --json    # the reduced matrix, a few minutes")
        self.w("bench/crypt-cost --out DIR      # checksums and encryption alone, a few minutes")
        self.w("```")
        self.w()
        self.w("`bench/README.md` describes each tool, its options and its output.")
        self.w()

    def write(self):
        self.header()
        self.targets_section()
        self.steps_section()
        self.main_section()
        self.compressors_section()
        self.crypt_section()
        self.sweep_section()
        self.scaling_section()
        self.remote_section()
        self.perf_section()
        self.caveats()
        self.failures_section()
        self.reproduce()
        os.makedirs(self.docs, exist_ok=True)
        path = os.path.join(self.docs, "benchmarks.md")
        with open(path, "w") as f:
            f.write("\n".join(self.out).rstrip() + "\n")
        return path


def main(argv):
    ap = argparse.ArgumentParser(prog="bench/report",
                                 description="Write docs/benchmarks.md from a bench/suite run.")
    ap.add_argument("suite", help="the bench/suite output directory")
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs"),
                    help="where benchmarks.md and bench/*.svg go (default: docs)")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.suite):
        print(f"bench/report: {a.suite}: not a directory", file=sys.stderr)
        return 2
    rep = Report(os.path.abspath(a.suite), os.path.abspath(a.docs))
    if not rep.steps and not rep.crypt.runs:
        print(f"bench/report: {a.suite}: no step with a runs.tsv or crypt/rounds.tsv",
              file=sys.stderr)
        return 1
    # Plots of an earlier report must not linger beside this one.
    for old in glob.glob(os.path.join(rep.docs, rep.imgrel, "*.svg")):
        os.remove(old)
    path = rep.write()
    print(f"bench/report: wrote {path} and {len(rep.plot.made)} plots", file=sys.stderr)
    return 0
