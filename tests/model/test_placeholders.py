"""A spec written on data placeholders (issue 26): derived once without data, bound later."""

from __future__ import annotations

import numpy as np
import pytest

from primaldual.kernels import make_kernel
from primaldual.model import (
    Data,
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
    y,
)
from primaldual.model.dualize import dualize
from primaldual.model.placeholders import Deferred


def _one_class_spec():
    nu = Param("nu", tex=r"\nu")
    w = FeatureVariable("w")
    rho, xi = Variable("rho"), Variable("xi", N)
    spec = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                   [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "one-class SVM primal", variables=[w, rho, xi])
    return spec, w, rho


def _one_class_embedded(Xtr, nu, kernel):
    n = Xtr.shape[0]
    w = FeatureVariable("w", kernel, Xtr)
    rho, xi = Variable("rho"), Variable("xi", n)
    c = Data("c", 1.0 / (nu * n), txt="1/(ν N)")
    return Problem(0.5 * norm2(w) + c * vsum(xi) - rho,
                   [(w @ phi(Xtr) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "one-class SVM primal", variables=[w, rho, xi])


def test_spec_records_and_derives_without_data():
    spec, _, _ = _one_class_spec()
    assert isinstance(spec, Deferred)
    assert spec.params == ["nu"] and {"X", "N", "nu"} <= spec.placeholders
    der = dualize(spec)
    assert not der.bound
    text = str(der)
    assert "1/(ν N)" in text and "feature space of k" in text and "α_i ≤ 1/(ν N)" in text
    import re
    assert not re.search(r"\b7\b", text.replace("(7)", ""))   # the template's size never shows
    der.to_latex()


def test_bound_spec_equals_the_data_embedded_derivation_and_solves_with_smo():
    rng = np.random.default_rng(3)
    Xtr = rng.standard_normal((120, 2))
    kernel = make_kernel("rbf", gamma=0.7)
    spec, w, rho = _one_class_spec()
    bd = dualize(spec).bind(X=Xtr, kernel=kernel, params={"nu": 0.25})
    ref = dualize(_one_class_embedded(Xtr, 0.25, kernel))
    assert bd.bound and str(bd.dual) == str(ref.dual)
    s1 = bd.dual.solve(backend="smo", tol=1e-9)
    s2 = ref.dual.solve(backend="cvxpy")
    assert abs(s1.objective_value - s2.objective_value) <= 1e-6 * abs(s2.objective_value)
    pt = bd.recover(s1)
    # decision on new points from the placeholder x, against k(Xn, Xtr) beta - rho computed here
    Xn = rng.standard_normal((40, 2))
    f = bd.evaluate(w @ phi(x) - rho, pt, x=Xn)
    K = np.exp(-0.7 * ((Xn[:, None, :] - Xtr[None, :, :]) ** 2).sum(-1))
    assert np.allclose(f, K @ pt["w"] - pt["rho"][0], atol=1e-12)


def test_bind_errors_name_the_argument():
    spec, _, _ = _one_class_spec()
    der = dualize(spec)
    Xtr = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(ValueError, match="nu"):
        der.bind(X=Xtr, kernel=make_kernel("rbf", gamma=1.0))
    with pytest.raises(ValueError, match="kernel"):
        der.bind(X=Xtr, params={"nu": 0.5})
    with pytest.raises(ValueError, match="X"):
        der.bind(X=Xtr[0], kernel=make_kernel("rbf", gamma=1.0), params={"nu": 0.5})
    emb = dualize(_one_class_embedded(Xtr, 0.5, make_kernel("rbf", gamma=1.0)))
    with pytest.raises(ValueError, match="nothing to bind"):
        emb.bind(X=Xtr)


def test_targets_placeholder_in_a_classifier_spec():
    # C-SVC on placeholders: y prints y_i, the bound dual is SMO's box QP with yᵀα = 0
    C = Param("C")
    w = FeatureVariable("w")
    b, xi = Variable("b"), Variable("xi", N)
    spec = Problem(0.5 * norm2(w) + C * vsum(xi),
                   [(y * (w @ phi(X) + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "C-SVC primal", variables=[w, b, xi])
    der = dualize(spec)
    assert "y_i" in str(der)
    rng = np.random.default_rng(1)
    Xtr = rng.standard_normal((60, 2))
    ytr = np.where(Xtr[:, 0] + 0.3 * rng.standard_normal(60) > 0, 1.0, -1.0)
    bd = der.bind(X=Xtr, y=ytr, kernel=make_kernel("rbf", gamma=0.5), params={"C": 2.0})
    s1 = bd.dual.solve(backend="smo", tol=1e-9)
    s2 = bd.dual.solve(backend="cvxpy")
    assert abs(s1.objective_value - s2.objective_value) <= 1e-6 * abs(s2.objective_value)
    pt = bd.recover(s1)
    f = bd.evaluate(w @ phi(x) + b, pt, x=Xtr)
    g = bd.evaluate(w @ phi(X) + b, pt)     # the training rows through the primal's own map
    assert np.allclose(f, g, atol=1e-9)


def test_linear_spec_on_placeholders_with_a_feature_vector():
    # the 1-norm SVM on placeholders: w ∈ R^d (d the number of features), Data("X", X) @ w
    from primaldual.model import d, norm1
    C = Param("C")
    w, b, s = Variable("w", d), Variable("b"), Variable("xi", N)
    spec = Problem(norm1(w) + C * vsum(s),
                   [(y * (Data("X", X) @ w + b) >= 1 - s).named("alpha"),
                    (s >= 0).named("mu")], "min", "L1-norm SVM primal")
    der = dualize(spec)
    assert "k = 1..d" in str(der.dual)
    rng = np.random.default_rng(2)
    Xl = rng.standard_normal((30, 5))
    yl = np.where(Xl[:, 0] - Xl[:, 1] > 0, 1.0, -1.0)
    bd = der.bind(X=Xl, y=yl, params={"C": 0.5})
    pt = bd.recover(bd.dual.solve())
    f = bd.evaluate(Data("X", x) @ w + b, pt, x=Xl[:4])
    assert np.allclose(f, Xl[:4] @ pt["w"] + pt["b"][0], atol=1e-12)


def test_division_by_a_constant_placeholder_expression_derives_as_the_product():
    """The one-class sketch written ``vsum(xi) / (nu * N)`` derives and fits exactly as
    ``1 / (nu * N) * vsum(xi)``; dividing by an expression of a variable stays a TypeError."""
    import numpy as np

    import primaldual as pd
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

    nu = Param("nu")
    w, rho, xi = FeatureVariable("w"), Variable("rho"), Variable("xi", N)
    cons = [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")]
    divided = Problem(0.5 * norm2(w) + vsum(xi) / (nu * N) - rho, cons)
    multiplied = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho, cons)
    assert str(pd.dualize(divided).dual) == str(pd.dualize(multiplied).dual)
    Z = np.random.default_rng(0).standard_normal((120, 2))
    fits = [pd.Variant(p, decision=w @ phi(x) - rho, kernel="rbf", gamma=0.5, nu=0.2).fit(Z)
            for p in (divided, multiplied)]
    np.testing.assert_allclose(fits[0].decision_function(Z), fits[1].decision_function(Z),
                               rtol=1e-10, atol=1e-12)
    with pytest.raises(TypeError, match="constant scalar expression"):
        pd.dualize(Problem(0.5 * norm2(w) + vsum(xi) / rho, cons))
