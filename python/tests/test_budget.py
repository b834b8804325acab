"""check() and assert_within(): the verdict and the table of `memprof check`."""

import pytest

import ommx_memprof
from conftest import ORACLE, run_memprof


def test_assert_within_passes(kitchen_sink):
    p = ommx_memprof.assert_within(kitchen_sink, "64 MiB")
    assert p.total == 4298
    ommx_memprof.assert_within(kitchen_sink, 4298)
    ommx_memprof.assert_within(kitchen_sink, {"Instance.constraints": "32 MiB", "total": "5 KiB"})


def test_assert_within_fails_with_the_check_table(tmp_path, kitchen_sink):
    with pytest.raises(AssertionError) as err:
        ommx_memprof.assert_within(kitchen_sink, {"Instance.constraints": "1 KiB"})
    message = str(err.value)
    budget = tmp_path / "budget.yaml"
    budget.write_text('rules:\n  - path: "Instance.constraints"\n    max: 1 KiB\n')
    cli = run_memprof("check", kitchen_sink, "--budget", budget)
    assert cli.returncode == 1
    # The same table; the command's report also names its budget file.
    assert cli.stdout == f"budget: {budget}\n\n" + message
    assert "FAIL" in message and "Instance.constraints" in message
    with pytest.raises(AssertionError, match="overall: FAIL"):
        ommx_memprof.assert_within(kitchen_sink, 4297)


def test_an_instance_object(kitchen_sink):
    from ommx.v1 import Instance

    instance = Instance.from_bytes(kitchen_sink.read_bytes())
    ommx_memprof.assert_within(instance, "5 KiB")
    with pytest.raises(AssertionError, match="<instance>: FAIL"):
        ommx_memprof.assert_within(instance, "4 KiB")


def test_rules_with_every_limit(kitchen_sink):
    budget = {
        "Instance.decision_variables": {"max_per_variable": 200},
        "**;PolynomialBase.terms": {"max_per_term": "100 B", "message": "terms got costly"},
    }
    result = ommx_memprof.profile(kitchen_sink).check(budget)
    assert result.passed and bool(result)
    assert result.to_dict()["pass"] is True
    failed = ommx_memprof.profile(kitchen_sink).check({"Instance.decision_variables": {"max_per_variable": 100}})
    assert not failed
    assert "FAIL" in str(failed)


def test_budget_file_and_baseline(kitchen_sink):
    fixtures = ORACLE.parent
    budget, baseline = fixtures / "budgets" / "fixtures.yaml", fixtures / "baselines" / "kitchen_sink.pb.json"
    result = ommx_memprof.profile(kitchen_sink).check(budget_file=budget, baseline=baseline)
    cli = run_memprof("check", kitchen_sink, "--budget", budget, "--baseline", baseline)
    assert cli.returncode == 0 and result.passed
    assert str(result) == cli.stdout


def test_baseline(tmp_path):
    small = ommx_memprof.profile(ORACLE / "obj_linear_constant.pb")
    large = ommx_memprof.profile(ORACLE / "obj_linear.pb")
    small.save(tmp_path / "small.json")
    by_profile, by_file = large.check(baseline=small), large.check(baseline=tmp_path / "small.json")
    assert str(by_profile) == str(by_file).replace(str(tmp_path / "small.json"), small.name)
    assert not large.check(baseline=tmp_path / "small.json")
    assert small.check(baseline=large)
    assert large.check({"total": {"max_growth": "20%"}}, baseline=small)
    assert not large.check({"total": {"max_growth": 10}}, baseline=small)


def test_budget_errors(kitchen_sink):
    p = ommx_memprof.profile(kitchen_sink)
    with pytest.raises(ValueError, match="needs a budget, a baseline or both"):
        p.check()
    with pytest.raises(ValueError, match="^budget: invalid budget: "):
        p.check("64 parsecs")
    with pytest.raises(ValueError, match=r'rule 1 \(path "total"\) sets max_growth, which needs --baseline'):
        p.check({"total": {"max_growth": "5%"}})
    with pytest.warns(UserWarning, match=r'rule 1 \(path "Instance.nothing"\) matches no path'):
        assert p.check({"Instance.nothing": "1 B"})


def test_numbers_are_read_as_the_budget_file_s_limits(tmp_path, kitchen_sink):
    # What a number is (bytes for a size, percent for a growth) is memprof's
    # reading of the budget, as from a budget file.
    budget = tmp_path / "budget.yaml"
    budget.write_text(
        "rules:\n  - path: total\n    max_growth: 2.5%\n    min_delta: 100 B\n"
        "  - path: Instance.decision_variables\n    max_per_variable: 200 B\n"
    )
    base = ORACLE / "obj_linear.pb"
    cli = run_memprof("check", kitchen_sink, "--budget", budget, "--baseline", base)
    given = ommx_memprof.profile(kitchen_sink).check(
        {"total": {"max_growth": 2.5, "min_delta": 100}, "Instance.decision_variables": {"max_per_variable": 200}},
        baseline=base,
    )
    assert cli.returncode == 1 and not given
    assert cli.stdout == f"budget: {budget}\n\n" + str(given)
    # A number alone is bytes, a float too, as in a budget file.
    assert not ommx_memprof.profile(kitchen_sink).check(5.0)
    with pytest.raises(ValueError, match=r'^budget: invalid budget: rules\[0\]\.max: "-5 B" is not a size'):
        ommx_memprof.profile(kitchen_sink).check(-5)
