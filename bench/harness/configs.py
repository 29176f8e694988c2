# SPDX-License-Identifier: MIT
"""bench/compare's configurations: the words of --configs, what each one
expands to, which workloads each one runs, and the kernel configurations
each one is compared with."""

import re

from .util import Fatal

KERNEL_KINDS = ("kernel", "kzswap", "zram")

# Named sets of --configs words.
PRESETS = {
    # The compressed tier: uswap's pools against the kernel's zswap and zram.
    "compressed-tier": "uswap uswap-lz4 uswap-zstd kernel-swapfile kernel-zswap-lz4 "
                       "kernel-zswap-zstd zram-lz4 zram-zstd",
    # Swap devices: one file against two of equal priority, and the kernel's
    # swap file without and with THP.
    "devices": "uswap uswap-2dev kernel-swapfile kernel-swapfile-thp",
}

# uswap-Ndev: the priority every device gets (equal: used in turn), and the
# letters of its files, DIR/uswap-bench.a, .b, ...
DEV_PRIO = 5
DEV_LETTERS = "abcdefghijklmno"

WORKLOADS = ("seq-write", "rand-write", "seq-read", "rand-read", "seq-rw", "rand-rw",
             "pmbench-zipf", "pmbench-uniform", "pmbench-hot", "redis-get", "redis-set")


class Config:
    """One configuration: how a workload runs under it.

    kind     uswap, kernel (swap file), kzswap, zram or ceiling
    folio    uswap's --folio
    comp     the compressor (uswap --zswap, the kernel's zswap, zram)
    unit     uswap --zswap-unit (None for 4K folios: both modes are one)
    thp      the workload runs with --hugepage (MADV_HUGEPAGE)
    devs     uswap's swap devices: 0 its default file, N >= 2 named files of
             equal priority
    v1       uswap's pool as the kernel's zswap is under cgroup v1: not
             charged, keeping incompressible pages, reclaim at the limit
    remote   uswap's only swap device is a Redis Cluster on loopback
             (uswap-redis; bench/harness/rediscluster.py)
    base     run with the --base binary (a build to compare with)
    """

    def __init__(self, name, kind, folio=None, comp=None, unit=None, thp=False, devs=0,
                 v1=False, base=False, remote=False):
        self.name, self.kind, self.folio, self.comp = name, kind, folio, comp
        self.unit, self.thp, self.devs, self.v1 = unit, thp, devs, v1
        self.base, self.remote = base, remote
        self.unavailable = None      # why the kernel cannot run it
        self.stands_in_for = None    # the compressor it replaces (lzo-rle for lz4)
        self.ref_zswap = None        # the kernel's zswap it is compared with
        self.ref_zram = None         # the kernel's zram it is compared with

    @property
    def is_kernel(self):
        return self.kind in KERNEL_KINDS

    @property
    def has_pool(self):
        return self.kind in ("kzswap", "zram") or (self.kind == "uswap" and bool(self.comp))

    @property
    def label(self):
        """The name in tables: a stand-in is marked with '*'."""
        return self.name + ("*" if self.stands_in_for else "")


def is_random(workload):
    """usemem's rand-*, every pmbench workload and redis (random keys)."""
    return workload.startswith(("rand-", "pmbench-", "redis-"))


def is_pm(workload):
    return workload.startswith("pmbench-")


def is_redis(workload):
    """redis-get and redis-set: redis-server under the configuration,
    redis-benchmark outside it (bench/redisbench)."""
    return workload.startswith("redis-")


def per_access(workload):
    """Is the workload's figure accesses (pmbench) or requests (redis) per
    second rather than MB/s?"""
    return is_pm(workload) or is_redis(workload)


