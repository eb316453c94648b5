r"""SMO in vectorised numpy on a dense kernel matrix: the small-problem route of ``smo_solve``.

The same algorithm as the numba core (LIBSVM's second-order working-set selection, the
maximal-violating-pair stopping rule, then the duality gap from the gradient in O(n) with the
violating-pair tolerance tightened by 10 at most four times while the gap exceeds
``gap_tol``, the gap then checked every ``_GAP_CHECK_EVERY`` iterations so that the run stops
as soon as it is certified), with one difference: no shrinking and no column cache.  The
kernel matrix over the variables, ``K[j, k] = k(x_index_j, x_index_k)``, is formed once
(``n_var <= DENSE_MAX_VAR``, at most ~50 MB), each iteration is a handful of numpy
operations on vectors of length ``n_var``, and nothing is compiled: a first fit costs what
numpy costs, not numba's compilation (about 40 s of CPU for the core on a fresh install).

The problem is :func:`primaldual.backends.smo.solver.smo_solve`'s::

    min_a 1/2 a^T Q a + p^T a,  Q_jk = s_j s_k K_jk + d_j [j = k],  0 <= a_j <= u_j,
    equality_mode 0: s^T a = const; 1: one sum per sign; 2: none.

The result is certified by the caller exactly as the numba route's is (the certificate
recomputes the objective and the KKT residuals from ``X`` and the returned coefficients).
"""

from __future__ import annotations

import math

import numpy as np

from .codes import _GAP_CHECK_EVERY
from .codes import midpoint as _midpoint

__all__ = ["DENSE_MAX_ITER", "DENSE_MAX_VAR", "dense_smo"]

#: largest number of variables the dense route takes (``n_var**2`` float64: 50 MB)
DENSE_MAX_VAR: int = 2500
#: iterations after which an automatically chosen dense run is continued by the numba core
#: (at ~20-100 us per iteration: a second or two; compiling the core costs ~40 s once)
DENSE_MAX_ITER: int = 20_000

TAU = 1e-12
_INF = math.inf


def _rho_one(yG: np.ndarray, at_u: np.ndarray, at_l: np.ndarray, pos: np.ndarray) -> float:
    """LIBSVM's ``rho`` (``b = -rho``): mean of ``s_j G_j`` over free variables, else the
    midpoint of the interval the bounded ones leave."""
    free = ~(at_u | at_l)
    if free.any():
        return float(yG[free].mean())
    upper_side = (at_u & ~pos) | (at_l & pos)   # rho <= s_j G_j
    lower_side = (at_u & pos) | (at_l & ~pos)   # rho >= s_j G_j
    ub = float(yG[upper_side].min()) if upper_side.any() else _INF
    lb = float(yG[lower_side].max()) if lower_side.any() else -_INF
    return _midpoint(lb, ub)


def _rho_nu(G: np.ndarray, at_u: np.ndarray, at_l: np.ndarray,
            pos: np.ndarray) -> tuple[float, float]:
    """LIBSVM's ``r1, r2`` of ``Solver_NU``: mean ``G`` over free variables of each sign."""
    out = []
    for side in (pos, ~pos):
        free = side & ~(at_u | at_l)
        if free.any():
            out.append(float(G[free].mean()))
            continue
        lo, up = side & at_u, side & at_l
        lb = float(G[lo].max()) if lo.any() else -_INF
        ub = float(G[up].min()) if up.any() else _INF
        out.append(_midpoint(lb, ub))
    return out[0], out[1]


