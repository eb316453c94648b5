"""Gram operators: the kernel matrix of a dual as a structured linear map, and PSD factors.

``Q = D_s K D_s + diag(d)`` (:class:`GramOperator`) is what a dual's quadratic form is handed
to the backends as: SMO computes kernel columns from ``X``, CVXPY uses a factor ``Q = L L^T``
(:func:`psd_factor`), and ``Q v`` is formed in row chunks without ``N x N`` storage.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp


def _n_rows(X: Any) -> int:
    """Rows of ``X`` (an array, array-like or scipy sparse matrix)."""
    return int(X.shape[0]) if sp.issparse(X) else np.asarray(X).shape[0]


def _rows(X: Any) -> Any:
    """``X`` as an array whose rows can be indexed; a scipy sparse ``X`` as CSR (kept sparse)."""
    return X.tocsr() if sp.issparse(X) else np.asarray(X)


class GramOperator:
    """``Q = D_s K D_s + diag(d)`` with ``K_jk = k(x_{idx_j}, x_{idx_k})``, kept structured.

    ``s`` (``sign``) is ``y`` for classifier duals (``Q = D_y K D_y``), ``index`` maps variables to
    data rows (epsilon-SVR's 2N variables), ``diag`` is e.g. L2-SVC's ``I/C``. Backends read this
    structure (SMO computes kernel columns from ``X``; CVXPY uses a factor ``Q = L L^T``).
    A dense matrix can be wrapped with ``GramOperator.dense_matrix(Q)``.

    ``coef`` (a sparse ``N x n`` matrix ``B``, instead of ``sign`` and ``index``) gives the
    combination form ``Q = Bᵀ K B + diag(d)``: variable ``j`` is the feature-space vector
    ``Σ_r B_rj φ(x_r)``, e.g. a ranking SVM's pair difference ``φ(x_i) - φ(x_j)`` (two entries
    per column), so ``Q = D K Dᵀ`` is kept as the kernel, the rows and ``B = Dᵀ``: ``N + nnz(B)``
    numbers, never ``n x n`` nor a factor of ``K``. A backend that reads ``sign``/``index``
    must refuse an operator whose ``coef`` is set (only the ``pairs`` route reads it).
    """

    #: the combination form's ``B`` (``None``: the signed-selection form); a class default so
    #: that an operator pickled before the form existed reads as the selection form
    coef: sp.csc_matrix | None = None

    def __init__(self, kernel: Any = None, X: np.ndarray | None = None, *, sign=None, index=None,
                 diag=None, matrix: np.ndarray | None = None, coef: Any = None) -> None:
        self.kernel, self.X = kernel, X
        self._Q: np.ndarray | None = None
        self.matrix = None if matrix is None else np.asarray(matrix, dtype=float)
        self.coef = None if coef is None else sp.csc_matrix(coef, dtype=float)
        if self.coef is not None and (sign is not None or index is not None):
            raise ValueError("GramOperator: coef replaces sign and index (fold them into B)")
        n = self.matrix.shape[0] if self.matrix is not None else (
            self.coef.shape[1] if self.coef is not None else
            len(index) if index is not None else _n_rows(X))
        self.n = n
        self.sign = np.ones(n) if sign is None else np.asarray(sign, dtype=float)
        self.index = index if index is None else np.asarray(index, dtype=np.int64)
        self.diag = np.zeros(n) if diag is None else np.broadcast_to(
            np.asarray(diag, dtype=float), (n,)).copy()
        self._factor: np.ndarray | None = None

    @classmethod
    def dense_matrix(cls, Q: np.ndarray) -> GramOperator:
        return cls(matrix=Q)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.n)

    def dense(self) -> np.ndarray:
        if self._Q is None:
            if self.matrix is not None:
                Q = self.matrix.copy()
            elif self.coef is not None:
                K = np.asarray(self.kernel(self.X), dtype=float)
                B = self.coef
                Q = np.asarray(B.T @ np.asarray(B.T @ K).T, dtype=float)
                Q = 0.5 * (Q + Q.T)
            else:
                K = np.asarray(self.kernel(self.X), dtype=float)
                if self.index is not None:
                    K = K[np.ix_(self.index, self.index)]
                Q = K * np.outer(self.sign, self.sign)
            Q[np.diag_indices_from(Q)] += self.diag
            self._Q = Q
        return self._Q

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``Q v``; a kernel-defined ``Q`` goes through the chunked
        :func:`~primaldual.kernels.kernel_matvec` (no N x N storage)."""
        if self._Q is not None or self.matrix is not None or not hasattr(self.kernel, "_fill"):
            return self.dense() @ v
        from ..kernels import kernel_matvec
        if self.coef is not None:
            # B^T (K (B v)): one chunked kernel product over the N rows
            u = np.asarray(self.coef @ v, dtype=float)
            return np.asarray(self.coef.T @ kernel_matvec(self.kernel, self.X, u)) \
                + self.diag * v
        Xr = self.X if self.index is None else _rows(self.X)[self.index]
        return self.sign * kernel_matvec(self.kernel, Xr, self.sign * v) + self.diag * v

    def linear_factor(self) -> Any | None:
        """``Z`` with ``Q = Z Zᵀ + diag(d)`` read off the structure when the kernel is linear
        (``Z = D_s X[idx]``, or ``Bᵀ X`` in the combination form; kept sparse for a sparse
        ``X``): the factor a user would write, of
        ``n_features`` columns, with no ``n x n`` matrix formed or factorised. ``None`` for
        any other kernel or a dense matrix."""
        from ..kernels.functions import Linear

        if self.matrix is not None or self._Q is not None or type(self.kernel) is not Linear:
            return None
        Xr = _rows(self.X)
        if self.coef is not None:        # Q = Bᵀ X Xᵀ B: Z = Bᵀ X
            Z = self.coef.T @ Xr
            return sp.csr_matrix(Z) if sp.issparse(Z) else np.asarray(Z, dtype=float)
        if self.index is not None:
            Xr = Xr[self.index]
        if sp.issparse(Xr):
            return sp.csr_matrix(sp.diags(self.sign) @ Xr)
        return self.sign[:, None] * np.asarray(Xr, dtype=float)

    def rows_form(self) -> GramOperator:
        """A combination-form ``Q = Bᵀ K B + diag(d)`` as the linear kernel on the rows of
        ``Z = Bᵀ L`` (``K = L Lᵀ``, the pivoted Cholesky factor; ``L = X`` for a linear
        kernel): ``n x rank(K)`` numbers, the form the routes that keep ``w = Zᵀ a`` or factor
        rows read (the linear and low-rank backends, named explicitly). Any other operator is
        returned as it is."""
        if self.coef is None:
            return self
        from ..kernels.functions import Linear

        L = (np.asarray(self.X, dtype=float) if type(self.kernel) is Linear
             else psd_factor(np.asarray(self.kernel(self.X), dtype=float)))
        return GramOperator(Linear(), np.asarray(self.coef.T @ L, dtype=float), diag=self.diag)

    def factor(self) -> np.ndarray:
        """``L`` with ``Q = L L^T`` from a symmetric eigendecomposition (tiny negative eigenvalues
        from round-off clipped to zero; rank-deficient columns dropped)."""
        if self._factor is None and self.coef is not None:
            # Q = B^T K B + diag(d) = [B^T L, diag(d)^(1/2)] [..]^T with K = L L^T: the
            # n x rank(K) factor the linear-kernel form kept, not an n x n eigendecomposition
            F = np.asarray(self.rows_form().X, dtype=float)
            pos = np.flatnonzero(self.diag > 0)
            if pos.size:
                E = np.zeros((self.n, pos.size))
                E[pos, np.arange(pos.size)] = np.sqrt(self.diag[pos])
                F = np.hstack([F, E])
            self._factor = F
        if self._factor is None:
            self._factor = psd_factor(self.dense())
        return self._factor


