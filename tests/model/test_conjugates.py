"""Losses and norms dualised through their convex conjugates (issue 15): the logistic loss (kernel
logistic regression's dual, the binary entropy), the Huber loss (a QP dual with a box), the l-inf
norm (an l1 bound on the multipliers). Each derived dual is solved with CVXPY next to its primal
and compared with an independent plain-CVXPY model: optimal values to 1e-6 relative, the
recovered decision values or w to 1e-5. Linear kernels keep the reference models independent."""

import re

import cvxpy as cp
import numpy as np
import pytest

import primaldual as pd
from primaldual.kernels import make_kernel
from primaldual.model import (
    Data,
    FeatureVariable,
    Problem,
    Variable,
    huber,
    logistic,
    norm2,
    norm_inf,
    phi,
    vsum,
)
from primaldual.model.dualize import dualize

LIN = make_kernel("linear")


def _ref(prob: cp.Problem) -> float:
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == "optimal"
    return float(prob.value)


def _close(a, b, tol=1e-6):
    assert abs(a - b) <= tol * max(1.0, abs(b)), (a, b)


def _latex_ok(der) -> None:
    from matplotlib import mathtext
    parser = mathtext.MathTextParser("path")
    for st in der.steps:
        body = st.latex.replace(r"\begin{aligned}", "").replace(r"\end{aligned}", "")
        for row in re.split(r"\\\\", body):
            row = row.replace("&", " ").strip()
            if row:
                parser.parse(f"${row}$")


def _data(seed=0, n=24):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.6 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _solve_both(P):
    der = dualize(P)
    _latex_ok(der)
    sp_, sd = P.solve(), der.dual.solve()
    assert sp_.status == sd.status == "optimal"
    return der, sp_, sd


def test_kernel_logistic_regression_dual_through_the_logistic_conjugate():
    """The catalogue's KLR primal, ``C Σ log(1 + exp(-z_i))`` with ``y_i f_i = z_i [α_i]``,
    dualises to ``-1/2 αᵀQα + C Σ H(α_i/C)``: the hand-written dual of formulations.md section 13
    (``- Σ [α log α + (C - α) log(C - α)] + N C log C``) in other words."""
    X, y = _data()
    C = 2.0
    m = pd.KernelLogisticRegression(C=C, kernel="linear")
    P = m.primal(X, y)
    der, sp_, sd = _solve_both(P)
    text = str(der.dual)
    assert "-1/2 αᵀQα + C Σ_i H(α_i/C)" in text and "0 ≤ α_i/C ≤ 1" in str(der)
    assert "H(t) = -t log t - (1 - t) log(1 - t)" in text
    wr, br = cp.Variable(2), cp.Variable()
    ref = _ref(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + C * cp.sum(
        cp.logistic(-cp.multiply(y, X @ wr + br))))))
    _close(sp_.objective_value, ref)
    _close(sd.objective_value, ref)
    _close(m.dual(X, y).solve().objective_value, ref)          # the hand-written dual
    f_ref = X @ wr.value + br.value
    rec = der.recover(sd)
    np.testing.assert_allclose(X @ (X.T @ rec["w"]) + rec["b"][0], f_ref, atol=1e-5)
    np.testing.assert_allclose(rec["z"], y * f_ref, atol=1e-5)


def _huber_svr(seed=1, n=24, Cv=2.0, dv=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    yv = X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=n)
    yv[:3] += 4.0                                   # outliers: some residuals beyond delta
    w, b, r = FeatureVariable("w", LIN, X), Variable("b"), Variable("r", n)
    P = Problem(0.5 * norm2(w) + Data("C", Cv) * huber(r, Data("delta", dv)),
                [(r == Data("y", yv) - (w @ phi(X) + b)).named("alpha")], "min",
                "Huber SVR primal")
    return P, X, yv


