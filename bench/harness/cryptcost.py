# SPDX-License-Identifier: MIT
"""bench/crypt-cost: what --encrypt costs (and --verify off saves), side by
side in one run.  usemem walks twice the budget in order, writing
(seq-write: every pass writes every page) and reading (seq-read: pass 1
writes untimed, the later passes read), under `uswap run` with one swap
file and no compressed pool, in three configurations:

  verify    the default: a crc32c per slot, checked on every read
  nocrc     --verify off: no checksum at all
  encrypt   --encrypt on: XChaCha20-Poly1305 per slot (no crc32c: the
            tag is the check, whatever --verify says)

Rounds interleave the configurations (the order rotates each round), so
that the machine's drift falls on all of them alike.  Prints, per
workload and configuration, the median MB/s and CPU seconds (usemem's:
user + system of the whole process, uswap's threads included) and two
ratios to "verify": of the medians, and the median of the per-round
ratios.  Each run's --stats is checked: pages went to the device, and
with encrypt every one of them was encrypted.

Usage: bench/crypt-cost [--rounds N] [--max SIZE] [--passes K]
                        [--folio SIZE] [--swap-dir DIR] [--build DIR]
                        [--uswap PATH] [--usemem PATH] [--out DIR]
Defaults: 5 rounds, --max 64M (usemem --size: twice that), 3 passes,
64K folios, $TMPDIR or /tmp, build/ (--build DIR: DIR/uswap and
DIR/bench/usemem; --uswap and --usemem name each binary instead, as
bench/suite does with its copies).  Needs build/uswap and
build/bench/usemem (make).  Some 2 to 4 minutes with the defaults,
depending on the load.

--out DIR also keeps the figures, for bench/report (the `crypt` step of
bench/suite):
  DIR/rounds.tsv   one line per run, written as the runs go: round,
                   place in the round, workload, config, usemem's mbps,
                   secs, bytes, cpu_user, cpu_sys, uswap's pswpout,
                   pswpin and swap_encrypt, the 1-minute load average at
                   the start of the run
  DIR/summary.tsv  the printed table, one line per workload and config
                   (medians, min and max, both ratios, the paired
                   ratios' range, CPU and its ratio)
  DIR/params.txt   key=value: the options, sizes, binaries (version,
                   checksum), machine, load at start and end, date
  DIR/logs/        each run's --stats (ROUND-WORKLOAD-CONFIG.stats.json)
Exit status: 0 done, 1 a run failed or its --stats was wrong, 2 bad
arguments or missing binaries.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from . import parse, probe
from .parse import num, read_kv, read_tsv
from .stats import median, paired, span
from .util import ROOT, loadavg1, loadavg3, read_text

CONFIGS = ("verify", "nocrc", "encrypt")
FLAGS = {"verify": ["--verify", "on", "--encrypt", "off"],
         "nocrc": ["--verify", "off", "--encrypt", "off"],
         "encrypt": ["--verify", "on", "--encrypt", "on"]}
WORKLOADS = ("seq-write", "seq-read")
ROUND_COLUMNS = ("round", "place", "workload", "config", "mbps", "secs", "bytes", "cpu_user",
                 "cpu_sys", "pswpout", "pswpin", "swap_encrypt", "load1")
SUMMARY_COLUMNS = ("workload", "config", "runs", "mbps", "mbps_min", "mbps_max",
                   "ratio_medians", "ratio_paired", "ratio_paired_min", "ratio_paired_max",
                   "cpu_s", "cpu_ratio")


class Usage(Exception):
    pass


def size_bytes(text):
    """64M, 1.5G or a plain number of bytes (K, M, G: powers of 1024)."""
    shift = {"K": 10, "M": 20, "G": 30}.get(text[-1].upper())
    return int(float(text[:-1]) * (1 << shift)) if shift else int(text)


def parse_args(argv):
    a = {"rounds": "5", "max": "64M", "passes": "3", "folio": "64K",
         "swap-dir": os.environ.get("TMPDIR") or "/tmp", "build": "build", "uswap": "",
         "usemem": "", "out": ""}
    i = 0
    while i < len(argv):
        if argv[i] in ("-h", "--help"):
            sys.stdout.write(__doc__)
            sys.exit(0)
        if i + 1 >= len(argv):
            raise Usage(f"crypt-cost: {argv[i]}: missing value")
        key = argv[i][2:] if argv[i].startswith("--") else None
        if key not in a:
            raise Usage(f"crypt-cost: unknown option {argv[i]}")
        a[key] = argv[i + 1]
        i += 2
    if not re.match(r"^[1-9][0-9]*$", a["rounds"]):
        raise Usage(f"crypt-cost: --rounds '{a['rounds']}': expected a number >= 1")
    if not re.match(r"^[1-9][0-9]*$", a["passes"]):
        raise Usage(f"crypt-cost: --passes '{a['passes']}': expected a number >= 1")
    if not re.match(r"^[0-9]+(\.[0-9]+)?[KMGkmg]?$", a["max"]):
        raise Usage(f"crypt-cost: --max '{a['max']}': expected a size (64M)")
    a["uswap"] = a["uswap"] or f"{a['build']}/uswap"
    a["usemem"] = a["usemem"] or f"{a['build']}/bench/usemem"
    for b in (a["uswap"], a["usemem"]):
        if not os.access(b, os.X_OK):
            raise Usage(f"crypt-cost: {b} is not built (make)")
    return a


def check_stats(path, config):
    """The run's --stats: pages went to the device, and encrypted exactly
    when asked.  Returns (pswpout, pswpin, swap_encrypt) or raises."""
    v = (parse.load_json(path) or {})["vmstat"]
    if not v["pswpout"] > 0:
        raise ValueError("nothing went to the device")
    if config == "encrypt" and not v["swap_encrypt"] >= v["pswpout"]:
        raise ValueError("pages went out in plaintext")
    if config != "encrypt" and v["swap_encrypt"] != 0:
        raise ValueError("encrypted without --encrypt")
    return v["pswpout"], v["pswpin"], v["swap_encrypt"]


def params_lines(a, args, size):
    md5 = hashlib.md5(open(a["uswap"], "rb").read()).hexdigest()[:12]
    return [f"date={time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            "command=bench/crypt-cost" + (f" {' '.join(args)}" if args else ""),
            f"rounds={a['rounds']}", f"max={a['max']}", f"size={size}", f"passes={a['passes']}",
            f"folio={a['folio']}", f"swap_dir={a['swap-dir']}",
            f"swap_dir_fs={probe.fs_of(a['swap-dir'])}",
            f"uswap={probe.version_of(a['uswap'])}, md5 {md5}", f"usemem={a['usemem']}",
            f"nproc={probe.nproc()}", f"cpu={probe.cpu_model()}", f"load_start={loadavg3()}"]


def run_one(a, tmp, size, r, place, w, c, res, out):
    """One run: `uswap run` with c's flags around usemem; its line appended
    to rounds.tsv.  False when it or its --stats failed (said on stdout)."""
    passes = int(a["passes"])
    wargs = ["--size", str(size), "--passes", str(passes)] if w == "seq-write" else \
        ["--size", str(size), "--read", "--passes", str(passes + 1)]
    load = loadavg1()
    stats = os.path.join(tmp, "s.json")
    with open(os.path.join(tmp, "err"), "w") as err:
        p = subprocess.run([a["uswap"], "run", "--max", a["max"], "--folio", a["folio"],
                            "--swap-dir", a["swap-dir"]] + FLAGS[c] +
                           ["--stats", stats, "--", a["usemem"]] + wargs,
                           stdout=subprocess.PIPE, stderr=err, text=True)
    errtext = read_text(os.path.join(tmp, "err")) or ""
    if p.returncode != 0:
        print(f"crypt-cost: {c} {w} failed:\n{errtext}", end="")
        return False
    if out:
        shutil.copy(stats, f"{out}/logs/{r}-{w}-{c}.stats.json")
    try:
        counts = check_stats(stats, c)
    except (ValueError, KeyError, TypeError) as e:
        print(f"crypt-cost: {c} {w}: its --stats is wrong ({e})\n{errtext}", end="")
        return False
    line = p.stdout.strip()
    kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
    try:
        fields = [kv[k] for k in ("mbps", "secs", "bytes", "cpu_user", "cpu_sys")]
    except KeyError:
        print(f"crypt-cost: {c} {w}: cannot read usemem's line: {line}")
        return False
    with open(res, "a") as f:
        f.write(parse.tsv_line([r, place, w, c] + fields + list(counts) + [load]))
    shown = "".join(f"{k}={kv[k]} " for k in ("mbps", "cpu_user", "cpu_sys"))
    print("  round %d %-9s %-8s %s" % (r, w, c, shown), flush=True)
    return True


class CryptRounds:
    """What crypt-cost --out DIR keeps (rounds.tsv, one line per run;
    params.txt), for its own table and for the report's crypt step.  Empty
    when there is no such directory."""

    def __init__(self, path):
        self.path = path
        self.params = read_kv(os.path.join(path, "params.txt"))
        self.runs = []
        for r in read_tsv(os.path.join(path, "rounds.tsv")):
            try:
                r["round"] = int(r["round"])
            except (KeyError, ValueError):
                continue
            cu, cs = num(r.get("cpu_user")), num(r.get("cpu_sys"))
            r["mbps"] = num(r.get("mbps"))
            r["cpu"] = cu + cs if cu is not None and cs is not None else None
            pout, pin = num(r.get("pswpout")), num(r.get("pswpin"))
            r["pages"] = pout + pin if pout is not None and pin is not None else None
            r["load1"] = num(r.get("load1"))
            self.runs.append(r)
        self.workloads = list(dict.fromkeys(r["workload"] for r in self.runs))

    def by_round(self, workload, config, key):
        return {r["round"]: r[key] for r in self.runs
                if r["workload"] == workload and r["config"] == config and r[key] is not None}

    def med(self, workload, config, key):
        return median(self.by_round(workload, config, key).values())

    def span(self, workload, config, key):
        return span(self.by_round(workload, config, key).values())

    def pair(self, workload, config, key, ref="verify"):
        return paired(self.by_round(workload, config, key), self.by_round(workload, ref, key))


def summarize(res, summary_path):
    """The table of medians and ratios to verify, from rounds.tsv."""
    cr = CryptRounds(os.path.dirname(res))
    out = []
    print()
    print("| workload | config | MB/s (median) | ratio to verify | median of paired ratios "
          "| CPU s (median) | CPU ratio |")
    print("|---|---|---|---|---|---|---|")
    for w in WORKLOADS:
        base, bcpu = cr.med(w, "verify", "mbps"), cr.med(w, "verify", "cpu")
        for c in CONFIGS:
            m, lo, hi = cr.span(w, c, "mbps")
            cpu = cr.med(w, c, "cpu")
            pr = cr.pair(w, c, "mbps")
            print(f"| {w} | {c} | {m:.1f} | {m / base:.2f} | {pr.median:.2f} | {cpu:.2f} | "
                  f"{cpu / bcpu:.2f} |")
            out.append([w, c, len(cr.by_round(w, c, "mbps")), f"{m:.1f}", f"{lo:.1f}",
                        f"{hi:.1f}", f"{m / base:.3f}", f"{pr.median:.3f}", f"{pr.lo:.3f}",
                        f"{pr.hi:.3f}", f"{cpu:.3f}", f"{cpu / bcpu:.3f}"])
    if summary_path:
        with open(summary_path, "w") as f:
            f.write(parse.tsv_line(SUMMARY_COLUMNS))
            for row in out:
                f.write(parse.tsv_line(row))


def main(argv):
    os.chdir(ROOT)
    try:
        a = parse_args(argv)
    except Usage as e:
        print(e, file=sys.stderr)
        return 2
    size = size_bytes(a["max"]) * 2
    out = a["out"]
    t0 = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if out:
                try:
                    os.makedirs(f"{out}/logs", exist_ok=True)
                except OSError:
                    print(f"crypt-cost: --out '{out}': cannot create it", file=sys.stderr)
                    return 2
                res = f"{out}/rounds.tsv"
                with open(f"{out}/params.txt", "w") as f:
                    f.write("".join(x + "\n" for x in params_lines(a, argv, size)))
            else:
                res = os.path.join(tmp, "rounds.tsv")
            with open(res, "w") as f:
                f.write(parse.tsv_line(ROUND_COLUMNS))
            print(f"crypt-cost: usemem --size {size} (2 x --max {a['max']}), {a['passes']} timed "
                  f"passes, folio {a['folio']}, swap file in {a['swap-dir']}, no pool, "
                  f"{a['rounds']} rounds")
            print(f"machine: {probe.nproc()} CPUs, load {loadavg3()}, {probe.cpu_model()}",
                  flush=True)
            for r in range(1, int(a["rounds"]) + 1):
                k = (r - 1) % 3
                order = CONFIGS[k:] + CONFIGS[:k]
                for w in WORKLOADS:
                    for place, c in enumerate(order, 1):
                        if not run_one(a, tmp, size, r, place, w, c, res, out):
                            return 1
            if out:
                with open(f"{out}/params.txt", "a") as f:
                    f.write(f"load_end={loadavg3()}\nseconds={int(time.monotonic() - t0)}\n")
            summarize(res, f"{out}/summary.tsv" if out else None)
    except KeyboardInterrupt:
        return 130
    if out:
        print(f"crypt-cost: figures in {out} (rounds.tsv, summary.tsv, params.txt, logs/)")
    return 0
