"""Low-rank factors ``K ~= V V^T`` of a kernel matrix (docs/formulations.md section 14).

Produced by :func:`eig_factor`, :func:`nystrom_factor` and :func:`incomplete_cholesky`
(dispatcher :func:`low_rank_factor`); each returns a :class:`LowRankFactor` whose
:meth:`LowRankFactor.transform` is the matching feature map ``v(z)`` with
``v(x_i) = V[i]`` on training rows, so that ``f(x) = v(x)^T eta + b``.
"""

from __future__ import annotations

import ctypes
import math
import mmap
import numbers
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg

from .factory import kernel_from_dict
from .functions import (
    _GEMM_DIST_ERR,
    _PROFILE_TOL,
    RBF,
    Kernel,
    Linear,
    Precomputed,
    _as_2d,
    _real,
    _sq_norms,
)
from .gram import _n_threads, free_cpus, kernel_columns

__all__ = [
    "LowRankFactor",
    "eig_factor",
    "nystrom_factor",
    "incomplete_cholesky",
    "low_rank_factor",
    "NystromGrowth",
    "FactoredNystrom",
]

#: Elements of one kernel block in :meth:`LowRankFactor.transform` (8 MB).
TRANSFORM_CHUNK: int = 2**20
#: Elements of one row block of :class:`NystromGrowth`'s fused growth pass (8 MB).
_GROW_CHUNK: int = 2**20
#: :class:`NystromGrowth` (``form_V=False``) computes the built-in RBF's new columns with
#: one GEMM and one compiled pass (:func:`primaldual.kernels.compiled.rbf_finish`: the
#: exponentials and the float32 copy in the same sweep) from this many entries ``N b`` on;
#: smaller blocks keep the numpy passes (no numba import for a small fit)
_FUSED_RBF_MIN: int = 2**20


#: buffers of at least this many bytes (:class:`NystromGrowth`) are private anonymous maps advised
#: against transparent huge pages: numpy advises its large arrays *for* huge pages, and where the
#: kernel compacts memory to find them (this project's VM) first touching the 2.56 GB of
#: ``N = 200,000 x 1600`` doubles took 7.2-7.7 s, against 1.1 s for 4 KiB pages
_SMALL_PAGES_MIN: int = 2**26


