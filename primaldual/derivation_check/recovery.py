"""The recovery check: your recovery formulas against ``Derivation.recover`` at the dual
optimum (CVXPY)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..model.problem import Problem
from .coords import _num
from .report import DerivationReport, Piece


def _check_recover(der: Any, recover: Callable, aligned: tuple | None, tol: float,
                   report: DerivationReport) -> None:
    M: Problem = der.dual
    sol = M.solve(backend="cvxpy")
    ref = der.recover(sol)
    vals = dict(sol.values)
    if aligned is not None:   # your dual's names, through the alignment of the dual check
        space, u_point = aligned
        mm = der.multipliers(sol)
        z = np.zeros(space.n)
        for b in space.blocks:
            src = mm[b.name] if b.name in mm else vals[b.name]
            z[b.offset:b.offset + b.size] = np.asarray(src, float).ravel()[:b.size]
        vals = u_point(z)
    mine = recover(vals)
    worst = None
    for v in der.primal.variables:
        if v.name not in mine:
            report.pieces.append(Piece("recovery", f"{v.block_txt}: missing from yours",
                                       False, ", ".join(mine), ", ".join(ref)))
            return
        a = np.atleast_1d(np.asarray(mine[v.name], float)).ravel()
        r = np.atleast_1d(np.asarray(ref[v.name], float)).ravel()
        if a.shape != r.shape:
            report.pieces.append(Piece("recovery", f"{v.block_txt}: shape {a.shape} vs "
                                       f"{r.shape}", False))
            return
        if v.feature:
            a, r = v.gram_matvec(a), v.gram_matvec(r)
        diff = float(np.max(np.abs(a - r), initial=0.0))
        scale = max(1.0, float(np.max(np.abs(r), initial=0.0)))
        if diff > max(tol, 1e-5) * scale and worst is None:
            k = int(np.argmax(np.abs(a - r)))
            what = f"⟨{v.block_txt}, φ(x_{k + 1})⟩" if v.feature else (
                v.block_txt if v.scalar else f"{v.block_txt}_{k + 1}")
            worst = Piece("recovery", f"{v.block_txt} differs", False,
                          f"{what} = {_num(a[k])}", f"{what} = {_num(r[k])}",
                          f"at the dual optimum (CVXPY, value {_num(sol.objective_value)}): "
                          f"max |difference| {diff:.3g}")
    if worst is not None:
        report.pieces.append(worst)
    else:
        report.pieces.append(Piece("recovery", "primal values from the dual optimum", True))
    report.checked.append("recovery at the dual optimum")
