"""State passed along the chain of reductions that derives a dual, and the small
expression builders they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .coef_text import PROD, SUM, _has_top_sum
from .derivation import _Block, _is_diag
from .expr import Expr
from .leaves import Variable
from .problem import Problem

# ---------------------------------------------------------------------- expression builders
__all__ = ["DualizeState"]


def _affine(pieces: list[tuple[Variable, np.ndarray]], const: np.ndarray, txt: str, tex: str,
            size: int, scalar: bool) -> Expr:
    lin = {v: sp.csr_matrix(M) for v, M in pieces}
    prec = SUM if _has_top_sum(txt) else PROD     # -(α_i) reads -α_i
    return Expr(size, scalar, lin, np.asarray(const, float), [], txt, tex, prec,
                ctx={v: ("1", "1") for v, _ in pieces})


def _coef_text(c: float) -> tuple[str, str]:
    if c == 1:
        return "", ""
    if c == -1:
        return "-", "-"
    s = f"{c:.6g}"
    return s + " ", s + " "


def _shift_text(shifted: list[_Block], obj: Expr) -> tuple[str, str]:
    """Definitions of ``q`` and ``κ``: an eliminated block ``v`` whose objective has a linear
    term ``⟨m_v, v⟩`` leaves ``-1/2 (A_v λ - m_v)ᵀ H_v⁻¹ (A_v λ - m_v)`` in the dual, i.e.
    ``-1/2 λᵀQλ + qᵀλ - κ`` with ``q = Σ_v A_vᵀ H_v⁻¹ m_v`` and ``κ = 1/2 Σ_v m_vᵀ H_v⁻¹ m_v``."""
    parts_t, parts_x = [], []
    for blk in shifted:
        v = blk.var
        if blk.kind == "joint":
            from .reduce_joint import joint_shift_text
            jt, jx = joint_shift_text(blk)
            parts_t.append(jt)
            parts_x.append(jx)
            continue
        k = obj.ctx.get(v, ("m", "m"))
        sums = v in obj.summed and not v.scalar
        lt = (f"Σ_i ⟨{v.block_txt}, {k[0]}⟩" if v.feature else f"Σ_i {k[0]} {v.txt}") if sums \
            else (f"⟨{v.block_txt}, {k[0]}⟩" if v.feature else f"{k[0]} {v.block_txt}")
        lx = (rf"\sum_i \langle {v.block_tex}, {k[1]} \rangle" if v.feature
              else rf"\sum_i {k[1]} {v.tex}") if sums else (
            rf"\langle {v.block_tex}, {k[1]} \rangle" if v.feature
            else rf"{k[1]} {v.block_tex}")
        parts_t.append(f"m_{v.block_txt} the objective's linear coefficient of {v.block_txt} "
                       f"({lt})")
        parts_x.append(rf"m_{{{v.block_tex}}}: {lx}")
    txt = ("q = Σ_v A_vᵀ H_v⁻¹ m_v (row r: the coefficients a_r of the eliminated block v in "
           "multiplier r's constraint, paired with m_v through H_v⁻¹ as in Q), κ = 1/2 Σ_v "
           "m_vᵀ H_v⁻¹ m_v, with " + "; ".join(parts_t))
    tex = (r"q = \sum_v A_v^T H_v^{-1} m_v,\; \kappa = \frac{1}{2} \sum_v m_v^T H_v^{-1} "
           r"m_v,\; " + r",\; ".join(parts_x))
    return txt, tex


def _nonzero(M) -> bool:
    """Whether the linear map ``M`` has a non-zero entry (sparse stays sparse)."""
    return bool(sp.csr_matrix(M).count_nonzero()) if sp.issparse(M) else bool(np.any(M != 0))


def _is_identity(M, n: int) -> bool:
    """Whether ``M`` is the ``n x n`` identity (sparse stays sparse)."""
    d = _is_diag(M) if M.shape == (n, n) else None
    return d is not None and bool(np.allclose(d, 1.0))


def _all_nonpositive(A) -> bool:
    """``A <= 0`` entrywise with some ``A < 0`` (sparse or dense)."""
    vals = sp.csr_matrix(A).data if sp.issparse(A) else np.asarray(A).ravel()
    return bool(np.all(vals <= 0) and np.any(vals < 0))


@dataclass
class DualizeState:
    """What the reductions of :func:`~primaldual.model.dualize.dualize` pass along: the primal
    (after its losses are written on variables of their own), the steps recorded so far, the
    blocks and their kinds, the multipliers' layout, and the pieces of the dual as they are
    collected (``Q`` as an operator expression, linear terms, constant, constraints)."""

    primal: Problem
    steps: list
    name: str | None = None
    obj: Any = None
    kkt: dict = field(default_factory=dict)
    blocks: list = field(default_factory=list)
    folded: set = field(default_factory=set)
    kept: list = field(default_factory=list)
    layout: dict = field(default_factory=dict)
    dvars: list = field(default_factory=list)
    Aq: dict = field(default_factory=dict)
    der: Any = None
    n: int = 0
    Q: Any = None
    p: Any = None
    p_shift: Any = None
    const: float = 0.0
    const_shift: float = 0.0
    shifted: list = field(default_factory=list)
    feature_ops: list = field(default_factory=list)
    extra_terms: list = field(default_factory=list)
    extra_vars: list = field(default_factory=list)
    dual_cons: list = field(default_factory=list)
    eq_names: dict = field(default_factory=dict)
    fold_names: dict = field(default_factory=dict)
    sign_cons: list = field(default_factory=list)
    n_samp: Any = None

    def to_expr(self, R: np.ndarray, const, txt: str, tex: str, size: int,
                scalar: bool) -> Expr:
        """Affine expression ``R lambda + const`` over the dual variables."""
        pieces: dict[Variable, sp.csr_matrix] = {}
        R = sp.csr_matrix(R)
        off = 0
        for c in self.kept:
            dv, lo = self.layout[c.multiplier]
            blockR = R[:, off:off + c.size]
            off += c.size
            if blockR.count_nonzero():
                # place the columns at lo..lo+size of the dual variable (sparse, no N x N)
                E = sp.csr_matrix((np.ones(c.size),
                                   (np.arange(c.size), lo + np.arange(c.size))),
                                  shape=(c.size, dv.size))
                pieces[dv] = pieces[dv] + blockR @ E if dv in pieces else blockR @ E
        return _affine(list(pieces.items()), np.broadcast_to(const, (size,)), txt, tex, size,
                       scalar)


