"""The compiled loops of the pairs route: dual coordinate descent on a box QP whose ``Q`` is a
kernel over combinations of data rows, with the scores ``f = K B a`` kept instead of ``Q``.

The box QP is ``min 1/2 a^T Q a + p^T a`` s.t. ``0 <= a <= C`` with ``Q = B^T K B + diag(dg)``,
``B`` sparse ``N x n`` (CSC: the rows ``r`` and values ``v`` of column ``j``; a ranking SVM's
pair ``(i, j)`` is ``v = (+1, -1)`` on rows ``(i, j)``). With ``f = K B a`` (``N`` numbers)
the gradient of variable ``j`` is

    ``G_j = p_j + dg_j a_j + sum_k v_k f[r_k]``      (O(nnz of column j)),

its exact 1-D minimiser on the box is ``a_j <- clip(a_j - G_j / Q_jj, 0, C_j)`` with
``Q_jj = sum_{k,l} v_k v_l K[r_k, r_l] + dg_j``, and the step ``delta`` changes ``f`` by
``delta sum_k v_k K[:, r_k]``: one kernel row per entry of the column, O(N) from a bounded
cache of rows (least recently used slot replaced), O(N d) when computed. Memory:
``O(N + nnz(B) + cache)``; neither ``Q`` (``n x n``) nor a factor of ``K`` is ever formed.

The variables are grouped by the rows they share (a query's pairs: ``R``, 20 rows). A visit
of a group sweeps its variables on the group's own scores ``f_R`` (kept exactly with the
``|R| x |R|`` block ``K_RR``), up to :data:`INNER_SWEEPS` times, and only then adds
``K[:, R] u`` to ``f`` (``u`` the change of ``B a`` on ``R``): ``|R|`` kernel rows per visit
instead of two per step. The passes are LIBLINEAR's ``solve_l2r_l1l2_svc`` (Hsieh et al.,
ICML 2008) over the groups: a random order (the groups whose rows are cached first, so a cache
smaller than ``N`` rows is not swept at random), a random order within each group, and
shrinking of variables at a bound whose gradient points out of the box beyond the last pass's
projected-gradient range, until that range is below ``eps`` on all variables.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...kernels.compiled import kernel_row as compiled_row
from ..linear.core import projected_gradient, shrink_bounds

#: kernel codes (those of :class:`primaldual.kernels.functions.KernelSpec`) and the
#: precomputed Gram matrix (a kernel compiled code cannot evaluate: rows read from ``Kpre``)
K_LINEAR, K_RBF, K_POLY, K_SIGMOID, K_PRE = 0, 1, 2, 3, 4


@njit(cache=True, inline="always")
def _kfun(code, dot, x2, z2, gamma, coef0, degree):
    if code == K_LINEAR:
        return dot
    if code == K_RBF:
        return math.exp(-gamma * max(x2 + z2 - 2.0 * dot, 0.0))
    if code == K_POLY:
        return (gamma * dot + coef0) ** degree
    return math.tanh(gamma * dot + coef0)


@njit(cache=True)
def kval(code, X, xsq, Kpre, r, s, gamma, coef0, degree):
    """``k(x_r, x_s)``."""
    if code == K_PRE:
        return Kpre[r, s]
    dot = 0.0
    for t in range(X.shape[1]):
        dot += X[r, t] * X[s, t]
    return _kfun(code, dot, xsq[r], xsq[s], gamma, coef0, degree)


@njit(cache=True)
def kernel_row(code, X, XT, xsq, Kpre, r, out, gamma, coef0, degree):
    """``out[:] = K[r, :]`` (``N`` kernel values, O(N d); ``XT`` the rows transposed)."""
    if code == K_PRE:
        for c in range(out.shape[0]):
            out[c] = Kpre[r, c]
        return
    compiled_row(code, XT, xsq, r, out, gamma, coef0, degree)


@njit(cache=True)
def q_diagonal(code, X, xsq, Kpre, indptr, rows, vals, dg, gamma, coef0, degree):
    """``Q_jj = sum_{k,l} v_k v_l K[r_k, r_l] + dg_j`` of every variable."""
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for j in range(n):
        q = dg[j]
        for k in range(indptr[j], indptr[j + 1]):
            for m in range(indptr[j], indptr[j + 1]):
                q += vals[k] * vals[m] * kval(code, X, xsq, Kpre, rows[k], rows[m], gamma,
                                              coef0, degree)
        out[j] = q
    return out


@njit(cache=True)
def _slot(r, code, X, XT, xsq, Kpre, gamma, coef0, degree, cache, slot_of, owner, stamp, state):
    """The cache slot holding ``K[r, :]`` (computed into the least recently used slot on a
    miss). ``state = [clock, slots used, hits, misses]``."""
    state[0] += 1
    s = slot_of[r]
    if s >= 0:
        stamp[s] = state[0]
        state[2] += 1
        return s
    state[3] += 1
    if state[1] < cache.shape[0]:
        s = state[1]
        state[1] += 1
    else:
        s = 0
        for t in range(1, cache.shape[0]):
            if stamp[t] < stamp[s]:
                s = t
        slot_of[owner[s]] = -1
    kernel_row(code, X, XT, xsq, Kpre, r, cache[s], gamma, coef0, degree)
    slot_of[r] = s
    owner[s] = r
    stamp[s] = state[0]
    return s


@njit(cache=True)
def add_rows(R, u, f, code, X, XT, xsq, Kpre, gamma, coef0, degree, cache, slot_of, owner,
             stamp, state):
    """``f += K[:, R] u`` from the cached kernel rows."""
    for t in range(R.shape[0]):
        if u[t] == 0.0:
            continue
        s = _slot(R[t], code, X, XT, xsq, Kpre, gamma, coef0, degree, cache, slot_of, owner,
                  stamp, state)
        row = cache[s]
        ut = u[t]
        for c in range(f.shape[0]):
            f[c] += ut * row[c]


@njit(cache=True)
def gradient_entry(j, indptr, rows, vals, p, dg, a, f):
    """``G_j = p_j + dg_j a_j + sum_k v_k f[r_k]``."""
    g = p[j] + dg[j] * a[j]
    for k in range(indptr[j], indptr[j + 1]):
        g += vals[k] * f[rows[k]]
    return g


#: coordinate sweeps over one group's variables per visit (the later ones on the group's own
#: scores only, ``|R|^2`` numbers): the group's sub-problem is nearly solved before its kernel
#: rows update ``f``, once per visit instead of once per step
INNER_SWEEPS = 10


@njit(cache=True)
def _group_order(gorder, rptr, grows, slot_of):
    """Shuffle the groups, those whose rows are all in the cache first: every group is still
    visited once per pass, and a cache smaller than the rows is not swept in random order."""
    np.random.shuffle(gorder)
    n_groups = gorder.shape[0]
    cached = np.zeros(n_groups, dtype=np.bool_)
    for gi in range(n_groups):
        g = gorder[gi]
        ok = True
        for t in range(rptr[g], rptr[g + 1]):
            if slot_of[grows[t]] < 0:
                ok = False
                break
        cached[gi] = ok
    out = np.empty_like(gorder)
    k = 0
    for want in (True, False):
        for gi in range(n_groups):
            if cached[gi] == want:
                out[k] = gorder[gi]
                k += 1
    gorder[:] = out


@njit(cache=True)
def _local_gram(code, X, xsq, Kpre, gamma, coef0, degree, grows, rlo, m, KRR):
    for s in range(m):
        for t in range(s, m):
            v = kval(code, X, xsq, Kpre, grows[rlo + s], grows[rlo + t], gamma, coef0, degree)
            KRR[s, t] = v
            KRR[t, s] = v


@njit(cache=True)
def _step(j, indptr, loc, vals, p, C, dg, qd, a, floc, u, KRR, m, G):
    """The exact box-clipped 1-D Newton step on ``a_j`` with the group's scores ``floc``
    updated; returns ``|delta|``."""
    new = min(max(a[j] - G / qd[j], 0.0), C[j])
    delta = new - a[j]
    if delta == 0.0:
        return 0.0
    a[j] = new
    for k in range(indptr[j], indptr[j + 1]):
        t = loc[k]
        dv = delta * vals[k]
        u[t] += dv
        for s in range(m):
            floc[s] += dv * KRR[s, t]
    return abs(delta)


@njit(cache=True)
def dcd(code, X, XT, xsq, Kpre, gamma, coef0, degree, indptr, loc, vals, p, C, dg, qd, a, f,
        gptr, gvar, rptr, grows, eps, max_pass, seed, cache, slot_of, owner, stamp, state,
        rows, target, unit, Gbuf):
    """Coordinate passes until the projected-gradient range over all variables is at most
    ``eps``, the relative duality gap (:func:`gap`, checked after every pass: O(nnz)) is at
    most ``target`` or ``max_pass`` passes ran; returns the passes made. Group ``g`` has the
    variables ``gvar[gptr[g]:gptr[g+1]]`` and the rows ``grows[rptr[g]:rptr[g+1]]``; ``loc``
    is each non-zero's position among its group's rows."""
    np.random.seed(seed)
    n_groups = gptr.shape[0] - 1
    n = p.shape[0]
    mmax = 0
    for g in range(n_groups):
        mmax = max(mmax, rptr[g + 1] - rptr[g])
    KRR = np.empty((mmax, mmax))
    floc = np.empty(mmax)
    u = np.empty(mmax)
    active = np.ones(n, dtype=np.bool_)
    n_active = n
    gorder = np.arange(n_groups)
    members = gvar.copy()
    pg_max_old, pg_min_old = np.inf, -np.inf
    passes = 0
    while passes < max_pass:
        passes += 1
        _group_order(gorder, rptr, grows, slot_of)
        pg_max, pg_min = -np.inf, np.inf
        for gi in range(n_groups):
            g = gorder[gi]
            lo, hi, rlo = gptr[g], gptr[g + 1], rptr[g]
            m = rptr[g + 1] - rlo
            for t in range(m):
                floc[t] = f[grows[rlo + t]]
                u[t] = 0.0
            have_gram = False
            np.random.shuffle(members[lo:hi])
            local = 0.0
            for i in range(lo, hi):   # the pass's sweep: shrinking and the PG range
                j = members[i]
                if not active[j]:
                    continue
                G = gradient_entry(j, indptr, loc, vals, p, dg, a, floc)
                pg, shrink = projected_gradient(G, a[j], C[j], pg_max_old, pg_min_old)
                if shrink:
                    active[j] = False
                    n_active -= 1
                    continue
                pg_max = max(pg_max, pg)
                pg_min = min(pg_min, pg)
                if abs(pg) <= 1e-14:
                    continue
                if not have_gram:
                    _local_gram(code, X, xsq, Kpre, gamma, coef0, degree, grows, rlo, m, KRR)
                    have_gram = True
                _step(j, indptr, loc, vals, p, C, dg, qd, a, floc, u, KRR, m, G)
                local = max(local, abs(pg))
            for _sweep in range(INNER_SWEEPS - 1):   # the group's sub-problem, on floc
                if local <= eps:
                    break
                local = 0.0
                for i in range(lo, hi):
                    j = members[i]
                    if not active[j]:
                        continue
                    G = gradient_entry(j, indptr, loc, vals, p, dg, a, floc)
                    pg = projected_gradient(G, a[j], C[j], np.inf, -np.inf)[0]
                    if abs(pg) <= 1e-14:
                        continue
                    _step(j, indptr, loc, vals, p, C, dg, qd, a, floc, u, KRR, m, G)
                    local = max(local, abs(pg))
            for t in range(m):   # f += K[:, R] u: one kernel row per moved row
                if u[t] == 0.0:
                    continue
                s = _slot(grows[rlo + t], code, X, XT, xsq, Kpre, gamma, coef0, degree, cache,
                          slot_of, owner, stamp, state)
                row = cache[s]
                ut = u[t]
                for c in range(f.shape[0]):
                    f[c] += ut * row[c]
        obj, gp, _ = gap(indptr, rows, vals, p, C, dg, a, f, Gbuf)
        if abs(gp) <= target * max(unit, abs(obj)):
            break
        if n_active == 0:
            pg_max, pg_min = 0.0, 0.0
        if pg_max - pg_min <= eps:
            if n_active == n:
                break
            active[:] = True
            n_active = n
            pg_max_old, pg_min_old = np.inf, -np.inf
            continue
        pg_max_old, pg_min_old = shrink_bounds(pg_max, pg_min)
    return passes


@njit(cache=True)
def gap(indptr, rows, vals, p, C, dg, a, f, G):
    """``G = Q a + p`` (into ``G``) from ``f``, and ``(objective, gap, violation)``: the
    min-form objective ``1/2 a^T Q a + p^T a = 1/2 a^T (G + p)``, the box QP's duality gap
    ``sum_j a_j G_j + C_j max(0, -G_j)`` (its bidual's value minus the dual's) and the largest
    projected gradient."""
    obj, gp, viol = 0.0, 0.0, 0.0
    for j in range(p.shape[0]):
        g = gradient_entry(j, indptr, rows, vals, p, dg, a, f)
        G[j] = g
        obj += 0.5 * a[j] * (g + p[j])
        if g < 0.0:
            gp += a[j] * g + (C[j] * (-g) if C[j] < np.inf else np.inf)
        else:
            gp += a[j] * g
        pg = min(g, 0.0) if a[j] <= 0.0 else (max(g, 0.0) if a[j] >= C[j] else g)
        viol = max(viol, abs(pg))
    return obj, gp, viol
