"""docs/texts.md maps each source text's symbols to the library's; one test per mapping, each
solving a small seeded problem with the library and checking the text's own formula with the
text's symbol replaced by the library's. ``test_every_mapping_names_a_test_here`` keeps the
page's list and this file's equal."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import primaldual as pd
from primaldual.datasets import AMINI_X, AMINI_Y
from primaldual.kernels import make_kernel

PAGE = Path(__file__).resolve().parents[2] / "docs" / "texts.md"
ATOL = 1e-6


def _classes(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    return X, np.where(X[:, 0] + 0.7 * rng.standard_normal(n) > 0, 1.0, -1.0)


def _sine(n: int = 30, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-3, 3, n))[:, None]
    return x, 1.0 + np.sin(x[:, 0]) + 0.1 * rng.standard_normal(n)


def _sigmoid(t: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-t))


# ---------------------------------------------------------------- the soft-margin notes


def test_notes_klr_lambda_is_one_over_2C():
    """(9.50) min (1/N) sum log(1 + exp(-y_n f_n)) + (lambda/N) beta'K beta: the library's
    KernelLogisticRegression(C) zeroes its gradient in beta at lambda = 1/(2C) (the notes have
    no bias; the library's b is added to f_n), and not at lambda = 1/C."""
    X, y = _classes()
    C = 2.0
    m = pd.KernelLogisticRegression(C=C, kernel="rbf", gamma=0.5).fit(X, y)
    K = m.kernel_(X, X)
    f = K @ m.beta_ + m.b_
    N = len(y)

    def grad(lam: float) -> np.ndarray:
        return K @ (-y * _sigmoid(-y * f)) / N + 2 * lam / N * K @ m.beta_

    assert np.abs(grad(1 / (2 * C))).max() < ATOL
    assert np.abs(grad(1 / C)).max() > 1e-3


def test_notes_kernel_ridge_lambda_is_one_over_C():
    """(9.54) beta = (lambda I + K)^-1 y is KernelRidge(C = 1/lambda)."""
    x, t = _sine()
    lam = 0.3
    m = pd.KernelRidge(C=1 / lam, kernel="rbf", gamma=0.5).fit(x, t)
    K = m.kernel_(x, x)
    assert np.abs(np.linalg.solve(lam * np.eye(len(t)) + K, t) - m.beta_).max() < ATOL


def test_notes_svr_alpha_less_greater():
    """(9.59)-(9.61): alpha^< belongs to f_n - y_n >= -eps - xi^< (the library's alpha_,
    y - f <= eps + xi) and alpha^> to f_n - y_n <= eps + xi^> (alpha_star_); then (9.60)
    w = sum (alpha^< - alpha^>) x_n is the library's beta, and (9.62)-(9.63) hold."""
    x, t = _sine()
    eps = 0.1
    m = pd.EpsilonSVR(C=1.0, epsilon=eps, kernel="linear", tol=1e-10).fit(x, t)
    lt, gt = m.alpha_, m.alpha_star_
    assert np.abs((lt - gt) - m.beta_).max() < 1e-12
    f = x[:, 0] * float((lt - gt) @ x[:, 0]) + m.b_
    xi_lt, xi_gt = np.maximum(0, t - f - eps), np.maximum(0, f - t - eps)
    assert np.abs(lt * (f - t + eps + xi_lt)).max() < ATOL
    assert np.abs(gt * (f - t - eps - xi_gt)).max() < ATOL


# ---------------------------------------------------------------- Zhang


def test_zhang_svr_Q_is_K():
    """In (8.3.24) Q = [K(x_i, x_j)] (no labels): -1/2 beta'K beta - eps 1'(a + a*) +
    y'(a - a*) at the library's multipliers is the dual optimum."""
    x, t = _sine()
    eps = 0.1
    m = pd.EpsilonSVR(C=1.0, epsilon=eps, kernel="rbf", gamma=0.5, tol=1e-10).fit(x, t)
    K = m.kernel_(x, x)
    b = m.beta_
    D = -0.5 * b @ K @ b - eps * (m.alpha_ + m.alpha_star_).sum() + t @ b
    assert abs(D - m.certificate_.dual_objective) < ATOL


def test_zhang_nusvc_beta_is_mu():
    """(8.4.26)-(8.4.28): Zhang's beta_i, the multiplier of xi_i >= 0, is the library's
    mu_i = 1/N - alpha_i: nonnegative, and zero wherever the slack is positive."""
    X, y = _classes(seed=2)
    m = pd.NuSVC(nu=0.4, kernel="rbf", gamma=0.5, tol=1e-10).fit(X, y)
    K = m.kernel_(X, X)
    xi = np.maximum(0.0, m.rho_ - y * (K @ m.beta_ + m.b_))
    mu = 1.0 / len(y) - m.alpha_
    assert (xi > 1e-6).sum() > 0 and mu.min() >= -1e-12
    assert np.abs(mu * xi).max() < ATOL


def test_zhang_lssvm_C_is_C():
    """(8.4.38) 1/2||w||^2 + C/2 sum e_k^2 is LSSVC(C): the library's point has
    alpha_k = C e_k with e_k = 1 - y_k f_k."""
    X, y = _classes(seed=1)
    C = 3.0
    m = pd.LSSVC(C=C, kernel="rbf", gamma=0.5).fit(X, y)
    K = m.kernel_(X, X)
    e = 1 - y * (K @ m.beta_ + m.b_)
    assert np.abs(m.alpha_ - C * e).max() < ATOL


# ---------------------------------------------------------------- Suykens


def test_suykens_omega_is_Q_and_gamma_is_C():
    """Classifier: Omega_kl = y_k y_l K(x_k, x_l) (3.6) is the library's Q, gamma is C, and
    (3.5) [[0, y'], [y, Omega + I/gamma]] [b; alpha] = [0; 1] gives LSSVC's (b_, alpha_)."""
    X, y = _classes(seed=2)
    C = 2.0
    m = pd.LSSVC(C=C, kernel="rbf", gamma=0.5).fit(X, y)
    Omega = (y[:, None] * y[None, :]) * m.kernel_(X, X)
    N = len(y)
    A = np.block([[np.zeros((1, 1)), y[None, :]], [y[:, None], Omega + np.eye(N) / C]])
    sol = np.linalg.solve(A, np.r_[0.0, np.ones(N)])
    assert abs(sol[0] - m.b_) < ATOL and np.abs(sol[1:] - m.alpha_).max() < ATOL


def test_suykens_regression_omega_is_K():
    """Regression: Omega_kl = K(x_k, x_l) (3.33) and (3.32)
    [[0, 1'], [1, Omega + I/gamma]] [b; alpha] = [0; y] give LSSVR's (b_, alpha_)."""
    x, t = _sine()
    C = 5.0
    m = pd.LSSVR(C=C, kernel="rbf", gamma=0.5).fit(x, t)
    Omega = m.kernel_(x, x)
    N = len(t)
    one = np.ones(N)
    A = np.block([[np.zeros((1, 1)), one[None, :]], [one[:, None], Omega + np.eye(N) / C]])
    sol = np.linalg.solve(A, np.r_[0.0, t])
    assert abs(sol[0] - m.b_) < ATOL and np.abs(sol[1:] - m.alpha_).max() < ATOL


# ---------------------------------------------------------------- Amini


def test_amini_w0_and_S():
    """Amini's w0 is the library's b (his average over the support vectors of
    y_i - sum_j alpha_j y_j <x_j, x_i> gives b_), S = X^ X^T is Q, and his alpha is alpha_."""
    X, y = AMINI_X, AMINI_Y
    m = pd.HardMarginSVC(kernel="linear", tol=1e-10).fit(X, y)
    a = m.alpha_
    S_set = np.flatnonzero(a > 1e-8)
    w0 = np.mean([y[i] - sum(a[j] * y[j] * X[j] @ X[i] for j in S_set) for i in S_set])
    assert abs(w0 - m.b_) < ATOL
    Xh = np.diag(y) @ X
    assert abs(a.sum() - 0.5 * a @ (Xh @ Xh.T) @ a - m.certificate_.dual_objective) < ATOL


# ---------------------------------------------------------------- Fasshauer


def test_fasshauer_epsilon_is_sqrt_gamma():
    """Shape parameter epsilon: gamma = epsilon^2. With it the slides' statements hold: 15
    evenly spaced centres on [-1, 1] and 50 random points, K^T K is well conditioned for
    epsilon = 8 and 'severely ill-conditioned' for the 'flat' epsilon = 0.01."""
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-1, 1, 50))[:, None]
    z = np.linspace(-1, 1, 15)[:, None]
    for eps, lo, hi in ((8.0, 1.0, 1e4), (0.01, 1e15, np.inf)):
        K = make_kernel("rbf", gamma=eps ** 2)(x, z)
        assert np.allclose(K, np.exp(-(eps * (x - z.T)) ** 2))
        assert lo < np.linalg.cond(K.T @ K) < hi


