"""The modelling core: expressions, constraints, problems, Lagrangian, KKT, rendering, CVXPY."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import primaldual.model as pm
from primaldual.backends import cvxpy_ as cvxb
from primaldual.backends import select
from primaldual.certificate import certify
from primaldual.kernels import RBF, Linear
from primaldual.solution import STATUSES, Solution


def _data(seed=0, n=30, d=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _csvc(X, y, kernel, C=1.0):
    N = len(y)
    w = pm.FeatureVariable("w", kernel, X)
    b = pm.Variable("b")
    xi = pm.Variable("xi", N)
    Y, Cd = pm.Data("y", y), pm.Data("C", np.full(N, C))
    P = pm.Problem(0.5 * pm.norm2(w) + pm.vsum(Cd * xi),
                [(Y * (w @ pm.phi(X) + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "C-SVC primal", variables=[w, b, xi])
    a = pm.Variable("alpha", N)
    Q = pm.GramOperator(kernel, X, sign=y)
    D = pm.Problem(pm.vsum(a) - 0.5 * pm.quad_form(a, Q),
                [(pm.dot(Y, a) == 0).named("nu"), (a >= 0).named("s"), (a <= Cd).named("xi")],
                "max", "C-SVC dual")
    return P, D


# ----------------------------------------------------------------------------- rendering
def test_primal_renders_like_the_textbook():
    X, y = _data()
    P, D = _csvc(X, y, RBF(gamma=0.5))
    s = str(P)
    assert "minimize" in s and "1/2 ‖w‖² + Σ_i C_i ξ_i" in s
    assert "y_i (⟨w, φ(x_i)⟩ + b) ≥ 1 - ξ_i" in s and "[α_i ≥ 0]" in s and "[μ_i ≥ 0]" in s
    L = str(P.lagrangian())
    assert L.startswith("L(w, b, ξ; α, μ) = 1/2 ‖w‖² + Σ_i C_i ξ_i - Σ_i α_i")
    assert "- Σ_i μ_i ξ_i" in L
    K = str(P.kkt())
    assert "w = Σ_i α_i y_i φ(x_i)" in K
    assert "∂L/∂ξ_i = C_i - α_i - μ_i = 0" in K
    assert "∂L/∂b = -Σ_i α_i y_i = 0" in K
    for section in ("stationarity", "primal feasibility", "dual feasibility",
                    "complementary slackness"):
        assert section in K
    d = str(D)
    assert "maximize" in d and "yᵀα = 0" in d and "α_i ≤ C_i" in d


def test_latex_rendering():
    X, y = _data()
    P, D = _csvc(X, y, Linear())
    tex = P.to_latex()
    assert tex.startswith(r"\begin{aligned}\min_{w, b, \xi}")
    assert r"\frac{1}{2} \|w\|^2" in tex and r"[\alpha_{i} \geq 0]" in tex
    assert P._repr_latex_().startswith("$$")
    assert r"\frac{\partial L}{\partial w}" in P.kkt().to_latex()
    assert r"\max_{\alpha}" in D.to_latex()
    assert "L(" in P.lagrangian().to_latex()
    assert "$$" in P.to_markdown()


# ----------------------------------------------------------------------------- numerics
def test_expression_values_and_gradients():
    x = pm.Variable("x", 3)
    t = pm.Variable("t")
    d = pm.Data("d", np.array([1.0, -2.0, 3.0]))
    e = d * x + 2 * t - 1
    pt = {"x": np.array([1.0, 2.0, 3.0]), "t": 0.5}
    np.testing.assert_allclose(e.value(pt), [1.0, -4.0, 9.0])
    obj = pm.vsum(e) + 3 * pm.sum_squares(x) + pm.sum_logistic(x) + pm.sum_entropy(x)
    xv = pt["x"]
    expect = (1 - 4 + 9) + 3 * xv @ xv + np.sum(np.log1p(np.exp(xv))) + np.sum(-xv * np.log(xv))
    assert obj.value(pt) == pytest.approx(expect)
    g = obj.gradient(pt)
    gx = d.value + 6 * xv + 1 / (1 + np.exp(-xv)) - (np.log(xv) + 1)
    np.testing.assert_allclose(g[x], gx)
    assert g[t] == pytest.approx(6.0)
    # finite difference check of the whole gradient
    h = 1e-6
    for j in range(3):
        p2 = {"x": xv.copy(), "t": 0.5}
        p2["x"][j] += h
        assert (obj.value(p2) - obj.value(pt)) / h == pytest.approx(gx[j], rel=1e-4)


def test_feature_variable_uses_the_kernel_metric():
    X, _ = _data(n=12)
    k = RBF(gamma=0.7)
    w = pm.FeatureVariable("w", k, X)
    beta = np.random.default_rng(3).normal(size=12)
    K = k(X)
    assert pm.norm2(w).value({"w": beta}) == pytest.approx(beta @ K @ beta)
    np.testing.assert_allclose((w @ pm.phi(X)).value({"w": beta}), K @ beta)
    np.testing.assert_allclose((w @ pm.phi(X)[[1, 3]]).value({"w": beta}), (K @ beta)[[1, 3]])
    with pytest.raises(ValueError, match="basis"):
        w @ pm.phi(X + 1)
    with pytest.raises(TypeError):
        w + 1


def test_kkt_residuals_and_lagrangian_at_a_known_point():
    # min x1^2 + x2^2  s.t. x1 + x2 = 1 [nu], x1 >= 0.8 [lam]:  x = (0.8, 0.2), nu = 0.4, lam = 1.2
    x = pm.Variable("x", 2)
    c1 = (pm.vsum(x) == 1).named("nu")
    c2 = (x[[0]] >= 0.8).named("lam")
    P = pm.Problem(pm.sum_squares(x), [c1, c2], "min", "toy")
    pt, m = {"x": np.array([0.8, 0.2])}, {"nu": np.array([0.4]), "lam": np.array([1.2])}
    res = P.kkt().max_residuals(pt, m)
    assert max(res.values()) < 1e-12
    assert P.lagrangian().value(pt, m) == pytest.approx(0.68)
    bad = P.kkt().max_residuals(pt, {"nu": np.array([0.0]), "lam": np.array([-1.0])})
    assert bad["stationarity[x]"] > 0.1 and bad["dual_feasibility[lam]"] == 1.0
    sol = P.solve()
    np.testing.assert_allclose(sol["x"], [0.8, 0.2], atol=1e-7)
    np.testing.assert_allclose(sol["nu"], [0.4], atol=1e-7)
    np.testing.assert_allclose(sol["lam"], [1.2], atol=1e-7)
    cert = sol.certificate()
    assert abs(cert.duality_gap) < 1e-7 and cert.max_kkt_residual < 1e-7


@pytest.mark.parametrize("solver", ["CLARABEL", "ECOS", "OSQP", "SCS"])
def test_multiplier_signs_for_max_problems_and_every_solver(solver):
    X, y = _data(1)
    _, D = _csvc(X, y, RBF(gamma=0.5))
    sol = D.solve(solver=solver)
    assert sol.status == "optimal"
    # first-order SCS and the older ECOS interior point stop at looser accuracy
    tol = {"SCS": 1e-4, "ECOS": 1e-5}.get(solver, 1e-6)
    assert max(sol.kkt_residuals().values()) < tol


@pytest.mark.parametrize("kernel", [Linear(), RBF(gamma=0.3)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_primal_and_dual_have_equal_values(kernel, seed):
    X, y = _data(seed, n=40)
    P, D = _csvc(X, y, kernel, C=2.0)
    sp, sd = P.solve(), D.solve()
    assert sp.objective_value == pytest.approx(sd.objective_value, rel=1e-7)
    # the primal's multipliers are the dual's solution
    np.testing.assert_allclose(sp["alpha"], sd["alpha"], atol=1e-5)
    # certificate of the primal point against the dual point
    cert = certify(P, sp.values, sp.multipliers, D, {"alpha": sp["alpha"]})
    assert abs(cert.relative_gap) < 1e-6 and cert.max_kkt_residual < 1e-6


def test_status_mapping_and_infeasible_never_certified():
    x = pm.Variable("x", 2)
    P = pm.Problem(pm.sum_squares(x), [(x >= 1).named("a"), (pm.vsum(x) <= 0).named("b")], "min",
                   "inf")
    with pytest.warns(UserWarning, match="infeasible"):
        sol = P.solve()
    assert sol.status == "infeasible" and not sol.has_point and np.isnan(sol.objective_value)
    assert sol.multipliers  # Farkas ray from the solver
    assert np.isnan(sol.certificate().primal_objective)
    with pytest.raises(ValueError, match="no point"):
        sol.kkt_residuals()
    U = pm.Problem(pm.vsum(x), [(x <= 1).named("a")], "min", "unb")
    with pytest.warns(UserWarning):
        assert U.solve().status == "unbounded"
    for s, expect in [("optimal", "optimal"), ("optimal_inaccurate", "inaccurate"),
                      ("infeasible_inaccurate", "infeasible"), ("unbounded", "unbounded"),
                      ("user_limit", "max_iter"), ("weird", "solver_error")]:
        assert cvxb.map_status(s) == expect
        assert expect in STATUSES
    with pytest.raises(ValueError, match="status"):
        Solution(P, "fine")


def test_errors_name_the_argument():
    x = pm.Variable("x", 2)
    with pytest.raises(ValueError, match="sense"):
        pm.Problem(pm.vsum(x), [], "minimise")
    with pytest.raises(ValueError, match="scalar"):
        pm.Problem(x, [])
    with pytest.raises(ValueError, match="unique"):
        pm.Problem(pm.vsum(x), [(x >= 0).named("a"), (x <= 1).named("a")])
    with pytest.raises(TypeError, match="affine"):
        _ = pm.sum_squares(x) >= 1
    with pytest.raises(TypeError):
        x * x
    with pytest.raises(ValueError, match="solver"):
        pm.Problem(pm.sum_squares(x), []).solve(solver="NOPE")
    with pytest.raises(ValueError, match="backend"):
        pm.Problem(pm.sum_squares(x), []).solve(backend="nope")
    with pytest.raises(ValueError, match="convex"):
        pm.Problem(-1.0 * pm.sum_squares(x), [], "min").solve()
    with pytest.raises(TypeError):
        bool(x == 1)
    with pytest.raises(ValueError, match="size"):
        pm.Variable("z", 0)


def test_psd_factor_and_gram_operator():
    X, y = _data(n=15)
    k = RBF(gamma=0.4)
    Q = pm.GramOperator(k, X, sign=y, diag=0.5)
    dense = k(X) * np.outer(y, y) + 0.5 * np.eye(15)
    np.testing.assert_allclose(Q.dense(), dense)
    L = Q.factor()
    np.testing.assert_allclose(L @ L.T, dense, atol=1e-10)
    v = np.arange(15.0)
    np.testing.assert_allclose(Q.matvec(v), dense @ v)
    with pytest.raises(ValueError, match="semidefinite"):
        pm.psd_factor(np.diag([1.0, -1.0]))
    # the SVR-style index map: 2N variables over N rows
    Qs = pm.GramOperator(k, X[:4], sign=[1, 1, 1, 1, -1, -1, -1, -1], index=[0, 1, 2, 3] * 2)
    K4 = k(X[:4])
    np.testing.assert_allclose(Qs.dense(), np.block([[K4, -K4], [-K4, K4]]))


def test_backend_selection():
    X, y = _data()
    P, D = _csvc(X, y, Linear())
    assert select(P, "auto") == "cvxpy"
    assert select(D, "cvxpy") == "cvxpy"


def test_compiles_exponential_cone_terms():
    # kernel logistic regression-like problem solves through CVXPY's exponential cone
    X, y = _data(4, n=25)
    w = pm.FeatureVariable("w", Linear(), X)
    b = pm.Variable("b")
    margin = pm.Data("y", y) * (w @ pm.phi(X) + b)
    P = pm.Problem(0.5 * pm.norm2(w) + pm.sum_logistic(-1.0 * margin), [], "min", "KLR")
    sol = P.solve()
    assert sol.status == "optimal"
    # exponential-cone interior points stop near 1e-6 relative accuracy (Clarabel defaults)
    assert max(sol.kkt_residuals().values()) < 1e-5
    assert isinstance(cp.__version__, str)


def test_gradient_transposed_product_matches_scipy():
    """``Expr.gradient`` takes ``M^T w`` of a canonical CSR block without its transpose: equal
    to scipy's ``M.T @ w`` (dense, CSC and non-canonical CSR blocks go through scipy)."""
    import scipy.sparse as sp

    from primaldual.model.expr import _rmatvec

    rng = np.random.default_rng(0)
    M = sp.random(40, 30, density=0.2, format="csr", random_state=1)
    w = rng.standard_normal(40)
    np.testing.assert_allclose(_rmatvec(M, w), M.T @ w, rtol=1e-14, atol=1e-14)
    dup = sp.csr_matrix((np.ones(3), np.array([2, 2, 5]), np.array([0, 3] + [3] * 39)),
                        shape=(40, 30))
    assert not dup.has_canonical_format
    np.testing.assert_allclose(_rmatvec(dup, w), dup.T @ w, rtol=1e-14, atol=1e-14)
    for A in (M.toarray(), M.tocsc(), sp.csr_matrix((40, 30))):
        np.testing.assert_allclose(_rmatvec(A, w), np.asarray(A.T @ w).ravel(), rtol=1e-14,
                                   atol=1e-14)
