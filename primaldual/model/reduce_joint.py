"""Plain variables coupled by a quadratic term, eliminated together (a helper of the
classification and stationarity reductions).

A quadratic term over several plain variables, ``c ||M z + m0||^2`` with ``z = (w, b)``
stacked (the twin SVM's ``1/2 Σ_i (a_iᵀw + b)²``, Jayadeva, Khemchandani & Chandra 2007), is
one block of the Lagrangian: its curvature is ``H = Σ 2c MᵀM`` (plus the variables' own
``c' ||v||²`` terms, the paper's regulariser ``ε/2 ||z||²`` when the user writes it), and
stationarity ``H z + r(λ) = 0`` gives ``z = H⁻¹(A λ - m)`` with ``m`` the objective's linear
coefficient of ``z`` plus ``2c Mᵀm0``. The dual gains ``-1/2 λᵀ Aᵀ H⁻¹ A λ``: with the Cholesky
factor ``H = L Lᵀ`` that is ``-1/2 ||L⁻¹ A λ||²``, so ``Q`` is the linear kernel on the columns of
``L⁻¹ A`` (a ``dim z x n`` array, one triangular solve), never an ``n x n`` inverse. A singular
``H`` (fewer independent rows than ``dim z``) has no such ``z``: refused, naming the
regulariser.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.linalg import lapack

from ..exceptions import DualizationError
from ..kernels.gram import one_blas_thread
from .coef_text import coef_mul
from .derivation import Step, _bcast, _Block, _dense
from .expr import row_index
from .leaves import Variable
from .terms import FeatureNorm, QuadForm, SumSquares

__all__ = ["eliminate_joint", "joint_blocks", "joint_coef_text", "joint_curvature_text",
           "joint_shift_text"]

#: a curvature eigenvalue at most this fraction of the largest (or of 1) counts as zero: the
#: eigenvalues of a symmetric matrix are computed to about ``dim * eps * ||H||`` (~1e-13 for
#: a few hundred entries), so this leaves three orders of headroom while a regulariser
#: ``ε ||z||²`` as small as ``1e-12 ||H||`` is still taken
SINGULAR_REL = 1e-12


def _coupled(t: Any) -> bool:
    """A quadratic term that needs the joint road: over several variables, or a sum of squares
    of one variable with an offset (``||X w - y||²``)."""
    return isinstance(t, SumSquares) and (len(t.variables) > 1 or bool(np.any(t.e.const != 0)))


def joint_blocks(primal: Any, obj: Any, quad: dict[Variable, list],
                 coupled: list) -> dict[Variable, _Block]:
    """The joint blocks of the coupled quadratic terms ``coupled``: the variables linked by
    them (connected through shared terms), each group with all its quadratic terms. Returns
    ``{variable: its block}`` (one block object per group); ``quad`` loses the group's terms."""
    if not coupled:
        return {}
    parent: dict[Variable, Variable] = {}

    def root(v: Variable) -> Variable:
        while parent.setdefault(v, v) is not v:
            v = parent[v]
        return v

    for t in coupled:
        feat = [v.name for v in t.variables if v.feature]
        if feat:
            raise DualizationError(
                f"a quadratic term couples the feature-space block(s) {feat} with "
                f"{[v.name for v in t.variables if not v.feature]}: a feature-space variable "
                "is eliminated alone (its ||w||^2); write sum_squares over plain variables")
        r0 = root(t.variables[0])
        for v in t.variables[1:]:
            parent[root(v)] = r0
    groups: dict[Variable, list[Variable]] = {}
    for v in primal.variables:
        if v in parent:
            groups.setdefault(root(v), []).append(v)
    out: dict[Variable, _Block] = {}
    for vs in groups.values():
        terms = [t for t in coupled if root(t.variables[0]) is root(vs[0])]
        for v in vs:
            other = [t for t in quad[v] if not isinstance(t, (FeatureNorm, SumSquares,
                                                              QuadForm))]
            if other:
                raise DualizationError(
                    f"block {v.name!r}: a {type(other[0]).__name__} term next to a quadratic "
                    f"term coupling {[u.name for u in vs]}; the coupled blocks are eliminated "
                    "jointly through their curvature, which that term does not have")
            terms += quad[v]
            quad[v] = []
        blk = _make_block(vs, terms, obj)
        for v in vs:
            out[v] = blk
    return out


