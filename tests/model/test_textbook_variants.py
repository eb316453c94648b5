"""Six SVM variants from the literature written in their textbook form with the modelling
language (issue 15): each derives its dual mechanically, solves primal and dual with CVXPY and
with the fastest applicable specialised backend, and agrees with an independent plain-CVXPY model
(optimal values to 1e-6 relative, the recovered w or decision values f to 1e-5).

Linear kernels keep the reference models independent: there ``phi(x) = x`` and the plain-CVXPY
model is the textbook one over ``w`` in ``R^d``.
"""

import cvxpy as cp
import numpy as np
import pytest

from primaldual.kernels import make_kernel
from primaldual.model import (
    Data,
    FeatureVariable,
    Problem,
    Variable,
    huber,
    norm1,
    norm2,
    phi,
    vsum,
)
from primaldual.model.dualize import dualize

RTOL_VALUE, TOL_W = 1e-6, 1e-5
LIN = make_kernel("linear")


def _ref_solve(prob: cp.Problem) -> float:
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == "optimal"
    return float(prob.value)


def _latex_errors(der) -> list[str]:
    """Steps of a derivation (primal, Lagrangian, stationarity, dual) whose LaTeX rows
    matplotlib's mathtext cannot parse."""
    import re

    from matplotlib import mathtext

    parser, bad = mathtext.MathTextParser("path"), []
    for st in der.steps:
        body = st.latex.replace(r"\begin{aligned}", "").replace(r"\end{aligned}", "")
        for row in re.split(r"\\\\", body):
            row = row.replace("&", " ").strip()
            if row:
                try:
                    parser.parse(f"${row}$")
                except ValueError as exc:
                    bad.append(f"{st.title}: {row[:100]}: {str(exc).splitlines()[0][:60]}")
    return bad


def _close(a, b, tol=RTOL_VALUE):
    assert abs(a - b) <= tol * max(1.0, abs(b)), (a, b)


def _check(P, ref_value, f_ref, f_of, backend=None, min_backend_tol=None):
    """Derive, solve primal and dual with CVXPY (and ``backend``), compare with the reference.

    ``f_of(point)`` gives the decision values (or w) of a primal point."""
    der = dualize(P)
    assert not _latex_errors(der)
    sp_ = P.solve()
    sd = der.dual.solve()
    assert sp_.status == sd.status == "optimal"
    _close(sp_.objective_value, ref_value)
    _close(sd.objective_value, ref_value)
    np.testing.assert_allclose(f_of(sp_.values), f_ref, atol=TOL_W * max(1, np.abs(f_ref).max()))
    rec = der.recover(sd)
    np.testing.assert_allclose(f_of(rec), f_ref, atol=TOL_W * max(1, np.abs(f_ref).max()))
    if backend is not None:
        sb = der.dual.solve(backend=backend, **({"tol": min_backend_tol} if min_backend_tol
                                                 else {}))
        assert sb.backend == backend and sb.status == "optimal"
        _close(sb.objective_value, ref_value)
        np.testing.assert_allclose(f_of(der.recover(sb)), f_ref,
                                   atol=TOL_W * max(1, np.abs(f_ref).max()))
    return der, sd


def _clf(seed=0, n=20, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.6 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


# ----------------------------------------------------------------------------- per-sample margins
def margins_primal(seed=0):
    """min 1/2||w||^2 + C sum xi  s.t.  y_i(<w, phi(x_i)> + b) >= m_i - xi_i,  xi >= 0."""
    X, y = _clf(seed)
    N = len(y)
    m = np.linspace(0.5, 1.5, N)
    w, b, xi = FeatureVariable("w", LIN, X), Variable("b"), Variable("xi", N)
    Y, M, C = Data("y", y), Data("m", m), Data("C", 1.0)
    P = Problem(0.5 * norm2(w) + C * vsum(xi),
                [(Y * (w @ phi(X) + b) >= M - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "margin-rescaled SVM primal")
    return P, X, y, m


def test_per_sample_margins():
    P, X, y, m = margins_primal()
    N = len(y)
    wr, br, xr = cp.Variable(X.shape[1]), cp.Variable(), cp.Variable(N)
    ref = _ref_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + cp.sum(xr)),
                                [cp.multiply(y, X @ wr + br) >= m - xr, xr >= 0]))
    f_ref = X @ wr.value + br.value
    f_of = (lambda pt: X @ (X.T @ np.asarray(pt["w"])) + float(np.ravel(pt["b"])[0]))
    der, _ = _check(P, ref, f_ref, f_of, backend="smo", min_backend_tol=1e-9)
    assert "Σ_i m_i α_i" in str(der.dual)


# ----------------------------------------------------------------------------- pinball SVR
def pinball_primal():
    """Quantile regression: min 1/2||w||^2 + C sum (tau xi_i + (1 - tau) xi*_i)
    s.t. y_i - f_i <= xi_i, f_i - y_i <= xi*_i, xi, xi* >= 0."""
    rng = np.random.default_rng(1)
    N, tau = 20, 0.3
    X = rng.normal(size=(N, 2))
    yv = X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=N)
    w, b = FeatureVariable("w", LIN, X), Variable("b")
    xi, xs = Variable("xi", N), Variable("xi_star", N)
    Y, C, T = Data("y", yv), Data("C", 2.0), Data("tau", tau)
    f = w @ phi(X) + b
    P = Problem(0.5 * norm2(w) + C * vsum(T * xi + (1 - T) * xs),
                [(Y - f <= xi).named("alpha"), (f - Y <= xs).named("alpha_star"),
                 (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "pinball SVR primal")
    return P, X, yv, tau


def test_pinball_svr():
    P, X, yv, tau = pinball_primal()
    assert "C Σ_i (τ ξ_i + (1 - τ) ξ*_i)" in str(P)
    wr, br = cp.Variable(2), cp.Variable()
    r = yv - (X @ wr + br)
    ref = _ref_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + 2.0 * cp.sum(
        cp.maximum(tau * r, (tau - 1) * r)))))
    f_ref = X @ wr.value + br.value
    f_of = (lambda pt: X @ (X.T @ np.asarray(pt["w"])) + float(np.ravel(pt["b"])[0]))
    der, _ = _check(P, ref, f_ref, f_of, backend="smo", min_backend_tol=1e-9)
    assert "α_i ≤ C τ" in str(der.dual) and "α*_i ≤ C (1 - τ)" in str(der.dual)


