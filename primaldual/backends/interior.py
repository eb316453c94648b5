"""Rounding an interior-point answer (CVXPY's solvers, Clarabel called directly) to the point
it stands for, before recovery and certification: interior-point solvers never return an exact
zero nor a point exactly on a box's face or an equality, so entries below ``1e-9`` of their
array's scale become exact zeros, a dual point is projected onto its box and its equality is
restored exactly. The certificate then sees the feasible, sparse point that predicts, and the
support vectors are the ones the model uses."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..solution import Solution

__all__ = ["finish_interior_point", "snap_interior_point"]


def finish_interior_point(sol: Solution, problem: Any, hints: Any) -> None:
    """Round an interior-point answer to the point it stands for, before recovery: entries
    below 1e-9 of their array's scale become exact zeros (:func:`snap_interior_point`), a dual
    point is projected onto its box and its equality restored exactly (``hints.upper``,
    ``hints.balance``), so the certificate sees the feasible, sparse point that predicts."""
    if not sol.has_point:
        return
    snap_interior_point(sol)
    upper = getattr(hints, "upper", None)
    if upper is not None:
        _clip_to_box(sol, upper)
    if getattr(hints, "balance", False):
        _balance_equality(sol, getattr(hints, "labels", None))


def snap_interior_point(sol: Solution, rtol: float = 1e-9) -> None:
    """Set to exactly 0 the entries of nonnegative value/multiplier arrays of an
    interior-point solution that are below ``rtol * max entry``.

    Interior-point solvers never return an exact zero; this happens before recovery and
    certification, relative to the scale of each array, so the certificate is computed
    from the same sparse coefficients that ``predict`` uses.
    """
    for d in (sol.values, sol.multipliers):
        for k, v in list(d.items()):
            a = np.asarray(v, dtype=float)
            if a.ndim != 1 or a.size < 2:
                continue
            top = float(np.max(np.abs(a), initial=0.0))
            thr = rtol * top  # relative to the array's own scale (C = 1e-9: alpha ~ 1e-9)
            if float(np.min(a)) >= -thr:
                d[k] = np.where(np.abs(a) <= thr, 0.0, a)


def _clip_to_box(sol: Solution, upper: Any) -> None:
    """Project an interior-point dual point onto its box ``0 <= alpha_i <= upper_i`` (only where
    the box is finite): CVXPY's solvers stop with an absolute feasibility tolerance, which is
    not small next to a box of ``C = 1e-9``; the certified dual point must be feasible."""
    up = np.asarray(upper, dtype=float)
    if not np.all(np.isfinite(up)):
        return
    for key in ("alpha", "alpha_star"):
        a = sol.values.get(key)
        if a is None:
            continue
        a = np.asarray(a, dtype=float)
        if a.shape == up.shape:
            sol.values[key] = np.clip(a, 0.0, up)


def _balance_equality(sol: Solution, y: np.ndarray | None) -> None:
    """Restore the dual's equality exactly on an interior-point point: ``y^T alpha = 0`` (a
    classifier's nonnegative ``alpha``) or ``1^T (alpha - alpha*) = 0`` (SVR), by scaling the
    heavier side down to the lighter one (the box stays satisfied). CVXPY's solvers meet the
    equality to an absolute tolerance only, which is not small next to multipliers of 1e-16
    (hard margin on features of 1e8); the certified dual point must be feasible."""
    a = sol.values.get("alpha")
    if a is None:
        return
    a = np.asarray(a, dtype=float)
    if a.ndim != 1 or a.size == 0:
        return
    a = np.maximum(a, 0.0)  # multipliers of ">= 0" (the solver's -1e-19 is rounding)
    sol.values["alpha"] = a
    if "alpha_star" in sol.values:
        s = np.asarray(sol.values["alpha_star"], dtype=float)
        if s.shape != a.shape:
            return
        s = np.maximum(s, 0.0)
        sol.values["alpha_star"] = s
        pa, pn = float(a.sum()), float(s.sum())
        if pa > pn > 0:
            sol.values["alpha"] = a * (pn / pa)
        elif pn > pa > 0:
            sol.values["alpha_star"] = s * (pa / pn)
        return
    if y is None or y.shape != a.shape:
        return
    pos = y > 0
    pa, pn = float(a[pos].sum()), float(a[~pos].sum())
    if pa > pn > 0:
        sol.values["alpha"] = np.where(pos, a * (pn / pa), a)
    elif pn > pa > 0:
        sol.values["alpha"] = np.where(pos, a, a * (pa / pn))
