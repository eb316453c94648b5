"""The block working-set route on eps-SVR's and nu-SVR's duals (``2N`` variables on ``N`` data
rows, one kernel row per data row; nu-SVR's two equalities) against independent references:
the pair route (LIBSVM's SMO, itself checked against CVXPY and LIBSVM in test_smo.py) and the
library's CVXPY backend on the same estimator, through the public fit with its certificate.

The working-set size is made small (``BLOCK_SIZE``) so that problems small enough for a test
still run many outer iterations, shrinking and reconstructing the shrunk gradients; the
thresholds ``BLOCK_MIN_VAR_SVR`` / ``BLOCK_MIN_VAR_NU`` send them to the route.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_regression

import primaldual
from primaldual.exceptions import ConvergenceWarning

block = pytest.importorskip("primaldual.backends.smo.block")

SEEDS = [0, 1, 2]
FAMILIES = {"eps": (primaldual.EpsilonSVR, {"epsilon": 0.1}),
            "nu": (primaldual.NuSVR, {"nu": 0.5})}


def _data(seed, n, d=8):
    X, y = make_regression(n, d, n_informative=5, noise=15.0, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    return X, (y - y.mean()) / y.std()


def _route(on: bool, monkeypatch, size: int = 32) -> None:
    for name in ("BLOCK_MIN_VAR_SVR", "BLOCK_MIN_VAR_NU"):
        monkeypatch.setattr(block, name, 100 if on else 10**12)
    monkeypatch.setattr(block, "BLOCK_SIZE", size)


def _dual(est) -> float:
    return float(est.certificate_.dual_objective)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("seed", SEEDS)
def test_block_svr_equals_the_pair_route(family, seed, monkeypatch):
    cls, kw = FAMILIES[family]
    X, y = _data(seed, 400)
    rng = np.random.default_rng(seed)
    C, gamma = float(rng.uniform(0.5, 4.0)), float(rng.uniform(0.05, 0.3))
    _route(True, monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = cls(C=C, gamma=gamma, tol=1e-5, **kw).fit(X, y)
    assert est.solution_.info["route"].startswith("block")
    assert est.certificate_.status == "optimal"
    _route(False, monkeypatch)
    ref = cls(C=C, gamma=gamma, tol=1e-5, **kw).fit(X, y)
    assert not ref.solution_.info["route"].startswith("block")
    assert abs(_dual(est) - _dual(ref)) <= 1e-6 * abs(_dual(ref))
    np.testing.assert_allclose(est.predict(X), ref.predict(X), atol=1e-3 * np.abs(y).max())


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_block_svr_matches_cvxpy(family, monkeypatch):
    cls, kw = FAMILIES[family]
    X, y = _data(7, 200, d=5)
    _route(True, monkeypatch, size=16)
    est = cls(C=2.0, gamma=0.2, tol=1e-5, **kw).fit(X, y)
    assert est.solution_.info["route"].startswith("block")
    ref = cls(C=2.0, gamma=0.2, backend="cvxpy", **kw).fit(X, y)
    assert est.certificate_.status == ref.certificate_.status == "optimal"
    # the fit's primal lies above the optimum by at most its certified gap (1e-5 relative);
    # CVXPY's within its own 1e-8
    P, P_ref = est.certificate_.primal_objective, ref.certificate_.primal_objective
    assert -1e-7 * abs(P_ref) <= P - P_ref <= 1e-5 * abs(P_ref)


def test_a_tight_target_keeps_the_pair_route(monkeypatch):
    # below SHARED_BLOCK_MIN_GAP the float32 rows could not certify: the pair route is taken
    X, y = _data(0, 400)
    _route(True, monkeypatch)
    est = primaldual.EpsilonSVR(C=2.0, gamma=0.1, tol=1e-6).fit(X, y)
    assert est.solution_.info["route"] == "numba" and est.certificate_.status == "optimal"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_block_svr_cut_off_is_not_optimal(family, monkeypatch):
    cls, kw = FAMILIES[family]
    X, y = _data(3, 600)
    _route(True, monkeypatch)
    with pytest.warns(Warning):
        est = cls(C=1.0, gamma=0.1, max_iter=5, **kw).fit(X, y)
    assert est.certificate_.status != "optimal"
