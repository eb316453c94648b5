"""The certificate of the low-rank backend's point (the Lagrangian dual bound of
:mod:`~primaldual.backends.lowrank.solver`'s module docstring, recomputed from the point) and the
small steps around a solve: the presolve that fixes variables an equality pins to a bound, the
equality multipliers read from the gradient, and the polish of an equality lost to rounding."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla


def _box_min(c: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Elementwise ``min_{lo <= t <= hi} 1/2 d t^2 + c t``: returns (value, argmin)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(d > 0, -c / np.where(d > 0, d, 1.0), np.where(c > 0, lo, hi))
        t = np.where((c == 0) & (d <= 0), np.clip(0.0, lo, hi), t)
        t = np.clip(t, lo, hi)
        val = 0.5 * d * t * t + c * t
    val = np.where(np.isnan(val), 0.0, val)  # c == 0 with an infinite bound
    return val, t


def _certificate(B, p, upper, lower, A, rhs, d, a, lam):
    """Primal/dual values, gap and KKT residuals at (a, eta=B^T a, lam); see module docstring."""
    eta = B.T @ a
    return certificate_from_products(eta, B @ eta, p, upper, lower, A, rhs, d, a, lam)


def certificate_from_products(eta, Bw, p, upper, lower, A, rhs, d, a, lam):
    """:func:`_certificate` given the two products ``eta = B^T a`` and ``Bw = B eta`` (computed
    by the caller, e.g. as chunked reductions over a distributed ``B``); every other term is
    O(N) on the returned point. Returns ``(eta, qp, primal, dual, gap, kkt, grad)``."""
    qp = 0.5 * float(eta @ eta) + 0.5 * float(a @ (d * a)) + float(p @ a)
    grad = Bw + d * a + p  # gradient of the QP objective
    c = p + Bw - A.T @ lam
    phi, _ = _box_min(c, d, lower, upper)
    g = -0.5 * float(eta @ eta) + float(lam @ rhs) + float(phi.sum())
    primal = -g
    dual = -qp
    gap = primal - dual
    # optimal bound multipliers given (eta, lam): reduced gradient of the Lagrangian in a
    r = grad - A.T @ lam
    zl = np.maximum(r, 0.0)
    zu = np.maximum(-r, 0.0)
    fl = np.isfinite(lower)
    fu = np.isfinite(upper)
    box_viol = max(
        float(np.max(np.where(fl, lower - a, 0.0), initial=0.0)),
        float(np.max(np.where(fu, a - upper, 0.0), initial=0.0)),
    )
    # the equality residual relative to the size of its terms, |A a - rhs| / (|A| |a| + |rhs|):
    # at C = 1e-8 every alpha is tiny, and an absolute residual of 1e-13 can be a 100% violation
    # of y^T alpha = 0 (the oracle fuzz found such fits certified optimal)
    eq_abs = np.abs(A @ a - rhs)
    eq_den = np.abs(A) @ np.abs(a) + np.abs(rhs)
    eq_res = float(np.max(np.where(eq_den > 0, eq_abs / np.where(eq_den > 0, eq_den, 1.0),
                                   eq_abs), initial=0.0))
    dual_feas = max(
        float(np.max(np.where(fl, 0.0, zl), initial=0.0)),
        float(np.max(np.where(fu, 0.0, zu), initial=0.0)),
    )
    comp = max(
        float(np.max(np.where(fl, zl * np.where(fl, a - lower, 0.0), 0.0), initial=0.0)),
        float(np.max(np.where(fu, zu * np.where(fu, upper - a, 0.0), 0.0), initial=0.0)),
    )
    kkt = {
        "primal_feasibility": max(eq_res, box_viol),
        "equality_residual": eq_res,
        "box_violation": box_viol,
        "dual_feasibility": dual_feas,
        "complementarity": comp,
    }
    return eta, qp, primal, dual, gap, kkt, grad


def _multiplier_from_gradient(grad, a, lower, upper, arow, margin):
    """LIBSVM's rule for the multiplier of one equality row from the QP gradient.

    Stationarity ``grad_i - lambda a_i = z_l - z_u``: free variables give ``lambda = grad_i/a_i``
    (averaged); without free variables, the midpoint of the interval allowed by the signs of
    the bound multipliers.
    """
    nz = arow != 0
    width = upper - lower
    at_lo = np.isfinite(lower) & (a - lower <= margin * np.where(np.isfinite(width), width, 1.0))
    at_hi = np.isfinite(upper) & (upper - a <= margin * np.where(np.isfinite(width), width, 1.0))
    free = nz & ~at_lo & ~at_hi
    ratio = np.zeros_like(grad)
    ratio[nz] = grad[nz] / arow[nz]
    if free.any():
        return float(ratio[free].mean())
    # at lower: grad - lam a_i >= 0; at upper: <= 0
    ub_mask = nz & ((at_lo & (arow > 0)) | (at_hi & (arow < 0)))
    lb_mask = nz & ((at_lo & (arow < 0)) | (at_hi & (arow > 0)))
    hi = float(ratio[ub_mask].min()) if ub_mask.any() else np.inf
    lo = float(ratio[lb_mask].max()) if lb_mask.any() else -np.inf
    if np.isfinite(hi) and np.isfinite(lo):
        return 0.5 * (lo + hi)
    if np.isfinite(hi):
        return hi
    if np.isfinite(lo):
        return lo
    return 0.0


def _presolve(B, p, upper, lower, A, rhs, d):
    """Fix variables whose box is a point or forced by an equality row at its extreme.

    Returns (status, fixed_mask, fixed_values, keep_rows). status is "ok" or "infeasible".
    """
    n = B.shape[0]
    if (lower > upper).any():
        return "infeasible", None, None, None
    fixed = lower == upper
    xfix = np.where(fixed, lower, 0.0)
    keep = np.ones(A.shape[0], dtype=bool)
    for _ in range(2):
        free = ~fixed
        rhs_red = rhs - A[:, fixed] @ xfix[fixed]
        for r in range(A.shape[0]):
            if not keep[r]:
                continue
            row = np.where(free, A[r], 0.0)
            scale = 1.0 + float(np.abs(row) @ np.where(np.isfinite(upper), np.abs(upper), 0.0))
            scale += float(np.abs(row) @ np.where(np.isfinite(lower), np.abs(lower), 0.0))
            with np.errstate(invalid="ignore"):
                lo_c = np.where(row > 0, row * lower, np.where(row < 0, row * upper, 0.0))
                hi_c = np.where(row > 0, row * upper, np.where(row < 0, row * lower, 0.0))
            lo, hi = float(lo_c.sum()), float(hi_c.sum())
            tol = 1e-12 * scale
            if rhs_red[r] < lo - tol or rhs_red[r] > hi + tol:
                return "infeasible", None, None, None
            if not np.any(row != 0):
                keep[r] = False
                continue
            if abs(rhs_red[r] - lo) <= tol or abs(rhs_red[r] - hi) <= tol:
                at_lo = abs(rhs_red[r] - lo) <= tol
                nz = row != 0
                val = np.where(
                    (row > 0) == at_lo, lower, upper
                )  # bound attaining the extreme
                fixed = fixed | nz
                xfix = np.where(nz, val, xfix)
                keep[r] = False
    if A.shape[0] > 1 and keep.sum() > 1 and (~fixed).any():
        from scipy.optimize import linprog

        free = ~fixed
        rows = np.flatnonzero(keep)
        res = linprog(
            np.zeros(int(free.sum())),
            A_eq=A[np.ix_(rows, free)],
            b_eq=rhs[rows] - A[np.ix_(rows, fixed)] @ xfix[fixed],
            bounds=np.column_stack([lower[free], upper[free]]),
            method="highs",
        )
        if res.status == 2:
            return "infeasible", None, None, None
        # drop linearly dependent (consistent) rows
        Ak = A[np.ix_(rows, free)]
        _, R, piv = sla.qr(Ak.T, mode="economic", pivoting=True)
        dr = np.abs(np.diag(R))
        rank = int(np.sum(dr > 1e-10 * max(dr.max(initial=0.0), 1e-300)))
        for j in piv[rank:]:
            keep[rows[j]] = False
    del n
    return "ok", fixed, xfix, keep


# ----------------------------------------------------------------------------- the IPM


def _equality_at_rounding(x, A, rhs) -> bool:
    """Whether ``|A x - rhs| <= 1e-13 (|A| |x| + |rhs|)`` row by row (nothing to polish)."""
    if A.shape[0] == 0:
        return True
    res = np.abs(A @ x - rhs)
    return bool(np.all(res <= 1e-13 * (np.abs(A) @ np.abs(x) + np.abs(rhs))))


def _polish_equality(x, A, rhs, lower, upper):
    """Remove the equality residual by a minimum-norm shift of the variables away from bounds."""
    if A.shape[0] == 0:
        return x
    r = A @ x - rhs
    if not np.any(r):
        return x
    width = np.minimum(x - lower, upper - x)
    for factor in (1e3, 10.0, 1.0):
        # move only variables far from their bounds relative to the correction size
        step_size = float(np.max(np.abs(r))) * factor
        F = width > step_size
        if not F.any():
            continue
        AF = A[:, F]
        G = AF @ AF.T
        try:
            lam = np.linalg.solve(G, r)
        except np.linalg.LinAlgError:
            continue
        dxF = -AF.T @ lam
        xn = x.copy()
        xn[F] += dxF
        if np.all(xn >= lower) and np.all(xn <= upper):
            return xn
    return x
