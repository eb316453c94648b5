"""How a derived dual prints: the text and LaTeX of its linear term, quadratic form, conjugate
arguments, folded bounds and solved blocks (helpers of :func:`primaldual.model.dualize.dualize`;
every formula they print is the one the dual evaluates).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import DualizationError
from .coef_text import _has_top_sum, coef_mul
from .derivation import _bcast, _Block, _is_diag
from .expr import CONST, Expr
from .gram import GramOperator
from .kkt import sums_over_rows
from .leaves import Variable
from .problem import Constraint
from .symbols import latex_symbol


def _join_signed(parts: list[tuple[str, str]]) -> str:
    """``[("+", "a"), ("-", "b")]`` -> ``"a - b"`` (a leading minus kept: ``"-a + b"``)."""
    out = ""
    for sg, t in parts:
        out = (("-" if sg == "-" else "") + t) if not out else f"{out} {sg} {t}"
    return out


def _conj_arg_text(v: Variable, blk: _Block, kept, layout) -> tuple[str, str]:
    """Text of the conjugate's argument ``t = (A λ - m) / (c s)`` of a loss block (``α_i/C``
    for kernel logistic regression's ``C Σ log(1 + exp(-z_i))`` with ``y_i f_i = z_i [α_i]``)."""
    if not (np.allclose(blk.s, blk.s[0]) and np.allclose(blk.m, blk.m[0])):
        raise DualizationError(f"block {v.name!r}: the loss's scale or linear term varies with "
                               "the entry; the conjugate's argument has no symbolic text")
    nt, nx = _sum_text(v, kept, layout)
    if blk.m[0] != 0:
        mt = _coef_text_pair(float(blk.m[0]))
        nt, nx = f"{nt} - {mt[0]}", f"{nx} - {mt[1]}"
    s0 = float(blk.s[0])
    if s0 < 0:      # divide by s: a negative scale flips the sign
        if nt.startswith("-") and not _has_top_sum(nt[1:]):
            nt, nx = nt[1:], nx[1:]
        else:
            nt, nx = (f"-({nt})", rf"-\left({nx}\right)")
    ct, cx = blk.divisor if abs(s0) == 1 else coef_mul(_coef_text_pair(abs(s0)), blk.divisor)
    if ct == "1":
        return nt, nx
    pt = f"({nt})" if _has_top_sum(nt) else nt
    return f"{pt}/{ct}", rf"\frac{{{nx}}}{{{cx}}}"


def _term_expr_of(term, coef: float, ctext: tuple[str, str], tt: str, tx: str, k: str,
                  scalar: bool, inside: bool = False) -> Expr:
    """``c Σ_k H(t_k)``: a dual term ``coef * term`` with its text (``inside``: the factor
    is indexed by ``k``, ``Σ_k c_k H(t_k)``)."""
    from .terms import _term_expr
    term.coef = term.num = float(coef)
    if inside and not scalar:
        return _term_expr(term, f"Σ_{k} {ctext[0]} H({tt})",
                          rf"\sum_{{{k}}} {ctext[1]} H\left({tx}\right)")
    body_t = f"H({tt})" if scalar else f"Σ_{k} H({tt})"
    body_x = rf"H\left({tx}\right)" if scalar else rf"\sum_{{{k}}} H\left({tx}\right)"
    if ctext[0] != "1":
        body_t, body_x = f"{ctext[0]} {body_t}", f"{ctext[1]} {body_x}"
    return _term_expr(term, body_t, body_x)


def _coef_text_pair(c: float) -> tuple[str, str]:
    s = f"{c:.6g}"
    return s, s


def _num_text(v: np.ndarray) -> tuple[str, str]:
    v = np.atleast_1d(v)
    if np.allclose(v, v[0]):
        s = "0" if v[0] == 0 else f"{v[0]:.6g}"
        return s, s
    # no symbol for these numbers: say so rather than print an undefined letter
    return "(numbers without a symbol)_i", r"(\text{numbers without a symbol})_{i}"


