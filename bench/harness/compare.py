# SPDX-License-Identifier: MIT
"""bench/compare: run workloads side by side under uswap and under the
kernel's own swap, interleaved (every configuration in turn, round after
round), and print throughput, CPU seconds per GB, access latency and the
ratio of each configuration to the kernel's, pair by pair.

The workloads are usemem (throughput: sequential or random, read, write or
both) and pmbench (random one-word accesses over a skewed or uniform
working set), which time every access, so that their runs have a latency
histogram; and a real program, redis-server, loaded with text values and
driven by redis-benchmark (random GETs or SETs: bench/redisbench), with
redis-benchmark's requests per second and latency percentiles.  The
configurations (configs.py) are uswap with its swap file, several swap
files or its compressed pool, and the kernel with a memory cgroup limit
and a swap file, its zswap or zram; all with the same budget and the same
data.  After the rounds, a compression phase fills each compressed pool
once with poolfill and reads it while it is full.

Exit status: 0 all runs done (some may have failed: see the table), 1 the
kernel side could not be set up or another compare is running, 2 bad
arguments or not root, 130 interrupted.
"""

import os
import re
import shutil
import subprocess
import sys
import threading
import time

from . import parse, probe, tables
from .configs import PRESETS, WORKLOADS, ConfigSet, is_redis
from .machine import Machine, SetupError, sync_drop_caches
from .parse import POOL_COLUMNS, RUNS_COLUMNS, UswapStats, tsv_line
from .util import (ROOT, Fatal, Interrupted, block_signals, loadavg1, raise_on_signals,
                   read_first_line, remove, require_root, say, to_bytes, uninterrupted, words)
from .rediscluster import Cluster
from .workload import Workloads, children_cpu, dev_path, exit_status, start, uswap_argv

PROG = "bench/compare"

USAGE = """usage: bench/compare [options]
Runs build/bench/usemem, build/bench/pmbench and redis-server (with
redis-benchmark) under uswap and under the kernel's swap, interleaved.
  --size SIZE        working set, K/M/G suffixes (default 512M)
  --budget SIZE      memory budget: uswap --max and the cgroup limit
                     (default 256M)
  --rounds R         rounds of all configurations (default 3); 0: only
                     the compression phase
  --configs "C ..."  configurations, space or comma separated (default:
                     "uswap kernel-swapfile"):
                       uswap              uswap, swap file only, per --folios
                       uswap-2dev         uswap with two swap files of equal
                                          priority in --swap-dir (--swap
                                          DIR/uswap-bench.a,prio=5 --swap
                                          DIR/uswap-bench.b,prio=5), per
                                          --folios; uswap-3dev ... uswap-15dev
                       uswap-redis        uswap with a Redis Cluster as its
                                          one swap device: 3 masters on
                                          loopback, started and stopped here
                                          (--swap redis://...; encrypted, as
                                          by default), per --folios
                       uswap-lz4, uswap-zstd, uswap-deflate
                                          uswap --zswap COMP in front of its
                                          swap file, per --folios and, for
                                          folios above 4K, per --zswap-units
                       uswap-lz4-v1, uswap-zstd-v1, uswap-deflate-v1
                                          the same with the pool as the
                                          kernel's zswap is under cgroup v1
                                          on a recent kernel: not charged
                                          (--zswap-charge off, --zswap-max
                                          100: up to the budget on top of
                                          it) and keeping pages that do not
                                          compress (--zswap-incompressible
                                          store), and reclaim at the limit
                                          as the cgroup's (--high BUDGET)
                       kernel-swapfile    cgroup limit + swap file (also
                                          "kernel"; -thp: MADV_HUGEPAGE)
                       kernel-zswap-COMP  the same with the kernel's zswap in
                                          front (lz4, zstd, lzo-rle, lzo,
                                          deflate, ...; -thp suffix too)
                       zram-COMP          cgroup limit + a zram swap device
                       ceiling            no limit at all
                       compressed-tier    {compressed_tier}
                       devices            {devices}
                     A compressor the kernel lacks is reported unavailable;
                     when its zswap lacks lz4, kernel-zswap-lzo-rle is added
                     as the closest stand-in and labelled so.
  --folios "F ..."   uswap folio sizes, one configuration each (default "4K",
                     uswap run's)
  --rand-folios "F ..."
                     the folio sizes also run for rand-* workloads (default:
                     all of --folios; 2M folios take minutes per random run)
  --seq-folios "F ..."
                     the folio sizes run for the other workloads (default:
                     all of --folios)
  --zswap-units "U ..."
                     folio, page: uswap --zswap-unit modes (default "folio page")
  --zswap-max PCT    uswap --zswap-max (% of --max) and the kernel's zswap
                     max_pool_percent (% of all RAM) (default 20)
  --zswap-accept PCT uswap --zswap-accept and the kernel's zswap
                     accept_threshold_percent (default 90)
  --zstd-level L     uswap's zstd level (default 1)
  --zswap-threads N  uswap --zswap-threads (default: uswap's)
  --no-pool-table    skip the compression phase
  --workload "W ..." seq-write, rand-write, seq-read, rand-read, seq-rw,
                     rand-rw (usemem), pmbench-zipf, pmbench-uniform,
                     pmbench-hot (pmbench; "pmbench" is pmbench-zipf),
                     redis-get, redis-set (redis-server under the
                     configuration, SIZE/1K keys of 1000 bytes of text
                     loaded, then redis-benchmark's random GETs or SETs
                     over them, from outside the budget; "redis" is both)
                     (default "seq-write rand-write"); space or comma separated
  --pm-duration S    pmbench: seconds of timed accesses (default 8)
  --pm-read PCT      pmbench: share of reads (default 50)
  --pm-theta T       pmbench-zipf: exponent (default 0.99)
  --redis-requests N redis: redis-benchmark -n, requests per run (default
                     {redis_requests})
  --redis-clients N  redis: redis-benchmark -c, connections (default {redis_clients})
  --redis-pipeline N redis: redis-benchmark -P, requests in flight per
                     connection (default {redis_pipeline})
  --redis-server, --redis-benchmark PATH
                     the redis programs (default: redis-server and
                     redis-benchmark in $PATH; Debian: redis-server); when
                     one is missing the redis workloads are skipped
  --quick            a reduced matrix that runs in a few minutes: --size 256M
                     --budget 128M --rounds 3 --workload "seq-write seq-read
                     pmbench-zipf" --configs "kernel-swapfile
                     kernel-zswap-lzo-rle zram-lz4 uswap uswap-lz4
                     uswap-lz4-v1" --folios "4K 64K" --seq-folios 64K
                     --rand-folios 4K --zswap-units folio --pm-duration 4
                     --wait-quiet 3 --no-pool-table
                     (the other options override these)
  --ceiling          also run with no limit at all
  --thp              also run the kernel swap file with MADV_HUGEPAGE; when
                     it runs, every configuration is also compared with it
  --data KIND        usemem --data: mixed (default), text, random, zero
  --threads N        usemem and pmbench --threads (default 1)
  --procs N          usemem --procs (default 1; pmbench runs one process)
  --passes K         usemem --passes (default: usemem's)
  --verify           usemem --verify: check every page after the timed passes
  --swap-dir DIR     where uswap and the kernel swap file live
                     (default $TMPDIR, else /tmp)
  --cgroup v1|v2     force a cgroup version (default: v2 if its memory
                     controller is available, else v1)
  --timeout SECS     limit per run (default 600)
  --wait-quiet SECS  before each run, wait up to SECS for the machine to be
                     quiet (under half a core busy); runs that start busy
                     anyway are flagged in the table (default 30)
  --out DIR          logs, runs.tsv, pool.tsv, summary.md (default
                     build/bench/compare-DATE)
  --uswap PATH       the uswap binary (default build/uswap, copied with its
                     preload library into DIR/bin at the start)
  --base PATH        another uswap binary (a build before a change; its
                     preload library beside it): every uswap configuration
                     also runs with it, as base-NAME, right after NAME in
                     each round
  --usemem, --pmbench, --poolfill PATH
                     the workload binaries (default build/bench/NAME, built
                     if stale and copied into DIR/bin at the start)
  --perf             profile every run with perf record -g (the figures of
                     profiled runs are distorted by it); the symbols above
                     0.05% go to DIR/logs/R-WORKLOAD-CONFIG.perf.txt
  --json             print the results as one JSON object (always written to
                     DIR/results.json)
Exit status: 0 done (failed runs are reported in the table), 1 the kernel
side could not be set up, 2 bad arguments or not root, 130 interrupted.
"""