def test_huber_svr_dual_is_a_qp_with_a_box():
    P, X, yv = _huber_svr()
    assert "h_δ(u) = u²/2 for |u| ≤ δ, δ |u| - δ²/2 otherwise" in str(P)
    der, sp_, sd = _solve_both(P)
    text = str(der.dual)
    assert "Σ_i y_i α_i - 1/2 αᵀQα" in text and "α_i/C ≤ δ" in text and "α_i/C ≥ -δ" in text
    assert "Q_ij = ⟨a^(w)_i, a^(w)_j⟩ + [i = j]/C" in text
    wr, br = cp.Variable(2), cp.Variable()
    ref = _ref(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr)
                                      + 2.0 * 0.5 * cp.sum(cp.huber(yv - X @ wr - br, 0.5)))))
    _close(sp_.objective_value, ref)
    _close(sd.objective_value, ref)
    f_ref = X @ wr.value + br.value
    rec = der.recover(sd)
    alpha = np.asarray(sd.values[der.dual.variables[0].name])
    assert np.sum(np.abs(alpha) >= 2.0 * 0.5 * (1 - 1e-6)) >= 3   # the outliers are on the box
    np.testing.assert_allclose(X @ (X.T @ rec["w"]) + rec["b"][0], f_ref, atol=1e-5)
    np.testing.assert_allclose(rec["r"], yv - f_ref, atol=1e-5)   # beyond the box too


def test_huber_svc_margin_residuals():
    """A Huber-loss classifier (robust LS-SVM): ``C Σ h_δ(e_i)`` with
    ``y_i f_i = 1 - e_i [α_i]``."""
    X, y = _data(seed=2)
    w, b, e = FeatureVariable("w", LIN, X), Variable("b"), Variable("e", len(y))
    P = Problem(0.5 * norm2(w) + Data("C", 1.5) * huber(e, 0.8),
                [(Data("y", y) * (w @ phi(X) + b) == 1 - e).named("alpha")], "min",
                "Huber SVC primal")
    der, sp_, sd = _solve_both(P)
    wr, br = cp.Variable(2), cp.Variable()
    ref = _ref(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + 1.5 * 0.5 * cp.sum(
        cp.huber(1 - cp.multiply(y, X @ wr + br), 0.8)))))
    _close(sp_.objective_value, ref)
    _close(sd.objective_value, ref)
    rec = der.recover(sd)
    np.testing.assert_allclose(X @ (X.T @ rec["w"]) + rec["b"][0], X @ wr.value + br.value,
                               atol=1e-5)


def test_norm_inf_svm_dual_has_an_l1_bound():
    rng = np.random.default_rng(3)
    N, d = 20, 4
    X = rng.normal(size=(N, d))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] > 0, 1.0, -1.0)
    w, b, xi = Variable("w", d, index="d"), Variable("b"), Variable("xi", N)
    P = Problem(norm_inf(w) + Data("C", 0.5) * vsum(xi),
                [(Data("y", y) * (Data("X", X) @ w + b) >= 1 - xi).named("alpha"),
                 (xi >= 0).named("mu")], "min", "l-inf SVM primal")
    der, sp_, sd = _solve_both(P)
    text = str(der.dual)
    assert "Σ_i y_i x_ik α_i ≤ τ_w,k,  k = 1..d   [w_plus,k ≥ 0]" in text
    assert "Σ_k τ_w,k ≤ 1   [w_sum ≥ 0]" in text
    wr, br, xr = cp.Variable(d), cp.Variable(), cp.Variable(N)
    ref = _ref(cp.Problem(cp.Minimize(cp.norm_inf(wr) + 0.5 * cp.sum(xr)),
                          [cp.multiply(y, X @ wr + br) >= 1 - xr, xr >= 0]))
    _close(sp_.objective_value, ref)
    _close(sd.objective_value, ref)
    rec = der.recover(sd)
    np.testing.assert_allclose(X @ rec["w"] + rec["b"][0], X @ wr.value + br.value, atol=1e-5)


