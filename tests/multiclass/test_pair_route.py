"""Issue 31 (small data, round 3): the lean route of one-vs-one sub-problems
(:mod:`primaldual.methods._pair`) fits exactly what the generic pipeline fits.

Each case is fitted twice, through the lean route and with it switched off (every sub-problem
through ``_fit_subproblem``), and every attribute of every sub-problem is compared: the same
dual point, intercept, support, certificate (objectives, gap, every KKT residual, per sample),
solution multipliers and status -- not "close to LIBSVM", the same numbers, bit for bit where
the two routes run the same operations. The cases where the route must not apply (weights,
an iteration limit, an indefinite kernel, probability) are checked to leave it.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine

import primaldual as pdl
import primaldual.methods._multiclass as mc
from primaldual.methods._pair import pair_route

_TIMES = ("time [s]",)


def _same(a, b, path):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype, path
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), path
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            if k not in _TIMES:
                _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            _same(u, v, f"{path}[{i}]")
    elif isinstance(a, float):
        assert (a != a and b != b) or a == b, (path, a, b)
    elif a is None or isinstance(a, (str, int, bool, np.number)):
        assert a == b, (path, a, b)


def _fit_both(monkeypatch, est, X, y):
    calls = []
    real = mc.fit_pair

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(mc, "fit_pair", counting)
    lean = type(est)(**est.get_params()).fit(X, y)
    used = len(calls)
    monkeypatch.setattr(mc, "pair_route", lambda *a, **k: None)
    generic = type(est)(**est.get_params()).fit(X, y)
    return lean, generic, used


@pytest.mark.parametrize("make", [
    lambda: pdl.CSVC(), lambda: pdl.NuSVC(), lambda: pdl.CSVC(kernel="linear", C=0.1),
    lambda: pdl.CSVC(kernel="poly", C=10.0), lambda: pdl.NuSVC(nu=0.2, gamma=0.1),
    lambda: pdl.CSVC(decision_function_shape="ovo", tol=1e-5)])
@pytest.mark.parametrize("data", ["iris", "wine"])
def test_lean_route_fits_what_the_generic_route_fits(monkeypatch, make, data):
    X, y = (load_iris if data == "iris" else load_wine)(return_X_y=True)
    if data == "wine":
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    lean, generic, used = _fit_both(monkeypatch, make(), X, y)
    assert used == 3                                  # every pair took the lean route
    for e, g in zip(lean.estimators_, generic.estimators_, strict=True):
        de, dg = vars(e), vars(g)
        assert list(de) == list(dg)
        for k in de:
            if k in ("kernel_", "_sv_rows"):
                continue
            v, w = de[k], dg[k]
            if k == "certificate_":
                _same(vars(v), vars(w), k)
                assert v.status == "optimal"
            elif k == "solution_":
                assert v.problem is None and w.problem is None
                _same({x: y_ for x, y_ in vars(v).items() if x not in ("solve_time", "info",
                                                                       "problem")},
                      {x: y_ for x, y_ in vars(w).items() if x not in ("solve_time", "info",
                                                                       "problem")}, k)
                _same({x: y_ for x, y_ in v.info.items() if x != "compile_time"},
                      {x: y_ for x, y_ in w.info.items() if x != "compile_time"}, k)
            else:
                _same(v, w, k)
    for k in ("support_", "dual_coef_", "intercept_", "n_support_", "n_iter_"):
        _same(getattr(lean, k), getattr(generic, k), k)
    assert np.array_equal(lean.decision_function(X), generic.decision_function(X))


def test_lean_route_certified_by_the_oracle():
    from primaldual.testing import assert_oracle_optimal

    X, y = load_wine(return_X_y=True)
    for est in (pdl.CSVC(), pdl.NuSVC()):
        est.fit(X, y)
        rep = assert_oracle_optimal(est, X, y)
        assert len(rep.parts) == 3


@pytest.mark.parametrize("est, why", [
    (pdl.CSVC(max_iter=50), "an iteration limit warns: the generic route says so once"),
    (pdl.CSVC(kernel="sigmoid"), "an indefinite kernel warns"),
    (pdl.CSVC(probability=True), "Platt's sigmoid per pair"),
    (pdl.CSVC(class_weight="balanced"), "weights"),
    (pdl.CSVC(C=np.inf), "the hard margin"),
    (pdl.CSVC(backend="cvxpy"), "another backend"),
    (pdl.CSVC(form="primal"), "the primal form"),
])
def test_lean_route_refuses(est, why):
    X, y = load_iris(return_X_y=True)
    params = est._validate_params()
    params["gamma"] = 0.1
    params["_kernel"] = est._kernel(X, params)
    sw = None
    if params.get("class_weight") is not None:
        sw = np.ones(X.shape[0])             # (folded into sample weights by the multiclass fit)
    assert pair_route(est, X, params, None, None, sw) is None, why


def test_lean_route_falls_back_when_the_solve_is_not_optimal(monkeypatch):
    """A sub-problem the lean route cannot certify is fitted by the generic route (here: the
    SMO solve forced to report a stop at the iteration limit)."""
    import primaldual.methods._pair as pair

    X, y = load_iris(return_X_y=True)
    real = pair._smo_solve
    seen = []

    def stopped(*args, **kw):
        r = real(*args, **kw)
        seen.append(1)
        r.status = "max_iter"
        return r

    monkeypatch.setattr(pair, "_smo_solve", stopped)
    m = pdl.CSVC().fit(X, y)
    assert len(seen) == 3
    assert all(e.certificate_.status == "optimal" for e in m.estimators_)
    monkeypatch.setattr(pair, "_smo_solve", real)
    ref = pdl.CSVC().fit(X, y)
    assert np.array_equal(m.dual_coef_, ref.dual_coef_)


def test_a_variant_has_no_one_vs_one_pairs_to_route():
    """The lean route serves the catalogue's one-vs-one sub-problems. A user's ``Variant`` is
    binary (``task="classification"``): a three-class y is refused with a clear error, so no
    Variant fit ever has sub-problems that the route could serve, and the route itself refuses
    a Variant estimator (no ``_pair_kind``)."""
    from primaldual.model import (
        FeatureVariable,
        N,
        Param,
        Problem,
        Variable,
        X,
        norm2,
        phi,
        vsum,
        x,
    )
    from primaldual.model import y as ys

    C, w = Param("C"), FeatureVariable("w")
    b, xi = Variable("b"), Variable("xi", N)
    spec = Problem(0.5 * norm2(w) + C * vsum(xi),
                   [(ys * (w @ phi(X) + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "C-SVC primal")
    Xi, yi = load_iris(return_X_y=True)
    est = pdl.Variant(spec, w @ phi(x) + b, task="classification", C=1.0)
    with pytest.raises(ValueError, match="binary"):
        est.fit(Xi, yi)
    assert pair_route(est, Xi, {"kernel": "rbf"}, None, None, None) is None
