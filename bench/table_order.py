"""Prints the order in which OMMX 2.9.3's `to_bytes` grows the vectors of a quadratic objective,
as an allocation trace of the real load shows it: what src/model/table_order.rs computes
from the file alone (its test holds it to this script's output on fixtures/table_order/).

Usage: python bench/table_order.py FILE...   (a Python with ommx==2.9.3; gcc)

Each FILE is loaded in a child traced by bench/alloc_trace.c, as bench/alloc_trace.py loads it.
`to_bytes` reads the objective's table in the table's order and pushes each pair onto three
vectors (columns, rows, values: 8 bytes an element) and each linear term onto a fourth (16
bytes): the three are made together at their first push (three mallocs of 32 bytes), the
linear one at its first (64 bytes), and each grows by realloc, doubling. Following those
pointers through the to_bytes phase gives one line per FILE: `FILE: P4 P8 L4 P16 ...`, each
growth of the pairs' vectors (Pn, to capacity n) or of the linear terms' (Ln) in turn.
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from alloc_trace import CHILD, MARK, build_tracer, records  # noqa: E402
from real_memory import tiny_instance  # noqa: E402

MALLOC, FREE, REALLOC = 1, 2, 4
PAIR_BYTES, TERM_BYTES = 8, 16


def growths(trace):
    """The growth order of the objective's vectors in a trace's to_bytes phase."""
    phase, freed, made = None, None, []
    pairs, pair_cap, linear, out = set(), 0, None, []
    for op, ptr, size, _ in records(trace):
        if op == MARK:
            phase = size
        elif phase != 1:
            continue
        elif op == MALLOC and size == 4 * PAIR_BYTES and not pairs:
            # The three pair vectors are made one after another.
            made.append(ptr)
            if len(made) == 3:
                pairs, pair_cap = set(made), 4
                out.append("P4")
            continue
        elif op == MALLOC and size == 4 * TERM_BYTES and pairs and linear is None:
            linear = ptr
            out.append("L4")
        elif op == FREE and size == 1:
            # A realloc's old chunk: its new one comes next.
            freed = ptr
            continue
        elif op == REALLOC and freed in pairs:
            pairs.discard(freed)
            pairs.add(ptr)
            # The three grow to each capacity in turn: one growth.
            if size // PAIR_BYTES > pair_cap:
                pair_cap = size // PAIR_BYTES
                out.append(f"P{pair_cap}")
        elif op == REALLOC and freed is not None and freed == linear:
            linear = ptr
            out.append(f"L{size // TERM_BYTES}")
        made, freed = [], None
    return " ".join(out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.splitlines()[3])
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_tracer(tmp)
        for path in sys.argv[1:]:
            trace = os.path.join(tmp, "trace")
            env = dict(os.environ, LD_PRELOAD=lib)
            subprocess.run(
                [sys.executable, "-c", CHILD, path, trace, tiny_instance().hex()],
                env=env,
                check=True,
            )
            print(f"{os.path.basename(path)}: {growths(trace)}")


if __name__ == "__main__":
    main()
