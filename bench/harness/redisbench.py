# SPDX-License-Identifier: MIT
"""bench/redisbench: a real program as a workload.  redis-server is
started, loaded with 1 KB values of English-like text, and driven by
redis-benchmark with random GETs or SETs over the loaded keys; one result
line in the form of usemem's and pmbench's says how it went.

Only the server runs under the configuration: SERVER... (after '--') is
its command line as the configuration runs it (`uswap run ... --
redis-server`, the cgroup's wrapper shell and redis-server, or
redis-server alone), and redisbench appends the server's own options to
it.  redisbench itself, its loading and redis-benchmark run outside the
budget, as the clients of a server would.

Usage: bench/redisbench --test get|set [--keys N] [--value-size B]
                        [--requests N] [--clients N] [--pipeline N]
                        [--benchmark PATH] [--tmp DIR] [--hugepage]
                        -- SERVER [ARGS...]

  1. The server: a free loopback port, `--bind 127.0.0.1 --save ''
     --appendonly no --dir DIR` (DIR a directory of its own under --tmp,
     removed after), its log on our stderr; with --hugepage jemalloc is
     asked for MADV_HUGEPAGE (MALLOC_CONF=thp:always).
  2. The load (untimed): --keys keys (default 65536) key:%012d, in
     order, each a --value-size (default 1000) window of generated text
     (the words of pagedata.h, numbers and punctuation, about 1.6 with
     lz4 per 4 KiB; a different window per key, stamped with its key), by
     pipelined SET commands over one connection (1000 a batch, every
     reply checked), then DBSIZE checked.
  3. The timed phase: `redis-benchmark -h 127.0.0.1 -p PORT -c CLIENTS
     -P PIPELINE -n REQUESTS -r KEYS --csv GET key:__rand_int__` (or
     `SET key:__rand_int__ VALUE`, VALUE a text window of --value-size
     bytes): uniformly random keys over the loaded ones.  The server's
     CPU seconds (user and system: INFO cpu, getrusage of the whole
     server process, uswap's threads in it included) are read before and
     after.
  4. SHUTDOWN NOSAVE, and the server's exit status (uswap's when it runs
     under uswap, which writes its --stats as it ends).

Output: one line, `redis test=get keys=... value_size=... clients=...
pipeline=... requests=... load_secs=... used_memory=... rss=... secs=...
aps=... bytes=... mbps=... mean_us=... p50_us=... p95_us=... p99_us=...
max_us=... cpu_user=... cpu_sys=...`: aps is requests per second
(redis-benchmark's), the latencies are redis-benchmark's per request
(client side, queueing included, 1 us resolution), secs = requests / aps,
bytes counts 4 KiB per request (as pmbench per access, so that CPU
seconds per GB read the same way), cpu_* the server's over the timed
phase.  Progress goes to stderr.

Exit status: 0 done, 1 the server, the load or the benchmark failed, 2 bad
arguments or a missing program, 130 interrupted.
"""

import csv
import ctypes
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from .util import Interrupted, raise_on_signals, uninterrupted

PROG = "bench/redisbench"

# Keys are key:%012d, the form of redis-benchmark's key:__rand_int__ with
# -r: its random keys are the loaded ones.
KEY = "key:%012d"

# SET commands per batch of the load: sent, then their replies read while
# the next batch goes out.
BATCH = 1000

# Seconds for the server to answer PING after it starts, and to exit after
# SHUTDOWN (or a signal).
START_SECS = 60
STOP_SECS = 60

# The words of bench/pagedata.h's text pages.
WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at "
    "which but have an had they you were their one all we can her has there been if more "
    "when will would who so no memory page swap kernel process thread device compressed "
    "folio region budget reclaim fault slot request server client error value return struct "
    "buffer length count index timeout config status between through during without against "
    "because however although system number people time year world government information "
    "development university").split()

# The text that values are windows of: large enough that no two keys of a
# page share a window.
TEXT_BYTES = 1 << 20


