"""Traces every allocation OMMX 2.9.3 makes while loading an instance, phase by phase.

Usage: python bench/alloc_trace.py FILE [--top N] [--replay BIN] [--keep PATH] [--steps LINES]
       python bench/alloc_trace.py - --trace PATH [--top N | --steps LINES]
       (a Python with ommx==2.9.3; gcc)
       python bench/alloc_trace.py FILE --runtime 3.0 [...]   (a Python with ommx==3.0.0b7)
       python bench/alloc_trace.py V2FILE --runtime 3.0-v2 [...]   (3.0.0b7's from_v2_bytes)

Compiles bench/alloc_trace.c, runs a child interpreter under LD_PRELOAD that loads FILE the
way `Instance.from_bytes` does, one phase at a time (the Rust parse, the wrapper's
`raw.to_bytes()`, protobuf's `FromString` of those bytes), and prints for each phase the
chunk bytes live at its end and at its largest moment (heap and mapped), the requests live
at the largest moment by size, and each time glibc trimmed the heap (the break before and
after, above where it stood when the load began), the break at each phase's end, and after
the load the highest chunk still live and the highest that glibc's per-thread cache still
holds (a trim stops below both): the numbers `src/real_memory/` derives and was checked
against (docs/real-memory.md). One pass over the trace: a 100k-entity instance (2.5M
records) takes seconds.

With --replay, the child is traced from its first allocation and the trace replayed through
memprof's model of glibc malloc (glibc-model/, bench/glibc_replay.rs), which must
place every chunk at the address glibc gave it and leave the break where glibc left it; its
last line gives the resident the load left by the model.

With --steps, each phase's calls are printed in order, compressed into runs of a repeated
pattern: the load's allocation sequence as OMMX makes it (the prost decode's vectors growing by
realloc, the conversion's tables and BTreeMap nodes, OMMX's id sets, the clone of `to_bytes`,
upb's arena blocks), which an estimate that replays the load through the glibc model has to
make from the instance's counts.
"""

import argparse
import collections
import os
import shutil
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

# OMMX 3.0.0b7's load (`--runtime 3.0`): `ommx.Instance.from_v1_bytes`, one call (the prost
# decode and the conversion into 3.0's instance), then the input `bytes` freed.
CHILD30 = r"""
import ctypes, gc, sys
from ommx import Instance
lib = ctypes.CDLL(None)
warm = Instance.from_v1_bytes(bytes.fromhex(sys.argv[3])); del warm; gc.collect()
b = open(sys.argv[1], "rb").read()
lib.rm_start(sys.argv[2].encode())
lib.rm_mark(0)
instance = Instance.from_v1_bytes(b); lib.rm_mark(1)
del b; gc.collect(); lib.rm_mark(2)
lib.rm_stop()
"""

PHASES = ["parse", "to_bytes", "annotations"]
PHASES30 = ["from_v1_bytes", "input freed"]

# OMMX 3.0.0b7's load of its own message (`--runtime 3.0-v2`): `ommx.Instance.from_v2_bytes` of
# FILE, an `ommx.v2.Instance` (written by `to_v2_bytes`); warmed up the same way, on the tiny
# instance's v2 bytes.
CHILD30V2 = r"""
import ctypes, gc, sys
from ommx import Instance
lib = ctypes.CDLL(None)
tiny = Instance.from_v1_bytes(bytes.fromhex(sys.argv[3])).to_v2_bytes()
warm = Instance.from_v2_bytes(tiny); del warm, tiny; gc.collect()
b = open(sys.argv[1], "rb").read()
lib.rm_start(sys.argv[2].encode())
lib.rm_mark(0)
instance = Instance.from_v2_bytes(b); lib.rm_mark(1)
del b; gc.collect(); lib.rm_mark(2)
lib.rm_stop()
"""
PHASES30V2 = ["from_v2_bytes", "input freed"]
# Record kinds (bench/alloc_trace.c): malloc, calloc, realloc's new chunk, aligned; a mark.
ALLOCATIONS = (1, 3, 4, 5)
MARK = 9
# glibc's flag in a chunk's size field for a chunk of another thread's arena.
NON_MAIN_ARENA = 4


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    # An aligned allocation carries its alignment above the op's low byte.
    return ((op & 0xFF, ptr, size, aux) for op, ptr, size, aux in struct.iter_unpack("<4Q", data))


