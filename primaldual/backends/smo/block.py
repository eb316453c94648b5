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
from .blockinner import _inner, _inner_nu
from .blockops import (
    _compact,
    _gather,
    _grad_update,
    _rbf_rows,
    _scatter,
    _shrink_mask,
    _status,
)
from .blockset import _reconstruct, _select_new, _split, _start_gradient
from .select import _rel_gap, _rho_nu, _rho_one, _violation

__all__ = ["BLOCK_MIN_VAR", "BLOCK_MIN_VAR_NU", "BLOCK_MIN_VAR_SVR", "BLOCK_SIZE", "block_smo",
           "warm"]

#: variables from which an RBF C-SVC on dense rows takes the block route (below: the pair
#: route, whose cache holds enough of the working columns)
BLOCK_MIN_VAR: int = 30_000
#: the same for eps-SVR's ``2N`` variables on ``N`` rows and for nu-SVR's (two equalities)
BLOCK_MIN_VAR_SVR: int = 10_000
BLOCK_MIN_VAR_NU: int = 10_000
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
#: a shrinking epoch of variables on shared data rows (SVR) keeps the cached rows over the
#: data rows as they are while at least this fraction of them stays active (cutting the rows
#: rewrites the whole cache: measured 20-28 ms per epoch at N = 5,000, for rows 1-3% shorter)
KEEP_ROWS: float = 0.9
#: on shared data rows (SVR) the relative gap read from the float32 rows' gradient is driven
#: this far below ``gap_tol`` (at most to half of it): the certificate recomputes the gap with
#: the float64 kernel, which measured 1.03e-5 where the stop was at a target of 1e-5 itself
#: (400 rows; the float32 rows' share of the gap, a few 1e-7, independent of the target)
SHARED_GAP_SLACK: float = 1e-6
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


