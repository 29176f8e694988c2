# SPDX-License-Identifier: MIT
"""The report's plots: SVG files drawn by gnuplot (Debian's gnuplot-nox),
one colour per configuration across every plot, the kernel's dashed.

gnuplot is worth keeping over matplotlib here: it is one small package, its
SVGs are what the report has always shipped, and its scripts and data
files are kept beside the runs, so that a plot can be redrawn or inspected
by hand.
"""

import os
import shutil
import subprocess


class Plotter:
    """gnuplot SVGs into DOCS/bench; data files into the suite directory."""

    COLORS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
              "#a6761d", "#666666", "#1f78b4", "#b2df8a", "#fb9a99", "#cab2d6"]

    def __init__(self, imgdir, datadir):
        self.imgdir = imgdir
        self.datadir = datadir
        self.gnuplot = shutil.which("gnuplot")
        self.made = []
        self.errors = []
        self.color_of = {}
        os.makedirs(imgdir, exist_ok=True)
        os.makedirs(datadir, exist_ok=True)

    def style(self, i, name):
        """One colour per configuration in every plot; the kernel dashed."""
        if name not in self.color_of:
            self.color_of[name] = self.COLORS[len(self.color_of) % len(self.COLORS)]
        dash = 2 if not name.startswith("uswap") else 1
        return f'lc rgb "{self.color_of[name]}" lw 2 dt {dash}'

    def plot(self, name, title, xlabel, ylabel, series, logx=False, logy=False,
             xtics=None, key="outside right top", yrange=None, points=True):
        """series: [(label, [(x, y), ...])].  Returns the image's file name."""
        if not self.gnuplot:
            return None
        series = [(lab, pts) for lab, pts in series if pts]
        if not series:
            return None
        files = []
        for i, (lab, pts) in enumerate(series):
            dat = os.path.join(self.datadir, f"{name}.{i}.dat")
            with open(dat, "w") as f:
                for x, y in pts:
                    f.write(f"{x} {y}\n")
            files.append((lab, dat))
        svg = os.path.join(self.imgdir, f"{name}.svg")
        gp = [
            'set terminal svg size 860,460 dynamic font "Helvetica,13" background rgb "white"',
            f'set output "{svg}"',
            'set format x "%g"',
            'set format y "%g"',
            f'set title "{title}"',
            f'set xlabel "{xlabel}"',
            f'set ylabel "{ylabel}"',
            "set grid lc rgb '#dddddd'",
            f"set key {key} noenhanced",
            "set border 3",
            "set tics nomirror",
        ]
        if logx:
            gp.append("set logscale x")
        if logy:
            gp.append("set logscale y")
        if xtics:
            gp.append("set xtics (" + ", ".join(f'"{t}" {t}' for t in xtics) + ")")
        if yrange:
            gp.append(f"set yrange [{yrange[0]}:{yrange[1]}]")
        with_ = "linespoints pt 7 ps 0.6" if points else "lines"
        gp.append("plot " + ", \\\n     ".join(
            f'"{dat}" using 1:2 with {with_} {self.style(i, lab)} title "{lab}"'
            for i, (lab, dat) in enumerate(files)))
        script = os.path.join(self.datadir, f"{name}.gp")
        with open(script, "w") as f:
            f.write("\n".join(gp) + "\n")
        p = subprocess.run([self.gnuplot, script], capture_output=True, text=True)
        # BENCH_PNG=1: a PNG of each plot beside its data, to look at.
        if os.environ.get("BENCH_PNG") == "1":
            png = "\n".join(gp).replace(
                "set terminal svg", "set terminal pngcairo").replace(svg, svg[:-4] + ".png")
            png = png.replace(f'set output "{svg[:-4]}.png"',
                              f'set output "{os.path.join(self.datadir, name)}.png"')
            subprocess.run([self.gnuplot], input=png.replace(" dynamic", ""), text=True,
                           capture_output=True)
        if p.returncode != 0 or not os.path.exists(svg):
            self.errors.append(f"{name}: {p.stderr.strip()[:300]}")
            return None
        self.made.append(svg)
        return os.path.basename(svg)
