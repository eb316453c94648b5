"""Gram blocks and the fused, chunked kernel mat-vec that fits and certificates use.

``kernel_matvec(kernel, X, v, columns=S)`` returns ``f = K[:, S] v`` with
``K[i, j] = k(x_i, z_j)``, computed in row chunks straight from ``X``: no ``N x N``
array is ever formed, and temporaries stay near ``MATVEC_CHUNK`` floats.  Every
``K v`` of the library (the certificate's ``f = K[:, S] beta_S``, ``||w||^2 = beta^T K beta``,
the structured operators of the modelling layer) goes through it.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas as _blas
from threadpoolctl import ThreadpoolController

from .cpus import free_cpus  # (the one CPU rule; its users import it from here too)
from .functions import (
    Kernel,
    Linear,
    Precomputed,
    _as_rows,
    _DotProduct,
    _sq_dists,
    _Stationary,
    as_2d,
)

__all__ = ["SharedGram", "kernel_columns", "kernel_matvec", "matvec_cache"]

#: Elements of one kernel block in :func:`kernel_matvec` (2 MB: the block stays in cache
#: between its evaluation and the product, measured fastest on one core).
MATVEC_CHUNK: int = 2**18

#: Most worker threads :func:`kernel_matvec` uses for one large product (row blocks of a
#: built-in kernel are evaluated in parallel; each thread runs BLAS single-threaded).
MATVEC_THREADS: int = 4

_CACHE: contextvars.ContextVar[dict | None] = contextvars.ContextVar("kernel_matvec_cache",
                                                                     default=None)


@contextmanager
def matvec_cache() -> Iterator[dict]:
    """Evaluation context in which :func:`kernel_matvec` computes each product once.

    Inside ``with matvec_cache():`` a product ``K(X, Z[S]) v`` asked for again (same
    kernel object, same ``X`` and ``Z`` memory, same nonzero columns ``S`` and the same
    values ``v_S``, compared bit for bit) is returned from memory.  A fit opens one
    context around solve, recovery, certificate and fitted attributes, so the objective,
    the constraint values, the KKT residuals and ``||w||^2`` all share the one product
    ``f = K[:, S] beta_S``.  The cache holds references to its arrays and is dropped
    when the context ends; nested contexts share the outer one.
    """
    current = _CACHE.get()
    if current is not None:
        yield current
        return
    cache: dict = {}
    token = _CACHE.set(cache)
    try:
        yield cache
    finally:
        _CACHE.reset(token)
        cache.clear()


_CONTROLLER: list[ThreadpoolController] = []


#: the BLAS thread limit set by the innermost :func:`blas_threads` context (None: none)
_BLAS_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("blas_limit",
                                                                         default=None)


def one_blas_thread():
    """Context limiting BLAS to one thread (:func:`blas_threads` with ``n = 1``)."""
    return blas_threads(1)


#: the exit stack of the innermost :func:`one_blas_thread_on_demand` context (None: none)
_ON_DEMAND: contextvars.ContextVar[ExitStack | None] = contextvars.ContextVar(
    "blas_on_demand", default=None)


@contextmanager
def one_blas_thread_on_demand() -> Iterator[None]:
    """Context in which the first product that asks for one BLAS thread
    (:func:`want_one_blas_thread`) sets the limit, kept until the context ends: a loop of
    small fits (the binary sub-problems of a multiclass fit) pays for setting it (20-40 us)
    once, and not at all when none of its products is large enough to ask."""
    if _BLAS_LIMIT.get() == 1:
        yield
        return
    with ExitStack() as stack:
        token = _ON_DEMAND.set(stack)
        try:
            yield
        finally:
            _ON_DEMAND.reset(token)


def want_one_blas_thread() -> bool:
    """Inside :func:`one_blas_thread_on_demand`: make sure BLAS runs on one thread from now
    until that context ends; ``False`` outside one (the caller limits its own call)."""
    if _BLAS_LIMIT.get() == 1:
        return True
    stack = _ON_DEMAND.get()
    if stack is None:
        return False
    stack.enter_context(one_blas_thread())
    return True


@contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """Context limiting BLAS to ``n`` threads. The controller (which scans the loaded shared
    libraries, about 5 ms) is created once per process; inside a context with the same limit
    this one does nothing (setting and restoring a limit costs 20-40 us, which a one-vs-one
    fit of 45 small products would pay per product)."""
    n = max(1, int(n))
    if _BLAS_LIMIT.get() == n:
        yield
        return
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    token = _BLAS_LIMIT.set(n)
    try:
        with _CONTROLLER[0].limit(limits=n, user_api="blas"):
            yield
    finally:
        _BLAS_LIMIT.reset(token)


def _mem_key(A: Any) -> tuple:
    if sp.issparse(A):  # a CSR matrix: the memory of its three arrays
        return (A.format, A.shape) + tuple(_mem_key(a) for a in (A.data, A.indices, A.indptr))
    return (A.__array_interface__["data"][0], A.shape, A.strides, A.dtype.str)


def kernel_columns(kernel: Kernel, X: np.ndarray, idx: Any) -> np.ndarray:
    """``K[:, idx]`` (``N x len(idx)``) without forming ``K``.

    For a :class:`Precomputed` kernel ``X`` is the kernel matrix itself and its columns
    are returned.
    """
    idx = np.asarray(idx, dtype=np.intp).ravel()
    if isinstance(kernel, Precomputed):
        return np.array(X[:, idx], dtype=np.float64)
    return kernel(X, X[idx])


class SharedGram:
    r"""The Gram matrix of a training set, computed once and shared by sub-problems on
    subsets of its rows (the binary fits of a multiclass decomposition).

    ``K = kernel(X_full)`` (``N x N``, float64, exactly symmetric, the kernel's own
    :meth:`~primaldual.kernels.Kernel.__call__`), and ``rows`` the rows of ``X_full`` that
    one sub-problem sees, so its kernel matrix is ``K[rows][:, rows]`` and
    ``x_sub[i] = X_full[rows[i]]``. A sub-problem's products ``K_sub v`` (recovery,
    certificate) are gathers from ``K`` instead of new kernel evaluations, and the SMO
    backend reads its kernel columns from ``K`` (``kernel="precomputed"`` with row indices).

    Parameters
    ----------
    kernel : Kernel
        The kernel ``K`` was computed with (the sub-problems' own kernel object).
    K : ndarray (N, N)
        ``kernel(X_full)``.
    rows : ndarray (n,) of int, optional
        Rows of ``X_full`` (default all of them).
    """

    __slots__ = ("kernel", "K", "rows")

    def __init__(self, kernel: Kernel, K: np.ndarray, rows: Any = None) -> None:
        self.kernel = kernel
        self.K = K
        self.rows = (np.arange(K.shape[0], dtype=np.int64) if rows is None
                     else np.asarray(rows, dtype=np.int64))

    @classmethod
    def of(cls, kernel: Kernel, X: np.ndarray) -> SharedGram:
        """``kernel(X)`` once (upper triangle evaluated, mirrored; the kernel's own
        diagonal)."""
        return cls(kernel, np.ascontiguousarray(kernel(X), dtype=np.float64))

    @property
    def n(self) -> int:
        return int(self.rows.shape[0])

    def subset(self, idx: Any) -> SharedGram:
        """The same matrix for the sub-problem on ``rows[idx]``."""
        return SharedGram(self.kernel, self.K, self.rows[np.asarray(idx, dtype=np.intp)])

    def block(self) -> np.ndarray:
        """``K_sub = K[rows][:, rows]`` (a new array)."""
        return self.K[np.ix_(self.rows, self.rows)]

    def matvec(self, v: np.ndarray) -> np.ndarray:
        r"""``K_sub v = \sum_{j: v_j \neq 0} K[rows, rows_j] v_j`` (``v``: (n,) or (n, k));
        only the columns of the nonzero entries of ``v`` are read."""
        v = np.asarray(v, dtype=np.float64)
        if v.shape[0] != self.rows.shape[0]:
            raise ValueError(f"v has {v.shape[0]} rows, expected {self.rows.shape[0]}")
        nz = (v != 0) if v.ndim == 1 else np.any(v != 0, axis=tuple(range(1, v.ndim)))
        S = np.flatnonzero(nz)
        if S.size == 0:
            return np.zeros(v.shape)
        B = self.K[np.ix_(self.rows, self.rows[S])]
        if B.size >= 9216 and not want_one_blas_thread():  # (see kernel_matvec)
            with one_blas_thread():
                return B @ v[S]
        return B @ v[S]


def kernel_matvec(kernel: Kernel, X: Any, v: Any, columns: Any = None, Z: Any = None,
                  chunk_elements: int = MATVEC_CHUNK) -> np.ndarray:
    r"""Fused chunked product ``f_i = \sum_j k(x_i, z_j) v_j``.

    Parameters
    ----------
    kernel : Kernel
    X : ndarray, shape (n, d)
        Rows ``x_i``; for a :class:`Precomputed` kernel the ``n x m`` kernel block itself.
    v : ndarray, shape (m,) or (m, k)
        Coefficients on the columns (after ``columns`` is applied).
    columns : array of int, optional
        Column subset ``S``: the product is ``K[:, S] v`` (``v`` has ``len(S)`` rows).
        This is how a fit evaluates ``f = K[:, S] beta_S`` over its support only.
    Z : ndarray, shape (m, d), optional
        Column points (default ``X``; ignored for a precomputed kernel).

    Returns
    -------
    ndarray, shape (n,) or (n, k)
        ``K(X, Z[S]) v``.  Row chunks of at most ``chunk_elements / |S|`` rows are
        evaluated into one reused buffer and multiplied at once, so memory stays
        ``O(n + chunk_elements)``.
    """
    v = np.asarray(v, dtype=np.float64)
    pre = isinstance(kernel, Precomputed)
    if sp.issparse(X) and not pre:  # sparse rows stay sparse (CSR): blocks from sparse products
        X = _as_rows(X, "X")
    else:
        X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        if X.ndim != 2:
            X = as_2d(X, "X")
    if Z is None or pre:
        Zb = X
    else:
        Zb = _as_rows(Z, "Z") if sp.issparse(Z) else np.asarray(Z, dtype=np.float64)
    m_all = X.shape[1] if pre else Zb.shape[0]
    cols = np.arange(m_all) if columns is None else np.asarray(columns, dtype=np.intp).ravel()
    if v.shape[0] != cols.shape[0]:
        raise ValueError(f"v has {v.shape[0]} rows, expected {cols.shape[0]} (one per column)")
    # only the columns with a nonzero coefficient contribute: K[:, S] v_S
    nz = (v != 0) if v.ndim == 1 else np.any(v != 0, axis=tuple(range(1, v.ndim)))
    if not nz.all():
        cols, v = cols[nz], v[nz]
    cache = _CACHE.get()
    key = None
    if cache is not None:
        key = (id(kernel), _mem_key(X), _mem_key(Zb), cols.tobytes(), v.shape, v.tobytes())
        hit = cache.get(key)
        if hit is not None:
            return hit[0].copy()
    # one BLAS thread: each chunk's GEMM has the tiny inner dimension d and is followed by
    # single-threaded elementwise passes, so extra threads only add synchronisation (measured
    # 4x slower on a shared 2-core machine, N = 5000, |S| = 1000)
    # (even one small block: a threaded GEMM of 360 x 64 x 150 took 20 ms instead of 1 ms
    # with the other core busy); OpenBLAS runs a GEMM of at most 2^18 multiply-adds and a
    # GEMV of fewer than 9216 entries on one thread anyway (its SMP thresholds)
    nm = X.shape[0] * cols.shape[0]
    if (nm < 9216 and nm * (1 if pre else X.shape[1]) <= 1 << 18) or want_one_blas_thread():
        out = _matvec(kernel, X, Zb, cols, v, pre, chunk_elements)
    else:
        with one_blas_thread():
            out = _matvec(kernel, X, Zb, cols, v, pre, chunk_elements)
    if cache is not None:
        cache[key] = (out, kernel, X, Zb)  # the references keep the memory keys valid
        return out.copy()
    return out


def _n_threads(n_entries: int, chunk_elements: int) -> int:
    """Worker threads for a product of ``n_entries`` kernel evaluations: up to the CPUs this
    process may use (at most :data:`MATVEC_THREADS`), one per ``4 * chunk_elements``
    entries, so that small products stay on the calling thread.  Its callers take the
    smaller of this and :func:`~primaldual.kernels.cpus.free_cpus` (the one CPU rule)."""
    if n_entries < 8 * max(1, int(chunk_elements)):
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(MATVEC_THREADS, cpus, n_entries // (4 * max(1, int(chunk_elements)))))


def _matvec(kernel: Kernel, X: np.ndarray, Zb: np.ndarray, cols: np.ndarray, v: np.ndarray,
            pre: bool, chunk_elements: int) -> np.ndarray:
    n, m = X.shape[0], cols.shape[0]
    out = np.zeros((n,) + v.shape[1:])
    if n == 0 or m == 0:
        return out
    if pre:
        return X[:, cols] @ v
    every = m == Zb.shape[0] and np.array_equal(cols, np.arange(m))
    Zc = Zb if every else Zb[cols]
    if type(kernel) is Linear:  # K v = X (Z^T v): never a block at all
        return X @ (Zc.T @ v)
    symmetric = every and Zb is X and n > 1
    if not symmetric and n * m <= chunk_elements and hasattr(kernel, "_fill"):
        B = np.empty((n, m))  # one block: no chunk loop
        kernel._fill(X, Zc, B)
        return B @ v
    # built-in kernels evaluate a block with numpy calls that release the GIL (GEMM with one
    # BLAS thread, exp), so row blocks run in parallel threads; a user's callable kernel is
    # never called from two threads at once
    # (on the CPUs other processes leave free, the one CPU rule: the blocks are dealt to the
    # threads in a fixed order, so a thread whose CPU another process holds delays the product)
    threads = (min(_n_threads(n * m // (2 if symmetric else 1), chunk_elements), free_cpus())
               if getattr(kernel, "_writes_out", False) else 1)
    if symmetric:
        # symmetric K v: only the blocks on and below the diagonal are evaluated, each
        # used twice (half the kernel evaluations of the plain loop)
        step = max(1, min(n, int(chunk_elements) // n))
        starts = list(range(0, n, step))

        def sym_part(t: int) -> np.ndarray:
            acc = out if t == 0 else np.zeros_like(out)
            buf = np.empty(step * n)
            for i0 in starts[t::threads]:  # round-robin: every thread gets short and long rows
                i1 = min(n, i0 + step)
                B = buf[: (i1 - i0) * i1].reshape(i1 - i0, i1)
                kernel._fill(X[i0:i1], X[:i1], B)
                acc[i0:i1] += B @ v[:i1]
                if i0 > 0:
                    acc[:i0] += B[:, :i0].T @ v[i0:i1]
            return acc

        if threads == 1:
            return sym_part(0)
        with ThreadPoolExecutor(threads) as ex:
            parts = list(ex.map(sym_part, range(threads)))
        for acc in parts[1:]:  # fixed order: the result does not depend on scheduling
            out += acc
        return out
    step = max(1, min(n, int(chunk_elements) // m))
    starts = list(range(0, n, step))

    def rows_part(t: int) -> None:
        buf = np.empty(step * m)
        for i0 in starts[t::threads]:
            i1 = min(n, i0 + step)
            B = buf[: (i1 - i0) * m].reshape(i1 - i0, m)
            kernel._fill(X[i0:i1], Zc, B)
            np.dot(B, v, out=out[i0:i1])

    if threads == 1:
        rows_part(0)
    else:
        with ThreadPoolExecutor(threads) as ex:
            list(ex.map(rows_part, range(threads)))
    return out


# ---------------------------------------------------------------------------
# dense Gram blocks: one GEMM/SYRK and in-place elementwise updates (rbf / linear / poly)
# ---------------------------------------------------------------------------


def dense_form(kernel: Any) -> str | None:
    """How a dense block of ``kernel`` is computed in place from one GEMM/SYRK: ``"dist"`` (the
    kernel's ``_profile`` of squared distances: RBF, rational quadratic, periodic), ``"dot"``
    (its ``_profile`` of ``gamma x^T z + coef0``: polynomial, sigmoid), ``"linear"``, or
    ``None`` (the kernel object is called). The elementwise formula is the kernel class's own
    (:meth:`Kernel._profile`); nothing here restates it."""
    if isinstance(kernel, Linear):
        return "linear"
    if isinstance(kernel, _Stationary) and type(kernel)._block is _Stationary._block:
        return "dist"
    if isinstance(kernel, _DotProduct) and type(kernel)._block is _DotProduct._block:
        return "dot"
    return None


def _norms(A: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", A, A)


def gram(kernel: Any, A: np.ndarray, B: np.ndarray | None = None, *, dtype=np.float64,
         _form: str | None = None) -> np.ndarray:
    """Kernel block ``K_ij = k(A_i, B_j)`` as a C-ordered array of ``dtype`` (``float32`` keeps
    the block and its GEMM in single precision); see :func:`dense_form`."""
    form = dense_form(kernel) if _form is None else _form
    if form is None:
        K = kernel(A) if B is None else kernel(A, B)
        return np.asarray(K, dtype=dtype)
    Aa = np.asarray(A, dtype=dtype)
    Ba = Aa if B is None else np.asarray(B, dtype=dtype)
    if form == "dist":
        a2 = _norms(Aa)
        return kernel._profile(_sq_dists(Aa, Ba, a2, a2 if B is None else _norms(Ba)))
    K = Aa @ Ba.T
    if form == "dot":
        K *= kernel.gamma
        K += kernel.coef0
        return kernel._profile(K)
    return K


def kernel_diag(kernel: Any, X: np.ndarray) -> np.ndarray:
    """``k(x_i, x_i)`` per row: the kernel's own ``diag`` (a plain callable: one call per row)."""
    diag = getattr(kernel, "diag", None)
    if diag is not None:
        return np.asarray(diag(X), dtype=float)
    return np.array([float(np.asarray(kernel(X[i:i + 1], X[i:i + 1]))[0, 0])
                     for i in range(X.shape[0])])


def fill_gram_lower(X: np.ndarray, kernel: Any, G: np.ndarray, block: int = 256, *,
                    form: str | None = None) -> None:
    """Write the lower triangle of the Gram matrix of ``X`` into the F-ordered ``G`` in place
    (``kernel`` of a :func:`dense_form`).

    One SYRK (half the flops of ``X @ X.T``) then the kernel's own ``_profile`` applied in place
    to column blocks of the lower triangle, the blocks shared among up to :data:`MATVEC_THREADS`
    worker threads. The strict upper triangle is unspecified (garbage, never read).
    """
    N = X.shape[0]
    dt = G.dtype
    form = dense_form(kernel) if form is None else form
    if form is None:
        raise ValueError(f"{kernel!r} has no in-place dense form; call it instead")
    Xf = np.asfortranarray(X, dtype=dt)
    syrk = _blas.get_blas_funcs("syrk", (G,))
    alpha = -2.0 if form == "dist" else (kernel.gamma if form == "dot" else 1.0)
    out = syrk(alpha, Xf, beta=0.0, c=G, trans=0, lower=1, overwrite_c=1)
    if not np.shares_memory(out, G):  # pragma: no cover - defensive: BLAS wrapper copied
        G[...] = out
    if form == "linear":
        return
    sq = _norms(Xf).astype(dt) if form == "dist" else None
    starts = list(range(0, N, block))
    # the column blocks are disjoint and numpy's in-place ufuncs release the GIL, so they run
    # in worker threads (round-robin: every thread gets long and short columns of the triangle)
    threads = min(_n_threads(N * N // 2, MATVEC_CHUNK), len(starts), free_cpus())

    def columns(t: int) -> None:
        for j0 in starts[t::threads]:
            j1 = min(N, j0 + block)
            V = G[j0:, j0:j1]
            if sq is not None:  # -2 x.z + |x|^2 + |z|^2 = ||x - z||^2
                V += sq[j0:, None]
                V += sq[None, j0:j1]
                np.maximum(V, 0.0, out=V)
            else:
                V += kernel.coef0
            kernel._profile(V)

    if threads <= 1:
        columns(0)
    else:
        with ThreadPoolExecutor(threads) as ex:
            list(ex.map(columns, range(threads)))


def sorted_csr(X: Any) -> Any:
    """Sparse (or dense) ``X`` as a float64 CSR matrix with sorted, distinct column indices per
    row (a copy when it was not one already): the layout the compiled cores and the kernels
    read."""
    A = X if sp.issparse(X) and X.format == "csr" else sp.csr_matrix(X)
    if A.dtype != np.float64:
        A = A.astype(np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    return A
