"""The LP backend: linear programs (LP-SVR, the 1-norm SVM, L1-regularised variants) through
HiGHS (``scipy.optimize.linprog(method="highs")``), from the
:class:`~primaldual.model.lp.LPForm` read from the Problem.

Values are HiGHS's primal solution; multipliers are read from its row marginals with the sign
convention of :mod:`primaldual.model.lp`; the certificate is the shared one
(:meth:`Solution.certificate`), never HiGHS's own report.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..solution import Solution

#: linprog status -> library status
_STATUS = {0: "optimal", 1: "max_iter", 2: "infeasible", 3: "unbounded", 4: "solver_error"}


def accepts(problem: Any) -> bool:
    """Problems that read as a linear program (linear objective plus convex ``norm1`` terms,
    affine constraints, no feature-space variable); :func:`refusal` says why not."""
    return refusal(problem) is None


def refusal(problem: Any) -> str | None:
    from ..model.lp import lp_of
    rec, why = lp_of(problem)
    if rec is None:
        return f"it is not a linear program ({why})"
    return None


def solve(problem: Any, *, tol: float = 1e-9, max_iter: int | None = None,
          verbose: bool = False, **_: Any) -> Solution:
    """Solve the LP of ``problem`` with HiGHS (dual simplex or IPM as HiGHS chooses;
    primal/dual feasibility tolerances ``tol``)."""
    from scipy.optimize import linprog

    from ..model.lp import lp_of
    from ..validation import check_positive

    tol = check_positive(tol, "tol")
    rec, why = lp_of(problem)
    if rec is None:
        raise ValueError(f"backend 'lp' does not accept problem {problem.name!r}: it is not a "
                         f"linear program ({why})")
    opts: dict[str, Any] = {"primal_feasibility_tolerance": max(tol, 1e-10),
                            "dual_feasibility_tolerance": max(tol, 1e-10), "disp": bool(verbose)}
    if max_iter:
        opts["maxiter"] = int(max_iter)
    t0 = time.perf_counter()
    kw: dict[str, Any] = {}
    if rec.A_ub.shape[0]:
        kw.update(A_ub=rec.A_ub, b_ub=rec.b_ub)
    if rec.A_eq.shape[0]:
        kw.update(A_eq=rec.A_eq, b_eq=rec.b_eq)
    bounds = np.column_stack([np.where(np.isfinite(rec.lb), rec.lb, np.nan),
                              np.where(np.isfinite(rec.ub), rec.ub, np.nan)])
    bounds = [(None if np.isnan(lo) else lo, None if np.isnan(hi) else hi) for lo, hi in bounds]
    res = linprog(rec.c, bounds=bounds, method="highs", options=opts, **kw)
    status = _STATUS.get(int(res.status), "solver_error")
    info = {"highs_status": int(res.status), "highs_message": res.message,
            "solver_value": None if res.fun is None else rec.sign * float(res.fun)}
    if status not in ("optimal", "max_iter") or res.x is None:
        sol = Solution(problem, status, {}, {}, backend="lp", solver="highs",
                       solve_time=time.perf_counter() - t0, info=info)
        sol.warn_status()
        return sol
    ub = np.asarray(res.ineqlin.marginals) if rec.A_ub.shape[0] else np.zeros(0)
    eq = np.asarray(res.eqlin.marginals) if rec.A_eq.shape[0] else np.zeros(0)
    sol = Solution(problem, status, rec.values(np.asarray(res.x, dtype=float)),
                   rec.multipliers(ub, eq, np.asarray(res.lower.marginals),
                                   np.asarray(res.upper.marginals)),
                   backend="lp", solver="highs",
                   n_iter=int(getattr(res, "nit", 0) or 0), solve_time=time.perf_counter() - t0,
                   info=info)
    sol.warn_status()
    return sol
