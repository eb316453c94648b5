"""Reduction: the dual problem from the collected pieces."""

from __future__ import annotations

import numpy as np

from ..exceptions import DualizationError
from .atoms import quad_form
from .derivation import Step
from .dual_text import (
    _const_symbol,
    _diag_block,
    _diag_text,
    _linear_text,
    _num_text,
    _q_text,
    _slice_vec,
)
from .expr import Expr
from .problem import Problem
from .reduce_state import (
    DualizeState,
    _affine,
    _coef_text,
    _shift_text,
)

__all__ = ["assemble_dual"]


def _symbolic_constant(dv, kept, layout) -> bool:
    """Whether the one constraint held by ``dv`` has a constant with a symbol of its own
    (``k(x_i, x_i)``, ``C``): its value may happen to be the same in every row (an RBF kernel's
    diagonal) but the dual prints the symbol, not the number."""
    from .expr import CONST
    cs = [c for c in kept if layout[c.multiplier][0] is dv]
    if len(cs) != 1 or CONST not in cs[0].g.ctx:
        return False
    t = cs[0].g.ctx[CONST][0]
    return any(ch.isalpha() for ch in t)


def assemble_dual(s: DualizeState) -> DualizeState:
    """Assemble the dual objective (linear terms from the constraints' constants, ``-1/2 λᵀQλ``
    with ``Q`` a kernel operator, the shift ``qᵀλ - κ``, conjugate terms, constant), the dual
    Problem and its last steps."""
    primal = s.primal
    obj = s.obj
    steps = s.steps
    blocks = s.blocks
    kept = s.kept
    layout = s.layout
    dvars = s.dvars
    Aq = s.Aq
    der = s.der
    Q = s.Q
    p = s.p
    p_shift = s.p_shift
    const = s.const
    const_shift = s.const_shift
    shifted = s.shifted
    feature_ops = s.feature_ops
    extra_terms = s.extra_terms
    extra_vars = s.extra_vars
    dual_cons = s.dual_cons
    sign_cons = s.sign_cons
    n_samp = s.n_samp
    name = s.name
    # ---- dual objective
    qvars = {layout[c.multiplier][0] for c in kept if Aq[c]}
    # the quadratic form covers the whole variable holding the quadratic multipliers (stacked
    # first in the layout), including rows whose coefficient happens to be zero
    nq = sum(c.size for c in kept if Aq[c])
    qidx = np.arange(nq)
    obj_expr: Expr | None = None
    for dv in dvars:
        pv = _slice_vec(p, dv, kept, layout)
        if np.any(pv != 0):
            if np.allclose(pv, pv[0]) and dv._stack is None and not _symbolic_constant(
                    dv, kept, layout):
                ct, cx = _coef_text(float(pv[0]))
                k_ = dv.letter
                bt, bx = (f"Σ_{k_} {dv.txt}", rf"\sum_{{{k_}}} {dv.tex}") if not dv.scalar \
                    else (dv.txt, dv.tex)
                term = _affine([(dv, np.full((1, dv.size), pv[0]))], np.zeros(1),
                               f"{ct}{bt}", f"{cx}{bx}", 1, True)
            elif (sym := _const_symbol(dv, pv, kept, layout)) is not None:
                term = _affine([(dv, pv[None, :])], np.zeros(1),
                               f"Σ_{dv.letter} {sym[0]} {dv.txt}",
                               rf"\sum_{{{dv.letter}}} {sym[1]} {dv.tex}",
                               1, True)
            else:
                lt, lx = _linear_text(dv, kept, layout, p)
                term = _affine([(dv, pv[None, :])], np.zeros(1), lt, lx, 1, True)
            obj_expr = term if obj_expr is None else obj_expr + term
    gram = qt = qv = None
    if len(qidx):
        if len(qvars) != 1:  # pragma: no cover - layout stacks quadratic multipliers
            raise DualizationError("quadratic part spans several dual variables")
        qv = next(iter(qvars))
        gram = Q.operator(qidx)
        qt = _diag_text(gram, blocks)
        if qt is not None:   # the eliminated diagonal block shows: αᵀ(Q + I/C)α
            qterm = -(0.5 * quad_form(qv, gram, txt=f"{qv.block_txt}ᵀ(Q + {qt[0]}){qv.block_txt}",
                                      tex=rf"{qv.block_tex}^T (Q + {qt[1]}) {qv.block_tex}"))
        else:
            qterm = -(0.5 * quad_form(qv, gram))
        obj_expr = qterm if obj_expr is None else obj_expr + qterm
    if shifted:
        for dv in dvars:
            ps = _slice_vec(p_shift, dv, kept, layout)
            if np.any(ps != 0):
                bt, bx = ((f"q {dv.txt}", rf"q\, {dv.tex}") if dv.scalar else
                          (f"qᵀ{dv.block_txt}", rf"q^T {dv.block_tex}"))
                term = _affine([(dv, ps[None, :])], np.zeros(1), bt, bx, 1, True)
                obj_expr = term if obj_expr is None else obj_expr + term
        if const_shift != 0:
            term = _affine([], np.array([const_shift]), "-κ", r"-\kappa", 1, True)
            obj_expr = term if obj_expr is None else obj_expr + term
    for et in extra_terms:
        obj_expr = et if obj_expr is None else obj_expr + et
    if const != 0:
        obj_expr = (obj_expr + const) if obj_expr is not None else _affine(
            [], np.array([const]), *_num_text(np.array([const])), 1, True)
    if obj_expr is None:
        obj_expr = _affine([], np.zeros(1), "0", "0", 1, True)
    dname = name or (primal.name.replace("primal", "dual (derived)") if "primal" in primal.name
                     else primal.name + " dual (derived)")
    cons = ([c for c in dual_cons if c.equality] + sign_cons
            + [c for c in dual_cons if not c.equality])
    dual = Problem(obj_expr, cons, "max", dname, variables=dvars + extra_vars)
    dual.n_samples_hint = n_samp
    sets_line = _index_sets_line(kept)
    if sets_line is not None:
        dual.definitions.append(sets_line)
    if shifted:
        dual.definitions.append(_shift_text(shifted, obj))
    # no structure record is attached: SMO/KKT read it from the dual itself (model/structure.py)
    der.dual = dual
    qtxt = None if gram is None else _q_text(
        feature_ops, blocks, [c for c in kept if Aq[c]], qv,
        _diag_block(blocks) if qt is not None else None,
        _taken_letters(primal, steps))
    if qtxt:
        (ht, hx), defs = qtxt
        over = "" if qv._stack is None else f" over the entries r, s of {qv.block_txt}"
        dt = "; ".join(t for t, _ in defs)
        dx = r",\; ".join(x for _, x in defs)
        line_t = ht + (f" with {dt}" if dt else "")
        line_x = hx + (rf",\quad {dx}" if dx else "")
        expl = ("the coefficient of each eliminated block in each constraint, divided by the "
                "block's curvature" + ("; kernel trick: only k(x_i, x_j) appears"
                                       if feature_ops else ""))
        steps.insert(len(steps), Step("Quadratic form of the multipliers",
                                      f"{ht}{over}" + (f", where {dt}" if dt else "")
                                      + f" ({expl})", line_x))
        dual.definitions.append((line_t, line_x))
    steps.append(Step("Substitute back: the dual", str(dual), dual.to_latex()))

    return s



