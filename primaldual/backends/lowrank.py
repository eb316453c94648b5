"""Low-rank eta-reformulation backend: an interior-point solver in O(N M^2) per iteration.

With a low-rank factor ``K ~= V V^T`` (``V`` is N x M), every catalogue dual whose quadratic
term is ``beta^T K beta`` becomes a box-constrained QP in which the N x N Hessian is replaced by
``B B^T`` with ``B`` N x M (FORMULATIONS.md section 14, Fine & Scheinberg 2001)::

    min_a   1/2 ||B^T a||^2 + 1/2 a^T diag(d) a + p^T a
    s.t.    A a = delta          [lambda, free]      (A is k x N, "sign"; omitted if None)
            lower <= a <= upper  [z_l, z_u >= 0]

Writing ``eta = B^T a`` gives the eta-problem ``min 1/2 eta^T eta + ... s.t. eta = B^T a``,
whose Hessian is ``diag(I_M, diag(d))``. ``eta`` is ``w`` in the M-dimensional feature space:

- C-SVC:  ``B = D_y V``, ``p = -1``, ``A = y^T``, ``delta = 0``, ``upper = C_i``, ``w = eta``.
- L2-SVC: as C-SVC with ``d = 1/C_i`` and ``upper = inf``.
- epsilon-SVR: ``a = [alpha; alpha_star]`` (2N), ``B = [V; -V]``, ``p = [eps - y; eps + y]``,
  ``A = [1^T, -1^T]``, ``upper = C``, ``w = eta = V^T (alpha - alpha_star)``.
- nu-variants: add a second row to ``A`` (e.g. ``[1^T]`` with ``delta = nu``).

Sign convention (FORMULATIONS.md): the Lagrangian is
``objective - lambda^T (A a - delta) - z_l^T (a - lower) - z_u^T (upper - a)``. For C-SVC,
L2-SVC and epsilon-SVR the multiplier of the first equality row is ``lambda_0 = -b`` with the
prediction ``f(x) = v(x)^T w + b`` (LIBSVM's ``rho`` is ``-b = lambda_0``).

Certificate of the returned point (never copied from the iteration): with ``w = B^T a`` and the
equality multipliers ``lambda``, the Lagrangian dual of the QP is

``g(w, lambda) = -1/2 ||w||^2 + lambda^T delta
                 + sum_i min_{lower_i <= t <= upper_i} (1/2 d_i t^2 + c_i t)``,
``c = p + B w - A^T lambda``,

a lower bound on the QP for *any* ``(w, lambda)``. For C-SVC ``-g`` is exactly the low-rank SVM
primal ``1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i (v_i^T w + b))``. We report, in the SVM
orientation of FORMULATIONS.md, ``primal_objective = -g(w, lambda)`` and
``dual_objective = -(QP objective at a)``, so ``gap = primal - dual >= 0`` for a feasible ``a``
and ``relative_gap = gap / max(1, |primal|)``.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import dsyrk

__all__ = [
    "LowRankResult",
    "lowrank_qp_solve",
    "eta_problem_cvxpy",
    "lowrank_csvc",
    "choose_rank",
    "exact_gap",
]

_STATUSES = ("optimal", "max_iter", "infeasible", "numerical_error")


@dataclass
class LowRankResult:
    """Solution and certificate of the eta-reformulated box QP.

    Attributes
    ----------
    alpha : ndarray (N,)
        The QP variable ``a`` (for C-SVC the multipliers ``alpha``; for epsilon-SVR
        ``[alpha; alpha_star]``). All NaN when ``status == "infeasible"``.
    eta : ndarray (M,)
        ``B^T alpha``; the low-rank ``w`` (``f(x) = v(x)^T eta + b``).
    b : float
        Bias ``b = -lambda_0`` (multiplier of the first equality row); 0 without equality.
    objective : float
        QP objective ``1/2 ||B^T a||^2 + 1/2 a^T diag(d) a + p^T a`` (minimisation form).
    primal_objective, dual_objective : float
        ``-g(eta, lambda)`` and ``-objective`` (see module docstring); for C-SVC these are the
        low-rank SVM primal and dual values.
    gap, relative_gap : float
        ``primal_objective - dual_objective`` and ``gap / max(1, |primal_objective|)``.
    kkt : dict
        Max-abs residuals at the returned point: ``primal_feasibility`` (equality and box),
        ``dual_feasibility``, ``complementarity`` (with the optimal bound multipliers for
        the given ``(eta, lambda)``), plus the interior-point residuals ``ipm_*``.
    n_iter : int
        Interior-point iterations.
    status : str
        ``"optimal" | "max_iter" | "infeasible" | "numerical_error"``.
    multipliers : ndarray (k,)
        ``lambda`` of all equality rows (convention above).
    info : dict
        Timings and diagnostics (``b_gradient``: the bias from LIBSVM's rule on the gradient).
    """

    alpha: np.ndarray
    eta: np.ndarray
    b: float
    objective: float
    primal_objective: float
    dual_objective: float
    gap: float
    relative_gap: float
    kkt: dict[str, float]
    n_iter: int
    status: str
    multipliers: np.ndarray = field(default_factory=lambda: np.zeros(0))
    info: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- validation


def _as_vector(name: str, value: Any, n: int, *, allow_inf: bool) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a float or an array of floats") from exc
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), got {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if not allow_inf and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite")
    return arr


def _validate(B, p, upper, lower, sign, delta, diag, tol, max_iter):
    try:
        B = np.asarray(B, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError("B must be a 2-D float array") from exc
    if B.ndim != 2 or B.shape[0] == 0 or B.shape[1] == 0:
        raise ValueError(f"B must be a non-empty 2-D array (N x M), got shape {B.shape}")
    if not np.isfinite(B).all():
        raise ValueError("B must be finite")
    n = B.shape[0]
    p = _as_vector("p", p, n, allow_inf=False)
    upper = _as_vector("upper", upper, n, allow_inf=True)
    lower = _as_vector("lower", lower, n, allow_inf=True)
    if np.isneginf(upper).any():
        raise ValueError("upper must not be -inf")
    if np.isposinf(lower).any():
        raise ValueError("lower must not be +inf")
    if diag is None:
        d = np.zeros(n)
    else:
        d = _as_vector("diag", diag, n, allow_inf=False)
        if (d < 0).any():
            raise ValueError("diag must be non-negative")
    if sign is None:
        A = np.zeros((0, n))
        rhs = np.zeros(0)
    else:
        try:
            A = np.asarray(sign, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError("sign must be an array of floats") from exc
        if A.ndim == 1:
            A = A[None, :]
        if A.ndim != 2 or A.shape[1] != n:
            raise ValueError(f"sign must have shape ({n},) or (k, {n}), got {np.shape(sign)}")
        if not np.isfinite(A).all():
            raise ValueError("sign must be finite")
        try:
            rhs = np.asarray(delta, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError("delta must be a float or an array of floats") from exc
        if rhs.ndim == 0:
            rhs = np.full(A.shape[0], float(rhs))
        if rhs.shape != (A.shape[0],):
            raise ValueError(f"delta must be a scalar or have shape ({A.shape[0]},)")
        if not np.isfinite(rhs).all():
            raise ValueError("delta must be finite")
    free_both = ~np.isfinite(lower) & ~np.isfinite(upper) & (d <= 0)
    if free_both.any():
        raise ValueError(
            "lower/upper: variables without any finite bound need diag > 0 "
            f"(indices {np.flatnonzero(free_both)[:5].tolist()}...)"
        )
    if not (isinstance(tol, (int, float)) and np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive float, got {tol!r}")
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    return B, p, upper, lower, A, rhs, d


# ----------------------------------------------------------------------------- certificate


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
    Bw = B @ eta
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
    eq_res = float(np.max(np.abs(A @ a - rhs), initial=0.0))
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


# ----------------------------------------------------------------------------- Newton systems


class _Newton:
    """Solves ``[[B B^T + D, -A^T], [A, 0]] [dx; dy] = [r1; r2]`` in O(N M) per solve.

    ``(B B^T + D)^{-1} = D^{-1} - D^{-1} B (I + B^T D^{-1} B)^{-1} B^T D^{-1}``
    (Sherman-Morrison-Woodbury) with the M x M Cholesky factored once per iteration; the
    equality rows through the k x k Schur complement ``A (B B^T + D)^{-1} A^T``.
    """

    def __init__(self, B, A, D, rownorm2=None, drop_tol=1e-4):
        self.B, self.A, self.D = B, A, D
        self.dinv = 1.0 / D
        sq = np.sqrt(self.dinv)
        self.n_dropped = 0
        if rownorm2 is not None and drop_tol > 0:
            # rows whose total contribution trace(sum_i dinv_i B_i B_i^T) <= drop_tol are left
            # out of the M x M matrix (a PSD perturbation of norm <= drop_tol of a matrix >= I);
            # iterative refinement with the exact operator removes the difference.
            contrib = self.dinv * rownorm2
            order = np.argsort(contrib)
            ndrop = int(np.searchsorted(np.cumsum(contrib[order]), drop_tol, side="right"))
            if ndrop > B.shape[0] // 10:
                self.n_dropped = ndrop
                keep = np.sort(order[ndrop:])
                G = B[keep] * sq[keep, None]
            else:
                G = B * sq[:, None]
        else:
            G = B * sq[:, None]
        S = dsyrk(1.0, G.T, trans=0)  # G^T G, upper triangle (G.T is Fortran-contiguous)
        del G
        S[np.diag_indices_from(S)] += 1.0
        try:
            self.cho = sla.cho_factor(S, lower=False, check_finite=False)
        except (np.linalg.LinAlgError, sla.LinAlgError):
            jitter = 1e-12 * float(np.max(np.diag(S)))
            S[np.diag_indices_from(S)] += jitter
            self.cho = sla.cho_factor(S, lower=False, check_finite=False)
        if not np.isfinite(self.cho[0]).all():
            raise np.linalg.LinAlgError("non-finite Cholesky factor")
        k = A.shape[0]
        if k:
            self.W = self.hinv(A.T.copy())  # N x k
            Sch = A @ self.W
            self.sch = sla.cho_factor(0.5 * (Sch + Sch.T), lower=True, check_finite=False)

    def hinv(self, v):
        t = self.dinv[:, None] * v if v.ndim == 2 else self.dinv * v
        u = self.B.T @ t
        s = sla.cho_solve(self.cho, u, check_finite=False)
        sv = self.B @ s
        return t - (self.dinv[:, None] * sv if v.ndim == 2 else self.dinv * sv)

    def _solve_once(self, r1, r2):
        t = self.hinv(r1)
        if self.A.shape[0] == 0:
            return t, np.zeros(0)
        dy = sla.cho_solve(self.sch, r2 - self.A @ t, check_finite=False)
        return t + self.W @ dy, dy

    def solve(self, r1, r2, refine=4):
        dx, dy = self._solve_once(r1, r2)
        scale = max(float(np.max(np.abs(r1), initial=0.0)), float(np.max(np.abs(r2), initial=0.0)))
        for _ in range(refine):
            res1 = r1 - (self.B @ (self.B.T @ dx) + self.D * dx - self.A.T @ dy)
            res2 = r2 - self.A @ dx
            err = max(
                float(np.max(np.abs(res1), initial=0.0)), float(np.max(np.abs(res2), initial=0.0))
            )
            if err <= 1e-14 * max(scale, 1e-300):
                break
            ex, ey = self._solve_once(res1, res2)
            dx += ex
            dy += ey
        return dx, dy


def _max_step(v, dv):
    """Largest t > 0 with v + t dv >= 0 (v > 0); inf if unbounded."""
    neg = dv < 0
    if not neg.any():
        return np.inf
    return float(np.min(-v[neg] / dv[neg]))


# ----------------------------------------------------------------------------- presolve


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


def _direction(state, rcl, rcu):
    newton, rd, rp, sl, su, zl, zu, fl, fu = state
    r1 = -rd - np.where(fl, rcl / sl, 0.0) + np.where(fu, rcu / su, 0.0)
    dx, dy = newton.solve(r1, -rp)
    dzl = np.where(fl, (-rcl - zl * dx) / sl, 0.0)
    dzu = np.where(fu, (-rcu + zu * dx) / su, 0.0)
    return dx, dy, dzl, dzu


def _step(state, dx, dzl, dzu):
    _, _, _, sl, su, zl, zu, fl, fu = state
    t = min(_max_step(sl[fl], dx[fl]), _max_step(su[fu], -dx[fu]))
    return min(t, _max_step(zl[fl], dzl[fl]), _max_step(zu[fu], dzu[fu]))


def _ipm(B, p, upper, lower, A, rhs, d, tol, max_iter, verbose, x0=None):
    fl = np.isfinite(lower)
    fu = np.isfinite(upper)
    lo = np.where(fl, lower, 0.0)
    hi = np.where(fu, upper, 0.0)
    nb = int(fl.sum() + fu.sum())
    # starting point: strictly inside the box
    width = np.where(fl & fu, upper - lower, np.inf)
    x = np.where(fl & fu, lo + 0.5 * np.where(np.isfinite(width), width, 0.0),
                 np.where(fl, lo + 1.0, np.where(fu, hi - 1.0, 0.0)))
    if x0 is not None:
        x = np.clip(x0, np.where(fl, lo + 1e-3 * np.minimum(width, 1.0), -np.inf),
                    np.where(fu, hi - 1e-3 * np.minimum(width, 1.0), np.inf))
    z0 = max(1.0, float(np.mean(np.abs(p))))  # the scale of the linear term (1 for C-SVC)
    zl = np.where(fl, z0, 0.0)
    zu = np.where(fu, z0, 0.0)
    y = np.zeros(A.shape[0])
    pn = 1.0 + float(np.max(np.abs(p), initial=0.0))
    rn = 1.0 + float(np.max(np.abs(rhs), initial=0.0))
    status = "max_iter"
    hist: dict[str, float] = {}
    it = 0
    rownorm2 = np.einsum("ij,ij->i", B, B)
    one_fl = fl.astype(float)
    one_fu = fu.astype(float)
    for it in range(1, max_iter + 1):
        sl = np.where(fl, x - lo, 1.0)
        su = np.where(fu, hi - x, 1.0)
        eta = B.T @ x
        Hx = B @ eta + d * x
        rd = Hx + p - A.T @ y - zl + zu
        rp = A @ x - rhs
        comp = float((sl * zl * one_fl).sum() + (su * zu * one_fu).sum())
        mu = comp / max(nb, 1)
        xHx = float(eta @ eta) + float(x @ (d * x))
        pobj = 0.5 * xHx + float(p @ x)
        dobj = -0.5 * xHx + float(rhs @ y) + float(lo @ zl) - float(hi @ zu)
        rgap = (pobj - dobj) / max(1.0, abs(pobj))
        rpn = float(np.max(np.abs(rp), initial=0.0)) / (
            rn + float(np.max(np.abs(A), initial=0.0)) * float(np.max(np.abs(x), initial=0.0))
        )
        rdn = float(np.max(np.abs(rd), initial=0.0)) / (pn + float(np.max(np.abs(Hx))))
        hist = {"ipm_relative_gap": rgap, "ipm_primal_residual": rpn,
                "ipm_dual_residual": rdn, "ipm_mu": mu}
        if verbose:
            print(f"{it:3d} pobj {pobj: .10e} dobj {dobj: .10e} rgap {rgap:.2e} "
                  f"rp {rpn:.2e} rd {rdn:.2e} mu {mu:.2e}")
        if abs(rgap) <= tol and rpn <= tol and rdn <= tol:
            status = "optimal"
            it -= 1
            break
        if not (np.isfinite(pobj) and np.isfinite(dobj)):
            status = "numerical_error"
            break
        D = d + np.where(fl, zl / sl, 0.0) + np.where(fu, zu / su, 0.0)
        try:
            newton = _Newton(B, A, D, rownorm2)
        except (np.linalg.LinAlgError, sla.LinAlgError, ValueError):
            status = "numerical_error"
            break

        state = (newton, rd, rp, sl, su, zl, zu, fl, fu)
        # predictor (affine scaling)
        rcl = sl * zl * one_fl
        rcu = su * zu * one_fu
        dxa, dya, dzla, dzua = _direction(state, rcl, rcu)
        ta = min(1.0, _step(state, dxa, dzla, dzua))
        mu_aff = (((sl + ta * dxa) * (zl + ta * dzla) * one_fl).sum()
                  + ((su - ta * dxa) * (zu + ta * dzua) * one_fu).sum()) / max(nb, 1)
        sigma = min(1.0, (mu_aff / mu) ** 3) if mu > 0 else 0.0
        # corrector
        rcl = (sl * zl + dxa * dzla - sigma * mu) * one_fl
        rcu = (su * zu - dxa * dzua - sigma * mu) * one_fu
        dx, dy, dzl, dzu = _direction(state, rcl, rcu)
        t = _step(state, dx, dzl, dzu)
        t = min(1.0, 0.995 * t)
        if not np.isfinite(t) or not np.isfinite(dx).all():
            status = "numerical_error"
            break
        x = x + t * dx
        y = y + t * dy
        zl = zl + t * dzl
        zu = zu + t * dzu
        # keep x strictly inside the box (round-off)
        if fl.any():
            x = np.where(fl, np.maximum(x, lo + 1e-300), x)
        if fu.any():
            x = np.where(fu, np.minimum(x, hi - 1e-300), x)
    return x, y, it, status, hist


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


def lowrank_qp_solve(
    B,
    p,
    upper,
    *,
    lower=0.0,
    sign=None,
    delta=0.0,
    diag=None,
    tol: float = 1e-8,
    max_iter: int = 100,
    verbose: bool = False,
) -> LowRankResult:
    """Solve the eta-reformulated box QP by a Mehrotra predictor-corrector interior-point method.

    Problem (``a`` in R^N, ``B`` N x M)::

        min_a  1/2 ||B^T a||^2 + 1/2 a^T diag(diag) a + p^T a
        s.t.   sign a = delta      (sign: (N,) or (k, N); omitted if None)   [lambda]
               lower <= a <= upper                                          [z_l, z_u]

    Each iteration solves two Newton systems ``(B B^T + D) dx - A^T dy = r1, A dx = r2`` with
    ``D`` positive diagonal, by Sherman-Morrison-Woodbury through the M x M Cholesky of
    ``I + B^T D^{-1} B`` (formed with one ``syrk``, O(N M^2)), a k x k Schur complement for the
    equality rows and iterative refinement; memory O(N M), never N x N.

    Parameters
    ----------
    B : array (N, M)
        Low-rank factor of the Hessian (C-SVC: ``D_y V``).
    p : array (N,)
        Linear term (C-SVC: ``-1``).
    upper, lower : float or array (N,)
        Bounds; ``+inf`` / ``-inf`` allowed (a variable with no finite bound needs ``diag > 0``).
    sign : None, array (N,) or (k, N)
        Equality matrix ``A`` (C-SVC: ``y``).
    delta : float or array (k,)
        Right-hand side of the equalities.
    diag : None, float or array (N,)
        Non-negative diagonal added to the Hessian (L2-SVC: ``1/C``).
    tol : float
        Stop when the relative duality gap and the scaled primal and dual residuals of the
        iteration are all ``<= tol``.
    max_iter : int
        Iteration limit.
    verbose : bool
        Print one line per iteration.

    Returns
    -------
    LowRankResult
        The point, ``eta = B^T a``, ``b = -lambda_0`` and a certificate recomputed from the point.
        For infeasible input (empty feasible set), ``status == "infeasible"`` and every number is
        NaN: nothing is certified.
    """
    t0 = time.perf_counter()
    B, p, upper, lower, A, rhs, d = _validate(B, p, upper, lower, sign, delta, diag, tol, max_iter)
    n, m = B.shape
    k = A.shape[0]
    st, fixed, xfix, keep = _presolve(B, p, upper, lower, A, rhs, d)
    if st == "infeasible":
        nan = float("nan")
        return LowRankResult(
            alpha=np.full(n, nan), eta=np.full(m, nan), b=nan, objective=nan,
            primal_objective=nan, dual_objective=nan, gap=nan, relative_gap=nan,
            kkt={}, n_iter=0, status="infeasible", multipliers=np.full(k, nan),
            info={"time": time.perf_counter() - t0, "reason": "empty feasible set (presolve)"},
        )
    free = ~fixed
    a = xfix.copy()
    lam = np.zeros(k)
    n_iter = 0
    status = "optimal"
    hist: dict[str, float] = {}
    if free.any():
        if free.all():
            Bf, pf, uf, lf, df = B, p, upper, lower, d
        else:
            Bf = B[free]
            pf = p[free] + Bf @ (B[fixed].T @ xfix[fixed])
            uf, lf, df = upper[free], lower[free], d[free]
        rows = np.flatnonzero(keep)
        Af = A[np.ix_(rows, free)] if k else np.zeros((0, int(free.sum())))
        rf = (rhs[rows] - A[np.ix_(rows, fixed)] @ xfix[fixed]) if k else np.zeros(0)
        xf, yf, n_iter, status, hist = _ipm(Bf, pf, uf, lf, Af, rf, df, tol, max_iter, verbose)
        xf = _polish_equality(xf, Af, rf, lf, uf)
        a[free] = xf
        lam[rows] = yf
    # equality rows not handled by the IPM (dropped in presolve): multiplier from the gradient
    grad_full = B @ (B.T @ a) + d * a + p
    margin = 1e-6
    for r in range(k):
        if not keep[r] or not free.any():
            others = np.delete(np.arange(k), r)
            g_r = grad_full - A[others].T @ lam[others]
            lam[r] = _multiplier_from_gradient(g_r, a, lower, upper, A[r], margin)
    eta, qp, primal, dual, gap, kkt, grad = _certificate(B, p, upper, lower, A, rhs, d, a, lam)
    kkt.update(hist)
    info: dict[str, Any] = {"time": time.perf_counter() - t0, "n_fixed_presolve": int(fixed.sum())}
    if k:
        others = np.arange(1, k)
        info["b_gradient"] = -_multiplier_from_gradient(
            grad - A[others].T @ lam[others], a, lower, upper, A[0], margin
        )
    if status == "optimal" and not np.isfinite(gap):
        status = "numerical_error"
    return LowRankResult(
        alpha=a,
        eta=eta,
        b=float(-lam[0]) if k else 0.0,
        objective=qp,
        primal_objective=primal,
        dual_objective=dual,
        gap=gap,
        relative_gap=gap / max(1.0, abs(primal)),
        kkt=kkt,
        n_iter=int(n_iter),
        status=status,
        multipliers=lam,
        info=info,
    )


# ----------------------------------------------------------------------------- CVXPY route


def eta_problem_cvxpy(
    B,
    p,
    upper,
    *,
    lower=0.0,
    sign=None,
    delta=0.0,
    diag=None,
    solver: str | None = "CLARABEL",
    **solver_opts: Any,
):
    """The same eta-problem in CVXPY, sparse structure kept.

    Variables ``a`` (N) and ``eta`` (M); ``min 1/2 ||eta||^2 + 1/2 sum diag_i a_i^2 + p^T a``
    s.t. ``eta == B^T a`` (N M non-zeros), ``sign a == delta``, ``lower <= a <= upper``
    (infinite bounds omitted). If ``solver`` is not None the problem is solved with it
    (``solver_opts`` passed on); pass ``solver=None`` to only build it.

    Returns
    -------
    (cvxpy.Problem, a_var, eta_var)
    """
    import cvxpy as cp

    B, p, upper, lower, A, rhs, d = _validate(B, p, upper, lower, sign, delta, diag, 1.0, 1)
    n, m = B.shape
    a = cp.Variable(n, name="a")
    eta = cp.Variable(m, name="eta")
    obj = 0.5 * cp.sum_squares(eta) + p @ a
    if np.any(d > 0):
        idx = np.flatnonzero(d > 0)
        obj = obj + 0.5 * cp.sum(cp.multiply(d[idx], cp.square(a[idx])))
    cons = [eta == B.T @ a]
    if A.shape[0]:
        cons.append(A @ a == rhs)
    fl = np.flatnonzero(np.isfinite(lower))
    fu = np.flatnonzero(np.isfinite(upper))
    if fl.size:
        cons.append(a[fl] >= lower[fl] if fl.size < n else a >= lower)
    if fu.size:
        cons.append(a[fu] <= upper[fu] if fu.size < n else a <= upper)
    prob = cp.Problem(cp.Minimize(obj), cons)
    if solver is not None:
        prob.solve(solver=solver, **solver_opts)
    return prob, a, eta


# ----------------------------------------------------------------------------- C-SVC helpers


def _low_rank_factor(kernel, X, *, rank, tol, method, random_state):
    from primaldual.kernels import low_rank_factor  # written by the kernels module

    kwargs: dict[str, Any] = {"rank": rank, "tol": tol, "method": method}
    try:
        params = inspect.signature(low_rank_factor).parameters
    except (TypeError, ValueError):
        params = {}
    if "random_state" in params:
        kwargs["random_state"] = random_state
    return low_rank_factor(kernel, X, **kwargs)


def _check_binary_labels(y, n):
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must have shape ({n},), got {np.shape(y)}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must contain only -1 and +1 (map labels in the estimator layer)")
    return y


def lowrank_csvc(
    X,
    y,
    kernel,
    C: float,
    *,
    rank: int | None = None,
    tol: float | None = None,
    method: str = "icholesky",
    sample_weight=None,
    random_state: int | None = 0,
    **opts: Any,
):
    """Factor the kernel and solve the low-rank C-SVC dual (eta-reformulation).

    ``K ~= V V^T`` from :func:`primaldual.kernels.low_rank_factor`; then
    ``min 1/2 ||V^T D_y alpha||^2 - 1^T alpha  s.t. y^T alpha = 0, 0 <= alpha_i <= C_i``
    with ``C_i = C * sample_weight_i``. Predict with ``factor.transform(Z) @ res.eta + res.b``.

    ``rank``, ``tol`` (trace tolerance), ``method`` and ``random_state`` configure the factor;
    ``opts`` go to :func:`lowrank_qp_solve`, whose own tolerance is passed as ``solver_tol``.
    A kernel given as a name (``"rbf"``) is built by ``kernels.make_kernel(kernel, X=X)``.

    Returns
    -------
    (LowRankResult, factor)
        ``res.info`` holds ``factor_time`` and ``solve_time`` (seconds).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    n = X.shape[0]
    y = _check_binary_labels(y, n)
    if not (np.isscalar(C) and np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive finite float, got {C!r}")
    if sample_weight is None:
        upper = np.full(n, float(C))
    else:
        sw = _as_vector("sample_weight", sample_weight, n, allow_inf=False)
        if (sw < 0).any():
            raise ValueError("sample_weight must be non-negative")
        upper = float(C) * sw
    if "solver_tol" in opts:
        opts["tol"] = opts.pop("solver_tol")
    if isinstance(kernel, str):
        from primaldual.kernels import make_kernel

        kernel = make_kernel(kernel, X=X)
    t0 = time.perf_counter()
    factor = _low_rank_factor(kernel, X, rank=rank, tol=tol, method=method,
                              random_state=random_state)
    t1 = time.perf_counter()
    V = np.asarray(factor.V, dtype=float)
    res = lowrank_qp_solve(V * y[:, None], -np.ones(n), upper, lower=0.0, sign=y, delta=0.0,
                           **opts)
    t2 = time.perf_counter()
    res.info["factor_time"] = t1 - t0
    res.info["solve_time"] = t2 - t1
    return res, factor


def choose_rank(kernel, X, tol: float, max_rank: int) -> int:
    """Rank M at which the pivoted incomplete Cholesky reaches trace error ``tol``.

    Runs :func:`primaldual.kernels.low_rank_factor` with ``method="icholesky"``, ``tol`` and
    ``rank=max_rank`` as a cap (O(N M^2), no N x N matrix) and returns the rank it stopped at.
    """
    if not (isinstance(max_rank, (int, np.integer)) and max_rank >= 1):
        raise ValueError(f"max_rank must be a positive integer, got {max_rank!r}")
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise ValueError(f"tol must be a positive float, got {tol!r}")
    factor = _low_rank_factor(kernel, X, rank=int(max_rank), tol=float(tol),
                              method="icholesky", random_state=0)
    return int(factor.rank)


def _kernel_block(kernel, X, Z):
    if callable(kernel):
        return np.asarray(kernel(X, Z), dtype=float)
    for name in ("gram", "__call__", "matrix", "block"):
        fn = getattr(kernel, name, None)
        if callable(fn):
            return np.asarray(fn(X, Z), dtype=float)
    if isinstance(kernel, str):
        from sklearn.metrics.pairwise import pairwise_kernels

        return pairwise_kernels(X, Z, metric=kernel)
    raise TypeError("kernel must be callable as kernel(X, Z) -> Gram block")


def _best_bias(o, y, c):
    """argmin_b sum_i c_i max(0, 1 - y_i (o_i + b)) (exact: sweep over the breakpoints)."""
    t = y - o  # breakpoints
    order = np.argsort(t)
    ts, ys, cs = t[order], y[order], c[order]
    del ys
    # slope left of all breakpoints: every y=+1 term active (-c_i), no y=-1 term;
    # crossing t_j raises the slope by c_j (a y=+1 term leaves or a y=-1 term enters)
    slopes = -float(c[y > 0].sum()) + np.cumsum(cs)
    j = int(np.argmax(slopes >= 0)) if np.any(slopes >= 0) else ts.size - 1
    return float(ts[j])


def exact_gap(K_or_kernel_X, y, C, alpha, b: float, *, block_size: int = 2048) -> dict:
    """Duality gap of a recovered ``(alpha, b)`` on the EXACT-kernel C-SVC problem.

    With ``beta = alpha * y`` and ``o = K beta`` (exact kernel; computed blockwise if a
    ``(kernel, X)`` pair is given, so memory is O(N * block_size)):

    - primal ``P = 1/2 beta^T K beta + sum_i C_i max(0, 1 - y_i (o_i + b))``
    - dual ``D = 1^T alpha - 1/2 beta^T K beta`` (valid when ``y^T alpha = 0, 0 <= alpha <= C``;
      the residuals are reported)
    - ``gap = P - D``, ``relative_gap = gap / max(1, |P|)``; also ``gap_best_b``, the gap with
      the ``b`` minimising the exact primal for this ``beta``.

    Parameters
    ----------
    K_or_kernel_X : array (N, N) or tuple (kernel, X)
        Exact Gram matrix, or a kernel callable ``kernel(X, Z)`` and the training inputs.
    """
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    alpha = _as_vector("alpha", alpha, n, allow_inf=False)
    y = _check_binary_labels(y, n)
    Cv = _as_vector("C", C, n, allow_inf=False)
    beta = alpha * y
    if isinstance(K_or_kernel_X, tuple):
        if len(K_or_kernel_X) != 2:
            raise ValueError("K_or_kernel_X must be a Gram matrix or a (kernel, X) pair")
        kernel, X = K_or_kernel_X
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] != n:
            raise ValueError(f"K_or_kernel_X: X must have {n} rows")
        sv = np.flatnonzero(beta != 0)
        o = np.zeros(n)
        for s in range(0, n, block_size):
            Kb = _kernel_block(kernel, X[s:s + block_size], X[sv])
            o[s:s + block_size] = Kb @ beta[sv]
    else:
        K = np.asarray(K_or_kernel_X, dtype=float)
        if K.shape != (n, n):
            raise ValueError(f"K_or_kernel_X must have shape ({n}, {n}), got {K.shape}")
        o = K @ beta
    quad = float(beta @ o)
    hinge = np.maximum(0.0, 1.0 - y * (o + b))
    primal = 0.5 * quad + float(Cv @ hinge)
    dual = float(alpha.sum()) - 0.5 * quad
    bb = _best_bias(o, y, Cv)
    primal_bb = 0.5 * quad + float(Cv @ np.maximum(0.0, 1.0 - y * (o + bb)))
    return {
        "primal_objective": primal,
        "dual_objective": dual,
        "gap": primal - dual,
        "relative_gap": (primal - dual) / max(1.0, abs(primal)),
        "best_b": bb,
        "gap_best_b": primal_bb - dual,
        "relative_gap_best_b": (primal_bb - dual) / max(1.0, abs(primal_bb)),
        "equality_residual": abs(float(y @ alpha)),
        "box_violation": float(max(np.max(-alpha, initial=0.0), np.max(alpha - Cv, initial=0.0))),
    }
