# SPDX-License-Identifier: MIT
"""Messages, exit statuses, signal handling, sizes and file helpers shared by
the bench tools."""

import contextlib
import os
import re
import signal
import sys

# Where the repository is: bench/harness/ is two levels below it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Fatal(Exception):
    """Ends a tool with a message and an exit status (1: the machine could
    not be set up, 2: bad arguments or not root)."""

    def __init__(self, msg, status=1):
        super().__init__(msg)
        self.msg = msg
        self.status = status


class Interrupted(Exception):
    """SIGINT, SIGTERM or SIGHUP arrived: stop and restore the machine."""


def say(*words):
    """Progress and errors go to stderr, so that stdout holds only the
    results (a table or JSON)."""
    print(" ".join(str(w) for w in words), file=sys.stderr, flush=True)


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def block_signals():
    """Hold those signals back for the rest of the process: called when the
    work is done and the machine restored, so that the exit status says
    what happened, not the last signal that arrived."""
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)


def raise_on_signals():
    """From now on SIGINT, SIGTERM and SIGHUP raise Interrupted, so that a
    try/finally around the work can put the machine back, and the tool
    exits 130 whenever one arrives."""
    for s in SIGNALS:
        signal.signal(s, _raise_interrupted)


@contextlib.contextmanager
def uninterrupted():
    """Within the block (clean-up), those signals are ignored: a second
    Ctrl-C must not leave a swap file on or a cgroup behind."""
    old = {s: signal.signal(s, signal.SIG_IGN) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def require_root(prog, why):
    """Exit 2 with a message when not root."""
    if os.geteuid() != 0:
        print(f"{prog}: needs root ({why}); run it with sudo", file=sys.stderr)
        sys.exit(2)


_SIZE = re.compile(r"^([0-9]+)([kKmMgGtT]?)(i?[bB])?$")


def to_bytes(text):
    """A size with an optional K, M, G or T suffix (powers of 1024) in bytes,
    or None when it is not one."""
    m = _SIZE.match(text)
    if not m:
        return None
    shift = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[m.group(2).lower()]
    return int(m.group(1)) << shift


def read_text(path, default=None):
    """A file's contents, or default when it cannot be read."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def read_first_line(path, default=""):
    """A file's first line without its newline (sysfs values)."""
    text = read_text(path)
    return text.split("\n", 1)[0] if text is not None else default


def write_sysfs(path, value):
    """Write value and a newline to a sysfs or procfs file; None on success,
    else the reason as the kernel gave it (strerror)."""
    try:
        with open(path, "w") as f:
            f.write(f"{value}\n")
    except OSError as e:
        return e.strerror or str(e)
    return None


def remove(path):
    """Remove a file if it exists."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def words(text):
    """A space- or comma-separated list, as the options take them."""
    return text.replace(",", " ").split()


def loadavg1():
    """The 1-minute load average, as /proc/loadavg writes it."""
    return read_first_line("/proc/loadavg").split()[0]


def loadavg3():
    """The 1-, 5- and 15-minute load averages, space-separated."""
    return " ".join(read_first_line("/proc/loadavg").split()[:3])
