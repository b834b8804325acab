"""Writes the interpreter's heap as `bench/real_memory.py measure` has it when the load begins,
for the simulated load to start from (src/real_memory/load29/interpreter.heap).

Usage: python bench/heap_snapshot.py FILE [OUT]   (a Python with ommx==2.9.3; gcc; cargo)
       python bench/heap_snapshot.py --runtime 3.0 FILE [OUT]   (a Python with ommx==3.0.0b7:
       src/real_memory/load30/interpreter.heap, the heap 3.0's simulated load starts from)

Runs `measure` on FILE in a child traced from its first allocation (bench/alloc_trace.c with
RM_TRACE_ALL), marking the load's start, replays the trace through memprof's model of glibc
malloc (bench/glibc_replay.rs --check: every chunk must land where glibc put it) and writes the
model's heap at that mark: the imports' and the warm-up load's chunks, the free ones between them,
the top chunk and the thresholds. FILE should be an instance whose bytes glibc maps (a few MB):
then they are not in the heap. The committed snapshot was taken on bench/real_memory.py's
sparse_qubo-20k. The tracer's own presence shifts the heap by a few kilobytes against an untraced
process, so the snapshot is the measuring process's heap up to that shift.
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from alloc_trace import build_tracer  # noqa: E402

CHILD = r"""
import ctypes, sys
sys.path.insert(0, sys.argv[2])
import real_memory
lib = ctypes.CDLL(None)
real_memory.measure(sys.argv[1], sys.argv[3], before_load=lambda: lib.rm_mark(0))
lib.rm_stop()
"""


def main():
    args = sys.argv[1:]
    runtime = "2.9"
    if args[:1] == ["--runtime"] and len(args) > 1:
        runtime, args = args[1], args[2:]
    if len(args) not in (1, 2) or runtime not in ("2.9", "3.0"):
        sys.exit(__doc__.splitlines()[2])
    recipe = "load29" if runtime == "2.9" else "load30"
    out = args[1] if len(args) == 2 else os.path.join(
        REPO, "src", "real_memory", recipe, "interpreter.heap"
    )
    subprocess.run(
        ["cargo", "build", "--release", "--example", "glibc_replay"], cwd=REPO, check=True
    )
    replay = os.path.join(REPO, "target", "release", "examples", "glibc_replay")
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_tracer(tmp)
        trace = os.path.join(tmp, "trace")
        env = dict(os.environ, LD_PRELOAD=lib, RM_TRACE_ALL=trace)
        subprocess.run([sys.executable, "-c", CHILD, args[0], HERE, runtime], env=env, check=True)
        subprocess.run([replay, trace, "--check", "--snapshot", out], check=True)
    print(f"heap_snapshot: wrote {out}")


if __name__ == "__main__":
    main()
