"""The generalised SMO (backend "gsmo", issue 28): box QPs with several linear equalities, read
from the Problem, checked against CVXPY models written here from the raw arrays (not through the
library's CVXPY compilation)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from primaldual.backends import choose
from primaldual.kernels import make_kernel
from primaldual.model import (
    Data,
    FeatureVariable,
    GramOperator,
    Problem,
    Variable,
    dot,
    norm2,
    phi,
    quad_form,
    vsum,
)
from primaldual.model.dualize import dualize
from primaldual.model.multi_equality import box_qp_eq_of, box_qp_eq_refusal

GAMMA = 0.5
KER = make_kernel("rbf", gamma=GAMMA)


def _factor(Q):
    w, V = np.linalg.eigh(0.5 * (Q + Q.T))
    return V * np.sqrt(np.clip(w, 0, None))


def _ref(Q, p, C, A, c, q=None, B=None, m_lo=None):
    """min 1/2 a'Qa + p'a + q'm  s.t. A a + B m = c, 0 <= a <= C, m >= m_lo (CVXPY+Clarabel)."""
    n = p.size
    a = cp.Variable(n)
    L = _factor(Q)
    obj = 0.5 * cp.sum_squares(L.T @ a) + p @ a
    cons = [a >= 0, a <= C]
    eq = A @ a
    m = None
    if B is not None and B.shape[1]:
        m = cp.Variable(B.shape[1])
        obj = obj + q @ m
        eq = eq + B @ m
        cons.append(m >= m_lo)
    cons.append(eq == c)
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value, a.value, (None if m is None else m.value)


def _data(seed, N=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 2))
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=N) > 0, 1, -1)
    return X, y


