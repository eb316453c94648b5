"""The dual check: the derived dual's coordinates, your dual's constraints as affine rows, the
objectives on the common affine hull of the equalities and the constraints both ways."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..model.leaves import Variable
from ..model.problem import Constraint, Problem
from ..model.symbols import text_symbol
from .align import _match, _Unaligned, _user_point_map, _uses
from .coords import _affine, _Block, _Space
from .objective import _compare_objectives
from .report import DerivationReport, Piece
from .systems import _clean, _compare_systems, _constraint_detail, _Item, _System


def _dual_space(der: Any) -> tuple[_Space, Callable[[np.ndarray], dict], dict[str, list[str]]]:
    """Blocks of the derived dual: one per primal multiplier it keeps (read through the public
    ``Derivation.multipliers``), plus any variable of its own (``τ``)."""
    D: Problem = der.dual
    primal: Problem = der.primal
    codes: dict[str, np.ndarray] = {}
    base = 7919.0
    for v in D.variables:
        codes[v.name] = base + np.arange(v.size, dtype=float)
        base += v.size + 7919.0
    where: dict[float, tuple[str, int]] = {}
    for v in D.variables:
        for k, c in enumerate(codes[v.name]):
            where[float(c)] = (v.name, k)
    kept: list[tuple[str, str, int, int]] = []   # (multiplier, dual var, offset, size)
    try:
        mults = der.multipliers({k: c.copy() for k, c in codes.items()})
    except Exception:  # noqa: BLE001 - fall back to the dual's own variables
        mults = {}
    for name, val in mults.items():
        val = np.atleast_1d(np.asarray(val, dtype=float))
        locs = [where.get(float(x)) for x in val]
        if not val.size or any(loc is None for loc in locs):
            continue
        vars_ = {loc[0] for loc in locs if loc is not None}
        offs = [loc[1] for loc in locs if loc is not None]
        if len(vars_) == 1 and offs == list(range(offs[0], offs[0] + len(offs))):
            kept.append((name, vars_.pop(), offs[0], len(offs)))
    blocks: list[_Block] = []
    groups: dict[str, list[str]] = {}
    src: dict[str, tuple[str, int]] = {}
    mult_sym = {c.multiplier: c.mult_block_txt for c in primal.constraints}
    for v in D.variables:
        mine = sorted([k for k in kept if k[1] == v.name], key=lambda t: t[2])
        covered = np.zeros(v.size, bool)
        for _name, _, off, size in mine:
            covered[off:off + size] = True
        if mine and covered.all():
            for name, _, off, size in mine:
                scalar = v.scalar and size == 1
                blocks.append(_Block(name, size, scalar, mult_sym.get(name, text_symbol(name))))
                src[name] = (v.name, off)
            if len(mine) > 1:
                groups[v.name] = [m[0] for m in mine]
        else:
            blocks.append(_Block(v.name, v.size, v.scalar, v.block_txt))
            src[v.name] = (v.name, 0)
    space = _Space(blocks)
    sizes = {v.name: v.size for v in D.variables}

    def point(z: np.ndarray) -> dict:
        vals = {nm: np.zeros(sz) for nm, sz in sizes.items()}
        for b in space.blocks:
            vn, off = src[b.name]
            vals[vn][off:off + b.size] = space.part(z, b.name)
        return vals
    return space, point, groups


def _sense(P: Problem) -> float:
    return 1.0 if P.sense == "max" else -1.0


def _objective_line(P: Problem) -> str:
    defs = "; ".join(d[0] for d in getattr(P, "definitions", []) or [])
    return f"{P.sense}imize {P.objective.txt}" + (f"   where {defs}" if defs else "")


def _origin(c: Constraint, primal: Problem | None) -> str:
    """Where a derived dual line comes from: its multiplier is a primal variable (``[-b]``,
    ``[ξ_i ≥ 0]``), whose stationarity gave the line."""
    if primal is None:
        return ""
    name = c.multiplier[6:] if c.multiplier.startswith("minus_") else c.multiplier
    for v in primal.variables:
        if v.name == name:
            s = v.block_txt
            return (f"its multiplier [{c.mult_txt}] is the primal {s}: the line is the "
                    f"stationarity in {s} (∂L/∂{s} = 0), there whenever the primal has {s}")
    return ""


def _sign_origin(it: _Item, space: _Space, primal: Problem) -> str:
    """``α_i ≥ 0`` in a dual: dual feasibility of the primal inequality's multiplier."""
    if np.any(it.b != 0) or not it.A.size:
        return ""
    nz = [np.flatnonzero(r) for r in it.A]
    if not all(len(j) == 1 and it.A[k, j[0]] > 0 for k, j in enumerate(nz)):
        return ""
    names = {space.block_of(int(j[0])).name for j in nz}
    lines = [f"'{c.txt()}' [{c.mult_txt} ≥ 0]" for c in primal.constraints
             if c.multiplier in names and not c.equality]
    if not lines:
        return ""
    return ("dual feasibility: the multiplier of the primal inequality " + ", ".join(lines)
            + " is nonnegative")


