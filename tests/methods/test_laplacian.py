"""LapRLS / LapSVC: primal vs dual (CVXPY), closed form, KKT adapter, graph Laplacian,
reduction to kernel ridge."""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge as SKKernelRidge
from sklearn.neighbors import NearestNeighbors

from primaldual.backends.linsys import adapter as kkt_adapter
from primaldual.methods.laplacian import LapRLS, LapSVC, graph_laplacian, unlabelled_mask
from primaldual.methods.ridge import KernelRidge
from primaldual.model.structure import box_qp_of
from primaldual.testing import assert_forms_agree

SEEDS = [0, 1, 2]


def _data(seed, n=40, n_lab=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    yc = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1.0, -1.0)
    yr = np.sin(X[:, 0]) + 0.05 * rng.normal(size=n)
    lab = np.zeros(n, dtype=bool)
    lab[rng.choice(n, n_lab, replace=False)] = True
    if len(np.unique(yc[lab])) < 2:
        lab[np.argmax(yc)] = lab[np.argmin(yc)] = True
    return X, np.where(lab, yc, np.nan), np.where(lab, yr, np.nan), lab


def test_graph_laplacian():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    for weights in ("heat", "binary"):
        L = graph_laplacian(X, 4, weights).toarray()
        np.testing.assert_allclose(L, L.T)
        np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-12)
        assert np.linalg.eigvalsh(L).min() > -1e-10
    # binary weights: W_ij = 1 iff j in kNN(i) or i in kNN(j)
    nn = NearestNeighbors(n_neighbors=5).fit(X)
    _, idx = nn.kneighbors(X)
    A = np.zeros((30, 30))
    for i in range(30):
        A[i, idx[i, 1:]] = 1
    W = np.maximum(A, A.T)
    np.testing.assert_allclose(graph_laplacian(X, 4, "binary").toarray(), np.diag(W.sum(1)) - W)
    # heat weights with explicit t
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    Wh = W * np.exp(-D2 / 0.7)
    np.testing.assert_allclose(graph_laplacian(X, 4, "heat", 0.7).toarray(),
                               np.diag(Wh.sum(1)) - Wh, atol=1e-12)
    with pytest.raises(ValueError, match="weights"):
        graph_laplacian(X, 4, "cosine")
    with pytest.raises(ValueError, match="n_neighbors"):
        graph_laplacian(X, 0)


def test_unlabelled_mask():
    np.testing.assert_array_equal(unlabelled_mask(np.array([1.0, np.nan, -1.0])), [0, 1, 0])
    np.testing.assert_array_equal(unlabelled_mask(np.array(["a", None, "b"], dtype=object)),
                                  [0, 1, 0])


@pytest.mark.parametrize("seed", SEEDS)
def test_laprls_primal_dual_and_closed_form(seed):
    X, _, yr, lab = _data(seed)
    m = LapRLS(gamma_A=0.05, gamma_I=0.5 + seed, gamma=0.5, n_neighbors=5)
    assert_forms_agree(m, X, yr, output="predict")
    # Zhang's closed form alpha = (J K + gA l I + gI l/(u+l)^2 L K)^{-1} J y
    K, L, l_ = m.kernel_laplacian(X, yr)
    n = K.shape[0]
    J = np.diag(np.r_[np.ones(l_), np.zeros(n - l_)])
    a = np.linalg.solve(J @ K + 0.05 * l_ * np.eye(n) + m.gamma_I * l_ / n**2 * (L @ K),
                        np.r_[yr[lab], np.zeros(n - l_)])
    Xo = np.r_[X[lab], X[~lab]]
    Xt = np.random.default_rng(seed + 3).normal(size=(10, 2))
    np.testing.assert_allclose(m.predict(Xt), m.kernel_(Xt, Xo) @ a, atol=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_laprls_kkt_adapter(seed):
    X, _, yr, _ = _data(seed)
    D = LapRLS(gamma_A=0.05, gamma_I=1.0, gamma=0.5).dual(X, yr)
    assert kkt_adapter.accepts(D)
    s_k, s_c = kkt_adapter.solve(D), D.solve(backend="cvxpy")
    np.testing.assert_allclose(s_k.values["beta"], s_c.values["beta"], atol=1e-6)
    assert s_k.info["kkt_residual"] <= 1e-10


@pytest.mark.parametrize("seed", SEEDS)
def test_laprls_reduces_to_kernel_ridge(seed):
    X, _, yr, lab = _data(seed)
    Xl, yl = X[lab], yr[lab]
    gA, l_ = 0.03, lab.sum()
    m = LapRLS(gamma_A=gA, gamma_I=0.0, gamma=0.5).fit(Xl, yl, backend="cvxpy")
    kr = KernelRidge(C=1.0 / (gA * l_), gamma=0.5).fit(Xl, yl, backend="cvxpy")
    sk = SKKernelRidge(alpha=gA * l_, kernel="rbf", gamma=0.5).fit(Xl, yl)
    Xt = np.random.default_rng(seed).normal(size=(10, 2))
    np.testing.assert_allclose(m.predict(Xt), kr.predict(Xt), atol=1e-6)
    np.testing.assert_allclose(m.predict(Xt), sk.predict(Xt), atol=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_lapsvc_primal_dual(seed):
    X, yc, _, lab = _data(seed)
    m = LapSVC(gamma_A=0.05, gamma_I=0.5 + seed, gamma=0.5, graph_weights="binary")
    cd = assert_forms_agree(m, X, yc, 1e-6, output_tol=1e-5)
    assert set(m.predict(X)) <= {-1.0, 1.0}
    # the dual has the box-QP structure with a dense matrix (detected)
    D = m.dual(X, yc)
    bq = box_qp_of(D)
    assert bq.Q.matrix is not None and np.allclose(bq.C, 1.0 / lab.sum())
    # dual value = primal value (box QP objective in min form is -D)
    assert abs(-bq.objective(m.dual_beta_) - cd.dual_objective) <= 1e-8


def test_lapsvc_uses_unlabelled_points():
    """Two moons with 1 label per moon: the graph term carries the labels along the manifold."""
    from sklearn.datasets import make_moons
    X, y = make_moons(80, noise=0.05, random_state=0)
    ys = np.full(80, np.nan)
    for c in (0, 1):
        ys[np.flatnonzero(y == c)[0]] = c
    semi = LapSVC(gamma_A=1e-4, gamma_I=10.0, gamma=5.0).fit(X, ys, backend="cvxpy")
    sup = LapSVC(gamma_A=1e-4, gamma_I=0.0, gamma=5.0).fit(X, ys, backend="cvxpy")
    assert semi.score(X, y) >= 0.95 > sup.score(X, y)


def test_bad_input():
    X, yc, yr, _ = _data(0)
    with pytest.raises(ValueError, match="gamma_A"):
        LapRLS(gamma_A=0.0).fit(X, yr)
    with pytest.raises(ValueError, match="gamma_I"):
        LapRLS(gamma_I=-1.0).fit(X, yr)
    with pytest.raises(ValueError, match="labelled"):
        LapRLS().fit(X, np.full(len(X), np.nan))
    with pytest.raises(ValueError, match="2 classes"):
        LapSVC().fit(X, np.where(np.isnan(yc), np.nan, 1.0))
