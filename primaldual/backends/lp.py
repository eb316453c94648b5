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


def _dense_rows(rec: Any) -> tuple[int, int]:
    """``(rows, columns)`` with more than one non-zero: the work of the LP as given and of its
    transpose (HiGHS's presolve turns single-entry rows and columns into bounds)."""
    import scipy.sparse as sp

    M = sp.vstack([rec.A_ub, rec.A_eq]).tocsr()
    rows = int(np.count_nonzero(np.diff(M.indptr) > 1))
    cols = int(np.count_nonzero(np.diff(M.tocsc().indptr) > 1))
    return rows, cols


def _solve_transposed(rec: Any, opts: dict) -> tuple | None:
    """Solve the LP dual of ``min cᵀx`` s.t. ``A x <= b``, ``E x = f``, ``l <= x <= u``::

        min bᵀy - fᵀz - lᵀr + uᵀs  s.t.  -Aᵀy + Eᵀz + r - s = c,  y, r, s >= 0, z free

    (``r``/``s`` only for finite bounds) and read the primal back: by LP duality ``x`` is minus
    the marginal of the dual's equality rows, and HiGHS's marginals of the primal are
    ``∂f*/∂b = -y``, ``∂f*/∂f = z``, ``∂f*/∂l = r``, ``∂f*/∂u = -s``. Returns what
    :func:`linprog` would: ``(status, message, x, ub_marg, eq_marg, lo_marg, up_marg, nit)``."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    n = rec.c.shape[0]
    lo_idx = np.flatnonzero(np.isfinite(rec.lb))
    up_idx = np.flatnonzero(np.isfinite(rec.ub))
    m_ub, m_eq = rec.A_ub.shape[0], rec.A_eq.shape[0]
    R = sp.csr_matrix((np.ones(lo_idx.size), (lo_idx, np.arange(lo_idx.size))),
                      shape=(n, lo_idx.size))
    S = sp.csr_matrix((-np.ones(up_idx.size), (up_idx, np.arange(up_idx.size))),
                      shape=(n, up_idx.size))
    Aeq = sp.hstack([-rec.A_ub.T, rec.A_eq.T, R, S]).tocsr()
    cost = np.concatenate([rec.b_ub, -rec.b_eq, -rec.lb[lo_idx], rec.ub[up_idx]])
    bounds = [(0, None)] * m_ub + [(None, None)] * m_eq + [(0, None)] * (lo_idx.size +
                                                                         up_idx.size)
    res = linprog(cost, A_eq=Aeq, b_eq=rec.c, bounds=bounds, method="highs", options=opts)
    if res.status != 0 or res.x is None:
        # infeasible dual: the primal is unbounded or infeasible; let the caller solve it as
        # given for the exact status
        return None
    v = np.asarray(res.x, dtype=float)
    y, z = v[:m_ub], v[m_ub:m_ub + m_eq]
    r, s_ = v[m_ub + m_eq:m_ub + m_eq + lo_idx.size], v[m_ub + m_eq + lo_idx.size:]
    lo_m, up_m = np.zeros(n), np.zeros(n)
    lo_m[lo_idx], up_m[up_idx] = r, -s_
    x = -np.asarray(res.eqlin.marginals, dtype=float)
    return (0, res.message, x, -y, z, lo_m, up_m, int(getattr(res, "nit", 0) or 0))


def solve(problem: Any, *, tol: float = 1e-9, max_iter: int | None = None,
          verbose: bool = False, transpose: bool | None = None, **_: Any) -> Solution:
    """Solve the LP of ``problem`` with HiGHS (``tol``: its primal/dual feasibility
    tolerances). ``transpose``: solve the LP's dual instead (``None``: when it has fewer rows
    with more than one non-zero than the LP has, e.g. the 1-norm SVM's ``d`` weight columns
    against its ``N`` margin rows); values and multipliers are read back either way."""
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
    if transpose is None:
        rows, cols = _dense_rows(rec)
        transpose = cols < rows
    out = _solve_transposed(rec, opts) if transpose else None
    if out is None:
        transpose = False
        kw: dict[str, Any] = {}
        if rec.A_ub.shape[0]:
            kw.update(A_ub=rec.A_ub, b_ub=rec.b_ub)
        if rec.A_eq.shape[0]:
            kw.update(A_eq=rec.A_eq, b_eq=rec.b_eq)
        bounds = [(lo if np.isfinite(lo) else None, hi if np.isfinite(hi) else None)
                  for lo, hi in zip(rec.lb, rec.ub, strict=True)]
        res = linprog(rec.c, bounds=bounds, method="highs", options=opts, **kw)
        x = None if res.x is None else np.asarray(res.x, dtype=float)
        out = (int(res.status), res.message, x,
               np.asarray(res.ineqlin.marginals) if rec.A_ub.shape[0] and x is not None
               else np.zeros(rec.A_ub.shape[0]),
               np.asarray(res.eqlin.marginals) if rec.A_eq.shape[0] and x is not None
               else np.zeros(rec.A_eq.shape[0]),
               None if x is None else np.asarray(res.lower.marginals),
               None if x is None else np.asarray(res.upper.marginals),
               int(getattr(res, "nit", 0) or 0))
    code, message, x, ub, eq, lo_m, up_m, nit = out
    status = _STATUS.get(int(code), "solver_error")
    info = {"highs_status": int(code), "highs_message": message, "transposed": bool(transpose),
            "solver_value": None if x is None else rec.sign * float(rec.c @ x)}
    if status not in ("optimal", "max_iter") or x is None:
        sol = Solution(problem, status, {}, {}, backend="lp", solver="highs",
                       solve_time=time.perf_counter() - t0, info=info)
        sol.warn_status()
        return sol
    sol = Solution(problem, status, rec.values(x), rec.multipliers(ub, eq, lo_m, up_m),
                   backend="lp", solver="highs", n_iter=nit,
                   solve_time=time.perf_counter() - t0, info=info)
    sol.warn_status()
    return sol