class Failed(Exception):
    """The run failed: the message says why (exit 1)."""


def say(*words):
    print(" ".join(str(w) for w in words), file=sys.stderr, flush=True)


def make_text(seed=0x7e47):
    """TEXT_BYTES of English-like text (sentences of common words, some
    numbers, commas, line breaks), the same on every run."""
    rng = random.Random(seed)
    out, n, col, cap = [], 0, 0, True
    while n < TEXT_BYTES:
        r = rng.getrandbits(32)
        tok = str(rng.randrange(10000)) if r & 31 == 0 else WORDS[(r >> 8) % len(WORDS)]
        if cap:
            tok = tok.capitalize()
        cap = False
        if (r >> 20) % 12 == 0:
            tok += "."
            cap = True
        elif (r >> 20) % 9 == 0:
            tok += ","
        col += len(tok) + 1
        tok += "\n" if col > 72 else " "
        if col > 72:
            col = 0
        out.append(tok)
        n += len(tok)
    return "".join(out).encode()[:TEXT_BYTES]


def value_of(text, i, size):
    """Key i's value: a window of the text chosen by i, stamped with i."""
    stamp = b"[" + (KEY % i).encode() + b"] "
    span = len(text) - size
    off = (i * 2654435761 + 0x5851f42d) % span
    return (stamp + text[off:off + size])[:size]


# ---------------------------------------------------------------- RESP

class Client:
    """A minimal Redis client: RESP commands and replies over TCP."""

    def __init__(self, port, timeout):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def close(self):
        self.sock.close()

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += [b"$%d\r\n" % len(a), a, b"\r\n"]
        return b"".join(out)

    def _fill(self):
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buf += data

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return line
            self._fill()

    def reply(self):
        """One reply: str (status), int, bytes (bulk), list or None; an
        error reply raises Failed."""
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise Failed(f"the server replied: {rest.decode(errors='replace')}")
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data = bytes(self.buf[:n])
            del self.buf[:n + 2]
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise Failed(f"unexpected reply from the server: {line[:80]!r}")

    def call(self, *args):
        self.sock.sendall(self.encode(*args))
        return self.reply()

    def info(self, section):
        """INFO section as a dict of its fields."""
        text = self.call("INFO", section).decode(errors="replace")
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


# ---------------------------------------------------------------- the server

def free_port():
    """A loopback port nothing listens on now (the server may still lose it
    to another program: start() then tries another)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    """In the server's child: SIGTERM when redisbench dies, however it
    dies (PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class Server:
    """The server as the configuration runs it."""

    def __init__(self, argv, tmp, hugepage):
        self.argv, self.hugepage = argv, hugepage
        self.dir = tempfile.mkdtemp(prefix="uswap-bench-redis-", dir=tmp)
        self.proc, self.port = None, None

    def start(self):
        """Start it and wait for its PING; a few ports are tried when one
        turns out to be taken."""
        env = dict(os.environ)
        if self.hugepage:
            env["MALLOC_CONF"] = "thp:always"
        for _ in range(3):
            self.port = free_port()
            argv = self.argv + ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", self.dir, "--logfile", "",
                                "--daemonize", "no"]
            say(f"{PROG}: starting {shlex.join(argv)}")
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sys.stderr,
                                         stderr=sys.stderr, env=env, preexec_fn=die_with_parent)
            if self.wait_ready():
                return
            if self.proc.poll() is None:
                raise Failed(f"the server did not answer on port {self.port} within "
                             f"{START_SECS} s")
            rc = self.proc.returncode
            self.proc = None
            if rc != 1:
                raise Failed(f"the server exited with status {rc} as it started")
            # 1: as redis-server exits when it cannot listen; try another
            # port (its log above says why).
        raise Failed("the server exited with status 1 as it started, three times, on three "
                     "ports (its log above says why)")

    def wait_ready(self):
        deadline = time.monotonic() + START_SECS
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                c = Client(self.port, 5)
                try:
                    if c.call("PING") == "PONG":
                        return True
                finally:
                    c.close()
            except (OSError, ConnectionError, Failed):
                time.sleep(0.05)
        return False

    def shutdown(self, client):
        """SHUTDOWN NOSAVE, and its exit status (a shell's view)."""
        try:
            client.call("SHUTDOWN", "NOSAVE")
        except (OSError, ConnectionError):
            pass
        return self.wait(STOP_SECS)

    def wait(self, secs):
        try:
            rc = self.proc.wait(timeout=secs)
        except subprocess.TimeoutExpired:
            return None
        self.proc = None
        return 128 - rc if rc < 0 else rc

    def stop(self):
        """Whatever happened: the server is stopped (TERM, then KILL) and
        its directory removed."""
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.terminate()
                except OSError:
                    pass
                if self.wait(STOP_SECS) is None:
                    say(f"{PROG}: the server ignored SIGTERM for {STOP_SECS} s; killing it")
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- the phases

