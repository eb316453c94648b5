# One file on purpose (issue 32): the numba kernels call each other inside nopython code and share
# one cache=True compilation unit; split across modules, a cached caller of _get_col crashed.
r"""Sequential minimal optimisation (SMO) for box-constrained quadratic duals.

Solves

.. math::

    \min_a \tfrac12 a^\top Q a + p^\top a \quad\text{s.t.}\quad 0 \le a_j \le u_j,
    \quad\text{equality constraints (see ``equality``)},

with ``Q_jk = s_j s_k K(x_{index_j}, x_{index_k}) + d_j [j = k]`` (``s = sign``,
``d = diag_add``), the shape of every box-constrained dual in docs/formulations.md (hard margin,
C-SVC, L2-SVC, nu-SVC, epsilon-SVR, nu-SVR, LapSVC, user problems).

The algorithm is LIBSVM's (Chang & Lin 2011; Fan, Chen & Lin, JMLR 2005):

* second-order working-set selection (WSS2, ``tau = 1e-12``),
* stopping when the maximal violating pair gap ``m(a) - M(a) < tol``,
* shrinking every ``min(n_var, 1000)`` iterations with gradient reconstruction from
  ``G_bar`` (the gradient part contributed by variables at their upper bound),
* an LRU cache of float32 kernel columns, each stored at the length requested, their entries
  bounded by ``cache_size`` megabytes (LIBSVM's policy); kernel columns are computed from ``X``
  on demand inside numba, never the N x N matrix,
* the nu-variants with two equalities (LIBSVM's ``Solver_NU``).

Sign conventions (docs/formulations.md): the predictor is ``f(x) = sum_i beta_i k(x, x_i) + b``;
LIBSVM's ``rho`` is ``-b``.

This file holds the compiled (numba) part: kernel columns, working-set selection, shrinking
and the main loop; the Python entry is :mod:`primaldual.backends.smo.solver`.
"""

from __future__ import annotations

import math
import os
import platform
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from ...kernels._fastexp import (
    _exp_reduce,
    _exp_scale,
    _taylor_from_9,
)
from ...kernels.compiled import row_sq_norms  # noqa: F401  (the xsq of _smo_core)
from .codes import _GAP_CHECK_EVERY, _K_LINEAR, _K_POLY, _K_PRE, _K_RBF, midpoint

TAU = 1e-12
INF = np.inf


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
    # two rows per pass share the loads of x_r (issue 31: 25-30% faster at d = 64, digits);
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
# and makes the polynomial's Horner steps single FMAs.  Issue 31 (digits pairs, 360 x 64):
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


# The RBF column from a transposed float32 copy of the data (issue 31).  With few features a
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


# --------------------------------------------------------------------------------------
# kernel columns shared with helper threads (issue 31)
# --------------------------------------------------------------------------------------
# A long column is cut into chunks of rows that the solver thread and helper threads claim one
# at a time (compare-and-swap on one counter).  The solver thread never waits for a helper that
# has not started: it claims whatever is left itself, and a chunk a helper claimed but has not
# finished after a short spin is recomputed by the solver thread (a helper the OS descheduled
# on a busy machine costs no more than that).  numba's ``prange`` waits at a barrier for every
# worker instead, which on this shared 2-core machine made columns 9-20x slower; it also is no
# longer used here (a ``parallel=True`` function in this cached module corrupted numba's
# on-disk cache once).  Each entry is computed by the same code whichever thread computes it,
# so the columns are bit for bit those of the serial path.
#
# ``ctrl`` (int64) layout; every field a helper reads is read and written atomically:
_C_MIN = 0      # a column of rows * features >= this is shared (smo_solve's n_threads_min_work)
_C_STOP = 1     # 1: helpers return
_C_GEN = 2      # generation: one per shared column
_C_NEXT = 3     # (generation << 24) | next unclaimed chunk
_C_ROW = 4      # the column's data position r
_C_START = 5    # rows [start, end) are computed
_C_END = 6
_C_CHUNK = 7    # rows per chunk
_C_NCHUNK = 8   # chunks in this column
_C_NHELP = 9    # helper threads (0: every column serial)
_C_SPIN = 10    # pauses a helper spins before it sleeps (between columns)
_C_TIME = 11    # 1: time the column computations (verbose)
_C_SLEEP = 15   # helpers asleep on the futex of _C_GEN (the solver wakes them)
_C_STATS = 12   # counters: chunks by the solver thread, by helpers, recomputed by the solver
_C_NCOL = 16    # columns that could be shared so far
_C_RATE_1 = 17  # ns per 1024 kernel entries, running mean: the solver's thread alone
_C_RATE_N = 18  # the same with helpers
_C_OFF = 19     # shareable columns computed alone because sharing was measured slower
_C_DONE = 24    # _C_DONE + c: generation whose chunk c is done (by the helper in _C_OWN + c)
_PROBE = 16     # every 16th shareable column alone, the 8th after it shared: fresh rates
_MAX_CHUNKS = 64
_C_OWN = _C_DONE + _MAX_CHUNKS
_CTRL_LEN = _C_OWN + _MAX_CHUNKS
_GEN_SHIFT = 24
_CHUNK_MASK = (1 << _GEN_SHIFT) - 1
_MIN_CHUNK = 512  # rows
_PAUSE_WORK = 16  # rows * features per spin-wait pause the solver spends on a helper's chunk


def _array_ptr(context, builder, sig, args):
    aryty = sig.args[0]
    ary = context.make_array(aryty)(context, builder, value=args[0])
    return cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])


@intrinsic
def _aload(typingctx, arr, idx):
    """Atomic (sequentially consistent) load of ``arr[idx]`` (int64)."""
    def codegen(context, builder, sig, args):
        return builder.load_atomic(_array_ptr(context, builder, sig, args), "seq_cst", 8)

    return types.int64(arr, idx), codegen


@intrinsic
def _astore(typingctx, arr, idx, val):
    """Atomic (sequentially consistent) store ``arr[idx] = val`` (int64)."""
    def codegen(context, builder, sig, args):
        builder.store_atomic(args[2], _array_ptr(context, builder, sig, args), "seq_cst", 8)
        return context.get_dummy_value()

    return types.void(arr, idx, types.int64), codegen


@intrinsic
def _aadd(typingctx, arr, idx, val):
    """Atomic ``arr[idx] += val`` (int64)."""
    def codegen(context, builder, sig, args):
        builder.atomic_rmw("add", _array_ptr(context, builder, sig, args), args[2], "seq_cst")
        return context.get_dummy_value()

    return types.void(arr, idx, types.int64), codegen


@intrinsic
def _cas(typingctx, arr, idx, old, new):
    """Compare-and-swap ``arr[idx]``: ``old -> new``; True if it was swapped."""
    def codegen(context, builder, sig, args):
        res = builder.cmpxchg(_array_ptr(context, builder, sig, args), args[2], args[3],
                              "seq_cst", "seq_cst")
        return builder.extract_value(res, 1)

    return types.boolean(arr, idx, types.int64, types.int64), codegen


_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


@intrinsic
def _pause(typingctx):
    """The x86 spin-wait hint (nothing elsewhere)."""
    def codegen(context, builder, sig, args):
        if _X86:
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
            builder.call(fn, [])
        return context.get_dummy_value()

    return types.void(), codegen


#: the ``futex`` system call's number where helper threads sleep on it (0: poll with usleep)
_SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}.get(
    platform.machine().lower(), 0) if platform.system() == "Linux" else 0
_FUTEX_WAIT_PRIVATE = 128
_FUTEX_WAKE_PRIVATE = 129


@intrinsic
def _futex(typingctx, arr, idx, op, val):
    """``futex(&arr[idx], op, val, 1 ms)`` on the low 32 bits of the int64 ``arr[idx]``
    (little-endian): ``FUTEX_WAIT`` sleeps while that word equals ``val`` (at most 1 ms),
    ``FUTEX_WAKE`` wakes ``val`` sleepers.  Where there is no futex, sleeps 50 us."""
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        if _SYS_FUTEX == 0:
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.IntType(32), [ir.IntType(32)]), "usleep")
            builder.call(fn, [ir.Constant(ir.IntType(32), 50)])
            return context.get_dummy_value()
        ptr = _array_ptr(context, builder, sig, args)
        ts = cgutils.alloca_once(builder, ir.ArrayType(i64, 2))
        base = builder.bitcast(ts, i64.as_pointer())
        builder.store(ir.Constant(i64, 0), base)
        second = builder.gep(base, [ir.Constant(ir.IntType(32), 1)])
        builder.store(ir.Constant(i64, 1_000_000), second)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64], var_arg=True), "syscall")
        builder.call(fn, [ir.Constant(i64, _SYS_FUTEX), builder.ptrtoint(ptr, i64),
                          builder.sext(builder.trunc(args[2], ir.IntType(32)), i64),
                          builder.sext(builder.trunc(args[3], ir.IntType(32)), i64),
                          builder.ptrtoint(base, i64), ir.Constant(i64, 0), ir.Constant(i64, 0)])
        return context.get_dummy_value()

    return types.void(arr, idx, types.int64, types.int64), codegen


@intrinsic
def _now_ns(typingctx):
    """``clock_gettime(CLOCK_MONOTONIC)`` in nanoseconds (the column-time counter that
    ``verbose`` prints)."""
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        ts = cgutils.alloca_once(builder, ir.ArrayType(i64, 2))
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(32), [ir.IntType(32), i64.as_pointer()]),
            "clock_gettime")
        base = builder.bitcast(ts, i64.as_pointer())
        builder.call(fn, [ir.Constant(ir.IntType(32), 1), base])
        sec = builder.load(base)
        nsec = builder.load(builder.gep(base, [ir.Constant(ir.IntType(32), 1)]))
        return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)

    return types.int64(), codegen