def _rel_gap(eq_mode: int, G: np.ndarray, p: np.ndarray, alpha: np.ndarray,
             upper: np.ndarray, sign: np.ndarray, at_u: np.ndarray, at_l: np.ndarray,
             pos: np.ndarray, gap_unit: float) -> float:
    """The compiled core's ``_rel_gap`` (:mod:`primaldual.backends.smo.select`, see there): the
    relative duality gap of the box QP and its largest single complementarity term, from the
    gradient in O(n)."""
    if eq_mode == 0:
        b = -_rho_one(sign * G, at_u, at_l, pos)
        r = G + (b if math.isfinite(b) else 0.0) * sign
    elif eq_mode == 1:
        r1, r2 = _rho_nu(G, at_u, at_l, pos)
        r1 = r1 if math.isfinite(r1) else 0.0
        r2 = r2 if math.isfinite(r2) else 0.0
        r = G - np.where(pos, r1, r2)
    else:
        r = G
    amax = max(float(alpha.max(initial=0.0)), 0.0)
    rp = np.maximum(r, 0.0)
    rn = np.maximum(-r, 0.0)
    fin = np.isfinite(upper)
    slack = np.where(fin, upper - alpha, 0.0)
    terms = alpha * rp + np.where(fin, slack * rn, np.maximum(1.0, alpha) * rn)
    gap = float(np.sum(alpha * rp) + np.sum(np.where(fin, slack * rn, amax * rn)))
    worst = float(terms.max(initial=0.0))
    obj = 0.5 * float(alpha @ (G + p))
    return max(gap, worst) / max(gap_unit, abs(gap - obj))


def _select(eq_mode: int, G: np.ndarray, sign: np.ndarray, pos: np.ndarray, at_u: np.ndarray,
            at_l: np.ndarray, i_up: np.ndarray, i_low: np.ndarray, QD: np.ndarray, K: np.ndarray,
            tol: float, neg_inf: np.ndarray) -> tuple[int, int, float, bool]:
    """LIBSVM's working-set selection (WSS2; one variable without an equality):
    ``(i, j, gap, found)``, ``found`` false when the stopping rule holds at ``tol``."""
    i = j = -1
    if eq_mode == 2:
        v = np.maximum(np.where(at_u, 0.0, -G), np.where(at_l, 0.0, G))
        i = int(np.argmax(v))
        gap = float(v[i])
        j = i
        found = gap >= tol
    else:
        yG = sign * G
        vup = np.where(i_up, -yG, neg_inf)
        vlow = np.where(i_low, yG, neg_inf)
        if eq_mode == 0:
            i = int(np.argmax(vup))
            gmax = float(vup[i])
            gap = gmax + float(vlow.max())
            if gmax == -_INF or not gap >= tol:
                found = False
            else:
                # j maximises gd^2 / qc over gd > 0 (LIBSVM: minimises -gd^2 / qc)
                gd = np.maximum(vlow + gmax, 0.0)
                qc = np.maximum(QD - 2.0 * K[i] + QD[i], TAU)
                score = gd * gd / qc
                j = int(np.argmax(score))
                found = score[j] > 0.0
        else:
            vp = np.where(pos, vup, neg_inf)
            vn = np.where(pos, neg_inf, vup)
            ip = int(np.argmax(vp))
            iN = int(np.argmax(vn))
            gp, gn = float(vp[ip]), float(vn[iN])
            lp = np.where(pos, vlow, neg_inf)
            ln = np.where(pos, neg_inf, vlow)
            gap = max(gp + float(lp.max()), gn + float(ln.max()))
            if not gap >= tol:
                found = False
            else:
                gd = np.maximum(np.where(pos, gp, gn) + vlow, 0.0)
                qc = np.maximum(QD + np.where(pos, QD[ip] - 2.0 * K[ip],
                                              QD[iN] - 2.0 * K[iN]), TAU)
                score = gd * gd / qc
                j = int(np.argmax(score))
                found = score[j] > 0.0
                i = ip if pos[j] else iN
    return i, j, gap, found


