"""Kernel ridge: primal vs dual, KKT adapter, equalities with scikit-learn KernelRidge, the GP
posterior mean/variance and LS-SVM regression without bias."""

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF as GPRBF
from sklearn.kernel_ridge import KernelRidge as SKKernelRidge

from primaldual.backends.linsys import adapter as kkt_adapter
from primaldual.methods.lssvm import LSSVR
from primaldual.methods.ridge import KernelRidge
from primaldual.testing import assert_forms_agree

SEEDS = [0, 1, 2]


def _data(seed, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    t = np.cos(X[:, 0]) + X[:, 1] ** 2 / 4 + 0.1 * rng.normal(size=n)
    return X, t, rng.normal(size=(12, 2))


@pytest.mark.parametrize("seed", SEEDS)
def test_primal_dual_agree(seed):
    X, t, _ = _data(seed)
    m = KernelRidge(C=2.0 + seed, gamma=0.7)
    assert_forms_agree(m, X, t, output="predict")
    assert m.intercept_ == 0.0


@pytest.mark.parametrize("seed", SEEDS)
def test_identities(seed):
    X, t, Xt = _data(seed)
    C, g = 3.0, 0.5
    kr = KernelRidge(C=C, gamma=g).fit(X, t, backend="cvxpy")
    ls = LSSVR(C=C, gamma=g, fit_intercept=False).fit(X, t, backend="cvxpy")
    sk = SKKernelRidge(alpha=1.0 / C, kernel="rbf", gamma=g).fit(X, t)
    gp = GaussianProcessRegressor(GPRBF(length_scale=np.sqrt(0.5 / g)), alpha=1.0 / C,
                                  optimizer=None).fit(X, t)
    f = kr.predict(Xt)
    np.testing.assert_allclose(f, ls.predict(Xt), atol=1e-6)
    np.testing.assert_allclose(f, sk.predict(Xt), atol=1e-6)
    mean, sd = gp.predict(Xt, return_std=True)
    np.testing.assert_allclose(f, mean, atol=1e-6)
    f2, sd2 = kr.predict(Xt, return_std=True)
    np.testing.assert_allclose(sd2, sd, atol=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", ["direct", "cg"])
def test_kkt_adapter(seed, method):
    X, t, _ = _data(seed)
    D = KernelRidge(C=2.0, gamma=0.5).dual(X, t)
    assert kkt_adapter.accepts(D)
    s_k, s_c = kkt_adapter.solve(D, method=method, tol=1e-12), D.solve(backend="cvxpy")
    np.testing.assert_allclose(s_k.values["alpha"], s_c.values["alpha"], atol=1e-6)
    assert s_k.multipliers == {}
    assert s_k.backend == "kkt" and s_k.n_iter >= 1


def test_rendering():
    X, t, _ = _data(0, n=8)
    m = KernelRidge()
    assert "+ e_i = y_i" in str(m.primal(X, t))
    assert "αᵀ(K + I/C)α" in str(m.dual(X, t))
    assert "fit_intercept" not in m.get_params()


def test_latent_and_predictive_variance_as_formulations_states():
    """`predict(return_std=True)` is the latent function's sd; Suykens (3.60), built by hand from
    C(x_k, x_l) = K(x_k, x_l) + delta_kl / gamma (his gamma is C), is that variance plus 1/C;
    docs/formulations.md section 11 says both."""
    from pathlib import Path

    X, t, Xt = _data(3)
    C, g = 4.0, 0.6
    _, sd = KernelRidge(C=C, gamma=g).fit(X, t).predict(Xt, return_std=True)

    def k(A, B):
        return np.exp(-g * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
    CN = k(X, X) + np.eye(len(X)) / C
    theta = k(X, Xt)
    nu = 1.0 + 1.0 / C                                  # C(x, x) = k(x, x) + 1/gamma
    var_y = nu - np.einsum("ij,ij->j", theta, np.linalg.solve(CN, theta))   # (3.60)
    np.testing.assert_allclose(sd ** 2, var_y - 1.0 / C, rtol=1e-8, atol=1e-12)
    sec = (Path(__file__).resolve().parents[2] / "docs" / "formulations.md").read_text()
    sec = " ".join(sec.split("## 11.")[1].split("## 12.")[0].split())
    assert r"\operatorname{var} f(x) = k(x, x) - k_x^T(K + I/C)^{-1}k_x" in sec
    assert r"\operatorname{var} y(x) = k(x, x) + 1/C - k_x^T(K + I/C)^{-1}k_x" in sec
    assert "latent" in sec and "(3.60)" in sec
