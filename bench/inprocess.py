#!/usr/bin/env python3
"""OMMX's own time on the work itself, in a warm interpreter, beside memprof's
whole process (see bench/README.md).

    $OMMX_PYTHON bench/inprocess.py [--runs N] [--memprof PATH] FILE...

For each file, in this one Python process (ommx imported once, the file's
bytes read once): `Instance.from_bytes(data).logical_memory_profile()` once
untimed, then N times timed (time.perf_counter); and `memprof inspect FILE
--format folded --quiet` as a whole process N times, interleaved with them.
Both outputs are compared byte for byte. When the `ommx_memprof` wheel is
importable here, its `profile(path).folded()` is timed in the same process
too (that is the wheel installed in this Python, not necessarily the code of
this checkout: it says which version it is).

Prints a markdown table of medians (and minima), and the ratios.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--memprof", default="target/release/memprof")
    args = parser.parse_args()

    import importlib.metadata as metadata

    from ommx.v1 import Instance

    version = metadata.version("ommx")
    try:
        import ommx_memprof

        wheel = metadata.version("ommx-memprof")
    except ImportError:
        ommx_memprof, wheel = None, None

    def memprof_process(path):
        start = time.perf_counter()
        out = subprocess.run(
            [args.memprof, "inspect", path, "--format", "folded", "--quiet"],
            check=True,
            stdout=subprocess.PIPE,
        ).stdout
        return time.perf_counter() - start, out.decode()

    rows = []
    for path in args.files:
        with open(path, "rb") as f:
            data = f.read()
        expected = Instance.from_bytes(data).logical_memory_profile()  # warm-up
        _, folded = memprof_process(path)  # warm-up
        same = folded == expected + "\n"
        ommx_times, memprof_times, wheel_times = [], [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            Instance.from_bytes(data).logical_memory_profile()
            ommx_times.append(time.perf_counter() - start)
            memprof_times.append(memprof_process(path)[0])
            if ommx_memprof is not None:
                start = time.perf_counter()
                ommx_memprof.profile(path).folded()
                wheel_times.append(time.perf_counter() - start)
        rows.append((path, len(data), ommx_times, memprof_times, wheel_times, same))

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"ommx {version} in one warm interpreter (from_bytes + logical_memory_profile, "
          f"the bytes read beforehand), memprof as a whole process; {args.runs} interleaved "
          f"runs after one warm-up, medians (minima); load average at the end {load}; "
          f"{os.cpu_count()} CPUs.")
    if wheel:
        print(f"ommx_memprof {wheel} (the wheel installed in {sys.executable}) in the same process.")
    print()
    head = "| file | size MB | ommx in-process s | memprof process s | memprof faster |"
    rule = "|---|---:|---:|---:|---:|"
    if wheel:
        head += " ommx_memprof in-process s |"
        rule += "---:|"
    print(head)
    print(rule)
    failed = False
    for path, size, o, m, w, same in rows:
        med = statistics.median
        row = (f"| {os.path.basename(path)} | {size / 1e6:.1f} | {med(o):.3f} ({min(o):.3f}) "
               f"| {med(m):.3f} ({min(m):.3f}) | {med(o) / med(m):.1f}× |")
        if wheel:
            row += f" {med(w):.3f} ({min(w):.3f}) |"
        print(row)
        failed |= not same
    print()
    for path, _, _, _, _, same in rows:
        verdict = "==" if same else "MISMATCH:"
        print(f"{os.path.basename(path)}: memprof folded output {verdict} ommx logical_memory_profile()")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
