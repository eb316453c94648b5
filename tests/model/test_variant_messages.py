"""Messages a user writing a variant from a paper meets: a squared distance bounded from below
is kept, and without the ball's radius the message names the substitution it needs; an SVDD
decision on the new-input placeholder works (RBF) or is refused in the estimator's words."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
from primaldual.kernels import make_kernel
from primaldual.model import FeatureVariable, Problem, Variable, norm2, phi, vsum, x
from tests.methods.test_variant_new_rows import svdd


def test_a_squared_distance_bounded_from_below_is_kept_and_needs_the_balls_radius():
    """The row is kept as printed (flagged); dualised without a radius in the rows, the
    message names the substitution that would make it convex and what it lacks."""
    from primaldual.model.dualize import dualize
    Z = np.random.default_rng(0).normal(size=(6, 2))
    a = FeatureVariable("a", make_kernel("rbf", gamma=1.0), Z)
    R2, xi = Variable("R2"), Variable("xi", 6)
    c = norm2(phi(Z) - a) >= R2 - xi
    assert c.below_ball
    with pytest.raises(TypeError, match=r"R\^2 = s \+ \|\|a\|\|\^2, which needs the "
                                        r"ball's radius") as exc:
        dualize(Problem(R2 + vsum(xi), [(norm2(phi(Z) - a) >= 1 - xi).named("alpha"),
                                        (xi >= 0).named("mu")]))
    assert "nonconvex" in str(exc.value)


def test_an_svdd_decision_on_new_points_is_read_on_every_kernel():
    """``R² - ‖φ(x) - a‖²``: with an RBF kernel (``k(x, x) = 1``) an expansion plus a
    constant, read with ``‖a‖²`` at the fitted point; with a linear kernel ``k(x, x) = ‖x‖²``
    varies with ``x`` and is the decision's ``diag_coef_ = -1`` term."""
    P, _, _, _ = svdd()
    a, R2 = P.variable("a"), P.variable("R2")
    Z = np.random.default_rng(1).normal(size=(30, 2))
    m = pd.Variant(P, decision=R2 - norm2(phi(x) - a), task="novelty", kernel="rbf",
                   gamma=0.5, C=0.1, tol=1e-9).fit(Z)
    ref = pd.Variant(P, decision=a @ phi(x) - R2, task="novelty", kernel="rbf",
                     gamma=0.5, C=0.1, tol=1e-9).fit(Z)
    # the same fit: R² - ‖φ(x) - a‖² = 2 <a, φ(x)> - 1 - ‖a‖² + R², and <a, φ(x)> - R² is
    # the other decision, so f = 2 g + 3 R² - 1 - ‖a‖² with R², ‖a‖² of the fit
    Zq = np.random.default_rng(2).normal(size=(20, 2))
    f, g = m.decision_function(Zq), ref.decision_function(Zq)
    slope, shift = np.polyfit(g, f, 1)
    assert slope == pytest.approx(2.0, abs=1e-8)
    np.testing.assert_allclose(f, 2 * g + shift, atol=1e-8)
    assert m.diag_coef_ is None
    lin = pd.Variant(P, decision=R2 - norm2(phi(x) - a), task="novelty", kernel="linear",
                     C=0.1, tol=1e-9).fit(Z)
    assert lin.diag_coef_ is not None and lin.diag_coef_.tolist() == [-1.0]
    # the distance from the centre a = Σ_i β_i x_i itself, with R² of the fit
    centre = lin.dual_coef_[0] / 2 @ lin.support_vectors_   # f = R² - ‖a‖² + 2 aᵀx - ‖x‖²
    r2 = float(np.ravel(lin.point_["R2"])[0])
    np.testing.assert_allclose(lin.decision_function(Zq),
                               r2 - np.sum((Zq - centre) ** 2, axis=1), atol=1e-8)
