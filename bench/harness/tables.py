# SPDX-License-Identifier: MIT
"""bench/compare's results: from runs.tsv and pool.tsv to summary.tsv,
devices-summary.tsv, pool-summary.tsv, summary.md, results.json and the
table on stdout.

Every figure comes from stats.RunTable (the medians and the pair-by-pair
ratios); this module only chooses the references and writes them out.
"""

import json
import os
import sys

from . import parse, probe, stats
from .configs import DEV_PRIO, is_redis, per_access
from .parse import Num
from .workload import REDIS_VALUE, dev_path, redis_keys


# ---------------------------------------------------------------- formats

def summary_num(x):
    """A figure in summary.tsv: as runs.tsv wrote it when it is one of the
    runs' figures, else an integer when whole, else 6 significant digits."""
    if x is None:
        return "-"
    if isinstance(x, Num):
        return x.text
    if isinstance(x, str):
        return x
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return "%.6g" % x


def fmt(x, spec):
    """printf-style: '-' stays '-'."""
    if x is None or x == "-":
        return "-"
    return spec % float(x)


def jnum(x, spec):
    """A JSON number in a given format, or null."""
    if x is None or x in ("-", ""):
        return "null"
    return spec % float(x)


def jstr(s):
    return json.dumps(s, ensure_ascii=False)


def jref(s):
    return "null" if s is None or s == "-" else jstr(s)


def jlist(text):
    """'A/B/...' (device lists) as 'A,B,...', null for '-'."""
    return ",".join("null" if x == "-" else x for x in text.split("/"))


def mib(x):
    return "-" if x is None or x == "-" else "%.1f" % (float(x) / 1048576)


def pct(x):
    return "-" if x == "-" else "%.1f%%" % (float(x) * 100)


def ratio_cell(r):
    """'1.23 (1.10-1.40)', or '-'."""
    if r is None:
        return "-"
    return f"{r.median:.2f} ({r.lo:.2f}-{r.hi:.2f})"


def ratio_fields(ref, r):
    """summary.tsv's five columns of a ratio: reference, median, min, max,
    the per-round list."""
    if r is None:
        return [ref or "-", "-", "-", "-", "-"]
    return [ref or "-", summary_num(r.median), summary_num(r.lo), summary_num(r.hi),
            ",".join("%.3f" % v for v in r.values)]


# ---------------------------------------------------------------- summaries

class Row:
    """One workload and configuration that ran: its medians and its ratios
    (stats.Ratio or None) to every reference."""


def summarize(o, cfgs, table):
    """One Row per workload and configuration that ran, in the order of
    --workload and of the configurations."""
    names = [c.name for c in cfgs.runnable]
    swref = "kernel-swapfile" if "kernel-swapfile" in names else None
    swtref = "kernel-swapfile-thp" if "kernel-swapfile-thp" in names else None
    rows = []
    for w in o.workloads:
        best = {"tput": table.best_kernel(w, "tput", True),
                "cpu": table.best_kernel(w, "cpu", False),
                "p99": table.best_kernel(w, "p99", False)}
        for c in cfgs.runnable:
            runs = table.all_runs(w, c.name)
            if runs:
                rows.append(row(w, c, runs, table, swref, swtref, best))
    return rows


def row(w, c, runs, table, swref, swtref, best):
    ok = table.ok(w, c.name)
    r = Row()
    r.w, r.c, r.label, r.n, r.runs = w, c.name, c.label, len(ok), len(runs)

    def med(metric):
        return table.med(w, c.name, metric)

    def pair(ref, metric="tput"):
        return table.pair(w, c.name, ref, metric) if ref else None

    sp = table.span(w, c.name, "mbps")
    r.mbps, r.mlo, r.mhi = sp if sp else (None, None, None)
    r.cpu, r.tree = med("cpu"), med("tree")
    r.swref, r.r_sw = swref, pair(swref)
    r.zref, r.r_z = c.ref_zswap, pair(c.ref_zswap)
    r.rref, r.r_r = c.ref_zram, pair(c.ref_zram)
    r.tref, r.r_t = swtref, pair(swtref)
    for k in ("pswpin", "pswpout", "pgmajfault", "zswpin", "zswpout", "zswpwb", "peak",
              "total", "aps", "p50_us", "p90_us", "p99_us", "p999_us"):
        setattr(r, k, med(k))
    busy = [parse.num(x["busy"]) for x in ok]
    r.noisy = sum(1 for b in busy if b is not None and b >= 0.5)
    bad = [x for x in runs if x["status"] != "ok"]
    r.note = bad[0]["note"] if bad else "-"
    r.bk, r.r_b = best["tput"], pair(best["tput"])
    r.ck, r.r_c = best["cpu"], pair(best["cpu"], "cpu")
    r.lk, r.r_l = best["p99"], pair(best["p99"], "p99")
    return r


