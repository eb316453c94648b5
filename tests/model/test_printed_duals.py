"""Every printed dual evaluates, from its TEXT, to the numeric dual value at the solution
(issue 26): the objective line is read by a small formula evaluator (tests/model/text_eval.py)
with its symbols bound to numbers built here (kernel matrices from X, the data and parameters),
not by the code path that built the numeric dual."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from text_eval import TextEvaluator  # tests/model (pytest puts it on the path)

import primaldual as pd
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
    y,
)
from primaldual.model.dualize import dualize

Xd = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 0.5], [-1.0, -0.5], [-2.0, 0.0], [0.5, -1.5],
               [1.5, -0.5], [-0.5, 1.5]])
YC = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0, 1.0, -1.0])
YR = np.array([0.3, 1.1, 0.9, -0.4, -1.2, 0.2, 0.5, -0.1])
K = Xd @ Xd.T                     # the linear kernel, computed here


def _objective_line(problem) -> str:
    (line,) = [ln for ln in str(problem).splitlines() if ln.strip().startswith("maximize")]
    return line.strip()[len("maximize"):].strip()


def _values(problem, sol) -> dict:
    from primaldual.model.symbols import text_symbol
    out = {}
    for v in problem.variables:
        val = np.asarray(sol.values[v.name], dtype=float).ravel()
        out[v.block_txt] = float(val[0]) if v.scalar else val
        off = 0
        for name, size, _ in getattr(v, "_stack_parts", None) or ():   # (α, μ): α and μ
            out[text_symbol(name)] = val[off:off + size]
            off += size
    return out


def _check(problem, symbols: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = problem.solve(backend="cvxpy")
    assert sol.status == "optimal"
    env = {**symbols, **_values(problem, sol)}
    printed = TextEvaluator(env).value(_objective_line(problem))
    assert np.isclose(printed, sol.objective_value, rtol=1e-7, atol=1e-8), (
        _objective_line(problem), printed, sol.objective_value)


CATALOGUE = {
    # class: (targets, parameters, symbols the printed dual uses beyond the variables)
    "HardMarginSVC": (YC, {}, {"Q": np.outer(YC, YC) * K}),
    "CSVC": (YC, {"C": 0.7}, {"Q": np.outer(YC, YC) * K}),
    "L2SVC": (YC, {"C": 0.7}, {"Q": np.outer(YC, YC) * K, "I": np.eye(8), "C": 0.7}),
    "NuSVC": (YC, {"nu": 0.4}, {"Q": np.outer(YC, YC) * K}),
    "EpsilonSVR": (YR, {"C": 0.7, "epsilon": 0.2}, {"K": K, "ε": 0.2, "y": YR}),
    "NuSVR": (YR, {"C": 0.7, "nu": 0.4}, {"K": K, "y": YR}),
    "LSSVC": (YC, {"C": 0.7}, {"Q": np.outer(YC, YC) * K, "I": np.eye(8), "C": 0.7}),
    "LSSVR": (YR, {"C": 0.7}, {"K": K, "I": np.eye(8), "C": 0.7, "y": YR}),
    "ProximalSVC": (YC, {"C": 0.7}, {"Q": np.outer(YC, YC) * K, "I": np.eye(8), "C": 0.7,
                                     "y": YC}),
    "KernelRidge": (YR, {"C": 0.7}, {"K": K, "I": np.eye(8), "C": 0.7, "y": YR}),
    "KernelLogisticRegression": (YC, {"C": 0.7}, {"Q": np.outer(YC, YC) * K, "C": 0.7,
                                                  "N": 8.0}),
}


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_printed_dual_evaluates_to_its_value(name):
    targets, params, symbols = CATALOGUE[name]
    m = getattr(pd, name)(kernel="linear", **params)
    _check(m.dual(Xd, targets), symbols)


def test_every_catalogue_method_is_covered_or_named():
    from primaldual.catalogue import METHODS
    # LapRLS / LapSVC print J K P⁻¹ Jᵀ over labelled and unlabelled points (a graph Laplacian
    # L): not bound here
    assert {m.name for m in METHODS} - set(CATALOGUE) == {"LapRLS", "LapSVC"}


def test_derived_duals_evaluate_to_their_values():
    # one-class (placeholders): Q = K
    nu = Param("nu", tex=r"\nu")
    w = FeatureVariable("w")
    rho, xi = Variable("rho"), Variable("xi", N)
    spec = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                   [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "one-class SVM primal", variables=[w, rho, xi])
    bd = dualize(spec).bind(X=Xd, kernel=make_kernel("linear"), params={"nu": 0.5})
    _check(bd.dual, {"Q": K})
    # C-SVC (placeholders): Q = D_y K D_y
    C = Param("C")
    b = Variable("b")
    spec2 = Problem(0.5 * norm2(w) + C * vsum(xi),
                    [(y * (w @ phi(X) + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                    "min", "C-SVC primal", variables=[w, b, xi])
    bd2 = dualize(spec2).bind(X=Xd, y=YC, kernel=make_kernel("linear"), params={"C": 0.7})
    _check(bd2.dual, {"Q": np.outer(YC, YC) * K, "y": YC})
    # an eliminated block with a linear term (the example): q = K 1, κ = 1/2 1ᵀK1
    Xp = Xd + 3.0
    Kp = Xp @ Xp.T
    wp = FeatureVariable("w", make_kernel("linear"), Xp)
    P = Problem(0.5 * norm2(wp) + vsum(wp @ phi(Xp)), [(wp @ phi(Xp) >= 1).named("alpha")],
                "min", "primal")
    one = np.ones(8)
    _check(dualize(P).dual, {"Q": Kp, "q": Kp @ one, "κ": 0.5 * one @ Kp @ one})


def test_svm_plus_printed_dual_evaluates_to_its_value():
    rng = np.random.default_rng(3)
    Xs = rng.normal(size=(8, 2))
    Ks = Xs @ Xs.T
    C, gam = 0.7, 0.5
    w = FeatureVariable("w", make_kernel("linear"), Xd)
    ws = FeatureVariable("w_star", make_kernel("linear"), Xs)
    b, bs = Variable("b"), Variable("b_star")
    corr = ws @ phi(Xs, "x*") + bs
    P = Problem(0.5 * norm2(w) + Data("gamma", gam, txt="γ") * (0.5 * norm2(ws))
                + Data("C", C) * vsum(corr),
                [(Data("y", YC) * (w @ phi(Xd) + b) >= 1 - corr).named("alpha"),
                 (corr >= 0).named("mu")], "min", "SVM+ primal")
    # over (α, μ): a^(w) = (y_i φ(x_i), 0), a^(w*) = (φ(x*_i), φ(x*_i)) / γ; m_w* = C Σ φ(x*_i)
    Qy = np.outer(YC, YC) * K
    Q = np.block([[Qy + Ks / gam, Ks / gam], [Ks / gam, Ks / gam]])
    m = C * np.ones(8)
    q = np.concatenate([Ks @ m, Ks @ m]) / gam
    _check(dualize(P).dual, {"Q": Q, "q": q, "κ": 0.5 * m @ Ks @ m / gam})


@pytest.mark.parametrize("norm", ["norm1", "norm_inf", "lp_svr"])
def test_norm_duals_evaluate_to_their_values(norm):
    from primaldual.model import norm1, norm_inf
    rng = np.random.default_rng(2)
    if norm == "lp_svr":
        Xr = rng.uniform(-3, 3, size=(15, 1))
        yr = np.sinc(Xr[:, 0])
        n = Xr.shape[0]
        u, b = Variable("u", n, index="M"), Variable("b")
        xi, xs = Variable("xi", n), Variable("xi_star", n)
        f = Data("K", make_kernel("rbf", gamma=0.5)(Xr)) @ u + b
        Y, eps = Data("y", yr), Data("epsilon", 0.1, txt="ε")
        P = Problem(norm1(u) + Data("C", 1.0) * vsum(xi + xs),
                    [(Y - f <= eps + xi).named("alpha"), (f - Y <= eps + xs).named("alpha_star"),
                     (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "LP-SVR")
        _check(dualize(P).dual, {"y": yr, "ε": 0.1})
        return
    Xl = rng.standard_normal((30, 5))
    yl = np.where(Xl[:, 0] - Xl[:, 1] > 0, 1.0, -1.0)
    w, b, s = Variable("w", 5, index="d"), Variable("b"), Variable("xi", 30)
    term = norm1 if norm == "norm1" else norm_inf
    P = Problem(term(w) + Data("C", 0.5) * vsum(s),
                [(Data("y", yl) * (Data("X", Xl) @ w + b) >= 1 - s).named("alpha"),
                 (s >= 0).named("mu")], "min", "l1 SVM")
    _check(dualize(P).dual, {})


def test_svor_exc_printed_dual_evaluates_to_its_value():
    # Chu & Keerthi's SVOR with explicit thresholds b_1 <= b_2, per-class slack blocks; the
    # dual stacks (α_1, α*_1, α_2, α*_2) over classes (0), (1), (1), (2): Q = A Aᵀ with rows
    # -x_i, x_i, -x_i, x_i of those classes (linear kernel)
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
    der = dualize(Problem(obj, cons, "min", "SVOR-EXC primal"))
    A = np.vstack([-Xo[yo == 0], Xo[yo == 1], -Xo[yo == 1], Xo[yo == 2]])
    _check(der.dual, {"Q": A @ A.T})


def test_a_constant_with_a_symbol_prints_it_even_when_its_values_coincide():
    # SVDD with an RBF kernel: k(x_i, x_i) = 1 for every i, yet the dual's linear term is
    # Σ_i k(x_i, x_i) α_i (true for every kernel), not Σ_i α_i
    X = np.random.default_rng(4).normal(size=(15, 2))
    a, R2, xi = FeatureVariable("a", make_kernel("rbf", gamma=0.5), X), Variable("R2"), \
        Variable("xi", 15)
    P = Problem(R2 + Data("C", 0.2) * vsum(xi),
                [(norm2(phi(X) - a) <= R2 + xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "SVDD primal")
    assert "maximize    Σ_i k(x_i, x_i) α_i - 1/2 αᵀQα" in str(dualize(P).dual)


def test_svor_exc_printed_index_sets_build_the_printed_dual():
    # the dual's Q is built from its TEXT alone: the index set of each stacked block from the
    # "over" line (R^|I_1| × R^|I_2| × ...), each set's size from the "where" line (the classes
    # have sizes 3, 4, 5, so a size names its class rows) and each block's sign from
    # "a_i = ±φ(x_i) for ..."; the printed objective then evaluates to the dual value
    import re
    rng = np.random.default_rng(5)
    yo = rng.permutation(np.repeat([0, 1, 2], [3, 4, 5]))
    Xo = rng.normal(size=(yo.size, 2))
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
    dual = dualize(Problem(obj, cons, "min", "SVOR-EXC primal")).dual
    text = str(dual)
    over = next(ln for ln in text.splitlines() if ln.strip().startswith("over"))
    sets = re.findall(r"R\^\|(I_\d)\|", over.split(",  ")[0].split("∈")[1])
    sizes = {k: int(n) for k, n in re.findall(r"\|(I_\d)\| = (\d+)", text)}
    rows = {k: np.flatnonzero(yo == [3, 4, 5].index(n)) for k, n in sizes.items()}
    signs = [-1.0 if s == "-" else 1.0 for s in re.findall(r"a_i = (-?)φ\(x_i\) for", text)]
    assert len(sets) == len(signs) == 4 and len(set(sets)) == 3
    A = np.vstack([sg * Xo[rows[k]] for sg, k in zip(signs, sets, strict=True)])
    _check(dual, {"Q": A @ A.T})


def _slack_named_s(C):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=12) > 0, 1.0, -1.0)
    w, b, s = Variable("w", 2), Variable("b"), Variable("s", 12)
    return Problem(0.5 * norm2(w) + C * vsum(s),
                   [(Data("y", y) * (Data("X", X) @ w + b) >= 1 - s).named("alpha"),
                    (s >= 0).named("mu")], "min", "soft margin, slack s")


def test_a_users_s_keeps_its_name_and_the_sign_constraint_takes_another():
    # the automatic multiplier of α ≥ 0 was called s too: two constraints named s, refused
    P = _slack_named_s(Data("C", 0.8))
    der = dualize(P)
    text = str(der.dual)
    assert "α_i ≥ 0,  i = 1..N   [t_i ≥ 0]" in text and "α_i ≤ C,  i = 1..N   [s_i ≥ 0]" in text
    d, p = der.dual.solve(backend="cvxpy"), P.solve(backend="cvxpy")
    assert d.status == p.status == "optimal"
    assert abs(d.objective_value - p.objective_value) <= 1e-7 * abs(p.objective_value)


def test_a_given_tex_symbol_is_the_text_too():
    # Data("C2", tex="C_2") is the second C, not a square: C_2 in the text as in the LaTeX
    der = dualize(_slack_named_s(Data("C2", 0.8, tex="C_2")))
    assert "α_i ≤ C_2" in str(der.dual) and "C²" not in str(der)
    assert r"\alpha_{i} \leq C_2" in der.dual.to_latex()
    assert str(Data("nu_1", 0.1, tex=r"\nu_1").txt) == "ν_1"
    assert Data("R2", 1.0).txt == "R²"        # a name alone keeps the squared-radius reading
