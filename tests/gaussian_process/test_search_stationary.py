"""The hyper-parameter search ends where the evidence is stationary: L-BFGS-B can stop on
"no relative reduction" with a stale curvature memory while the gradient of ``log q`` is still
about 10% of ``|log q|`` (found by the oracle fuzz, seeds 41004276 and 41005669); the search
restarts from there, and a search that still stops short says so."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual.gaussian_process as gpmod
from primaldual.exceptions import ConvergenceWarning
from primaldual.testing import assert_honest_fit, oracle_case


def _fd_gradient(st, h=1e-5):
    gp, args, th = st["_gp"], st["_args"], np.asarray(st["theta_"], dtype=float)
    out = []
    for j in range(th.size):
        e = np.zeros_like(th)
        e[j] = h
        out.append((gp.lml(th + e, *args) - gp.lml(th - e, *args)) / (2 * h))
    return np.array(out)


@pytest.mark.parametrize("seed", [41004276, 41005669])
def test_search_ends_stationary_and_passes_the_oracle(seed):
    c = oracle_case(seed, extended=True)
    est = c["estimator"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_honest_fit(est, c["X"], c["y"], **c["fit"])
    assert est.search_converged_
    for st in est.estimators_:
        lml = st["log_marginal_likelihood_value_"]
        g = _fd_gradient(st)
        # interior optimum (the bounds are 1e-5..1e5 and 5e-11..5e9): the whole gradient is 0
        assert np.max(np.abs(g)) <= 2 * gpmod.SEARCH_GTOL * max(1.0, abs(lml)), g


def test_single_lbfgs_run_stops_short_on_that_data():
    # the defect itself: without restarts the search of seed 41004276 ends with a gradient
    # far above the tolerance, and at a lower evidence than the restarted search finds
    c = oracle_case(41004276, extended=True)
    est = c["estimator"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(c["X"], c["y"])
    good = est.log_marginal_likelihood_value_
    old = gpmod.SEARCH_RESTARTS
    gpmod.SEARCH_RESTARTS = 0
    try:
        with pytest.warns(ConvergenceWarning, match="hyper-parameter search"):
            est.fit(c["X"], c["y"])
    finally:
        gpmod.SEARCH_RESTARTS = old
    assert not est.search_converged_
    assert est.log_marginal_likelihood_value_ < good - 1.0   # -8.16 against -6.36


def test_fixed_hyper_parameters_claim_no_search():
    c = oracle_case(41004276, extended=True)
    est = c["estimator"].set_params(optimizer=None)
    est.fit(c["X"], c["y"])
    assert est.search_converged_