@njit(cache=True)
def _kcol_shared(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, stop, out, gamma,
                 coef0, degree, ctrl, hbuf):
    """Rows ``[start, stop)`` of the column of ``r`` into ``out``, chunks shared with the
    helper threads (dense rows only: a sparse column uses the one scratch row ``Xs``)."""
    n = stop - start
    cs = max(_MIN_CHUNK, (n + _MAX_CHUNKS - 1) // _MAX_CHUNKS)
    nch = (n + cs - 1) // cs
    g = ctrl[_C_GEN] + 1
    _astore(ctrl, _C_ROW, r)
    _astore(ctrl, _C_START, start)
    _astore(ctrl, _C_END, stop)
    _astore(ctrl, _C_CHUNK, cs)
    _astore(ctrl, _C_NCHUNK, nch)
    _astore(ctrl, _C_NEXT, g << _GEN_SHIFT)
    _astore(ctrl, _C_GEN, g)
    if _aload(ctrl, _C_SLEEP) > 0:
        _futex(ctrl, _C_GEN, _FUTEX_WAKE_PRIVATE, ctrl[_C_NHELP])
    mine = np.zeros(nch, dtype=np.bool_)
    while True:
        v = _aload(ctrl, _C_NEXT)
        c = v & _CHUNK_MASK
        if c >= nch:
            break
        if _cas(ctrl, _C_NEXT, v, v + 1):
            lo = start + c * cs
            _kcol(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, lo,
                         min(stop, lo + cs), out, gamma, coef0, degree)
            mine[c] = True
            ctrl[_C_STATS] += 1
    # a helper that is running finishes its chunk within about one chunk's time: wait that
    # long in all (pauses of ~16 ns), then recompute what is missing
    budget = cs * max(Xd.shape[1], 1) // _PAUSE_WORK
    spins = 0
    for c in range(nch):
        if mine[c]:
            continue
        lo = start + c * cs
        hi = min(stop, lo + cs)
        while _aload(ctrl, _C_DONE + c) != g and spins < budget:
            _pause()
            spins += 1
        if _aload(ctrl, _C_DONE + c) == g:
            src = hbuf[ctrl[_C_OWN + c]]
            for t in range(lo, hi):
                out[t] = src[t]
            ctrl[_C_STATS + 1] += 1
        else:  # the helper was descheduled mid-chunk: do not wait for it
            _kcol(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, lo, hi, out,
                         gamma, coef0, degree)
            ctrl[_C_STATS + 2] += 1


@njit(cache=True)
def _kcol_adaptive(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, stop, out,
                   gamma, coef0, degree, ctrl, hbuf):
    """A shareable column, shared with the helpers only while that is measured faster.

    The solver keeps running means of its time per kernel entry alone and with helpers
    (every :data:`_PROBE`-th shareable column alone, the one half-way after it shared, the
    others shared only while the shared mean is below 0.9 of the lone one).  On a machine whose
    CPUs other processes take back during the solve, helpers cost time slices of the solver's
    own; this stops asking them.  Either path gives the same column."""
    n = ctrl[_C_NCOL]
    ctrl[_C_NCOL] = n + 1
    k = n % _PROBE
    r1 = ctrl[_C_RATE_1]
    rn = ctrl[_C_RATE_N]
    shared = k != 0 and (k == _PROBE // 2 or r1 == 0 or rn == 0 or 10 * rn <= 9 * r1)
    t0 = _now_ns()
    if shared:
        _kcol_shared(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, stop, out,
                     gamma, coef0, degree, ctrl, hbuf)
    else:
        _kcol(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, stop, out,
                     gamma, coef0, degree)
        if k != 0:
            ctrl[_C_OFF] += 1
    rate = (_now_ns() - t0) * 1024 // max(stop - start, 1)
    f = _C_RATE_N if shared else _C_RATE_1
    ctrl[f] = rate if ctrl[f] == 0 else (7 * ctrl[f] + rate) // 8


@njit(cache=True, nogil=True)
def _column_worker(h, ctrl, hbuf, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma,
                   coef0, degree):
    """Helper thread ``h``: claim chunks of each shared column (:func:`_kcol_shared`) into
    ``hbuf[h]`` until ``ctrl[_C_STOP]``; between columns spin ``ctrl[_C_SPIN]`` pauses, then
    sleep on the futex of ``ctrl[_C_GEN]`` (woken by the next column, or after 1 ms)."""
    last = -1
    idle = 0
    spin = ctrl[_C_SPIN]
    out = hbuf[h]
    while _aload(ctrl, _C_STOP) == 0:
        g = _aload(ctrl, _C_GEN)
        if g == last:
            idle += 1
            if idle < spin:
                _pause()
            else:  # sleep until the solver publishes a column (or 1 ms)
                _aadd(ctrl, _C_SLEEP, 1)
                _futex(ctrl, _C_GEN, _FUTEX_WAIT_PRIVATE, g)
                _aadd(ctrl, _C_SLEEP, -1)
            continue
        last = g
        idle = 0
        r = _aload(ctrl, _C_ROW)
        start = _aload(ctrl, _C_START)
        stop = _aload(ctrl, _C_END)
        cs = _aload(ctrl, _C_CHUNK)
        nch = _aload(ctrl, _C_NCHUNK)
        while True:
            v = _aload(ctrl, _C_NEXT)
            c = v & _CHUNK_MASK
            if (v >> _GEN_SHIFT) != g or c >= nch:
                break
            if _cas(ctrl, _C_NEXT, v, v + 1):
                lo = start + c * cs
                _kcol(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, lo,
                             min(stop, lo + cs), out, gamma, coef0, degree)
                ctrl[_C_OWN + c] = h
                _astore(ctrl, _C_DONE + c, g)


# --------------------------------------------------------------------------------------
# the solver state lives in a handful of arrays; helpers take them explicitly
# --------------------------------------------------------------------------------------
# The kernel cache (issue 31: LIBSVM's policy).  Every data position ``r`` owns one slot
# ``slot_of[r]`` (a bijection: shrinking in identity mode swaps two positions' slots), whose
# column ``cdata[s]`` is a float32 array of exactly the length last requested (an empty array
# when not cached), valid on ``[0, slot_len[s])``.  ``cache_size`` bounds the sum of these
# lengths (``clock[5]``: the float32 entries still free), as LIBSVM's cache does: columns
# requested while variables are shrunk are short, so more of them fit than whole columns
# would (measured on bench_smo_threads.py's data, N = 20,000, 200 MB, LRU: 13,771 columns and
# 202 M kernel entries computed instead of 18,517 and 243 M with whole columns; from 300 MB on
# every column is computed once, 8,384 and 104 M).  The cached slots form a doubly linked
# list in recency order, least recent first (``lru[0, s]`` / ``lru[1, s]``: previous / next,
# the sentinel is slot ``n_data``; a request moves its slot to the end).
#
# A column that needs room frees columns by LRU-2 (O'Neil, O'Neil & Weikum 1993) rather than
# LRU: the one whose request before its last one is the oldest, columns requested only once
# first (``lru[3, s]``, ``lru[4, s]``: the last two requests of slot ``s``, counted in
# ``clock[0]``; a binary heap of ``(priority, slot, request)`` in columns 2-4 of ``swaplog``,
# ``clock[7]`` entries, stale ones skipped).  SMO's requests cycle through the free support
# vectors, and under LRU a cycle a little longer than the cache misses on every request.
# Measured on the same data at 200 MB: 175 M kernel entries instead of LRU's 202 M (Belady's
# optimal rule, which knows the future: 127 M).  The column of the request before the current
# one is never freed: its caller still uses it.
#
# Shrinking (identity mode) swaps variables, and with them the entries of every cached
# column.  LIBSVM swaps them in every cached column at once; here the swaps are logged
# (``swaplog[q] = (lo, hi)``, ``clock[6]`` of them) and a column catches up with the log when
# it is next requested (``lru[2, s]``: the log entries it has seen, :func:`_catch_up`).  A
# column evicted before that never pays for them (measured at N = 20,000: a shrinking pass
# walked 200 MB of cached columns for a few hundred swaps, 0.13 s of the loop).  Same
# entries, same result.
@njit(cache=True)
def _new_cache(n_data, floats):
    """An empty cache for ``n_data`` data positions holding at most ``floats`` kernel entries
    (at least two whole columns): ``(cdata, slot_of, swaplog, slot_len, lru, clock)``."""
    # a list compiled in place (a typed List costs ~300 ns a request: 10% of a digits fit);
    # one empty array stands for every uncached slot
    cdata = [np.empty(0, dtype=np.float32)] * n_data
    slot_of = np.arange(n_data)
    swaplog = np.empty((4 * n_data + 64, 5), dtype=np.int64)
    slot_len = np.zeros(n_data, dtype=np.int64)
    lru = np.zeros((5, n_data + 1), dtype=np.int64)
    lru[0, n_data] = n_data
    lru[1, n_data] = n_data
    # clock[0]: column requests; clock[1]: columns computed (misses and extensions of a cached
    # prefix); clock[2]: kernel entries computed; clock[3]: nanoseconds spent computing them;
    # clock[4]: nanoseconds in the whole loop; clock[5]: free entries of the cache's budget;
    # clock[6]: swaps logged in ``swaplog``; clock[7]: entries of the eviction heap
    clock = np.zeros(8, dtype=np.int64)
    clock[5] = max(floats, 2 * n_data)
    return cdata, slot_of, swaplog, slot_len, lru, clock


# The block cache (issue 31, small problems): when every whole column fits in the budget
# (``floats >= n_data**2``), the columns are the rows of one ``n_data x n_data`` float32 array
# (``cdata[s]``, valid on ``[0, slot_len[s])``): no allocation per column, no eviction, no
# LRU-2 bookkeeping, and the hot functions index a 2-D array instead of a list of arrays.
# :func:`_smo_core` compiles its loop (:func:`_smo_loop`) once for each kind of ``cdata``;
# :func:`_get_col` and :func:`_log_swaps` take the path of the kind they are given.  Swaps
# are logged and caught up with lazily as in the list cache (``lru[2, s]``; the other rows of
# ``lru`` are unused), so a column holds the same entries either way: same iterates.
@njit(cache=True)
def _new_block_cache(n_data):
    """The block cache of ``n_data`` data positions: ``(cdata, slot_of, swaplog, slot_len, lru,
    clock)`` as :func:`_new_cache`'s, ``cdata`` an ``n_data x n_data`` float32 array."""
    cdata = np.empty((n_data, n_data), dtype=np.float32)
    slot_of = np.arange(n_data)
    swaplog = np.empty((4 * n_data + 64, 5), dtype=np.int64)
    slot_len = np.zeros(n_data, dtype=np.int64)
    lru = np.zeros((3, n_data + 1), dtype=np.int64)
    clock = np.zeros(8, dtype=np.int64)
    clock[5] = n_data * n_data
    return cdata, slot_of, swaplog, slot_len, lru, clock


@njit(cache=True, inline="always")
def _lru_unlink(lru, s):
    a = lru[0, s]
    b = lru[1, s]
    lru[1, a] = b
    lru[0, b] = a


@njit(cache=True, inline="always")
def _lru_append(lru, s):
    end = lru.shape[1] - 1
    last = lru[0, end]
    lru[1, last] = s
    lru[0, s] = last
    lru[1, s] = end
    lru[0, end] = s


_ONCE = 1 << 40


@njit(cache=True, inline="always")
def _prio(lru, s):
    """Eviction priority of slot ``s`` (LRU-2, smallest first): the request before its last
    one; a column requested once ranks below every other, by its last request."""
    return lru[4, s] if lru[4, s] > 0 else lru[3, s] - _ONCE


@njit(cache=True)
def _hpush(hp, n, pri, s, tick):
    """Push ``(pri, s, tick)`` on the binary min-heap in columns 2-4 of ``hp`` (``n``
    entries); return the new size."""
    k = n
    while k > 0:
        par = (k - 1) >> 1
        if hp[par, 2] <= pri:
            break
        hp[k, 2] = hp[par, 2]
        hp[k, 3] = hp[par, 3]
        hp[k, 4] = hp[par, 4]
        k = par
    hp[k, 2] = pri
    hp[k, 3] = s
    hp[k, 4] = tick
    return n + 1


@njit(cache=True)
def _hpop(hp, n):
    """Remove the heap's root (read it first); return the new size."""
    n -= 1
    pri = hp[n, 2]
    s = hp[n, 3]
    tick = hp[n, 4]
    k = 0
    while True:
        c = 2 * k + 1
        if c >= n:
            break
        if c + 1 < n and hp[c + 1, 2] < hp[c, 2]:
            c += 1
        if hp[c, 2] >= pri:
            break
        hp[k, 2] = hp[c, 2]
        hp[k, 3] = hp[c, 3]
        hp[k, 4] = hp[c, 4]
        k = c
    hp[k, 2] = pri
    hp[k, 3] = s
    hp[k, 4] = tick
    return n


@njit(cache=True)
def _heap_add(s, lru, swaplog, clock):
    """Enter slot ``s`` (just requested) in the eviction heap; a full heap is rebuilt from the
    cached slots first (one entry each: stale ones are dropped)."""
    if clock[7] >= swaplog.shape[0]:
        n = 0
        end = lru.shape[1] - 1
        t = lru[1, end]
        while t != end:
            n = _hpush(swaplog, n, _prio(lru, t), t, lru[3, t])
            t = lru[1, t]
        clock[7] = n
    clock[7] = _hpush(swaplog, clock[7], _prio(lru, s), s, lru[3, s])


@njit(cache=True)
def _catch_up(s, row, slot_len, lru, swaplog, clock):
    """Apply the logged swaps column ``s`` (array ``row``) has not seen, in their order: entries
    ``lo`` and ``hi`` are exchanged in a column valid beyond ``hi``; a column valid beyond
    ``lo`` only is cut to ``lo``."""
    e = clock[6]
    length = slot_len[s]
    for q in range(lru[2, s], e):
        lo = swaplog[q, 0]
        hi = swaplog[q, 1]
        if length > hi:
            row[lo], row[hi] = row[hi], row[lo]
        elif length > lo:
            length = lo
    slot_len[s] = length
    lru[2, s] = e


@njit(cache=True, inline="always")
def _compute(r, s, length, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
             degree, row, slot_len, clock, ctrl, hbuf):
    """Entries ``[slot_len[s], length)`` of the column ``row`` of data position ``r`` (cache
    slot ``s``), then ``slot_len[s] = length``; returns ``s``."""
    start = slot_len[s]
    clock[1] += 1
    clock[2] += length - start
    t0 = _now_ns() if ctrl[_C_TIME] else 0
    if (ctrl[_C_NHELP] > 0 and (length - start) * max(Xd.shape[1], 1) >= ctrl[_C_MIN]
            and Xptr.shape[0] == 0 and kcode != _K_PRE):
        _kcol_adaptive(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, length, row,
                       gamma, coef0, degree, ctrl, hbuf)
    else:
        _kcol(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, length, row,
                     gamma, coef0, degree)
    if ctrl[_C_TIME]:
        clock[3] += _now_ns() - t0
    slot_len[s] = length
    return s


@njit(cache=True)
def _get_col_list(r, length, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
                  degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf):
    """:func:`_get_col` on the list cache (:func:`_new_cache`)."""
    clock[0] += 1
    s = slot_of[r]
    tick = clock[0]
    lru[4, s] = lru[3, s]
    lru[3, s] = tick
    old = cdata[s]
    cap = old.shape[0]
    if cap > 0:
        _catch_up(s, old, slot_len, lru, swaplog, clock)
        _lru_unlink(lru, s)
    else:
        lru[2, s] = clock[6]  # a new column: its entries are in today's order
    start = slot_len[s] if cap > 0 else 0
    if start < length and cap < length:
        # room for length - cap more entries: free columns by LRU-2 (never this one, nor the
        # previous request's: two whole columns fit, so freeing the others is enough)
        more = length - cap
        held = -1
        while clock[5] < more and clock[7] > 0:
            h = swaplog[0, 3]
            tk = swaplog[0, 4]
            clock[7] = _hpop(swaplog, clock[7])
            if h == s or cdata[h].shape[0] == 0 or lru[3, h] != tk:
                continue  # a stale entry
            if tk == tick - 1:
                held = h  # the previous request's column (in use by the caller): kept
                continue
            _lru_unlink(lru, h)
            clock[5] += cdata[h].shape[0]
            cdata[h] = np.empty(0, dtype=np.float32)
            slot_len[h] = 0
        if held >= 0:
            clock[7] = _hpush(swaplog, clock[7], _prio(lru, held), held, lru[3, held])
        row = np.empty(length, dtype=np.float32)
        for t in range(start):
            row[t] = old[t]
        cdata[s] = row
        clock[5] -= more
    _lru_append(lru, s)
    _heap_add(s, lru, swaplog, clock)
    if start >= length:
        return s
    return _compute(r, s, length, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma,
                    coef0, degree, cdata[s], slot_len, clock, ctrl, hbuf)


def _get_col(r, length, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
             degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf):  # pragma: no cover
    """Return the cache slot ``s`` holding the kernel column of data position ``r``, valid on
    ``[0, length)`` (``cdata[s]``).  Compiled code only: the list cache's path
    (:func:`_get_col_list`) or the block cache's (a hit is two loads and two compares), by the
    type of ``cdata``."""
    raise NotImplementedError("compiled code only")


@overload(_get_col)
def _get_col_impl(r, length, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
                  degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf):
    if isinstance(cdata, types.Array):
        def block(r, length, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
                  degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf):
            clock[0] += 1
            s = slot_of[r]
            if slot_len[s] >= length and lru[2, s] == clock[6]:
                return s
            # (the miss path here, not in a function of its own: one call level, and its
            # array arguments' reference counting, fewer per computed column)
            row = cdata[s]
            if slot_len[s] > 0:
                _catch_up(s, row, slot_len, lru, swaplog, clock)
            else:
                lru[2, s] = clock[6]  # a new column: its entries are in today's order
            if slot_len[s] >= length:
                return s
            return _compute(r, s, length, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                            gamma, coef0, degree, row, slot_len, clock, ctrl, hbuf)
        return block

    def listed(r, length, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
               degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf):
        return _get_col_list(r, length, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                             gamma, coef0, degree, cdata, slot_of, swaplog, slot_len, lru, clock,
                             ctrl, hbuf)
    return listed


def _col_hit(r, length, cdata, slot_of, slot_len, lru, clock):  # pragma: no cover
    """The slot of data position ``r``'s column if the block cache holds it valid on
    ``[0, length)`` (counted as a request), else -1 (always -1 on the list cache, whose every
    request goes through :func:`_get_col`).  Compiled code only.

    :func:`_smo_loop` asks this before :func:`_get_col` (issue 31): a small call whose array
    arguments numba does not reference-count, where :func:`_get_col`'s ~16 array arguments
    cost an atomic increment and decrement each per call, also when it is inlined (measured:
    58 increments per iteration on digits pairs)."""
    raise NotImplementedError("compiled code only")


@overload(_col_hit)
def _col_hit_impl(r, length, cdata, slot_of, slot_len, lru, clock):
    if isinstance(cdata, types.Array):
        def block(r, length, cdata, slot_of, slot_len, lru, clock):
            s = slot_of[r]
            if slot_len[s] >= length and lru[2, s] == clock[6]:
                clock[0] += 1
                return s
            return -1
        return block

    def listed(r, length, cdata, slot_of, slot_len, lru, clock):
        return -1
    return listed


def _new_col_whole(r, n_data, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma,
                   coef0, degree, cdata, slot_of, slot_len, lru, clock):  # pragma: no cover
    """The slot of data position ``r``'s column computed whole (by :func:`_kcol`, or read
    from the precomputed matrix) when the block cache holds no part of it: the bookkeeping of
    that request through :func:`_get_col` (a request, a column and ``n_data`` entries
    computed) without its call chain; -1 otherwise (a cached column, the list cache: the
    caller takes :func:`_get_col`).  For a solve without helper threads and column timing
    (:func:`_get_col` computes such a column by :func:`_kcol` too).  Compiled code only.

    The initial gradient of a start with many nonzero entries (nu-SVC's ``nu l / 2`` rows at
    their bound) fetches that many columns: through :func:`_get_col` ~0.8 us more each on
    iris pairs (100 rows) than the column's own work (issue 31)."""
    raise NotImplementedError("compiled code only")


@overload(_new_col_whole)
def _new_col_whole_impl(r, n_data, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma,
                        coef0, degree, cdata, slot_of, slot_len, lru, clock):
    if isinstance(cdata, types.Array):
        def block(r, n_data, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma,
                  coef0, degree, cdata, slot_of, slot_len, lru, clock):
            s = slot_of[r]
            if slot_len[s] > 0:
                return -1
            clock[0] += 1
            lru[2, s] = clock[6]
            clock[1] += 1
            clock[2] += n_data
            row = cdata[s]
            if kcode == _K_PRE:
                kr = Kpre[dorig[r]]
                for t in range(n_data):
                    row[t] = kr[dorig[t]]
            else:
                _kcol(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, 0, n_data, row,
                      gamma, coef0, degree)
            slot_len[s] = n_data
            return s
        return block

    def listed(r, n_data, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma,
               coef0, degree, cdata, slot_of, slot_len, lru, clock):
        return -1
    return listed


#: most helper threads one solve starts
MAX_HELPERS = 7

#: a solve starts helper threads only when its data have at least this many rows * features
HELPER_MIN_WORK = 1 << 18

#: pauses (~16 ns each) a helper thread spins between columns before it sleeps on a futex
#: that the solver's thread signals when it publishes the next column
HELPER_SPIN = 2000


def helper_threads() -> int:
    """Helper threads a large solve starts: the CPUs this process may run on
    (``os.sched_getaffinity``) and numba's thread count (``NUMBA_NUM_THREADS`` /
    ``numba.set_num_threads``), whichever is smaller, minus the solver's own thread, at most
    :data:`MAX_HELPERS`; 0 where ``os.sched_getaffinity`` does not exist.

    Whether a CPU is free is not guessed from the load average: the solver measures its time
    per kernel entry alone and with the helpers and shares columns only while that is faster
    (:func:`_kcol_adaptive`).  Measured at N = 20,000 on this 2-CPU machine: with a CPU free,
    shared columns 1.7x faster and the loop 18% shorter; with none free, 5% longer (a
    helper without that test: 20-40% longer at load 5-7)."""
    if not hasattr(os, "sched_getaffinity"):  # pragma: no cover - not Linux
        return 0
    import numba

    cpus = min(len(os.sched_getaffinity(0)), int(numba.get_num_threads()))
    return max(0, min(MAX_HELPERS, cpus - 1))


def no_helpers(min_work: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``(ctrl, hbuf)`` arguments of :func:`_smo_core` for a solve without helper threads."""
    ctrl = np.zeros(_CTRL_LEN, dtype=np.int64)
    ctrl[_C_MIN] = min_work
    ctrl[_C_DONE:_C_DONE + _MAX_CHUNKS] = -1
    return ctrl, np.zeros((0, 0), dtype=np.float32)


def helpers_wanted(kcode: int, Xd: np.ndarray, Xptr: np.ndarray, min_work: int) -> bool:
    """Whether :func:`column_helpers` (``threads=None``) would start helper threads for a
    solve on these rows, before asking how many CPUs are free: dense rows (no sparse
    ``Xptr``), a kernel the core evaluates (not precomputed), and ``rows * features >=
    max(HELPER_MIN_WORK, min_work)``. ``False``: the solve runs on its own thread, and a caller
    may pass :func:`no_helpers`' arguments without the context."""
    n = Xd.shape[0]
    return (Xptr.shape[0] == 0 and kcode != _K_PRE and n > 0
            and n * max(Xd.shape[1], 1) >= max(HELPER_MIN_WORK, min_work))


@contextmanager
def column_helpers(kcode: int, Xd: np.ndarray, Xt: np.ndarray, Xptr: np.ndarray,
                   Xind: np.ndarray, Xval: np.ndarray, Xs: np.ndarray, xsq: np.ndarray,
                   Kpre: np.ndarray,
                   dorig: np.ndarray, gamma: float, coef0: float, degree: float, min_work: int,
                   threads: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Context in which helper threads compute chunks of the long kernel columns of one
    :func:`_smo_core` call; yields its ``(ctrl, hbuf)`` arguments.

    Helpers are started for dense rows with a built-in kernel: ``threads`` of them, or by
    default :func:`helper_threads` when ``rows * features >= max(HELPER_MIN_WORK,
    min_work)``; otherwise none, and every column is computed by the solver's thread.  The
    arrays given here must be the ones passed to :func:`_smo_core` (it swaps rows of ``Xd``,
    columns of ``Xt`` and entries of ``xsq`` in place; helpers read them only while the
    solver waits for a column).  ``Xt``: the transposed float32 data of :func:`_kcol` (shape
    (0, 0): none).  The
    helpers are stopped and joined when the context exits, also on an exception.
    """
    ctrl, hbuf = no_helpers(min_work)
    n = Xd.shape[0]
    dense = Xptr.shape[0] == 0 and kcode != _K_PRE and n > 0
    if not dense:
        k = 0
    elif threads is None:  # (the size test first: a small solve pays nothing)
        k = helper_threads() if helpers_wanted(kcode, Xd, Xptr, min_work) else 0
    else:
        k = max(0, int(threads))
    if k == 0:
        yield ctrl, hbuf
        return
    hbuf = np.zeros((k, n), dtype=np.float32)
    ctrl[_C_NHELP] = k
    ctrl[_C_SPIN] = HELPER_SPIN
    args = (ctrl, hbuf, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, float(gamma),
            float(coef0), float(degree))
    if not _column_worker.signatures:  # compile (or load) in this thread, not in a helper
        ctrl[_C_STOP] = 1
        _column_worker(0, *args)
        ctrl[_C_STOP] = 0
    workers = [threading.Thread(target=_column_worker, args=(h, *args), daemon=True,
                                name=f"primaldual-smo-column-{h}") for h in range(k)]
    for w in workers:
        w.start()
    try:
        yield ctrl, hbuf
    finally:
        ctrl[_C_STOP] = 1
        for w in workers:
            w.join()


def column_stats(ctrl: np.ndarray) -> dict[str, int]:
    """Chunks of shared columns computed by the solver's thread, by helper threads, and
    recomputed by the solver's thread because a helper had not finished in time."""
    return {"solver_chunks": int(ctrl[_C_STATS]), "helper_chunks": int(ctrl[_C_STATS + 1]),
            "recomputed_chunks": int(ctrl[_C_STATS + 2]), "helpers": int(ctrl[_C_NHELP]),
            "shareable_columns": int(ctrl[_C_NCOL]), "kept_alone": int(ctrl[_C_OFF]),
            "ns_per_1024_alone": int(ctrl[_C_RATE_1]),
            "ns_per_1024_shared": int(ctrl[_C_RATE_N])}


@njit(cache=True)
def _diag_q(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, dpos, diag,
            QD):
    """``QD[t] = k(x_r, x_r) + diag[t]`` (``r = dpos[t]``), exactly :func:`_kval`'s value (but
    RBF, below): on dense rows four rows' sums run interleaved, each in :func:`_kval`'s
    sequential order (four independent chains instead of one: issue 31, the latency-bound sum
    was 3-4% of a digits pair's solve).

    RBF: ``k(x, x) = exp(-gamma (|x|^2 + |x|^2 - 2 x.x))`` with ``x.x`` taken as ``xsq`` itself,
    i.e. exactly ``1`` (LIBSVM's value: its ``x.x`` and ``|x|^2`` are one computation); no
    sums at all (issue 31: ~8 us, latency-bound, of a digits pair's 360 x 64 solve)."""
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


@njit(cache=True)
def _add_col(G, f, sign, c, dpos, identity, lo, hi):
    """``G[k] += f s_k c[dpos[k]]`` for ``lo <= k < hi``; in identity mode (``dpos[k] = k``)
    without the index array, a loop the compiler vectorises (same arithmetic).  A call, not
    inlined: inlined, its array arguments were reference-counted at every use (issue 31)."""
    if identity:
        for k in range(lo, hi):
            G[k] += f * sign[k] * c[k]
    else:
        for k in range(lo, hi):
            G[k] += f * sign[k] * c[dpos[k]]


@njit(cache=True, inline="always")
def _status_of(a, u):
    if a >= u:
        return 1
    if a <= 0.0:
        return 0
    return 2


@njit(cache=True, nogil=True)
def _smo_core(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
              identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar,
              eq_mode, tol, max_iter, cache_floats, shrinking, verbose, trace_cap,
              ctrl, hbuf, gap_tol, gap_unit):
    """The SMO solve: a cache of ``cache_floats`` kernel entries (the block cache when every
    whole column fits, else the list cache), then :func:`_smo_loop` (compiled for each)."""
    n_data = Xd.shape[0] if Xptr.shape[0] == 0 else Xptr.shape[0]
    if kcode == _K_PRE:
        n_data = dorig.shape[0]
    if cache_floats >= n_data * n_data:
        block, slot_of, swaplog, slot_len, lru, clock = _new_block_cache(n_data)
        return _smo_loop(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
                         degree, identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar,
                         eq_mode, tol, max_iter, shrinking, verbose, trace_cap, ctrl, hbuf,
                         gap_tol, gap_unit, n_data, block, slot_of, swaplog, slot_len, lru, clock)
    cdata, slot_of, swaplog, slot_len, lru, clock = _new_cache(n_data, cache_floats)
    return _smo_loop(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
                     identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar,
                     eq_mode, tol, max_iter, shrinking, verbose, trace_cap, ctrl, hbuf,
                     gap_tol, gap_unit, n_data, cdata, slot_of, swaplog, slot_len, lru, clock)


@njit(cache=True)
def _smo_loop(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
              identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar,
              eq_mode, tol, max_iter, shrinking, verbose, trace_cap, ctrl, hbuf, gap_tol,
              gap_unit, n_data, cdata, slot_of, swaplog, slot_len, lru, clock):
    l = alpha.shape[0]
    tol0 = tol
    tol_min = tol * 1e-4  # the violating-pair tolerance is tightened at most 4 decades
    ctrl[_C_TIME] = 1 if verbose else 0
    clock[4] = _now_ns()

    status = np.empty(l, dtype=np.int8)
    QD = np.empty(l)
    sbuf = np.empty((2, l if l >= _BRANCH_FREE_MIN else 0))  # scratch of _select_one
    for t in range(l):
        status[t] = _status_of(alpha[t], upper[t])
    _diag_q(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, dpos,
            diag, QD)

    # ---- initial gradient (G = p + Q a, G_bar = sum_{a at upper} u Q) ----
    for t in range(l):
        G[t] = p[t]
        G_bar[t] = 0.0
    whole = ctrl[_C_TIME] == 0 and ctrl[_C_NHELP] == 0   # (issue 31: _new_col_whole)
    for i in range(l):
        if status[i] != 0:
            s = _col_hit(dpos[i], n_data, cdata, slot_of, slot_len, lru, clock)
            if s < 0 and whole:
                s = _new_col_whole(dpos[i], n_data, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq,
                                   Kpre, dorig, gamma, coef0, degree, cdata, slot_of, slot_len,
                                   lru, clock)
            if s < 0:
                s = _get_col(dpos[i], n_data, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre,
                             dorig, gamma, coef0, degree, cdata, slot_of, swaplog, slot_len, lru,
                             clock, ctrl, hbuf)
            ci = cdata[s]
            ai = alpha[i] * sign[i]
            _add_col(G, ai, sign, ci, dpos, identity, 0, l)
            G[i] += alpha[i] * diag[i]
            if status[i] == 1:
                ui = upper[i] * sign[i]
                _add_col(G_bar, ui, sign, ci, dpos, identity, 0, l)
                G_bar[i] += upper[i] * diag[i]

    obj = 0.0
    for t in range(l):
        obj += alpha[t] * (G[t] + p[t])
    obj *= 0.5

    # trace storage
    tr_iter = np.zeros(max(trace_cap, 1), dtype=np.int64)
    tr_obj = np.zeros(max(trace_cap, 1))
    tr_viol = np.zeros(max(trace_cap, 1))
    tr_n = 0
    tr_stride = 1

    active = l
    unshrink = l < 0  # False, typed bool: a literal False would compile _do_shrinking twice
    it = 0
    counter = min(l, 1000) + 1
    gap = INF
    status_code = 0  # 0 optimal, 1 max_iter
    print_every = max(1000, min(l, 100000))

    while True:
        if it >= max_iter:
            status_code = 1
            break
        counter -= 1
        if counter == 0:
            counter = min(l, 1000)
            # no shrinking while chasing the gap: the periodic gap check needs every G_j
            if shrinking and tol >= tol0:
                active, unshrink = _do_shrinking(
                    eq_mode, active, l, unshrink, tol, G, G_bar, p, sign, status, alpha,
                    upper, dpos, vorig, QD, diag, identity, kcode, Xd, Xt, Xptr, Xind, Xval, Xs,
                    xsq,
                    Kpre, dorig,
                    gamma, coef0, degree, cdata, slot_of, swaplog, slot_len, lru,
                    clock, ctrl, hbuf)
        # ---- working set selection (:func:`_select`, written out) ----
        # (when no pair violates on the active set: reconstruct, select again on everything)
        again = False
        while True:
            if eq_mode == 2:
                i, j, gap = _select_single(active, G, status, tol)
            elif eq_mode == 0 and active >= _BRANCH_FREE_MIN:
                i, j, gap = _select_one(active, G, sign, status, QD, dpos, identity, tol,
                                        kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                                        gamma, coef0, degree, cdata, slot_of, swaplog, slot_len,
                                        lru, clock, ctrl, hbuf, sbuf)
            else:
                g1, i1, g2, i2 = _select_first(eq_mode, active, G, sign, status)
                ln = min(active if identity else n_data, n_data)
                s1 = 0
                s2 = 0
                if i1 >= 0:
                    s1 = _col_hit(dpos[i1], ln, cdata, slot_of, slot_len, lru, clock)
                    if s1 < 0:
                        s1 = _get_col(dpos[i1], ln, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre,
                                      dorig, gamma, coef0, degree, cdata, slot_of, swaplog,
                                      slot_len, lru, clock, ctrl, hbuf)
                if i2 >= 0:
                    s2 = _col_hit(dpos[i2], ln, cdata, slot_of, slot_len, lru, clock)
                    if s2 < 0:
                        s2 = _get_col(dpos[i2], ln, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre,
                                      dorig, gamma, coef0, degree, cdata, slot_of, swaplog,
                                      slot_len, lru, clock, ctrl, hbuf)
                if eq_mode != 0:
                    i, j, gap = _select_second_nu(active, G, sign, status, QD, dpos, tol, g1, i1,
                                                  g2, i2, cdata, s1, s2)
                elif i1 >= 0:
                    i, j, gap = _select_second_one(active, G, sign, status, QD, dpos, identity,
                                                   tol, g1, i1, cdata, s1)
                else:  # no first variable: no second, the gap from I_low alone
                    i = -1
                    j = -1
                    gap = g1 + _low_max(active, G, sign, status, -INF)
            if i >= 0 or again or active == l:
                break
            # optimal on the active set: reconstruct and check on everything
            _reconstruct(active, l, G, G_bar, p, sign, status, alpha, dpos, identity,
                         kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
                         degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf)
            active = l
            again = True
        if i < 0 or again:
            if again and i >= 0:
                counter = 1  # shrink at the next iteration
            if i < 0:
                # LIBSVM's rule holds; stop only if the duality gap (O(l) from G) meets
                # gap_tol too, else tighten the violating-pair tolerance and go on
                if gap_tol <= 0.0 or tol <= tol_min or _rel_gap(
                        eq_mode, l, G, p, alpha, upper, sign, status, gap_unit) <= gap_tol:
                    break
                tol *= 0.1
                continue
        elif (tol < tol0 and gap < tol0 and active == l and it % _GAP_CHECK_EVERY == 0
              and _rel_gap(eq_mode, l, G, p, alpha, upper, sign, status, gap_unit)
              <= gap_tol):
            # chasing the gap with a tightened tolerance: stop as soon as the certified gap
            # (and LIBSVM's rule at the caller's tol) holds, not when the tightened rule does
            break
        it += 1

        # ---- two-variable (or one-variable) update ----
        si = _col_hit(dpos[i], active if identity else n_data, cdata, slot_of, slot_len, lru, clock)
        if si < 0:
            si = _get_col(dpos[i], active if identity else n_data, kcode, Xd, Xt, Xptr, Xind, Xval,
                          Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of, swaplog,
                          slot_len, lru, clock, ctrl, hbuf)
        ci = cdata[si]
        old_ai = alpha[i]
        Ci = upper[i]
        if eq_mode == 2:
            qc = QD[i]
            if qc <= 0.0:
                qc = TAU
            na = old_ai - G[i] / qc
            if na < 0.0:
                na = 0.0
            elif na > Ci:
                na = Ci
            alpha[i] = na
            dai = na - old_ai
            obj += G[i] * dai + 0.5 * QD[i] * dai * dai
            fi = dai * sign[i]
            if identity:
                for k in range(active):
                    G[k] += fi * sign[k] * ci[k]
            else:
                for k in range(active):
                    G[k] += fi * sign[k] * ci[dpos[k]]
            G[i] += diag[i] * dai
            ui_old = status[i] == 1
            status[i] = _status_of(alpha[i], Ci)
            ui_new = status[i] == 1
            if ui_old != ui_new:
                si = _col_hit(dpos[i], l if identity else n_data, cdata, slot_of, slot_len,
                              lru, clock)
                if si < 0:
                    si = _get_col(dpos[i], l if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                                  Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                                  swaplog, slot_len, lru, clock, ctrl, hbuf)
                ci = cdata[si]
                f = Ci * sign[i] if ui_new else -Ci * sign[i]
                _add_col(G_bar, f, sign, ci, dpos, identity, 0, l)
                G_bar[i] += (Ci if ui_new else -Ci) * diag[i]
        else:
            sj = _col_hit(dpos[j], active if identity else n_data, cdata, slot_of, slot_len,
                          lru, clock)
            if sj < 0:
                sj = _get_col(dpos[j], active if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                              Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                              swaplog, slot_len, lru, clock, ctrl, hbuf)
            cj = cdata[sj]
            ci = cdata[si]  # (si cannot have been evicted: it is the most recent but one)
            old_aj = alpha[j]
            Cj = upper[j]
            Kij = ci[dpos[j]]
            Qij = sign[i] * sign[j] * Kij
            if sign[i] != sign[j]:
                qc = QD[i] + QD[j] + 2.0 * Qij
                if qc <= 0.0:
                    qc = TAU
                delta = (-G[i] - G[j]) / qc
                diff = alpha[i] - alpha[j]
                alpha[i] += delta
                alpha[j] += delta
                if diff > 0:
                    if alpha[j] < 0:
                        alpha[j] = 0.0
                        alpha[i] = diff
                else:
                    if alpha[i] < 0:
                        alpha[i] = 0.0
                        alpha[j] = -diff
                if diff > Ci - Cj:
                    if alpha[i] > Ci:
                        alpha[i] = Ci
                        alpha[j] = Ci - diff
                else:
                    if alpha[j] > Cj:
                        alpha[j] = Cj
                        alpha[i] = Cj + diff
            else:
                qc = QD[i] + QD[j] - 2.0 * Qij
                if qc <= 0.0:
                    qc = TAU
                delta = (G[i] - G[j]) / qc
                ssum = alpha[i] + alpha[j]
                alpha[i] -= delta
                alpha[j] += delta
                if ssum > Ci:
                    if alpha[i] > Ci:
                        alpha[i] = Ci
                        alpha[j] = ssum - Ci
                else:
                    if alpha[j] < 0:
                        alpha[j] = 0.0
                        alpha[i] = ssum
                if ssum > Cj:
                    if alpha[j] > Cj:
                        alpha[j] = Cj
                        alpha[i] = ssum - Cj
                else:
                    if alpha[i] < 0:
                        alpha[i] = 0.0
                        alpha[j] = ssum
            dai = alpha[i] - old_ai
            daj = alpha[j] - old_aj
            obj += (G[i] * dai + G[j] * daj + 0.5 * QD[i] * dai * dai
                    + 0.5 * QD[j] * daj * daj + Qij * dai * daj)
            fi = dai * sign[i]
            fj = daj * sign[j]
            if identity:
                for k in range(active):
                    G[k] += sign[k] * (fi * ci[k] + fj * cj[k])
            else:
                for k in range(active):
                    dk = dpos[k]
                    G[k] += sign[k] * (fi * ci[dk] + fj * cj[dk])
            G[i] += diag[i] * dai
            G[j] += diag[j] * daj
            ui_old = status[i] == 1
            uj_old = status[j] == 1
            status[i] = _status_of(alpha[i], Ci)
            status[j] = _status_of(alpha[j], Cj)
            ui_new = status[i] == 1
            uj_new = status[j] == 1
            if ui_old != ui_new:
                si = _col_hit(dpos[i], l if identity else n_data, cdata, slot_of, slot_len,
                              lru, clock)
                if si < 0:
                    si = _get_col(dpos[i], l if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                                  Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                                  swaplog, slot_len, lru, clock, ctrl, hbuf)
                ci = cdata[si]
                f = Ci * sign[i] if ui_new else -Ci * sign[i]
                _add_col(G_bar, f, sign, ci, dpos, identity, 0, l)
                G_bar[i] += (Ci if ui_new else -Ci) * diag[i]
            if uj_old != uj_new:
                sj = _col_hit(dpos[j], l if identity else n_data, cdata, slot_of, slot_len,
                              lru, clock)
                if sj < 0:
                    sj = _get_col(dpos[j], l if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                                  Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                                  swaplog, slot_len, lru, clock, ctrl, hbuf)
                cj = cdata[sj]
                f = Cj * sign[j] if uj_new else -Cj * sign[j]
                _add_col(G_bar, f, sign, cj, dpos, identity, 0, l)
                G_bar[j] += (Cj if uj_new else -Cj) * diag[j]

        if trace_cap > 0 and it % tr_stride == 0:
            if tr_n == trace_cap:
                # keep every other record, double the stride
                half = 0
                for q in range(0, tr_n, 2):
                    tr_iter[half] = tr_iter[q]
                    tr_obj[half] = tr_obj[q]
                    tr_viol[half] = tr_viol[q]
                    half += 1
                tr_n = half
                tr_stride *= 2
            if it % tr_stride == 0:
                tr_iter[tr_n] = it
                tr_obj[tr_n] = obj
                tr_viol[tr_n] = gap
                tr_n += 1
        if verbose and it % print_every == 0:
            print("smo iter", it, "violation", gap, "objective", obj, "active", active)

    if active < l:
        _reconstruct(active, l, G, G_bar, p, sign, status, alpha, dpos, identity,
                     kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
                     cdata,
                     slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf)
        active = l
    gap = _violation(eq_mode, l, G, sign, status)

    # objective from scratch (more accurate than the running sum)
    obj = 0.0
    for t in range(l):
        obj += alpha[t] * (G[t] + p[t])
    obj *= 0.5

    # bias
    r1 = 0.0
    r2 = 0.0
    b = 0.0
    if eq_mode == 0:
        b = -_rho_one(l, G, sign, status)
    elif eq_mode == 1:
        r1, r2 = _rho_nu(l, G, sign, status)
        b = -(r1 - r2) / 2.0
    if verbose:
        print("smo done: iter", it, "violation", gap, "objective", obj, "column requests",
              clock[0], "columns computed", clock[1], "kernel entries", clock[2],
              "column seconds", clock[3] * 1e-9, "loop seconds", (_now_ns() - clock[4]) * 1e-9,
              "shared-column chunks (solver, helpers, recomputed)", ctrl[_C_STATS],
              ctrl[_C_STATS + 1], ctrl[_C_STATS + 2], "shareable columns", ctrl[_C_NCOL],
              "kept alone", ctrl[_C_OFF], "ns per 1024 entries alone", ctrl[_C_RATE_1],
              "shared", ctrl[_C_RATE_N])
    return (it, status_code, gap, obj, b, r1, r2,
            tr_iter[:tr_n].copy(), tr_obj[:tr_n].copy(), tr_viol[:tr_n].copy())


#: one-equality working-set selection branch-free from this many active variables on
_BRANCH_FREE_MIN = 1024


@njit(cache=True)
def _low_max(n_act, G, sign, status, Gmax2):
    """``max(Gmax2, max_{t in I_low} s_t G_t)``: WSS2's second maximum when no column is read
    (no first variable ``i`` was found), the same loop for both selections."""
    for t in range(n_act):
        if sign[t] > 0:
            if status[t] != 0 and G[t] >= Gmax2:
                Gmax2 = G[t]
        else:
            if status[t] != 1 and -G[t] >= Gmax2:
                Gmax2 = -G[t]
    return Gmax2


@njit(cache=True)
def _select(eq_mode, n_act, G, sign, status, QD, dpos, identity, tol,
            kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
            slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf, buf):
    """Working-set selection. Returns (i, j, gap); i = -1 when the stopping rule holds.
    ``buf``: float64 scratch of shape (2, l) (:func:`_select_one`, used from
    ``_BRANCH_FREE_MIN`` active variables on).

    :func:`_smo_loop` has these lines written out in its body (issue 31): the two passes
    (:func:`_select_first`, then :func:`_select_second_one` or :func:`_select_second_nu`) take
    only the arrays they read, the columns between them come from :func:`_col_hit` or
    :func:`_get_col`.  Every array argument of a compiled call costs an atomic reference count
    increment and decrement (this function: 23 of each per call, most of them for the
    kernel's and the cache's arrays that only a column computation reads); numba's
    ``inline="always"`` fails on this function (its call of the ``_get_col`` overload), and
    an inlined function's array arguments are reference-counted all the same."""
    if eq_mode == 2:
        return _select_single(n_act, G, status, tol)
    if eq_mode == 0 and n_act >= _BRANCH_FREE_MIN:
        return _select_one(n_act, G, sign, status, QD, dpos, identity, tol,
                           kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
                           degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl,
                           hbuf, buf)
    n_data = slot_of.shape[0]
    g1, i1, g2, i2 = _select_first(eq_mode, n_act, G, sign, status)
    ln = min(n_act if identity else n_data, n_data)
    s1 = 0
    s2 = 0
    if i1 >= 0:
        s1 = _get_col(dpos[i1], ln, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma,
                      coef0, degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf)
    if i2 >= 0:
        s2 = _get_col(dpos[i2], ln, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma,
                      coef0, degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf)
    # (the first column cannot have been evicted by the second: it is the most recent but one)
    if eq_mode != 0:
        return _select_second_nu(n_act, G, sign, status, QD, dpos, tol, g1, i1, g2, i2, cdata,
                                 s1, s2)
    if i1 >= 0:
        return _select_second_one(n_act, G, sign, status, QD, dpos, identity, tol, g1, i1, cdata,
                                  s1)
    return -1, -1, g1 + _low_max(n_act, G, sign, status, -INF)


@njit(cache=True)
def _select_single(n_act, G, status, tol):
    """:func:`_select` with no equality (one variable)."""
    vmax = 0.0
    imax = -1
    for t in range(n_act):
        g = G[t]
        v = 0.0
        if status[t] != 1 and -g > v:
            v = -g
        if status[t] != 0 and g > v:
            v = g
        if v > vmax:
            vmax = v
            imax = t
    if vmax < tol:
        return -1, -1, vmax
    return imax, imax, vmax


@njit(cache=True)
def _select_first(eq_mode, n_act, G, sign, status):
    """The first variable(s) of WSS2: ``(Gmax, i, 0, -1)`` with one equality (``i``: the last
    index of the largest ``-s_t G_t`` over I_up, -1 if none), ``(Gmax+, i+, Gmax-, i-)`` with
    one equality per sign (nu)."""
    if eq_mode == 0:
        Gmax = -INF
        imax = -1
        for t in range(n_act):
            if sign[t] > 0:
                if status[t] != 1 and -G[t] >= Gmax:
                    Gmax = -G[t]
                    imax = t
            else:
                if status[t] != 0 and G[t] >= Gmax:
                    Gmax = G[t]
                    imax = t
        return Gmax, imax, 0.0, -1
    Gmaxp = -INF
    ip = -1
    Gmaxn = -INF
    iN = -1
    for t in range(n_act):
        if sign[t] > 0:
            if status[t] != 1 and -G[t] >= Gmaxp:
                Gmaxp = -G[t]
                ip = t
        else:
            if status[t] != 0 and G[t] >= Gmaxn:
                Gmaxn = G[t]
                iN = t
    return Gmaxp, ip, Gmaxn, iN


@njit(cache=True)
def _select_second_one(n_act, G, sign, status, QD, dpos, identity, tol, Gmax, imax, cdata, s):
    """The second variable of WSS2 with one equality, given :func:`_select_first`'s ``Gmax``
    and ``imax >= 0`` and the cache slot ``s`` of ``imax``'s kernel column (``cdata[s]``);
    returns ``(i, j, gap)``.  No call and one return: numba then drops the reference counting
    of the array arguments (with ``imax < 0`` the caller takes :func:`_low_max` instead)."""
    # LIBSVM's WSS2; in this loop the per-sign branches are selects (issue 31: they
    # mispredict on mixed data, measured 20% of the loop at N = 20,000; same arithmetic,
    # same ties, same pair).  The first loop stays branchy: as selects it measured 20%
    # slower on small problems (digits pairs) and no faster at N = 20,000.
    ci = cdata[s]
    Gmax2 = -INF
    jmin = -1
    omin = INF
    QDi = QD[imax]
    for t in range(n_act):
        pos = sign[t] > 0
        low = status[t] != (0 if pos else 1)  # in I_low
        w = G[t] if pos else -G[t]
        if low & (w >= Gmax2):
            Gmax2 = w
        gd = Gmax + w if pos else Gmax - G[t]
        if low & (gd > 0):
            qc = QDi + QD[t] - 2.0 * ci[t if identity else dpos[t]]
            qc = TAU if qc <= 0 else qc
            od = -(gd * gd) / qc
            if od <= omin:
                jmin = t
                omin = od
    gap = Gmax + Gmax2
    i = imax
    if gap < tol or jmin == -1:
        i = -1
        jmin = -1
    return i, jmin, gap


@njit(cache=True)
def _select_second_nu(n_act, G, sign, status, QD, dpos, tol, Gmaxp, ip, Gmaxn, iN, cdata, sp,
                      sn):
    """:func:`_select_second_one` with one equality per sign (nu): the columns ``cdata[sp]``,
    ``cdata[sn]`` of ``ip``, ``iN`` (any slot for a missing one)."""
    cp = cdata[sp]
    cn = cdata[sn]
    Gmaxp2 = -INF
    Gmaxn2 = -INF
    jmin = -1
    omin = INF
    for t in range(n_act):
        if sign[t] > 0:
            if status[t] != 0:
                gd = Gmaxp + G[t]
                if G[t] >= Gmaxp2:
                    Gmaxp2 = G[t]
                if gd > 0 and ip >= 0:
                    qc = QD[ip] + QD[t] - 2.0 * cp[dpos[t]]
                    if qc <= 0:
                        qc = TAU
                    od = -(gd * gd) / qc
                    if od <= omin:
                        jmin = t
                        omin = od
        else:
            if status[t] != 1:
                gd = Gmaxn - G[t]
                if -G[t] >= Gmaxn2:
                    Gmaxn2 = -G[t]
                if gd > 0 and iN >= 0:
                    qc = QD[iN] + QD[t] - 2.0 * cn[dpos[t]]
                    if qc <= 0:
                        qc = TAU
                    od = -(gd * gd) / qc
                    if od <= omin:
                        jmin = t
                        omin = od
    gap = max(Gmaxp + Gmaxp2, Gmaxn + Gmaxn2)
    i = -1
    if gap < tol or jmin == -1:
        jmin = -1
    elif sign[jmin] > 0:
        i = ip
    else:
        i = iN
    return i, jmin, gap


# the two reductions in four interleaved lanes (LLVM vectorises neither a branchy nor a
# select-based running maximum, with or without fastmath; four independent chains are ~3x
# faster); the maximum (minimum) of a set of numbers does not depend on the order they are
# compared in, so the result is that of one sequential pass (up to the sign of a zero, which
# the callers take from the array entry they then locate)
@njit(cache=True)
def _max_of(v, n):
    m0 = m1 = m2 = m3 = -INF
    t = 0
    while t + 4 <= n:
        x0 = v[t]
        x1 = v[t + 1]
        x2 = v[t + 2]
        x3 = v[t + 3]
        m0 = x0 if x0 > m0 else m0
        m1 = x1 if x1 > m1 else m1
        m2 = x2 if x2 > m2 else m2
        m3 = x3 if x3 > m3 else m3
        t += 4
    while t < n:
        x0 = v[t]
        m0 = x0 if x0 > m0 else m0
        t += 1
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    return m2 if m2 > m0 else m0


@njit(cache=True)
def _min_of(v, n):
    m0 = m1 = m2 = m3 = INF
    t = 0
    while t + 4 <= n:
        x0 = v[t]
        x1 = v[t + 1]
        x2 = v[t + 2]
        x3 = v[t + 3]
        m0 = x0 if x0 < m0 else m0
        m1 = x1 if x1 < m1 else m1
        m2 = x2 if x2 < m2 else m2
        m3 = x3 if x3 < m3 else m3
        t += 4
    while t < n:
        x0 = v[t]
        m0 = x0 if x0 < m0 else m0
        t += 1
    m0 = m1 if m1 < m0 else m0
    m2 = m3 if m3 < m2 else m2
    return m2 if m2 < m0 else m0


@njit(cache=True)
def _select_one(n_act, G, sign, status, QD, dpos, identity, tol,
                kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf, buf):
    """LIBSVM's WSS2 (one equality) for a long active set: the same pair as :func:`_select`'s
    loops (``i``: the last index of the largest ``-s_t G_t`` over I_up; ``j``: the last index
    of the smallest ``-(gd^2)/qc`` over I_low with ``gd > 0``) and the same gap (up to the sign
    of a zero), in branch-free passes (issue 31): each loop writes its candidates (or -inf /
    +inf) into ``buf``, a four-chain reduction takes the extreme value, a backward scan finds
    its last index.  Measured on 20,000 entries of unpredictable signs and statuses: 4.3x
    faster than the branchy loops (2,000: 1.5x; 360: 1.2x slower, hence the threshold)."""
    n_data = slot_of.shape[0]
    vb = buf[0]
    for t in range(n_act):
        pos = sign[t] > 0
        up = status[t] != (1 if pos else 0)  # in I_up
        v = -G[t] if pos else G[t]
        vb[t] = v if up else -INF
    Gmax = _max_of(vb, n_act)
    imax = -1
    for t in range(n_act - 1, -1, -1):
        if vb[t] == Gmax:
            if status[t] != (1 if sign[t] > 0 else 0):
                imax = t
                break
    Gmax2 = -INF
    jmin = -1
    if imax >= 0:
        Gmax = vb[imax]
        ln = n_act if identity else n_data
        s = _get_col(dpos[imax], min(ln, n_data), kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre,
                     dorig, gamma, coef0, degree, cdata, slot_of, swaplog, slot_len, lru,
                     clock, ctrl, hbuf)
        ci = cdata[s]
        QDi = QD[imax]
        ob = buf[1]
        for t in range(n_act):
            pos = sign[t] > 0
            low = status[t] != (0 if pos else 1)  # in I_low
            w = G[t] if pos else -G[t]
            vb[t] = w if low else -INF
            gd = Gmax + w
            qc = QDi + QD[t] - 2.0 * (ci[t] if identity else ci[dpos[t]])
            qc = TAU if qc <= 0 else qc
            od = -(gd * gd) / qc
            ob[t] = od if (low & (gd > 0)) else INF
        Gmax2 = _max_of(vb, n_act)
        omin = _min_of(ob, n_act)
        if omin < INF:
            for t in range(n_act - 1, -1, -1):
                if ob[t] == omin:
                    jmin = t
                    break
    else:
        Gmax2 = _low_max(n_act, G, sign, status, Gmax2)
    gap = Gmax + Gmax2
    if gap < tol or jmin == -1:
        return -1, -1, gap
    return imax, jmin, gap


@njit(cache=True)
def _violation(eq_mode, l, G, sign, status):
    if eq_mode == 2:
        v = 0.0
        for t in range(l):
            if status[t] != 1 and -G[t] > v:
                v = -G[t]
            if status[t] != 0 and G[t] > v:
                v = G[t]
        return v
    a1 = -INF  # +: up (-G)
    a2 = -INF  # +: low (G)
    a3 = -INF  # -: low (G)
    a4 = -INF  # -: up (-G)
    for t in range(l):
        if sign[t] > 0:
            if status[t] != 1:
                a1 = max(a1, -G[t])
            if status[t] != 0:
                a2 = max(a2, G[t])
        else:
            if status[t] != 1:
                a4 = max(a4, -G[t])
            if status[t] != 0:
                a3 = max(a3, G[t])
    if eq_mode == 0:
        return max(a1, a3) + max(a2, a4)
    return max(a1 + a2, a3 + a4)


#: the bias interval's midpoint (:func:`primaldual.backends.smo.codes.midpoint`), compiled
_midpoint = njit(cache=True, inline="always")(midpoint)


@njit(cache=True)
def _rho_one(l, G, sign, status):
    ub = INF
    lb = -INF
    nf = 0
    sf = 0.0
    for t in range(l):
        yG = sign[t] * G[t]
        if status[t] == 1:
            if sign[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif status[t] == 0:
            if sign[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            nf += 1
            sf += yG
    if nf > 0:
        return sf / nf
    return _midpoint(lb, ub)


@njit(cache=True)
def _rel_gap(eq_mode, l, G, p, alpha, upper, sign, status, gap_unit):
    """Relative duality gap of the box QP from its gradient, O(l).

    With the equality multipliers of :func:`_rho_one` / :func:`_rho_nu` and the reduced
    gradient ``r_j = G_j + b s_j`` (nu: ``G_j - r_{s_j}``), the gap against the QP's Wolfe
    dual is ``sum_j a_j max(r_j, 0) + (u_j - a_j) max(-r_j, 0)`` (for C-SVC exactly primal
    minus dual); an infinite ``u_j`` is replaced by ``max_j a_j``.  Returns the larger of
    the gap and the largest single term (the complementarity residual; ``max(-r_j, 0)`` for
    an infinite bound: primal infeasibility), divided by ``max(gap_unit, |primal|)``
    (``gap_unit = 1`` in unscaled units): the quantities the certificate audits.
    """
    b = 0.0
    r1 = 0.0
    r2 = 0.0
    if eq_mode == 0:
        b = -_rho_one(l, G, sign, status)
        if not math.isfinite(b):
            b = 0.0
    elif eq_mode == 1:
        r1, r2 = _rho_nu(l, G, sign, status)
        if not math.isfinite(r1):
            r1 = 0.0
        if not math.isfinite(r2):
            r2 = 0.0
    amax = 0.0
    for t in range(l):
        if alpha[t] > amax:
            amax = alpha[t]
    gap = 0.0
    obj = 0.0
    worst = 0.0  # largest complementarity / feasibility residual
    for t in range(l):
        obj += alpha[t] * (G[t] + p[t])
        if eq_mode == 0:
            r = G[t] + b * sign[t]
        elif eq_mode == 1:
            r = G[t] - (r1 if sign[t] > 0 else r2)
        else:
            r = G[t]
        if r > 0.0:
            c = alpha[t] * r
            gap += c
        elif r < 0.0:
            if upper[t] < INF:
                c = (upper[t] - alpha[t]) * (-r)
                gap += c
            else:  # no upper bound: -r is a primal infeasibility, a * (-r) complementarity
                c = max(1.0, alpha[t]) * (-r)
                gap += amax * (-r)
        else:
            c = 0.0
        if c > worst:
            worst = c
    obj *= 0.5
    den = max(gap_unit, abs(gap - obj))
    return max(gap, worst) / den


@njit(cache=True)
def _rho_nu(l, G, sign, status):
    nf1 = 0
    nf2 = 0
    sf1 = 0.0
    sf2 = 0.0
    ub1 = INF
    ub2 = INF
    lb1 = -INF
    lb2 = -INF
    for t in range(l):
        if sign[t] > 0:
            if status[t] == 1:
                lb1 = max(lb1, G[t])
            elif status[t] == 0:
                ub1 = min(ub1, G[t])
            else:
                nf1 += 1
                sf1 += G[t]
        else:
            if status[t] == 1:
                lb2 = max(lb2, G[t])
            elif status[t] == 0:
                ub2 = min(ub2, G[t])
            else:
                nf2 += 1
                sf2 += G[t]
    r1 = sf1 / nf1 if nf1 > 0 else _midpoint(lb1, ub1)
    r2 = sf2 / nf2 if nf2 > 0 else _midpoint(lb2, ub2)
    return r1, r2


@njit(cache=True)
def _reconstruct(active, l, G, G_bar, p, sign, status, alpha, dpos, identity,
                 kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                 slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf):
    """Gradient of the shrunk variables from G_bar and the free active variables."""
    if active == l:
        return
    n_data = slot_of.shape[0]
    for j in range(active, l):
        G[j] = G_bar[j] + p[j]
    nr_free = 0
    for j in range(active):
        if status[j] == 2:
            nr_free += 1
    if nr_free * l > 2 * active * (l - active):
        for i in range(active, l):
            s = _col_hit(dpos[i], active if identity else n_data, cdata, slot_of, slot_len,
                         lru, clock)
            if s < 0:
                s = _get_col(dpos[i], active if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                             Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                             swaplog, slot_len, lru, clock, ctrl, hbuf)
            ci = cdata[s]
            acc = 0.0
            if identity:
                for j in range(active):
                    if status[j] == 2:
                        acc += alpha[j] * sign[j] * ci[j]
            else:
                for j in range(active):
                    if status[j] == 2:
                        acc += alpha[j] * sign[j] * ci[dpos[j]]
            G[i] += sign[i] * acc
    else:
        for i in range(active):
            if status[i] == 2:
                s = _col_hit(dpos[i], l if identity else n_data, cdata, slot_of, slot_len,
                             lru, clock)
                if s < 0:
                    s = _get_col(dpos[i], l if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                                 Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                                 swaplog, slot_len, lru, clock, ctrl, hbuf)
                ci = cdata[s]
                f = alpha[i] * sign[i]
                _add_col(G, f, sign, ci, dpos, identity, active, l)


@njit(cache=True)
def _swap(i, j, identity, alpha, G, G_bar, p, sign, upper, diag, status, QD, vorig, dpos,
          Xd, Xt, Xptr, xsq, dorig, kcode, slot_of, pairs, n_pairs):
    """Swap variables ``i`` and ``j`` (identity mode: with their data rows and cache keys).
    The cached column entries ``lo = min(i, j)``, ``hi = max(i, j)`` are swapped later, all
    pairs of one shrinking pass at once (:func:`_log_swaps`): ``pairs[n_pairs] = (lo, hi)``;
    returns the new ``n_pairs``."""
    alpha[i], alpha[j] = alpha[j], alpha[i]
    G[i], G[j] = G[j], G[i]
    G_bar[i], G_bar[j] = G_bar[j], G_bar[i]
    p[i], p[j] = p[j], p[i]
    sign[i], sign[j] = sign[j], sign[i]
    upper[i], upper[j] = upper[j], upper[i]
    diag[i], diag[j] = diag[j], diag[i]
    status[i], status[j] = status[j], status[i]
    QD[i], QD[j] = QD[j], QD[i]
    vorig[i], vorig[j] = vorig[j], vorig[i]
    if not identity:
        dpos[i], dpos[j] = dpos[j], dpos[i]
        return n_pairs
    # identity mode: data positions follow the variables
    if kcode == _K_PRE:
        dorig[i], dorig[j] = dorig[j], dorig[i]
    else:
        if Xptr.shape[0] > 0:  # sparse rows: swap the two extents, the nonzeros stay put
            for t in range(2):
                Xptr[i, t], Xptr[j, t] = Xptr[j, t], Xptr[i, t]
        for t in range(Xd.shape[1]):
            Xd[i, t], Xd[j, t] = Xd[j, t], Xd[i, t]
        for t in range(Xt.shape[0]):
            Xt[t, i], Xt[t, j] = Xt[t, j], Xt[t, i]
        xsq[i], xsq[j] = xsq[j], xsq[i]
    si = slot_of[i]
    sj = slot_of[j]
    slot_of[i] = sj
    slot_of[j] = si
    pairs[n_pairs, 0] = min(i, j)
    pairs[n_pairs, 1] = max(i, j)
    return n_pairs + 1


def _log_swaps(pairs, n_pairs, cdata, lru, slot_len, swaplog, clock):  # pragma: no cover
    """Log the swaps of one shrinking pass for the cached columns (:func:`_catch_up`); when the
    log is full, every cached column catches up first and the log starts afresh.  Compiled
    code only (the path of the kind of cache ``cdata`` is, as :func:`_get_col`)."""
    raise NotImplementedError("compiled code only")


@njit(cache=True)
def _catch_up_all(cdata, lru, slot_len, swaplog, clock):
    """Every cached column catches up with the swap log, which then starts afresh."""
    end = lru.shape[1] - 1
    s = lru[1, end]
    while s != end:
        _catch_up(s, cdata[s], slot_len, lru, swaplog, clock)
        lru[2, s] = 0
        s = lru[1, s]


@njit(cache=True)
def _catch_up_block(cdata, lru, slot_len, swaplog, clock):
    """:func:`_catch_up_all` on the block cache (its cached columns: ``slot_len[s] > 0``)."""
    for s in range(slot_len.shape[0]):
        if slot_len[s] > 0:
            _catch_up(s, cdata[s], slot_len, lru, swaplog, clock)
        lru[2, s] = 0


@overload(_log_swaps)
def _log_swaps_impl(pairs, n_pairs, cdata, lru, slot_len, swaplog, clock):
    block = isinstance(cdata, types.Array)

    def impl(pairs, n_pairs, cdata, lru, slot_len, swaplog, clock):
        e = clock[6]
        if e + n_pairs > swaplog.shape[0]:
            if block:
                _catch_up_block(cdata, lru, slot_len, swaplog, clock)
            else:
                _catch_up_all(cdata, lru, slot_len, swaplog, clock)
            e = 0
        for q in range(n_pairs):
            swaplog[e + q, 0] = pairs[q, 0]
            swaplog[e + q, 1] = pairs[q, 1]
        clock[6] = e + n_pairs
    return impl


@njit(cache=True, inline="always")
def _be_shrunk(eq_mode, t, G, sign, status, g1, g2, g3, g4):
    st = status[t]
    if st == 2:
        return False
    if eq_mode == 2:
        if st == 1:
            return -G[t] > g1
        return G[t] > g1
    if eq_mode == 0:
        if st == 1:
            if sign[t] > 0:
                return -G[t] > g1
            return -G[t] > g2
        if sign[t] > 0:
            return G[t] > g2
        return G[t] > g1
    if st == 1:
        if sign[t] > 0:
            return -G[t] > g1
        return -G[t] > g4
    if sign[t] > 0:
        return G[t] > g2
    return G[t] > g3


@njit(cache=True)
def _do_shrinking(eq_mode, active, l, unshrink, tol, G, G_bar, p, sign, status, alpha,
                  upper, dpos, vorig, QD, diag, identity, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq,
                  Kpre, dorig, gamma, coef0, degree, cdata, slot_of, swaplog, slot_len, lru,
                  clock, ctrl, hbuf):
    g1 = -INF
    g2 = -INF
    g3 = -INF
    g4 = -INF
    if eq_mode == 2:
        g1 = 0.0
        for t in range(active):
            if status[t] != 1 and -G[t] > g1:
                g1 = -G[t]
            if status[t] != 0 and G[t] > g1:
                g1 = G[t]
        crit = g1
    elif eq_mode == 0:
        for t in range(active):
            if sign[t] > 0:
                if status[t] != 1:
                    g1 = max(g1, -G[t])
                if status[t] != 0:
                    g2 = max(g2, G[t])
            else:
                if status[t] != 1:
                    g2 = max(g2, -G[t])
                if status[t] != 0:
                    g1 = max(g1, G[t])
        crit = g1 + g2
    else:
        for t in range(active):
            if status[t] != 1:
                if sign[t] > 0:
                    g1 = max(g1, -G[t])
                else:
                    g4 = max(g4, -G[t])
            if status[t] != 0:
                if sign[t] > 0:
                    g2 = max(g2, G[t])
                else:
                    g3 = max(g3, G[t])
        crit = max(g1 + g2, g3 + g4)
    if (not unshrink) and crit <= tol * 10:
        unshrink = True
        _reconstruct(active, l, G, G_bar, p, sign, status, alpha, dpos, identity,
                     kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
                     cdata,
                     slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf)
        active = l
    i = active - active  # 0, typed int64: a literal 0 would compile _swap twice
    pairs = np.empty((active, 2), dtype=np.int64)
    n_pairs = i
    while i < active:
        if _be_shrunk(eq_mode, i, G, sign, status, g1, g2, g3, g4):
            active -= 1
            while active > i:
                if not _be_shrunk(eq_mode, active, G, sign, status, g1, g2, g3, g4):
                    n_pairs = _swap(i, active, identity, alpha, G, G_bar, p, sign, upper, diag,
                                    status, QD, vorig, dpos, Xd, Xt, Xptr, xsq, dorig, kcode,
                                    slot_of, pairs, n_pairs)
                    break
                active -= 1
        i += 1
    if n_pairs > 0:
        _log_swaps(pairs, n_pairs, cdata, lru, slot_len, swaplog, clock)
    return active, unshrink