def summary_line(r):
    """One line of summary.tsv (bench/README.md lists its columns)."""
    a = summary_num
    cols = [r.w, r.c, r.n, r.runs, a(r.mbps), a(r.mlo), a(r.mhi), a(r.cpu), a(r.tree)]
    cols += ratio_fields(r.swref, r.r_sw)[1:]
    cols += ratio_fields(r.zref, r.r_z) + ratio_fields(r.rref, r.r_r)
    cols += [a(r.pswpin), a(r.pswpout), a(r.pgmajfault), a(r.zswpin), a(r.zswpout),
             a(r.zswpwb), a(r.peak), r.noisy, r.note]
    cols += ratio_fields(r.tref, r.r_t)
    cols += [a(r.aps), a(r.p50_us), a(r.p99_us)]
    cols += ratio_fields(r.bk, r.r_b) + ratio_fields(r.ck, r.r_c) + ratio_fields(r.lk, r.r_l)
    cols += [a(r.p90_us), a(r.p999_us)]
    return "\t".join(str(x) for x in cols)


def device_summary(o, cfgs, runs):
    """uswap's devices per workload and configuration, from the "swaps" rows
    of its --stats (runs.tsv's swaps column): the median per run of each
    device's pswpout and of its share of them all, in the order the devices
    were given; with two devices or more, the spread (max - min) / max of
    their pswpout in one run (median, worst) and the runs whose spread is
    at most 10%; each device's median write latency p50 and p99 (µs).  As
    lists of strings, '/'-separated."""
    seen = {}
    for r in runs:
        if r["status"] != "ok" or r.get("swaps", "-") in ("-", "", None):
            continue
        devs = [d.split(":") for d in r["swaps"].split(",")]
        k = (r["workload"], r["config"])
        s = seen.setdefault(k, {"ndev": 0, "runs": 0, "out": {}, "share": {}, "w50": {},
                                "w99": {}, "spread": []})
        s["ndev"] = max(s["ndev"], len(devs))
        s["runs"] += 1
        outs = [float(d[0]) for d in devs]
        tot = sum(outs)
        for i, d in enumerate(devs):
            s["out"].setdefault(i, []).append(float(d[0]))
            s["share"].setdefault(i, []).append(float(d[0]) / tot if tot > 0 else 0.0)
            if len(d) > 2 and d[2] != "-":
                s["w50"].setdefault(i, []).append(float(d[2]))
            if len(d) > 3 and d[3] != "-":
                s["w99"].setdefault(i, []).append(float(d[3]))
        if len(devs) >= 2:
            mx = max(outs)
            s["spread"].append((mx - min(outs)) / mx if mx > 0 else 0.0)
    lines = []
    for w in o.workloads:
        for c in cfgs.runnable:
            s = seen.get((w, c.name))
            if not s:
                continue

            def lst(key, spec):
                return "/".join(fmt(stats.median(s[key].get(i, [])), spec)
                                for i in range(s["ndev"]))
            sp = s["spread"]
            within = sum(1 for x in sp if x <= 0.10)
            lines.append([w, c.name, str(s["ndev"]), str(s["runs"]), lst("out", "%.0f"),
                          lst("share", "%.3f"), fmt(stats.median(sp), "%.3f"),
                          fmt(max(sp) if sp else None, "%.3f"),
                          f"{within}/{len(sp)}" if sp else "-", lst("w50", "%.0f"),
                          lst("w99", "%.0f")])
    return lines