# --quick: a reduced matrix; the other options, wherever they are, win.
QUICK = {"size": "256M", "budget": "128M", "rounds": "3",
         "workloads": "seq-write seq-read pmbench-zipf",
         "configs": "kernel-swapfile kernel-zswap-lzo-rle zram-lz4 uswap uswap-lz4 uswap-lz4-v1",
         "folios": "4K 64K", "seq_folios": "64K", "rand_folios": "4K", "zswap_units": "folio",
         "pm_duration": "4", "wait_quiet": "3", "pool_table": False}

# redis-benchmark's defaults: requests per run (a run of 3 to 15 s at 256M
# under 128M on the development machine, the load included; 30 s and more
# with uswap's 64K folios), connections, and requests in flight on each.
REDIS_REQUESTS, REDIS_CLIENTS, REDIS_PIPELINE = 100000, 8, 1

# Seconds of /proc/stat sampling per look at how busy the machine is.
SETTLE = 1.0

# The counters runs.tsv has for every configuration, under the kernel's
# names: the kernel's /proc/vmstat deltas, or uswap's --stats.
OWN_COUNTERS = ("pswpin", "pswpout", "pgmajfault", "zswpin", "zswpout", "zswpwb", "thp_swpout")

# What runs.tsv keeps of the workload's result line (same names).
RESULT_KEYS = ("mbps", "secs", "bytes", "aps", "p50_us", "p90_us", "p99_us", "p999_us",
               "mean_us", "cpu_user", "cpu_sys")


def usage_error(msg):
    return Fatal(f"{PROG}: {msg}", 2)


def uint(opt, val, lo=0, hi=2147483647, what=None):
    """An integer option within [lo, hi], or a usage error."""
    if not re.match(r"^[0-9]+$", val) or not lo <= int(val) <= hi:
        raise usage_error(f"{opt} '{val}': expected {what or f'a number >= {lo}'}")
    return int(val)


