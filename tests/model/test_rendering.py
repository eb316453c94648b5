"""Arithmetic and rendering of the modelling language: data arithmetic, printed forms that are
true as written, variables with their own index sets, stacked duals, and LaTeX that compiles
(every catalogue method and derivation, rendered row by row with matplotlib's mathtext)."""

import re

import numpy as np
import pytest

import primaldual as pd
from primaldual.kernels import make_kernel
from primaldual.model import (
    Data,
    FeatureVariable,
    Problem,
    Variable,
    norm1,
    norm2,
    phi,
    sum_squares,
    vsum,
)
from primaldual.model.dualize import dualize


def _mathtext_errors(tex: str) -> list[str]:
    """Rows of ``tex`` (an ``aligned`` block is split at ``\\\\`` and ``&``) that mathtext
    cannot render."""
    from matplotlib import mathtext

    parser = mathtext.MathTextParser("path")   # parses and lays out, no image (fast)
    body = tex.replace(r"\begin{aligned}", "").replace(r"\end{aligned}", "")
    bad = []
    for row in re.split(r"\\\\", body):
        row = row.replace("&", " ").strip()
        if not row:
            continue
        try:
            parser.parse(f"${row}$")
        except Exception as exc:  # noqa: BLE001 - any parse error is a failure to report
            bad.append(f"{row[:120]}: {str(exc).splitlines()[0][:80]}")
    return bad


y = Data("y", np.array([1.0, -1.0, 1.0]))
C = Data("C", 2.0)
s = Variable("s", 3)


@pytest.mark.parametrize("build,txt,value", [
    (lambda: 1 - y, "1 - y_i", [0.0, 2.0, 0.0]),
    (lambda: -y, "-y_i", [-1.0, 1.0, -1.0]),
    (lambda: -1 * y, "-y_i", [-1.0, 1.0, -1.0]),
    (lambda: 2 * y, "2 y_i", [2.0, -2.0, 2.0]),
    (lambda: y * 2, "2 y_i", [2.0, -2.0, 2.0]),
    (lambda: C * y, "C y_i", [2.0, -2.0, 2.0]),
])
def test_data_arithmetic(build, txt, value):
    e = build()
    assert e.txt == txt
    np.testing.assert_allclose(e.affine_value({}), value)


def test_products_with_data_render_and_evaluate():
    pt = {"s": np.array([1.0, 2.0, 3.0])}
    e = -1 * y * s
    assert e.txt == "-y_i s_i"
    np.testing.assert_allclose(e.affine_value(pt), [-1.0, 2.0, -3.0])
    e = 2 * y * s
    assert e.txt == "2 y_i s_i"
    e = (1 - y) * s
    assert e.txt == "(1 - y_i) s_i"
    np.testing.assert_allclose(e.affine_value(pt), [0.0, 4.0, 0.0])


def test_half_C_sum_squares_in_any_order():
    pt = {"s": np.array([1.0, 2.0, 3.0])}
    for e in (0.5 * C * sum_squares(s), 0.5 * (C * sum_squares(s)), C * 0.5 * sum_squares(s),
              C * sum_squares(s) * 0.5):
        assert e.value(pt) == pytest.approx(14.0)
        assert e.txt == "1/2 C Σ_i s_i²", e.txt
    P = Problem(0.5 * C * sum_squares(s), [(s >= 1).named("mu")])
    assert "∂L/∂s_i = C s_i - μ_i = 0" in str(P.kkt())


def test_python_sum_has_no_stray_zero():
    e = sum([s, 2 * s])
    assert e.txt == "s_i + 2 s_i"
    assert sum(y * s for _ in range(2)).txt == "y_i s_i + y_i s_i"


def test_variables_print_their_own_dimension():
    u, xi = Variable("u", 5), Variable("xi", 3)
    t = Variable("t", 5, index="d")
    P = Problem(vsum(xi) + vsum(u) + vsum(t), [(xi >= 0).named("mu"), (xi <= 1).named("eta"),
                                              (u >= 0).named("nu_u"), (t >= 0).named("nu_t")])
    text = str(P)
    assert "ξ ∈ R^N" in text and "u ∈ R^5" in text and "t ∈ R^d" in text
    assert "u_i ≥ 0,  i = 1..5" in text
    assert "t_k ≥ 0,  k = 1..d" in text and "Σ_k t_k" in text


