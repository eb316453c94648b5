r"""Multiclass decompositions: output codings, decoding, and the multiclass LS-SVM.

docs/formulations.md section 9. A coding is a code matrix ``M`` of shape ``(n_classes, n_outputs)``
with entries in ``{-1, 0, +1}``: output ``l`` is a binary problem whose label for a row of class
``c`` is ``M[c, l]``; ``0`` leaves the class out of that sub-problem (one-vs-one).

Multiclass LS-SVM [Suykens 3.8-3.14]: ``n_outputs`` binary LS-SVMs with a block-diagonal KKT
system. Output ``l`` solves ``[[0, y_l^T], [y_l, D_{y_l}(K + I/C)D_{y_l}]] [b_l; a_l] = [0; 1]``.
Since every output that uses the same training rows shares ``K + I/C``, all of them are solved
with ONE Cholesky factor and a multi-column right-hand side
(:func:`~primaldual.backends.linsys.direct.solve_bordered` with a per-column sign matrix);
one-vs-one groups the rows per pair and factors each pair's rows once. Scores
``f_l(x) = sum_i beta_il k(x, x_i) + b_l`` with
``beta_il = M[y_i, l] a_il`` are decoded to a class by minimum Hamming distance (ties: lowest
class index; with one-vs-one this is max-wins voting), by loss-based decoding, or (one-vs-one)
by a decision DAG.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from primaldual.backends.linsys.direct import factor_kernel, solve_bordered
from primaldual.kernels.gram import gram
from primaldual.methods._codings import (  # noqa: F401  (re-exported: the binary estimators' home)
    CODINGS,
    check_codes,
    check_n_classes,
    code_matrix,
    decode,
    decode_dag,
)
from primaldual.validation import check_data_matrix, check_kernel_or_none

__all__ = ["code_matrix", "decode", "fit_lssvm_multiclass", "MulticlassLSSVM", "CODINGS"]


@dataclass
class MulticlassLSSVM:
    """A fitted multiclass LS-SVM (block-diagonal KKT system, one factor per row group).

    Attributes
    ----------
    codes : ndarray (n_classes, n_outputs)
    alpha : ndarray (N, n_outputs)
        Multipliers of each output's signed system (0 for rows left out of an output).
    beta : ndarray (N, n_outputs)
        Predictor coefficients ``beta_il = M[y_i, l] alpha_il``.
    b : ndarray (n_outputs,)
    n_factors : int
        Number of Cholesky factorisations performed (1 for moc/ova/ecoc, one per pair for ovo).
    """

    codes: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    b: np.ndarray
    X: np.ndarray
    kernel: Any
    n_factors: int

    def decision_function(self, X_new: np.ndarray, *, block: int = 4096) -> np.ndarray:
        """Output scores ``f_l(x) = sum_i beta_il k(x, x_i) + b_l`` (n_samples, n_outputs)."""
        X_new = check_data_matrix(X_new, "X_new")
        rows = np.flatnonzero(np.any(self.beta != 0, axis=1))
        Xs, Bs = self.X[rows], self.beta[rows]
        out = np.empty((X_new.shape[0], self.beta.shape[1]))
        for i0 in range(0, X_new.shape[0], block):
            Kb = gram(self.kernel, X_new[i0:i0 + block], Xs)
            out[i0:i0 + block] = Kb @ Bs + self.b[None, :]
        return out

    def predict(self, X_new: np.ndarray, *, method: str = "hamming",
                loss: str | Callable | None = None) -> np.ndarray:
        """Class indices by :func:`decode`."""
        return decode(self.decision_function(X_new), self.codes, method=method, loss=loss)


def fit_lssvm_multiclass(X: np.ndarray, y_idx: np.ndarray, kernel: Any, C: float,
                         coding: str | np.ndarray = "moc", *, n_bits: int | None = None,
                         random_state: int | None = None, bias: bool = True,
                         jitter: float | str | None = None,
                         dtype=np.float64) -> MulticlassLSSVM:
    r"""Fit a multiclass LS-SVM classifier (docs/formulations.md 9) with the KKT backend.

    Output ``l`` is the LS-SVM classifier (docs/formulations.md 7) on the rows ``i`` with
    ``M[y_i, l] != 0`` and labels ``y_il = M[y_i, l]``. Outputs are grouped by their row set;
    each group is solved with ONE Cholesky factor of ``K_rows + I/C`` and a right-hand side of
    ``1 + n_group`` columns (moc, ova, ecoc: a single factor for all outputs; ovo: one factor per
    pair, on that pair's rows only).

    Parameters
    ----------
    X : ndarray (N, n)
    y_idx : ndarray (N,) of int
        Class indices ``0 .. n_classes - 1`` (the estimator layer maps labels to indices).
    kernel : Kernel
    C : float
    coding : {"moc", "ova", "ovo", "ecoc"} or ndarray
        Coding name (see :func:`code_matrix`) or an explicit code matrix.
    """
    kernel = check_kernel_or_none(kernel)
    if kernel is None:
        raise ValueError("fit_lssvm_multiclass needs a kernel object")
    X = check_data_matrix(X)
    y = np.asarray(y_idx)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y_idx must have shape ({X.shape[0]},), got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        if np.issubdtype(y.dtype, np.floating) and np.all(y == np.round(y)):
            y = y.astype(np.int64)
        else:
            raise TypeError("y_idx must hold integer class indices 0..n_classes-1")
    if y.size and y.min() < 0:
        raise ValueError("y_idx must be >= 0")
    if isinstance(coding, str):
        n_classes = int(y.max()) + 1
        M = code_matrix(n_classes, coding, n_bits=n_bits, random_state=random_state)
    else:
        M = check_codes(coding).astype(np.int8)
        if y.max() >= M.shape[0]:
            raise ValueError(f"y_idx has class {y.max()} but codes has {M.shape[0]} rows")
    Mf = M.astype(np.float64)
    S = Mf[y]                      # (N, L) signed labels per output, 0 = row left out
    N, L = S.shape
    mask = S != 0
    alpha = np.zeros((N, L))
    b = np.zeros(L)
    groups: dict[bytes, list[int]] = {}
    for col in range(L):
        groups.setdefault(np.packbits(mask[:, col]).tobytes(), []).append(col)
    n_factors = 0
    for cols in groups.values():
        rows = np.flatnonzero(mask[:, cols[0]])
        if rows.size == 0:
            raise ValueError(f"outputs {cols} have no training rows (a class is missing)")
        Xr = X if rows.size == N else X[rows]
        fac = factor_kernel(Xr, kernel, C, jitter=jitter, dtype=dtype)
        n_factors += 1
        Sg = S[np.ix_(rows, cols)]
        bg, ag = solve_bordered(fac, np.ones_like(Sg), sign=Sg, bias=bias)
        alpha[np.ix_(rows, cols)] = ag
        b[cols] = bg
        del fac
    beta = alpha * S
    return MulticlassLSSVM(codes=M, alpha=alpha, beta=beta, b=b, X=X, kernel=kernel,
                           n_factors=n_factors)
