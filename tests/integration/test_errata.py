"""The errata of docs/errata.md, one test per row: on a small seeded problem solved by the
library, the corrected form holds (to round-off of the fit's tolerance) and the printed one
does not. A row of the page names its test; ``test_every_row_names_a_test_here`` keeps the two
lists equal."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd
from primaldual.datasets import AMINI_EXAMPLES, AMINI_X, AMINI_Y
from primaldual.kernels import make_kernel
from primaldual.methods.laplacian import graph_laplacian

PAGE = Path(__file__).resolve().parents[2] / "docs" / "errata.md"
# the fits below stop at tol 1e-10 or are closed-form: "holds" means below ATOL and
# "fails" means a residual at least WRONG, many orders of magnitude apart
ATOL, WRONG = 1e-6, 1e-3


def _overlapping(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two noisy classes in the plane: some points inside the margin, some misclassified, so
    that both free and bounded support vectors exist."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _sine(n: int = 30, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A noisy sine with an offset (so that sum_i y_i != 0)."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-3, 3, n))[:, None]
    return x, 1.0 + np.sin(x[:, 0]) + 0.1 * rng.standard_normal(n)


def _linear_Q(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (y[:, None] * y[None, :]) * (X @ X.T)


def _csvc_point(m, X, y):
    """w'w, y_i f_i and the optimal slacks of a fitted binary classifier."""
    K = m.kernel_(X, X)
    f = K @ m.beta_ + m.b_
    return float(m.beta_ @ K @ m.beta_), y * f, K


# ---------------------------------------------------------------- Zhang, section 8.1


def test_zhang_8_1_15_needs_alpha_nonnegative():
    """Without alpha >= 0 the dual (8.1.14)-(8.1.15) is unbounded above on Amini's six points:
    weak duality is lost. With it, the library's dual optimum equals the primal one."""
    X, y = AMINI_X, AMINI_Y
    Q = _linear_Q(X, y)
    # a direction in the null space of Q orthogonal to y: 1'a - a'Qa/2 grows linearly along it
    basis = np.linalg.svd(np.vstack([Q, y]))[2][np.linalg.matrix_rank(np.vstack([Q, y])):]
    d = basis.T @ basis @ np.ones(len(y))  # the projection of 1 on that null space
    assert np.linalg.norm(d) > 0.1 and np.abs(Q @ d).max() < 1e-12 and abs(y @ d) < 1e-12
    assert d.min() < 0            # the unbounded direction leaves alpha >= 0
    values = [t * d.sum() - 0.5 * t * t * d @ Q @ d for t in (1.0, 10.0, 100.0)]
    m = pd.HardMarginSVC(kernel="linear", tol=1e-10).fit(X, y)
    P = m.certificate_.primal_objective
    assert values[-1] > 100 * P and values[0] < values[1] < values[2]   # the printed dual
    assert abs(m.certificate_.dual_objective - P) < ATOL and m.alpha_.min() >= 0  # corrected


def test_zhang_8_1_19_22_no_derivative_in_C():
    """(8.1.19) drops the slack multipliers and (8.1.22) differentiates in the parameter C,
    giving sum xi_i = 0. At the C-SVC optimum sum xi_i > 0, the printed Lagrangian exceeds the
    primal value by C sum xi_i, and the corrected dL/dxi_i = C - alpha_i - mu_i = 0 holds with
    mu_i >= 0, mu_i xi_i = 0."""
    X, y = _overlapping()
    C = 1.0
    m = pd.CSVC(C=C, kernel="linear", tol=1e-10).fit(X, y)
    ww, yf, _ = _csvc_point(m, X, y)
    xi = np.maximum(0.0, 1.0 - yf)
    a = m.alpha_
    P = m.certificate_.primal_objective
    assert xi.sum() > 1.0                                         # (8.1.22) is false
    printed = 0.5 * ww - a @ yf + C * xi.sum() + a.sum()         # (8.1.19) as printed
    mu = C - a                                                    # dL/dxi_i = 0
    corrected = 0.5 * ww + C * xi.sum() - a @ (yf - 1 + xi) - mu @ xi
    assert abs(corrected - P) < ATOL and abs(printed - P - C * xi.sum()) < ATOL
    assert mu.min() >= -1e-12 and np.abs(mu * xi).max() < ATOL


