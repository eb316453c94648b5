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


def _svor(sizes=(5, 7, 8), seed=13):
    """SVOR-EXC as tests/model/test_textbook_variants.py writes it, on classes 0, 1, 2 of the
    given sizes in shuffled order (no class is a prefix of the rows)."""
    from test_textbook_variants import svor_exc_spec  # tests/model (pytest puts it on the path)
    rng = np.random.default_rng(seed)
    yo = rng.permutation(np.repeat(np.arange(3), sizes))
    Xo = rng.normal(size=(yo.size, 2))
    P, _ = svor_exc_spec(Xo, yo, make_kernel("linear"), 1.0)
    return P, Xo, yo


def test_svor_exc_prints_an_index_set_per_class_block_everywhere():
    # the per-class row blocks are index sets I_1 (class 0), I_2 (class 1), I_3 (class 2) with
    # their sizes, the same in the primal, the Lagrangian, the KKT conditions, every step of the
    # derivation and the dual; no "i = 1..N" for a block of length n_k, no undefined I_i
    from test_rendering import _mathtext_errors
    P, _, _ = _svor()
    primal = str(P)
    for line in ("ξ_1 ∈ R^|I_1|, ξ*_2 ∈ R^|I_2|, ξ_2 ∈ R^|I_2|, ξ*_3 ∈ R^|I_3|",
                 "⟨w, φ(x_i)⟩ - b_1 ≤ ξ_1,i - 1,  i ∈ I_1   [α_1,i ≥ 0]",
                 "⟨w, φ(x_i)⟩ - b_1 ≥ 1 - ξ*_2,i,  i ∈ I_2   [α*_1,i ≥ 0]",
                 "⟨w, φ(x_i)⟩ - b_2 ≤ ξ_2,i - 1,  i ∈ I_2   [α_2,i ≥ 0]",
                 "⟨w, φ(x_i)⟩ - b_2 ≥ 1 - ξ*_3,i,  i ∈ I_3   [α*_2,i ≥ 0]",
                 "ξ_1,i ≥ 0,  i ∈ I_1", "ξ*_3,i ≥ 0,  i ∈ I_3",
                 "|I_1| = 5, |I_2| = 7, |I_3| = 8"):
        assert line in primal, line
    kkt = str(P.kkt())
    for line in ("ξ_1,i - 1 - (⟨w, φ(x_i)⟩ - b_1) ≥ 0,  i ∈ I_1", "ξ*_2,i ≥ 0,  i ∈ I_2",
                 "⟨w, φ(x_i)⟩ - b_2 - (1 - ξ*_3,i) ≥ 0,  i ∈ I_3"):
        assert line in kkt, line
    der = dualize(P)
    text = str(der)
    for shown in (text, kkt, str(P.lagrangian())):
        assert "{I_i}" not in shown and "= 1..N" not in shown and "selected points" not in shown
    dual = str(der.dual)
    for line in ("(α_1, α*_1, α_2, α*_2) ∈ R^|I_1| × R^|I_2| × R^|I_2| × R^|I_3|",
                 "α_1,i ≤ C,  i ∈ I_1   [ξ_1,i ≥ 0]", "α*_1,i ≤ C,  i ∈ I_2   [ξ*_2,i ≥ 0]",
                 "α_2,i ≤ C,  i ∈ I_2   [ξ_2,i ≥ 0]", "α*_2,i ≤ C,  i ∈ I_3   [ξ*_3,i ≥ 0]",
                 "|I_1| = 5, |I_2| = 7, |I_3| = 8"):
        assert line in dual, line
    assert not _mathtext_errors(P.to_latex()) and not _mathtext_errors(der.dual.to_latex())
    for tex in (P.to_latex(), der.dual.to_latex()):
        tex = " ".join(tex.split())
        assert r"i \in I_1" in tex and r"i \in I_3" in tex and r"|I_{3}| = 8" in tex
    for st in der.steps:
        assert not _mathtext_errors(st.latex), st.title


