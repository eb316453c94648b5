"""Issue 31: the compiled core's RBF diagonal and squared row norms.

``k(x, x) = exp(-gamma (|x|^2 + |x|^2 - 2 x.x))`` is exactly 1 in exact arithmetic, and LIBSVM
computes exactly 1 (its ``x.x`` and ``|x|^2`` are one computation): the core's ``QD`` for RBF is
``1 + diag`` exactly. The squared row norms ``xsq`` come from a compiled pass
(``core.row_sq_norms``) and agree with numpy's to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

from primaldual.backends.smo.inputs import _NO_ROWS

core = pytest.importorskip("primaldual.backends.smo.core")
columns = pytest.importorskip("primaldual.backends.smo.columns")


@pytest.mark.parametrize("d", [1, 7, 64, 65])
def test_row_sq_norms_match_numpy(d):
    X = np.random.default_rng(d).standard_normal((257, d)) * 3.0
    got = core.row_sq_norms(X)
    ref = (X * X).sum(axis=1)
    np.testing.assert_allclose(got, ref, rtol=4 * d * np.finfo(float).eps, atol=0)
    Xi = np.round(X * 4.0)  # small integers: every order of summation is exact
    np.testing.assert_array_equal(core.row_sq_norms(Xi), (Xi * Xi).sum(axis=1))


def test_rbf_diagonal_is_one_plus_diag():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 9)) * 10.0  # large norms: x.x and |x|^2 round differently
    xsq = core.row_sq_norms(X)
    diag = rng.uniform(0.0, 2.0, 40)
    dpos = rng.permutation(40).astype(np.int64)
    E2, EI = np.zeros((0, 0)), np.zeros(0, dtype=np.int64)
    QD = np.empty(40)
    columns._diag_q(1, X, *_NO_ROWS, xsq, E2, EI, 0.3, 0.0, 3.0, dpos, diag, QD)
    np.testing.assert_array_equal(QD, 1.0 + diag)
    # other kernels: k(x, x) from the sums, as before (linear: |x|^2)
    columns._diag_q(0, X, *_NO_ROWS, xsq, E2, EI, 0.3, 0.0, 3.0, dpos, diag, QD)
    np.testing.assert_allclose(QD, (X * X).sum(axis=1)[dpos] + diag, rtol=1e-13)
