"""Property-based tests (hypothesis) across methods and backends (issue 10).

For random small problems:

* whenever the status is ``optimal`` the certificate's relative gap and KKT residuals are within
  tolerance;
* backends agree with each other (CVXPY vs SMO vs low-rank at full rank; CVXPY vs KKT);
* predictions are deterministic run to run;
* permuting the training rows leaves the decision function unchanged.

Examples are few and derandomized (reproducible, bounded in time on a loaded machine).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import primaldual as pd
from primaldual.testing import assert_oracle_optimal, oracle_gap


def _f(m, X):
    """``f(x)``: ``decision_function`` of a classifier, ``predict`` of a regressor (which has
    no ``decision_function``, as in scikit-learn)."""
    return m.decision_function(X) if hasattr(m, "decision_function") else m.predict(X)

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
#: per-case properties: every case is run (parametrize), a few random problems each
PER_CASE = settings(SETTINGS, max_examples=4)


def _problem(seed: int, n: int, task: str, scale: float):
    rng = np.random.default_rng(seed)
    X = scale * rng.normal(size=(n, 2))
    if task == "regression":
        return X, np.sin(X[:, 0] / scale) + 0.1 * rng.normal(size=n)
    y = np.where(X[:, 0] + 0.4 * scale * rng.normal(size=n) > 0, 1, -1)
    y[:2] = [1, -1]  # both classes present
    return X, y


#: (method, task, constructor kwargs, backend)
CASES = [
    ("CSVC", "classification", dict(C=1.0, tol=1e-8), "cvxpy"),
    ("CSVC", "classification", dict(C=1.0, tol=1e-8), "smo"),
    ("CSVC", "classification", dict(C=1.0, kernel="linear", tol=1e-8), "smo"),
    ("NuSVC", "classification", dict(nu=0.3, tol=1e-8), "smo"),
    ("L2SVC", "classification", dict(C=1.0, tol=1e-8), "cvxpy"),
    ("EpsilonSVR", "regression", dict(C=1.0, epsilon=0.1, tol=1e-8), "smo"),
    ("NuSVR", "regression", dict(C=1.0, nu=0.5, tol=1e-8), "cvxpy"),
    ("LSSVR", "regression", dict(C=10.0), "kkt"),
    ("LSSVC", "classification", dict(C=10.0), "kkt"),
    ("KernelRidge", "regression", {}, "auto"),
    ("KernelLogisticRegression", "classification", {}, "cvxpy"),
]

seeds = st.integers(min_value=0, max_value=10_000)
sizes = st.integers(min_value=8, max_value=18)
scales = st.sampled_from([1.0, 1e-2, 1e2])


def _fit(name, kw, backend, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(pd, name)(**kw).fit(X, y, backend=backend)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
@PER_CASE
@given(seed=seeds, n=sizes, scale=scales)
def test_optimal_means_certified(case, seed, n, scale):
    """status optimal => relative gap and max KKT residual small (both recomputed)."""
    name, task, kw, backend = case
    X, y = _problem(seed, n, task, scale)
    m = _fit(name, kw, backend, X, y)
    cert = m.certificate_
    # these benign problems must be solved: a fit that is not optimal fails (issue 27: an
    # "if optimal" guard let any broken fit pass through its else-branch). Known exception:
    # SMO's float32 kernel cache limits its gap to ~1e-4 on kernels of size 1e4 (linear, X *
    # 100; seed 0, n 8), above the 1e-6 its tol asks: it must then say so, which the oracle
    # confirms
    if backend == "smo" and scale != 1.0 and m.status_ != "optimal":
        assert oracle_gap(m, X, y).relative_gap > 1e-6 or cert.max_kkt_residual > 1e-6
        return
    assert m.status_ == "optimal" and cert.status == "optimal", cert
    tol = 1e-5
    assert abs(cert.relative_gap) <= tol, cert
    assert cert.max_kkt_residual <= tol * max(1.0, abs(cert.primal_objective)), cert
    # and the gap is the one an independent oracle recomputes (numpy kernel, the predictor's
    # primal, the multipliers' dual)
    rep = assert_oracle_optimal(m, X, y)
    if name != "NuSVC":  # nu-SVC: the oracle's primal is optimal along the predictor's ray
        assert abs(cert.relative_gap - rep.relative_gap) <= 1e-6 + 1e-3 * abs(rep.relative_gap)


@SETTINGS
@given(seed=seeds, n=sizes, kernel=st.sampled_from(["rbf", "linear"]))
def test_backends_agree_csvc(seed, n, kernel):
    """C-SVC: CVXPY (interior point), SMO and low-rank at full rank give the same dual value
    and the same decision function on the training points."""
    X, y = _problem(seed, n, "classification", 1.0)
    kw = dict(C=1.0, kernel=kernel, gamma=0.5, tol=1e-9)
    fits = {"cvxpy": _fit("CSVC", kw, "cvxpy", X, y), "smo": _fit("CSVC", kw, "smo", X, y),
            "lowrank": _fit("CSVC", dict(kw, rank=n), "lowrank", X, y)}
    ref = fits["cvxpy"]
    for name, m in fits.items():
        assert m.status_ == "optimal", name
        np.testing.assert_allclose(m.certificate_.dual_objective, ref.certificate_.dual_objective,
                                   rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X),
                                   atol=2e-3, err_msg=name)


@SETTINGS
@given(seed=seeds, n=sizes, C=st.sampled_from([0.1, 1.0, 100.0]))
def test_backends_agree_lssvr(seed, n, C):
    """LS-SVR: the KKT backend (one Cholesky) and CVXPY solve the same equality-QP."""
    X, y = _problem(seed, n, "regression", 1.0)
    a = _fit("LSSVR", dict(C=C, gamma=0.5), "kkt", X, y)
    b = _fit("LSSVR", dict(C=C, gamma=0.5), "cvxpy", X, y)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-5 * max(1.0, C))


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
@PER_CASE
@given(seed=seeds, n=sizes)
def test_predictions_deterministic(case, seed, n):
    name, task, kw, backend = case
    X, y = _problem(seed, n, task, 1.0)
    Z = _problem(seed + 1, 7, task, 1.0)[0]
    p1 = _f(_fit(name, kw, backend, X, y), Z)
    p2 = _f(_fit(name, kw, backend, X, y), Z)
    np.testing.assert_array_equal(p1, p2)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
@PER_CASE
@given(seed=seeds, n=sizes, perm_seed=seeds)
def test_permutation_invariance(case, seed, n, perm_seed):
    """The decision function is a property of the training set, not of its order (all these
    problems have a unique f on the data for strictly convex duals; for C-SVC f is unique when
    a free support vector exists, which the tolerance tolerates otherwise)."""
    name, task, kw, backend = case
    X, y = _problem(seed, n, task, 1.0)
    perm = np.random.default_rng(perm_seed).permutation(n)
    Z = _problem(seed + 1, 7, task, 1.0)[0]
    a = _fit(name, kw, backend, X, y)
    b = _fit(name, kw, backend, X[perm], y[perm])
    # both must be optimal (a failure, never a skip: issue 27)
    assert a.status_ == "optimal" and b.status_ == "optimal", (a.status_, b.status_)
    np.testing.assert_allclose(_f(a, Z), _f(b, Z), atol=1e-4)
