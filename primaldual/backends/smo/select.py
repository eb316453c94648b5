"""Working-set selection of the compiled SMO core (LIBSVM's WSS2, one equality, one per sign,
none), the maximal violation, the bias (``rho``) and the relative duality gap read from the
gradient."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .cache import _get_col
from .codes import midpoint
from .stamp import tie

TAU = 1e-12
INF = np.inf


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
    ``buf``: float64 scratch of shape (2, l), (4, l) without identity (:func:`_select_one`,
    used from ``_BRANCH_FREE_MIN`` active variables on).

    :func:`_smo_loop` has these lines written out in its body: the two passes
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
    # LIBSVM's WSS2; in this loop the per-sign branches are selects (they
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
    of a zero), in branch-free passes: each loop writes its candidates (or -inf /
    +inf) into ``buf``, a four-chain reduction takes the extreme value, a backward scan finds
    its last index.  Measured on 20,000 entries of unpredictable signs and statuses: 4.3x
    faster than the branchy loops (2,000: 1.5x; 360: 1.2x slower, hence the threshold).

    Without identity (SVR's ``2N`` variables on ``N`` data rows) ``imax``'s kernel column is
    first laid out in variable order, ``buf[2][t] = K[dpos[t]]`` (LIBSVM's ``SVR_Q`` builds
    the same ``2N`` row from its ``N``-entry kernel row): the second pass then reads it
    contiguously and vectorises, where the index ``dpos[t]`` inside it kept the whole pass
    scalar (measured on an SVR state at ``2N = 10,000``: that pass 18.3 us with the index,
    10.6 us with the layout first, the pass over a laid-out column alone 7.8 us).  The update
    of the gradient reads ``buf[2]`` as ``imax``'s column (:func:`_smo_loop`)."""
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
        if identity:
            for t in range(n_act):
                pos = sign[t] > 0
                low = status[t] != (0 if pos else 1)  # in I_low
                w = G[t] if pos else -G[t]
                vb[t] = w if low else -INF
                gd = Gmax + w
                qc = QDi + QD[t] - 2.0 * ci[t]
                qc = TAU if qc <= 0 else qc
                od = -(gd * gd) / qc
                ob[t] = od if (low & (gd > 0)) else INF
        else:
            ei = buf[2]
            for t in range(n_act):
                ei[t] = ci[dpos[t]]
            for t in range(n_act):
                pos = sign[t] > 0
                low = status[t] != (0 if pos else 1)  # in I_low
                w = G[t] if pos else -G[t]
                vb[t] = w if low else -INF
                gd = Gmax + w
                qc = QDi + QD[t] - 2.0 * ei[t]
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


tie(globals())  # one cache stamp for the core's files (smo/stamp.py)
