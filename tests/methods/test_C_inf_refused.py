"""The squared-error/squared-hinge methods refuse ``C = inf`` up front with
a ``ValueError`` naming ``C`` (docs/reliability.md), before any solver runs; the methods where
``C = inf`` is the hard margin (CSVC, EpsilonSVR) keep accepting it."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
from primaldual.backends import get_backend  # noqa: F401 -- the solver entry patched below


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    return X, np.where(X[:, 0] > 0, 1, -1)


@pytest.mark.parametrize("cls", [pd.L2SVC, pd.LSSVC, pd.LSSVR, pd.KernelRidge, pd.ProximalSVC],
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("C", [np.inf, float("inf")])
def test_C_inf_raises_value_error_naming_C_before_solving(cls, C, monkeypatch):
    import primaldual.engine.stages as stages

    def no_solve(*a, **k):
        raise AssertionError("a solver was called: C=inf must be refused up front")
    monkeypatch.setattr(stages, "get_backend", no_solve)
    X, y = _data()
    with pytest.raises(ValueError, match=r"^C must be a number > 0 \(finite\), got inf"):
        cls(C=C).fit(X, y)


@pytest.mark.parametrize("backend", ["lowrank", "smo", "cvxpy"])
def test_L2SVC_C_inf_refused_on_every_backend(backend):
    X, y = _data()
    with pytest.raises(ValueError, match="C must"):
        pd.L2SVC(C=np.inf).fit(X, y, backend=backend)


def test_C_inf_still_hard_margin_for_CSVC_and_EpsilonSVR():
    X, y = _data()
    X = X + 0.5 * y[:, None]  # separable
    assert pd.CSVC(C=np.inf, kernel="linear").fit(X, y).status_ == "optimal"
    assert pd.EpsilonSVR(C=np.inf, kernel="linear", epsilon=5.0).fit(
        X, X[:, 0]).status_ == "optimal"