class Options:
    """bench/compare's options, with their defaults."""

    FLAGS = {"--ceiling": ("ceiling", True), "--thp": ("thp", True),
             "--verify": ("verify", True), "--json": ("json", True),
             "--no-pool-table": ("pool_table", False), "--perf": ("perf", True)}

    def __init__(self, argv):
        self.size, self.budget, self.rounds = "512M", "256M", 3
        self.folios, self.rand_folios, self.seq_folios = "4K", "", ""
        self.workloads, self.configs = "seq-write rand-write", ""
        self.zswap_units, self.zswap_max, self.zswap_accept = "folio page", 20, 90
        self.zstd_level, self.zswap_threads = 1, ""
        self.pool_table, self.ceiling, self.thp, self.verify = True, False, False, False
        self.json, self.perf, self.quick = False, False, False
        self.data, self.threads, self.procs, self.passes = "mixed", 1, 1, ""
        self.timeout, self.wait_quiet = 600, 30
        self.swap_dir = os.environ.get("TMPDIR") or "/tmp"
        self.out, self.cg_want = "", "auto"
        self.uswap = f"{ROOT}/build/uswap"
        self.uswap_default = True
        self.uswap_base = ""
        self.usemem = f"{ROOT}/build/bench/usemem"
        self.poolfill = f"{ROOT}/build/bench/poolfill"
        self.pmbench = f"{ROOT}/build/bench/pmbench"
        self.pm_duration, self.pm_read, self.pm_theta = "8", "50", "0.99"
        self.redis_requests, self.redis_clients = REDIS_REQUESTS, REDIS_CLIENTS
        self.redis_pipeline = REDIS_PIPELINE
        self.redis_server = shutil.which("redis-server") or "redis-server"
        self.redis_benchmark = shutil.which("redis-benchmark") or "redis-benchmark"
        if "--quick" in argv:
            self.quick = True
            for k, v in QUICK.items():
                setattr(self, k, int(v) if k in ("rounds", "wait_quiet") else v)
        self._parse(argv)
        self._check()

    def _parse(self, argv):
        i = 0
        while i < len(argv):
            opt = argv[i]
            if opt in ("-h", "--help"):
                sys.stdout.write(USAGE.format(compressed_tier=PRESETS["compressed-tier"],
                                              devices=PRESETS["devices"],
                                              redis_requests=REDIS_REQUESTS,
                                              redis_clients=REDIS_CLIENTS,
                                              redis_pipeline=REDIS_PIPELINE))
                sys.exit(0)
            if opt == "--quick":
                i += 1
                continue
            if opt in self.FLAGS:
                setattr(self, *self.FLAGS[opt])
                i += 1
                continue
            if i + 1 >= len(argv):
                raise usage_error(f"{opt}: missing value (see --help)")
            self._option(opt, argv[i + 1])
            i += 2

    def _option(self, opt, val):
        if opt == "--size":
            self.size = val
        elif opt == "--budget":
            self.budget = val
        elif opt == "--rounds":
            self.rounds = uint(opt, val, 0, what="a number >= 0")
        elif opt in ("--configs", "--config"):
            self.configs = val.replace(",", " ")
        elif opt in ("--folios", "--rand-folios", "--seq-folios", "--zswap-units"):
            setattr(self, opt[2:].replace("-", "_"), val.replace(",", " "))
        elif opt in ("--zswap-max", "--zswap-accept"):
            setattr(self, opt[2:].replace("-", "_"),
                    uint(opt, val, 1, 100, "a percentage, 1 to 100"))
        elif opt == "--zstd-level":
            if not re.match(r"^-?[0-9]+$", val) or not -7 <= int(val) <= 22 or int(val) == 0:
                raise usage_error(f"--zstd-level '{val}': expected -7 to 22, not 0")
            self.zstd_level = int(val)
        elif opt == "--zswap-threads":
            self.zswap_threads = str(uint(opt, val, 1, 16, "1 to 16"))
        elif opt in ("--workload", "--workloads"):
            self.workloads = val.replace(",", " ")
        elif opt == "--data":
            if val not in ("mixed", "text", "random", "zero"):
                raise usage_error(f"--data '{val}': expected mixed, text, random or zero")
            self.data = val
        elif opt in ("--threads", "--procs"):
            setattr(self, opt[2:], uint(opt, val, 1))
        elif opt == "--passes":
            self.passes = str(uint(opt, val, 1))
        elif opt == "--swap-dir":
            self.swap_dir = val
        elif opt == "--cgroup":
            if val not in ("v1", "v2"):
                raise usage_error(f"--cgroup '{val}': expected v1 or v2")
            self.cg_want = val
        elif opt == "--timeout":
            self.timeout = uint(opt, val, 1, what="seconds >= 1")
        elif opt == "--wait-quiet":
            self.wait_quiet = uint(opt, val, 0, what="seconds >= 0")
        elif opt == "--out":
            self.out = val
        elif opt == "--uswap":
            self.uswap, self.uswap_default = val, False
        elif opt == "--base":
            self.uswap_base = val
        elif opt in ("--usemem", "--poolfill", "--pmbench"):
            setattr(self, opt[2:], val)
        elif opt == "--pm-duration":
            if not re.match(r"^[0-9]+(\.[0-9]+)?$", val) or not 0.1 <= float(val) <= 3600:
                raise usage_error(f"--pm-duration '{val}': expected seconds, 0.1 to 3600")
            self.pm_duration = val
        elif opt == "--pm-read":
            self.pm_read = str(uint(opt, val, 0, 100, "a percentage, 0 to 100"))
        elif opt == "--pm-theta":
            if not re.match(r"^[0-9]+(\.[0-9]+)?$", val):
                raise usage_error(f"--pm-theta '{val}': expected a number such as 0.99")
            self.pm_theta = val
        elif opt in ("--redis-requests", "--redis-clients", "--redis-pipeline"):
            setattr(self, opt[2:].replace("-", "_"), uint(opt, val, 1))
        elif opt in ("--redis-server", "--redis-benchmark"):
            setattr(self, opt[2:].replace("-", "_"), val)
        else:
            raise usage_error(f"unknown option '{opt}' (see --help)")

    def _check_redis(self):
        """Without redis-server or redis-benchmark the redis workloads are
        skipped, and said so; the others still run."""
        rw = [w for w in self.workloads if is_redis(w)]
        if not rw:
            return
        for prog in (self.redis_server, self.redis_benchmark):
            if shutil.which(prog):
                continue
            say(f"{PROG}: {' and '.join(rw)} skipped: no {prog} (Debian: apt-get install "
                "redis-server)")
            self.workloads = [w for w in self.workloads if not is_redis(w)]
            if not self.workloads:
                raise usage_error("--workload: no workload left to run")
            return
        self.redis_server = shutil.which(self.redis_server)
        self.redis_benchmark = shutil.which(self.redis_benchmark)

    def _check(self):
        self.size_b, self.budget_b = to_bytes(self.size), to_bytes(self.budget)
        if self.size_b is None:
            raise usage_error(f"--size '{self.size}': expected a size such as 512M")
        if self.budget_b is None:
            raise usage_error(f"--budget '{self.budget}': expected a size such as 256M")
        if self.size_b <= 0:
            raise usage_error(f"--size '{self.size}': expected a size above 0")
        if self.budget_b <= 0:
            raise usage_error(f"--budget '{self.budget}': expected a size above 0")
        self.folios = words(self.folios)
        self.rand_folios = words(self.rand_folios) or self.folios
        self.seq_folios = words(self.seq_folios) or self.folios
        for f in self.folios + self.rand_folios + self.seq_folios:
            if f not in ("4K", "16K", "64K", "2M"):
                raise usage_error(f"--folios '{f}': expected 4K, 16K, 64K or 2M")
        self.zswap_units = words(self.zswap_units)
        for u in self.zswap_units:
            if u not in ("folio", "page"):
                raise usage_error(f"--zswap-units '{u}': expected folio or page")
        if not self.zswap_units:
            raise usage_error("--zswap-units: expected folio, page or both")
        alias = {"pmbench": ["pmbench-zipf"], "redis": ["redis-get", "redis-set"]}
        wl = [x for w in words(self.workloads) for x in alias.get(w, [w])]
        self.workloads = list(dict.fromkeys(wl))
        for w in self.workloads:
            if w not in WORKLOADS:
                raise usage_error(f"--workload '{w}': expected seq-write, rand-write, seq-read, "
                                  "rand-read, seq-rw, rand-rw, pmbench, pmbench-zipf, "
                                  "pmbench-uniform, pmbench-hot, redis, redis-get or redis-set")
        if not self.workloads:
            raise usage_error("--workload: no workload")
        self._check_redis()
        self.has_pm = any(w.startswith("pmbench-") for w in self.workloads)
        if self.perf and not shutil.which("perf"):
            raise usage_error("--perf: no perf command (Debian: linux-perf)")
        if not os.path.isdir(self.swap_dir):
            raise usage_error(f"--swap-dir '{self.swap_dir}': not a directory")
        self.swap_dir = os.path.realpath(self.swap_dir)


