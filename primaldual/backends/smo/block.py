r"""Block working-set SMO for large one-equality RBF duals (C-SVC on dense rows).

The problem is :func:`primaldual.backends.smo.solver.smo_solve`'s with one equality::

    min_a 1/2 a^T Q a + p^T a,  Q_jk = s_j s_k K(x_j, x_k),  0 <= a_j <= u_j,  s^T a = const.

LIBSVM's SMO moves one pair per iteration and reads two kernel columns of length ``N`` for it:
past the column cache (200 MB holds 650 columns of ``N = 80,000``) nearly every iteration
computes a column, one matrix-vector product at a time.  The block method (Joachims' SVMlight
decomposition, the form ThunderSVM and oneDAL's "thunder" solver run) spends the kernel work in
matrix products instead:

1. select a working set ``W`` of ``q`` variables: the ``q/2`` of the previous outer iteration
   whose rows were computed last are kept, the other half is replaced by the most violating
   variables outside them, taken alternately from the top of ``I_up`` (largest ``-s_j G_j``)
   and of ``I_low`` (largest ``s_j G_j``), LIBSVM's two index sets;
2. take the kernel rows of the new half, ``K[W_new, A]``, from an LRU cache of rows (the
   solve's ``cache_size``), the missing ones as float32 matrix products (BLAS on one thread
   per caller, the rows split among one thread per CPU) followed by one vectorised float32
   pass of ``exp`` (:mod:`primaldual.backends.smo.blockops`);
3. solve the sub-problem on ``W`` (the other variables fixed) by LIBSVM's SMO with
   second-order working-set selection on the cached ``q x q`` block, from the local violation
   ``d0`` down to ``max(tol, d0 / 10)``;
4. update the gradient of the active variables ``A`` with the ``q`` rows,
   ``G_A += s_A * (K[W, A]^T (s_W * (a_W^new - a_W^old)))`` (accumulated in float64).

Every 10 outer iterations LIBSVM's shrinking test removes from ``A`` the variables at a bound
whose gradient lies beyond the maximal violating pair (the cached rows are cut to the new
``A``, so that shorter rows fit more of them); each such epoch keeps a copy of ``a``, and when
the active problem is solved the shrunk gradients are brought up to date at once,
``G_t += s_t sum_j (a_j - a_e,j) s_j K_jt`` for the variables ``t`` of epoch ``e``, by the rows
of the moved variables against every shrunk one; then every variable is active again and the
stopping test is read on all of them.

The outer loop stops by LIBSVM's rule on the whole gradient, ``m(a) - M(a) < tol``, and then,
like the pair route, on the relative duality gap read from the gradient (the violating-pair
tolerance divided by 10, at most 4 times, while it exceeds ``gap_tol``).  Since ``G`` is
updated exactly from the moves of ``a``, the stopping test, the bias and the certificate are
those of the pair route.  The kernel values are those of the data rounded to float32 (as in the
pair route's transposed columns), their dot products and distances in float32 (a relative
change of the kernel of ~1e-7 to 1e-6, the size of the float32 cache's own rounding; measured
duals within 3e-8 of the pair route's and LIBSVM's, tests/backends/test_smo_block.py).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ...kernels.gram import blas_threads
from .blockops import (
    _compact,
    _gather,
    _grad_update,
    _inner,
    _rbf_rows,
    _scatter,
    _shrink_mask,
    _status,
)
from .select import _rel_gap, _rho_one, _violation

__all__ = ["BLOCK_MIN_VAR", "BLOCK_SIZE", "block_smo", "warm"]

#: variables from which an RBF C-SVC on dense rows takes the block route (below: the pair
#: route, whose cache holds enough of the working columns)
BLOCK_MIN_VAR: int = 30_000
#: the working set's size ``q`` (each outer iteration computes ``q/2`` new kernel rows)
BLOCK_SIZE: int = 512
#: outer iterations without a decrease of the objective after which the block route gives up
#: (the caller continues with the pair route from the current point)
STALL_OUTER: int = 50
#: LIBSVM's unshrinking: every gradient brought up to date once when the active set's
#: violation first falls below ``10 tol`` (besides the reconstruction at the end).  Off:
#: measured at N = 80,000 (d = 20, C = 1, gamma = 1/d), 3.4e9 kernel entries instead of
#: 3.8e9 and 7% less CPU time (a reconstruction costs the moved rows against every shrunk
#: variable, ~4.6e8 entries there)
UNSHRINK: bool = False
#: outer iterations between two shrinking tests, and the active set's fraction (``1 / this``)
#: a shrinking epoch removes at least (a new epoch repacks the row cache)
SHRINK_EVERY: int = 10
SHRINK_FRACTION: int = 20
#: threads at most (one per CPU of the affinity set)
MAX_THREADS: int = 4

INF = np.inf

_clock = time.perf_counter


def _n_threads() -> int:
    """Threads for the kernel rows and the gradient update: the CPUs of the affinity set, at
    most :data:`MAX_THREADS`."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        n = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, n))


