"""The Problem-level side of the low-rank backend (docs/formulations.md 14):
``accepts``/``solve`` for duals with a kernel-defined :class:`~primaldual.model.structure.BoxQP`.

Apply: factor ``K ~= V V^T`` (:func:`primaldual.kernels.low_rank_factor`, rank ``rank`` or trace
tolerance ``rank_tol``), ``B = D_s V[index]`` so ``Q ~= B B^T`` and the dual's quadratic term is
``||eta||^2`` with ``eta = B^T a``. Invert: ``a`` maps back to the Problem's variables, the
equality multipliers to ``nu = -b``, and ``eta`` is the low-rank ``w`` (prediction
``v(x)^T eta + b``). The eta-problem's own certificate is in ``solution.info["lowrank"]``; the
method's certificate then measures the recovered ``alpha`` on the exact-kernel problem, so the
difference is what the approximation cost.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from ...exceptions import LowRankApproximationWarning
from ...solution import Solution
from ...validation import warn_indefinite_kernel
from .solver import lowrank_qp_solve


def _box(problem: Any):
    """The attached BoxQP record, or one detected from the problem itself."""
    from ...model.structure import box_qp_of
    return box_qp_of(problem)


def accepts(problem: Any) -> bool:
    """Kernel-defined box QPs (no dense-matrix Q): their quadratic term is ``beta^T K beta``."""
    return refusal(problem) is None


def refusal(problem: Any) -> str | None:
    """Why the low-rank backend cannot take ``problem`` (the structural condition that fails),
    ``None`` when it can."""
    from ...model.structure import box_qp_refusal

    box = _box(problem)
    if box is None:
        return f"no kernel-defined BoxQP structure ({box_qp_refusal(problem)})"
    if box.Q.matrix is not None or box.Q.kernel is None:
        return "Q is a matrix, not a kernel the low-rank factor can approximate"
    return None


def solve(problem: Any, *, rank: int | None = None, rank_tol: float | None = None,
          method: str = "nystrom", tol: float = 1e-8, max_iter: int = 100,
          verbose: bool = False, random_state: int = 0, factor: Any = None,
          qp_method: str = "auto", **_: Any) -> Solution:
    """Factor the kernel (``method``), solve the eta-problem with ``lowrank_qp_solve``
    (``qp_method``: ``"auto"`` = smoothing Newton + working-set IPM where every bound is finite
    and there is no diagonal term, else the interior-point method), map the solution back to
    the Problem's names."""
    from ...kernels import low_rank_factor
    from ...kernels.gram import _one_blas_thread

    box = _box(problem)
    if box is None or not accepts(problem):
        raise ValueError(f"backend 'lowrank' needs a kernel-defined box-constrained dual "
                         f"(problem {problem.name!r} has none)")
    t0 = time.perf_counter()
    op = box.Q
    warn_indefinite_kernel(op.kernel, "lowrank")
    X = np.asarray(op.X, dtype=float)
    if factor is None:
        if rank is None and rank_tol is None:
            rank = min(X.shape[0], 200)
        if method == "nystrom" and rank_tol is not None:
            method = "rpcholesky"  # a trace tolerance needs an adaptive (pivoted) factor
        with _one_blas_thread():  # N x M products, M x M factorisations: as the eta solve
            factor = low_rank_factor(op.kernel, X, rank=rank, tol=rank_tol, method=method,
                                     random_state=random_state)
    if factor.relative_error > 0.5:
        warnings.warn(
            f"the rank-{factor.rank} {factor.method} factor leaves "
            f"{100 * factor.relative_error:.0f}% of trace(K) unexplained: the low-rank fit "
            "solves a different problem; use a larger rank (or rank_tol) or an exact backend "
            "('smo', 'cvxpy')", LowRankApproximationWarning, stacklevel=3)
    V = factor.V if op.index is None else factor.V[op.index]
    B = op.sign[:, None] * V
    n = box.n
    sign = np.ones(n) if box.sign is None else np.asarray(box.sign, dtype=float)
    diag = op.diag if np.any(op.diag) else None
    if box.equality == "one":
        A, rhs = sign, float(box.delta)
    elif box.equality == "nu":
        A, rhs = np.vstack([sign, np.ones(n)]), np.array([0.0, float(box.nu_total)])
    else:
        A, rhs = None, 0.0
    t1 = time.perf_counter()
    r = lowrank_qp_solve(B, np.asarray(box.p, float), np.asarray(box.C, float), sign=A,
                         delta=rhs, diag=diag, tol=tol, max_iter=max_iter, verbose=verbose,
                         method=qp_method)
    info = {"lowrank": r, "factor": factor, "eta": r.eta, "rank": factor.rank,
            "trace_error": factor.trace_error, "relative_error": factor.relative_error,
            "factor_time": t1 - t0, "solve_time": time.perf_counter() - t1}
    status = {"optimal": "optimal", "max_iter": "max_iter",
              "infeasible": "infeasible"}.get(r.status, "solver_error")
    if status not in ("optimal", "max_iter"):
        return Solution(problem, status, backend="lowrank", solver="ipm-smw", n_iter=r.n_iter,
                        info=info)
    a = np.asarray(r.alpha, dtype=float)
    grad = B @ (B.T @ a) + (0 if diag is None else diag * a) + box.p
    lam = np.atleast_1d(r.multipliers)
    nu_eq = float(lam[0]) if lam.size else 0.0
    nu_sum = float(lam[1]) if lam.size > 1 else 0.0
    return Solution(problem, status, box.split_values(a),
                    box.multipliers_from_gradient(a, grad, nu_eq, nu_sum), backend="lowrank",
                    solver="ipm-smw", n_iter=r.n_iter, solve_time=time.perf_counter() - t0,
                    info=info)
