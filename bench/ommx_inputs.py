"""Writes the benchmark inputs through OMMX's own writer.

Usage: python bench/ommx_inputs.py lp|qubo|hubo|monomials OUTPUT [options]

The message is assembled with OMMX's protobuf classes, then passed through
`Instance.from_bytes(msg).to_bytes()`, so the file holds what OMMX itself
writes: its field order, its packing and, for a quadratic objective, its
terms in OMMX's hash order rather than sorted. Deterministic for the same
arguments (numpy's PCG64 with a fixed seed); the OMMX writer's hash order is
whatever ommx 2.9.3 produces for these terms.

  lp   --variables V --constraints C --terms K: V continuous variables x[i]
       in [-10, 10], an objective with one term on each, and C `<= 0`
       constraints row[j] of K distinct random variables each
  qubo --variables N: N binaries q[i] and an objective over every pair
       i <= j (N (N + 1) / 2 quadratic terms)
  hubo --variables N --terms M: N binaries q[i] and a polynomial objective
       of M monomials of degree 2 to 4 over random variables (some repeat)
  monomials --constraints C --terms D: issue 16's example, C constraints
       each one monomial of degree D over variable 1, written before that
       variable; not through OMMX's writer (which would put the variable
       first), but as two messages one after the other, which OMMX reads
       as one
"""

import argparse
import os
import sys

import numpy as np
from ommx.v1 import Instance
from ommx.v1.constraint_pb2 import Constraint, Equality
from ommx.v1.decision_variables_pb2 import Bound, DecisionVariable
from ommx.v1.function_pb2 import Function
from ommx.v1.instance_pb2 import Instance as InstancePb
from ommx.v1.linear_pb2 import Linear
from ommx.v1.polynomial_pb2 import Monomial, Polynomial
from ommx.v1.quadratic_pb2 import Quadratic


def coefficients(rng, n):
    # Non-zero and distinct enough that nothing merges or vanishes.
    return rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)


def lp(args, rng):
    msg = InstancePb(sense=InstancePb.SENSE_MINIMIZE)
    for i in range(args.variables):
        msg.decision_variables.append(
            DecisionVariable(
                id=i,
                kind=DecisionVariable.KIND_CONTINUOUS,
                bound=Bound(lower=-10.0, upper=10.0),
                name="x",
                subscripts=[i],
            )
        )
    objective = Linear()
    for i, c in enumerate(coefficients(rng, args.variables)):
        objective.terms.add(id=i, coefficient=float(c))
    msg.objective.CopyFrom(Function(linear=objective))
    for j in range(args.constraints):
        ids = rng.choice(args.variables, args.terms, replace=False)
        linear = Linear()
        for i, c in zip(ids, coefficients(rng, args.terms)):
            linear.terms.add(id=int(i), coefficient=float(c))
        msg.constraints.append(
            Constraint(
                id=j,
                equality=Equality.EQUALITY_LESS_THAN_OR_EQUAL_TO_ZERO,
                function=Function(linear=linear),
                name="row",
                subscripts=[j],
            )
        )
    return msg


def qubo(args, rng):
    n = args.variables
    msg = InstancePb(sense=InstancePb.SENSE_MINIMIZE)
    for i in range(n):
        msg.decision_variables.append(
            DecisionVariable(
                id=i,
                kind=DecisionVariable.KIND_BINARY,
                bound=Bound(lower=0.0, upper=1.0),
                name="q",
                subscripts=[i],
            )
        )
    rows, columns = np.triu_indices(n)
    values = coefficients(rng, len(rows))
    msg.objective.CopyFrom(
        Function(
            quadratic=Quadratic(
                rows=rows.tolist(), columns=columns.tolist(), values=values.tolist()
            )
        )
    )
    return msg


def hubo(args, rng):
    n = args.variables
    msg = InstancePb(sense=InstancePb.SENSE_MINIMIZE)
    for i in range(n):
        msg.decision_variables.append(
            DecisionVariable(id=i, kind=DecisionVariable.KIND_BINARY, name="q", subscripts=[i])
        )
    degrees = rng.integers(2, 5, args.terms)
    ids = rng.integers(0, n, int(degrees.sum())).tolist()
    values = coefficients(rng, args.terms).tolist()
    terms = []
    at = 0
    for d, c in zip(degrees.tolist(), values):
        terms.append(Monomial(ids=ids[at : at + d], coefficient=c))
        at += d
    msg.objective.CopyFrom(Function(polynomial=Polynomial(terms=terms)))
    return msg


def monomials(args):
    head = InstancePb(sense=InstancePb.SENSE_MINIMIZE)
    for j in range(args.constraints):
        monomial = Monomial(ids=[1] * args.terms, coefficient=1.0)
        head.constraints.append(
            Constraint(
                id=j,
                equality=Equality.EQUALITY_EQUAL_TO_ZERO,
                function=Function(polynomial=Polynomial(terms=[monomial])),
            )
        )
    tail = InstancePb()
    tail.objective.CopyFrom(Function(constant=0.0))
    tail.decision_variables.append(DecisionVariable(id=1, kind=DecisionVariable.KIND_BINARY))
    return head.SerializeToString() + tail.SerializeToString()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", choices=["lp", "qubo", "hubo", "monomials"])
    parser.add_argument("output")
    parser.add_argument("--variables", type=int)
    parser.add_argument("--constraints", type=int, default=20_000)
    parser.add_argument("--terms", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    if args.shape == "monomials":
        data = monomials(args)
    else:
        if args.shape == "lp":
            args.variables = args.variables or 100_000
            msg = lp(args, rng)
        elif args.shape == "qubo":
            args.variables = args.variables or 2_000
            msg = qubo(args, rng)
        else:
            args.variables = args.variables or 2_000
            msg = hubo(args, rng)
        data = Instance.from_bytes(msg.SerializeToString()).to_bytes()
    # Through a temporary file, so an interrupted run leaves nothing that
    # the benchmark would take for a finished input.
    tmp = args.output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, args.output)
    writer = "as two messages" if args.shape == "monomials" else "by ommx's to_bytes()"
    print(f"{args.output}: {len(data)} bytes written {writer}", file=sys.stderr)


if __name__ == "__main__":
    main()
