"""The `memprof` command the wheel installs is the Rust CLI, exit codes included."""

import os
import subprocess
import sys

from conftest import ORACLE, memprof_command, run_memprof


def test_inspect(kitchen_sink):
    cli = run_memprof("inspect", kitchen_sink, "--format", "folded")
    assert cli.returncode == 0
    assert cli.stdout == (ORACLE / "kitchen_sink.folded").read_text() + "\n"
    assert cli.stderr == ""


def test_exit_status(tmp_path, kitchen_sink):
    assert run_memprof("--version").stdout.startswith("memprof ")
    assert run_memprof("--help").returncode == 0
    usage = run_memprof("inspect", kitchen_sink, "--format", "nope")
    assert usage.returncode == 2 and "For more information, try '--help'" in usage.stderr
    assert run_memprof("inspect", tmp_path / "missing").returncode == 2
    budget = tmp_path / "budget.yaml"
    budget.write_text("rules:\n  - path: total\n    max: 1 KiB\n")
    failed = run_memprof("check", kitchen_sink, "--budget", budget)
    assert failed.returncode == 1
    assert "overall: FAIL" in failed.stdout
    assert failed.stderr.splitlines() == [
        "memprof: check failed: 1 of 1 file exceeds a budget",
        f"memprof: {kitchen_sink} is over rule 1 at {budget}:2 (total max 1 KiB): to see what would shrink it: "
        f"memprof advise {kitchen_sink}; if the size is intended, raise that limit in the budget",
    ]
    budget.write_text("rules:\n  - path: total\n    max: 1 MiB\n")
    assert run_memprof("check", kitchen_sink, "--budget", budget).returncode == 0


def test_closed_pipe_is_quiet(tmp_path):
    # `memprof ... | head -1`: the reader goes away, memprof exits 0 quietly.
    # 2,000 families make far more output than a pipe buffers.
    from ommx.v1 import DecisionVariable, Instance

    xs = [DecisionVariable.binary(i, name=f"family_{i}") for i in range(2000)]
    instance = Instance.from_components(decision_variables=xs, objective=sum(xs), constraints=[], sense=Instance.MINIMIZE)
    (tmp_path / "wide.pb").write_bytes(instance.to_bytes())
    shell = f"'{memprof_command()}' inspect wide.pb --group-by name --format folded | head -1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1
    assert done.stderr == ""


def test_python_dash_m(tmp_path, kitchen_sink):
    done = subprocess.run(
        [sys.executable, "-m", "ommx_memprof", "inspect", kitchen_sink, "--depth", "1"],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not python/, whose ommx_memprof/ has no _native
        # The natural widths, as run_memprof compares them: pytest sets
        # $COLUMNS, to which the header's longer lines would wrap.
        env={k: v for k, v in os.environ.items() if k != "COLUMNS"},
    )
    assert done.returncode == 0
    assert done.stdout == run_memprof("inspect", kitchen_sink, "--depth", "1").stdout