def test_zhang_8_1_24_half():
    """The dual objective needs the 1/2 of (8.1.14): with it it equals the primal optimum."""
    X, y = _overlapping(seed=1)
    m = pd.CSVC(C=1.0, kernel="linear", tol=1e-10).fit(X, y)
    a, Q = m.alpha_, _linear_Q(X, y)
    P = m.certificate_.primal_objective
    assert abs(a.sum() - 0.5 * a @ Q @ a - P) < ATOL
    assert abs(a.sum() - a @ Q @ a - P) > WRONG


# ---------------------------------------------------------------- Zhang, section 8.4 (nu-SVC)


def _nusvc(nu: float = 0.4):
    X, y = _overlapping(seed=2)
    m = pd.NuSVC(nu=nu, kernel="rbf", gamma=0.5, tol=1e-10).fit(X, y)
    ww, yf, K = _csvc_point(m, X, y)
    return m, X, y, ww, yf, K


def test_zhang_8_4_24_one_over_N():
    """The nu-SVC primal weighs the slacks by 1/N (as its Lagrangian (8.4.26) does): that
    objective equals the dual optimum; the printed sum xi_i does not."""
    nu = 0.4
    m, X, y, ww, yf, _ = _nusvc(nu)
    xi = np.maximum(0.0, m.rho_ - yf)
    D = m.certificate_.dual_objective
    assert xi.sum() > 0.1
    assert abs(0.5 * ww - nu * m.rho_ + xi.mean() - D) < ATOL
    assert abs(0.5 * ww - nu * m.rho_ + xi.sum() - D) > WRONG


def test_zhang_8_4_25_rho_not_epsilon():
    """With the printed margin epsilon the constraints no longer involve rho, so the
    objective -nu rho is unbounded below; with rho the library's point is feasible and tight
    on the free support vectors."""
    m, X, y, ww, yf, _ = _nusvc()
    xi = np.maximum(0.0, m.rho_ - yf)
    assert np.all(yf >= m.rho_ - xi - 1e-12)
    assert np.abs(yf[m.free_support_] - m.rho_).max() < ATOL
    # (8.4.25) as printed: (w, b, xi) stay feasible for every rho, the objective falls with it
    printed = [0.5 * ww - 0.4 * r + xi.mean() for r in (m.rho_, 10 * m.rho_, 100 * m.rho_)]
    assert printed[0] > printed[1] > printed[2] and printed[2] < m.certificate_.dual_objective


def _r1_r2(Kb: np.ndarray, y: np.ndarray, S: np.ndarray) -> tuple[float, float]:
    return float(Kb[S & (y > 0)].mean()), float(-Kb[S & (y < 0)].mean())


def test_zhang_8_4_33_34_free_means_below_one_over_N():
    """(8.4.35)-(8.4.37) over the free SVs 0 < alpha_i < 1/N give the library's b and rho;
    over the printed 0 < alpha_i < 1 (every SV, since alpha_i <= 1/N) they do not."""
    m, X, y, _, _, K = _nusvc()
    a, N = m.alpha_, len(y)
    Kb = K @ m.beta_
    tol = 1e-8 / N
    free = (a > tol) & (a < 1.0 / N - tol)
    printed = (a > tol) & (a < 1.0)
    assert (printed & ~free).sum() > 0          # bounded SVs enter the printed sets
    r1, r2 = _r1_r2(Kb, y, free)
    assert abs(-(r1 - r2) / 2 - m.b_) < ATOL and abs((r1 + r2) / 2 - m.rho_) < ATOL
    r1, r2 = _r1_r2(Kb, y, printed)
    assert abs(-(r1 - r2) / 2 - m.b_) + abs((r1 + r2) / 2 - m.rho_) > WRONG


