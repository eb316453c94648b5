"""Stationarity residuals of nonsmooth terms are dist(0, ∂L) (issue 26): the subgradient
sign(0) = 0 made true optima of l1 problems report a residual of order 1."""

from __future__ import annotations

import numpy as np
import pytest

from primaldual import testing
from primaldual.model import (
    Data,
    Problem,
    Variable,
    absolute,
    norm1,
    norm_inf,
    sum_squares,
    vsum,
)


def _l1_svm(term):
    rng = np.random.default_rng(2)
    Xl = rng.standard_normal((30, 5))
    yl = np.where(Xl[:, 0] - Xl[:, 1] > 0, 1.0, -1.0)
    w, b, s = Variable("w", 5, index="d"), Variable("b"), Variable("xi", 30)
    return Problem(term(w) + Data("C", 0.5) * vsum(s),
                   [(Data("y", yl) * (Data("X", Xl) @ w + b) >= 1 - s).named("alpha"),
                    (s >= 0).named("mu")], "min", "l1 SVM primal")


@pytest.mark.parametrize("term", [norm1, norm_inf], ids=["norm1", "norm_inf"])
def test_nonsmooth_svm_optimum_passes_assert_kkt_and_a_perturbed_point_fails(term):
    sol = _l1_svm(term).solve()
    w = np.asarray(sol.values["w"])
    # the optimum sits where the norm is not differentiable: zero entries (l1), a tie for the
    # largest entry (l-inf)
    a = np.sort(np.abs(w))
    assert a[0] < 1e-6 if term is norm1 else a[-1] - a[-2] < 1e-6
    testing.assert_kkt(sol, tol=1e-6)
    sol.values["w"] = w + 0.05
    assert sol.kkt_residuals()["stationarity[w]"] > 1e-2


def test_distance_to_the_subdifferential_by_hand():
    # f(x) = |x| + 1/2 (x - a)^2 at x = 0: ∂f(0) = [-1, 1] - a, so dist(0, ∂f(0)) = max(0, |a| - 1)
    x = Variable("x", 1)
    for a, expected in [(0.5, 0.0), (2.0, 1.0), (-3.0, 2.0)]:
        P = Problem(norm1(x) + 0.5 * sum_squares(x - Data("a", np.array([a]))), [], "min", "p")
        res = P.kkt().stationarity_residual(x, {"x": np.array([0.0])}, {})
        assert np.allclose(res, [expected], atol=1e-12)
    # away from 0 the subdifferential is the gradient: sign(x) + x - a at x = 1, a = 0.5
    res = P.kkt().stationarity_residual(x, {"x": np.array([1.0])}, {})
    assert np.allclose(res, [abs(1.0 + 1.0 + 3.0)], atol=1e-12)


def test_least_absolute_deviations_optimum_through_a_coupled_argument():
    # Σ_i |y_i - x_iᵀw|: the argument couples w's entries (no diagonal shortcut)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((25, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(25)
    w = Variable("w", 3, index="d")
    P = Problem(vsum(absolute(Data("y", y) - Data("X", X) @ w)), [], "min", "LAD")
    sol = P.solve()
    testing.assert_kkt(sol, tol=1e-6)
    sol.values["w"] = np.asarray(sol.values["w"]) + 0.1
    assert sol.kkt_residuals()["stationarity[w]"] > 1e-2
