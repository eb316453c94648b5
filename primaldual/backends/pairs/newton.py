"""The face step of the pairs route: once coordinate descent has found which variables sit at
their bounds, the variables strictly inside the box (``F``) are moved to the minimiser of the
box QP on that face, in one solve.

On the face (the others fixed) the objective is ``1/2 a_F^T Q_FF a_F + G_F^T (a_F - a_F^0)``
up to a constant, with ``Q_FF = B_RF^T K_RR B_RF + diag(dg_F)`` (``R`` the rows the columns of
``F`` touch: ``|R| <= nnz(B_F)``) and ``G_F`` the current gradient. Its minimum-norm Newton
direction ``Delta = -Q_FF^+ G_F`` (``Q_FF`` can be singular: a query's pair differences
``i-j``, ``j-k``, ``i-k`` are dependent) lowers the objective for every step length in
``[0, 2]``; the longest step in ``[0, 1]`` that keeps ``a_F`` in the box is taken (the variables
it stops at enter the bounds), and ``f = K B a`` is updated by ``K[:, R] B_RF Delta``
(``|R|`` kernel rows, from the route's cache). ``Q_FF`` is ``|F| x |F|``: the step is tried only
while ``F`` and ``R`` are small (:data:`FACE_MAX`), the case at a ranking SVM's solution, where
the bounded pairs outnumber the free ones by far.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ...kernels.gram import one_blas_thread
from ...model.gram import psd_factor

#: the face step runs while the free variables and the rows they touch are at most this many
#: (``Q_FF`` and ``K_RR`` at most 1,000 x 1,000: 8 MB, factored in ~0.1 s; a larger free set
#: is far from the solution, where coordinate passes are the cheaper progress)
FACE_MAX = 1000


def face_step(kernel: Any, X: np.ndarray, B: sp.csc_matrix, dg: np.ndarray, C: np.ndarray,
              a: np.ndarray, G: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Move the free variables of ``a`` toward the minimiser on their face (``a`` updated in
    place; ``G`` is the gradient at ``a``). Returns ``(R, u)``, the change of ``B a`` on its
    rows ``R``, so that the caller updates ``f += K[:, R] u`` (``None``: no step made)."""
    F = np.flatnonzero((a > 0.0) & (a < C))
    if F.size == 0 or F.size > FACE_MAX:
        return None
    BF = B[:, F].tocsc()
    R = np.unique(BF.indices)
    if R.size > FACE_MAX:
        return None
    BRF = sp.csc_matrix(BF[R])
    KRR = np.asarray(kernel(X[R]), dtype=float)
    # B_RF^T K_RR B_RF with the sparse B (two entries per pair): O(|F| |R|), no dense GEMM
    Q = np.asarray(BRF.T @ np.asarray(BRF.T @ KRR).T) + np.diag(dg[F])
    try:
        with one_blas_thread():   # small factorisations: threads only contend here
            L = psd_factor(Q)
            if L.shape[1] == 0:
                return None
            # Delta = -Q^+ G_F, Q = L L^T (L of full column rank r): Q^+ = L (L^T L)^-2 L^T
            M = cho_factor(L.T @ L)
            y = cho_solve(M, cho_solve(M, L.T @ G[F]))
    except (ValueError, LinAlgError):
        return None
    delta = -(L @ y)
    lo, hi = -a[F], C[F] - a[F]
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(delta > 0, hi / delta, np.where(delta < 0, lo / delta, np.inf))
    t = float(min(1.0, room.min()))
    if not t > 0.0:
        return None
    step = t * delta
    new = a[F] + step
    # the variables the step stops at land exactly on their bounds
    new = np.where(np.isclose(room, t, rtol=1e-12, atol=0.0) & (delta > 0), C[F], new)
    new = np.where(np.isclose(room, t, rtol=1e-12, atol=0.0) & (delta < 0), 0.0, new)
    new = np.clip(new, 0.0, C[F])
    step = new - a[F]
    a[F] = new
    return R.astype(np.int64), np.asarray(BRF @ step, dtype=float)