# ----------------------------------------------------------------------------- Crammer-Singer
def crammer_singer_primal():
    """min 1/2 sum_k ||w_k||^2 + C sum xi_i
    s.t. <w_{y_i}, phi(x_i)> - <w_k, phi(x_i)> >= 1 - delta_{y_i k} - xi_i  for all i, k."""
    rng = np.random.default_rng(2)
    N, K = 15, 3
    X = rng.normal(size=(N, 2))
    lab = np.arange(N) % K
    X += 1.5 * np.eye(K)[lab][:, :2]
    ws = [FeatureVariable(f"w_{k}", LIN, X) for k in range(K)]
    xi, C = Variable("xi", N), Data("C", 1.0)
    ind = [Data(f"e{k}", (lab == k).astype(float), txt=f"[y_i={k}]", tex=rf"[y_i={k}]")
           for k in range(K)]
    own = sum(ind[m] * (ws[m] @ phi(X)) for m in range(K))   # <w_{y_i}, phi(x_i)>
    cons = [(own - ws[k] @ phi(X) >= (1 - ind[k]) - xi).named(f"alpha_{k}") for k in range(K)]
    P = Problem(0.5 * sum(norm2(wk) for wk in ws) + C * vsum(xi), cons, "min",
                "Crammer-Singer primal")
    return P, X, lab, K


def test_crammer_singer():
    P, X, lab, K = crammer_singer_primal()
    N = len(lab)
    W, xr = cp.Variable((K, 2)), cp.Variable(N)
    S = X @ W.T
    own_r = cp.sum(cp.multiply(np.eye(K)[lab], S), axis=1)
    ref = _ref_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W) + cp.sum(xr)),
                                [own_r - S[:, k] >= 1 - (lab == k) - xr for k in range(K)]))
    f_ref = X @ W.value.T
    f_of = (lambda pt: np.column_stack([X @ (X.T @ np.asarray(pt[f"w_{k}"])) for k in range(K)]))
    # one equality per point: the multi-equality route (issue 28) reads it in group form
    der, sd = _check(P, ref, f_ref, f_of, backend="gsmo", min_backend_tol=1e-9)
    assert der.dual.variables[0].size == K * N
    assert der.dual.evaluate(sd.values) == pytest.approx(sd.objective_value, rel=1e-9)
    assert "(α_0, α_1, α_2) ∈ R^N × R^N × R^N" in str(der.dual)


# ----------------------------------------------------------------------------- Weston-Watkins
def weston_watkins_primal():
    """min 1/2 sum_k ||w_k||^2 + C sum_i sum_{k != y_i} xi_{k,i}
    s.t. <w_{y_i}, phi(x_i)> + b_{y_i} - <w_k, phi(x_i)> - b_k >= 2 - xi_{k,i},  xi >= 0
    for every sample i and class k != y_i: one slack vector per class over the rows i: y_i != k,
    K feature variables and K biases coupled through the class-indicator data."""
    rng = np.random.default_rng(4)
    N, K = 14, 3
    X = rng.normal(size=(N, 2))
    lab = np.arange(N) % K
    lab[-1] = 0                                   # unequal row sets: 8, 10, 10
    X += 1.5 * np.eye(K)[lab][:, :2]
    ws = [FeatureVariable(f"w_{k}", LIN, X) for k in range(K)]
    bs = [Variable(f"b_{k}") for k in range(K)]
    ind = [Data(f"e{k}", (lab == k).astype(float), txt=f"[y_i={k}]", tex=rf"[y_i={k}]")
           for k in range(K)]
    own = sum(ind[m] * (ws[m] @ phi(X) + bs[m]) for m in range(K))   # f_{y_i}(x_i)
    C = Data("C", 1.0)
    cons, xis = [], []
    for k in range(K):
        rows = np.nonzero(lab != k)[0]
        xi = Variable(f"xi_{k}", len(rows))
        xis.append(xi)
        cons += [((own - (ws[k] @ phi(X) + bs[k]))[rows] >= 2 - xi).named(f"alpha_{k}",
                                                                            f"i: y_i ≠ {k}"),
                 (xi >= 0).named(f"mu_{k}", f"i: y_i ≠ {k}")]
    P = Problem(0.5 * sum(norm2(w) for w in ws) + C * sum(vsum(x) for x in xis), cons, "min",
                "Weston-Watkins primal")
    return P, X, lab, K


def test_weston_watkins():
    P, X, lab, K = weston_watkins_primal()
    N = len(lab)
    W, b, xr = cp.Variable((K, 2)), cp.Variable(K), cp.Variable((N, K))
    S = X @ W.T + b[None, :]
    own_r = cp.sum(cp.multiply(np.eye(K)[lab], S), axis=1)
    mask = 1 - np.eye(K)[lab]                     # slacks of the classes k != y_i only
    ref = _ref_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W)
                                            + cp.sum(cp.multiply(mask, xr))),
                                [own_r - S[:, k] >= 2 - xr[:, k] for k in range(K)]
                                + [xr >= 0]))
    f_ref = X @ W.value.T + b.value
    f_of = (lambda pt: np.column_stack([X @ (X.T @ np.asarray(pt[f"w_{k}"]))
                                        + float(np.ravel(pt[f"b_{k}"])[0]) for k in range(K)]))
    der, sd = _check(P, ref, f_ref, f_of)
    dual = str(der.dual)
    assert "(α_0, α_1, α_2) ∈ R^8 × R^10 × R^10" in dual
    assert "Σ_i ([y_i=0] - 1) α_0,i + Σ_i [y_i=0] α_1,i + Σ_i [y_i=0] α_2,i = 0   [-b_0]" in dual
    assert "α_0,i ≤ C,  i: y_i ≠ 0   [ξ_0,i ≥ 0]" in dual
    assert "Σ_i 2 α_0,i + Σ_i 2 α_1,i + Σ_i 2 α_2,i - 1/2 (α_0, α_1, α_2)ᵀQ" in dual


