"""RVM regressions of issue 27: degenerate data, the memory guard, atomic refits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual.rvm.estimators as rvm_mod
from primaldual.exceptions import ConvergenceWarning, InsufficientMemoryError
from primaldual.rvm import RVC, RVR


def test_rvc_two_points_does_not_claim_convergence_with_infinite_optimality():
    X = np.array([[0.0], [1.0]])
    y = np.array([1, -1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = RVC().fit(X, y)
    assert np.isfinite(m.optimality_) or not m.converged_
    if m.converged_:
        assert m.optimality_ <= 1e-5
    # one observation per basis function carries no evidence for it (the symmetric prior's
    # p(t | alpha) is 1/2 for every alpha): the stationary point is the empty model, f = 0
    assert m.n_relevance_vectors_ == 0 and m.intercept_ == 0.0
    np.testing.assert_allclose(m.predict_proba(X), 0.5)
    assert not np.array_equal(m.predict(X), np.array([1, 1]))


@pytest.mark.parametrize("c", [5.0, 0.0, -1e-3, 1e8])
def test_rvr_constant_targets_no_raw_cholesky_error(c):
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.full(20, c)
    with pytest.warns(ConvergenceWarning, match="constant"):
        m = RVR().fit(X, y)
    assert not m.converged_                 # the evidence has no maximum (noise -> 0)
    np.testing.assert_allclose(m.predict(X), c, rtol=1e-9, atol=0)
    # without the bias the kernel columns approximate the constant; the fit is stationary
    nb = RVR(bias=False).fit(X, y)
    assert nb.converged_ and nb.optimality_ < 1e-5
    assert np.all(np.isfinite(nb.predict(X)))


@pytest.mark.parametrize("cls", [RVR, RVC])
def test_rvm_memory_guard_refuses_60000_points_up_front(cls, monkeypatch):
    import primaldual.validation as val
    monkeypatch.setattr(val, "available_memory", lambda: 8 * 2**30)   # an 8 GiB machine
    calls = []
    monkeypatch.setattr(rvm_mod.RVR, "_design", lambda *a, **k: calls.append(1))
    monkeypatch.setattr(rvm_mod.RVC, "_design", lambda *a, **k: calls.append(1))
    X = np.random.default_rng(0).normal(size=(60_000, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    m = cls()
    with pytest.raises(InsufficientMemoryError, match="GiB for N = 60000"):
        m.fit(X, y)
    assert not calls                          # refused before the N x N basis is formed
    assert not hasattr(m, "n_features_in_")   # and the estimator left as it was


@pytest.mark.parametrize("cls", [RVR, RVC])
def test_failed_refit_leaves_old_model_usable(cls, monkeypatch):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    m = cls(gamma=0.5).fit(X, y)
    before = m.predict(X)
    mu = m.mu_.copy()
    # a bad parameter found after validate_data has read the new 3-feature X
    m.set_params(max_iter=0)
    with pytest.raises(ValueError, match="max_iter"):
        m.fit(rng.normal(size=(30, 3)), rng.normal(size=30) > 0)
    assert m.n_features_in_ == 2
    np.testing.assert_array_equal(m.predict(X), before)
    np.testing.assert_array_equal(m.mu_, mu)
    # Ctrl-C inside the search
    m.set_params(max_iter=5000)

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(rvm_mod, "_rvr_sequential", interrupt)
    monkeypatch.setattr(rvm_mod._RVMBase, "_posterior", interrupt)
    with pytest.raises(KeyboardInterrupt):
        m.fit(rng.normal(size=(30, 3)), np.where(rng.normal(size=30) > 0, 1, -1))
    monkeypatch.undo()
    assert m.n_features_in_ == 2
    np.testing.assert_array_equal(m.predict(X), before)


def test_rvr_noise_free_targets_stop_without_spinning_to_max_iter():
    # noise-free targets drive beta to its cap, where the 1-D optima only jitter with rounding:
    # the search stops after 200 steps without progress instead of running max_iter
    X = np.random.default_rng(0).normal(size=(50, 1))
    y = np.sin(X[:, 0])
    with pytest.warns(ConvergenceWarning, match="without progress"):
        m = RVR(max_iter=100_000).fit(X, y)
    assert not m.converged_ and m.n_iter_ < 2000
    assert np.max(np.abs(m.predict(X) - y)) < 1e-3       # still an accurate interpolant
