"""The Problem-level side of the linear route: ``accepts``/``solve`` for box-QP duals whose
``Q`` is a linear kernel's ``D_q X X^T D_q (+ diag)``, dense or CSR ``X``.

Apply: ``w = X^T D_q a`` is kept explicitly, so a coordinate step and a gradient entry cost the
non-zeros of one row, never a kernel column (:mod:`.core`); the equality rows (the free bias
``b``, the nu rows) are kept exactly by an augmented Lagrangian, not by a regularised bias
feature. Invert: after the last pass the equality residual is removed on the free variables,
``nu`` is the gap-minimising equality multiplier for that point (``b = -nu``), and the
multipliers of the bounds come from the gradient, all in the Problem's names.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from ...certificate import AUDIT_TOL_MAX
from ...exceptions import ConvergenceWarning
from ...kernels.functions import Linear
from ...kernels.gram import sorted_csr
from ...model.structure import accepted_box_qp, box_qp_of, box_qp_refusal
from ...solution import Solution
from ...validation import check_max_iter, check_positive

#: the augmented Lagrangian's penalty, relative to the mean ``||x_j||^2`` of the rows (the
#: scale of ``Q``'s diagonal): 1 behaves like LIBLINEAR's bias feature of the same scale
RHO_SCALE = 0.1
#: coordinate passes (over the active set) allowed in all, unless ``max_iter`` says otherwise
MAX_PASSES = 50_000
#: ``backend="auto"`` takes the linear route from this many data rows on; below, SMO (whose
#: iterates are LIBSVM's, so the model is scikit-learn's ``SVC`` model) costs at most ~0.15 s
#: (measured, CSR and dense, d = 100: 1,000 rows SMO 0.11-0.14 s, this route 0.03 s; 3,000 rows
#: 0.70-0.96 s against 0.05-0.07 s; 10,000 rows 5.8-9.9 s against 0.11-0.13 s)
AUTO_MIN_ROWS = 2000


def accepts(problem: Any) -> bool:
    """Box QPs whose ``Q`` is the linear kernel on data rows (finite bounds, or infinite ones
    with a positive diagonal term): :func:`refusal` says why not."""
    return refusal(problem) is None


def refusal(problem: Any) -> str | None:
    """Why the linear route cannot take ``problem`` (``None`` when it can)."""
    box = box_qp_of(problem)
    if box is None:
        return f"no BoxQP structure ({box_qp_refusal(problem)})"
    op = box.Q
    # a kernel over combinations of rows (B^T K B) is read on the rows of B^T L (rows_form)
    if op.matrix is not None or (op.coef is None and type(op.kernel) is not Linear):
        return "Q is not the linear kernel x^T z on data rows (no explicit w to keep)"
    X = op.X
    if not (sp.issparse(X) or (isinstance(X, np.ndarray) and X.ndim == 2)):
        return "the data rows are neither a 2-D array nor a sparse matrix"
    C = np.asarray(box.C, dtype=float)
    if not (C > 0).all():
        return "an upper bound C_j <= 0 pins or empties the box"
    if not np.isfinite(C).all() and not (np.asarray(op.diag) > 0).all():
        return ("infinite bounds without a diagonal term (hard margin): the coordinate steps "
                "would diverge on inseparable data, where SMO detects the unbounded ray")
    return None


def auto_takes_kernel(kernel: str, rows: int) -> bool:
    """Whether ``"auto"`` takes a box QP of the named kernel on ``rows`` data rows here."""
    return kernel == "linear" and rows >= AUTO_MIN_ROWS


def auto_refusal(problem: Any) -> str | None:
    """Why ``"auto"`` leaves an accepted problem to SMO: fewer than :data:`AUTO_MIN_ROWS` data
    rows; or to the pairs route: a kernel over combinations of rows, which this route reads
    on the ``n x rank(K)`` rows of a factor (``backend="linear"`` named explicitly)."""
    op = box_qp_of(problem).Q
    if op.coef is not None:
        return ("Q = B^T K B over combinations of data rows: the pairs route keeps the scores "
                "instead of the n x rank(K) factor rows this route would read")
    rows = op.X.shape[0]
    if rows < AUTO_MIN_ROWS:
        return (f"{rows} data rows (< {AUTO_MIN_ROWS}): SMO is as fast there and its model is "
                "LIBSVM's")
    return None


def _groups(box) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The equality rows as ``(group, c, delta)``: variable ``j`` enters row ``group[j]``
    (``-1``: none) with coefficient ``c[j]``."""
    n = box.n
    sign = np.ones(n) if box.sign is None else np.asarray(box.sign, dtype=float)
    if box.equality == "one":
        return np.zeros(n, dtype=np.int64), sign, np.array([float(box.delta)])
    if box.equality == "nu":
        half = float(box.nu_total) / 2.0
        return (np.where(sign > 0, 0, 1).astype(np.int64), np.ones(n),
                np.array([half, half]))
    return np.full(n, -1, dtype=np.int64), sign, np.zeros(0)


