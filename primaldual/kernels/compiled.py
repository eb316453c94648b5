r"""Compiled (numba, ``cache=True``) loops for the many small products of a multiclass fit:
one multiclass fit on small data (iris: 3 sub-problems of 100 rows) spends more
time in the numpy calls around each sub-problem than in its SMO solve, so the box-QP
certificate's per-sample terms and the support split of the fitted attributes run as one
compiled pass each (the same operations as the numpy expressions they replace: the same
bits), and the RBF block of the exact product ``K[:, S] v_S`` gets its exponent from one
compiled pass (its ``exp`` stays numpy's, vectorised).

This module imports numba: its callers import it on first use, and only once numba is loaded
in the process (``"numba" in sys.modules``: the compiled SMO core runs, so these small
functions load from numba's on-disk cache in milliseconds, or compile once, in seconds); every
function has a numpy twin at its caller, taken otherwise. The exception is
:func:`rbf_finish`, the RBF columns of a large Nystrom factor and their float32 copy in one
sweep (``NystromGrowth`` imports it for blocks of at least ``2^20`` entries, where numba's
import is small against the pass; smaller blocks keep the numpy passes).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._fastexp import _exp

__all__ = ["box_terms", "kernel_row", "rbf_exponent", "rbf_exponent_gemm", "rbf_finish",
           "support_layout"]


@njit(cache=True)
def box_terms(a: np.ndarray, u: np.ndarray, p: np.ndarray, s: np.ndarray, qs: np.ndarray,
              Kr: np.ndarray, d: np.ndarray, has_d: bool, nu_eq: float, nu_sum: float,
              cut: int):  # pragma: no cover - compiled
    r"""The per-sample terms of :func:`primaldual.certificate.box_qp_certificate` in one pass.

    With the margins ``r_j = qs_j Kr_j + p_j - nu_eq s_j - nu_sum + d_j a_j`` and the slacks
    ``xi_j = max(0, -r_j)``: the arrays ``max(0, -a)``, ``max(0, a - u)``, ``|a max(r, 0)|``,
    ``|(u - a) xi|`` and ``xi`` (in this order, stacked as the rows of one ``(5, n)`` array)
    and the maxima of the first four over ``[0, cut)`` and ``[cut, n)`` (a ``(4, 2)`` array,
    0 for an empty range); every entry is computed as the numpy expressions of the caller
    compute it (the same operations in the same order, no fast-math), so they agree
    bit for bit (the caller sums them with numpy). ``ok`` is ``False`` when an entry is not
    finite (the caller then takes its numpy route, which keeps NaN where it appears)."""
    n = a.shape[0]
    terms = np.empty((5, n))
    mx = np.zeros((4, 2))
    ok = True
    for j in range(n):
        aj = a[j]
        r = qs[j] * Kr[j]
        r += p[j]
        if nu_eq != 0.0:
            r -= nu_eq * s[j]
        if nu_sum != 0.0:
            r -= nu_sum
        if has_d:
            r += d[j] * aj
        xi = -r if r < 0.0 else 0.0
        uj = u[j]
        ua = uj - aj
        t0 = -aj if aj < 0.0 else 0.0
        t1 = -ua if ua < 0.0 else 0.0
        t2 = abs(aj * (r if r > 0.0 else 0.0))
        t3 = abs(ua * xi)
        if not (math.isfinite(r) and math.isfinite(aj) and math.isfinite(uj)):
            ok = False
        terms[0, j] = t0
        terms[1, j] = t1
        terms[2, j] = t2
        terms[3, j] = t3
        terms[4, j] = xi
        h = 0 if j < cut else 1
        if t0 > mx[0, h]:
            mx[0, h] = t0
        if t1 > mx[1, h]:
            mx[1, h] = t1
        if t2 > mx[2, h]:
            mx[2, h] = t2
        if t3 > mx[3, h]:
            mx[3, h] = t3
    return terms, mx, ok


@njit(cache=True)
def rbf_exponent(X: np.ndarray, S: np.ndarray, gamma: float,
                 out: np.ndarray) -> None:  # pragma: no cover - compiled
    r"""``out[i, k] = -gamma ||x_i - x_{S_k}||^2`` from the coordinate differences (no
    cancellation; :func:`numpy.exp` of it is the RBF block ``K[:, S]``, vectorised). The
    columns ``x_{S_k}`` are read transposed, so that the innermost loop runs along a row of
    ``out`` (SIMD)."""
    n, d = X.shape
    m = S.shape[0]
    ZT = np.empty((d, m))
    for k in range(m):
        for f in range(d):
            ZT[f, k] = X[S[k], f]
    for i in range(n):
        row = out[i]
        for k in range(m):
            row[k] = 0.0
        for f in range(d):
            xf = X[i, f]
            zf = ZT[f]
            for k in range(m):
                df = xf - zf[k]
                row[k] += df * df
        for k in range(m):
            row[k] = -gamma * row[k]


# fused multiply-adds only (no reassociation, which would fold _exp's range reduction away)
@njit(cache=True, fastmath={"contract"})
def kernel_row(code: int, XT: np.ndarray, xsq: np.ndarray, r: int, out: np.ndarray,
               gamma: float, coef0: float, degree: float) -> None:  # pragma: no cover
    r"""``out[s] = k(x_r, x_s)`` for every row ``s``, the kernel given by its
    :class:`~primaldual.kernels.functions.KernelSpec` code (``0`` linear ``t``, ``1`` RBF
    ``exp(-gamma max(0, |x_r|^2 + |x_s|^2 - 2 t))``, ``2`` polynomial
    ``(gamma t + coef0)^degree``, ``3`` sigmoid ``tanh(gamma t + coef0)``; ``t = x_r . x_s``).
    The rows are read transposed (``XT``, ``d x N``), so the dot products accumulate along
    ``out`` (SIMD) and the RBF's exps run in one vectorised loop (:func:`._fastexp._exp`):
    a row of the pairs route's kernel-row cache."""
    d, n = XT.shape
    for s in range(n):
        out[s] = 0.0
    for t in range(d):
        w = XT[t, r]
        col = XT[t]
        for s in range(n):
            out[s] += w * col[s]
    if code == 1:
        xr = xsq[r]
        for s in range(n):
            out[s] = _exp(-gamma * max(xr + xsq[s] - 2.0 * out[s], 0.0))
    elif code == 2:
        for s in range(n):
            out[s] = (gamma * out[s] + coef0) ** degree
    elif code == 3:
        for s in range(n):
            out[s] = math.tanh(gamma * out[s] + coef0)