def _svr_primal(n=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    yv = np.sin(X[:, 0])
    w = FeatureVariable("w", make_kernel("rbf", gamma=0.5), X)
    b, xi, xs = Variable("b"), Variable("xi", n), Variable("xi_star", n)
    yd, eps, Cd = Data("y", yv), Data("epsilon", 0.1), Data("C", 1.0)
    f = w @ phi(X) + b
    return Problem(0.5 * norm2(w) + Cd * vsum(xi) + Cd * vsum(xs),
                   [(yd - f <= eps + xi).named("alpha"), (f - yd <= eps + xs).named("alpha_star"),
                    (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "SVR primal")


def test_stacked_dual_names_and_dimensions():
    der = dualize(_svr_primal())
    text = str(der.dual)
    assert "(α, α*) ∈ R^N × R^N" in text
    assert "-Σ_i (ε - y_i) α_i - Σ_i (ε + y_i) α*_i - 1/2 (α, α*)ᵀQ(α, α*)" in text
    assert "(α_i, α*_i) ≥ 0,  i = 1..N" in text
    assert "a_i = φ(x_i) for α_i; a_i = -φ(x_i) for α*_i" in str(der)
    assert "w = Σ_i (α_i - α*_i) φ(x_i)" in str(der)
    assert "p_" not in text
    for st in der.steps:
        assert not _mathtext_errors(st.latex), st.title


def _catalogue():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 2))
    y_ = np.where(X[:, 0] > 0, 1.0, -1.0)
    for name in sorted(pd._METHODS):
        m = getattr(pd, name)()
        target = X[:, 0] if ("SVR" in name or "Ridge" in name) else y_
        yield name, m, m._prepare(X, target)


def test_every_catalogue_derivation_compiles_with_mathtext():
    """Every step of every catalogue method's mechanical derivation (the methods' own primal,
    Lagrangian, KKT and dual are checked by tests/integration/test_docs.py)."""
    bad = []
    for name, m, data in _catalogue():
        P = m._primal(data)
        try:
            der = dualize(P)
        except ValueError:
            continue
        for st in der.steps:
            bad += [f"{name} ({st.title}): {e}" for e in _mathtext_errors(st.latex)]
    assert not bad, "\n".join(bad)


def test_every_catalogue_method_renders_with_its_q_defined():
    """Every catalogue method: primal, Lagrangian, KKT and hand-written dual render in text; the
    derived dual (when the primal is a QP) states what its Q is, and that statement is the
    matrix it solves with (checked numerically for the proximal SVC, whose Q has three parts)."""
    for name, m, data in _catalogue():
        P = m._primal(data)
        for piece in (str(P), str(P.lagrangian()), str(P.kkt()), str(m._dual(data))):
            assert piece and "None" not in piece, name
        try:
            der = dualize(P)
        except ValueError:
            continue
        if der.dual.objective.terms:
            assert der.dual.definitions, name
        assert "plus the diagonal" not in str(der)
    m = pd.ProximalSVC(C=2.0, kernel="rbf", gamma=0.5)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(8, 2))
    yv = np.where(X[:, 0] > 0, 1.0, -1.0)
    der = dualize(m.primal(X, yv))
    (t, _), = der.dual.definitions
    assert t == ("Q_ij = ⟨a^(w)_i, a^(w)_j⟩ + a^(b)_i a^(b)_j + [i = j]/C with "
                 "a^(w)_i = y_i φ(x_i) for α_i; a^(b)_i = y_i for α_i"), t
    K = make_kernel("rbf", gamma=0.5)(X)
    Q = der.dual.objective.terms[0].op.dense()
    np.testing.assert_allclose(Q, np.outer(yv, yv) * K + np.outer(yv, yv) + np.eye(8) / 2.0,
                               atol=1e-12)
    lss = dualize(pd.LSSVC(C=2.0).primal(X, yv))   # prints Q + I/C: Q is the kernel part
    assert "αᵀ(Q + I/C)α" in str(lss.dual)
    assert lss.dual.definitions[0][0] == "Q_ij = ⟨a_i, a_j⟩ with a_i = y_i φ(x_i) for α_i"