# ---------------------------------------------------------------- Zhang, section 8.3 (SVR)


def _svr(eps: float = 0.1):
    x, t = _sine()
    m = pd.EpsilonSVR(C=1.0, epsilon=eps, kernel="rbf", gamma=0.5, tol=1e-10).fit(x, t)
    K = m.kernel_(x, x)
    return m, t, K, K @ m.beta_ + m.b_


def test_zhang_8_3_22_24_alpha_i_star():
    """The last sum of (8.3.22) and (8.3.24) is sum_i y_i (alpha_i - alpha_i*): that dual
    value equals the primal optimum; with the printed alpha_j* (any fixed j) it does not."""
    eps = 0.1
    m, t, K, _ = _svr(eps)
    a, s = m.alpha_, m.alpha_star_
    b = a - s
    base = -0.5 * b @ K @ b - eps * (a + s).sum()
    P = m.certificate_.primal_objective
    assert abs(base + t @ (a - s) - P) < ATOL
    assert abs(t.sum()) > 1.0
    assert min(abs(base + t @ a - s[j] * t.sum() - P) for j in range(len(t))) > WRONG


def test_zhang_8_3_29_sign():
    """Complementarity for alpha_i*, the multiplier of f_i - y_i <= eps + xi_i*, is
    alpha_i* (eps + xi_i* + y_i - f_i) = 0; the printed (8.3.29) repeats (8.3.28)'s signs."""
    eps = 0.1
    m, t, K, f = _svr(eps)
    s = m.alpha_star_
    xs = np.maximum(0.0, f - t - eps)
    on = s > 1e-8
    assert on.sum() > 0
    assert np.abs(s * (eps + xs + t - f)).max() < ATOL                # corrected
    assert np.abs(s[on] * (eps + xs[on] - t[on] + f[on])).max() > WRONG  # printed


# ---------------------------------------------------------------- Zhang, section 8.2


def test_zhang_8_2_24_25_half():
    """(8.2.25) alpha = (K + gamma_A I)^-1 y (kernel ridge with C = 1/gamma_A) minimises
    ||y - K a||^2 + gamma_A a'Ka; the gradient of the printed (8.2.24), with 1/2 gamma_A, is
    not zero there."""
    x, t = _sine()
    gA = 0.1
    m = pd.KernelRidge(C=1.0 / gA, kernel="rbf", gamma=0.5).fit(x, t)
    K = m.kernel_(x, x)
    a = m.beta_
    assert np.abs(np.linalg.solve(K + gA * np.eye(len(t)), t) - a).max() < ATOL

    def grad(half: float) -> np.ndarray:
        return -2 * K @ (t - K @ a) + 2 * half * gA * K @ a

    assert np.abs(grad(1.0)).max() < ATOL and np.abs(grad(0.5)).max() > WRONG


def test_zhang_8_2_26_28_30_laprls_half():
    """The LapRLS solution (8.2.30), which the library's LapRLS returns, zeroes the gradient
    of (1/l)||y - JKa||^2 + gamma_A a'Ka + gamma_I/(u+l)^2 a'KLKa (Belkin et al.); the
    printed (8.2.26) (1/2 gamma_A) and (8.2.28) (1/2 on both terms) have other minimisers."""
    x, t = _sine()
    y = t.copy()
    y[20:] = np.nan                 # labelled first: the library keeps this order
    gA, gI = 0.05, 0.5
    m = pd.LapRLS(kernel="rbf", gamma=0.5, gamma_A=gA, gamma_I=gI).fit(x, y)
    K = m.kernel_(x, x)
    L = graph_laplacian(x, 6, "heat").toarray()
    n, l = len(t), 20
    u = n - l
    J = np.diag((np.arange(n) < l).astype(float))
    Jy = J @ np.nan_to_num(y)
    a = m.alpha_
    closed = np.linalg.solve(J @ K + gA * l * np.eye(n) + gI * l / (u + l) ** 2 * L @ K, Jy)
    assert np.abs(closed - a).max() < ATOL                          # (8.2.30)

    def grad(cA: float, cI: float) -> np.ndarray:
        return (-2 / l * K @ J @ (Jy - J @ K @ a) + 2 * cA * gA * K @ a
                + 2 * cI * gI / (u + l) ** 2 * K @ L @ K @ a)

    assert np.abs(grad(1.0, 1.0)).max() < ATOL                      # corrected
    assert np.abs(grad(0.5, 1.0)).max() > WRONG                     # (8.2.26)
    assert np.abs(grad(0.5, 0.5)).max() > WRONG                     # (8.2.28)