# ----------------------------------------------------------------------------- RankSVM
def rank_svm_primal():
    """min 1/2||w||^2 + C sum_p xi_p  s.t.  <w, phi(x_{i_p}) - phi(x_{j_p})> >= 1 - xi_p,
    xi >= 0, for the preference pairs p = (i_p, j_p) (x_{i_p} ranked above x_{j_p})."""
    rng = np.random.default_rng(3)
    N = 12
    X = rng.normal(size=(N, 2))
    score = X @ np.array([1.0, -0.5]) + 0.3 * rng.normal(size=N)
    pairs = [(i, j) for i in range(N) for j in range(N) if score[i] > score[j] + 0.5][:30]
    I, J = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    n_p = len(pairs)
    w = FeatureVariable("w", LIN, X)
    xi, C = Variable("xi", n_p, index="P"), Data("C", 0.5)
    diff = phi(X).at(I, "i_p") - phi(X).at(J, "j_p")
    P = Problem(0.5 * norm2(w) + C * vsum(xi),
                [(w @ diff >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "RankSVM primal")
    return P, X, I, J


def test_rank_svm_over_preference_pairs():
    P, X, I, J = rank_svm_primal()
    n_p = len(I)
    text = str(P)
    assert "⟨w, φ(x_i_p) - φ(x_j_p)⟩ ≥ 1 - ξ_p,  p = 1..P   [α_p ≥ 0]" in text
    assert "ξ ∈ R^P" in text and "C Σ_p ξ_p" in text
    wr, xr = cp.Variable(2), cp.Variable(n_p)
    D = X[I] - X[J]
    ref = _ref_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + 0.5 * cp.sum(xr)),
                                [D @ wr >= 1 - xr, xr >= 0]))
    f_ref = X @ wr.value
    f_of = (lambda pt: X @ (X.T @ np.asarray(pt["w"])))
    der, _ = _check(P, ref, f_ref, f_of, backend="smo", min_backend_tol=1e-9)
    assert "α_p ≤ C,  p = 1..P" in str(der.dual)


