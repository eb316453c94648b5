"""``B = D_s C P`` of the eta-problem without forming ``V = C P`` (``rank="auto"``).

``C = k(X, X_L)`` (``N x B``, the kernel columns of the landmarks), ``P`` the Nystrom map
(``B x M``, :class:`~primaldual.kernels.FactoredNystrom`) and ``D_s = diag(s)`` the signs of
the rows (a C-SVC: the labels). The smoothing Newton route touches ``B`` through full passes
``B w = s * C (P w)`` and ``B^T a = P^T C^T (s * a)`` (``O(N B)`` each, as with ``V`` formed) and
through gathered rows ``B[J] = s_J C_J P`` (``O(|J| B M)``: the quadratic zone, the rows whose
``a`` changed, the working set); the ``O(N B M)`` product ``C P`` is never formed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg.blas import dtrmm, strmm

from ._threads import _blocks, _pool, matvec, n_threads, rmatvec

#: rows of a float32 ``C`` are float32 products when ``max |P|`` is at most this
FLOAT32_ROWS_MAX_P: float = 100.0


class FactoredB:
    """``B = diag(sign) C P`` as an operator (:func:`~._threads.matvec`,
    :func:`~._threads.rmatvec`, ``B[idx]`` for rows).

    ``C`` may be float32 (a copy for the memory-bound passes of the Newton continuation):
    ``P w`` is then computed in float64 and rounded to float32, the passes run on the float32
    ``C``, and the rows ``C[idx] P`` are float32 products (as the rows of a float32 copy of
    ``B`` were float32).
    """

    ndim = 2

    def __init__(self, C: np.ndarray, P: np.ndarray, sign: np.ndarray) -> None:
        self.C, self.P = C, np.asarray(P, dtype=np.float64)
        self.sign = np.asarray(sign, dtype=np.float64)
        self.dtype = C.dtype
        self.shape = (C.shape[0], self.P.shape[1])
        P = self.P
        # no direction dropped in the growth: P is square and upper triangular (its diagonal
        # blocks are inverse Cholesky factors), and the rows C[idx] P are one trmm
        self.triangular = bool(P.shape[0] == P.shape[1] and P.size
                               and not np.any(np.tril(P, -1)))
        # rows of a float32 C: computed in float32 (strmm) when P is triangular and well
        # scaled (the rounding of P to float32 then costs about what rounding V did: at
        # N = 200,000 max |P| ~ 8), else in float64 and rounded (an ill-conditioned K_LL gives
        # large entries of P, and float32 products of C and P would cancel)
        self.Pr = P
        if self.dtype == np.float32 and self.triangular and \
                float(np.max(np.abs(P), initial=0.0)) <= FLOAT32_ROWS_MAX_P:
            self.Pr = P.astype(np.float32)

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """``B x = s * (C (P x))`` in ``C``'s precision (``P x`` in float64)."""
        u = (self.P @ np.asarray(x, dtype=np.float64)).astype(self.dtype, copy=False)
        out = matvec(self.C, u)
        out *= self.sign.astype(self.dtype, copy=False)
        return out

    def rmatvec(self, a: np.ndarray) -> np.ndarray:
        """``B^T a = P^T (C^T (s * a))`` (float64 result)."""
        z = (self.sign * np.asarray(a, dtype=np.float64)).astype(self.dtype, copy=False)
        return self.P.T @ rmatvec(self.C, z).astype(np.float64, copy=False)

    def __getitem__(self, idx: Any) -> np.ndarray:
        """Rows ``B[idx] = s_idx C[idx] P`` (``idx``: integer indices or a boolean mask), in
        ``C``'s dtype; large gathers on row blocks in threads (:func:`._threads.n_threads`)."""
        idx = np.asarray(idx)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        t = n_threads(idx.size * self.P.shape[0] * self.P.shape[1] / 2)
        if t == 1 or idx.size < 2 * t:
            return self._rows(idx)
        parts = list(_pool().map(lambda r: self._rows(idx[r[0]:r[1]]), _blocks(idx.size, t)))
        return np.concatenate(parts)

    def _rows(self, idx: np.ndarray) -> np.ndarray:
        Ci = self.C[idx]
        if self.Pr is self.P:  # float64 products (rows of a float32 C: rounded at the end)
            Ci = Ci.astype(np.float64, copy=False)
        if self.triangular and idx.size:
            # (C_idx P)^T = P^T C_idx^T: trmm on the transposed (column-major) gathered rows
            trmm = strmm if self.Pr.dtype == np.float32 else dtrmm
            rows = trmm(1.0, self.Pr, Ci.T, side=0, lower=0, trans_a=1, overwrite_b=1).T
        else:
            rows = Ci @ self.Pr
        rows *= self.sign[idx, None]
        return rows.astype(self.dtype, copy=False)

    def rows_rmatvec(self, idx: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``B[idx]^T v = P^T (C[idx]^T (s_idx v))`` (float64), ``O(|idx| B + B M)``."""
        z = self.C[idx].T @ (self.sign[idx] * v).astype(self.dtype, copy=False)
        return self.P.T @ z.astype(np.float64, copy=False)

    def dense(self) -> np.ndarray:
        """``B`` formed (``O(N B M)``; the IPM-only routes and the fallback need it)."""
        return self[np.arange(self.shape[0])].astype(np.float64, copy=False)


def is_factored(B: Any) -> bool:
    """Whether ``B`` is a :class:`FactoredB` (not an array)."""
    return isinstance(B, FactoredB)
