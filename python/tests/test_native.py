"""The boundary with the compiled module: typed results (never tuples), and
its stub (ommx_memprof/_native.pyi) naming what the module has."""

import ast
import inspect

import ommx_memprof
from ommx_memprof import _native
from conftest import ORACLE, REPO

STUB = REPO / "python" / "ommx_memprof" / "_native.pyi"


def stubbed():
    """name -> (parameter names, or None for a class or value; members of a class)."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    names = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = [a.arg for a in node.args.args]
        elif isinstance(node, ast.ClassDef):
            names[node.name] = {
                m.name: [a.arg for a in m.args.args][1:]
                for m in node.body
                if isinstance(m, ast.FunctionDef)
            }
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = None
    return names


def parameters(function):
    return [p for p in inspect.signature(function).parameters if p not in ("self", "$self")]


def test_the_stub_names_what_the_module_has():
    stub = stubbed()
    public = {n for n in dir(_native) if not n.startswith("_")} | {"__version__"}
    assert set(stub) == public
    for name, entry in stub.items():
        item = getattr(_native, name)
        if isinstance(entry, dict):
            members = {n for n in dir(item) if not n.startswith("_")}
            assert set(entry) == members, name
            for member, params in entry.items():
                attribute = getattr(item, member)
                if callable(attribute):
                    assert parameters(attribute) == params, f"{name}.{member}"
        elif entry is not None:
            assert parameters(item) == entry, name


def test_results_are_typed(kitchen_sink, tmp_path):
    p = ommx_memprof.profile(kitchen_sink)
    assert isinstance(p._native.real_memory, _native.RealMemory)
    assert isinstance(p.real_memory, ommx_memprof.RealMemory)
    assert p.real_memory._asdict()["held_bytes"] == p._native.real_memory.held_bytes
    for report, tables in [
        (p.top(3), ["entities"]),
        (p.stats(), ["kinds", "families"]),
        (p.advise(), ["recommendations"]),
        (p.explain("Instance.sense"), ["explanations"]),
    ]:
        assert isinstance(report._native, _native.Rendered)
        assert report.tables == tables
        assert report.records(tables[-1]) is not report.records(tables[-1])
    outcome = p._native.check(budget="1 KiB")
    assert isinstance(outcome, _native.CheckOutcome) and not outcome.passed
    assert outcome.document.table_names == ["results"]


def test_rows_lead_with_their_group(kitchen_sink):
    p = ommx_memprof.profile(kitchen_sink)
    base = ommx_memprof.profile(ORACLE / "obj_linear.pb")
    rows = p.check({"total": "1 MiB", "Instance.constraints": "1 B"}, baseline=base).records()
    assert [list(r)[:3] for r in rows] == [["file", "baseline", "rule"]] * 2
    assert {r["baseline"] for r in rows} == {base.name}
    assert [r["layer"] for r in ommx_memprof.profile(ORACLE / "multi.ommx").advise().records()][:1] == [0]
