r"""Sequential minimal optimisation (SMO) for box-constrained quadratic duals.

Solves

.. math::

    \min_a \tfrac12 a^\top Q a + p^\top a \quad\text{s.t.}\quad 0 \le a_j \le u_j,
    \quad\text{equality constraints (see ``equality``)},

with ``Q_jk = s_j s_k K(x_{index_j}, x_{index_k}) + d_j [j = k]`` (``s = sign``,
``d = diag_add``), the shape of every box-constrained dual in docs/formulations.md (hard margin,
C-SVC, L2-SVC, nu-SVC, epsilon-SVR, nu-SVR, LapSVC, user problems).

The algorithm is LIBSVM's (Chang & Lin 2011; Fan, Chen & Lin, JMLR 2005):

* second-order working-set selection (WSS2, ``tau = 1e-12``),
* stopping when the maximal violating pair gap ``m(a) - M(a) < tol``,
* shrinking every ``min(n_var, 1000)`` iterations with gradient reconstruction from
  ``G_bar`` (the gradient part contributed by variables at their upper bound),
* an LRU cache of float32 kernel columns bounded by ``cache_size`` megabytes; kernel columns
  are computed from ``X`` on demand inside numba, never the N x N matrix,
* the nu-variants with two equalities (LIBSVM's ``Solver_NU``).

Sign conventions (docs/formulations.md): the predictor is ``f(x) = sum_i beta_i k(x, x_i) + b``;
LIBSVM's ``rho`` is ``-b``.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit, prange

from ..exceptions import ConvergenceWarning

__all__ = [
    "SMOResult",
    "smo_solve",
    "smo_csvc",
    "smo_l2svc",
    "smo_hard_margin",
    "smo_epsilon_svr",
    "smo_nusvc",
    "smo_nusvr",
    "ConvergenceWarning",
]

TAU = 1e-12
INF = np.inf

# kernel codes understood by the compiled kernel-column routine
_K_LINEAR, _K_RBF, _K_POLY, _K_SIGMOID, _K_PRE = 0, 1, 2, 3, 4
_KERNEL_CODES = {"linear": _K_LINEAR, "rbf": _K_RBF, "poly": _K_POLY, "sigmoid": _K_SIGMOID}
_EQ_CODES = {"one": 0, "nu": 1, "none": 2}

# rows x features above which a kernel column is computed with prange
_PARALLEL_WORK = 1 << 30  # effectively off by default (see docs/benchmarks/smo.md)


# --------------------------------------------------------------------------------------
# result record
# --------------------------------------------------------------------------------------
@dataclass
class SMOResult:
    """What :func:`smo_solve` returns.

    Attributes
    ----------
    alpha : ndarray (n_var,)
        Optimal variables ``a``.
    grad : ndarray (n_var,)
        Gradient ``Q a + p`` at ``alpha``.
    b : float
        Bias in the convention ``f(x) = sum_i beta_i k(x, x_i) + b`` (LIBSVM's ``rho = -b``).
        ``0.0`` for ``equality="none"``.
    rho_nu : float or None
        nu-variants: ``(r1 + r2) / 2`` (nu-SVC: the margin variable ``rho``; nu-SVR: ``-epsilon``).
    r1, r2 : float or None
        nu-variants: mean gradient over free variables with sign +1 and -1 (LIBSVM's r1, r2).
    objective : float
        ``1/2 a^T Q a + p^T a`` (the minimised dual; the catalogue's dual value is its negative).
    n_iter : int
        SMO iterations (pair updates).
    max_violation : float
        Final maximal violating pair gap ``m(a) - M(a)`` (``equality="none"``: max projected
        gradient).
    status : str
        ``"optimal"`` or ``"max_iter"``.
    trace : dict or None
        With ``record_trace``: ``{"iter", "objective", "violation"}`` lists.
    compile_time : float
        Seconds of numba compilation spent in this call (0 once warm).
    beta : ndarray or None
        Wrappers only: signed coefficients on the N data points.
    extras : dict
        Wrappers only: e.g. ``alpha``, ``alpha_star``, ``epsilon`` for SVR.
    """

    alpha: np.ndarray
    grad: np.ndarray
    b: float
    rho_nu: float | None
    r1: float | None
    r2: float | None
    objective: float
    n_iter: int
    max_violation: float
    status: str
    trace: dict | None
    compile_time: float
    beta: np.ndarray | None = None
    extras: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------
# compiled kernel columns
# --------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _kval(kcode, Xd, xsq, Kpre, dorig, r, s, gamma, coef0, degree):
    if kcode == _K_PRE:
        return Kpre[dorig[r], dorig[s]]
    d = Xd.shape[1]
    dot = 0.0
    for t in range(d):
        dot += Xd[r, t] * Xd[s, t]
    if kcode == _K_RBF:
        return math.exp(-gamma * (xsq[r] + xsq[s] - 2.0 * dot))
    if kcode == _K_LINEAR:
        return dot
    if kcode == _K_POLY:
        return (gamma * dot + coef0) ** degree
    return math.tanh(gamma * dot + coef0)


@njit(cache=True, fastmath=True)
def _kcol_serial(kcode, Xd, xsq, Kpre, dorig, r, start, stop, out, gamma, coef0, degree):
    if kcode == _K_RBF:
        d = Xd.shape[1]
        xr = Xd[r]
        xs_r = xsq[r]
        for s in range(start, stop):
            dot = 0.0
            for t in range(d):
                dot += xr[t] * Xd[s, t]
            out[s] = math.exp(-gamma * (xs_r + xsq[s] - 2.0 * dot))
    else:
        for s in range(start, stop):
            out[s] = _kval(kcode, Xd, xsq, Kpre, dorig, r, s, gamma, coef0, degree)


@njit(cache=True, parallel=True)
def _kcol_parallel(kcode, Xd, xsq, Kpre, dorig, r, start, stop, out, gamma, coef0, degree):
    for s in prange(start, stop):
        out[s] = _kval(kcode, Xd, xsq, Kpre, dorig, r, s, gamma, coef0, degree)


@njit(cache=True)
def _row_sq(Xd):
    out = np.empty(Xd.shape[0])
    for r in range(Xd.shape[0]):
        acc = 0.0
        for t in range(Xd.shape[1]):
            acc += Xd[r, t] * Xd[r, t]
        out[r] = acc
    return out


# --------------------------------------------------------------------------------------
# the solver state lives in a handful of arrays; helpers take them explicitly
# --------------------------------------------------------------------------------------
@njit(cache=True)
def _get_col(r, length, kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree,
             cdata, slot_of, slot_key, slot_len, slot_time, clock, par_min):
    """Return the cache slot holding kernel column of data position r, valid on [0, length)."""
    clock[0] += 1
    s = slot_of[r]
    if s >= 0:
        slot_time[s] = clock[0]
        start = slot_len[s]
        if start >= length:
            return s
    else:
        # least recently used slot (free slots have time -1)
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
    row = cdata[s]
    if (length - start) * max(Xd.shape[1], 1) >= par_min and kcode != _K_PRE:
        _kcol_parallel(kcode, Xd, xsq, Kpre, dorig, r, start, length, row, gamma, coef0, degree)
    else:
        _kcol_serial(kcode, Xd, xsq, Kpre, dorig, r, start, length, row, gamma, coef0, degree)
    slot_len[s] = length
    return s


@njit(cache=True, inline="always")
def _status_of(a, u):
    if a >= u:
        return 1
    if a <= 0.0:
        return 0
    return 2


@njit(cache=True)
def _smo_core(kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree,
              identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar,
              eq_mode, tol, max_iter, n_slots, shrinking, verbose, trace_cap,
              par_min, gap_tol, gap_unit):
    l = alpha.shape[0]
    tol_min = tol * 1e-4  # the violating-pair tolerance is tightened at most 4 decades
    n_data = Xd.shape[0] if kcode != _K_PRE else Kpre.shape[0]
    if kcode == _K_PRE:
        n_data = dorig.shape[0]
    cdata = np.empty((n_slots, n_data), dtype=np.float32)
    slot_of = np.full(n_data, -1, dtype=np.int64)
    slot_key = np.full(n_slots, -1, dtype=np.int64)
    slot_len = np.zeros(n_slots, dtype=np.int64)
    slot_time = np.full(n_slots, -1, dtype=np.int64)
    clock = np.zeros(1, dtype=np.int64)

    status = np.empty(l, dtype=np.int8)
    QD = np.empty(l)
    for t in range(l):
        status[t] = _status_of(alpha[t], upper[t])
        r = dpos[t]
        QD[t] = _kval(kcode, Xd, xsq, Kpre, dorig, r, r, gamma, coef0, degree) + diag[t]

    # ---- initial gradient (G = p + Q a, G_bar = sum_{a at upper} u Q) ----
    for t in range(l):
        G[t] = p[t]
        G_bar[t] = 0.0
    for i in range(l):
        if status[i] != 0:
            s = _get_col(dpos[i], n_data, kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree,
                         cdata, slot_of, slot_key, slot_len, slot_time, clock, par_min)
            ci = cdata[s]
            ai = alpha[i] * sign[i]
            for k in range(l):
                G[k] += ai * sign[k] * ci[dpos[k]]
            G[i] += alpha[i] * diag[i]
            if status[i] == 1:
                ui = upper[i] * sign[i]
                for k in range(l):
                    G_bar[k] += ui * sign[k] * ci[dpos[k]]
                G_bar[i] += upper[i] * diag[i]

    obj = 0.0
    for t in range(l):
        obj += alpha[t] * (G[t] + p[t])
    obj *= 0.5

    # trace storage
    tr_iter = np.zeros(max(trace_cap, 1), dtype=np.int64)
    tr_obj = np.zeros(max(trace_cap, 1))
    tr_viol = np.zeros(max(trace_cap, 1))
    tr_n = 0
    tr_stride = 1

    active = l
    unshrink = False
    it = 0
    counter = min(l, 1000) + 1
    gap = INF
    status_code = 0  # 0 optimal, 1 max_iter
    print_every = max(1000, min(l, 100000))

    while True:
        if it >= max_iter:
            status_code = 1
            break
        counter -= 1
        if counter == 0:
            counter = min(l, 1000)
            if shrinking:
                active, unshrink = _do_shrinking(
                    eq_mode, active, l, unshrink, tol, G, G_bar, p, sign, status, alpha,
                    upper, dpos, vorig, QD, diag, identity, kcode, Xd, xsq, Kpre, dorig,
                    gamma, coef0, degree, cdata, slot_of, slot_key, slot_len, slot_time,
                    clock, par_min)
        # ---- working set selection ----
        i, j, gap = _select(eq_mode, active, G, sign, status, QD, dpos, identity, tol,
                            kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                            slot_of, slot_key, slot_len, slot_time, clock, par_min)
        if i < 0:
            # optimal on the active set: reconstruct and check on everything
            if active < l:
                _reconstruct(active, l, G, G_bar, p, sign, status, alpha, dpos, identity,
                             kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                             slot_of, slot_key, slot_len, slot_time, clock, par_min)
                active = l
                i, j, gap = _select(eq_mode, active, G, sign, status, QD, dpos, identity, tol,
                                    kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                                    slot_of, slot_key, slot_len, slot_time, clock, par_min)
                if i >= 0:
                    counter = 1  # shrink at the next iteration
            if i < 0:
                # LIBSVM's rule holds; stop only if the duality gap (O(l) from G) meets
                # gap_tol too, else tighten the violating-pair tolerance and go on
                if gap_tol <= 0.0 or tol <= tol_min or _rel_gap(
                        eq_mode, l, G, p, alpha, upper, sign, status, gap_unit) <= gap_tol:
                    break
                tol *= 0.1
                continue
        it += 1

        # ---- two-variable (or one-variable) update ----
        si = _get_col(dpos[i], active if identity else n_data, kcode, Xd, xsq, Kpre, dorig,
                      gamma, coef0, degree, cdata, slot_of, slot_key, slot_len, slot_time,
                      clock, par_min)
        ci = cdata[si]
        old_ai = alpha[i]
        Ci = upper[i]
        if eq_mode == 2:
            qc = QD[i]
            if qc <= 0.0:
                qc = TAU
            na = old_ai - G[i] / qc
            if na < 0.0:
                na = 0.0
            elif na > Ci:
                na = Ci
            alpha[i] = na
            dai = na - old_ai
            obj += G[i] * dai + 0.5 * QD[i] * dai * dai
            fi = dai * sign[i]
            if identity:
                for k in range(active):
                    G[k] += fi * sign[k] * ci[k]
            else:
                for k in range(active):
                    G[k] += fi * sign[k] * ci[dpos[k]]
            G[i] += diag[i] * dai
            ui_old = status[i] == 1
            status[i] = _status_of(alpha[i], Ci)
            ui_new = status[i] == 1
            if ui_old != ui_new:
                si = _get_col(dpos[i], l if identity else n_data, kcode, Xd, xsq, Kpre, dorig,
                              gamma, coef0, degree, cdata, slot_of, slot_key, slot_len,
                              slot_time, clock, par_min)
                ci = cdata[si]
                f = Ci * sign[i] if ui_new else -Ci * sign[i]
                for k in range(l):
                    G_bar[k] += f * sign[k] * ci[dpos[k]]
                G_bar[i] += (Ci if ui_new else -Ci) * diag[i]
        else:
            sj = _get_col(dpos[j], active if identity else n_data, kcode, Xd, xsq, Kpre,
                          dorig, gamma, coef0, degree, cdata, slot_of, slot_key, slot_len,
                          slot_time, clock, par_min)
            cj = cdata[sj]
            ci = cdata[si]  # (si cannot have been evicted: it is the most recent but one)
            old_aj = alpha[j]
            Cj = upper[j]
            Kij = ci[dpos[j]]
            Qij = sign[i] * sign[j] * Kij
            if sign[i] != sign[j]:
                qc = QD[i] + QD[j] + 2.0 * Qij
                if qc <= 0.0:
                    qc = TAU
                delta = (-G[i] - G[j]) / qc
                diff = alpha[i] - alpha[j]
                alpha[i] += delta
                alpha[j] += delta
                if diff > 0:
                    if alpha[j] < 0:
                        alpha[j] = 0.0
                        alpha[i] = diff
                else:
                    if alpha[i] < 0:
                        alpha[i] = 0.0
                        alpha[j] = -diff
                if diff > Ci - Cj:
                    if alpha[i] > Ci:
                        alpha[i] = Ci
                        alpha[j] = Ci - diff
                else:
                    if alpha[j] > Cj:
                        alpha[j] = Cj
                        alpha[i] = Cj + diff
            else:
                qc = QD[i] + QD[j] - 2.0 * Qij
                if qc <= 0.0:
                    qc = TAU
                delta = (G[i] - G[j]) / qc
                ssum = alpha[i] + alpha[j]
                alpha[i] -= delta
                alpha[j] += delta
                if ssum > Ci:
                    if alpha[i] > Ci:
                        alpha[i] = Ci
                        alpha[j] = ssum - Ci
                else:
                    if alpha[j] < 0:
                        alpha[j] = 0.0
                        alpha[i] = ssum
                if ssum > Cj:
                    if alpha[j] > Cj:
                        alpha[j] = Cj
                        alpha[i] = ssum - Cj
                else:
                    if alpha[i] < 0:
                        alpha[i] = 0.0
                        alpha[j] = ssum
            dai = alpha[i] - old_ai
            daj = alpha[j] - old_aj
            obj += (G[i] * dai + G[j] * daj + 0.5 * QD[i] * dai * dai
                    + 0.5 * QD[j] * daj * daj + Qij * dai * daj)
            fi = dai * sign[i]
            fj = daj * sign[j]
            if identity:
                for k in range(active):
                    G[k] += sign[k] * (fi * ci[k] + fj * cj[k])
            else:
                for k in range(active):
                    dk = dpos[k]
                    G[k] += sign[k] * (fi * ci[dk] + fj * cj[dk])
            G[i] += diag[i] * dai
            G[j] += diag[j] * daj
            ui_old = status[i] == 1
            uj_old = status[j] == 1
            status[i] = _status_of(alpha[i], Ci)
            status[j] = _status_of(alpha[j], Cj)
            ui_new = status[i] == 1
            uj_new = status[j] == 1
            if ui_old != ui_new:
                si = _get_col(dpos[i], l if identity else n_data, kcode, Xd, xsq, Kpre, dorig,
                              gamma, coef0, degree, cdata, slot_of, slot_key, slot_len,
                              slot_time, clock, par_min)
                ci = cdata[si]
                f = Ci * sign[i] if ui_new else -Ci * sign[i]
                for k in range(l):
                    G_bar[k] += f * sign[k] * ci[dpos[k]]
                G_bar[i] += (Ci if ui_new else -Ci) * diag[i]
            if uj_old != uj_new:
                sj = _get_col(dpos[j], l if identity else n_data, kcode, Xd, xsq, Kpre, dorig,
                              gamma, coef0, degree, cdata, slot_of, slot_key, slot_len,
                              slot_time, clock, par_min)
                cj = cdata[sj]
                f = Cj * sign[j] if uj_new else -Cj * sign[j]
                for k in range(l):
                    G_bar[k] += f * sign[k] * cj[dpos[k]]
                G_bar[j] += (Cj if uj_new else -Cj) * diag[j]

        if trace_cap > 0 and it % tr_stride == 0:
            if tr_n == trace_cap:
                # keep every other record, double the stride
                half = 0
                for q in range(0, tr_n, 2):
                    tr_iter[half] = tr_iter[q]
                    tr_obj[half] = tr_obj[q]
                    tr_viol[half] = tr_viol[q]
                    half += 1
                tr_n = half
                tr_stride *= 2
            if it % tr_stride == 0:
                tr_iter[tr_n] = it
                tr_obj[tr_n] = obj
                tr_viol[tr_n] = gap
                tr_n += 1
        if verbose and it % print_every == 0:
            print("smo iter", it, "violation", gap, "objective", obj, "active", active)

    if active < l:
        _reconstruct(active, l, G, G_bar, p, sign, status, alpha, dpos, identity,
                     kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                     slot_of, slot_key, slot_len, slot_time, clock, par_min)
        active = l
    gap = _violation(eq_mode, l, G, sign, status)

    # objective from scratch (more accurate than the running sum)
    obj = 0.0
    for t in range(l):
        obj += alpha[t] * (G[t] + p[t])
    obj *= 0.5

    # bias
    r1 = 0.0
    r2 = 0.0
    b = 0.0
    if eq_mode == 0:
        b = -_rho_one(l, G, sign, status)
    elif eq_mode == 1:
        r1, r2 = _rho_nu(l, G, sign, status)
        b = -(r1 - r2) / 2.0
    if verbose:
        print("smo done: iter", it, "violation", gap, "objective", obj)
    return (it, status_code, gap, obj, b, r1, r2,
            tr_iter[:tr_n].copy(), tr_obj[:tr_n].copy(), tr_viol[:tr_n].copy())


@njit(cache=True)
def _select(eq_mode, n_act, G, sign, status, QD, dpos, identity, tol,
            kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
            slot_of, slot_key, slot_len, slot_time, clock, par_min):
    """Working-set selection. Returns (i, j, gap); i = -1 when the stopping rule holds."""
    n_data = cdata.shape[1]
    if eq_mode == 2:
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
    if eq_mode == 0:
        Gmax = -INF
        Gmax2 = -INF
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
        jmin = -1
        omin = INF
        if imax >= 0:
            ln = n_act if identity else n_data
            s = _get_col(dpos[imax], min(ln, n_data), kcode, Xd, xsq, Kpre, dorig, gamma,
                         coef0, degree, cdata, slot_of, slot_key, slot_len, slot_time, clock,
                         par_min)
            ci = cdata[s]
            QDi = QD[imax]
            for t in range(n_act):
                if sign[t] > 0:
                    if status[t] != 0:
                        gd = Gmax + G[t]
                        if G[t] >= Gmax2:
                            Gmax2 = G[t]
                        if gd > 0:
                            qc = QDi + QD[t] - 2.0 * ci[dpos[t]]
                            if qc <= 0:
                                qc = TAU
                            od = -(gd * gd) / qc
                            if od <= omin:
                                jmin = t
                                omin = od
                else:
                    if status[t] != 1:
                        gd = Gmax - G[t]
                        if -G[t] >= Gmax2:
                            Gmax2 = -G[t]
                        if gd > 0:
                            qc = QDi + QD[t] - 2.0 * ci[dpos[t]]
                            if qc <= 0:
                                qc = TAU
                            od = -(gd * gd) / qc
                            if od <= omin:
                                jmin = t
                                omin = od
        else:
            for t in range(n_act):
                if sign[t] > 0:
                    if status[t] != 0 and G[t] >= Gmax2:
                        Gmax2 = G[t]
                else:
                    if status[t] != 1 and -G[t] >= Gmax2:
                        Gmax2 = -G[t]
        gap = Gmax + Gmax2
        if gap < tol or jmin == -1:
            return -1, -1, gap
        return imax, jmin, gap
    # ---- nu: two equalities, one per sign ----
    Gmaxp = -INF
    Gmaxp2 = -INF
    ip = -1
    Gmaxn = -INF
    Gmaxn2 = -INF
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
    ln = n_act if identity else n_data
    ln = min(ln, n_data)
    cp = cdata[0]
    cn = cdata[0]
    sp = -1
    if ip >= 0:
        sp = _get_col(dpos[ip], ln, kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                      slot_of, slot_key, slot_len, slot_time, clock, par_min)
    if iN >= 0:
        sn = _get_col(dpos[iN], ln, kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                      slot_of, slot_key, slot_len, slot_time, clock, par_min)
        cn = cdata[sn]
    if ip >= 0:
        cp = cdata[sp]
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
    if gap < tol or jmin == -1:
        return -1, -1, gap
    if sign[jmin] > 0:
        return ip, jmin, gap
    return iN, jmin, gap


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
    return (ub + lb) / 2.0


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
    r1 = sf1 / nf1 if nf1 > 0 else (ub1 + lb1) / 2.0
    r2 = sf2 / nf2 if nf2 > 0 else (ub2 + lb2) / 2.0
    return r1, r2


@njit(cache=True)
def _reconstruct(active, l, G, G_bar, p, sign, status, alpha, dpos, identity,
                 kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                 slot_of, slot_key, slot_len, slot_time, clock, par_min):
    """Gradient of the shrunk variables from G_bar and the free active variables."""
    if active == l:
        return
    n_data = cdata.shape[1]
    for j in range(active, l):
        G[j] = G_bar[j] + p[j]
    nr_free = 0
    for j in range(active):
        if status[j] == 2:
            nr_free += 1
    if nr_free * l > 2 * active * (l - active):
        for i in range(active, l):
            s = _get_col(dpos[i], active if identity else n_data, kcode, Xd, xsq, Kpre, dorig,
                         gamma, coef0, degree, cdata, slot_of, slot_key, slot_len, slot_time,
                         clock, par_min)
            ci = cdata[s]
            acc = 0.0
            for j in range(active):
                if status[j] == 2:
                    acc += alpha[j] * sign[j] * ci[dpos[j]]
            G[i] += sign[i] * acc
    else:
        for i in range(active):
            if status[i] == 2:
                s = _get_col(dpos[i], l if identity else n_data, kcode, Xd, xsq, Kpre, dorig,
                             gamma, coef0, degree, cdata, slot_of, slot_key, slot_len,
                             slot_time, clock, par_min)
                ci = cdata[s]
                f = alpha[i] * sign[i]
                for j in range(active, l):
                    G[j] += f * sign[j] * ci[dpos[j]]


@njit(cache=True)
def _swap(i, j, identity, alpha, G, G_bar, p, sign, upper, diag, status, QD, vorig, dpos,
          Xd, xsq, dorig, kcode, cdata, slot_of, slot_key, slot_len):
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
        return
    # identity mode: data positions follow the variables
    if kcode == _K_PRE:
        dorig[i], dorig[j] = dorig[j], dorig[i]
    else:
        for t in range(Xd.shape[1]):
            Xd[i, t], Xd[j, t] = Xd[j, t], Xd[i, t]
        xsq[i], xsq[j] = xsq[j], xsq[i]
    si = slot_of[i]
    sj = slot_of[j]
    slot_of[i] = sj
    slot_of[j] = si
    if si >= 0:
        slot_key[si] = j
    if sj >= 0:
        slot_key[sj] = i
    lo = min(i, j)
    hi = max(i, j)
    for s in range(slot_key.shape[0]):
        if slot_key[s] >= 0:
            if slot_len[s] > hi:
                cdata[s, lo], cdata[s, hi] = cdata[s, hi], cdata[s, lo]
            elif slot_len[s] > lo:
                slot_len[s] = lo


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
                  upper, dpos, vorig, QD, diag, identity, kcode, Xd, xsq, Kpre, dorig,
                  gamma, coef0, degree, cdata, slot_of, slot_key, slot_len, slot_time,
                  clock, par_min):
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
                     kcode, Xd, xsq, Kpre, dorig, gamma, coef0, degree, cdata,
                     slot_of, slot_key, slot_len, slot_time, clock, par_min)
        active = l
    i = 0
    while i < active:
        if _be_shrunk(eq_mode, i, G, sign, status, g1, g2, g3, g4):
            active -= 1
            while active > i:
                if not _be_shrunk(eq_mode, active, G, sign, status, g1, g2, g3, g4):
                    _swap(i, active, identity, alpha, G, G_bar, p, sign, upper, diag, status,
                          QD, vorig, dpos, Xd, xsq, dorig, kcode, cdata, slot_of, slot_key,
                          slot_len)
                    break
                active -= 1
        i += 1
    return active, unshrink


# --------------------------------------------------------------------------------------
# Python front end
# --------------------------------------------------------------------------------------
_SPEC_NAMES = {_K_LINEAR: "linear", _K_RBF: "rbf", _K_POLY: "poly", _K_SIGMOID: "sigmoid"}


def _kernel_spec(kernel: Any) -> tuple[str, float, float, float]:
    """``(name, gamma, coef0, degree)`` for the compiled code, read from
    :meth:`primaldual.kernels.Kernel.spec` (the one description of a kernel numba consumes);
    a kernel without a spec keeps its name and is evaluated in Python (full Gram)."""
    if isinstance(kernel, str):
        raise TypeError(f"kernel must be a primaldual.kernels.Kernel object, got the string "
                        f"{kernel!r}; build one with primaldual.kernels.make_kernel")
    spec_fn = getattr(kernel, "spec", None)
    if callable(spec_fn):
        spec = spec_fn()
        if spec is None:
            return str(getattr(kernel, "name", None)), 1.0, 0.0, 3.0
        return _SPEC_NAMES[spec.code], spec.gamma, spec.coef0, spec.degree
    name = getattr(kernel, "name", None)
    gamma = float(getattr(kernel, "gamma", 1.0) or 1.0) if name != "linear" else 1.0
    coef0 = float(getattr(kernel, "coef0", 0.0) or 0.0)
    degree = float(getattr(kernel, "degree", 3))
    return str(name), gamma, coef0, degree


def _as_vec(v: Any, n: int, name: str, default: float | None = None) -> np.ndarray:
    if v is None:
        if default is None:
            raise ValueError(f"{name} is required")
        return np.full(n, float(default))
    a = np.asarray(v, dtype=np.float64)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    if np.isnan(a).any():
        raise ValueError(f"{name} contains NaN")
    return a.copy()


def _warm_up() -> float:
    """Compile (or load from numba's cache) the core on a tiny problem; return seconds spent."""
    if _smo_core.signatures:
        return 0.0
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((6, 2))
    yw = np.array([1.0, -1.0] * 3)
    for eq in (0, 1):
        a0 = np.full(6, 0.5) if eq == 1 else np.zeros(6)
        _smo_core(_K_RBF, Xw.copy(), np.einsum("ij,ij->i", Xw, Xw), np.zeros((0, 0)),
                  np.arange(6), 1.0, 0.0, 3.0, True, np.arange(6), np.arange(6),
                  -np.ones(6), yw.copy(), np.ones(6), np.zeros(6), a0, np.empty(6),
                  np.empty(6), eq, 1e-3, 1000, 2, True, False, 0, _PARALLEL_WORK, 1e-3, 1.0)
    return time.perf_counter() - t0


def smo_solve(
    X: Any,
    kernel: Any,
    p: Any,
    upper: Any,
    *,
    sign: Any,
    index: Any = None,
    diag_add: Any = None,
    Q: Any = None,
    equality: str = "one",
    tol: float = 1e-3,
    max_iter: int = 10_000_000,
    cache_size: float = 200.0,
    shrinking: bool = True,
    alpha0: Any = None,
    verbose: bool = False,
    record_trace: bool = False,
    n_threads_min_work: int | None = None,
    gap_tol: float | None = None,
    gap_unit: float = 1.0,
) -> SMOResult:
    r"""Solve a box-constrained convex QP with at most two linear equalities by SMO.

    Problem::

        min_a  1/2 a^T Q a + p^T a
        s.t.   0 <= a_j <= upper_j                              (upper_j may be inf)
               equality="one":  sum_j sign_j a_j = delta        (delta = sign @ alpha0, 0 if none)
               equality="nu":   sum_{sign_j=+1} a_j = delta_+,  sum_{sign_j=-1} a_j = delta_-
                                (both read from alpha0, which is then required)
               equality="none": no equality (no bias; coordinate descent on one variable)

    with ``Q_jk = sign_j sign_k K(X[index_j], X[index_k]) + diag_add_j [j == k]``.

    Parameters
    ----------
    X : array (N, d)
        Data; for ``kernel.name == "precomputed"`` the N x N Gram matrix. Ignored when ``Q``
        is given.
    kernel : Kernel
        A :mod:`primaldual.kernels` kernel (``linear``, ``rbf``, ``poly``, ``sigmoid`` are
        evaluated inside numba, columns on demand; any other kernel is evaluated once as a
        full Gram matrix).
    p : array (n_var,)
        Linear term.
    upper : array (n_var,) or float
        Upper bounds ``u_j > 0`` (``np.inf`` allowed).
    sign : array (n_var,) of +-1
        Signs ``s_j`` (labels for classifiers; ``[+1]*N + [-1]*N`` for SVR).
    index : array (n_var,) of int, optional
        Data row of each variable (default identity; SVR: ``[0..N-1, 0..N-1]``).
    diag_add : array (n_var,) or float, optional
        Added to the diagonal of ``Q`` (L2-SVC: ``1/C``).
    Q : array (n_var, n_var), optional
        Dense ``Q`` used directly (it includes the signs); ``diag_add`` is added if given.
    equality : {"one", "nu", "none"}
        Which linear equalities hold (see above). For the nu variants the caller passes
        ``alpha0`` with the required per-sign sums, e.g. nu-SVC in LIBSVM scale
        (``upper = 1``, ``sum_{y=+1} a = sum_{y=-1} a = nu N / 2``; :func:`smo_nusvc` does
        this and rescales to docs/formulations.md's ``upper = 1/N``).
    tol : float
        Stop when ``m(a) - M(a) < tol`` (LIBSVM's ``eps``); ``"none"``: max projected
        gradient ``< tol``.
    max_iter : int
        Iteration limit; reaching it gives ``status="max_iter"`` and a ConvergenceWarning.
    cache_size : float
        Kernel column cache in MB (float32 columns, LRU).
    shrinking : bool
        LIBSVM shrinking heuristic.
    alpha0 : array (n_var,), optional
        Feasible warm start (checked; values within 1e-12 relative of a bound are snapped).
    verbose : bool
        Print progress.
    record_trace : bool
        Record ``(iteration, objective, violation)`` (every iteration, thinned to at most
        100,000 records for long runs).
    n_threads_min_work : int, optional
        Kernel columns with ``rows * features`` at least this are computed with numba's
        ``prange`` (default: off; see the benchmark notes).
    gap_tol : float, optional
        Also require the relative duality gap, computed from the gradient in O(n_var)
        (``sum_j a_j max(r_j, 0) + (u_j - a_j) max(-r_j, 0)`` with the reduced gradient
        ``r``, divided by ``max(gap_unit, |primal|)``), to be ``<= gap_tol``: while it is not,
        the violating-pair tolerance is divided by 10 (at most 4 times) and SMO goes on.
        ``None`` (default): LIBSVM's rule alone.
    gap_unit : float
        ``1`` in the problem's own units; ``s**2`` when ``p`` and ``upper`` were scaled by
        ``s`` (so the relative gap is that of the unscaled problem).

    Returns
    -------
    SMOResult
        ``b`` is the bias of ``f(x) = sum_i beta_i k(x, x_i) + b``: ``b = -rho`` with LIBSVM's
        ``rho`` (mean of ``sign_j G_j`` over free variables; midpoint of the KKT interval if
        none). nu: ``r1, r2`` = mean ``G`` over free variables with sign +1 / -1,
        ``b = -(r1 - r2)/2``, ``rho_nu = (r1 + r2)/2``.
    """
    if equality not in _EQ_CODES:
        raise ValueError(f"equality must be one of {sorted(_EQ_CODES)}, got {equality!r}")
    eq_mode = _EQ_CODES[equality]
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    if not cache_size > 0:
        raise ValueError(f"cache_size must be positive, got {cache_size!r}")

    sign = np.asarray(sign, dtype=np.float64).ravel().copy()
    n_var = sign.shape[0]
    if n_var == 0:
        raise ValueError("sign must be non-empty")
    if not np.all(np.abs(sign) == 1.0):
        raise ValueError("sign must contain only -1 and +1")
    p = _as_vec(p, n_var, "p")
    upper = _as_vec(upper, n_var, "upper")
    if np.any(~(upper > 0)):
        raise ValueError("upper must be > 0 (inf allowed)")
    diag = _as_vec(diag_add, n_var, "diag_add", default=0.0)

    empty2 = np.zeros((0, 0))
    if Q is not None:
        Q = np.asarray(Q, dtype=np.float64)
        if Q.shape != (n_var, n_var):
            raise ValueError(f"Q must have shape ({n_var}, {n_var}), got {Q.shape}")
        kcode = _K_PRE
        Kpre = np.ascontiguousarray(Q * np.outer(sign, sign))
        n_data = n_var
        idx = np.arange(n_var)
        gamma = coef0 = degree = 0.0
        Xd = empty2
    else:
        if kernel is None:
            raise TypeError("kernel is required unless Q is given")
        name, gamma, coef0, degree = _kernel_spec(kernel)
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if name == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError("X must be the square Gram matrix for a precomputed kernel")
            kcode = _K_PRE
            Kpre = np.ascontiguousarray(X)
            Xd = empty2
        elif name in _KERNEL_CODES:
            kcode = _KERNEL_CODES[name]
            Kpre = empty2
            Xd = np.ascontiguousarray(X).copy()
        else:
            if not callable(kernel):
                raise TypeError(f"kernel {kernel!r} is neither a known kernel name nor callable")
            kcode = _K_PRE
            Kpre = np.ascontiguousarray(np.asarray(kernel(X, X), dtype=np.float64))
            Xd = empty2
        n_data = X.shape[0]
        if index is None:
            if n_var != n_data:
                raise ValueError(f"sign has {n_var} entries but X has {n_data} rows; pass index")
            idx = np.arange(n_var)
        else:
            idx = np.asarray(index).ravel()
            if idx.shape != (n_var,) or not np.issubdtype(idx.dtype, np.integer):
                raise ValueError(f"index must be an integer array of shape ({n_var},)")
            if idx.min() < 0 or idx.max() >= n_data:
                raise ValueError("index out of range of the rows of X")
    identity = bool(n_var == n_data and np.array_equal(idx, np.arange(n_var)))
    dpos = idx.astype(np.int64).copy()
    dorig = np.arange(n_data, dtype=np.int64)
    xsq = _row_sq(Xd) if Xd.shape[0] else np.zeros(0)
    vorig = np.arange(n_var, dtype=np.int64)

    # ---- starting point ----
    if alpha0 is None:
        if eq_mode == 1:
            raise ValueError("equality='nu' needs a feasible alpha0 (it fixes the per-sign sums)")
        alpha = np.zeros(n_var)
    else:
        alpha = _as_vec(alpha0, n_var, "alpha0")
        scale = np.where(np.isfinite(upper), upper, 1.0)
        if np.any(alpha < -1e-12 * scale) or np.any(alpha > upper + 1e-12 * scale):
            raise ValueError("alpha0 violates 0 <= alpha0 <= upper")
        alpha = np.clip(alpha, 0.0, upper)
        alpha[np.abs(alpha) <= 1e-12 * scale] = 0.0
        fin = np.isfinite(upper)
        near = fin & (np.abs(alpha - upper) <= 1e-12 * scale)
        alpha[near] = upper[near]

    # ---- cache ----
    col_bytes = 4.0 * n_data
    n_slots = int(cache_size * 1024 * 1024 // col_bytes)
    n_slots = max(2, min(n_slots, n_data))

    trace_cap = 100_000 if record_trace else 0
    par_min = _PARALLEL_WORK if n_threads_min_work is None else int(n_threads_min_work)

    G = np.empty(n_var)
    G_bar = np.empty(n_var)
    compile_time = _warm_up()
    out = _smo_core(kcode, Xd, xsq, Kpre, dorig, float(gamma), float(coef0), float(degree),
                    identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar, eq_mode,
                    float(tol), int(max_iter), n_slots, bool(shrinking), bool(verbose),
                    trace_cap, par_min, float(gap_tol or 0.0), float(gap_unit))
    it, stcode, gap, obj, b, r1, r2, tri, tro, trv = out

    # undo the permutation
    a_out = np.empty(n_var)
    g_out = np.empty(n_var)
    a_out[vorig] = alpha
    g_out[vorig] = G
    status = "optimal" if stcode == 0 else "max_iter"
    if stcode == 1:
        warnings.warn(
            f"Solver terminated early (max_iter={max_iter}).  Consider pre-processing your data "
            f"with StandardScaler or MinMaxScaler. (SMO reached max_iter={max_iter} with "
            f"maximal violation {gap:.3e} > tol={tol:g})",
            ConvergenceWarning, stacklevel=2)
    trace = None
    if record_trace:
        trace = {"iter": tri.tolist(), "objective": tro.tolist(), "violation": trv.tolist()}
    nu = eq_mode == 1
    return SMOResult(
        alpha=a_out, grad=g_out, b=float(b),
        rho_nu=float((r1 + r2) / 2) if nu else None,
        r1=float(r1) if nu else None, r2=float(r2) if nu else None,
        objective=float(obj), n_iter=int(it), max_violation=float(gap), status=status,
        trace=trace, compile_time=float(compile_time))


# --------------------------------------------------------------------------------------
# catalogue wrappers (docs/formulations.md sections 1-6)
# --------------------------------------------------------------------------------------
def _labels(y: Any, name: str = "y") -> np.ndarray:
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.size == 0 or not np.all(np.abs(y) == 1.0):
        raise ValueError(f"{name} must contain only -1 and +1")
    return y


def _pos(v: Any, name: str, allow_inf: bool = False) -> float:
    try:
        v = float(v)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a number, got {v!r}") from exc
    if not v > 0 or (math.isinf(v) and not allow_inf) or math.isnan(v):
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    return v


def smo_csvc(X: Any, y: Any, kernel: Any, C: float, *, sample_weight: Any = None,
             **opts: Any) -> SMOResult:
    r"""C-SVC dual (docs/formulations.md 2): ``min 1/2 a^T Q a - 1^T a``, ``y^T a = 0``,
    ``0 <= a_i <= C_i = C w_i``, ``Q = D_y K D_y``.

    ``result.beta = y * alpha``; ``f(x) = sum_i beta_i k(x, x_i) + b`` with ``b = result.b``.
    ``opts`` are passed to :func:`smo_solve` (tol, cache_size, shrinking, alpha0, ...).
    """
    y = _labels(y)
    C = _pos(C, "C")
    n = y.shape[0]
    w = _as_vec(sample_weight, n, "sample_weight", default=1.0)
    if np.any(w <= 0):
        raise ValueError("sample_weight must be > 0 (drop points with zero weight)")
    r = smo_solve(X, kernel, -np.ones(n), C * w, sign=y, **opts)
    r.beta = y * r.alpha
    return r


def smo_l2svc(X: Any, y: Any, kernel: Any, C: float, **opts: Any) -> SMOResult:
    r"""L2-SVC dual (docs/formulations.md 3): ``min 1/2 a^T (Q + I/C) a - 1^T a``, ``y^T a = 0``,
    ``a >= 0`` (no upper bound). Slacks ``xi_i = a_i / C``; ``beta = y * alpha``."""
    y = _labels(y)
    C = _pos(C, "C")
    n = y.shape[0]
    r = smo_solve(X, kernel, -np.ones(n), np.full(n, np.inf), sign=y,
                  diag_add=np.full(n, 1.0 / C), **opts)
    r.beta = y * r.alpha
    return r


def smo_hard_margin(X: Any, y: Any, kernel: Any, **opts: Any) -> SMOResult:
    r"""Hard-margin dual (docs/formulations.md 1): ``min 1/2 a^T Q a - 1^T a``, ``y^T a = 0``,
    ``a >= 0``. On non-separable data the dual is unbounded: SMO then runs to ``max_iter``
    with a growing objective (``status="max_iter"``)."""
    y = _labels(y)
    n = y.shape[0]
    r = smo_solve(X, kernel, -np.ones(n), np.full(n, np.inf), sign=y, **opts)
    r.beta = y * r.alpha
    return r


def smo_epsilon_svr(X: Any, y: Any, kernel: Any, C: float, epsilon: float, *,
                    sample_weight: Any = None, **opts: Any) -> SMOResult:
    r"""epsilon-SVR dual (docs/formulations.md 5) on ``2N`` variables ``a = [alpha; alpha*]``:
    ``min 1/2 beta^T K beta + eps 1^T(alpha + alpha*) - y^T beta``, ``1^T beta = 0``,
    ``0 <= alpha, alpha* <= C``, ``beta = alpha - alpha*``.

    ``result.alpha`` has ``2N`` entries; ``result.extras["alpha"]``, ``["alpha_star"]`` the
    halves, ``result.beta = alpha - alpha*``; ``b = y_i - (K beta)_i - eps`` on free alpha_i.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    C = _pos(C, "C")
    try:
        epsilon = float(epsilon)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"epsilon must be a number, got {epsilon!r}") from exc
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    n = y.shape[0]
    w = _as_vec(sample_weight, n, "sample_weight", default=1.0)
    p = np.concatenate([epsilon - y, epsilon + y])
    sign = np.concatenate([np.ones(n), -np.ones(n)])
    idx = np.concatenate([np.arange(n), np.arange(n)])
    opts = dict(opts)
    if opts.get("Q") is not None:
        raise ValueError("smo_epsilon_svr builds its own Q from the kernel; pass X instead")
    r = smo_solve(X, kernel, p, np.concatenate([C * w, C * w]), sign=sign, index=idx, **opts)
    a, a_s = r.alpha[:n].copy(), r.alpha[n:].copy()
    r.beta = a - a_s
    r.extras = {"alpha": a, "alpha_star": a_s}
    return r


def _nu_start(sign: np.ndarray, upper: np.ndarray, total_pos: float,
              total_neg: float) -> np.ndarray:
    """LIBSVM's greedy feasible start: fill variables in order up to the per-sign sums."""
    a = np.zeros(sign.shape[0])
    rem = {1.0: total_pos, -1.0: total_neg}
    for i in range(sign.shape[0]):
        s = float(sign[i])
        a[i] = min(upper[i], rem[s])
        rem[s] -= a[i]
    return a


def smo_nusvc(X: Any, y: Any, kernel: Any, nu: float, **opts: Any) -> SMOResult:
    r"""nu-SVC dual (docs/formulations.md 4): ``min 1/2 a^T Q a`` s.t. ``0 <= a_i <= 1/N``,
    ``y^T a = 0``, ``1^T a >= nu`` (tight at the optimum: ``1^T a = nu``).

    Solved in LIBSVM's scale (``upper = 1``, per-class sums ``nu N / 2``, so ``tol`` means
    what it means in LIBSVM) and rescaled by ``1/N``: ``alpha``, ``grad``, ``b``, ``r1``,
    ``r2``, ``rho_nu`` and ``max_violation`` are reported for the ``1/N`` problem, the
    objective for it too (``/ N^2``). ``b = -(r1 - r2)/2``, ``rho = rho_nu = (r1 + r2)/2``;
    ``alpha / rho`` solves the C-SVC with ``C = 1/(N rho)``. A warm start ``alpha0`` is taken
    in the ``1/N`` scale.
    """
    y = _labels(y)
    n = y.shape[0]
    nu = _pos(nu, "nu")
    n_pos = int(np.sum(y > 0))
    n_neg = n - n_pos
    if nu > 1 or nu * n > 2 * min(n_pos, n_neg):
        raise ValueError(f"nu={nu} is infeasible: need nu <= 2 min(n_pos, n_neg)/N = "
                         f"{2 * min(n_pos, n_neg) / n:.4g}")
    opts = dict(opts)
    upper = np.ones(n)
    if opts.get("alpha0") is not None:
        opts["alpha0"] = np.asarray(opts["alpha0"], dtype=np.float64) * n
    else:
        opts["alpha0"] = _nu_start(y, upper, nu * n / 2, nu * n / 2)
    r = smo_solve(X, kernel, np.zeros(n), upper, sign=y, equality="nu", **opts)
    r.alpha = r.alpha / n
    r.grad = r.grad / n
    r.objective = r.objective / n**2
    r.b, r.r1, r.r2, r.rho_nu = r.b / n, r.r1 / n, r.r2 / n, r.rho_nu / n
    r.max_violation = r.max_violation / n
    if r.trace is not None:
        r.trace["objective"] = [v / n**2 for v in r.trace["objective"]]
        r.trace["violation"] = [v / n for v in r.trace["violation"]]
    r.beta = y * r.alpha
    return r


def smo_nusvr(X: Any, y: Any, kernel: Any, C: float, nu: float, **opts: Any) -> SMOResult:
    r"""nu-SVR dual (docs/formulations.md 6) on ``2N`` variables ``a = [alpha; alpha*]``:
    ``min 1/2 beta^T K beta - y^T beta`` s.t. ``1^T beta = 0``, ``0 <= alpha, alpha* <= C/N``,
    ``1^T(alpha + alpha*) <= C nu`` (tight; solved as ``1^T alpha = 1^T alpha* = C nu / 2``).

    scikit-learn's ``NuSVR(C=c)`` is this problem with ``C = c N`` (LIBSVM folds the ``1/N``
    into C). ``b = -(r1 - r2)/2``; the tube width is ``extras["epsilon"] = -rho_nu``.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    C = _pos(C, "C")
    nu = _pos(nu, "nu")
    if nu > 1:
        raise ValueError(f"nu must be in (0, 1], got {nu}")
    n = y.shape[0]
    sign = np.concatenate([np.ones(n), -np.ones(n)])
    idx = np.concatenate([np.arange(n), np.arange(n)])
    upper = np.full(2 * n, C / n)
    opts = dict(opts)
    if opts.get("alpha0") is None:
        a0 = np.zeros(2 * n)
        rem = C * nu / 2
        for i in range(n):
            a0[i] = a0[n + i] = min(rem, C / n)
            rem -= a0[i]
        opts["alpha0"] = a0
    p = np.concatenate([-y, y])
    r = smo_solve(X, kernel, p, upper, sign=sign, index=idx, equality="nu", **opts)
    a, a_s = r.alpha[:n].copy(), r.alpha[n:].copy()
    r.beta = a - a_s
    r.extras = {"alpha": a, "alpha_star": a_s, "epsilon": -r.rho_nu}
    return r
