"""The direct QP route: Clarabel's interior-point method called on the arrays of
:mod:`.form`, read from the Problem itself (no CVXPY canonicalisation, no compile step), for the
convex QPs with plain variables that the box-QP, generalised-SMO and LP routes do not take
(a linear SVM's primal on data, a user's QP with several blocks and coupled rows, ...).

Values are the solver's primal point, multipliers its dual in the library's signs
(:mod:`.form`); the certificate is the shared one, recomputed from them.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...solution import Solution
from ..interior import finish_interior_point
from .form import QPForm, read_qp

#: Clarabel's status name -> the library's status
_STATUS = {"Solved": "optimal", "AlmostSolved": "inaccurate",
           "PrimalInfeasible": "infeasible", "AlmostPrimalInfeasible": "infeasible",
           "DualInfeasible": "unbounded", "AlmostDualInfeasible": "unbounded",
           "MaxIterations": "max_iter", "MaxTime": "max_iter"}


def _form(problem: Any) -> tuple[QPForm | None, str | None]:
    """``(record, None)`` or ``(None, why)``, read once per problem."""
    memo = problem.__dict__.setdefault("_qpdirect_form", {})
    if "rec" not in memo:
        try:
            memo["rec"], memo["why"] = read_qp(problem), None
        except ValueError as exc:   # the reader's own refusal, naming the condition
            memo["rec"], memo["why"] = None, str(exc)
        except (TypeError, AttributeError, IndexError, KeyError) as exc:
            # a shape the reader cannot take apart: a refusal, never a crash of the choice
            memo["rec"], memo["why"] = None, f"it could not be read ({type(exc).__name__}: " \
                                             f"{exc})"
    return memo["rec"], memo["why"]


def accepts(problem: Any) -> bool:
    """Convex QPs over plain variables with affine constraints; :func:`refusal` says why
    not."""
    return refusal(problem) is None


def refusal(problem: Any) -> str | None:
    rec, why = _form(problem)
    return None if rec is not None else f"it is not a QP over plain variables ({why})"


def solve(problem: Any, *, verbose: bool = False, max_iter: int | None = None,
          **_: Any) -> Solution:
    """Solve ``problem``'s QP with Clarabel (tolerances 1e-9 relative and absolute on gap
    and feasibility) and report it in the Problem's names."""
    import clarabel

    t0 = time.perf_counter()
    rec, why = _form(problem)
    if rec is None:
        raise ValueError(f"backend 'qpdirect' does not accept problem {problem.name!r}: {why}")
    cones = []
    if rec.n_eq:
        cones.append(clarabel.ZeroConeT(rec.n_eq))
    if rec.A.shape[0] - rec.n_eq:
        cones.append(clarabel.NonnegativeConeT(rec.A.shape[0] - rec.n_eq))
    settings = clarabel.DefaultSettings()
    settings.verbose = bool(verbose)
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-9
    if max_iter is not None and max_iter > 0:
        settings.max_iter = int(max_iter)
    res = clarabel.DefaultSolver(rec.P, rec.q, rec.A, rec.b, cones, settings).solve()
    status = _STATUS.get(str(res.status), "solver_error")
    z, y = np.asarray(res.x, dtype=float), np.asarray(res.z, dtype=float)
    ok = status in ("optimal", "inaccurate", "max_iter") and np.all(np.isfinite(z))
    sol = Solution(problem, status if ok or status in ("infeasible", "unbounded")
                   else "solver_error", rec.values(z) if ok else {},
                   rec.multipliers(y) if ok else {}, backend="qpdirect", solver="clarabel",
                   n_iter=int(res.iterations), solve_time=time.perf_counter() - t0,
                   info={"solver_status": str(res.status)})
    if not sol.optimal:
        sol.warn_status()
    return sol


#: Clarabel is an interior-point solver: its answer is rounded as CVXPY's is
#: (:func:`~primaldual.backends.interior.finish_interior_point`)
finish = finish_interior_point
