"""The size of a notebook showing memprof reports (issue 45): three small
reports as cells' outputs (the kitchen-sink fixture's profile, the knapsack
of docs/python.md, and the diff of obj_linear and obj_linear_constant),
written as an .ipynb, with the outputs the installed wheel makes and with
those it made before (the page HTML-escaped whole into the frame's srcdoc,
and the flamegraph's SVG beside it: rebuilt here from `html()` and
`flamegraph()`, which are unchanged).

    python bench/notebook_size.py      # with ommx-memprof and nbformat installed
"""

import html
import io
import sys
from pathlib import Path

import nbformat
from ommx.v1 import DecisionVariable, Instance

import ommx_memprof

ORACLE = Path(__file__).resolve().parents[1] / "fixtures" / "oracle"


def knapsack() -> Instance:
    weights, values = [11, 7, 5, 3, 9, 4], [5, 3, 2, 1, 6, 2]
    x = [DecisionVariable.binary(i, name="x", subscripts=[i]) for i in range(6)]
    return Instance.from_components(
        decision_variables=x,
        objective=sum(v * xi for v, xi in zip(values, x)),
        constraints=[(sum(w * xi for w, xi in zip(weights, x)) <= 20).set_id(0).add_name("capacity")],
        sense=Instance.MAXIMIZE,
    )


def before(shown) -> dict:
    """The output bundle of the wheel before: the page escaped into srcdoc,
    the SVG beside it."""
    page = shown.html()
    frame = (
        '<iframe class="ommx-memprof-report" title="memprof report" '
        f'srcdoc="{html.escape(page, quote=True)}" '
        'style="display:block;width:100%;height:720px;border:0"></iframe>'
    )
    return {"text/html": frame, "image/svg+xml": shown.flamegraph(), "text/plain": repr(shown)}


def after(shown) -> dict:
    return {"text/html": shown._repr_html_(), "text/plain": repr(shown)}


def notebook(bundles) -> int:
    nb = nbformat.v4.new_notebook()
    for i, data in enumerate(bundles, 1):
        cell = nbformat.v4.new_code_cell(f"report {i}", execution_count=i)
        cell.outputs = [nbformat.v4.new_output("execute_result", data=data, execution_count=i)]
        nb.cells.append(cell)
    out = io.StringIO()
    nbformat.write(nb, out)
    return len(out.getvalue().encode("utf-8"))


def main() -> None:
    shown = [
        ommx_memprof.profile(ORACLE / "kitchen_sink.pb"),
        ommx_memprof.profile(knapsack()),
        ommx_memprof.profile(ORACLE / "obj_linear.pb").diff(ORACLE / "obj_linear_constant.pb"),
    ]
    for label, make in [("before", before), ("after", after)]:
        bundles = [make(s) for s in shown]
        each = ", ".join(f"{sum(len(v.encode()) for v in b.values()) / 1000:.0f} KB" for b in bundles)
        print(f"{label}: notebook {notebook(bundles) / 1000:.0f} KB (outputs {each})", flush=True)
    page = shown[0].html()
    print(f"the page itself: {len(page.encode()) / 1000:.0f} KB", file=sys.stderr)


if __name__ == "__main__":
    main()