def _rhs_text(v: Variable, obj: Expr, m: np.ndarray) -> tuple[str, str]:
    if v in obj.ctx and obj.ctx[v] != ("1", "1"):
        return obj.ctx[v]
    return _num_text(m)


def _sum_text(v: Variable, kept: list[Constraint], layout, flip: float = 1.0,
              component: bool = False) -> tuple[str, str] | None:
    """``Σ_c M_{c,v}^T λ_c`` rendered from the constraints' symbolic coefficients of ``v``;
    ``component``: the k-th entry of that vector (``Σ_i y_i x_ik α_i``) from the per-component
    coefficients, ``None`` when a constraint has none."""
    parts_t, parts_x = [], []
    for c in kept:
        if v not in c.g.ctx:
            continue
        k = c.g.ctx[v]
        if component:
            if v not in c.g.comp:
                return None
            k = c.g.comp[v]
        lt, lx = c.mult_txt, c.mult_tex
        k0, k1 = k
        neg = k0.startswith("-") and not _has_top_sum(k0[1:])
        if neg:
            k0, k1 = k0[1:], k1[1:]
        if _has_top_sum(k0):      # a sum as a factor: ([y_i=0] - 1) α_0,i
            k0, k1 = f"({k0})", rf"\left({k1}\right)"
        kt = "" if k0 == "1" else (k0 + " ")
        kx = "" if k1 == "1" else (k1 + " ")
        neg = neg != (flip < 0)
        if sums_over_rows(v, c):
            t, x = f"Σ_{c.letter} {kt}{lt}", rf"\sum_{{{c.letter}}} {kx}{lx}"
        else:
            t, x = f"{kt}{lt}", f"{kx}{lx}"
        parts_t.append(("-" if neg else "+", t))
        parts_x.append(("-" if neg else "+", x))
    if not parts_t:
        return "0", "0"

    return _join_signed(parts_t), _join_signed(parts_x)


def _const_symbol(dv: Variable, pv: np.ndarray, kept, layout) -> tuple[str, str] | None:
    """Text of ``-g0_c`` when the dual variable is one constraint's multiplier whose constant is a
    single data vector (``y_i`` in ``<w, phi(x_i)> + b + e_i = y_i``)."""
    cs = [c for c in kept if layout[c.multiplier][0] is dv]
    if len(cs) != 1:
        return None
    c = cs[0]
    if not np.allclose(-np.broadcast_to(c.g.const, (c.size,)), pv):
        return None
    side, other = (c.rhs, c.lhs) if c.op != "<=" else (c.lhs, c.rhs)
    if side.lin or np.any(other.const != 0) or side.prec < 2:
        return None
    return side.txt, side.tex


def _fix_ball_coefficient(blk: _Block, blocks, kept, der) -> None:
    """Set the coefficient of ``||a||^2`` in ``L`` for a block in ball constraints:
    ``κ(λ) = c_obj + Σ_c Σ_i λ_{c,i} (-q_{c,i})`` must be fixed by the equality of a linear-only
    block (``R²``'s stationarity gives ``Σ_i α_i = 1``), else the dual is not a QP."""
    k = np.concatenate([-np.broadcast_to(c.g.rq[blk.var], (c.size,)) if blk.var in c.g.rq
                        else np.zeros(c.size) for c in kept])
    for eb in blocks:
        if eb.kind != "equality" or eb.var.size != 1:
            continue
        row = der._A(eb).toarray().ravel()
        j = np.argmax(np.abs(row))
        if row[j] == 0:
            continue
        t = k[j] / row[j]
        if np.allclose(k, t * row, atol=1e-12) and t > 0:
            kappa = blk.coef + t * float(eb.m[0])
            if kappa <= 0:
                break
            blk.coef = kappa
            blk.divisor = _coef_text_pair(2 * kappa)
            blk.kappa_from, blk.kappa_t = eb.var, t
            return
    raise DualizationError(f"block {blk.var.name!r} in ball constraints: the weight "
                           f"Σ_i λ_i of ||{blk.var.name}||² in the Lagrangian is not fixed by "
                           "an equality of the dual (add a variable such as R² priced in the "
                           "objective), so the dual is not a QP")


