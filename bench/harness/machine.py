# SPDX-License-Identifier: MIT
"""The kernel side of a comparison: a memory cgroup, a swap file, the
kernel's zswap and zram, debugfs, and putting every one of them back.

Everything here changes the machine, so everything here is undone by
Machine.cleanup(), which bench/compare calls from a finally clause with the
signals ignored: after an error, a timeout or Ctrl-C the swap file is off
and deleted, the cgroup and the zram device are gone, every zswap parameter
is as it was and debugfs is unmounted if we mounted it.

zswap is machine-wide: it is on only while one of its own configurations
runs.  Its parameters are saved at the start, it is turned off, and each
kernel-zswap run turns it on with its compressor and our limits and off
again after.  A zram device is added for each zram run and removed after it;
devices that were there before are left alone.
"""

import fcntl
import os
import re
import stat
import subprocess
import time

from . import probe
from .util import Fatal, read_first_line, read_text, remove, say, write_sysfs

ZSWAP = "/sys/module/zswap/parameters"
ZSWAP_KEYS = ("enabled", "compressor", "max_pool_percent", "accept_threshold_percent")
ZRAM_CTL = "/sys/class/zram-control"
DEBUGFS = "/sys/kernel/debug"
LOCK_DIR = "/run/lock"


class SetupError(Exception):
    """A configuration cannot be set up (its run fails; the others go on)."""


def run_quiet(argv):
    """Run a set-up command (mkswap, swapon...); True when it succeeded.
    Its stderr goes to ours, as a shell's would."""
    return subprocess.run(argv, stdout=subprocess.DEVNULL).returncode == 0


def sync_drop_caches():
    """sync, then drop the page cache, dentries and inodes: every run
    starts from the same clean state."""
    os.sync()
    write_sysfs("/proc/sys/vm/drop_caches", 3)


def crypto_has(name):
    """Is name in the kernel's crypto API (/proc/crypto)?"""
    pat = re.compile(r"^name\s*: " + re.escape(name) + "$", re.M)
    return bool(pat.search(read_text("/proc/crypto") or ""))


def crypto_compressors():
    """The compressors of the kernel's crypto API, for messages."""
    names = set()
    for line in (read_text("/proc/crypto") or "").splitlines():
        p = line.split()
        if len(p) >= 3 and p[0] == "name" and re.match(r"^(lz|zstd|deflate|842)", p[2]):
            names.add(p[2])
    return " ".join(sorted(names))


