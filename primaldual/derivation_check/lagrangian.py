"""The Lagrangian check: ``L(x, 0)`` and the term of each multiplier entry (an equality
multiplier may carry the opposite sign)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.leaves import Variable
from ..model.problem import Problem
from .align import _match
from .coords import _num
from .kkt import _kkt_space
from .report import DerivationReport, Piece


def _check_lagrangian(primal: Problem, lag: Any, mapping: dict[str, str], tol: float,
                      rng: np.random.Generator, report: DerivationReport) -> None:
    from ..model.lagrangian import Lagrangian

    space, split = _kkt_space(primal)
    L_M = primal.lagrangian()
    if isinstance(lag, Lagrangian):
        U = lag.problem
        uvars = list(U.variables) + [Variable(c.multiplier, None if c.scalar else c.size)
                                     for c in U.constraints]
        matched, rest, free, how = _match(uvars, space.blocks, mapping)
        if free or rest:
            report.pieces.append(Piece("Lagrangian", "variables", False,
                                       ", ".join(v.name for v in uvars),
                                       ", ".join(b.name for b in space.blocks),
                                       "no alignment by name or shape (give mapping=)"))
            return
        report.alignment += [f"L {h}" for h in how]
        inv = {k: v[0] for k, v in matched.items()}
        uv = {v.name for v in U.variables}

        def L_U(x: dict, m: dict) -> float:
            allv = {**x, **m}
            return lag.value({k: allv[t] for k, t in inv.items() if k in uv},
                             {k: allv[t] for k, t in inv.items() if k not in uv})
        texts = {c.multiplier: t for c, t in zip(U.constraints, lag.terms(), strict=True)}
        term_text = {inv.get(k, k): t for k, t in texts.items()}
        head_u = str(lag)
    elif callable(lag):
        back = {v: k for k, v in mapping.items()}

        def L_U(x: dict, m: dict) -> float:
            return float(lag({back.get(k, k): v for k, v in x.items()},
                             {back.get(k, k): v for k, v in m.items()}))
        term_text, head_u = {}, "your function L(x, multipliers)"
    else:
        raise TypeError(f"lagrangian must be a Lagrangian or a callable, got "
                        f"{type(lag).__name__}")
    m_terms = {c.multiplier: t for c, t in zip(primal.constraints, L_M.terms(), strict=True)}
    xnames = [v.name for v in primal.variables]
    nx = sum(v.size for v in primal.variables)
    zero_m = {c.multiplier: np.zeros(c.size) for c in primal.constraints}
    pts = [np.zeros(space.n)]
    for k in range(min(nx, 6)):
        z = np.zeros(space.n)
        z[k] = 1.0
        pts.append(z)
    pts += [np.r_[rng.standard_normal(nx), np.zeros(space.n - nx)] for _ in range(2)]

    def x_of(z: np.ndarray) -> dict:
        return {nm: space.part(z, nm) for nm in xnames}
    # f part
    bad = None
    for z in pts:
        fu, fm = L_U(x_of(z), zero_m), L_M.value(x_of(z), zero_m)
        if abs(fu - fm) > tol * max(1.0, abs(fu), abs(fm)):
            bad = (z, fu, fm)
            break
    line_m = str(L_M)
    if bad is not None:
        z, fu, fm = bad
        report.pieces.append(Piece("Lagrangian", "the objective part (L at zero multipliers)",
                                   False, head_u, line_m,
                                   f"at {space.fmt(z)} and all multipliers 0: yours "
                                   f"{_num(fu)}, derived {_num(fm)}", "", space.split(z),
                                   fu - fm))
    else:
        report.pieces.append(Piece("Lagrangian", "the objective part", True, head_u, line_m))
    for c in primal.constraints:
        badt: tuple | None = None
        flip_ok = c.equality
        signs = set()
        for z in pts[:4]:
            x = x_of(z)
            lu0, lm0 = L_U(x, zero_m), L_M.value(x, zero_m)
            for k in range(c.size):
                m = dict(zero_m)
                e = np.zeros(c.size)
                e[k] = 1.0
                m[c.multiplier] = e
                tu, tm = L_U(x, m) - lu0, L_M.value(x, m) - lm0
                sc = tol * max(1.0, abs(tu), abs(tm))
                if abs(tu - tm) <= sc:
                    signs.add(1)
                    continue
                if flip_ok and abs(tu + tm) <= sc:
                    signs.add(-1)
                    continue
                badt = (z, k, tu, tm)
                break
            if badt:
                break
        title = f"the term of {c.mult_txt}"
        if badt is None and len(signs) > 1:
            badt = (pts[0], 0, float("nan"), float("nan"))
        if badt is None:
            hint = "" if signs != {-1} else "the opposite sign convention for this free " \
                "multiplier (equivalent)"
            report.pieces.append(Piece("Lagrangian", title, True, term_text.get(
                c.multiplier, ""), m_terms[c.multiplier], "", hint))
            continue
        z, k, tu, tm = badt
        sym = space.by_name[c.multiplier].sym
        idx = "" if c.scalar else f"_{k + 1}"
        report.pieces.append(Piece(
            "Lagrangian", title + " differs", False,
            term_text.get(c.multiplier, head_u), m_terms[c.multiplier],
            f"at {space.fmt(z)}: the coefficient of {sym}{idx} in L is {_num(tu)} in yours, "
            f"{_num(tm)} derived", "a sign: L = f - Σ λ g for g ≥ 0 in a minimisation"
            if abs(tu + tm) <= tol * max(1.0, abs(tu)) else "", space.split(z), tu - tm))
    report.checked.append(f"Lagrangian: objective part and {len(primal.constraints)} "
                          "multiplier terms")
