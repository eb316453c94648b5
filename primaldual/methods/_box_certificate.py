"""The box-QP certificate of a catalogue fit, from the BoxQP record its dual already carries.

When the fit's dual was detected (or bound from its shape template) as a box QP with finite
bounds and a kernel ``Q`` on the fit's own rows, its bidual at the predictor is certified by
:func:`~primaldual.certificate.box_qp_certificate` without building expression objects; the
generic fit and the lean one-vs-one pairs both come here first.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..certificate import box_qp_certificate, objective_unit
from ..model.gram import GramOperator

__all__ = ["box_qp_fast_certificate"]


def _same_vec(x: np.ndarray, z: np.ndarray) -> bool:
    """``np.array_equal(x, z)`` of two arrays (same shape, every entry ``==``; a NaN is
    unequal), without that function's argument handling (it runs twice per pair)."""
    return x.shape == z.shape and bool((x == z).all())


def box_qp_fast_certificate(data: Any, rec: Any, D: Any, status: str,
                            upper: Any) -> Any:
    """:func:`~primaldual.certificate.box_qp_certificate` of the fit's recovered point when the
    dual ``D`` carries a BoxQP record (never built here: only a record the fit already has)
    with finite bounds, a kernel ``Q`` on the fit's own kernel and rows whose signs are the
    equality's, and the recovered point names the record's blocks (and, for the nu variants,
    the threshold the sum row's multiplier is); ``None`` otherwise (the caller certifies
    through the modelling layer: squared slacks, the hard margin, other shapes)."""
    st = D.__dict__.get("structure") if hasattr(D, "__dict__") else None
    box = None if not st else st.get("box_qp")
    if box is None:
        return None
    op = box.Q
    if not isinstance(op, GramOperator) or op.matrix is not None \
            or op.kernel is not data.kernel or op.X is not data.X:
        return None
    u = np.asarray(box.C, dtype=float)
    if not u.size or not math.isfinite(float(u.max())):
        return None                    # no linear slack penalty: not this bidual
    if box.equality != "none" and (box.sign is None or (
            op.sign is not box.sign and not _same_vec(np.asarray(op.sign, dtype=float),
                                                      np.asarray(box.sign, dtype=float)))):
        return None
    names = (box.variable,) if box.variables is None else tuple(box.variables)
    dp = rec.dual_point
    if (names[0] not in dp) if len(names) == 1 else any(n not in dp for n in names):
        return None
    a = (np.asarray(dp[names[0]], dtype=float) if len(names) == 1 else
         np.concatenate([np.asarray(dp[n], dtype=float).ravel() for n in names]))
    if a.shape[0] != box.n:
        return None
    thr = None
    if box.equality == "nu":
        val = rec.primal_point.get(box.multipliers.get("sum", ""))
        if val is None:
            return None
        # (a recovery's rho is a Python float: its own value, without a ravel)
        thr = val if type(val) is float else float(np.ravel(val)[0])
    beta = np.asarray(rec.beta, dtype=float)
    qa = np.asarray(op.sign, dtype=float) * a
    beta_a = qa if op.index is None else np.bincount(np.asarray(op.index), weights=qa,
                                                       minlength=beta.shape[0])
    Kb = data.kmatvec(beta)
    Kd, stat_w = None, 0.0
    if not _same_vec(beta, beta_a):
        Kd = data.kmatvec(beta_a)
        g = beta - beta_a
        stat_w = float(np.sqrt(max(0.0, float(g @ (Kb - Kd)))))
    return box_qp_certificate(box, a, beta, Kb, float(rec.b), thr, stat_w=stat_w,
                              Kbeta_dual=Kd, status=status, unit=objective_unit(upper))
