"""A converged RVR sits at the noise precision's fixed point too, recomputed from the fitted
predictor: ``beta* = (N - sum gamma) / ||t - f(X)||^2`` with ``gamma_m = 1 - alpha_m Sigma_mm``
and ``f`` the model's own ``predict`` (not its internal factors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual as pd


@pytest.mark.parametrize("seed", range(8))
def test_converged_rvr_noise_precision_is_at_its_fixed_point(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 100))
    X = rng.uniform(-10, 10, (n, 1))
    t = np.sinc(X[:, 0] / np.pi) + rng.choice([0.01, 0.1, 0.3]) * rng.standard_normal(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = pd.RVR(kernel="rbf", gamma=float(rng.choice([0.1, 0.5, 2.0]))).fit(X, t)
    if not m.converged_:
        pytest.skip("not converged: nothing is claimed")
    gam = np.sum(1.0 - m.alpha_ * np.diag(m.sigma_))
    r = t - m.predict(X)
    assert abs(np.log(m.beta_ * (r @ r) / (n - gam))) <= 10 * max(m.tol, 1e-6) + 1e-9


def test_noise_violation_is_zero_at_the_fixed_point_and_positive_off_it():
    from primaldual.rvm.sequential import _noise_violation
    rng = np.random.default_rng(0)
    Pa = rng.standard_normal((50, 3))
    t = Pa @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(50)
    a = np.array([1.0, 1.0, 1.0])
    beta = 1.0
    for _ in range(200):                     # the fixed-point iteration on beta alone
        Sigma = np.linalg.inv(beta * Pa.T @ Pa + np.diag(a))
        mu = beta * Sigma @ Pa.T @ t
        gam = np.sum(1 - a * np.diag(Sigma))
        beta = (50 - gam) / np.sum((t - Pa @ mu) ** 2)
    Sigma = np.linalg.inv(beta * Pa.T @ Pa + np.diag(a))
    mu = beta * Sigma @ Pa.T @ t
    assert _noise_violation(Pa, t, a, mu, Sigma, beta, 1e12) < 1e-8
    assert _noise_violation(Pa, t, a, mu, Sigma, 10 * beta, 1e12) > 1.0


def _sinc(seed, n=60):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-10, 10, (n, 1))
    return X, np.sinc(X[:, 0] / np.pi) + 0.1 * rng.standard_normal(n)


@pytest.mark.parametrize("tol", [0.05, 0.3, 1.0, 10.0])
@pytest.mark.parametrize("seed", range(4))
def test_a_loose_tol_never_claims_a_fixed_point_it_did_not_reach(seed, tol):
    """The search stops when its moves are below ``tol``; ``converged_`` is judged by the
    library's one tolerance rule (tol clipped to 1e-2): alpha and beta within 10 * 1e-2 of
    their re-estimates in log, the noise checked from ``predict``."""
    X, t = _sinc(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = pd.RVR(tol=tol).fit(X, t)
    if m.converged_:
        gam = np.sum(1.0 - m.alpha_ * np.diag(m.sigma_))
        r = t - m.predict(X)
        assert abs(np.log(m.beta_ * (r @ r) / (len(t) - gam))) <= 0.1
        assert m.optimality_ <= 0.1


def test_tol_one_stopping_off_the_noise_fixed_point_warns_and_is_not_converged():
    # at tol=1 this search stops after 3 steps with one relevance vector and beta 2.2x below
    # (N - sum gamma) / ||t - f(X)||^2: a point the evidence is not stationary at
    X, t = _sinc(1)
    from primaldual.exceptions import ConvergenceWarning
    with pytest.warns(ConvergenceWarning, match="tol=1"):
        m = pd.RVR(tol=1.0).fit(X, t)
    gam = np.sum(1.0 - m.alpha_ * np.diag(m.sigma_))
    r = t - m.predict(X)
    assert abs(np.log(m.beta_ * (r @ r) / (len(t) - gam))) > 0.1     # really off
    assert not m.converged_


@pytest.mark.parametrize("tol", [1.0, 10.0])
def test_a_loose_tol_rvc_is_converged_only_at_its_fixed_point(tol):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-1, 1, (30, 2)), rng.normal(1, 1, (30, 2))])
    y = np.repeat([-1, 1], 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = pd.RVC(tol=tol).fit(X, y)
    assert m.converged_ == (m.optimality_ <= 0.1)
