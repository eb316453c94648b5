"""Shrinking and gradient reconstruction of the compiled SMO core: the variables that leave
the active set are swapped behind it (identity mode: with their data rows and cache slots),
and their gradient is rebuilt from ``G_bar`` and the free variables when they come back."""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import _col_hit, _get_col, _log_swaps
from .codes import _K_PRE
from .stamp import tie

INF = np.inf


@njit(cache=True)
def _add_col(G, f, sign, c, dpos, identity, lo, hi):
    """``G[k] += f s_k c[dpos[k]]`` for ``lo <= k < hi``; in identity mode (``dpos[k] = k``)
    without the index array, a loop the compiler vectorises (same arithmetic).  A call, not
    inlined: inlined, its array arguments were reference-counted at every use."""
    if identity:
        for k in range(lo, hi):
            G[k] += f * sign[k] * c[k]
    else:
        for k in range(lo, hi):
            G[k] += f * sign[k] * c[dpos[k]]


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


tie(globals())  # one cache stamp for the core's files (smo/stamp.py)