def pool_summary(pool):
    """The compression table from pool.tsv: per configuration the pool
    ratio over everything stored, without same-filled pages (the kernel
    keeps zero pages out of zswap and zram: comparable), over the
    compressible pages only, and the allocator's overhead.  As strings."""
    def n(x):
        return None if x == "-" else float(x)

    def r(pages, b):
        return "%.3f" % (pages * 4096 / b) if pages is not None and b is not None and b > 0 \
            else "-"

    lines = []
    for p in pool:
        st, same, poolb, cb, raw = (n(p[k]) for k in ("stored_pages", "same_filled_pages",
                                                      "pool_bytes", "compressed_bytes",
                                                      "stored_raw"))
        nz = st - same if st is not None and same is not None else st
        # Compressible pages only: without the pages kept as they are, and
        # without the 4 KiB each of them takes in the pool.
        cz = nz - raw if nz is not None and raw is not None else None
        cpool = poolb - raw * 4096 if poolb is not None and raw is not None else None
        over = "%.3f" % (poolb / cb) if poolb is not None and cb is not None and cb > 0 else "-"
        lines.append([p["config"], p["stored_pages"], p["same_filled_pages"], p["pool_bytes"],
                      p["compressed_bytes"], r(st, poolb), r(nz, poolb), r(cz, cpool), over,
                      r(nz, cb), p["zswpout"], p["zswpwb"], p["reject_compress_poor"],
                      p["stored_raw"], p["reject_pool_limit"], p["peak"], p["footprint"],
                      p["source"], p["note"]])
    return lines


# ---------------------------------------------------------------- text

class Context:
    """What every output needs besides the rows."""

    def __init__(self, o, cfgs, cg_ver):
        self.o, self.cfgs, self.cg_ver = o, cfgs, cg_ver
        names = [c.name for c in cfgs.runnable]
        self.swref_t = "kernel-swapfile-thp" if "kernel-swapfile-thp" in names else None
        self.has_pool = any(c.has_pool for c in cfgs.all)

    def label(self, name):
        c = self.cfgs.by_name.get(name)
        return c.label if c else name

    def describe(self):
        """What ran, in three or four lines."""
        o = self.o
        line = (f"workloads: {' '.join(o.workloads)}; usemem --size {o.size_b} --data {o.data} "
                f"--threads {o.threads} --procs {o.procs} --latency")
        if o.passes:
            line += f" --passes {o.passes}"
        if o.verify:
            line += " --verify"
        if o.has_pm:
            line += (f"; pmbench --size {o.size_b} --data {o.data} --threads {o.threads} "
                     f"--read {o.pm_read} --duration {o.pm_duration} (zipf: --theta {o.pm_theta})")
        if any(is_redis(w) for w in o.workloads):
            line += (f"; redis: {redis_keys(o.size_b)} keys of {REDIS_VALUE} bytes of text "
                     f"loaded into redis-server {o.redis_version}, then redis-benchmark -c "
                     f"{o.redis_clients} -P {o.redis_pipeline} -n {o.redis_requests} -r "
                     f"{redis_keys(o.size_b)} GET or SET key:__rand_int__ (clients outside the "
                     "budget)")
        out = [line, f"size {o.size}, budget {o.budget}, {o.rounds} rounds; kernel "
                     f"{probe.kernel_release()}; {probe.nproc()} CPUs; cgroup v{self.cg_ver}; "
                     f"swap file {(2 * o.size_b) >> 20} MiB in {o.swap_dir}; THP "
                     f"{probe.thp_mode()}; {o.uswap_version}"]
        if self.has_pool:
            out.append(f"zswap: uswap --zswap-max {o.zswap_max} (% of the budget) --zswap-accept "
                       f"{o.zswap_accept}, zstd level {o.zstd_level}; kernel max_pool_percent "
                       f"{o.zswap_max} (% of all RAM), accept_threshold_percent "
                       f"{o.zswap_accept}; random workloads: uswap folios "
                       f"{' '.join(o.rand_folios)}")
        for c in self.cfgs.runnable:
            if c.devs:
                specs = "".join(f" --swap {dev_path(o.swap_dir, i)},prio={DEV_PRIO}"
                                for i in range(c.devs))
                out.append(f"{c.name.rsplit('-', 1)[0]}:{specs} (files created and unlinked by "
                           f"uswap; uswap-F: one unnamed file in {o.swap_dir})")
                break
        return out

    def footnotes(self):
        out = []
        for c in self.cfgs.all:
            if c.stands_in_for:
                out.append(f"{c.name}*: stands in for kernel-zswap-{c.stands_in_for}, which this "
                           f"kernel's zswap does not have; uswap {c.stands_in_for} is compared "
                           "with it")
            if c.unavailable:
                out.append(f"{c.name}: unavailable: {c.unavailable}")
        return out


