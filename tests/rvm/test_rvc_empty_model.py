"""An RVC whose evidence is maximal at the empty model learns no label: never 'converged'."""

from __future__ import annotations

import numpy as np
import pytest

from primaldual.exceptions import ConvergenceWarning
from primaldual.rvm import RVC


def test_rvc_two_points_of_different_labels_is_not_converged():
    X = np.array([[0.0], [1.0]])
    y = np.array([1, -1])
    with pytest.warns(ConvergenceWarning, match="empty model"):
        m = RVC().fit(X, y)
    # y(x) = 0 everywhere: the tie p = 1/2 is broken towards classes_[0], so the training
    # labels [1, -1] are predicted as [-1, -1]; such a fit must not say it converged
    assert m.n_relevance_vectors_ == 0
    assert not m.converged_
    assert not (m.converged_ and np.array_equal(m.predict(X), [-1, -1]))


def test_rvc_on_separable_data_still_converges():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-2, 0.5, (20, 2)), rng.normal(2, 0.5, (20, 2))])
    y = np.repeat([-1, 1], 20)
    m = RVC(kernel="rbf", gamma=0.5).fit(X, y)
    assert m.converged_ and m.n_relevance_vectors_ > 0
    assert np.mean(m.predict(X) == y) == 1.0
