"""Array-level shortcuts around the low-rank solver, used by tests and benchmarks: the same
eta-problem in CVXPY (:func:`eta_problem_cvxpy`), a C-SVC fit straight on ``(X, y, kernel)``
(:func:`lowrank_csvc`), rank selection and the exact-kernel gap of a low-rank C-SVC point.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...kernels import low_rank_factor
from .solver import _as_vector, _validate, lowrank_qp_solve

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
    return low_rank_factor(kernel, X, rank=rank, tol=tol, method=method,
                           random_state=random_state)


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
    if not callable(kernel):
        raise TypeError("kernel must be a primaldual.kernels.Kernel (callable as kernel(X, Z))")
    return np.asarray(kernel(X, Z), dtype=float)


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
