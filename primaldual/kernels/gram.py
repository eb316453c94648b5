"""Gram blocks and the fused, chunked kernel mat-vec that fits and certificates use.

``kernel_matvec(kernel, X, v, columns=S)`` returns ``f = K[:, S] v`` with
``K[i, j] = k(x_i, z_j)``, computed in row chunks straight from ``X``: no ``N x N``
array is ever formed, and temporaries stay near ``CHUNK_ELEMENTS`` floats.  Every
``K v`` of the library (the certificate's ``f = K[:, S] beta_S``, ``||w||^2 = beta^T K beta``,
the structured operators of the modelling layer) goes through it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .functions import CHUNK_ELEMENTS, Kernel, Linear, Precomputed, _as_2d

__all__ = ["kernel_columns", "kernel_matvec"]


def kernel_columns(kernel: Kernel, X: np.ndarray, idx: Any) -> np.ndarray:
    """``K[:, idx]`` (``N x len(idx)``) without forming ``K``.

    For a :class:`Precomputed` kernel ``X`` is the kernel matrix itself and its columns
    are returned.
    """
    idx = np.asarray(idx, dtype=np.intp).ravel()
    if isinstance(kernel, Precomputed):
        return np.array(X[:, idx], dtype=np.float64)
    return kernel(X, X[idx])


def kernel_matvec(kernel: Kernel, X: Any, v: Any, columns: Any = None, Z: Any = None,
                  chunk_elements: int = CHUNK_ELEMENTS) -> np.ndarray:
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
    if isinstance(kernel, Precomputed):
        K = np.asarray(X, dtype=np.float64)
        if columns is not None:
            K = K[:, np.asarray(columns, dtype=np.intp).ravel()]
        if K.shape[1] != v.shape[0]:
            raise ValueError(f"v has {v.shape[0]} rows, the kernel block has {K.shape[1]} columns")
        return K @ v
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        X = _as_2d(X, "X")
    Zc = X if Z is None else np.asarray(Z, dtype=np.float64)
    if columns is not None:
        Zc = Zc[np.asarray(columns, dtype=np.intp).ravel()]
    n, m = X.shape[0], Zc.shape[0]
    if v.shape[0] != m:
        raise ValueError(f"v has {v.shape[0]} rows, expected {m} (one per column)")
    out = np.zeros((n,) + v.shape[1:])
    if n == 0 or m == 0:
        return out
    if type(kernel) is Linear:  # K v = X (Z^T v): never a block at all
        return X @ (Zc.T @ v)
    step = max(1, min(n, int(chunk_elements) // m))
    buf = np.empty(step * m)
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        B = buf[: (i1 - i0) * m].reshape(i1 - i0, m)
        kernel._fill(X[i0:i1], Zc, B)
        np.dot(B, v, out=out[i0:i1])
    return out