# ---------------------------------------------------------------- binaries

def build_bench(name, binary, log):
    """Build a bench program with make, or directly if the library does not
    build (usemem, pmbench and poolfill call nothing of uswap).  Only the
    default path (build/bench/NAME) is built; a fresh one is left alone."""
    if binary != f"{ROOT}/build/bench/{name}":
        return True
    deps = [f"{ROOT}/bench/{name}.c"] + [f"{ROOT}/bench/{h}" for h in
                                         ("pagedata.h", "lathist.h", "zipf.h")]
    if os.access(binary, os.X_OK):
        mtime = os.stat(binary).st_mtime
        if all(os.path.exists(d) and mtime > os.stat(d).st_mtime for d in deps):
            return True
    # Stale: remove it first (the Makefile's rule does not know about the
    # headers).
    remove(binary)
    with open(log, "a") as lf:
        if subprocess.run(["make", "-s", f"build/bench/{name}"], cwd=ROOT, stdout=lf,
                          stderr=lf).returncode == 0:
            return True
        say(f"{PROG}: make build/bench/{name} failed (see {log}); building {name} directly")
        os.makedirs(f"{ROOT}/build/bench", exist_ok=True)
        cc = os.environ.get("CC") or "cc"
        return subprocess.run([cc, "-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror",
                               "-D_GNU_SOURCE", "-pthread", "-o", binary, deps[0], "-lm"],
                              stdout=lf, stderr=lf).returncode == 0


def pin_binaries(o, has_pool):
    """Build what is stale and run copies from OUT/bin, so that a rebuild of
    build/ by someone else during a long run changes nothing under it
    (uswap finds its preload library next to itself)."""
    log, bindir = f"{o.out}/logs/build.log", f"{o.out}/bin"
    progs = [("usemem", True), ("pmbench", o.has_pm), ("poolfill", has_pool and o.pool_table)]
    for name, wanted in progs:
        if not wanted:
            continue
        path = getattr(o, name)
        if not build_bench(name, path, log):
            raise Fatal(f"{PROG}: cannot build {name} (see {log})")
        if not os.access(path, os.X_OK):
            raise Fatal(f"{PROG}: no {name} at {path}")
        try:
            shutil.copy(path, f"{bindir}/{name}")
        except OSError:
            raise Fatal(f"{PROG}: cannot copy {name} to {bindir}")
        setattr(o, name, f"{bindir}/{name}")
    preload = f"{ROOT}/build/libuswap_preload.so"
    if o.uswap_default and os.access(o.uswap, os.X_OK) and os.path.isfile(preload):
        try:
            shutil.copy(o.uswap, f"{bindir}/uswap")
            shutil.copy(preload, f"{bindir}/")
        except OSError:
            raise Fatal(f"{PROG}: cannot copy uswap to {bindir}")
        o.uswap = f"{bindir}/uswap"
    if o.uswap_base:
        lib = os.path.join(os.path.dirname(o.uswap_base), "libuswap_preload.so")
        try:
            os.makedirs(f"{bindir}/base", exist_ok=True)
            shutil.copy(o.uswap_base, f"{bindir}/base/uswap")
            shutil.copy(lib, f"{bindir}/base/")
        except OSError:
            raise Fatal(f"{PROG}: cannot copy {o.uswap_base} and {lib} to {bindir}/base")
        o.uswap_base = f"{bindir}/base/uswap"