def _columns(vs: list[Variable]) -> dict[Variable, slice]:
    cols, off = {}, 0
    for v in vs:
        cols[v] = slice(off, off + v.size)
        off += v.size
    return cols


def _make_block(vs: list[Variable], terms: list, obj: Any) -> _Block:
    """The curvature, linear coefficient and constant of the stacked ``z`` of ``vs``."""
    cols = _columns(vs)
    nz = sum(v.size for v in vs)
    m = np.zeros(nz)
    const = 0.0
    for v in vs:
        if v in obj.lin:
            m[cols[v]] = _dense(obj.lin[v]).ravel()
    H: np.ndarray | None = None
    for t in terms:
        if not isinstance(t, SumSquares):
            continue
        e = t.e
        c0 = np.broadcast_to(np.asarray(e.const, dtype=float), (e.size,))
        Md = _stacked_rows(e, vs, cols, nz)
        # MᵀM: dense BLAS (syrk) for data rows (a kernel block is full), sparse for sparse
        # rows; scaled and summed in place (an (N + 1)² array at N = 10,000 is 0.8 GB)
        P = Md.T @ Md if isinstance(Md, np.ndarray) else _dense(Md.T @ Md)
        P *= 2 * t.coef
        if H is None:
            H = P
        else:
            H += P
        del P
        if np.any(c0 != 0):      # c ||M z + c0||² = c zᵀMᵀMz + 2c c0ᵀM z + c ||c0||²
            m += 2 * t.coef * np.asarray(Md.T @ c0).ravel()
            const += t.coef * float(c0 @ c0)
        del Md
    if H is None:
        H = np.zeros((nz, nz))
    symmetric = True        # MᵀM (syrk) and c I are symmetric as computed; a QuadForm may not be
    diag = np.einsum("ii->i", H)        # a view: the identity terms go on it in place
    for t in terms:
        if isinstance(t, FeatureNorm):
            diag[cols[t.w]] += 2 * t.coef
        elif not isinstance(t, SumSquares):
            sl = cols[t.x]
            H[sl, sl] += 2 * t.coef * _dense(t.op.dense())
            symmetric = False
    if not symmetric:
        H = 0.5 * (H + H.T)
    names = ", ".join(v.block_txt for v in vs)
    L, lam_min, lam_top = _factor(H)       # H is overwritten by its factor
    del H
    if L is None or lam_min <= SINGULAR_REL * max(1.0, lam_top):
        reg = " + ".join(f"norm2({v.name})" for v in vs)
        raise DualizationError(
            f"the curvature (Gram matrix HᵀH) of the quadratic terms over ({names}) is singular "
            f"(smallest eigenvalue {lam_min:.3g}, largest at most {lam_top:.3g}): ({names}) "
            "cannot be eliminated, since the data give fewer independent rows than it has "
            "entries. Regularise as the twin SVM does (Jayadeva et al. 2007): add "
            f"eps/2 * ({reg}) to the objective with a small eps > 0")
    z = Variable("_".join(v.name for v in vs), nz)
    bt, bx = _stack_text([(v.block_txt, v.block_tex) for v in vs])
    z._stack = (bt, bx, bt, bx)
    # H itself is not kept: its factor L is what recovery and the dual's Q use
    blk = _Block(z, "joint", H=None, m=m, n_terms=len(terms))
    blk.vars, blk.cols, blk.terms, blk.const0 = vs, cols, terms, const
    blk.L = L
    return blk


def _stacked_rows(e: Any, vs: list[Variable], cols: dict[Variable, slice], nz: int) -> Any:
    """``M`` of a sum of squares ``||M z + c0||²`` over the stacked ``z``: a dense array when
    its blocks are mostly non-zero (kernel rows ``K_A``: filled column slice by column slice,
    never through a sparse stack of 50 million entries), sparse otherwise."""
    blocks = {v: _bcast(e.lin[v], e.size) for v in vs if v in e.lin}
    nnz = sum(b.nnz if sp.issparse(b) else np.count_nonzero(b) for b in blocks.values())
    if nnz > 0.1 * e.size * nz:
        Md = np.zeros((e.size, nz))
        for v, b in blocks.items():
            Md[:, cols[v]] = b.toarray() if sp.issparse(b) else b
        return Md
    return sp.hstack([sp.csr_matrix(blocks[v]) if v in blocks else sp.csr_matrix((e.size, v.size))
                      for v in vs]).tocsr()