def _pair_step(opposite: bool, ai: float, aj: float, Ci: float, Cj: float, Gi: float, Gj: float,
               QDi: float, QDj: float, Qij: float) -> tuple[float, float]:
    """LIBSVM's two-variable step: the new ``(a_i, a_j)`` on the segment the equality keeps
    (``opposite``: ``s_i != s_j``), clipped to the box."""
    if opposite:
        qc_ = (QDi + QDj) + 2.0 * Qij
        if qc_ <= 0.0:
            qc_ = TAU
        delta = (-Gi - Gj) / qc_
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0:
            if aj < 0:
                aj = 0.0
                ai = diff
        elif ai < 0:
            ai = 0.0
            aj = -diff
        if diff > Ci - Cj:
            if ai > Ci:
                ai = Ci
                aj = Ci - diff
        elif aj > Cj:
            aj = Cj
            ai = Cj + diff
    else:
        qc_ = (QDi + QDj) - 2.0 * Qij
        if qc_ <= 0.0:
            qc_ = TAU
        delta = (Gi - Gj) / qc_
        ssum = ai + aj
        ai -= delta
        aj += delta
        if ssum > Ci:
            if ai > Ci:
                ai = Ci
                aj = ssum - Ci
        elif aj < 0:
            aj = 0.0
            ai = ssum
        if ssum > Cj:
            if aj > Cj:
                aj = Cj
                ai = ssum - Cj
        elif ai < 0:
            ai = 0.0
            aj = ssum
    return ai, aj


def _finish(eq_mode: int, G: np.ndarray, p: np.ndarray, alpha: np.ndarray, sign: np.ndarray,
            pos: np.ndarray, at_u: np.ndarray, at_l: np.ndarray, i_up: np.ndarray,
            i_low: np.ndarray, neg_inf: np.ndarray) -> tuple[float, float, float, float, float]:
    """The end of a solve: the final violation, the objective from scratch and the bias,
    ``(gap, obj, b, r1, r2)``."""
    if eq_mode == 2:
        gap = float(np.maximum(np.where(at_u, 0.0, -G), np.where(at_l, 0.0, G)).max(initial=0.0))
    else:
        yG = sign * G
        vup = np.where(i_up, -yG, neg_inf)
        vlow = np.where(i_low, yG, neg_inf)
        if eq_mode == 0:
            gap = float(vup.max()) + float(vlow.max())
        else:
            gap = max(float(vup[pos].max(initial=-_INF)) + float(vlow[pos].max(initial=-_INF)),
                      float(vup[~pos].max(initial=-_INF)) + float(vlow[~pos].max(initial=-_INF)))
    obj = 0.5 * float(alpha @ (G + p))
    b = r1 = r2 = 0.0
    if eq_mode == 0:
        b = -_rho_one(sign * G, at_u, at_l, pos)
    elif eq_mode == 1:
        r1, r2 = _rho_nu(G, at_u, at_l, pos)
        b = -(r1 - r2) / 2.0
    return gap, obj, b, r1, r2


