"""pytest plugin: budgets and baselines for the instances a test suite builds.

A test hands each instance it builds to the ``memprof`` fixture::

    def test_knapsack(memprof):
        instance = build_knapsack(n=100)
        memprof.record("knapsack-100", instance, budget="1 MiB")

``record(name, instance, budget=None)`` profiles the instance and fails the
test (``AssertionError`` with the check table) when ``budget`` is exceeded.
With ``--memprof-baseline DIR`` it also compares the profile with
``DIR/<name>.json``, saved by an earlier run: without a budget the rule is
``memprof check --baseline``'s, the total may not grow. A missing baseline is
written (and reported at the end of the run: commit it); ``--memprof-update``
rewrites them all. The files are ``memprof inspect --format json`` documents,
so the ``memprof`` command reads them too.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from . import Budget, Profile, profile

_STATE = pytest.StashKey["_State"]()


class _State:
    def __init__(self, baseline: Optional[str], update: bool) -> None:
        self.baseline = Path(baseline) if baseline else None
        self.update = update
        # name -> test node id, to refuse the same name twice in one run.
        self.names: Dict[str, str] = {}
        self.written: List[Path] = []
        self.compared: List[str] = []
        self.failed: List[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memprof", "memory budgets of OMMX instances (ommx-memprof)")
    group.addoption(
        "--memprof-baseline",
        metavar="DIR",
        default=None,
        help="compare each instance recorded with the memprof fixture with DIR/<name>.json "
        "(written when missing)",
    )
    group.addoption(
        "--memprof-update",
        action="store_true",
        default=False,
        help="with --memprof-baseline: rewrite the baselines with this run's profiles",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_STATE] = _State(
        config.getoption("memprof_baseline"), config.getoption("memprof_update")
    )


class Recorder:
    """The ``memprof`` fixture: records the instances one test builds."""

    def __init__(self, state: _State, nodeid: str) -> None:
        self._state = state
        self._nodeid = nodeid

    def record(self, name: str, instance: Any, budget: Optional[Budget] = None) -> Profile:
        """Profiles ``instance`` (anything ``ommx_memprof.profile`` takes) under
        ``name``, a file-name-safe key unique in the run; checks ``budget``, and
        the baseline ``DIR/<name>.json`` under ``--memprof-baseline DIR``."""
        __tracebackhide__ = True  # a failure shows the test's line and the table
        if not name or name.startswith(".") or any(c in name for c in "/\\\0"):
            raise ValueError(f"memprof.record: {name!r} is not usable as a file name")
        other = self._state.names.get(name)
        if other is not None:
            raise ValueError(f"memprof.record: the name {name!r} was already recorded by {other}")
        self._state.names[name] = self._nodeid
        p = instance if isinstance(instance, Profile) else profile(instance, name=name)

        directory = self._state.baseline
        path = None if directory is None else directory / f"{name}.json"
        compare = path is not None and path.exists() and not self._state.update
        if budget is not None or compare:
            result = p.check(budget, baseline=path if compare else None)
            if compare:
                self._state.compared.append(name)
            if not result.passed:
                self._state.failed.append(name)
                raise AssertionError(
                    f"memprof: {name} exceeds its budget\n{result.text.strip()}\n"
                    + _next_steps(path if compare else None)
                )
        if path is not None and not compare:
            _write(path, p.to_json())
            self._state.written.append(path)
        return p


def _next_steps(baseline: Optional[Path]) -> str:
    """What to do after a failure, in the test's own terms."""
    if baseline is None:
        return (
            "The largest paths: ommx_memprof.profile(instance).table(); "
            "what would shrink it: ommx_memprof.profile(instance).advise()."
        )
    return (
        f"Which paths grew: ommx_memprof.profile({str(baseline)!r}).diff(instance).table()\n"
        "If the growth is intended, run pytest again with --memprof-update: it rewrites "
        "the baselines with this run's profiles (commit them)."
    )


def _write(path: Path, text: str) -> None:
    """Writes through a temporary name, so a failed run leaves no partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


@pytest.fixture
def memprof(request: pytest.FixtureRequest) -> Recorder:
    """Records the OMMX instances a test builds: ``memprof.record(name, instance,
    budget=None)``."""
    return Recorder(request.config.stash[_STATE], request.node.nodeid)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or not state.names:
        return
    lines = [f"{len(state.names)} instance(s) recorded"]
    if state.baseline is not None:
        lines.append(
            f"{len(state.compared)} compared with their baseline in {state.baseline}"
            f" ({len(state.failed)} over budget)"
        )
        if state.written:
            lines.append(f"{len(state.written)} baseline(s) written (commit them):")
            lines.extend(f"  {p}" for p in state.written)
    terminalreporter.write_sep("-", "memprof")
    for line in lines:
        terminalreporter.write_line(line)
