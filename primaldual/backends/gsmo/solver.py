"""The Python entry of the generalised SMO: kernel inputs, scaling, a feasible start, the
compiled loop (:func:`primaldual.backends.gsmo.core.gsmo_core`) and the result in the record's
units."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..smo.codes import _K_PRE, _KERNEL_CODES, _PARALLEL_WORK


@dataclass
class GSMOResult:
    """``alpha`` (n), ``m`` (L), ``grad = Q alpha + p``, group multipliers ``lam`` (G),
    ``status`` (``"optimal"``, ``"max_iter"``, ``"unbounded"``, ``"infeasible"``), iterations,
    final violation, the relative gap the loop measured and seconds of compilation."""

    alpha: np.ndarray
    m: np.ndarray
    grad: np.ndarray
    lam: np.ndarray
    status: str
    n_iter: int
    violation: float
    rel_gap: float
    compile_time: float
    route: str = "gsmo"


def _kernel_inputs(op: Any) -> tuple:
    """``(kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, dpos, ksign,
    diag)`` for the compiled routines from a GramOperator (kernel columns from ``X``; a dense
    matrix, a precomputed or a Python kernel as a full matrix)."""
    from ..smo.inputs import _NO_ROWS, _issparse, _kernel_spec, _sparse_rows

    empty2 = np.zeros((0, 0))
    n = op.n
    diag = np.asarray(op.diag, dtype=float).copy()
    if op.matrix is not None:
        K = np.ascontiguousarray(op.matrix, dtype=float)
        return (_K_PRE, empty2, *_NO_ROWS, np.zeros(0), K, np.arange(n, dtype=np.int64), 0.0,
                0.0, 0.0, np.arange(n, dtype=np.int64), np.ones(n), diag)
    X = op.X
    name, gamma, coef0, degree = _kernel_spec(op.kernel)
    dpos = (np.arange(n) if op.index is None else np.asarray(op.index)).astype(np.int64)
    ksign = np.asarray(op.sign, dtype=float).copy()
    if name not in _KERNEL_CODES:
        Xa = X.toarray() if _issparse(X) else np.asarray(X, dtype=float)
        K = np.ascontiguousarray(Xa if name == "precomputed" else op.kernel(Xa, Xa), dtype=float)
        return (_K_PRE, empty2, *_NO_ROWS, np.zeros(0), K,
                np.arange(K.shape[0], dtype=np.int64), 0.0, 0.0, 0.0, dpos, ksign, diag)
    kcode = _KERNEL_CODES[name]
    if _issparse(X):
        Xptr, Xind, Xval, Xs, xsq = _sparse_rows(X)
        return (kcode, empty2, Xptr, Xind, Xval, Xs, xsq, empty2, np.zeros(0, dtype=np.int64),
                gamma, coef0, degree, dpos, ksign, diag)
    Xd = np.ascontiguousarray(np.asarray(X, dtype=float))
    return (kcode, Xd, *_NO_ROWS, np.einsum("ij,ij->i", Xd, Xd), empty2,
            np.zeros(0, dtype=np.int64), gamma, coef0, degree, dpos, ksign, diag)


def feasible_start(rec: Any, C: np.ndarray, lo: np.ndarray, cg: np.ndarray) -> tuple | None:
    """A point with ``0 <= a <= C``, ``m >= lo`` and every group equality: ``m`` at its lower
    bound (0 if free), each group filled greedily in order (LIBSVM's nu start); if that fails,
    a phase-one linear program (HiGHS). ``None`` when the constraints are infeasible."""
    L = lo.shape[0]
    m = np.where(np.isfinite(lo), lo, 0.0)
    a = np.zeros(rec.n)
    target = cg - rec.Bg @ m
    ok = True
    for g in range(cg.shape[0]):
        tau = target[g]
        if tau == 0:
            continue
        idx = np.flatnonzero((rec.group == g) & (np.sign(rec.e) == np.sign(tau)))
        cap = C[idx] * np.abs(rec.e[idx])
        filled = np.cumsum(cap)
        k = int(np.searchsorted(filled, abs(tau), side="right"))
        a[idx[:k]] = C[idx[:k]]
        if k < idx.size:
            a[idx[k]] = min(C[idx[k]], (abs(tau) - (filled[k - 1] if k else 0.0))
                            / abs(rec.e[idx[k]]))
        elif abs(tau) - (filled[-1] if k else 0.0) > 1e-12 * max(1.0, abs(tau)):
            ok = False
            break
    if ok:
        return a, m
    import scipy.sparse as sp
    from scipy.optimize import linprog

    s = C[0] / rec.C[0] if rec.C[0] > 0 and np.isfinite(rec.C[0]) else 1.0
    Aeq = sp.hstack([rec.A, sp.csr_matrix(rec.B)]).tocsr()
    bounds = [(0.0, c if np.isfinite(c) else None) for c in C] + \
        [(lo_ if np.isfinite(lo_) else None, None) for lo_ in lo]
    res = linprog(np.zeros(rec.n + L), A_eq=Aeq, b_eq=s * rec.c, bounds=bounds, method="highs")
    if res.status != 0:
        return None
    x = res.x
    return np.clip(x[:rec.n], 0.0, C), x[rec.n:]


_COMPILED = [False]


def _warm_up() -> float:
    if _COMPILED[0]:
        return 0.0
    from .core import gsmo_core
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((6, 2))
    from ..smo.inputs import _NO_ROWS
    a = np.array([0.5, 0.5, 0.0, 0.0, 0.0, 0.0])
    gsmo_core(1, Xw, *_NO_ROWS, np.einsum("ij,ij->i", Xw, Xw), np.zeros((0, 0)),
              np.zeros(0, dtype=np.int64), 1.0, 0.0, 3.0, np.arange(6, dtype=np.int64),
              np.ones(6), np.zeros(6), -np.ones(6), np.ones(6), np.array([0, 0, 0, 1, 1, -1]),
              np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0]), 2, np.zeros(1), np.zeros(1),
              np.full(1, np.inf), np.array([[-1.0], [1.0]]), np.zeros(1), a, np.empty(6),
              1e-3, 1000, 2, 1e-3, 1.0, _PARALLEL_WORK)
    _COMPILED[0] = True
    return time.perf_counter() - t0


def gsmo_solve(rec: Any, *, tol: float = 1e-3, gap_tol: float | None = None,
               max_iter: int | None = None, cache_size: float = 200.0,
               libsvm: bool = True) -> GSMOResult:
    """Solve the :class:`~primaldual.model.multi_equality.BoxQPEq` ``rec``.

    LIBSVM's scaling: with ``C_max < 1`` the largest finite bound, the problem is solved in
    ``a' = a / C_max`` (``p, q, C, lo, hi, c`` scaled alike, the gradient by ``1/C_max``) so
    ``tol`` means what it means there; ``gap_tol`` (default ``tol``) bounds the relative gap
    ``gap / max(unit, |objective|)`` in those units. ``libsvm=False`` keeps the generic loop
    for the shapes LIBSVM's loop would take (:func:`_libsvm_shape`)."""
    from .core import gsmo_core, lam_gap

    C = np.asarray(rec.C, dtype=float)
    fin = C[np.isfinite(C)]
    c_max = float(fin.max()) if fin.size else 1.0
    s = 1.0 / c_max if 0.0 < c_max < 1.0 else 1.0
    Cs, p, q = s * C, s * np.asarray(rec.p, float), s * np.asarray(rec.q, float)
    lo, hi, cg = s * rec.lo, s * rec.hi, s * rec.cg
    start = feasible_start(rec, Cs, lo, cg)
    if start is None:
        nan = np.full(rec.n, np.nan)
        return GSMOResult(nan, np.full(rec.lo.shape[0], np.nan), nan, np.zeros(rec.n_groups),
                          "infeasible", 0, np.inf, np.inf, 0.0, "none")
    a, m = start
    a = np.ascontiguousarray(a, dtype=float)
    m = np.ascontiguousarray(m, dtype=float)
    shape = _libsvm_shape(rec) if libsvm else None
    if shape is not None:
        return _via_smo(rec, shape, a, p, Cs, s, tol, gap_tol, max_iter, cache_size)
    (kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, gamma, coef0, degree, dpos, ksign,
     diag) = _kernel_inputs(rec.Q)
    n_data = Kpre.shape[0] if kcode == _K_PRE else (Xd.shape[0] if Xptr.shape[0] == 0
                                                     else Xptr.shape[0])
    n_slots = max(4, min(int(cache_size * 1024 * 1024 // (4.0 * max(n_data, 1))), n_data))
    ct = _warm_up()
    G = np.empty(rec.n)
    Bg = np.ascontiguousarray(rec.Bg, dtype=float).reshape(rec.n_groups, rec.lo.shape[0])
    grp = np.asarray(rec.group, dtype=np.int64)
    e = np.asarray(rec.e, dtype=float)
    it, st, viol, rel = gsmo_core(
        kcode, Xd, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, float(gamma), float(coef0),
        float(degree), dpos, ksign, diag, p, Cs, grp, e, rec.n_groups, q, lo, hi, Bg, m, a, G,
        float(tol), int(max_iter or max(10_000_000, 100 * rec.n)), n_slots,
        float(tol if gap_tol is None else gap_tol), 1.0, _PARALLEL_WORK)
    lam, _ = lam_gap(G, p, a, Cs, grp, e, rec.n_groups, q, lo, hi, Bg, m)
    status = {0: "optimal", 1: "max_iter", 2: "unbounded"}[int(st)]
    if status == "optimal" and rel > float(tol if gap_tol is None else gap_tol):
        # the violation tolerance bottomed out (four decades) before the gap target: say so
        status = "inaccurate"
    return GSMOResult(a / s, m / s, G / s, lam / s, status, int(it), float(viol) / s, float(rel),
                      ct, "gsmo")


def _libsvm_shape(rec: Any) -> tuple[str, np.ndarray] | None:
    """``(equality, sign)`` when the group form is one LIBSVM's loop solves (with shrinking):
    no scalar variables, every variable in a group, ``|e|`` constant per group, and either one
    group (``equality="one"``: ``signᵀa = delta``) or two (``"nu"``: a sum per sign), with the
    kernel signs equal to the groups' signs (``Q = D_sign K D_sign``; any dense ``Q``)."""
    if rec.lo.shape[0] or rec.n_groups not in (1, 2) or np.any(rec.group < 0):
        return None
    e = np.asarray(rec.e, dtype=float)
    if rec.n_groups == 1:
        if not np.allclose(np.abs(e), abs(e[0]), rtol=1e-12):
            return None
        sign = e / abs(e[0])
    else:
        g0 = rec.group == 0
        if not (np.allclose(np.abs(e[g0]), abs(e[g0][0]), rtol=1e-12)
                and np.allclose(np.abs(e[~g0]), abs(e[~g0][0]), rtol=1e-12)):
            return None
        sign = np.where(g0, 1.0, -1.0)
    if rec.Q.matrix is None:
        ks = np.asarray(rec.Q.sign, dtype=float)
        if not (np.array_equal(ks, sign) or (rec.n_groups == 2 and np.array_equal(ks, -sign))):
            return None
        sign = ks
    return ("one" if rec.n_groups == 1 else "nu"), sign


def _via_smo(rec: Any, shape: tuple[str, np.ndarray], a0: np.ndarray, p: np.ndarray,
             Cs: np.ndarray, s: float, tol: float, gap_tol: float | None,
             max_iter: int | None, cache_size: float) -> GSMOResult:
    """The group form LIBSVM's SMO solves (:func:`_libsvm_shape`), on SMO's compiled loop
    (shrinking, WSS2) from the feasible start ``a0`` (scaled units); group multipliers from
    the gradient by :func:`~primaldual.backends.gsmo.core.lam_gap`."""
    from ..smo.solver import solve_arrays
    from .core import lam_gap

    equality, sign = shape
    op = rec.Q
    kw: dict[str, Any] = dict(equality=equality, tol=tol, cache_size=cache_size,
                              shrinking=True, alpha0=a0, gap_unit=1.0,
                              gap_tol=tol if gap_tol is None else gap_tol)
    if max_iter:
        kw["max_iter"] = int(max_iter)
    diag = op.diag if np.any(op.diag) else None
    # a zero-width box 0 <= a_j <= 0 pins a_j at 0: SMO's loop (as LIBSVM's, which needs
    # C_j > 0) would select such a variable and step by 0 forever, so it solves the others and
    # the pinned ones get their gradient afterwards
    keep = np.flatnonzero(Cs > 0)
    pinned = keep.size < Cs.size
    if pinned:
        kw["alpha0"] = None if a0 is None else np.asarray(a0)[keep]
    sub = (lambda v: None if v is None else np.asarray(v)[keep]) if pinned else (lambda v: v)
    if op.matrix is not None:
        Q = op.matrix[np.ix_(keep, keep)] if pinned else op.matrix
        r = solve_arrays(None, None, sub(p), sub(Cs), sign=sub(sign), Q=Q, diag_add=sub(diag), **kw)
    else:
        index = np.arange(Cs.size) if op.index is None else np.asarray(op.index)
        r = solve_arrays(op.X, op.kernel, sub(p), sub(Cs), sign=sub(sign),
                   index=index[keep] if pinned else op.index, diag_add=sub(diag), **kw)
    if pinned:
        alpha = np.zeros(Cs.size)
        alpha[keep] = r.alpha
        r.alpha, r.grad = alpha, op.matvec(alpha) + p
    grp = np.asarray(rec.group, dtype=np.int64)
    L = rec.lo.shape[0]
    Bg = np.zeros((rec.n_groups, L))
    lam, gap = lam_gap(r.grad, p, r.alpha, Cs, grp, np.asarray(rec.e, float), rec.n_groups,
                       np.zeros(L), np.zeros(L), np.zeros(L), Bg, np.zeros(L))
    obj = abs(float(r.objective))
    return GSMOResult(r.alpha / s, np.zeros(L), r.grad / s, lam / s, r.status, r.n_iter,
                      r.max_violation / s, float(gap) / max(1.0, obj), r.compile_time,
                      "smo-" + equality)
