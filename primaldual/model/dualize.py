"""Mechanical Lagrangian dual of a convex primal (docs/formulations.md sign convention): QP
blocks, and blocks whose term has a known convex conjugate (l1 and l-inf norms, the logistic
and Huber losses).

Supported primal (``sense="min"``)::

    min   sum_v q_v(x_v) + m^T x + const
    s.t.  g_c(x) = sum_v M_{c,v} (G_v x_v) + g0_c  >= 0  or == 0     [lambda_c]

with ``q_v`` a PSD quadratic of one block: ``c ||w||^2`` of a feature-space variable
(``G_w = K``, the representer form) or of a plain variable, ``c sum_i (d_i x_i)^2``
(``sum_squares`` of a single scaled variable) or ``c x^T P x`` (``quad_form``). The Lagrangian is
``L = f - sum_c lambda_c^T g_c`` and each block's linear coefficient is
``r_v(lambda) = m_v - sum_c M_{c,v}^T lambda_c``.

Per block the derivation does what one does on a board:

* quadratic, positive definite ``q_v``: ``dL/dx_v = H_v x_v + r_v = 0`` gives
  ``x_v = -H_v^{-1} r_v`` (feature space: ``w = sum_j beta_j phi(z_j)``,
  ``beta = -r_w / (2c)``) and contributes ``-1/2 r_v^T H_v^{-1} r_v`` to the dual
  (``-(1/(4c)) r_w^T K r_w``);
* linear only: ``r_v(lambda) = 0`` becomes an equality on the multipliers, written
  ``sum_c M_{c,v}^T lambda_c = m_v`` (``y^T alpha = 0``) with multiplier ``nu = -x_v``;
* linear only with its own sign constraint ``D x_v >= 0 [mu]``: ``r_v - D mu = 0`` and
  ``mu >= 0`` fold into ``sum_c M_{c,v}^T lambda_c <= m_v`` (``alpha <= C``), whose multiplier
  is ``x_v`` itself (``xi``);
* a term with a known conjugate, ``c l(s x_v + c0)`` entry by entry: ``inf_x`` gives
  ``-c sum_i l^*(t_i) - sum_i r_i c0_i / s_i`` with ``t = -r_v / (c s)``: ``l^* = -H`` (binary
  entropy, ``0 <= t <= 1``) for the logistic loss, ``t^2/2`` on ``|t| <= delta`` for Huber's,
  the indicator of ``|t| <= 1`` for ``|.|`` (norm1) and of ``||t||_1 <= 1`` for norm_inf. A loss
  of an affine argument is first written on a variable ``u = e [lambda]`` of its own.

The dual is ``max D(lambda) = const - sum_c g0_c^T lambda_c - 1/2 sum_v r_v^T H_v^{-1} r_v``
subject to the equalities, folded bounds and ``lambda_c >= 0`` on inequality multipliers.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import DualizationError
from .atoms import quad_form, vsum
from .derivation import Derivation, Step, _bcast, _Block, _dense, _is_diag
from .dual_text import (
    _coef_text_pair,
    _conj_arg_text,
    _const_symbol,
    _diag_block,
    _diag_text,
    _fix_ball_coefficient,
    _linear_text,
    _name_stacked,
    _num_text,
    _q_text,
    _rhs_text,
    _slice_vec,
    _solved_text,
    _sum_text,
    _term_expr_of,
)
from .expr import Expr, _has_top_sum, coef_mul
from .leaves import PROD, SUM, Variable
from .placeholders import Deferred, make_env
from .problem import Constraint, Problem
from .qform import QForm
from .rewrite import _introduce_loss_variables
from .symbols import text_symbol
from .terms import (
    FeatureNorm,
    Huber,
    Norm1,
    NormInf,
    QuadForm,
    SumBinaryEntropy,
    SumLogistic,
    SumSquares,
)

__all__ = ["Derivation", "DualizationError", "Step", "dualize"]


# ---------------------------------------------------------------------- expression builders
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


class _SymbolicKernel:
    """The template's kernel: an RBF kernel that prints as ``k`` (the user's kernel comes with
    ``bind``)."""

    def __init__(self) -> None:
        from ..kernels import make_kernel
        self._k = make_kernel("rbf", gamma=0.5)

    def __call__(self, A, B=None):
        return self._k(A, B)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_k":
            raise AttributeError(name)
        return getattr(self._k, name)

    def __repr__(self) -> str:
        return "k"


def _dualize_spec(spec: Deferred, name: str | None) -> Derivation:
    """``dualize`` of a placeholder spec: derived on a small template data set (7 points in
    2-D, labels ±1, every parameter 1) whose numbers never reach the text, since the spec
    names its data by symbols."""
    rng = np.random.default_rng(0)
    n = 7
    env = make_env(rng.standard_normal((n, 2)), np.where(np.arange(n) % 2 == 0, 1.0, -1.0),
                   _SymbolicKernel(), {p: 1.0 for p in spec.params})
    primal = spec.resolve(env)
    if not isinstance(primal, Problem):
        raise TypeError(f"dualize: the spec records a {type(primal).__name__}, not a Problem")
    der = dualize(primal, name=name)
    der._spec = spec
    return der


# ---------------------------------------------------------------------- main entry
def dualize(primal: Problem, *, name: str | None = None) -> Derivation:
    """Derive the Lagrangian dual of a convex ``primal`` mechanically.

    Parameters
    ----------
    primal : Problem or placeholder spec
        A minimisation whose objective is a sum of PSD quadratic blocks (``norm2`` of a feature or
        plain variable, ``sum_squares`` of one scaled variable, ``quad_form``), norms
        (``norm1``, ``vsum(c * abs(x))``, ``norm_inf``) and losses (``logistic``, ``huber``) of
        one block each, and linear terms, with affine constraints (or an upper bound on
        ``norm2(phi(X) - a)``) owning named multipliers.
    name : str, optional
        Name of the dual Problem (default: the primal's name with "primal" replaced by
        "dual (derived)").

    Returns
    -------
    Derivation
        ``.dual`` (a maximisation over the multipliers; with the box-QP or LS-SVM shape, SMO or
        the KKT backend detects it from the problem itself), ``.steps``,
        ``.recover(dual_solution)``. For a spec written on data placeholders
        (``primaldual.model``: ``X``, ``y``, ``N``, ``d``, ``Param``, ``FeatureVariable("w")``
        without a kernel) the derivation is made without the user's data (on a small internal
        template, so its text and LaTeX carry only the spec's symbols; ``.bound`` is False) and
        ``.bind(X=..., y=..., kernel=..., params={...})`` returns the derivation bound to a data
        set: its dual forms no ``N x N`` array (``Q`` is a kernel operator), so binding costs
        O(N) work besides the data's own size.

    Raises
    ------
    DualizationError
        A term without a known conjugate (an entropy), a nonconvex quadratic, a quadratic
        coupling blocks, a singular quadratic block, or a feature-space block that appears only
        linearly.
    """
    if isinstance(primal, Deferred):
        return _dualize_spec(primal, name)
    if not isinstance(primal, Problem):
        raise TypeError(f"primal must be a Problem, got {type(primal).__name__}")
    if primal.sense != "min":
        raise DualizationError("dualize needs a minimisation primal (sense='min'); write "
                               "max f as min -f")
    for v in primal.variables:
        if getattr(v, "entry_indexed", False) and not v.scalar:
            raise DualizationError(
                f"the vector {v.name!r} is used entry by entry ({v.name}[j]); its stationarity "
                f"would print per sample, which is false: write its entries as scalar variables "
                f"(Variable('{v.name}1'), Variable('{v.name}2'), ...)")
    steps: list[Step] = [Step("Primal", str(primal), primal.to_latex())]
    primal = _introduce_loss_variables(primal, steps)
    obj = primal.objective
    lag = primal.lagrangian()
    steps.append(Step("Lagrangian (L = f - Σ λ g, λ ≥ 0 on inequalities)", str(lag),
                      lag.to_latex()))

    # ---- classify blocks
    quad: dict[Variable, list] = {v: [] for v in primal.variables}
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
        if len(t.variables) != 1:
            raise DualizationError("a quadratic term couples blocks "
                                   f"{[v.name for v in t.variables]}; write one block per term")
        quad[t.variables[0]].append(t)

    kkt = {c.key: c for c in primal.kkt().conditions}
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

    blocks: list[_Block] = []
    folded: set[Constraint] = set()
    for v in primal.variables:
        m = np.zeros(v.size)
        if v in obj.lin:
            m = _dense(obj.lin[v]).ravel()
        terms = quad[v]
        ball = [c for c in primal.constraints if v in c.g.rq]
        if v.feature and ball and all(isinstance(t, FeatureNorm) for t in terms):
            # ||phi(x_i) - a||^2 <= ...: the coefficient of ||a||^2 in L is
            # c_obj + Σ_i λ_i (-q_i), fixed below by a derived equality (SVDD: Σ α_i = 1)
            blocks.append(_Block(v, "feature", coef=sum(t.coef for t in terms), m=m,
                                 divisor=("2", "2")))
            blocks[-1].fold_d = None
            blocks[-1].H = None
            blocks[-1].ball = True
        elif v.feature:
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
            blocks.append(_Block(v, "feature", coef=c, m=m,
                                 divisor=terms[0].factor_text(2.0) if len(terms) == 1
                                 else _coef_text_pair(2 * c)))
        elif terms and any(isinstance(t, Norm1) for t in terms):
            # c ||x||_1: its conjugate is the indicator of ||.||_inf <= c, so stationarity
            # 0 ∈ c ∂||x||_1 + m - A λ becomes the two-sided bound |A λ - m| <= c
            if len(terms) != 1 or set(terms[0].e.lin) != {v} or np.any(terms[0].e.const != 0) \
                    or not _is_identity(_bcast(terms[0].e.lin[v], terms[0].e.size), v.size):
                raise DualizationError(f"block {v.name!r}: norm1 is dualised for norm1({v.name}) "
                                       "alone (no other term of the same block)")
            blocks.append(_Block(v, "norm1", coef=terms[0].coef, m=m,
                                 divisor=terms[0].factor_text(1.0)))
            blocks[-1].weights = terms[0].weights          # Σ_k c_k |x_k|: |r_k| <= c c_k
            if terms[0].weights is not None:
                ws = terms[0].weights_sym or _num_text(terms[0].weights)
                blocks[-1].divisor = coef_mul(blocks[-1].divisor, ws)
        elif terms and any(isinstance(t, NormInf) for t in terms):
            # c ||x||_inf: its conjugate is the indicator of ||.||_1 <= c, so stationarity
            # becomes ||A λ - m||_1 <= c, written with a bound τ_k >= |(A λ - m)_k|
            if len(terms) != 1 or set(terms[0].e.lin) != {v} or np.any(terms[0].e.const != 0) \
                    or not _is_identity(_bcast(terms[0].e.lin[v], terms[0].e.size), v.size):
                raise DualizationError(f"block {v.name!r}: norm_inf is dualised for "
                                       f"norm_inf({v.name}) alone (no other term of the block)")
            blocks.append(_Block(v, "norminf", coef=terms[0].coef, m=m,
                                 divisor=terms[0].factor_text(1.0)))
        elif terms and any(isinstance(t, (SumLogistic, Huber)) for t in terms):
            # a separable loss c Σ_i l(s_i v_i + c0_i) with a known conjugate l*: the block
            # leaves -c Σ_i l*(t_i) - Σ_i r_i c0_i / s_i in the dual, t = (A λ - m)/(c s)
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
                blk.H = np.diag(t.coef * S ** 2)
                if not np.allclose(S ** 2, 1.0):
                    blk.divisor = _coef_text_pair(float(t.coef * S[0] ** 2)) if np.allclose(
                        S ** 2, S[0] ** 2) else ("H", "H")
            blocks.append(blk)
        elif terms:
            H = np.zeros((v.size, v.size))
            for t in terms:
                if isinstance(t, FeatureNorm):
                    H += 2 * t.coef * np.eye(v.size)
                elif isinstance(t, SumSquares):
                    e = t.e
                    if set(e.lin) != {v} or np.any(e.const != 0):
                        raise DualizationError(f"sum_squares in block {v.name!r} must be of a "
                                               "single scaled variable without offset")
                    D = _dense(_bcast(e.lin[v], e.size))
                    H += 2 * t.coef * D.T @ D
                else:
                    H += 2 * t.coef * t.op.dense()
            dH = _is_diag(H)
            lam_min = (float(np.min(dH)) if dH is not None else
                       np.linalg.eigvalsh(0.5 * (H + H.T))[0]) if v.size else 1.0
            if lam_min <= 1e-12 * max(1.0, float(np.max(np.abs(H)))):
                raise DualizationError(f"quadratic block {v.name!r} is singular (smallest "
                                       f"eigenvalue {lam_min:.3g}) and cannot be eliminated")
            blocks.append(_Block(v, "quad", H=H, m=m, divisor=terms[0].factor_text(2.0)
                                 if len(terms) == 1 else _coef_text_pair(1.0),
                                 n_terms=len(terms)))
        elif v in sign_of:
            c, d = sign_of[v]
            folded.add(c)
            blocks.append(_Block(v, "fold", m=m, fold=c, fold_d=d))
        else:
            blocks.append(_Block(v, "equality", m=m))

    kept = [c for c in primal.constraints if c not in folded]
    # layout: quadratic multipliers first, stacked into one variable if several
    Aq = {}
    for c in kept:
        Aq[c] = any(c.g.lin.get(b.var) is not None and _nonzero(c.g.lin[b.var])
                    for b in blocks if b.kind in ("feature", "quad", "huber"))
    qcons = [c for c in kept if Aq[c]]
    order = qcons + [c for c in kept if not Aq[c]]
    layout: dict[str, tuple[Variable, int]] = {}
    dvars: list[Variable] = []
    if len(qcons) > 1:
        nm = "_".join(c.multiplier for c in qcons)
        stacked = Variable(nm, sum(c.size for c in qcons))
        _name_stacked(stacked, qcons)
        dvars.append(stacked)
        off = 0
        for c in qcons:
            layout[c.multiplier] = (stacked, off)
            off += c.size
        rest = order[len(qcons):]
    else:
        rest = order
    for c in rest:
        dv = Variable(c.multiplier, None if c.scalar else c.size, index=c.index_set)
        dvars.append(dv)
        layout[c.multiplier] = (dv, 0)
    kept = order
    n = sum(c.size for c in kept)

    der = Derivation(primal, primal, steps, blocks, kept, layout)
    der._derive = dualize
    for blk in blocks:
        if getattr(blk, "ball", False):
            _fix_ball_coefficient(blk, blocks, kept, der)

    def to_expr(R: np.ndarray, const, txt: str, tex: str, size: int, scalar: bool) -> Expr:
        """Affine expression ``R lambda + const`` over the dual variables."""
        pieces: dict[Variable, sp.csr_matrix] = {}
        R = sp.csr_matrix(R)
        off = 0
        for c in kept:
            dv, lo = layout[c.multiplier]
            blockR = R[:, off:off + c.size]
            off += c.size
            if blockR.count_nonzero():
                # place the columns at lo..lo+size of the dual variable (sparse, no N x N)
                E = sp.csr_matrix((np.ones(c.size), (np.arange(c.size), lo + np.arange(c.size))),
                                  shape=(c.size, dv.size))
                pieces[dv] = pieces[dv] + blockR @ E if dv in pieces else blockR @ E
        return _affine(list(pieces.items()), np.broadcast_to(const, (size,)), txt, tex, size,
                       scalar)

    # ---- per-block stationarity steps and dual pieces
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
    for blk in blocks:
        v = blk.var
        st = kkt.get(f"stationarity[{v.name}]")
        head_t, head_x = (st.txt, st.tex) if st is not None else ("", "")
        A = der._A(blk)
        if blk.kind == "feature":
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
        elif blk.kind == "quad":
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
        elif blk.kind == "equality":
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
        elif blk.kind == "norm1":
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
        elif blk.kind in ("logistic", "huber"):
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
        elif blk.kind == "norminf":
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
        else:  # fold
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
    der._eq_names, der._fold_names = eq_names, fold_names

    # ---- nonnegativity of inequality multipliers
    from .render import n_samples
    n_samp = n_samples(primal)
    ineq_by_var: dict[Variable, list[Constraint]] = {}
    for c in kept:
        if not c.equality:
            ineq_by_var.setdefault(layout[c.multiplier][0], []).append(c)
    n_s = len(ineq_by_var)
    sign_cons = []
    for dv, cs in ineq_by_var.items():
        if sum(c.size for c in cs) != dv.size:
            # equality multipliers stacked with inequality ones (an auxiliary variable defined
            # by an equality, SVM+'s ξ = ⟨w*, φ(x*_i)⟩ + b* [η]): a sign per inequality part
            for c in cs:
                _, lo = layout[c.multiplier]
                E = sp.csr_matrix((np.ones(c.size), (np.arange(c.size), lo + np.arange(c.size))),
                                  shape=(c.size, dv.size))
                e = _affine([(dv, E)], np.zeros(c.size), c.mult_txt, c.mult_tex, c.size,
                            c.scalar)
                zero = _affine([], np.zeros(c.size), "0", "0", c.size, c.scalar)
                sign_cons.append(Constraint(e, ">=", zero, f"s_{c.multiplier}", c.where))
            continue
        nm = "s" if n_s == 1 else f"s_{dv.name}"
        con = (dv >= 0).named(nm)
        if dv._stack is None and len(cs) == 1 and cs[0].where:
            con.where = cs[0].where      # the rows of the constraint it multiplies
        if dv._stack is not None:
            sizes = {size for _, size, sc in dv._stack_parts if not sc}
            if any(sc for _, _, sc in dv._stack_parts):
                raise DualizationError(f"stacked multipliers {dv.block_txt} mix scalars and "
                                       "vectors")
            if len(sizes) == 1:
                n0 = sizes.pop()
                con.where = "i = 1..N" if n0 == n_samp else f"i = 1..{n0}"
            else:   # parts over different row sets (Weston-Watkins: i with y_i ≠ k)
                con.where = "entrywise"
        sign_cons.append(con)
    der._sign_names = {c.multiplier for c in sign_cons}

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
            if np.allclose(pv, pv[0]) and dv._stack is None:
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
    if shifted:
        dual.definitions.append(_shift_text(shifted, obj))
    # no structure record is attached: SMO/KKT read it from the dual itself (model/structure.py)
    der.dual = dual
    qtxt = None if gram is None else _q_text(
        feature_ops, blocks, [c for c in kept if Aq[c]], qv,
        _diag_block(blocks) if qt is not None else None,
        frozenset(v.name for v in primal.variables))
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
    return der
