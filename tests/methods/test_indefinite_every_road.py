"""An indefinite kernel is warned on every road, and a fit on one is never 'optimal': the fit
either ends 'inaccurate' (the audit) or raises one of primaldual's errors, and in both cases
an IndefiniteKernelWarning names the smallest eigenvalue (the engine warns before a failed
solve's error propagates: the KKT route's singular matrix, SMO's divergence)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual as pd
from primaldual.exceptions import IndefiniteKernelWarning

IND = [dict(kernel="poly", degree=2, coef0=-1.0, gamma=0.5),
       dict(kernel="sigmoid", gamma=0.5, coef0=1.0)]
MAKERS = [
    ("CSVC", lambda kw: pd.CSVC(C=10.0, **kw), "clf"),
    ("L2SVC", lambda kw: pd.L2SVC(C=10.0, **kw), "clf"),
    ("NuSVC", lambda kw: pd.NuSVC(nu=0.3, **kw), "clf"),
    ("HardMarginSVC", lambda kw: pd.HardMarginSVC(**kw), "clf"),
    ("LSSVC", lambda kw: pd.LSSVC(C=10.0, **kw), "clf"),
    ("LapRLS", lambda kw: pd.LapRLS(**kw), "clf"),
    ("LapSVC", lambda kw: pd.LapSVC(**kw), "clf"),
    ("EpsilonSVR", lambda kw: pd.EpsilonSVR(C=10.0, **kw), "reg"),
    ("NuSVR", lambda kw: pd.NuSVR(C=10.0, **kw), "reg"),
    ("KernelRidge", lambda kw: pd.KernelRidge(C=10.0, **kw), "reg"),
]


def _data(kind):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.where(X[:, 0] > 0, 1, -1) if kind == "clf" else X[:, 0] + 0.1 * rng.standard_normal(60)
    return X, y


@pytest.mark.parametrize("kw", IND, ids=["poly-coef0-1", "sigmoid"])
@pytest.mark.parametrize("name, make, kind", MAKERS, ids=[m[0] for m in MAKERS])
def test_indefinite_kernel_warned_and_never_optimal(name, make, kind, kw):
    X, y = _data(kind)
    m = make(kw)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            m.fit(X, y)
            status = m.status_
        except (ValueError, np.linalg.LinAlgError) as exc:
            assert type(exc).__module__.startswith("primaldual"), repr(exc)
            status = "raised"
    assert status != "optimal"
    assert any(issubclass(r.category, IndefiniteKernelWarning) for r in rec), \
        [str(r.message)[:80] for r in rec]


def test_a_failure_on_a_psd_kernel_blames_no_kernel():
    # a singular KKT matrix that is the data's (two equal rows, no ridge): no kernel warning
    X = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    y = np.array([1, 1, -1, -1])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            pd.LSSVC(C=np.inf, kernel="linear").fit(X, y)
        except Exception:  # noqa: BLE001 - the error's kind is not what is tested
            pass
    assert not any(issubclass(r.category, IndefiniteKernelWarning) for r in rec)