# ----------------------------------------------------------------------------- L1-norm SVM
def l1_svm_primal():
    """The LP machine: min ||w||_1 + C sum xi  s.t.  y_i (x_i^T w + b) >= 1 - xi_i,  xi >= 0."""
    X, y = _clf(seed=4, n=20, d=5)
    N, d = X.shape
    w, b, xi = Variable("w", d, index="d"), Variable("b"), Variable("xi", N)
    Xd, Y, C = Data("X", X), Data("y", y), Data("C", 0.5)
    P = Problem(norm1(w) + C * vsum(xi),
                [(Y * (Xd @ w + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "L1-norm SVM primal")
    return P, X, y


def test_l1_norm_svm():
    P, X, y = l1_svm_primal()
    N, d = X.shape
    text = str(P)
    assert "‖w‖₁ + C Σ_i ξ_i" in text and "w ∈ R^d" in text
    assert "y_i (x_iᵀw + b) ≥ 1 - ξ_i,  i = 1..N" in text
    wr, br, xr = cp.Variable(d), cp.Variable(), cp.Variable(N)
    ref = _ref_solve(cp.Problem(cp.Minimize(cp.norm1(wr) + 0.5 * cp.sum(xr)),
                                [cp.multiply(y, X @ wr + br) >= 1 - xr, xr >= 0]))
    f_ref = X @ wr.value + br.value
    der = dualize(P)
    assert not _latex_errors(der)
    s = str(der)
    assert "0 ∈ ∂_w L = ∂‖w‖₁ - Σ_i α_i y_i x_i" in s
    assert "Σ_i y_i x_ik α_i ≤ 1,  k = 1..d   [w_plus,k ≥ 0]" in str(der.dual)
    assert "|Σ_i y_i x_ik α_i| ≤ 1,  k = 1..d" in s
    sp_, sd = P.solve(), der.dual.solve()
    _close(sp_.objective_value, ref)
    _close(sd.objective_value, ref)
    rec = der.recover(sd)
    np.testing.assert_allclose(X @ rec["w"] + rec["b"][0], f_ref, atol=TOL_W)
    np.testing.assert_allclose(rec["w"], wr.value, atol=TOL_W)


# ----------------------------------------------------------------------------- SVDD
def svdd_primal():
    """Tax & Duin: min R^2 + C sum xi  s.t.  ||phi(x_i) - a||^2 <= R^2 + xi_i,  xi >= 0."""
    rng = np.random.default_rng(5)
    N, Cv = 16, 0.15
    X = rng.normal(size=(N, 2))
    a, R2, xi = FeatureVariable("a", LIN, X), Variable("R2"), Variable("xi", N)
    C = Data("C", Cv)
    P = Problem(R2 + C * vsum(xi),
                [(norm2(phi(X) - a) <= R2 + xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "SVDD primal")
    return P, X, Cv


def test_svdd_with_its_ball_constraint():
    P, X, Cv = svdd_primal()
    N = X.shape[0]
    assert "‖φ(x_i) - a‖² ≤ R² + ξ_i,  i = 1..N   [α_i ≥ 0]" in str(P)
    ar, r2, xr = cp.Variable(2), cp.Variable(), cp.Variable(N)
    ref = _ref_solve(cp.Problem(cp.Minimize(r2 + Cv * cp.sum(xr)),
                                [cp.sum_squares(X - ar[None, :], axis=1) <= r2 + xr, xr >= 0]))
    # the centre a (linear kernel: a = X^T beta) and R^2
    f_ref = np.r_[ar.value, r2.value]
    f_of = (lambda pt: np.r_[X.T @ np.asarray(pt["a"]), np.ravel(pt["R2"])[0]])
    der, _ = _check(P, ref, f_ref, f_of, backend="smo", min_backend_tol=1e-9)
    dual = str(der.dual)
    # the multiplier of Σ α_i = 1 is ‖a‖² - R², not -R² (the weight of ‖a‖² was fixed by it)
    assert "Σ_i k(x_i, x_i) α_i - 1/2 αᵀQα" in dual and "Σ_i α_i = 1   [‖a‖² - R²]" in dual
    assert "Q_ij = ⟨g_i, g_j⟩/2 with g_i = 2 φ(x_i) for α_i" in dual   # g: a is the centre
    sd = der.dual.solve()
    a = der.recover(sd)["a"]
    K = X @ X.T
    nu = sd.multipliers[der.dual.constraints[0].multiplier][0]
    assert nu == pytest.approx(float(a @ K @ a) - der.recover(sd)["R2"][0], abs=1e-6)


def svdd_negatives_primal(seed=11):
    """Tax & Duin's SVDD with negative examples in ``(a, s)``, ``s = R² - ‖a‖²``: targets
    (``y_i = +1``) inside, negatives (``y_l = -1``) outside, each row affine after expanding
    ``‖φ(x) - a‖² = k(x, x) - 2 ⟨a, φ(x)⟩ + ‖a‖²``, the objective ``R² = s + ‖a‖²``."""
    rng = np.random.default_rng(seed)
    Xt = rng.normal(size=(14, 2))
    Xn = 0.6 * rng.normal(size=(6, 2)) + np.array([1.5, 0.0])
    X = np.vstack([Xt, Xn])
    y = np.r_[np.ones(len(Xt)), -np.ones(len(Xn))]
    cw = np.where(y > 0, 0.2, 0.3)          # C_1 on the targets, C_2 on the negatives
    a, s, xi = FeatureVariable("a", LIN, X), Variable("s"), Variable("xi", len(X))
    Y, k = Data("y", y), Data("k", np.sum(X ** 2, axis=1))
    P = Problem(s + norm2(a) + vsum(Data("C", cw) * xi),
                [(Y * (k - 2 * (a @ phi(X)) - s) <= xi).named("alpha"),
                 (xi >= 0).named("mu")], "min", "SVDD with negatives primal")
    return P, X, y, cw


def svdd_negatives_printed(kernel=LIN, seed=11):
    """Tax & Duin's primal as printed: ``min R² + Σ_i C_i ξ_i`` s.t. ``y_i ‖φ(x_i) - a‖² <=
    y_i R² + ξ_i`` (targets ``y_i = +1`` inside, negatives ``y_l = -1`` beyond ``R² - ξ_l``),
    ``ξ >= 0``; the same data and weights as :func:`svdd_negatives_primal`."""
    _, X, y, cw = svdd_negatives_primal(seed)
    a, R2, xi = FeatureVariable("a", kernel, X), Variable("R2"), Variable("xi", len(X))
    Y = Data("y", y)
    P = Problem(R2 + vsum(Data("C", cw) * xi),
                [(Y * norm2(phi(X) - a) <= Y * R2 + xi).named("alpha"),
                 (xi >= 0).named("mu")], "min", "SVDD with negatives primal")
    return P, X, y, cw


def test_svdd_with_negatives_as_printed_derives_the_dual_of_the_a_s_form():
    """The printed rows (a lower bound on a squared distance, nonconvex as written) are kept;
    dualising applies ``R² = s + ‖a‖²`` as a printed step and derives the ``(a, s)`` form's
    dual: the same value and multipliers, and ``recover`` gives the user's ``R²`` back."""
    P, X, y, cw = svdd_negatives_printed()
    assert P.constraint("alpha").below_ball
    assert "y_i ‖φ(x_i) - a‖² ≤ y_i R² + ξ_i" in str(P)
    der, ref = dualize(P), dualize(svdd_negatives_primal()[0])
    step = next(st for st in der.steps if st.title.startswith("Substitute R² = s + ‖a‖²"))
    assert "y_i (k(x_i, x_i) - 2 ⟨a, φ(x_i)⟩) ≤ y_i s + ξ_i" in step.text
    assert "s + ‖a‖² + Σ_i C_i ξ_i" in step.text
    sd, sr = der.dual.solve(), ref.dual.solve()
    _close(sd.objective_value, sr.objective_value, 1e-8)
    np.testing.assert_allclose(sd.values["alpha"], sr.values["alpha"], atol=1e-8)
    rec, rr = der.recover(sd), ref.recover(sr)
    a = np.asarray(rec["a"])
    assert float(rec["R2"][0]) == pytest.approx(float(rr["s"][0]) + float(a @ (X @ X.T) @ a),
                                                abs=1e-8)
    # the printed primal solves too (compiled in (a, s)): the dual's value, the same R²
    sp_ = P.solve()
    _close(sp_.objective_value, sd.objective_value, 1e-7)
    assert float(np.ravel(sp_.values["R2"])[0]) == pytest.approx(float(rec["R2"][0]),
                                                                  abs=1e-6)


@pytest.mark.parametrize("rows", ["R2 >= 0", "no radius", "R2 squared", "two centres"])
def test_svdd_with_negatives_outside_the_pattern_is_refused_naming_what_is_missing(rows):
    X = np.random.default_rng(0).normal(size=(5, 2))
    Y = Data("y", np.r_[1.0, 1, 1, -1, -1])
    a, R2, xi = FeatureVariable("a", LIN, X), Variable("R2"), Variable("xi", 5)
    obj, cons = R2 + vsum(xi), [(Y * norm2(phi(X) - a) <= Y * R2 + xi).named("alpha"),
                                (xi >= 0).named("mu")]
    want = {"R2 >= 0": r"Tax & Duin's SVDD has no R2 >= 0 row: drop it",
            "no radius": "needs the ball's radius", "R2 squared": "nonlinearly",
            "two centres": "one centre"}[rows]
    if rows == "R2 >= 0":
        cons.append((R2 >= 0).named("rho"))
    elif rows == "no radius":
        cons[0] = (Y * norm2(phi(X) - a) <= 1 + xi).named("alpha")
    elif rows == "R2 squared":
        obj = obj + norm2(R2)
    else:
        b = FeatureVariable("b", LIN, X)
        cons.append((norm2(phi(X) - b) <= R2).named("beta"))
    with pytest.raises(TypeError, match=want):
        dualize(Problem(obj, cons, "min", "SVDD"))
    with pytest.raises(TypeError, match="an equality"):
        _ = norm2(phi(X) - a) == R2


def test_svdd_with_negatives_in_a_s_derives_tax_and_duins_dual():
    """The ``(a, s)`` primal's derived dual is Tax & Duin's (2004, with ``α'_i = y_i
    α_i``): ``max Σ_i y_i k_ii α_i - ‖Σ_i y_i α_i φ(x_i)‖²`` s.t. ``Σ_i y_i α_i = 1``,
    ``0 ≤ α_i ≤ C_i``, equal to that dual written in CVXPY and to a CVXPY primal in ``(a, s)``;
    the recovered centre is ``a = Σ_i y_i α_i x_i``, and ``R² = s + ‖a‖²`` satisfies the
    printed (nonconvex as written) rows: targets within ``R² + ξ_i``, negatives beyond
    ``R² - ξ_l``."""
    P, X, y, cw = svdd_negatives_primal()
    N, K = len(y), X @ X.T
    al = cp.Variable(N)
    td = cp.Problem(cp.Maximize((y * np.diag(K)) @ al
                                - cp.sum_squares(X.T @ cp.multiply(y, al))),
                    [y @ al == 1, al >= 0, al <= cw])
    ref = _ref_solve(td)
    ar, sr, xr = cp.Variable(2), cp.Variable(), cp.Variable(N)
    ref_p = _ref_solve(cp.Problem(cp.Minimize(sr + cp.sum_squares(ar) + cw @ xr),
                                  [cp.multiply(y, np.diag(K) - 2 * X @ ar - sr) <= xr,
                                   xr >= 0]))
    _close(ref_p, ref)
    f_ref = np.r_[ar.value, sr.value]
    der, sd = _check(P, ref, f_ref, lambda pt: np.r_[X.T @ np.asarray(pt["a"]),
                                                     np.ravel(pt["s"])[0]],
                     backend="cvxpy")
    dual = str(der.dual)
    assert "Σ_i y_i k_i α_i - 1/2 αᵀQα" in dual and "Σ_i y_i α_i = 1" in dual
    alpha = np.asarray(sd.values["alpha"], dtype=float)
    np.testing.assert_allclose(alpha, al.value, atol=TOL_W)
    rec = der.recover(sd)
    centre = X.T @ np.asarray(rec["a"])
    np.testing.assert_allclose(centre, X.T @ (y * alpha), atol=TOL_W)
    R2 = float(rec["s"][0]) + float(centre @ centre)
    d2 = np.sum((X - centre) ** 2, axis=1)
    slack = np.asarray(rec["xi"], dtype=float)
    assert np.all(d2[y > 0] <= R2 + slack[y > 0] + 1e-6)
    assert np.all(d2[y < 0] >= R2 - slack[y < 0] - 1e-6)


# ----------------------------------------------------------------------------- recovery summary
def test_recovery_summary_support_free_split_and_intercept():
    """Per-sample margins again: the support set, its free/bounded split and the intercept from
    the equality multiplier agree with the reference (free vectors sit exactly on their margin)."""
    P, X, y, m = margins_primal(seed=6)
    der = dualize(P)
    sol = der.dual.solve()
    s = der.summary(sol, tol=1e-6)
    alpha = np.asarray(sol.values[der.dual.variables[0].name])
    sup, free, bnd = s["support"]["alpha"], s["free"]["alpha"], s["at_bound"]["alpha"]
    assert len(sup) > 0 and len(free) > 0
    assert set(sup) == set(free) | set(bnd) and not set(free) & set(bnd)
    np.testing.assert_allclose(alpha[bnd], 1.0, atol=1e-6)
    f = X @ (X.T @ s["values"]["w"]) + s["values"]["b"][0]
    np.testing.assert_allclose(y[free] * f[free], m[free], atol=1e-6)
    bi = s["intercept"]["b"]
    assert abs(bi["from_multiplier"][0] - bi["from_free"][0]) <= 1e-6


# ----------------------------------------------------------------------------- rendering review
# ----------------------------------------------------------------------------- twin SVM
def twin_plane_primal(seed=0):
    """Jayadeva et al.'s plane +1: min 1/2 ||A w + b||² + c Σ ξ  s.t.  -(B w + b) + ξ ≥ 1."""
    from primaldual.methods.twin import twin_plane_spec
    X, y = _clf(seed, n=30)
    return twin_plane_spec(1.0)(X, y, LIN, 0.7, 0.0)[0], X, y


def test_twin_svm_plane():
    """w and b eliminated jointly; the printed dual at the solution is the paper's
    Σ_i α_i - 1/2 αᵀ G (HᵀH)⁻¹ Gᵀ α with H = [A 1], G = [B 1]."""
    from tests.model.text_eval import TextEvaluator
    P, X, y = twin_plane_primal()
    A, B = X[y > 0], X[y < 0]
    wr, br, xr = cp.Variable(3), cp.Variable(), cp.Variable(len(B))
    ref = _ref_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ wr + br) + 0.7 * cp.sum(xr)),
                                [-(B @ wr + br) + xr >= 1, xr >= 0]))
    der, sd = _check(P, ref, X @ wr.value + br.value, lambda pt: X @ pt["w"] + pt["b"][0],
                     backend="smo", min_backend_tol=1e-10)
    H, G = np.c_[A, np.ones(len(A))], np.c_[B, np.ones(len(B))]
    ev = TextEvaluator({"α": np.asarray(sd.values["alpha"], float),
                        "Q": G @ np.linalg.solve(H.T @ H, G.T)})
    _close(ev.value(der.dual.objective.txt), ref)


VARIANTS = {"SVDD": svdd_primal, "L1-norm SVM": l1_svm_primal, "twin SVM plane": twin_plane_primal,
            "Crammer-Singer": crammer_singer_primal, "pinball SVR": pinball_primal,
            "RankSVM": rank_svm_primal, "per-sample margins": margins_primal,
            "Weston-Watkins": weston_watkins_primal}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_renders_and_its_latex_compiles(name):
    """Primal, Lagrangian, KKT conditions and every derivation step (dual included) of each
    variant, in text and LaTeX; the LaTeX parses with mathtext. Forms the review found false
    are gone: a scalar multiplier never carries an index (``δ_i``), the dual's ``Q`` is defined
    in the dual itself, and no "plus the diagonal" clause stands for a block that is not one."""
    P = VARIANTS[name]()[0]
    der = dualize(P)      # its steps' LaTeX is parsed by the variant's own test (_check)
    from matplotlib import mathtext
    parser = mathtext.MathTextParser("path")
    for tex in (P.lagrangian().to_latex(), *(c.tex for c in P.kkt().conditions)):
        parser.parse(f"${tex}$")
    text = str(der)
    assert "plus the diagonal" not in text
    if der.dual.objective.terms:             # a quadratic dual defines its Q
        assert any(t.startswith("Q_") for t, _ in der.dual.definitions), str(der.dual)
    for c in P.constraints:
        if c.scalar:
            assert f"{c.mult_txt}_i" not in text


# ----------------------------------------------------------------------------- backend routing
def test_backend_routing_is_explained(capsys):
    """``auto`` reports its choice and why (``Solution.info`` and ``verbose``); a refused backend
    names the structural condition; SMO takes SVDD's ``Q = 2K`` (a positive multiple of a
    kernel matrix)."""
    from primaldual.backends import select

    der = dualize(svdd_primal()[0])
    sol = der.dual.solve(backend="auto", tol=1e-9, verbose=True)
    assert sol.backend == "smo" and sol.info["backend_choice"].startswith("smo: accepts")
    assert "backend='auto' chose smo: accepts" in capsys.readouterr().out
    X, y = _clf(seed=7)        # a Huber SVR: its dual has a two-sided box on free multipliers
    w, b, r = FeatureVariable("w", LIN, X), Variable("b"), Variable("r", len(y))
    hub = dualize(Problem(0.5 * norm2(w) + Data("C", 1.0) * huber(r, 0.5),
                          [(r == Data("y", y) - (w @ phi(X) + b)).named("alpha")], "min",
                          "Huber SVR primal")).dual
    with pytest.raises(ValueError, match="not a box-constrained QP"):
        select(hub, "smo")
    with pytest.raises(ValueError, match="KKTSystem"):
        select(hub, "kkt")
    s = hub.solve(backend="auto")
    why = s.info["backend_choice"]
    # a QP over plain variables that no SMO takes: the direct QP route, after each box-QP and
    # linear-system backend said why not
    assert s.backend == "qpdirect" and why.startswith("qpdirect: accepts the problem's structure")
    assert "smo: it is not a box-constrained QP" in why and "kkt:" in why and "lowrank:" in why
    assert s.certificate().relative_gap < 1e-7


def test_recovery_summary_of_a_stacked_dual():
    """Pinball SVR: support sets per multiplier (α, α*), their free/bounded split and the
    intercept from the equality's multiplier and from the free support vectors."""
    P, X, yv, tau = pinball_primal()
    der = dualize(P)
    s = der.summary(der.dual.solve(), tol=1e-6)
    assert set(s["support"]) == {"alpha", "alpha_star"}
    for nm in ("alpha", "alpha_star"):
        assert set(s["free"][nm]) | set(s["at_bound"][nm]) == set(s["support"][nm])
    bi = s["intercept"]["b"]
    assert abs(bi["from_multiplier"][0] - bi["from_free"][0]) <= 1e-5
    assert set(s["values"]) == {"w", "b", "xi", "xi_star"}


# ----------------------------------------------------------------------------- Variant estimators
# Issue 26: five textbook variants written as on paper and fitted as `Variant` estimators; each
# predicts on held-out rows and matches a plain CVXPY primal written independently here (optimal
# values to 1e-6 relative; decision values on the held-out rows to 1e-5). Linear kernels keep the
# references independent (phi(x) = x: the textbook model over w in R^d).
from primaldual import Variant  # noqa: E402


def _split(X, y=None, n_train=None):
    n = n_train or (2 * X.shape[0]) // 3
    return (X[:n], X[n:]) if y is None else (X[:n], X[n:], y[:n], y[n:])


def _f_close(f, f_ref, tol=TOL_W):
    np.testing.assert_allclose(f, f_ref, atol=tol * max(1.0, float(np.abs(f_ref).max())))


def one_class_spec(X, y, kernel, nu):
    """Schölkopf et al. (2001), (3): min 1/2||w||^2 + 1/(nu N) sum xi - rho
    s.t. <w, phi(x_i)> >= rho - xi_i, xi >= 0; f(x) = <w, phi(x)> - rho."""
    N = X.shape[0]
    w, rho, xi = FeatureVariable("w", kernel, X), Variable("rho"), Variable("xi", N)
    c = Data("c", 1.0 / (nu * N), txt="1/(νN)", tex=r"\frac{1}{\nu N}")
    P = Problem(0.5 * norm2(w) + c * vsum(xi) - rho,
                [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                "one-class SVM primal")
    return P, w @ phi(X) - rho


def test_variant_one_class_svm():
    rng = np.random.default_rng(10)
    Xa = np.r_[rng.normal(size=(45, 2)), 3 + rng.normal(size=(15, 2))]
    X, Xt = _split(Xa)
    nu, N = 0.2, X.shape[0]
    m = Variant(one_class_spec, task="novelty", kernel="linear", nu=nu, tol=1e-5).fit(X)
    wr, rr, xr = cp.Variable(2), cp.Variable(), cp.Variable(N)
    ref = _ref_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + cp.sum(xr) / (nu * N)
                                            - rr), [X @ wr >= rr - xr, xr >= 0]))
    _close(m.certificate_.primal_objective, ref)
    _close(m.certificate_.dual_objective, ref)
    assert m.status_ == "optimal"   # gap and KKT residuals (subgradient for norm1) within tol
    assert m.backend_ == "smo" and m.status_ == "optimal"
    f_ref = Xt @ wr.value - rr.value
    _f_close(m.decision_function(Xt), f_ref)
    np.testing.assert_array_equal(m.predict(Xt)[np.abs(f_ref) > 1e-6],
                                  np.where(f_ref >= 0, 1, -1)[np.abs(f_ref) > 1e-6])
    # RBF: scikit-learn's OneClassSVM (LIBSVM) is the reference, scaled by nu N
    from sklearn.svm import OneClassSVM
    r = Variant(one_class_spec, task="novelty", kernel="rbf", gamma=0.5, nu=nu,
                tol=1e-5).fit(X)
    sk = OneClassSVM(nu=nu, gamma=0.5, tol=1e-5).fit(X)
    _f_close(r.decision_function(Xt) * nu * N, sk.decision_function(Xt))


