"""Issue 31: the RBF kernel columns of :class:`NystromGrowth` (``form_V=False``) in one compiled
pass (``kernels.compiled.rbf_finish``): the kernel values from one GEMM's cross products and
their float32 copy written in the same sweep.

The reference is scikit-learn's ``rbf_kernel`` (independent of the package); the float32 copy
must be exactly numpy's rounding of the float64 columns, and the columns must not depend on
how many threads computed them.
"""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import primaldual.kernels.growth as fac
from primaldual.kernels import RBF, NystromGrowth
from primaldual.kernels.compiled import rbf_finish


@pytest.mark.parametrize("tile", [1, 7, 512])
def test_rbf_finish_is_sklearns_rbf(tile):
    rng = np.random.default_rng(tile)
    X = rng.normal(size=(1000, 6)) * np.array([1.0, 2.0, 0.5, 3.0, 1.0, 0.1])
    Z = np.vstack([X[:5], rng.normal(size=(20, 6))])  # identical rows: distance exactly 0
    gamma = 0.2
    G = X @ Z.T  # the caller's layout: G[j, i] = z_j . x_i, C-contiguous
    G = np.ascontiguousarray(G.T)
    out32 = np.full((1000, 40), -1.0, dtype=np.float32)  # rows of stride 40, columns 3..27
    rbf_finish(G, np.einsum("ij,ij->i", Z, Z), np.einsum("ij,ij->i", X, X), gamma,
               out32[:, 3:28], True, tile)
    ref = rbf_kernel(X, Z, gamma=gamma)
    # the exponent as numpy's passes form it, exp to ~1 ulp: values in (0, 1]
    np.testing.assert_allclose(G.T, ref, rtol=4e-16, atol=4e-16)
    assert np.all(G <= 1.0) and np.all(G > 0.0)
    np.testing.assert_array_equal(out32[:, 3:28], G.T.astype(np.float32))
    assert np.all(out32[:, :3] == -1.0) and np.all(out32[:, 28:] == -1.0)


def test_rbf_finish_far_points_and_no_copy():
    X = np.array([[0.0, 0.0], [30.0, 0.0], [1e3, 0.0]])
    Z = np.array([[0.0, 0.0]])
    G = np.ascontiguousarray((X @ Z.T).T)
    rbf_finish(G, np.zeros(1), np.einsum("ij,ij->i", X, X), 1.0,
               np.empty((0, 0), dtype=np.float32), False)
    # exp(-900) and exp(-1e6) are below 1e-300: absolute error < 1e-300
    np.testing.assert_allclose(G[0], [1.0, 0.0, 0.0], rtol=0, atol=1e-300)


@pytest.mark.parametrize("cpus", [1, 2])
def test_growth_columns_fused_equal_sklearn(monkeypatch, cpus):
    monkeypatch.setattr(fac, "_FUSED_RBF_MIN", 0)
    monkeypatch.setattr(fac, "free_cpus", lambda: cpus)
    monkeypatch.setattr(fac, "_GROW_CHUNK", 1)  # threads whenever cpus > 1
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 5))
    gamma = 0.4
    g = NystromGrowth(RBF(gamma=gamma), X, random_state=0, capacity=400, form_V=False,
                      float32_copy=True)
    for m in (100, 300, 700):  # 700 > capacity: the buffers grow; 400 new: two 256-slices
        F = g.factor(m)
        assert g._fused_rbf(X[:2], 2)
        C = g.C
        # scikit-learn forms ||x - z||^2 with its own GEMM: both routes are ~4e-16 from it
        np.testing.assert_allclose(C, rbf_kernel(X, X[F.basis_index], gamma=gamma),
                                   rtol=0, atol=1e-15)
        np.testing.assert_array_equal(g.C32[:, :g.n_landmarks], C.astype(np.float32))
    # the same bits as one thread computes (the slices are set by b alone)
    monkeypatch.setattr(fac, "free_cpus", lambda: 1)
    one = NystromGrowth(RBF(gamma=gamma), X, random_state=0, capacity=400, form_V=False,
                        float32_copy=True)
    for m in (100, 300, 700):
        one.factor(m)
    np.testing.assert_array_equal(one.C, C)
    # against the numpy passes of RBF._block: the same exponent, exp within an ulp or two
    monkeypatch.setattr(fac, "_FUSED_RBF_MIN", 10**12)
    ref = NystromGrowth(RBF(gamma=gamma), X, random_state=0, capacity=400, form_V=False,
                        float32_copy=True)
    for m in (100, 300, 700):
        ref.factor(m)
    assert not ref._fused_rbf(X[:2], 2)
    np.testing.assert_allclose(C, ref.C, rtol=4.5e-16, atol=0)


def test_fused_pass_only_for_builtin_rbf_with_an_accurate_gemm(monkeypatch):
    monkeypatch.setattr(fac, "_FUSED_RBF_MIN", 0)
    X = np.random.default_rng(0).normal(size=(50, 3))

    class MyRBF(RBF):
        pass

    assert NystromGrowth(RBF(gamma=1.0), X, form_V=False)._fused_rbf(X[:4], 4)
    assert not NystromGrowth(MyRBF(gamma=1.0), X, form_V=False)._fused_rbf(X[:4], 4)
    # features of 1e6 and gamma 1e5: the GEMM form of ||x - z||^2 is not accurate enough, the
    # exact differences are used (k(x, x) = 1)
    Xb = X * 1e6
    g = NystromGrowth(RBF(gamma=1e5), Xb, random_state=0, form_V=False, float32_copy=True)
    assert not g._fused_rbf(Xb[:4], 4)
    F = g.factor(10)
    np.testing.assert_array_equal(g.C[F.basis_index, np.arange(10)], 1.0)
    monkeypatch.setattr(fac, "_FUSED_RBF_MIN", 10**9)
    assert not NystromGrowth(RBF(gamma=1.0), X, form_V=False)._fused_rbf(X[:4], 4)
