"""Matrix-free and low-rank solvers of the bordered LS-SVM KKT system: preconditioned conjugate
gradient on ``H = D_s (K + I/C) D_s`` (:func:`solve_bordered_cg`) and the fixed-size / low-rank
primal route on a feature matrix ``V`` (:func:`solve_lowrank`, numpy or dask).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import blas as _blas

from ...exceptions import ConvergenceWarning, SingularKKTError
from ...kernels.gram import dense_form, gram, kernel_diag
from ...validation import check_data_matrix, check_kernel_or_none, check_positive
from .direct import _combine, _finish, _kernel_matvec, prep_rhs

# ---------------------------------------------------------------------------
# conjugate gradient, matrix-free
# ---------------------------------------------------------------------------


#: The cost ``V(x)`` is evaluated to about machine precision, so relative decreases below this
#: are rounding noise: a smaller ``cost_tol`` disables the cost criterion (residual only).
_COST_RESOLUTION = 1e-13


@dataclass
class CGResult:
    """Result of :func:`solve_bordered_cg`.

    ``b, a`` as in :func:`solve_bordered`; ``n_iter`` CG iterations (one blocked kernel
    mat-vec each, shared by all right-hand sides); ``residual`` the relative residual of the
    bordered system ``||s*(b r_1 - r_2)|| / ||d||`` from the CG residuals ``r_1, r_2`` of
    ``A x = 1`` and ``A x = s*d`` (``u^T a = 0`` holds exactly by construction of ``b``);
    ``cost_trace`` the quadratic costs ``V(x) = 1/2 x^T A x - x^T rhs`` per iteration
    (rows) and right-hand side (columns), monotonically decreasing.
    """

    b: Any
    a: np.ndarray
    n_iter: int
    residual: float
    converged: bool
    cost_trace: np.ndarray
    residual_trace: np.ndarray


def _nystrom_precond(X, kernel, Cf, rank, rng, spec):
    """``P^{-1} r = C (r - V (I/C + V^T V)^{-1} V^T r)`` with ``V V^T`` a Nystrom approximation."""
    N = X.shape[0]
    m = min(rank, N)
    idx = np.sort(rng.choice(N, size=m, replace=False))
    Kmm = gram(kernel, X[idx], _form=spec)
    Kmm[np.diag_indices(m)] += 1e-8 * max(np.trace(Kmm) / m, 1e-300)
    w, Q = np.linalg.eigh(Kmm)
    keep = w > 1e-10 * w.max()
    Kmm_isqrt = Q[:, keep] / np.sqrt(w[keep])
    V = np.empty((N, int(keep.sum())))
    for i0 in range(0, N, 4096):
        i1 = min(N, i0 + 4096)
        V[i0:i1] = gram(kernel, X[i0:i1], X[idx], _form=spec) @ Kmm_isqrt
    M = V.T @ V
    M[np.diag_indices_from(M)] += 1.0 / Cf
    cf = np.linalg.cholesky(M)

    def apply(R):
        T = V.T @ R
        T = np.linalg.solve(cf.T, np.linalg.solve(cf, T))
        return Cf * (R - V @ T)

    return apply


def solve_bordered_cg(X: np.ndarray, kernel: Any, C: float, d: np.ndarray, *,
                      sign: np.ndarray | None = None, bias: bool = True, tol: float = 1e-8,
                      cost_tol: float | None = None, max_iter: int | None = None,
                      block_size: int = 2048, dtype=np.float64,
                      preconditioner: str | None = "jacobi", precond_rank: int = 200,
                      random_state: int | None = 0, verbose: bool = False) -> CGResult:
    r"""Bordered KKT system by preconditioned conjugate gradient on ``A = K + I/C`` (SPD).

    Suykens' reformulation (3.24-3.25): solve ``A x_1 = 1`` and ``A x_2 = s*d`` (all columns in
    lock-step, one blocked kernel mat-vec per iteration shared by every right-hand side;
    memory ``O(N * block_size)``, only blocks on/below the diagonal are computed), then
    ``b = 1^T x_2 / 1^T x_1`` and ``a = s*(x_2 - b x_1)``.

    Stopping, per column: relative residual ``||rhs - A x|| / ||rhs|| <= tol``, or relative
    decrease of the quadratic cost ``V(x) = 1/2 x^T A x - x^T rhs`` between two iterations
    ``<= cost_tol`` (default ``tol**2``, since ``V - V* = 1/2 ||x - x*||_A^2``), as Suykens
    advises. ``V`` is only known to rounding (~1e-16 relative), so the cost criterion is used
    only when ``cost_tol >= 1e-13`` (i.e. ``tol >= ~3e-7`` by default); tighter tolerances
    stop on the residual alone. Non-convergence within ``max_iter`` (default
    ``max(100, 10 sqrt N)``) emits a :class:`ConvergenceWarning` and returns
    ``converged=False``.

    Parameters
    ----------
    dtype : float64 or float32
        Precision of the kernel blocks and their products (``float32`` halves the bandwidth;
        accuracy is then limited to about ``1e-6``). Iterates are always float64.
    preconditioner : "jacobi", "nystrom" or None
        ``"nystrom"``: ``P = V V^T + I/C`` from ``precond_rank`` random landmarks, applied by
        Woodbury (needs a finite C; falls back to Jacobi otherwise).
    """
    kernel = check_kernel_or_none(kernel)
    Cf = check_positive(C, "C", allow_inf=True)
    X = check_data_matrix(X) if kernel is not None else np.asarray(X, dtype=np.float64)
    N = X.shape[0]
    if tol <= 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    dtype = np.dtype(dtype).type
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {np.dtype(dtype)}")
    if preconditioner not in ("jacobi", "nystrom", None):
        raise ValueError(f"preconditioner must be 'jacobi', 'nystrom' or None, "
                         f"got {preconditioner!r}")
    cost_tol = tol**2 if cost_tol is None else float(cost_tol)
    max_iter = int(min(max(100, 10 * math.isqrt(N)), 10 * N)) if max_iter is None else max_iter
    D, S, one_d = prep_rhs(d, N, sign)
    SD = D if S is None else D * S
    k = D.shape[1]
    R = np.concatenate([np.ones((N, 1)), SD], axis=1) if bias else SD.copy()
    spec = dense_form(kernel)
    shift = 0.0 if math.isinf(Cf) else 1.0 / Cf

    def matvec(P):
        out = _kernel_matvec(X, kernel, P, block=block_size, dtype=dtype, spec=spec)
        if shift:
            out += shift * P
        return out

    if preconditioner == "nystrom" and math.isinf(Cf):
        preconditioner = "jacobi"
    if preconditioner == "jacobi":
        dA = (np.diagonal(X).copy() if kernel is None else kernel_diag(kernel, X)) + shift
        if np.any(dA <= 0):
            raise SingularKKTError("K + I/C has a non-positive diagonal entry; CG needs A > 0")
        Minv = lambda r: r / dA[:, None]
    elif preconditioner == "nystrom":
        if kernel is None:
            raise ValueError("preconditioner='nystrom' needs the kernel and X, not a Gram matrix")
        Minv = _nystrom_precond(X, kernel, Cf, precond_rank, np.random.default_rng(random_state),
                                spec)
    else:
        Minv = lambda r: r

    m = R.shape[1]
    x = np.zeros((N, m))
    r = R.copy()
    rn0 = np.linalg.norm(R, axis=0)
    rn0[rn0 == 0] = 1.0
    z = Minv(r)
    p = z.copy()
    rz = np.einsum("ij,ij->j", r, z)
    active = np.ones(m, dtype=bool)
    cost_prev = np.zeros(m)
    costs, ress = [], []
    it = 0
    while it < max_iter and active.any():
        it += 1
        cols = np.flatnonzero(active)
        q = matvec(p[:, cols])
        pq = np.einsum("ij,ij->j", p[:, cols], q)
        if np.any(pq <= 0):
            raise SingularKKTError("CG met a direction of non-positive curvature: K + I/C is not "
                                   "positive definite (non-PSD kernel, or C=inf with duplicate "
                                   "points); use a finite C or a PSD kernel")
        lam = rz[cols] / pq
        x[:, cols] += lam * p[:, cols]
        r[:, cols] -= lam * q
        cost = -0.5 * np.einsum("ij,ij->j", x, R + r)
        res = np.linalg.norm(r, axis=0) / rn0
        costs.append(cost.copy())
        ress.append(res.copy())
        dec = (cost_prev - cost) / np.maximum(np.abs(cost), np.finfo(float).tiny)
        done = res <= tol
        if cost_tol >= _COST_RESOLUTION and it > 1:
            done |= dec <= cost_tol
        cost_prev = cost
        if verbose:
            print(f"CG it {it:4d}  max rel res {res.max():.3e}  cost {cost.sum():.6e}")
        active &= ~done
        cols = np.flatnonzero(active)
        if cols.size:
            zc = Minv(r[:, cols])
            rz_new = np.einsum("ij,ij->j", r[:, cols], zc)
            beta = rz_new / rz[cols]
            p[:, cols] = zc + beta * p[:, cols]
            rz[cols] = rz_new
    converged = not active.any()
    if bias:
        b, A = _combine(x[:, 0], x[:, 1:], S)
        rb = r[:, 1:] - r[:, :1] * b[None, :]  # s*(b r1 - r2), up to the sign pattern
    else:
        A = x if S is None else x * S
        b = np.zeros(k)
        rb = r
    dn = np.linalg.norm(D, axis=0)
    dn[dn == 0] = 1.0
    residual = float(np.max(np.linalg.norm(rb, axis=0) / dn))
    if not converged:
        warnings.warn(f"CG did not converge in {it} iterations (relative residual "
                      f"{residual:.3g} > tol={tol:g}); raise max_iter, use "
                      f"preconditioner='nystrom' or a smaller C", ConvergenceWarning,
                      stacklevel=2)
    b_out, a_out = _finish(b, A, one_d)
    return CGResult(b=b_out, a=a_out, n_iter=it, residual=residual, converged=converged,
                    cost_trace=np.array(costs), residual_trace=np.array(ress))


# ---------------------------------------------------------------------------
# low rank: fixed-size LS-SVM by Woodbury
# ---------------------------------------------------------------------------


def _is_dask(V) -> bool:
    return type(V).__module__.startswith("dask")


def solve_lowrank(V: Any, C: float, d: np.ndarray, *, sign: np.ndarray | None = None,
                  bias: bool = True) -> tuple[Any, np.ndarray, np.ndarray]:
    r"""Bordered KKT system with ``K ~= V V^T`` (fixed-size LS-SVM), by Sherman-Morrison-Woodbury.

    ``A^{-1} R = C (R - V (I/C + V^T V)^{-1} V^T R)`` for ``R = [1, s*d]``: one SYRK
    ``V^T V`` (``O(N M^2)``), one ``M x M`` Cholesky, two thin products; memory ``O(N M)``
    (``V`` itself) plus ``O(N k)``. Then ``b``, ``a`` as in :func:`solve_bordered`, and the
    primal weight in the low-rank feature space ``w = V^T beta = V^T (s*a)`` (M,) or (M, k),
    obtained from the ``M x M`` quantities without another pass over ``V``; prediction is
    ``f(x) = v(x)^T w + b``.

    ``V`` may be a numpy array or a ``dask.array`` (chunked along rows): ``V^T V`` and
    ``V^T R`` are chunked reductions; the result equals the in-memory one to rounding.
    ``C`` must be finite (``V V^T`` is singular when ``N > M``).
    """
    Cf = check_positive(C, "C", allow_inf=True)
    if math.isinf(Cf):
        raise ValueError("C must be finite for the low-rank path: V V^T has rank <= M < N, so "
                         "K + I/C with C=inf is singular")
    dask = _is_dask(V)
    if not dask:
        V = np.asarray(V)
        if V.ndim != 2 or not np.issubdtype(V.dtype, np.floating):
            raise ValueError(f"V must be a 2-D float array (N, M), got shape {V.shape}, "
                             f"dtype {V.dtype}")
    elif V.ndim != 2:
        raise ValueError(f"V must be 2-D (N, M), got ndim={V.ndim}")
    N, M = V.shape
    D, S, one_d = prep_rhs(d, N, sign)
    SD = D if S is None else D * S
    k = D.shape[1]
    R = np.concatenate([np.ones((N, 1)), SD], axis=1) if bias else np.array(SD)
    if dask:
        import dask.array as da

        G = np.asarray((V.T @ V).compute(), dtype=np.float64)
        Rd = da.from_array(R, chunks=(V.chunks[0], R.shape[1]))
        VtR = np.asarray((V.T @ Rd).compute(), dtype=np.float64)
    else:
        if V.flags.c_contiguous:
            VT = V.T  # F-ordered (M, N): SYRK without a copy
            G = _blas.get_blas_funcs("syrk", (VT,))(1.0, VT, trans=0, lower=1)
        else:
            Vf = np.asfortranarray(V)
            G = _blas.get_blas_funcs("syrk", (Vf,))(1.0, Vf, trans=1, lower=1)
        G = np.tril(G) + np.tril(G, -1).T
        G = np.asarray(G, dtype=np.float64)
        VtR = np.asarray(V.T @ R, dtype=np.float64)
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(VtR))):
        raise ValueError("V contains NaN or inf")
    Gs = G.copy()
    Gs[np.diag_indices(M)] += 1.0 / Cf
    try:
        cf = np.linalg.cholesky(Gs)
    except np.linalg.LinAlgError:  # pragma: no cover - I/C > 0 makes Gs SPD
        raise SingularKKTError("I/C + V^T V is not positive definite") from None
    T = np.linalg.solve(cf.T, np.linalg.solve(cf, VtR))  # (I/C + G)^{-1} V^T R
    if dask:
        VT_ = np.asarray((V @ T).compute(), dtype=np.float64)
    else:
        VT_ = np.asarray(V @ T, dtype=np.float64)
    Z = Cf * (R - VT_)               # A^{-1} R
    VtZ = Cf * (VtR - G @ T)        # V^T A^{-1} R, no pass over V
    if bias:
        b, A = _combine(Z[:, 0], Z[:, 1:], S)
        W = VtZ[:, 1:] - VtZ[:, :1] * b[None, :]  # V^T (x2 - b x1) = V^T beta
    else:
        A = Z if S is None else Z * S
        b = np.zeros(k)
        W = VtZ
    b_out, a_out = _finish(b, A, one_d)
    return b_out, a_out, (W[:, 0].copy() if one_d else W)
