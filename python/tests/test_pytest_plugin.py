"""The pytest plugin: `--memprof-baseline DIR` records, then compares."""

import json

SUITE = '''
from ommx.v1 import DecisionVariable, Instance

N = {n}

def build(n):
    xs = [DecisionVariable.binary(i, name="x", subscripts=[i]) for i in range(n)]
    return Instance.from_components(
        decision_variables=xs,
        objective=sum(xs),
        constraints=[(xs[0] + xs[-1] <= 1).set_id(0)],
        sense=Instance.MAXIMIZE,
    )

def test_model(memprof):
    memprof.record("model", build(N))

def test_budget(memprof):
    memprof.record("small", build(3), budget="64 KiB")
'''


def test_records_then_compares(pytester):
    pytester.makepyfile(test_suite=SUITE.format(n=10))
    first = pytester.runpytest("--memprof-baseline", "baselines")
    first.assert_outcomes(passed=2)
    first.stdout.fnmatch_lines(["*memprof*", "2 instance(s) recorded", "2 baseline(s) written (commit them):"])
    saved = json.loads((pytester.path / "baselines" / "model.json").read_text())
    assert saved["schema_version"] == 1 and saved["input"]["name"] == "model"

    again = pytester.runpytest("--memprof-baseline", "baselines")
    again.assert_outcomes(passed=2)
    again.stdout.fnmatch_lines(["2 compared with their baseline in baselines (0 over budget)"])

    pytester.makepyfile(test_suite=SUITE.format(n=12))
    grown = pytester.runpytest("--memprof-baseline", "baselines")
    grown.assert_outcomes(passed=1, failed=1)
    grown.stdout.fnmatch_lines(
        [
            "*AssertionError: memprof: model exceeds its budget*",
            "*model (against baselines/model.json): FAIL*",
            "*the total may not grow*",
            "*Which paths grew: ommx_memprof.profile('baselines/model.json').diff(instance).table()*",
            "*run pytest again with --memprof-update*",
        ]
    )

    updated = pytester.runpytest("--memprof-baseline", "baselines", "--memprof-update")
    updated.assert_outcomes(passed=2)
    assert pytester.runpytest("--memprof-baseline", "baselines").ret == 0


def test_without_a_baseline_dir_budgets_still_hold(pytester):
    pytester.makepyfile(
        test_suite=SUITE.format(n=10).replace('budget="64 KiB"', 'budget="1 KiB"')
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*small: FAIL*"])
    assert not (pytester.path / "baselines").exists()


def test_names_are_checked(pytester):
    pytester.makepyfile(
        test_names='''
import pytest
from ommx.v1 import DecisionVariable, Instance

def instance():
    x = DecisionVariable.binary(0)
    return Instance.from_components(decision_variables=[x], objective=x, constraints=[], sense=Instance.MINIMIZE)

def test_first(memprof):
    memprof.record("a", instance())

def test_same_name_again(memprof):
    with pytest.raises(ValueError, match="the name 'a' was already recorded by test_names.py::test_first"):
        memprof.record("a", instance())

def test_bad_name(memprof):
    with pytest.raises(ValueError, match="not usable as a file name"):
        memprof.record("../a", instance())
'''
    )
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=3)