def test_zhang_8_2_50_J_is_l_by_l_plus_u():
    """LapSVM (8.2.50)-(8.2.52): J must be the l x (l+u) matrix [I_l 0]; the printed 1 x (l+u)
    row makes K J^T Y undefined. With [I_l 0], (8.2.52) a = P^-1 J^T Y beta is what LapSVC
    returns (P = 2 gamma_A I + 2 gamma_I/(u+l)^2 L K)."""
    X, y = _overlapping(n=30, seed=5)
    yl = y.copy()
    yl[20:] = np.nan
    gA, gI = 0.05, 0.5
    m = pd.LapSVC(kernel="rbf", gamma=0.5, gamma_A=gA, gamma_I=gI).fit(X, yl)
    K = m.kernel_(X, X)
    L = graph_laplacian(X, 6, "heat").toarray()
    n, l = len(y), 20
    Y = np.diag(y[:l])
    row = (np.arange(n) < l).astype(float)[None, :]     # the printed J
    with pytest.raises(ValueError):
        _ = K @ row.T @ Y
    J = np.eye(n)[:l]
    P = 2 * gA * np.eye(n) + 2 * gI / n ** 2 * L @ K
    a = np.linalg.solve(P, J.T @ Y @ m.dual_beta_)
    assert np.abs(a - m.alpha_).max() < ATOL


def test_zhang_8_3_34_35_alpha_star_signs():
    """(8.3.34)-(8.3.35) repeat the expression of (8.3.32)-(8.3.33); for alpha_i* it is
    eps + y_i - <w, x_i> - b: <= 0 where alpha_i* > 0 (the printed eps - y_i + <w, x_i> + b is
    2 eps + xi_i* > 0 there)."""
    eps = 0.1
    m, t, K, f = _svr(eps)
    on = m.alpha_star_ > 1e-8
    assert on.sum() > 0
    assert np.max(eps + t[on] - f[on]) < ATOL                  # corrected (8.3.35)
    assert np.min(eps - t[on] + f[on]) > 2 * eps - ATOL        # printed (8.3.35) fails


def test_zhang_8_3_36_bias_interval():
    """(8.3.36) uses -eps + y_i - <w, x_i> for the alpha* conditions too; they need
    +eps: max({r_i - eps : alpha_i < C} u {r_i + eps : alpha_i* > 0}) <= b <=
    min({r_i - eps : alpha_i > 0} u {r_i + eps : alpha_i* < C}), r_i = y_i - <w, x_i>. The
    printed upper bound lies below the library's b."""
    eps, C, tol = 0.1, 1.0, 1e-8
    m, t, K, _ = _svr(eps)
    a, s = m.alpha_, m.alpha_star_
    r = t - K @ m.beta_
    lower = max(np.r_[r[a < C - tol] - eps, r[s > tol] + eps])
    upper = min(np.r_[r[a > tol] - eps, r[s < C - tol] + eps])
    assert lower - ATOL <= m.b_ <= upper + ATOL
    printed_upper = min(r[(a > tol) | (s < C - tol)] - eps)
    assert printed_upper < m.b_ - WRONG


