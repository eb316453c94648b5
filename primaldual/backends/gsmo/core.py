r"""Generalised SMO (compiled): box QPs with several linear equalities in group form.

Solves

.. math::

    \min_{a, m} \tfrac12 a^\top Q a + p^\top a + q^\top m \quad\text{s.t.}\quad
    0 \le a_t \le C_t,\ lo_l \le m_l \le hi_l,\
    \sum_{t \in g} e_t a_t + \sum_l B_{gl} m_l = c_g \ (g = 1..G),

with ``Q_ts = s_t s_s K(x_{pos_t}, x_{pos_s}) + d_t [t = s]`` from kernel columns (the LRU
cache and column routine of :mod:`primaldual.backends.smo.cache`), each box variable in at most
one group (``group[t] = -1``: in none) and a few scalar variables ``m`` outside ``Q``.

Steps (each keeps every equality):

* **pair** in one group (LIBSVM's nu-solver generalised from its two sign groups to ``G``
  groups): with ``u_t = e_t a_t`` and ``v_t = -G_t / e_t``, the maximal violating pair of the
  group with the largest ``m_g - M_g`` (``m_g = max_{I_up} v``, ``M_g = min_{I_low} v``), the
  second variable by LIBSVM's second-order rule (WSS2, Fan, Chen & Lin 2005);
* **single** variable in no equality: a clipped Newton step;
* **scalar**: ``m_l`` moves by ``σ δ`` and in each group ``g`` it touches one variable (the
  group's extreme ``i_g`` or ``j_g``) moves by ``Δu = -B_{gl} σ δ``: an exact line search along
  that direction, clipped to the bounds (the three-variable steps of Keerthi et al.'s ordinal
  regression with the ordering multipliers).

Stop: the largest violation (pair ``m_g - M_g``, single projected gradient, scalar directional
derivative) below ``tol``, and the relative duality gap (:func:`lam_gap`) below ``gap_tol``; the
violation tolerance is tightened (x0.1, at most four decades) until the gap holds.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..smo.columns import _kcol_serial, _kval
from ..smo.stamp import tie

TAU = 1e-12
INF = np.inf


@njit(cache=True)
def _get_col(r, length, kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
             cdata, slot_of, slot_key, slot_len, slot_time, clock, par_min):
    """The cache slot holding the kernel column of data position ``r`` (LRU; the routine of
    :func:`primaldual.backends.smo.cache._get_col`, serial columns only)."""
    clock[0] += 1
    s = slot_of[r]
    if s >= 0:
        slot_time[s] = clock[0]
        if slot_len[s] >= length:
            return s
        start = slot_len[s]
    else:
        n_slots = slot_time.shape[0]
        s = 0
        tmin = slot_time[0]
        for t in range(1, n_slots):
            if slot_time[t] < tmin:
                tmin = slot_time[t]
                s = t
        old = slot_key[s]
        if old >= 0:
            slot_of[old] = -1
        slot_key[s] = r
        slot_of[r] = s
        slot_time[s] = clock[0]
        start = 0
    _kcol_serial(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, start, length, cdata[s],
                 gamma, coef0, degree)
    slot_len[s] = length
    return s


@njit(cache=True)
def _midpoint(lb, ub):
    """LIBSVM's midpoint of ``[lb, ub]`` (:func:`primaldual.backends.smo.codes.midpoint`;
    a half-infinite interval: its finite end, the whole line: 0)."""
    if ub == INF:
        return lb if lb > -INF else 0.0
    if lb == -INF:
        return ub
    return (ub + lb) / 2.0


@njit(cache=True)
def _kv(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, s, gamma, coef0, degree):
    return _kval(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, r, s, gamma, coef0, degree)



@njit(cache=True, inline="always")
def _up(a, C, e):
    """``u = e a`` can increase."""
    return (e > 0 and a < C) or (e < 0 and a > 0)


@njit(cache=True, inline="always")
def _low(a, C, e):
    """``u = e a`` can decrease."""
    return (e > 0 and a > 0) or (e < 0 and a < C)


@njit(cache=True, inline="always")
def _room_up(a, C, e):
    """How far ``u = e a`` can increase."""
    return (C - a) * e if e > 0 else a * (-e)


@njit(cache=True, inline="always")
def _room_down(a, C, e):
    return a * e if e > 0 else (C - a) * (-e)


@njit(cache=True)
def lam_gap(G, p, alpha, C, grp, e, n_groups, q, lo, hi, Bg, m):
    """Group multipliers ``λ`` and the duality gap at ``(alpha, m)`` with gradient ``G``.

    ``λ_g``: the mean of ``w_t = G_t / e_t`` over the group's free variables, else LIBSVM's
    midpoint of the interval the bounded ones leave (:func:`~primaldual.backends.smo.codes.
    midpoint`); then, for each scalar variable strictly inside its bounds, ``λ`` is projected
    (a few Kaczmarz sweeps) onto ``Σ_g B_gl λ_g = q_l`` (its reduced cost zero).

    Gap (Lagrangian, the certificate's): with ``r_t = G_t - e_t λ_g``,
    ``Σ_t r_t a_t`` (``r_t >= 0``) or ``r_t (a_t - C_t)`` (``r_t < 0``), plus the scalar
    variables' ``r_l (m_l - lo_l)`` / ``r_l (m_l - hi_l)`` (a wrong-signed ``r_l`` at an
    infinite bound counts 0 here: its size is the violation the caller bounds by ``tol``)."""
    n = alpha.shape[0]
    L = m.shape[0]
    sfree = np.zeros(n_groups)
    nfree = np.zeros(n_groups, dtype=np.int64)
    ub = np.full(n_groups, INF)
    lb = np.full(n_groups, -INF)
    for t in range(n):
        g = grp[t]
        if g < 0:
            continue
        w = G[t] / e[t]
        a = alpha[t]
        if 0.0 < a < C[t]:
            sfree[g] += w
            nfree[g] += 1
        elif (a <= 0.0) == (e[t] > 0):      # lambda <= w
            if w < ub[g]:
                ub[g] = w
        else:                               # lambda >= w
            if w > lb[g]:
                lb[g] = w
    lam = np.empty(n_groups)
    for g in range(n_groups):
        if nfree[g] > 0:
            lam[g] = sfree[g] / nfree[g]
        else:
            lam[g] = _midpoint(lb[g], ub[g])
    for _sweep in range(20):
        moved = 0.0
        for l in range(L):
            if not (m[l] > lo[l] and m[l] < hi[l]):
                continue
            num = q[l]
            den = 0.0
            for g in range(n_groups):
                num -= Bg[g, l] * lam[g]
                den += Bg[g, l] * Bg[g, l]
            if den > 0.0:
                f = num / den
                for g in range(n_groups):
                    lam[g] += f * Bg[g, l]
                moved = max(moved, abs(num))
        if moved < 1e-15:
            break
    gap = 0.0
    for t in range(n):
        g = grp[t]
        r = G[t] if g < 0 else G[t] - e[t] * lam[g]
        if r >= 0.0:
            gap += r * alpha[t]
        elif C[t] < INF:
            gap += r * (alpha[t] - C[t])
        else:
            gap += -r * alpha[t] if alpha[t] > 0 else 0.0
    for l in range(L):
        r = q[l]
        for g in range(n_groups):
            r -= Bg[g, l] * lam[g]
        if r >= 0.0 and lo[l] > -INF:
            gap += r * (m[l] - lo[l])
        elif r < 0.0 and hi[l] < INF:
            gap += r * (m[l] - hi[l])
    return lam, gap


@njit(cache=True)
def _add_col(G, s_i, da, ci, dpos, ksign, n):
    f = da * s_i
    for k in range(n):
        G[k] += f * ksign[k] * ci[dpos[k]]


@njit(cache=True)
def _rel_gap(G, p, alpha, C, grp, e, n_groups, q, lo, hi, Bg, m, gap_unit, with_m):
    """The relative duality gap of :func:`lam_gap`, over ``max(gap_unit, |objective|)``
    (``with_m``: the objective with the scalar variables' ``q^T m``)."""
    lam, gap = lam_gap(G, p, alpha, C, grp, e, n_groups, q, lo, hi, Bg, m)
    obj = 0.0
    for t in range(alpha.shape[0]):
        obj += 0.5 * alpha[t] * (G[t] + p[t])
    if with_m:
        for l in range(m.shape[0]):
            obj += q[l] * m[l]
    return gap / max(gap_unit, abs(obj))


@njit(cache=True)
def _scalar_step(l, sig, kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
                 dpos, ksign, diag, C, e, n_groups, q, lo, hi, Bg, m, alpha, G, gm, gM, gi, gj,
                 sel, du, n_data, cdata, slot_of, slot_key, slot_len, slot_time, clock, par_min):
    """The scalar step of :func:`gsmo_core`: ``m_l`` moves by ``sig * delta`` (the exact line
    minimum, cut at the first bound), each group it touches through one variable (its largest
    or smallest ``v``, from ``gm``/``gM`` and ``gi``/``gj``) so that every equality holds.
    ``False``: the direction improves without bound (nothing is changed)."""
    n = alpha.shape[0]
    k = 0
    D = sig * q[l]
    for g in range(n_groups):
        b = Bg[g, l] * sig
        if b > 0:
            sel[k] = gj[g]
            du[k] = -b
            D += b * gM[g]
            k += 1
        elif b < 0:
            sel[k] = gi[g]
            du[k] = -b
            D += b * gm[g]
            k += 1
    curv = 0.0
    dmax = hi[l] - m[l] if sig > 0 else m[l] - lo[l]
    for x in range(k):
        tx = sel[x]
        dax = du[x] / e[tx]
        room = _room_up(alpha[tx], C[tx], e[tx]) if du[x] > 0 else \
            _room_down(alpha[tx], C[tx], e[tx])
        if room / abs(du[x]) < dmax:
            dmax = room / abs(du[x])
        for y in range(k):
            ty = sel[y]
            day = du[y] / e[ty]
            qxy = ksign[tx] * ksign[ty] * _kv(kcode, Xd, Xptr, Xind, Xval, Xs, xsq,
                                                Kpre, dorig, dpos[tx], dpos[ty], gamma,
                                                coef0, degree)
            if tx == ty:
                qxy += diag[tx]
            curv += dax * day * qxy
    delta = -D / curv if curv > TAU else INF
    if delta > dmax:
        delta = dmax
    if delta == INF:
        return False
    m_old = m[l]
    if sig > 0:
        m[l] = hi[l] if delta >= hi[l] - m_old else m_old + delta
    else:
        m[l] = lo[l] if delta >= m_old - lo[l] else m_old - delta
    for x in range(k):
        tx = sel[x]
        old = alpha[tx]
        na = old + du[x] * delta / e[tx]
        if na < 0.0 or abs(na) <= 1e-15 * max(1.0, C[tx] if C[tx] < INF else 1.0):
            na = 0.0
        elif na > C[tx] or (C[tx] < INF and abs(na - C[tx]) <= 1e-15 * max(1.0, C[tx])):
            na = C[tx]
        alpha[tx] = na
        st = _get_col(dpos[tx], n_data, kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre,
                      dorig, gamma, coef0, degree, cdata, slot_of, slot_key, slot_len,
                      slot_time, clock, par_min)
        _add_col(G, ksign[tx], na - old, cdata[st], dpos, ksign, n)
        G[tx] += diag[tx] * (na - old)
    return True


@njit(cache=True)
def _start(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, dpos, ksign,
           diag, p, alpha, G, n_slots, par_min):
    """The column cache of :func:`gsmo_core` (``n_slots`` columns), the diagonal ``QD`` and
    the gradient ``G = Q a + p`` at the start: ``(n_data, cdata, slot_of, slot_key, slot_len,
    slot_time, clock, QD)``."""
    n = alpha.shape[0]
    n_data = Xd.shape[0] if Xptr.shape[0] == 0 else Xptr.shape[0]
    if kcode == 4:
        n_data = dorig.shape[0]
    cdata = np.empty((n_slots, n_data), dtype=np.float32)
    slot_of = np.full(n_data, -1, dtype=np.int64)
    slot_key = np.full(n_slots, -1, dtype=np.int64)
    slot_len = np.zeros(n_slots, dtype=np.int64)
    slot_time = np.full(n_slots, -1, dtype=np.int64)
    clock = np.zeros(1, dtype=np.int64)

    QD = np.empty(n)
    for t in range(n):
        r = dpos[t]
        QD[t] = ksign[t] * ksign[t] * _kv(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                                            r, r, gamma, coef0, degree) + diag[t]
    for t in range(n):
        G[t] = p[t]
    for i in range(n):
        if alpha[i] != 0.0:
            s = _get_col(dpos[i], n_data, kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                         gamma, coef0, degree, cdata, slot_of, slot_key, slot_len, slot_time,
                         clock, par_min)
            _add_col(G, ksign[i], alpha[i], cdata[s], dpos, ksign, n)
            G[i] += diag[i] * alpha[i]
    return n_data, cdata, slot_of, slot_key, slot_len, slot_time, clock, QD


# Kept whole: a compiled call per step costs two atomic refcounts per array argument.
@njit(cache=True)
def gsmo_core(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
              dpos, ksign, diag, p, C, grp, e, n_groups, q, lo, hi, Bg, m, alpha, G,
              tol, max_iter, n_slots, gap_tol, gap_unit, par_min):
    """The main loop (arrays updated in place). Returns ``(n_iter, status, violation, rel_gap)``
    with status 0 optimal, 1 max_iter, 2 unbounded (an improving direction without bound)."""
    n = alpha.shape[0]
    L = m.shape[0]
    tol_min = tol * 1e-4
    n_data, cdata, slot_of, slot_key, slot_len, slot_time, clock, QD = _start(
        kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, dpos, ksign,
        diag, p, alpha, G, n_slots, par_min)

    gm = np.empty(n_groups)
    gM = np.empty(n_groups)
    gi = np.empty(n_groups, dtype=np.int64)
    gj = np.empty(n_groups, dtype=np.int64)
    sel = np.empty(max(n_groups, 1), dtype=np.int64)
    du = np.empty(max(n_groups, 1))
    it = 0
    status = 1
    viol = INF
    rel = INF
    while it < max_iter:
        # ---- per-group extremes and single-variable violations: one pass ----
        for g in range(n_groups):
            gm[g] = -INF
            gM[g] = INF
            gi[g] = -1
            gj[g] = -1
        best_single = -1
        v_single = 0.0
        for t in range(n):
            g = grp[t]
            a = alpha[t]
            if g < 0:
                if a < C[t] and G[t] < -v_single:
                    v_single = -G[t]
                    best_single = t
                if a > 0.0 and G[t] > v_single:
                    v_single = G[t]
                    best_single = t
                continue
            v = -G[t] / e[t]
            if _up(a, C[t], e[t]) and v > gm[g]:
                gm[g] = v
                gi[g] = t
            if _low(a, C[t], e[t]) and v < gM[g]:
                gM[g] = v
                gj[g] = t
        best_g = -1
        v_pair = 0.0
        for g in range(n_groups):
            if gi[g] >= 0 and gj[g] >= 0 and gm[g] - gM[g] > v_pair:
                v_pair = gm[g] - gM[g]
                best_g = g
        best_l = -1
        best_sig = 0.0
        v_scal = 0.0
        for l in range(L):
            for sig in (1.0, -1.0):
                if sig > 0 and not m[l] < hi[l]:
                    continue
                if sig < 0 and not m[l] > lo[l]:
                    continue
                D = sig * q[l]
                ok = True
                for g in range(n_groups):
                    b = Bg[g, l] * sig
                    if b > 0:      # u_g decreases by b delta: the group's smallest v (I_low)
                        if gj[g] < 0:
                            ok = False
                            break
                        D += b * gM[g]
                    elif b < 0:    # u_g increases: the group's largest v (I_up)
                        if gi[g] < 0:
                            ok = False
                            break
                        D += b * gm[g]
                if ok and -D > v_scal:
                    v_scal = -D
                    best_l = l
                    best_sig = sig
        viol = max(v_pair, v_single, v_scal)
        if viol < tol:
            rel = _rel_gap(G, p, alpha, C, grp, e, n_groups, q, lo, hi, Bg, m, gap_unit, True)
            if gap_tol <= 0.0 or rel <= gap_tol or tol <= tol_min:
                status = 0
                break
            tol *= 0.1
            continue
        it += 1
        if v_pair >= v_single and v_pair >= v_scal:
            # ---- pair step in group best_g ----
            i = gi[best_g]
            si = _get_col(dpos[i], n_data, kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                          gamma, coef0, degree, cdata, slot_of, slot_key, slot_len, slot_time,
                          clock, par_min)
            ci = cdata[si]
            mg = gm[best_g]
            ei = e[i]
            j = -1
            best_gain = -INF
            best_curv = 1.0
            for t in range(n):
                if grp[t] != best_g or not _low(alpha[t], C[t], e[t]):
                    continue
                v = -G[t] / e[t]
                b = mg - v
                if b <= 0.0:
                    continue
                Qit = ksign[i] * ksign[t] * ci[dpos[t]]
                if t == i:
                    continue
                curv = QD[i] / (ei * ei) + QD[t] / (e[t] * e[t]) - 2.0 * Qit / (ei * e[t])
                if curv <= 0.0:
                    curv = TAU
                gain = b * b / curv
                if gain > best_gain:
                    best_gain = gain
                    j = t
                    best_curv = curv
            if j < 0:
                j = gj[best_g]
                Qij = ksign[i] * ksign[j] * ci[dpos[j]]
                best_curv = QD[i] / (ei * ei) + QD[j] / (e[j] * e[j]) - 2.0 * Qij / (ei * e[j])
                if best_curv <= 0.0:
                    best_curv = TAU
            ej = e[j]
            b = mg + G[j] / ej
            delta = b / best_curv
            ru = _room_up(alpha[i], C[i], ei)
            rd = _room_down(alpha[j], C[j], ej)
            hit_i = False
            hit_j = False
            if delta >= ru:
                delta = ru
                hit_i = True
            if delta >= rd:
                delta = rd
                hit_j = True
                hit_i = hit_i and ru <= rd
            if delta == INF:
                status = 2
                break
            old_i = alpha[i]
            old_j = alpha[j]
            if hit_i:
                alpha[i] = C[i] if ei > 0 else 0.0
            else:
                alpha[i] = old_i + delta / ei
            if hit_j:
                alpha[j] = 0.0 if ej > 0 else C[j]
            else:
                alpha[j] = old_j - delta / ej
            for t in (i, j):
                if alpha[t] < 0.0:
                    alpha[t] = 0.0
                elif alpha[t] > C[t]:
                    alpha[t] = C[t]
            dai = alpha[i] - old_i
            daj = alpha[j] - old_j
            _add_col(G, ksign[i], dai, ci, dpos, ksign, n)
            G[i] += diag[i] * dai
            sj = _get_col(dpos[j], n_data, kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                          gamma, coef0, degree, cdata, slot_of, slot_key, slot_len, slot_time,
                          clock, par_min)
            _add_col(G, ksign[j], daj, cdata[sj], dpos, ksign, n)
            G[j] += diag[j] * daj
        elif v_single >= v_scal:
            t = best_single
            qd = QD[t] if QD[t] > 0.0 else TAU
            na = alpha[t] - G[t] / qd
            if na < 0.0:
                na = 0.0
            elif na > C[t]:
                na = C[t]
            if na == INF:
                status = 2
                break
            da = na - alpha[t]
            alpha[t] = na
            st = _get_col(dpos[t], n_data, kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                          gamma, coef0, degree, cdata, slot_of, slot_key, slot_len, slot_time,
                          clock, par_min)
            _add_col(G, ksign[t], da, cdata[st], dpos, ksign, n)
            G[t] += diag[t] * da
        else:
            # ---- scalar step: m_l by sig*delta, one variable per touched group ----
            if not _scalar_step(best_l, best_sig, kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre,
                                dorig, gamma, coef0, degree, dpos, ksign, diag, C, e,
                                n_groups, q, lo, hi, Bg, m, alpha, G, gm, gM, gi, gj, sel, du,
                                n_data, cdata, slot_of, slot_key, slot_len, slot_time, clock,
                                par_min):
                status = 2
                break
    if status == 1 and math.isinf(rel):
        rel = _rel_gap(G, p, alpha, C, grp, e, n_groups, q, lo, hi, Bg, m, gap_unit, False)
    return it, status, viol, rel


tie(globals())  # one cache stamp with the SMO core's files (smo/stamp.py)