# glibc's per-thread cache (tcache): the last 7 chunks freed of each size up to 1,040 bytes stay
# "in use" as far as the heap is concerned, so a trim stops below the highest of them too. The
# trace's count of it is an approximation (it cannot see a chunk handed out by a call it does
# not intercept): on the 100k-entity instances it matched where glibc's trims stopped, on the
# 200 MB LP it did not.
TCACHE_LARGEST = 1040
TCACHE_COUNT = 7


def analyse(path, top):
    live = {}
    heap = mapped = 0
    phase = -1
    best = None
    made_now = collections.Counter()  # (request, chunk) of live chunks made in this phase
    at_best = collections.Counter()
    cache = collections.defaultdict(list)  # chunk size -> pointers, the last freed last
    start = brk = None  # the break (sbrk(0)) at the first mark, and now
    for op, ptr, size, aux in records(path):
        if op != MARK and aux & NON_MAIN_ARENA:
            continue  # another thread's arena: not the heap this follows
        if op in ALLOCATIONS:
            chunk, is_mapped = aux & ~7, bool(aux & 2)
            if not is_mapped and ptr in cache.get(chunk, ()):
                cache[chunk].remove(ptr)
            live[ptr] = (size, chunk, is_mapped, phase)
            made_now[(size, chunk)] += 1
            heap, mapped = heap + (0 if is_mapped else chunk), mapped + (chunk if is_mapped else 0)
            if best is None or heap + mapped > best[0] + best[1]:
                best = (heap, mapped)
                if top:
                    at_best = made_now.copy()
        elif op == 2:
            gone = live.pop(ptr, None)
            chunk = aux & ~7
            if gone:
                heap -= 0 if gone[2] else gone[1]
                mapped -= gone[1] if gone[2] else 0
                if gone[3] == phase:
                    made_now[(gone[0], gone[1])] -= 1
            if not aux & 2 and 0 < chunk <= TCACHE_LARGEST and len(cache[chunk]) < TCACHE_COUNT:
                cache[chunk].append(ptr)
            if size > 1 and brk is not None and size < brk:
                # glibc trimmed the top of the heap: down to the highest chunk in use.
                print(f"    trim in {PHASES[phase] if 0 <= phase < len(PHASES) else 'the end'}: "
                      f"the break from +{(brk - start) / 2**20:.2f} to "
                      f"+{(size - start) / 2**20:.2f} MiB")
            brk = size if size > 1 else brk
        elif op == MARK:
            # The load's first mark (a whole-process trace has one before it).
            start = aux if start is None or size == 0 else start
            brk = aux
            if 0 <= phase < len(PHASES):
                report(PHASES[phase], heap, mapped, best, at_best, top)
                print(f"    the break at its end: +{(brk - start) / 2**20:.2f} MiB")
            phase = size if size < len(PHASES) else len(PHASES)
            best, made_now = (heap, mapped), collections.Counter()
            at_best = collections.Counter()
    mib = 2**20
    highest_live = max((p + c for p, (_, c, m, _) in live.items() if not m), default=start)
    highest_cached = max((p + c for c, ps in cache.items() for p in ps), default=start)
    print(f"after the load: the break at +{(brk - start) / mib:.2f} MiB; the highest chunk live "
          f"at +{(highest_live - start) / mib:.2f}, the highest left in glibc's cache (as the "
          f"trace counts it) at +{(highest_cached - start) / mib:.2f}")


def report(name, heap, mapped, best, at_best, top):
    mib = 2**20
    print(
        f"{name:12s} live at end {heap / mib:8.2f} MiB heap + {mapped / mib:8.2f} mapped; "
        f"largest {best[0] / mib:8.2f} heap + {best[1] / mib:8.2f} mapped"
    )
    for (size, chunk), n in sorted(at_best.items(), key=lambda kv: -kv[0][1] * kv[1])[:top]:
        if n > 0:
            print(f"    request {size:>11,} chunk {chunk:>11,} x {n:>9,} = {chunk * n / mib:8.2f} MiB")