def psd_factor(A: np.ndarray, rtol: float | None = None) -> np.ndarray:
    """``L`` (n x r) with ``A ~= L L^T`` for a symmetric PSD ``A``.

    LAPACK's pivoted Cholesky (``?pstrf``, rank-revealing, ``n^3/3`` flops) stops when the
    largest remaining pivot falls below ``rtol * max(diag A)`` (default ``10 eps``: only round-off
    is dropped); the factor is verified with random probes ``||A v - L L^T v||``. If the probe
    fails (an indefinite ``A``) the symmetric eigendecomposition decides: ``ValueError`` for a
    clearly indefinite matrix, otherwise its factor with round-off eigenvalues dropped.
    """
    from scipy.linalg import lapack

    A = 0.5 * (A + A.T)
    n = A.shape[0]
    dmax = float(np.max(np.abs(np.diag(A)), initial=0.0))
    if n == 0 or dmax == 0.0:
        return np.zeros((n, 0))
    rtol = 10 * np.finfo(float).eps if rtol is None else rtol
    c, piv, rank, info = lapack.dpstrf(A, lower=1, tol=rtol * dmax)
    if info >= 0 and rank > 0:
        L = np.zeros((n, rank))
        L[piv - 1] = np.tril(c)[:, :rank]
        rng = np.random.default_rng(0)
        V = rng.standard_normal((n, 2))
        err = np.abs(A @ V - L @ (L.T @ V)).max()
        if err <= 1e-9 * max(dmax, 1e-300) * np.sqrt(n):
            return L
    lam, U = np.linalg.eigh(A)
    top = max(float(np.max(np.abs(lam))), 1e-300)
    if lam[0] < -1e-8 * top:
        raise ValueError(f"matrix is not positive semidefinite (smallest eigenvalue {lam[0]:.3g});"
                         " use a PSD kernel or add a jitter")
    keep = lam > rtol * top
    return U[:, keep] * np.sqrt(lam[keep])

