"""Kernel PCA and kernel PLS (primaldual.decomposition) against scikit-learn."""

import numpy as np
import pytest
from sklearn.cross_decomposition import PLSRegression
from sklearn.datasets import load_iris, make_circles, make_moons
from sklearn.decomposition import KernelPCA as SKKernelPCA
from sklearn.utils.estimator_checks import parametrize_with_checks

import primaldual as pd
from primaldual.decomposition import KernelPCADerivation, center_gram

DATASETS = {
    "moons": lambda: make_moons(120, noise=0.1, random_state=0)[0],
    "circles": lambda: make_circles(100, noise=0.05, factor=0.3, random_state=0)[0],
    "iris": lambda: load_iris(return_X_y=True)[0],
}
KERNELS = [("rbf", {"gamma": 2.0}), ("poly", {"gamma": 0.5, "degree": 3, "coef0": 1.0})]


def _match_signs(A, B):
    return B * np.sign(np.sum(A * B, axis=0))


@pytest.mark.parametrize("name", list(DATASETS))
@pytest.mark.parametrize("kernel,kw", KERNELS)
def test_kernel_pca_equals_sklearn(name, kernel, kw):
    X = DATASETS[name]()
    ref = SKKernelPCA(n_components=4, kernel=kernel, eigen_solver="dense",
                      fit_inverse_transform=True, **kw).fit(X)
    m = pd.KernelPCA(n_components=4, kernel=kernel, fit_inverse_transform=True, **kw).fit(X)
    lam = ref.eigenvalues_
    assert np.max(np.abs(m.eigenvalues_ - lam)) <= 1e-8 * lam[0]
    Xt = X[:25] + 0.01
    Zr, Z = ref.transform(Xt), m.transform(Xt)
    assert np.max(np.abs(Zr - _match_signs(Zr, Z))) <= 1e-8 * max(1.0, np.abs(Zr).max())
    Fr, F = ref.fit_transform(X), m.fit_transform(X)
    assert np.max(np.abs(Fr - _match_signs(Fr, F))) <= 1e-8 * max(1.0, np.abs(Fr).max())
    # pre-images by the same kernel-ridge route (the cubic kernel on scores ~1e2 makes that
    # system too ill-conditioned for a tight comparison: rbf only)
    if kernel == "rbf":
        assert np.allclose(m.inverse_transform(Z), ref.inverse_transform(Zr), atol=1e-6)
    cert = m.certificate_
    assert cert.status == "optimal" and cert.kkt["eigen_residual"] < 1e-10
    assert abs(cert.relative_gap) < 1e-10
    assert np.allclose(m.explained_variance_ratio_, lam / np.trace(center_gram(
        m.kernel_(X))), rtol=1e-10)


def test_kernel_pca_linear_is_pca():
    X = load_iris(return_X_y=True)[0]
    from sklearn.decomposition import PCA
    Z = pd.KernelPCA(n_components=3, kernel="linear").fit_transform(X)
    Zp = PCA(3).fit_transform(X)
    assert np.allclose(np.abs(Z), np.abs(Zp), atol=1e-8)


def test_kernel_pca_derivation_prints_and_checks():
    X = DATASETS["moons"]()[:30]
    m = pd.KernelPCA(n_components=2, kernel="rbf", gamma=1.0)
    P = m.primal(X)
    text = str(P)
    assert "maximize" in text and "‖w‖²" in text
    kkt = str(m.kkt(X))
    assert "α_i" in kkt and "C e_i - α_i = 0" in kkt
    D = m.dual(X)
    assert isinstance(D, KernelPCADerivation)
    s = str(D)
    assert "Ω_c α = λ α" in s and "Lagrangian" in s
    assert r"\Omega_c \alpha = \lambda \alpha" in D.to_latex()
    cert = m.check(X, n_components=3)
    assert cert.status == "optimal"
    assert cert.kkt["eigen_residual"] < 1e-10
    assert cert.kkt["stationarity[e]"] < 1e-8
    # a wrong eigenvalue fails the check: the certificate can fail
    lam, U = D.solve(1)
    assert D.residual(1.1 * lam[0], U[:, 0]) > 1e-3


