"""Reduction: stationarity of the Lagrangian in each block, and the dual pieces it leaves."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .atoms import vsum
from .coef_text import coef_mul
from .derivation import Step, _Block, _is_diag
from .dual_text import (
    _conj_arg_text,
    _rhs_text,
    _solved_text,
    _sum_text,
    _term_expr_of,
)
from .expr import Expr
from .leaves import Variable
from .problem import Constraint
from .qform import QForm
from .reduce_joint import eliminate_joint
from .reduce_state import (
    DualizeState,
    _affine,
    _all_nonpositive,
    _coef_text,
)
from .symbols import text_symbol
from .terms import (
    SumBinaryEntropy,
)

__all__ = ["stationarity_per_block"]


def _eliminate_feature(s: DualizeState, blk: _Block, A, head_t: str, head_x: str) -> None:
    """A feature-space block ``c ||w||^2``: eliminated, ``A_wᵀ K A_w / (2c)`` joins ``Q``."""
    v = blk.var
    steps = s.steps
    Q = s.Q
    p_shift = s.p_shift
    shifted = s.shifted
    feature_ops = s.feature_ops
    const_shift = s.const_shift
    feature_ops.append((blk, A))
    Q.add_gram(A, v, 1.0 / (2 * blk.coef))          # H⁻¹ = K / (2c)
    if np.any(blk.m != 0):
        Hm = v.gram_matvec(blk.m) / (2 * blk.coef)
        p_shift += A.T @ Hm
        const_shift -= 0.5 * float(blk.m @ Hm)
        shifted.append(blk)
    steps.append(Step(f"Stationarity in {v.block_txt}: eliminate (positive definite)",
                      head_t + f"\nsubstituting {v.block_txt} back, its terms in L "
                      f"become -1/2 Σ_ij λ_i λ_j Q_ij (Q below): the dual sees only "
                      "kernel values",
                      head_x + r"\;\Rightarrow\; \text{substitute: } -\frac{1}{2} "
                      r"\lambda^T Q \lambda"))
    s.const_shift = const_shift


def _eliminate_quad(s: DualizeState, blk: _Block, A, head_t: str, head_x: str) -> None:
    """A plain positive-definite block: eliminated, ``A_vᵀ H_v⁻¹ A_v`` joins ``Q``."""
    v = blk.var
    steps = s.steps
    kept = s.kept
    layout = s.layout
    Q = s.Q
    p_shift = s.p_shift
    shifted = s.shifted
    const_shift = s.const_shift
    dH = _is_diag(blk.H)
    Hinv = (sp.diags(1.0 / dH) if dH is not None and np.all(dH > 0)
            else np.linalg.inv(blk.H))
    Q.add(A, Hinv)
    if np.any(blk.m != 0):
        Hm = Hinv @ blk.m
        p_shift += A.T @ Hm
        const_shift -= 0.5 * float(blk.m @ Hm)
        shifted.append(blk)
    solved = _solved_text(v, blk, kept, layout)
    if solved is not None:
        # a diagonal block, e.g. LS-SVM's e_i = alpha_i / C
        steps.append(Step(f"Stationarity in {v.block_txt}: eliminate (positive "
                          "definite)", head_t + f"\n⇒ {solved[0]}",
                          head_x + rf"\;\Rightarrow\; {solved[1]}"))
    else:
        steps.append(Step(f"Stationarity in {v.block_txt}: eliminate (positive definite)",
                          head_t + f"\n⇒ {v.block_txt} = H⁻¹(Σ_c M_cᵀλ_c - m) "
                          f"(H = ∂²L/∂{v.block_txt}², factor {blk.divisor[0]})",
                          head_x + rf"\;\Rightarrow\; {v.block_tex} = H^{{-1}}\left("
                          r"\sum_c M_c^T\lambda_c - m\right)"))
    s.const_shift = const_shift


def _linear_only(s: DualizeState, blk: _Block, A, head_t: str, head_x: str) -> None:
    """A linear-only block: its stationarity is an equality on the multipliers."""
    v = blk.var
    obj = s.obj
    steps = s.steps
    blocks = s.blocks
    kept = s.kept
    layout = s.layout
    dual_cons = s.dual_cons
    eq_names = s.eq_names
    to_expr = s.to_expr
    # write the equality with nonnegative coefficients when possible (1^T alpha = 1)
    flip = -1.0 if _all_nonpositive(A) else 1.0
    # the multiplier of this equality is the primal variable itself (-b, or rho when
    # flipped): name it so, never a fresh Greek letter that clashes with nu-SVC's nu
    nm = f"minus_{v.name}" if flip > 0 else v.name
    eq_names[v.name] = nm
    blk.fold_d = np.array([flip])
    txt, tex = _sum_text(v, kept, layout, flip)
    e = to_expr(flip * A, 0.0, txt, tex, v.size, v.scalar)
    rt_ = _rhs_text(v, obj, blk.m)
    if flip < 0 and rt_[0] != "0":
        rt_ = coef_mul(("-1", "-1"), rt_)
    rhs = _affine([], flip * blk.m, *rt_, v.size, v.scalar)
    con = Constraint(e, "==", rhs, nm)
    ball = [b for b in blocks if getattr(b, "kappa_from", None) is v]
    if ball and v.scalar:
        # the weight of ||a||^2 was fixed with this equality (SVDD): its multiplier is
        # flip (t ||a||^2 - x_v), not -x_v (recover adds t ||a||^2 back)
        a, t = ball[0].var, ball[0].kappa_t
        tt = _coef_text(t)
        at = (f"{tt[0]}‖{a.block_txt}‖²", rf"{tt[1]}\|{a.block_tex}\|^2")
        con.label = ((f"{at[0]} - {v.txt}", f"{at[1]} - {v.tex}") if flip > 0
                     else (f"{v.txt} - {at[0]}", f"{v.tex} - {at[1]}"))
    dual_cons.append(con)
    rel = f"its multiplier is {con.mult_txt}"
    steps.append(Step(f"Stationarity in {v.block_txt}: linear only ⇒ equality on the "
                      "multipliers", head_t + f"\n⇒ {con.txt()}   [{rel}]",
                      head_x + rf"\;\Rightarrow\; {con.tex()}"))


def _conjugate_norm1(s: DualizeState, blk: _Block, A, head_t: str, head_x: str) -> None:
    """``c ||x||_1``: the conjugate is the indicator of ``|A λ - m| <= c`` (a two-sided bound)."""
    v = blk.var
    obj = s.obj
    steps = s.steps
    kept = s.kept
    layout = s.layout
    dual_cons = s.dual_cons
    to_expr = s.to_expr
    comp = None if v.scalar else _sum_text(v, kept, layout, component=True)
    txt, tex = _sum_text(v, kept, layout)
    where = None
    if comp is not None:    # per component k: Σ_i y_i x_ik α_i ≤ 1,  k = 1..d
        txt, tex = comp
        where = f"{v.letter} = 1..{v.index or v.size}"
    elif v.blockwise:       # the vector inequality, read componentwise
        where = f"componentwise in R^{v.index or v.size}"
    ct, cx = blk.divisor
    mt, mx = _rhs_text(v, obj, blk.m) if np.any(blk.m != 0) else ("", "")
    up_t = ct if not mt else f"{mt} + {ct}"
    up_x = cx if not mx else f"{mx} + {cx}"
    lo_t = ct if not mt else f"{ct} - {mt}"
    lo_x = cx if not mx else f"{cx} - {mx}"
    e_pos = to_expr(A, 0.0, txt, tex, v.size, v.scalar)
    e_neg = to_expr(-A, 0.0, "-" + txt if " " not in txt else f"-({txt})",
                    "-" + tex if " " not in tex else rf"-\left({tex}\right)",
                    v.size, v.scalar)
    cb = blk.coef * (np.ones(v.size) if blk.weights is None else blk.weights)
    c_pos = Constraint(e_pos, "<=", _affine([], blk.m + cb, up_t, up_x, v.size,
                                            v.scalar), f"{v.name}_plus", where)
    c_neg = Constraint(e_neg, "<=", _affine([], cb - blk.m, lo_t, lo_x, v.size,
                                            v.scalar), f"{v.name}_minus", where)
    for c_ in (c_pos, c_neg):   # rows over the block's own index (k = 1..d)
        c_.letter, c_.index_set = v.letter, v.index
    dual_cons += [c_pos, c_neg]
    steps.append(Step(f"Stationarity in {v.block_txt}: conjugate of the l1 norm "
                      "⇒ a two-sided bound",
                      head_t + f"\n⇒ |{txt}| ≤ {up_t}"
                      + (f",  {where}" if where else "") + "   "
                      f"[{v.block_txt} = {text_symbol(v.name + '_plus')} - "
                      f"{text_symbol(v.name + '_minus')}]",
                      head_x + rf"\;\Rightarrow\; \left|{tex}\right| \leq {up_x}"))


def _conjugate_loss(s: DualizeState, blk: _Block, A, head_t: str, head_x: str) -> None:
    """A logistic or Huber loss on the block: its conjugate enters the dual."""
    v = blk.var
    steps = s.steps
    kept = s.kept
    layout = s.layout
    Q = s.Q
    p = s.p
    p_shift = s.p_shift
    shifted = s.shifted
    extra_terms = s.extra_terms
    dual_cons = s.dual_cons
    to_expr = s.to_expr
    const = s.const
    const_shift = s.const_shift
    cs = blk.coef * blk.s * blk.w
    R = sp.diags(1.0 / cs) @ A                # t = (A λ - m) / (c w s)
    t0 = -blk.m / cs
    tt, tx = _conj_arg_text(v, blk, kept, layout)
    t_expr = to_expr(R, t0, tt, tx, v.size, v.scalar)
    # the offset c0 of the argument: - Σ_i r_i c0_i / s_i with r = m - A λ
    p += A.T @ (blk.c0 / blk.s)
    const -= float(blk.m @ (blk.c0 / blk.s))
    k_ = v.letter
    lo_nm, hi_nm = f"{v.name}_lo", f"{v.name}_hi"
    lp = "σ" if blk.kind == "logistic" else f"h'_{blk.term.delta_sym[0]}"
    if blk.kind == "huber":
        hinv = 1.0 / (blk.coef * blk.s ** 2)
        Q.add(A, sp.diags(hinv))
        if np.any(blk.m != 0):
            p_shift += A.T @ (hinv * blk.m)
            const_shift -= 0.5 * float(blk.m @ (hinv * blk.m))
            shifted.append(blk)
        d, dx = blk.term.delta_sym
        delta = blk.term.delta
        cons_ = [Constraint(t_expr, "<=", _affine([], np.full(v.size, delta), d, dx,
                                                  v.size, v.scalar), hi_nm),
                 Constraint(t_expr, ">=", _affine([], np.full(v.size, -delta), f"-{d}",
                                                  f"-{dx}", v.size, v.scalar), lo_nm)]
        conj_t = (f"conjugate of the Huber loss: h*(t) = t²/2 on |t| ≤ {d}",
                  rf"h^*(t) = t^2/2,\ |t| \leq {dx}")
        res_t = (f"-1/2 Σ_{k_} {blk.divisor[0]} ({tt})² joins -1/2 λᵀQλ, "
                 f"|{tt}| ≤ {d}")
        res_x = rf"|{tx}| \leq {dx}"
    else:
        weighted = blk.term.weights is not None
        H_expr = _term_expr_of(SumBinaryEntropy(t_expr, weights=blk.term.weights),
                               blk.coef, blk.divisor, tt, tx, k_, v.scalar,
                               inside=weighted)
        extra_terms.append(H_expr)
        cons_ = [Constraint(t_expr, ">=", _affine([], np.zeros(v.size), "0", "0",
                                                  v.size, v.scalar), lo_nm),
                 Constraint(t_expr, "<=", _affine([], np.ones(v.size), "1", "1",
                                                  v.size, v.scalar), hi_nm)]
        conj_t = ("conjugate of the logistic loss l(u) = log(1 + exp(u)): l' = σ "
                  "(σ(u) = 1/(1 + exp(-u))), l*(t) = -H(t) on 0 ≤ t ≤ 1",
                  r"\ell^*(t) = -H(t),\ 0 \leq t \leq 1")
        res_t = f"{H_expr.txt} joins the dual, 0 ≤ {tt} ≤ 1"
        res_x = rf"{H_expr.tex},\ 0 \leq {tx} \leq 1"
    for c_ in cons_:
        c_.letter, c_.index_set = v.letter, v.index
    dual_cons += cons_
    steps.append(Step(f"Stationarity in {v.block_txt}: {conj_t[0]}",
                      head_t + f"\n⇒ t_{k_} = {tt} = {lp}({blk.term.e.txt}): {res_t}",
                      head_x + rf"\;\Rightarrow\; {conj_t[1]}:\ {res_x}"))
    s.const = const
    s.const_shift = const_shift


def _conjugate_norminf(s: DualizeState, blk: _Block, A, head_t: str, head_x: str) -> None:
    """``c ||x||_inf``: the conjugate is the indicator of ``||A λ - m||_1 <= c``."""
    v = blk.var
    obj = s.obj
    steps = s.steps
    kept = s.kept
    layout = s.layout
    extra_vars = s.extra_vars
    dual_cons = s.dual_cons
    to_expr = s.to_expr
    txt, tex = _sum_text(v, kept, layout)
    comp = None if v.scalar else _sum_text(v, kept, layout, component=True)
    if comp is not None:
        txt, tex = comp
    tau = Variable(f"tau_{v.name}", v.size, index=v.index)   # indexed like v
    extra_vars.append(tau)
    mt, mx = _rhs_text(v, obj, blk.m) if np.any(blk.m != 0) else ("", "")
    e_pos = to_expr(A, -blk.m, txt if not mt else f"{txt} - {mt}",
                    tex if not mx else f"{tex} - {mx}", v.size, v.scalar)
    e_neg = -e_pos
    where = f"{tau.letter} = 1..{tau.index}" if v.blockwise else None
    c_pos = Constraint(e_pos, "<=", tau.as_expr(), f"{v.name}_plus", where)
    c_neg = Constraint(e_neg, "<=", tau.as_expr(), f"{v.name}_minus", where)
    for c_ in (c_pos, c_neg):
        c_.letter, c_.index_set = tau.letter, tau.index
    ct, cx = blk.divisor
    c_sum = Constraint(vsum(tau), "<=", _affine([], np.array([blk.coef]), ct, cx, 1,
                                                True), f"{v.name}_sum")
    dual_cons += [c_pos, c_neg, c_sum]
    steps.append(Step(f"Stationarity in {v.block_txt}: conjugate of the l∞ norm "
                      "⇒ an l1 bound",
                      head_t + f"\n⇒ Σ_{tau.letter} |{e_pos.txt}| ≤ {ct}, written "
                      f"with {tau.block_txt}_{tau.letter} ≥ |{e_pos.txt}|   "
                      f"[{v.block_txt} = {text_symbol(v.name + '_plus')} - "
                      f"{text_symbol(v.name + '_minus')}]",
                      head_x + rf"\;\Rightarrow\; \sum_{{{tau.letter}}} "
                      rf"\left|{e_pos.tex}\right| \leq {cx}"))


def _fold_sign(s: DualizeState, blk: _Block, A, head_t: str, head_x: str) -> None:
    """A linear block with its own sign constraint: folded into a bound on the multipliers."""
    v = blk.var
    obj = s.obj
    steps = s.steps
    kept = s.kept
    layout = s.layout
    dual_cons = s.dual_cons
    fold_names = s.fold_names
    to_expr = s.to_expr
    mu = blk.fold.multiplier
    fold_names[v.name] = v.name
    rt, rx = _rhs_text(v, obj, blk.m)
    if _all_nonpositive(A) and np.all(blk.m <= 0):
        # -Σ_i α_i ≤ -ν reads Σ_i α_i ≥ ν (the same row, the same multiplier)
        txt, tex = _sum_text(v, kept, layout, -1.0)
        e = to_expr(-A, 0.0, txt, tex, v.size, v.scalar)
        rt, rx = coef_mul(("-1", "-1"), (rt, rx))
        rhs = _affine([], -blk.m, rt, rx, v.size, v.scalar)
        con = Constraint(e, ">=", rhs, v.name, blk.fold.where)
    else:
        txt, tex = _sum_text(v, kept, layout)
        e = to_expr(A, 0.0, txt, tex, v.size, v.scalar)
        rhs = _affine([], blk.m, rt, rx, v.size, v.scalar)
        con = Constraint(e, "<=", rhs, v.name, blk.fold.where)
    dual_cons.append(con)
    steps.append(Step(f"Stationarity in {v.block_txt}: fold the sign constraint "
                      f"[{text_symbol(mu)} ≥ 0] into a bound",
                      head_t + f"\n{blk.fold.mult_txt} ≥ 0 ⇒ {con.txt()}   "
                      f"(its multiplier is {v.block_txt})",
                      head_x + rf"\;,\; {blk.fold.mult_tex} \geq 0 \;\Rightarrow\; "
                      + con.tex()))


def _eliminate_joint(s: DualizeState, blk: _Block, A, head_t: str, head_x: str) -> None:
    """Plain blocks coupled by a quadratic term: eliminated together (reduce_joint)."""
    eliminate_joint(s, blk, A)


#: the reduction applied to each kind of block (see reduce_classify.classify_blocks)
_BY_KIND = {"feature": _eliminate_feature, "quad": _eliminate_quad, "equality": _linear_only,
            "joint": _eliminate_joint,
            "norm1": _conjugate_norm1, "logistic": _conjugate_loss, "huber": _conjugate_loss,
            "norminf": _conjugate_norminf, "fold": _fold_sign}


def stationarity_per_block(s: DualizeState) -> DualizeState:
    """Stationarity in each block, one step each: eliminate positive-definite blocks (their
    ``A_vᵀH_v⁻¹A_v`` joins ``Q``), take the conjugates of norms and losses, turn linear-only
    blocks into equalities and fold sign constraints into bounds."""
    kept, n, obj = s.kept, s.n, s.obj
    Q = QForm(n)           # Σ_v A_vᵀ H_v⁻¹ A_v, kept as its terms (no n x n array)
    p = np.zeros(n)
    # an eliminated block with a linear term m_v adds λᵀ A_vᵀ H_v⁻¹ m_v - 1/2 m_vᵀ H_v⁻¹ m_v:
    # kept apart so the dual prints them (q, κ) instead of dropping them from the text
    p_shift = np.zeros(n)
    const_shift = 0.0
    shifted: list[_Block] = []
    const = float(obj.const[0])  # the primal's constant (kept in the dual's value)
    off = 0
    for c in kept:
        p[off:off + c.size] -= np.broadcast_to(c.g.const, (c.size,))
        off += c.size
    feature_ops = []
    extra_terms: list[Expr] = []      # non-quadratic dual terms (a logistic loss's entropy)
    extra_vars: list[Variable] = []   # auxiliary dual variables (norm_inf's bound τ)
    dual_cons: list[Constraint] = []
    eq_names: dict[str, str] = {}
    fold_names: dict[str, str] = {}
    s.Q, s.p, s.p_shift, s.const, s.const_shift = Q, p, p_shift, const, const_shift
    s.shifted, s.feature_ops, s.extra_terms, s.extra_vars = (shifted, feature_ops, extra_terms,
                                                             extra_vars)
    s.dual_cons, s.eq_names, s.fold_names = dual_cons, eq_names, fold_names
    for blk in s.blocks:
        st = s.kkt.get(f"stationarity[{blk.var.name}]")
        head_t, head_x = (st.txt, st.tex) if st is not None else ("", "")
        _BY_KIND[blk.kind](s, blk, s.der._A(blk), head_t, head_x)
    s.der._eq_names, s.der._fold_names = eq_names, fold_names
    return s