def _taken_letters(primal, steps) -> frozenset:
    """Names the letter of ``Q``'s coefficients must avoid: the variables', and the row
    symbols the primal prints (``Data("A")`` prints its rows ``a_i``)."""
    text = steps[0].text if steps else ""
    rows = {ch for ch in "aghuzq" if f"{ch}_" in text}
    # and the running indices of the primal's rows (j over B's rows in the twin SVM's plane
    # -1: Q's second index over A's rows is then not j)
    letters = ({c.letter for c in primal.constraints if not c.scalar}
               | {v.letter for v in primal.variables if not v.scalar and not v.feature}
               | {ch for ch in "jmnst" if f"Σ_{ch} " in text})
    return frozenset(v.name for v in primal.variables) | rows | letters


def _index_sets_line(kept) -> tuple[str, str] | None:
    """The index sets of rows the primal's constraints range over (``i ∈ I_2``, named when the
    primal is rendered), defined again under the dual whose multipliers they index."""
    sizes: dict[int, int] = {}
    for c in kept:
        if c.where and c.where.startswith("i ∈ I_") and c.where[6:].isdigit():
            sizes.setdefault(int(c.where[6:]), c.size)
    if not sizes:
        return None
    ks = sorted(sizes)
    names = ", ".join(f"I_{k}" for k in ks)
    cards = ", ".join(f"|I_{k}| = {sizes[k]}" for k in ks)
    cards_x = ", ".join(rf"|I_{{{k}}}| = {sizes[k]}" for k in ks)
    return (f"{names} ⊂ {{1..N}}: the rows the constraints select, {cards}",
            rf"{names} \subset \{{1,\dots,N\}} \text{{: the rows the constraints select, }} "
            rf"{cards_x}")
