"""Low-rank eta-reformulation backend: smoothing Newton + working-set IPM, or a full IPM.

With a low-rank factor ``K ~= V V^T`` (``V`` is N x M), every catalogue dual whose quadratic
term is ``beta^T K beta`` becomes a box-constrained QP in which the N x N Hessian is replaced by
``B B^T`` with ``B`` N x M (docs/formulations.md section 14, Fine & Scheinberg 2001)::

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

Sign convention (docs/formulations.md): the Lagrangian is
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
orientation of docs/formulations.md, ``primal_objective = -g(w, lambda)`` and
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


def _fallback(B, p, upper, lower, A, rhs, d, tol, max_iter, verbose, t0, reason):
    """Solve the full problem with the IPM after the Newton path did not certify."""
    if verbose:
        print(f"falling back to the IPM ({reason})")
    res = lowrank_qp_solve(B, p, upper, lower=lower, sign=A if A.shape[0] else None, delta=rhs,
                           diag=d, tol=tol, max_iter=max_iter, verbose=verbose, method="ipm")
    res.info["fallback"] = reason
    res.info["time"] = time.perf_counter() - t0
    return res


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
    method: str = "auto",
) -> LowRankResult:
    """Solve the eta-reformulated box QP (smoothing Newton + working-set IPM, or the IPM alone).

    Problem (``a`` in R^N, ``B`` N x M)::

        min_a  1/2 ||B^T a||^2 + 1/2 a^T diag(diag) a + p^T a
        s.t.   sign a = delta      (sign: (N,) or (k, N); omitted if None)   [lambda]
               lower <= a <= upper                                          [z_l, z_u]

    ``method="ipm"``: a Mehrotra predictor-corrector interior-point method. Each iteration solves
    two Newton systems ``(B B^T + D) dx - A^T dy = r1, A dx = r2`` with ``D`` positive diagonal,
    by Sherman-Morrison-Woodbury through the M x M Cholesky of ``I + B^T D^{-1} B`` (formed with
    one ``syrk``, O(N M^2)), a k x k Schur complement for the equality rows and iterative
    refinement; memory O(N M), never N x N.

    ``method="newton"`` (``"auto"`` picks it when ``diag == 0`` and every bound is finite, the
    C-SVC / epsilon-SVR / nu case): Newton steps on the Huber-smoothed (M + k)-dimensional primal
    ``min 1/2||w||^2 - lambda^T delta - lower^T r + sum_i (upper_i - lower_i) H_h(-r_i)``,
    ``r = p + B w - A^T lambda``, for h = 3, 0.3, 0.03 (times ``max |p|``), each O(N M) plus
    ``syrk`` on the rows entering or leaving the quadratic zone; then every variable with
    ``|r_i| > 1.5 h`` is fixed at the bound the sign of ``r_i`` selects, the exact QP on the
    remaining working set is solved by the IPM, and the fixed variables' optimality
    (``r_i >= -tol`` at ``lower``, ``r_i <= tol`` at ``upper``) is checked on all N rows;
    violators join the working set. The point is certified on the full problem; if the
    certificate's relative gap exceeds ``10 tol`` or anything fails, the IPM solves the full
    problem instead (``info["fallback"]`` says why).

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
        Print one line per iteration (per Newton level and working-set round).
    method : {"auto", "newton", "ipm"}
        Algorithm (above). ``"newton"`` on a problem it does not apply to raises ``ValueError``.

    Returns
    -------
    LowRankResult
        The point, ``eta = B^T a``, ``b = -lambda_0`` and a certificate recomputed from the point.
        For infeasible input (empty feasible set), ``status == "infeasible"`` and every number is
        NaN: nothing is certified.
    """
    t0 = time.perf_counter()
    B, p, upper, lower, A, rhs, d = _validate(B, p, upper, lower, sign, delta, diag, tol, max_iter)
    if method not in ("auto", "newton", "ipm"):
        raise ValueError(f"method must be 'auto', 'newton' or 'ipm', got {method!r}")
    newton_ok = bool(np.all(d == 0) and np.isfinite(lower).all() and np.isfinite(upper).all())
    if method == "newton" and not newton_ok:
        raise ValueError("method='newton' needs diag == 0 and finite lower/upper bounds")
    use_newton = newton_ok and method != "ipm"
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
        sinfo: dict[str, Any] = {}
        if use_newton:
            try:
                xf, yf, n_iter, status, hist, sinfo = _smooth_newton(
                    Bf, pf, uf, lf, Af, rf, tol, max_iter, verbose
                )
            except (FloatingPointError, np.linalg.LinAlgError, sla.LinAlgError, ValueError) as e:
                status, sinfo = "numerical_error", {"fallback": f"newton failed: {e}"}
            if status != "optimal":
                return _fallback(B, p, upper, lower, A, rhs, d, tol, max_iter, verbose, t0,
                                 sinfo.get("fallback", f"newton: {status}"))
        else:
            xf, yf, n_iter, status, hist = _ipm(Bf, pf, uf, lf, Af, rf, df, tol, max_iter,
                                                verbose)
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
    if use_newton and free.any() and not (
        gap / max(1.0, abs(primal)) <= 10 * tol and kkt["primal_feasibility"] <= 1e-6
    ):
        return _fallback(B, p, upper, lower, A, rhs, d, tol, max_iter, verbose, t0,
                         f"newton certificate: relative gap {gap / max(1.0, abs(primal)):.1e}")
    info: dict[str, Any] = {"time": time.perf_counter() - t0, "n_fixed_presolve": int(fixed.sum())}
    info["method"] = "ipm"
    if use_newton and free.any():
        info.update(sinfo)
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


# ----------------------------------------------------------------------------- smoothing Newton
#
# For d == 0 and finite bounds the QP is the dual of the (M + k)-dimensional piecewise-linear
# problem  min_{w, lambda} 1/2||w||^2 - lambda^T delta - l^T r + sum_i c_i max(0, -r_i)  with
# r = p + B w - A^T lambda and c = upper - lower (for C-SVC: the low-rank SVM primal, r_i =
# y_i f(x_i) - 1). Replacing max(0, t) by the Huber function H_h(t) (t^2/(2h) on 0 < t < h) makes
# it piecewise quadratic; its gradient is (w - B^T a, A a - delta) with a = l + c clip(-r/h, 0, 1)
# in the box, and its Hessian involves only the rows J = {0 < -r_i < h}. Newton steps with an exact
# line search for a decreasing sequence of h take O(N M + |J_change| M^2) each. The smoothed
# solution then fixes every variable whose |r_i| is clearly away from 0 at its bound, the exact QP
# on the remaining working set is solved by the IPM, and the optimality of the fixed variables is
# checked on all N rows (violators join the working set). The result is certified on the full
# problem like any other; a failure falls back to the IPM on the full problem.


class _JHessian:
    """``T_J = sum_{i in J} c_i B_i B_i^T``, updated by the rows that enter or leave ``J``."""

    def __init__(self, B, c):
        self.B, self.c = B, c
        self.c0 = float(c[0]) if c.size and np.all(c == c[0]) else None  # uniform weights
        self.J = np.zeros(B.shape[0], dtype=bool)
        self.T = np.zeros((B.shape[1], B.shape[1]))
        self.rows = 0  # rows processed by syrk (diagnostics)

    def _gram(self, idx):
        if self.c0 is not None:  # no scaled copy; no gather when every row is in
            G = self.B if idx.size == self.B.shape[0] else self.B[idx]
            S = dsyrk(self.c0, G.T, trans=0)
        else:
            S = dsyrk(1.0, (self.B[idx] * np.sqrt(self.c[idx])[:, None]).T, trans=0)
        self.rows += idx.size
        return np.triu(S) + np.triu(S, 1).T

    def update(self, Jn):
        add = np.flatnonzero(Jn & ~self.J)
        rem = np.flatnonzero(self.J & ~Jn)
        if add.size + rem.size == 0:
            return
        nj = int(Jn.sum())
        if add.size + rem.size < nj:
            if add.size:
                self.T += self._gram(add)
            if rem.size:
                self.T -= self._gram(rem)
        else:
            self.T = self._gram(np.flatnonzero(Jn)) if nj else np.zeros_like(self.T)
        self.J = Jn.copy()


def _exact_line_search(w, dw, rhs, dl, r, dr, lo, c, h) -> float:
    """Minimiser in [0, 1] of the Huber-smoothed objective along ``(dw, dl)``.

    ``phi'(s) = (w + s dw).dw - delta.dl - a(s).dr`` with ``a(s) = lo + c clip(-(r + s dr)/h,
    0, 1)`` is piecewise linear and nondecreasing; safeguarded Newton on it (bisection bracket).
    """
    ww, w0, rl = float(dw @ dw), float(w @ dw), float(rhs @ dl)

    def dphi(s):
        return w0 + s * ww - rl - float((lo + c * np.clip(-(r + s * dr) / h, 0.0, 1.0)) @ dr)

    s, d = 1.0, dphi(1.0)
    if d <= 0:
        return s
    a_, b_ = 0.0, 1.0
    for _ in range(40):
        if d > 0:
            b_ = s
        else:
            a_ = s
        ts = -(r + s * dr)
        Js = (ts > 0) & (ts < h)
        curv = ww + float(np.sum(c[Js] * dr[Js] ** 2)) / h
        sn = s - d / curv if curv > 0 else 0.5 * (a_ + b_)
        if not a_ < sn < b_:
            sn = 0.5 * (a_ + b_)
        s, d = sn, dphi(sn)
        if abs(d) <= 1e-13 * (1.0 + abs(w0) + abs(rl)) or b_ - a_ <= 1e-13:
            break
    return s


def _huber_level(B, p, lo, c, A, rhs, w, lam, h, hess, gtol, max_iter):
    """Newton with exact line search on the Huber-smoothed problem at one ``h``."""
    m, k = B.shape[1], A.shape[0]
    r = p + B @ w - A.T @ lam
    g0 = None
    steps = 0
    while steps < max_iter:
        t = -r
        a = lo + c * np.clip(t / h, 0.0, 1.0)
        gw = w - B.T @ a
        gl = A @ a - rhs
        gn = max(float(np.max(np.abs(gw), initial=0.0)), float(np.max(np.abs(gl), initial=0.0)))
        if not np.isfinite(gn):
            raise FloatingPointError("non-finite gradient")
        g0 = gn if g0 is None else g0
        if gn <= gtol * max(g0, 1.0) or gn <= 1e-12 * (1.0 + float(np.max(np.abs(w)))):
            break
        Jm = (t > 0) & (t < h)
        hess.update(Jm)
        J = np.flatnonzero(Jm)
        dj = c[J] / h
        H = np.empty((m + k, m + k))
        H[:m, :m] = hess.T / h
        H[np.diag_indices(m)] += 1.0
        if k:
            AJ = A[:, J]
            Dv = np.zeros((B.shape[0], k))
            Dv[J] = (AJ * dj).T
            X = -(B.T @ Dv)
            H[:m, m:] = X
            H[m:, :m] = X.T
            H[m:, m:] = (AJ * dj) @ AJ.T
            H[m:, m:][np.diag_indices(k)] += 1e-12 * max(1.0, float(np.trace(H[:m, :m])) / m)
        g = np.concatenate([gw, gl])
        step = -sla.cho_solve(sla.cho_factor(H, check_finite=False), g, check_finite=False)
        dw, dl = step[:m], step[m:]
        dr = B @ dw - A.T @ dl
        s = _exact_line_search(w, dw, rhs, dl, r, dr, lo, c, h)
        w = w + s * dw
        lam = lam + s * dl
        r = r + s * dr
        steps += 1
    return w, lam, r, steps


def _qp_value(B, p, a):
    """``(eta, 1/2 ||eta||^2 + p^T a)`` with ``eta = B^T a`` (the QP objective when d = 0)."""
    eta = B.T @ a
    return eta, 0.5 * float(eta @ eta) + float(p @ a)


def _smooth_newton(B, p, upper, lower, A, rhs, tol, max_iter, verbose):
    """Huber-smoothing Newton continuation + working-set IPM (module comment above).

    Returns ``(a, lam, n_iter, status, hist, info)`` like the IPM; raises on numerical failure.
    """
    n, m = B.shape
    k = A.shape[0]
    c = upper - lower
    # the scale of r: |p| (C-SVC: 1); for p == 0 (nu-type duals) |r| at the middle of the box
    scale = float(np.max(np.abs(p), initial=0.0))
    if scale <= 0.0:
        mid = 0.5 * (lower + upper)
        scale = float(np.median(np.abs(B @ (B.T @ mid))))
    scale = scale if scale > 0.0 else 1.0
    hess = _JHessian(B, c)
    w, lam = np.zeros(m), np.zeros(k)
    levels = [3.0 * scale * 0.1**j for j in range(3)]
    n_newton = 0
    for h in levels:
        w, lam, r, it = _huber_level(B, p, lower, c, A, rhs, w, lam, h, hess, 1e-3, 50)
        n_newton += it
        if verbose:
            nj = int(np.sum((r < 0) & (-r < h)))
            print(f"newton h {h:.1e}: {it} steps, |J| = {nj}")
    delta_ws = 1.5 * levels[-1]
    a_s = lower + c * np.clip(-r / levels[-1], 0.0, 1.0)  # the smoothed point's QP variable
    _, q_est = _qp_value(B, p, a_s)  # ~ the optimal QP objective
    W = np.abs(r) <= delta_ws
    if k and W.sum() < m + k:
        W[np.argsort(np.abs(r))[: min(n, 2 * (m + k))]] = True
    at_hi = r < 0
    n_ipm = 0
    rounds = 0
    thr = tol * max(1.0, scale)
    status, hist, a = "max_iter", {}, None
    widen = 0
    while rounds < 10:
        rounds += 1
        Wi = np.flatnonzero(W)
        a = np.where(at_hi, upper, lower)
        a[Wi] = 0.0
        if Wi.size:
            # the sub-QP drops the constant 1/2||eta_fix||^2 + p_F a_F of the full objective;
            # its relative tolerance is rescaled so that its gap is tol relative to the full one
            eta_fix, const = _qp_value(B, p, a)
            full = max(1.0, abs(q_est))
            tol_sub = max(1e-13, tol * min(1.0, full / max(1.0, abs(q_est - const))))
            sub = lowrank_qp_solve(
                B[Wi], p[Wi] + B[Wi] @ eta_fix, upper[Wi], lower=lower[Wi],
                sign=A[:, Wi] if k else None, delta=rhs - A @ a if k else 0.0,
                tol=tol_sub, max_iter=max_iter, method="ipm",
            )
            n_ipm += sub.n_iter
            if sub.status == "infeasible" and widen < 4:
                # the fixed values leave the equality rows unreachable: widen the working set by
                # the rows nearest their margin
                widen += 1
                size = min(n, max(4 * W.sum(), 4 * (m + k) + 16))
                W[np.argsort(np.abs(r))[:size]] = True
                continue
            if sub.status != "optimal":
                raise FloatingPointError(f"working-set IPM: {sub.status}")
            a[Wi] = sub.alpha
            lam = sub.multipliers if k else lam
            hist = {key: v for key, v in sub.kkt.items() if key.startswith("ipm_")}
        eta_a, q_a = _qp_value(B, p, a)
        r = p + B @ eta_a - A.T @ lam
        # a fixed variable with the wrong sign of r adds c_i |r_i| to the duality gap: the
        # largest such terms join the working set until the rest is within 0.1 tol |objective|
        contrib = np.where(~W & (a <= lower), c * np.maximum(-r, 0.0), 0.0)
        contrib += np.where(~W & (a >= upper), c * np.maximum(r, 0.0), 0.0)
        budget = 0.1 * tol * max(1.0, abs(q_a))
        viol = contrib > thr * np.maximum(c, 1e-300)  # r beyond tol: never left fixed
        if contrib.sum() > budget:
            order = np.argsort(contrib)[::-1]
            rest = contrib.sum() - np.cumsum(contrib[order])
            viol[order[: int(np.searchsorted(-rest, -budget)) + 1]] = True
        if verbose:
            print(f"working set round {rounds}: |W| = {Wi.size}, IPM it. {n_ipm}, "
                  f"violators {int(viol.sum())}")
        if not viol.any():
            status = "optimal"
            break
        W |= viol
    info = {"method": "newton", "newton_steps": n_newton, "ipm_iterations": n_ipm,
            "working_set": int(W.sum()), "working_set_rounds": rounds,
            "hessian_rows": hess.rows}
    return a, lam, n_newton + n_ipm, status, hist, info


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
    ``opts`` go to :func:`lowrank_qp_solve`, whose own tolerance is passed as ``solver_tol``
    and whose algorithm (``"auto"``, ``"newton"``, ``"ipm"``) as ``solver``.
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
    if "solver" in opts:  # ``method`` names the factor here; the QP algorithm is ``solver``
        opts["method"] = opts.pop("solver")
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