def test_losses_in_their_textbook_form_get_a_variable_of_their_own():
    """``C Σ log(1 + exp(-y_i f_i))`` and ``C Σ h_δ(y_i - f_i)`` written as on paper: the
    derivation introduces ``u_i = (the loss's argument) [α_i]`` (a printed step), then dualises
    through the conjugate; values and decision values agree with plain CVXPY."""
    X, y = _data(seed=4)
    w, b = FeatureVariable("w", LIN, X), Variable("b")
    P = Problem(0.5 * norm2(w) + Data("C", 2.0) * logistic(-(Data("y", y) * (w @ phi(X) + b))),
                [], "min", "KLR primal")
    der, sp_, sd = _solve_both(P)
    s = str(der)
    assert "C Σ_i log(1 + exp(u_i))" in s and "u_i = -y_i (⟨w, φ(x_i)⟩ + b),  i = 1..N   [α_i]" in s
    assert "- Σ_i α_i (u_i + y_i (⟨w, φ(x_i)⟩ + b))" in s     # no "- -y_i"
    assert "-1/2 αᵀQα + C Σ_i H(α_i/C)" in str(der.dual)
    wr, br = cp.Variable(2), cp.Variable()
    ref = _ref(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + 2.0 * cp.sum(
        cp.logistic(-cp.multiply(y, X @ wr + br))))))
    _close(sp_.objective_value, ref)
    _close(sd.objective_value, ref)
    rec = der.recover(sd)
    np.testing.assert_allclose(X @ (X.T @ rec["w"]) + rec["b"][0], X @ wr.value + br.value,
                               atol=1e-5)
    yv = X[:, 0] - X[:, 1]
    P2 = Problem(0.5 * norm2(w) + Data("C", 2.0) * huber(Data("y", yv) - (w @ phi(X) + b), 0.3),
                 [], "min", "Huber SVR primal")
    der2, sp2, sd2 = _solve_both(P2)
    assert "u_i = y_i - (⟨w, φ(x_i)⟩ + b)" in str(der2)
    ref2 = _ref(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + 2.0 * 0.5 * cp.sum(
        cp.huber(yv - X @ wr - br, 0.3)))))
    _close(sp2.objective_value, ref2)
    _close(sd2.objective_value, ref2)
    rec2 = der2.recover(sd2)
    np.testing.assert_allclose(X @ (X.T @ rec2["w"]) + rec2["b"][0], X @ wr.value + br.value,
                               atol=1e-5)


def test_weighted_abs_svm_dual_bounds_each_component():
    """``vsum(c * abs(w))`` (Python's ``abs`` of a vector, weighted): the dual bounds component k
    by ``c_k``; values and w agree with plain CVXPY."""
    rng = np.random.default_rng(5)
    N, d = 20, 4
    X = rng.normal(size=(N, d))
    y = np.where(X[:, 0] - X[:, 2] > 0, 1.0, -1.0)
    cw = np.array([0.5, 1.0, 2.0, 1.0])
    w, b, xi = Variable("w", d, index="d"), Variable("b"), Variable("xi", N)
    P = Problem(vsum(Data("c", cw) * abs(w)) + Data("C", 0.5) * vsum(xi),
                [(Data("y", y) * (Data("X", X) @ w + b) >= 1 - xi).named("alpha"),
                 (xi >= 0).named("mu")], "min", "weighted l1 SVM primal")
    assert "Σ_k c_k |w_k| + C Σ_i ξ_i" in str(P)
    der, sp_, sd = _solve_both(P)
    assert "Σ_i y_i x_ik α_i ≤ c_k,  k = 1..d   [w_plus,k ≥ 0]" in str(der.dual)
    wr, br, xr = cp.Variable(d), cp.Variable(), cp.Variable(N)
    ref = _ref(cp.Problem(cp.Minimize(cw @ cp.abs(wr) + 0.5 * cp.sum(xr)),
                          [cp.multiply(y, X @ wr + br) >= 1 - xr, xr >= 0]))
    _close(sp_.objective_value, ref)
    _close(sd.objective_value, ref)
    rec = der.recover(sd)
    np.testing.assert_allclose(rec["w"], wr.value, atol=1e-5)
    np.testing.assert_allclose(X @ rec["w"] + rec["b"][0], X @ wr.value + br.value, atol=1e-5)
    with pytest.raises(ValueError, match="weights must be >= 0"):
        Data("c", -cw) * abs(w)
    with pytest.raises(TypeError, match="vsum"):
        abs(w) + 1


