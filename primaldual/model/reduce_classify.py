"""Reduction: classify the primal's blocks (one variable each) by how they leave the Lagrangian."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import DualizationError
from .coef_text import coef_mul
from .derivation import _bcast, _Block, _dense, _is_diag
from .dual_text import (
    _coef_text_pair,
    _num_text,
)
from .leaves import Variable
from .problem import Constraint
from .reduce_joint import _coupled, joint_blocks
from .reduce_state import (
    DualizeState,
    _is_identity,
)
from .terms import (
    FeatureNorm,
    Huber,
    Norm1,
    NormInf,
    QuadForm,
    SumLogistic,
    SumSquares,
)

__all__ = ["classify_blocks"]


def classify_blocks(s: DualizeState) -> DualizeState:
    """Classify every primal block (variable) by how it is eliminated: quadratic (feature-space
    or plain), a norm or a loss with a known conjugate, linear with its own sign constraint
    (folded into a bound) or linear only (an equality on the multipliers)."""
    primal = s.primal
    obj = s.obj
    quad, coupled = _terms_by_block(primal, obj)
    joint = joint_blocks(primal, obj, quad, coupled)
    kkt = {c.key: c for c in primal.kkt().conditions}
    sign_of = {v: sc for v, sc in _sign_constraints(primal, quad).items() if v not in joint}
    blocks: list[_Block] = []
    folded: set[Constraint] = set()
    for v in primal.variables:
        if v in joint:      # one block for the coupled variables, at the first one's place
            if not any(b is joint[v] for b in blocks):
                blocks.append(joint[v])
            continue
        m = np.zeros(v.size)
        if v in obj.lin:
            m = _dense(obj.lin[v]).ravel()
        blocks.append(_classify(primal, v, m, quad[v], sign_of, folded))
    s.kkt = kkt
    s.blocks = blocks
    s.folded = folded
    return s


def _terms_by_block(primal: Any, obj: Any) -> tuple[dict[Variable, list], list]:
    """The objective's terms of each block, every term checked to have a conjugate the
    dualizer knows and a nonnegative coefficient; the quadratic terms over several plain blocks
    (or of one block with an offset) apart, for the joint elimination."""
    quad: dict[Variable, list] = {v: [] for v in primal.variables}
    coupled: list = []
    for t in obj.terms:
        if not isinstance(t, (FeatureNorm, SumSquares, QuadForm, Norm1, NormInf, SumLogistic,
                              Huber)):
            blk = ", ".join(v.name for v in t.variables)
            raise DualizationError(f"objective term {type(t).__name__} in block(s) {blk!r} has no "
                                   "conjugate known to dualize (it dualises quadratic terms, "
                                   "norm1, norm_inf, logistic and huber)")
        if t.coef < 0:
            raise DualizationError(f"quadratic term in block {t.variables[0].name!r} has a "
                                   "negative coefficient: the objective is nonconvex")
        if len(t.variables) != 1 and isinstance(t, (SumLogistic, Huber, Norm1, NormInf)):
            raise DualizationError(  # pragma: no cover - rewritten on a variable above
                f"a {type(t).__name__} term couples blocks {[v.name for v in t.variables]}: it "
                "is dualised through its conjugate when its argument is one variable; write the "
                "loss on a variable r and r = ... as a constraint with its multiplier")
        if _coupled(t):
            coupled.append(t)
            continue
        if len(t.variables) != 1:   # pragma: no cover - only sums of squares take several
            raise DualizationError("a quadratic term couples blocks "
                                   f"{[v.name for v in t.variables]}; write one block per term")
        quad[t.variables[0]].append(t)
    return quad, coupled


def _sign_constraints(primal: Any, quad: dict[Variable, list]
                      ) -> dict[Variable, tuple[Constraint, np.ndarray]]:
    """The linear-only blocks with a sign constraint of their own (``d_i v_i >= 0``, ``d > 0``,
    one entry per entry of the block): folded into a bound on the multipliers."""
    sign_of: dict[Variable, tuple[Constraint, np.ndarray]] = {}
    for c in primal.constraints:
        if c.equality or len(c.g.lin) != 1 or np.any(c.g.const != 0):
            continue
        (v, M), = c.g.lin.items()
        if v.feature or v in sign_of or quad[v]:
            continue
        d = _is_diag(_bcast(M, c.size)) if c.size == v.size else None
        if d is not None and np.all(d > 0):
            sign_of[v] = (c, d)
    return sign_of


def _classify(primal: Any, v: Variable, m: np.ndarray, terms: list,
              sign_of: dict[Variable, tuple[Constraint, np.ndarray]],
              folded: set[Constraint]) -> _Block:
    """The block of ``v`` (linear coefficient ``m``, objective terms ``terms``); a folded sign
    constraint is added to ``folded``."""
    ball = [c for c in primal.constraints if v in c.g.rq]
    if v.feature and ball and all(isinstance(t, FeatureNorm) for t in terms):
        # ||phi(x_i) - a||^2 <= ...: the coefficient of ||a||^2 in L is
        # c_obj + Σ_i λ_i (-q_i), fixed below by a derived equality (SVDD: Σ α_i = 1)
        blk = _Block(v, "feature", coef=sum(t.coef for t in terms), m=m, divisor=("2", "2"))
        blk.fold_d = None
        blk.H = None
        blk.ball = True
        return blk
    if v.feature:
        return _feature_block(v, m, terms)
    if terms and any(isinstance(t, Norm1) for t in terms):
        return _norm1_block(v, m, terms)
    if terms and any(isinstance(t, NormInf) for t in terms):
        # c ||x||_inf: its conjugate is the indicator of ||.||_1 <= c, so stationarity
        # becomes ||A λ - m||_1 <= c, written with a bound τ_k >= |(A λ - m)_k|
        _check_alone(v, terms, f"norm_inf is dualised for norm_inf({v.name}) alone (no other "
                               "term of the block)")
        return _Block(v, "norminf", coef=terms[0].coef, m=m, divisor=terms[0].factor_text(1.0))
    if terms and any(isinstance(t, (SumLogistic, Huber)) for t in terms):
        return _loss_block(v, m, terms)
    if terms:
        return _quad_block(v, m, terms)
    if v in sign_of:
        c, d = sign_of[v]
        folded.add(c)
        return _Block(v, "fold", m=m, fold=c, fold_d=d)
    return _Block(v, "equality", m=m)


def _feature_block(v: Variable, m: np.ndarray, terms: list) -> _Block:
    """A feature-space block: its norm2 terms' coefficients summed."""
    if not terms:
        raise DualizationError(f"feature-space block {v.name!r} appears only linearly: "
                               "its stationarity K r = 0 is not an equality on the "
                               "multipliers (add a norm2 term)")
    if not all(isinstance(t, FeatureNorm) for t in terms):
        raise DualizationError(f"feature-space block {v.name!r}: only norm2 terms are "
                               "supported")
    c = sum(t.coef for t in terms)
    if c <= 0:
        raise DualizationError(f"block {v.name!r}: zero quadratic coefficient")
    return _Block(v, "feature", coef=c, m=m,
                  divisor=terms[0].factor_text(2.0) if len(terms) == 1
                  else _coef_text_pair(2 * c))