@njit(cache=True, inline="always", fastmath=False)
def _rbf_arg(g: float, a: float, b: float, ng: float) -> float:  # pragma: no cover - compiled
    """``ng max(0, -2 g + a + b)``, the RBF exponent of one entry from its cross product ``g``
    and the squared norms ``a``, ``b`` (``ng = -gamma``): numpy's passes in their order
    (``-2 g``, ``+ a``, ``+ b``, ``maximum(., 0)`` with NaN kept, ``* ng``), no fused
    multiply-adds. Inlined into the compiled loops that use it."""
    v = g * -2.0
    v = v + a
    v = v + b
    v = 0.0 if v < 0.0 else v  # numpy.maximum(v, 0): NaN stays NaN
    return v * ng


@njit(cache=True, nogil=True, fastmath=False)
def rbf_exponent_gemm(D: np.ndarray, a2: np.ndarray, b2: np.ndarray,
                      gamma: float) -> None:  # pragma: no cover - compiled
    r"""In place, ``D[i, j] = -gamma max(0, -2 D[i, j] + a2_i + b2_j)``: on entry ``D`` holds
    the cross products ``x_i . z_j`` (one GEMM), ``a2 = |x|^2``, ``b2 = |z|^2``; on return the
    exponent of the RBF block, whose :func:`numpy.exp` is the block.

    The numpy passes of :meth:`primaldual.kernels.RBF._block` (``D *= -2; D += a2; D += b2;
    maximum(D, 0); D *= -gamma``) in one compiled pass: the same operations in the same order
    (no fastmath: no contraction into fused multiply-adds; NaN stays NaN), so the exponent is
    bit for bit theirs (the five passes took ~35 us of a 360 x 52 block, this one
    ~5 us)."""
    n, m = D.shape
    ng = -gamma
    for i in range(n):
        row = D[i]
        ai = a2[i]
        for j in range(m):
            row[j] = _rbf_arg(row[j], ai, b2[j], ng)


