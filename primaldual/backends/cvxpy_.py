"""CVXPY backend: any convex Problem, solver selectable (Clarabel default, OSQP, ECOS, SCS)."""

from __future__ import annotations

import time
from typing import Any

import cvxpy as cp
import numpy as np

from ..model.to_cvxpy import to_cvxpy
from ..solution import Solution
from .interior import finish_interior_point

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


#: dense N x N float64 arrays the CVXPY route holds per kernel block at its peak: the Gram or Q
#: matrix, its PSD factor, the factored expressions and CVXPY's canonicalised copies (measured:
#: peak resident memory 5.3 x 8 N^2 bytes above the baseline at N = 2,000, primal and dual)
DENSE_COPIES = 6


def dense_bytes(problem: Any) -> tuple[int, int]:
    """``(bytes, N)``: what compiling ``problem`` to CVXPY allocates in dense ``N x N`` arrays
    (``DENSE_COPIES`` per kernel block: each feature-space variable's Gram matrix over its
    basis points, each ``quad_form`` on a kernel-defined ``GramOperator`` that is not the
    linear kernel on features of its own), and the largest such ``N``. A data matrix the
    problem already holds is not counted."""
    from ..model.terms import QuadForm

    total, n_max = 0, 0
    for v in problem.variables:
        if getattr(v, "feature", False):
            n = int(v.size)
            total += DENSE_COPIES * 8 * n * n
            n_max = max(n_max, n)
    for t in problem.objective.terms:
        if isinstance(t, QuadForm):
            op = t.op
            if hasattr(op, "linear_factor") and op.linear_factor() is not None:
                continue        # compiled on its features (n x d): no n x n array at all
            # a combination form Bᵀ K B is compiled on the basis points' Gram matrix
            n = int(op.n) if getattr(op, "coef", None) is None else int(op.X.shape[0])
            total += (DENSE_COPIES - (op.matrix is not None)) * 8 * n * n
            n_max = max(n_max, n)
    return total, n_max


def check_dense_memory(problem: Any) -> None:
    """Raise :class:`~primaldual.exceptions.InsufficientMemoryError` before compiling when
    the CVXPY route's dense ``N x N`` arrays (:func:`dense_bytes`) exceed the available memory;
    the message names what would fit: the largest ``N`` for this route, and the specialised
    backends with the structural reason each refused this problem (``choose()``'s), which read
    kernel columns on demand or a low-rank factor instead."""
    from ..exceptions import InsufficientMemoryError
    from ..validation import available_memory

    need, n = dense_bytes(problem)
    if need == 0:
        return
    avail = available_memory()
    if avail is None or need <= avail:
        return
    from . import choose

    n_fit = int(np.sqrt(avail / (DENSE_COPIES * 8.0)))
    _, why = choose(problem)
    raise InsufficientMemoryError(
        f"the CVXPY route for problem {problem.name!r} forms dense {n} x {n} matrices "
        f"({need / 2**30:.1f} GiB) but only {avail / 2**30:.1f} GiB are available; routes that "
        f"fit: a subsample of at most N = {n_fit} points on this route; a box-QP or "
        "equality-constrained dual (write or dualize the problem so that backend 'smo', 'gsmo' "
        "or 'kkt' accepts it: kernel columns on demand, memory O(N cache_size)); or "
        f"backend='lowrank' on a low-rank kernel factor. Backend choice: {why}")


#: CVXPY atoms canonicalised to the exponential cone
_EXP_ATOMS = ("logistic", "log_sum_exp", "entr", "exp", "log", "kl_div", "rel_entr")


def _has_exp_cone(cvx: Any) -> bool:
    """Whether the compiled problem holds an atom that CVXPY writes on the exponential cone."""
    try:
        return any(a.__name__ in _EXP_ATOMS for a in cvx.atoms())
    except Exception:  # a CVXPY without Problem.atoms(): the default tolerances
        return False


def accepts(problem: Any) -> bool:
    """Every problem: a non-convex one is refused with a clear error at compile time."""
    return True


def solve(problem: Any, *, solver: str | None = None, accurate: bool = True, verbose: bool = False,
          exp_cone_tol: float | None = None, **solver_options: Any) -> Solution:
    """Compile ``problem`` to CVXPY, solve, and read values and multipliers back.

    Parameters
    ----------
    solver : {"CLARABEL", "OSQP", "ECOS", "SCS"}, optional
        Default Clarabel.
    accurate : bool
        Tighten the solver's tolerances (default) so certificates reach ~1e-8.
    exp_cone_tol : float, optional
        Clarabel's gap and feasibility tolerances when the problem holds an exponential-cone
        atom (a fit sets 1e-8, :func:`prepare`: asked for 1e-10 there, Clarabel often stops
        'almost solved' at ~5e-9); by default the accurate tolerances apply.
    """
    solver = (solver or "CLARABEL").upper()
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    check_dense_memory(problem)      # refuse before allocating, not after swapping
    t0 = time.perf_counter()
    comp = to_cvxpy(problem)
    opts = dict(_ACCURATE[solver]) if accurate else {}
    if exp_cone_tol is not None and accurate and solver == "CLARABEL" \
            and _has_exp_cone(comp.cvx):
        opts.update(tol_gap_abs=exp_cone_tol, tol_gap_rel=exp_cone_tol, tol_feas=exp_cone_tol)
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


# ----------------------------------------------------------------------------- the engine's hooks
#: the CVXPY route holds several N x N blocks at once (K, Q, the problem's data and the
#: solver's copies; traced peak 5.2 blocks for C-SVC, 9.2 for LS-SVC at N = 1200)
_FIT_BLOCKS = 10


def from_params(params: dict[str, Any], options: dict[str, Any]) -> None:
    """An empty ``solver`` leaves CVXPY's choice (Clarabel first)."""
    if not options.get("solver"):
        options.pop("solver", None)


def prepare(problem: Any, options: dict[str, Any], hints: Any) -> None:
    """The route's own settings for a bound fit: refuse before compiling when its ``N x N``
    blocks do not fit in memory, and tighten Clarabel's absolute tolerances when the
    objective is small (``hints.tight``: a box ``C < 1e-2`` makes it ``O(C^2)``, and the
    default absolute tolerances, 1e-8, would leave the dual point infeasible relative to its
    box)."""
    n = int(getattr(hints, "rows", 0) or 0)
    if n * n > 2**20:
        from ..validation import block_bytes, check_memory
        check_memory(block_bytes([(n, n)] * _FIT_BLOCKS),
                     f"{getattr(hints, 'label', '') or problem.name} through CVXPY: "
                     f"{_FIT_BLOCKS} blocks the size of the {n} x {n} kernel matrix")
    options.setdefault("exp_cone_tol", 1e-8)
    if (options.get("solver") or "CLARABEL").upper() == "CLARABEL" \
            and "tol_gap_abs" not in options and getattr(hints, "tight", False):
        options.update(tol_gap_abs=1e-15, tol_gap_rel=1e-12, tol_feas=1e-12,
                       tol_ktratio=1e-10)


#: an interior-point answer rounded to the point it stands for (:mod:`.interior`)
finish = finish_interior_point