def _name_stacked(v: Variable, cons: list[Constraint]) -> None:
    """Render a stacked dual variable as the tuple of its multipliers: ``(α, α*)``, entries
    ``(α_i, α*_i)``, ``(α, α*) ∈ R^N × R^N``."""
    bt = "(" + ", ".join(c.mult_block_txt for c in cons) + ")"
    bx = r"\left(" + ", ".join(latex_symbol(c.multiplier) for c in cons) + r"\right)"
    it = "(" + ", ".join(c.mult_txt for c in cons) + ")"
    ix = r"\left(" + ", ".join(c.mult_tex for c in cons) + r"\right)"
    v._stack = (bt, bx, it, ix)
    v._stack_parts = [(c.multiplier, c.size, c.scalar) for c in cons]
    # parts over an index set of rows (``i ∈ I_2``, named in render.py) print ``R^|I_2|``
    v._stack_dim_txt = [f"|{c.where[4:]}|" if c.where and c.where.startswith("i ∈ I_")
                        else None for c in cons]


def _linear_text(dv: Variable, kept, layout, p: np.ndarray) -> tuple[str, str]:
    """``Σ_c -g0_c^T λ_c`` for the constraints held by ``dv``, from the constants' own text
    (``- Σ_i (ε - y_i) α_i``); numbers when a constant has no symbolic text."""
    parts_t, parts_x = [], []
    off = 0
    for c in kept:
        v, lo = layout[c.multiplier]
        pc = p[off:off + c.size]
        off += c.size
        if v is not dv or not np.any(pc != 0):
            continue
        symbolic = CONST in c.g.ctx and any(ch.isalpha() for ch in c.g.ctx[CONST][0])
        if np.allclose(pc, pc[0]) and not symbolic:
            k = _const_txt_pair(float(pc[0]))
            neg = False
        elif CONST in c.g.ctx:
            k, neg = c.g.ctx[CONST], True   # p = -g0
        else:
            raise DualizationError(f"the constant of constraint [{c.multiplier}] has no "
                                   "symbolic text; cannot render the dual's linear term")
        kt, kx = k
        if neg:   # the coefficient is -g0: negate the constant's text
            if kt.startswith("-") and (not _has_top_sum(kt[1:])):
                neg, kt, kx = False, kt[1:], kx[1:]
            elif _has_top_sum(kt):
                kt, kx = f"({kt})", rf"\left({kx}\right)"
        elif kt.startswith("-"):
            neg, kt, kx = True, kt[1:], kx[1:]
        kt = "" if kt == "1" else kt + " "
        kx = "" if kx == "1" else kx + " "
        if c.scalar:
            t, x = f"{kt}{c.mult_txt}", f"{kx}{c.mult_tex}"
        else:
            t, x = f"Σ_{c.letter} {kt}{c.mult_txt}", rf"\sum_{{{c.letter}}} {kx}{c.mult_tex}"
        parts_t.append(("-" if neg else "+", t))
        parts_x.append(("-" if neg else "+", x))

    return _join_signed(parts_t), _join_signed(parts_x)


def _const_txt_pair(c: float) -> tuple[str, str]:
    from .coef_text import _const_txt
    return _const_txt(c)


def _slice_vec(p: np.ndarray, dv: Variable, kept, layout) -> np.ndarray:
    out = np.zeros(dv.size)
    off = 0
    for c in kept:
        v, lo = layout[c.multiplier]
        if v is dv:
            out[lo:lo + c.size] = p[off:off + c.size]
        off += c.size
    return out


def _diag_block(blocks) -> _Block | None:
    """The one eliminated plain quadratic block when its Hessian is ``c I`` (LS-SVM's ``e``)."""
    quads = [b for b in blocks if b.kind == "quad"]
    if len(quads) != 1 or quads[0].H is None:
        return None
    d = _is_diag(quads[0].H)
    if d is None or not np.allclose(d, d[0]) or d[0] <= 0:
        return None
    return quads[0]


