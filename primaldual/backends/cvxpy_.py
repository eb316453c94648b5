"""CVXPY backend: any convex Problem, solver selectable (Clarabel default, OSQP, ECOS, SCS)."""

from __future__ import annotations

import time
from typing import Any

import cvxpy as cp

from ..model.to_cvxpy import to_cvxpy
from ..solution import Solution

SOLVERS = ("CLARABEL", "OSQP", "ECOS", "SCS")

#: CVXPY status -> library status
STATUS_MAP = {
    "optimal": "optimal",
    "optimal_inaccurate": "inaccurate",
    "infeasible": "infeasible",
    "infeasible_inaccurate": "infeasible",
    "unbounded": "unbounded",
    "unbounded_inaccurate": "unbounded",
    "infeasible_or_unbounded": "infeasible_or_unbounded",
    "user_limit": "max_iter",
    "solver_error": "solver_error",
}

_ACCURATE = {"CLARABEL": dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10),
             "ECOS": dict(abstol=1e-10, reltol=1e-10, feastol=1e-10),
             "OSQP": dict(eps_abs=1e-9, eps_rel=1e-9, max_iter=200000, polish=True),
             "SCS": dict(eps_abs=1e-8, eps_rel=1e-8, max_iters=200000)}


def map_status(status: str | None) -> str:
    return STATUS_MAP.get(status, "solver_error")


def accepts(problem: Any) -> bool:
    """Every problem: a non-convex one is refused with a clear error at compile time."""
    return True


def solve(problem: Any, *, solver: str | None = None, accurate: bool = True, verbose: bool = False,
          **solver_options: Any) -> Solution:
    """Compile ``problem`` to CVXPY, solve, and read values and multipliers back.

    Parameters
    ----------
    solver : {"CLARABEL", "OSQP", "ECOS", "SCS"}, optional
        Default Clarabel.
    accurate : bool
        Tighten the solver's tolerances (default) so certificates reach ~1e-8.
    """
    solver = (solver or "CLARABEL").upper()
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    t0 = time.perf_counter()
    comp = to_cvxpy(problem)
    opts = dict(_ACCURATE[solver]) if accurate else {}
    opts.update(solver_options)
    try:
        comp.cvx.solve(solver=solver, verbose=verbose, **opts)
        status = map_status(comp.cvx.status)
    except cp.error.SolverError as exc:
        sol = Solution(problem, "solver_error", backend="cvxpy", solver=solver,
                       solve_time=time.perf_counter() - t0, info={"error": str(exc)})
        sol.warn_status()
        return sol
    stats = comp.cvx.solver_stats
    values = comp.values() if status in ("optimal", "inaccurate", "max_iter") else {}
    sol = Solution(problem, status, values, comp.multipliers(), backend="cvxpy", solver=solver,
                   n_iter=getattr(stats, "num_iters", None),
                   solve_time=time.perf_counter() - t0,
                   info={"cvxpy_status": comp.cvx.status, "solver_value": comp.cvx.value})
    sol.warn_status()
    return sol