def test_zhang_nu_svr_complementarity_not_stationarity():
    """After (8.3.45) the text sets dL/d eta_i* = 0 => eps = 0 and dL/d beta = 0 => xi_i* = 0,
    and concludes (8.3.46) y_i = w'x_i + b. Multipliers of inequalities give complementarity
    (eta_i* xi_i* = 0, beta eps = 0), not zero derivatives: at the nu-SVR optimum eps > 0, some
    xi_i* > 0 and the fit does not interpolate; beta = C nu - 1'(alpha + alpha*) is 0."""
    x, t = _sine()
    C, nu = 1.0, 0.3
    m = pd.NuSVR(C=C, nu=nu, kernel="rbf", gamma=0.5, tol=1e-10).fit(x, t)
    f = m.kernel_(x, x) @ m.beta_ + m.b_
    eps = m.epsilon_
    xi_star = np.maximum(0.0, t - f - eps)      # the text's xi* belongs to y - f <= eps + xi*
    assert eps > WRONG and xi_star.max() > WRONG and np.abs(t - f).max() > WRONG
    # the library's C is LIBSVM's: the text's C is C N (docs/formulations.md, section 6)
    beta = C * len(t) * nu - (m.alpha_ + m.alpha_star_).sum()
    assert abs(beta * eps) < ATOL
    # the text's eta_i* = C/N - alpha_i*: its alpha* is the library's alpha_, its C/N our C
    mu_star = C - m.alpha_
    assert np.abs(mu_star * xi_star).max() < ATOL


def test_zhang_8_4_52_ZtZ():
    """PSVM (8.4.52): with Z = [y_1 x_1, ..., y_N x_N] (n x N, (8.4.54)) the system is
    (I/C + Z^T Z + y y^T) alpha = 1 (N x N); the printed Z Z^T is n x n. Its solution and
    (8.4.53) b = y'alpha are ProximalSVC's."""
    X, y = _overlapping(seed=6)
    C = 2.0
    m = pd.ProximalSVC(C=C, kernel="linear").fit(X, y)
    Z = (y[:, None] * X).T
    N = len(y)
    assert (Z @ Z.T).shape != (N, N)
    a = np.linalg.solve(np.eye(N) / C + Z.T @ Z + np.outer(y, y), np.ones(N))
    assert np.abs(a - m.alpha_).max() < ATOL and abs(y @ a - m.b_) < ATOL


# ---------------------------------------------------------------- Suykens, Chapter 3


def _cg(A: np.ndarray, B: np.ndarray, iters: int) -> np.ndarray:
    """Hestenes-Stiefel CG exactly as Suykens prints it (section 3.4.1), stopped after
    ``iters`` steps."""
    x, r = np.zeros_like(B), B.copy()
    p, rr_old = r.copy(), 0.0
    for i in range(1, iters + 1):
        rr = float(r @ r)
        if i > 1:
            p = r + rr / rr_old * p
        Ap = A @ p
        lam = rr / (p @ Ap)
        x = x + lam * p
        r, rr_old = r - lam * Ap, rr
    return x


def test_suykens_3_27_iteration_count():
    """(3.27) divides log(2/eps) by log((sqrt(k) - 1)/(sqrt(k) + 1)) < 0, so it asks for a
    negative number of steps; with the ratio inverted, that many CG steps on H = Omega + I/gamma
    reach the requested A-norm accuracy, and the CG route's (3.25) recovery gives LSSVC's
    (b_, alpha_)."""
    X, y = _overlapping(n=80, seed=4)
    C, eps = 1.0, 1e-6
    m = pd.LSSVC(C=C, kernel="rbf", gamma=2.0).fit(X, y)
    H = (y[:, None] * y[None, :]) * m.kernel_(X, X) + np.eye(len(y)) / C
    kappa = np.linalg.cond(H)
    root = np.sqrt(kappa)
    printed = np.log(2 / eps) / np.log((root - 1) / (root + 1))
    steps = int(np.ceil(np.log(2 / eps) / np.log((root + 1) / (root - 1))))
    assert printed < 0 < steps < len(y)
    exact = np.linalg.solve(H, y)
    eta = _cg(H, y, steps)
    err = eta - exact
    assert np.sqrt(err @ H @ err) <= eps * np.sqrt(exact @ H @ exact)
    nu = np.linalg.solve(H, np.ones(len(y)))
    b = eta @ np.ones(len(y)) / (y @ eta)
    assert abs(b - m.b_) < 1e-4 and np.abs(nu - eta * b - m.alpha_).max() < 1e-4