def lp_svr_spec(X, y, kernel, C, epsilon):
    """Smola, Schölkopf & Rätsch (1999), the LP-SVR: f(x) = sum_j u_j k(x_j, x) + b,
    min ||u||_1 + C sum (xi_i + xi*_i)  s.t.  |y_i - f(x_i)| <= epsilon + xi^(*)_i, xi^(*) >= 0."""
    N = X.shape[0]
    u, b = Variable("u", N, index="M"), Variable("b")
    xi, xs = Variable("xi", N), Variable("xi_star", N)
    f = Data("K", np.asarray(kernel(X), dtype=float)) @ u + b
    Y, E, Cd = Data("y", y), Data("epsilon", epsilon, txt="ε"), Data("C", C)
    P = Problem(norm1(u) + Cd * vsum(xi + xs),
                [(Y - f <= E + xi).named("alpha"), (f - Y <= E + xs).named("alpha_star"),
                 (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "LP-SVR primal")
    return P, f


def test_variant_lp_svr():
    rng = np.random.default_rng(11)
    Xa = rng.uniform(-2, 2, size=(36, 1))
    ya = np.sinc(Xa[:, 0]) + 0.05 * rng.normal(size=36)
    X, Xt, y, yt = _split(Xa, ya)
    C, eps, gamma = 2.0, 0.05, 1.0
    m = Variant(lp_svr_spec, task="regression", kernel="rbf", gamma=gamma, C=C,
                epsilon=eps).fit(X, y)
    from sklearn.metrics.pairwise import rbf_kernel
    K, Kt = rbf_kernel(X, X, gamma=gamma), rbf_kernel(Xt, X, gamma=gamma)
    ur, br = cp.Variable(X.shape[0]), cp.Variable()
    ref = _ref_solve(cp.Problem(cp.Minimize(cp.norm1(ur) + C * cp.sum(
        cp.pos(cp.abs(y - K @ ur - br) - eps)))))
    _close(m.certificate_.primal_objective, ref)
    _close(m.certificate_.dual_objective, ref)
    assert m.status_ == "optimal"   # gap and KKT residuals (subgradient for norm1) within tol
    f_ref = Kt @ ur.value + br.value
    _f_close(m.predict(Xt), f_ref, 1e-4)   # u is not unique in general; f is (checked below)
    assert m.support_.size < X.shape[0]    # the l1 norm makes the expansion sparse
    assert m.score(Xt, yt) > 0.8


def l1_norm_svm_spec(X, y, kernel, lam):
    """Zhu, Rosset, Hastie & Tibshirani (2003), the 1-norm SVM in its Lagrangian form:
    min sum_i [1 - y_i (x_i^T w + b)]_+ + lam ||w||_1 (slacks xi for the hinge)."""
    N, d = X.shape
    w, b, xi = Variable("w", d, index="d"), Variable("b"), Variable("xi", N)
    f = Data("X", X) @ w + b
    P = Problem(vsum(xi) + Data("lambda", lam, txt="λ") * norm1(w),
                [(Data("y", y) * f >= 1 - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                "1-norm SVM primal")
    return P, f


def test_variant_one_norm_svm():
    rng = np.random.default_rng(12)
    Xa = rng.normal(size=(45, 6))
    ya = np.where(Xa[:, 0] - Xa[:, 1] + 0.3 * rng.normal(size=45) > 0, "up", "down")
    X, Xt, y, yt = _split(Xa, ya)
    lam = 3.0
    m = Variant(l1_norm_svm_spec, task="classification", kernel="linear", lam=lam).fit(X, y)
    assert list(m.classes_) == ["down", "up"] and m.dual_coef_.shape[1] == 0
    yp = np.where(y == "up", 1.0, -1.0)
    wr, br = cp.Variable(6), cp.Variable()
    ref = _ref_solve(cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(yp, X @ wr + br)))
                                            + lam * cp.norm1(wr))))
    _close(m.certificate_.primal_objective, ref)
    _close(m.certificate_.dual_objective, ref)
    assert m.status_ == "optimal"   # gap and KKT residuals (subgradient for norm1) within tol
    f_ref = Xt @ wr.value + br.value
    _f_close(m.decision_function(Xt), f_ref)
    keep = np.abs(f_ref) > 1e-6
    np.testing.assert_array_equal(m.predict(Xt)[keep], np.where(f_ref > 0, "up", "down")[keep])
    assert np.count_nonzero(np.abs(m.linear_coef_[:, 0]) > 1e-8) < 6   # sparse w


