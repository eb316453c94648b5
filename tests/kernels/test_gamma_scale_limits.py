"""gamma='scale' = 1 / (n_features X.var()) at the edges of float64: constant X keeps
scikit-learn's 1.0; a variance that overflows or underflows is a NumericalTroubleError in
words (never gamma 0 or inf, never a numpy RuntimeWarning)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.exceptions import NumericalTroubleError
from primaldual.kernels import make_kernel
from primaldual.kernels.factory import resolve_gamma


@pytest.mark.parametrize("sparse", [False, True])
def test_constant_x_is_gamma_one(sparse):
    X = np.full((5, 2), 3.0)
    assert resolve_gamma("scale", sp.csr_matrix(X) if sparse else X) == 1.0
    Z = np.zeros((5, 2))
    assert resolve_gamma("scale", sp.csr_matrix(Z) if sparse else Z) == 1.0


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("scale, word", [(1e-170, "underflows"), (1e-160, "underflows"),
                                         (1e308, "overflows")])
def test_a_variance_out_of_range_is_numerical_trouble(sparse, scale, word):
    X = np.array([[1.0, -1.7], [-1.0, 1.0], [1.5, 0.3]]) * scale
    A = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no numpy RuntimeWarning either
        with pytest.raises(NumericalTroubleError, match=f"X.var\\(\\) {word}"):
            make_kernel("rbf", gamma="scale", X=A)


def test_a_tiny_but_representable_variance_still_resolves():
    X = np.array([[1.0, -1.7], [-1.0, 1.0], [1.5, 0.3]]) * 1e-150
    g = resolve_gamma("scale", X)
    assert np.isfinite(g) and g == pytest.approx(1.0 / (2 * X.var()))