def _constraint_items(P: Problem, point_of: Callable[[np.ndarray], dict], n: int,
                      rng: np.random.Generator, aux: Sequence[Variable] = (),
                      primal: Problem | None = None) -> list[_Item]:
    items = []
    for c in P.constraints:
        def g(z: np.ndarray, c: Constraint = c) -> np.ndarray:
            return np.atleast_1d(c.value(point_of(z)))
        ab = _affine(g, n, rng)
        if ab is None:
            raise ValueError(f"constraint {c.txt()!r} of {P.name!r} is not affine in the "
                             "dual variables; check_derivation compares affine constraints")
        A, b = ab
        defines = bool(aux) and any(_uses(c, v) for v in aux) and c.equality and \
            not np.any(np.abs(A) > 1e-12) and not np.any(np.abs(b) > 1e-9)
        items.append(_Item(f"constraint {c.render()}", c.render(), A, b, c.equality,
                           c.multiplier, _constraint_detail(c, point_of), defines, c.txt(),
                           _origin(c, primal)))
    return items


def _check_dual(der: Any, U: Problem, mapping: dict[str, str], tol: float,
                rng: np.random.Generator, report: DerivationReport) -> tuple | None:
    """Compare your dual with ``der.dual``; returns ``(space, z -> your point)``."""
    M: Problem = der.dual
    space, m_point, groups = _dual_space(der)
    matched, rest, free, how = _match(U.variables, space.blocks, mapping, groups)
    report.alignment += how
    syms = {}
    for v in U.variables:
        if v.name in matched and len(matched[v.name]) == 1:
            syms[matched[v.name][0]] = v.block_txt
    if free:
        report.pieces.append(Piece(
            "dual", "variables", False,
            ", ".join(v.describe() for v in U.variables),
            ", ".join(v.describe() for v in M.variables),
            "the derived dual's " + ", ".join(space.by_name[f].sym for f in free)
            + " has no counterpart in yours (matched by name, then by shape; give "
              "mapping={'yours': 'derived'})"))
        return None
    try:
        u_point = _user_point_map(space, U.variables, matched, rest,
                                  [c for c in U.constraints if c.equality], rng)
    except _Unaligned as e:
        report.pieces.append(Piece(
            "dual", "variables", False, ", ".join(v.describe() for v in U.variables),
            ", ".join(v.describe() for v in M.variables),
            f"your {', '.join(v.block_txt for v in e.aux)} matches no derived variable by "
            "name or shape, and your equalities do not determine it (give mapping=)"))
        return None
    for v in rest:
        report.alignment.append(f"{v.block_txt} read off your equalities")
    n = space.n
    ref = _constraint_items(M, m_point, n, rng, primal=der.primal)
    for it in ref:
        if not it.origin and not it.eq:
            it.origin = _sign_origin(it, space, der.primal)
    mine = _constraint_items(U, u_point, n, rng, rest)

    # ---------------- objective, on the common affine hull of the equalities
    def F_M(z: np.ndarray) -> float:
        return _sense(M) * M.evaluate(m_point(z))

    def F_U(z: np.ndarray) -> float:
        return _sense(U) * U.evaluate(u_point(z))
    E = [it for it in ref + mine if it.eq and it.A.size and not it.definition]
    EA = np.vstack([it.A for it in E]) if E else np.zeros((0, n))
    Eb = np.concatenate([it.b for it in E]) if E else np.zeros(0)
    z0, B = _affine_hull(EA, Eb, n)
    if z0 is None:   # the two equality systems contradict: the derived hull alone
        EM = [it for it in ref if it.eq and it.A.size]
        z0, B = _affine_hull(np.vstack([it.A for it in EM]) if EM else np.zeros((0, n)),
                             np.concatenate([it.b for it in EM]) if EM else np.zeros(0), n)
        assert z0 is not None
    S_ref = _System(ref, n)
    R = 10.0 * max(1.0, float(np.max(np.abs(np.concatenate([it.b for it in ref] or
                                                             [np.zeros(1)])), initial=0.0)))
    cands = _vertices(S_ref, n, R, rng)
    report.pieces += _compare_objectives(space, F_U, F_M, z0, B, cands, tol, rng, syms,
                                         _objective_line(U), _objective_line(M))
    report.pieces += _compare_systems(space, ref, mine, "dual", tol, syms, "constraint")
    nrows = sum(it.A.shape[0] for it in ref)
    report.checked.append(f"dual: objective (quadratic, linear, constant parts) and "
                          f"{len(ref)} constraints ({nrows} rows)")
    return space, u_point


def _affine_hull(A: np.ndarray, b: np.ndarray, n: int
                 ) -> tuple[np.ndarray | None, np.ndarray]:
    if A.shape[0] == 0:
        return np.zeros(n), np.eye(n)
    z0 = np.linalg.lstsq(A, -b, rcond=None)[0]
    if np.max(np.abs(A @ z0 + b)) > 1e-8 * max(1.0, float(np.max(np.abs(b)))):
        return None, np.zeros((n, 0))
    _, s, vt = np.linalg.svd(A)
    r = int(np.sum(s > 1e-10 * max(1.0, float(s[0]))))
    return z0, vt[r:].T


def _vertices(S: _System, n: int, R: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Feasible points of a system: vertices for a few directions and their midpoints."""
    out: list[np.ndarray] = []
    dirs = [-np.eye(n)[k] for k in range(min(n, 4))] + [rng.standard_normal(n)
                                                         for _ in range(4)]
    for d in dirs:
        z = S.minimize(d, R)
        if z is not None:
            out.append(_clean(z))
    mids = [_clean(0.5 * (out[i] + out[j])) for i in range(len(out))
            for j in range(i + 1, len(out))]
    return out + mids