def svor_exc_spec(X, y, kernel, C):
    """Chu & Keerthi (2005), SVOR with explicit constraints on the thresholds: for each
    threshold j only classes j and j+1 enter, with slacks per class block,
    min 1/2||w||^2 + C sum_j (sum_{y_i=j} xi^j_i + sum_{y_i=j+1} xi*^{j+1}_i)
    s.t. <w, phi(x_i)> - b_j <= -1 + xi^j_i (y_i = j), <w, phi(x_i)> - b_j >= 1 - xi*^{j+1}_i
    (y_i = j+1), xi, xi* >= 0, b_{j-1} <= b_j; f_j(x) = <w, phi(x)> - b_j."""
    r = int(y.max()) + 1
    w = FeatureVariable("w", kernel, X)
    b = [Variable(f"b{j + 1}") for j in range(r - 1)]
    Cd = Data("C", C)
    obj, cons = 0.5 * norm2(w), []
    for j in range(r - 1):
        lo, hi = np.flatnonzero(y == j), np.flatnonzero(y == j + 1)
        xl, xh = Variable(f"xi{j + 1}", lo.size), Variable(f"xi_star{j + 2}", hi.size)
        obj = obj + Cd * vsum(xl) + Cd * vsum(xh)
        cons += [(w @ phi(X)[lo] - b[j] <= -1 + xl).named(f"alpha{j + 1}"),
                 (w @ phi(X)[hi] - b[j] >= 1 - xh).named(f"alpha_star{j + 1}"),
                 (xl >= 0).named(f"mu{j + 1}"), (xh >= 0).named(f"mu_star{j + 1}")]
        if j:
            cons.append((b[j] - b[j - 1] >= 0).named(f"mu_b{j + 1}"))
    P = Problem(obj, cons, "min", "SVOR-EXC primal")
    return P, [w @ phi(X) - bj for bj in b]


