"""The LP backend (HiGHS through scipy, issue 28): LP-SVR, the 1-norm SVM and a derived LP dual
against CVXPY models written here from the raw arrays."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from primaldual.backends import choose
from primaldual.model import Data, Problem, Variable, norm1, vsum
from primaldual.model.dualize import dualize
from primaldual.model.lp import lp_of

CLARABEL = dict(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)


def lpsvr(X, y, C, eps, gamma):
    """LP-SVR (Smola, Schoelkopf & Raetsch 1999): f = K beta + b,
    min ||beta||_1 + C sum(xi + xi*) s.t. |y - f| <= eps + xi (split in two rows)."""
    N = X.shape[0]
    K = Data("K", rbf_kernel(X, gamma=gamma))
    beta, b = Variable("beta", N), Variable("b")
    xi, xs = Variable("xi", N), Variable("xi_star", N)
    Y = Data("y", y)
    f = K @ beta + b
    return Problem(norm1(beta) + C * vsum(xi) + C * vsum(xs),
                   [(Y - f <= eps + xi).named("alpha"), (f - Y <= eps + xs).named("alpha_star"),
                    (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "LP-SVR")


def l1svm(X, y, C):
    N, d = X.shape
    w, b, xi = Variable("w", d, index="d"), Variable("b"), Variable("xi", N)
    return Problem(norm1(w) + C * vsum(xi),
                   [(Data("y", y) * (Data("X", X) @ w + b) >= 1 - xi).named("alpha"),
                    (xi >= 0).named("mu")], "min", "L1-norm SVM")


@pytest.mark.parametrize("seed,transpose", [(0, None), (1, True)])
def test_lp_svr_against_cvxpy(seed, transpose):
    rng = np.random.default_rng(seed)
    N = 50
    X = rng.uniform(-3, 3, size=(N, 1))
    y = np.sinc(X[:, 0]) + 0.1 * rng.normal(size=N)
    C, eps, gamma = 1.0, 0.05, 0.5
    P = lpsvr(X, y, C, eps, gamma)
    assert choose(P)[0] == "lp"
    sol = P.solve(backend="lp", transpose=transpose)
    assert sol.status == "optimal" and sol.info["transposed"] == bool(transpose)
    K = rbf_kernel(X, gamma=gamma)
    beta, b = cp.Variable(N), cp.Variable()
    xi, xs = cp.Variable(N), cp.Variable(N)
    f = K @ beta + b
    cons = [y - f <= eps + xi, f - y <= eps + xs, xi >= 0, xs >= 0]
    ref = cp.Problem(cp.Minimize(cp.norm1(beta) + C * cp.sum(xi) + C * cp.sum(xs)), cons)
    ref.solve(**CLARABEL)
    assert abs(sol.objective_value - ref.value) <= 1e-6 * max(1.0, abs(ref.value))
    # f is unique at the optimum here (values of beta need not be: compare predictions)
    f_ours = K @ sol.values["beta"] + sol.values["b"][0]
    assert np.max(np.abs(f_ours - (K @ beta.value + b.value))) <= 1e-5
    for name, con in zip(("alpha", "alpha_star", "mu", "mu_star"), cons, strict=True):
        assert np.max(np.abs(sol.multipliers[name] - con.dual_value)) <= 1e-5
    assert sol.certificate().relative_gap <= 1e-9
    assert P.infeasibility(sol.values) <= 1e-8


@pytest.mark.parametrize("transpose", [None, False])
def test_one_norm_svm_and_its_derived_dual(transpose):
    rng = np.random.default_rng(3)
    N, d = 40, 5
    X = rng.normal(size=(N, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=N) > 0, 1.0, -1.0)
    P = l1svm(X, y, 0.5)
    sol = P.solve(backend="lp", transpose=transpose)
    # N = 40 margin rows against d = 5 weight columns: the transposed LP by default
    assert sol.info["transposed"] == (transpose is None)
    w, b, xi = cp.Variable(d), cp.Variable(), cp.Variable(N)
    cons = [cp.multiply(y, X @ w + b) >= 1 - xi, xi >= 0]
    ref = cp.Problem(cp.Minimize(cp.norm1(w) + 0.5 * cp.sum(xi)), cons)
    ref.solve(**CLARABEL)
    assert abs(sol.objective_value - ref.value) <= 1e-6 * max(1.0, ref.value)
    assert np.max(np.abs(sol.multipliers["alpha"] - cons[0].dual_value)) <= 1e-5
    assert np.max(np.abs(sol.multipliers["mu"] - cons[1].dual_value)) <= 1e-5
    assert np.max(np.abs(sol.values["w"] - w.value)) <= 1e-5
    # the derived dual is a maximisation LP: same value, and its multipliers give w back
    dual = dualize(P).dual
    assert lp_of(dual)[0] is not None and lp_of(dual)[0].sign == -1.0
    sd = dual.solve(backend="lp")
    assert sd.status == "optimal"
    assert abs(sd.objective_value - ref.value) <= 1e-6 * max(1.0, ref.value)
    sc = dual.solve(backend="cvxpy")
    for k, v in sc.multipliers.items():
        assert np.max(np.abs(sd.multipliers[k] - v)) <= 1e-5, k


def test_infeasible_lp_and_refusal():
    x = Variable("x", 2)
    P = Problem(vsum(x), [(x >= 1).named("lo"), (vsum(x) <= 1).named("cap")], "min", "infeasible")
    with pytest.warns(Warning):
        sol = P.solve(backend="lp")
    assert sol.status == "infeasible"
    from primaldual.model import sum_squares
    Q = Problem(sum_squares(x), [(x >= 1).named("lo")], "min", "QP")
    assert lp_of(Q)[0] is None and "SumSquares" in lp_of(Q)[1]
    with pytest.raises(ValueError, match="not a linear program"):
        Q.solve(backend="lp")


def test_lp_route_certificate_stationarity_of_norm1_is_the_subgradient_distance():
    """On the lp route the certificate's stationarity in the norm1 block is dist(0, dL) (issue
    26's subgradient residual), not the 1 that sign(0) = 0 gave: LP-SVR and the 1-norm SVM."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (60, 1))
    y = np.sinc(X[:, 0]) + 0.05 * rng.standard_normal(60)
    Xc = rng.standard_normal((80, 5))
    yc = np.where(Xc[:, 0] > 0, 1.0, -1.0)
    for P, block in ((lpsvr(X, y, 5.0, 0.05, 1.0), "beta"), (l1svm(Xc, yc, 1.0), "w")):
        s = P.solve(backend="lp")
        c = s.certificate()
        assert s.status == "optimal" and abs(c.relative_gap) < 1e-8
        assert c.kkt[f"stationarity[{block}]"] < 1e-7, c.kkt
