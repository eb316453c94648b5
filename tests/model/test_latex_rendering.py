"""LaTeX of derivations (issue 26): titles carry no raw Unicode inside ``\\textbf{}``, names
such as ``s_alpha_star`` never make a double subscript, and every display parses with mathtext."""

from __future__ import annotations

import re

import numpy as np
import pytest

from primaldual.kernels import make_kernel
from primaldual.model import Data, FeatureVariable, Problem, Variable, norm1, norm2, phi, vsum
from primaldual.model.dualize import dualize
from primaldual.model.symbols import latex_indexed, latex_symbol


def _lp_svr():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(15, 1))
    y = np.sinc(X[:, 0])
    n = X.shape[0]
    u, b = Variable("u", n, index="M"), Variable("b")
    xi, xs = Variable("xi", n), Variable("xi_star", n)
    f = Data("K", make_kernel("rbf", gamma=0.5)(X)) @ u + b
    Y, eps = Data("y", y), Data("epsilon", 0.1, txt="ε")
    return Problem(norm1(u) + Data("C", 1.0) * vsum(xi + xs),
                   [(Y - f <= eps + xi).named("alpha"), (f - Y <= eps + xs).named("alpha_star"),
                    (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "LP-SVR primal")


def _svm_plus():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    Xs = rng.normal(size=(10, 2))
    w = FeatureVariable("w", make_kernel("linear"), X)
    ws = FeatureVariable("w_star", make_kernel("linear"), Xs)
    b, bs = Variable("b"), Variable("b_star")
    corr = ws @ phi(Xs, "x*") + bs
    return Problem(0.5 * norm2(w) + Data("gamma", 0.5, txt="γ") * (0.5 * norm2(ws))
                   + Data("C", 1.0) * vsum(corr),
                   [(Data("y", y) * (w @ phi(X) + b) >= 1 - corr).named("alpha"),
                    (corr >= 0).named("mu")], "min", "SVM+ primal")


def _svor():
    rng = np.random.default_rng(13)
    Xo = rng.normal(size=(12, 2))
    yo = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
    w = FeatureVariable("w", make_kernel("linear"), Xo)
    b = [Variable("b1"), Variable("b2")]
    obj, cons = 0.5 * norm2(w), []
    for j in range(2):
        lo, hi = np.flatnonzero(yo == j), np.flatnonzero(yo == j + 1)
        xl, xh = Variable(f"xi{j + 1}", lo.size), Variable(f"xi_star{j + 2}", hi.size)
        obj = obj + Data("C", 1.0) * vsum(xl) + Data("C", 1.0) * vsum(xh)
        cons += [(w @ phi(Xo)[lo] - b[j] <= -1 + xl).named(f"alpha{j + 1}"),
                 (w @ phi(Xo)[hi] - b[j] >= 1 - xh).named(f"alpha_star{j + 1}"),
                 (xl >= 0).named(f"mu{j + 1}"), (xh >= 0).named(f"mu_star{j + 1}")]
        if j:
            cons.append((b[j] - b[j - 1] >= 0).named(f"mu_b{j + 1}"))
    return Problem(obj, cons, "min", "SVOR-EXC primal")


def _svdd():
    X = np.random.default_rng(4).normal(size=(15, 2))
    a, R2, xi = FeatureVariable("a", make_kernel("rbf", gamma=0.5), X), Variable("R2"), \
        Variable("xi", 15)
    return Problem(R2 + Data("C", 0.2) * vsum(xi),
                   [(norm2(phi(X) - a) <= R2 + xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "SVDD primal")


def _l1_svm():
    rng = np.random.default_rng(2)
    Xl = rng.standard_normal((20, 4))
    yl = np.where(Xl[:, 0] - Xl[:, 1] > 0, 1.0, -1.0)
    w, b, s = Variable("w", 4), Variable("b"), Variable("xi", 20)
    return Problem(norm1(w) + Data("C", 0.5) * vsum(s),
                   [(Data("y", yl) * (Data("X", Xl) @ w + b) >= 1 - s).named("alpha"),
                    (s >= 0).named("mu")], "min", "L1-norm SVM primal")


def test_starred_subscripted_names_have_one_subscript():
    assert latex_symbol("s_alpha_star") == r"s_{\alpha^*}"
    assert latex_indexed("s_alpha_star") == r"s_{\alpha^*,i}"
    assert latex_indexed("alpha_star") == r"\alpha^*_{i}"


def _mathtext_rows(latex: str) -> list[str]:
    t = latex.replace(r"\begin{aligned}", "").replace(r"\end{aligned}", "")
    t = re.sub(r"\\(ge|le)(?![a-zA-Z])", r"\\\1q", t)
    rows = [r.replace("&&", r"\quad ").replace("&", "").strip() for r in re.split(r"\\\\", t)]
    return [r for r in rows if r]


@pytest.mark.parametrize("make", [_lp_svr, _svm_plus, _svor, _svdd, _l1_svm],
                         ids=["lp_svr", "svm_plus", "svor", "svdd", "l1_svm"])
def test_derivation_latex_titles_ascii_and_displays_parse(make):
    from matplotlib import mathtext

    parser = mathtext.MathTextParser("path")
    tex = dualize(make()).to_latex()
    assert "}^*_{" not in tex and "^*_{i}^" not in tex
    assert not re.search(r"_\{[^{}]*\}\^\*_\{", tex)       # x_{a}^*_{i}: a double subscript
    titles = re.findall(r"\\textbf\{(.*)\}\n", tex)
    assert titles
    for t in titles:
        assert t.isascii(), t
        for seg in re.findall(r"\$([^$]*)\$", t):
            parser.parse(f"${seg}$")
    for block in re.findall(r"\\\[\n(.*?)\n\\\]", tex, flags=re.S):
        for row in _mathtext_rows(block):
            parser.parse(f"${row}$")
