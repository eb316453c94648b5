"""Parameters are declared once: a table per estimator, validated once at the start of fit."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
from primaldual.catalogue import NAMES

CLASSES = [getattr(pd, n) for n in NAMES]
ALL_PARAMS = set().union(*(c().get_params(deep=False) for c in CLASSES))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_table_covers_exactly_the_constructor_parameters(cls):
    est = cls()
    assert set(cls._parameter_constraints) == set(est.get_params(deep=False))
    assert set(est._validate_params()) == set(est.get_params(deep=False))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_no_class_attribute_stands_in_for_a_missing_parameter(cls):
    """e.g. HardMarginSVC has no C (its box is C = inf by _box_C), NuSVC has no C."""
    own = set(cls().get_params(deep=False))
    stand_ins = [name for name in ALL_PARAMS - own if hasattr(cls, name)]
    assert stand_ins == []


def test_C_is_checked_exactly_once_per_fit(monkeypatch, binary_data, count_C_checks):
    calls = count_C_checks
    # the raw-array entry smo_solve checks its own arguments; a fit reaches the solver through
    # the adapter, which does not check C again
    from primaldual.backends.smo import solver

    def not_on_the_fit_path(*args, **kwargs):
        raise AssertionError("smo_solve's argument check ran inside a fit")

    monkeypatch.setattr(solver, "_check_arguments", not_on_the_fit_path)
    X, y = binary_data(n=16)
    from primaldual.methods import _steps

    for backend in ("smo", "cvxpy"):
        _steps._VALIDATED.clear()   # (validated values are kept per class and values)
        calls.clear()
        pd.CSVC(C=2.0, tol=1e-5).fit(X, y, backend=backend)
        assert calls == ["C"], backend
    calls.clear()
    pd.CSVC(C=2.0, tol=1e-5).fit(X, y)       # the same values again: checked values reused
    assert calls == []
    with pytest.raises(AssertionError, match="inside a fit"):  # the raw entry does check
        solver.smo_solve(X, pd.kernels.RBF(1.0), -np.ones(16), 1.0, sign=np.where(y > 0, 1., -1.))


def test_validated_values_reach_the_problem(binary_data):
    X, y = binary_data(n=16)
    data = pd.NuSVC(nu=0.25)._prepare(X, y)
    assert data.params["nu"] == 0.25 and np.all(data.C == 1.0)
    assert np.all(np.isinf(pd.HardMarginSVC()._prepare(X, y).C))
    assert pd.CSVC(C=3)._prepare(X, y).params["C"] == 3.0


@pytest.mark.parametrize("kw, match", [(dict(backend="nosuch"), "backend must be one of"),
                                       (dict(form="nosuch"), "form must be one of")])
def test_fit_arguments_are_checked_like_parameters(kw, match, binary_data):
    X, y = binary_data(n=16)
    with pytest.raises(ValueError, match=match):
        pd.CSVC().fit(X, y, **kw)
    with pytest.raises(ValueError, match=match):
        pd.CSVC(**kw).fit(X, y)


def test_lssvc_C_is_not_checked_again_by_the_linear_system_solver(monkeypatch, binary_data):
    from primaldual.backends.linsys import direct

    def again(value, name, **kwargs):
        raise AssertionError(f"{name} checked again inside the fit")

    monkeypatch.setattr(direct, "check_positive", again)
    X, y = binary_data(n=16)
    m = pd.LSSVC(C=2.0, gamma=0.5).fit(X, y, backend="kkt")
    assert m.certificate_.status == "optimal"
    with pytest.raises(AssertionError, match="inside the fit"):  # the raw entry does check
        direct.factor_kernel(X, pd.kernels.RBF(0.5), 2.0)
