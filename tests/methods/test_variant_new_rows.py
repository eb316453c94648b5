"""A placeholder Variant fitted on new rows (other X, other N, other labels) runs no reduction
of its derivation after its first fit: the bound derivation is the shape's template bound to
the new data, and equals a fresh derivation on those data (the derivation's objects field by
field; the dual's value, the multipliers and the predictions of the fit)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import primaldual as pd
from primaldual.model import (
    Data,
    FeatureVariable,
    N,
    Param,
    Problem,
    Variable,
    X,
    d,
    norm2,
    phi,
    sum_squares,
    vsum,
    x,
    y,
)


def _reduction_calls(fit) -> int:
    n = [0]

    def hook(frame, event, arg):
        if event == "call":
            f = frame.f_code.co_filename.replace(os.sep, "/")
            if "/primaldual/model/" in f and (f.endswith("/dualize.py") or "/reduce_" in f):
                n[0] += 1

    sys.setprofile(hook)
    try:
        fit()
    finally:
        sys.setprofile(None)
    return n[0]


def one_class():
    nu = Param("nu")
    w, rho, xi = FeatureVariable("w"), Variable("rho"), Variable("xi", N)
    P = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                "one-class SVM primal")
    return P, w @ phi(x) - rho, "novelty", {"nu": 0.2}


def nu_svc():
    nu = Param("nu")
    w, rho, b, xi = FeatureVariable("w"), Variable("rho"), Variable("b"), Variable("xi", N)
    P = Problem(0.5 * norm2(w) - nu * rho + 1 / N * vsum(xi),
                [(y * (w @ phi(X) + b) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "nu-SVC primal")
    return P, w @ phi(x) + b, "classification", {"nu": 0.3}


def svdd():
    C = Param("C")
    a, R2, xi = FeatureVariable("a"), Variable("R2"), Variable("xi", N)
    P = Problem(R2 + C * vsum(xi),
                [(norm2(phi(X) - a) <= R2 + xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "SVDD primal")
    return P, a @ phi(x) - R2, "novelty", {"C": 0.1}


def svr():
    C, eps = Param("C"), Param("epsilon")
    w, b = FeatureVariable("w"), Variable("b")
    xi, xs = Variable("xi", N), Variable("xi_star", N)
    f = w @ phi(X) + b
    P = Problem(0.5 * norm2(w) + C * vsum(xi + xs),
                [(y - f <= eps + xi).named("alpha"), (f - y <= eps + xs).named("alpha_star"),
                 (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min",
                "epsilon-SVR primal")
    return P, w @ phi(x) + b, "regression", {"C": 1.0, "epsilon": 0.1}


def linear_svc():
    C = Param("C")
    w, b, xi = Variable("w", d), Variable("b"), Variable("xi", N)
    P = Problem(0.5 * sum_squares(w) + C * vsum(xi),
                [(y * (Data("X", X) @ w + b) >= 1 - xi).named("alpha"),
                 (xi >= 0).named("mu")], "min", "linear SVM primal")
    return P, Data("x", x) @ w + b, "classification", {"C": 1.0}


SHAPES = {"one-class": (one_class, "rbf"), "nu-SVC": (nu_svc, "rbf"), "SVDD": (svdd, "rbf"),
          "SVR": (svr, "rbf"), "linear SVC": (linear_svc, "linear"),
          # k(x_i, x_i) in the dual's linear term varies with the rows for these kernels
          "SVDD linear": (svdd, "linear"), "SVDD poly": (svdd, "poly")}


def _data(task, seed, n, dim=3):
    rng = np.random.default_rng(seed)
    Xd = rng.standard_normal((n, dim))
    if task == "classification":
        return Xd, np.where(Xd[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1, -1)
    if task == "regression":
        return Xd, np.sin(Xd[:, 0]) + 0.1 * rng.standard_normal(n)
    return Xd, None


@pytest.mark.parametrize("shape", list(SHAPES))
def test_fits_on_new_rows_run_no_reduction_and_equal_a_fresh_derivation(shape):
    build, kernel = SHAPES[shape]
    spec, dec, task, hyper = build()
    m = pd.Variant(spec, decision=dec, task=task, kernel=kernel, gamma=0.5, tol=1e-6,
                   **hyper)
    X0, y0 = _data(task, 0, 120)
    assert _reduction_calls(lambda: m.fit(X0, y0)) > 0   # the counter sees a derivation
    for seed, n in ((1, 120), (2, 97), (3, 160)):
        Xn, yn = _data(task, seed, n)
        assert _reduction_calls(lambda Xn=Xn, yn=yn: m.fit(Xn, yn)) == 0
        # the same fit through a fresh spec object: derived (dualize) on these rows
        spec2, dec2, _, _ = build()
        ref = pd.Variant(spec2, decision=dec2, task=task, kernel=kernel, gamma=0.5, tol=1e-6,
                         **hyper)
        assert _reduction_calls(lambda Xn=Xn, yn=yn, ref=ref: ref.fit(Xn, yn)) > 0
        a, b = m.certificate_, ref.certificate_
        assert a.dual_objective == pytest.approx(b.dual_objective, rel=1e-10, abs=1e-10)
        assert a.primal_objective == pytest.approx(b.primal_objective, rel=1e-10, abs=1e-10)
        va, vb = m.solution_.values, ref.solution_.values
        assert list(va) == list(vb)
        for k in va:
            np.testing.assert_allclose(va[k], vb[k], rtol=1e-10, atol=1e-10)
        Xt, _ = _data(task, 10 + seed, 50)
        np.testing.assert_allclose(m.predict(Xt), ref.predict(Xt), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(m.certificate_.f, ref.certificate_.f, rtol=1e-10,
                                   atol=1e-10)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_template_binds_the_derivation_a_fresh_one_gives(shape):
    """Field by field (every array, number, string and flag of the bound derivation, the
    dual and the recovery map; the resolved primal's objects too)."""
    from primaldual.kernels import make_kernel
    from primaldual.methods._variant_spec import derive
    from primaldual.methods._variant_template import _same, bind_spec, derivation_templates

    build, kernel = SHAPES[shape]
    spec, _, task, hyper = build()
    der = derive(spec)
    X0, y0 = _data(task, 0, 60)
    y0 = None if y0 is None else (np.asarray(y0, float))
    k0 = make_kernel(kernel, 0.5, 3, 0.0, X0)
    bind_spec(der, X0, y0, k0, hyper)
    assert "template" in derivation_templates().values()
    for seed, n in ((4, 60), (5, 211)):
        Xn, yn = _data(task, seed, n)
        yn = None if yn is None else np.asarray(yn, float)
        kn = make_kernel(kernel, 0.7, 3, 0.0, Xn)
        params = {k: 1.7 * v for k, v in hyper.items()}
        calls = [None]

        def bind(Xn=Xn, yn=yn, kn=kn, params=params, calls=calls):
            calls[0] = bind_spec(der, Xn, yn, kn, params)
        assert _reduction_calls(bind) == 0
        fresh = der.bind(X=Xn, y=yn, kernel=kn, params=params)
        assert _same(calls[0], fresh, {})
        assert not _same(calls[0], der.bind(X=Xn, y=yn, kernel=kn,
                                            params={k: 2 * v for k, v in params.items()}), {})


def test_other_features_are_another_shape():
    """A fit with another number of features learns its own template (a matrix of d columns
    is learned column by column) and predicts as a fresh derivation does."""
    spec, dec, task, hyper = linear_svc()
    m = pd.Variant(spec, decision=dec, task=task, kernel="linear", tol=1e-6, **hyper)
    m.fit(*_data(task, 0, 80, dim=3))
    X5, y5 = _data(task, 1, 90, dim=5)
    assert _reduction_calls(lambda: m.fit(X5, y5)) > 0
    spec2, dec2, _, _ = linear_svc()
    ref = pd.Variant(spec2, decision=dec2, task=task, kernel="linear", tol=1e-6,
                     **hyper).fit(X5, y5)
    Xt, _ = _data(task, 2, 40, dim=5)
    np.testing.assert_allclose(m.decision_function(Xt), ref.decision_function(Xt),
                               rtol=1e-10, atol=1e-10)
    X5b, y5b = _data(task, 3, 70, dim=5)
    assert _reduction_calls(lambda: m.fit(X5b, y5b)) == 0


def test_a_shape_without_a_template_is_derived_on_every_fit(monkeypatch):
    """A derivation the template cannot express (here: every learning refused) is bound by
    the derivation on each fit, and says why."""
    from primaldual.methods import _variant_template

    def refuse(*a, **k):
        raise _variant_template._NoTemplate("refused for the test")
    monkeypatch.setattr(_variant_template, "learn", refuse)
    spec, dec, task, hyper = one_class()
    m = pd.Variant(spec, decision=dec, task=task, gamma=0.5, **hyper)
    m.fit(*_data(task, 0, 50))
    assert "refused for the test" in _variant_template.derivation_templates().values()
    X1, _ = _data(task, 1, 60)
    assert _reduction_calls(lambda: m.fit(X1)) > 0
    assert m.certificate_.relative_gap < 1e-3