def _empty(shape: tuple[int, int], dtype: Any = np.float64, order: str = "C") -> np.ndarray:
    """``np.empty(shape, dtype, order)``; large arrays on a private anonymous map advised
    against transparent huge pages (``MADV_NOHUGEPAGE``: no compaction stalls on first touch;
    freed with the array)."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if nbytes < _SMALL_PAGES_MIN or not hasattr(mmap, "MAP_PRIVATE"):
        return np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload]
    try:
        buf = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(mmap, "MADV_NOHUGEPAGE"):
            buf.madvise(mmap.MADV_NOHUGEPAGE)
    except (OSError, ValueError, AttributeError):
        return np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload]
    return np.frombuffer(buf, dtype=dtype).reshape(shape, order=order)  # type: ignore[call-overload]


#: ``madvise`` advice (Linux >= 5.14): populate the range's pages as for a write, in one call
_MADV_POPULATE_WRITE: int = 23
_LIBC: list = []  # [libc] once loaded (or [None] where it cannot be)


def _prefault(a: np.ndarray) -> None:
    """Populate the pages of the contiguous array ``a`` before it is written: one
    ``madvise(MADV_POPULATE_WRITE)`` call instead of one page fault per 4 KiB page on first
    touch (measured on this VM: 2.56 GB in 0.63 s against 1.05 s). Small arrays, other
    platforms and kernels without the advice: nothing (the first write faults them in as
    before); the values are never read."""
    if a.nbytes < _SMALL_PAGES_MIN or not sys.platform.startswith("linux") or not \
            (a.flags.c_contiguous or a.flags.f_contiguous):
        return
    if not _LIBC:
        try:
            lib = ctypes.CDLL(None, use_errno=True)
            lib.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            lib.madvise.restype = ctypes.c_int
            _LIBC.append(lib)
        except (OSError, AttributeError):  # pragma: no cover - no libc symbols
            _LIBC.append(None)
    lib = _LIBC[0]
    if lib is None:  # pragma: no cover
        return
    start = a.ctypes.data // mmap.PAGESIZE * mmap.PAGESIZE
    lib.madvise(start, a.ctypes.data + a.nbytes - start, _MADV_POPULATE_WRITE)  # -1: ignored


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
            Zk = _as_2d(Z, "Z")
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
        Z = _as_2d(Z, "Z")
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
    X = _as_2d(X, "X")
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


class NystromGrowth:
    """Nested Nystrom factors of growing rank on the same data (``rank="auto"``).

    Landmarks are added in blocks; the factor of the first ``m`` landmarks ``L`` is the uniform
    Nystrom factor ``K ~= K_NL K_LL^+ K_LN = V V^T`` built block by block (a block Cholesky
    with eigen-truncated pivots): for new landmarks ``A`` the residual columns
    ``R = K_NA - V V_A^T`` and the Schur complement ``S = K_AA - V_A V_A^T = Q D Q^T`` give
    ``V <- [V, R Q_+ D_+^{-1/2}]`` (eigenvalues ``<= m eps max(D)`` dropped), so the old columns
    are kept, a model ``f(x) = v(x)^T eta`` of the smaller rank is reproduced exactly by
    ``[eta; 0]``, and growing costs ``O(N m b)`` for a block of ``b``, not ``O(N m^2)``.
    The feature map ``v(z) = proj^T k(X_L, z)`` (``proj`` block upper triangular) gives
    ``v(x_i) = V[i]`` on training rows, as :func:`nystrom_factor`.

    ``K - V V^T`` is positive semi-definite for a PSD kernel (each block removes the
    orthogonal projection of the residual onto the kept directions), so ``trace_error`` is the
    nuclear norm of the approximation error, as for the other factors.
    """

    def __init__(self, kernel: Kernel, X: Any,
                 random_state: int | np.random.Generator | None = None,
                 capacity: int | None = None, form_V: bool = True,
                 float32_copy: bool = False) -> None:
        kernel, X, N = _check_factor_args(kernel, X, None)
        if isinstance(kernel, Precomputed):
            raise ValueError("NystromGrowth needs a kernel on feature vectors, not a Gram matrix")
        self.kernel, self.X, self.N = kernel, X, N
        self._rng = np.random.default_rng(random_state)
        self.order = self._rng.permutation(N)
        self.n_landmarks = 0
        #: ``form_V=False``: keep the kernel columns ``C = k(X, X_L)`` instead of ``V = C P``
        #: (:class:`FactoredNystrom`); growing then costs ``O(N b d)`` kernel evaluations and
        #: ``O(b B M)`` for ``P``, no ``O(N M b)`` product with the old factor
        self.form_V = bool(form_V)
        width = max(1, min(N, capacity or 64))
        # V (or C) lives in a column-major buffer of ``capacity`` columns: growing writes new
        # columns only (no copy; untouched columns cost no memory), V is a contiguous view
        self._buf = _empty((N, width), order="F")
        self.V = self._buf[:, :0]
        #: ``float32_copy`` (with ``form_V=False``): a row-major float32 copy of ``C``
        #: (:attr:`C32`), written block by block with ``C``
        self.C32: np.ndarray | None = (_empty((N, width), dtype=np.float32)
                                       if float32_copy and not self.form_V else None)
        self.proj = np.zeros((0, 0))
        self.trace_K = float(np.sum(kernel.diag(X)))
        self._scale = float(np.max(kernel.diag(X))) if N else 1.0
        self._sq = 0.0  # sum of V**2 (trace(V V^T)), accumulated as columns are added
        #: the residual diagonal ``diag(K - V V^T)`` (>= 0 up to rounding), updated per block
        #: (``None`` with ``form_V=False``: it would need ``V``)
        self.resid = np.array(kernel.diag(X), dtype=float) if self.form_V else None
        self._xsq: np.ndarray | None = None  # |x_i|^2, computed once for the fused RBF pass

    @property
    def C(self) -> np.ndarray:
        """``k(X, X_L)`` of the current landmarks (``form_V=False`` only)."""
        if self.form_V:
            raise AttributeError("C is kept with form_V=False only")
        return self._buf[:, :self.n_landmarks]

    def factor(self, rank: int, prefer: Any = None, sampling: str = "uniform") -> LowRankFactor:
        """The factor of the first ``rank`` landmarks (grown from the current one; a smaller
        ``rank`` than the current raises ``ValueError``: the factor only grows).

        ``prefer`` (row indices): the new landmarks are drawn uniformly from these rows first
        (e.g. the current support vectors, where the solution needs the kernel approximated),
        then from the rest of the random order. ``V`` may have fewer columns than ``rank``
        (directions the landmarks do not add are dropped).
        """
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or not \
                self.n_landmarks <= rank <= self.N or rank < 1:
            raise ValueError(f"rank must be an integer in [max(1, {self.n_landmarks}), "
                             f"{self.N}], got {rank!r}")
        have = self.n_landmarks
        if sampling not in ("uniform", "residual"):
            raise ValueError(f"sampling must be 'uniform' or 'residual', got {sampling!r}")
        if sampling == "residual" and not self.form_V:
            raise ValueError("sampling='residual' needs the residual diagonal (form_V=True)")
        if rank > have:
            if prefer is not None:
                rest = self.order[have:]
                want = np.zeros(self.N, dtype=bool)
                want[np.asarray(prefer, dtype=np.intp)] = True
                first = want[rest]
                head, tail = rest[first], rest[~first]
                if sampling == "residual" and head.size:
                    # without replacement, with probability proportional to the residual
                    # diagonal (block randomly pivoted Cholesky): Gumbel top-k of log(resid)
                    w = np.maximum(self.resid[head], 0.0)
                    pos = np.flatnonzero(w > 0)
                    need = min(rank - have, pos.size)
                    if need:
                        g = np.log(w[pos]) + self._rng.gumbel(size=pos.size)
                        top = pos[np.argpartition(-g, need - 1)[:need]] if need < pos.size \
                            else pos
                        pick = np.zeros(head.size, dtype=bool)
                        pick[top] = True
                        head = np.concatenate([head[pick], head[~pick]])
                self.order[have:] = np.concatenate([head, tail])
            self._add(self.order[have:rank])
        L = self.order[:rank]
        if not self.form_V:
            return FactoredNystrom(self.C, self.kernel, self.trace_K, L, self.X[L], self.proj)
        return _finish(self.V, self.kernel, self.trace_K, "nystrom",
                       L, self.X, self.proj, approx=self._sq)

    def _add_columns(self, A: np.ndarray) -> None:
        """``form_V=False``: the kernel columns ``k(X, X_A)`` of the new landmarks (and their
        float32 copy), then ``P``'s new block from the Schur complement
        ``S = K_AA - V_A V_A^T`` with ``V_A = C_A P`` (``b x B`` times ``B x M``)."""
        n_old, b = self.n_landmarks, A.size
        if n_old + b > self._buf.shape[1]:  # grow the buffers (doubling)
            width = min(self.N, max(2 * self._buf.shape[1], n_old + b))
            buf = _empty((self.N, width), order="F")
            buf[:, :n_old] = self._buf[:, :n_old]
            self._buf = buf
            if self.C32 is not None:
                c32 = _empty((self.N, width), dtype=np.float32)
                c32[:, :n_old] = self.C32[:, :n_old]
                self.C32 = c32
        XA = self.X[A]
        m = self.proj.shape[1]
        VA = self._buf[A, :n_old] @ self.proj if m else np.zeros((b, 0))
        Qd = self._schur_root(XA, VA)
        out = self._buf[:, n_old:n_old + b]
        _prefault(out)  # the new columns: one contiguous block of the column-major buffer
        if n_old == 0 and self.C32 is not None:
            _prefault(self.C32)  # row-major: the first block already touches nearly every page
        o32 = None if self.C32 is None else self.C32[:, n_old:n_old + b]
        writes = bool(getattr(self.kernel, "_writes_out", False))
        threads = (min(_n_threads(self.N * b * max(1, self.X.shape[1]), _GROW_CHUNK),
                       free_cpus()) if writes else 1)
        # column slices of at most 256 landmarks, their number set by b alone (the values do
        # not depend on how many CPUs were free)
        edges = np.linspace(0, b, -(-b // 256) + 1).astype(int)
        cols = list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))
        fused = writes and self._fused_rbf(XA, b)
        if fused:
            # the built-in RBF: per slice of landmarks, the cross products z_j . x_i (one
            # GEMM, written in place as above), then one compiled sweep computes the kernel
            # values from them and writes their float32 copy (row-major) from cache: no
            # elementwise numpy passes, no second sweep over the 8 N b bytes for the copy
            from .compiled import rbf_finish

            a2 = _sq_norms(XA)
            xsq = self._xsq
            assert xsq is not None  # set by _fused_rbf
            gamma = float(self.kernel.gamma)  # type: ignore[attr-defined]
            none32 = np.empty((0, 0), dtype=np.float32)

            def fill_fused(t: int) -> None:
                for j0, j1 in cols[t::threads]:
                    G = out[:, j0:j1].T
                    np.dot(XA[j0:j1], self.X.T, out=G)
                    rbf_finish(G, a2[j0:j1], xsq, gamma,
                               none32 if o32 is None else o32[:, j0:j1], o32 is not None)

            if threads == 1:
                fill_fused(0)
            else:
                with ThreadPoolExecutor(threads) as ex:
                    list(ex.map(fill_fused, range(threads)))
        elif writes:
            # the new columns are one column-major block: its transpose, k(X_A, X), is
            # C-contiguous and the kernel writes it in place (no row-block temporaries; at
            # N = 200,000 the copies and their page faults cost twice the kernel itself); the
            # threads take column slices (each C-contiguous too), then row blocks of the copy
            # slices of at most 256 landmarks, their number set by b alone: the values (GEMM
            # shapes) do not depend on how many CPUs were free (narrower slices were slower:
            # 64 columns 4.5-5.0 s against 3.2-3.6 s for the 1600 columns at N = 200,000)

            def fill(t: int) -> None:
                for j0, j1 in cols[t::threads]:
                    self.kernel._fill(XA[j0:j1], self.X, out[:, j0:j1].T)

            # the float32 copy transposes column-major into row-major: blocks of 256 rows stay
            # in cache (measured at N = 200,000: 1.3 s against 2.3 s with 8 MB blocks)
            step = 256
            starts = list(range(0, self.N, step))

            def copy32(t: int) -> None:
                for i0 in starts[t::threads]:
                    o32[i0:i0 + step] = out[i0:i0 + step]  # type: ignore[index]

            if threads == 1:
                fill(0)
                if o32 is not None:
                    copy32(0)
            else:
                with ThreadPoolExecutor(threads) as ex:
                    list(ex.map(fill, range(threads)))
                    if o32 is not None:
                        list(ex.map(copy32, range(threads)))
        else:  # a user's callable kernel: row blocks, one thread
            step = max(1, _GROW_CHUNK // max(1, b))
            for i0 in range(0, self.N, step):
                i1 = min(self.N, i0 + step)
                R = self.kernel(self.X[i0:i1], XA)  # rows x b
                out[i0:i1] = R
                if o32 is not None:
                    o32[i0:i1] = R
        self._update_proj(VA, Qd, b)

    def _fused_rbf(self, XA: np.ndarray, b: int) -> bool:
        """Whether :meth:`_add_columns` takes the compiled RBF pass: the built-in
        :class:`~primaldual.kernels.RBF` (not a subclass) on dense float64 rows, a block of at
        least :data:`_FUSED_RBF_MIN` entries, and the GEMM form of ``||x - z||^2`` accurate
        enough (the test of :meth:`RBF._block`; otherwise its exact differences are used).
        Decided by the data and ``b`` alone (never by the load)."""
        X = self.X
        if type(self.kernel) is not RBF or not isinstance(X, np.ndarray) or \
                X.dtype != np.float64 or not X.flags.c_contiguous or X.ndim != 2 or \
                self.N * b < _FUSED_RBF_MIN:
            return False
        if self._xsq is None:
            self._xsq = _sq_norms(X)
        a2 = _sq_norms(XA)
        if not (self._xsq.size and a2.size):
            return False
        err = _GEMM_DIST_ERR * self.kernel.gamma * (float(a2.max()) + float(self._xsq.max()))
        return bool(err <= _PROFILE_TOL)

    def _schur_root(self, XA: np.ndarray, VA: np.ndarray) -> np.ndarray:
        """``Qd`` with ``S = K_AA - V_A V_A^T ~= Qd^-T Qd^-1`` on the kept directions (``b x k``;
        eigenvalues ``<= 10 b eps max`` dropped)."""
        b = XA.shape[0]
        S = self.kernel(XA, XA)
        if VA.shape[1]:
            S -= VA @ VA.T
        S = 0.5 * (S + S.T)
        d, Q = scipy.linalg.eigh(S)
        floor = max(b, 1) * np.finfo(float).eps * max(float(d.max(initial=0.0)), self._scale)
        keep = d > 10 * floor
        Qd = None
        if keep.all():
            # no direction dropped: S = U^T U and Qd = U^{-1} (the same V V^T as any square
            # root of S; every eigenvalue of S is above the truncation floor)
            try:
                Ut = scipy.linalg.cholesky(S, lower=False, check_finite=False)
                Qd = scipy.linalg.solve_triangular(Ut, np.eye(b), lower=False,
                                                   check_finite=False)
            except np.linalg.LinAlgError:
                Qd = None
        if Qd is None:  # eigen-truncated pivots: V_A = R Q_+ D_+^{-1/2}
            Qd = Q[:, keep] / np.sqrt(d[keep])  # b x k
        return Qd

    def _update_proj(self, VA: np.ndarray, Qd: np.ndarray, b: int) -> None:
        # v_new(z) = Qd^T (k(A, z) - VA v_old(z)),  v_old(z) = proj_old^T k(L_old, z)
        m, k = self.proj.shape[1], Qd.shape[1]
        n_old = self.proj.shape[0]
        P = np.zeros((n_old + b, m + k))
        P[:n_old, :m] = self.proj
        P[n_old:, m:] = Qd
        if m:
            P[:n_old, m:] = -self.proj @ (VA.T @ Qd)
        self.proj = P
        self.n_landmarks += b

    def _add(self, A: np.ndarray) -> None:
        if not self.form_V:
            self._add_columns(A)
            return
        m, b = self.proj.shape[1], A.size
        if m + b > self._buf.shape[1]:  # grow the buffer (doubling)
            buf = _empty((self.N, min(self.N, max(2 * self._buf.shape[1], m + b))), order="F")
            buf[:, :m] = self.V
            self._buf = buf
        XA = self.X[A]
        VA = np.ascontiguousarray(self.V[A])  # b x m
        # the Schur complement S = K_AA - V_A V_A^T first (b x b), then its inverse square
        # root Qd (S = Qd^-T Qd^-1 on the kept directions): the new columns are R Qd with the
        # residual columns R = K_NA - V V_A^T, formed row block by row block in one fused pass
        # (kernel block, one GEMM against the old factor, one GEMM by Qd) -- BLAS-3 only, the
        # N x b residual never exists in full
        Qd = self._schur_root(XA, VA)
        k = Qd.shape[1]
        out = self._buf[:, m:m + k]
        step = max(1, _GROW_CHUNK // max(1, b, m))
        starts = list(range(0, self.N, step))
        # built-in kernels evaluate a block with numpy calls that release the GIL (as the
        # GEMMs do), so row blocks run in parallel threads (each BLAS call on one thread);
        # a user's callable kernel is never called from two threads at once
        # (only on CPUs that other processes leave free: free_cpus)
        threads = (min(_n_threads(self.N * max(b, m), _GROW_CHUNK), free_cpus())
                   if getattr(self.kernel, "_writes_out", False) else 1)
        VAt = VA.T

        def part(t: int) -> float:
            acc = 0.0
            for i0 in starts[t::threads]:
                i1 = min(self.N, i0 + step)
                R = self.kernel(self.X[i0:i1], XA)  # rows x b
                if m:
                    R -= self.V[i0:i1] @ VAt
                Vn = R @ Qd
                rs = np.einsum("ij,ij->i", Vn, Vn)
                acc += float(rs.sum())
                self.resid[i0:i1] -= rs  # type: ignore[index]
                out[i0:i1] = Vn
            return acc

        if threads == 1:
            sq = part(0)
        else:
            with ThreadPoolExecutor(threads) as ex:
                sq = sum(ex.map(part, range(threads)))  # fixed order of the partial sums
        self._sq += sq
        self.V = self._buf[:, :m + k]
        self._update_proj(VA, Qd, b)


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

