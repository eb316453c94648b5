"""A negative duality gap beyond round-off is never called optimal: the primal point every road
certifies carries the optimal slacks of the predictor (feasible by construction), and a gap
below round-off with an infeasible point is audited as inaccurate."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual as pd
from primaldual.certificate import Certificate, audit_negative_gap
from primaldual.exceptions import InaccurateSolutionWarning
from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum


def rank_svm(X, y, kernel, C):
    """RankSVM over the preference pairs ``y_i > y_j``: one slack per pair."""
    pairs = [(i, j) for i in range(len(y)) for j in range(len(y)) if y[i] > y[j]]
    I, J = np.array(pairs).T
    w = FeatureVariable("w", kernel, X)
    xi = Variable("xi", len(pairs), index="P")
    diff = phi(X).at(I, "i_p") - phi(X).at(J, "j_p")
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi),
                [(w @ diff >= 1 - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                "RankSVM primal")
    return P, w @ phi(X)


def _ranking_data(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 14))
    X = rng.normal(size=(n, 2))
    y = np.round(X @ [1.0, -0.5] + 0.5 * rng.normal(size=n)).astype(float)
    return X, y


@pytest.mark.parametrize("seed", [8, 16, 24, 33, 38, 39])
def test_ranking_variant_gap_is_never_negative_when_optimal(seed):
    # (before: SMO's upper-bound multipliers as slacks, violating the pair margins by ~1e-7
    # and a relative gap of -1.9e-8 reported optimal at tol=1e-6)
    X, y = _ranking_data(seed)
    for C in (0.1, 10.0, 100.0):
        v = pd.Variant(rank_svm, task="regression", kernel="rbf", gamma=0.5, C=C, tol=1e-6)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v.fit(X, y)
        cert = v.certificate_
        if v.status_ == "optimal":
            assert cert.relative_gap >= -1e-9, (seed, C, cert.relative_gap)
        # the slacks are the predictor's optimal ones: the pair margins hold exactly
        f = v.predict(X)
        pairs = [(i, j) for i in range(len(y)) for j in range(len(y)) if y[i] > y[j]]
        m = np.array([f[i] - f[j] for i, j in pairs])
        np.testing.assert_allclose(v.point_["xi"], np.maximum(0.0, 1.0 - m), atol=1e-9)
        assert cert.kkt["primal_feasibility[alpha]"] <= 1e-9


def test_negative_gap_with_an_infeasible_point_is_inaccurate():
    cert = Certificate(6.4881, 6.4881 + 1.1e-8 * 6.4881, -1.1e-8 * 6.4881, -1.1e-8,
                       {"primal_feasibility[alpha]": 1.4e-6, "stationarity[w]": 0.0})
    with pytest.warns(InaccurateSolutionWarning, match="negative duality gap"):
        assert audit_negative_gap(cert) == "inaccurate"
    # between feasible points a negative gap is rounding: kept
    ok = Certificate(1.0, 1.0 + 1e-8, -1e-8, -1e-8, {"primal_feasibility[alpha]": 0.0})
    assert audit_negative_gap(ok) == "optimal"
    # within round-off: kept
    small = Certificate(1.0, 1.0, -1e-12, -1e-12, {"primal_feasibility[alpha]": 1e-6})
    assert audit_negative_gap(small) == "optimal"


@pytest.mark.parametrize("three", [False, True])
def test_catalogue_and_pair_roads_certify_the_optimal_slacks(three):
    # the catalogue's binary fits and the one-vs-one pairs certify xi = max(0, 1 - y f): the
    # margins hold by construction and the gap is never negative beyond round-off
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1, 0)
    if three:
        y = np.where(y > 0, np.where(X[:, 1] > 0, 2, 1), 0)
    for C in (0.1, 10.0, 1000.0):
        m = pd.CSVC(C=C, gamma=1.0, tol=1e-6).fit(X, y)
        certs = list(m.certificates_) if getattr(m, "certificates_", None) else \
            [m.certificate_]
        for cert in certs:
            assert cert.relative_gap >= -1e-9 or cert.status != "optimal"
            pf = [v for k, v in cert.kkt.items() if k.startswith("primal_feasibility")]
            assert max(pf, default=0.0) <= 1e-12


def test_variant_one_class_gap_not_negative():
    from primaldual.model import N, Param, x
    from primaldual.model import X as Xp
    nu = Param("nu")
    w, rho, xi = FeatureVariable("w"), Variable("rho"), Variable("xi", N)
    oc = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                 [(w @ phi(Xp) >= rho - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                 "one-class")
    X = np.random.default_rng(0).normal(size=(50, 2))
    v = pd.Variant(oc, decision=w @ phi(x) - rho, kernel="rbf", gamma=0.5, nu=0.2, tol=1e-6)
    v.fit(X)
    f = v.decision_function(X)
    np.testing.assert_allclose(v.point_["xi"], np.maximum(0.0, -f), atol=1e-9)
    assert v.certificate_.relative_gap >= -1e-9 or v.status_ != "optimal"