def tokens(path):
    """Each phase's calls as tokens: M, C, A (malloc, calloc, aligned) with the request, R with
    the old chunk and the new request, F with the chunk freed; `*` marks a mapped chunk."""
    phases = collections.defaultdict(list)
    phase, old = None, None
    for op, ptr, size, aux in records(path):
        mapped = "*" if aux & 2 else ""
        if op == MARK:
            phase = size
        elif phase is None or phase not in range(len(PHASES)):
            continue
        elif op == 2 and size == 1:
            old = f"{aux & ~7}{mapped}"
        elif op == 2:
            phases[phase].append(f"F{aux & ~7}{mapped}")
        elif op == 4 and old is not None:
            phases[phase].append(f"R{old}>{size}{mapped}")
            old = None
        else:
            phases[phase].append({1: "M", 3: "C", 4: "M", 5: "A"}[op] + f"{size}{mapped}")
    return phases


def compress(toks, longest=16):
    """Runs of a repeated pattern of up to `longest` tokens: (repeats, pattern)."""
    out, i = [], 0
    while i < len(toks):
        best = (1, 1)
        for p in range(1, longest + 1):
            if i + 2 * p > len(toks):
                break
            reps = 1
            while toks[i + reps * p : i + (reps + 1) * p] == toks[i : i + p]:
                reps += 1
            if reps > 1 and reps * p > best[0] * best[1]:
                best = (p, reps)
        p, reps = best
        out.append((reps, " ".join(toks[i : i + p])))
        i += p * reps
    return out


def steps(path, lines):
    for phase, toks in sorted(tokens(path).items()):
        runs = compress(toks)
        print(f"{PHASES[phase]}: {len(toks):,} calls in {len(runs):,} runs")
        for reps, pattern in runs[:lines]:
            print(f"  {reps:>7,} x [{pattern}]")
        if len(runs) > lines:
            print(f"  ... {len(runs) - lines:,} runs more")


def show(trace, args):
    """The trace's calls in order (--steps), or its phases' analysis."""
    if args.steps:
        steps(trace, args.steps)
    else:
        analyse(trace, args.top)


def build_tracer(folder: str) -> str:
    """Compiles bench/alloc_trace.c into `folder`; returns the library's path."""
    lib = os.path.join(folder, "alloc_trace.so")
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-o", lib, os.path.join(HERE, "alloc_trace.c"), "-ldl"],
        check=True,
    )
    return lib


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--top", type=int, default=10, help="sizes listed per phase (0: none)")
    parser.add_argument(
        "--replay",
        metavar="BIN",
        help="trace the whole process instead and replay it with BIN (glibc_replay, built by "
        "`cargo test` as target/debug/examples/glibc_replay): every chunk must land where "
        "glibc put it; prints its summary and exits as it does (with --check)",
    )
    parser.add_argument("--keep", metavar="PATH", help="copy the trace to PATH")
    parser.add_argument(
        "--steps",
        type=int,
        metavar="LINES",
        help="print each phase's calls in order instead, as runs of a repeated pattern (M malloc, "
        "C calloc, A aligned, with the request; R old chunk > new request; F the chunk freed; "
        "* mapped), at most LINES runs a phase",
    )
    parser.add_argument("--trace", metavar="PATH", help="read this trace instead of making one")
    parser.add_argument(
        "--runtime",
        choices=("2.9", "3.0", "3.0-v2"),
        default="2.9",
        help="whose load: ommx 2.9.3's phases (a Python with it), 3.0.0b7's from_v1_bytes, or "
        "3.0.0b7's from_v2_bytes of a v2 file",
    )
    args = parser.parse_args()
    if args.runtime == "3.0":
        PHASES[:] = PHASES30
    if args.runtime == "3.0-v2":
        PHASES[:] = PHASES30V2
    if args.trace:
        show(args.trace, args)
        return
    sys.path.insert(0, HERE)
    from real_memory import tiny_instance

    with tempfile.TemporaryDirectory() as tmp:
        lib = build_tracer(tmp)
        trace = os.path.join(tmp, "trace")
        env = dict(os.environ, LD_PRELOAD=lib)
        if args.replay:
            # From the process's first allocation, so that the replay knows the whole heap.
            env["RM_TRACE_ALL"] = trace
        subprocess.run(
            [
                sys.executable,
                "-c",
                {"3.0": CHILD30, "3.0-v2": CHILD30V2}.get(args.runtime, CHILD),
                args.file,
                trace,
                tiny_instance().hex(),
            ],
            env=env,
            check=True,
        )
        if args.keep:
            shutil.copyfile(trace, args.keep)
        if args.replay:
            sys.exit(subprocess.run([args.replay, trace, "--check", "--show", "5"]).returncode)
        show(trace, args)


if __name__ == "__main__":
    main()
