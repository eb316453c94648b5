"""Refuse before allocating (issue 28): a kernel problem whose CVXPY route would form dense
N x N matrices beyond the available memory raises InsufficientMemoryError naming what fits,
before anything is compiled."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual.validation as validation
from primaldual.backends import cvxpy_
from primaldual.exceptions import InsufficientMemoryError
from primaldual.kernels import make_kernel
from primaldual.model import (
    FeatureVariable,
    GramOperator,
    Problem,
    Variable,
    norm2,
    phi,
    quad_form,
    vsum,
)


def _kernel_primal(N):
    X = np.random.default_rng(0).normal(size=(N, 2))
    w, xi = FeatureVariable("w", make_kernel("rbf", gamma=0.5), X), Variable("xi", N)
    return Problem(0.5 * norm2(w) + vsum(xi), [(w @ phi(X) >= 1 - xi).named("alpha"),
                                                (xi >= 0).named("mu")], "min", "primal")


def test_refuses_before_compiling(monkeypatch):
    P = _kernel_primal(300)
    need, n = cvxpy_.dense_bytes(P)
    assert n == 300 and need == cvxpy_.DENSE_COPIES * 8 * 300 * 300
    monkeypatch.setattr(validation, "available_memory", lambda: need // 4)
    called = []
    monkeypatch.setattr(cvxpy_, "to_cvxpy", lambda p: called.append(p))
    with pytest.raises(InsufficientMemoryError, match=r"at most N = 150 .*lowrank"):
        P.solve(backend="cvxpy")
    assert not called                       # nothing compiled, nothing allocated
    with pytest.raises(MemoryError):        # also through backend="auto" (falls back to CVXPY)
        P.solve(backend="auto")


def test_enough_memory_solves(monkeypatch):
    X = np.random.default_rng(1).normal(size=(20, 2))
    a = Variable("a", 20)
    P = Problem(-0.5 * quad_form(a, GramOperator(make_kernel("rbf", gamma=0.5), X)) + vsum(a),
                [(a >= 0).named("s"), (a <= 1).named("u"), (a[0] >= 0.1).named("extra")],
                "max", "kernel QP")
    monkeypatch.setattr(validation, "available_memory", lambda: 10**12)
    assert P.solve(backend="cvxpy").status == "optimal"


def _box_qp(op, n):
    a = Variable("a", n)
    return Problem(-0.5 * quad_form(a, op) + vsum(a),
                   [(a >= 0).named("s"), (a <= 1).named("u")], "max", "box QP")


def test_a_linear_kernel_quad_form_is_compiled_on_its_features(monkeypatch):
    # Q = Z Zᵀ over 3,000 multipliers from 4 features: no N x N array on the CVXPY route, so
    # nothing to refuse even with (mocked) memory for half of one 3,000 x 3,000 block
    Z = np.random.default_rng(2).normal(size=(3000, 4))
    P = _box_qp(GramOperator(make_kernel("linear"), Z), 3000)
    assert cvxpy_.dense_bytes(P) == (0, 0)
    monkeypatch.setattr(validation, "available_memory", lambda: 8 * 3000 * 3000 // 2)
    assert P.solve(backend="cvxpy").status == "optimal"
    # on 200 rows, the features' compilation and the dense matrix's factor give one optimum
    op = GramOperator(make_kernel("linear"), Z[:200])
    lin = _box_qp(op, 200).solve(backend="cvxpy")
    dense = _box_qp(GramOperator.dense_matrix(op.dense()), 200).solve(backend="cvxpy")
    assert abs(lin.objective_value - dense.objective_value) <= 1e-7 * abs(dense.objective_value)
