"""Tax & Duin's SVDD with negative examples written as printed on placeholders (``y_i
‖φ(x_i) - a‖² <= y_i R² + ξ_i``: targets inside the ball, negatives beyond ``R² - ξ_l``)
fits as a novelty ``Variant`` on ``y`` in ``{+1, -1}`` and agrees with an independent CVXPY
model of Tax & Duin's dual (``max Σ_i y_i k_ii α_i - ‖Σ_i y_i α_i φ(x_i)‖²`` s.t. ``Σ_i y_i
α_i = 1``, ``0 <= α_i <= C``): the dual value, the multipliers, the centre, ``R²`` and the
decision ``R² - ‖φ(x) - a‖²`` at new points."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import primaldual as pd
from primaldual.kernels import make_kernel
from primaldual.model import FeatureVariable, N, Param, Problem, Variable, X, norm2, phi, vsum, x, y


def printed():
    C = Param("C")
    a, R2, xi = FeatureVariable("a"), Variable("R2"), Variable("xi", N)
    P = Problem(R2 + C * vsum(xi), [(y * norm2(phi(X) - a) <= y * R2 + xi).named("alpha"),
                                    (xi >= 0).named("mu")], "min", "SVDD with negatives primal")
    return P, a, R2


def _data(seed):
    rng = np.random.default_rng(seed)
    Xt = rng.standard_normal((40, 2))
    Xn = 0.5 * rng.standard_normal((12, 2)) + np.array([1.8, 0.0])
    return np.vstack([Xt, Xn]), np.r_[np.ones(40), -np.ones(12)]


def _reference(K, yv, C):
    """Tax & Duin's dual, and the primal in ``(a, s)`` with ``a = Lᵀβ``-coordinates ``u``
    (``K = L Lᵀ``): ``min s + ‖u‖² + C Σ ξ`` s.t. ``y_i (k_ii - 2 (L u)_i - s) <= ξ_i``,
    ``ξ >= 0``; both in CVXPY (Clarabel at 1e-10). Returns the dual value, α and
    ``R² = s + ‖u‖²``."""
    w, V = np.linalg.eigh(K)
    L = V * np.sqrt(np.clip(w, 0, None))
    tol = dict(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    al = cp.Variable(len(yv))
    prob = cp.Problem(cp.Maximize((yv * np.diag(K)) @ al
                                  - cp.sum_squares(L.T @ cp.multiply(yv, al))),
                      [yv @ al == 1, al >= 0, al <= C])
    prob.solve(**tol)
    u, s, xi = cp.Variable(L.shape[1]), cp.Variable(), cp.Variable(len(yv))
    prim = cp.Problem(cp.Minimize(s + cp.sum_squares(u) + C * cp.sum(xi)),
                      [cp.multiply(yv, np.diag(K) - 2 * L @ u - s) <= xi, xi >= 0])
    prim.solve(**tol)
    assert prob.status == prim.status == "optimal"
    assert prim.value == pytest.approx(prob.value, rel=1e-8)
    return float(prob.value), np.asarray(al.value), float(s.value + np.sum(u.value ** 2))


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
# seed 2 leaves the linear kernel no free support vector (0 < α_i < C): there s, hence R², is
# not unique (an interval of optimal primal points), so the seeds are those that fix it
@pytest.mark.parametrize("seed", [0, 1, 3])
def test_svdd_with_negatives_as_printed_fits_and_matches_cvxpy(kernel, seed):
    Xd, yd = _data(seed)
    P, a, R2 = printed()
    C = 0.1
    # RBF: k(x, x) = 1, so R² - ‖φ(x) - a‖² is an expansion plus a constant; on the linear
    # and polynomial kernels k(x, x) varies with x: the decision's diag_coef_ = -1 term
    dec = R2 - norm2(phi(x) - a)
    m = pd.Variant(P, decision=dec, task="novelty", kernel=kernel, gamma=0.5, C=C,
                   coef0=1.0, degree=2, tol=1e-9).fit(Xd, yd)
    assert (m.diag_coef_ is None) == (kernel == "rbf")
    k = make_kernel(kernel, 0.5, 2, 1.0, Xd)
    K = np.asarray(k(Xd), dtype=float)
    ref, al, r2 = _reference(K, yd, C)
    assert np.any((al > 1e-6) & (al < C - 1e-6))      # R² is unique
    cert = m.certificate_
    assert cert.dual_objective == pytest.approx(ref, rel=1e-7, abs=1e-7)
    assert cert.primal_objective == pytest.approx(ref, rel=1e-7, abs=1e-7)
    alpha = np.asarray(m.solution_.values["alpha"], dtype=float)
    np.testing.assert_allclose(alpha, al, atol=1e-6)
    beta = yd * al                                   # a = Σ_i y_i α_i φ(x_i)
    Xq = np.random.default_rng(10 + seed).standard_normal((30, 2))
    Kq = np.asarray(k(Xq, Xd), dtype=float)
    kq = np.array([float(k(Xq[i:i + 1])[0, 0]) for i in range(len(Xq))])
    dist = kq - 2 * Kq @ beta + beta @ K @ beta
    f = m.decision_function(Xq)
    np.testing.assert_allclose(f, r2 - dist, atol=1e-6)
    assert np.array_equal(m.predict(Xq), np.where(r2 - dist >= 0, 1, -1))
