"""Kernel columns of the compiled SMO core (numba, ``cache=True``): kernel values from dense,
sparse or precomputed rows, whole and partial columns (RBF from row-major float64 rows or from
a transposed float32 copy), and the diagonal ``QD``.  Bottom of the core's modules: it imports
none of them (:mod:`~primaldual.backends.smo.threads`, :mod:`~primaldual.backends.smo.cache`,
:mod:`~primaldual.backends.smo.select`, :mod:`~primaldual.backends.smo.shrink`,
:mod:`~primaldual.backends.smo.core` call it)."""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ...kernels._fastexp import (
    _exp_reduce,
    _exp_scale,
    _taylor_from_9,
)
from .codes import _K_LINEAR, _K_POLY, _K_PRE, _K_RBF
from .stamp import tie


# --------------------------------------------------------------------------------------
# compiled kernel columns
# --------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _sdot(Xptr, Xind, Xval, r, s):
    """Dot product of two sparse rows: the nonzeros of data position ``r`` are
    ``Xval[Xptr[r, 0]:Xptr[r, 1]]`` at the (sorted, distinct) columns ``Xind[...]``; a merge of
    the two sorted index lists, O(nnz_r + nnz_s), nothing allocated."""
    p = Xptr[r, 0]
    pe = Xptr[r, 1]
    q = Xptr[s, 0]
    qe = Xptr[s, 1]
    dot = 0.0
    while p < pe and q < qe:
        a = Xind[p]
        b = Xind[q]
        if a == b:
            dot += Xval[p] * Xval[q]
            p += 1
            q += 1
        elif a < b:
            p += 1
        else:
            q += 1
    return dot


@njit(cache=True, inline="always")
def _kfun(kcode, dot, xr2, xs2, gamma, coef0, degree):
    """Kernel value from the dot product ``x_r . x_s`` (and the squared norms, for RBF)."""
    if kcode == _K_RBF:
        return math.exp(-gamma * (xr2 + xs2 - 2.0 * dot))
    if kcode == _K_LINEAR:
        return dot
    if kcode == _K_POLY:
        return (gamma * dot + coef0) ** degree
    return math.tanh(gamma * dot + coef0)


# The data reach the kernel routines in one of three forms, never copied into another:
#
# * dense: ``Xd`` (n_data x d, C order), ``Xptr`` empty (shape (0, 2));
# * sparse (CSR rows): ``Xd`` empty (shape (0, 0)), the nonzeros of data position ``r`` are
#   ``Xval[Xptr[r, 0]:Xptr[r, 1]]`` at the sorted columns ``Xind[Xptr[r, 0]:Xptr[r, 1]]``
#   (``Xptr[r] = (indptr[r], indptr[r + 1])`` of the CSR matrix: keeping both ends per position
#   lets shrinking swap two rows by swapping two pairs of integers); ``Xs`` is a zero row of
#   length n_features, scratch for a kernel column (row ``r`` scattered into it, each row ``s``
#   gathered against it, then cleared: branch-free, ~8x faster than merging index lists);
# * precomputed (``kcode == _K_PRE``): ``Kpre[dorig[r], dorig[s]]``.
#
# ``xsq`` holds the squared row norms (RBF) in the first two forms.
@njit(cache=True, inline="always")
def _kval(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, s, gamma, coef0, degree):
    if kcode == _K_PRE:
        return Kpre[dorig[r], dorig[s]]
    if Xptr.shape[0] > 0:
        dot = _sdot(Xptr, Xind, Xval, r, s)
    else:
        d = Xd.shape[1]
        dot = 0.0
        for t in range(d):
            dot += Xd[r, t] * Xd[s, t]
    return _kfun(kcode, dot, xsq[r], xsq[s], gamma, coef0, degree)


#: rows of an RBF column whose dot products are formed before their exps are taken
_RBF_BLOCK = 512


@intrinsic
def _stack_block(typingctx):
    """A pointer to ``_RBF_BLOCK`` float64 on the calling function's stack (no heap
    allocation per column: a small solve computes thousands of short columns)."""
    def codegen(context, builder, sig, args):
        buf = cgutils.alloca_once(builder, ir.ArrayType(ir.DoubleType(), _RBF_BLOCK))
        return builder.bitcast(buf, ir.DoubleType().as_pointer())

    return types.CPointer(types.float64)(), codegen


