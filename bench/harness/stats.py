# SPDX-License-Identifier: MIT
"""Medians, ranges and ratios: the one place where the bench tools compute
them, all in one way.

Absolute figures on a shared machine drift by tens of percent from run to
run; figures measured side by side do not.  So a ratio is always taken pair
by pair: per round, the configuration's figure over the reference's figure
in the same round (and the same invocation), then the median and the range
of those per-round ratios.  A median is the median of the successful runs.

The kernel's best configuration for a workload is the kernel configuration
(swap file, with or without THP, zswap, zram; never the unlimited ceiling)
with the best median figure: the highest throughput, the lowest CPU seconds
per GB or p99 latency.
"""

import statistics
from collections import namedtuple

from .configs import KERNEL_KINDS
from .parse import num

# A paired ratio: the median, min and max of the per-round ratios, and the
# ratios themselves in round order.
Ratio = namedtuple("Ratio", "median lo hi values")


def median(xs):
    """The median of the figures that are not None, or None."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def span(xs):
    """(median, min, max) of the figures that are not None, or None."""
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), min(xs), max(xs)) if xs else None


def paired(a, b):
    """The ratios a[round] / b[round] of the rounds both have (b > 0), as a
    Ratio, or None when there is no such round."""
    rs = [a[k] / b[k] for k in a if k in b and a[k] is not None
          and b[k] is not None and b[k] > 0]
    if not rs:
        return None
    return Ratio(statistics.median(rs), min(rs), max(rs), rs)


def figure(run, metric):
    """A run's figure: a derived one (tput, cpu, tree, p50, p99: see
    parse.read_runs) or any numeric column of runs.tsv."""
    v = run.get(metric)
    return num(v) if isinstance(v, str) else v


class RunTable:
    """The runs of one invocation (one runs.tsv) and the kind of each
    configuration (uswap, kernel, kzswap, zram, ceiling)."""

    def __init__(self, runs, kinds):
        self.runs = runs
        self.kind = kinds
        self.workloads = list(dict.fromkeys(r["workload"] for r in runs))
        self.configs = list(dict.fromkeys(r["config"] for r in runs))

    def is_kernel(self, config):
        return self.kind.get(config) in KERNEL_KINDS

    def all_runs(self, workload, config):
        return [r for r in self.runs if r["workload"] == workload and r["config"] == config]

    def ok(self, workload, config):
        """The successful runs of a configuration for a workload."""
        return [r for r in self.all_runs(workload, config) if r["status"] == "ok"]

    def failures(self, workload, config):
        return [r for r in self.all_runs(workload, config) if r["status"] != "ok"]

    def kernel_configs(self, workload):
        return [c for c in self.configs if self.is_kernel(c) and self.ok(workload, c)]

    def uswap_configs(self, workload):
        return [c for c in self.configs
                if self.kind.get(c) == "uswap" and self.ok(workload, c)]

    def values(self, workload, config, metric):
        vs = (figure(r, metric) for r in self.ok(workload, config))
        return [v for v in vs if v is not None]

    def by_round(self, workload, config, metric):
        """{round: figure} of the successful runs."""
        return {r["round"]: figure(r, metric) for r in self.ok(workload, config)}

    def med(self, workload, config, metric):
        return median(self.values(workload, config, metric))

    def span(self, workload, config, metric):
        return span(self.values(workload, config, metric))

    def pair(self, workload, config, ref, metric):
        """config over ref, pair by pair (a Ratio), or None."""
        if ref is None:
            return None
        return paired(self.by_round(workload, config, metric),
                      self.by_round(workload, ref, metric))

    def _best(self, configs, workload, metric, highest):
        best, bv = None, None
        for c in configs:
            v = self.med(workload, c, metric)
            if v is None:
                continue
            if bv is None or (v > bv if highest else v < bv):
                best, bv = c, v
        return best

    def best_kernel(self, workload, metric, highest):
        """The kernel configuration with the best median figure, or None."""
        return self._best(self.kernel_configs(workload), workload, metric, highest)

    def best_uswap(self, workload, metric="tput", highest=True):
        return self._best(self.uswap_configs(workload), workload, metric, highest)

    def noisy(self):
        """Runs started with half a core or more busy, and all runs."""
        busy = [num(r.get("busy")) for r in self.runs]
        return sum(1 for b in busy if b is not None and b >= 0.5), len(self.runs)