def test_variant_svor_exc_ordinal_regression():
    rng = np.random.default_rng(13)
    Xa = rng.normal(size=(48, 2))
    z = Xa @ np.array([1.0, 0.5]) + 0.3 * rng.normal(size=48)
    ya = np.digitize(z, [-0.6, 0.6]) + 1            # ordered labels 1 < 2 < 3
    X, Xt, y, yt = _split(Xa, ya)
    C = 1.0
    # the derived dual reaches gsmo (box QP with two equalities and an ordering): its tol bounds
    # the relative gap, so 1e-6 agreement with CVXPY needs a tol below 1e-6
    m = Variant(svor_exc_spec, task="ordinal", kernel="linear", C=C, tol=1e-8).fit(X, y)
    assert list(m.classes_) == [1, 2, 3]
    wr, br = cp.Variable(2), cp.Variable(2)
    cost, cons = 0.5 * cp.sum_squares(wr), [br[0] <= br[1]]
    for j in range(2):
        lo, hi = X[y == j + 1], X[y == j + 2]
        cost = cost + C * cp.sum(cp.pos(1 + lo @ wr - br[j])) + C * cp.sum(
            cp.pos(1 - hi @ wr + br[j]))
    ref = _ref_solve(cp.Problem(cp.Minimize(cost), cons))
    _close(m.certificate_.primal_objective, ref)
    _close(m.certificate_.dual_objective, ref)
    assert m.status_ == "optimal"   # gap and KKT residuals (subgradient for norm1) within tol
    # the thresholds need not be unique (hinge losses are piecewise linear in b): the fitted
    # (w, b) is checked optimal in the reference's own objective, and w against the reference's
    w_fit = m.support_vectors_.T @ m.dual_coef_[0]
    b_fit = -m.intercept_
    np.testing.assert_allclose(m.dual_coef_[1], m.dual_coef_[0])
    cost_fit = 0.5 * w_fit @ w_fit + C * sum(
        np.maximum(0, 1 + X[y == j + 1] @ w_fit - b_fit[j]).sum()
        + np.maximum(0, 1 - X[y == j + 2] @ w_fit + b_fit[j]).sum() for j in range(2))
    assert b_fit[0] <= b_fit[1] + 1e-9
    _close(cost_fit, ref)
    _f_close(w_fit, wr.value)
    F = m.decision_function(Xt)
    np.testing.assert_allclose(F, (Xt @ w_fit)[:, None] - b_fit[None, :], atol=1e-10)
    np.testing.assert_array_equal(m.predict(Xt), 1 + (F > 0).sum(axis=1))
    assert m.score(Xt, yt) > 0.7