def test_a_constraint_on_a_row_subset_prints_its_subset_in_the_kkt_conditions_too():
    # N = 6 samples; a constraint on the rows {0, 2, 5} ties its slack ξ to that index set;
    # a vector u of 2 entries over no rows prints its own length: the same in the primal and
    # the KKT conditions (which printed i = 1..N for both)
    from primaldual.model import FeatureVariable, norm2, phi
    X6 = np.random.default_rng(1).normal(size=(6, 2))
    w, b = FeatureVariable("w", make_kernel("linear"), X6), Variable("b")
    xi, u = Variable("xi", 3), Variable("u", 2)
    P = Problem(0.5 * norm2(w) + vsum(xi) + vsum(u),
                [(w @ phi(X6) + b >= 1).named("alpha"),
                 (w @ phi(X6)[np.array([0, 2, 5])] - b >= 1 - xi).named("beta"),
                 (xi >= 0).named("mu"), (u >= 0).named("nu")], "min", "subset")
    primal, kkt = str(P), str(P.kkt())
    assert "ξ ∈ R^|I_1|, u ∈ R^2" in primal and "|I_1| = 3" in primal
    assert "φ(x_i)⟩ - b - (1 - ξ_i) ≥ 0,  i ∈ I_1" in kkt
    for shown in (primal, kkt):
        assert "ξ_i ≥ 0,  i ∈ I_1" in shown and "u_i ≥ 0,  i = 1..2" in shown
        assert "⟨w, φ(x_i)⟩ + b" in shown and "i = 1..N" in shown     # the full rows stay i
    dual = str(dualize(P).dual)
    assert "β_i ≤ 1,  i ∈ I_1" in dual and "|I_1| = 3" in dual


def test_kkt_printed_before_the_primal_names_the_same_index_sets():
    # P.kkt() / P.lagrangian() printed first (before str(P) or dualize) read the index sets too
    from primaldual.model import FeatureVariable, norm2, phi
    X6 = np.random.default_rng(1).normal(size=(6, 2))

    def build():
        w, b = FeatureVariable("w", make_kernel("linear"), X6), Variable("b")
        xi = Variable("xi", 3)
        return Problem(0.5 * norm2(w) + vsum(xi),
                       [(w @ phi(X6) + b >= 1).named("alpha"),
                        (w @ phi(X6)[np.array([0, 2, 5])] - b >= 1 - xi).named("beta"),
                        (xi >= 0).named("mu")], "min", "subset")

    assert "ξ_i ≥ 0,  i ∈ I_1" in str(build().kkt())
    lag = str(build().lagrangian())
    assert "φ(x_i)⟩ - b - (1 - ξ_i)" in lag and "I_i" not in lag   # the row is i, not I_i


def test_twin_plane_prints_each_data_set_with_its_own_index():
    """A's rows run over i = 1..N_A, B's (the constraints', the multipliers') over j = 1..N_B;
    α lives in R^{N_B} (it has |B| entries); the rows of B print B_j, never b_j beside the bias
    b; a kernel block K_A prints K_A,i (not k_a_i); Q's second index is not a data set's."""
    from primaldual.methods.twin import twin_plane_spec
    from tests.model.test_textbook_variants import _clf, twin_plane_primal
    P = twin_plane_primal()[0]
    der = dualize(P)
    text = str(der)
    assert "1/2 Σ_i (A_iᵀw + b)² + c_1 Σ_j ξ_j" in text
    assert "ξ ∈ R^N_B, w ∈ R^d, b ∈ R" in text
    assert "-(B_jᵀw + b) + ξ_j ≥ 1,  j = 1..N_B   [α_j ≥ 0]" in text
    assert "∂L/∂w = Σ_i (A_iᵀw + b) A_i + Σ_j α_j B_j = 0" in text
    assert "H = ∂²L/∂(w, b)² = Σ_l (A_l, 1)(A_l, 1)ᵀ" in text
    dual = str(der.dual)
    assert "α ∈ R^N_B" in dual and "α_j ≤ c_1,  j = 1..N_B   [ξ_j ≥ 0]" in dual
    assert "Q_jm = (a_j)ᵀH⁻¹a_m" in dual and "a_j = (-B_j, -1) for α_j" in dual
    assert "b_" not in text and "Σ_i α" not in text and "R^N " not in text
    tex = der.dual.to_latex()
    assert r"\alpha_{j} \leq c_{1},\ j = 1,\dots,N_B" in tex
    assert r"a_{j} = \left(-B_{j}, -1\right)" in tex
    assert r"\sum_{i} \left(A_{i}^T w + b\right)^2" in P.to_latex()
    X, y = _clf(0, n=30)
    P2 = twin_plane_spec(-1.0)(X, y, make_kernel("rbf", gamma=0.5), 0.7, 0.1)[0]
    t2 = str(dualize(P2))
    assert "1/2 Σ_j (K_B,jᵀu + b)²" in t2 and "K_A,iᵀu + b + ξ_i ≥ 1,  i = 1..N_A" in t2
    assert "Σ_l (K_B,l, 1)(K_B,l, 1)ᵀ + ε I" in t2 and "Q_im = (a_i)ᵀH⁻¹a_m" in t2
    assert "k_a" not in t2 and "Q_ij" not in t2 and "α ∈ R^N_A" in t2


def test_index_letter_must_be_one_letter():
    import pytest
    with pytest.raises(TypeError, match="one letter"):
        Variable("xi", 3, index="N_B", letter="jj")
    with pytest.raises(TypeError, match="index must be"):
        Data("B", np.ones((2, 2)), index="")
