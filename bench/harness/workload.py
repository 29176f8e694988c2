# SPDX-License-Identifier: MIT
"""The command line of a run (the workload, and uswap or the cgroup around
it) and running it under a timeout with its CPU time measured."""

import os
import resource
import subprocess
import sys

from .configs import DEV_LETTERS, DEV_PRIO, is_redis
from .util import ROOT


class Workloads:
    """The workload programs and the options every configuration shares."""

    def __init__(self, o):
        self.o = o

    def argv(self, workload, hist, hugepage):
        """The workload's program and arguments (usemem or pmbench), its
        latency histogram going to hist; for redis, the server alone (what
        runs under the configuration: see redis_driver)."""
        o = self.o
        if is_redis(workload):
            return [o.redis_server]
        if workload.startswith("pmbench-"):
            a = [o.pmbench, "--size", str(o.size_b), "--pattern", workload[len("pmbench-"):],
                 "--read", o.pm_read, "--duration", o.pm_duration, "--threads", str(o.threads),
                 "--data", o.data, "--hist", hist]
            if workload == "pmbench-zipf":
                a += ["--theta", o.pm_theta]
        else:
            order, mode = workload.split("-", 1)
            a = [o.usemem, "--size", str(o.size_b), f"--{order}", f"--{mode}", "--data", o.data,
                 "--threads", str(o.threads), "--procs", str(o.procs), "--latency",
                 "--hist", hist]
            if o.passes:
                a += ["--passes", o.passes]
        if o.verify:
            a.append("--verify")
        if hugepage:
            a.append("--hugepage")
        return a

    def redis_driver(self, workload, hugepage):
        """bench/redisbench for redis-get or redis-set, to be followed by
        '--' and the server's command line under the configuration: the
        server alone is in the budget, its clients are not."""
        o = self.o
        a = [sys.executable, f"{ROOT}/bench/redisbench", "--test", workload[len("redis-"):],
             "--keys", str(redis_keys(o.size_b)), "--value-size", str(REDIS_VALUE), "--requests",
             str(o.redis_requests), "--clients", str(o.redis_clients), "--pipeline",
             str(o.redis_pipeline), "--benchmark", o.redis_benchmark]
        if hugepage:
            a.append("--hugepage")
        return a


# redis: one key per KiB of --size, each a value of REDIS_VALUE bytes (the
# server's memory is about 1.15 x SIZE with its keys and tables).
REDIS_VALUE = 1000


def redis_keys(size):
    return max(1, size // 1024)


def dev_path(swap_dir, i):
    """uswap-Ndev's i-th file: absent when uswap starts, so that uswap
    creates it (preallocated) and unlinks it at once."""
    return os.path.join(swap_dir, f"uswap-bench.{DEV_LETTERS[i]}")


def uswap_comp_arg(comp, zstd_level):
    """uswap's --zswap value for a compressor."""
    return f"zstd:{zstd_level}" if comp == "zstd" else comp


def uswap_argv(o, c, stats, prog_argv):
    """prog_argv under `uswap run` as configuration c asks."""
    a = [o.uswap_base if c.base else o.uswap, "run", "--max", str(o.budget_b), "--folio", c.folio, "--swap-dir",
         o.swap_dir, "--stats", stats]
    for i in range(c.devs):
        a += ["--swap", f"{dev_path(o.swap_dir, i)},prio={DEV_PRIO}"]
    if c.remote:
        a += ["--swap", f"redis://{o.redis_cluster.seeds}"]
    if c.comp:
        a += ["--zswap", uswap_comp_arg(c.comp, o.zstd_level), "--zswap-max", str(o.zswap_max),
              "--zswap-accept", str(o.zswap_accept)]
        if c.unit:
            a += ["--zswap-unit", c.unit]
        if o.zswap_threads:
            a += ["--zswap-threads", o.zswap_threads]
        # After --zswap-max above: the last one given counts.
        if c.v1:
            a += ["--zswap-charge", "off", "--zswap-incompressible", "store",
                  "--zswap-max", "100", "--high", str(o.budget_b)]
    return a + ["--"] + prog_argv


def children_cpu():
    """User + system CPU seconds of every child waited for so far (and of
    their waited-for descendants): the whole process tree of a run,
    whatever shape it took."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def exit_status(returncode):
    """A shell's view of an exit status: 128 + N for death by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def start(argv, timeout, out, err):
    """Start argv under `timeout -k 10 TIMEOUT` (124 on timeout, 137 when
    it had to be killed), its output to the files out and err.  timeout
    runs in its own process group, so a Ctrl-C reaches us, not it: the
    clean-up stops it."""
    with open(out, "w") as fo, open(err, "w") as fe:
        return subprocess.Popen(["timeout", "-k", "10", str(timeout)] + argv,
                                stdin=subprocess.DEVNULL, stdout=fo, stderr=fe)