def test_suykens_3_47_sign():
    """(3.47): the derivative of gamma sum L(y_k - f(x_k)) in c_i carries -phi_i(x_k). With the
    linear kernel (phi_i(x) = x_i, lambda_i = 1) and L(e) = e^2/2, the coefficients (3.48)
    c = sum_k a_k x_k of the kernel-ridge solution (3.50) zero the corrected condition
    -gamma sum_k e_k x_k + c and not the printed +gamma sum_k e_k x_k + c."""
    x, t = _sine()
    X = np.c_[x, x ** 2]
    gam = 4.0
    m = pd.KernelRidge(C=gam, kernel="linear").fit(X, t)
    a = m.beta_
    c = X.T @ a
    e = t - X @ c
    assert np.abs(-gam * X.T @ e + c).max() < ATOL
    assert np.abs(gam * X.T @ e + c).max() > WRONG


def test_suykens_3_53_bias_sign():
    """(3.53) alpha_k = gamma L'(y_k - sum_l alpha_l K(x_l, x_k) + b): the error is
    e_k = y_k - f(x_k), so the bias enters with a minus. For L(e) = e^2/2 the LSSVR solution
    satisfies alpha = gamma (y - K alpha - b) and not alpha = gamma (y - K alpha + b)."""
    x, t = _sine()
    gam = 5.0
    m = pd.LSSVR(C=gam, kernel="rbf", gamma=0.5).fit(x, t)
    K = m.kernel_(x, x)
    a = m.alpha_
    assert abs(m.b_) > 0.1
    assert np.abs(a - gam * (t - K @ a - m.b_)).max() < ATOL
    assert np.abs(a - gam * (t - K @ a + m.b_)).max() > WRONG


# ---------------------------------------------------------------- the soft-margin notes


def test_notes_9_52_square():
    """(9.54) beta = (lambda I + K)^-1 y (KernelRidge with C = 1/lambda) zeroes the gradient
    of (1/N)||y - K beta||^2 + (lambda/N) beta'K beta, not that of the printed (9.52) with the
    norm unsquared."""
    x, t = _sine()
    lam = 0.3
    m = pd.KernelRidge(C=1.0 / lam, kernel="rbf", gamma=0.5).fit(x, t)
    K = m.kernel_(x, x)
    beta = m.beta_
    r = t - K @ beta
    # N times each gradient (the common 1/N moves no zero)
    squared = -2 * K @ r + 2 * lam * K @ beta
    printed = -K @ r / np.linalg.norm(r) + 2 * lam * K @ beta
    assert np.abs(squared).max() < ATOL and np.abs(printed).max() > WRONG


# ---------------------------------------------------------------- Amini


def test_amini_argmax_not_argmin():
    """The QP form of the dual is an argmax: the library's alpha gives 1'a - a'Sa/2 = P > 0,
    more than alpha = 0 (feasible, value 0), so it is no argmin; the argmin does not exist
    (the objective falls without bound along a feasible ray)."""
    X, y = AMINI_X, AMINI_Y
    m = pd.HardMarginSVC(kernel="linear", tol=1e-10).fit(X, y)
    S = _linear_Q(X, y)
    a = m.alpha_
    value = a.sum() - 0.5 * a @ S @ a
    assert abs(value - m.certificate_.primal_objective) < ATOL and value > 0.1
    ray = np.array([1.0, 0, 0, 1.0, 0, 0])           # y'ray = 0, ray >= 0
    assert y @ ray == 0 and (ray @ S @ ray) > 0
    assert 100 * ray.sum() - 0.5 * 100 ** 2 * ray @ S @ ray < -1e3


def test_amini_S_transpose():
    """S = Xh Xh^T with Xh = diag(y) X (N x D): Xh Xh is not even defined for N != D."""
    X, y = AMINI_X, AMINI_Y
    Xh = np.diag(y) @ X
    with pytest.raises(ValueError):
        _ = Xh @ Xh
    m = pd.HardMarginSVC(kernel="linear", tol=1e-10).fit(X, y)
    Q = (y[:, None] * y[None, :]) * m.kernel_(X, X)
    assert np.abs(Xh @ Xh.T - Q).max() < 1e-12