def svm_plus_spec(X, y, kernel, X_star, C, gamma_star):
    """Vapnik & Vashist (2009), SVM+ (learning using privileged information): the slack is a
    correcting function in the privileged space, xi_i = <w*, phi*(x*_i)> + b*;
    min 1/2||w||^2 + gamma/2 ||w*||^2 + C sum_i xi_i
    s.t. y_i (<w, phi(x_i)> + b) >= 1 - xi_i, xi_i >= 0; f(x) = <w, phi(x)> + b."""
    w = FeatureVariable("w", kernel, X)
    ws = FeatureVariable("w_star", make_kernel("linear"), X_star)
    b, bs = Variable("b"), Variable("b_star")
    corr = ws @ phi(X_star, "x*") + bs
    P = Problem(0.5 * norm2(w) + Data("gamma", gamma_star, txt="γ") * (0.5 * norm2(ws))
                + Data("C", C) * vsum(corr),
                [(Data("y", y) * (w @ phi(X) + b) >= 1 - corr).named("alpha"),
                 (corr >= 0).named("mu")], "min", "SVM+ primal")
    return P, w @ phi(X) + b


def test_variant_svm_plus():
    rng = np.random.default_rng(14)
    Xa = rng.normal(size=(36, 2))
    ya = np.where(Xa[:, 0] + 0.5 * rng.normal(size=36) > 0, 1, -1)
    Xs_a = np.c_[Xa[:, 0] + 0.1 * rng.normal(size=36), rng.normal(size=36)]  # privileged
    X, Xt, y, yt = _split(Xa, ya)
    Xs = Xs_a[: X.shape[0]]
    C, gs = 1.0, 0.5
    m = Variant(svm_plus_spec, task="classification", kernel="linear", C=C,
                gamma_star=gs).fit(X, y, X_star=Xs)
    wr, br, vr, cr = cp.Variable(2), cp.Variable(), cp.Variable(2), cp.Variable()
    corr = Xs @ vr + cr
    ref = _ref_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wr) + 0.5 * gs * cp.sum_squares(
        vr) + C * cp.sum(corr)), [cp.multiply(y, X @ wr + br) >= 1 - corr, corr >= 0]))
    _close(m.certificate_.primal_objective, ref)
    _close(m.certificate_.dual_objective, ref)
    assert m.status_ == "optimal"   # gap and KKT residuals (subgradient for norm1) within tol
    f_ref = Xt @ wr.value + br.value
    _f_close(m.decision_function(Xt), f_ref)