def _diag_text(gram: GramOperator, blocks) -> tuple[str, str] | None:
    """``I/C`` when the dual's quadratic is ``Q + I/C`` from an eliminated ``1/2 C Σ e_i²``."""
    blk = _diag_block(blocks)
    if blk is None or gram.matrix is not None or not np.any(gram.diag != 0):
        return None
    d = blk.divisor
    if d[0] == "1":
        return "I", "I"
    return f"I/{d[0]}", rf"\frac{{I}}{{{d[1]}}}" if "\\" not in d[1] else rf"I/{d[1]}"


def _solved_text(v: Variable, blk: _Block, kept, layout) -> tuple[str, str] | None:
    """``e_i = α_i / C`` for a diagonal quadratic block without a linear term."""
    if _diag_block([blk]) is None or np.any(blk.m != 0):
        return None
    st, sx = _sum_text(v, kept, layout)
    if " + " in st or " - " in st:
        st, sx = f"({st})", rf"\left({sx}\right)"
    d = blk.divisor
    if d[0] == "1":
        return f"{v.txt} = {st}", f"{v.tex} = {sx}"
    return f"{v.txt} = {st} / {d[0]}", rf"{v.tex} = \frac{{{sx}}}{{{d[1]}}}"


_NEXT_LETTER = {"i": "j", "p": "q", "k": "l", "j": "m"}


