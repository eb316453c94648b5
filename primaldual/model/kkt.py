"""KKT conditions of a Problem: rendered like a textbook and evaluated as residuals.

For ``min f`` with ``L = f - sum lambda^T g`` (``max f``: ``L = f + sum lambda^T g``):

* stationarity, one condition per variable block: ``dL/dx = 0`` (a feature-space block's residual
  is the feature-space norm ``sqrt(r^T K r)`` of ``r = dL/dw`` in coefficient form);
* primal feasibility: ``g(x) >= 0``, ``h(x) = 0`` (residual ``max(0, -g)``, ``|h|``);
* dual feasibility: ``lambda >= 0`` on inequalities (residual ``max(0, -lambda)``);
* complementary slackness: ``lambda_i g_i(x) = 0`` (residual ``|lambda_i g_i|``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .coef_text import _has_top_sum, coef_mul
from .terms import Norm1


@dataclass
class Condition:
    """One KKT condition: ``key`` (e.g. ``"stationarity[w]"``), kind, rendering and residual.

    ``render()`` gives ``(txt, tex)``; it runs the first time ``txt`` or ``tex`` is read: a
    certificate evaluates every residual of a fit and reads no text."""

    key: str
    kind: str
    render: Callable[[], tuple[str, str]]
    residual: Callable[[dict, dict], np.ndarray]

    @functools.cached_property
    def _text(self) -> tuple[str, str]:
        return self.render()

    @property
    def txt(self) -> str:
        return self._text[0]

    @property
    def tex(self) -> str:
        return self._text[1]

    def __str__(self) -> str:
        return self.txt


def _join(parts: list[tuple[str, str]]) -> tuple[str, str]:
    t = x = ""
    for pt, px in parts:
        if not t:
            t, x = pt, px
        elif pt.startswith("-"):
            t, x = f"{t} - {pt[1:]}", f"{x} - {px[1:]}"
        else:
            t, x = f"{t} + {pt}", f"{x} + {px}"
    return (t or "0"), (x or "0")


class KKTConditions:
    """All KKT conditions of a problem (``.conditions``), grouped by kind."""

    KINDS = ("stationarity", "primal feasibility", "dual feasibility", "complementary slackness")

    def __init__(self, problem: Any) -> None:
        self.problem = problem
        self.sign = -1.0 if problem.sense == "min" else 1.0
        self.conditions: list[Condition] = []
        for v in problem.variables:
            self.conditions.append(Condition(
                f"stationarity[{v.name}]", "stationarity",
                functools.partial(self._stationarity_text, v),
                functools.partial(self.stationarity_residual, v)))
        cons = [(c, c.equality) for c in problem.constraints]
        for c, eq in cons:
            self.conditions.append(Condition(
                f"primal_feasibility[{c.multiplier}]", "primal feasibility",
                functools.partial(_feasibility_text, c, eq),
                lambda x, m, c=c: c.violation(x)))
        inequalities = [c for c, eq in cons if not eq]
        for c in inequalities:
            self.conditions.append(Condition(
                f"dual_feasibility[{c.multiplier}]", "dual feasibility",
                lambda c=c: (f"{c.mult_txt} ≥ 0", f"{c.mult_tex} \\geq 0"),
                lambda x, m, c=c: np.maximum(0.0, -_mult(m, c))))
        for c in inequalities:
            self.conditions.append(Condition(
                f"complementarity[{c.multiplier}]", "complementary slackness",
                functools.partial(_complementarity_text, c),
                lambda x, m, c=c: np.abs(_mult(m, c) * c.value(x))))

    # ----- stationarity
    def _stationarity_text(self, v) -> tuple[str, str]:
        """``dL/dv = ... = 0`` as text and TeX, with the solved form where there is one."""
        p = self.problem
        parts: list[tuple[str, str]] = []
        obj = p.objective
        own = None
        if v in obj.ctx:
            coef = obj.ctx[v]
            if v.scalar and v not in obj.summed:
                parts.append(coef)
            elif v.scalar or v.feature:
                parts.append((f"Σ_i {coef[0]}", rf"\sum_{{i}} {coef[1]}"))
            else:
                parts.append(coef)
        for t in obj.terms:
            d = t.derivative_text(v)
            if d is not None:
                parts.append(d)
                if d[0] in (v.txt, v.block_txt) and own is None:
                    own = d
        cons_parts: list[tuple[str, str]] = []
        bare: tuple[str, str] | None = None   # the one multiplier, when it appears alone
        summed: dict[tuple[str, str], list[tuple[bool, str, str]]] = {}
        for c in p.constraints:
            if v not in c.g.ctx:
                continue
            coef = c.g.ctx[v]
            if sums_over_rows(v, c):
                # Σ_i (sign) mult_i tail_i; constraints sharing the tail are merged below so
                # that epsilon-SVR reads Σ_i (α_i - α*_i) φ(x_i)
                neg = coef[0].startswith("-") and not _has_top_sum(coef[0][1:])
                tail = (coef[0][1:], coef[1][1:]) if neg else coef
                m_neg = c.mult_txt.startswith("-")
                mt, mx = (c.mult_txt[1:], c.mult_tex[1:]) if m_neg else (c.mult_txt, c.mult_tex)
                # merged only over the same rows (same selection of v's entries): sums over
                # different row subsets (SVOR's per-class blocks) stay apart, one per block
                summed.setdefault((tail, c.letter, _rows_key(c, v)), []).append(
                    (neg != m_neg, mt, mx))
                continue
            else:
                term = coef_mul((c.mult_txt, c.mult_tex), coef)
                if coef in (("1", "1"), ("-1", "-1")):
                    bare = (c.mult_txt, c.mult_tex, coef[0])
            cons_parts.append(term)
        for (tail, letter, _), ms in summed.items():
            lead = ms[0][0]
            if len(ms) == 1:
                inner = (ms[0][1], ms[0][2])
            else:
                inner_t = ms[0][1] + "".join(f" {'+' if n == lead else '-'} {t}"
                                            for n, t, _ in ms[1:])
                inner_x = ms[0][2] + "".join(f" {'+' if n == lead else '-'} {x}"
                                            for n, _, x in ms[1:])
                inner = (f"({inner_t})", rf"\left({inner_x}\right)")
            t0, t1 = coef_mul(inner, tail)
            term = (f"Σ_{letter} {t0}", rf"\sum_{{{letter}}} {t1}")
            cons_parts.append(("-" + term[0], "-" + term[1]) if lead else term)
        signed = [_neg(t) if self.sign < 0 else t for t in cons_parts]
        lhs_t, lhs_x = _join(parts + signed)
        # block form (∂L/∂w) when v's coefficients are vectors: a scalar, a feature-space
        # block, a variable with its own index in rows over another set (x_i in X @ w) or summed
        # over the rows of an objective term; a variable over the samples in rows over another
        # set keeps its entries (∂L/∂α_i = ... Σ_k λ_k x_ik)
        block = v.scalar or v.feature or (v.blockwise and any(
            sums_over_rows(v, c) for c in p.constraints if v in c.g.ctx)) or any(
            getattr(t, "sums_rows", lambda u: False)(v) for t in obj.terms)
        name_t = v.block_txt if block else v.txt
        name_x = v.block_tex if block else v.tex
        nonsmooth = any(getattr(t, "nonsmooth", False) and any(u is v for u in t.variables)
                        for t in obj.terms)
        if nonsmooth:
            # a subdifferential: the condition is an inclusion
            txt = f"0 ∈ ∂_{name_t} L = {lhs_t}"
            tex = rf"0 \in \partial_{{{name_x}}} L = {lhs_x}"
        else:
            txt = f"∂L/∂{name_t} = {lhs_t} = 0"
            tex = rf"\frac{{\partial L}}{{\partial {name_x}}} = {lhs_x} = 0"
        if own is not None and len(parts) == 1 and cons_parts:
            # solved form, e.g.  w = Σ_i α_i y_i φ(x_i)
            rhs = cons_parts if self.sign < 0 else [_neg(t) for t in cons_parts]
            rt, rx = _join(rhs)
            txt += f"   ⇒  {own[0]} = {rt}"
            tex += rf"\;\Rightarrow\; {own[1]} = {rx}"
        elif own is None and len(parts) == 1 and len(cons_parts) == 1 and bare is not None:
            # solved for the multiplier, e.g. alpha_i = C sigma(-z_i)
            flip = (bare[2] == "-1") == (self.sign > 0)
            rt, rx = parts[0] if flip else coef_mul(("-1", "-1"), parts[0])
            rel_t, rel_x = ("∈", r"\in") if nonsmooth else ("=", "=")   # a subdifferential
            txt += f"   ⇒  {bare[0]} {rel_t} {rt}"
            tex += rf"\;\Rightarrow\; {bare[1]} {rel_x} {rx}"
        return txt, tex

    def gradient(self, v, point: dict, multipliers: dict) -> np.ndarray:
        """``dL/dv`` at the point (coefficient form for feature-space blocks)."""
        g = np.zeros(v.size)
        g = g + self.problem.objective.gradient(point).get(v, 0.0)
        for c in self.problem.constraints:
            if v in c.g.lin:
                lam = _mult(multipliers, c)
                g = g + self.sign * c.g.gradient(point, lam).get(v, 0.0)
        return np.asarray(g, dtype=float)

    def stationarity_residual(self, v, point: dict, multipliers: dict) -> np.ndarray:
        """``dist(0, ∂_v L)`` entry by entry: the gradient's absolute value for a smooth ``L``;
        with nonsmooth terms (``norm1``, ``vsum(c * abs(.))``, ``norm_inf``) the distance from 0
        to the subdifferential, whose free part (the entries where a norm's argument is 0) is
        chosen to make it smallest (not the subgradient ``sign(0) = 0``)."""
        g = self.gradient(v, point, multipliers)
        ns = [t for t in self.problem.objective.terms
              if getattr(t, "nonsmooth", False) and any(u is v for u in t.variables)]
        if ns and not v.feature:
            return subdifferential_distance(g, v, ns, point)
        if v.feature:
            return np.array([np.sqrt(max(0.0, float(g @ v.gram_matvec(g))))])
        return np.abs(g)

    # ----- evaluation and rendering
    def residuals(self, point: dict, multipliers: dict) -> dict[str, np.ndarray]:
        """Every residual per sample, keyed like ``"stationarity[w]"``."""
        return {c.key: np.atleast_1d(np.asarray(c.residual(point, multipliers), dtype=float))
                for c in self.conditions}

    def max_residuals(self, point: dict, multipliers: dict) -> dict[str, float]:
        return {k: float(np.max(v)) if v.size else 0.0
                for k, v in self.residuals(point, multipliers).items()}

    def __iter__(self):
        return iter(self.conditions)

    def __len__(self) -> int:
        return len(self.conditions)

    def __str__(self) -> str:
        lines = [f"KKT conditions of {self.problem.name}:"]
        for kind in self.KINDS:
            conds = [c for c in self.conditions if c.kind == kind]
            if conds:
                lines.append(f"  {kind}:")
                lines += [f"    {c.txt}" for c in conds]
        return "\n".join(lines)

    __repr__ = __str__

    def to_latex(self) -> str:
        rows = []
        for kind in self.KINDS:
            for c in self.conditions:
                if c.kind == kind:
                    rows.append(rf"&{c.tex} && \text{{({kind})}}")
        return r"\begin{aligned}" + r"\\ ".join(rows) + r"\end{aligned}"

    def _repr_latex_(self) -> str:
        return "$$" + self.to_latex() + "$$"


def _feasibility_text(c, equality: bool) -> tuple[str, str]:
    gt, gx = c.g_render()
    op_t, op_x = ("=", "=") if equality else ("≥", r"\geq")
    w = c.where_txt()
    return f"{gt} {op_t} 0" + (f",  {w}" if w else ""), f"{gx} {op_x} 0"


def _complementarity_text(c) -> tuple[str, str]:
    gt, gx = c.g_render()
    g_t = gt if (" + " not in gt and " - " not in gt) else f"({gt})"
    g_x = gx if (" + " not in gx and " - " not in gx) else rf"\left({gx}\right)"
    return f"{c.mult_txt} {g_t} = 0", f"{c.mult_tex} {g_x} = 0"


def _rows_key(c, v) -> tuple:
    """Which rows a constraint's coefficients of ``v`` run over: its size and the sparsity
    pattern of its map (two constraints on the same rows of ``phi(X)`` share it)."""
    import scipy.sparse as sp
    M = c.g.lin.get(v)
    if M is None or not sp.issparse(M):
        return (c.size,)
    S = sp.csr_matrix(M)
    return (c.size, S.shape, S.indptr.tobytes(), S.indices.tobytes())


def sums_over_rows(v, c) -> bool:
    """The coefficient of ``v`` in the vector constraint ``c`` is summed over ``c``'s rows in
    stationarity: ``v`` is a scalar, a feature-space block, or has an index set other than the
    rows' (``w`` over features in constraints over samples)."""
    if c.scalar:
        return False
    if v.scalar or v.feature:
        return True
    return (v.index or "N") != (c.index_set or "N")


def _neg(t: tuple[str, str]) -> tuple[str, str]:
    """``-t`` without wrapping a sum term in parentheses (``Σ_i (α_i - α*_i) φ(x_i)``)."""
    if t[0].startswith("Σ") and t[1].startswith(r"\sum"):
        return "-" + t[0], "-" + t[1]
    if t[0].startswith("-Σ") and t[1].startswith(r"-\sum"):
        return t[0][1:], t[1][1:]
    return coef_mul(("-1", "-1"), t)


def _mult(m: dict, c) -> np.ndarray:
    if c.multiplier not in m:
        raise KeyError(f"no value for multiplier {c.multiplier!r}")
    return np.atleast_1d(np.asarray(m[c.multiplier], dtype=float)).reshape(c.size)


def subdifferential_distance(g: np.ndarray, v, terms: list, point: dict,
                             rtol: float = 1e-7) -> np.ndarray:
    """``|r|`` entry by entry with ``r`` the element of smallest norm of ``∂_v L``.

    ``g`` is the gradient computed with each nonsmooth term's own subgradient (``sign``); those
    contributions are removed and replaced by ``c Mᵀ s`` with ``s`` ranging over the term's
    subdifferential at ``e = M v + ...``: for ``c Σ_k w_k |e_k|``, ``s_k = w_k sign(e_k)`` where
    ``|e_k| > tol`` and ``s_k ∈ [-w_k, w_k]`` where ``e_k`` is 0 (``tol = rtol max(1, ‖e‖_∞)``);
    for ``c ‖e‖_∞``, ``s`` is in the convex hull of ``sign(e_k) u_k`` over the maximising
    entries (the unit l1 ball when ``e = 0``). The smallest ``‖r‖₂`` is closed form per entry
    when every term is separable in ``v`` (a diagonal ``M``), else a small CVXPY problem."""
    import scipy.sparse as sp

    smooth = np.asarray(g, dtype=float).copy()
    pieces = []
    for t in terms:
        smooth = smooth - np.asarray(t.gradient(point).get(v, 0.0), dtype=float)
        e = np.asarray(t.e.affine_value(point), dtype=float)
        M = t.e.lin[v]
        M = sp.csr_matrix(M if M.shape[0] == e.size else np.ones((e.size, 1)) @ (
            M.toarray() if sp.issparse(M) else np.asarray(M)))
        tol = rtol * max(1.0, float(np.max(np.abs(e), initial=0.0)))
        pieces.append((t, e, M, tol))
    diag_ok = all(isinstance(t, Norm1) and M.shape == (v.size, v.size)
                  and sp.csr_matrix(M - sp.diags(M.diagonal())).count_nonzero() == 0
                  for t, _, M, _ in pieces)
    if diag_ok:
        r = smooth.copy()
        free_room = np.zeros(v.size)
        for t, e, M, tol in pieces:
            d = M.diagonal()
            w = t.coef * t._w()
            fixed = np.abs(e) > tol
            r = r + np.where(fixed, d * w * np.sign(e), 0.0)
            free_room = free_room + np.where(fixed, 0.0, np.abs(d) * w)
        return np.maximum(0.0, np.abs(r) - free_room)
    import cvxpy as cp
    expr = smooth
    cons = []
    for t, e, M, tol in pieces:
        s = cp.Variable(e.size)
        expr = expr + t.coef * (M.T @ s)
        if isinstance(t, Norm1):
            w = t._w()
            fixed = np.abs(e) > tol
            cons += [s[fixed] == w[fixed] * np.sign(e[fixed])] if np.any(fixed) else []
            cons += [cp.abs(s[~fixed]) <= w[~fixed]] if np.any(~fixed) else []
        else:   # NormInf
            top = float(np.max(np.abs(e), initial=0.0))
            if top <= tol:
                cons.append(cp.norm1(s) <= 1)
            else:
                act = np.abs(e) >= top - tol
                cons += [s[~act] == 0] if np.any(~act) else []
                cons += [cp.multiply(np.sign(e[act]), s[act]) >= 0,
                         cp.sum(cp.multiply(np.sign(e[act]), s[act])) == 1]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(expr)), cons)
    prob.solve()
    if expr is smooth or prob.status not in ("optimal", "optimal_inaccurate"):
        return np.abs(smooth)
    return np.abs(np.asarray(expr.value, dtype=float)).ravel()
