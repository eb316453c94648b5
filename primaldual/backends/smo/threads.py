"""Kernel columns shared with helper threads (the compiled SMO core's parallel part): the
``ctrl`` array's layout, atomic and futex intrinsics, the solver's side
(:func:`_kcol_shared`, :func:`_kcol_adaptive`), the helpers' loop (:func:`_column_worker`)
and the Python context that starts and stops them (:func:`column_helpers`)."""

from __future__ import annotations

import os
import platform
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .codes import _K_PRE
from .columns import _kcol
from .stamp import tie

# --------------------------------------------------------------------------------------
# kernel columns shared with helper threads
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


tie(globals())  # one cache stamp for the core's files (smo/stamp.py)