def markdown(ctx, rows, devs, pools):
    """summary.md: the tables in Markdown."""
    out = ["    " + line for line in ctx.describe()] + [""]
    thp = ctx.swref_t is not None
    out.append("| workload | config | ok | MB/s median (min-max) | accesses/s | p50 µs | p99 µs | "
               "CPU s/GB | × kernel's best | × kernel swap file |" +
               (" × kernel swap file THP |" if thp else "") +
               " × kernel zswap, same compressor | × zram, same compressor | zswpout | zswpwb |"
               " pswpout | peak MiB |")
    out.append("|---|---|---|---|---|---|---|---|---|---|" + ("---|" if thp else "") +
               "---|---|---|---|---|---|")
    for r in rows:
        if r.n == 0:
            thpe = " |" if thp else ""
            out.append(f"| {r.w} | {r.label} | 0/{r.runs} | failed: {r.note} "
                       f"| | | | | | | | | | | |{thpe} |")
            continue
        best = f"1 ({r.bk})" if r.c == r.bk else f"{ratio_cell(r.r_b)} vs {r.bk or '-'}"
        sw = "1" if r.c == "kernel-swapfile" or (r.r_sw and r.r_sw.median == 1) \
            else ratio_cell(r.r_sw)
        cells = [r.w, r.label, f"{r.n}/{r.runs}",
                 f"{fmt(r.mbps, '%.1f')} ({fmt(r.mlo, '%.0f')}-{fmt(r.mhi, '%.0f')})",
                 fmt(r.aps, "%.0f"), fmt(r.p50_us, "%.2f"), fmt(r.p99_us, "%.1f"), fmt(r.cpu, "%.2f"),
                 best, sw]
        if thp:
            cells.append("1" if r.c == ctx.swref_t else ratio_cell(r.r_t))
        cells += [ratio_cell(r.r_z) + (f" vs {ctx.label(r.zref)}" if r.zref else ""),
                  ratio_cell(r.r_r) + (f" vs {r.rref}" if r.rref else ""),
                  fmt(r.zswpout, "%.0f"), fmt(r.zswpwb, "%.0f"), fmt(r.pswpout, "%.0f"), mib(r.peak)]
        out.append("| " + " | ".join(cells) + " |")
    if devs:
        out += ["", "| workload | config | devices | pswpout per device | share | spread "
                "(max-min)/max, median (worst) | runs within 10% | write p50 µs | write p99 µs |",
                "|---|---|---|---|---|---|---|---|---|"]
        for w, c, nd, _, dout, dshare, dsp, dspx, within, w50, w99 in devs:
            spread = "-" if dsp == "-" else f"{pct(dsp)} ({pct(dspx)})"
            out.append(f"| {w} | {c} | {nd} | {dout.replace('/', ' / ')} | "
                       f"{dshare.replace('/', ' / ')} | {spread} | {within} | "
                       f"{w50.replace('/', ' / ')} | {w99.replace('/', ' / ')} |")
    if pools:
        out += ["", "| config | stored pages | same-filled | stored raw | pool MiB | ratio "
                "stored/pool | same-filled excluded | compressible only | pool/compressed | "
                "rejected as incompressible | zswpwb | peak MiB | footprint MiB |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for p in pools:
            out.append(f"| {ctx.label(p[0])} | {p[1]} | {p[2]} | {p[13]} | {mib(p[3])} | {p[5]} |"
                       f" {p[6]} | {p[7]} | {p[8]} | {p[12]} | {p[11]} | {mib(p[15])} | "
                       f"{mib(p[16])} |")
    return "\n".join(out + [""] + ctx.footnotes()) + "\n"


def ratio_json(key, ref, r, plural=None):
    """'"KEY_vs":..,"KEY":..,"KEY_min":..,"KEY_max":..,"KEYs":[..]'."""
    plural = plural or f"{key}s"
    if r is None:
        vals = ("null", "null", "null", "")
    else:
        vals = ("%.3f" % r.median, "%.3f" % r.lo, "%.3f" % r.hi,
                ",".join("%.3f" % v for v in r.values))
    return (f'"{key}_vs":{jref(ref)},"{key}":{vals[0]},"{key}_min":{vals[1]},'
            f'"{key}_max":{vals[2]},"{plural}":[{vals[3]}],')


def with_one(r, is_ref, ok):
    """The reference itself is 1 in the JSON (its list stays as measured)."""
    if is_ref and ok:
        return stats.Ratio(1.0, 1.0, 1.0, r.values if r else [])
    return r


def json_text(ctx, rows, devs, pools):
    """results.json: everything as one JSON object (bench/README.md)."""
    o = ctx.o
    p = []
    p.append(f'{{"size":{o.size_b},"budget":{o.budget_b},"rounds":{o.rounds},'
             f'"kernel":{jstr(probe.kernel_release())},"cgroup":"v{ctx.cg_ver}",'
             f'"data":{jstr(o.data)},"out":{jstr(o.out)},"uswap":{jstr(o.uswap_version)},')
    p.append(f'"machine":{{"nproc":{probe.nproc()},"mem_total_kib":{probe.mem_total_kib()},'
             f'"kernel":{jstr(probe.kernel_release())},"cpu":{jstr(probe.cpu_model())},'
             f'"thp":{jstr(probe.thp_mode())}}},')
    p.append(f'"workloads":[{",".join(jstr(w) for w in o.workloads)}],"threads":{o.threads},'
             f'"procs":{o.procs},"pm_duration":{o.pm_duration},"pm_read_pct":{o.pm_read},'
             f'"pm_theta":{o.pm_theta},"quick":{"true" if o.quick else "false"},')
    p.append(f'"redis_keys":{redis_keys(o.size_b)},"redis_value_size":{REDIS_VALUE},'
             f'"redis_requests":{o.redis_requests},"redis_clients":{o.redis_clients},'
             f'"redis_pipeline":{o.redis_pipeline},"redis_version":{jstr(o.redis_version)},')
    p.append(f'"zswap_max_pct":{o.zswap_max},"zswap_accept_pct":{o.zswap_accept},'
             f'"zstd_level":{o.zstd_level},"configs":[')
    p.append(",".join(
        f'{{"config":{jstr(c.name)},"kind":{jstr(c.kind)},"folio":{jref(c.folio)},'
        f'"compressor":{jref(c.comp)},"unit":{jref(c.unit)},'
        f'"thp":{"true" if c.thp else "false"},'
        f'"available":{"false" if c.unavailable else "true"},'
        f'"stands_in_for":{jref(c.stands_in_for)},"reason":{jref(c.unavailable)}}}'
        for c in ctx.cfgs.all))
    p.append('],"results":[')
    res = []
    for r in rows:
        # pmbench's figure is accesses per second, redis's requests per
        # second; their mbps (4 KiB per access or request) only serves the
        # CPU per GB.
        mb = (None, None, None) if per_access(r.w) else (r.mbps, r.mlo, r.mhi)
        s = (f'{{"workload":{jstr(r.w)},"config":{jstr(r.c)},"runs":{r.runs},"ok":{r.n},'
             f'"mbps":{jnum(mb[0], "%.1f")},"mbps_min":{jnum(mb[1], "%.1f")},'
             f'"mbps_max":{jnum(mb[2], "%.1f")},"accesses_per_s":{jnum(r.aps, "%.0f")},'
             f'"p50_us":{jnum(r.p50_us, "%.3f")},"p90_us":{jnum(r.p90_us, "%.3f")},'
             f'"p99_us":{jnum(r.p99_us, "%.3f")},"p999_us":{jnum(r.p999_us, "%.3f")},'
             f'"cpu_s_per_gb":{jnum(r.cpu, "%.3f")},"cpu_tree_s_per_gb":{jnum(r.tree, "%.3f")},')
        # ratio: throughput over the kernel's best configuration's, pair by
        # pair; cpu_ratio and p99_ratio over the kernel's lowest.
        s += ratio_json("ratio", r.bk, r.r_b)
        s += ratio_json("cpu_ratio", r.ck, r.r_c)
        s += ratio_json("p99_ratio", r.lk, r.r_l)
        s += ratio_json("ratio_swapfile", r.swref, with_one(r.r_sw, r.c == r.swref, r.n))
        s += ratio_json("ratio_zswap", r.zref, r.r_z, "ratios_zswap")
        s += ratio_json("ratio_zram", r.rref, r.r_r, "ratios_zram")
        s += ratio_json("ratio_thp", r.tref, with_one(r.r_t, r.c == r.tref, r.n), "ratios_thp")
        s += (f'"pswpin":{jnum(r.pswpin, "%.0f")},"pswpout":{jnum(r.pswpout, "%.0f")},'
              f'"pgmajfault":{jnum(r.pgmajfault, "%.0f")},"zswpin":{jnum(r.zswpin, "%.0f")},'
              f'"zswpout":{jnum(r.zswpout, "%.0f")},"zswpwb":{jnum(r.zswpwb, "%.0f")},'
              f'"peak_bytes":{jnum(r.peak, "%.0f")},"noisy_runs":{r.noisy},'
              f'"error":{jref(r.note)}}}')
        res.append(s)
    # Unavailable configurations: one result per workload, no figures.
    for c in ctx.cfgs.all:
        if not c.unavailable:
            continue
        for w in o.workloads:
            res.append(f'{{"workload":{jstr(w)},"config":{jstr(c.name)},"runs":0,"ok":0,'
                       '"mbps":null,"accesses_per_s":null,"p50_us":null,"p99_us":null,'
                       '"cpu_s_per_gb":null,"ratio_vs":null,"ratio":null,'
                       f'"error":{jstr("unavailable: " + c.unavailable)}}}')
    p.append(",".join(res))
    p.append('],"devices":[')
    p.append(",".join(
        f'{{"workload":{jstr(w)},"config":{jstr(c)},"devices":{nd},"runs":{runs},'
        f'"pswpout":[{jlist(dout)}],"share":[{jlist(dshare)}],"spread":{jnum(dsp, "%.3f")},'
        f'"spread_max":{jnum(dspx, "%.3f")},'
        f'"runs_within_10pct":{"null" if within == "-" else within.split("/")[0]},'
        f'"write_p50_us":[{jlist(w50)}],"write_p99_us":[{jlist(w99)}]}}'
        for w, c, nd, runs, dout, dshare, dsp, dspx, within, w50, w99 in devs))
    p.append('],"pool":[')
    p.append(",".join(
        f'{{"config":{jstr(q[0])},"stored_pages":{jnum(q[1], "%.0f")},'
        f'"same_filled_pages":{jnum(q[2], "%.0f")},"pool_total_size":{jnum(q[3], "%.0f")},'
        f'"compressed_bytes":{jnum(q[4], "%.0f")},"ratio":{jnum(q[5], "%.3f")},'
        f'"ratio_excl_same_filled":{jnum(q[6], "%.3f")},'
        f'"ratio_compressible":{jnum(q[7], "%.3f")},"pool_overhead":{jnum(q[8], "%.3f")},'
        f'"compression_ratio":{jnum(q[9], "%.3f")},"zswpout":{jnum(q[10], "%.0f")},'
        f'"zswpwb":{jnum(q[11], "%.0f")},"reject_compress_poor":{jnum(q[12], "%.0f")},'
        f'"stored_raw":{jnum(q[13], "%.0f")},"reject_pool_limit":{jnum(q[14], "%.0f")},'
        f'"peak_bytes":{jnum(q[15], "%.0f")},"footprint_bytes":{jnum(q[16], "%.0f")},'
        f'"source":{jref(q[17])},"error":{jref(q[18])}}}'
        for q in pools))
    p.append("]}\n")
    return "".join(p)


def text(ctx, rows, devs, pools):
    """The table on stdout (without --json)."""
    o = ctx.o
    out = ctx.describe()
    out.append("MB/s: median (min-max) (pmbench, redis: 4 KiB per access or request); "
               "acc/s: accesses per second (redis: requests per second), median; CPU: the "
               "workload's user+sys s per GB accessed (redis: the server's; whole process tree "
               "in brackets, redis's clients and load included); p50/p99: access (redis: "
               "request) latency, us, median of the runs; x: throughput (MB/s, or acc/s for "
               "pmbench and redis) over the reference's in the same "
               "round, median (min-max): the kernel's best configuration for the workload "
               "(named), the kernel swap file, the kernel's zswap and zram with the same "
               "compressor; counters: median per run (uswap: its --stats; kernel: /proc/vmstat "
               "deltas); peak: resident MiB (uswap) or cgroup peak (kernel)")
    # The THP column only when the kernel ran with THP.
    thpw = 17 if ctx.swref_t else 0
    fmt_row = "%-15s %-24s %5s %8s %-11s %8s %-13s %9s %9s %-32s %-17s %-*s%-17s %-17s"
    out.append(fmt_row % ("workload", "config", "ok", "MB/s", "(min-max)", "acc/s", "CPU s/GB",
                          "p50 us", "p99 us", "x best kernel", "x swapfile", thpw,
                          "x swapfile-thp " if thpw else "", "x kernel zswap", "x zram"))
    for r in rows:
        if r.n == 0:
            out.append("%-15s %-24s %5s  failed: %s" % (r.w, r.label, f"0/{r.runs}", r.note))
            continue
        rng = f"({fmt(r.mlo, '%.0f')}-{fmt(r.mhi, '%.0f')})"
        cpu = f"{fmt(r.cpu, '%.2f')} [{fmt(r.tree, '%.2f')}]"
        rat = "1" if r.c == "kernel-swapfile" else ratio_cell(r.r_sw)
        rat_t = ""
        if thpw:
            rat_t = "1 " if r.c == ctx.swref_t else ratio_cell(r.r_t) + " "
        ratb = f"1 ({r.bk})" if r.c == r.bk else f"{ratio_cell(r.r_b)} {r.bk or '-'}"
        line = fmt_row % (r.w, r.label, f"{r.n}/{r.runs}", fmt(r.mbps, "%.1f"), rng,
                          fmt(r.aps, "%.0f"), cpu, fmt(r.p50_us, "%.2f"), fmt(r.p99_us, "%.1f"),
                          ratb, rat, thpw, rat_t,
                          ratio_cell(r.r_z), ratio_cell(r.r_r))
        if r.noisy:
            line += f"  ({r.noisy} runs started on a busy machine)"
        if r.n != r.runs:
            line += f"  (failures: {r.note})"
        out.append(line)
    refs = [f"  {c.name}: {c.ref_zswap or '-'}, {c.ref_zram or '-'}"
            for c in ctx.cfgs.runnable if c.ref_zswap or c.ref_zram]
    if refs:
        out += ["", "references (x kernel zswap, x zram):"] + refs
    out.append("")
    cnt = "%-15s %-24s %9s %9s %9s %9s %9s %9s %7s %7s"
    out.append("peak: the cgroup's peak, or uswap's resident peak (MiB); total: the kernel's "
               "cgroup peak plus the peak of a pool it is not charged for, or the uswap "
               "process's peak RSS (MiB)")
    out.append(cnt % ("workload", "config", "zswpout", "zswpwb", "zswpin", "pswpout", "pswpin",
                      "majflt", "peak", "total"))
    for r in rows:
        if r.n:
            out.append(cnt % (r.w, r.label, fmt(r.zswpout, "%.0f"), fmt(r.zswpwb, "%.0f"),
                              fmt(r.zswpin, "%.0f"), fmt(r.pswpout, "%.0f"), fmt(r.pswpin, "%.0f"),
                              fmt(r.pgmajfault, "%.0f"), mib(r.peak).split(".")[0],
                              mib(r.total).split(".")[0]))
    if devs:
        out += ["", "devices: uswap's --stats \"swaps\" rows, in the order given, median per run; "
                "share: of the pswpout of all devices; spread: (max - min) / max of the devices' "
                "pswpout in one run, median (worst); within 10%: runs whose spread is at most "
                "10%; write latency p50/p99 in us"]
        dfmt = "%-10s %-24s %4s %-17s %-13s %-15s %-9s %-11s %-11s"
        out.append(dfmt % ("workload", "config", "devs", "pswpout", "share", "spread",
                           "within10%", "write p50", "write p99"))
        for w, c, nd, _, dout, dshare, dsp, dspx, within, w50, w99 in devs:
            spread = "-" if dsp == "-" else f"{pct(dsp)} ({pct(dspx)})"
            out.append(dfmt % (w, c, nd, dout, dshare, spread, within, w50, w99))
    if pools:
        out += ["", f"compression: poolfill writes {o.size} of {o.data} data under each "
                "configuration and holds it; the pool is read while full",
                "ratio: stored pages x 4096 / pool bytes; excl same: without same-filled pages "
                "(the kernel keeps zero pages out of zswap and zram); compr: also without the "
                "incompressible pages the pool keeps as they are (raw: the kernel's zswap since "
                "6.18, zram's huge pages; uswap sends them to its swap file: rejected) and their "
                "4 KiB each; overhead: pool bytes / compressed bytes; peak: uswap's resident "
                "peak (pool included) or the cgroup's; footprint: peak + any pool the cgroup is "
                "not charged for"]
        pfmt = "%-24s %8s %8s %8s %8s %6s %9s %6s %8s %8s %8s %8s %9s %7s"
        out.append(pfmt % ("config", "stored", "same", "raw", "pool MiB", "ratio", "excl same",
                           "compr", "overhead", "zswpwb", "rejected", "peak MiB", "footprint",
                           "source"))
        for q in pools:
            line = pfmt % (ctx.label(q[0]), q[1], q[2], q[13], mib(q[3]), q[5], q[6], q[7],
                           q[8], q[11], q[12], mib(q[15]), mib(q[16]), q[17])
            if q[18] != "-":
                line += f"  ({q[18]})"
            out.append(line)
    fn = ctx.footnotes()
    if fn:
        out += [""] + fn
    out.append(f"runs: {o.out}/runs.tsv; markdown: {o.out}/summary.md")
    return "\n".join(out) + "\n"


def write_lines(path, lines):
    """A TSV without a header (as the summaries are); one empty line when
    there is nothing."""
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def write(o, cfgs, cg_ver):
    """Every summary of one invocation, from its runs.tsv and pool.tsv;
    results.json always, and on stdout the JSON or the table."""
    runs = parse.read_runs(os.path.join(o.out, "runs.tsv"))
    table = stats.RunTable(runs, {c.name: c.kind for c in cfgs.all})
    rows = summarize(o, cfgs, table)
    devs = device_summary(o, cfgs, runs)
    pools = pool_summary(parse.read_tsv(os.path.join(o.out, "pool.tsv")))
    write_lines(os.path.join(o.out, "summary.tsv"), [summary_line(r) for r in rows])
    write_lines(os.path.join(o.out, "devices-summary.tsv"), ["\t".join(d) for d in devs])
    write_lines(os.path.join(o.out, "pool-summary.tsv"), ["\t".join(p) for p in pools])
    ctx = Context(o, cfgs, cg_ver)
    with open(os.path.join(o.out, "summary.md"), "w") as fh:
        fh.write(markdown(ctx, rows, devs, pools))
    js = json_text(ctx, rows, devs, pools)
    with open(os.path.join(o.out, "results.json"), "w") as fh:
        fh.write(js)
    sys.stdout.write(js if o.json else text(ctx, rows, devs, pools))