def test_subsets_say_what_their_index_is():
    """Rows picked from an expression (``e[I]``) or basis points picked by index (``phi(X)[I]``)
    print what the index ranges over instead of a false ``i = 1..N`` or an undefined ``I``;
    the labelled prefix ``phi(X)[:l]`` is just ``φ(x_i)``."""
    X = np.random.default_rng(0).normal(size=(6, 2))
    w, b = FeatureVariable("w", make_kernel("linear"), X), Variable("b")
    P = Problem(0.5 * norm2(w), [(w @ phi(X)[np.array([1, 3, 4])] + b >= 1).named("alpha")])
    # the picked rows are an index set of their own, i the data row itself
    assert "⟨w, φ(x_i)⟩ + b ≥ 1,  i ∈ I_1" in str(P) and "|I_1| = 3" in str(P)
    assert not _mathtext_errors(P.to_latex())
    x = Variable("x", 5)
    assert "i ∈ I, a subset of 2 of the 5 rows" in str(2 * x[np.array([0, 2])] + 1 >= 1)
    assert "φ(x_i)" in str(Problem(0.5 * norm2(w), [(w @ phi(X)[:4] >= 1).named("alpha")]))


def test_data_matrix_products_print_true_entries():
    """``X @ w``, ``X @ (2 w)``, ``Xᵀ @ α`` and norms and least squares of them print what
    each entry is, and their stationarity conditions keep the sums over rows; forms without a
    true rendering (an entrywise weight inside ``X @ ...``) are refused."""
    Xv = np.arange(6.0).reshape(3, 2)
    X = Data("X", Xv)
    a, w = Variable("alpha", 3), Variable("w", 2, index="d")
    assert (X @ w).txt == "x_iᵀw" and (X @ (2 * w)).txt == "x_iᵀ(2 w)"
    assert (X.T @ a).txt == "Σ_i x_ik α_i"
    np.testing.assert_allclose((X.T @ a).affine_value({"alpha": np.ones(3)}), Xv.sum(axis=0))
    assert norm1(X @ w).txt == "Σ_i |x_iᵀw|" and norm1(w).txt == "‖w‖₁"
    P = Problem(vsum(a), [(X.T @ a <= 1).named("lam"), (a >= 0).named("s")], "max", "LP")
    assert "Σ_i x_ik α_i ≤ 1,  k = 1..d   [λ_k ≥ 0]" in str(P)
    assert "∂L/∂α_i = 1 + s_i - Σ_k λ_k x_ik = 0" in str(P.kkt())
    LS = Problem(sum_squares(X @ w - Data("y", np.ones(3))), [])
    assert "∂L/∂w = 2 Σ_i (x_iᵀw - y_i) x_i = 0" in str(LS.kkt())
    with pytest.raises(TypeError, match="vector variable"):
        X @ (Data("c", np.ones(2)) * w)
    for tex in (P.to_latex(), P.kkt().to_latex(), LS.kkt().to_latex()):
        assert not _mathtext_errors(tex)


def test_variant_page_quotes_current_output(repo_root):
    """Every ``text`` block that follows a ``python`` block of docs/write_your_own_variant.md is
    exactly what that code prints today (the blocks run in order, as the page reads)."""
    import contextlib
    import io

    text = (repo_root / "docs" / "write_your_own_variant.md").read_text()
    pairs = dict((c, q) for c, q in re.findall(
        r"```python\n((?:(?!```).)*?)```\n\n```text\n((?:(?!```).)*?)```", text, flags=re.S))
    ns: dict = {}
    checked = 0
    for code in re.findall(r"```python\n((?:(?!```).)*?)```", text, flags=re.S):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(code, ns)  # noqa: S102 - the page's own code
        if code in pairs:
            assert buf.getvalue().strip() == pairs[code].strip(), code[:80]
            checked += 1
    assert checked >= 4
