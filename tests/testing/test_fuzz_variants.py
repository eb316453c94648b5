"""Smoke test of the oracle fuzz's extension (benchmarks/fuzz_oracle.py): the ``Variant``
shapes of :mod:`primaldual.fuzz_variants` and the GP hyper-parameter search are checked by an
oracle that passes honest fits and rejects tampered ones."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from primaldual.fuzz_variants import VARIANT_SHAPES, variant_case
from primaldual.gaussian_process import GPClassifier
from primaldual.testing import ORACLE_FUZZ_VARIANTS, assert_honest_fit, oracle_case, oracle_gap


def _fit(c):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return assert_honest_fit(c["estimator"], c["X"], c["y"], **c.get("fit", {}))


@pytest.mark.parametrize("shape", sorted(VARIANT_SHAPES))
def test_variant_shape_passes_its_oracle_and_a_tampered_one_fails(shape):
    c = variant_case(np.random.default_rng(3), shape, "auto", 12, "rbf", 1e-6)
    est = _fit(c)
    assert est.status_ == "optimal"
    rep = oracle_gap(est, c["X"], c["y"])
    assert rep.status == "optimal" and rep.violations == []
    assert rep.relative_gap <= 1e-6 + 1e-8
    # a predictor off the optimum: the oracle says so (the status is the fit's claim)
    est.dual_coef_ = est.dual_coef_ * 1.3
    assert oracle_gap(est, c["X"], c["y"]).violations


def test_fuzz_pool_holds_every_variant_shape_and_the_gp_search():
    assert set(ORACLE_FUZZ_VARIANTS) == set(VARIANT_SHAPES)
    names = {oracle_case(s, extended=True)["case"][1] for s in range(400)}
    assert {f"Variant:{s}" for s in VARIANT_SHAPES} <= names
    assert any(oracle_case(s, extended=True)["case"][2] == "search" for s in range(400))


def test_gp_search_oracle():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=20) > 0).astype(int)
    gp = GPClassifier(gamma=0.5).fit(X, y)        # the search on (amplitude, gamma)
    rep = oracle_gap(gp, X, y)
    keys = [k for k in rep.extra if k.startswith("violation:")]
    assert any("search fell" in k for k in keys) and any("d log q" in k for k in keys)
    assert rep.violations == []
    gp.estimators_[0]["log_marginal_likelihood_value_"] += 1.0   # a misreported evidence
    assert any("log_marginal" in v for v in oracle_gap(gp, X, y).violations)
    # a search that stopped off its optimum: amplitude and mode moved together
    gp2 = GPClassifier(gamma=0.5, optimizer=None, amplitude=30.0).fit(X, y)
    gp2.optimizer = "fmin_l_bfgs_b"                # claims to have searched from amplitude 1
    gp2.amplitude = 1.0
    assert oracle_gap(gp2, X, y).violations


@pytest.mark.parametrize("seed", [s for s in range(80) if oracle_case(s, extended=True)[
    "case"][2] == "search" or oracle_case(s, extended=True)["case"][1].startswith("Variant")][:8])
def test_fuzz_sample_of_the_extension(seed):
    _fit(oracle_case(seed, extended=True))
