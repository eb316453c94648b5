"""Array-level shortcuts for the catalogue's box-constrained duals (C-SVC, L2-SVC, hard margin,
epsilon-SVR, nu-SVC, nu-SVR) straight on ``(X, y, kernel)``, without building Problem objects.

Used by tests and benchmarks to call the SMO solver directly; users call the estimators
(``primaldual.CSVC`` ...) or ``Problem.solve(backend="smo")``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .inputs import _as_vec
from .solver import SMOResult, smo_solve


# --------------------------------------------------------------------------------------
# catalogue wrappers (docs/formulations.md sections 1-6)
# --------------------------------------------------------------------------------------
def _labels(y: Any, name: str = "y") -> np.ndarray:
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.size == 0 or not np.all(np.abs(y) == 1.0):
        raise ValueError(f"{name} must contain only -1 and +1")
    return y


def _pos(v: Any, name: str, allow_inf: bool = False) -> float:
    try:
        v = float(v)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a number, got {v!r}") from exc
    if not v > 0 or (math.isinf(v) and not allow_inf) or math.isnan(v):
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    return v


def smo_csvc(X: Any, y: Any, kernel: Any, C: float, *, sample_weight: Any = None,
             **opts: Any) -> SMOResult:
    r"""C-SVC dual (docs/formulations.md 2): ``min 1/2 a^T Q a - 1^T a``, ``y^T a = 0``,
    ``0 <= a_i <= C_i = C w_i``, ``Q = D_y K D_y``.

    ``result.beta = y * alpha``; ``f(x) = sum_i beta_i k(x, x_i) + b`` with ``b = result.b``.
    ``opts`` are passed to :func:`smo_solve` (tol, cache_size, shrinking, alpha0, ...).
    """
    y = _labels(y)
    C = _pos(C, "C")
    n = y.shape[0]
    w = _as_vec(sample_weight, n, "sample_weight", default=1.0)
    if np.any(w <= 0):
        raise ValueError("sample_weight must be > 0 (drop points with zero weight)")
    r = smo_solve(X, kernel, -np.ones(n), C * w, sign=y, **opts)
    r.beta = y * r.alpha
    return r


def smo_l2svc(X: Any, y: Any, kernel: Any, C: float, **opts: Any) -> SMOResult:
    r"""L2-SVC dual (docs/formulations.md 3): ``min 1/2 a^T (Q + I/C) a - 1^T a``, ``y^T a = 0``,
    ``a >= 0`` (no upper bound). Slacks ``xi_i = a_i / C``; ``beta = y * alpha``."""
    y = _labels(y)
    C = _pos(C, "C")
    n = y.shape[0]
    r = smo_solve(X, kernel, -np.ones(n), np.full(n, np.inf), sign=y,
                  diag_add=np.full(n, 1.0 / C), **opts)
    r.beta = y * r.alpha
    return r


def smo_hard_margin(X: Any, y: Any, kernel: Any, **opts: Any) -> SMOResult:
    r"""Hard-margin dual (docs/formulations.md 1): ``min 1/2 a^T Q a - 1^T a``, ``y^T a = 0``,
    ``a >= 0``. On non-separable data the dual is unbounded: SMO then runs to ``max_iter``
    with a growing objective (``status="max_iter"``)."""
    y = _labels(y)
    n = y.shape[0]
    r = smo_solve(X, kernel, -np.ones(n), np.full(n, np.inf), sign=y, **opts)
    r.beta = y * r.alpha
    return r


def smo_epsilon_svr(X: Any, y: Any, kernel: Any, C: float, epsilon: float, *,
                    sample_weight: Any = None, **opts: Any) -> SMOResult:
    r"""epsilon-SVR dual (docs/formulations.md 5) on ``2N`` variables ``a = [alpha; alpha*]``:
    ``min 1/2 beta^T K beta + eps 1^T(alpha + alpha*) - y^T beta``, ``1^T beta = 0``,
    ``0 <= alpha, alpha* <= C``, ``beta = alpha - alpha*``.

    ``result.alpha`` has ``2N`` entries; ``result.extras["alpha"]``, ``["alpha_star"]`` the
    halves, ``result.beta = alpha - alpha*``; ``b = y_i - (K beta)_i - eps`` on free alpha_i.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    C = _pos(C, "C")
    try:
        epsilon = float(epsilon)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"epsilon must be a number, got {epsilon!r}") from exc
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    n = y.shape[0]
    w = _as_vec(sample_weight, n, "sample_weight", default=1.0)
    p = np.concatenate([epsilon - y, epsilon + y])
    sign = np.concatenate([np.ones(n), -np.ones(n)])
    idx = np.concatenate([np.arange(n), np.arange(n)])
    opts = dict(opts)
    if opts.get("Q") is not None:
        raise ValueError("smo_epsilon_svr builds its own Q from the kernel; pass X instead")
    r = smo_solve(X, kernel, p, np.concatenate([C * w, C * w]), sign=sign, index=idx, **opts)
    a, a_s = r.alpha[:n].copy(), r.alpha[n:].copy()
    r.beta = a - a_s
    r.extras = {"alpha": a, "alpha_star": a_s}
    return r


