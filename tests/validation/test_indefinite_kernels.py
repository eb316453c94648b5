"""An indefinite kernel is never certified optimal.

The oracle here is the primal itself: with an eigenvalue ``lambda_min < 0`` of ``K`` the
regularised primal ``1/2 beta' K beta + C sum hinge`` decreases without bound along the
eigenvector (the quadratic term is ``lambda_min t^2 / 2``, the hinge grows only like ``|t|``),
so no point of it is optimal whatever the solver reports.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual as pd
from primaldual.exceptions import (
    IndefiniteKernelWarning,
    NumericalTroubleError,
    SingularKKTError,
)
from primaldual.kernels import Polynomial
from primaldual.validation import indefinite_eigenvalue


def _data(n: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1, -1)


def _primal_along(K, y, C, beta, b, v, t):
    bb = beta + t * v
    f = K @ bb + b
    return 0.5 * bb @ K @ bb + C * np.maximum(0.0, 1.0 - y * f).sum()


def _fit(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return {w.category for w in caught}


POLY = dict(kernel="poly", degree=2, coef0=-1.0, gamma=0.5)


def test_the_primal_of_the_poly_example_is_unbounded_below():
    X, y = _data()
    K = (0.5 * X @ X.T - 1.0) ** 2
    lam, V = np.linalg.eigh(K)
    assert lam[0] < -1.0
    m = pd.CSVC(C=10.0, **POLY)
    cats = _fit(m, X, y)
    p0 = _primal_along(K, y, 10.0, m.beta_, m.b_, V[:, 0], 0.0)
    assert _primal_along(K, y, 10.0, m.beta_, m.b_, V[:, 0], 100.0) < p0 - 1.0
    assert m.certificate_.status != "optimal"
    assert IndefiniteKernelWarning in cats


@pytest.mark.parametrize("make", [
    lambda: pd.CSVC(C=10.0, **POLY), lambda: pd.L2SVC(C=10.0, **POLY),
    lambda: pd.NuSVC(nu=0.3, **POLY), lambda: pd.LapSVC(kernel="sigmoid", gamma=0.5),
    lambda: pd.LapRLS(kernel="sigmoid", gamma=0.5)])
def test_classifiers_with_an_indefinite_gram_warn_and_are_not_optimal(make):
    X, y = _data()
    est = make()
    try:
        cats = _fit(est, X, y)
    except (NumericalTroubleError, SingularKKTError):  # a library refusal is honest too
        assert not hasattr(est, "certificate_")
        return
    assert IndefiniteKernelWarning in cats
    assert est.certificate_.status != "optimal"


@pytest.mark.parametrize("make", [lambda: pd.EpsilonSVR(C=10.0, **POLY),
                                  lambda: pd.NuSVR(C=10.0, **POLY)])
def test_regressors_with_an_indefinite_gram_warn_and_are_not_optimal(make):
    X, _ = _data()
    est = make()
    cats = _fit(est, X, X[:, 1])
    assert IndefiniteKernelWarning in cats
    assert est.certificate_.status != "optimal"


def test_multiclass_pairs_with_an_indefinite_gram_are_not_optimal():
    X, _ = _data()
    y = np.random.default_rng(4).integers(0, 3, X.shape[0])
    m = pd.CSVC(C=10.0, **POLY)
    cats = _fit(m, X, y)
    assert IndefiniteKernelWarning in cats
    assert all(c.status != "optimal" for c in m.certificates_)


def test_psd_kernels_cost_nothing_and_stay_optimal():
    X, y = _data()
    assert Polynomial(degree=2, gamma=0.5, coef0=1.0).psd
    assert not Polynomial(degree=2, gamma=0.5, coef0=-1.0).psd
    assert indefinite_eigenvalue(pd.kernels.RBF(gamma=0.5), X) is None
    m = pd.CSVC(C=10.0, kernel="poly", degree=2, coef0=1.0, gamma=0.5)
    cats = _fit(m, X, y)
    assert m.certificate_.status == "optimal" and IndefiniteKernelWarning not in cats


def test_a_negative_coef0_that_happens_to_be_psd_on_the_data_is_not_downgraded():
    # (x'z - 0)^1 with coef0 = -0.0 is the linear kernel; a tiny negative coef0 on data whose
    # Gram stays PSD must not be called indefinite
    X, y = _data()
    k = Polynomial(degree=2, gamma=1.0, coef0=-1e-12)
    assert indefinite_eigenvalue(k, X) is None