class _Pool:
    """The block method's threads: the kernel rows of a set of variables and the gradient
    update split among them (numpy's product and the compiled passes release the GIL; BLAS
    itself on one thread per caller)."""

    def __init__(self, n_threads: int, chunk_floats: int) -> None:
        self.n = n_threads
        self.ex = ThreadPoolExecutor(n_threads) if n_threads > 1 else None
        self.bufs = [np.empty(chunk_floats, dtype=np.float32) for _ in range(n_threads)]

    def close(self) -> None:
        if self.ex is not None:
            self.ex.shutdown()

    def map(self, fn: Any, jobs: list) -> None:
        if self.ex is None or len(jobs) < 2:
            for j in jobs:
                fn(*j)
            return
        for f in [self.ex.submit(fn, *j) for j in jobs]:
            f.result()

    def rows_into(self, Xw: np.ndarray, xsq_w: np.ndarray, Xt: np.ndarray, xsq: np.ndarray,
                  diag: np.ndarray, gamma: float, rows: np.ndarray, slots: np.ndarray) -> None:
        """``rows[slots_k]`` = the RBF kernel row of ``Xw[k]`` against the columns ``Xt``."""
        m = Xt.shape[1]
        c = max(1, self.bufs[0].shape[0] // m)
        R = Xw.shape[0]
        per = -(-R // self.n)
        jobs = [(b, lo, min(R, lo + per)) for b, lo in enumerate(range(0, R, per))]

        def run(b: int, lo: int, hi: int) -> None:
            buf = self.bufs[b]
            for a in range(lo, hi, c):
                e = min(hi, a + c)
                part = buf[:(e - a) * m].reshape(e - a, m)
                np.dot(Xw[a:e], Xt, out=part)
                _rbf_rows(part, xsq_w[a:e], xsq, diag[a:e], gamma)
                _scatter(rows, slots[a:e], part)

        self.map(run, jobs)

    def grad(self, G: np.ndarray, rows: np.ndarray, slots: np.ndarray, coef: np.ndarray,
             sign: np.ndarray) -> None:
        """:func:`_grad_update` on every ``t``, the range split among the threads."""
        n = G.shape[0]
        per = -(-n // self.n)
        self.map(_grad_update, [(G, rows, slots, coef, sign, lo, min(n, lo + per))
                                for lo in range(0, n, per)])


def _select_new(G: np.ndarray, sign: np.ndarray, alpha: np.ndarray, upper: np.ndarray,
                kept: np.ndarray, m: int) -> np.ndarray:
    """``m`` variables outside ``kept`` (a mask), alternately the next most violating of
    ``I_up`` (largest ``-s G``) and of ``I_low`` (largest ``s G``), each once."""
    yG = sign * G
    pos = sign > 0
    up = np.where(pos, alpha < upper, alpha > 0.0) & ~kept
    low = np.where(pos, alpha > 0.0, alpha < upper) & ~kept
    vup = np.where(up, -yG, -INF)
    vlow = np.where(low, yG, -INF)
    k = min(m, vup.shape[0] - 1)
    sides = []          # [order by violation, values, position reached] of I_up, I_low
    for v in (vup, vlow):
        top = np.argpartition(-v, k)[:k]
        sides.append([top[np.argsort(-v[top], kind="stable")], v, 0])
    out = np.empty(m, dtype=np.int64)
    taken: set[int] = set()
    n = 0
    while n < m:
        moved = False
        for side in sides:
            if n == m:
                break
            top, v, i = side
            while i < k and (top[i] in taken or v[top[i]] == -INF):
                i += 1
            side[2] = i
            if i < k:
                out[n] = top[i]
                taken.add(int(top[i]))
                n += 1
                moved = True
        if not moved:   # (every variable is in I_up or I_low: not reached for N >= 2 q)
            rest = np.flatnonzero(~kept)
            rest = rest[~np.isin(rest, out[:n])]
            out[n:] = rest[:m - n]
            break
    return out


class _Sub:
    """The active variables' compact problem (rows of the data, gradient, bounds) and the
    block method's state on it: the working set and an LRU cache of kernel rows over the
    active variables (``buf``: the solve's ``cache_size``, rows of the active set's length)."""

    def __init__(self, A: np.ndarray, X32: np.ndarray, xsq: np.ndarray, p: np.ndarray,
                 sign: np.ndarray, upper: np.ndarray, alpha: np.ndarray, G: np.ndarray,
                 q: int, buf: np.ndarray, prev: _Sub | None = None,
                 keep: np.ndarray | None = None) -> None:
        self.A = A
        self.X32 = np.ascontiguousarray(X32[A])
        self.Xt = np.ascontiguousarray(self.X32.T)
        self.xsq = xsq[A]
        self.p = p[A]
        self.sign = sign[A]
        self.upper = upper[A]
        self.alpha = alpha[A]
        self.G = G[A]
        m = A.shape[0]
        self.n_slots = min(buf.shape[0] // m, m + 64)   # (at most one row per variable)
        self.q = max(4, min(q - q % 2, 2 * (m // 4), 2 * ((self.n_slots - 64) // 2)))
        self.cache = buf[:self.n_slots * m].reshape(self.n_slots, m)
        self.var_of = np.full(self.n_slots, -1, dtype=np.int64)
        self.slot_of = np.full(m, -1, dtype=np.int64)
        self.stamp = np.full(self.n_slots, -1, dtype=np.int64)
        self.clock = 0
        self.ws = np.empty(self.q, dtype=np.int64)
        self.ws_slot = np.empty(self.q, dtype=np.int64)
        self.outer = 0
        if prev is not None and keep is not None:   # the rows still valid, cut to A
            new_of_old = np.full(prev.A.shape[0], -1, dtype=np.int64)
            keep_pos = np.flatnonzero(keep)
            new_of_old[keep_pos] = np.arange(m)
            vars_ = _compact(buf, prev.A.shape[0], prev.var_of, new_of_old, keep_pos,
                             np.empty(m, dtype=np.float32))
            k = min(vars_.shape[0], self.n_slots)
            self.var_of[:k] = vars_[:k]
            self.slot_of[vars_[:k]] = np.arange(k)
            self.stamp[:k] = np.arange(k)
            self.clock = k

    def fetch(self, w: np.ndarray, pinned: np.ndarray, gamma: float, stats: dict,
              pool: _Pool) -> np.ndarray:
        """The cache slots of the rows of ``w`` (computed on a miss, into the least recently
        used slots outside ``pinned``)."""
        slots = self.slot_of[w]
        miss = slots < 0
        if miss.any():
            mv = w[miss]
            mark = np.zeros(self.n_slots, dtype=bool)
            mark[pinned] = True
            mark[slots[~miss]] = True
            cand = np.flatnonzero(~mark)
            victims = cand[np.argsort(self.stamp[cand], kind="stable")[:mv.shape[0]]]
            old = self.var_of[victims]
            self.slot_of[old[old >= 0]] = -1
            m = self.A.shape[0]
            pool.rows_into(self.X32[mv], self.xsq[mv], self.Xt, self.xsq, mv, gamma,
                           self.cache, victims)
            self.var_of[victims] = mv
            self.slot_of[mv] = victims
            slots[miss] = victims
            stats["rows"] += mv.shape[0]
            stats["entries"] += mv.shape[0] * m
        self.stamp[slots] = self.clock + np.arange(slots.shape[0])
        self.clock += slots.shape[0]
        return slots

    def put(self, alpha: np.ndarray, G: np.ndarray) -> None:
        alpha[self.A] = self.alpha
        G[self.A] = self.G


def _block_loop(sub: _Sub, gamma: float, tol: float, steps_left: int, n_outer: int,
                stats: dict, pool: _Pool) -> tuple[int, float, bool]:
    """At most ``n_outer`` outer iterations of the block method on ``sub``; returns
    ``(pair steps, violation, converged)`` (``converged``: the violation on ``sub`` is below
    ``tol`` at the start of an iteration)."""
    n = sub.alpha.shape[0]
    q = sub.q
    half = q // 2
    status = np.empty(n, dtype=np.int8)
    kept = np.zeros(n, dtype=bool)
    Kw = np.empty((q, q))
    steps = 0
    gap = INF
    for _ in range(n_outer):
        _status(sub.alpha, sub.upper, status)
        gap = _violation(0, n, sub.G, sub.sign, status)
        if not gap >= tol:
            return steps, gap, True
        if steps >= steps_left:
            break
        if sub.outer == 0:
            slots = np.arange(q)
        else:
            slots = np.arange(half) if sub.outer % 2 == 1 else np.arange(half, q)
            kept[:] = False
            kept[sub.ws[np.setdiff1d(np.arange(q), slots)]] = True
        new = _select_new(sub.G, sub.sign, sub.alpha, sub.upper, kept, slots.shape[0])
        pinned = sub.ws_slot[np.setdiff1d(np.arange(q), slots)] if sub.outer else slots[:0]
        sub.ws[slots] = new
        t0 = _clock()
        sub.ws_slot[slots] = sub.fetch(new, pinned, gamma, stats, pool)
        t1 = _clock()
        stats["t_rows"] += t1 - t0
        ws = sub.ws
        pool.map(_gather, [(sub.cache, sub.ws_slot, ws, Kw, a, b)
                           for a, b in _split(0, q, pool.n)])
        a_w = sub.alpha[ws]
        a_old = a_w.copy()
        G_w = sub.G[ws]
        G_old = G_w.copy()
        t2 = _clock()
        k, _d0 = _inner(Kw, sub.sign[ws], a_w, sub.upper[ws], G_w, tol,
                        min(steps_left - steps, 100 * q))
        t3 = _clock()
        stats["t_gather"] += t2 - t1
        stats["t_inner"] += t3 - t2
        steps += k
        sub.outer += 1
        stats["outer"] += 1
        delta = a_w - a_old
        sub.alpha[ws] = a_w
        pool.grad(sub.G, sub.cache, sub.ws_slot, delta * sub.sign[ws], sub.sign)
        stats["t_grad"] += _clock() - t3
        # the objective's change 1/2 delta^T (G_old + G_new): none for long means a stall
        if not 0.5 * float(delta @ (G_old + G_w)) < 0.0:
            stats["flat"] += 1
        else:
            stats["flat"] = 0
        if stats["flat"] > STALL_OUTER:
            break
    return steps, gap, False


def _reconstruct(epochs: list, X32: np.ndarray, xsq: np.ndarray, gamma: float,
                 sign: np.ndarray, alpha: np.ndarray, G: np.ndarray, q: int, rows: np.ndarray,
                 stats: dict, pool: _Pool) -> None:
    """The gradient of the shrunk variables brought up to date: the variables of epoch ``e``
    (shrunk when ``a`` was ``a_e``) receive ``s_t sum_j (a_j - a_e,j) s_j K_jt``, the kernel
    rows of the moved variables computed once, in blocks of ``q``, against every shrunk one."""
    idx = np.concatenate([S for S, _ in epochs])
    cuts = np.cumsum([0] + [S.shape[0] for S, _ in epochs])
    diffs = [(alpha - snap) * sign for _, snap in epochs]
    moved = np.flatnonzero(np.any(np.stack(diffs) != 0.0, axis=0))
    m = idx.shape[0]
    XtI = np.ascontiguousarray(X32[idx].T)
    xsqI = xsq[idx]
    signI = sign[idx]
    GI = G[idx]
    q = max(1, min(q, rows.shape[0] // m))
    buf = rows[:q * m].reshape(q, m)
    # (the rows of X[moved] against X[idx] hold no diagonal entry: every moved variable is
    # active, every one of idx shrunk)
    no_diag = np.full(q, -1, dtype=np.int64)
    for lo in range(0, moved.shape[0], q):
        w = moved[lo:lo + q]
        k = np.arange(w.shape[0])
        pool.rows_into(X32[w], xsq[w], XtI, xsqI, no_diag, gamma, buf, k)
        stats["entries"] += w.shape[0] * m
        stats["rec"] += w.shape[0] * m
        for e in range(len(epochs)):
            coef = diffs[e][w]
            if np.any(coef):
                pool.map(_grad_update, [(GI, buf, k, coef, signI, int(a), int(b)) for a, b in
                                        _split(int(cuts[e]), int(cuts[e + 1]), pool.n)])
    G[idx] = GI


def _split(lo: int, hi: int, n: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` in ``n`` nearly equal ranges (the empty ones left out)."""
    per = max(1, -(-(hi - lo) // n))
    return [(a, min(hi, a + per)) for a in range(lo, hi, per)]


def block_smo(Xt: np.ndarray, xsq: np.ndarray, gamma: float, p: np.ndarray, sign: np.ndarray,
              upper: np.ndarray, alpha: np.ndarray, G: np.ndarray, tol: float, max_iter: int,
              gap_tol: float = 0.0, gap_unit: float = 1.0, q: int | None = None,
              shrinking: bool = True, cache_floats: int = 50 << 20,
              verbose: bool = False) -> tuple:
    """Solve the one-equality RBF dual by the block method (module docstring).

    ``Xt`` is the transposed float32 data (``d x N``), ``xsq`` the squared norms of its rows
    (float64); ``alpha`` (a feasible start) and ``G`` (output: ``Q a + p``) are updated in
    place; ``cache_floats`` float32 kernel entries are cached (at least ``128 N``: the
    working set's rows are among them).  Returns ``(n_iter, status_code, violation,
    objective, b, stats)``: status 0
    optimal, 1 ``max_iter`` pair steps reached, 2 stalled (no decrease of the objective in
    :data:`STALL_OUTER` outer iterations: the caller goes on with the pair route);
    ``stats`` counts the outer iterations, the kernel rows and entries computed."""
    n_threads = _n_threads()
    pool = _Pool(n_threads, 1 << 20)
    xsq = np.asarray(xsq).astype(np.float32)   # (the rows' kernel pass runs in float32)
    gamma = np.float32(gamma)
    try:
        with blas_threads(1):
            return _solve(Xt, xsq, gamma, p, sign, upper, alpha, G, tol, max_iter, gap_tol,
                          gap_unit, q, shrinking, cache_floats, verbose, pool)
    finally:
        pool.close()


def _solve(Xt: np.ndarray, xsq: np.ndarray, gamma: float, p: np.ndarray, sign: np.ndarray,
           upper: np.ndarray, alpha: np.ndarray, G: np.ndarray, tol: float, max_iter: int,
           gap_tol: float, gap_unit: float, q: int | None, shrinking: bool, cache_floats: int,
           verbose: bool, pool: _Pool) -> tuple:
    """:func:`block_smo` with its threads."""
    n = alpha.shape[0]
    q = int(BLOCK_SIZE if q is None else q)
    X32 = np.ascontiguousarray(Xt.T)
    sign = np.ascontiguousarray(sign, dtype=np.float64)
    status = np.empty(n, dtype=np.int8)
    rows = np.empty(max(int(cache_floats), 128 * n), dtype=np.float32)   # the row cache
    q = max(4, min(q, rows.shape[0] // n - 64))
    stats = {"outer": 0, "rows": 0, "entries": 0, "rec": 0, "flat": 0, "shrunk": 0,
             "rebuilt": 0, "t_rows": 0.0, "t_gather": 0.0, "t_inner": 0.0, "t_grad": 0.0,
             "t_total": _clock()}
    # ---- the gradient at the start: G = p + Q a, in blocks of q rows ----
    G[:] = p
    nz = np.flatnonzero(alpha)
    r2 = rows[:q * n].reshape(q, n)
    for lo in range(0, nz.shape[0], q):
        w = nz[lo:lo + q]
        k = np.arange(w.shape[0])
        pool.rows_into(X32[w], xsq[w], Xt, xsq, w, gamma, r2, k)
        stats["entries"] += w.shape[0] * n
        pool.grad(G, r2, k, alpha[w] * sign[w], sign)
    tol0 = float(tol)
    tol_min = tol0 * 1e-4
    it = 0
    code = 0
    epochs: list = []
    unshrunk = not shrinking or not UNSHRINK
    all_idx = np.arange(n)
    sub = _Sub(all_idx, X32, xsq, p, sign, upper, alpha, G, q, rows)
    shrink_every = SHRINK_EVERY
    while True:
        chasing = tol < tol0
        k, gap, done = _block_loop(sub, gamma, tol, max_iter - it, shrink_every, stats,
                                   pool)
        it += k
        sub.put(alpha, G)
        if stats["flat"] > STALL_OUTER:
            code = 2
            break
        if not done and it >= max_iter:
            code = 1
            break
        if done and epochs:
            # the active set is solved: every gradient up to date, then all variables again
            _reconstruct(epochs, X32, xsq, gamma, sign, alpha, G, q, rows, stats, pool)
            epochs = []
            stats["rebuilt"] += 1
            sub = _Sub(all_idx, X32, xsq, p, sign, upper, alpha, G, q, rows)
            continue
        if done or chasing:
            _status(alpha, upper, status)
            gap = _violation(0, n, G, sign, status)
            if not gap >= tol:   # every variable active: LIBSVM's rule holds at tol
                if gap_tol <= 0.0 or tol <= tol_min or _rel_gap(
                        0, n, G, p, alpha, upper, sign, status, gap_unit) <= gap_tol:
                    break
                tol *= 0.1          # (no shrinking from here on: the gap needs every G_j)
                continue
            if chasing and gap < tol0 and _rel_gap(
                    0, n, G, p, alpha, upper, sign, status, gap_unit) <= gap_tol:
                break
            continue
        # ---- shrinking (LIBSVM's rule, on the active variables) ----
        mask = np.zeros(sub.A.shape[0], dtype=np.bool_)
        g12 = _shrink_mask(sub.G, sub.sign, sub.alpha, sub.upper, mask)
        if not unshrunk and g12 <= 10.0 * tol:
            unshrunk = True     # near the end: every gradient up to date once (LIBSVM)
            if epochs:
                _reconstruct(epochs, X32, xsq, gamma, sign, alpha, G, q, rows, stats, pool)
                epochs = []
                stats["rebuilt"] += 1
                sub = _Sub(all_idx, X32, xsq, p, sign, upper, alpha, G, q, rows)
            continue
        if shrinking and mask.sum() >= max(q, sub.A.shape[0] // SHRINK_FRACTION) and \
                sub.A.shape[0] - mask.sum() >= 4 * q:
            epochs.append((sub.A[mask], alpha.copy()))
            stats["shrunk"] += int(mask.sum())
            sub = _Sub(sub.A[~mask], X32, xsq, p, sign, upper, alpha, G, q, rows, sub, ~mask)
        if verbose:
            print("block smo outer", stats["outer"], "steps", it, "violation", gap, "active",
                  sub.A.shape[0])
    _status(alpha, upper, status)
    gap = _violation(0, n, G, sign, status)
    obj = 0.5 * float(alpha @ (G + p))
    b = -_rho_one(n, G, sign, status)
    stats["t_total"] = _clock() - stats["t_total"]
    if verbose:
        print("block smo done: steps", it, "violation", gap, "objective", obj, stats)
    return it, code, gap, obj, b, stats


_WARM: list[bool] = []


def warm() -> None:
    """Compile (or load from numba's cache) the block route's passes on a tiny problem (once
    per process)."""
    if _WARM:
        return
    _WARM.append(True)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 3)).astype(np.float32)
    y = np.where(np.arange(64) % 2 == 0, 1.0, -1.0)
    xsq = (X.astype(np.float64) ** 2).sum(axis=1)
    block_smo(np.ascontiguousarray(X.T), xsq, 0.5, -np.ones(64), y, np.ones(64), np.zeros(64),
              np.empty(64), 1e-3, 10_000, gap_tol=1e-3, q=8)
