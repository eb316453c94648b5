r"""Scaling out on Dask: the fixed-size LS-SVM on a ``dask.array`` X.

Everything parallel in primaldual (grid searches, CV folds, multiclass sub-problems) goes
through joblib, so ``with joblib.parallel_config(backend="dask"):`` runs it on a
``dask.distributed`` cluster without any code here. This module adds the one algorithm whose
*data* must stay distributed: the fixed-size LS-SVM (Suykens 6.4; docs/formulations.md 14) with a
Nystrom feature map ``v(x) = S^{-1/2} U^T k(X_L, x)`` built from ``M`` landmark rows.

``V = v(X)`` is computed chunk-wise with ``map_blocks`` (rows never leave their worker); the
bordered KKT system in the low-rank form needs only ``V^T V`` (M x M) and ``V^T R`` (M x k),
chunked reductions
(:func:`primaldual.backends.linsys.iterative.solve_lowrank`); the ``N``-vectors ``a`` are
returned as numpy arrays (``O(N)`` memory, not ``O(N M)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .backends.linsys.iterative import solve_lowrank
from .kernels import LowRankFactor, make_kernel, nystrom_factor

__all__ = ["FixedSizeLSSVM", "fixed_size_lssvm", "nystrom_map"]


def _is_dask(X: Any) -> bool:
    return type(X).__module__.startswith("dask")


def nystrom_map(X: Any, factor: LowRankFactor) -> Any:
    """``V = v(X)`` row-block by row-block (``map_blocks``) for a dask X; plain for numpy."""
    if not _is_dask(X):
        return factor.transform(np.asarray(X, dtype=float))
    M = factor.transform(np.zeros((1, X.shape[1]))).shape[1]
    Xr = X.rechunk({1: -1}).astype(np.float64)
    return Xr.map_blocks(lambda B: factor.transform(B), dtype=np.float64,
                         chunks=(Xr.chunks[0], (M,)))


@dataclass
class FixedSizeLSSVM:
    """A fitted fixed-size LS-SVM: ``f(x) = v(x)^T w + b`` with ``w = V^T beta``.

    Attributes
    ----------
    factor : LowRankFactor (Nystrom on the landmark rows)
    w : ndarray (M,)
    b : float
    alpha : ndarray (N,)  multipliers of the (low-rank) KKT system
    landmarks : ndarray (M,) row indices of the landmarks in X
    classes : ndarray or None (classifier labels; ``classes[1]`` is +1)
    """

    factor: LowRankFactor
    w: np.ndarray
    b: float
    alpha: np.ndarray
    landmarks: np.ndarray
    classes: np.ndarray | None

    def decision_function(self, X: Any) -> Any:
        """``f(x) = v(x)^T w + b`` (dask in, dask out)."""
        return nystrom_map(X, self.factor) @ self.w + self.b

    def predict(self, X: Any) -> Any:
        f = self.decision_function(X)
        if self.classes is None:
            return f
        f = np.asarray(f.compute() if _is_dask(f) else f)
        return self.classes[(f > 0).astype(int)]


def fixed_size_lssvm(X: Any, y: Any, *, C: float = 1.0, kernel: Any = "rbf",
                     gamma: Any = 1.0, rank: int = 100, classifier: bool = True,
                     random_state: int | None = 0, landmarks: Any = None) -> FixedSizeLSSVM:
    r"""Fit the fixed-size LS-SVM on a numpy or ``dask.array`` X (rows chunked).

    LS-SVM classifier (``d = 1``, ``s = y`` in ``{-1, +1}``) or regression (``d = y``) with
    ``K ~= V V^T``: ``[[0, s^T], [s, D_s (V V^T + I/C) D_s]] [b; a] = [0; d]``, solved by
    Sherman-Morrison-Woodbury from ``V^T V`` and ``V^T R`` (chunked reductions for dask).

    Parameters
    ----------
    X : ndarray or dask.array (N, n)
    y : array (N,)  labels (two classes) or real targets; held in memory (O(N))
    C : float  error weight (finite)
    kernel, gamma : kernel specification (as the estimators)
    rank : int  number of Nystrom landmarks ``M``
    landmarks : array of int, optional  explicit landmark rows (default: uniform sample)
    """
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
        raise ValueError(f"rank must be a positive integer, got {rank!r}")
    N = X.shape[0]
    y = np.asarray(y.compute() if _is_dask(y) else y)
    if y.shape != (N,):
        raise ValueError(f"y must have shape ({N},), got {y.shape}")
    if landmarks is None:
        rng = np.random.default_rng(random_state)
        L = np.sort(rng.choice(N, size=min(rank, N), replace=False))
    else:
        L = np.asarray(landmarks, dtype=np.intp).ravel()
        if L.size == 0 or L.min() < 0 or L.max() >= N:
            raise ValueError("landmarks must be row indices in [0, N)")
    XL = X[L]
    XL = np.asarray(XL.compute() if _is_dask(XL) else XL, dtype=np.float64)
    k = make_kernel(kernel, gamma, 3, 0.0, XL)
    factor = nystrom_factor(k, XL, XL.shape[0], landmarks=np.arange(XL.shape[0]))
    V = nystrom_map(X, factor)
    classes = None
    if classifier:
        classes = np.unique(y)
        if classes.shape[0] != 2:
            raise ValueError(f"a classifier needs exactly 2 classes in y, got {classes.shape[0]}")
        s = np.where(y == classes[1], 1.0, -1.0)
        b, a, w = solve_lowrank(V, C, np.ones(N), sign=s, bias=True)
    else:
        b, a, w = solve_lowrank(V, C, y.astype(np.float64), bias=True)
    return FixedSizeLSSVM(factor, np.asarray(w), float(b), np.asarray(a), L, classes)