def _check_alone(v: Variable, terms: list, why: str) -> None:
    """A norm is dualised when it is the block's one term, of the variable itself."""
    if len(terms) != 1 or set(terms[0].e.lin) != {v} or np.any(terms[0].e.const != 0) \
            or not _is_identity(_bcast(terms[0].e.lin[v], terms[0].e.size), v.size):
        raise DualizationError(f"block {v.name!r}: {why}")


def _norm1_block(v: Variable, m: np.ndarray, terms: list) -> _Block:
    """c ||x||_1: its conjugate is the indicator of ||.||_inf <= c, so stationarity
    0 ∈ c ∂||x||_1 + m - A λ becomes the two-sided bound |A λ - m| <= c."""
    _check_alone(v, terms, f"norm1 is dualised for norm1({v.name}) alone (no other term of "
                           "the same block)")
    blk = _Block(v, "norm1", coef=terms[0].coef, m=m, divisor=terms[0].factor_text(1.0))
    blk.weights = terms[0].weights          # Σ_k c_k |x_k|: |r_k| <= c c_k
    if terms[0].weights is not None:
        ws = terms[0].weights_sym or _num_text(terms[0].weights)
        blk.divisor = coef_mul(blk.divisor, ws)
    return blk


def _loss_block(v: Variable, m: np.ndarray, terms: list) -> _Block:
    """A separable loss c Σ_i l(s_i v_i + c0_i) with a known conjugate l*: the block leaves
    -c Σ_i l*(t_i) - Σ_i r_i c0_i / s_i in the dual, t = (A λ - m)/(c s)."""
    t = terms[0]
    loss = "logistic" if isinstance(t, SumLogistic) else "huber"
    e = t.e
    if len(terms) != 1:
        raise DualizationError(f"block {v.name!r}: a {loss} loss is dualised alone "
                               "(no other term of the same block)")
    S = (_is_diag(_bcast(e.lin[v], e.size)) if set(e.lin) == {v} and e.size == v.size
         else None)
    if S is None or np.any(S == 0) or t.coef <= 0:
        raise DualizationError(
            f"block {v.name!r}: the {loss} loss is dualised through its conjugate when "
            f"its argument is one variable, entry by entry (s_i {v.name}_i + c_i); write "
            f"the loss on a variable r and r = ... as a constraint with its multiplier")
    blk = _Block(v, loss, coef=t.coef, m=m, divisor=t.factor_text(1.0))
    blk.term, blk.s = t, S
    # a weighted logistic loss Σ_i c_i l(u_i): its conjugate scales entry by entry
    blk.w = np.ones(v.size) if getattr(t, "weights", None) is None else t.weights
    if getattr(t, "weights", None) is not None:
        if np.any(blk.w <= 0):
            raise DualizationError(
                f"block {v.name!r}: a {loss} loss weight is 0, so that entry has no "
                "conjugate to dualise (its multiplier is 0): drop those rows")
        if t.weights_sym is None:
            raise DualizationError(f"block {v.name!r}: the {loss} loss's weights have "
                                   "no symbol to print the dual with")
        blk.divisor = coef_mul(blk.divisor, t.weights_sym) if blk.divisor != (
            "1", "1") else t.weights_sym
    blk.c0 = np.broadcast_to(e.const, (v.size,)).astype(float)
    if loss == "huber":
        blk.H = sp.diags(t.coef * S ** 2, format="csr")
        if not np.allclose(S ** 2, 1.0):
            blk.divisor = _coef_text_pair(float(t.coef * S[0] ** 2)) if np.allclose(
                S ** 2, S[0] ** 2) else ("H", "H")
    return blk


