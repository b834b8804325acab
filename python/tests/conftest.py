"""Shared helpers of the ommx-memprof tests: the repository's fixtures, the
installed `memprof` command, and instances built with the real ommx 2.9.3."""

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import ommx.v1  # noqa: F401  (imported once: pytester's inline runs cannot re-import numpy)
import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]
ORACLE = REPO / "fixtures" / "oracle"
REJECTED = REPO / "fixtures" / "rejected"


def memprof_command() -> str:
    """The `memprof` the wheel installed beside this interpreter."""
    found = shutil.which("memprof", path=os.path.dirname(sys.executable))
    assert found, "the wheel did not install a memprof command beside python"
    return found


def run_memprof(*args, **kwargs) -> subprocess.CompletedProcess:
    # The command fits its tables to $COLUMNS, which something in this
    # process may have set (the library's strings never fit): compare the
    # natural widths.
    kwargs.setdefault("env", {k: v for k, v in os.environ.items() if k != "COLUMNS"})
    return subprocess.run(
        [memprof_command(), *map(str, args)], capture_output=True, text=True, **kwargs
    )


def build_instance(seed: int):
    """A random instance made with ommx's own API: variables of every kind,
    names and subscripts (some missing), linear, quadratic and cubic
    functions, equalities and inequalities, removed constraints, a
    description. Different for every seed; nothing memprof has seen."""
    from ommx.v1 import DecisionVariable, Instance, Linear

    rng = random.Random(seed)
    n = rng.randint(1, 40)
    variables = []
    for i in range(n):
        kind = rng.choice(["binary", "integer", "continuous"])
        named = {} if rng.random() < 0.3 else {"name": rng.choice(["x", "y", "flow"]), "subscripts": [i, rng.randint(0, 3)]}
        if kind == "binary":
            variables.append(DecisionVariable.binary(i, **named))
        elif kind == "integer":
            variables.append(DecisionVariable.integer(i, lower=-rng.randint(0, 9), upper=rng.randint(0, 9), **named))
        else:
            variables.append(DecisionVariable.continuous(i, lower=-rng.random() * 5, upper=rng.random() * 5, **named))

    def function(max_degree: int):
        f = Linear(terms={}, constant=rng.choice([0, rng.uniform(-5, 5)]))
        for _ in range(rng.randint(0, 8)):
            degree = rng.randint(1, max_degree)
            term = rng.choice([1, -2.5, rng.uniform(-9, 9)])
            for _ in range(degree):
                term = term * rng.choice(variables)
            f = f + term
        return f

    constraints = []
    for cid in range(rng.randint(0, 25)):
        f = function(rng.choice([1, 1, 2, 3]))
        c = (f == 0) if rng.random() < 0.3 else (f <= rng.randint(0, 9))
        c = c.set_id(cid)
        if rng.random() < 0.6:
            c = c.add_name(rng.choice(["cap", "demand", "one_hot"])).add_subscripts([cid])
        constraints.append(c)
    instance = Instance.from_components(
        decision_variables=variables,
        objective=function(2),
        constraints=constraints,
        sense=rng.choice([Instance.MINIMIZE, Instance.MAXIMIZE]),
        description=Instance.Description(name=f"seed {seed}", authors=["memprof"]) if seed % 2 else None,
    )
    for cid in range(len(constraints)):
        if rng.random() < 0.15:
            instance.relax_constraint(cid, "test", seed=str(seed))
    return instance


@pytest.fixture
def kitchen_sink() -> Path:
    return ORACLE / "kitchen_sink.pb"