#: inverse-iteration steps for the smallest eigenvalue: the rate is λ_1/λ_2 per step, so a
#: zero eigenvalue of a rank-deficient Gram (λ_1 ~ 1e-16 λ_2) shows after the first step, and
#: eight steps bring a well separated one within a few percent
_INVERSE_STEPS = 8

#: rows of ``H`` per chunk of the Gershgorin row sums (no second ``(N + 1)²`` array)
_ROW_CHUNK = 1024


def _factor(H: np.ndarray) -> tuple[np.ndarray | None, float, float]:
    """``(L, λ_min, λ_top)``: the Cholesky factor of ``H`` computed in ``H``'s own memory (``H``
    is overwritten; ``None`` when it fails: ``H`` is singular or indefinite to working
    precision), its smallest eigenvalue by inverse iteration with that factor (an O(n²) solve
    per step where ``eigvalsh`` costs many O(n³) passes; the Rayleigh quotient
    ``vᵀHv = ||Lᵀv||²``) and Gershgorin's bound ``λ_top >= λ_max`` (the largest absolute row
    sum). ``L`` is lower triangular, Fortran-ordered.

    LAPACK's ``potrf`` runs on one BLAS thread: on two cores shared with other work its
    two-thread version measured five times slower (2.6 against 13 GFLOP/s at n = 3,001)."""
    n = H.shape[0]
    lam_top = max((float(np.abs(H[i:i + _ROW_CHUNK]).sum(axis=1).max())
                   for i in range(0, n, _ROW_CHUNK)), default=0.0)
    if n == 0:
        return H, 0.0, lam_top
    # H is symmetric: its C-ordered memory is Hᵀ = H in Fortran order, factored in place
    with one_blas_thread():
        L, info = lapack.dpotrf(H.T, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        return None, 0.0, lam_top
    v = np.random.default_rng(0).standard_normal(n)
    for _ in range(_INVERSE_STEPS):
        v = sla.cho_solve((L, True), v, check_finite=False)
        v /= np.linalg.norm(v)
    r = L.T @ v
    return L, float(r @ r), lam_top


def eliminate_joint(s: Any, blk: _Block, A: Any) -> None:
    """Stationarity in the stacked ``z``: eliminated, ``-1/2 ||L⁻¹ A λ||²`` joins the dual
    (``Q``'s term ``(L⁻¹A)ᵀ(L⁻¹A)``, the linear kernel on ``dim z`` rows), with the shift
    ``qᵀλ - κ`` of a linear term and the offset's constant."""
    if np.any(blk.m != 0):       # before the solve below, which may overwrite A
        Hm = sla.cho_solve((blk.L, True), blk.m)
        s.p_shift += A.T @ Hm
        s.const_shift -= 0.5 * float(blk.m @ Hm)
        s.shifted.append(blk)
    # L⁻¹ A (dim z x n), solved in place in a Fortran-ordered copy of A (in A itself when the
    # derivation built it dense and Fortran-ordered for this solve) and kept dense
    B = A if isinstance(A, np.ndarray) and A.flags.f_contiguous else (
        np.array(A, order="F") if isinstance(A, np.ndarray)
        else sp.csr_matrix(A).toarray(order="F"))
    del A
    W = sla.solve_triangular(blk.L, B, lower=True, overwrite_b=True, check_finite=False)
    del B
    s.Q.add(W, sp.identity(W.shape[0], format="csr"))
    s.const += blk.const0
    z = blk.var
    heads = [s.kkt.get(f"stationarity[{v.name}]") for v in blk.vars]
    head_t = "\n".join(h.txt for h in heads if h is not None)
    head_x = r"\;,\; ".join(h.tex for h in heads if h is not None)
    ht, hx = joint_curvature_text(blk)
    s.steps.append(Step(
        f"Stationarity in {z.block_txt}: eliminate jointly (positive definite)",
        head_t + f"\n⇒ {z.block_txt} = H⁻¹(Σ_c M_cᵀλ_c - m) with H = ∂²L/∂{z.block_txt}² = "
        f"{ht} (one block: a quadratic term couples them)",
        head_x + rf"\;\Rightarrow\; {z.block_tex} = H^{{-1}}\left(\sum_c M_c^T\lambda_c - "
        rf"m\right),\ H = {hx}"))


def _stack_text(parts: list[tuple[str, str]]) -> tuple[str, str]:
    """``(a, b)`` of the stacked parts' texts (one part: itself)."""
    if len(parts) == 1:
        return parts[0]
    return (f"({', '.join(p[0] for p in parts)})",
            rf"\left({', '.join(p[1] for p in parts)}\right)")


def joint_coef_text(blk: _Block, c: Any) -> tuple[str, str] | None:
    """The coefficient of ``z`` in row ``i`` of constraint ``c``: the blocks' row coefficients
    stacked, ``(-b_i, -1)`` (``None`` when no block of ``z`` is in ``c``)."""
    if not any(v in c.g.lin for v in blk.vars):
        return None
    return _stack_text([c.g.ctx.get(v, ("0", "0")) if v in c.g.lin else ("0", "0")
                        for v in blk.vars])


def _rows_as_l(k: tuple[str, str], r: str = "i") -> tuple[str, str]:
    """A row coefficient's text with its row index ``r`` written ``l`` (``a_i`` -> ``a_l``,
    ``K_B,j`` -> ``K_B,l``)."""
    t = re.sub(rf"([_,]){r}\b", r"\1l", k[0])
    return t, k[1].replace(f"_{{{r}}}", "_{l}").replace(f",{r}}}", ",l}")


def joint_curvature_text(blk: _Block) -> tuple[str, str]:
    """``H`` as the terms give it: ``Σ_l (a_l, 1)(a_l, 1)ᵀ`` per sum of squares (its
    factor in front), ``ε I`` for a regulariser over every block (``ε I_w`` for one)."""
    pt, px = [], []
    eye: dict[Variable, tuple[str, str]] = {}
    for t in blk.terms:
        if isinstance(t, SumSquares):
            e = t.e
            # the sum runs over the term's own rows: a letter of its own (l), not the i of
            # the multipliers' rows that Q_ij is indexed by
            ri = row_index(e)
            r = _stack_text([_rows_as_l(e.ctx.get(v, ("1", "1")), ri[1] if ri else "i")
                             if v in e.lin
                             else ("0", "0") for v in blk.vars])
            f = t.factor_text(2.0)
            sep = "" if len(blk.vars) > 1 else " "     # (a_l, 1)(a_l, 1)ᵀ, x_l x_lᵀ
            outer = (f"Σ_l {r[0]}{sep}{r[0]}ᵀ" if not e.scalar else f"{r[0]}{sep}{r[0]}ᵀ",
                     rf"\sum_{{l}} {r[1]}{sep}{r[1]}^T" if not e.scalar
                     else f"{r[1]}{sep}{r[1]}^T")
            pt_, px_ = coef_mul(f, outer) if f != ("1", "1") else outer
            pt.append(pt_)
            px.append(px_)
        elif isinstance(t, FeatureNorm):
            eye[t.w] = t.factor_text(2.0)
        else:
            f = t.factor_text(2.0)
            q = (t.Q.txt, t.Q.tex)
            pt.append(coef_mul(f, q)[0] + f" (on {t.x.block_txt})")
            px.append(coef_mul(f, q)[1] + rf"\ (\text{{on }} {t.x.block_tex})")
    facs = set(eye.values())
    if eye and len(eye) == len(blk.vars) and len(facs) == 1:
        f = facs.pop()
        pt.append(coef_mul(f, ("I", "I"))[0])
        px.append(coef_mul(f, ("I", "I"))[1])
    else:
        for v, f in eye.items():    # the identity on v's entries of z
            it = coef_mul(f, (f"I_{v.block_txt}", f"I_{{{v.block_tex}}}"))
            pt.append(it[0])
            px.append(it[1])
    return " + ".join(pt), " + ".join(px)


def joint_shift_text(blk: _Block) -> tuple[str, str]:
    """What ``m_z`` of the shift ``q, κ`` is for a joint block: the objective's linear
    coefficients of its variables plus the expanded offset of its sums of squares."""
    z = blk.var
    off = [t for t in blk.terms if isinstance(t, SumSquares) and np.any(t.e.const != 0)]
    zt = z.block_txt
    t = (f"m_{zt} the objective's linear coefficient of {zt}"
         + (f", with 2c Mᵀm₀ of each sum of squares c ‖M {zt} + m₀‖² (its constant c ‖m₀‖² "
            "is in the dual's constant)" if off else ""))
    x = (rf"m_{{{z.block_tex}}}" + (r" \ni 2c M^T m_0 \text{ of } c \|M z + m_0\|^2"
                                     if off else ""))
    return t, x
