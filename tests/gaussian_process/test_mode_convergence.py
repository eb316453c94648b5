"""The Laplace mode's Newton loop cut off by ``max_iter_predict`` warns and says so in
``status_``; the check recomputes the fixed-point residual from the fitted mode itself."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual as pd
from primaldual.exceptions import ConvergenceWarning


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 2))
    return X, np.where(X[:, 0] + 0.2 * rng.standard_normal(80) > 0, 1, 0)


def _fixed_point_residual(g, X, y):
    K = g.amplitude_ * np.asarray(g.kernel_(X), dtype=float)
    return np.linalg.norm(g.f_ - K @ (y - 1.0 / (1.0 + np.exp(-g.f_))))


def test_a_newton_loop_cut_off_warns_and_is_not_converged():
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match="max_iter_predict"):
        g = pd.GPClassifier(max_iter_predict=1).fit(X, y)
    assert not g.converged_ and g.status_ == "max_iter"
    assert _fixed_point_residual(g, X, y) > 1e-3


def test_a_converged_mode_is_silent_and_at_its_fixed_point():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        g = pd.GPClassifier().fit(X, y)
    assert g.converged_ and g.status_ == "optimal"
    assert _fixed_point_residual(g, X, y) <= 1e-2 * max(1.0, np.linalg.norm(g.f_))


def test_a_multiclass_fit_with_one_mode_cut_off_is_not_converged():
    """One-vs-rest: every class's mode is its own Newton loop; one cut off is enough."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 2))
    y = np.argmax(X @ rng.standard_normal((2, 3)), axis=1)
    with pytest.warns(ConvergenceWarning, match="max_iter_predict=1"):
        g = pd.GPClassifier(max_iter_predict=1).fit(X, y)
    assert not g.converged_ and g.status_ == "max_iter"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        g = pd.GPClassifier().fit(X, y)
    assert g.converged_ and g.status_ == "optimal"