def nusvc_primal(X, y, nu):
    """nu-SVC with a free rho (Schoelkopf et al. 2000): the dual has the two equalities
    y'a = 0 and 1'a = nu."""
    N = X.shape[0]
    w = FeatureVariable("w", KER, X)
    b, rho, xi = Variable("b"), Variable("rho"), Variable("xi", N)
    Y = Data("y", y.astype(float))
    return Problem(0.5 * norm2(w) - nu * rho + (1.0 / N) * vsum(xi),
                   [(Y * (w @ phi(X) + b) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "nu-SVC primal", variables=[w, b, rho, xi])


def svor_primal(X, y, r, C):
    """SVOR-EXC (Chu & Keerthi 2005) with the explicit threshold ordering."""
    w = FeatureVariable("w", KER, X)
    f = w @ phi(X)
    b = [Variable(f"b{j}") for j in range(1, r)]
    cons, xis, vars_ = [], [], [w] + b
    for j in range(1, r + 1):
        rows = np.flatnonzero(y == j)
        if j < r:
            xi = Variable(f"xi{j}", rows.size)
            xis.append(xi)
            vars_.append(xi)
            cons += [(b[j - 1] - f[rows] >= 1 - xi).named(f"alpha{j}"),
                     (xi >= 0).named(f"mu{j}")]
        if j > 1:
            xs = Variable(f"xs{j}", rows.size)
            xis.append(xs)
            vars_.append(xs)
            cons += [(f[rows] - b[j - 2] >= 1 - xs).named(f"alpha_star{j}"),
                     (xs >= 0).named(f"mus{j}")]
    for j in range(2, r):
        cons.append((b[j - 1] - b[j - 2] >= 0).named(f"order{j}"))
    return Problem(0.5 * norm2(w) + C * sum(vsum(x) for x in xis), cons, "min", "SVOR-EXC",
                   variables=vars_)


def _check(sol, ref_value, tol=1e-6):
    assert sol.status == "optimal"
    assert abs(-sol.objective_value - ref_value) <= tol * max(1.0, abs(ref_value))
    cert = sol.certificate()
    assert cert.relative_gap <= 1e-7
    assert cert.max_kkt_residual <= 1e-5


@pytest.mark.parametrize("libsvm", [True, False])
def test_nusvc_spec_two_equalities(libsvm):
    X, y = _data(0)
    nu = 0.4
    dual = dualize(nusvc_primal(X, y, nu)).dual
    assert box_qp_eq_of(dual).n_groups == 2
    assert choose(dual)[0] == "gsmo"
    sol = dual.solve(backend="gsmo", tol=1e-9, libsvm=libsvm)
    assert sol.info["route"] == ("smo-nu" if libsvm else "gsmo")
    N = y.size
    Q = rbf_kernel(X, gamma=GAMMA) * np.outer(y, y)
    val, a, _ = _ref(Q, np.zeros(N), np.full(N, 1.0 / N), np.vstack([y, np.ones(N)]),
                     np.array([0.0, nu]))
    _check(sol, val)
    assert np.max(np.abs(sol.values["alpha"] - a)) <= 1e-5 / N
    # the multipliers: b (of y'a = 0) and rho (of 1'a = nu) against the primal's own solution
    point = dualize(nusvc_primal(X, y, nu)).recover(sol)
    assert set(point) >= {"w", "b", "rho"}


@pytest.mark.parametrize("libsvm", [True, False])
def test_one_class_one_equality(libsvm):
    X, _ = _data(1)
    N, nu = X.shape[0], 0.3
    a = Variable("alpha", N)
    P = Problem(-0.5 * quad_form(a, GramOperator(KER, X)),
                [(vsum(a) == 1).named("rho"), (a >= 0).named("s"),
                 (a <= 1.0 / (nu * N)).named("xi")], "max", "one-class dual")
    sol = P.solve(backend="gsmo", tol=1e-9, libsvm=libsvm)
    val, aref, _ = _ref(rbf_kernel(X, gamma=GAMMA), np.zeros(N), np.full(N, 1 / (nu * N)),
                        np.ones((1, N)), np.array([1.0]))
    _check(sol, val)
    assert np.max(np.abs(sol.values["alpha"] - aref)) <= 1e-5


def test_svor_exc_three_classes():
    X, _ = _data(2, N=45)
    yo = np.digitize(X[:, 0], [-0.4, 0.4]) + 1
    der = dualize(svor_primal(X, yo, 3, 1.0))
    dual = der.dual
    rec = box_qp_eq_of(dual)
    assert rec is not None and rec.n_groups == 2 and rec.lo.size == 1   # + the ordering mu
    assert choose(dual)[0] == "gsmo"
    sol = dual.solve(backend="gsmo", tol=1e-9)
    ref = dual.solve(backend="cvxpy")
    assert abs(sol.objective_value - ref.objective_value) <= 1e-6 * abs(ref.objective_value)
    # the dual optimum need not be unique (the primal's is): compare the recovered primal
    p_ours, p_ref = der.recover(sol), der.recover(ref)
    for k in ("w", "b1", "b2"):
        assert np.max(np.abs(p_ours[k] - p_ref[k])) <= 1e-5
    for k in ("minus_b1", "minus_b2"):
        assert np.max(np.abs(sol.multipliers[k] - ref.multipliers[k])) <= 1e-5
    cert = sol.certificate()
    assert cert.relative_gap <= 1e-7 and cert.max_kkt_residual <= 1e-5
    # thresholds ordered, and the recovered primal point is certified against the primal
    b1, b2 = -sol.multipliers["minus_b1"][0], -sol.multipliers["minus_b2"][0]
    assert b1 <= b2 + 1e-9


def _random_grouped(seed, n=36, groups=3, dense=False):
    """A random box QP with partitioned equalities (random coefficients e_t of both signs),
    one scalar variable linking groups 0 and 1, and a coupled inequality (read with a slack)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    s = rng.choice([-1.0, 1.0], size=n)
    grp = np.arange(n) % groups
    e = rng.uniform(0.5, 2.0, size=n) * rng.choice([-1.0, 1.0], size=n)
    C = rng.uniform(0.5, 2.0, size=n)
    p = rng.normal(size=n)
    a = Variable("a", n)
    m = Variable("m", 1)
    rows = [np.where(grp == g, e, 0.0) for g in range(groups)]
    cons = [(dot(Data("e0", rows[0]), a) - vsum(m) == 0.3).named("eq0"),
            (dot(Data("e1", rows[1]), a) + vsum(m) == -0.2).named("eq1"),
            (dot(Data("e2", rows[2]), a) >= 0.1).named("ineq2"),
            (a >= 0).named("s"), (a <= Data("C", C)).named("u"), (m >= 0).named("sm")]
    Q = rbf_kernel(X, gamma=GAMMA) * np.outer(s, s)
    op = GramOperator.dense_matrix(Q) if dense else GramOperator(KER, X, sign=s)
    P = Problem(-0.5 * quad_form(a, op) - dot(Data("p", p), a) - 0.05 * vsum(m), cons, "max",
                "grouped")
    A = np.vstack(rows)
    B = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, -1.0]])   # m, then the slack of ineq2
    return P, Q, p, C, A, np.array([0.3, -0.2, 0.1]), np.array([0.05, 0.0]), B


@pytest.mark.parametrize("seed,dense", [(0, False), (1, False), (2, True)])
def test_random_grouped_equalities_and_scalars(seed, dense):
    P, Q, p, C, A, c, q, B = _random_grouped(seed, dense=dense)
    rec = box_qp_eq_of(P)
    assert rec is not None, box_qp_eq_refusal(P)
    assert rec.n_groups == 3 and rec.lo.size == 2
    sol = P.solve(backend="gsmo", tol=1e-9)
    val, a, m = _ref(Q, p, C, A, c, q, B, np.zeros(2))
    _check(sol, val)
    assert np.max(np.abs(sol.values["a"] - a)) <= 1e-5
    assert abs(sol.values["m"][0] - m[0]) <= 1e-5
    assert sol.multipliers["ineq2"][0] >= 0


def test_infeasible_equalities():
    X, _ = _data(3, N=10)
    a = Variable("alpha", 10)
    P = Problem(-0.5 * quad_form(a, GramOperator(KER, X)),
                [(vsum(a) == 5.0).named("rho"), (a >= 0).named("s"), (a <= 0.1).named("xi")],
                "max", "infeasible")
    with pytest.warns(Warning):
        sol = P.solve(backend="gsmo", libsvm=False)
    assert sol.status == "infeasible"


def test_refusal_names_condition():
    X, _ = _data(4, N=8)
    a = Variable("alpha", 8)
    P = Problem(-0.5 * quad_form(a, GramOperator(KER, X)),
                [(a >= 0).named("s"), (a <= 1).named("xi")], "max", "plain box")
    assert box_qp_eq_of(P) is None
    assert "no equality" in box_qp_eq_refusal(P)
    with pytest.raises(ValueError, match="gsmo"):
        P.solve(backend="gsmo")


def test_catalogue_nusvc_on_gsmo_matches_smo():
    """The catalogue NuSVC's dual (1ᵀa >= nu, read with a slack: a scalar variable touching
    both sign groups) on the generic loop, against the same fit on SMO."""
    import primaldual as pd

    X, y = _data(5, N=60)
    a = pd.NuSVC(nu=0.4, kernel="rbf", gamma=GAMMA, backend="gsmo", tol=1e-9).fit(X, y)
    b = pd.NuSVC(nu=0.4, kernel="rbf", gamma=GAMMA, backend="smo", tol=1e-9).fit(X, y)
    assert a.backend_ == "gsmo" and a.solution_.info["route"] == "gsmo"
    # (relative to the objective's unit min(1, C_max^2) = 1/N^2: an absolute gap ~ 5e-11)
    assert a.certificate_.relative_gap <= 1e-6
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-5)