def _q_text(feature_ops, blocks, qcons, qv: Variable, skip: _Block | None,
            taken: frozenset = frozenset()
            ) -> tuple[tuple[str, str], list[tuple[str, str]]] | None:
    """Definition of the matrix ``Q`` of the dual's quadratic term, read off the eliminated
    blocks: ``Q_rs = Σ_v (a^v_r)ᵀ H_v⁻¹ a^v_s`` with ``a^v_r`` the coefficient of block ``v`` in
    the constraint of the multiplier entry ``r`` and ``H_v`` its curvature (``2c`` for
    ``c ||w||^2``). Returns the head (``Q_ij = ⟨a_i, a_j⟩``) and the definitions of the ``a``
    (``a_i = y_i φ(x_i) for α_i``); ``skip`` is a diagonal block printed apart (``Q + I/C``)."""
    quads = [b for b in blocks if b.kind in ("quad", "huber") and b is not skip
             and any(b.var in c.g.lin for c in qcons)]
    joints = [b for b in blocks if b.kind == "joint"
              and any(v in c.g.lin for c in qcons for v in b.vars)]
    if not feature_ops and not quads and not joints:
        return None
    if qv._stack is None:
        r = qv.letter
        s_ = next(c for c in (_NEXT_LETTER.get(r, "s"), "m", "n", "s", "t", "r")
                  if c != r and c not in taken)
    else:
        r, s_ = "r", "s"
    many = len(feature_ops) + len(quads) + len(joints) > 1
    heads_t, heads_x, defs = [], [], []
    # the coefficients' letter must not be a variable's name (SVDD's centre is a)
    a = next(c for c in ("a", "g", "h", "u", "z", "q") if c not in taken)

    def sym(v: Variable) -> tuple[str, str]:
        return ((f"{a}^({v.block_txt})", f"{a}^{{({v.block_tex})}}") if many else (a, a))

    def define(v: Variable, coef_of) -> None:
        st, sx = sym(v)
        absent = False
        for c in qcons:
            k = coef_of(c)
            if k is None:
                absent = True
                continue
            defs.append((f"{st}_{c.letter} = {k[0]} for {c.mult_txt}",
                         rf"{sx}_{{{c.letter}}} = {k[1]} \text{{ for }} {c.mult_tex}"))
        if absent:
            defs.append((f"{st} = 0 for the other multipliers",
                         rf"{sx} = 0 \text{{ for the other multipliers}}"))

    for blk, _ in feature_ops:
        w = blk.var
        st, sx = sym(w)
        dv_t = "" if blk.divisor[0] == "1" else f"/{blk.divisor[0]}"
        dv_x = "" if blk.divisor[1] == "1" else rf" / {blk.divisor[1]}"
        heads_t.append(f"⟨{st}_{r}, {st}_{s_}⟩{dv_t}")
        heads_x.append(rf"\langle {sx}_{{{r}}}, {sx}_{{{s_}}} \rangle{dv_x}")

        def coef_w(c, w=w):
            if w in c.g.rq:   # the coefficient of a in -||phi(x_i) - a||^2 is 2 phi(x_i)
                q = np.broadcast_to(c.g.rq[w], (c.size,))
                return coef_mul(_const_txt_pair(float(-2 * q[0])), c.g.rq_txt[w])
            return c.g.ctx.get(w)
        define(w, coef_w)
    for blk in quads:
        v = blk.var
        st, sx = sym(v)
        dH = _is_diag(blk.H)
        h = float(dH[0]) if dH is not None else float(np.asarray(blk.H)[0, 0])
        scaled_eye = dH is not None and bool(np.allclose(dH, h))
        ht = blk.divisor if (scaled_eye and blk.n_terms == 1) else _coef_text_pair(h)
        dv_t = "" if ht[0] == "1" else f"/{ht[0]}"
        dv_x = "" if ht[1] == "1" else rf" / {ht[1]}"
        cs = [c for c in qcons if v in c.g.lin]
        diag = (len(cs) == 1 and not v.scalar and cs[0].size == v.size
                and _is_diag(_bcast(cs[0].g.lin[v], cs[0].size)) is not None
                and len(qcons) == 1)
        if scaled_eye and v.scalar:
            heads_t.append(f"{st}_{r} {st}_{s_}{dv_t}")
            heads_x.append(rf"{sx}_{{{r}}} {sx}_{{{s_}}}{dv_x}")
            define(v, lambda c, v=v: c.g.ctx.get(v))
        elif scaled_eye and diag:
            d = _is_diag(_bcast(cs[0].g.lin[v], cs[0].size))
            # the Kronecker delta as an Iverson bracket: δ is often a parameter (Huber's)
            if np.allclose(np.abs(d), 1.0):
                heads_t.append(f"[{r} = {s_}]{dv_t}")
                heads_x.append(rf"[{r} = {s_}]{dv_x}")
            else:
                heads_t.append(f"[{r} = {s_}] {st}_{r} {st}_{s_}{dv_t}")
                heads_x.append(rf"[{r} = {s_}]\, {sx}_{{{r}}} {sx}_{{{s_}}}{dv_x}")
                define(v, lambda c, v=v: c.g.ctx.get(v))
        else:
            heads_t.append(f"({st}_{r})ᵀH⁻¹{st}_{s_} (H = ∂²L/∂{v.block_txt}²)")
            heads_x.append(rf"({sx}_{{{r}}})^T H^{{-1}} {sx}_{{{s_}}}\ "
                           rf"(H = \partial^2 L / \partial {v.block_tex}^2)")
            define(v, lambda c, v=v: c.g.ctx.get(v))
    for blk in joints:      # (g_r)ᵀH⁻¹g_s with H the joint curvature, printed as it is
        from .reduce_joint import joint_coef_text, joint_curvature_text
        z = blk.var
        st, sx = sym(z)
        ht, hx = joint_curvature_text(blk)
        heads_t.append(f"({st}_{r})ᵀH⁻¹{st}_{s_} (H = ∂²L/∂{z.block_txt}² = {ht})")
        heads_x.append(rf"({sx}_{{{r}}})^T H^{{-1}} {sx}_{{{s_}}},\ H = "
                       rf"\partial^2 L / \partial {z.block_tex}^2 = {hx}")
        define(z, lambda c, blk=blk: joint_coef_text(blk, c))
    head = (f"Q_{r}{s_} = " + " + ".join(heads_t),
            rf"Q_{{{r}{s_}}} = " + " + ".join(heads_x))
    return head, defs