def test_amini_y_has_six_entries():
    """The hard-margin example prints y (and alpha) with 7 entries for 6 points; with the six
    labels (+1, +1, +1, -1, -1, -1) the fit has the printed support {1, 2, 4} and the printed
    numbers lie within what the 2-decimal rounding of X moves (X perturbed by +-0.005)."""
    y7 = np.array([1.0, 1, 1, -1, -1, -1, -1])
    with pytest.raises(ValueError):
        pd.HardMarginSVC(kernel="linear").fit(AMINI_X, y7)
    printed_alpha = np.array([0.1105, 0.3898, 0.0, 0.5003, 0.0, 0.0])
    printed_w0 = -2.4943
    rng = np.random.default_rng(1)
    alphas, w0s = [], []
    for k in range(300):
        Xp = AMINI_X + (0.0 if k == 0 else rng.uniform(-0.005, 0.005, AMINI_X.shape))
        m = pd.HardMarginSVC(kernel="linear", tol=1e-10).fit(Xp, AMINI_Y)
        alphas.append(m.alpha_)
        w0s.append(m.b_)
    A = np.array(alphas)
    assert set(np.flatnonzero(A[0] > 1e-6)) == {0, 1, 3}
    assert np.all(A.min(0) - 1e-9 <= printed_alpha) and np.all(printed_alpha <= A.max(0) + 1e-9)
    assert min(w0s) <= printed_w0 <= max(w0s)


def test_amini_kernel_slides_use_the_lifting():
    """The kernel examples' kernel is the slide "Linear Separability By Increasing Dimensions":
    ``k(x, z) = x1 z1 + x2 z2 + (x1² + x2²)(z1² + z2²)``, the linear kernel of ``phi(x) = (x,
    ||x||²)``; with two support vectors (hard kernel slide) ``alpha = 2 / ||phi(x+) - phi(x-)||²``
    (``alpha_+ = alpha_-`` from ``y^T alpha = 0``, both on the margin)."""
    X = AMINI_EXAMPLES["amini_kernel"].X
    phi = np.column_stack([X, (X ** 2).sum(1)])
    np.testing.assert_allclose(make_kernel("paraboloid")(X), phi @ phi.T, rtol=1e-14)
    y = AMINI_EXAMPLES["amini_kernel"].y
    m = pd.HardMarginSVC(kernel="paraboloid", tol=1e-10).fit(X, y, backend="qpdirect")
    sv = np.flatnonzero(m.alpha_ > 1e-8)
    assert list(sv) == [2, 5]                                 # the slide's support {3, 6}
    np.testing.assert_allclose(m.alpha_[sv], 2 / np.sum((phi[2] - phi[5]) ** 2), rtol=1e-6)
    # the other kernels the lecture shows (its Gaussian of unit bandwidth; a quadratic) do not
    # give the slide's two support vectors
    for other in (pd.HardMarginSVC(kernel="rbf", gamma=0.5),
                  pd.HardMarginSVC(kernel="poly", degree=2, gamma=1.0, coef0=1.0)):
        a = other.set_params(tol=1e-10).fit(X, y, backend="qpdirect").alpha_
        assert np.count_nonzero(a > 1e-8) > 2


