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

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from primaldual.backends.linsys.direct import factor_kernel, solve_bordered
from primaldual.kernels.gram import gram
from primaldual.validation import check_data_matrix, check_kernel_or_none

__all__ = ["code_matrix", "decode", "fit_lssvm_multiclass", "MulticlassLSSVM", "CODINGS"]

#: Supported coding names.
CODINGS = ("moc", "ova", "ovo", "ecoc")


def _check_n_classes(n_classes: Any) -> int:
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)):
        raise TypeError(f"n_classes must be an integer, got {type(n_classes).__name__}")
    if n_classes < 2:
        raise ValueError(f"n_classes must be >= 2, got {n_classes}")
    return int(n_classes)


def code_matrix(n_classes: int, coding: str = "moc", *, n_bits: int | None = None,
                random_state: int | np.random.Generator | None = None) -> np.ndarray:
    r"""Code matrix ``M`` (n_classes, n_outputs) with entries in ``{-1, 0, +1}``.

    Parameters
    ----------
    n_classes : int
        Number of classes ``m >= 2``.
    coding : {"moc", "ova", "ovo", "ecoc"}
        * ``"moc"`` minimum output coding: ``ceil(log2 m)`` bits, class ``c`` coded by the
          binary digits of ``c`` (``0 -> -1``, ``1 -> +1``; bit 0 first).
        * ``"ova"`` one-vs-all: ``m`` outputs, ``+1`` on the diagonal, ``-1`` elsewhere.
        * ``"ovo"`` one-vs-one: ``m(m-1)/2`` outputs, pair ``(i, j)`` with ``i < j`` in
          lexicographic order, ``M[i] = +1``, ``M[j] = -1``, other classes ``0``.
        * ``"ecoc"`` error-correcting output code: the exhaustive code (all ``2^(m-1) - 1``
          distinct non-constant columns with ``M[0] = +1``, Dietterich & Bakiri) when
          ``n_bits`` is None and ``m <= 7``; otherwise ``n_bits`` (default
          ``ceil(10 log2 m)``) random +-1 columns, best of 50 draws by minimum row Hamming
          distance, no constant column.
    n_bits : int, optional
        Number of ECOC outputs (``"ecoc"`` only).
    random_state : int or Generator, optional
        Seed for the random ECOC.
    """
    m = _check_n_classes(n_classes)
    if coding not in CODINGS:
        raise ValueError(f"coding must be one of {CODINGS}, got {coding!r}")
    if n_bits is not None and coding != "ecoc":
        raise ValueError("n_bits is only used with coding='ecoc'")
    if coding == "moc":
        L = max(1, math.ceil(math.log2(m)))
        c = np.arange(m)[:, None]
        bits = (c >> np.arange(L)[None, :]) & 1
        return np.where(bits == 1, 1, -1).astype(np.int8)
    if coding == "ova":
        M = -np.ones((m, m), dtype=np.int8)
        np.fill_diagonal(M, 1)
        return M
    if coding == "ovo":
        pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
        M = np.zeros((m, len(pairs)), dtype=np.int8)
        for col, (i, j) in enumerate(pairs):
            M[i, col] = 1
            M[j, col] = -1
        return M
    # ecoc
    if n_bits is None and m <= 7:
        cols = []
        for v in range(2 ** (m - 1) - 1):  # class 0 fixed at +1, exclude the all-ones column
            bits = [(v >> (m - 2 - r)) & 1 for r in range(m - 1)]
            cols.append([1] + [1 if bb else -1 for bb in bits])
        return np.array(cols, dtype=np.int8).T
    if n_bits is None:
        n_bits = math.ceil(10 * math.log2(m))
    if isinstance(n_bits, bool) or not isinstance(n_bits, (int, np.integer)) or n_bits < 1:
        raise ValueError(f"n_bits must be a positive integer, got {n_bits!r}")
    rng = np.random.default_rng(random_state)
    best, best_d = None, -1
    for _ in range(50):
        M = np.where(rng.random((m, n_bits)) < 0.5, 1, -1).astype(np.int8)
        for j in range(n_bits):  # no constant column: flip one entry
            if abs(int(M[:, j].sum())) == m:
                M[rng.integers(m), j] *= -1
        dist = (n_bits - M.astype(int) @ M.T.astype(int)) // 2
        np.fill_diagonal(dist, n_bits + 1)
        dmin = int(dist.min())
        if dmin > best_d:
            best, best_d = M, dmin
    return best


_LOSSES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "squared": lambda z: (1.0 - z) ** 2,
    "hinge": lambda z: np.maximum(0.0, 1.0 - z),
    "exponential": lambda z: np.exp(-z),
    "linear": lambda z: -z,
}


