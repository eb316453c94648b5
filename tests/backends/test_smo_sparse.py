"""The compiled SMO core on sparse (CSR) rows: kernel values and columns equal the dense ones,
and ``smo_solve`` on sparse ``X`` returns the dense solve's solution (shrinking swaps row
extents in identity mode; SVR's index mode reads rows through ``dpos``)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.backends.smo import smo_solve
from primaldual.backends.smo.codes import _K_LINEAR, _K_POLY, _K_RBF, _K_SIGMOID
from primaldual.backends.smo.inputs import _NO_ROWS, _sparse_rows
from primaldual.kernels import RBF, Linear, Polynomial, Sigmoid

KCODES = [(_K_LINEAR, 1.0, 0.0, 1.0), (_K_RBF, 0.7, 0.0, 3.0), (_K_POLY, 0.3, 1.0, 3.0),
          (_K_SIGMOID, 0.2, -0.1, 3.0)]


def _X(n=60, d=37, density=0.2, seed=0):
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X.data = 2.0 * X.data - 1.0
    X[3] = 0.0  # an empty row
    X.eliminate_zeros()
    return X


def test_sparse_rows_layout():
    X = sp.csr_matrix(np.array([[0.0, 2.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 4.0, 0.0]]))
    X.indices[:2] = X.indices[:2][::-1].copy()  # unsorted columns in row 0
    X.data[:2] = X.data[:2][::-1].copy()
    X.has_sorted_indices = False
    Xptr, Xind, Xval, Xs, xsq = _sparse_rows(X)
    assert Xptr.dtype == Xind.dtype == np.int64 and Xptr.shape == (3, 2)
    np.testing.assert_array_equal(Xptr, [[0, 2], [2, 2], [2, 4]])
    np.testing.assert_array_equal(Xind, [1, 3, 0, 2])
    np.testing.assert_array_equal(Xval, [2.0, 1.0, 3.0, 4.0])
    np.testing.assert_array_equal(xsq, [5.0, 0.0, 25.0])


@pytest.mark.parametrize("kcode, gamma, coef0, degree", KCODES)
def test_compiled_sparse_kernel_columns_equal_dense(kcode, gamma, coef0, degree):
    from primaldual.backends.smo.columns import _kcol_serial, _kval

    X = _X()
    Xd = np.ascontiguousarray(X.toarray())
    xsq_d = np.einsum("ij,ij->i", Xd, Xd)
    Xptr, Xind, Xval, Xs, xsq = _sparse_rows(X)
    e2, ei = np.zeros((0, 0)), np.zeros(0, dtype=np.int64)
    n = X.shape[0]
    for r in (0, 3, 17, n - 1):
        col_d = np.zeros(n, dtype=np.float32)
        col_s = np.zeros(n, dtype=np.float32)
        col_m = np.zeros(n, dtype=np.float32)
        _kcol_serial(kcode, Xd, *_NO_ROWS, xsq_d, e2, ei, r, 0, n, col_d, gamma, coef0, degree)
        # scatter-gather (the scratch row Xs) and the merge of index lists (no scratch)
        _kcol_serial(kcode, e2, Xptr, Xind, Xval, Xs, xsq, e2, ei, r, 0, n, col_s, gamma,
                     coef0, degree)
        assert not Xs.any()  # the scratch row is left cleared
        _kcol_serial(kcode, e2, Xptr, Xind, Xval, np.zeros(0), xsq, e2, ei, r, 0, n, col_m,
                     gamma, coef0, degree)
        np.testing.assert_allclose(col_s, col_d, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(col_m, col_d, rtol=1e-6, atol=1e-7)
        for s in range(n):
            kd = _kval(kcode, Xd, *_NO_ROWS, xsq_d, e2, ei, r, s, gamma, coef0, degree)
            ks = _kval(kcode, e2, Xptr, Xind, Xval, Xs, xsq, e2, ei, r, s, gamma, coef0, degree)
            assert ks == pytest.approx(kd, rel=1e-12, abs=1e-14)


KERNELS = [Linear(), RBF(gamma=0.5), Polynomial(degree=2, gamma=0.5, coef0=1.0),
           Sigmoid(gamma=0.05, coef0=0.0)]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_smo_solve_sparse_equals_dense(kernel, fmt):
    X = _X(n=300, d=40, density=0.15, seed=1)
    s = np.asarray(X.sum(axis=1)).ravel()
    y = np.where(s > np.median(s), 1.0, -1.0)
    kw = dict(sign=y, tol=1e-6, dense=False, shrinking=True)
    rd = smo_solve(X.toarray(), kernel, -np.ones(300), 1.0, **kw)
    rs = smo_solve(X.asformat(fmt), kernel, -np.ones(300), 1.0, **kw)
    assert rs.route == "numba"
    np.testing.assert_allclose(rs.alpha, rd.alpha, rtol=1e-10, atol=1e-12)
    assert rs.b == pytest.approx(rd.b, rel=1e-10, abs=1e-12)
    assert rs.objective == pytest.approx(rd.objective, rel=1e-10)


def test_smo_solve_sparse_index_mode_equals_dense():
    """epsilon-SVR's 2N variables over N rows (``index``): rows read through ``dpos``."""
    X = _X(n=120, d=30, density=0.2, seed=2)
    t = np.asarray(X.sum(axis=1)).ravel()
    n = X.shape[0]
    idx = np.r_[np.arange(n), np.arange(n)]
    sign = np.r_[np.ones(n), -np.ones(n)]
    p = np.r_[0.1 - t, 0.1 + t]
    kw = dict(sign=sign, index=idx, tol=1e-6, dense=False)
    rd = smo_solve(X.toarray(), RBF(gamma=0.3), p, 2.0, **kw)
    rs = smo_solve(X, RBF(gamma=0.3), p, 2.0, **kw)
    np.testing.assert_allclose(rs.alpha, rd.alpha, rtol=1e-10, atol=1e-12)
    assert rs.b == pytest.approx(rd.b, rel=1e-10, abs=1e-12)


def test_smo_solve_sparse_dense_route_equals_numba():
    """The numpy route (full kernel matrix) takes sparse rows through the kernels too."""
    X = _X(n=80, d=25, seed=3)
    s = np.asarray(X.sum(axis=1)).ravel()
    y = np.where(s > np.median(s), 1.0, -1.0)
    rn = smo_solve(X, RBF(gamma=0.5), -np.ones(80), 1.0, sign=y, tol=1e-8, dense=False)
    rd = smo_solve(X, RBF(gamma=0.5), -np.ones(80), 1.0, sign=y, tol=1e-8, dense=True)
    assert rd.route == "dense"
    np.testing.assert_allclose(rd.alpha, rn.alpha, rtol=1e-5, atol=1e-7)
