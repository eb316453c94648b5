"""Issue 27, items 8 and 10 for ``GPClassifier``: a failed refit leaves the old model
predicting as before, and sizes that cannot fit are refused before any ``N x N`` array."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual.validation as V
from primaldual.exceptions import InsufficientMemoryError
from primaldual.gaussian_process import GPClassifier, _LaplaceBinary


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)


def test_gp_failed_refit_leaves_the_old_model_predicting_identically(monkeypatch):
    X, y = _data(40, 2, 0)
    m = GPClassifier(optimizer=None).fit(X, y)
    before = (m.predict_proba(X), m.predict(X), m.n_features_in_)

    def boom(self, K):
        raise RuntimeError("forced failure inside the Newton iterations")
    monkeypatch.setattr(_LaplaceBinary, "mode", boom)
    X3, y3 = _data(30, 3, 1)  # other n_features: a half-done refit would break predict(X)
    with pytest.raises(RuntimeError, match="forced failure"):
        m.fit(X3, y3)
    monkeypatch.undo()
    assert m.n_features_in_ == before[2] == 2
    np.testing.assert_array_equal(m.predict(X), before[1])
    np.testing.assert_array_equal(m.predict_proba(X), before[0])


def test_gp_keyboard_interrupt_during_refit_restores_the_model(monkeypatch):
    X, y = _data(30, 2, 2)
    m = GPClassifier(optimizer=None).fit(X, y)
    p = m.predict_proba(X)

    def interrupt(self, K):
        raise KeyboardInterrupt
    monkeypatch.setattr(_LaplaceBinary, "mode", interrupt)
    with pytest.raises(KeyboardInterrupt):
        m.fit(*_data(25, 4, 3))
    monkeypatch.undo()
    np.testing.assert_array_equal(m.predict_proba(X), p)


def test_gp_fit_at_n_60000_is_refused_before_allocating(monkeypatch):
    # the case: N = 60,000 asked 26.8 GiB and raised a raw MemoryError; the guard
    # refuses from the sizes alone (a 16 GiB machine assumed, whatever this one has)
    monkeypatch.setattr(V, "available_memory", lambda: 16 * 2**30)
    X, y = _data(60_000, 2, 4)
    with pytest.raises(InsufficientMemoryError, match="GPClassifier.fit on 60000 points"):
        GPClassifier().fit(X, y)


def test_gp_predict_of_too_many_rows_is_refused(monkeypatch):
    X, y = _data(50, 2, 5)
    m = GPClassifier(optimizer=None).fit(X, y)
    monkeypatch.setattr(V, "available_memory", lambda: 2**20)
    with pytest.raises(InsufficientMemoryError, match="smaller batches"):
        m.predict(np.zeros((30_000, 2)))