def _nu_start(sign: np.ndarray, C: np.ndarray, total_pos: float,
              total_neg: float) -> np.ndarray:
    """LIBSVM's greedy feasible start: fill variables in order up to the per-sign sums."""
    a = np.zeros(sign.shape[0])
    rem = {1.0: total_pos, -1.0: total_neg}
    for i in range(sign.shape[0]):
        s = float(sign[i])
        a[i] = min(C[i], rem[s])
        rem[s] -= a[i]
    return a


def smo_nusvc(X: Any, y: Any, kernel: Any, nu: float, **opts: Any) -> SMOResult:
    r"""nu-SVC dual (docs/formulations.md 4): ``min 1/2 a^T Q a`` s.t. ``0 <= a_i <= 1/N``,
    ``y^T a = 0``, ``1^T a >= nu`` (tight at the optimum: ``1^T a = nu``).

    Solved in LIBSVM's scale (``C = 1``, per-class sums ``nu N / 2``, so ``tol`` means
    what it means in LIBSVM) and rescaled by ``1/N``: ``alpha``, ``grad``, ``b``, ``r1``,
    ``r2``, ``rho_nu`` and ``max_violation`` are reported for the ``1/N`` problem, the
    objective for it too (``/ N^2``). ``b = -(r1 - r2)/2``, ``rho = rho_nu = (r1 + r2)/2``;
    ``alpha / rho`` solves the C-SVC with ``C = 1/(N rho)``. A warm start ``alpha0`` is taken
    in the ``1/N`` scale.
    """
    y = _labels(y)
    n = y.shape[0]
    nu = _pos(nu, "nu")
    n_pos = int(np.sum(y > 0))
    n_neg = n - n_pos
    if nu > 1 or nu * n > 2 * min(n_pos, n_neg):
        raise ValueError(f"nu={nu} is infeasible: need nu <= 2 min(n_pos, n_neg)/N = "
                         f"{2 * min(n_pos, n_neg) / n:.4g}")
    opts = dict(opts)
    C = np.ones(n)
    if opts.get("alpha0") is not None:
        opts["alpha0"] = np.asarray(opts["alpha0"], dtype=np.float64) * n
    else:
        opts["alpha0"] = _nu_start(y, C, nu * n / 2, nu * n / 2)
    r = smo_solve(X, kernel, np.zeros(n), C, sign=y, equality="nu", **opts)
    r.alpha = r.alpha / n
    r.grad = r.grad / n
    r.objective = r.objective / n**2
    r.b, r.r1, r.r2, r.rho_nu = r.b / n, r.r1 / n, r.r2 / n, r.rho_nu / n
    r.max_violation = r.max_violation / n
    if r.trace is not None:
        r.trace["objective"] = [v / n**2 for v in r.trace["objective"]]
        r.trace["violation"] = [v / n for v in r.trace["violation"]]
    r.beta = y * r.alpha
    return r


def smo_nusvr(X: Any, y: Any, kernel: Any, C: float, nu: float, **opts: Any) -> SMOResult:
    r"""nu-SVR dual (docs/formulations.md 6) on ``2N`` variables ``a = [alpha; alpha*]``:
    ``min 1/2 beta^T K beta - y^T beta`` s.t. ``1^T beta = 0``, ``0 <= alpha, alpha* <= C/N``,
    ``1^T(alpha + alpha*) <= C nu`` (tight; solved as ``1^T alpha = 1^T alpha* = C nu / 2``).

    scikit-learn's ``NuSVR(C=c)`` is this problem with ``C = c N`` (LIBSVM folds the ``1/N``
    into C). ``b = -(r1 - r2)/2``; the tube width is ``extras["epsilon"] = -rho_nu``.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    C = _pos(C, "C")
    nu = _pos(nu, "nu")
    if nu > 1:
        raise ValueError(f"nu must be in (0, 1], got {nu}")
    n = y.shape[0]
    sign = np.concatenate([np.ones(n), -np.ones(n)])
    idx = np.concatenate([np.arange(n), np.arange(n)])
    C_i = np.full(2 * n, C / n)  # per-variable bounds C_i = C / N
    opts = dict(opts)
    if opts.get("alpha0") is None:
        a0 = np.zeros(2 * n)
        rem = C * nu / 2
        for i in range(n):
            a0[i] = a0[n + i] = min(rem, C / n)
            rem -= a0[i]
        opts["alpha0"] = a0
    p = np.concatenate([-y, y])
    r = smo_solve(X, kernel, p, C_i, sign=sign, index=idx, equality="nu", **opts)
    a, a_s = r.alpha[:n].copy(), r.alpha[n:].copy()
    r.beta = a - a_s
    r.extras = {"alpha": a, "alpha_star": a_s, "epsilon": -r.rho_nu}
    return r
