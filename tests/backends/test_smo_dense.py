"""The dense numpy SMO route (no compilation) against the numba core and CVXPY.

The dense route is what a fresh install's first fit of a small problem runs (the numba cache is
cold); it must return the same certified optimum as the numba core.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

import primaldual as pd
from primaldual.backends import smo
from primaldual.backends.smo import dense as smo_dense
from primaldual.backends.smo import (
    smo_csvc,
    smo_epsilon_svr,
    smo_l2svc,
    smo_nusvc,
    smo_nusvr,
    smo_solve,
)
from primaldual.backends.smo import solver as smo_solver
from primaldual.datasets import load_dataset
from primaldual.kernels import RBF, Linear, Polynomial

TOL = 1e-6


def _clf(n, seed):
    X, y = make_classification(n, 5, n_informative=3, flip_y=0.1, random_state=seed)
    return X, 2.0 * y - 1.0


def _reg(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(n)


def _wrappers(seed):
    X, y = _clf(80, seed)
    Xr, yr = _reg(70, seed)
    k = RBF(gamma=0.3)
    return [
        ("csvc", lambda **o: smo_csvc(X, y, k, 2.0, **o)),
        ("csvc-linear", lambda **o: smo_csvc(X, y, Linear(), 0.5, **o)),
        ("csvc-poly", lambda **o: smo_csvc(X, y, Polynomial(degree=2, gamma=0.2, coef0=1.0),
                                           1.0, **o)),
        ("l2svc", lambda **o: smo_l2svc(X, y, k, 1.0, **o)),
        ("nusvc", lambda **o: smo_nusvc(X, y, k, 0.4, **o)),
        ("epsilon-svr", lambda **o: smo_epsilon_svr(Xr, yr, k, 3.0, 0.1, **o)),
        ("nusvr", lambda **o: smo_nusvr(Xr, yr, k, 3.0, 0.5, **o)),
        ("no-equality", lambda **o: smo_solve(X, k, -np.ones(len(y)), np.full(len(y), 2.0),
                                              sign=y, equality="none", **o)),
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dense_route_reaches_the_numba_optimum(seed):
    for name, run in _wrappers(seed):
        a = run(dense=False, tol=TOL, gap_tol=TOL)
        b = run(dense=True, tol=TOL, gap_tol=TOL)
        assert a.status == b.status == "optimal", name
        assert b.compile_time == 0.0, name
        scale = max(1.0, abs(a.objective))
        assert abs(a.objective - b.objective) <= 1e-6 * scale, name  # numba: float32 K
        assert np.allclose(a.alpha, b.alpha, atol=1e-4 * max(1.0, a.alpha.max())), name
        assert abs(a.b - b.b) <= 1e-4 * max(1.0, abs(a.b)), name
        assert np.allclose(a.grad, b.grad, atol=1e-4 * max(1.0, np.abs(a.grad).max())), name


def test_dense_route_precomputed_callable_and_Q():
    X, y = _clf(50, 3)
    k = RBF(gamma=0.5)
    K = k(X)
    for kw in (dict(X=K, kernel=pd.kernels.Precomputed()),
               dict(X=None, kernel=None, Q=K * np.outer(y, y))):
        Xa, ka = kw.pop("X"), kw.pop("kernel")
        a = smo_solve(Xa, ka, -np.ones(50), np.ones(50), sign=y, dense=False, tol=TOL, **kw)
        b = smo_solve(Xa, ka, -np.ones(50), np.ones(50), sign=y, dense=True, tol=TOL, **kw)
        assert abs(a.objective - b.objective) <= 1e-7 * abs(a.objective)


def test_dense_route_max_iter_trace_and_warm_start():
    X, y = _clf(60, 4)
    k = RBF(gamma=0.3)
    with pytest.warns(smo.ConvergenceWarning):
        r = smo_csvc(X, y, k, 1.0, dense=True, max_iter=5)
    assert r.status == "max_iter" and r.n_iter == 5
    r = smo_csvc(X, y, k, 1.0, dense=True, record_trace=True)
    assert len(r.trace["objective"]) == r.n_iter
    assert np.all(np.diff(r.trace["objective"]) <= 1e-12)  # SMO decreases the objective
    warm = smo_csvc(X, y, k, 1.0, dense=True, alpha0=r.alpha)
    assert warm.n_iter < r.n_iter and abs(warm.objective - r.objective) < 1e-6


@pytest.mark.parametrize("cls, kw, data", [
    (pd.CSVC, dict(C=2.0, gamma=0.3), _clf),
    (pd.NuSVC, dict(nu=0.4, gamma=0.3), _clf),
    (pd.EpsilonSVR, dict(C=3.0, epsilon=0.1, gamma=0.3), _reg),
])
def test_cold_cache_fit_takes_the_dense_route_and_matches_cvxpy(monkeypatch, cls, kw, data):
    """With the numba cache cold, a small public fit runs the dense route, certifies at the
    default tolerance, and lands on CVXPY's optimum."""
    X, y = data(60, 5)
    ref = cls(kernel="rbf", **kw).fit(X, y, backend="cvxpy")
    monkeypatch.setattr(smo_solver, "_numba_ready", lambda: False)
    m = cls(kernel="rbf", tol=1e-6, **kw).fit(X, y, backend="smo")
    assert m.solution_.info["route"] == "dense"
    assert m.certificate_.status == "optimal"
    d_ref, d = ref.certificate_.dual_objective, m.certificate_.dual_objective
    assert abs(d - d_ref) <= 1e-6 * max(1.0, abs(d_ref))
    f = (lambda est: est.predict(X)) if data is _reg else (lambda est: est.decision_function(X))
    assert np.allclose(f(m), f(ref), atol=1e-3)
    monkeypatch.setattr(smo_solver, "_numba_ready", lambda: True)
    m2 = cls(kernel="rbf", tol=1e-6, **kw).fit(X, y, backend="smo")
    assert m2.solution_.info["route"] == "numba"
    assert abs(m2.certificate_.dual_objective - d) <= 1e-6 * max(1.0, abs(d))


