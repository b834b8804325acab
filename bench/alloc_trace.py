"""Traces every allocation OMMX 2.9.3 makes while loading an instance, phase by phase.

Usage: python bench/alloc_trace.py FILE [--top N]   (a Python with ommx==2.9.3; gcc)

Compiles bench/alloc_trace.c, runs a child interpreter under LD_PRELOAD that loads FILE the
way `Instance.from_bytes` does, one phase at a time (the Rust parse, the wrapper's
`raw.to_bytes()`, protobuf's `FromString` of those bytes), and prints for each phase the
chunk bytes live at its end and at its largest moment (heap and mapped), the requests live
at the largest moment by size, and each time glibc trimmed the heap (the break before and
after, above where it stood when the load began): the numbers `src/model/real/` derives and
was checked against (docs/real-memory.md).
"""

import argparse
import collections
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import ctypes, gc, sys
from ommx.v1 import Instance
from ommx import _ommx_rust
from ommx.v1.instance_pb2 import Instance as Message
lib = ctypes.CDLL(None)
warm = Instance.from_bytes(bytes.fromhex(sys.argv[3])); del warm; gc.collect()
b = open(sys.argv[1], "rb").read()
lib.rm_start(sys.argv[2].encode())
lib.rm_mark(0)
raw = _ommx_rust.Instance.from_bytes(b); lib.rm_mark(1)
encoded = raw.to_bytes(); lib.rm_mark(2)
message = Message.FromString(encoded); lib.rm_mark(3)
del encoded, message; gc.collect(); lib.rm_stop()
"""

PHASES = ["parse", "to_bytes", "annotations"]


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    return struct.iter_unpack("<4Q", data)


def analyse(path, top):
    live = {}
    heap = mapped = 0
    phase = -1
    best = None
    at_best = {}
    start = brk = None  # the break (sbrk(0)) at the first mark, and now
    for op, ptr, size, aux in records(path):
        if op == 1:
            chunk, is_mapped = aux & ~7, bool(aux & 2)
            live[ptr] = (size, chunk, is_mapped, phase)
            heap, mapped = heap + (0 if is_mapped else chunk), mapped + (chunk if is_mapped else 0)
            if best is None or heap + mapped > best[0] + best[1]:
                best = (heap, mapped)
                at_best = dict(live) if top else at_best
        elif op == 2:
            gone = live.pop(ptr, None)
            if gone:
                heap -= 0 if gone[2] else gone[1]
                mapped -= gone[1] if gone[2] else 0
            if size > 1 and brk is not None and size < brk:
                # glibc trimmed the top of the heap: down to the highest chunk in use.
                print(f"    trim in {PHASES[phase] if 0 <= phase < len(PHASES) else 'the end'}: "
                      f"the break from +{(brk - start) / 2**20:.2f} to "
                      f"+{(size - start) / 2**20:.2f} MiB")
            brk = size if size > 1 else brk
        else:
            start = aux if start is None else start
            brk = aux
            if 0 <= phase < len(PHASES):
                report(PHASES[phase], heap, mapped, best, at_best, phase, top)
            phase = size if size < len(PHASES) else len(PHASES)
            best, at_best = (heap, mapped), dict(live) if top else {}


def report(name, heap, mapped, best, at_best, phase, top):
    mib = 2**20
    print(
        f"{name:12s} live at end {heap / mib:8.2f} MiB heap + {mapped / mib:8.2f} mapped; "
        f"largest {best[0] / mib:8.2f} heap + {best[1] / mib:8.2f} mapped"
    )
    sizes = collections.Counter()
    for size, chunk, _, made in at_best.values():
        if made == phase:
            sizes[(size, chunk)] += 1
    for (size, chunk), n in sorted(sizes.items(), key=lambda kv: -kv[0][1] * kv[1])[:top]:
        print(f"    request {size:>11,} chunk {chunk:>11,} x {n:>9,} = {chunk * n / mib:8.2f} MiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--top", type=int, default=10, help="sizes listed per phase (0: none)")
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    from real_memory import tiny_instance

    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, "alloc_trace.so")
        subprocess.run(
            ["gcc", "-O2", "-shared", "-fPIC", "-o", lib, os.path.join(HERE, "alloc_trace.c")],
            check=True,
        )
        trace = os.path.join(tmp, "trace")
        env = dict(os.environ, LD_PRELOAD=lib)
        subprocess.run(
            [sys.executable, "-c", CHILD, args.file, trace, tiny_instance().hex()],
            env=env,
            check=True,
        )
        analyse(trace, args.top)


if __name__ == "__main__":
    main()
