"""An eliminated block with a linear term of its own (issue 26): the dual keeps, and prints,
``qᵀλ - κ`` (``-1/2 (Aλ - m)ᵀH⁻¹(Aλ - m)`` expanded); SVM+ in Vapnik & Vashist's form, whose
correcting function makes the privileged block ``w*`` such a block, matches a plain CVXPY primal."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from primaldual.kernels import make_kernel
from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum
from primaldual.model.dualize import dualize


def test_linear_term_of_an_eliminated_block_is_printed_and_counted():
    # min 1/2||w||^2 + Σ_i <w, φ(x_i)>  s.t. <w, φ(x_i)> >= 1  (linear kernel: w in R^2)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 2)) + 3.0
    w = FeatureVariable("w", make_kernel("linear"), X)
    P = Problem(0.5 * norm2(w) + vsum(w @ phi(X)), [(w @ phi(X) >= 1).named("alpha")],
                "min", "primal")
    der = dualize(P)
    text = str(der.dual)
    assert "qᵀα" in text and "- κ" in text and "κ = 1/2" in text
    sol = der.dual.solve(backend="cvxpy")
    a = np.asarray(sol.values["alpha"])
    # the printed formula with q = K 1 and κ = 1/2 1ᵀK1 (H = 1 for 1/2 ||w||^2), K built here
    K = X @ X.T
    one = np.ones(len(a))
    printed = a.sum() - 0.5 * a @ K @ a + (K @ one) @ a - 0.5 * one @ K @ one
    assert np.isclose(printed, sol.objective_value, rtol=1e-9, atol=1e-9)
    # and it is the primal optimum (plain CVXPY on w in R^2)
    wr = cp.Variable(2)
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + cp.sum(X @ wr)), [X @ wr >= 1])
    ref.solve()
    assert np.isclose(sol.objective_value, ref.value, rtol=1e-6, atol=1e-6)


def test_svm_plus_paper_form_matches_a_plain_cvxpy_primal():
    rng = np.random.default_rng(14)
    n = 30
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    Xs = np.c_[X[:, 0] + 0.1 * rng.normal(size=n), rng.normal(size=n)]
    C, gam = 1.0, 0.5
    w = FeatureVariable("w", make_kernel("linear"), X)
    ws = FeatureVariable("w_star", make_kernel("linear"), Xs)
    b, bs = Variable("b"), Variable("b_star")
    corr = ws @ phi(Xs, "x*") + bs                   # the correcting function ξ_i
    P = Problem(0.5 * norm2(w) + Data("gamma", gam, txt="γ") * (0.5 * norm2(ws))
                + Data("C", C) * vsum(corr),
                [(Data("y", y) * (w @ phi(X) + b) >= 1 - corr).named("alpha"),
                 (corr >= 0).named("mu")], "min", "SVM+ primal")
    der = dualize(P)
    sol = der.dual.solve(backend="cvxpy")
    pt = der.recover(sol)
    wr, br, vr, cr = cp.Variable(2), cp.Variable(), cp.Variable(2), cp.Variable()
    cor = Xs @ vr + cr
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + 0.5 * gam * cp.sum_squares(vr)
                                 + C * cp.sum(cor)),
                     [cp.multiply(y, X @ wr + br) >= 1 - cor, cor >= 0])
    ref.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert abs(sol.objective_value - ref.value) <= 1e-6 * max(1.0, abs(ref.value))
    assert abs(P.objective.value(pt) - ref.value) <= 1e-6 * max(1.0, abs(ref.value))
    # the recovered w (expansion over X) is the reference's w
    assert np.allclose(X.T @ pt["w"], wr.value, atol=1e-5)


def test_svm_plus_with_the_slack_defined_by_an_equality_and_vector_thresholds():
    # ξ_i = <w*, φ(x*_i)> + b* [η_i]: the equality's multipliers are stacked with α (both meet an
    # eliminated block); only α gets a sign. Same optimum as the plain CVXPY primal.
    rng = np.random.default_rng(7)
    n = 24
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    Xs = np.c_[X[:, 0] + 0.1 * rng.normal(size=n), rng.normal(size=n)]
    C, gam = 2.0, 0.5
    w = FeatureVariable("w", make_kernel("linear"), X)
    ws = FeatureVariable("w_star", make_kernel("linear"), Xs)
    b, bs, xi = Variable("b"), Variable("b_star"), Variable("xi", n)
    P = Problem(0.5 * norm2(w) + Data("gamma", gam, txt="γ") * (0.5 * norm2(ws))
                + Data("C", C) * vsum(xi),
                [(Data("y", y) * (w @ phi(X) + b) >= 1 - xi).named("alpha"),
                 (xi == ws @ phi(Xs, "x*") + bs).named("eta"), (xi >= 0).named("mu")],
                "min", "SVM+ primal")
    der = dualize(P)
    text = str(der.dual)
    assert "α_i ≥ 0" in text and "η_i ≥ 0" not in text and "-0" not in text
    sol = der.dual.solve(backend="cvxpy")
    wr, br, vr, cr = cp.Variable(2), cp.Variable(), cp.Variable(2), cp.Variable()
    cor = Xs @ vr + cr
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + 0.5 * gam * cp.sum_squares(vr)
                                 + C * cp.sum(cor)),
                     [cp.multiply(y, X @ wr + br) >= 1 - cor, cor >= 0])
    ref.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert abs(sol.objective_value - ref.value) <= 1e-6 * max(1.0, abs(ref.value))
    # a vector used entry by entry (thresholds b[0] <= b[1]) is split into scalar entries
    # b_1, b_2 (a printed step), each with its own equality; recover gives b back; the optimum
    # is the plain CVXPY one
    bb = Variable("b", 2)
    P2 = Problem(0.5 * norm2(w) + vsum(xi),
                 [(Data("y", y) * (w @ phi(X) - bb[0]) >= 1 - xi).named("alpha"),
                  (xi >= 0).named("mu"), (bb[0] <= bb[1]).named("order")], "min", "thr")
    der2 = dualize(P2)
    assert "b = (b_1, b_2)" in str(der2) and "b_1 ≤ b_2" in str(der2)
    sol2 = der2.dual.solve(backend="cvxpy")
    pt2 = der2.recover(sol2)
    assert pt2["b"].shape == (2,)
    wr2, br2, xr2 = cp.Variable(2), cp.Variable(2), cp.Variable(n)
    ref2 = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr2) + cp.sum(xr2)),
                      [cp.multiply(y, X @ wr2 - br2[0]) >= 1 - xr2, xr2 >= 0, br2[0] <= br2[1]])
    ref2.solve(solver=cp.CLARABEL)
    assert abs(sol2.objective_value - ref2.value) <= 1e-6 * max(1.0, abs(ref2.value))
    assert abs(P2.objective.value(pt2) - ref2.value) <= 1e-6 * max(1.0, abs(ref2.value))