class ConfigSet:
    """The configurations of one invocation, in run order."""

    def __init__(self, spec, folios, zswap_units, thp, ceiling, base=False):
        self.folios = folios
        self.zswap_units = zswap_units
        self.by_name = {}
        spec = spec or "uswap kernel-swapfile"
        for word in spec.split():
            self._expand(word)
        if thp:
            self._add("kernel-swapfile-thp", "kernel", thp=True)
        if ceiling:
            self._add("ceiling", "ceiling")
        if not self.by_name:
            raise Fatal("bench/compare: --configs: no configuration", 2)
        if base:
            self._add_base_twins()

    def _add_base_twins(self):
        """Each uswap configuration also as base-NAME, run right after it
        with the --base binary."""
        items = []
        for name, c in self.by_name.items():
            items.append((name, c))
            if c.kind == "uswap":
                twin = Config(f"base-{name}", "uswap", folio=c.folio, comp=c.comp,
                              unit=c.unit, thp=c.thp, devs=c.devs, v1=c.v1, base=True,
                              remote=c.remote)
                items.append((twin.name, twin))
        self.by_name = dict(items)

    @property
    def all(self):
        return list(self.by_name.values())

    @property
    def runnable(self):
        return [c for c in self.by_name.values() if not c.unavailable]

    def _add(self, name, kind, **kw):
        if name not in self.by_name:
            self.by_name[name] = Config(name, kind, **kw)

    def _uswap_zswap(self, comp, v1):
        name = f"uswap-{comp}" + ("-v1" if v1 else "")
        for f in self.folios:
            if f == "4K":
                self._add(f"{name}-4K", "uswap", folio=f, comp=comp, v1=v1)
                continue
            for u in self.zswap_units:
                self._add(f"{name}-{f}-{u}", "uswap", folio=f, comp=comp, unit=u, v1=v1)

    def _kernel_pool(self, word):
        base, thp = (word[:-4], True) if word.endswith("-thp") else (word, False)
        kind, comp = ("kzswap", base[len("kernel-zswap-"):]) if base.startswith("kernel-zswap-") \
            else ("zram", base[len("zram-"):])
        if not re.match(r"^[a-z0-9][a-z0-9-]*$", comp):
            raise Fatal(f"bench/compare: --configs '{word}': expected a compressor name after "
                        "the prefix", 2)
        self._add(word, kind, comp=comp, thp=thp)

    def _expand(self, word):
        if word in PRESETS:
            for w in PRESETS[word].split():
                self._expand(w)
        elif word == "uswap":
            for f in self.folios:
                self._add(f"uswap-{f}", "uswap", folio=f)
        elif word in ("uswap-lz4", "uswap-zstd", "uswap-deflate"):
            self._uswap_zswap(word[len("uswap-"):], False)
        elif word in ("uswap-lz4-v1", "uswap-zstd-v1", "uswap-deflate-v1"):
            self._uswap_zswap(word[len("uswap-"):-len("-v1")], True)
        elif word == "uswap-redis":
            for f in self.folios:
                self._add(f"uswap-redis-{f}", "uswap", folio=f, remote=True)
        elif re.match(r"^uswap-([2-9]|1[0-5])dev$", word):
            n = int(word[len("uswap-"):-len("dev")])
            for f in self.folios:
                self._add(f"{word}-{f}", "uswap", folio=f, devs=n)
        elif word in ("kernel", "kernel-swapfile"):
            self._add("kernel-swapfile", "kernel")
        elif word in ("kernel-thp", "kernel-swapfile-thp"):
            self._add("kernel-swapfile-thp", "kernel", thp=True)
        elif re.match(r"^(kernel-zswap|zram)-.", word):
            self._kernel_pool(word)
        elif word == "ceiling":
            self._add("ceiling", "ceiling")
        else:
            raise Fatal(f"bench/compare: --configs '{word}': expected uswap, uswap-2dev (to "
                        "uswap-15dev), uswap-redis, uswap-lz4, uswap-zstd, uswap-deflate (each also -v1), "
                        "kernel-swapfile, kernel-zswap-COMP, zram-COMP, ceiling, "
                        "compressed-tier or devices", 2)

    def probe(self, machine):
        """Mark what the kernel cannot run (reported, not run).  A zswap
        without lz4 gets lzo-rle, its fastest compressor, as a stand-in,
        right after the lz4 configuration in the run order."""
        for c in self.all:
            if c.kind == "kzswap":
                c.unavailable = machine.zswap_probe(c.comp)
            elif c.kind == "zram":
                c.unavailable = machine.zram_probe(c.comp)
        for c in self.all:
            if c.kind != "kzswap" or c.comp != "lz4" or not c.unavailable:
                continue
            sub = "kernel-zswap-lzo-rle" + ("-thp" if c.thp else "")
            if sub not in self.by_name:
                if machine.zswap_probe("lzo-rle"):
                    continue
                items = list(self.by_name.items())
                i = [n for n, _ in items].index(c.name) + 1
                items.insert(i, (sub, Config(sub, "kzswap", comp="lzo-rle", thp=c.thp)))
                self.by_name = dict(items)
            if not self.by_name[sub].unavailable:
                self.by_name[sub].stands_in_for = "lz4"

    def set_references(self):
        """Each uswap configuration with a pool is compared with the kernel's
        zswap and zram with the same compressor (zswap's lzo-rle for lz4
        when the kernel's zswap has no lz4)."""
        run = {c.name for c in self.runnable}
        for c in self.runnable:
            if c.kind != "uswap" or not c.comp:
                continue
            if f"kernel-zswap-{c.comp}" in run:
                c.ref_zswap = f"kernel-zswap-{c.comp}"
            elif c.comp == "lz4" and "kernel-zswap-lzo-rle" in run:
                c.ref_zswap = "kernel-zswap-lzo-rle"
            if f"zram-{c.comp}" in run:
                c.ref_zram = f"zram-{c.comp}"

    def applies(self, workload, c, seq_folios, rand_folios):
        """Does c run for workload?  uswap's random runs only with
        --rand-folios, its others only with --seq-folios."""
        if c.kind != "uswap":
            return True
        return c.folio in (rand_folios if is_random(workload) else seq_folios)
