"""LS-SVM classifier / regression: primal vs dual (CVXPY), KKT adapter, identities, worked
examples (Suykens Fig. 3.2 two spirals, noisy sinc)."""

import numpy as np
import pytest

from primaldual.backends.linsys import adapter as kkt_adapter
from primaldual.datasets import load_dataset
from primaldual.methods.lssvm import LSSVC, LSSVR

SEEDS = [0, 1, 2]


def _data(seed, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    t = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return X, y, t


def _assert_forms_agree(m, X, y):
    m.fit(X, y, backend="cvxpy", form="dual")
    cd, pd_ = m.certificate_, m.predict(X)
    b_d = m.intercept_
    m.fit(X, y, backend="cvxpy", form="primal")
    cp_ = m.certificate_
    for c in (cd, cp_):
        assert abs(c.relative_gap) <= 1e-6
        assert c.max_kkt_residual <= 1e-6
    scale = max(1, abs(cd.primal_objective))
    assert abs(cd.primal_objective - cp_.primal_objective) <= 1e-6 * scale
    np.testing.assert_allclose(m.predict(X), pd_, atol=1e-6)
    assert abs(m.intercept_ - b_d) <= 1e-6


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_lssvc_primal_dual(seed, kernel):
    X, y, _ = _data(seed)
    _assert_forms_agree(LSSVC(C=0.7 + seed, kernel=kernel, gamma=0.3, degree=2, coef0=1.0), X, y)


@pytest.mark.parametrize("seed", SEEDS)
def test_lssvc_fisher_and_custom_targets(seed):
    X, y, _ = _data(seed)
    _assert_forms_agree(LSSVC(C=2.0, gamma=0.5, targets="fisher"), X, y)
    _assert_forms_agree(LSSVC(C=2.0, gamma=0.5, targets=(2.0, 0.5)), X, y)
    ks = LSSVC(C=2.0, gamma=0.5, targets="fisher").kkt_system(X, y)
    n1, n2 = np.sum(y > 0), np.sum(y < 0)
    np.testing.assert_allclose(ks.d, np.where(y > 0, len(y) / n1, len(y) / n2))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_lssvr_primal_dual(seed, fit_intercept):
    X, _, t = _data(seed)
    _assert_forms_agree(LSSVR(C=3.0, gamma=0.4, fit_intercept=fit_intercept), X, t)


@pytest.mark.parametrize("seed", SEEDS)
def test_lssvm_weighted_primal_dual(seed):
    X, y, t = _data(seed)
    w = np.random.default_rng(seed + 10).uniform(0.5, 2.0, size=len(y))
    for m, target in ((LSSVC(C=1.5, gamma=0.5), y), (LSSVR(C=1.5, gamma=0.5), t)):
        m.fit(X, target, sample_weight=w, backend="cvxpy")
        a_cvx, b_cvx = m.alpha_.copy(), m.intercept_
        sol = kkt_adapter.solve(m.dual(X, target, sample_weight=w))
        np.testing.assert_allclose(sol.values["alpha"], a_cvx, atol=1e-6)
        assert abs(sol.info["b"] - b_cvx) <= 1e-6


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", ["direct", "cg"])
def test_kkt_adapter_matches_cvxpy(seed, method):
    X, y, t = _data(seed)
    cases = ((LSSVC(C=2.0, gamma=0.5), y), (LSSVC(C=2.0, gamma=0.5, targets="fisher"), y),
             (LSSVR(C=2.0, gamma=0.5), t), (LSSVR(C=2.0, gamma=0.5, fit_intercept=False), t))
    for m, target in cases:
        D = m.dual(X, target)
        assert kkt_adapter.accepts(D)
        assert not kkt_adapter.accepts(m.primal(X, target))
        s_k = kkt_adapter.solve(D, method=method, tol=1e-12)
        s_c = D.solve(backend="cvxpy")
        np.testing.assert_allclose(s_k.values["alpha"], s_c.values["alpha"], atol=1e-6)
        for name, v in s_c.multipliers.items():
            np.testing.assert_allclose(s_k.multipliers[name], v, atol=1e-6)
        assert s_k.info["kkt_residual"] <= 1e-8
        scale = max(1, abs(s_c.objective_value))
        assert abs(s_k.objective_value - s_c.objective_value) <= 1e-8 * scale
        # the recovered model from the adapter's solution is certified optimal
        data = m._prepare(X, target)
        rec = m._from_dual(data, s_k)
        from primaldual.certificate import certify
        cert = certify(m._primal(data), rec.primal_point, rec.primal_multipliers, D, rec.dual_point)
        assert cert.is_optimal(1e-8, 1e-8)



def _numpy_bordered(K, y, Ci, d, sign):
    """Reference: ``np.linalg.solve`` of ``[[0, s^T], [s, D_s K D_s + diag(1/C_i)]] [b; a] =
    [0; d]`` formed densely (no factor, no Schur complement)."""
    N = len(y)
    M = np.zeros((N + 1, N + 1))
    M[0, 1:] = M[1:, 0] = sign
    M[1:, 1:] = np.outer(sign, sign) * K + np.diag(1.0 / Ci)
    sol = np.linalg.solve(M, np.r_[0.0, d])
    return sol[0], sol[1:]


@pytest.mark.parametrize("weighted", [False, True])
def test_direct_route_equals_numpy_bordered_solve(weighted):
    # the public fit on the direct KKT route (uniform C: the kernel built in the factor's
    # storage; per-sample C: the precomputed-matrix route) against a dense numpy solve
    from sklearn.metrics.pairwise import rbf_kernel

    X, y, t = _data(7, n=60)
    w = np.random.default_rng(8).uniform(0.3, 3.0, size=len(y)) if weighted else None
    C, gamma = 2.5, 0.4
    K = rbf_kernel(X, gamma=gamma)
    Ci = C * (w if weighted else np.ones(len(y)))
    m = LSSVC(C=C, gamma=gamma).fit(X, y, sample_weight=w, backend="kkt")
    assert m.solution_.info["path"] == "direct"
    b, a = _numpy_bordered(K, y, Ci, np.ones(len(y)), y)
    np.testing.assert_allclose(m.alpha_, a, rtol=0, atol=1e-8)
    np.testing.assert_allclose(m.beta_, a * y, rtol=0, atol=1e-8)
    assert abs(float(np.ravel(m.intercept_)[0]) - b) <= 1e-8
    assert m.certificate_.max_kkt_residual <= 1e-8
    r = LSSVR(C=C, gamma=gamma).fit(X, t, sample_weight=w, backend="kkt")
    b, a = _numpy_bordered(K, t, Ci, t, np.ones(len(t)))
    np.testing.assert_allclose(r.alpha_, a, rtol=0, atol=1e-8)
    assert abs(float(np.ravel(r.intercept_)[0]) - b) <= 1e-8

@pytest.mark.parametrize("seed", SEEDS)
def test_kkt_system_object(seed):
    X, y, t = _data(seed)
    m = LSSVC(C=2.0, gamma=0.5)
    ks = m.kkt_system(X, y)
    M, r = ks.matrix(), ks.rhs()
    N = len(y)
    assert M.shape == (N + 1, N + 1) and r.shape == (N + 1,)
    np.testing.assert_allclose(M[0, 1:], y)
    K = m._prepare(X, y).gram()
    np.testing.assert_allclose(M[1:, 1:], np.outer(y, y) * K + np.eye(N) / 2.0)
    np.testing.assert_allclose(r, np.r_[0.0, np.ones(N)])
    m.fit(X, y, backend="cvxpy")
    assert ks.residual(m.b_, m.alpha_) <= 1e-7
    b, a = ks.solve_dense()
    np.testing.assert_allclose(a, m.alpha_, atol=1e-6)
    # every point is a support vector, alpha = C e
    assert len(m.support_) == N
    assert len(m.bounded_support_) == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_classifier_equals_regression_on_pm1_targets(seed):
    X, y, _ = _data(seed)
    c = LSSVC(C=1.3, gamma=0.6).fit(X, y, backend="cvxpy")
    r = LSSVR(C=1.3, gamma=0.6).fit(X, y, backend="cvxpy")
    np.testing.assert_allclose(c.beta_, r.beta_, atol=1e-6)
    np.testing.assert_allclose(c.beta_, c.alpha_ * y, atol=1e-12)
    assert abs(c.intercept_ - r.intercept_) <= 1e-6


@pytest.mark.parametrize("seed", SEEDS)
def test_lssvr_without_bias_equals_gp_and_sklearn_kernel_ridge(seed):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF as GPRBF
    from sklearn.kernel_ridge import KernelRidge as SKKR

    X, _, t = _data(seed)
    C, g = 4.0, 0.4
    m = LSSVR(C=C, gamma=g, fit_intercept=False).fit(X, t, backend="cvxpy")
    Xt = np.random.default_rng(seed + 5).normal(size=(15, X.shape[1]))
    gp = GaussianProcessRegressor(GPRBF(length_scale=np.sqrt(1 / (2 * g))), alpha=1 / C,
                                  optimizer=None).fit(X, t)
    sk = SKKR(alpha=1 / C, kernel="rbf", gamma=g).fit(X, t)
    np.testing.assert_allclose(m.predict(Xt), gp.predict(Xt), atol=1e-6)
    np.testing.assert_allclose(m.predict(Xt), sk.predict(Xt), atol=1e-6)


def test_two_spirals_separated():
    """Suykens Fig. 3.2: RBF LS-SVM classifier separates the two-spirals training set."""
    # 200 points, unstandardised as in the text; the KKT direct solve is instantaneous
    X, y = load_dataset("two_spirals", standardize=False)
    m = LSSVC(C=1.0, kernel="rbf", gamma=1.0)  # Suykens: gamma = 1, sigma^2 = 1
    sol = kkt_adapter.solve(m.dual(X, y))
    data = m._prepare(X, y)
    rec = m._from_dual(data, sol)
    f = data.kmatvec(rec.beta) + rec.b
    assert np.all(np.sign(f) == data.y)
    # independent reference (issue 27): the bordered system [[0, y^T], [y, Q + I/C]] [b; a]
    # = [0; 1] built here with scikit-learn's rbf_kernel and solved by numpy's LU
    from sklearn.metrics.pairwise import rbf_kernel
    N = len(y)
    yy = data.y
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = A[1:, 0] = yy
    A[1:, 1:] = np.outer(yy, yy) * rbf_kernel(X, gamma=1.0) + np.eye(N) / 1.0
    z = np.linalg.solve(A, np.r_[0.0, np.ones(N)])
    b, a = z[0], z[1:]
    np.testing.assert_allclose(sol.values["alpha"], a, atol=1e-8 * max(1, np.abs(a).max()))
    assert rec.b == pytest.approx(b, abs=1e-8 * max(1.0, abs(b)))


def test_noisy_sinc_fits():
    X, y = load_dataset("sinc", standardize=False)  # x in [-10, 10], noise sd 0.1
    rng = np.random.default_rng(0)
    idx = rng.choice(len(y), 80, replace=False)
    X, y = X[idx], y[idx]
    m = LSSVR(C=10.0, kernel="rbf", gamma=0.1).fit(X, y, backend="cvxpy")
    xs = np.linspace(X.min(), X.max(), 200)[:, None]
    truth = np.sinc(xs[:, 0] / np.pi)
    noise_sd = np.std(y - np.sinc(X[:, 0] / np.pi))
    rmse = np.sqrt(np.mean((m.predict(xs) - truth) ** 2))
    assert rmse < noise_sd


def test_bad_input():
    X, y, _ = _data(0)
    with pytest.raises(ValueError, match="targets"):
        LSSVC(targets="bogus").dual(X, y)
    with pytest.raises(ValueError, match="targets"):
        LSSVC(targets=(1.0, -1.0)).dual(X, y)
    with pytest.raises(TypeError, match="C"):
        LSSVR(C="a").dual(X, y)
    with pytest.raises(ValueError, match="kkt_system"):
        kkt_adapter.solve(LSSVC().primal(X, y))
    with pytest.raises(ValueError, match="method"):
        kkt_adapter.solve(LSSVC().dual(X, y), method="lu")


def test_rendering():
    X, y, _ = _data(0, n=10)
    m = LSSVC(C=2.0)
    assert "= 1 - e_i" in str(m.primal(X, y))
    assert "yᵀα = 0" in str(m.dual(X, y))
    assert "α_i" in str(m.kkt(X, y))
    assert m.dual(X, y).to_latex()