@njit(cache=True, fastmath=True)
def _rbf_dots(Xd, r, lo, hi, acc):
    """``acc[s - lo] = x_r . x_s`` for ``lo <= s < hi`` (dense rows, reassociated sums)."""
    d = Xd.shape[1]
    xr = Xd[r]
    # two rows per pass share the loads of x_r (25-30% faster at d = 64, digits);
    # an odd last row is paired with itself.  Both sums are the same vectorised reduction, so
    # a row's value does not depend on its partner (tested: columns computed from any offset,
    # alone or shared with helper threads, are bit for bit equal)
    for s in range(lo, hi, 2):
        s1 = min(s + 1, hi - 1)
        x0 = Xd[s]
        x1 = Xd[s1]
        a0 = 0.0
        a1 = 0.0
        for t in range(d):
            w = xr[t]
            a0 += w * x0[t]
            a1 += w * x1[t]
        acc[s1 - lo] = a1
        acc[s - lo] = a0


@njit(cache=True, inline="always")
def _exp_f32(x):
    r"""``exp(x)`` to a relative ``1e-11`` for the float32 cache: :func:`_exp` with the Taylor
    polynomial of ``exp(r)``, ``|r| <= ln(2) / 2``, cut at degree 9 (truncation
    ``0.35^10 / 10! < 1e-11``, far below float32's rounding of ``3e-8``: measured, 8 in a
    million kernel values differ from :func:`_exp`'s by one float32 unit in the last place);
    15% faster columns."""
    r, kb = _exp_reduce(x)
    q = 1.0 / 362880.0
    return _exp_scale(_taylor_from_9(q, r), kb)


# The exps of a column: only fused multiply-adds allowed (``fastmath={"contract"}``), set
# explicitly: numba lets a callee that does not set the option inherit the caller's fastmath
# (``_kcol_serial``'s), whose reassociation would fold :func:`_exp`'s reduction away
# (measured: kernel values rounded to powers of two).  Contraction keeps the reduction (the
# ``1.5 * 2^52`` rounding and Cody-Waite's steps are at least as exact as one fused operation)
# and makes the polynomial's Horner steps single FMAs.  Measured on the digits pairs (360 x 64):
# :func:`_exp_f32` with contraction 1.4 ns per kernel entry instead of 2.9 ns for :func:`_exp`
# without (the whole column ~15% faster); the float32 cache keeps ~7 significant digits,
# both exps agree to 1e-11 relative.
@njit(cache=True, fastmath={"contract"})
def _rbf_col(Xd, xsq, r, start, stop, out, gamma):
    """RBF column ``out[s] = exp(-gamma (|x_r|^2 + |x_s|^2 - 2 x_r.x_s))`` on dense rows
    ``start <= s < stop``: the dot products of a block of rows, then their exps in one
    vectorised loop (:func:`_exp_f32`; compiled with fused multiply-adds only)."""
    acc = carray(_stack_block(), _RBF_BLOCK)
    xs_r = xsq[r]
    for lo in range(start, stop, _RBF_BLOCK):
        hi = min(stop, lo + _RBF_BLOCK)
        _rbf_dots(Xd, r, lo, hi, acc)
        for s in range(lo, hi):
            out[s] = _exp_f32(-gamma * (xs_r + xsq[s] - 2.0 * acc[s - lo]))


@njit(cache=True, fastmath=True)
def _kcol_serial(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, stop, out, gamma,
                 coef0, degree):
    if Xptr.shape[0] > 0 and Xs.shape[0] > 0:
        # sparse rows: scatter row r into the zero scratch row, gather each row s against it
        for k in range(Xptr[r, 0], Xptr[r, 1]):
            Xs[Xind[k]] = Xval[k]
        xs_r = xsq[r]
        for s in range(start, stop):
            dot = 0.0
            for k in range(Xptr[s, 0], Xptr[s, 1]):
                dot += Xs[Xind[k]] * Xval[k]
            out[s] = _kfun(kcode, dot, xs_r, xsq[s], gamma, coef0, degree)
        for k in range(Xptr[r, 0], Xptr[r, 1]):
            Xs[Xind[k]] = 0.0
    elif kcode == _K_RBF and Xptr.shape[0] == 0:
        _rbf_col(Xd, xsq, r, start, stop, out, gamma)
    else:
        for s in range(start, stop):
            out[s] = _kval(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, s, gamma, coef0,
                           degree)


# The RBF column from a transposed float32 copy of the data.  With few features a
# row-major dot product per entry is a short reduction (horizontal sums, remainders), and the
# float64 rows of N = 20,000 x 20 (3.2 MB) do not stay in a core's 2 MB L2 cache.  ``Xt``
# (n_features x n_data, float32: half the bytes) is read along the data positions instead:
# feature by feature, a block of dot products is accumulated in float64, one vectorised
# multiply-add per entry and feature, each entry's sum in the order of the features whatever
# the block or the thread.  Measured at N = 20,000, d = 20 (CPU time, one thread, a loaded
# machine): 2.6 ns per entry for the dot products, 5.1 ns for the whole column instead of
# 10.9 ns for :func:`_rbf_col` on the float64 rows.  The data are then those rounded to
# float32 everywhere in the solve (``Xd`` and ``xsq`` are computed from the rounded rows, so
# the kernel is exactly an RBF kernel of the rounded data, as positive semi-definite as any):
# a relative change of the kernel values of ~1e-7, the size of the float32 cache's own
# rounding.
@njit(cache=True, fastmath=True, inline="always")
def _rbf_dots_t(Xt, r, lo, hi, acc):
    """``acc[k] = x_r . x_(lo + k)`` for ``lo <= lo + k < hi`` from ``Xt`` (features x data)."""
    d = Xt.shape[0]
    m = hi - lo
    w = np.float64(Xt[0, r])
    row = Xt[0, lo:hi]
    for k in range(m):
        acc[k] = w * np.float64(row[k])
    for t in range(1, d):
        w = np.float64(Xt[t, r])
        row = Xt[t, lo:hi]
        for k in range(m):
            acc[k] += w * np.float64(row[k])


