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
* an LRU cache of float32 kernel columns, each stored at the length requested, their entries
  bounded by ``cache_size`` megabytes (LIBSVM's policy); kernel columns are computed from ``X``
  on demand inside numba, never the N x N matrix,
* the nu-variants with two equalities (LIBSVM's ``Solver_NU``).

Sign conventions (docs/formulations.md): the predictor is ``f(x) = sum_i beta_i k(x, x_i) + b``;
LIBSVM's ``rho`` is ``-b``.

The compiled (numba, ``cache=True``) part is split by concern, each module calling only those
below it: :mod:`~primaldual.backends.smo.columns` (kernel values and columns),
:mod:`~primaldual.backends.smo.threads` (columns shared with helper threads),
:mod:`~primaldual.backends.smo.cache` (the column cache), :mod:`~primaldual.backends.smo.select`
(working-set selection, violation, bias, duality gap), :mod:`~primaldual.backends.smo.shrink`
(shrinking, gradient reconstruction) and this module, the main loop (:func:`_smo_core`).  The
Python entry is :mod:`primaldual.backends.smo.solver`.

numba's on-disk cache of a function is invalidated by a change of its own source file only,
not of the files of the functions it calls (numba's documented limitation): after editing
one of these modules, delete their ``__pycache__`` (an installed release rewrites them all).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...kernels.compiled import row_sq_norms  # noqa: F401  (the xsq of _smo_core)
from .cache import _col_hit, _get_col, _new_block_cache, _new_cache, _new_col_whole
from .codes import _GAP_CHECK_EVERY, _K_PRE
from .columns import _diag_q
from .select import (
    _BRANCH_FREE_MIN,
    TAU,
    _low_max,
    _rel_gap,
    _rho_nu,
    _rho_one,
    _select_first,
    _select_one,
    _select_second_nu,
    _select_second_one,
    _select_single,
    _violation,
)
from .shrink import _add_col, _do_shrinking, _reconstruct
from .stamp import tie
from .threads import (  # noqa: F401  (public names, also importable from here)
    _C_NCOL,
    _C_NHELP,
    _C_OFF,
    _C_RATE_1,
    _C_RATE_N,
    _C_STATS,
    _C_TIME,
    HELPER_MIN_WORK,
    HELPER_SPIN,
    MAX_HELPERS,
    _now_ns,
    column_helpers,
    column_stats,
    helper_threads,
    helpers_wanted,
    no_helpers,
)

INF = np.inf


@njit(cache=True, inline="always")
def _status_of(a, u):
    if a >= u:
        return 1
    if a <= 0.0:
        return 0
    return 2


@njit(cache=True)
def _init_gradient(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
                   identity, dpos, p, sign, upper, diag, alpha, G, G_bar, status, n_data, cdata,
                   slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf):
    """The gradient at the start: ``G = p + Q a`` and ``G_bar = sum_{a_j at u_j} u_j Q_j``
    (one column per nonzero ``a_j``); returns the objective ``a^T (G + p) / 2``."""
    l = alpha.shape[0]
    for t in range(l):
        G[t] = p[t]
        G_bar[t] = 0.0
    whole = ctrl[_C_TIME] == 0 and ctrl[_C_NHELP] == 0   # (_new_col_whole)
    for i in range(l):
        if status[i] != 0:
            s = _col_hit(dpos[i], n_data, cdata, slot_of, slot_len, lru, clock)
            if s < 0 and whole:
                s = _new_col_whole(dpos[i], n_data, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq,
                                   Kpre, dorig, gamma, coef0, degree, cdata, slot_of, slot_len,
                                   lru, clock)
            if s < 0:
                s = _get_col(dpos[i], n_data, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre,
                             dorig, gamma, coef0, degree, cdata, slot_of, swaplog, slot_len, lru,
                             clock, ctrl, hbuf)
            ci = cdata[s]
            ai = alpha[i] * sign[i]
            _add_col(G, ai, sign, ci, dpos, identity, 0, l)
            G[i] += alpha[i] * diag[i]
            if status[i] == 1:
                ui = upper[i] * sign[i]
                _add_col(G_bar, ui, sign, ci, dpos, identity, 0, l)
                G_bar[i] += upper[i] * diag[i]
    obj = 0.0
    for t in range(l):
        obj += alpha[t] * (G[t] + p[t])
    obj *= 0.5
    return obj


@njit(cache=True, inline="always")
def _single_alpha(ai, Ci, Gi, QDi):
    """The one-variable step (no equality): ``a_i - G_i / Q_ii`` clipped to ``[0, C_i]``."""
    qc = QDi
    if qc <= 0.0:
        qc = TAU
    na = ai - Gi / qc
    if na < 0.0:
        na = 0.0
    elif na > Ci:
        na = Ci
    return na


@njit(cache=True, inline="always")
def _pair_alphas(opposite, ai, aj, Ci, Cj, Gi, Gj, QDi, QDj, Qij):
    """LIBSVM's two-variable step: the new ``(a_i, a_j)`` on the segment the equality keeps
    (``opposite``: ``s_i != s_j``, ``a_i - a_j`` fixed; else ``a_i + a_j``), clipped to the
    box; ``Qij = s_i s_j K_ij``."""
    if opposite:
        qc = QDi + QDj + 2.0 * Qij
        if qc <= 0.0:
            qc = TAU
        delta = (-Gi - Gj) / qc
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0:
            if aj < 0:
                aj = 0.0
                ai = diff
        else:
            if ai < 0:
                ai = 0.0
                aj = -diff
        if diff > Ci - Cj:
            if ai > Ci:
                ai = Ci
                aj = Ci - diff
        else:
            if aj > Cj:
                aj = Cj
                ai = Cj + diff
    else:
        qc = QDi + QDj - 2.0 * Qij
        if qc <= 0.0:
            qc = TAU
        delta = (Gi - Gj) / qc
        ssum = ai + aj
        ai -= delta
        aj += delta
        if ssum > Ci:
            if ai > Ci:
                ai = Ci
                aj = ssum - Ci
        else:
            if aj < 0:
                aj = 0.0
                ai = ssum
        if ssum > Cj:
            if aj > Cj:
                aj = Cj
                ai = ssum - Cj
        else:
            if ai < 0:
                ai = 0.0
                aj = ssum
    return ai, aj


@njit(cache=True)
def _trace_add(tr_iter, tr_obj, tr_viol, tr_n, tr_stride, trace_cap, it, obj, gap):
    """Record iteration ``it`` (``tr_n`` records so far, one every ``tr_stride`` iterations);
    a full trace first keeps every other record and doubles the stride.  Returns the new
    ``(tr_n, tr_stride)``."""
    if tr_n == trace_cap:
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
    return tr_n, tr_stride


@njit(cache=True)
def _finish(eq_mode, active, l, G, G_bar, p, sign, status, alpha, dpos, identity, kcode, Xd, Xt,
            Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
            swaplog, slot_len, lru, clock, ctrl, hbuf):
    """The end of a solve: the gradient of the shrunk variables reconstructed, then the maximal
    violation, the objective from scratch (more accurate than the running sum) and the bias:
    ``(gap, obj, b, r1, r2)`` (``r1``, ``r2``: the nu-variants' two ``rho``)."""
    if active < l:
        _reconstruct(active, l, G, G_bar, p, sign, status, alpha, dpos, identity,
                     kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
                     cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf)
    gap = _violation(eq_mode, l, G, sign, status)
    obj = 0.0
    for t in range(l):
        obj += alpha[t] * (G[t] + p[t])
    obj *= 0.5
    r1 = 0.0
    r2 = 0.0
    b = 0.0
    if eq_mode == 0:
        b = -_rho_one(l, G, sign, status)
    elif eq_mode == 1:
        r1, r2 = _rho_nu(l, G, sign, status)
        b = -(r1 - r2) / 2.0
    return gap, obj, b, r1, r2


@njit(cache=True)
def _report(it, gap, obj, clock, ctrl):
    """The ``verbose`` line at the end of a solve (the counters of ``clock`` and ``ctrl``)."""
    print("smo done: iter", it, "violation", gap, "objective", obj, "column requests",
          clock[0], "columns computed", clock[1], "kernel entries", clock[2],
          "column seconds", clock[3] * 1e-9, "loop seconds", (_now_ns() - clock[4]) * 1e-9,
          "shared-column chunks (solver, helpers, recomputed)", ctrl[_C_STATS],
          ctrl[_C_STATS + 1], ctrl[_C_STATS + 2], "shareable columns", ctrl[_C_NCOL],
          "kept alone", ctrl[_C_OFF], "ns per 1024 entries alone", ctrl[_C_RATE_1],
          "shared", ctrl[_C_RATE_N])


@njit(cache=True, nogil=True)
def _smo_core(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
              identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar,
              eq_mode, tol, max_iter, cache_floats, shrinking, verbose, trace_cap,
              ctrl, hbuf, gap_tol, gap_unit):
    """The SMO solve: a cache of ``cache_floats`` kernel entries (the block cache when every
    whole column fits, else the list cache), then :func:`_smo_loop` (compiled for each)."""
    n_data = Xd.shape[0] if Xptr.shape[0] == 0 else Xptr.shape[0]
    if kcode == _K_PRE:
        n_data = dorig.shape[0]
    if cache_floats >= n_data * n_data:
        block, slot_of, swaplog, slot_len, lru, clock = _new_block_cache(n_data)
        return _smo_loop(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
                         degree, identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar,
                         eq_mode, tol, max_iter, shrinking, verbose, trace_cap, ctrl, hbuf,
                         gap_tol, gap_unit, n_data, block, slot_of, swaplog, slot_len, lru, clock)
    cdata, slot_of, swaplog, slot_len, lru, clock = _new_cache(n_data, cache_floats)
    return _smo_loop(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
                     identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar,
                     eq_mode, tol, max_iter, shrinking, verbose, trace_cap, ctrl, hbuf,
                     gap_tol, gap_unit, n_data, cdata, slot_of, swaplog, slot_len, lru, clock)


# Kept whole: a compiled call per step costs two atomic refcounts per array argument.
@njit(cache=True)
def _smo_loop(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree,
              identity, dpos, vorig, p, sign, upper, diag, alpha, G, G_bar,
              eq_mode, tol, max_iter, shrinking, verbose, trace_cap, ctrl, hbuf, gap_tol,
              gap_unit, n_data, cdata, slot_of, swaplog, slot_len, lru, clock):
    l = alpha.shape[0]
    tol0 = tol
    tol_min = tol * 1e-4  # the violating-pair tolerance is tightened at most 4 decades
    ctrl[_C_TIME] = 1 if verbose else 0
    clock[4] = _now_ns()

    status = np.empty(l, dtype=np.int8)
    QD = np.empty(l)
    # scratch of _select_one; without identity two more rows, the columns of i and j laid out
    # in variable order (_select_one writes i's, the update j's)
    sbuf = np.empty((2 if identity else 4, l if l >= _BRANCH_FREE_MIN else 0))
    for t in range(l):
        status[t] = _status_of(alpha[t], upper[t])
    _diag_q(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, dpos,
            diag, QD)

    obj = _init_gradient(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
                         degree, identity, dpos, p, sign, upper, diag, alpha, G, G_bar, status,
                         n_data, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf)

    # trace storage
    tr_iter = np.zeros(max(trace_cap, 1), dtype=np.int64)
    tr_obj = np.zeros(max(trace_cap, 1))
    tr_viol = np.zeros(max(trace_cap, 1))
    tr_n = 0
    tr_stride = 1

    active = l
    unshrink = l < 0  # False, typed bool: a literal False would compile _do_shrinking twice
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
            # no shrinking while chasing the gap: the periodic gap check needs every G_j
            if shrinking and tol >= tol0:
                active, unshrink = _do_shrinking(
                    eq_mode, active, l, unshrink, tol, G, G_bar, p, sign, status, alpha,
                    upper, dpos, vorig, QD, diag, identity, kcode, Xd, Xt, Xptr, Xind, Xval, Xs,
                    xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of, swaplog, slot_len,
                    lru, clock, ctrl, hbuf)
        # ---- working set selection (:func:`_select`, written out) ----
        # (when no pair violates on the active set: reconstruct, select again on everything)
        again = False
        laid = False  # sbuf[2] holds i's column in variable order (_select_one, no identity)
        while True:
            if eq_mode == 2:
                i, j, gap = _select_single(active, G, status, tol)
            elif eq_mode == 0 and active >= _BRANCH_FREE_MIN:
                i, j, gap = _select_one(active, G, sign, status, QD, dpos, identity, tol,
                                        kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                                        gamma, coef0, degree, cdata, slot_of, swaplog, slot_len,
                                        lru, clock, ctrl, hbuf, sbuf)
                laid = not identity
            else:
                g1, i1, g2, i2 = _select_first(eq_mode, active, G, sign, status)
                ln = min(active if identity else n_data, n_data)
                s1 = 0
                s2 = 0
                if i1 >= 0:
                    s1 = _col_hit(dpos[i1], ln, cdata, slot_of, slot_len, lru, clock)
                    if s1 < 0:
                        s1 = _get_col(dpos[i1], ln, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre,
                                      dorig, gamma, coef0, degree, cdata, slot_of, swaplog,
                                      slot_len, lru, clock, ctrl, hbuf)
                if i2 >= 0:
                    s2 = _col_hit(dpos[i2], ln, cdata, slot_of, slot_len, lru, clock)
                    if s2 < 0:
                        s2 = _get_col(dpos[i2], ln, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre,
                                      dorig, gamma, coef0, degree, cdata, slot_of, swaplog,
                                      slot_len, lru, clock, ctrl, hbuf)
                if eq_mode != 0:
                    i, j, gap = _select_second_nu(active, G, sign, status, QD, dpos, tol, g1, i1,
                                                  g2, i2, cdata, s1, s2)
                elif i1 >= 0:
                    i, j, gap = _select_second_one(active, G, sign, status, QD, dpos, identity,
                                                   tol, g1, i1, cdata, s1)
                else:  # no first variable: no second, the gap from I_low alone
                    i = -1
                    j = -1
                    gap = g1 + _low_max(active, G, sign, status, -INF)
            if i >= 0 or again or active == l:
                break
            # optimal on the active set: reconstruct and check on everything
            _reconstruct(active, l, G, G_bar, p, sign, status, alpha, dpos, identity,
                         kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0,
                         degree, cdata, slot_of, swaplog, slot_len, lru, clock, ctrl, hbuf)
            active = l
            again = True
        if i < 0 or again:
            if again and i >= 0:
                counter = 1  # shrink at the next iteration
            if i < 0:
                # LIBSVM's rule holds; stop only if the duality gap (O(l) from G) meets
                # gap_tol too, else tighten the violating-pair tolerance and go on
                if gap_tol <= 0.0 or tol <= tol_min or _rel_gap(
                        eq_mode, l, G, p, alpha, upper, sign, status, gap_unit) <= gap_tol:
                    break
                tol *= 0.1
                continue
        elif (tol < tol0 and gap < tol0 and active == l and it % _GAP_CHECK_EVERY == 0
              and _rel_gap(eq_mode, l, G, p, alpha, upper, sign, status, gap_unit)
              <= gap_tol):
            # chasing the gap with a tightened tolerance: stop as soon as the certified gap
            # (and LIBSVM's rule at the caller's tol) holds, not when the tightened rule does
            break
        it += 1

        # ---- two-variable (or one-variable) update ----
        si = _col_hit(dpos[i], active if identity else n_data, cdata, slot_of, slot_len, lru, clock)
        if si < 0:
            si = _get_col(dpos[i], active if identity else n_data, kcode, Xd, Xt, Xptr, Xind, Xval,
                          Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of, swaplog,
                          slot_len, lru, clock, ctrl, hbuf)
        ci = cdata[si]
        old_ai = alpha[i]
        Ci = upper[i]
        if eq_mode == 2:
            na = _single_alpha(old_ai, Ci, G[i], QD[i])
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
                si = _col_hit(dpos[i], l if identity else n_data, cdata, slot_of, slot_len,
                              lru, clock)
                if si < 0:
                    si = _get_col(dpos[i], l if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                                  Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                                  swaplog, slot_len, lru, clock, ctrl, hbuf)
                ci = cdata[si]
                f = Ci * sign[i] if ui_new else -Ci * sign[i]
                _add_col(G_bar, f, sign, ci, dpos, identity, 0, l)
                G_bar[i] += (Ci if ui_new else -Ci) * diag[i]
        else:
            sj = _col_hit(dpos[j], active if identity else n_data, cdata, slot_of, slot_len,
                          lru, clock)
            if sj < 0:
                sj = _get_col(dpos[j], active if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                              Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                              swaplog, slot_len, lru, clock, ctrl, hbuf)
            cj = cdata[sj]
            ci = cdata[si]  # (si cannot have been evicted: it is the most recent but one)
            old_aj = alpha[j]
            Cj = upper[j]
            Kij = ci[dpos[j]]
            Qij = sign[i] * sign[j] * Kij
            alpha[i], alpha[j] = _pair_alphas(sign[i] != sign[j], old_ai, old_aj, Ci, Cj, G[i],
                                              G[j], QD[i], QD[j], Qij)
            dai = alpha[i] - old_ai
            daj = alpha[j] - old_aj
            obj += (G[i] * dai + G[j] * daj + 0.5 * QD[i] * dai * dai
                    + 0.5 * QD[j] * daj * daj + Qij * dai * daj)
            fi = dai * sign[i]
            fj = daj * sign[j]
            if identity:
                for k in range(active):
                    G[k] += sign[k] * (fi * ci[k] + fj * cj[k])
            elif laid:
                # both columns in variable order: a loop without the index, which vectorises
                # (same arithmetic: the laid-out entries are the float32 ones, exactly)
                ei = sbuf[2]
                ej = sbuf[3]
                for k in range(active):
                    ej[k] = cj[dpos[k]]
                for k in range(active):
                    G[k] += sign[k] * (fi * ei[k] + fj * ej[k])
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
                si = _col_hit(dpos[i], l if identity else n_data, cdata, slot_of, slot_len,
                              lru, clock)
                if si < 0:
                    si = _get_col(dpos[i], l if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                                  Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                                  swaplog, slot_len, lru, clock, ctrl, hbuf)
                ci = cdata[si]
                f = Ci * sign[i] if ui_new else -Ci * sign[i]
                _add_col(G_bar, f, sign, ci, dpos, identity, 0, l)
                G_bar[i] += (Ci if ui_new else -Ci) * diag[i]
            if uj_old != uj_new:
                sj = _col_hit(dpos[j], l if identity else n_data, cdata, slot_of, slot_len,
                              lru, clock)
                if sj < 0:
                    sj = _get_col(dpos[j], l if identity else n_data, kcode, Xd, Xt, Xptr, Xind,
                                  Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, cdata, slot_of,
                                  swaplog, slot_len, lru, clock, ctrl, hbuf)
                cj = cdata[sj]
                f = Cj * sign[j] if uj_new else -Cj * sign[j]
                _add_col(G_bar, f, sign, cj, dpos, identity, 0, l)
                G_bar[j] += (Cj if uj_new else -Cj) * diag[j]

        if trace_cap > 0 and it % tr_stride == 0:
            tr_n, tr_stride = _trace_add(tr_iter, tr_obj, tr_viol, tr_n, tr_stride, trace_cap, it,
                                         obj, gap)
        if verbose and it % print_every == 0:
            print("smo iter", it, "violation", gap, "objective", obj, "active", active)

    gap, obj, b, r1, r2 = _finish(eq_mode, active, l, G, G_bar, p, sign, status, alpha, dpos,
                                  identity, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                                  gamma, coef0, degree, cdata, slot_of, swaplog, slot_len, lru,
                                  clock, ctrl, hbuf)
    if verbose:
        _report(it, gap, obj, clock, ctrl)
    return (it, status_code, gap, obj, b, r1, r2,
            tr_iter[:tr_n].copy(), tr_obj[:tr_n].copy(), tr_viol[:tr_n].copy())


tie(globals())  # one cache stamp for the core's files (smo/stamp.py)
