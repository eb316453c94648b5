"""One audit rule on every road: a fit is ``optimal`` only within ``audit_tolerance(tol)``.

``tol=1.0`` or ``tol=10`` lets a solver stop almost at once; the recomputed certificate then has
a relative gap far above the cap (1e-2), and every road -- the catalogue's binary fit, the
one-vs-one pairs of a multiclass fit, and a user's ``Variant`` -- must say ``inaccurate`` and
warn. The gap judged here is recomputed by the oracle from the predictor, not read from the
certificate alone.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual as pd
from primaldual._oracle import oracle_gap
from primaldual.model import FeatureVariable, N, Param, Problem, Variable, X, norm2, phi, vsum, x
from primaldual.solution import InaccurateSolutionWarning
from primaldual.validation import AUDIT_TOL_RANGE, audit_tolerance


def _one_class_variant(tol: float) -> pd.Variant:
    nu = Param("nu")
    w, rho, xi = FeatureVariable("w"), Variable("rho"), Variable("xi", N)
    spec = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                   [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "one-class SVM primal")
    return pd.Variant(spec, decision=w @ phi(x) - rho, kernel="rbf", gamma=0.5, nu=0.2, tol=tol)


def _fit(est, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(*args)
    return [w.category for w in caught]


@pytest.mark.parametrize("tol", [1.0, 10.0])
def test_variant_with_a_loose_tol_is_inaccurate_and_warns(tol):
    Z = np.random.default_rng(0).standard_normal((200, 2))
    oc = _one_class_variant(tol)
    cats = _fit(oc, Z)
    assert oc.certificate_.relative_gap > AUDIT_TOL_RANGE[1]
    assert oc.status_ == "inaccurate"
    assert InaccurateSolutionWarning in cats


def test_variant_with_the_default_tol_stays_optimal():
    Z = np.random.default_rng(1).standard_normal((200, 2))
    oc = _one_class_variant(1e-3)
    cats = _fit(oc, Z)
    assert oc.status_ == "optimal" and InaccurateSolutionWarning not in cats
    assert abs(oc.certificate_.relative_gap) <= audit_tolerance(1e-3)


@pytest.mark.parametrize("tol", [1.0, 10.0])
def test_catalogue_binary_with_a_loose_tol_is_never_optimal_off_the_cap(tol):
    rng = np.random.default_rng(2)
    Xd = rng.standard_normal((150, 3))
    y = np.where(Xd[:, 0] + 0.3 * rng.standard_normal(150) > 0, 1, -1)
    m = pd.CSVC(C=10.0, kernel="rbf", gamma=0.5, tol=tol)
    _fit(m, Xd, y)
    rep = oracle_gap(m, Xd, y)
    assert m.certificate_.status != "optimal" or abs(rep.relative_gap) <= AUDIT_TOL_RANGE[1]


@pytest.mark.parametrize("tol", [1.0, 10.0])
def test_one_vs_one_pairs_with_a_loose_tol_are_never_optimal_off_the_cap(tol):
    rng = np.random.default_rng(3)
    centres = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])
    Xd = np.vstack([c + 0.9 * rng.standard_normal((60, 2)) for c in centres])
    y = np.repeat([0, 1, 2], 60)
    m = pd.CSVC(C=10.0, kernel="rbf", gamma=0.5, tol=tol)
    _fit(m, Xd, y)
    certs = m.certificates_ if hasattr(m, "certificates_") else [m.certificate_]
    for c in certs:
        assert c.status != "optimal" or abs(c.relative_gap) <= AUDIT_TOL_RANGE[1]


@pytest.mark.parametrize("raw, expected", [(1e-9, 1e-6), (1e-4, 1e-4), (10.0, 1e-2),
                                           (None, 1e-3), ("x", 1e-3), (float("nan"), 1e-3),
                                           (-1.0, 1e-3)])
def test_audit_tolerance_is_the_clipped_tol(raw, expected):
    assert audit_tolerance(raw) == pytest.approx(expected)