class Machine:
    """The kernel side of one bench/compare invocation."""

    def __init__(self, prog, swap_dir, size, budget, cg_want, zswap_max, zswap_accept,
                 hold):
        self.prog = prog
        self.swapfile = os.path.join(swap_dir, "uswap-bench.swap")
        self.swap_bytes = 2 * size
        self.budget = budget
        self.cg_want = cg_want
        self.zswap_max = zswap_max
        self.zswap_accept = zswap_accept
        self.hold = hold
        self.lock_fd = None
        self.cg_ver = None
        self.cg_root = None
        self.cg = None
        self.cg_subtree_added = False
        self.zswap_saved = None
        self.zram_id = None
        self.zram_dev = None
        self.zram_mknod = False
        self.debugfs_mounted = False
        self.dev_files = []
        self.running = None

    # ------------------------------------------------------------ the lock

    def lock(self):
        """One compare at a time on a machine: two would share the swap
        file, the cgroup and zswap, and measure each other."""
        path = os.path.join(LOCK_DIR if os.path.isdir(LOCK_DIR) else "/tmp",
                            "uswap-bench-compare.lock")
        try:
            self.lock_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        except OSError:
            raise Fatal(f"{self.prog}: cannot open {path}")
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise Fatal(f"{self.prog}: another bench/compare is running (it holds {path}); "
                        "wait for it to finish")

    # ------------------------------------------------------------ cgroup

    def detect_cgroup(self):
        """Pick the hierarchy: v2 where its memory controller is available,
        else v1; on v2 the root's subtree gets +memory if it lacks it."""
        if self.cg_want != "v1":
            for d in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
                if "memory" in (read_text(f"{d}/cgroup.controllers") or "").split():
                    self.cg_ver, self.cg_root = 2, d
                    break
        if self.cg_ver is None and self.cg_want != "v2" and \
                os.path.isfile("/sys/fs/cgroup/memory/memory.limit_in_bytes"):
            self.cg_ver, self.cg_root = 1, "/sys/fs/cgroup/memory"
        if self.cg_ver is None:
            raise Fatal(f"{self.prog}: no usable memory cgroup (wanted {self.cg_want}; v1 at "
                        "/sys/fs/cgroup/memory, v2 with memory in cgroup.controllers)")
        self.cg = f"{self.cg_root}/uswap-bench"
        if self.cg_ver == 2 and "memory" not in \
                (read_text(f"{self.cg_root}/cgroup.subtree_control") or "").split():
            if write_sysfs(f"{self.cg_root}/cgroup.subtree_control", "+memory"):
                raise Fatal(f"{self.prog}: no usable memory cgroup (cannot enable memory "
                            f"in {self.cg_root}/cgroup.subtree_control)")
            self.cg_subtree_added = True

    def cg_procs(self):
        """The pids in our cgroup."""
        text = read_text(f"{self.cg}/cgroup.procs") or ""
        return [p for p in text.split() if p]

    def cg_remove(self):
        """Move every task out of the bench cgroup and remove it; True when
        it is gone."""
        if not self.cg or not os.path.isdir(self.cg):
            return True
        for _ in range(50):
            for pid in self.cg_procs():
                write_sysfs(f"{self.cg_root}/cgroup.procs", pid)
            try:
                os.rmdir(self.cg)
                return True
            except OSError:
                time.sleep(0.1)
        say(f"{self.prog}: cannot remove cgroup {self.cg}")
        return False

    def cg_create(self):
        """A fresh group limited to the budget (so that no page cache
        charged by an earlier run stays in it); True on success."""
        if not self.cg_remove():
            return False
        try:
            os.mkdir(self.cg)
        except OSError as e:
            say(f"mkdir: cannot create directory '{self.cg}': {e.strerror}")
            return False
        if self.cg_ver == 1:
            return write_sysfs(f"{self.cg}/memory.limit_in_bytes", self.budget) is None and \
                write_sysfs(f"{self.cg}/memory.swappiness", 60) is None
        return write_sysfs(f"{self.cg}/memory.max", self.budget) is None and \
            write_sysfs(f"{self.cg}/memory.swap.max", "max") is None

    def cg_peak(self):
        """The cgroup's peak memory use in bytes, as its file says, or '0'."""
        f = "memory.max_usage_in_bytes" if self.cg_ver == 1 else "memory.peak"
        v = read_first_line(f"{self.cg}/{f}", None)
        return v if v else "0"

    def pool_now(self):
        """The kernel pool's memory now, in bytes: the zram device's
        (mem_used_total of mm_stat) when one is set up, else zswap's
        (pool_total_size; /proc/meminfo's Zswap without debugfs)."""
        if self.zram_id is not None:
            f = read_first_line(f"/sys/block/zram{self.zram_id}/mm_stat", "").split()
            return int(f[2]) if len(f) > 2 else 0
        v = self.kzswap_pool()[1]
        return int(v) if v.isdigit() else 0

    def pool_uncharged(self, kind):
        """Is a kind of run's pool outside its cgroup's figures?  zram
        always; zswap on cgroup v1 (v2 charges it to the cgroup)."""
        return kind == "zram" or (kind == "kzswap" and self.cg_ver == 1)

    def cg_oom_kills(self):
        """The cgroup's OOM kills (oom_kill in memory.oom_control or
        memory.events), as a string."""
        f = "memory.oom_control" if self.cg_ver == 1 else "memory.events"
        for line in (read_text(f"{self.cg}/{f}") or "").splitlines():
            p = line.split()
            if len(p) >= 2 and p[0] == "oom_kill":
                return p[1]
        return "0"

    def cg_memory_stat(self):
        """The cgroup's memory.stat, for the logs ('' when unreadable)."""
        return read_text(f"{self.cg}/memory.stat") or ""

    def cg_kill_all(self):
        for pid in self.cg_procs():
            try:
                os.kill(int(pid), 9)
            except (OSError, ValueError):
                pass

    def join_cgroup_argv(self, argv):
        """argv run inside our cgroup: a wrapper shell writes its own pid into
        cgroup.procs, then becomes the program."""
        return ["sh", "-c", 'echo $$ >"$0" && exec "$@"', f"{self.cg}/cgroup.procs"] + argv

    # ------------------------------------------------------------ swap file

    def swap_active(self, path):
        return path in probe.active_swaps()

    def swapoff(self, path):
        """swapoff path if it is on; True when it is off."""
        if not self.swap_active(path):
            return True
        return run_quiet(["swapoff", path])

    def make_swapfile(self):
        """2 x SIZE in the swap directory, fallocate (or dd), chmod 600,
        mkswap, and one swapon/swapoff to check that the file system takes
        swap files.  It is on only during kernel runs."""
        if not self.swapoff(self.swapfile):
            raise Fatal(f"{self.prog}: {self.swapfile} is an active swap file and swapoff failed")
        remove(self.swapfile)
        say(f"{self.prog}: swap file {self.swapfile} ({self.swap_bytes >> 20} MiB)")
        ok = run_quiet(["fallocate", "-l", str(self.swap_bytes), self.swapfile]) or \
            run_quiet(["dd", "if=/dev/zero", f"of={self.swapfile}", "bs=1M",
                       f"count={self.swap_bytes >> 20}", "status=none"])
        ok = ok and run_quiet(["chmod", "600", self.swapfile]) and \
            run_quiet(["mkswap", "-q", self.swapfile]) and \
            run_quiet(["swapon", self.swapfile]) and run_quiet(["swapoff", self.swapfile])
        if not ok:
            raise Fatal(f"{self.prog}: cannot set up a swap file in "
                        f"{os.path.dirname(self.swapfile)} (its file system may not support "
                        "swap files)")

    def other_swaps(self):
        return [s for s in probe.active_swaps() if s != self.swapfile]

    # ------------------------------------------------------------ zswap

    def zswap_set(self, key, value):
        """Write one zswap parameter; SetupError says why it failed."""
        err = write_sysfs(f"{ZSWAP}/{key}", value)
        if err:
            raise SetupError(f"writing '{value}' to {ZSWAP}/{key} failed: {err}")

    def zswap_get(self, key):
        return read_first_line(f"{ZSWAP}/{key}")

    def zswap_save(self):
        if not os.path.isdir(ZSWAP):
            return
        self.zswap_saved = {k: self.zswap_get(k) for k in ZSWAP_KEYS
                            if os.path.isfile(f"{ZSWAP}/{k}")}

    def zswap_off(self):
        if not os.path.isfile(f"{ZSWAP}/enabled") or self.zswap_get("enabled") == "N":
            return
        self.zswap_set("enabled", "N")

    def zswap_restore(self):
        """Off, then every parameter as it was, then enabled as it was
        (shrinker_enabled is never touched)."""
        if self.zswap_saved is None:
            return
        try:
            self.zswap_off()
        except SetupError as e:
            say(f"{self.prog}: cannot disable zswap: {e}")
        for k in ("compressor", "max_pool_percent", "accept_threshold_percent"):
            v = self.zswap_saved.get(k)
            if not v or self.zswap_get(k) == v:
                continue
            try:
                self.zswap_set(k, v)
            except SetupError as e:
                say(f"{self.prog}: cannot restore zswap: {e}")
        if self.zswap_saved.get("enabled", "N") != "N":
            try:
                self.zswap_set("enabled", self.zswap_saved["enabled"])
            except SetupError as e:
                say(f"{self.prog}: cannot restore zswap: {e}")

    def zswap_probe(self, comp):
        """None if the kernel's zswap can use comp, else why not.  A zswap
        never enabled since boot accepts any name, so /proc/crypto decides."""
        if not os.path.isdir(ZSWAP):
            return f"this kernel has no zswap ({ZSWAP})"
        have = crypto_compressors()
        why = None
        try:
            self.zswap_set("compressor", comp)
            if not crypto_has(comp):
                why = (f"{comp} is not in /proc/crypto: the kernel's crypto API lacks it "
                       f"(it has: {have})")
        except SetupError as e:
            why = f"{e} (zswap refuses {comp}; the kernel's crypto API has: {have})"
        try:
            self.zswap_set("compressor", self.zswap_saved["compressor"])
        except (SetupError, KeyError, TypeError):
            pass
        return why

    def zswap_on(self, comp):
        """The kernel's zswap with comp and our pool limits, checked."""
        self.zswap_off()
        self.zswap_set("compressor", comp)
        self.zswap_set("max_pool_percent", self.zswap_max)
        self.zswap_set("accept_threshold_percent", self.zswap_accept)
        if not crypto_has(comp):
            raise SetupError(f"{comp} is not in /proc/crypto")
        self.zswap_set("enabled", "Y")
        got, enabled = self.zswap_get("compressor"), self.zswap_get("enabled")
        if got != comp or enabled != "Y":
            self.zswap_off()
            raise SetupError(f"zswap reports compressor '{got}', enabled {enabled} after "
                             f"asking for {comp}")

    # ------------------------------------------------------------ zram

    def zram_remove(self):
        """swapoff, reset and hot_remove the device we added, if any."""
        if self.zram_id is None:
            return
        if self.zram_dev and self.swap_active(self.zram_dev):
            if not run_quiet(["swapoff", self.zram_dev]):
                say(f"{self.prog}: swapoff {self.zram_dev} failed")
        write_sysfs(f"/sys/block/zram{self.zram_id}/reset", 1)
        if write_sysfs(f"{ZRAM_CTL}/hot_remove", self.zram_id):
            say(f"{self.prog}: cannot remove zram{self.zram_id}")
        if self.zram_mknod:
            remove(self.zram_dev)
        self.zram_id = self.zram_dev = None
        self.zram_mknod = False

    def zram_add(self, comp, disksize=None):
        """A new zram device with comp; without disksize only the compressor
        is set (a probe).  SetupError says why it failed."""
        if not os.access(f"{ZRAM_CTL}/hot_add", os.W_OK):
            raise SetupError(f"no zram ({ZRAM_CTL}/hot_add)")
        zid = read_first_line(f"{ZRAM_CTL}/hot_add", "").strip()
        if not zid:
            raise SetupError("zram hot_add failed")
        self.zram_id, self.zram_dev = zid, f"/dev/zram{zid}"
        sysd = f"/sys/block/zram{zid}"
        err = write_sysfs(f"{sysd}/comp_algorithm", comp)
        algs = read_text(f"{sysd}/comp_algorithm") or ""
        if err or f"[{comp}]" not in algs:
            offers = algs.replace("[", "").replace("]", "").rstrip("\n")
            raise SetupError(f"zram has no {comp}" + (f" ({err})" if err else "") +
                             f"; it offers: {offers}")
        if disksize is None:
            return
        for _ in range(40):
            if os.path.exists(self.zram_dev) and stat.S_ISBLK(os.stat(self.zram_dev).st_mode):
                break
            time.sleep(0.05)
        else:
            major, minor = read_first_line(f"{sysd}/dev").split(":")
            try:
                os.mknod(self.zram_dev, 0o600 | stat.S_IFBLK, os.makedev(int(major), int(minor)))
            except OSError:
                raise SetupError(f"no {self.zram_dev}")
            self.zram_mknod = True
        if write_sysfs(f"{sysd}/disksize", disksize) or \
                not run_quiet(["mkswap", "-q", self.zram_dev]):
            raise SetupError(f"cannot set up {self.zram_dev} ({disksize} bytes)")

    def zram_probe(self, comp):
        """None if zram offers comp, else why not."""
        try:
            self.zram_add(comp)
            return None
        except SetupError as e:
            return str(e)
        finally:
            self.zram_remove()

    def zram_pool(self):
        """zram's pool from mm_stat: stored pages, same pages, mem_used_total,
        compr_data_size and huge pages (kept as they are), as strings."""
        p = read_first_line(f"/sys/block/zram{self.zram_id}/mm_stat").split()
        # orig_data_size compr_data_size mem_used_total mem_limit
        # mem_used_max same_pages pages_compacted huge_pages
        return [str(int(p[0]) // 4096), p[5], p[2], p[1], p[7]]

    # ------------------------------------------------------------ debugfs

    def debugfs_mount(self):
        """Mount debugfs to read the kernel's zswap pool, if it is not."""
        mounts = read_text("/proc/mounts") or ""
        if f" {DEBUGFS} debugfs " in mounts:
            return True
        if subprocess.run(["mount", "-t", "debugfs", "none", DEBUGFS],
                          stderr=subprocess.DEVNULL).returncode != 0:
            return False
        self.debugfs_mounted = True
        return True

    def kzswap_pool(self):
        """The kernel's zswap pool: stored_pages, pool_total_size,
        written_back_pages, reject_compress_poor, stored_incompressible_pages
        (kept as they are since 6.18) and where they were read from:
        debugfs, else /proc/meminfo with '-' for what it lacks."""
        d = f"{DEBUGFS}/zswap"
        if os.access(f"{d}/stored_pages", os.R_OK) and os.access(f"{d}/pool_total_size", os.R_OK):
            keys = ("stored_pages", "pool_total_size", "written_back_pages",
                    "reject_compress_poor", "stored_incompressible_pages")
            return [read_first_line(f"{d}/{k}", "") or "-" for k in keys] + ["debugfs"]
        pool = stored = 0
        for line in (read_text("/proc/meminfo") or "").splitlines():
            p = line.split()
            if p and p[0] == "Zswap:":
                pool = int(p[1]) * 1024
            elif p and p[0] == "Zswapped:":
                stored = int(p[1]) * 1024 // 4096
        return [str(stored), str(pool), "-", "-", "-", "meminfo"]

    def kzswap_debugfs_dump(self):
        """Every file of /sys/kernel/debug/zswap as 'path:value' lines."""
        d = f"{DEBUGFS}/zswap"
        if not os.path.isdir(d):
            return None
        out = []
        for name in sorted(os.listdir(d)):
            for line in (read_text(f"{d}/{name}") or "").splitlines():
                out.append(f"{d}/{name}:{line}")
        return "".join(x + "\n" for x in out)

    # ------------------------------------------------------------ a run

    def setup(self, kind, comp):
        """Cgroup, swap device and zswap for one kernel run.  A cgroup or
        swap file that cannot be set up ends the comparison (Fatal); a zswap
        or zram that cannot fails the run (SetupError)."""
        if kind == "kernel":
            try:
                self.zswap_off()
            except SetupError as e:
                raise Fatal(f"{self.prog}: cannot disable zswap: {e}")
        elif kind == "kzswap":
            self.zswap_on(comp)
        elif kind == "zram":
            self.zram_add(comp, self.swap_bytes)
        if not self.cg_create():
            raise Fatal(f"{self.prog}: cannot set up the memory cgroup {self.cg}")
        if kind in ("kernel", "kzswap"):
            if not run_quiet(["swapon", "-p", "32767", self.swapfile]):
                raise Fatal(f"{self.prog}: swapon {self.swapfile} failed")
        elif kind == "zram":
            if not run_quiet(["swapon", "-p", "32767", self.zram_dev]):
                raise SetupError(f"swapon {self.zram_dev} failed")

    def teardown(self):
        """Undo setup(), also after a partial one."""
        if not self.swapoff(self.swapfile):
            raise Fatal(f"{self.prog}: swapoff failed")
        self.zram_remove()
        try:
            self.zswap_off()
        except SetupError as e:
            raise Fatal(f"{self.prog}: cannot disable zswap: {e}")
        if not self.cg_remove():
            raise Fatal("")

    # ------------------------------------------------------------ clean-up

    def stop_running(self):
        """Stop the workload that is running, if any (timeout passes TERM on)."""
        p, self.running = self.running, None
        if p is None:
            return
        try:
            p.terminate()
        except OSError:
            pass
        remove(self.hold)
        try:
            p.wait()
        except OSError:
            pass

    def cleanup(self):
        """Leave the machine as it was found; safe to call at any point, and
        more than once."""
        self.stop_running()
        remove(self.hold)
        if self.cg and os.path.isdir(self.cg):
            self.cg_kill_all()
            self.cg_remove()
        if not self.swapoff(self.swapfile):
            say(f"{self.prog}: swapoff {self.swapfile} failed")
        remove(self.swapfile)
        for f in self.dev_files:
            remove(f)
        self.zram_remove()
        self.zswap_restore()
        if self.debugfs_mounted:
            subprocess.run(["umount", DEBUGFS], stderr=subprocess.DEVNULL)
            self.debugfs_mounted = False
        if self.cg_subtree_added:
            write_sysfs(f"{self.cg_root}/cgroup.subtree_control", "-memory")
            self.cg_subtree_added = False
