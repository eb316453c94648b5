"""Row-block threads for the large memory-bound and BLAS-3 products of the low-rank backend.

Each thread runs single-threaded BLAS on its own block of rows (numpy and BLAS release the
GIL), so the products use the CPUs this process may use without OpenBLAS's own threads, which
spin while they wait for a descheduled partner on a loaded machine. Partial sums are added in
a fixed order: the result does not depend on the scheduling.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.linalg.blas import dsyrk, ssyrk

from ...kernels.gram import free_cpus
from ...kernels.pool import thread_pool

#: at most this many threads per product
MAX_THREADS: int = 2
#: products below this many multiply-adds stay on the calling thread
MIN_WORK: float = 2e7

def n_threads(work: float) -> int:
    """Threads for a product of ``work`` multiply-adds: 1 below :data:`MIN_WORK`, else the
    CPUs other runnable processes do not already keep busy (:func:`free_cpus`, at most
    :data:`MAX_THREADS`). On a loaded machine a second thread waits for a descheduled
    partner at every product (measured: a 50k fit 1.7x slower in wall time)."""
    if work < MIN_WORK or MAX_THREADS <= 1:
        return 1
    return max(1, min(MAX_THREADS, free_cpus()))


def _pool() -> ThreadPoolExecutor:
    """This process's pool of the low-rank products (:func:`~primaldual.kernels.pool.
    thread_pool`; a forked child gets a new one)."""
    return thread_pool("lowrank", MAX_THREADS)


def _blocks(n: int, t: int) -> list[tuple[int, int]]:
    edges = np.linspace(0, n, t + 1).astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def matvec(B: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``B @ x`` (``x`` 1-D, of ``B``'s dtype) by row blocks (an operator with its own
    ``matvec``, :class:`~._factored.FactoredB`, computes it itself)."""
    if not isinstance(B, np.ndarray):
        return B.matvec(x)
    t = n_threads(B.shape[0] * B.shape[1])
    if t == 1:
        return B @ x
    out = np.empty(B.shape[0], dtype=np.result_type(B, x))

    def part(rows):
        np.matmul(B[rows[0]:rows[1]], x, out=out[rows[0]:rows[1]])

    list(_pool().map(part, _blocks(B.shape[0], t)))
    return out


def rmatvec(B: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``B.T @ a`` (``a`` 1-D) by row blocks, the partial sums added in order (an operator:
    its own ``rmatvec``)."""
    if not isinstance(B, np.ndarray):
        return B.rmatvec(a)
    t = n_threads(B.shape[0] * B.shape[1])
    if t == 1:
        return B.T @ a
    parts = list(_pool().map(lambda rows: B[rows[0]:rows[1]].T @ a[rows[0]:rows[1]],
                             _blocks(B.shape[0], t)))
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


def gram_upper(alpha: float, G: np.ndarray) -> np.ndarray:
    """``alpha G^T G`` (upper triangle; the strict lower triangle is zero) by ``syrk`` on
    row blocks, without copying a C- or F-ordered ``G`` on one thread."""
    if G.shape[0] == 0 or G.shape[1] == 0:
        # a factor of rank 0 (a kernel that underflows to 0): BLAS refuses a leading
        # dimension of 0 and prints to stderr, and the product is the empty sum
        return np.zeros((G.shape[1], G.shape[1]))
    t = n_threads(G.shape[0] * G.shape[1] * G.shape[1])

    # float32 rows (the Newton continuation's copy of B): ssyrk, the result in float64
    rk = ssyrk if G.dtype == np.float32 else dsyrk

    def syrk(g):
        if g.flags.f_contiguous and not g.flags.c_contiguous:
            return rk(alpha, g, trans=1).astype(float, copy=False)
        return rk(alpha, g.T, trans=0).astype(float, copy=False)

    if t == 1:
        return syrk(G)
    parts = list(_pool().map(lambda rows: syrk(G[rows[0]:rows[1]]), _blocks(G.shape[0], t)))
    out = parts[0]
    for p in parts[1:]:
        out += p
    return out