@njit(cache=True, nogil=True, fastmath=True)
def row_sq_norms(X: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    r"""``|x_i|^2`` of the rows of ``X`` (float64; the sums vectorised, in an order that
    depends on the number of features only, so equal rows give equal norms). The one row-norm
    pass of the SMO core's ``xsq`` and of a small RBF product's norms (~3 us for
    360 x 64 against ~9 us for :func:`numpy.einsum`)."""
    n, d = X.shape
    out = np.empty(n)
    for i in range(n):
        x = X[i]
        a = 0.0
        for t in range(d):
            a += x[t] * x[t]
        out[i] = a
    return out


@njit(cache=True)
def support_layout(c: np.ndarray, upper: np.ndarray, y: np.ndarray, by_class: bool,
                   a: np.ndarray):  # pragma: no cover - compiled
    r"""The support split of a fit's coefficients ``c`` (as
    :func:`primaldual.methods._fit.support_split`: support ``|c| > 0``, bounded
    ``|c| >= |u| - 1e-7 max|c|`` with ``u`` finite, free the others) and the sorted
    ``|a|`` of ``alpha_spectrum_``, in one pass: ``(sv, free, bounded, n_pos, spectrum)``.
    With ``by_class`` the support is grouped by label (``y <= 0`` first, then ``y > 0``,
    each in index order: LIBSVM's order) and ``n_pos`` counts the second group; ``n_pos =
    -1`` when an entry of ``c`` or ``a`` is not finite (nothing computed)."""
    n = c.shape[0]
    for j in range(n):
        if not (math.isfinite(c[j]) and math.isfinite(a[j])):   # the caller's numpy route
            e = np.empty(0, dtype=np.int64)
            return e, e, e, -1, np.empty(0)
    absc = np.abs(c)
    top = 0.0
    for j in range(n):
        if absc[j] > top or j == 0:
            top = absc[j]
    tol = 1e-7 * top if n else 0.0
    n_sv = 0
    n_bnd = 0
    n_pos = 0
    bnd_mask = np.zeros(n, dtype=np.bool_)
    for j in range(n):
        if absc[j] > 0:
            n_sv += 1
            if absc[j] >= abs(upper[j]) - tol and math.isfinite(upper[j]):
                bnd_mask[j] = True
                n_bnd += 1
            if by_class and y[j] > 0:
                n_pos += 1
    sv = np.empty(n_sv, dtype=np.int64)
    free = np.empty(n_sv - n_bnd, dtype=np.int64)
    bnd = np.empty(n_bnd, dtype=np.int64)
    k = kf = kb = 0
    kp = n_sv - n_pos                  # (grouped: the y > 0 block starts here)
    group = by_class and 0 < n_pos < n_sv
    for j in range(n):
        if absc[j] > 0:
            if group and y[j] > 0:
                sv[kp] = j
                kp += 1
            else:
                sv[k] = j
                k += 1
            if bnd_mask[j]:
                bnd[kb] = j
                kb += 1
            else:
                free[kf] = j
                kf += 1
    spectrum = np.sort(np.abs(a))
    return sv, free, bnd, n_pos, spectrum


# --------------------------------------------------------------------------------------
# the RBF columns of a Nystrom factor in one pass
# --------------------------------------------------------------------------------------
#: data points per tile of :func:`rbf_finish` (a tile of 256 landmarks: 128 KB, in L2)
_FINISH_TILE = 512


@njit(cache=True, nogil=True, fastmath=False)
def rbf_finish(G: np.ndarray, a2: np.ndarray, b2: np.ndarray, gamma: float,
               out32: np.ndarray, copy: bool,
               tile: int = _FINISH_TILE) -> None:  # pragma: no cover - compiled
    r"""The RBF block from its cross products, in place, and its float32 transpose, in one
    sweep: on entry ``G[j, i] = z_j . x_i`` (one GEMM); on return
    ``G[j, i] = exp(-gamma max(0, -2 G[j, i] + |z_j|^2 + |x_i|^2))`` (``a2 = |z|^2``,
    ``b2 = |x|^2``) and, with ``copy``, ``out32[i, j] = float32(G[j, i])`` (``out32`` is
    ``len(b2) x len(a2)``, rows of any stride).

    The exponent is formed with the same operations in the same order as
    :meth:`primaldual.kernels.RBF._block`'s numpy passes (no fastmath: no contraction into
    fused multiply-adds), so it is bit for bit theirs; only the exponential is :func:`_exp`
    (about one ulp from numpy's). Serial and without the GIL: the caller's threads take
    disjoint blocks, and every value is independent of how the work is split. The data
    points go in tiles of ``tile`` (:data:`_FINISH_TILE`; 256 landmarks x 512 points: 1 MB,
    in L2), so the transposed copy reads ``G`` from cache. Measured at N = 200,000, 256
    landmarks, one thread: 0.25 s against 0.40 s for the numpy passes and the copy."""
    m, n = G.shape
    ng = -gamma
    for i0 in range(0, n, tile):
        i1 = min(n, i0 + tile)
        t = i1 - i0
        bt = b2[i0:i1]
        # slices from 0 (not ``range(i0, i1)``): numba then knows no index wraps around, and
        # the loop vectorises (measured: 4x faster)
        for j in range(m):
            row = G[j, i0:i1]
            aj = a2[j]
            for i in range(t):
                row[i] = _exp(_rbf_arg(row[i], aj, bt[i], ng))
        if copy:
            for i in range(t):
                o = out32[i0 + i]
                for j in range(m):
                    o[j] = np.float32(G[j, i0 + i])
