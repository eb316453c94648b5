"""The relative gap is relative to the problem's own scale (issue 19: nothing wrong is certified).

nu-SVC's dual lives in the box ``0 <= alpha <= 1/N``, so its objective is ``O(1/N^2)``: with the
old floor of 1 in ``gap / max(1, |P|)`` any gap below ~1e-3 read as "optimal", even one that was
a fifth of the objective. The floor is now ``min(1, C_max^2)`` (``objective_unit``), and SMO's
certified-gap stopping rule uses the same ratio.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_wine

import primaldual as pd
from primaldual.certificate import objective_unit


def test_objective_unit_follows_the_largest_finite_bound():
    assert objective_unit(None) == 1.0
    assert objective_unit(np.array([np.inf, np.inf])) == 1.0
    assert objective_unit(np.array([2.0, 0.5])) == 1.0
    assert objective_unit(np.array([0.1, 0.5, np.inf])) == pytest.approx(0.25)


def test_nu_svc_gap_is_relative_to_its_tiny_objective():
    X, y = load_wine(return_X_y=True)
    keep = y > 0                       # classes 1 and 2, raw features (objective ~ 1e-6)
    X, y = X[keep], y[keep]
    n = len(y)
    c = pd.NuSVC().fit(X, y).certificate_
    assert abs(c.primal_objective) < 1e-3
    assert c.relative_gap == pytest.approx(
        c.duality_gap / max(1.0 / n**2, abs(c.primal_objective)), rel=1e-12)
    assert c.status == "optimal" and c.relative_gap <= 1e-3
