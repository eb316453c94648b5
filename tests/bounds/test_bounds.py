"""Smallest enclosing ball (primaldual.bounds) and the radius-margin bound."""

import cvxpy as cp
import numpy as np
import pytest

import primaldual as pd
from primaldual.bounds import radius_margin_bound
from primaldual.datasets import load_dataset
from primaldual.kernels import make_kernel
from primaldual.tuning import radius_margin_select


def _cvxpy_ball(K):
    """The dual hand-coded in CVXPY: max a^T diag(K) - a^T K a, 1^T a = 1, a >= 0."""
    w, U = np.linalg.eigh(0.5 * (K + K.T))
    F = U[:, w > 1e-12 * w.max()] * np.sqrt(w[w > 1e-12 * w.max()])
    a = cp.Variable(K.shape[0])
    pr = cp.Problem(cp.Maximize(np.diag(K) @ a - cp.sum_squares(F.T @ a)),
                    [cp.sum(a) == 1, a >= 0])
    pr.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return pr.value, a.value


@pytest.mark.parametrize("kernel,gamma", [("rbf", 0.5), ("linear", "scale"), ("poly", 0.5)])
def test_ball_dual_agrees_with_cvxpy(kernel, gamma):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    ball = pd.EnclosingBall(kernel=kernel, gamma=gamma).fit(X)
    K = make_kernel(kernel, gamma, 3, 0.0, X)(X)
    val, a = _cvxpy_ball(K)
    assert abs(ball.radius2_ - val) <= 1e-7 * max(1.0, abs(val))
    assert np.max(np.abs(ball.alpha_ - a)) <= 1e-5
    cert = ball.certificate_
    assert abs(cert.relative_gap) <= 1e-9 and cert.max_kkt_residual <= 1e-7
    assert ball.backend_ == "smo"
    # every training point inside, support points on the sphere
    f = ball.decision_function(X)
    assert f.min() >= -1e-9 * ball.radius2_
    assert np.allclose(f[ball.support_], 0.0, atol=1e-7 * ball.radius2_)


def test_ball_primal_and_dual_problems_by_cvxpy():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((25, 3))
    m = pd.EnclosingBall(kernel="rbf", gamma=0.3)
    P, D = m.primal(X), m.dual(X)
    assert "‖c‖² + r" in str(P) and "κ_i" in str(P)
    sp, sd = P.solve(backend="cvxpy"), D.solve(backend="cvxpy")
    assert abs(sp.objective_value - sd.objective_value) <= 1e-7
    fitted = m.fit(X)
    assert abs(fitted.radius2_ - sd.objective_value) <= 1e-7
    cvx = pd.EnclosingBall(kernel="rbf", gamma=0.3, backend="cvxpy").fit(X)
    assert abs(cvx.radius2_ - fitted.radius2_) <= 1e-8


def test_ball_of_points_on_a_circle():
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    X = np.c_[2 * np.cos(t), 2 * np.sin(t)] + [5.0, -1.0]
    ball = pd.EnclosingBall(kernel="linear").fit(X)
    assert ball.radius2_ == pytest.approx(4.0, rel=1e-10)
    centre = ball.alpha_ @ X
    assert np.allclose(centre, [5.0, -1.0], atol=1e-8)


def test_bound_on_csvc_and_l2svc():
    X, y = load_dataset("ripley")
    X, y = X[:120], y[:120]
    m = pd.CSVC(C=1.0, gamma=1.0).fit(X, y)
    B = m.bound()
    ball = pd.EnclosingBall(kernel=m.kernel_).fit(X)
    w2 = float(m.beta_ @ m.kernel_(X) @ m.beta_)
    assert B == pytest.approx(ball.radius2_ * w2, rel=1e-10)
    assert m.certificate_.extra["radius-margin bound"] == pytest.approx(B)
    l2 = pd.L2SVC(C=2.0, gamma=1.0).fit(X, y)
    B2 = radius_margin_bound(l2)
    Kt = l2.kernel_(X) + np.eye(len(y)) / 2.0
    val, _ = _cvxpy_ball(Kt)
    w2t = float(l2.beta_ @ l2.kernel_(X) @ l2.beta_ + l2.alpha_ @ l2.alpha_ / 2.0)
    assert B2 == pytest.approx(val * w2t, rel=1e-6)
    # hard margin on separable data: ||w||^2 = sum alpha and the LOO bound holds
    lo, hi = np.unique(y)
    Xs = np.r_[X[y == hi][:20] + 3.0, X[y == lo][:20] - 3.0]
    ys = np.r_[np.ones(20), -np.ones(20)]
    h = pd.HardMarginSVC(kernel="linear").fit(Xs, ys)
    assert h.bound() / len(ys) <= 1.0


def test_radius_margin_select():
    X, y = load_dataset("ripley")
    X, y = X[:100], y[:100]
    r = radius_margin_select(pd.L2SVC(), X, y, [0.5, 5.0], [0.5, 2.0])
    assert r["bounds"].shape == (2, 2)
    i, j = np.unravel_index(np.argmin(r["bounds"]), (2, 2))
    assert r["best_params"] == {"C": [0.5, 5.0][i], "gamma": [0.5, 2.0][j]}
    assert r["best_estimator"].C == r["best_params"]["C"]
    with pytest.raises(ValueError, match="C_grid"):
        radius_margin_select(pd.CSVC(), X, y, [-1.0], [1.0])


def test_bound_rejects_multiclass():
    X = np.random.default_rng(0).standard_normal((30, 2))
    y = np.repeat([0, 1, 2], 10)
    m = pd.CSVC().fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        radius_margin_bound(m)