def _quad_block(v: Variable, m: np.ndarray, terms: list) -> _Block:
    """A plain quadratic block: its curvature ``H`` (sparse for diagonal blocks, such as
    LS-SVM's e, 1/2 C Σ e_i², which never form an n x n array; a quad_form's matrix is dense
    by nature), refused when singular."""
    H = sp.csr_matrix((v.size, v.size))
    for t in terms:
        if isinstance(t, FeatureNorm):
            H = H + 2 * t.coef * sp.identity(v.size, format="csr")
        elif isinstance(t, SumSquares):
            e = t.e
            if set(e.lin) != {v} or np.any(e.const != 0):
                raise DualizationError(f"sum_squares in block {v.name!r} must be of a "
                                       "single scaled variable without offset")
            D = sp.csr_matrix(_bcast(e.lin[v], e.size))
            H = H + 2 * t.coef * (D.T @ D)
        else:
            H = H + 2 * t.coef * sp.csr_matrix(t.op.dense())
    dH = _is_diag(H)
    if dH is None:
        H = H.toarray()
    lam_min = (float(np.min(dH)) if dH is not None else
               np.linalg.eigvalsh(0.5 * (H + H.T))[0]) if v.size else 1.0
    h_max = float(np.max(np.abs(dH))) if dH is not None else float(np.max(np.abs(H)))
    if lam_min <= 1e-12 * max(1.0, h_max):
        raise DualizationError(f"quadratic block {v.name!r} is singular (smallest "
                               f"eigenvalue {lam_min:.3g}) and cannot be eliminated")
    return _Block(v, "quad", H=H, m=m, divisor=terms[0].factor_text(2.0)
                  if len(terms) == 1 else _coef_text_pair(1.0), n_terms=len(terms))
