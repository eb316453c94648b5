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

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla

from ...kernels.gram import one_blas_thread
from ._factored import is_factored
from ._threads import matvec, rmatvec
from .certify import (
    _equality_at_rounding,
    _multiplier_from_gradient,
    _polish_equality,
    _presolve,
    certificate_from_products,
)
from .ipm import _ipm
from .newton import _continuation, _qp_value

__all__ = [
    "LowRankResult",
    "lowrank_qp_solve",
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
    if not is_factored(B):  # (a FactoredB: kernel columns and a finite map, never formed)
        try:
            B = np.asarray(B, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError("B must be a 2-D float array") from exc
        if B.ndim != 2 or B.shape[0] == 0 or B.shape[1] == 0:
            raise ValueError(f"B must be a non-empty 2-D array (N x M), got shape {B.shape}")
        # one pass without an N x M temporary: a finite sum means every entry is finite (an
        # overflowing sum of finite entries is then checked entry by entry)
        if not np.isfinite(np.sum(B)) and not np.isfinite(B).all():
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


def _fallback(B, p, upper, lower, A, rhs, d, tol, max_iter, verbose, t0, reason):
    """Solve the full problem with the IPM after the Newton path did not certify."""
    if verbose:
        print(f"falling back to the IPM ({reason})")
    if is_factored(B):  # the IPM on all N rows needs B formed
        B = B.dense()
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
    warm_start: tuple[np.ndarray, np.ndarray] | None = None,
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
    warm_start : (eta0, lambda0), optional
        A starting point for the smoothing Newton route (``eta0`` of length M, ``lambda0`` one
        multiplier per equality row), e.g. the solution at a smaller rank mapped to this
        factor; the continuation then runs only its finest smoothing level. Ignored by the IPM
        and when the presolve fixes variables. It changes the path, not the certificate.

    Returns
    -------
    LowRankResult
        The point, ``eta = B^T a``, ``b = -lambda_0`` and a certificate recomputed from the point.
        For infeasible input (empty feasible set), ``status == "infeasible"`` and every number is
        NaN: nothing is certified.

    BLAS runs on one thread throughout: the products are ``N x M`` with ``M`` in the hundreds
    and the ``M x M`` factorisations are small, so a second thread only adds synchronisation
    (a certified 50k ``CSVC(rank=200).fit`` on the shared, loaded 2-core machine: 32 s with
    two OpenBLAS threads, 4.8 s with one).
    """
    with one_blas_thread():
        return lowrank_qp_solve_in_context(B, p, upper, lower=lower, sign=sign, delta=delta,
                                           diag=diag, tol=tol, max_iter=max_iter,
                                           verbose=verbose, method=method,
                                           warm_start=warm_start)


def lowrank_qp_solve_in_context(B, p, upper, *, lower, sign, delta, diag, tol, max_iter,
                                verbose, method, warm_start=None, Bmv=None,
                                ipm_start=None) -> LowRankResult:
    """:func:`lowrank_qp_solve` without the BLAS thread limit; ``Bmv``: a float32 copy of
    ``B`` for the full passes of the Newton continuation (the working set, the sub-QPs and the
    certificate use ``B``)."""
    t0 = time.perf_counter()
    B, p, upper, lower, A, rhs, d = _validate(B, p, upper, lower, sign, delta, diag, tol, max_iter)
    if method not in ("auto", "newton", "ipm"):
        raise ValueError(f"method must be 'auto', 'newton' or 'ipm', got {method!r}")
    newton_ok = bool(np.all(d == 0) and np.isfinite(lower).all() and np.isfinite(upper).all())
    if method == "newton" and not newton_ok:
        raise ValueError("method='newton' needs diag == 0 and finite lower/upper bounds")
    use_newton = newton_ok and method != "ipm"
    if not use_newton and is_factored(B):  # the IPM on all N rows needs B formed
        B = B.dense()
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
            w0 = lam0 = None
            if warm_start is not None and free.all() and keep.all():
                w0, lam0 = warm_start
            try:
                xf, yf, n_iter, status, hist, sinfo = _smooth_newton(
                    Bf, pf, uf, lf, Af, rf, tol, max_iter, verbose, w0=w0, lam0=lam0,
                    Bmv=Bmv if free.all() else None)
            except (FloatingPointError, np.linalg.LinAlgError, sla.LinAlgError, ValueError) as e:
                status, sinfo = "numerical_error", {"fallback": f"newton failed: {e}"}
            if status != "optimal":
                return _fallback(B, p, upper, lower, A, rhs, d, tol, max_iter, verbose, t0,
                                 sinfo.get("fallback", f"newton: {status}"))
        else:
            xf, yf, n_iter, status, hist = _ipm(
                Bf, pf, uf, lf, Af, rf, df, tol, max_iter, verbose,
                start=ipm_start if free.all() and keep.all() else None)
        prods = sinfo.pop("_products", None) if use_newton else None
        if prods is not None and free.all() and _equality_at_rounding(xf, Af, rf):
            # the working-set sub-QP was polished already: its a is kept as it is, and the
            # products of the Newton route's last check are B^T a and B (B^T a) of this a
            pass
        else:
            prods = None
            xf = _polish_equality(xf, Af, rf, lf, uf)
        a[free] = xf
        lam[rows] = yf
    else:
        prods = None
    # equality rows not handled by the IPM (dropped in presolve): multiplier from the gradient
    # B^T a and B (B^T a) are computed once: the gradient here and the certificate below (of
    # exactly this a) share them
    if prods is not None and np.array_equal(prods[0], a):
        eta, Bw = prods[1], prods[2]
    else:
        eta = rmatvec(B, a)
        Bw = matvec(B, eta)
    grad_full = Bw + d * a + p
    margin = 1e-6
    for r in range(k):
        if not keep[r] or not free.any():
            others = np.delete(np.arange(k), r)
            g_r = grad_full - A[others].T @ lam[others]
            lam[r] = _multiplier_from_gradient(g_r, a, lower, upper, A[r], margin)
    eta, qp, primal, dual, gap, kkt, grad = certificate_from_products(
        eta, Bw, p, upper, lower, A, rhs, d, a, lam)
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
    res = LowRankResult(
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
    # the QP gradient B (B^T a) + d a + p of the certificate (one pass over B that a caller
    # needing it, e.g. rank="auto"'s recovery, need not repeat; not part of the public record)
    res._grad = grad  # type: ignore[attr-defined]
    res._Bw = Bw  # type: ignore[attr-defined]  # B eta of the certificate (same reason)
    return res


# ----------------------------------------------------------------------------- smoothing Newton
#
# The working-set driver of the Newton route: the continuation of newton.py gives a smoothed
# point, whose working-set sub-QPs are solved by lowrank_qp_solve(method="ipm") above.


#: the working-set IPM starts on its central path at barrier parameter ``IPM_WARM_MU * h``
#: (``h`` the finest smoothing level) from the smoothed point (:func:`central_start`); ``False``:
#: from the middle of the box. Measured at N = 200,000 (rank 1600, |W| = 5,220): 9 IPM
#: iterations against 14 (0.125 h: 10, 0.25 h: 9, 1 h: 9, 4 h: 11).
IPM_WARM_START: bool = True
#: the continuation before the working set stops once the gradient is this fraction of its
#: value at the start of the level (cold start; ``_WARM``: from a warm start, e.g. the
#: ``rank="auto"`` rung's stalled point, the finest level only): the smoothed point only
#: chooses the working set, whose violators the check on all rows adds. Measured at
#: N = 200,000 (rank 1600, from the cap rung's stalled point): 0.1 stopped after 2-4 steps and
#: on one landmark path left violators (a second IPM round, +4 s); 0.03 took 5 steps and one
#: round on both paths seen; 1e-3 took 6
NEWTON_GTOL: float = 1e-3
NEWTON_GTOL_WARM: float = 0.03
IPM_WARM_MU: float = 0.5


def _central_x(r, lower, c, mu):
    """The ``x`` in ``(lower, lower + c)`` with ``mu / (x - lower) - mu / (lower + c - x) = r``:
    the root in the box of ``r t^2 - (r c + 2 mu) t + mu c = 0`` (``t = x - lower``), written
    without cancellation (for ``r < 0`` by the same formula from the upper bound)."""
    rc = np.abs(r * c)
    t = 2.0 * mu * c / (rc + 2.0 * mu + np.sqrt(rc * rc + 4.0 * mu * mu))  # the nearer bound's
    return np.where(r >= 0, lower + t, lower + c - t)  # distance (r < 0: the root from upper)


def central_start(r, lam, lower, upper, mu, A, rhs):
    """The IPM's start ``(x, lam, z_l, z_u)`` from the smoothed point's reduced gradient ``r``
    (on the working set) and multipliers ``lam``: the point of the log-barrier path at ``mu``
    for that ``r`` -- ``x = _central_x(r)``, ``z_l = mu / (x - lower)``, ``z_u = mu / (upper -
    x)``, so ``z_l - z_u = r`` and every complementarity product is ``mu`` -- with one equality
    row's multiplier shifted, ``r -> r - a dl``, so that ``a^T x = rhs`` holds at the start
    (``a^T x`` is nondecreasing in ``dl``: bisection). Several rows: no shift. The start changes
    the IPM's path, not its stopping test or the certificate."""
    c = upper - lower
    lam = np.array(lam, dtype=float)
    if A.shape[0] == 1 and np.any(A[0] != 0):
        arow, target = A[0], float(np.atleast_1d(rhs)[0])

        def excess(dl):
            return float(arow @ _central_x(r - arow * dl, lower, c, mu)) - target

        lo_, hi_ = -1.0, 1.0
        for _ in range(64):  # a bracket (none when rhs is out of reach: no shift)
            if excess(lo_) <= 0.0:
                break
            lo_ *= 2.0
        for _ in range(64):
            if excess(hi_) >= 0.0:
                break
            hi_ *= 2.0
        if excess(lo_) <= 0.0 <= excess(hi_):
            for _ in range(60):
                mid = 0.5 * (lo_ + hi_)
                if excess(mid) < 0.0:
                    lo_ = mid
                else:
                    hi_ = mid
            dl = 0.5 * (lo_ + hi_)
            r = r - arow * dl
            lam[0] += dl
    x = _central_x(r, lower, c, mu)
    sl = np.maximum(x - lower, 1e-300)
    su = np.maximum(upper - x, 1e-300)
    return x, lam, mu / sl, mu / su


def _smooth_newton(B, p, upper, lower, A, rhs, tol, max_iter, verbose, w0=None, lam0=None,
                   Bmv=None):
    """Huber-smoothing Newton continuation + working-set IPM (the module comment of
    :mod:`~primaldual.backends.lowrank.newton`).

    ``w0``, ``lam0``: a warm start (e.g. the solution at a smaller rank mapped to this factor);
    the continuation then runs its finest level only.

    Returns ``(a, lam, n_iter, status, hist, info)`` like the IPM; raises on numerical failure.
    """
    n, m = B.shape
    k = A.shape[0]
    c = upper - lower
    # with a float32 copy of B the continuation runs on it alone (passes and gathered rows):
    # its smoothed point only starts the working set, whose sub-QPs and check use B
    w, lam, r, hl, scale, n_newton, hess_rows = _continuation(
        B if Bmv is None else Bmv, p, upper, lower, A, rhs, verbose, w0, lam0, Bmv=Bmv,
        gtol=NEWTON_GTOL if w0 is None else NEWTON_GTOL_WARM)
    delta_ws = 1.5 * hl
    a_s = lower + c * np.clip(-r / hl, 0.0, 1.0)  # the smoothed point's QP variable
    # ~ the optimal QP objective (w = B^T a_s at the smoothed optimum; only an estimate that
    # scales the sub-QP's tolerance)
    q_est = 0.5 * float(w @ w) + float(p @ a_s)
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
            BW = B[Wi]  # the working set's rows, formed once per round
            pW = p[Wi] + BW @ eta_fix
            start = None
            if IPM_WARM_START:
                start = central_start(r[Wi], lam, lower[Wi], upper[Wi], IPM_WARM_MU * hl,
                                       A[:, Wi], rhs - A @ a)
            # the sub-QP goes through the full entry (method="ipm": no recursion into Newton)
            sub = lowrank_qp_solve_in_context(
                BW, pW, upper[Wi], lower=lower[Wi],
                sign=A[:, Wi] if k else None, delta=rhs - A @ a if k else 0.0, diag=None,
                tol=tol_sub, max_iter=max_iter, verbose=False, method="ipm", ipm_start=start,
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
            # B^T a = B^T a_fixed + B_W^T a_W (a_fixed is 0 on W): |W| rows, not N
            eta_a = eta_fix + BW.T @ sub.alpha
            del BW
            q_a = 0.5 * float(eta_a @ eta_a) + float(p @ a)
        else:
            eta_a, q_a = _qp_value(B, p, a)
        Bw_a = matvec(B, eta_a)
        r = p + Bw_a - A.T @ lam
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
            "hessian_rows": hess_rows}
    if status == "optimal":
        # B^T a (= B_F^T a_F + B_W^T a_W) and B (B^T a) of the returned a, in float64 on B:
        # the certificate's two products when the caller keeps this a unchanged
        info["_products"] = (a.copy(), eta_a, Bw_a)
    return a, lam, n_newton + n_ipm, status, hist, info