def load(client, keys, size, text):
    """SET every key, BATCH at a time, one batch in flight while the
    previous one's replies are read; every reply must be OK."""
    def batch(lo):
        return b"".join(Client.encode(b"SET", (KEY % i).encode(), value_of(text, i, size))
                        for i in range(lo, min(lo + BATCH, keys)))

    def replies(n):
        for _ in range(n):
            r = client.reply()
            if r != "OK":
                raise Failed(f"SET replied {r!r}")

    t0 = time.monotonic()
    pending = 0
    for lo in range(0, keys, BATCH):
        client.sock.sendall(batch(lo))
        replies(pending)
        pending = min(BATCH, keys - lo)
    replies(pending)
    secs = time.monotonic() - t0
    n = client.call("DBSIZE")
    if n != keys:
        raise Failed(f"DBSIZE is {n} after loading {keys} keys")
    return secs


def cpu(client):
    """The server's user and system CPU seconds so far."""
    i = client.info("cpu")
    return float(i["used_cpu_user"]), float(i["used_cpu_sys"])


def benchmark(o, port, text):
    """redis-benchmark over the loaded keys: its CSV row as a dict."""
    cmd = ["GET", "key:__rand_int__"]
    if o.test == "set":
        # One line: the CSV's test column is the command.
        value = value_of(text, o.keys, o.value_size).replace(b"\n", b" ").decode()
        cmd = ["SET", "key:__rand_int__", value]
    argv = [o.benchmark, "-h", "127.0.0.1", "-p", str(port), "-c", str(o.clients),
            "-P", str(o.pipeline), "-n", str(o.requests), "-r", str(o.keys), "--csv"] + cmd
    say(f"{PROG}: {' '.join(argv[:-1])} {'VALUE' if o.test == 'set' else argv[-1]}")
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.stderr.strip():
        sys.stderr.write(p.stderr)
    rows = [r for r in csv.reader(p.stdout.splitlines()) if r]
    if p.returncode != 0 or len(rows) < 2 or rows[0][:2] != ["test", "rps"]:
        tail = " ".join(p.stdout.split()[-8:])
        raise Failed(f"redis-benchmark exited with status {p.returncode}: {tail}")
    return dict(zip(rows[0], rows[1]))


def us(ms):
    return "%.0f" % (float(ms) * 1000)


