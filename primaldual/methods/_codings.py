"""Code matrices and their decoding: the multiclass decompositions' arithmetic, no estimator.

A decomposition of ``m`` classes is a code matrix ``M`` (``m`` rows, one column per binary
output) with entries in ``{-1, 0, +1}``; :func:`decode` turns the outputs' scores back into
classes (Hamming distance, a loss, or the one-vs-one decision DAG). Re-exported by
:mod:`primaldual.multiclass.codings`; :mod:`._multiclass` fits the outputs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["CODINGS", "code_matrix", "decode", "unlabelled_mask"]

#: Supported coding names.
CODINGS = ("moc", "ova", "ovo", "ecoc")


def check_n_classes(n_classes: Any) -> int:
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
    m = check_n_classes(n_classes)
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
        return _ovo_codes(m).copy()
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


@functools.lru_cache(maxsize=64)
def _ovo_codes(m: int) -> np.ndarray:
    """The one-vs-one code matrix of ``m`` classes (built once per ``m``; callers copy it)."""
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    M = np.zeros((m, len(pairs)), dtype=np.int8)
    for col, (i, j) in enumerate(pairs):
        M[i, col] = 1
        M[j, col] = -1
    M.flags.writeable = False
    return M


_LOSSES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "squared": lambda z: (1.0 - z) ** 2,
    "hinge": lambda z: np.maximum(0.0, 1.0 - z),
    "exponential": lambda z: np.exp(-z),
    "linear": lambda z: -z,
}


def check_codes(codes: Any) -> np.ndarray:
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
    M = check_codes(codes)
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
        return decode_dag(S, M)
    raise ValueError(f"method must be 'hamming', 'loss' or 'dag', got {method!r}")


def decode_dag(S: np.ndarray, M: np.ndarray) -> np.ndarray:
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


def unlabelled_mask(y: Any) -> np.ndarray:
    """Boolean mask of unlabelled entries of ``y`` (``NaN``, or ``None`` in object arrays)."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    if y.dtype.kind == "f":
        return np.isnan(y)
    if y.dtype.kind == "O":
        return np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in y],
                        dtype=bool)
    return np.zeros(y.shape[0], dtype=bool)
