"""SMO backend against independent references: CVXPY on the same dual, scikit-learn (LIBSVM)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.svm import SVC, SVR, NuSVC, NuSVR

from primaldual.backends.smo import (
    ConvergenceWarning,
    smo_csvc,
    smo_epsilon_svr,
    smo_hard_margin,
    smo_l2svc,
    smo_nusvc,
    smo_nusvr,
    smo_solve,
)
from primaldual.kernels import RBF, Linear, Polynomial, Precomputed

SEEDS = [0, 1, 2]
TOL = 1e-5


def _clf(seed, n=80, d=5):
    X, y = make_classification(n, d, n_informative=3, n_redundant=0, flip_y=0.05,
                               random_state=seed)
    return X, 2.0 * y - 1.0


def _reg(seed, n=70, d=4):
    X, y = make_regression(n, d, noise=5.0, random_state=seed)
    return X, y / np.std(y)


def _chol(K):
    return np.linalg.cholesky(K + 1e-9 * np.eye(len(K)))


def _solve_cvx(prob):
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == cp.OPTIMAL
    return prob.value


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _dec(K_test_train, beta, b):
    return K_test_train @ beta + b


# ---------------------------------------------------------------- C-SVC
@pytest.mark.parametrize("seed", SEEDS)
def test_csvc_matches_cvxpy_and_libsvm(seed):
    X, y = _clf(seed)
    rng = np.random.default_rng(seed)
    C, gamma = float(rng.uniform(0.5, 5)), float(rng.uniform(0.05, 0.5))
    k = RBF(gamma=gamma)
    K = k(X, X)
    r = smo_csvc(X, y, k, C, tol=TOL)
    assert r.status == "optimal" and r.max_violation < TOL
    # CVXPY on the same dual (min form)
    a = cp.Variable(len(y))
    L = _chol(K)
    obj = _solve_cvx(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ cp.multiply(y, a))
                                            - cp.sum(a)), [y @ a == 0, a >= 0, a <= C]))
    assert _rel(r.objective, obj) < 1e-5
    # objective and gradient are consistent with the returned alpha
    Qm = np.outer(y, y) * K
    assert np.allclose(r.grad, Qm @ r.alpha - 1, atol=1e-6)
    # (the kernel cache is float32, as in LIBSVM: agreement to ~1e-7 relative)
    assert _rel(r.objective, 0.5 * r.alpha @ Qm @ r.alpha - r.alpha.sum()) < 1e-6
    assert abs(y @ r.alpha) < 1e-10
    # LIBSVM: intercept (sklearn's decision_function > 0 means classes_[1] = +1 = our sign)
    s = SVC(C=C, gamma=gamma, tol=TOL).fit(X, y)
    assert s.classes_[1] == 1.0
    assert abs(r.b - s.intercept_[0]) < 1e-3
    f = _dec(K, r.beta, r.b)
    assert np.mean(np.sign(f) == s.predict(X)) >= 0.99
    assert np.allclose(f, s.decision_function(X), atol=2e-3)


def test_csvc_sample_weight_matches_libsvm():
    X, y = _clf(3)
    w = np.random.default_rng(3).uniform(0.2, 3.0, len(y))
    r = smo_csvc(X, y, RBF(gamma=0.2), 2.0, sample_weight=w, tol=TOL)
    assert np.all(r.alpha <= 2.0 * w + 1e-12)
    s = SVC(C=2.0, gamma=0.2, tol=TOL).fit(X, y, sample_weight=w)
    assert abs(r.b - s.intercept_[0]) < 1e-3
    a = np.zeros(len(y))
    a[s.support_] = np.abs(s.dual_coef_[0])
    Kq = np.outer(y, y) * RBF(gamma=0.2)(X, X)
    assert _rel(r.objective, 0.5 * a @ Kq @ a - a.sum()) < 1e-5


@pytest.mark.parametrize("kernel,skargs", [
    (Linear(), dict(kernel="linear")),
    (Polynomial(degree=2, gamma=0.3, coef0=1.0), dict(kernel="poly", degree=2, gamma=0.3,
                                                      coef0=1.0)),
])
def test_other_kernels_match_libsvm(kernel, skargs):
    X, y = _clf(4, n=60)
    r = smo_csvc(X, y, kernel, 0.7, tol=TOL)
    s = SVC(C=0.7, tol=TOL, **skargs).fit(X, y)
    f = _dec(kernel(X, X), r.beta, r.b)
    assert np.allclose(f, s.decision_function(X), atol=5e-3)


def test_precomputed_kernel_and_dense_Q_paths():
    X, y = _clf(5)
    k = RBF(gamma=0.3)
    K = k(X, X)
    r0 = smo_csvc(X, y, k, 1.5, tol=TOL)
    r1 = smo_csvc(K, y, Precomputed(), 1.5, tol=TOL)
    n = len(y)
    r2 = smo_solve(None, None, -np.ones(n), 1.5, sign=y, Q=np.outer(y, y) * K, tol=TOL)
    for r in (r1, r2):
        assert _rel(r.objective, r0.objective) < 1e-8
        assert np.allclose(r.alpha, r0.alpha, atol=1e-6)
        assert abs(r.b - r0.b) < 1e-6


def test_callable_kernel_path():
    X, y = _clf(6, n=50)

    class Quad:
        name = "mine"

        def __call__(self, A, B):
            return (A @ B.T + 1.0) ** 2

    r = smo_csvc(X, y, Quad(), 1.0, tol=TOL)
    r0 = smo_csvc(X, y, Polynomial(degree=2, gamma=1.0, coef0=1.0), 1.0, tol=TOL)
    assert _rel(r.objective, r0.objective) < 1e-8


# ---------------------------------------------------------------- L2-SVC, hard margin
@pytest.mark.parametrize("seed", SEEDS)
def test_l2svc_matches_cvxpy(seed):
    X, y = _clf(seed)
    C = 2.0
    k = RBF(gamma=0.2)
    K = k(X, X)
    r = smo_l2svc(X, y, k, C, tol=TOL)
    a = cp.Variable(len(y))
    L = _chol(K)
    obj = _solve_cvx(cp.Problem(cp.Minimize(
        0.5 * cp.sum_squares(L.T @ cp.multiply(y, a)) + 0.5 / C * cp.sum_squares(a)
        - cp.sum(a)), [y @ a == 0, a >= 0]))
    assert _rel(r.objective, obj) < 1e-5
    assert np.allclose(r.grad, (np.outer(y, y) * K + np.eye(len(y)) / C) @ r.alpha - 1,
                       atol=1e-6)


def test_hard_margin_separable_matches_cvxpy():
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(2, 0.6, (30, 2)), rng.normal(-2, 0.6, (30, 2))])
    y = np.r_[np.ones(30), -np.ones(30)]
    r = smo_hard_margin(X, y, Linear(), tol=TOL)
    a = cp.Variable(60)
    obj = _solve_cvx(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X.T @ cp.multiply(y, a))
                                            - cp.sum(a)), [y @ a == 0, a >= 0]))
    assert _rel(r.objective, obj) < 1e-5
    f = X @ (X.T @ r.beta) + r.b
    sv = r.alpha > 1e-8
    assert np.allclose(y[sv] * f[sv], 1.0, atol=1e-3)  # support vectors on the margin
    assert np.all(y * f >= 1 - 1e-3)


# ---------------------------------------------------------------- epsilon-SVR
@pytest.mark.parametrize("seed", SEEDS)
def test_epsilon_svr_matches_cvxpy_and_libsvm(seed):
    X, y = _reg(seed)
    C, eps, gamma = 3.0, 0.2, 0.1
    k = RBF(gamma=gamma)
    K = k(X, X)
    r = smo_epsilon_svr(X, y, k, C, eps, tol=TOL)
    n = len(y)
    a, s_ = cp.Variable(n), cp.Variable(n)
    L = _chol(K)
    obj = _solve_cvx(cp.Problem(cp.Minimize(
        0.5 * cp.sum_squares(L.T @ (a - s_)) + eps * cp.sum(a + s_) - y @ (a - s_)),
        [cp.sum(a - s_) == 0, a >= 0, s_ >= 0, a <= C, s_ <= C]))
    assert _rel(r.objective, obj) < 1e-5
    assert r.alpha.shape == (2 * n,)
    assert np.allclose(r.beta, r.extras["alpha"] - r.extras["alpha_star"])
    assert np.all(np.minimum(r.extras["alpha"], r.extras["alpha_star"]) < 1e-8)
    s = SVR(C=C, epsilon=eps, gamma=gamma, tol=TOL).fit(X, y)
    assert abs(r.b - s.intercept_[0]) < 1e-3
    assert np.allclose(_dec(K, r.beta, r.b), s.predict(X), atol=2e-3)


# ---------------------------------------------------------------- nu-SVC
@pytest.mark.parametrize("seed", SEEDS)
def test_nusvc_matches_cvxpy_and_libsvm(seed):
    X, y = _clf(seed)
    nu, gamma = 0.3, 0.2
    k = RBF(gamma=gamma)
    K = k(X, X)
    n = len(y)
    r = smo_nusvc(X, y, k, nu, tol=TOL)
    a = cp.Variable(n)
    L = _chol(K)
    obj = _solve_cvx(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ cp.multiply(y, a))),
                                [y @ a == 0, cp.sum(a) >= nu, a >= 0, a <= 1.0 / n]))
    assert abs(r.objective - obj) < 1e-5 * max(abs(obj), 1e-12) + 1e-10
    assert np.all(r.alpha <= 1.0 / n + 1e-15) and abs(r.alpha.sum() - nu) < 1e-10
    assert abs(y @ r.alpha) < 1e-12
    s = NuSVC(nu=nu, gamma=gamma, tol=TOL).fit(X, y)
    # LIBSVM rescales by 1/rho: its intercept is b / rho
    assert r.rho_nu > 0
    assert abs(r.b / r.rho_nu - s.intercept_[0]) < 2e-3
    f = _dec(K, r.beta, r.b)
    assert np.mean(np.sign(f) == s.predict(X)) >= 0.99
    # docs/formulations.md 4: alpha / rho solves C-SVC with C = 1/(N rho)
    rc = smo_csvc(X, y, k, 1.0 / (n * r.rho_nu), tol=TOL)
    assert np.allclose(r.alpha / r.rho_nu, rc.alpha, atol=1e-2 / (n * r.rho_nu))


def test_nusvc_infeasible_nu_raises():
    X, y = _clf(0, n=40)
    y[:] = 1.0
    y[:4] = -1.0
    with pytest.raises(ValueError, match="nu"):
        smo_nusvc(X, y, RBF(gamma=0.1), 0.5)


# ---------------------------------------------------------------- nu-SVR
@pytest.mark.parametrize("seed", SEEDS)
def test_nusvr_matches_cvxpy_and_libsvm(seed):
    X, y = _reg(seed)
    n = len(y)
    C, nu, gamma = 2.0 * n, 0.4, 0.1  # our C is LIBSVM's C times N
    k = RBF(gamma=gamma)
    K = k(X, X)
    r = smo_nusvr(X, y, k, C, nu, tol=TOL)
    a, s_ = cp.Variable(n), cp.Variable(n)
    L = _chol(K)
    obj = _solve_cvx(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ (a - s_)) - y @ (a - s_)),
                                [cp.sum(a - s_) == 0, cp.sum(a + s_) <= C * nu,
                                 a >= 0, s_ >= 0, a <= C / n, s_ <= C / n]))
    assert _rel(r.objective, obj) < 1e-5
    s = NuSVR(C=C / n, nu=nu, gamma=gamma, tol=TOL).fit(X, y)
    assert abs(r.b - s.intercept_[0]) < 2e-3
    assert np.allclose(_dec(K, r.beta, r.b), s.predict(X), atol=5e-3)
    assert r.extras["epsilon"] >= -1e-6


# ---------------------------------------------------------------- no equality
def test_no_equality_matches_cvxpy():
    X, y = _clf(8)
    k = RBF(gamma=0.3)
    K = k(X, X)
    n = len(y)
    r = smo_solve(X, k, -np.ones(n), 1.0, sign=y, equality="none", tol=1e-6)
    a = cp.Variable(n)
    obj = _solve_cvx(cp.Problem(cp.Minimize(
        0.5 * cp.sum_squares(_chol(K).T @ cp.multiply(y, a)) - cp.sum(a)), [a >= 0, a <= 1]))
    assert _rel(r.objective, obj) < 1e-5
    assert r.b == 0.0


# ---------------------------------------------------------------- solver mechanics
@pytest.mark.parametrize("seed", SEEDS)
def test_shrinking_and_cache_size_do_not_change_the_solution(seed):
    X, y = _clf(seed, n=150)
    k = RBF(gamma=0.5)
    ref = smo_csvc(X, y, k, 10.0, tol=TOL, shrinking=False, cache_size=100)
    for opts in (dict(shrinking=True, cache_size=100), dict(shrinking=True, cache_size=1e-4),
                 dict(shrinking=False, cache_size=1e-4)):
        r = smo_csvc(X, y, k, 10.0, tol=TOL, **opts)
        assert _rel(r.objective, ref.objective) < 1e-6
        assert abs(r.b - ref.b) < 1e-3
    # the SVR path (index map) too
    Xr, yr = _reg(seed, n=100)
    a = smo_epsilon_svr(Xr, yr, k, 5.0, 0.1, tol=TOL, shrinking=False)
    b = smo_epsilon_svr(Xr, yr, k, 5.0, 0.1, tol=TOL, shrinking=True, cache_size=1e-4)
    assert _rel(a.objective, b.objective) < 1e-6


def test_deterministic_run_to_run():
    X, y = _clf(9, n=150)
    r1 = smo_csvc(X, y, RBF(gamma=0.5), 3.0)
    r2 = smo_csvc(X, y, RBF(gamma=0.5), 3.0)
    assert r1.n_iter == r2.n_iter
    assert np.array_equal(r1.alpha, r2.alpha) and r1.b == r2.b


def test_warm_start_takes_fewer_iterations():
    X, y = _clf(10, n=150)
    k = RBF(gamma=0.5)
    r1 = smo_csvc(X, y, k, 1.0, tol=TOL)
    cold = smo_csvc(X, y, k, 1.2, tol=TOL)
    warm = smo_csvc(X, y, k, 1.2, tol=TOL, alpha0=r1.alpha)  # feasible: box grows
    assert warm.n_iter < cold.n_iter
    assert _rel(warm.objective, cold.objective) < 1e-6


def test_alpha0_validation():
    X, y = _clf(11, n=30)
    with pytest.raises(ValueError, match="alpha0"):
        smo_csvc(X, y, RBF(gamma=0.5), 1.0, alpha0=np.full(30, 2.0))
    with pytest.raises(ValueError, match="alpha0"):
        smo_solve(X, RBF(gamma=0.5), np.zeros(30), 1.0, sign=y, equality="nu")
    with pytest.raises(ValueError, match="sign"):
        smo_solve(X, RBF(gamma=0.5), np.zeros(30), 1.0, sign=np.zeros(30))
    with pytest.raises(ValueError, match="equality"):
        smo_solve(X, RBF(gamma=0.5), np.zeros(30), 1.0, sign=y, equality="two")


def test_max_iter_warns_and_reports_status():
    X, y = _clf(12, n=100)
    with pytest.warns(ConvergenceWarning, match="violation"):
        r = smo_csvc(X, y, RBF(gamma=0.5), 10.0, max_iter=5)
    assert r.status == "max_iter" and r.n_iter == 5 and r.max_violation > 1e-3


def test_trace_records_decreasing_objective():
    X, y = _clf(13, n=100)
    r = smo_csvc(X, y, RBF(gamma=0.5), 1.0, record_trace=True)
    obj = np.array(r.trace["objective"])
    assert len(obj) == r.n_iter and r.trace["iter"][-1] == r.n_iter
    assert np.all(np.diff(obj) <= 1e-12)
    assert abs(obj[-1] - r.objective) < 1e-8 * max(1, abs(r.objective))


def test_verbose_prints(capsys):
    X, y = _clf(14, n=40)
    smo_csvc(X, y, RBF(gamma=0.5), 1.0, verbose=True)
    assert "smo done" in capsys.readouterr().out


def test_parallel_kernel_columns_give_identical_results():
    X, y = _clf(15, n=120)
    k = RBF(gamma=0.5)
    r1 = smo_csvc(X, y, k, 2.0)
    # every column shareable (no helper thread at this size: test_smo_threads.py forces them)
    r2 = smo_csvc(X, y, k, 2.0, n_threads_min_work=0)
    assert r1.n_iter == r2.n_iter
    assert np.allclose(r1.alpha, r2.alpha, rtol=0, atol=1e-12)
    assert r2.compile_time >= 0.0


def test_kernel_must_be_an_object():
    X, y = _clf(16, n=20)
    with pytest.raises(TypeError, match="kernel"):
        smo_csvc(X, y, "rbf", 1.0)