class _Sub:
    """The active variables' compact problem (gradient, bounds, the data rows they sit on) and
    the block method's state on it: the working set and an LRU cache of kernel rows over the
    active data rows (``buf``: the solve's ``cache_size``, rows of their number's length).

    ``D`` are the active variables' data rows (sorted, each once), ``key_t`` the position of
    variable ``t``'s row in ``D``: a cached row is one data row's kernel against ``D``, shared
    by the variables on that row (eps-SVR's and nu-SVR's ``alpha_i`` and ``alpha*_i``), the
    entry of variables ``j, t`` is ``cache[slot of key_j, key_t]``.  ``ident``: one variable
    per data row in order (``key = 0..m-1``: C-SVC), the gradient update without the key."""

    def __init__(self, A: np.ndarray, X32: np.ndarray, xsq: np.ndarray, dpos: np.ndarray,
                 ident: bool, p: np.ndarray, sign: np.ndarray, upper: np.ndarray,
                 alpha: np.ndarray, G: np.ndarray, q: int, buf: np.ndarray,
                 prev: _Sub | None = None) -> None:
        self.A = A
        self.ident = ident
        if ident:
            self.D = dpos[A]
            self.key = np.arange(A.shape[0])
        else:
            self.D, self.key = np.unique(dpos[A], return_inverse=True)
            if prev is not None and self.D.shape[0] >= KEEP_ROWS * prev.D.shape[0]:
                # few data rows left the active set (a shrunk variable's twin stays active):
                # the rows stay as they are, over prev's data rows, instead of being cut
                self._keep(prev, dpos[A])
                self._state(A, p, sign, upper, alpha, G, q)
                return
        self.X32 = np.ascontiguousarray(X32[self.D])
        self.Xt = np.ascontiguousarray(self.X32.T)
        self.xsq = xsq[self.D]
        r = self.D.shape[0]
        self.n_slots = min(buf.shape[0] // r, r + 64)   # (at most one row per data row)
        self.cache = buf[:self.n_slots * r].reshape(self.n_slots, r)
        self.row_of = np.full(self.n_slots, -1, dtype=np.int64)
        self.slot_of = np.full(r, -1, dtype=np.int64)
        self.stamp = np.full(self.n_slots, -1, dtype=np.int64)
        self.clock = 0
        self._state(A, p, sign, upper, alpha, G, q)
        if prev is not None:   # the rows still valid, cut to the new D (a subset of prev.D)
            keep_pos = np.searchsorted(prev.D, self.D)
            new_of_old = np.full(prev.D.shape[0], -1, dtype=np.int64)
            new_of_old[keep_pos] = np.arange(r)
            rows_ = _compact(buf, prev.D.shape[0], prev.row_of, new_of_old, keep_pos,
                             np.empty(r, dtype=np.float32))
            k = min(rows_.shape[0], self.n_slots)
            self.row_of[:k] = rows_[:k]
            self.slot_of[rows_[:k]] = np.arange(k)
            self.stamp[:k] = np.arange(k)
            self.clock = k

    def _state(self, A: np.ndarray, p: np.ndarray, sign: np.ndarray, upper: np.ndarray,
               alpha: np.ndarray, G: np.ndarray, q: int) -> None:
        """The active variables' vectors and a new working set (of ``q`` at most)."""
        self.p = p[A]
        self.sign = sign[A]
        self.upper = upper[A]
        self.alpha = alpha[A]
        self.G = G[A]
        m = A.shape[0]
        self.q = max(4, min(q - q % 2, 2 * (m // 4), 2 * ((self.n_slots - 64) // 2)))
        self.ws = np.empty(self.q, dtype=np.int64)
        self.ws_slot = np.empty(self.q, dtype=np.int64)
        self.Kw = np.empty((self.q, self.q))   # the working set's block, K[ws, ws]
        self.outer = 0

    def _keep(self, prev: _Sub, rows: np.ndarray) -> None:
        """prev's data rows and row cache, ``key`` the position of each variable's data row
        ``rows_t`` among them."""
        self.D = prev.D
        self.key = np.searchsorted(prev.D, rows)
        self.X32, self.Xt, self.xsq = prev.X32, prev.Xt, prev.xsq
        self.n_slots, self.cache = prev.n_slots, prev.cache
        self.row_of, self.slot_of, self.stamp = prev.row_of, prev.slot_of, prev.stamp
        self.clock = prev.clock

    def fetch(self, w: np.ndarray, pinned: np.ndarray, gamma: float, stats: dict,
              pool: _Pool) -> np.ndarray:
        """The cache slots of the rows of the variables ``w`` (computed on a miss, once per
        data row, into the least recently used slots outside ``pinned``)."""
        u = self.key[w]
        slots = self.slot_of[u]
        miss = slots < 0
        if miss.any():
            mv = u[miss] if self.ident else np.unique(u[miss])
            mark = np.zeros(self.n_slots, dtype=bool)
            mark[pinned] = True
            mark[slots[~miss]] = True
            cand = np.flatnonzero(~mark)
            victims = cand[np.argsort(self.stamp[cand], kind="stable")[:mv.shape[0]]]
            old = self.row_of[victims]
            self.slot_of[old[old >= 0]] = -1
            r = self.D.shape[0]
            pool.rows_into(self.X32[mv], self.xsq[mv], self.Xt, self.xsq, mv, gamma,
                           self.cache, victims)
            self.row_of[victims] = mv
            self.slot_of[mv] = victims
            slots = self.slot_of[u]
            stats["rows"] += mv.shape[0]
            stats["entries"] += mv.shape[0] * r
        self.stamp[slots] = self.clock + np.arange(slots.shape[0])
        self.clock += slots.shape[0]
        return slots

    def grad(self, coef: np.ndarray, pool: _Pool) -> None:
        """``G_t += s_t sum_k coef_k K(ws_k, t)`` on the active variables (``coef`` over the
        working set; by data rows, the coefficients of one row's variables added first)."""
        if self.ident:
            pool.grad(self.G, self.cache, self.ws_slot, coef, self.sign)
            return
        slots, inv = np.unique(self.ws_slot, return_inverse=True)
        c = np.bincount(inv, weights=coef, minlength=slots.shape[0])
        nz = c != 0.0
        H = np.zeros(self.D.shape[0])
        pool.grad(H, self.cache, slots[nz], c[nz], self._ones())
        self.G += self.sign * H[self.key]

    def _ones(self) -> np.ndarray:
        ones = getattr(self, "_ones_v", None)
        if ones is None:
            ones = self._ones_v = np.ones(self.D.shape[0])
        return ones

    def put(self, alpha: np.ndarray, G: np.ndarray) -> None:
        alpha[self.A] = self.alpha
        G[self.A] = self.G


def _block_loop(sub: _Sub, gamma: float, tol: float, steps_left: int, n_outer: int,
                stats: dict, pool: _Pool, nu: bool = False) -> tuple[int, float, bool]:
    """At most ``n_outer`` outer iterations of the block method on ``sub``; returns
    ``(pair steps, violation, converged)`` (``converged``: the violation on ``sub`` is below
    ``tol`` at the start of an iteration).  ``nu``: two equalities, one per sign."""
    eq = 1 if nu else 0
    inner = _inner_nu if nu else _inner
    n = sub.alpha.shape[0]
    q = sub.q
    half = q // 2
    status = np.empty(n, dtype=np.int8)
    kept = np.zeros(n, dtype=bool)
    Kw = sub.Kw
    steps = 0
    gap = INF
    for _ in range(n_outer):
        _status(sub.alpha, sub.upper, status)
        gap = _violation(eq, n, sub.G, sub.sign, status)
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
        t0 = _clock()
        new = _select_new(sub.G, sub.sign, sub.alpha, sub.upper, kept, slots.shape[0], nu)
        pinned = sub.ws_slot[np.setdiff1d(np.arange(q), slots)] if sub.outer else slots[:0]
        sub.ws[slots] = new
        stats["t_select"] += _clock() - t0
        t0 = _clock()
        sub.ws_slot[slots] = sub.fetch(new, pinned, gamma, stats, pool)
        t1 = _clock()
        stats["t_rows"] += t1 - t0
        ws = sub.ws
        cols = ws if sub.ident else sub.key[ws]
        # the block's rows of the new half (all of them at the first iteration); the kept
        # half's rows against the new half are their transpose (the kept x kept part stays)
        lo, hi = int(slots[0]), int(slots[-1]) + 1
        order = np.argsort(cols, kind="stable")
        pool.map(_gather, [(sub.cache, sub.ws_slot, cols, order, Kw, a, b)
                           for a, b in _split(lo, hi, pool.n)])
        if hi - lo < q:
            k0, k1 = (hi, q) if lo == 0 else (0, lo)
            Kw[k0:k1, lo:hi] = Kw[lo:hi, k0:k1].T
        a_w = sub.alpha[ws]
        a_old = a_w.copy()
        G_w = sub.G[ws]
        G_old = G_w.copy()
        t2 = _clock()
        k, _d0 = inner(Kw, sub.sign[ws], a_w, sub.upper[ws], G_w, tol,
                        min(steps_left - steps, 100 * q))
        t3 = _clock()
        stats["t_gather"] += t2 - t1
        stats["t_inner"] += t3 - t2
        steps += k
        sub.outer += 1
        stats["outer"] += 1
        delta = a_w - a_old
        sub.alpha[ws] = a_w
        sub.grad(delta * sub.sign[ws], pool)
        stats["t_grad"] += _clock() - t3
        # the objective's change 1/2 delta^T (G_old + G_new): none for long means a stall
        if not 0.5 * float(delta @ (G_old + G_w)) < 0.0:
            stats["flat"] += 1
        else:
            stats["flat"] = 0
        if stats["flat"] > STALL_OUTER:
            break
    return steps, gap, False


def block_smo(Xt: np.ndarray, xsq: np.ndarray, gamma: float, p: np.ndarray, sign: np.ndarray,
              upper: np.ndarray, alpha: np.ndarray, G: np.ndarray, tol: float, max_iter: int,
              gap_tol: float = 0.0, gap_unit: float = 1.0, q: int | None = None,
              shrinking: bool = True, cache_floats: int = 50 << 20,
              verbose: bool = False, dpos: np.ndarray | None = None,
              nu: bool = False) -> tuple:
    """Solve the RBF dual by the block method (module docstring).

    ``Xt`` is the transposed float32 data (``d x N``), ``xsq`` the squared norms of its rows
    (float64); variable ``t`` sits on data row ``dpos_t`` (default ``t``; eps-SVR and
    nu-SVR: ``t mod N``), ``Q_jt = s_j s_t K(x_{dpos_j}, x_{dpos_t})``; ``nu``: the two
    equalities ``sum_{s_j = +1} a_j``, ``sum_{s_j = -1} a_j`` fixed instead of ``s^T a``.
    ``alpha`` (a feasible start) and ``G`` (output: ``Q a + p``) are updated in place;
    ``cache_floats`` float32 kernel entries are cached (at least ``128 N``: the working set's
    rows are among them).  Returns ``(n_iter, status_code, violation, objective, b, stats)``:
    status 0 optimal, 1 ``max_iter`` pair steps reached, 2 stalled (no decrease of the
    objective in :data:`STALL_OUTER` outer iterations: the caller goes on with the pair
    route); ``stats`` counts the outer iterations, the kernel rows and entries computed (and
    holds LIBSVM's ``r1``, ``r2`` for ``nu``: ``b = -(r1 - r2) / 2``)."""
    n_threads = _n_threads()
    pool = _Pool(n_threads, 1 << 20)
    xsq = np.asarray(xsq).astype(np.float32)   # (the rows' kernel pass runs in float32)
    gamma = np.float32(gamma)
    ident = dpos is None
    dpos = np.arange(alpha.shape[0]) if dpos is None else np.asarray(dpos, dtype=np.int64)
    try:
        with blas_threads(1):
            return _solve(Xt, xsq, gamma, p, sign, upper, alpha, G, tol, max_iter, gap_tol,
                          gap_unit, q, shrinking, cache_floats, verbose, pool, dpos, ident, nu)
    finally:
        pool.close()


def _solve(Xt: np.ndarray, xsq: np.ndarray, gamma: float, p: np.ndarray, sign: np.ndarray,
           upper: np.ndarray, alpha: np.ndarray, G: np.ndarray, tol: float, max_iter: int,
           gap_tol: float, gap_unit: float, q: int | None, shrinking: bool, cache_floats: int,
           verbose: bool, pool: _Pool, dpos: np.ndarray, ident: bool, nu: bool) -> tuple:
    """:func:`block_smo` with its threads."""
    n = alpha.shape[0]
    eq = 1 if nu else 0
    q = int(BLOCK_SIZE if q is None else q)
    X32 = np.ascontiguousarray(Xt.T)
    n_data = X32.shape[0]
    sign = np.ascontiguousarray(sign, dtype=np.float64)
    status = np.empty(n, dtype=np.int8)
    rows = np.empty(max(int(cache_floats), 128 * n_data), dtype=np.float32)   # the row cache
    q = max(4, min(q, rows.shape[0] // n_data - 64))
    stats: dict[str, Any] = {
        "outer": 0, "rows": 0, "entries": 0, "rec": 0, "flat": 0, "shrunk": 0, "rebuilt": 0,
        "t_rows": 0.0, "t_gather": 0.0, "t_inner": 0.0, "t_grad": 0.0, "t_rec": 0.0,
        "t_select": 0.0, "t_total": _clock()}
    _start_gradient(X32, Xt, xsq, dpos, gamma, p, sign, alpha, G, q, rows, stats, pool)
    if not ident and gap_tol > 0.0:
        gap_tol = max(gap_tol - SHARED_GAP_SLACK, 0.5 * gap_tol)
    tol0 = float(tol)
    tol_min = tol0 * 1e-4
    it = 0
    code = 0
    epochs: list = []
    unshrunk = not shrinking or not UNSHRINK
    all_idx = np.arange(n)

    def whole() -> _Sub:
        return _Sub(all_idx, X32, xsq, dpos, ident, p, sign, upper, alpha, G, q, rows)

    def rebuild() -> _Sub:
        t0 = _clock()
        _reconstruct(epochs, X32, xsq, dpos, gamma, sign, alpha, G, q, rows, stats, pool)
        stats["t_rec"] += _clock() - t0
        epochs.clear()
        stats["rebuilt"] += 1
        return whole()

    sub = whole()
    while True:
        chasing = tol < tol0
        k, gap, done = _block_loop(sub, gamma, tol, max_iter - it, SHRINK_EVERY, stats,
                                   pool, nu)
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
            sub = rebuild()
            continue
        if done or chasing:
            _status(alpha, upper, status)
            gap = _violation(eq, n, G, sign, status)
            if not gap >= tol:   # every variable active: LIBSVM's rule holds at tol
                if gap_tol <= 0.0 or tol <= tol_min or _rel_gap(
                        eq, n, G, p, alpha, upper, sign, status, gap_unit) <= gap_tol:
                    break
                tol *= 0.1          # (no shrinking from here on: the gap needs every G_j)
                continue
            if chasing and gap < tol0 and _rel_gap(
                    eq, n, G, p, alpha, upper, sign, status, gap_unit) <= gap_tol:
                break
            continue
        # ---- shrinking (LIBSVM's rule, on the active variables) ----
        mask = np.zeros(sub.A.shape[0], dtype=np.bool_)
        g12 = _shrink_mask(sub.G, sub.sign, sub.alpha, sub.upper, mask, nu)
        if not unshrunk and g12 <= 10.0 * tol:
            unshrunk = True     # near the end: every gradient up to date once (LIBSVM)
            if epochs:
                sub = rebuild()
            continue
        if shrinking and mask.sum() >= max(q, sub.A.shape[0] // SHRINK_FRACTION) and \
                sub.A.shape[0] - mask.sum() >= 4 * q:
            epochs.append((sub.A[mask], alpha.copy()))
            stats["shrunk"] += int(mask.sum())
            sub = _Sub(sub.A[~mask], X32, xsq, dpos, ident, p, sign, upper, alpha, G, q, rows,
                       sub)
        if verbose:
            print("block smo outer", stats["outer"], "steps", it, "violation", gap, "active",
                  sub.A.shape[0])
    _status(alpha, upper, status)
    gap = _violation(eq, n, G, sign, status)
    obj = 0.5 * float(alpha @ (G + p))
    if nu:
        r1, r2 = _rho_nu(n, G, sign, status)
        stats["r1"], stats["r2"] = float(r1), float(r2)
        b = -(r1 - r2) / 2.0
    else:
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
    Xt = np.ascontiguousarray(X.T)
    block_smo(Xt, xsq, 0.5, -np.ones(64), y, np.ones(64), np.zeros(64), np.empty(64), 1e-3,
              10_000, gap_tol=1e-3, q=8)
    # (the two-variables-per-row form and the nu passes: SVR's layout on the same rows)
    z = np.sin(np.arange(64.0))
    s2 = np.concatenate([np.ones(64), -np.ones(64)])
    d2 = np.concatenate([np.arange(64), np.arange(64)])
    a0 = np.full(128, 0.25)
    block_smo(Xt, xsq, 0.5, np.concatenate([-z, z]), s2, np.ones(128), a0, np.empty(128),
              1e-3, 10_000, gap_tol=1e-3, q=8, dpos=d2, nu=True)
