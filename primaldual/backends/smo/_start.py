"""Compiled (numba, ``cache=True``) twins of the SMO starting point's numpy code.

A one-vs-one fit of a small data set (iris: 3 sub-problems of 100 rows) runs these once per
sub-problem; as numpy expressions they cost ~10 us each (a dozen calls on arrays of 100
entries), more than their arithmetic.  Each function performs the same floating-point
operations in the same order as the numpy code it replaces (the same bits; tested in
``tests/backends/test_smo_start.py``).  Imported only once numba is loaded in the process
(the compiled SMO core runs); the numpy code is taken otherwise.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["greedy_start", "snap_start"]


@njit(cache=True)
def greedy_start(sign: np.ndarray, C: np.ndarray, pos: float,
                 neg: float):  # pragma: no cover - compiled
    """:func:`primaldual.backends.smo.adapter.greedy_start` without its feasibility test:
    ``(a, rem_pos, rem_neg)``.  On each sign's variables in order, with the running sums
    ``F_k = sum_{j<=k} C_j`` (``np.cumsum``'s sequential sums), the first ``k`` variables with
    ``F_k <= total`` take ``C``, the next one ``max(0, total - F_{k-1})``, the others 0;
    ``rem = total - F_last`` when every variable took its bound, else 0."""
    n = sign.shape[0]
    a = np.zeros(n)
    rem_pos = 0.0
    rem_neg = 0.0
    for side in range(2):
        total = pos if side == 0 else neg
        filled = 0.0
        prev = 0.0
        count = 0
        stopped = False
        for j in range(n):
            if (sign[j] > 0) != (side == 0):
                continue
            count += 1
            filled = filled + C[j]
            if not (filled <= total):   # searchsorted(side="right"): first F_k > total
                v = total - prev
                a[j] = v if v > 0.0 else 0.0   # (Python's max(0.0, v))
                stopped = True
                break
            a[j] = C[j]
            prev = filled
        rem = 0.0 if stopped else total - (prev if count else 0.0)
        if side == 0:
            rem_pos = rem
        else:
            rem_neg = rem
    return a, rem_pos, rem_neg


@njit(cache=True)
def snap_start(alpha: np.ndarray, C: np.ndarray) -> bool:  # pragma: no cover - compiled
    """The start check of :func:`primaldual.backends.smo.solver.solve_arrays` in place: ``False``
    when some ``alpha_k < -eps_k`` or ``alpha_k > C_k + eps_k`` (``eps_k = 1e-12 C_k``, or
    ``1e-12`` for an infinite ``C_k``), else ``alpha_k <= eps_k`` set to 0 and then finite
    ``alpha_k >= C_k - eps_k`` set to ``C_k``; ``True``."""
    n = alpha.shape[0]
    for k in range(n):
        c = C[k]
        eps = 1e-12 * (c if np.isfinite(c) else 1.0)
        if alpha[k] < -eps or alpha[k] > c + eps:
            return False
    for k in range(n):
        c = C[k]
        fin = np.isfinite(c)
        eps = 1e-12 * (c if fin else 1.0)
        v = alpha[k]
        if v <= eps:
            v = 0.0
            alpha[k] = v
        if fin and v >= c - eps:
            alpha[k] = c
    return True
