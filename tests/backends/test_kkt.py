"""Tests of the KKT linear-system backend against independent references.

References: a dense numpy solve of the bordered (N+1) x (N+1) system, CVXPY on the LS-SVM dual
QP ``max d^T a - 1/2 a^T H a  s.t. u^T a = 0`` (docs/formulations.md 7, 8),
scikit-learn's KernelRidge and GaussianProcessRegressor, and brute-force refits.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF as SkRBF
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel

from primaldual import sparsity, tuning
from primaldual.backends import linsys as kkt
from primaldual.kernels import RBF, Linear, Polynomial, Precomputed, Sigmoid, eig_factor

SEEDS = [0, 1, 2]


def make_data(seed, N=40, n=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(N) > 0, 1.0, -1.0)
    t = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(N)
    return X, y, t


def dense_bordered(K, C, s, d, bias=True):
    """Reference: dense solve of [[0, s^T], [s, D_s (K + I/C) D_s]] [b; a] = [0; d]."""
    N = K.shape[0]
    H = np.outer(s, s) * (K + np.eye(N) / C)
    if not bias:
        return 0.0, np.linalg.solve(H, d)
    M = np.zeros((N + 1, N + 1))
    M[0, 1:] = s
    M[1:, 0] = s
    M[1:, 1:] = H
    sol = np.linalg.solve(M, np.r_[0.0, d])
    return sol[0], sol[1:]


def cvxpy_dual(K, C, s, d):
    """Reference: the LS-SVM dual QP in CVXPY; b from stationarity d - H a - u b = 0."""
    N = K.shape[0]
    H = np.outer(s, s) * (K + np.eye(N) / C)
    H = 0.5 * (H + H.T)
    a = cp.Variable(N)
    prob = cp.Problem(cp.Maximize(d @ a - 0.5 * cp.quad_form(a, cp.psd_wrap(H))), [s @ a == 0])
    prob.solve(solver=cp.CLARABEL)
    av = a.value
    b = float(s @ (d - H @ av) / (s @ s))
    return b, av


def rel(x, ref):
    return np.max(np.abs(np.asarray(x) - ref)) / max(1.0, np.max(np.abs(ref)))


# ----------------------------------------------------------------------------- direct path


@pytest.mark.parametrize("seed", SEEDS)
def test_classifier_matches_dense_and_cvxpy(seed):
    X, y, _ = make_data(seed)
    ker, C = RBF(gamma=0.4), 3.0
    K = ker(X)
    fac = kkt.factor_kernel(X, ker, C)
    b, a = kkt.solve_bordered(fac, np.ones(len(y)), sign=y)
    bd, ad = dense_bordered(K, C, y, np.ones(len(y)))
    assert abs(b - bd) < 1e-10 and rel(a, ad) < 1e-10
    bc, ac = cvxpy_dual(K, C, y, np.ones(len(y)))
    assert abs(b - bc) < 1e-5 and rel(a, ac) < 1e-5
    assert kkt.kkt_residual(X, ker, C, y, np.ones(len(y)), b, a) < 1e-12
    assert abs(np.sum(y * a)) < 1e-10  # y^T alpha = 0


@pytest.mark.parametrize("seed", SEEDS)
def test_regression_matches_dense_and_cvxpy(seed):
    X, _, t = make_data(seed)
    ker, C = RBF(gamma=0.7), 10.0
    K = ker(X)
    b, a, fac = kkt.fit_direct(X, ker, C, t)
    bd, ad = dense_bordered(K, C, np.ones(len(t)), t)
    assert abs(b - bd) < 1e-10 and rel(a, ad) < 1e-10
    bc, ac = cvxpy_dual(K, C, np.ones(len(t)), t)
    assert abs(b - bc) < 1e-5 and rel(a, ac) < 1e-5
    assert kkt.kkt_residual(X, ker, C, None, t, b, a) < 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_fisher_targets(seed):
    X, y, _ = make_data(seed)
    N = len(y)
    npos, nneg = np.sum(y > 0), np.sum(y < 0)
    d = np.where(y > 0, N / npos, N / nneg)  # Suykens 3.23 targets in the signed system
    ker, C = Polynomial(degree=2, gamma=0.5, coef0=1.0), 1.0
    b, a, _ = kkt.fit_direct(X, ker, C, d, sign=y)
    bd, ad = dense_bordered(ker(X), C, y, d)
    assert abs(b - bd) < 1e-9 and rel(a, ad) < 1e-9
    bc, ac = cvxpy_dual(ker(X), C, y, d)
    assert abs(b - bc) < 1e-5 and rel(a, ac) < 1e-5


@pytest.mark.parametrize("seed", SEEDS)
def test_no_bias_equals_sklearn_kernel_ridge(seed):
    X, _, t = make_data(seed)
    gamma, C = 0.5, 4.0
    b, a, _ = kkt.fit_direct(X, RBF(gamma=gamma), C, t, bias=False)
    kr = KernelRidge(alpha=1.0 / C, kernel="rbf", gamma=gamma).fit(X, t)
    assert b == 0.0
    assert rel(a, kr.dual_coef_) < 1e-10
    Xt = np.random.default_rng(seed + 10).standard_normal((15, X.shape[1]))
    assert rel(rbf_kernel(Xt, X, gamma=gamma) @ a, kr.predict(Xt)) < 1e-10


@pytest.mark.parametrize("seed", SEEDS)
def test_classifier_equals_regression_on_pm1_targets(seed):
    X, y, _ = make_data(seed)
    ker, C = RBF(gamma=0.3), 2.0
    fac = kkt.factor_kernel(X, ker, C)
    bc, ac = kkt.solve_bordered(fac, np.ones(len(y)), sign=y)
    br, ar = kkt.solve_bordered(fac, y)
    assert abs(bc - br) < 1e-12 and rel(ac * y, ar) < 1e-12  # beta = alpha * y


def test_multi_output_with_per_column_signs_shares_factor():
    X, y, t = make_data(3)
    ker, C = RBF(gamma=0.3), 2.0
    rng = np.random.default_rng(0)
    S = np.where(rng.random((len(y), 3)) < 0.5, 1.0, -1.0)
    D = np.column_stack([np.ones(len(y)), t, rng.standard_normal(len(y))])
    fac = kkt.factor_kernel(X, ker, C)
    B, A = kkt.solve_bordered(fac, D, sign=S)
    assert B.shape == (3,) and A.shape == (len(y), 3)
    for j in range(3):
        bj, aj = dense_bordered(ker(X), C, S[:, j], D[:, j])
        assert abs(B[j] - bj) < 1e-10 and rel(A[:, j], aj) < 1e-10
    assert kkt.kkt_residual(X, ker, C, S, D, B, A) < 1e-12
    B0, A0 = kkt.solve_bordered(fac, D, bias=False)
    assert np.all(B0 == 0) and rel(A0, np.linalg.solve(ker(X) + np.eye(len(y)) / C, D)) < 1e-10


@pytest.mark.parametrize("ker", [RBF(gamma=0.3), Linear(), Polynomial(degree=3, gamma=0.2,
                                                                      coef0=1.0)])
def test_fast_gram_in_factor_storage_matches_kernel(ker):
    X, _, _ = make_data(4, N=70)
    C = 5.0
    fac = kkt.factor_kernel(X, ker, C)
    L = np.tril(fac.L)
    A = ker(X) + np.eye(len(X)) / C
    assert np.max(np.abs(L @ L.T - A)) < 1e-10 * np.max(np.abs(A))
    assert fac.L.flags.f_contiguous
    assert abs(fac.logdet() - np.linalg.slogdet(A)[1]) < 1e-9
    rhs = np.random.default_rng(0).standard_normal((len(X), 2))
    assert rel(fac.solve(rhs), np.linalg.solve(A, rhs)) < 1e-9


def test_generic_kernel_and_precomputed_paths():
    X, y, _ = make_data(5)
    C = 2.0
    K = rbf_kernel(X, gamma=0.6)
    K0 = K.copy()
    b_ref, a_ref = dense_bordered(K, C, y, np.ones(len(y)))
    for ker, data in [(lambda A, B=None: rbf_kernel(A, B, gamma=0.6), X), (None, K),
                      (Precomputed(), K)]:
        b, a, _ = kkt.fit_direct(data, ker, C, np.ones(len(y)), sign=y)
        assert abs(b - b_ref) < 1e-10 and rel(a, a_ref) < 1e-10
    assert np.array_equal(K, K0)  # the user's Gram matrix was not overwritten
    assert kkt.kkt_residual(K, None, C, y, np.ones(len(y)), b, a) < 1e-12


def test_float32_factor():
    X, y, _ = make_data(6)
    ker, C = RBF(gamma=0.3), 1.0
    b, a, _ = kkt.fit_direct(X, ker, C, np.ones(len(y)), sign=y, dtype=np.float32)
    bd, ad = dense_bordered(ker(X), C, y, np.ones(len(y)))
    assert abs(b - bd) < 1e-4 and rel(a, ad) < 1e-4


def test_kkt_residual_detects_a_wrong_solution():
    X, y, _ = make_data(7)
    ker, C = RBF(gamma=0.3), 1.0
    b, a, _ = kkt.fit_direct(X, ker, C, np.ones(len(y)), sign=y)
    assert kkt.kkt_residual(X, ker, C, y, np.ones(len(y)), b, a) < 1e-12
    assert kkt.kkt_residual(X, ker, C, y, np.ones(len(y)), b + 0.1, a) > 1e-3
    assert kkt.kkt_residual(X, ker, C, y, np.ones(len(y)), b, a * 1.01) > 1e-4


# ----------------------------------------------------------------------------- singular input


def test_c_inf_with_duplicates_raises_clear_error_and_jitter_fixes_it():
    X, y, _ = make_data(8, N=30)
    X = np.vstack([X, X[:5]])
    y = np.r_[y, y[:5]]
    ker = RBF(gamma=0.5)
    with pytest.raises(ValueError, match="jitter"):
        kkt.factor_kernel(X, ker, np.inf)
    with pytest.raises(np.linalg.LinAlgError):
        kkt.factor_kernel(X, ker, np.inf)
    fac = kkt.factor_kernel(X, ker, np.inf, jitter=1e-6)
    b, a = kkt.solve_bordered(fac, np.ones(len(y)), sign=y)
    assert np.all(np.isfinite(a)) and np.isfinite(b)
    with pytest.warns(RuntimeWarning, match="jitter"):
        fac = kkt.factor_kernel(X, ker, np.inf, jitter="auto")
    assert fac.jitter > 0
    # C = inf without duplicates is fine (interpolation)
    Xu, yu, _ = make_data(8, N=20)
    b, a, _ = kkt.fit_direct(Xu, ker, np.inf, np.ones(20), sign=yu)
    bd, ad = dense_bordered(ker(Xu), np.inf, yu, np.ones(20))
    assert rel(a, ad) < 1e-6


def test_indefinite_kernel_raises_never_nan():
    X, y, _ = make_data(9, N=40)
    ker = Sigmoid(gamma=2.0, coef0=-1.0)
    assert np.linalg.eigvalsh(ker(X)).min() < -1e-3
    with pytest.raises(kkt.SingularKKTError, match="positive semi-definite"):
        kkt.factor_kernel(X, ker, 1e6)
    with pytest.raises(ValueError):
        kkt.solve_bordered_cg(X, ker, 1e6, np.ones(40), sign=y, preconditioner=None,
                              max_iter=200)


def test_bad_arguments():
    X, y, _ = make_data(0, N=10)
    ker = RBF(gamma=1.0)
    with pytest.raises(ValueError, match="C"):
        kkt.factor_kernel(X, ker, -1.0)
    with pytest.raises(TypeError, match="C"):
        kkt.factor_kernel(X, ker, "big")
    with pytest.raises(ValueError, match="X"):
        kkt.factor_kernel(X[:, :, None], ker, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        kkt.factor_kernel(np.where(X > 1, np.nan, X), ker, 1.0)
    with pytest.raises(TypeError, match="kernel"):
        kkt.factor_kernel(X, "rbf", 1.0)
    with pytest.raises(ValueError, match="jitter"):
        kkt.factor_kernel(X, ker, 1.0, jitter=-1.0)
    fac = kkt.factor_kernel(X, ker, 1.0)
    with pytest.raises(ValueError, match="d must"):
        kkt.solve_bordered(fac, np.ones(9))
    with pytest.raises(ValueError, match="sign"):
        kkt.solve_bordered(fac, np.ones(10), sign=np.zeros(10))
    with pytest.raises(TypeError, match="factor"):
        kkt.solve_bordered(np.eye(10), np.ones(10))
    with pytest.raises(ValueError, match="finite"):
        kkt.solve_lowrank(np.ones((10, 2)), np.inf, np.ones(10))


# ----------------------------------------------------------------------------- CG


@pytest.mark.parametrize("precond", ["jacobi", "nystrom", None])
def test_cg_equals_direct(precond):
    X, y, t = make_data(11, N=60)
    ker, C = RBF(gamma=0.5), 5.0
    fac = kkt.factor_kernel(X, ker, C)
    for sign, d in [(y, np.ones(60)), (None, t)]:
        b, a = kkt.solve_bordered(fac, d, sign=sign)
        res = kkt.solve_bordered_cg(X, ker, C, d, sign=sign, tol=1e-10, block_size=16,
                                    preconditioner=precond, precond_rank=20)
        assert res.converged
        assert abs(res.b - b) < 1e-6 and rel(res.a, a) < 1e-6
        assert res.residual < 1e-8
        assert kkt.kkt_residual(X, ker, C, sign, d, res.b, res.a) < 1e-8
        assert res.cost_trace.shape == (res.n_iter, 2)
        assert np.all(np.diff(res.cost_trace, axis=0) <= 1e-12 * np.abs(res.cost_trace[1:]))


def test_cg_no_bias_multi_output_float32_and_warning():
    X, y, t = make_data(12, N=50)
    ker, C = RBF(gamma=0.5), 2.0
    D = np.column_stack([t, np.ones(50)])
    b0, a0, _ = kkt.fit_direct(X, ker, C, D, bias=False)
    res = kkt.solve_bordered_cg(X, ker, C, D, bias=False, tol=1e-10, block_size=7)
    assert np.all(res.b == 0) and rel(res.a, a0) < 1e-6
    res32 = kkt.solve_bordered_cg(X, ker, C, np.ones(50), sign=y, tol=1e-6, dtype=np.float32)
    b1, a1, _ = kkt.fit_direct(X, ker, C, np.ones(50), sign=y)
    assert rel(res32.a, a1) < 1e-4
    with pytest.warns(kkt.ConvergenceWarning):
        r = kkt.solve_bordered_cg(X, ker, 1e4, np.ones(50), sign=y, tol=1e-12, max_iter=2,
                                  preconditioner=None)
    assert not r.converged and r.n_iter == 2


def test_cg_cost_criterion_stops_early():
    X, y, _ = make_data(13, N=80)
    ker, C = RBF(gamma=0.5), 100.0
    tight = kkt.solve_bordered_cg(X, ker, C, np.ones(80), sign=y, tol=1e-10,
                                  preconditioner=None, max_iter=2000)
    loose = kkt.solve_bordered_cg(X, ker, C, np.ones(80), sign=y, tol=1e-10, cost_tol=1e-6,
                                  preconditioner=None, max_iter=2000)
    assert tight.converged and tight.residual < 1e-8
    assert loose.converged and loose.n_iter < tight.n_iter


# ----------------------------------------------------------------------------- low rank


@pytest.mark.parametrize("seed", SEEDS)
def test_lowrank_exact_eigen_factor_equals_direct(seed):
    X, y, t = make_data(seed, N=50)
    ker, C = RBF(gamma=0.5), 3.0
    K = ker(X)
    w_, Q = np.linalg.eigh(K)
    keep = w_ > 1e-14 * w_.max()
    V = Q[:, keep] * np.sqrt(w_[keep])
    fac = kkt.factor_kernel(X, ker, C)
    for sign, d in [(y, np.ones(50)), (None, t)]:
        b, a = kkt.solve_bordered(fac, d, sign=sign)
        bl, al, w = kkt.solve_lowrank(V, C, d, sign=sign)
        assert abs(bl - b) < 1e-8 and rel(al, a) < 1e-8
        beta = a if sign is None else a * sign
        assert rel(w, V.T @ beta) < 1e-8
        assert rel(V @ w + bl, K @ beta + b) < 1e-8  # same predictions on the training rows
    b0, a0 = kkt.solve_bordered(fac, t, bias=False)
    bl0, al0, _ = kkt.solve_lowrank(V, C, t, bias=False)
    assert bl0 == 0 and rel(al0, a0) < 1e-8


def test_lowrank_truncated_factor_matches_dense_solve_with_VVt():
    X, y, _ = make_data(21, N=60)
    ker, C = RBF(gamma=0.5), 3.0
    lr = eig_factor(ker, X, rank=10)
    V = lr.V
    bd, ad = dense_bordered(V @ V.T, C, y, np.ones(60))
    bl, al, w = kkt.solve_lowrank(V, C, np.ones(60), sign=y)
    assert abs(bl - bd) < 1e-8 and rel(al, ad) < 1e-8
    Vf = np.asfortranarray(V)
    bl2, al2, _ = kkt.solve_lowrank(Vf, C, np.ones(60), sign=y)
    assert rel(al2, al) < 1e-12


def test_lowrank_dask_equals_in_memory():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    N, M = 1000, 12
    V = rng.standard_normal((N, M)) / np.sqrt(M)
    y = np.where(rng.random(N) < 0.5, 1.0, -1.0)
    t = rng.standard_normal((N, 2))
    Vd = da.from_array(V, chunks=(170, M))
    for sign, d in [(y, np.ones(N)), (None, t)]:
        b, a, w = kkt.solve_lowrank(V, 2.0, d, sign=sign)
        bd, ad, wd = kkt.solve_lowrank(Vd, 2.0, d, sign=sign)
        assert rel(bd, b) < 1e-10 and rel(ad, a) < 1e-10 and rel(wd, w) < 1e-10


# ----------------------------------------------------------------------------- LOO, GCV, GP


def _refit_predict(X, ker, C, sign, d, i, bias):
    keep = np.arange(len(X)) != i
    s = None if sign is None else sign[keep]
    b, a, _ = kkt.fit_direct(X[keep], ker, C, d[keep], sign=s, bias=bias)
    beta = a if s is None else a * s
    return float((ker(X[i:i + 1], X[keep]) @ beta)[0] + b)


@pytest.mark.parametrize("seed", [0, 1])
def test_loo_residuals_equal_brute_force_refits(seed):
    X, y, t = make_data(seed, N=25)
    ker, C = RBF(gamma=0.5), 4.0
    fac = kkt.factor_kernel(X, ker, C)
    for sign, d, bias in [(y, np.ones(25), True), (None, t, True), (None, t, False)]:
        b, a = kkt.solve_bordered(fac, d, sign=sign, bias=bias)
        r = tuning.loo_residuals(fac, d, b, a, sign=sign, bias=bias)
        s = np.ones(25) if sign is None else sign
        brute = np.array([d[i] - s[i] * _refit_predict(X, ker, C, sign, d, i, bias)
                          for i in range(25)])
        assert rel(r, brute) < 1e-8


def test_gcv_equals_explicit_hat_matrix_formula():
    X, _, t = make_data(2, N=30)
    ker, C = RBF(gamma=0.5), 4.0
    K = ker(X)
    N = 30
    fac = kkt.factor_kernel(X, ker, C)
    # without bias: S = K (K + I/C)^{-1}
    b, a = kkt.solve_bordered(fac, t, bias=False)
    S = K @ np.linalg.inv(K + np.eye(N) / C)
    ref = (np.sum((t - S @ t) ** 2) / N) / (np.trace(np.eye(N) - S) / N) ** 2
    assert abs(tuning.gcv_score(fac, t, b, a, bias=False) - ref) < 1e-10 * ref
    # with bias: columns of the hat matrix by solving with unit vectors
    Sb = np.empty((N, N))
    for j in range(N):
        e = np.zeros(N)
        e[j] = 1.0
        bj, aj = kkt.solve_bordered(fac, e)
        Sb[:, j] = K @ aj + bj
    b, a = kkt.solve_bordered(fac, t)
    ref = (np.sum((t - Sb @ t) ** 2) / N) / (np.trace(np.eye(N) - Sb) / N) ** 2
    assert abs(tuning.gcv_score(fac, t, b, a) - ref) < 1e-8 * ref


@pytest.mark.parametrize("seed", [0, 1])
def test_gp_variance_equals_sklearn(seed):
    X, _, t = make_data(seed, N=40)
    length_scale, C = 1.3, 20.0
    ker = RBF(sigma=length_scale)
    fac = kkt.factor_kernel(X, ker, C)
    Xt = np.random.default_rng(seed + 5).standard_normal((12, X.shape[1]))
    var = tuning.gp_predictive_variance(fac, X, ker, Xt)
    gp = GaussianProcessRegressor(kernel=SkRBF(length_scale), alpha=1.0 / C, optimizer=None,
                                  normalize_y=False).fit(X, t)
    mean, std = gp.predict(Xt, return_std=True)
    assert np.max(np.abs(var - std**2)) < 1e-9
    _, a = kkt.solve_bordered(fac, t, bias=False)
    assert rel(ker(Xt, X) @ a, mean) < 1e-9


# ----------------------------------------------------------------------------- pruning


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_prune_path(task):
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(120, 1))
    if task == "regression":
        y = np.sinc(X[:, 0])
    else:
        y = np.where(np.sin(2 * X[:, 0]) > 0, 1.0, -1.0)
    ker, C = RBF(gamma=1.0), 10.0
    tol = 1e-3 if task == "regression" else 0.0
    path = sparsity.prune_path(X, y, ker, C, task=task, fraction=0.05, min_sv=20, tol=tol)
    assert len(path) >= 3
    assert all(n1 > n2 for n1, n2 in zip(path.n_sv, path.n_sv[1:], strict=False))
    assert path.stopped_by in ("validation", "min_sv")
    for t in range(len(path)):
        idx = path.support[t]
        if t:
            assert set(idx) <= set(path.support[t - 1])
        s = y[idx] if task == "classification" else None
        d = np.ones(idx.size) if task == "classification" else y[idx]
        b, a = dense_bordered(ker(X[idx]), C, np.ones(idx.size) if s is None else s, d)
        assert abs(path.b[t] - b) < 1e-8 and rel(path.alpha[t], a) < 1e-8
    assert 0 <= path.best < len(path)
    if path.stopped_by == "validation":
        assert path.score[-1] < path.score[path.best] - tol


def test_prune_path_with_validation_set_stops_when_score_degrades():
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, size=(100, 1))
    y = np.sinc(X[:, 0]) + 0.1 * rng.standard_normal(100)
    Xv = rng.uniform(-3, 3, size=(50, 1))
    yv = np.sinc(Xv[:, 0])
    path = sparsity.prune_path(X, y, RBF(gamma=1.0), 10.0, task="regression", X_val=Xv, y_val=yv,
                          min_sv=5, tol=0.0)
    # it stopped on the validation score, long before min_sv: with the validation stop
    # disabled the path would run on to 5 support vectors (issue 27: this test must fail then)
    assert path.stopped_by == "validation"
    assert np.count_nonzero(path.beta[-1]) > 5
    best = path.best
    assert path.score[-1] < path.score[best]  # the step that stopped it degraded the score
    assert all(path.score[best] >= s for s in path.score[best + 1:])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.all(np.isfinite(path.beta[best]))