def test_kernel_pca_nystrom_full_rank_is_exact():
    X = DATASETS["circles"]()
    ref = pd.KernelPCA(n_components=3, kernel="rbf", gamma=1.0).fit(X)
    m = pd.KernelPCA(n_components=3, kernel="rbf", gamma=1.0, rank=X.shape[0],
                     random_state=0).fit(X)
    assert np.allclose(m.eigenvalues_, ref.eigenvalues_, rtol=1e-8)
    Z, Zr = m.transform(X[:10]), ref.transform(X[:10])
    assert np.allclose(_match_signs(Zr, Z), Zr, atol=1e-7)
    assert m.certificate_.extra["factor relative trace error"] < 1e-8


def test_kernel_pca_auto_never_dense_above_the_limit(monkeypatch):
    from primaldual.decomposition import kpca
    X = DATASETS["moons"]()
    ref = pd.KernelPCA(n_components=3, kernel="rbf", gamma=2.0).fit(X)
    assert ref.solver_ == "dense"
    monkeypatch.setattr(kpca, "DENSE_LIMIT", 50)
    m = pd.KernelPCA(n_components=3, kernel="rbf", gamma=2.0, random_state=0).fit(X)
    assert m.solver_ == "arpack"
    assert np.allclose(m.eigenvalues_, ref.eigenvalues_, rtol=1e-10)
    f = pd.KernelPCA(n_components=3, kernel="rbf", gamma=2.0, rank=60, random_state=0).fit(X)
    assert f.solver_ == "nystrom+arpack" and f.certificate_.kkt["eigen_residual"] < 1e-10


@pytest.mark.parametrize("solver", ["arpack", "randomized"])
def test_kernel_pca_iterative_solvers(solver):
    X = DATASETS["moons"]()
    ref = pd.KernelPCA(n_components=2, kernel="rbf", gamma=2.0).fit(X)
    m = pd.KernelPCA(n_components=2, kernel="rbf", gamma=2.0, eigen_solver=solver,
                     random_state=0).fit(X)
    assert np.allclose(m.eigenvalues_, ref.eigenvalues_, rtol=1e-6)


def test_kernel_pca_bad_arguments():
    X = DATASETS["moons"]()
    with pytest.raises(ValueError, match="n_components"):
        pd.KernelPCA(n_components=0).fit(X)
    with pytest.raises(ValueError, match="eigen_solver"):
        pd.KernelPCA(eigen_solver="lobpcg").fit(X)
    with pytest.raises(ValueError, match="rank"):
        pd.KernelPCA(rank=0).fit(X)
    with pytest.raises(ValueError, match="fit_inverse_transform"):
        pd.KernelPCA(n_components=2).fit(X).inverse_transform(np.zeros((1, 2)))


@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("n_targets", [1, 3])
def test_kernel_pls_linear_equals_sklearn(scale, n_targets):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 6))
    Y = X @ rng.standard_normal((6, 3)) + 0.3 * rng.standard_normal((60, 3))
    y = Y[:, 0] if n_targets == 1 else Y
    Xt = rng.standard_normal((15, 6))
    for nc in (1, 3):
        ref = PLSRegression(nc, scale=scale, tol=1e-20, max_iter=5000).fit(X, y)
        m = pd.KernelPLSRegression(nc, kernel="linear", scale=scale).fit(X, y)
        Pr, P = ref.predict(Xt), m.predict(Xt)
        assert P.shape == Pr.shape
        assert np.max(np.abs(P - Pr)) <= 1e-8


def test_kernel_pls_rbf_fits_nonlinear():
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, (80, 1))
    y = np.sin(X[:, 0])
    m = pd.KernelPLSRegression(n_components=6, kernel="rbf", gamma=0.5).fit(X, y)
    assert m.score(X, y) > 0.99
    lin = pd.KernelPLSRegression(n_components=1, kernel="linear").fit(X, y)
    assert lin.score(X, y) < m.score(X, y)
    # unit, mutually orthogonal x-scores (deflation)
    T = m.x_scores_
    assert np.allclose(T.T @ T, np.eye(T.shape[1]), atol=1e-8)


@parametrize_with_checks([pd.KernelPCA(n_components=2), pd.KernelPLSRegression(n_components=1),
                          pd.EnclosingBall()])
def test_sklearn_conformance(estimator, check):
    check(estimator)
