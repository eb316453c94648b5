"""The compiled loops of the linear route: dual coordinate descent with ``w`` kept explicitly
(Hsieh et al., ICML 2008, LIBLINEAR's ``solve_l2r_l1l2_svc``), on an augmented Lagrangian of
the equality rows, and the full pass that measures the duality gap.

The box QP ``min 1/2 a^T Q a + p^T a`` s.t. ``0 <= a <= C``, ``sum_{j in g} c_j a_j = delta_g``
(one row per group ``g``) with ``Q = D_q Z Z^T D_q + diag(dg)`` (``Z`` the CSR rows
``index``-mapped, ``q`` the kernel signs) is solved through the augmented Lagrangian

    ``L_rho(a, lam) = 1/2 a^T Q a + p^T a + sum_g lam_g r_g + rho/2 sum_g r_g^2``,
    ``r_g = sum_{j in g} c_j a_j - delta_g``,

minimised over the box by coordinate steps (``w = Z^T D_q a`` and ``t_g = sum c_j a_j`` kept, so a
step costs O(nnz of one row)), then ``lam_g += rho r_g`` (the method of multipliers). At the
solution ``r = 0`` and the equality multiplier of the min-form stationarity
``Q a + p - nu_g c - s + t = 0`` is ``nu_g = -lam_g``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def row_norms(indptr, data):
    """``||z_j||^2`` of every row."""
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for j in range(n):
        v = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            v += data[k] * data[k]
        out[j] = v
    return out


#: coordinates visited in storage order within a block, blocks in random order: the rows of a
#: block are contiguous in memory (the variables were shuffled once, physically), so a pass
#: streams its data instead of missing the cache on every row as a full random permutation does
BLOCK = 64


@njit(cache=True)
def projected_gradient(G, a, C, pg_max_old, pg_min_old):
    """LIBLINEAR's projected gradient of a box coordinate ``0 <= a <= C`` with gradient ``G``
    and its shrinking test: ``(pg, shrink)``, ``shrink`` when ``a`` sits at a bound and is
    pushed into it harder than the last pass's spread (``G > max PG`` at 0, ``G < min PG``
    at ``C``); ``pg`` is 0 then."""
    if a <= 0.0:
        if G > pg_max_old:
            return 0.0, True
        return min(G, 0.0), False
    if a >= C:
        if G < pg_min_old:
            return 0.0, True
        return max(G, 0.0), False
    return G, False


@njit(cache=True)
def shrink_bounds(pg_max, pg_min):
    """The next pass's shrinking thresholds from this pass's projected-gradient range
    (``inf`` where the range did not cross 0: nothing is shrunk on that side)."""
    return (pg_max if pg_max > 0.0 else np.inf), (pg_min if pg_min < 0.0 else -np.inf)


@njit(cache=True)
def dcd_passes(indptr, indices, data, q, c, group, p, C, dg, qd, a, w, t, lam, delta,
               rho, eps, max_pass, seed):
    """Coordinate passes on ``L_rho(., lam)`` (variable ``j`` on data row ``j``) in random
    block order with LIBLINEAR's shrinking, until the projected-gradient spread
    ``max PG - min PG <= eps`` on every variable (or ``max_pass`` passes); ``a``, ``w``, ``t``
    are updated in place. Returns the passes made."""
    n = a.shape[0]
    np.random.seed(seed)
    act = np.arange(n)
    keep = np.ones(n, dtype=np.bool_)
    n_act = n
    pg_max_old = np.inf
    pg_min_old = -np.inf
    passes = 0
    while passes < max_pass:
        passes += 1
        pg_max = -np.inf
        pg_min = np.inf
        n_blocks = (n_act + BLOCK - 1) // BLOCK
        blocks = np.random.permutation(n_blocks)
        for bi in range(n_blocks):
            lo = blocks[bi] * BLOCK
            hi = min(lo + BLOCK, n_act)
            for i in range(lo, hi):
                j = act[i]
                zw = 0.0
                for k in range(indptr[j], indptr[j + 1]):
                    zw += w[indices[k]] * data[k]
                g = group[j]
                G = q[j] * zw + dg[j] * a[j] + p[j]
                if g >= 0:
                    G += c[j] * (lam[g] + rho * (t[g] - delta[g]))
                pg, shrink = projected_gradient(G, a[j], C[j], pg_max_old, pg_min_old)
                if shrink:
                    keep[i] = False
                    continue
                if pg > pg_max:
                    pg_max = pg
                if pg < pg_min:
                    pg_min = pg
                if pg != 0.0:
                    old = a[j]
                    new = old - G / qd[j]
                    if new < 0.0:
                        new = 0.0
                    elif new > C[j]:
                        new = C[j]
                    d = new - old
                    if d != 0.0:
                        a[j] = new
                        dq = d * q[j]
                        for k in range(indptr[j], indptr[j + 1]):
                            w[indices[k]] += dq * data[k]
                        if g >= 0:
                            t[g] += d * c[j]
        m = 0                    # drop the shrunk variables, keeping storage order
        for i in range(n_act):
            if keep[i]:
                act[m] = act[i]
                m += 1
            keep[i] = True
        n_act = m
        if pg_max - pg_min <= eps:
            if n_act == n:
                break
            n_act = n            # converged on the active set: check every variable once more
            for i in range(n):
                act[i] = i
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old, pg_min_old = shrink_bounds(pg_max, pg_min)
    return passes


@njit(cache=True)
def gradient(indptr, indices, data, q, p, dg, a, w, out):
    """``out = Q a + p = D_q Z w + dg a + p`` (one pass over the rows)."""
    for j in range(a.shape[0]):
        zw = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            zw += w[indices[k]] * data[k]
        out[j] = q[j] * zw + dg[j] * a[j] + p[j]


@njit(cache=True)
def box_gap(G, a, C, c, group, nu):
    """The box QP's duality gap at ``a`` with equality multipliers ``nu`` (``a`` feasible):
    ``sum_j a_j r_j + C_j max(0, -r_j)``, ``r = G - nu_g c`` (the Wolfe dual at the same point;
    an infinite ``C_j`` counts ``a_j |r_j|`` where ``r_j < 0``), and the largest KKT violation
    ``max(r_j on a_j > 0, -r_j on a_j < C_j)``."""
    gap = 0.0
    viol = 0.0
    for j in range(a.shape[0]):
        r = G[j]
        g = group[j]
        if g >= 0:
            r -= nu[g] * c[j]
        if r < 0.0:
            gap += a[j] * r + (C[j] * (-r) if C[j] < np.inf else 2.0 * a[j] * (-r))
            if a[j] < C[j] and -r > viol:
                viol = -r
        else:
            gap += a[j] * r
            if a[j] > 0.0 and r > viol:
                viol = r
    return gap, viol
