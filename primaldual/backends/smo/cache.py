"""The kernel-column cache of the compiled SMO core: the list cache (LRU-2 within a budget of
float32 entries) and the block cache (every whole column fits), their column requests
(:func:`_get_col`, :func:`_col_hit`, :func:`_new_col_whole`) and the lazily applied log of
shrinking's swaps (:func:`_log_swaps`)."""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .codes import _K_PRE
from .columns import _kcol
from .stamp import tie
from .threads import _C_MIN, _C_NHELP, _C_TIME, _kcol_adaptive, _now_ns


# --------------------------------------------------------------------------------------
# the solver state lives in a handful of arrays; helpers take them explicitly
# --------------------------------------------------------------------------------------
# The kernel cache (LIBSVM's policy).  Every data position ``r`` owns one slot
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


# The block cache (small problems): when every whole column fits in the budget
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

    :func:`_smo_loop` asks this before :func:`_get_col`: a small call whose array
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
    iris pairs (100 rows) than the column's own work."""
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


tie(globals())  # one cache stamp for the core's files (smo/stamp.py)
