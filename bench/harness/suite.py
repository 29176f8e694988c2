# SPDX-License-Identifier: MIT
"""bench/suite: what `make bench` runs.  It measures uswap against the
kernel's swap, zswap and zram on this machine with bench/compare, in a few
steps of its own (each one invocation of compare, every configuration of a
step interleaved with the others, round after round), and then writes the
report, docs/benchmarks.md with its plots in docs/bench/ (report.py).

The steps (all with mixed data, the same budget for uswap's --max and the
kernel's cgroup limit, three rounds):

  main         512M under 256M (twice the budget): sequential write and
               read (usemem) and skewed random access (pmbench, Zipf 0.99,
               half writes); uswap with 4K, 64K and 2M folios, with and
               without its lz4 pool (also as the kernel's zswap is under
               cgroup v1: uswap-lz4-v1), against the kernel's swap file
               (THP off and on), its zswap (lzo-rle: it has no lz4), zram
               (lz4) and the unlimited ceiling
  compressors  256M under 128M, sequential write: every compressor of uswap
               and of the kernel, uswap's two pool units, one swap file
               against two; then the compression phase
  crypt        bench/crypt-cost (not compare), 128M under 64M: uswap alone
               with its default crc32c per slot, --verify off and
               --encrypt on, 5 rounds
  sweep-seq-R, sweep-pm-R
               the working set at R times a fixed budget of 64M, R from 1.5
               to 8: sequential write, and skewed random access
  threads-N, procs-N, pmthreads-N
               256M under 128M with N threads or N processes
  remote-N     256M under 128M with N threads (1, 2, 4): sequential write
               and skewed random access, uswap with a Redis Cluster on
               loopback as its swap device (uswap-redis: 3 masters, started
               and stopped by compare) against its swap file and the
               kernel's
  perf         one profiled run per configuration (perf record -g)

Each step runs only the configurations that tell something for its
workload (uswap's 64K folios for sequential work, its 4K folios with the
lz4 pool for random access), so that the whole suite runs in well under an
hour on a 2-CPU machine.

Everything is kept in build/bench/suite-DATE: each step's compare
directory, its JSON (STEP.json) and its log (STEP.log); crypt/ and
crypt.log; steps.tsv, machine.txt, and bin/ (uswap and the workloads,
copied once at the start and given to every step).  The report is made
from that directory alone, so `bench/report DIR` can redo it.

Exit status: 0 done, 1 a step or the report failed, 2 bad arguments or not
root, 130 interrupted.
"""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from . import probe, report
from .util import ROOT, loadavg3, require_root, say as _say, words

PROG = "bench/suite"
STEPS = ("main", "redis", "compressors", "crypt", "sweep", "scaling", "remote", "perf")
CRYPT_ROUNDS = 5
KERNEL = "kernel-swapfile kernel-zswap-lzo-rle zram-lz4"

USAGE = f"""usage: {PROG} [--out DIR] [--docs DIR] [--steps "S ..."] [--rounds R] [--mini]
Runs the benchmark steps with bench/compare (crypt: bench/crypt-cost) and
writes DOCS/benchmarks.md and DOCS/bench/*.svg with bench/report.
  --out DIR      where the runs go (default build/bench/suite-DATE)
  --docs DIR     where the report goes (default docs)
  --steps "S ..." main, redis, compressors, crypt, sweep, scaling, remote, perf
                 (default all)
  --rounds R     rounds per compare step (default 3; crypt: {CRYPT_ROUNDS})
  --wait-quiet S compare --wait-quiet (default 2)
  --mini         tiny sizes and short runs, to try the pipeline (not for
                 the report that is kept)
"""


def say(msg):
    _say(f"{PROG}: {msg}")


class Options:
    def __init__(self, argv):
        self.argv = argv
        self.out, self.docs = "", f"{ROOT}/docs"
        self.steps, self.rounds, self.wait_quiet, self.mini = list(STEPS), "3", "2", False
        i = 0
        while i < len(argv):
            if argv[i] in ("-h", "--help"):
                sys.stdout.write(USAGE)
                sys.exit(0)
            if argv[i] == "--mini":
                self.mini = True
                i += 1
                continue
            if i + 1 >= len(argv):
                self.usage(f"{argv[i]}: missing value")
            opt, val = argv[i], argv[i + 1]
            if opt == "--out":
                self.out = val
            elif opt == "--docs":
                self.docs = val
            elif opt == "--steps":
                self.steps = words(val)
            elif opt == "--rounds":
                self.rounds = val
            elif opt == "--wait-quiet":
                self.wait_quiet = val
            else:
                self.usage(f"unknown option '{opt}' (see --help)")
            i += 2
        if not re.match(r"^[1-9][0-9]*$", self.rounds):
            self.usage(f"--rounds '{self.rounds}': expected a number >= 1")
        for s in self.steps:
            if s not in STEPS:
                self.usage(f"--steps '{s}': expected main, redis, compressors, crypt, sweep, "
                           "scaling, remote or perf")

    @staticmethod
    def usage(msg):
        print(f"{PROG}: {msg}", file=sys.stderr)
        sys.exit(2)


