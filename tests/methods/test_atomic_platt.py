"""Issue 27, item 8: ``CSVC(probability=True)`` whose Platt step fails after a successful base
fit keeps the previous model (not the new base fit without ``probA_``)."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
import primaldual.calibration as cal


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)


def test_failed_platt_step_keeps_the_old_model_predicting_identically(monkeypatch):
    X, y = _data(60, 2, 0)
    m = pd.CSVC(probability=True, random_state=0).fit(X, y)
    old = (m.decision_function(X), m.predict_proba(X), m.probA_.copy(), m.n_features_in_,
           m.support_.copy())

    def fail(*a, **k):
        raise RuntimeError("forced Platt failure")
    monkeypatch.setattr(cal, "platt_fit", fail)
    X3, y3 = _data(50, 3, 1)
    with pytest.raises(RuntimeError, match="forced Platt failure"):
        m.fit(X3, y3)
    monkeypatch.undo()
    assert m.n_features_in_ == old[3] == 2
    np.testing.assert_array_equal(m.support_, old[4])
    np.testing.assert_array_equal(m.decision_function(X), old[0])
    np.testing.assert_array_equal(m.predict_proba(X), old[1])
    np.testing.assert_array_equal(m.probA_, old[2])


def test_failed_platt_step_on_a_fresh_estimator_leaves_it_unfitted(monkeypatch):
    from sklearn.exceptions import NotFittedError

    def fail(*a, **k):
        raise RuntimeError("forced Platt failure")
    monkeypatch.setattr(cal, "platt_fit", fail)
    m = pd.CSVC(probability=True)
    with pytest.raises(RuntimeError):
        m.fit(*_data(40, 2, 2))
    assert not hasattr(m, "beta_") and not hasattr(m, "classes_")
    with pytest.raises(NotFittedError):
        m.predict(np.zeros((1, 2)))