def _check_codes(codes: Any) -> np.ndarray:
    M = np.asarray(codes)
    if M.ndim != 2 or M.shape[0] < 2 or M.shape[1] < 1:
        raise ValueError(f"codes must be a 2-D (n_classes >= 2, n_outputs >= 1) array, "
                         f"got shape {M.shape}")
    if not np.all(np.isin(M, (-1, 0, 1))):
        raise ValueError("codes entries must be -1, 0 or +1")
    return M.astype(np.float64)


def decode(scores: np.ndarray, codes: np.ndarray, *, method: str = "hamming",
           loss: str | Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    r"""Class indices from output scores.

    Parameters
    ----------
    scores : ndarray (n_samples, n_outputs)
        Real-valued outputs ``f_l(x)``.
    codes : ndarray (n_classes, n_outputs)
        Code matrix from :func:`code_matrix`.
    method : {"hamming", "loss", "dag"}
        * ``"hamming"``: ``argmin_c sum_l (1 - sign(f_l) M_cl) / 2`` (a 0 code entry, or a 0
          score, counts 1/2). With one-vs-one codes this is max-wins voting.
        * ``"loss"``: ``argmin_c sum_l loss(M_cl f_l)`` (Allwein, Schapire & Singer 2000);
          ``loss`` is ``"squared"`` (``(1-z)^2``, default, the LS-SVM loss), ``"hinge"``,
          ``"exponential"``, ``"linear"`` or a vectorised callable.
        * ``"dag"``: decision DAG for one-vs-one codes [Zhang 8.5.1]: keep a list of
          candidate classes, test the first ``i`` against the last ``j`` with the ``(i, j)``
          output, drop the loser, until one class is left.

    Returns
    -------
    ndarray (n_samples,) of int: class indices; ties go to the lowest class index.
    """
    M = _check_codes(codes)
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim == 1 and M.shape[1] == 1:
        S = S[:, None]
    if S.ndim != 2 or S.shape[1] != M.shape[1]:
        raise ValueError(f"scores must have shape (n_samples, {M.shape[1]}), got {S.shape}")
    if method == "hamming":
        if loss is not None:
            raise ValueError("loss is only used with method='loss'")
        dist = 0.5 * (M.shape[1] - np.sign(S) @ M.T)
        return np.argmin(dist, axis=1)
    if method == "loss":
        if loss is None:
            loss = "squared"
        if isinstance(loss, str):
            if loss not in _LOSSES:
                raise ValueError(f"loss must be one of {sorted(_LOSSES)} or a callable, "
                                 f"got {loss!r}")
            fn = _LOSSES[loss]
        elif callable(loss):
            fn = loss
        else:
            raise TypeError(f"loss must be a string or a callable, got {type(loss).__name__}")
        out = np.empty(S.shape[0], dtype=np.int64)
        step = max(1, 2**22 // max(1, M.size))
        for i0 in range(0, S.shape[0], step):
            Z = S[i0:i0 + step, None, :] * M[None, :, :]
            out[i0:i0 + step] = np.argmin(np.asarray(fn(Z)).sum(axis=2), axis=1)
        return out
    if method == "dag":
        return _decode_dag(S, M)
    raise ValueError(f"method must be 'hamming', 'loss' or 'dag', got {method!r}")


def _decode_dag(S: np.ndarray, M: np.ndarray) -> np.ndarray:
    m = M.shape[0]
    pair_col: dict[tuple[int, int], tuple[int, float]] = {}
    for col in range(M.shape[1]):
        nz = np.flatnonzero(M[:, col])
        if nz.size != 2 or M[nz[0], col] == M[nz[1], col]:
            raise ValueError("method='dag' needs one-vs-one codes (each output: one class +1, "
                             "one class -1, others 0)")
        i, j = int(nz[0]), int(nz[1])
        pair_col[(i, j)] = (col, float(M[i, col]))  # positive score -> class i when sign +1
    out = np.empty(S.shape[0], dtype=np.int64)
    for n in range(S.shape[0]):
        lo, hi = 0, m - 1
        cand = list(range(m))
        while len(cand) > 1:
            i, j = cand[lo], cand[hi]
            if (i, j) not in pair_col:
                raise ValueError(f"no output for the class pair ({i}, {j})")
            col, sgn = pair_col[(i, j)]
            if sgn * S[n, col] >= 0:  # i wins (ties to the lower index)
                cand.pop(hi)
            else:
                cand.pop(lo)
            hi = len(cand) - 1
        out[n] = cand[0]
    return out


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
        M = _check_codes(coding).astype(np.int8)
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
