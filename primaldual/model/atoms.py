"""Building expressions as on paper: ``inner``/``@``, ``norm2``, ``sum_squares``, ``quad_form``,
``norm1``, ``abs``, ``norm_inf``, ``logistic``, ``huber``, ``sum_entropy``, ``vsum``, ``dot``.

Each builder returns an :class:`~primaldual.model.expr.Expr` (the nonlinear ones holding a term
of :mod:`~primaldual.model.terms`). ``abs(e)`` and ``@`` of an expression, a variable or data
call the builders here through :data:`~primaldual.model.expr.bindings`, which this module
fills when it is imported.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import placeholders as _ph
from .coef_text import ATOM, PROD, _const_txt, _paren, coef_add, coef_mul
from .expr import (
    CONST,
    Expr,
    _as_expr,
    _bcast_vec,
    _broadcast,
    _fail_terms,
    array_operand_error,
    bind,
    row_index,
)
from .gram import GramOperator
from .leaves import Data, FeatureDiff, FeatureMap, FeatureVariable, Variable
from .symbols import latex_indexed, latex_symbol, text_indexed, text_symbol
from .terms import (
    FeatureNorm,
    Huber,
    Norm1,
    NormInf,
    QuadForm,
    SumEntropy,
    SumLogistic,
    SumSquares,
    _block_text,
    _term_expr,
)


def inner(w: FeatureVariable, feat: FeatureMap) -> Expr:
    """``<w, phi(x_i)>`` for the rows of ``feat``: ``w``'s basis points, a subset of them, or
    differences of such images (``phi(X).at(I, "i_p") - phi(X).at(J, "j_p")``)."""
    if not isinstance(w, FeatureVariable):
        raise TypeError("inner() needs a FeatureVariable as first argument")
    if not isinstance(feat, FeatureMap):
        raise TypeError(f"'{w.name} @ ...' needs phi(X), got {type(feat).__name__}")
    if not feat.new and feat.X is not w.basis and not (feat.X.shape == w.basis.shape
                                                       and np.array_equal(feat.X, w.basis)):
        raise ValueError("phi(X) must use the basis points of the feature variable "
                         f"{w.name!r} (the representer form covers its training points)")
    G = feat.S
    t, x = feat.txt, feat.tex
    if feat.new:     # new points (placeholder x): <w, phi(z)> = Σ_j β_j k(z, x_j)
        G = CrossGram(w, feat)
    out = Expr(G.shape[0], False, {w: G}, None, [], f"⟨{w.txt}, {t}⟩",
               rf"\langle {w.tex}, {x} \rangle", ATOM, ctx={w: (t, x) if " " not in t
                                                           else (f"({t})", rf"\left({x}\right)")})
    if "{I_i}" in t:     # phi(X)[I] without a subscript of its own: say what I_i is
        out.row_note = ("I_i the i-th of the selected points",
                        r"I_i\ \text{the i-th of the selected points}")
    return out


class CrossGram:
    """The map ``β -> S k(Z, B) β``: ``<w, phi(z_r)>`` at new points ``Z`` for ``w`` spanned by
    its basis ``B`` (a decision expression on the placeholder ``x``). Only evaluated
    (:meth:`apply`), in row chunks and over the non-zero ``β_j`` alone: no ``|Z| x |B|``
    array beyond a chunk."""

    cross = True

    def __init__(self, w: FeatureVariable, feat: FeatureMap, scale: float = 1.0) -> None:
        self.w, self.feat, self.scale = w, feat, scale
        self.shape = (feat.S.shape[0], w.size)

    def apply(self, beta: np.ndarray) -> np.ndarray:
        # the library's chunked product over the nonzero beta_j, on one BLAS thread (a
        # threaded GEMM of these thin blocks is 25x slower with the other core busy)
        from ..kernels import kernel_matvec
        beta = np.asarray(beta, dtype=float).ravel()
        nz = np.flatnonzero(beta)
        Z = self.feat.X
        out = np.zeros(Z.shape[0])
        if nz.size:
            out = kernel_matvec(self.w.kernel, Z, beta[nz], Z=self.w.basis[nz])
        return self.scale * np.asarray(self.feat.S @ out).ravel()

    def __mul__(self, c: Any) -> CrossGram:
        if not isinstance(c, numbers.Real):
            return NotImplemented
        return CrossGram(self.w, self.feat, self.scale * float(c))

    __rmul__ = __mul__

    def __neg__(self) -> CrossGram:
        return self * -1.0


def matmul(A: Data, x: Any) -> Expr:
    """``A x`` for a data matrix ``A`` (``N x d``) and a vector variable or expression of length
    ``d``: row ``i`` is ``a_iᵀx`` (``X @ w`` prints ``x_iᵀw``)."""
    if isinstance(x, np.ndarray) or sp.issparse(x):
        raise array_operand_error(x)
    if not isinstance(A, Data) or A.ndim != 2 or isinstance(A.value, GramOperator):
        raise TypeError("the left factor of '@' must be a data matrix (Data with a 2-D value)")
    e = _as_expr(x)
    if e.terms:
        _fail_terms()
    M = A.value
    if e.size != M.shape[1]:
        raise ValueError(f"shape mismatch: {A.name!r} has {M.shape[1]} columns, the vector "
                         f"{e.size} entries")
    if len(e.lin) == 1 and next(iter(e.lin)).feature and not np.any(e.const != 0):
        return _matmul_feature(A, e, M)
    # x must be a combination of whole vector variables, each times a scalar, for a row to
    # print as a_iᵀ(...): anything else (an entrywise weight, a constant) is refused
    lin = {}
    for v, G in e.lin.items():
        s = _identity_scale(G, v.size)
        if s is None:
            D = _dense_any(_broadcast(G, e.size))
            if D.shape == (v.size, v.size) and np.allclose(D, D[0, 0] * np.eye(v.size)):
                s = float(D[0, 0])
        if v.scalar or s is None or not isinstance(e.ctx.get(v), tuple):
            raise TypeError(f"'{A.name} @ x' is written for x a vector variable (or a sum of "
                            "scalar multiples of them); this x has no such rendering")
        # A (s I) is s A: no product with an N x N identity (O(N³) for a kernel block); a
        # mostly non-zero dense block (kernel rows K_A) stays dense, the array itself when
        # s = 1: its CSR copy costs 12 bytes an entry (1.2 GB for a 10,000² kernel matrix)
        # and a conversion pass, and every later product with it is a dense BLAS call
        lin[v] = M * s if s != 1.0 else M
        if sp.issparse(M) or not _mostly_nonzero(M):
            lin[v] = sp.csr_matrix(lin[v])
    if e.entrywise:
        raise TypeError(f"'{A.name} @ x' is written for x a vector variable (or a sum of scalar "
                        "multiples of them), not for one weighted entry by entry")
    if np.any(e.const != 0):
        raise TypeError(f"'{A.name} @ x' with a constant in x has no row rendering; write "
                        f"{A.name} @ x + {A.name} @ c with c as Data")
    src = getattr(A, "transposed_of", None)
    if src is not None:
        return _matmul_transposed(A, src, e, lin, M)
    for v in e.lin:
        # the vector a data matrix multiplies has an index set of its own, not the samples':
        # the expansion's (M, j) for a square matrix (K @ u), the features' (d, k) otherwise
        if (isinstance(v, Variable) and not v.scalar and not v.feature and v.index is None
                and getattr(v, "dim_txt", None) is None):
            v.index = "M" if M.shape[0] == M.shape[1] else "d"
    k_row = A.letter
    row_t, row_x = row_symbol(A.name, k_row)
    parts = [coef_mul(k, (v.block_txt, v.block_tex)) for v, k in e.ctx.items()
             if isinstance(v, Variable)]
    et, ex = parts[0]
    for p_ in parts[1:]:
        et, ex = coef_add((et, ex), p_)
    if len(parts) > 1 or " " in et:
        et, ex = f"({et})", rf"\left({ex}\right)"
    ctx = {v: coef_mul(k, (row_t, row_x)) for v, k in e.ctx.items() if isinstance(v, Variable)}
    out = Expr(M.shape[0], False, lin, M @ _bcast_vec(e.const, e.size), [],
               f"{row_t}ᵀ{et}", f"{row_x}^T {ex}", ATOM, ctx=ctx)
    if A.index is not None:      # rows over a set of their own (B's rows, j = 1..N_B)
        out.row_set = (A.index, k_row)
    for v, k in e.ctx.items():   # X @ w: the coefficient of w_k in row i is x_ik
        if isinstance(v, Variable) and k == ("1", "1") and v.blockwise and not v.feature:
            kl = v.letter
            out.comp[v] = (f"{row_t}{kl}", row_x[:-1] + f"{kl}}}" if row_x.endswith("}")
                           else f"{row_x}{kl}")
    return out


def _matmul_feature(A: Data, e: Expr, M: Any) -> Expr:
    """``D (w @ phi(X))``: row ``p`` is ``Σ_i D_pi ⟨w, φ(x_i)⟩``, the inner product of ``w``
    with ``Σ_i D_pi φ(x_i)`` (a P x N difference matrix of query pairs: ``φ(x_a) - φ(x_b)``).
    Its coefficients stay sparse (``D S``, never a dense ``P x N`` array): the dual's ``Q`` is
    ``D K Dᵀ`` over the pairs. The rows are an index set of their own (``P``, letter ``p``,
    unless the Data names one): ``i`` runs over the samples inside the sum."""
    (w, G), = e.lin.items()
    if w not in e.ctx or not isinstance(e.ctx[w], tuple) or e.comp:
        raise TypeError(f"'{A.name} @ x' of a feature-space variable is written for x = "
                        f"{w.name} @ phi(X)")
    G = sp.csr_matrix(_broadcast(G, e.size))
    lin = {w: sp.csr_matrix(M @ G)}
    if A.index is not None:
        iset, k = A.index, A.letter
    else:
        iset, k = "P", "p"
    ft, fx = e.ctx[w]                       # the row's feature text, φ(x_i)
    dt, dx = text_indexed(A.name, f"{k}i"), latex_indexed(A.name, f"{k}i")
    ctx = {w: (f"Σ_i {dt} {ft}", rf"\sum_{{i}} {dx} {fx}")}
    out = Expr(M.shape[0], False, lin, None, [], f"Σ_i {dt} {e.txt}",
               rf"\sum_{{i}} {dx} {e.tex}", PROD, ctx=ctx)
    out.row_set = (iset, k)
    return out


def row_symbol(name: str, letter: str = "i") -> tuple[str, str]:
    """(txt, tex) of row ``letter`` of the data matrix ``name``: ``x_i`` for the training inputs
    ``X`` and ``k_i`` for a kernel matrix ``K`` (the texts' notation: neither letter names a
    decision variable, ``x`` is the new inputs' placeholder); any other matrix keeps its own
    symbol, ``A_i``, ``B_j``, ``K_A,i``: a lowercase row ``b_i`` would read as the bias ``b``
    indexed, ``d_i`` as the number of features."""
    if name in ("X", "K"):
        return f"{name.lower()}_{letter}", latex_indexed(name.lower(), letter)
    return text_indexed(name, letter), latex_indexed(name, letter)


def _matmul_transposed(A: Data, src: Data, e: Expr, lin: dict, M: np.ndarray) -> Expr:
    """``Xᵀ α`` for a vector variable ``α`` over the rows of ``X``: entry ``k`` is
    ``Σ_i x_ik α_i``; its rows are ``X``'s columns (index set ``d``, letter ``k``)."""
    if len(e.lin) != 1 or e.ctx.get(next(iter(e.lin))) != ("1", "1"):
        raise TypeError(f"'{A.name} @ x' is written for x one vector variable over the rows of "
                        f"{src.name!r}")
    (v, _), = e.lin.items()
    li = v.letter
    r = "k" if li != "k" else "j"
    base_t, base_x = text_symbol(src.name).lower(), latex_symbol(src.name.lower())
    out = Expr(M.shape[0], False, lin, np.zeros(M.shape[0]), [],
               f"Σ_{li} {base_t}_{li}{r} {v.txt}",
               rf"\sum_{{{li}}} {base_x}_{{{li}{r}}} {v.tex}", PROD,
               ctx={v: (f"{base_t}_{li}{r}", rf"{base_x}_{{{li}{r}}}")})
    out.row_set = ("d", r)     # the rows of Xᵀ α are the columns of X
    return out


def _identity_scale(G: Any, n: int) -> float | None:
    """``s`` when the ``n x n`` map ``G`` is exactly ``s I`` (a sparse map checked on its
    stored entries, never densified), else ``None``."""
    if G.shape != (n, n) or n == 0:
        return None
    if sp.issparse(G):
        G = sp.csr_matrix(G)
        d = G.diagonal()
        if not np.all(d == d[0]) or np.count_nonzero(G.data) != np.count_nonzero(d):
            return None
        return float(d[0])
    d = np.diagonal(G)
    if not np.all(d == d[0]) or np.count_nonzero(G) != np.count_nonzero(d):
        return None
    return float(d[0])


#: the fraction of non-zero entries from which a data matrix's coefficients stay dense
DENSE_FRACTION = 0.5


def _mostly_nonzero(M: np.ndarray) -> bool:
    """Whether at least :data:`DENSE_FRACTION` of the dense array ``M``'s entries are
    non-zero (counted on up to 64 rows spread over it: a kernel block is full, a feature
    matrix of one-hot columns is not)."""
    if M.ndim != 2 or M.size == 0:
        return False
    rows = M[np.linspace(0, M.shape[0] - 1, min(64, M.shape[0])).astype(np.intp)]
    return np.count_nonzero(rows) >= DENSE_FRACTION * rows.size


def _dense_any(M) -> np.ndarray:
    return np.asarray(M.toarray() if sp.issparse(M) else M, dtype=float)


def _sks_diag(a: FeatureVariable, S: Any, chunk: int = 1024, points: Any = None
              ) -> np.ndarray:
    """``diag(S K Sᵀ)`` (``||phi(z_r)||^2`` of each row of ``S phi(X)``) without the Gram
    matrix when every row of ``S`` has at most two entries (points and pair differences) and the
    kernel has a ``diag``: ``s_j² k_jj + s_k² k_kk + 2 s_j s_k k(x_j, x_k)``, the cross terms in
    row chunks; otherwise from the Gram matrix. ``points``: the points ``S`` combines (``w``'s
    basis by default; the new points of ``phi(x)`` in a decision)."""
    S = sp.csr_matrix(S)
    pts = a.basis if points is None else points
    nnz = np.diff(S.indptr)
    kdiag = getattr(a.kernel, "diag", None)
    if np.any(nnz > 2) or kdiag is None:
        K = a.gram() if points is None else np.asarray(a.kernel(pts, pts), dtype=float)
        return np.asarray((S @ K).multiply(S).sum(axis=1)).ravel()
    kd = np.asarray(kdiag(pts), dtype=float)
    out = np.asarray(S.multiply(S) @ kd).ravel()          # Σ_j s_j² k_jj
    two = np.flatnonzero(nnz == 2)
    if two.size:
        j = S.indices[S.indptr[two]]
        k = S.indices[S.indptr[two] + 1]
        sj, sk = S.data[S.indptr[two]], S.data[S.indptr[two] + 1]
        cross = np.empty(two.size)
        for lo in range(0, two.size, chunk):
            hi = min(two.size, lo + chunk)
            Kc = np.asarray(a.kernel(pts[j[lo:hi]], pts[k[lo:hi]]), dtype=float)
            cross[lo:hi] = np.diag(Kc)
        out[two] += 2.0 * sj * sk * cross
    return out


def _sqdist(d: FeatureDiff) -> Expr:
    a, feat = d.a, d.feat
    e = inner(a, feat)
    S = feat.S
    # new points (the decision's phi(x)): ||phi(z)||^2 = k(z, z) of those points, not of the basis
    diagK = _sks_diag(a, S, points=feat.X if feat.new else None)
    t, x = feat.txt, feat.tex
    out = Expr(e.size, False, {a: -2.0 * e.lin[a]}, diagK, [], f"‖{t} - {a.txt}‖²",
               rf"\|{x} - {a.tex}\|^2", ATOM,
               ctx={a: (f"2 ({a.txt} - {t})", rf"2 \left({a.tex} - {x}\right)"),
                    CONST: (f"k({feat.name}_i, {feat.name}_i)",
                            rf"k({feat.name}_{{i}}, {feat.name}_{{i}})")})
    out.rq = {a: np.ones(e.size)}
    out.rq_txt = {a: (t, x)}
    return out


def norm2(w: Any) -> Expr:
    """``||w||^2`` (feature-space norm via ``K`` for a FeatureVariable, Euclidean otherwise);
    ``norm2(phi(X) - a)`` is the vector of squared distances ``||phi(x_i) - a||^2``."""
    if isinstance(w, FeatureDiff):
        return _sqdist(w)
    if not isinstance(w, Variable):
        return _norm2_affine(w)
    if w.feature:
        return _term_expr(FeatureNorm(w), f"‖{w.txt}‖²", rf"\|{w.tex}\|^2")
    if w.scalar:
        return _term_expr(FeatureNorm(w), f"{w.txt}²", f"{w.tex}^2")
    return _term_expr(FeatureNorm(w), f"‖{w.block_txt}‖²", rf"\|{w.block_tex}\|^2")


def _norm2_affine(w: Any) -> Expr:
    """``||e||^2`` of an affine expression of plain variables: the sum of squares of its
    entries, printed ``Σ_i (a_iᵀw + b)²`` over data rows, ``Σ_k (w_k - v_k)²`` over the
    entries of blocks with an index set of their own."""
    e = _as_expr(w)
    if not e.is_affine or e.terms:
        raise TypeError("norm2 takes a variable or an affine expression, got a nonlinear "
                        f"expression {e.txt!r}")
    feat = [v.name for v in e.lin if v.feature]
    if feat:
        raise TypeError(f"norm2 of an expression of the feature-space variable(s) {feat}: "
                        "write norm2(w) (its ||w||^2), or norm2(phi(X) - a) for distances")
    ri = row_index(e)
    if e.scalar or ri is None:
        return sum_squares(e)       # rows of data or of the samples: Σ_i (...)²
    k = ri[1]                       # entries of a block with an index set of its own: Σ_k
    t, x = _paren(e.txt, e.tex, e.prec, ATOM)
    return _term_expr(SumSquares(e), f"Σ_{k} {t}²", rf"\sum_{{{k}}} {x}^2")


def sum_squares(e: Any) -> Expr:
    """``sum_i e_i^2`` of an affine expression."""
    e = _as_expr(e)
    t, x = _paren(e.txt, e.tex, e.prec, ATOM)
    if e.scalar:
        return _term_expr(SumSquares(e), f"{t}²", f"{x}^2")
    ri = row_index(e)
    k = ri[1] if ri is not None else "i"
    return _term_expr(SumSquares(e), f"Σ_{k} {t}²", rf"\sum_{{{k}}} {x}^2")


def quad_form(x: Variable, Q: Data | GramOperator | np.ndarray, *, name: str = "Q",
              txt: str | None = None, tex: str | None = None) -> Expr:
    """``x^T Q x`` with ``Q`` PSD (a :class:`GramOperator` keeps kernel structure for backends)
    of a variable ``x`` (for an expression ``e``, write a variable ``r`` and the constraint
    ``r == e`` with its multiplier)."""
    if not isinstance(x, Variable) or isinstance(x, FeatureVariable):
        raise TypeError(f"quad_form(x, Q) takes a (plain) Variable x, got {type(x).__name__}: "
                        "for an expression e write a variable r, quad_form(r, Q) and the "
                        "constraint (r == e).named(...)")
    if not isinstance(Q, Data):
        op = Q if isinstance(Q, GramOperator) else GramOperator.dense_matrix(np.asarray(Q))
        Q = Data(name, op)
    if not isinstance(Q.value, GramOperator):
        Q = Data(Q.name, GramOperator.dense_matrix(Q.value), tex=Q.tex)
    b, bt = x.block_txt, x.block_tex
    return _term_expr(QuadForm(x, Q), txt or f"{b}ᵀ{Q.txt}{b}", tex or f"{bt}^T {Q.tex} {bt}")


def norm1(e: Any) -> Expr:
    """``||e||_1 = sum_k |e_k|`` of a vector variable or affine expression (printed ``‖w‖₁``
    for a variable, ``Σ_i |e_i|`` for an expression written entry by entry)."""
    e = _as_expr(e)
    t, x = _block_text(e)
    if t == e.txt and not (len(e.lin) == 1 and t == next(iter(e.lin)).block_txt):
        return AbsVector(e).summed()
    return _term_expr(Norm1(e), f"‖{t}‖₁", rf"\|{x}\|_1")


class AbsVector:
    """``|e_i|`` entry by entry (``abs(e)`` of a vector expression): a convex vector that is only
    summed, ``vsum(abs(e))`` (the l1 norm, printed ``Σ_i |e_i|``), optionally with nonnegative
    weights, ``vsum(c * abs(w))`` (``Σ_k c_k |w_k|``)."""

    def __init__(self, e: Expr, weights: np.ndarray | None = None,
                 weights_sym: tuple[str, str] | None = None, data: Data | None = None) -> None:
        if not e.is_affine:
            raise TypeError("abs needs an affine argument")
        self.e, self.weights, self.weights_sym = e, weights, weights_sym
        self.data = data     # vector weights given as Data: printed with the rows' own index

    def __rmul__(self, o: Any) -> AbsVector:
        f = _as_expr(o)
        if not f.is_constant:
            raise TypeError("abs(e) can only be multiplied by nonnegative constants")
        w = np.broadcast_to(f.const, (self.e.size,)).astype(float)
        if np.any(w < 0):
            raise ValueError("abs(e) times a negative constant is concave; weights must be >= 0")
        if isinstance(o, Data) and o.ndim == 1:
            if self.weights is not None:
                raise TypeError("abs(e) takes one vector of weights")
            return AbsVector(self.e, w, None, o)
        sym = f._factor_text()     # a scalar factor (kept apart from Data weights)
        if self.weights is not None:
            w = w * self.weights
            if self.weights_sym is not None:
                sym = coef_mul(sym, self.weights_sym)
        return AbsVector(self.e, w, sym, self.data)

    __mul__ = __rmul__

    def __add__(self, o):
        raise TypeError("abs(e) is a vector of convex entries: sum it first, vsum(abs(e))")

    __radd__ = __sub__ = __rsub__ = __add__

    def summed(self) -> Expr:
        t, x = self.e.txt, self.e.tex        # the bars delimit it
        ri = row_index(self.e)
        k = ri[1] if ri is not None else "i"
        sym = self.weights_sym
        if self.data is not None:     # the weights' entry with the rows' index: c_k |w_k|
            d = self.data
            own = d.txt.endswith("_i") and d.txt[:-2] == text_symbol(d.name)
            ds = ((text_indexed(d.name, k), latex_indexed(d.name, k)) if own or k == "i"
                  else None)
            if ds is None:
                raise ValueError(f"the weights {d.name!r} print as {d.txt!r}, indexed by i, "
                                 f"but the entries of abs(...) are indexed by {k}: name the "
                                 "Data without a custom txt")
            sym = ds if sym is None else coef_mul(sym, ds)
        wt, wx = ("", "") if sym is None else (sym[0] + " ", sym[1] + " ")
        return _term_expr(Norm1(self.e, 1.0, self.weights, sym),
                          f"Σ_{k} {wt}|{t}|", rf"\sum_{{{k}}} {wx}\left|{x}\right|")


def absolute(e: Any) -> Expr | AbsVector:
    """``|e|``: a scalar expression's absolute value (a convex term), or a vector's entries
    (:class:`AbsVector`, summed with :func:`vsum`). Also reached by Python's ``abs(e)``."""
    e = _as_expr(e)
    if e.scalar:
        t, x = e.txt, e.tex
        return _term_expr(Norm1(e), f"|{t}|", rf"\left|{x}\right|")
    return AbsVector(e)


def norm_inf(e: Any) -> Expr:
    """``||e||_inf = max_k |e_k|`` of a vector variable or affine expression."""
    e = _as_expr(e)
    t, x = _block_text(e)
    if t == e.txt and not (len(e.lin) == 1 and t == next(iter(e.lin)).block_txt):
        ri = row_index(e)
        k = ri[1] if ri is not None else "i"     # an expression written entry by entry
        return _term_expr(NormInf(e), f"max_{k} |{t}|", rf"\max_{{{k}}} \left|{x}\right|")
    return _term_expr(NormInf(e), f"‖{t}‖_∞", rf"\|{x}\|_\infty")


def sum_logistic(e: Any, weights: Data | None = None) -> Expr:
    """``sum_i log(1 + exp(e_i))``; with ``weights`` (a 1-D :class:`Data` ``c >= 0``, e.g.
    per-sample ``C_i``) ``sum_i c_i log(1 + exp(e_i))``, printed with the data's own symbol
    (``Σ_i C_i log(1 + exp(-z_i))``)."""
    e = _as_expr(e)
    if weights is None:
        return _term_expr(SumLogistic(e), f"Σ_i log(1 + exp({e.txt}))",
                          rf"\sum_{{i}} \log\left(1 + e^{{{e.tex}}}\right)")
    if not isinstance(weights, Data) or weights.ndim != 1 or weights.value.shape != (e.size,):
        raise TypeError(f"weights must be a 1-D Data of length {e.size} (so that it prints with "
                        "its name)")
    sym = (text_indexed(weights.name, "i"), latex_indexed(weights.name, "i"))
    return _term_expr(SumLogistic(e, weights=weights.value, weights_sym=sym),
                      f"Σ_i {sym[0]} log(1 + exp({e.txt}))",
                      rf"\sum_{{i}} {sym[1]} \log\left(1 + e^{{{e.tex}}}\right)")


def logistic(e: Any, weights: Data | None = None) -> Expr:
    """``sum_i log(1 + exp(e_i))``, the logistic loss summed over the rows (the same atom as
    :func:`sum_logistic`; ``weights``: ``sum_i c_i log(1 + exp(e_i))``). Its convex conjugate
    ``-H`` (the binary entropy, on ``[0, 1]``) is known to :func:`~primaldual.model.dualize.
    dualize`: written on a variable, ``C * logistic(-z)`` with ``y_i f_i = z_i [α_i]``, it
    derives kernel logistic regression's dual (with weights: ``Σ_i C_i H(α_i/C_i)``)."""
    return sum_logistic(e, weights)


def huber(e: Any, delta: Any = 1.0) -> Expr:
    """``sum_i h_δ(e_i)``: the Huber function ``u^2/2`` for ``|u| <= δ`` and ``δ |u| - δ^2/2``
    beyond (``δ`` a positive number or scalar :class:`Data`). Its conjugate is ``t^2/2`` on
    ``|t| <= δ``: the dual of a Huber loss written on a variable is a QP with a box."""
    e = _as_expr(e)
    if isinstance(delta, Data):
        if delta.ndim != 0:
            raise TypeError("delta must be a number or scalar Data")
        d, sym = float(delta.value), (delta.txt, delta.tex)
    elif isinstance(delta, numbers.Real) and not isinstance(delta, bool):
        d, sym = float(delta), _const_txt(float(delta))
    else:
        raise TypeError(f"delta must be a number or scalar Data, got {type(delta).__name__}")
    term = Huber(e, d, sym)
    return _term_expr(term, f"Σ_i h_{sym[0]}({e.txt})",
                      rf"\sum_{{i}} h_{{{sym[1]}}}\left({e.tex}\right)")


def sum_entropy(e: Any) -> Expr:
    """``sum_i -e_i log e_i`` (concave)."""
    e = _as_expr(e)
    t, x = _paren(e.txt, e.tex, e.prec, ATOM)
    return _term_expr(SumEntropy(e), f"-Σ_i {t} log {t}", rf"-\sum_{{i}} {x}\log {x}")


def vsum(e: Any) -> Expr:
    """``sum_i e_i`` of a vector expression (rendered with a summation sign); of ``abs(e)``, the
    (weighted) l1 norm ``Σ_i c_i |e_i|``."""
    if isinstance(e, AbsVector):
        return e.summed()
    e = _as_expr(e)
    if e.scalar:
        return e
    if e.terms:
        _fail_terms()
    ones = np.ones((1, e.size))
    lin = {v: sp.csr_matrix(ones @ M) if sp.issparse(M) else ones @ M for v, M in e.lin.items()}
    t, x = _paren(e.txt, e.tex, e.prec, PROD)
    ri = row_index(e)
    k = ri[1] if ri is not None else "i"
    return Expr(1, True, lin, np.array([e.const.sum()]), [], f"Σ_{k} {t}", rf"\sum_{{{k}}} {x}",
                PROD, ctx=e.ctx, summed=True)


def dot(d: Data, x: Variable) -> Expr:
    """``d^T x`` rendered in vector notation (``yᵀα``)."""
    e = vsum(d * x)
    e.txt = f"{text_symbol(d.name)}ᵀ{x.block_txt}"
    e.tex = f"{latex_symbol(d.name)}^T {x.block_tex}"
    e.prec = ATOM
    return e


def as_expr(o: Any) -> Expr:
    """Public conversion of numbers, data and variables to :class:`Expr`."""
    return _as_expr(o)


# a call with a placeholder argument (norm2(w) for w = FeatureVariable("w")) is recorded
for _name in ("inner", "matmul", "norm2", "sum_squares", "quad_form", "norm1", "absolute",
              "norm_inf", "sum_logistic", "logistic", "huber", "sum_entropy", "vsum", "dot",
              "as_expr"):
    globals()[_name] = _ph.deferrable(globals()[_name])
_ph.defer_calls(AbsVector, ("__rmul__", "__add__"))
# the operators of Expr, Variable and Data reach these (abs(e), c * abs(e), A @ x, w @ phi(X))
bind(AbsVector=AbsVector, absolute=absolute, matmul=matmul, inner=inner)
