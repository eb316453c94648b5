"""One audit rule for every road from a problem to a certified model: the catalogue's binary
fit, the one-vs-one pairs of a multiclass fit and a user's Variant all clip ``tol`` to
``[1e-6, 1e-2]`` (:func:`primaldual.certificate.audit_tolerance`), so a loose ``tol`` never
turns a large gap into ``"optimal"``."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd
from primaldual.certificate import AUDIT_TOL_MAX, AUDIT_TOL_MIN, audit_tolerance
from primaldual.solution import InaccurateSolutionWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "methods"))
from variant_specs import placeholder_specs  # noqa: E402


def _cap_holds(cert, status):
    """Nothing reported optimal with a gap or residual above the cap."""
    if status == "optimal":
        assert abs(cert.relative_gap) <= AUDIT_TOL_MAX
        assert cert.max_kkt_residual <= AUDIT_TOL_MAX * max(1.0, abs(cert.primal_objective))


def test_rule_clips_and_defaults():
    assert audit_tolerance(10) == AUDIT_TOL_MAX
    assert audit_tolerance(1e-12) == AUDIT_TOL_MIN
    assert audit_tolerance(1e-4) == 1e-4
    for bad in (None, "x", float("nan"), -1.0, 0.0, float("inf")):
        assert audit_tolerance(bad) == 1e-3


@pytest.mark.parametrize("tol", [1.0, 10.0])
def test_variant_one_class_loose_tol_is_not_optimal(tol):
    (oc, dec), _ = placeholder_specs()
    X = np.random.default_rng(0).standard_normal((200, 3))
    m = pd.Variant(oc, decision=dec, task="novelty", kernel="rbf", gamma=0.5, nu=0.1, tol=tol)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.fit(X)
    cert = m.certificate_
    _cap_holds(cert, m.status_)
    if abs(cert.relative_gap) > AUDIT_TOL_MAX:
        assert m.status_ == "inaccurate"
        assert any(issubclass(x.category, InaccurateSolutionWarning) for x in w)


@pytest.mark.parametrize("tol", [1.0, 10.0])
def test_catalogue_binary_loose_tol_is_not_optimal(tol):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 2))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(200) > 0, 1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = pd.CSVC(C=10.0, gamma=0.5, tol=tol).fit(X, y)
    _cap_holds(m.certificate_, m.status_)


@pytest.mark.parametrize("tol", [1.0, 10.0])
def test_one_vs_one_pairs_loose_tol_is_not_optimal(tol):
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = pd.CSVC(C=10.0, gamma=0.5, tol=tol).fit(X, y)
    for est in m.estimators_:
        _cap_holds(est.certificate_, est.status_)
