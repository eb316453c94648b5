"""Index sets inferred from shapes (issue 26): a coefficient vector multiplied by a data matrix
has an index set of its own (features d, letter k; an expansion M, letter j), without index=."""

from __future__ import annotations

import numpy as np

from primaldual.kernels import make_kernel
from primaldual.model import Data, Problem, Variable, norm1, vsum
from primaldual.model.dualize import dualize


def test_feature_vector_prints_per_feature_without_index():
    rng = np.random.default_rng(2)
    Xl = rng.standard_normal((30, 10))
    yl = np.where(Xl[:, 0] - Xl[:, 1] > 0, 1.0, -1.0)
    w, b, s = Variable("w", 10), Variable("b"), Variable("xi", 30)
    P = Problem(norm1(w) + Data("C", 0.5) * vsum(s),
                [(Data("y", yl) * (Data("X", Xl) @ w + b) >= 1 - s).named("alpha"),
                 (s >= 0).named("mu")], "min", "L1-norm SVM primal")
    text = str(dualize(P).dual)
    assert "Σ_i y_i x_ik α_i ≤ 1,  k = 1..d" in text
    assert "i = 1..10" not in text


def test_expansion_coefficients_print_per_expansion_index():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(15, 1))
    y = np.sinc(X[:, 0])
    n = X.shape[0]
    u, b = Variable("u", n), Variable("b")
    xi, xs = Variable("xi", n), Variable("xi_star", n)
    f = Data("K", make_kernel("rbf", gamma=0.5)(X)) @ u + b
    Y, eps = Data("y", y), Data("epsilon", 0.1, txt="ε")
    P = Problem(norm1(u) + Data("C", 1.0) * vsum(xi + xs),
                [(Y - f <= eps + xi).named("alpha"), (f - Y <= eps + xs).named("alpha_star"),
                 (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "LP-SVR primal")
    der = dualize(P)
    assert "u ∈ R^M" in str(der.primal)
    assert "|Σ_i k_ij α_i - Σ_i k_ij α*_i| ≤ 1,  j = 1..M" in str(der)
    assert "k_i α_i" not in str(der)


def test_blocks_over_different_rows_are_summed_apart_and_numbered_names_subscripted():
    # SVOR-like: multipliers over different class subsets of phi(X) are never added "at the
    # same i"; alpha1, xi_star2, b2 print α_1, ξ*_2, b_2 (b2 is not b²: only R2 is a square)
    from primaldual.model import FeatureVariable, norm2, phi
    from primaldual.model.symbols import text_symbol
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    lo, hi = np.arange(0, 5), np.arange(5, 12)
    w = FeatureVariable("w", make_kernel("linear"), X)
    b1, b2 = Variable("b1"), Variable("b2")
    x1, x2 = Variable("xi1", lo.size), Variable("xi_star2", hi.size)
    P = Problem(0.5 * norm2(w) + vsum(x1) + vsum(x2),
                [(w @ phi(X)[lo] - b1 <= -1 + x1).named("alpha1"),
                 (w @ phi(X)[hi] - b2 >= 1 - x2).named("alpha_star1"),
                 (x1 >= 0).named("mu1"), (x2 >= 0).named("mu_star1")], "min", "blocks")
    text = str(dualize(P))
    # each row subset is an index set of its own (I_1 = lo, I_2 = hi), i the data row itself
    assert "Σ_i α_1,i φ(x_i)" in text and "Σ_i α*_1,i φ(x_i)" in text
    assert "i ∈ I_1" in text and "i ∈ I_2" in text and "|I_1| = 5, |I_2| = 7" in text
    assert "(α_1,i - α*_1,i)" not in text
    assert (text_symbol("b2"), text_symbol("R2"), text_symbol("xi_star2")) == ("b_2", "R²", "ξ*_2")