@njit(cache=True, fastmath={"contract"})  # (as _rbf_col)
def _rbf_col_t(Xt, xsq, r, start, stop, out, gamma):
    """:func:`_rbf_col` from the transposed float32 data ``Xt`` (:func:`_exp_f32`).  The exps
    of a block are taken in place in the float64 block, then converted into ``out`` in a
    loop of their own (measured: a third faster than one loop storing float32, and than a
    block on the stack)."""
    acc = np.empty(_RBF_BLOCK)
    xs_r = xsq[r]
    for lo in range(start, stop, _RBF_BLOCK):
        hi = min(stop, lo + _RBF_BLOCK)
        m = hi - lo
        _rbf_dots_t(Xt, r, lo, hi, acc)
        xq = xsq[lo:hi]
        for k in range(m):
            acc[k] = _exp_f32(-gamma * (xs_r + xq[k] - 2.0 * acc[k]))
        o = out[lo:hi]
        for k in range(m):
            o[k] = acc[k]


@njit(cache=True, inline="always")
def _kcol(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, stop, out, gamma,
          coef0, degree):
    """Rows ``[start, stop)`` of the kernel column of ``r``: from ``Xt`` when it is given (an
    RBF kernel on dense rows, :func:`_rbf_col_t`), else :func:`_kcol_serial`."""
    if Xt.shape[0] > 0:
        _rbf_col_t(Xt, xsq, r, start, stop, out, gamma)
    else:
        _kcol_serial(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, stop, out,
                     gamma, coef0, degree)


@njit(cache=True)
def _diag_q(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, dpos, diag,
            QD):
    """``QD[t] = k(x_r, x_r) + diag[t]`` (``r = dpos[t]``), exactly :func:`_kval`'s value (but
    RBF, below): on dense rows four rows' sums run interleaved, each in :func:`_kval`'s
    sequential order (four independent chains instead of one: the latency-bound sum
    was 3-4% of a digits pair's solve).

    RBF: ``k(x, x) = exp(-gamma (|x|^2 + |x|^2 - 2 x.x))`` with ``x.x`` taken as ``xsq`` itself,
    i.e. exactly ``1`` (LIBSVM's value: its ``x.x`` and ``|x|^2`` are one computation); no
    sums at all (~8 us, latency-bound, of a digits pair's 360 x 64 solve)."""
    l = QD.shape[0]
    t0 = 0
    if kcode == _K_RBF:
        for t in range(l):
            QD[t] = 1.0 + diag[t]
        return
    if kcode != _K_PRE and Xptr.shape[0] == 0:
        d = Xd.shape[1]
        while t0 + 4 <= l:
            x0 = Xd[dpos[t0]]
            x1 = Xd[dpos[t0 + 1]]
            x2 = Xd[dpos[t0 + 2]]
            x3 = Xd[dpos[t0 + 3]]
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for k in range(d):
                a0 += x0[k] * x0[k]
                a1 += x1[k] * x1[k]
                a2 += x2[k] * x2[k]
                a3 += x3[k] * x3[k]
            r = dpos[t0]
            QD[t0] = _kfun(kcode, a0, xsq[r], xsq[r], gamma, coef0, degree) + diag[t0]
            r = dpos[t0 + 1]
            QD[t0 + 1] = _kfun(kcode, a1, xsq[r], xsq[r], gamma, coef0, degree) + diag[t0 + 1]
            r = dpos[t0 + 2]
            QD[t0 + 2] = _kfun(kcode, a2, xsq[r], xsq[r], gamma, coef0, degree) + diag[t0 + 2]
            r = dpos[t0 + 3]
            QD[t0 + 3] = _kfun(kcode, a3, xsq[r], xsq[r], gamma, coef0, degree) + diag[t0 + 3]
            t0 += 4
    for t in range(t0, l):
        r = dpos[t]
        QD[t] = _kval(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, r, gamma, coef0,
                      degree) + diag[t]


tie(globals())  # one cache stamp for the core's files (smo/stamp.py)