def dense_smo(K: np.ndarray, p: np.ndarray, sign: np.ndarray, upper: np.ndarray,
              diag: np.ndarray, alpha: np.ndarray, G: np.ndarray, eq_mode: int, tol: float,
              max_iter: int, verbose: bool = False, trace_cap: int = 0,
              gap_tol: float = 0.0, gap_unit: float = 1.0) -> tuple:
    """Run SMO on the dense kernel matrix ``K`` (``n_var x n_var``, unsigned).

    ``alpha`` (a feasible start) and ``G`` (output: the gradient ``Q a + p``) are updated in
    place.  Returns the numba core's tuple ``(n_iter, status_code, violation, objective, b, r1,
    r2, trace_iter, trace_objective, trace_violation)`` (status 0 optimal, 1 max_iter).
    """
    n = alpha.shape[0]
    tol0 = tol
    tol_min = tol * 1e-4
    pos = sign > 0
    QD = np.diagonal(K) + diag
    at_u = alpha >= upper
    at_l = (alpha <= 0.0) & ~at_u
    # I_up: a_j can move so that s_j a_j grows; I_low: so that it shrinks (LIBSVM's sets)
    i_up = np.where(pos, ~at_u, ~at_l)
    i_low = np.where(pos, ~at_l, ~at_u)
    G[:] = p + diag * alpha
    nz = np.flatnonzero(alpha)
    if nz.size:
        G += sign * (K[:, nz] @ (alpha[nz] * sign[nz]))
    obj = 0.5 * float(alpha @ (G + p))

    tr_iter: list[int] = []
    tr_obj: list[float] = []
    tr_viol: list[float] = []
    tr_stride = 1
    print_every = max(1000, min(n, 100000))
    neg_inf = np.full(n, -_INF)
    it = 0
    status_code = 0
    gap = _INF
    while True:
        if it >= max_iter:
            status_code = 1
            break
        # ---- working-set selection (WSS2) ----
        i, j, gap, found = _select(eq_mode, G, sign, pos, at_u, at_l, i_up, i_low, QD, K, tol,
                                   neg_inf)
        if not found:
            # LIBSVM's rule holds: stop if the duality gap meets gap_tol too, else tighten
            if gap_tol <= 0.0 or tol <= tol_min or _rel_gap(
                    eq_mode, G, p, alpha, upper, sign, at_u, at_l, pos, gap_unit) <= gap_tol:
                break
            tol *= 0.1
            continue
        if (tol < tol0 and gap < tol0 and it % _GAP_CHECK_EVERY == 0 and _rel_gap(
                eq_mode, G, p, alpha, upper, sign, at_u, at_l, pos, gap_unit) <= gap_tol):
            break  # chasing the gap (tightened tolerance): stop once it is certified
        it += 1

        # ---- update ----
        old_ai = float(alpha[i])
        Ci = float(upper[i])
        if eq_mode == 2:
            qc_ = float(QD[i])
            if qc_ <= 0.0:
                qc_ = TAU
            na = min(max(old_ai - float(G[i]) / qc_, 0.0), Ci)
            alpha[i] = na
            dai = na - old_ai
            obj += float(G[i]) * dai + 0.5 * float(QD[i]) * dai * dai
            G += (dai * sign[i]) * sign * K[i]
            G[i] += diag[i] * dai
            changed: tuple[int, ...] = (i,)
        else:
            ai, aj = old_ai, float(alpha[j])
            old_aj = aj
            Cj = float(upper[j])
            si, sj = float(sign[i]), float(sign[j])
            Gi, Gj = float(G[i]), float(G[j])
            Qij = si * sj * float(K[i, j])
            ai, aj = _pair_step(si != sj, ai, aj, Ci, Cj, Gi, Gj, float(QD[i]), float(QD[j]), Qij)
            alpha[i] = ai
            alpha[j] = aj
            dai = ai - old_ai
            daj = aj - old_aj
            obj += (Gi * dai + Gj * daj + 0.5 * float(QD[i]) * dai * dai
                    + 0.5 * float(QD[j]) * daj * daj + Qij * dai * daj)
            G += sign * (K[i] * (dai * si) + K[j] * (daj * sj))
            G[i] += diag[i] * dai
            G[j] += diag[j] * daj
            changed = (i, j)
        for t in changed:
            u = alpha[t] >= upper[t]
            lo = (alpha[t] <= 0.0) and not u
            at_u[t] = u
            at_l[t] = lo
            i_up[t] = not u if pos[t] else not lo
            i_low[t] = not lo if pos[t] else not u

        if trace_cap > 0 and it % tr_stride == 0:
            if len(tr_iter) == trace_cap:  # keep every other record, double the stride
                tr_iter, tr_obj, tr_viol = tr_iter[::2], tr_obj[::2], tr_viol[::2]
                tr_stride *= 2
            if it % tr_stride == 0:
                tr_iter.append(it)
                tr_obj.append(obj)
                tr_viol.append(gap)
        if verbose and it % print_every == 0:
            print("smo (dense) iter", it, "violation", gap, "objective", obj)

    gap, obj, b, r1, r2 = _finish(eq_mode, G, p, alpha, sign, pos, at_u, at_l, i_up, i_low, neg_inf)
    if verbose:
        print("smo (dense) done: iter", it, "violation", gap, "objective", obj)
    return (it, status_code, gap, obj, b, r1, r2, np.asarray(tr_iter, dtype=np.int64),
            np.asarray(tr_obj, dtype=float), np.asarray(tr_viol, dtype=float))