def test_large_problems_never_take_the_dense_route(monkeypatch):
    monkeypatch.setattr(smo_solver, "_numba_ready", lambda: False)
    assert smo_solver._use_dense(100, None)
    assert not smo_solver._use_dense(smo_dense.DENSE_MAX_VAR + 1, None)
    monkeypatch.setattr(smo_solver, "_numba_ready", lambda: True)
    assert not smo_solver._use_dense(100, None)
    assert smo_solver._use_dense(10**6, True) and not smo_solver._use_dense(10, False)
    monkeypatch.setattr(smo_solver, "_numba_ready", lambda: False)
    # the dense matrix must fit in the kernel cache the caller allows (8 * 400^2 B = 1.2 MB)
    assert smo_solver._use_dense(400, None, 2.0) and not smo_solver._use_dense(400, None, 1.0)


def test_long_dense_run_is_continued_by_the_numba_core(monkeypatch):
    X, y = _clf(80, 6)
    k = RBF(gamma=0.3)
    ref = smo_csvc(X, y, k, 2.0, dense=False, tol=TOL, gap_tol=TOL)
    monkeypatch.setattr(smo_solver, "_numba_ready", lambda: False)
    monkeypatch.setattr(smo_dense, "DENSE_MAX_ITER", 10)
    r = smo_csvc(X, y, k, 2.0, tol=TOL, gap_tol=TOL, record_trace=True)
    assert r.route == "dense+numba" and r.status == "optimal" and r.n_iter > 10
    assert r.trace["iter"][:11] == list(range(1, 12)) and r.trace["iter"][-1] == r.n_iter
    assert abs(r.objective - ref.objective) <= 1e-6 * abs(ref.objective)


def test_compile_core_makes_every_fit_take_the_numba_route():
    from primaldual.backends.smo import compile_core

    assert compile_core() >= 0.0 and smo_solver._numba_ready()
    X, y = _clf(40, 7)
    assert smo_csvc(X, y, RBF(gamma=0.3), 1.0).route == "numba"


def test_cold_cache_hard_margin_separable_and_unbounded(monkeypatch):
    """Separable: the dense route certifies it; not separable: the divergent run goes on in
    the compiled core and the fit reports the unbounded dual as before."""
    monkeypatch.setattr(smo_solver, "_numba_ready", lambda: False)
    X, y = load_dataset("amini")
    m = pd.HardMarginSVC(kernel="linear").fit(X, y)
    assert m.solution_.info["route"] == "dense" and m.certificate_.status == "optimal"
    rng = np.random.default_rng(0)
    Xn, yn = rng.standard_normal((30, 2)), np.tile([1.0, -1.0], 15)
    with pytest.warns(pd.InfeasibleProblemWarning), \
            pytest.raises(pd.InfeasibleProblemError):
        pd.HardMarginSVC(kernel="linear").fit(Xn, yn)


def test_first_fit_imports_no_numba_cvxpy_or_plotting(tmp_path):
    """The README's main command on a fresh install (empty numba cache) compiles nothing and
    imports none of the heavy optional stacks (docs/benchmarks.md, first fit)."""
    import os
    import subprocess
    import sys

    code = ("import sys\nfrom primaldual.cli import main\nrc = main(['fit'])\n"
            "print(rc, sorted(m for m in ('numba', 'cvxpy', 'matplotlib', 'dask') "
            "if m in sys.modules))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), MPLBACKEND="Agg")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "smo route                      dense" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "0 []"
