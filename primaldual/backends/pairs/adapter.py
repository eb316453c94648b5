"""The Problem-level side of the pairs route: ``accepts``/``solve`` for box-QP duals without
an equality row whose ``Q = Bᵀ K B + diag(d)`` is a kernel over combinations of data rows
(:class:`~primaldual.model.gram.GramOperator` with ``coef``: a ranking SVM's
``Q = D K Dᵀ`` over the pairs of each query, ``B = Dᵀ``).

Apply: the training scores ``f = K B a`` (``N`` numbers) are kept, so a gradient entry costs
the non-zeros of one column of ``B`` and a coordinate step one kernel row per non-zero, read
from a memory-capped cache (:mod:`.core`). Invert: the multipliers of the bounds come from the
gradient, in the Problem's names; the stopping test is the box QP's relative duality gap from
``f`` and ``a``, the quantity the certificate recomputes from the recovered point.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ...certificate import AUDIT_TOL_MAX
from ...exceptions import ConvergenceWarning
from ...model.structure import accepted_box_qp, box_qp_of, box_qp_refusal
from ...solution import Solution
from ...validation import check_max_iter, check_positive
from .newton import face_step

#: coordinate passes allowed in all, unless ``max_iter`` says otherwise
MAX_PASSES = 20_000
#: coordinate passes between two face steps (:func:`.newton.face_step`)
FACE_EVERY = 10
#: face steps every :data:`FACE_EVERY` passes from this relative gap on (before it, at the
#: end of each ``eps`` round only: far from the solution most steps stop at a bound at once)
FACE_FROM = 1e-4
#: the kernel-row cache in MB (the estimators' ``cache_size``), capped at the ``N x N`` rows
CACHE_MB = 400.0
#: a kernel that compiled code cannot evaluate (no :meth:`~primaldual.kernels.Kernel.spec`)
#: is read from its Gram matrix, formed only up to this many rows
PRECOMPUTED_MAX_ROWS = 6000


def _op(problem: Any) -> tuple[Any, Any]:
    box = box_qp_of(problem)
    return box, (None if box is None else box.Q)


def accepts(problem: Any) -> bool:
    """Box QPs without an equality whose ``Q`` is the combination form ``Bᵀ K B + diag``
    (finite positive bounds): :func:`refusal` says why not."""
    return refusal(problem) is None


def refusal(problem: Any) -> str | None:
    """Why the pairs route cannot take ``problem`` (``None`` when it can)."""
    box, op = _op(problem)
    if box is None:
        return f"no BoxQP structure ({box_qp_refusal(problem)})"
    if getattr(op, "coef", None) is None:
        return ("Q is not a kernel over combinations of data rows (B^T K B, the form of "
                "pair differences)")
    if box.equality in ("one", "nu"):
        return "an equality row (a free bias or a nu row): the coordinate steps keep none"
    C = np.asarray(box.C, dtype=float)
    if not (np.isfinite(C).all() and (C > 0).all()):
        return "an upper bound C_j <= 0 or infinite: the route needs 0 < C_j < inf"
    width = int(np.diff(op.coef.indptr).max(initial=0))
    if width > COLUMN_MAX_ROWS:
        return (f"a variable combines {width} data rows (> {COLUMN_MAX_ROWS}): its block of "
                "the kernel would be formed per step")
    X = op.X
    if not (isinstance(X, np.ndarray) and X.ndim == 2):
        return "the data rows are not a dense 2-D array"
    if _spec(op.kernel) is None and X.shape[0] > PRECOMPUTED_MAX_ROWS:
        return (f"a kernel compiled code cannot evaluate (no spec) on {X.shape[0]} rows "
                f"(> {PRECOMPUTED_MAX_ROWS}: its Gram matrix is not formed)")
    return None


def _spec(kernel: Any) -> Any:
    fn = getattr(kernel, "spec", None)
    return fn() if callable(fn) else None


#: rows of one group at most (its local Gram block is ``|R| x |R|``): a larger connected set
#: of variables is cut into chunks, each a block of the coordinate descent
GROUP_MAX_ROWS = 64
#: rows one variable may combine (its column of ``B``; a pair difference has two)
COLUMN_MAX_ROWS = 512


def _groups(B: sp.csc_matrix) -> tuple[np.ndarray, ...]:
    """``(gptr, gvar, rptr, grows, loc)``: the variables grouped by the connected components
    of the rows they share (a query's pairs; a component of more than
    :data:`GROUP_MAX_ROWS` rows cut into chunks), group ``g``'s variables
    ``gvar[gptr[g]:gptr[g+1]]`` and rows ``grows[rptr[g]:rptr[g+1]]``, and ``loc[k]`` the
    position of non-zero ``k``'s row among its group's rows."""
    N, n = B.shape
    pattern = sp.csc_matrix((np.ones(B.nnz), B.indices, B.indptr), shape=B.shape)
    _, label = connected_components(pattern @ pattern.T, directed=False)
    nnz = np.diff(B.indptr)
    touched = np.zeros(N, dtype=bool)
    touched[B.indices] = True
    n_rows = np.bincount(label[touched], minlength=label.max() + 1)
    big = n_rows > GROUP_MAX_ROWS
    first = B.indices[np.minimum(B.indptr[:-1], max(B.nnz - 1, 0))] if B.nnz else \
        np.zeros(n, dtype=np.int64)
    comp = np.where(nnz == 0, -1, label[first])
    # the components that fit one group: rows ordered by (component, row), loc their rank
    small_var = np.flatnonzero((comp >= 0) & ~big[np.maximum(comp, 0)])
    gvar_s = small_var[np.argsort(comp[small_var], kind="stable")]
    rows_s = np.flatnonzero(touched & ~big[label])
    rows_s = rows_s[np.argsort(label[rows_s], kind="stable")]
    comps_s, gcount = np.unique(comp[gvar_s], return_counts=True)
    _, rcount = np.unique(label[rows_s], return_counts=True)
    rstart = np.concatenate([[0], np.cumsum(rcount)])
    pos = np.zeros(N, dtype=np.int64)
    pos[rows_s] = np.arange(rows_s.size) - np.repeat(rstart[:-1], rcount)
    loc = pos[B.indices].astype(np.int64)
    var_groups = list(np.split(gvar_s, np.cumsum(gcount)[:-1])) if comps_s.size else []
    row_groups = list(np.split(rows_s, rstart[1:-1])) if comps_s.size else []
    # a larger component: chunks of consecutive variables with at most GROUP_MAX_ROWS rows
    for c in np.flatnonzero(big):
        chunk: list[int] = []
        seen: dict[int, int] = {}
        for j in np.flatnonzero(comp == c).tolist():
            col = B.indices[B.indptr[j]:B.indptr[j + 1]].tolist()
            if chunk and len(seen) + len(set(col) - seen.keys()) > GROUP_MAX_ROWS:
                var_groups.append(np.asarray(chunk))
                row_groups.append(np.asarray(list(seen)))
                chunk, seen = [], {}
            for r in col:
                seen.setdefault(r, len(seen))
            loc[B.indptr[j]:B.indptr[j + 1]] = [seen[r] for r in col]
            chunk.append(j)
        var_groups.append(np.asarray(chunk))
        row_groups.append(np.asarray(list(seen)))
    empty = np.flatnonzero(comp < 0)
    if empty.size:   # columns without entries: one group without rows
        var_groups.append(empty)
        row_groups.append(np.zeros(0, dtype=np.int64))
    gptr = np.concatenate([[0], np.cumsum([g.size for g in var_groups])]).astype(np.int64)
    rptr = np.concatenate([[0], np.cumsum([r.size for r in row_groups])]).astype(np.int64)
    cat = (lambda parts: np.concatenate(parts).astype(np.int64) if parts
           else np.zeros(0, dtype=np.int64))
    return gptr, cat(var_groups), rptr, cat(row_groups), loc


def _kernel_arrays(op: Any) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, float, float,
                                     float]:
    """``(code, X, ||x||^2, Kpre, gamma, coef0, degree)`` for the compiled rows."""
    from . import core

    X = np.ascontiguousarray(op.X, dtype=float)
    spec = _spec(op.kernel)
    if spec is None:
        Kpre = np.ascontiguousarray(op.kernel(X), dtype=float)
        return core.K_PRE, X, np.zeros(X.shape[0]), Kpre, 1.0, 0.0, 3.0
    return (int(spec.code), X, np.einsum("ij,ij->i", X, X), np.zeros((1, 1)),
            float(spec.gamma), float(spec.coef0), float(spec.degree))


def solve(problem: Any, *, tol: float = 1e-3, max_iter: int | None = None,
          cache_size: float | None = None, verbose: bool = False, **_: Any) -> Solution:
    """Solve the BoxQP of ``problem`` by dual coordinate descent with the scores ``f = K B a``
    kept, to relative duality gap ``tol`` (the certificate's ``gap / max(u, |P|)``), and
    report it in the Problem's names. ``cache_size``: the kernel-row cache in MB."""
    from . import core  # numba is imported when the route runs, not when auto asks it

    t0 = time.perf_counter()
    tol = check_positive(tol, "tol")
    max_iter = check_max_iter(max_iter)
    box = accepted_box_qp(problem, "pairs", refusal(problem))
    op = box.Q
    n = box.n
    B = sp.csc_matrix(op.coef, dtype=float)
    B.sort_indices()
    indptr = B.indptr.astype(np.int64)
    rows = B.indices.astype(np.int64)
    vals = np.asarray(B.data, dtype=float)
    code, X, xsq, Kpre, gamma, coef0, degree = _kernel_arrays(op)
    N = X.shape[0]
    XT = np.ascontiguousarray(X.T)
    p = np.asarray(box.p, dtype=float)
    C = np.asarray(box.C, dtype=float)
    dg = np.asarray(op.diag, dtype=float)
    qd = core.q_diagonal(code, X, xsq, Kpre, indptr, rows, vals, dg, gamma, coef0, degree)
    qd = np.where(qd > 0, qd, 1.0)   # an empty column with no diagonal: its step is G alone
    gptr, gvar, rptr, grows, loc = _groups(B)
    mb = CACHE_MB if cache_size is None else float(cache_size)
    slots = int(min(N, max(2, mb * 2**20 // max(8 * N, 1))))
    cache = np.empty((slots, N))
    slot_of = np.full(N, -1, dtype=np.int64)
    owner = np.full(slots, -1, dtype=np.int64)
    stamp = np.zeros(slots, dtype=np.int64)
    state = np.zeros(4, dtype=np.int64)
    a = np.zeros(n)
    f = np.zeros(N)
    G = np.empty(n)
    unit = min(1.0, float(C.max()) ** 2) if n else 1.0
    budget = MAX_PASSES if max_iter is None or max_iter <= 0 else int(max_iter)
    # stop below the audit's cap too: a tol above it must still give an "optimal" point
    target = 0.5 * min(tol, AUDIT_TOL_MAX)
    eps, passes, status, rel, viol = 1.0, 0, "max_iter", np.inf, np.inf
    faces = 0
    for outer in range(1_000_000):
        # near the solution, face steps every few passes: the bounds are then nearly found
        allowed = max(1, min(FACE_EVERY if rel <= FACE_FROM else budget, budget - passes))
        made = core.dcd(code, X, XT, xsq, Kpre, gamma, coef0, degree, indptr, loc, vals, p, C, dg,
                        qd, a, f, gptr, gvar, rptr, grows, eps, allowed, outer, cache,
                        slot_of, owner, stamp, state, rows, target, unit, G)
        passes += made
        t_face = time.perf_counter()
        obj, gp, viol = core.gap(indptr, rows, vals, p, C, dg, a, f, G)
        rel = abs(gp) / max(unit, abs(obj))
        face = (face_step(op.kernel, X, B, dg, C, a, G)
                if rel > target and (made < allowed or rel <= FACE_FROM) else None)
        if face is not None:
            core.add_rows(face[0], face[1], f, code, X, XT, xsq, Kpre, gamma, coef0, degree,
                          cache, slot_of, owner, stamp, state)
            faces += 1
            if verbose:
                print(f"pairs: face step on {int(((a > 0) & (a < C)).sum())} free variables")
            obj, gp, viol = core.gap(indptr, rows, vals, p, C, dg, a, f, G)
            rel = abs(gp) / max(unit, abs(obj))
        t_face = time.perf_counter() - t_face
        if verbose:
            print(f"pairs: {time.perf_counter() - t0:.2f} s, round {outer}, passes "
                  f"{passes}, face steps {faces} ({t_face:.2f} s), relative gap {rel:.3e}, "
                  f"max KKT violation {viol:.3e}, kernel rows {state[3]} computed / "
                  f"{state[2]} cached")
        if rel <= target or passes >= budget:
            status = "optimal" if rel <= target else "max_iter"
            break
        if made < allowed:   # the passes met eps before the gap met its target: tighten
            eps = max(1e-3 * tol, 0.3 * min(eps, viol))
    if status != "optimal":
        warnings.warn(ConvergenceWarning(
            f"pairs route: stopped after {passes} coordinate passes (max_iter) at relative "
            f"duality gap {rel:.3e} > {target:.3g}; raise max_iter or tol"), stacklevel=3)
    info = {"max_violation": viol, "relative_gap": rel, "passes": passes,
            "rounds": outer + 1, "face_steps": faces, "b": 0.0, "scores": f, "cache_rows": slots,
            "kernel_rows_computed": int(state[3]), "kernel_rows_cached": int(state[2])}
    return Solution(problem, status, box.split_values(a),
                    box.multipliers_from_gradient(a, G, 0.0, 0.0), backend="pairs",
                    solver="dcd-kernel-rows", n_iter=passes, info=info,
                    solve_time=time.perf_counter() - t0)
