"""The GEMM form of a small RBF ``K[:, S] v_S`` (issue 31, digits' pairs): against scikit-learn's
``rbf_kernel`` (an independent reference), and the cases it hands back to ``kernel_matvec``."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

pytest.importorskip("numba")

from primaldual.kernels import RBF, Polynomial, kernel_matvec  # noqa: E402
from primaldual.methods._fit import _small_block_matvec, _small_gemm_matvec  # noqa: E402


@pytest.mark.parametrize("n,d,m", [(360, 64, 40), (200, 30, 120), (80, 80, 60)])
def test_gemm_matvec_equals_reference(n, d, m):
    rng = np.random.default_rng(n + d + m)
    X = rng.uniform(0, 16, size=(n, d))
    S = np.sort(rng.choice(n, m, replace=False))
    v = rng.standard_normal(m)
    k = RBF(gamma=1.0 / (d * X.var()))
    # (this size takes the GEMM branch of _small_block_matvec)
    assert n * m * d > 1 << 18 and n * m <= 1 << 16
    got = _small_block_matvec(k, X, S, v)
    ref = rbf_kernel(X, X[S], gamma=k.gamma) @ v
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * np.abs(v).sum())
    # and the generic chunked product, to rounding
    np.testing.assert_allclose(got, kernel_matvec(k, X, v, columns=S), rtol=1e-13,
                               atol=1e-13 * np.abs(v).sum())


def test_gemm_matvec_declines():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 64))
    S = np.arange(0, 300, 5)
    v = rng.standard_normal(S.shape[0])
    # not RBF; rows not C-contiguous; the distances' cancellation guard (huge features)
    assert _small_gemm_matvec(Polynomial(degree=2), X, S, v) is None
    assert _small_gemm_matvec(RBF(gamma=0.1), np.asfortranarray(X), S, v) is None
    assert _small_gemm_matvec(RBF(gamma=1e5), X * 1e6, S, v) is None
    # too many entries for the small route: kernel_matvec's turn
    big = rng.standard_normal((1200, 64))
    assert _small_block_matvec(RBF(gamma=0.01), big, np.arange(0, 1200, 2),
                               rng.standard_normal(600)) is None
