# SPDX-License-Identifier: MIT
"""bigdata.py TOTAL_MIB WORKERS - the acceptance workload of issue 5.

Builds TOTAL_MIB of data in 64 MiB bytearrays (deterministic, mixed:
random, text-like and zero runs, so that a compressed tier sees real
data), checksums each in the parent, then again in multiprocessing
workers (fork: they inherit the arrays, swapped-out parts included) and
prints every checksum.  The output depends only on the arguments, so a
run under uswap must print exactly what a run without it prints.
"""
import hashlib
import multiprocessing as mp
import random
import sys

CHUNK = 64 << 20


def build(i):
    rnd = random.Random(i)
    a = bytearray(CHUNK)
    view = memoryview(a)
    pos = 0
    while pos < CHUNK:
        kind = rnd.randrange(4)
        n = min(rnd.randrange(4096, 65536), CHUNK - pos)
        if kind == 0:
            view[pos:pos + n] = rnd.randbytes(n)
        elif kind == 1:
            word = (b"uswap %d swaps %d pages " % (i, pos)) * (n // 16 + 1)
            view[pos:pos + n] = word[:n]
        elif kind == 2:
            view[pos:pos + n] = bytes(range(256)) * (n // 256) + bytes(n % 256)
        pos += n  # kind 3: zeros
    return a


def digest(a):
    return hashlib.sha256(a).hexdigest()


arrays = []


def worker(i):
    return i, digest(arrays[i])


def main():
    total, workers = int(sys.argv[1]), int(sys.argv[2])
    for i in range(total * (1 << 20) // CHUNK):
        arrays.append(build(i))
    mine = [digest(a) for a in arrays]
    ctx = mp.get_context("fork")
    with ctx.Pool(workers) as pool:
        theirs = dict(pool.map(worker, range(len(arrays))))
    for i, d in enumerate(mine):
        print(i, d, "ok" if theirs[i] == d else "MISMATCH " + theirs[i])
    print("total", digest(b"".join(bytes.fromhex(d) for d in mine)))


if __name__ == "__main__":
    main()
