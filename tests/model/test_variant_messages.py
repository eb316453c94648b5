"""Messages a user writing a variant from a paper meets: a squared distance bounded from below
says how to make it convex (the SVDD-with-negatives substitution), and an SVDD decision on the
new-input placeholder is refused with the estimator's own message, not numpy's."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
from primaldual.kernels import make_kernel
from primaldual.model import FeatureVariable, N, Param, Problem, Variable, X, norm2, phi, vsum, x


def test_a_squared_distance_bounded_from_below_names_the_convex_rewrite():
    Z = np.random.default_rng(0).normal(size=(6, 2))
    a = FeatureVariable("a", make_kernel("rbf", gamma=1.0), Z)
    R2, xi = Variable("R2"), Variable("xi", 6)
    with pytest.raises(TypeError, match=r"s = R\^2 - \|\|a\|\|\^2") as exc:
        _ = norm2(phi(Z) - a) >= R2 - xi
    assert "Tax & Duin" in str(exc.value) and "k(x_l, x_l) - 2 <a, phi(x_l)> >= s - xi_l" \
        in str(exc.value)


def test_an_svdd_decision_on_new_points_is_refused_in_the_estimators_words():
    C = Param("C")
    a, R2, xi = FeatureVariable("a"), Variable("R2"), Variable("xi", N)
    P = Problem(R2 + C * vsum(xi), [(norm2(phi(X) - a) <= R2 + xi).named("alpha"),
                                    (xi >= 0).named("mu")], "min", "SVDD primal")
    Z = np.random.default_rng(1).normal(size=(30, 2))
    m = pd.Variant(P, decision=R2 - norm2(phi(x) - a), task="novelty", kernel="rbf",
                   gamma=0.5, C=0.1)
    with pytest.raises(ValueError, match=r"decision: expression 0 is not of the form"):
        m.fit(Z)
