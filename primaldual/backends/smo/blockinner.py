r"""The block working-set SMO's inner solve (:mod:`primaldual.backends.smo.block`): LIBSVM's
SMO with second-order working-set selection (WSS2) on the working set's ``q x q`` kernel block.

The sub-problem is the dual's on the working set ``W`` (the other variables fixed)::

    min_a 1/2 a^T Q_WW a + G_W^T a,  Q_jt = y_j y_t K_jt,  0 <= a_j <= C_j,

with one equality ``y^T a`` fixed (C-SVC, eps-SVR) or two, ``sum_{y_j = +1} a_j`` and
``sum_{y_j = -1} a_j`` (nu-SVR, LIBSVM's ``Solver_NU``).  Each pair step reads two rows of the
block and costs three passes over ``q`` entries (the first variable, the second, the gradient
update).  The working set mixes the signs and the bound states of its variables in no order,
so the passes are written without branches on them: each variable carries its membership of
``I_up`` and ``I_low`` as an additive mask (``0`` inside, ``-inf`` outside), the passes are
maxima and minima of masked values (the index found afterwards by one scan for the extreme
value, from the end: the last of equal values, as LIBSVM's ``>=`` picks it), and the gradient
is kept as ``yG_t = y_t G_t``.  Since ``y_t = +-1``, ``yG`` receives exactly the rounded sums
``G`` would (``fl(-u - v) = -fl(u + v)``): the pairs, the steps and the iterates are those of
the branchy form bit for bit.  Measured on the working sets of an eps-SVR and a nu-SVR fit at
N = 5,000 (``q = 512``): docs/benchmarks.md, "SVR at 5,000 (round 9)".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core import _pair_alphas
from .select import TAU
from .stamp import tie

INF = np.inf


@njit(cache=True, inline="always")
def _masks(y, a, C, t, up, low):
    """``up[t]``, ``low[t]``: ``0`` when ``t`` is in ``I_up`` (``a_t < C_t`` for ``y_t = +1``,
    ``a_t > 0`` for ``-1``), in ``I_low`` (the other way round), else ``-inf``."""
    if y[t] > 0:
        up[t] = 0.0 if a[t] < C[t] else -INF
        low[t] = 0.0 if a[t] > 0.0 else -INF
    else:
        up[t] = 0.0 if a[t] > 0.0 else -INF
        low[t] = 0.0 if a[t] < C[t] else -INF


@njit(cache=True, inline="always")
def _by_sign(y, up, low, t, upp, upn, lowp, lown):
    """The masks of ``t`` split by its sign (``-inf`` on the other sign's arrays)."""
    pos = y[t] > 0
    upp[t] = up[t] if pos else -INF
    upn[t] = -INF if pos else up[t]
    lowp[t] = low[t] if pos else -INF
    lown[t] = -INF if pos else low[t]


@njit(cache=True, inline="always")
def _last(v, x):
    """The last ``t`` with ``v[t] == x`` (``-1``: none)."""
    for t in range(v.shape[0] - 1, -1, -1):
        if v[t] == x:
            return t
    return -1


@njit(cache=True, inline="always")
def _last_of(m, yG, g):
    """The last ``t`` with ``m[t] - yG[t] == g`` (``-1`` when ``g = -inf``: none)."""
    if g > -INF:
        for t in range(yG.shape[0] - 1, -1, -1):
            if m[t] - yG[t] == g:
                return t
    return -1


@njit(cache=True, inline="always")
def _gain(gd, kii, ktt, kit, low):
    """WSS2's gain of the pair with violation ``gd``: ``-gd^2 / (K_ii + K_tt - 2 K_it)`` (the
    curvature ``TAU`` where it is not positive), ``+inf`` when ``t`` is outside ``I_low``
    (``low = -inf``) or the pair does not violate (``gd <= 0``)."""
    quad = kii + ktt - 2.0 * kit
    quad = quad if quad > 0.0 else TAU
    s = -(gd * gd) / quad
    return s if (gd > 0.0 and low == 0.0) else INF


@njit(cache=True)
def _gains(yG, low, Ki, kd, kii, g1, s, lv):
    """``s_t``: the gain of the pair ``(i, t)`` (:func:`_gain`, ``i``'s row ``Ki``, its
    ``I_up`` value ``g1``), ``lv_t = low_t + yG_t``: one pass without reductions, which the
    compiler vectorises (the reductions over them follow, scalar)."""
    for t in range(yG.shape[0]):
        v = yG[t]
        lv[t] = low[t] + v
        s[t] = _gain(g1 + v, kii, kd[t], Ki[t], low[t])


@njit(cache=True)
def _gains_nu(yG, low, lowp, lown, y, Kp, Kn, kd, kp, kn, gp, gn, s, lvp, lvn):
    """:func:`_gains` with the first variable of ``t``'s own sign (``Kp, kp, gp`` for
    ``y_t = +1``, ``Kn, kn, gn`` for ``-1``), the masked ``y G`` of ``I_low`` by sign."""
    for t in range(yG.shape[0]):
        v = yG[t]
        lvp[t] = lowp[t] + v
        lvn[t] = lown[t] + v
        pos = y[t] > 0
        s[t] = _gain((gp if pos else gn) + v, kp if pos else kn, kd[t], Kp[t] if pos else Kn[t],
                     low[t])


@njit(cache=True)
def _setup(Kw, y, a, C, G):
    """The masks, ``yG``, the block's diagonal (contiguous) and two buffers (the gains, the
    masked ``y G`` of ``I_low``)."""
    q = a.shape[0]
    up = np.empty(q)
    low = np.empty(q)
    yG = np.empty(q)
    kd = np.empty(q)
    for t in range(q):
        _masks(y, a, C, t, up, low)
        yG[t] = y[t] * G[t]
        kd[t] = Kw[t, t]
    return up, low, yG, kd, np.empty(q), np.empty(q)


@njit(cache=True)
def _move(Kw, y, a, C, yG, kd, up, low, i, j):
    """The analytic step on ``(i, j)`` and ``yG_t += y_i da_i K_it + y_j da_j K_jt``."""
    ai = a[i]
    aj = a[j]
    yi = y[i]
    yj = y[j]
    ni, nj = _pair_alphas(yi != yj, ai, aj, C[i], C[j], yi * yG[i], yj * yG[j], kd[i], kd[j],
                          yi * yj * Kw[i, j])
    a[i] = ni
    a[j] = nj
    _masks(y, a, C, i, up, low)
    _masks(y, a, C, j, up, low)
    ci = yi * (ni - ai)
    cj = yj * (nj - aj)
    Ki = Kw[i]
    Kj = Kw[j]
    for t in range(a.shape[0]):
        yG[t] += ci * Ki[t] + cj * Kj[t]


@njit(cache=True)
def _inner(Kw, y, a, C, G, tol, max_iter):
    """LIBSVM's SMO (WSS2) on the working set, one equality: ``a`` and its gradient ``G``
    updated in place (``G_t += y_t (y_i da_i K_it + y_j da_j K_jt)``) until the local
    violation is below ``max(tol, d0 / 10)`` (``d0`` the first) or ``max_iter`` pair steps.
    Returns ``(steps, d0)``."""
    q = a.shape[0]
    up, low, yG, kd, s, lv = _setup(Kw, y, a, C, G)
    it = 0
    eps = tol
    d0 = 0.0
    while it < max_iter:
        gmax = -INF     # the first variable: the largest -y G over I_up
        for t in range(q):
            gmax = max(gmax, up[t] - yG[t])
        i = -1
        if gmax > -INF:
            for t in range(q - 1, -1, -1):
                if up[t] - yG[t] == gmax:
                    i = t
                    break
        gmax2 = -INF    # the largest y G over I_low, and the second variable by its gain
        j = -1
        if i >= 0:
            _gains(yG, low, Kw[i], kd, kd[i], gmax, s, lv)
            best = INF
            for t in range(q):
                gmax2 = max(gmax2, lv[t])
                best = min(best, s[t])
            if best < INF:
                j = _last(s, best)
        else:
            for t in range(q):
                gmax2 = max(gmax2, low[t] + yG[t])
        diff = gmax + gmax2
        if it == 0:
            d0 = diff
            eps = max(tol, 0.1 * diff)
        if j < 0 or not diff >= eps:
            break
        it += 1
        _move(Kw, y, a, C, yG, kd, up, low, i, j)
    for t in range(q):
        G[t] = y[t] * yG[t]
    return it, d0


@njit(cache=True)
def _inner_nu(Kw, y, a, C, G, tol, max_iter):
    """:func:`_inner` for two equalities, ``sum_{y_j = +1} a_j`` and ``sum_{y_j = -1} a_j``
    fixed (nu-SVR, nu-SVC): LIBSVM's ``Solver_NU`` selection, the first variable the most
    violating of ``I_up`` within each sign, the second by second-order gain within the sign of
    the first, the local violation ``max(Gmaxp + Gmaxp2, Gmaxn + Gmaxn2)``."""
    q = a.shape[0]
    up, low, yG, kd, s, lvp = _setup(Kw, y, a, C, G)
    lvn = np.empty(q)
    upp, upn, lowp, lown = np.empty(q), np.empty(q), np.empty(q), np.empty(q)
    for t in range(q):
        _by_sign(y, up, low, t, upp, upn, lowp, lown)
    it, d0, eps = 0, 0.0, tol
    while it < max_iter:
        gp = -INF       # the first variable of each sign: the largest -y G over its I_up
        gn = -INF
        for t in range(q):
            gp = max(gp, upp[t] - yG[t])
            gn = max(gn, upn[t] - yG[t])
        ip = _last_of(upp, yG, gp)
        iN = _last_of(upn, yG, gn)
        # the second variable within the sign of each t (its own sign's first variable);
        # a sign without a first variable has g1 = -inf, so none of its pairs violates
        Kp = Kw[max(ip, 0)]
        Kn = Kw[max(iN, 0)]
        kp = kd[max(ip, 0)]
        kn = kd[max(iN, 0)]
        _gains_nu(yG, low, lowp, lown, y, Kp, Kn, kd, kp, kn, gp, gn, s, lvp, lvn)
        gp2 = -INF
        gn2 = -INF
        best = INF
        for t in range(q):
            gp2 = max(gp2, lvp[t])
            gn2 = max(gn2, lvn[t])
            best = min(best, s[t])
        j = _last(s, best) if best < INF else -1
        diff = max(gp + gp2, gn + gn2)
        if it == 0:
            d0, eps = diff, max(tol, 0.1 * diff)
        if j < 0 or not diff >= eps:
            break
        i = ip if y[j] > 0 else iN
        _move(Kw, y, a, C, yG, kd, up, low, i, j)
        _by_sign(y, up, low, i, upp, upn, lowp, lown)
        _by_sign(y, up, low, j, upp, upn, lowp, lown)
        it += 1
    for t in range(q):
        G[t] = y[t] * yG[t]
    return it, d0


tie(globals(), __file__)  # the core's files and this one (smo/stamp.py)
