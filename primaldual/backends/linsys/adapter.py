"""Problem-level adapter of the KKT backend: ``accepts(problem)`` / ``solve(problem, **options)``.

A dual Problem of the LS-SVM family has a
:class:`~primaldual.model.structure.KKTSystem` (derived from the problem by
:func:`~primaldual.model.structure.detect_kkt_system`) describing
``[[0, u^T], [u, H]] [b; a] = [0; d]`` with ``H = D_s (K (+ 1 1^T) + diag(1/C)) D_s``,
``u = s`` (or ``H a = d`` without bias). This module solves it with the raw-array solvers of
:mod:`primaldual.backends.linsys.direct` and reports the result in the Problem's own names:

* ``values[system.variable] = a``;
* ``multipliers[system.multipliers["eq"]] = -b``: the dual's equality ``u^T a = 0`` has
  multiplier ``nu`` with ``nu = -b`` (max-form Lagrangian ``f + nu u^T a``; its stationarity
  ``d - H a + nu u = 0`` is the bordered system's second row with ``b = -nu``).

Paths (``method``): ``"direct"`` (one Cholesky of ``K + I/C``, kernel built in the factor's
storage), ``"cg"`` (matrix-free preconditioned CG; uniform ``C``, no rank-one term). A per-sample
``C``, PSVM's ``1 1^T`` term or a precomputed matrix (``kernel=None``, e.g. LapRLS) go through
the precomputed-matrix route of the same direct solver.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...solution import Solution
from ...validation import check_kernel_or_none, warn_indefinite_kernel
from . import direct as _direct
from .iterative import solve_bordered_cg

__all__ = ["accepts", "solve"]


def accepts(problem: Any) -> bool:
    """True when ``problem.structure`` carries a ``"kkt_system"`` record or the problem has its
    shape (:func:`~primaldual.model.structure.detect_kkt_system`) with weights ``C > 0``;
    :func:`refusal` says why not."""
    return refusal(problem) is None


def refusal(problem: Any) -> str | None:
    """Why the KKT backend cannot take ``problem`` (the structural condition that fails),
    ``None`` when it can."""
    from ...model.structure import kkt_system_refusal

    why = kkt_system_refusal(problem)
    if why is not None:
        return f"no KKTSystem structure (an LS-SVM-type equality-constrained dual): {why}"
    from ...model.structure import kkt_system_of

    if not np.all(np.asarray(kkt_system_of(problem).C, dtype=float) > 0):
        return "a weight C_i <= 0 makes K + diag(1/C) indefinite (the KKT backend needs C > 0)"
    return None


def _dense_route(ks) -> bool:
    return ks.kernel is None or ks.rank_one or np.ndim(ks.C) > 0


def solve(problem: Any, *, method: str = "direct", tol: float = 1e-10,
          jitter: float | str | None = None, max_iter: int | None = None,
          preconditioner: str | None = "jacobi", **_ignored: Any) -> Solution:
    """Solve the Problem's KKT system and return a :class:`~primaldual.solution.Solution`.

    Parameters
    ----------
    method : {"direct", "cg"}
        Cholesky of ``K + I/C`` (default) or preconditioned conjugate gradient.
    tol : float
        CG tolerance (relative residual).
    jitter : float, "auto" or None
        Diagonal jitter for a numerically singular ``K + I/C`` (direct path).
    max_iter, preconditioner : CG options (see
        :func:`primaldual.backends.linsys.iterative.solve_bordered_cg`).

    Returns
    -------
    Solution
        ``status="optimal"``, ``values={variable: a}``, ``multipliers={eq: [-b]}`` (with bias),
        ``n_iter`` (1 for the direct path, CG iterations otherwise), ``info["kkt_residual"]``
        (relative residual of the bordered system recomputed by blocked kernel mat-vecs, never
        from the factor), ``info["b"]``, ``info["path"]`` and, on the direct path,
        ``info["blas_threads"]`` (the threads the Cholesky ran with).
    """
    why = refusal(problem)
    if why is not None:
        raise ValueError(f"the KKT backend cannot solve problem "
                         f"{getattr(problem, 'name', problem)!r} (kkt_system): {why}")
    if method not in ("direct", "cg"):
        raise ValueError(f"method must be 'direct' or 'cg', got {method!r}")
    from ...model.structure import kkt_system_of
    ks = kkt_system_of(problem)
    warn_indefinite_kernel(ks.kernel, "kkt")
    t0 = time.perf_counter()
    d = np.asarray(ks.d, dtype=float)
    sign = None if ks.sign is None else np.asarray(ks.sign, dtype=float)
    if _dense_route(ks):
        # A = K (+ 1 1^T) + diag(1/C) as a precomputed matrix; C = inf then adds nothing more
        A = ks.unsigned_matrix()
        Xr, kern, Cr = A, None, np.inf
    else:
        Xr, kern, Cr = ks.X, check_kernel_or_none(ks.kernel), float(ks.C)
    extra: dict[str, Any] = {}
    if method == "cg" and not _dense_route(ks):
        res = solve_bordered_cg(Xr, kern, Cr, d, sign=sign, bias=ks.bias, tol=tol,
                                     max_iter=max_iter, preconditioner=preconditioner)
        b, a, n_iter, path = res.b, res.a, res.n_iter, "cg"
        status = "optimal" if res.converged else "max_iter"
    else:
        factor = _direct._factor_kernel(
            Xr if kern is not None else np.array(Xr, order="F"), kern, Cr, jitter=jitter,
            matrix_name=None if kern is not None else
            f"the KKT matrix Q + diag(1/C_i) ({Xr.shape[0]} x {Xr.shape[0]}, C_i folded in)")
        b, a = _direct.solve_bordered(factor, d, sign=sign, bias=ks.bias)
        n_iter, path, status = 1, "direct", "optimal"
        extra["blas_threads"] = factor.threads
    b = float(b)
    a = np.asarray(a, dtype=float)
    # K beta recomputed from X by the chunked kernel product, not from the factor (which
    # would certify its own rounding) nor from a copy of K kept in the factor's unused upper
    # triangle: that copy (mirror + SYMV) measured 0.17 s CPU at N = 10,000 against 0.26 s,
    # under 2% of the fit, and would reuse the very Gram fill the factor saw, so a wrong
    # entry there would pass unnoticed; the certificate shares this product (matvec_cache)
    residual = _direct._kkt_residual(Xr, kern, Cr, sign, d, b, a, bias=ks.bias)
    multipliers = {}
    if ks.bias and "eq" in ks.multipliers:
        multipliers[ks.multipliers["eq"]] = np.array([-b])
    return Solution(problem, status, {ks.variable: a}, multipliers, backend="kkt",
                    solver=path, n_iter=n_iter, solve_time=time.perf_counter() - t0,
                    info={"kkt_residual": residual, "b": b, "path": path, **extra})