def test_amini_kernel_fourth_label_is_plus_one():
    """As transcribed, both kernel slides give y = (1, 1, 1, -1, -1, -1, -1, -1) and the soft one
    an alpha of 9 entries for 8 points.  The fourth point is +1: it lies inside the circle with
    the three positive points (hard slide), and the soft slide's alpha without its duplicated
    10.0000 is balanced, ``y^T alpha = 0`` to its rounding, only with ``y_4 = +1``."""
    printed9 = [0.0, 2.7729, 3.8414, 10.0, 0.0, 10.0, 10.0, 6.4263, 0.1879]
    alpha = np.array(printed9[:6] + printed9[7:])            # one of the three 10s repeated
    np.testing.assert_array_equal(alpha, AMINI_EXAMPLES["amini_kernel_soft"].alpha)
    transcribed = np.array([1.0, 1, 1, -1, -1, -1, -1, -1])
    assert abs(transcribed @ alpha) > 19                      # 2 alpha_4 off balance
    assert abs(AMINI_EXAMPLES["amini_kernel_soft"].y @ alpha) <= 1e-4 + 1e-12
    r = np.linalg.norm(AMINI_EXAMPLES["amini_kernel"].X, axis=1)
    assert r[:4].max() < r[4:].min()                          # the +1 class is the inner one



# ---------------------------------------------------------------- Fasshauer


def test_fasshauer_low_rank_transpose():
    """With K = Phi Lambda Phi^T (Phi N x M), K ~ (Lambda^1/2 Phi^T)^T (Lambda^1/2 Phi^T), the
    form his constraint eta = Lambda^1/2 Phi^T D_y alpha uses; the printed
    (Lambda^1/2 Phi)^T (Lambda^1/2 Phi) is undefined for M != N. And 1/2 eta'eta is the
    C-SVC quadratic term at the library's alpha, up to the dropped eigenvalues."""
    X, y = _overlapping(seed=3)
    m = pd.CSVC(C=1.0, kernel="rbf", gamma=0.02, tol=1e-10).fit(X, y)
    K = m.kernel_(X, X)
    lam, Phi = np.linalg.eigh(K)
    M = 8
    dropped = lam[-M - 1]                         # the largest eigenvalue left out
    lam, Phi = lam[-M:], Phi[:, -M:]              # the M leading eigenpairs (N x M)
    half = np.diag(np.sqrt(lam))
    with pytest.raises(ValueError):
        _ = half @ Phi
    V = half @ Phi.T                               # M x N
    assert np.abs(V.T @ V - Phi @ np.diag(lam) @ Phi.T).max() < 1e-12
    assert np.linalg.norm(V.T @ V - K, 2) <= dropped * (1 + 1e-9)
    a = m.alpha_
    eta = V @ (y * a)
    Q = (y[:, None] * y[None, :]) * K
    assert abs(0.5 * eta @ eta - 0.5 * a @ Q @ a) <= 0.5 * dropped * a @ a * (1 + 1e-9)


def test_fasshauer_svr_bias_signs():
    """In Fasshauer's dual (w = sum_i (alpha_i* - alpha_i) phi(x_i), so alpha_i belongs to
    s(x_i) - y_i <= eps + xi_i) a free alpha_i gives b = y_i - x_i'w + eps and a free alpha_i*
    gives b = y_i - x_i'w - eps; the slide has the two signs swapped."""
    eps = 0.1
    m, t, K, _ = _svr(eps)
    # his alpha is the library's alpha_star_ (the multiplier of f - y <= eps + xi*), and back
    a_f, s_f = m.alpha_star_, m.alpha_
    xw = K @ (s_f - a_f)                           # x_i'w in feature space
    C, tol = 1.0, 1e-6
    free_a = (a_f > tol) & (a_f < C - tol)
    free_s = (s_f > tol) & (s_f < C - tol)
    assert free_a.sum() > 0 and free_s.sum() > 0
    r = t - xw
    assert np.abs(r[free_a] + eps - m.b_).max() < ATOL
    assert np.abs(r[free_s] - eps - m.b_).max() < ATOL
    assert np.abs(r[free_a] - eps - m.b_).min() > WRONG   # the printed signs
    assert np.abs(r[free_s] + eps - m.b_).min() > WRONG


def test_every_row_names_a_test_here() -> None:
    """The page's rows and this file's tests are the same list."""
    text = PAGE.read_text()
    named = set(re.findall(r"`(test_[A-Za-z0-9_]+)`", text))
    here = {n for n in globals()
            if n.startswith("test_") and n != "test_every_row_names_a_test_here"}
    assert named == here, (named ^ here)
