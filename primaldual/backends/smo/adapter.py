"""The Problem-level side of the SMO backend: ``accepts`` and ``solve`` for duals with a
:class:`~primaldual.model.structure.BoxQP` (derived from the problem by
:func:`~primaldual.model.structure.detect_box_qp`)
(what the registry calls for ``"smo"``; the solver is
:func:`primaldual.backends.smo.solver.smo_solve`).

Multipliers are reported in the Problem's own names and signs: for the min form
``1/2 a^T Q a + p^T a`` the stationarity ``G - nu sign - delta 1 - s + t = 0`` with
``G = Q a + p`` gives ``nu = rho = -b`` (LIBSVM's rho), ``delta = (r1 + r2)/2`` for the nu
variants, ``s = max(0, G - nu sign - delta)`` on ``a >= 0`` and ``t = max(0, -(...))`` on
``a <= C``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...model.structure import box_qp_of, box_qp_refusal
from ...solution import Solution
from ...validation import check_cache_size, check_max_iter, check_positive, warn_indefinite_kernel
from .solver import _start_module, solve_arrays


def _box(problem: Any):
    """The attached BoxQP record, or one detected from the problem itself."""
    return box_qp_of(problem)


def accepts(problem: Any) -> bool:
    """Problems carrying a BoxQP whose kernel signs are a positive multiple of the equality's
    coefficients (``Q = c^2 D_y K D_y``), or a dense Q; :func:`refusal` says why not."""
    return refusal(problem) is None


def kernel_multiple(box) -> float | None:
    """``c^2`` when the kernel-defined ``Q = D_s K D_s`` has ``s = c * sign`` (``c > 0``): ``Q`` is
    ``c^2`` times the equality's own ``D_sign K D_sign`` (SVDD's ``2K``); 1.0 for a dense ``Q`` or
    matching signs; ``None`` when the signs are not a positive multiple of each other."""
    op = box.Q
    if op.matrix is not None:
        return 1.0
    qs = np.asarray(op.sign, float)
    sign = np.ones(box.n) if box.sign is None else np.asarray(box.sign, float)
    if sign is qs or np.array_equal(sign, qs):
        return 1.0
    if box.equality == "none":
        sign = np.sign(qs)    # no equality: any signs are SMO's own
        if np.any(sign == 0):
            return None
        box.sign = sign
    if np.any(sign == 0):
        return None
    ratio = qs / sign
    if np.all(ratio > 0) and np.allclose(ratio, ratio[0], rtol=1e-12):
        return float(ratio[0] ** 2)
    return None


def refusal(problem: Any) -> str | None:
    """Why SMO cannot take ``problem`` (``None`` when it can): the structural condition that
    failed, in words."""
    box = _box(problem)
    if box is None:
        return (f"it is not a box-constrained QP ({box_qp_refusal(problem)}): SMO needs one "
                "variable a (or two stacked) with 0 <= a <= C, at most one equality "
                "sign^T a = delta (or the nu pair) and min 1/2 a^T Q a + p^T a")
    if getattr(box.Q, "coef", None) is not None:
        return ("Q = B^T K B over combinations of data rows (pair differences): SMO's "
                "columns read one signed row per variable (the 'pairs' route reads it)")
    c2, why = structure_check(box)
    if c2 is None:
        return ("the signs of Q = D_s K D_s are not a positive multiple of the equality's "
                "coefficients, so SMO's two-variable steps would leave the equality")
    return why


def structure_check(box) -> tuple[float | None, str | None]:
    """``(kernel_multiple(box), _bound_refusal(box))``, computed once per BoxQP record (the
    backend choice asks, then the solve)."""
    hit = box.__dict__.get("_smo_check")
    if hit is None:
        c2 = kernel_multiple(box)
        hit = box.__dict__["_smo_check"] = (c2, None if c2 is None else _bound_refusal(box))
    return hit


def _bound_refusal(box) -> str | None:
    if not (np.asarray(box.C, dtype=float) > 0).all():
        return ("an upper bound C_j <= 0 pins or empties the box 0 <= a_j <= C_j (SMO needs "
                "every C_j > 0)")
    return None


def greedy_start(sign: np.ndarray, C: np.ndarray, pos: float, neg: float) -> np.ndarray:
    """Feasible start: fill variables in order up to the per-sign totals (LIBSVM's nu start):
    on each sign's variables, in order, ``a_k = min(C_k, max(0, total - sum_{j<k} C_j))``."""
    start = _start_module()
    if start is not None and type(sign) is np.ndarray and type(C) is np.ndarray \
            and sign.dtype == np.float64 and C.dtype == np.float64 and sign.ndim == 1 \
            and C.shape == sign.shape:   # the same arithmetic, one compiled pass
        a, rem_pos, rem_neg = start.greedy_start(sign, C, float(pos), float(neg))
        _check_start(rem_pos, rem_neg, pos, neg)
        return a
    a = np.zeros(sign.shape[0])
    rem = {}
    positive = sign > 0
    for s, total in ((1.0, pos), (-1.0, neg)):
        idx = (positive if s > 0 else ~positive).nonzero()[0]
        c = C[idx]
        filled = np.cumsum(c)       # (C = inf: every later sum is inf, nothing after it filled)
        k = int(np.searchsorted(filled, total, side="right"))  # variables taking their C_k
        a[idx[:k]] = c[:k]
        if k < idx.shape[0]:        # the next one takes what is left, the others 0
            a[idx[k]] = max(0.0, total - (float(filled[k - 1]) if k else 0.0))
            rem[s] = 0.0
        else:
            rem[s] = total - (float(filled[-1]) if k else 0.0)
    _check_start(rem[1.0], rem[-1.0], pos, neg)
    return a


def _check_start(rem_pos: float, rem_neg: float, pos: float, neg: float) -> None:
    if rem_pos > 1e-12 * max(1.0, pos) or rem_neg > 1e-12 * max(1.0, neg):
        raise ValueError("the equality constraints cannot be met within the bounds "
                         "(infeasible: e.g. nu too large for the class balance)")


def _unbounded_ray(a: np.ndarray, p: np.ndarray, objective: float) -> np.ndarray | None:
    """A direction ``d = a / max(a)`` along which the min-form dual decreases without bound
    (``d^T Q d ~ 0``, ``p^T d < 0``), i.e. a certificate that the primal is infeasible.

    A bounded optimum of ``min 1/2 a^T Q a - 1^T a`` has ``a^T Q a = 1^T a`` so
    ``m d^T Q d / |p^T d| = 1``; a diverging run ``a = m d + a0`` has
    ``m d^T Q d / |p^T d| -> 2 d^T Q a0 / |p^T d|``, in practice ``|.| << 1``."""
    m = float(np.max(np.abs(a)))
    if m <= 0:
        return None
    pd_ = float(p @ a) / m
    dQd = 2.0 * (objective - float(p @ a)) / (m * m)  # m * m: inf, never OverflowError
    # at a bounded optimum of the hard-margin dual 1^T a = a^T Q a, i.e. m dQd/|p^T d| = 1;
    # along a ray a = m d + a0 (d^T Q d = 0) it is 2 d^T Q a0/|p^T d| + O(1/m), typically
    # |.| << 1: demand less than half the optimum's value
    if pd_ < 0 and m > 1e4 and m * dQd <= 0.5 * abs(pd_):
        return a / m
    return None


def prepare(problem: Any, options: dict[str, Any], hints: Any) -> None:
    """A multiclass sub-problem's kernel columns come from the Gram matrix its parent fit
    computed once (``hints.shared_gram``)."""
    sg = getattr(hints, "shared_gram", None)
    if sg is not None:
        options.setdefault("shared_gram", sg)


def solve(problem: Any, *, tol: float = 1e-3, max_iter: int | None = None,
          cache_size: float = 200.0, shrinking: bool = True, alpha0: Any = None,
          verbose: bool = False, record_trace: bool = False, dense: bool | None = None,
          shared_gram: Any = None, **_: Any) -> Solution:
    """Solve the BoxQP of ``problem`` with SMO and report it in the Problem's names.

    ``shared_gram``: a :class:`~primaldual.kernels.SharedGram` holding the kernel matrix of the
    problem's rows (a multiclass fit computes it once for all its sub-problems); used when it
    belongs to the problem's own kernel object and rows, else ignored."""
    t0 = time.perf_counter()     # Solution.solve_time: structure reading, SMO and read-back
    cache_size = check_cache_size(cache_size)
    max_iter = check_max_iter(max_iter)
    tol = check_positive(tol, "tol")

    box = _box(problem)
    if box is None:
        raise ValueError(f"backend 'smo' needs a box-constrained dual (problem {problem.name!r} "
                         "has no BoxQP structure)")
    op = box.Q
    warn_indefinite_kernel(op.kernel, "smo", X=getattr(op, "X", None))
    n = box.n
    sign = np.ones(n) if box.sign is None else np.asarray(box.sign, dtype=float)
    # Q = c2 D_sign K D_sign: solve for a' = c2 a (bounds, equality and start scaled by c2, a
    # diagonal term by 1/c2; the gradient Q a + p = Q0 a' + p is unchanged), then a = a' / c2
    c2, why = structure_check(box)
    if c2 is None:
        why = refusal(problem)
    if why is not None:
        raise ValueError(f"backend 'smo' does not accept problem {problem.name!r}: {why}")
    C = np.asarray(box.C, dtype=float)
    if c2 != 1.0:
        C = c2 * C
    # (C > 0 here, no NaN: the structure check; so every bound is finite iff the largest is)
    c_max = float(C.max()) if C.size else np.inf
    unbounded_box = not c_max < np.inf
    if unbounded_box:
        finite = C[np.isfinite(C)]
        c_max = float(finite.max()) if finite.size else np.inf
    # LIBSVM's scaling: solve with the largest finite bound at 1 so tol means what it means there
    s = 1.0 / c_max if c_max < 1.0 else 1.0
    p = np.asarray(box.p, dtype=float)
    up = C
    if s != 1.0:   # (the solver copies p and C: scaled copies only when they are scaled)
        p = s * p
        up = s * C
    if alpha0 is not None:
        a0 = s * c2 * np.asarray(alpha0, dtype=float)
    elif box.equality == "nu":
        half = s * c2 * float(box.nu_total) / 2.0
        a0 = greedy_start(sign, up, half, half)
    elif box.equality == "one" and box.delta != 0:
        d = s * c2 * float(box.delta)
        a0 = greedy_start(sign, up, max(d, 0.0), max(-d, 0.0))
    else:
        a0 = None
    # stop on the certified quantity too: relative duality gap <= tol (from the gradient, O(n)),
    # gap / max(1, |objective|) in the scaled units (largest finite bound 1), i.e. the
    # certificate's gap / max(C_max^2, |P|) (primaldual.certificate.objective_unit)
    kw: dict[str, Any] = dict(equality=box.equality, tol=tol, cache_size=cache_size,
                              shrinking=shrinking, alpha0=a0, verbose=verbose,
                              record_trace=record_trace, gap_tol=tol, gap_unit=1.0, dense=dense)
    if max_iter is not None and max_iter > 0:
        kw["max_iter"] = int(max_iter)
    elif unbounded_box:
        # with infinite bounds (hard margin, L2-SVC) a diverging run must stop in time for
        # the unboundedness test below
        kw["max_iter"] = max(200_000, 200 * n)
    if op.matrix is not None:
        r = solve_arrays(None, None, p, up, sign=sign, Q=op.matrix,
                      diag_add=op.diag if np.any(op.diag) else None, **kw)
    else:
        sg = shared_gram
        if sg is not None and sg.kernel is op.kernel and getattr(op.X, "shape", (None,))[0] \
                == sg.n:
            kw["gram"] = (sg.K, sg.rows)
        r = solve_arrays(op.X, op.kernel, p, up, sign=sign, index=op.index,
                   diag_add=op.diag / c2 if np.any(op.diag) else None, **kw)
    a = r.alpha / (s * c2) if s * c2 != 1.0 else r.alpha   # (fresh arrays of the solver)
    grad = r.grad / s if s != 1.0 else r.grad
    if r.status != "optimal" and unbounded_box:
        ray = _unbounded_ray(a, np.asarray(box.p, float), r.objective / (s**2 * c2))
        if ray is not None:
            sol = Solution(problem, "unbounded", {}, {box.variable: ray}, backend="smo",
                           solver="smo", n_iter=r.n_iter, solve_time=time.perf_counter() - t0,
                           info={"ray": ray, "max_violation": r.max_violation / s})
            sol.warn_status()
            return sol
    if box.equality == "nu":
        nu_eq = (r.r1 - r.r2) / (2.0 * s)
        nu_sum = (r.r1 + r.r2) / (2.0 * s)
    elif box.equality == "one":
        nu_eq, nu_sum = -r.b / s, 0.0
    else:
        nu_eq, nu_sum = 0.0, 0.0
    status = "optimal" if r.status == "optimal" else "max_iter"
    info = {"max_violation": r.max_violation / s, "trace": r.trace,
            "compile_time": r.compile_time, "route": r.route, "b": -nu_eq, "scale": s}
    return Solution(problem, status, box.split_values(a),
                    box.multipliers_from_gradient(a, grad, nu_eq, nu_sum), backend="smo",
                    solver="smo", n_iter=r.n_iter, info=info,
                    solve_time=time.perf_counter() - t0)
