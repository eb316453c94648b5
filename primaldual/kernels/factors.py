"""Low-rank factors ``K ~= V V^T`` of a kernel matrix (docs/formulations.md section 14).

Produced by :func:`eig_factor`, :func:`nystrom_factor` and :func:`incomplete_cholesky`
(dispatcher :func:`low_rank_factor`); each returns a :class:`LowRankFactor` whose
:meth:`LowRankFactor.transform` is the matching feature map ``v(z)`` with
``v(x_i) = V[i]`` on training rows, so that ``f(x) = v(x)^T eta + b``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg

from .factory import kernel_from_dict
from .functions import (
    Kernel,
    Linear,
    Precomputed,
    _real,
    as_2d,
)
from .gram import kernel_columns

__all__ = [
    "LowRankFactor",
    "eig_factor",
    "nystrom_factor",
    "incomplete_cholesky",
    "low_rank_factor",
    "FactoredNystrom",
]

#: Elements of one kernel block in :meth:`LowRankFactor.transform` (8 MB).
TRANSFORM_CHUNK: int = 2**20




@dataclass(eq=False)
class LowRankFactor:
    """Low-rank factor ``K ~= V V^T`` of a kernel matrix (docs/formulations.md section 14).

    Attributes
    ----------
    V : ndarray, shape (N, M)
        The factor; ``K ~= V V^T``.
    rank : int
        ``M`` (number of columns actually kept).
    trace_error : float
        ``trace(K - V V^T) >= 0`` (for these factors ``K - V V^T`` is PSD when ``K`` is,
        so this bounds its nuclear norm).
    relative_error : float
        ``trace_error / trace(K)``.
    method : str
        ``"eig"``, ``"nystrom"`` or ``"icholesky"``.
    kernel : Kernel
        The kernel that was factorised.
    basis_index : ndarray of int, shape (B,)
        Training rows whose kernel values define the feature map (landmarks, pivots, or
        all rows for ``"eig"``).
    basis : ndarray, shape (B, d) or None
        ``X[basis_index]`` (``None`` for a :class:`Precomputed` kernel, whose feature
        map takes the columns ``basis_index`` of a ``n_test x N`` kernel block).
    proj : ndarray, shape (B, M)
        Feature map ``v(z) = proj^T k(basis, z)``; for ``"icholesky"`` it is the lower
        triangular ``L = V[basis_index]`` and ``v(z) = L^{-1} k(basis, z)``.
    """

    V: np.ndarray
    rank: int
    trace_error: float
    relative_error: float
    method: str
    kernel: Kernel = field(default_factory=Linear, repr=False)
    basis_index: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp),
                                    repr=False)
    basis: np.ndarray | None = field(default=None, repr=False)
    proj: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)

    def __repr__(self) -> str:
        return (
            f"LowRankFactor(method={self.method!r}, shape={self.V.shape}, rank={self.rank}, "
            f"trace_error={self.trace_error:.3g}, relative_error={self.relative_error:.3g})"
        )

    def _cross(self, Z: Any) -> np.ndarray:
        if isinstance(self.kernel, Precomputed):
            Zk = as_2d(Z, "Z")
            if Zk.shape[1] != self.V.shape[0]:
                raise ValueError(
                    f"with a precomputed kernel Z must be n_test x N (N = {self.V.shape[0]}), "
                    f"got shape {Zk.shape}"
                )
            return Zk[:, self.basis_index]
        return self.kernel(Z, self.basis)

    def transform(self, Z: Any) -> np.ndarray:
        """Feature map ``v(z)`` for new points, shape ``(n_test, M)``.

        ``v(x_i) = V[i]`` for the training rows, so ``v(x)^T v(z)`` is the low-rank
        approximation of ``k(x, z)`` and ``f(x) = v(x)^T eta + b``.

        * eig: ``v(z) = Lambda^{-1/2} Phi^T k(X, z)``;
        * nystrom: ``v(z) = S^{-1/2} U^T k(X_L, z)`` with ``K_LL = U S U^T``;
        * icholesky: ``v(z) = L^{-1} k(X_P, z)`` with ``L = V[P]`` lower triangular.
        """
        if isinstance(self.kernel, Precomputed):
            return self._map(self._cross(Z))
        Z = as_2d(Z, "Z")
        n, M = Z.shape[0], self.proj.shape[1]
        if self.method == "icholesky" and self.rank == 0:
            return np.zeros((n, 0))
        # row blocks written straight into the result: the n x B kernel block and the map
        # never coexist at full size (at n = 1e6, M = 500 that is the 4 GB of one copy)
        step = max(1, TRANSFORM_CHUNK // max(1, self.proj.shape[0], M))
        if n <= step:
            return self._map(self._cross(Z))
        out = np.empty((n, M))
        for i0 in range(0, n, step):
            i1 = min(n, i0 + step)
            out[i0:i1] = self._map(self._cross(Z[i0:i1]))
        return out

    def _map(self, C: np.ndarray) -> np.ndarray:
        if self.method == "icholesky":
            if self.rank == 0:
                return np.zeros((C.shape[0], 0))
            return scipy.linalg.solve_triangular(self.proj, C.T, lower=True,
                                                 check_finite=False).T
        return C @ self.proj

    def dot(self, w: np.ndarray) -> np.ndarray:
        """``V @ w`` (``w`` of shape ``(M,)`` or ``(M, k)``); a :class:`FactoredNystrom`
        computes it as ``C (P w)`` without forming ``V``."""
        return self.V @ w

    def rows(self, idx: Any) -> np.ndarray:
        """``V[idx]`` (rows of the factor; :class:`FactoredNystrom`: ``C[idx] P``)."""
        return self.V[np.asarray(idx, dtype=np.intp)]

    def operator(self) -> Any:
        """``V`` for ``V @ x`` / ``V.T @ z`` products (the array itself; a
        :class:`FactoredNystrom` returns a :class:`scipy.sparse.linalg.LinearOperator` that
        never forms ``V``)."""
        return self.V

    def to_dict(self) -> dict:
        """Arrays (``V``, ``basis_index``, ``basis``, ``proj``; ndarray values) plus
        JSON-serialisable metadata (``rank``, ``trace_error``, ``relative_error``,
        ``method``, ``kernel`` as :meth:`Kernel.to_dict`)."""
        return {
            "V": self.V,
            "rank": int(self.rank),
            "trace_error": float(self.trace_error),
            "relative_error": float(self.relative_error),
            "method": self.method,
            "kernel": self.kernel.to_dict(),
            "basis_index": np.asarray(self.basis_index),
            "basis": self.basis,
            "proj": self.proj,
        }

    @classmethod
    def from_dict(cls, d: dict) -> LowRankFactor:
        """Inverse of :meth:`to_dict`."""
        basis = d.get("basis")
        return cls(
            V=np.asarray(d["V"], dtype=np.float64),
            rank=int(d["rank"]),
            trace_error=float(d["trace_error"]),
            relative_error=float(d["relative_error"]),
            method=str(d["method"]),
            kernel=kernel_from_dict(dict(d["kernel"])),
            basis_index=np.asarray(d["basis_index"], dtype=np.intp),
            basis=None if basis is None else np.asarray(basis, dtype=np.float64),
            proj=np.asarray(d["proj"], dtype=np.float64),
        )


class FactoredNystrom(LowRankFactor):
    """A Nystrom factor kept as ``V = C P`` (never formed unless read): ``C = k(X, X_L)`` the
    ``N x B`` kernel columns of the landmarks ``X_L`` and ``P = proj`` the ``B x M``
    (block upper triangular) map, so that ``v(x) = P^T k(X_L, x)`` as for every Nystrom factor.

    Products go through ``C`` and ``P``: ``V w = C (P w)``, ``V^T z = P^T (C^T z)``, rows
    ``V[i] = C[i] P`` (:meth:`dot`, :meth:`rows`, :meth:`operator`), each ``O(N B)`` or
    ``O(|rows| B M)``. ``V``, ``trace_error`` and ``relative_error`` are computed on first
    access (``V = C P``: ``O(N B M)`` time and ``N x M`` memory; the traces from ``V``'s
    squared entries, as :class:`NystromGrowth` keeps them) and cached.
    """

    _LAZY = ("V", "trace_error", "relative_error")

    def __init__(self, C: np.ndarray, kernel: Kernel, trace_K: float,
                 basis_index: np.ndarray, basis: np.ndarray | None, proj: np.ndarray) -> None:
        # the dataclass fields except the lazy ones (no dataclass __init__: V is not formed)
        self.C = C
        self.trace_K = float(trace_K)
        self.rank = int(proj.shape[1])
        self.method = "nystrom"
        self.kernel = kernel
        self.basis_index = np.asarray(basis_index, dtype=np.intp)
        self.basis = basis
        self.proj = proj

    def __getattr__(self, name: str) -> Any:
        # only reached when normal lookup fails: the lazy attributes before their first read
        if name not in FactoredNystrom._LAZY or "C" not in self.__dict__:
            raise AttributeError(name)
        V = self.C @ self.proj if self.proj.size else np.zeros((self.C.shape[0], 0))
        approx = float(np.einsum("ij,ij->", V, V)) if V.size else 0.0
        err = max(0.0, self.trace_K - approx)
        self.V = V
        self.trace_error = err
        self.relative_error = err / self.trace_K if self.trace_K > 0 else 0.0
        return self.__dict__[name]

    @property
    def formed(self) -> bool:
        """Whether ``V`` (and the trace error) has been computed."""
        return "V" in self.__dict__

    def __repr__(self) -> str:
        return (f"FactoredNystrom(shape=({self.C.shape[0]}, {self.rank}), rank={self.rank}, "
                f"landmarks={self.basis_index.size}, formed={self.formed})")

    #: products remembered per factor (:meth:`remember`), at most this many
    _MEMO_MAX = 4

    @staticmethod
    def _memo_key(kind: str, v: np.ndarray) -> tuple:
        return (kind, v.dtype.str, v.shape, v.tobytes())

    def remember(self, w: np.ndarray, Vw: np.ndarray | None = None,
                 z: np.ndarray | None = None) -> None:
        """Record products already computed elsewhere (the eta-solver's passes over the same
        ``C`` and ``P``): ``V w = Vw`` and, with ``z``, ``V^T z = w``. :meth:`dot` and the
        :meth:`operator`'s products then return a copy instead of another ``O(N B)`` pass
        over ``C`` (N = 200,000 at rank 1600: 0.25-0.3 s each). Only exact matches (the same
        bytes) are served; the record is not pickled."""
        memo = self.__dict__.setdefault("_memo", {})
        w = np.asarray(w, dtype=np.float64)
        if Vw is not None:
            memo[self._memo_key("V", w)] = np.array(Vw, dtype=np.float64)
        if z is not None:
            memo[self._memo_key("VT", np.asarray(z, dtype=np.float64))] = w.copy()
        while len(memo) > self._MEMO_MAX:
            memo.pop(next(iter(memo)))

    def _recalled(self, kind: str, v: np.ndarray) -> np.ndarray | None:
        memo = self.__dict__.get("_memo")
        if not memo or v.ndim != 1:
            return None
        hit = memo.get(self._memo_key(kind, np.asarray(v)))
        return None if hit is None else hit.copy()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_memo", None)
        return state

    def dot(self, w: np.ndarray) -> np.ndarray:
        if self.formed:
            return self.V @ w
        hit = self._recalled("V", w)
        return self.C @ (self.proj @ w) if hit is None else hit

    def _tdot(self, z: np.ndarray) -> np.ndarray:
        hit = self._recalled("VT", z)
        return self.proj.T @ (self.C.T @ z) if hit is None else hit

    def rows(self, idx: Any) -> np.ndarray:
        return self.C[np.asarray(idx, dtype=np.intp)] @ self.proj

    def operator(self) -> Any:
        from scipy.sparse.linalg import LinearOperator

        C, P = self.C, self.proj
        return LinearOperator((C.shape[0], P.shape[1]), dtype=np.float64,
                              matvec=lambda w: self.dot(np.ravel(w)),
                              rmatvec=lambda z: self._tdot(np.ravel(z)),
                              matmat=lambda W: C @ (P @ W),
                              rmatmat=lambda Z: P.T @ (C.T @ Z))


def _check_factor_args(kernel: Any, X: Any, rank: Any) -> tuple[Kernel, np.ndarray, int]:
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a Kernel (see make_kernel), got {type(kernel).__name__}")
    X = as_2d(X, "X")
    N = X.shape[0]
    if isinstance(kernel, Precomputed) and X.shape[1] != N:
        raise ValueError(f"with a precomputed kernel X must be the N x N Gram, got {X.shape}")
    if rank is not None:
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 1:
            raise ValueError(f"rank must be a positive integer, got {rank!r}")
        if rank > N:
            raise ValueError(f"rank must be <= N = {N}, got {rank}")
    return kernel, X, N


def _check_tol(tol: Any) -> float | None:
    if tol is None:
        return None
    t = _real(tol, "tol")
    if t < 0:
        raise ValueError(f"tol must be >= 0, got {tol!r}")
    return t


def _finish(V, kernel, trace_K, method, basis_index, X, proj,
            approx: float | None = None) -> LowRankFactor:
    if approx is None:  # trace(V V^T)
        approx = float(np.einsum("ij,ij->", V, V)) if V.size else 0.0
    err = max(0.0, float(trace_K) - approx)
    rel = err / trace_K if trace_K > 0 else 0.0
    basis = None if isinstance(kernel, Precomputed) else X[basis_index]
    return LowRankFactor(V=V, rank=int(V.shape[1]), trace_error=err, relative_error=rel,
                         method=method, kernel=kernel,
                         basis_index=np.asarray(basis_index, dtype=np.intp),
                         basis=basis, proj=proj)


def eig_factor(kernel: Kernel, X: Any, rank: int | None = None,
               tol: float | None = None) -> LowRankFactor:
    """Truncated eigendecomposition ``V = Phi_M Lambda_M^{1/2}`` (forms the full ``K``).

    Keeps the ``rank`` largest eigenvalues (all positive ones if ``None``); with
    ``tol``, the smallest number of leading eigen-pairs whose discarded eigenvalue
    mass is ``<= tol * trace(K)``.  Eigenvalues ``<= N eps lambda_max`` are always
    dropped (they carry no information and would blow up ``Lambda^{-1/2}``).
    Optimal in every unitarily invariant norm for a given rank; O(N^3) time.
    """
    kernel, X, N = _check_factor_args(kernel, X, rank)
    tol = _check_tol(tol)
    K = kernel(X)
    K = 0.5 * (K + K.T)
    trace_K = float(np.trace(K))
    if rank is not None and tol is None:
        lam, Phi = scipy.linalg.eigh(K, subset_by_index=[N - rank, N - 1])
    else:
        lam, Phi = scipy.linalg.eigh(K)
    lam, Phi = lam[::-1], Phi[:, ::-1]
    lam_max = float(lam[0]) if lam.size else 0.0
    keep = lam > max(N, 1) * np.finfo(float).eps * max(lam_max, 0.0)
    if tol is not None:
        pos = np.where(lam > 0, lam, 0.0)
        tail = np.cumsum(pos[::-1])[::-1]  # tail[m] = sum of eigenvalues m, m+1, ...
        tail = np.append(tail, 0.0)[1:]  # mass discarded when keeping the first m+1
        m = int(np.argmax(tail <= tol * trace_K)) + 1 if np.any(tail <= tol * trace_K) else N
        if rank is not None:
            m = min(m, rank)
        keep[m:] = False
    m = int(np.argmin(keep)) if not keep.all() else len(keep)  # keep is a prefix
    lam, Phi = lam[:m], Phi[:, :m]
    V = Phi * np.sqrt(lam)
    proj = Phi / np.sqrt(lam)
    return _finish(V, kernel, trace_K, "eig", np.arange(N), X, proj)


def _kmeanspp_landmarks(kernel: Kernel, X: np.ndarray, M: int,
                        rng: np.random.Generator) -> np.ndarray:
    """Kernel k-means++ seeding: sample landmarks with probability proportional to the
    squared feature-space distance ``k(x,x) + k(c,c) - 2 k(x,c)`` to the nearest chosen one."""
    N = X.shape[0]
    d = kernel.diag(X)
    first = int(rng.integers(N))
    chosen = [first]
    col = kernel_columns(kernel, X, np.array([first]))[:, 0]
    dist = np.maximum(d + d[first] - 2.0 * col, 0.0)
    dist[first] = 0.0
    for _ in range(1, M):
        total = dist.sum()
        if total <= 0:
            rest = np.setdiff1d(np.arange(N), chosen)
            nxt = int(rng.choice(rest))
        else:
            nxt = int(rng.choice(N, p=dist / total))
        chosen.append(nxt)
        col = kernel_columns(kernel, X, np.array([nxt]))[:, 0]
        np.minimum(dist, np.maximum(d + d[nxt] - 2.0 * col, 0.0), out=dist)
        dist[chosen] = 0.0
    return np.array(chosen, dtype=np.intp)


def nystrom_factor(kernel: Kernel, X: Any, rank: int, landmarks: str | Any = "uniform",
                   random_state: int | np.random.Generator | None = None) -> LowRankFactor:
    """Nystrom factor ``K ~= K_NL K_LL^+ K_LN = V V^T`` with ``V = K_NL U S^{-1/2}``.

    Parameters
    ----------
    rank : int
        Number of landmarks ``M``.
    landmarks : {"uniform", "kmeans++"} or array of int
        Uniform sampling without replacement, kernel k-means++ seeding, or explicit
        landmark row indices.
    random_state : int, Generator or None

    Eigenvalues of ``K_LL`` below ``M eps lambda_max`` are dropped (pseudo-inverse), so
    ``V`` may have fewer than ``rank`` columns.  Cost O(N M) kernel evaluations + O(M^3).
    """
    if rank is None:
        raise ValueError("nystrom_factor needs rank (the number of landmarks)")
    kernel, X, N = _check_factor_args(kernel, X, rank)
    rng = np.random.default_rng(random_state)
    if isinstance(landmarks, str):
        if landmarks == "uniform":
            L = np.sort(rng.choice(N, size=rank, replace=False))
        elif landmarks == "kmeans++":
            L = _kmeanspp_landmarks(kernel, X, rank, rng)
        else:
            raise ValueError(
                f"landmarks must be 'uniform', 'kmeans++' or indices, got {landmarks!r}"
            )
    else:
        L = np.asarray(landmarks, dtype=np.intp).ravel()
        if L.size == 0 or L.min() < 0 or L.max() >= N or np.unique(L).size != L.size:
            raise ValueError("landmarks indices must be distinct and in [0, N)")
    C = kernel_columns(kernel, X, L)  # N x M
    W = C[L]
    W = 0.5 * (W + W.T)
    s, U = scipy.linalg.eigh(W)
    s, U = s[::-1], U[:, ::-1]
    smax = max(float(s[0]), 0.0)
    m = int(np.sum(s > max(len(L), 1) * np.finfo(float).eps * smax)) if smax > 0 else 0
    proj = U[:, :m] / np.sqrt(s[:m])
    V = C @ proj
    trace_K = float(np.sum(kernel.diag(X)))
    return _finish(V, kernel, trace_K, "nystrom", L, X, proj)


def incomplete_cholesky(kernel: Kernel, X: Any, rank: int | None = None, tol: float = 1e-6,
                        pivoting: str = "greedy",
                        random_state: int | np.random.Generator | None = None) -> LowRankFactor:
    """Pivoted (greedy) incomplete Cholesky factor ``K ~= V V^T`` [Fine & Scheinberg 2001].

    At step ``m`` the pivot ``p`` is the row with the largest residual diagonal
    ``d_p = K_pp - ||V[p, :m]||^2``; the new column is
    ``V[:, m] = (K[:, p] - V[:, :m] V[p, :m]^T) / sqrt(d_p)`` and ``d -= V[:, m]^2``.
    Stops after ``rank`` columns or when ``sum(d) = trace(K - V V^T) <= tol * trace(K)``.
    ``pivoting="random"`` draws ``p`` with probability ``d_p / sum(d)`` instead
    (randomly pivoted Cholesky, Chen, Epperly, Tropp & Webber 2022), which avoids the
    greedy rule's preference for outliers and usually gives a smaller trace error at a
    fixed rank; ``random_state`` seeds it.
    O(N M^2) time, O(N M) memory, one kernel column ``kernel(X, X[[p]])`` per step:
    the N x N matrix is never formed.  ``K[:, P] = V L^T`` holds exactly with
    ``L = V[P]`` lower triangular, which gives the feature map ``v(z) = L^{-1} k(X_P, z)``.
    """
    kernel, X, N = _check_factor_args(kernel, X, rank)
    tol_v = _check_tol(tol)
    tol_v = 0.0 if tol_v is None else tol_v
    if pivoting not in ("greedy", "random"):
        raise ValueError(f"pivoting must be 'greedy' or 'random', got {pivoting!r}")
    rng = np.random.default_rng(random_state) if pivoting == "random" else None
    d = np.array(kernel.diag(X), dtype=np.float64)
    if np.any(d < -1e-12 * max(1.0, float(np.max(np.abs(d))) if N else 1.0)):
        raise ValueError("kernel has a negative diagonal entry; incomplete Cholesky needs PSD")
    np.maximum(d, 0.0, out=d)
    trace_K = float(d.sum())
    M_max = N if rank is None else rank
    cap = M_max if rank is not None else min(M_max, 64)
    V = np.zeros((N, cap), order="F")
    pivots: list[int] = []
    floor = np.finfo(float).eps * max(1.0, float(d.max()) if N else 1.0) * 10
    m = 0
    while m < M_max:
        resid = float(d.sum())
        if resid <= tol_v * trace_K:
            break
        if rng is None:
            p = int(np.argmax(d))
        else:
            p = int(np.searchsorted(np.cumsum(d), rng.random() * resid, side="right"))
            p = min(p, N - 1)
            if d[p] <= floor:  # rounding landed on an exhausted row
                p = int(np.argmax(d))
        dp = float(d[p])
        if dp <= floor:
            break
        if m == cap:  # grow the buffer (only when rank is None)
            cap = min(M_max, 2 * cap)
            V2 = np.zeros((N, cap), order="F")
            V2[:, :m] = V[:, :m]
            V = V2
        col = kernel_columns(kernel, X, np.array([p]))[:, 0]
        if m:
            col -= V[:, :m] @ V[p, :m]
        col *= 1.0 / math.sqrt(dp)
        V[:, m] = col
        col *= col
        d -= col
        d[p] = 0.0
        np.maximum(d, 0.0, out=d)
        pivots.append(p)
        m += 1
    V = V[:, :m]
    P = np.array(pivots, dtype=np.intp)
    L = np.array(V[P, :], order="C")
    return _finish(V, kernel, trace_K, "icholesky", P, X, L)




_FACTOR_METHODS = ("icholesky", "rpcholesky", "nystrom", "eig")


def low_rank_factor(kernel: Kernel, X: Any, rank: int | None = None, tol: float | None = None,
                    method: str = "icholesky",
                    random_state: int | np.random.Generator | None = None) -> LowRankFactor:
    """Dispatch to :func:`incomplete_cholesky` (``"icholesky"``, greedy pivots, the
    default; ``"rpcholesky"``: random pivots), :func:`nystrom_factor` or :func:`eig_factor`.

    ``rank > N`` raises ``ValueError``.  For the Cholesky methods ``tol=None`` means 1e-6
    when ``rank`` is None, else 0 (run to ``rank``).  ``"nystrom"`` needs ``rank``.
    """
    if method not in _FACTOR_METHODS:
        raise ValueError(f"method must be one of {', '.join(_FACTOR_METHODS)}, got {method!r}")
    if method in ("icholesky", "rpcholesky"):
        if tol is None:
            tol = 1e-6 if rank is None else 0.0
        pivoting = "greedy" if method == "icholesky" else "random"
        return incomplete_cholesky(kernel, X, rank=rank, tol=tol, pivoting=pivoting,
                                   random_state=random_state)
    if method == "nystrom":
        if tol is not None:
            raise ValueError("method='nystrom' takes rank, not tol")
        if rank is None:
            raise ValueError("method='nystrom' needs rank")
        return nystrom_factor(kernel, X, rank, random_state=random_state)
    return eig_factor(kernel, X, rank=rank, tol=tol)