def _restore_equality(a, c, group, delta, C):
    """Move ``a`` onto the equality rows exactly (the augmented Lagrangian leaves a residual of
    order tol): spread the residual over the free variables, clipping at the bounds, then
    over any variable with room. Returns the changed positions."""
    changed = np.zeros(a.shape[0], dtype=bool)
    for g in range(delta.shape[0]):
        members = np.flatnonzero(group == g)
        for attempt in range(8):
            res = float(c[members] @ a[members]) - delta[g]
            if abs(res) <= 1e-15 * max(1.0, abs(delta[g]), float(np.abs(a[members]).sum())):
                break
            aj = a[members]
            free = (aj > 0) & (aj < C[members]) if attempt < 4 else np.ones(aj.shape, bool)
            cj = c[members][free]
            if not cj.size:
                continue
            step = -res * cj / float(cj @ cj)
            idx = members[free]
            a[idx] = np.clip(a[idx] + step, 0.0, C[idx])
            changed[idx] = True
    return np.flatnonzero(changed)


def _best_nu(G, a, C, c, group, n_groups, nu0):
    """Per equality row, the multiplier minimising the box gap ``sum_j a_j r_j + C_j
    max(0, -r_j)`` (``r = G - nu c``; a convex piecewise-linear function of ``nu``, whose
    slope ``-sum a_j c_j + sum_{r_j < 0} C_j c_j`` is found by sorting the breakpoints)."""
    nu = nu0.copy()
    for g in range(n_groups):
        m = group == g
        cj, Cj, Gj = c[m], C[m], G[m]
        ok = cj != 0
        if not np.isfinite(Cj[ok]).all() or not ok.any():
            continue
        bp = Gj[ok] / cj[ok]
        wt = Cj[ok] * np.abs(cj[ok])     # the slope's jump at each breakpoint
        order = np.argsort(bp)
        # slope at nu -> -inf: -sum a c + sum over c < 0 of C c; it rises by wt at each bp
        slope0 = -float(a[m] @ cj) + float((Cj[ok] * cj[ok])[cj[ok] < 0].sum())
        cum = slope0 + np.cumsum(wt[order])
        k = int(np.searchsorted(cum, 0.0, side="left"))
        if k < bp.shape[0]:
            nu[g] = float(bp[order][k])
    return nu


def _certified_point(Z, q, p, dg, C, c, group, delta, lam, a, w):
    """``(a, w, G, nu)``: a copy of ``a`` moved onto the equality rows, its ``w = Z^T D_q a``
    and gradient, and the gap-minimising equality multipliers."""
    a = a.copy()
    if delta.shape[0]:
        before = a.copy()
        ch = _restore_equality(a, c, group, delta, C)
        if ch.size:
            w = w + np.asarray(Z[ch].T @ (q[ch] * (a[ch] - before[ch]))).ravel()
    from . import core

    G = np.empty(a.shape[0])
    core.gradient(Z.indptr, Z.indices, Z.data, q, p, dg, a, w, G)
    nu = _best_nu(G, a, C, c, group, delta.shape[0], -lam)
    return a, w, G, nu


def _relative_gap(point, p, dg, C, c, group, unit):
    """The box QP's relative duality gap ``gap / max(unit, |objective|)`` at ``point`` and the
    largest KKT violation."""
    from . import core

    a, w, G, nu = point
    gap, viol = core.box_gap(G, a, C, c, group, nu)
    obj = 0.5 * float(w @ w) + 0.5 * float(dg @ (a * a)) + float(p @ a)
    return abs(gap) / max(unit, abs(obj)), viol


