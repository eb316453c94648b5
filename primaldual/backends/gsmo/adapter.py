"""The Problem-level side of the generalised SMO: ``accepts``/``refusal``/``solve`` for duals
with a :class:`~primaldual.model.multi_equality.BoxQPEq` (read from the problem by
:func:`~primaldual.model.multi_equality.read_box_qp_eq`).

Multipliers are reported in the Problem's names with the convention of
:class:`~primaldual.model.multi_equality.BoxQPEq`: the group multipliers ``λ`` the solver
leaves give the equality multipliers ``μ = Tᵀλ``, the reduced costs ``r = Q a + p - Aᵀμ``
the bound multipliers ``max(0, r)`` (``a >= 0``) and ``max(0, -r)`` (``a <= C``)."""

from __future__ import annotations

from typing import Any

from ...solution import Solution
from ...validation import check_cache_size, check_max_iter, check_positive, warn_indefinite_kernel


def _record(problem: Any):
    from ...model.multi_equality import box_qp_eq_of
    return box_qp_eq_of(problem)


def accepts(problem: Any) -> bool:
    """Problems whose dual reads as a box QP with linear equalities in group form
    (:func:`refusal` says why not)."""
    return refusal(problem) is None


def refusal(problem: Any) -> str | None:
    """Why the generalised SMO cannot take ``problem`` (``None`` when it can)."""
    from ...model.multi_equality import box_qp_eq_refusal

    rec = _record(problem)
    if rec is None:
        return (f"it is not a box QP with linear equalities ({box_qp_eq_refusal(problem)}): the "
                "generalised SMO needs one kernel variable 0 <= a <= C, a few scalar variables "
                "m >= lo outside Q and equalities whose columns on a partition into groups")
    if getattr(rec.Q, "coef", None) is not None:
        return ("Q = B^T K B over combinations of data rows (pair differences): the "
                "generalised SMO's columns read one signed row per variable")
    return None


def solve(problem: Any, *, tol: float = 1e-3, max_iter: int | None = None,
          cache_size: float = 200.0, verbose: bool = False, libsvm: bool = True,
          **_: Any) -> Solution:
    """Solve the :class:`BoxQPEq` of ``problem`` and report it in the Problem's names; ``tol``
    bounds both the maximal violation (LIBSVM's units) and the relative duality gap; the shapes
    LIBSVM's own loop solves (one equality, or nu-SVC's two sign groups) go to SMO's compiled
    loop unless ``libsvm=False``."""
    from .solver import gsmo_solve

    cache_size = check_cache_size(cache_size)
    max_iter = check_max_iter(max_iter)
    tol = check_positive(tol, "tol")
    rec = _record(problem)
    if rec is None:
        raise ValueError(f"backend 'gsmo' does not accept problem {problem.name!r}: "
                         f"{refusal(problem)}")
    if rec.Q.matrix is None:
        warn_indefinite_kernel(rec.Q.kernel, "gsmo", X=getattr(rec.Q, "X", None))
    r = gsmo_solve(rec, tol=tol, max_iter=max_iter, cache_size=cache_size, libsvm=bool(libsvm))
    info = {"max_violation": r.violation, "rel_gap_solver": r.rel_gap,
            "compile_time": r.compile_time, "groups": rec.n_groups, "route": r.route}
    if r.status in ("infeasible", "unbounded"):
        sol = Solution(problem, r.status, {}, {}, backend="gsmo", solver="gsmo",
                       n_iter=r.n_iter, info=info)
        sol.warn_status()
        return sol
    sol = Solution(problem, r.status, rec.values(r.alpha, r.m),
                   rec.multipliers(r.alpha, r.m, r.grad, r.lam), backend="gsmo", solver="gsmo",
                   n_iter=r.n_iter, info=info)
    sol.warn_status()
    return sol