def run(o):
    text = make_text()
    srv = Server(o.server, o.tmp, o.hugepage)
    client = None
    try:
        srv.start()
        client = Client(srv.port, None)
        say(f"{PROG}: loading {o.keys} keys of {o.value_size} bytes")
        load_secs = load(client, o.keys, o.value_size, text)
        mem = client.info("memory")
        say(f"{PROG}: loaded in {load_secs:.1f} s; used_memory {mem.get('used_memory')} rss "
            f"{mem.get('used_memory_rss')}")
        u0, s0 = cpu(client)
        row = benchmark(o, srv.port, text)
        u1, s1 = cpu(client)
        rc = srv.shutdown(client)
        if rc is None:
            raise Failed(f"the server did not exit within {STOP_SECS} s of SHUTDOWN")
        if rc != 0:
            raise Failed(f"the server exited with status {rc}")
    finally:
        if client is not None:
            client.close()
        with uninterrupted():
            srv.stop()
    aps = float(row["rps"])
    secs = o.requests / aps if aps > 0 else 0.0
    byts = o.requests * 4096
    mbps = byts / 1e6 / secs if secs > 0 else 0.0
    print(f"redis test={o.test} keys={o.keys} value_size={o.value_size} clients={o.clients} "
          f"pipeline={o.pipeline} requests={o.requests} load_secs={load_secs:.3f} "
          f"used_memory={mem.get('used_memory', '-')} rss={mem.get('used_memory_rss', '-')} "
          f"secs={secs:.3f} aps={aps:.0f} bytes={byts} mbps={mbps:.1f} "
          f"mean_us={us(row['avg_latency_ms'])} p50_us={us(row['p50_latency_ms'])} "
          f"p95_us={us(row['p95_latency_ms'])} p99_us={us(row['p99_latency_ms'])} "
          f"max_us={us(row['max_latency_ms'])} cpu_user={u1 - u0:.3f} cpu_sys={s1 - s0:.3f}",
          flush=True)


# ---------------------------------------------------------------- options

class Options:
    def __init__(self, argv):
        self.test, self.keys, self.value_size = None, 65536, 1000
        self.requests, self.clients, self.pipeline = 100000, 8, 1
        self.benchmark = shutil.which("redis-benchmark") or "redis-benchmark"
        self.tmp = os.environ.get("TMPDIR") or "/tmp"
        self.hugepage, self.server = False, []
        ints = {"--keys": "keys", "--value-size": "value_size", "--requests": "requests",
                "--clients": "clients", "--pipeline": "pipeline"}
        i = 0
        while i < len(argv):
            a = argv[i]
            if a == "--":
                self.server = argv[i + 1:]
                break
            if a in ("-h", "--help"):
                sys.stdout.write(__doc__[__doc__.index("Usage:"):])
                sys.exit(0)
            if a == "--hugepage":
                self.hugepage = True
                i += 1
                continue
            if i + 1 >= len(argv):
                raise Usage(f"{a}: missing value")
            v = argv[i + 1]
            if a == "--test":
                if v not in ("get", "set"):
                    raise Usage(f"--test '{v}': expected get or set")
                self.test = v
            elif a in ints:
                if not v.isdigit() or int(v) < 1:
                    raise Usage(f"{a} '{v}': expected a number >= 1")
                setattr(self, ints[a], int(v))
            elif a == "--benchmark":
                self.benchmark = v
            elif a == "--tmp":
                self.tmp = v
            else:
                raise Usage(f"unknown option '{a}'")
            i += 2
        if not self.test:
            raise Usage("--test get or --test set is required")
        if not self.server:
            raise Usage("no server command after '--'")
        if self.value_size < 32 or self.value_size > TEXT_BYTES // 2:
            raise Usage(f"--value-size {self.value_size}: expected 32 to {TEXT_BYTES // 2}")
        for p in (self.server[-1], self.benchmark):
            if not shutil.which(p):
                raise Usage(f"no {p} (Debian: apt-get install redis-server)")


class Usage(Exception):
    pass


def main(argv):
    raise_on_signals()
    try:
        o = Options(argv)
    except Usage as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    try:
        run(o)
    except Interrupted:
        say(f"{PROG}: interrupted; the server is stopped")
        return 130
    except (Failed, OSError, ConnectionError) as e:
        # After an empty line: the last two lines of stderr are the reason
        # bench/compare gives for a failed run.
        say()
        say(f"{PROG}: {e}")
        return 1
    return 0
