"""The kernels and the chunked kernel mat-vec on scipy sparse rows equal the dense ones."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import norm as sparse_norm

from primaldual.kernels import RBF, Linear, Polynomial, Sigmoid, kernel_matvec, make_kernel

KERNELS = [Linear(), RBF(gamma=0.4), Polynomial(degree=3, gamma=0.2, coef0=1.0),
           Sigmoid(gamma=0.1, coef0=-0.3)]


def _rows(n, d, seed, scale=1.0):
    X = sp.random(n, d, density=0.2, format="csr", random_state=seed)
    X.data = scale * (2.0 * X.data - 1.0)
    return X


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_blocks_diag_and_matvec_on_sparse_rows(kernel):
    X, Z = _rows(70, 30, 0), _rows(25, 30, 1)
    Xd, Zd = X.toarray(), Z.toarray()
    np.testing.assert_allclose(kernel(X, Z), kernel(Xd, Zd), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kernel(X.tocsc()), kernel(Xd), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kernel.diag(X), kernel.diag(Xd), rtol=1e-12, atol=1e-14)
    v = np.sin(np.arange(70.0))
    for chunk in (64, 1 << 18):  # chunked (symmetric and row blocks) and one block
        np.testing.assert_allclose(kernel_matvec(kernel, X, v, chunk_elements=chunk),
                                   kernel_matvec(kernel, Xd, v, chunk_elements=chunk),
                                   rtol=1e-11, atol=1e-12)
        S = np.arange(0, 25, 3)
        np.testing.assert_allclose(
            kernel_matvec(kernel, X, v[:S.size], columns=S, Z=Z, chunk_elements=chunk),
            kernel_matvec(kernel, Xd, v[:S.size], columns=S, Z=Zd, chunk_elements=chunk),
            rtol=1e-11, atol=1e-12)


def test_rbf_exact_distances_on_sparse_rows():
    """Large features and gamma: the block from the differences (no GEMM cancellation)."""
    X = _rows(12, 9, 2, scale=1e6)
    Z = X[:7].copy()
    Z.data += np.linspace(-20.0, 20.0, Z.data.size)  # near the rows of X: k(x, z) ~ 0.1-1
    k = RBF(gamma=1e-3)
    # (the GEMM form would lose ~eps * 1e12 in ||x - z||^2: the exact form is taken)
    from primaldual.kernels.functions import _GEMM_DIST_ERR, _PROFILE_TOL
    assert _GEMM_DIST_ERR * k.gamma * 2 * sparse_norm(X, axis=1).max() ** 2 > _PROFILE_TOL
    np.testing.assert_allclose(k(X, Z), k(X.toarray(), Z.toarray()), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(np.diag(k(X, X)), 1.0)


def test_gamma_scale_on_sparse_rows():
    X = _rows(50, 40, 4)
    a = make_kernel("rbf", "scale", X=X)
    b = make_kernel("rbf", "scale", X=X.toarray())
    assert a.gamma == pytest.approx(b.gamma, rel=1e-12)
