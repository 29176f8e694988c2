# SPDX-License-Identifier: MIT
"""The benchmark harness behind bench/compare, bench/suite, bench/report,
bench/crypt-cost and bench/redisbench (Python 3, standard library only).

One module per concern:

    util      messages, exit statuses, signals, sizes, small file helpers
    probe     read-only readings of the machine (/proc, /sys)
    machine   the kernel side: cgroup, swap file, zswap, zram, debugfs,
              and putting every one of them back as it was
    configs   configuration names, what each one is, and their references
    workload  the command lines of a run and running one under a timeout
    parse     reading what the tools write: workload lines, uswap's --stats,
              runs.tsv, histograms, perf reports, key=value files
    stats     medians, ranges and ratios taken pair by pair, round by round:
              the one place where a ratio is computed
    compare   bench/compare: the rounds and the compression phase
    tables    bench/compare's summaries: TSV, Markdown, JSON and the text table
    cryptcost bench/crypt-cost
    redisbench bench/redisbench: redis-server under a configuration,
              loaded and driven by redis-benchmark (compare's redis-*)
    suite     bench/suite
    report    bench/report: docs/benchmarks.md
    plot      gnuplot SVGs for the report
"""
