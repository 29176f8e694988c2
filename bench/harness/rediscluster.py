# SPDX-License-Identifier: MIT
"""A Redis Cluster on loopback for bench/compare's uswap-redis
configurations: redis-server processes started here (cluster mode, no
persistence, noeviction) and joined with redis-cli --cluster create, and
always stopped by stop(), which the caller runs in a finally clause."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from .util import Fatal


def free_ports(n):
    """n distinct free loopback ports."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Cluster:
    """masters masters with replicas replicas each, on loopback."""

    def __init__(self, server, masters=3, replicas=0):
        self.server = server
        self.cli = shutil.which("redis-cli")
        self.masters, self.replicas = masters, replicas
        self.procs, self.ports = [], []
        self.dir = None

    @property
    def seeds(self):
        """The --swap redis:// addresses: every node."""
        return ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def _cli(self, port, *args):
        return subprocess.run([self.cli, "-p", str(port)] + list(args),
                              capture_output=True, text=True, timeout=30).stdout

    def start(self):
        if not self.cli or not self.server:
            raise Fatal("bench/compare: uswap-redis needs redis-server and redis-cli "
                        "(Debian: redis-server, redis-tools)", 2)
        n = self.masters * (1 + self.replicas)
        ports = free_ports(2 * n)
        self.ports, bus = ports[:n], ports[n:]
        self.dir = tempfile.mkdtemp(prefix="uswap-bench-redis.")
        for port, bport in zip(self.ports, bus):
            d = os.path.join(self.dir, str(port))
            os.makedirs(d)
            log = open(os.path.join(d, "log"), "w")
            self.procs.append(subprocess.Popen(
                [self.server, "--port", str(port), "--bind", "127.0.0.1", "--dir", d,
                 "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction",
                 "--cluster-enabled", "yes", "--cluster-node-timeout", "2000",
                 "--cluster-port", str(bport),
                 "--cluster-config-file", os.path.join(d, "nodes.conf")],
                stdout=log, stderr=log, start_new_session=True))
        for port in self.ports:
            self._wait(lambda p=port: "PONG" in self._cli(p, "ping"), f"node {port}")
        r = subprocess.run([self.cli, "--cluster", "create"] +
                           [f"127.0.0.1:{p}" for p in self.ports] +
                           ["--cluster-replicas", str(self.replicas), "--cluster-yes"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            raise Fatal(f"bench/compare: redis-cli --cluster create: {r.stdout[-400:]}", 1)
        self._wait(lambda: all("cluster_state:ok" in self._cli(p, "cluster", "info")
                               for p in self.ports), "the cluster")
        return self

    def _wait(self, ok, what):
        for _ in range(300):
            if ok():
                return
            time.sleep(0.1)
        raise Fatal(f"bench/compare: {what} did not come up", 1)

    def used_bytes(self):
        """Memory the masters use now (INFO memory used_memory)."""
        total = 0
        for p in self.ports:
            for line in self._cli(p, "info", "memory").splitlines():
                if line.startswith("used_memory:"):
                    total += int(line.split(":")[1])
        return total

    def stop(self):
        for pr in self.procs:
            try:
                os.killpg(pr.pid, signal.SIGKILL)
            except OSError:
                pass
            pr.wait()
        self.procs = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
