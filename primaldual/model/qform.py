"""The dual's quadratic form as an operator expression, never an ``n x n`` array while the
derivation runs.

Eliminating a block ``v`` with curvature ``H_v`` from ``L`` leaves ``-1/2 λᵀ A_vᵀ H_v⁻¹ A_v λ`` in
the dual, with ``A_v = Σ_c M_{c,v}ᵀ`` (sparse: the coefficients of ``v`` in the constraints). The
dual's ``Q = Σ_v A_vᵀ H_v⁻¹ A_v`` is kept as that list of terms; :meth:`QForm.operator` reads the
kernel structure off it (``Q = D_s K[idx, idx] D_s + diag(d)`` when each multiplier meets one
feature-space row: a signed row selection) and returns a
:class:`~primaldual.model.gram.GramOperator` that backends evaluate column by column (SMO) or
factor (CVXPY). Only a ``Q`` without that structure is formed densely (a rank-deficient pair
difference, a coupled plain block), as the fallback.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .gram import GramOperator

__all__ = ["QForm"]


class QForm:
    """``Q = Σ_k A_kᵀ H_k A_k`` over ``n`` stacked multipliers, kept as its terms.

    Each term is ``(A_k, H_k)`` with ``A_k`` sparse (``m_k x n``) and ``H_k`` either a kernel
    ``("gram", v, s)`` (``s K_v`` with ``K_v`` the Gram matrix of the feature variable ``v``'s
    basis: an eliminated ``c ||w||^2`` gives ``s = 1/(2c)``) or a matrix (sparse or dense,
    ``m_k x m_k``: ``H_v⁻¹`` of a plain block)."""

    def __init__(self, n: int) -> None:
        self.n = int(n)
        self.terms: list[tuple[sp.csr_matrix, Any]] = []

    def add_gram(self, A: Any, var: Any, scale: float) -> None:
        """Add ``scale Aᵀ K_var A``."""
        self.terms.append((sp.csr_matrix(A), ("gram", var, float(scale))))

    def add(self, A: Any, H: Any) -> None:
        """Add ``Aᵀ H A`` (``H`` a sparse or dense matrix; a dense ``A``, a joint block's
        ``L⁻¹A`` whose entries are all non-zero, stays dense: as a sparse matrix it would take
        half again its memory and every product a sparse one)."""
        self.terms.append((A if isinstance(A, np.ndarray) else sp.csr_matrix(A), H))

    @property
    def empty(self) -> bool:
        return not self.terms

    def dense(self, idx: np.ndarray) -> np.ndarray:
        """``Q[idx, idx]`` as an array (the fallback; forms the kernel matrix)."""
        Q = np.zeros((len(idx), len(idx)))
        for A, H in self.terms:
            if isinstance(A, np.ndarray):
                Ad = _columns(A, idx)
                # Aᵀ A for H = I: one syrk, half the work of a general product
                Q += Ad.T @ Ad if _is_identity(H) else Ad.T @ np.asarray(H @ Ad)
                continue
            Ai = A[:, idx]
            if isinstance(H, tuple):
                _, var, s = H
                Ad = Ai.toarray()
                Q += s * (Ad.T @ (var.gram() @ Ad))
            elif sp.issparse(H) and Ai.nnz <= 0.1 * Ai.shape[0] * Ai.shape[1]:
                Q += np.asarray((Ai.T @ (H @ Ai)).toarray())
            else:   # full coefficients (a joint block's L⁻¹A): dense BLAS, not sparse products
                Ad = Ai.toarray()
                Q += Ad.T @ np.asarray(H @ Ad)
        return Q

    def _plain(self, idx: np.ndarray) -> sp.csr_matrix | None:
        """``Σ_k A_kᵀ H_k A_k`` of the matrix terms, sparse (``None`` when a term is dense)."""
        out = sp.csr_matrix((len(idx), len(idx)))
        for A, H in self.terms:
            if isinstance(H, tuple):
                continue
            if not sp.issparse(H) or isinstance(A, np.ndarray):
                return None
            Ai = A[:, idx]
            out = out + sp.csr_matrix(Ai.T @ (sp.csr_matrix(H) @ Ai))
        return out

    def operator(self, idx: np.ndarray) -> GramOperator:
        """``Q[idx, idx]`` as a GramOperator: kernel form ``D_s K[index, index] D_s + diag(d)``
        when there is one kernel term whose ``A`` has at most one non-zero per column and the
        other terms are diagonal; a dense matrix otherwise."""
        idx = np.asarray(idx, dtype=np.int64)
        grams = [(A, H) for A, H in self.terms if isinstance(H, tuple)]
        if len(grams) == 1:
            A, (_, var, s) = grams[0]
            Ai = sp.csc_matrix(A[:, idx] * np.sqrt(s))
            Ai.eliminate_zeros()
            nnz = np.diff(Ai.indptr)
            rest = self._plain(idx)
            if np.all(nnz <= 1) and rest is not None:
                d = rest.diagonal()
                off = sp.csr_matrix(rest - sp.diags(d))
                scale = max(1.0, float(np.max(np.abs(d), initial=0.0)))
                if off.nnz == 0 or np.max(np.abs(off.data)) <= 1e-12 * scale:
                    has = nnz == 1
                    index = np.zeros(len(idx), dtype=np.int64)
                    sign = np.zeros(len(idx))
                    index[has] = Ai.indices
                    sign[has] = Ai.data
                    n_basis = var.basis.shape[0]
                    plain = len(idx) == n_basis and np.array_equal(index, np.arange(n_basis))
                    return GramOperator(var.kernel, var.basis, sign=sign,
                                        index=None if plain else index, diag=d)
            if rest is not None and len(idx) > var.basis.shape[0]:
                op = self._factored_gram(Ai, var, rest)
                if op is not None:
                    return op
        linear = self._linear_kernel(idx)
        if linear is not None:
            return linear
        Q = self.dense(idx)
        return GramOperator.dense_matrix(0.5 * (Q + Q.T))

    @staticmethod
    def _factored_gram(Ai: sp.csc_matrix, var: Any, rest: sp.csr_matrix
                       ) -> GramOperator | None:
        """``Q = Aᵀ K A + diag(d)`` with more multipliers than basis points (``D K Dᵀ`` over
        the pairs of a ranking SVM, ``A = Dᵀ``: two entries per column), kept as the kernel,
        the basis and ``A``: the combination form ``GramOperator(kernel, basis, coef=A)``,
        ``N + nnz(A)`` numbers, never ``P x P`` nor a factor of ``K`` (the ``pairs`` route
        steps on it with kernel rows, the certificate multiplies ``Aᵀ (K (A v))`` in chunks,
        CVXPY reads its factor ``Aᵀ L``). A linear kernel is its own factor (``K = X Xᵀ``):
        the linear kernel on the rows of ``Z = Aᵀ X`` (``P x d``), which the linear route
        keeps as ``w``. ``None`` when the other terms are not diagonal."""
        from ..kernels.functions import Linear

        d = rest.diagonal()
        off = sp.csr_matrix(rest - sp.diags(d))
        if off.nnz and np.max(np.abs(off.data)) > 1e-12 * max(1.0, float(np.abs(d).max())):
            return None
        if type(var.kernel) is Linear:
            Z = np.asarray(Ai.T @ np.asarray(var.basis, dtype=float), dtype=float)
            return GramOperator(Linear(), Z, diag=d)
        return GramOperator(var.kernel, np.asarray(var.basis, dtype=float), coef=Ai, diag=d)

    def _linear_kernel(self, idx: np.ndarray) -> GramOperator | None:
        """``Q[idx, idx] = c Z Zᵀ + diag(d)`` as the linear kernel on the rows of
        ``Z = A[:, idx]ᵀ`` when one term has ``H = c I`` and the others add a diagonal (a plain
        block ``c' ||v||^2`` whose constraints ``M v`` hold data: ``Q = M Mᵀ`` over many more
        multipliers than ``v`` has entries, RankSVM's pair differences): SMO evaluates its
        columns and the linear route keeps ``v`` itself, never the ``n x n`` matrix."""
        from ..kernels.functions import Linear

        big = None
        for k, (A, H) in enumerate(self.terms):
            if isinstance(H, tuple):
                return None
            if A.shape[0] * 4 <= len(idx) and A.shape[0] > 0:
                if big is not None:
                    return None
                big = k
        if big is None:
            return None
        A, H = self.terms[big]
        Hd = H.toarray() if sp.issparse(H) else np.asarray(H, dtype=float)
        c = float(Hd[0, 0]) if Hd.size else 0.0
        if Hd.ndim != 2 or not c > 0 or not np.array_equal(Hd, c * np.eye(Hd.shape[0])):
            return None
        rest = QForm(self.n)
        rest.terms = [t for k, t in enumerate(self.terms) if k != big]
        d = np.zeros(len(idx))
        if rest.terms:
            R = rest._plain(idx)
            if R is None:
                return None
            d = R.diagonal()
            off = sp.csr_matrix(R - sp.diags(d))
            if off.nnz and np.max(np.abs(off.data)) > 1e-12 * max(1.0, float(np.abs(d).max())):
                return None
        Z = np.sqrt(c) * (_columns(A, idx).T if isinstance(A, np.ndarray)
                          else np.asarray(A[:, idx].T.toarray(), dtype=float))
        return GramOperator(Linear(), Z, diag=d)


def _columns(A: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``A[:, idx]``, without a copy when ``idx`` is every column in order."""
    if len(idx) == A.shape[1] and np.array_equal(idx, np.arange(A.shape[1])):
        return A
    return A[:, idx]


def _is_identity(H: Any) -> bool:
    """Whether the matrix ``H`` is the identity (checked on its stored entries)."""
    if H.shape[0] != H.shape[1]:
        return False
    if sp.issparse(H):
        H = sp.csr_matrix(H)
        return bool(H.nnz == H.shape[0] and np.all(H.diagonal() == 1.0))
    return bool(np.array_equal(H, np.eye(H.shape[0])))