def binary_of(o, c):
    """The uswap binary configuration c runs."""
    return o.uswap_base if c.base else o.uswap


# ---------------------------------------------------------------- runs

class PoolSampler:
    """The peak of the kernel's pool (zswap or zram) while a run lasts,
    read every 100 ms on a thread of its own; zram's own peak
    (mem_used_max) too at the end."""

    def __init__(self, m):
        self.m, self.peak, self.done = m, 0, threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.done.is_set():
            self.peak = max(self.peak, self.m.pool_now())
            self.done.wait(0.1)

    def stop(self):
        self.done.set()
        self.thread.join()
        if self.m.zram_id is not None:
            f = read_first_line(f"/sys/block/zram{self.m.zram_id}/mm_stat").split()
            if len(f) > 4 and f[4].isdigit():
                self.peak = max(self.peak, int(f[4]))
        return self.peak


class Runner:
    """The rounds and the compression phase of one invocation."""

    def __init__(self, o, cfgs, machine):
        self.o, self.cfgs, self.m = o, cfgs, machine
        self.wl = Workloads(o)
        self.runs_tsv = f"{o.out}/runs.tsv"
        self.pool_tsv = f"{o.out}/pool.tsv"
        self.busy = 0.0

    def wait_quiet(self):
        """Wait up to --wait-quiet seconds for less than half a core busy;
        the last figure goes into runs.tsv (a run that starts busy anyway
        is flagged in the table)."""
        waited = 0
        self.busy = probe.busy_cores(SETTLE)
        while self.busy >= 0.5 and waited < self.o.wait_quiet:
            self.busy = probe.busy_cores(SETTLE)
            waited += SETTLE

    def command(self, c, stats, argv):
        """argv under configuration c."""
        if c.kind == "uswap":
            return uswap_argv(self.o, c, stats, argv)
        if c.is_kernel:
            return self.m.join_cgroup_argv(argv)
        return argv

    def wait(self, proc):
        """Wait for the running workload; its exit status as a shell's."""
        self.m.running = proc
        rc = proc.wait()
        self.m.running = None
        return exit_status(rc)

    def kernel_after(self, log):
        """The cgroup's figures after a kernel run, then the teardown:
        (peak, OOM kills)."""
        with open(f"{log}.memory.stat", "w") as f:
            f.write(self.m.cg_memory_stat())
        peak, oom = self.m.cg_peak(), self.m.cg_oom_kills()
        self.m.teardown()
        return peak, oom

    def clear_logs(self, log):
        """Remove the files an earlier run of the same name left."""
        d, base = os.path.split(log)
        for f in os.listdir(d):
            if f.startswith(base + "."):
                remove(os.path.join(d, f))

    def set_up(self, c):
        """Everything before a run: uswap-Ndev's files gone, caches dropped,
        the kernel side set up, a quiet machine waited for.  Returns why
        the set-up failed, or ''."""
        why = ""
        if c.devs:
            for f in self.m.dev_files:
                remove(f)
        sync_drop_caches()
        if c.is_kernel:
            try:
                self.m.setup(c.kind, c.comp)
            except SetupError as e:
                why = f"setup: {e}"
        self.wait_quiet()
        return why

    def execute(self, cmd, log, r):
        """Run the command, timed, with the kernel's counters, the machine's
        IPIs and the process tree's CPU seconds around it (into r).
        Returns its exit status and the tree's CPU seconds."""
        v0, i0, t0 = probe.vmstat(), probe.ipis(), round(children_cpu(), 3)
        with open(f"{log}.cpu0", "w") as f:
            f.write(f"{t0:.3f}\n")
        rc = self.wait(start(cmd, self.o.timeout, f"{log}.out", f"{log}.err"))
        t1 = round(children_cpu(), 3)
        with open(f"{log}.cpu1", "w") as f:
            f.write(f"{t1:.3f}\n")
        i1, v1 = probe.ipis(), probe.vmstat()
        if i0 and i1:
            r["ipi_call"], r["ipi_resched"] = i1[0] - i0[0], i1[1] - i0[1]
        for k, v in zip(probe.VMSTAT_KEYS, probe.delta(v0, v1)):
            r[f"k_{k}"] = v
        return rc, f"{t1 - t0:.3f}"

    def own_counters(self, c, log, r):
        """The configuration's own counters (into r): the kernel's deltas
        and its cgroup's peak for kernel runs (then the teardown), uswap's
        --stats for uswap's.  Returns the cgroup's OOM kills and a note
        when uswap left no stats."""
        if c.kind != "uswap":
            for k in OWN_COUNTERS:
                r[k] = r[f"k_{k}"]
        if c.is_kernel:
            r["peak"], oom = self.kernel_after(log)
            # Its total: the cgroup's peak, and the peak of a pool the
            # cgroup is not charged for (sampled into "total").
            pool = r["total"] if r["total"] != "-" else 0
            r["total"] = int(r["peak"]) + int(pool) if str(r["peak"]).isdigit() else "-"
            return oom, ""
        if c.kind == "uswap" and os.access(binary_of(self.o, c), os.X_OK):
            s = UswapStats(f"{log}.stats.json")
            if not s.present:
                return "0", "no stats file"
            for k in OWN_COUNTERS:
                r[k] = s.get(k)
            r["peak"], r["swaps"] = s.get("resident_peak"), s.swaps()
            # Its total: the workload process's peak RSS (its resident
            # pages, the pool, uswap's own), the kernel's figure for it.
            rss = s.get("rss_peak_kib")
            r["total"] = int(rss) * 1024 if rss.isdigit() else "-"
        return "0", ""

    def run_one(self, rnd, w, c):
        """One run, one line in runs.tsv."""
        o = self.o
        log = f"{o.out}/logs/{rnd}-{w}-{c.name}"
        self.clear_logs(log)
        cmd = self.command(c, f"{log}.stats.json", self.wl.argv(w, f"{log}.hist", c.thp))
        # redis: only the server runs under the configuration; bench/redisbench
        # starts it with its own options, loads it and runs its client.
        if is_redis(w):
            cmd = self.wl.redis_driver(w, c.thp) + ["--"] + cmd
        # --perf: the whole run (uswap's threads, the workload, the kernel's
        # work done on their behalf) sampled with call graphs.
        if o.perf:
            cmd = ["perf", "record", "-q", "-g", "-o", f"{log}.perf.data", "--"] + cmd
        r = dict.fromkeys(RUNS_COLUMNS, "-")
        r.update(round=rnd, workload=w, config=c.name)
        note = self.set_up(c)
        setup_ok = not note
        r["load1"], r["busy"] = loadavg1(), f"{self.busy:.2f}"
        with open(f"{log}.cmd", "w") as f:
            f.write(" ".join(cmd) + "\n")
        if not setup_ok or (c.kind == "uswap" and not os.access(binary_of(o, c), os.X_OK)):
            rc, r["cpu_tree"] = (1, "-") if not setup_ok else (127, "-")
            note = note or f"missing {binary_of(o, c)}"
            for ext in ("out", "err"):
                open(f"{log}.{ext}", "w").close()
        else:
            sampler = PoolSampler(self.m) if self.m.pool_uncharged(c.kind) else None
            rc, r["cpu_tree"] = self.execute(cmd, log, r)
            if sampler:
                r["total"] = sampler.stop()
        if o.perf and os.path.exists(f"{log}.perf.data") and \
                os.path.getsize(f"{log}.perf.data") > 0:
            self.perf_report(log)
        oom, stats_note = self.own_counters(c, log, r)
        line = parse.result_line(f"{log}.out")
        if rc == 0 and line is not None:
            r["status"] = "ok"
            for k in RESULT_KEYS:
                r[k] = line.get(k, "-")
            # pmbench counts 4 KiB per access, as usemem does per page.
            if r["bytes"] == "-" and "accesses" in line:
                r["bytes"] = int(line["accesses"]) * 4096
        else:
            r["status"] = "fail"
            note = self.failure_note(note, rc, oom, line, setup_ok, f"{log}.err")
        if stats_note:
            note = join_note(note, stats_note)
        r["note"] = note or "-"
        with open(f"{log}.cputree", "w") as f:
            f.write(f"{r['cpu_tree']}\n")
        with open(self.runs_tsv, "a") as f:
            f.write(tsv_line(r[k] for k in RUNS_COLUMNS))
        self.progress(r)

    def failure_note(self, note, rc, oom, line, setup_ok, err):
        """Why a run failed: the timeout or the OOM killer, the exit status
        and the end of its stderr."""
        t = self.o.timeout
        if rc == 124:
            note = join_note(note, f"timeout after {t}s")
        elif rc == 137:
            note = join_note(note, "killed by the cgroup's OOM killer" if oom != "0"
                             else f"killed (timeout after {t}s)")
        elif rc == 127 and not note:
            note = "not found"
        if oom != "0":
            note = join_note(note, f"oom_kill {oom}")
        if line is None and rc == 0:
            note = join_note(note, "no result line")
        if setup_ok:
            note = join_note(note, f"exit {rc}")
        tail = err_tail(err)
        return f"{note}: {tail}" if tail else note

    def perf_report(self, log):
        with open(f"{log}.perf.txt", "w") as f:
            subprocess.run(["perf", "report", "-i", f"{log}.perf.data", "--stdio",
                            "--no-children", "--sort", "comm,dso,sym", "-g", "none",
                            "--percent-limit", "0.05"], stdout=f, stderr=subprocess.DEVNULL)
        remove(f"{log}.perf.data")
        remove(f"{log}.perf.data.old")

    def progress(self, r):
        if r["status"] != "ok":
            say(f"  [{r['round']}] {r['workload']} {r['config']}: FAILED ({r['note']})")
            return
        dev = f", devices {r['swaps']}" if r["swaps"] != "-" else ""
        say(f"  [{r['round']}] {r['workload']} {r['config']}: {r['mbps']} MB/s, {r['aps']} acc/s, "
            f"p50 {r['p50_us']} us p99 {r['p99_us']} us, cpu {r['cpu_user']}u {r['cpu_sys']}s, "
            f"load {r['load1']} busy {r['busy']}, pswpout {r['pswpout']} pswpin {r['pswpin']} "
            f"zswpout {r['zswpout']} zswpwb {r['zswpwb']} majflt {r['pgmajfault']}, "
            f"ipis {r['ipi_call']}+{r['ipi_resched']}{dev}")

    # ------------------------------------------------------------ pools

    def pool_one(self, c):
        """poolfill under c, holding its data while the pool is read; one
        line in pool.tsv.  usemem unmaps its region before it exits, so
        every pool is empty by then: poolfill keeps it full until told."""
        o, m = self.o, self.m
        log = f"{o.out}/logs/pool-{c.name}"
        self.clear_logs(log)
        remove(m.hold)
        p = dict.fromkeys(POOL_COLUMNS, "-")
        p["config"] = c.name
        cmd = self.command(c, f"{log}.stats.json",
                           [o.poolfill, "--size", str(o.size_b), "--data", o.data, "--hold",
                            m.hold, "--hold-timeout", str(o.timeout)])
        with open(f"{log}.cmd", "w") as f:
            f.write(" ".join(cmd) + "\n")
        sync_drop_caches()
        notes, rc, held = [], 1, False
        try:
            if c.is_kernel:
                m.setup(c.kind, c.comp)
        except SetupError as e:
            notes.append(f"setup: {e}")
        else:
            rc, held = self.hold_and_read(c, cmd, log, p)
        if c.is_kernel:
            with open(f"{log}.memory.stat", "w") as f:
                f.write(m.cg_memory_stat())
            p["peak"] = m.cg_peak()
            m.teardown()
            # What the configuration used in all: the cgroup's peak, plus a
            # pool the cgroup is not charged for (zram always; the kernel's
            # zswap on cgroup v1, where only v2 charges it).
            p["footprint"] = p["peak"]
            if p["pool_bytes"] != "-" and (c.kind == "zram" or m.cg_ver == 1):
                p["footprint"] = int(p["peak"]) + int(p["pool_bytes"])
        if c.kind == "uswap":
            self.read_uswap_pool(p, log, notes)
        if rc != 0 or not held:
            if not held and not notes:
                notes.append("never held its data")
            if rc != 0:
                notes.append(f"exit {rc}")
            tail = err_tail(f"{log}.err")
            if tail:
                notes[-1] += f": {tail}"
        p["note"] = "; ".join(notes) or "-"
        with open(self.pool_tsv, "a") as f:
            f.write(tsv_line(p[k] for k in POOL_COLUMNS))
        say(f"  [pool] {c.name}: stored {p['stored_pages']} pages ({p['same_filled_pages']} "
            f"same-filled), pool {p['pool_bytes']} bytes, compressed {p['compressed_bytes']} "
            f"bytes" + (f"; {p['note']}" if notes else ""))

    def hold_and_read(self, c, cmd, log, p):
        """Run poolfill; while it holds its data, read the kernel's pool and
        counters (into p); then let it go.  Returns its exit status and
        whether it held its data."""
        m, keys = self.m, ("zswpout", "zswpwb", "swpout_zero")
        v0 = probe.vmstat(keys)
        proc = start(cmd, self.o.timeout, f"{log}.out", f"{log}.err")
        m.running = proc
        deadline = time.monotonic() + self.o.timeout
        while not os.path.exists(m.hold) and proc.poll() is None and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        held = os.path.exists(m.hold)
        if held:
            self.read_kernel_pool(c, p, log)
            d = probe.delta(v0, probe.vmstat(keys))
        remove(m.hold)
        rc = self.wait(proc)
        if c.is_kernel and held:
            p["swpout_zero"] = d[2]
            if c.kind == "kzswap":
                p["zswpout"] = d[0]
                if p["zswpwb"] == "-":
                    p["zswpwb"] = d[1]
        return rc, held

    def read_kernel_pool(self, c, p, log):
        """The kernel's pool while poolfill holds the data."""
        m = self.m
        if c.kind == "kzswap":
            (p["stored_pages"], p["pool_bytes"], p["zswpwb"], p["reject_compress_poor"],
             p["stored_raw"], p["source"]) = m.kzswap_pool()
            dump = m.kzswap_debugfs_dump()
            if dump is not None:
                with open(f"{log}.debugfs", "w") as f:
                    f.write(dump)
        elif c.kind == "zram":
            (p["stored_pages"], p["same_filled_pages"], p["pool_bytes"],
             p["compressed_bytes"], p["stored_raw"]) = m.zram_pool()
            shutil.copy(f"/sys/block/zram{m.zram_id}/mm_stat", f"{log}.mm_stat")
            p["source"] = "mm_stat"

    @staticmethod
    def read_uswap_pool(p, log, notes):
        """uswap's pool from its --stats (written at exit, with the region,
        and so the pool, still full)."""
        s = UswapStats(f"{log}.stats.json")
        if not s.present:
            notes.append("no stats file")
            return
        for col, key in (("stored_pages", "zswap_stored_pages"),
                         ("same_filled_pages", "zswap_same_filled_pages"),
                         ("pool_bytes", "zswap_pool_total_size"),
                         ("compressed_bytes", "zswap_compressed_bytes"),
                         ("zswpout", "zswpout"), ("zswpwb", "zswpwb"),
                         ("reject_compress_poor", "zswap_reject_compress_poor"),
                         ("reject_pool_limit", "zswap_reject_pool_limit"),
                         ("peak", "resident_peak")):
            p[col] = s.get(key)
        # With a swap file behind it, uswap's pool stores nothing raw; it
        # charges its pool to the budget, so the peak has it.
        p["stored_raw"], p["footprint"], p["source"] = 0, p["peak"], "stats"


