"""Proximal SVC: primal vs dual (CVXPY), KKT adapter, b = y^T alpha."""

import numpy as np
import pytest

from primaldual.backends.linsys import adapter as kkt_adapter
from primaldual.methods.proximal import ProximalSVC
from primaldual.testing import assert_forms_agree

SEEDS = [0, 1, 2]


def _data(seed, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] - X[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_primal_dual_agree(seed, kernel):
    X, y = _data(seed)
    m = ProximalSVC(C=1.0 + seed, kernel=kernel, gamma=0.4)
    assert_forms_agree(m, X, y)
    # PSVM: b = y^T alpha (stationarity in the regularised bias)
    assert abs(m.intercept_ - y @ m.alpha_) <= 1e-6


@pytest.mark.parametrize("seed", SEEDS)
def test_kkt_adapter_and_linear_system(seed):
    X, y = _data(seed)
    m = ProximalSVC(C=2.0, gamma=0.5)
    D = m.dual(X, y)
    s_k, s_c = kkt_adapter.solve(D), D.solve(backend="cvxpy")
    np.testing.assert_allclose(s_k.values["alpha"], s_c.values["alpha"], atol=1e-6)
    assert s_k.info["kkt_residual"] <= 1e-10
    # (Q + y y^T + I/C) alpha = 1 by an independent dense solve
    K = m._prepare(X, y).gram()
    H = np.outer(y, y) * K + np.outer(y, y) + np.eye(len(y)) / 2.0
    np.testing.assert_allclose(s_k.values["alpha"], np.linalg.solve(H, np.ones(len(y))), atol=1e-8)
    ks = m.kkt_system(X, y)
    np.testing.assert_allclose(ks.matrix(), H, atol=1e-12)
    np.testing.assert_allclose(ks.rhs(), np.ones(len(y)))


def test_rendering():
    X, y = _data(0, n=8)
    m = ProximalSVC()
    assert "b²" in str(m.primal(X, y))
    assert "(yᵀα)²" in str(m.dual(X, y))
    assert "b = Σ_i α_i y_i" in str(m.kkt(X, y))