@pytest.mark.parametrize("norm", ["l1", "linf"])
def test_norms_of_residuals_in_their_textbook_form(norm):
    """Least-absolute-deviation and minimax regression, ``C Σ_i |y_i - f_i|`` and
    ``C max_i |y_i - f_i|`` as written on paper: the residual gets a variable of its own, the
    dual a box ``|α_i| ≤ C`` (l1) or an l1 ball ``Σ_i τ_i ≤ C``, ``τ_i ≥ |α_i|`` (l∞)."""
    rng = np.random.default_rng(6)
    N = 20
    X = rng.normal(size=(N, 2))
    yv = X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=N)
    w, b = FeatureVariable("w", LIN, X), Variable("b")
    r = Data("y", yv) - (w @ phi(X) + b)
    loss = vsum(abs(r)) if norm == "l1" else norm_inf(r)
    P = Problem(0.5 * norm2(w) + Data("C", 2.0) * loss, [], "min", "robust regression primal")
    assert ("C Σ_i |y_i - (⟨w, φ(x_i)⟩ + b)|" if norm == "l1"
            else "C max_i |y_i - (⟨w, φ(x_i)⟩ + b)|") in str(P)
    der, sp_, sd = _solve_both(P)
    text = str(der)
    if norm == "l1":
        assert "0 ∈ ∂_u_i L = C ∂|u_i| - α_i   ⇒  α_i ∈ C ∂|u_i|" in text
        assert "α_i ≤ C,  i = 1..N   [u_plus,i ≥ 0]" in str(der.dual)
    else:
        assert "-α_i ≤ τ_u,i,  i = 1..N   [u_minus,i ≥ 0]" in str(der.dual)
        assert "Σ_i τ_u,i ≤ C   [u_sum ≥ 0]" in str(der.dual)
    wr, br = cp.Variable(2), cp.Variable()
    res = yv - X @ wr - br
    ref = _ref(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + 2.0 * (
        cp.norm1(res) if norm == "l1" else cp.norm_inf(res)))))
    _close(sp_.objective_value, ref)
    _close(sd.objective_value, ref)
    rec = der.recover(sd)
    np.testing.assert_allclose(X @ (X.T @ rec["w"]) + rec["b"][0], X @ wr.value + br.value,
                               atol=1e-5)


def test_recovery_summary_of_a_huber_dual():
    """Free multipliers (an equality constraint) have a support set too, and the Huber box
    splits it: the outliers sit on ``|α_i| = C δ``, their residuals beyond ``δ``."""
    P, X, yv = _huber_svr()
    der = dualize(P)
    s = der.summary(der.dual.solve(), tol=1e-6)
    bound, free = s["at_bound"]["alpha"], s["free"]["alpha"]
    assert {0, 1, 2} <= set(bound) and not set(bound) & set(free)
    r = s["values"]["r"]
    assert np.all(np.abs(r[bound]) >= 0.5 - 1e-5) and np.all(np.abs(r[free]) <= 0.5 + 1e-5)
    bi = s["intercept"]["b"]
    assert abs(bi["from_multiplier"][0] - bi["from_free"][0]) <= 1e-6


def test_weighted_logistic_loss_dualises_entry_by_entry():
    """``Σ_i c_i log(1 + exp(-z_i))`` (per-sample weights, e.g. ``C_i = C s_i``) dualises to
    ``-1/2 αᵀQα + Σ_i c_i H(α_i/c_i)``, ``0 ≤ α_i/c_i ≤ 1``, written on a variable or in the
    textbook form on the margins; both equal an independent CVXPY model."""
    X, y = _data(2)
    c = np.random.default_rng(2).uniform(0.2, 3.0, size=len(y))
    wr, br = cp.Variable(2), cp.Variable()
    ref = _ref(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + cp.sum(cp.multiply(
        c, cp.logistic(-cp.multiply(y, X @ wr + br)))))))
    f_ref = X @ wr.value + br.value
    w, b, z = FeatureVariable("w", LIN, X), Variable("b"), Variable("z", len(y))
    on_var = Problem(0.5 * norm2(w) + logistic(-z, weights=Data("C", c)),
                     [(Data("y", y) * (w @ phi(X) + b) == z).named("alpha")], "min",
                     "weighted KLR primal")
    textbook = Problem(0.5 * norm2(w) + logistic(-(Data("y", y) * (w @ phi(X) + b)),
                                                 weights=Data("C", c)), [], "min",
                       "weighted KLR primal (textbook)")
    assert "C_i σ(-z_i)" in str(on_var.kkt())
    for P in (on_var, textbook):
        der, sp_, sd = _solve_both(P)
        assert "Σ_i C_i H(" in str(der.dual) and "/C_i ≤ 1" in str(der.dual)
        _close(sp_.objective_value, ref)
        _close(sd.objective_value, ref)
        rec = der.recover(sd)
        np.testing.assert_allclose(X @ (X.T @ rec["w"]) + rec["b"][0], f_ref, atol=1e-5)
    with pytest.raises(TypeError, match="weights"):
        logistic(z, weights=c)
    with pytest.raises(ValueError, match=">= 0"):
        logistic(z, weights=Data("C", -c))