def test_fasshauer_polynomial_and_sigmoid():
    """(1 + x'z)^beta is kernel='poly', degree=beta, gamma=1, coef0=1; tanh(1 + eps x'z) is
    kernel='sigmoid', gamma=eps, coef0=1."""
    X, _ = _classes(n=10)
    G = X @ X.T
    assert np.allclose(make_kernel("poly", gamma=1.0, degree=3, coef0=1.0)(X, X), (1 + G) ** 3)
    assert np.allclose(make_kernel("sigmoid", gamma=0.3, coef0=1.0)(X, X), np.tanh(1 + 0.3 * G))


def test_fasshauer_svr_mu_and_swapped_alphas():
    """His SVR objective (1/N) sum max(|y_i - s(x_i)| - eps, 0) + mu/2 w'w is mu times the
    library's primal with C = 1/(N mu) at every (w, b), and his (alpha, alpha*) are the
    library's (alpha_star_, alpha_): his w = sum (alpha_i* - alpha_i) x_i is beta_ @ x."""
    x, t = _sine()
    N, mu, eps = len(t), 0.05, 0.1
    m = pd.EpsilonSVR(C=1 / (N * mu), epsilon=eps, kernel="linear", tol=1e-10).fit(x, t)
    rng = np.random.default_rng(1)
    for w, b in [(float(m.beta_ @ x[:, 0]), m.b_), *rng.standard_normal((3, 2))]:
        loss = np.maximum(np.abs(t - (w * x[:, 0] + b)) - eps, 0)
        his = loss.mean() + mu / 2 * w * w
        ours = 0.5 * w * w + m.C * loss.sum()
        assert abs(his - mu * ours) < 1e-12
    his_alpha, his_alpha_star = m.alpha_star_, m.alpha_
    assert abs((his_alpha_star - his_alpha) @ x[:, 0] - m.beta_ @ x[:, 0]) < 1e-12
    assert abs(mu * m.certificate_.primal_objective
               - (np.maximum(np.abs(t - m.predict(x)) - eps, 0).mean()
                  + mu / 2 * float(m.beta_ @ x[:, 0]) ** 2)) < ATOL


def test_every_mapping_names_a_test_here() -> None:
    """Every test the page names exists (here, or in test_errata.py where the row says
    Errata), and every test here is named on the page."""
    named = set(re.findall(r"`(test_[A-Za-z0-9_]+)`", PAGE.read_text()))
    here = {n for n in globals()
            if n.startswith("test_") and n != "test_every_mapping_names_a_test_here"}
    errata = set(re.findall(r"^def (test_\w+)", (Path(__file__).parent / "test_errata.py")
                            .read_text(), flags=re.M))
    assert here <= named and named <= here | errata, (here - named, named - here - errata)