class Sizes:
    """The full suite, or --mini to try the pipeline in a few minutes."""

    def __init__(self, mini):
        if mini:
            self.main, self.main_budget = "128M", "64M"
            self.small, self.small_budget, self.sweep_budget = "64M", "32M", "32M"
            self.pm_main, self.pm_short, self.sweep = "1", "1", ("1.5", "4")
            self.crypt = ["--rounds", "1", "--max", "16M", "--passes", "1"]
        else:
            self.main, self.main_budget = "512M", "256M"
            self.small, self.small_budget, self.sweep_budget = "256M", "128M", "64M"
            self.pm_main, self.pm_short, self.sweep = "5", "3", ("1.5", "2", "4", "8")
            self.crypt = ["--rounds", str(CRYPT_ROUNDS), "--max", "64M", "--passes", "3"]


def ratio_size(budget, r):
    """R x a budget in MiB, as 'NM'."""
    return f"{int(int(budget[:-1]) * float(r))}M"


class Suite:
    def __init__(self, o):
        self.o = o
        self.bin = f"{o.out}/bin"
        self.failed = False
        self.child = None
        self.pin = ["--uswap", f"{self.bin}/uswap", "--usemem", f"{self.bin}/usemem",
                    "--pmbench", f"{self.bin}/pmbench", "--poolfill", f"{self.bin}/poolfill"]

    def install_gnuplot(self):
        """The plots need gnuplot; install it before anything is measured."""
        if shutil.which("gnuplot"):
            return
        say("installing gnuplot-nox (Debian) for the plots")
        with open(f"{self.o.out}/apt.log", "w") as log:
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            ok = subprocess.run(["apt-get", "update", "-qq"], stdout=log, stderr=log).returncode \
                == 0 and subprocess.run(["apt-get", "install", "-y", "-qq", "gnuplot-nox"],
                                        stdout=log, stderr=log, env=env).returncode == 0
        if not ok:
            say(f"warning: gnuplot-nox did not install (see {self.o.out}/apt.log); the report "
                "will have no plots")

    def pin_binaries(self):
        """The binaries, pinned for the whole suite: others may rebuild build/
        while it runs, and every step must measure the same uswap."""
        os.makedirs(self.bin, exist_ok=True)
        with open(f"{self.o.out}/build.log", "w") as log:
            if subprocess.run(["make", "-s", "build/uswap", "build/libuswap_preload.so",
                               "build/bench/usemem", "build/bench/pmbench",
                               "build/bench/poolfill"], cwd=ROOT, stdout=log,
                              stderr=log).returncode != 0:
                say(f"warning: make failed (see {self.o.out}/build.log); using the binaries "
                    "already in build/")
        for b in ("uswap", "libuswap_preload.so", "bench/usemem", "bench/pmbench",
                  "bench/poolfill"):
            try:
                shutil.copy(f"{ROOT}/build/{b}", f"{self.bin}/")
            except OSError:
                say(f"no build/{b}: run make first")
                sys.exit(1)

    def machine_txt(self):
        """What the report says about the machine and the run."""
        uswap = f"{ROOT}/build/uswap"
        built = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.stat(uswap).st_mtime))
        md5 = hashlib.md5(open(f"{self.bin}/uswap", "rb").read()).hexdigest()[:12]
        gp = shutil.which("gnuplot")
        gnuplot = subprocess.run([gp, "--version"], capture_output=True,
                                 text=True).stdout.strip() if gp else ""
        lines = [f"date={time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
                 "command=bench/suite" + (f" {' '.join(self.o.argv)}" if self.o.argv else ""),
                 f"nproc={probe.nproc()}", f"kernel={probe.kernel_release()}",
                 f"mem_total_kib={probe.mem_total_kib()}", f"cpu={probe.cpu_model()}",
                 f"thp={probe.thp_mode()}", f"cgroup={probe.cgroup_version()}",
                 f"swap_dir_fs={probe.fs_of(os.environ.get('TMPDIR') or '/tmp')}",
                 f"uswap={probe.version_of(self.bin + '/uswap')}, built {built}, md5 {md5}",
                 f"gnuplot={gnuplot}", f"load_start={loadavg3()}", f"rounds={self.o.rounds}",
                 f"mini={1 if self.o.mini else 0}"]
        with open(f"{self.o.out}/machine.txt", "w") as f:
            f.write("".join(x + "\n" for x in lines))

    def _forward(self, signum, frame):
        """SIGTERM or SIGHUP while a step runs: pass it on, so that the step
        restores the machine before the suite stops."""
        if self.child and self.child.poll() is None:
            self.child.send_signal(signum)

    def run_child(self, cmd, stdout, stderr):
        """Run one step's command and wait for it.  Ctrl-C reaches the step
        from the terminal; the suite does not stop it early (a step cut off
        in its clean-up would leave the machine changed), it waits for it."""
        handlers = {s: signal.signal(s, self._forward) for s in (signal.SIGTERM, signal.SIGHUP)}
        old_int = signal.signal(signal.SIGINT, lambda s, f: None)
        try:
            self.child = subprocess.Popen(cmd, cwd=ROOT, stdout=stdout, stderr=stderr)
            rc = self.child.wait()
        finally:
            self.child = None
            signal.signal(signal.SIGINT, old_int)
            for s, h in handlers.items():
                signal.signal(s, h)
        return 128 - rc if rc < 0 else rc

    def record(self, name, seconds, rc, cmd, log):
        with open(f"{self.o.out}/steps.tsv", "a") as f:
            f.write(f"{name}\t{seconds}\t{rc}\t{' '.join(cmd)}\n")
        say(f"step {name}: exit {rc} after {seconds} s")
        if rc != 0:
            self.failed = True
            with open(log, errors="replace") as f:
                sys.stderr.write("".join(f.readlines()[-3:]))

    def step(self, name, *args, rounds=None):
        """One invocation of compare, its JSON kept.  An interrupted compare
        has restored the machine; the suite stops there too."""
        o = self.o
        cmd = ["bench/compare", "--rounds", rounds or o.rounds, "--wait-quiet", o.wait_quiet,
               "--out", f"{o.out}/{name}", "--json"] + self.pin + list(args)
        say(f"step {name}: {' '.join(cmd)}")
        t = time.monotonic()
        with open(f"{o.out}/{name}.json", "w") as out, open(f"{o.out}/{name}.log", "w") as err:
            rc = self.run_child(cmd, out, err)
        self.record(name, int(time.monotonic() - t), rc, cmd, f"{o.out}/{name}.log")
        if rc == 130:
            sys.exit(130)

    def crypt_step(self, args):
        """bench/crypt-cost with the pinned uswap and usemem, its figures in
        OUT/crypt, its output in crypt.log."""
        o = self.o
        cmd = ["bench/crypt-cost", "--out", f"{o.out}/crypt", "--uswap", f"{self.bin}/uswap",
               "--usemem", f"{self.bin}/usemem"] + args
        say(f"step crypt: {' '.join(cmd)}")
        t = time.monotonic()
        with open(f"{o.out}/crypt.log", "w") as log:
            rc = self.run_child(cmd, log, subprocess.STDOUT)
        self.record("crypt", int(time.monotonic() - t), rc, cmd, f"{o.out}/crypt.log")
        if rc >= 128:
            sys.exit(rc)

    def run_steps(self):
        z = Sizes(self.o.mini)
        for s in self.o.steps:
            if s == "main":
                self.step("main", "--size", z.main, "--budget", z.main_budget, "--workload",
                          "seq-write seq-read pmbench-zipf pmbench-uniform", "--pm-duration",
                          z.pm_main,
                          "--configs", "ceiling kernel-swapfile kernel-swapfile-thp "
                          "kernel-zswap-lzo-rle zram-lz4 uswap uswap-lz4 uswap-lz4-v1",
                          "--folios", "4K 64K 2M", "--seq-folios", "4K 64K 2M", "--rand-folios",
                          "4K 64K", "--zswap-units", "folio", "--no-pool-table")
            elif s == "redis":
                # A real program: redis-server loaded at twice the budget,
                # redis-benchmark's random GETs and SETs (bench/redisbench).
                self.step("redis", "--size", z.small, "--budget", z.small_budget,
                          "--workload", "redis", "--configs",
                          "kernel-zswap-lzo-rle zram-lz4 uswap uswap-lz4-v1",
                          "--folios", "4K 64K", "--zswap-units", "folio", "--no-pool-table")
            elif s == "compressors":
                self.step("compressors", "--size", z.small, "--budget", z.small_budget,
                          "--workload", "seq-write", "--configs",
                          "kernel-swapfile kernel-zswap-lzo-rle kernel-zswap-deflate zram-lz4 "
                          "uswap uswap-2dev uswap-lz4 uswap-zstd uswap-deflate",
                          "--folios", "64K", "--zswap-units", "folio page")
            elif s == "crypt":
                self.crypt_step(z.crypt)
            elif s == "sweep":
                for r in z.sweep:
                    size = ratio_size(z.sweep_budget, r)
                    self.step(f"sweep-seq-{r}", "--size", size, "--budget", z.sweep_budget,
                              "--workload", "seq-write", "--configs", f"{KERNEL} uswap",
                              "--folios", "64K", "--no-pool-table")
                    self.step(f"sweep-pm-{r}", "--size", size, "--budget", z.sweep_budget,
                              "--workload", "pmbench-zipf", "--pm-duration", z.pm_short,
                              "--configs", f"{KERNEL} uswap-lz4", "--folios", "4K",
                              "--no-pool-table")
            elif s == "scaling":
                self.scaling(z)
            elif s == "remote":
                for n in (1, 2, 4):
                    self.step(f"remote-{n}", "--size", z.small, "--budget", z.small_budget,
                              "--workload", "seq-write pmbench-zipf", "--threads", str(n),
                              "--pm-duration", z.pm_short,
                              "--configs", "kernel-swapfile uswap uswap-redis",
                              "--folios", "4K 64K", "--rand-folios", "4K", "--no-pool-table")
            elif s == "perf":
                if not shutil.which("perf"):
                    say("no perf: the perf step is skipped")
                    continue
                self.step("perf", "--size", z.main, "--budget", z.main_budget, "--workload",
                          "seq-write pmbench-zipf", "--pm-duration", z.pm_main, "--perf",
                          "--configs", "kernel-zswap-lzo-rle zram-lz4 uswap uswap-lz4",
                          "--folios", "4K 64K", "--seq-folios", "64K", "--rand-folios", "4K",
                          "--zswap-units", "folio", "--no-pool-table", rounds="1")

    def scaling(self, z):
        seq = ("--configs", "kernel-zswap-lzo-rle zram-lz4 uswap", "--folios", "64K",
               "--no-pool-table")
        for n in (1, 2, 4):
            self.step(f"threads-{n}", "--size", z.small, "--budget", z.small_budget,
                      "--workload", "seq-write", "--threads", str(n), *seq)
        for n in (2, 4):
            self.step(f"procs-{n}", "--size", z.small, "--budget", z.small_budget,
                      "--workload", "seq-write", "--procs", str(n), *seq)
        for n in (1, 2, 4):
            self.step(f"pmthreads-{n}", "--size", z.small, "--budget", z.small_budget,
                      "--workload", "pmbench-zipf", "--threads", str(n), "--pm-duration",
                      z.pm_short, "--configs", "kernel-zswap-lzo-rle zram-lz4 uswap-lz4",
                      "--folios", "4K", "--no-pool-table")


def main(argv):
    try:
        return run(argv)
    except KeyboardInterrupt:
        say("interrupted")
        return 130


def run(argv):
    o = Options(argv)
    require_root(PROG, "bench/compare sets up cgroups, swap, zswap and zram")
    o.out = o.out or f"{ROOT}/build/bench/suite-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        os.makedirs(o.out, exist_ok=True)
    except OSError:
        return 1
    t0 = time.monotonic()
    s = Suite(o)
    s.install_gnuplot()
    s.pin_binaries()
    s.machine_txt()
    with open(f"{o.out}/steps.tsv", "w") as f:
        f.write("step\tseconds\tstatus\tcommand\n")
    s.run_steps()
    secs = int(time.monotonic() - t0)
    with open(f"{o.out}/machine.txt", "a") as f:
        f.write(f"load_end={loadavg3()}\nseconds={secs}\n")
    say(f"runs done in {secs} s; writing the report")
    if report.main([o.out, "--docs", o.docs]) != 0:
        say("the report failed")
        return 1
    say(f"report: {o.docs}/benchmarks.md ({int(time.monotonic() - t0)} s in all; runs in "
        f"{o.out})")
    return 1 if s.failed else 0