def solve(problem: Any, *, tol: float = 1e-3, max_iter: int | None = None,
          verbose: bool = False, **_: Any) -> Solution:
    """Solve the BoxQP of ``problem`` by dual coordinate descent with ``w`` kept, to relative
    duality gap ``tol`` (the certificate's ``gap / max(u, |P|)``), and report it in the
    Problem's names."""
    from . import core  # numba is imported when the route runs, not when auto asks it

    t0 = time.perf_counter()
    tol = check_positive(tol, "tol")
    max_iter = check_max_iter(max_iter)
    box = accepted_box_qp(problem, "linear", refusal(problem))
    if box.Q.coef is not None:
        import dataclasses
        box = dataclasses.replace(box, Q=box.Q.rows_form())
    op = box.Q
    n = box.n
    index = (np.arange(n, dtype=np.int64) if op.index is None
             else np.asarray(op.index, dtype=np.int64))
    # one physical shuffle of the variables' rows: the passes then visit blocks of contiguous
    # rows in random order (core.BLOCK), the random order coordinate descent needs at the
    # memory cost of streaming
    perm = np.random.default_rng(0).permutation(n)
    Z = sorted_csr(op.X)[index[perm]]
    q = np.asarray(op.sign, dtype=float)[perm]
    dg = np.asarray(op.diag, dtype=float)[perm]
    p = np.asarray(box.p, dtype=float)[perm]
    C = np.asarray(box.C, dtype=float)[perm]
    group, c, delta = _groups(box)
    group, c = group[perm], c[perm]
    n_groups = delta.shape[0]
    norms = core.row_norms(Z.indptr, Z.data)
    rho = RHO_SCALE * max(float(norms.mean()) if n else 1.0, 1e-300) if n_groups else 0.0
    qd = norms + dg + rho * c * c * (group >= 0)
    qd = np.where(qd > 0, qd, 1.0)   # an empty row with no diagonal: its step is G alone
    a = np.zeros(n)
    w = np.zeros(Z.shape[1])
    t = np.zeros(n_groups)
    lam = np.zeros(n_groups)
    c_fin = C[np.isfinite(C)]
    unit = min(1.0, float(c_fin.max()) ** 2) if c_fin.size else 1.0
    budget = MAX_PASSES if max_iter is None or max_iter <= 0 else int(max_iter)
    # stop below the audit's cap too: a tol above it must still give an "optimal" point
    target = 0.5 * min(tol, AUDIT_TOL_MAX)
    eps, passes, status = 1.0, 0, "max_iter"
    for outer in range(10_000):
        passes += core.dcd_passes(Z.indptr, Z.indices, Z.data, q, c, group, p, C, dg,
                                  qd, a, w, t, lam, delta, rho, eps, max(1, budget - passes),
                                  outer)
        if n_groups:
            lam += rho * (t - delta)
        # the point the certificate will see: equality rows restored, nu gap-minimising
        trial = _certified_point(Z, q, p, dg, C, c, group, delta, lam, a, w)
        rel, viol = _relative_gap(trial, p, dg, C, c, group, unit)
        if verbose:
            print(f"linear: round {outer}, passes {passes}, relative gap {rel:.3e}, "
                  f"max KKT violation {viol:.3e}")
        if rel <= target or passes >= budget:
            status = "optimal" if rel <= target else "max_iter"
            break
        eps = max(0.1 * tol, 0.3 * min(eps, viol))
    a_p, w, G_p, nu = trial
    a, G = np.empty(n), np.empty(n)
    a[perm], G[perm] = a_p, G_p
    if status != "optimal":
        warnings.warn(ConvergenceWarning(
            f"linear route: stopped after {passes} coordinate passes (max_iter) at relative "
            f"duality gap {rel:.3e} > {target:.3g}; raise max_iter or tol"),
            stacklevel=3)
    if box.equality == "nu":
        # min-form stationarity G - nu_eq sign - nu_sum = 0: nu_eq + nu_sum on sign > 0
        nu_eq, nu_sum = (nu[0] - nu[1]) / 2.0, (nu[0] + nu[1]) / 2.0
    elif box.equality == "one":
        nu_eq, nu_sum = float(nu[0]), 0.0
    else:
        nu_eq, nu_sum = 0.0, 0.0
    info = {"max_violation": viol, "relative_gap": rel, "passes": passes, "rho": rho,
            "rounds": outer + 1, "b": -nu_eq, "w": w}
    return Solution(problem, status, box.split_values(a),
                    box.multipliers_from_gradient(a, G, nu_eq, nu_sum), backend="linear",
                    solver="dcd", n_iter=passes, info=info,
                    solve_time=time.perf_counter() - t0)