def join_note(note, more):
    """Notes are joined with '; '."""
    return f"{note}; {more}" if note else more


def err_tail(path):
    """The last two lines of a run's stderr on one line, at most 160
    characters, for the note of a failed run."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines(keepends=True)
    except OSError:
        return ""
    text = "".join(lines[-2:]).replace("\t", " ").replace("\n", " ").rstrip(" ")
    return text[:160]


# ---------------------------------------------------------------- main

def prepare(o, cfgs, m):
    """The kernel side, before any run: cgroup, zswap off, the swap file,
    what the kernel offers, debugfs."""
    m.detect_cgroup()
    others = m.other_swaps()
    if others:
        say(f"{PROG}: warning: other swap devices are active ({' '.join(others)} ); the "
            "kernel runs may use them too")
    m.zswap_save()
    try:
        m.zswap_off()
    except SetupError as e:
        raise Fatal(f"{PROG}: cannot disable zswap: {e}")
    m.make_swapfile()
    cfgs.probe(m)
    if not cfgs.runnable:
        raise Fatal(f"{PROG}: no configuration can run here")
    cfgs.set_references()
    if o.pool_table and any(c.kind == "kzswap" for c in cfgs.runnable):
        if not m.debugfs_mount():
            say(f"{PROG}: cannot mount debugfs; the kernel's zswap pool is read from "
                "/proc/meminfo")


def measure(o, cfgs, m):
    """The rounds, then the compression phase."""
    run = Runner(o, cfgs, m)
    with open(run.runs_tsv, "w") as f:
        f.write(tsv_line(RUNS_COLUMNS))
    names = " ".join(c.name for c in cfgs.runnable)
    say(f"{PROG}: {' '.join(o.workloads)}; size {o.size} ({o.size_b}), budget {o.budget} "
        f"({o.budget_b}), {o.rounds} rounds")
    say(f"{PROG}: configurations: {names}; cgroup v{m.cg_ver} at {m.cg}; swap dir "
        f"{o.swap_dir}; logs {o.out}")
    for c in cfgs.all:
        if c.unavailable:
            say(f"{PROG}: {c.name} unavailable: {c.unavailable}")
        if c.stands_in_for:
            say(f"{PROG}: {c.name} stands in for kernel-zswap-{c.stands_in_for}")
    for rnd in range(1, o.rounds + 1):
        for w in o.workloads:
            for c in cfgs.runnable:
                if cfgs.applies(w, c, o.seq_folios, o.rand_folios):
                    run.run_one(rnd, w, c)
    with open(run.pool_tsv, "w") as f:
        f.write(tsv_line(POOL_COLUMNS))
    if o.pool_table:
        say(f"{PROG}: compression: poolfill --size {o.size_b} --data {o.data} under each "
            "configuration with a pool")
        for c in cfgs.runnable:
            if (c.kind == "uswap" and c.comp) or (c.kind in ("kzswap", "zram") and not c.thp):
                run.pool_one(c)


def restore(m):
    """Run the clean-up to its end whatever signals arrive: they are ignored
    while it runs, and one caught before they are (or as they are restored)
    starts it again, which is harmless: it undoes only what is left."""
    while True:
        try:
            with uninterrupted():
                m.cleanup()
            return
        except Interrupted:
            continue


def main(argv):
    try:
        return run(argv)
    except Interrupted:
        # Before the machine is touched, or after it is restored.
        return 130
    finally:
        block_signals()


def run(argv):
    raise_on_signals()
    try:
        o = Options(argv)
        cfgs = ConfigSet(o.configs, o.folios, o.zswap_units, o.thp, o.ceiling,
                         bool(o.uswap_base))
    except Fatal as e:
        print(e.msg, file=sys.stderr)
        return e.status
    require_root(PROG, "cgroup memory limit, swapon, zswap, zram, drop_caches")
    o.has_pool = any(c.has_pool for c in cfgs.all)
    if not o.has_pool:
        o.pool_table = False
    m = Machine(PROG, o.swap_dir, o.size_b, o.budget_b, o.cg_want, o.zswap_max,
                o.zswap_accept, None)
    try:
        m.lock()
        o.out = o.out or f"{ROOT}/build/bench/compare-{time.strftime('%Y%m%d-%H%M%S')}"
        try:
            os.makedirs(f"{o.out}/logs", exist_ok=True)
            os.makedirs(f"{o.out}/bin", exist_ok=True)
        except OSError:
            raise Fatal(f"{PROG}: cannot create {o.out}")
        pin_binaries(o, o.has_pool)
    except Fatal as e:
        print(e.msg, file=sys.stderr)
        return e.status
    o.uswap_version = probe.version_of(o.uswap)
    # "Redis server v=7.0.15 sha=..." as "7.0.15".
    o.redis_version = next((x[2:] for x in probe.version_of(o.redis_server).split()
                            if x.startswith("v=")), "?") \
        if any(is_redis(w) for w in o.workloads) else ""
    m.hold = f"{o.out}/.hold"
    m.dev_files = [dev_path(o.swap_dir, i) for i in range(15)]
    status = 0
    o.redis_cluster = None
    try:
        if any(c.remote for c in cfgs.runnable):
            o.redis_cluster = Cluster(o.redis_server).start()
            say(f"{PROG}: a Redis Cluster on loopback for uswap-redis: {o.redis_cluster.seeds}")
        prepare(o, cfgs, m)
        measure(o, cfgs, m)
    except Interrupted:
        say(f"{PROG}: interrupted; restoring the machine")
        status = 130
    except Fatal as e:
        if e.msg:
            say(e.msg)
        status = e.status
    finally:
        if o.redis_cluster:
            o.redis_cluster.stop()
        restore(m)
    if status:
        return status
    tables.write(o, cfgs, m.cg_ver)
    return 0
