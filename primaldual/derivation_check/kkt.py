"""The KKT check: stationarity and feasibility as one affine system in the primal variables and
multipliers, compared both ways, then each complementarity pair."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..model.expr import Expr
from ..model.leaves import Variable
from ..model.problem import Constraint, Problem
from ..model.symbols import text_symbol
from .align import _match
from .coords import _affine, _Block, _num, _Space
from .report import DerivationReport, Piece
from .systems import _clean, _compare_systems, _constraint_detail, _Item, _System


def _kkt_space(primal: Problem) -> tuple[_Space, Callable[[np.ndarray], tuple[dict, dict]]]:
    blocks = [_Block(v.name, v.size, v.scalar, v.block_txt) for v in primal.variables]
    blocks += [_Block(c.multiplier, c.size, c.scalar, c.mult_block_txt)
               for c in primal.constraints]
    space = _Space(blocks)
    var_names = [v.name for v in primal.variables]
    mult_names = [c.multiplier for c in primal.constraints]

    def split(z: np.ndarray) -> tuple[dict, dict]:
        return ({nm: space.part(z, nm) for nm in var_names},
                {nm: space.part(z, nm) for nm in mult_names})
    return space, split


def _kkt_items_of(kkt: Any, point_of: Callable[[np.ndarray], tuple[dict, dict]], n: int,
                  rng: np.random.Generator) -> tuple[list[_Item], list[tuple]]:
    """Rows of a :class:`KKTConditions` (stationarity, feasibility) and its complementarity
    pairs ``(multiplier name, affine rows of g, text)``."""
    P: Problem = kkt.problem
    conds = {c.key: c for c in kkt.conditions}
    items: list[_Item] = []
    for v in P.variables:
        key = f"stationarity[{v.name}]"

        def grad(z: np.ndarray, v: Variable = v) -> np.ndarray:
            x, m = point_of(z)
            return np.atleast_1d(kkt.gradient(v, x, m))
        ab = _affine(grad, n, rng)
        if ab is None:
            raise ValueError(f"the stationarity in {v.name!r} is not affine (a non-quadratic "
                             "term): kkt= is compared for quadratic programs")
        text = conds[key].txt if key in conds else key
        items.append(_Item(f"stationarity in {v.block_txt}", text, ab[0], ab[1], True, key,
                           None, rowname=_grad_name(v)))
    for c in P.constraints:
        def g(z: np.ndarray, c: Constraint = c) -> np.ndarray:
            return np.atleast_1d(c.value(point_of(z)[0]))
        ab = _affine(g, n, rng)
        if ab is None:
            raise ValueError(f"constraint {c.txt()!r} is not affine: kkt= is compared for "
                             "affine constraints")
        key = f"primal_feasibility[{c.multiplier}]"
        items.append(_Item(f"primal feasibility [{c.mult_txt}]",
                           conds[key].txt if key in conds else c.txt(), ab[0], ab[1],
                           c.equality, key,
                           _constraint_detail(c, lambda z: point_of(z)[0])))
    comp = []
    for c in P.constraints:
        if c.equality:
            continue

        def lam(z: np.ndarray, c: Constraint = c) -> np.ndarray:
            return np.atleast_1d(point_of(z)[1][c.multiplier])
        ab = _affine(lam, n, rng)
        assert ab is not None
        key = f"dual_feasibility[{c.multiplier}]"
        items.append(_Item(f"dual feasibility [{c.mult_txt} ≥ 0]",
                           conds[key].txt if key in conds else f"{c.mult_txt} ≥ 0",
                           ab[0], ab[1], False, key))
        def gval(z: np.ndarray, c: Constraint = c) -> np.ndarray:
            return np.atleast_1d(c.value(point_of(z)[0]))
        gab = _affine(gval, n, rng)
        key = f"complementarity[{c.multiplier}]"
        comp.append((c.multiplier, gab, conds[key].txt if key in conds else key))
    return items, comp


def _grad_name(v: Variable) -> Callable[[int], str]:
    def name(k: int) -> str:
        return f"∂L/∂{v.block_txt}" + ("" if v.scalar else f"_{k + 1}")
    return name


def _check_kkt(primal: Problem, kkt: Any, mapping: dict[str, str], tol: float,
               rng: np.random.Generator, report: DerivationReport) -> None:
    from ..model.kkt import KKTConditions

    space, split = _kkt_space(primal)
    n = space.n
    ref, ref_comp = _kkt_items_of(primal.kkt(), split, n, rng)
    if isinstance(kkt, KKTConditions):
        U: Problem = kkt.problem
        uvars = list(U.variables) + [Variable(c.multiplier, None if c.scalar else c.size)
                                     for c in U.constraints]
        matched, rest, free, how = _match(uvars, space.blocks, mapping)
        report.alignment += [f"KKT {h}" for h in how]
        if free or rest:
            _kkt_alignment_failure(report, space, free, rest)
            return
        inv_v = {v.name: matched[v.name][0] for v in U.variables}
        inv_m = {c.multiplier: matched[c.multiplier][0] for c in U.constraints}

        def u_split(z: np.ndarray) -> tuple[dict, dict]:
            return ({k: space.part(z, t) for k, t in inv_v.items()},
                    {k: space.part(z, t) for k, t in inv_m.items()})
        mine, mine_comp = _kkt_items_of(kkt, u_split, n, rng)
        comp_u = [(inv_m[m], g, t) for m, g, t in mine_comp]
    else:
        items = list(kkt)
        uv: dict[str, Variable] = {}
        for it in items:
            exprs = [it.g] if isinstance(it, Constraint) else []
            if isinstance(it, tuple) and len(it) == 2:
                m, e = it
                exprs = [e.g if isinstance(e, Constraint) else
                         e.as_expr() if isinstance(e, Variable) else e]
                if isinstance(m, Variable):
                    uv.setdefault(m.name, m)
            elif not isinstance(it, Constraint):
                raise TypeError("kkt= items must be Constraint objects or (multiplier, "
                                f"expression) pairs, got {type(it).__name__}")
            for e in exprs:
                if not isinstance(e, Expr):
                    raise TypeError("a complementarity pair is (multiplier, expression or "
                                    f"constraint), got {type(e).__name__}")
                for v in e.variables:
                    uv.setdefault(v.name, v)
        matched, rest, free, how = _match(list(uv.values()), space.blocks, mapping)
        report.alignment += [f"KKT {h}" for h in how]
        if rest:
            _kkt_alignment_failure(report, space, [], rest)
            return

        def u_point(z: np.ndarray) -> dict:
            return {nm: np.concatenate([space.part(z, b) for b in bl])
                    for nm, bl in matched.items()}
        mine, comp_u = [], []
        for it in items:
            if isinstance(it, Constraint):
                def cval(z: np.ndarray, c: Constraint = it) -> np.ndarray:
                    return np.atleast_1d(c.value(u_point(z)))
                ab = _affine(cval, n, rng)
                if ab is None:
                    raise ValueError(f"your KKT condition {it.txt()!r} is not affine")
                mine.append(_Item(it.txt(), it.txt(), ab[0], ab[1], it.equality,
                                  it.multiplier, _constraint_detail(it, u_point)))
            else:
                m, e = it
                mname = m.name if isinstance(m, Variable) else str(m)
                tgt = matched.get(mname, [mapping.get(mname, mname)])
                ex = e.g if isinstance(e, Constraint) else \
                    e.as_expr() if isinstance(e, Variable) else e
                def eval_(z: np.ndarray, ex: Expr = ex) -> np.ndarray:
                    return np.atleast_1d(ex.affine_value(u_point(z)))
                gab = _affine(eval_, n, rng)
                mt = m.block_txt if isinstance(m, Variable) else text_symbol(mname)
                comp_u.append((tgt[0], gab, f"{mt}_i ({ex.txt}) = 0"))
    report.pieces += _compare_systems(space, ref, mine, "KKT", tol, {}, "condition")
    report.pieces += _compare_complementarity(space, ref_comp, comp_u, tol, rng, mine)
    report.checked.append(f"KKT: {len(ref)} conditions, {len(ref_comp)} complementarity pairs")


def _kkt_alignment_failure(report: DerivationReport, space: _Space, free: list[str],
                           rest: list[Variable]) -> None:
    report.pieces.append(Piece(
        "KKT", "variables", False, ", ".join(v.name for v in rest) or "",
        ", ".join(b.name for b in space.blocks),
        ("no counterpart in yours for " + ", ".join(free) if free else "")
        + (("; " if free else "") + "yours has " + ", ".join(v.name for v in rest)
           + " matching no primal variable or multiplier (give mapping=)" if rest else "")))


def _compare_complementarity(space: _Space, ref: list[tuple], mine: list[tuple], tol: float,
                             rng: np.random.Generator, mine_items: list[_Item]) -> list[Piece]:
    pieces = []
    S_mine = _System([it for it in mine_items if it.A.size], space.n)
    for mult, gab, text in ref:
        A, b = gab
        b_ = space.by_name[mult]
        partner = next((m for m in mine if m[0] == mult), None)
        if partner is None:
            # a point satisfying all of yours with mult_1 > 0 and g_1 > 0
            c = np.zeros(space.n)
            c[b_.offset] = -1.0
            c -= A[0]
            R = 10.0 * max(1.0, float(np.max(np.abs(b), initial=0.0)))
            z = S_mine.minimize(c, R)
            w, pt, prod = "", None, None
            if z is not None:
                z = _clean(z)
                prod = float(z[b_.offset] * (A[0] @ z + b[0]))
                w = (f"at {space.fmt(z)}, which satisfies all of yours: "
                     f"{space.coord(b_.offset)} g_1 = {_num(prod)}, not 0")
                pt = space.split(z)
            pieces.append(Piece("KKT", f"complementarity [{b_.sym}]: missing from yours",
                                False, "(no counterpart)", text, w, "", pt, prod))
            continue
        Au, bu = partner[1]
        bad = None
        for k in range(A.shape[0]):
            v_ref = np.r_[A[k], b[k]]
            v_u = np.r_[Au[k], bu[k]] if k < Au.shape[0] else np.zeros_like(v_ref)
            if np.linalg.matrix_rank(np.vstack([v_ref, v_u]), tol=1e-9 * max(
                    1.0, float(np.max(np.abs(v_ref))))) != 1 or not np.any(v_u):
                bad = k
                break
        if bad is None:
            pieces.append(Piece("KKT", f"complementarity [{b_.sym}]", True, partner[2], text))
            continue
        k = bad
        # a sparse point where the derived g_k = 0 but yours is not
        a = A[k]
        z = -a * b[k] / float(a @ a) if np.any(a) else np.zeros(space.n)
        for j in np.argsort(-np.abs(a)):
            if a[j] == 0:
                break
            u = np.zeros(space.n)
            u[j] = -b[k] / a[j]
            if k >= Au.shape[0] or abs(Au[k] @ u + bu[k]) > tol:
                z = u
                break
        z[b_.offset + k] = 1.0
        gu = float(Au[k] @ z + bu[k]) if k < Au.shape[0] else float("nan")
        gm = float(A[k] @ z + b[k])
        pieces.append(Piece(
            "KKT", f"complementarity [{b_.sym}]: a different expression", False, partner[2],
            text, f"at {space.fmt(_clean(z))}: the derived {b_.sym}_{k + 1} g_{k + 1} = "
                  f"{_num(gm)}, yours {b_.sym}_{k + 1} × ({_num(gu)}) = {_num(gu)}", "",
            space.split(_clean(z)), gu - gm))
    return pieces
