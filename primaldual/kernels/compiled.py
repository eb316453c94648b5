r"""Compiled (numba, ``cache=True``) loops for the many small products of a multiclass fit
(issue 31): one multiclass fit on small data (iris: 3 sub-problems of 100 rows) spends more
time in the numpy calls around each sub-problem than in its SMO solve, so the box-QP
certificate's per-sample terms run as one compiled pass, and the RBF block of the exact
product ``K[:, S] v_S`` gets its exponent from one compiled pass (its ``exp`` stays numpy's,
vectorised).

This module imports numba: it is imported on first use only, by callers that have numba at
hand (:func:`available`), and every function has a numpy twin at its caller.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import njit

__all__ = ["available", "box_terms", "rbf_exponent"]


def available() -> bool:
    """Whether the compiled loops may be used without a long first compilation: numba is
    already imported in this process (the compiled SMO core runs), so loading or compiling
    these small functions costs well under a second, once (numba's on-disk cache)."""
    return "numba" in sys.modules


@njit(cache=True)
def box_terms(a: np.ndarray, u: np.ndarray, p: np.ndarray, s: np.ndarray, qs: np.ndarray,
              Kr: np.ndarray, d: np.ndarray, has_d: bool, nu_eq: float, nu_sum: float,
              cut: int):  # pragma: no cover - compiled
    r"""The per-sample terms of :func:`primaldual.certificate.box_qp_certificate` in one pass.

    With the margins ``r_j = qs_j Kr_j + p_j - nu_eq s_j - nu_sum + d_j a_j`` and the slacks
    ``xi_j = max(0, -r_j)``: the arrays ``max(0, -a)``, ``max(0, a - u)``, ``|a max(r, 0)|``,
    ``|(u - a) xi|`` and ``xi`` (in this order, stacked as the rows of one ``(5, n)`` array)
    and the maxima of the first four over ``[0, cut)`` and ``[cut, n)`` (a ``(4, 2)`` array,
    0 for an empty range); every entry is computed as the numpy expressions of the caller
    compute it (the same operations in the same order, no fast-math), so they agree
    bit for bit (the caller sums them with numpy). ``ok`` is ``False`` when an entry is not
    finite (the caller then takes its numpy route, which keeps NaN where it appears)."""
    n = a.shape[0]
    terms = np.empty((5, n))
    mx = np.zeros((4, 2))
    ok = True
    for j in range(n):
        aj = a[j]
        r = qs[j] * Kr[j]
        r += p[j]
        if nu_eq != 0.0:
            r -= nu_eq * s[j]
        if nu_sum != 0.0:
            r -= nu_sum
        if has_d:
            r += d[j] * aj
        xi = -r if r < 0.0 else 0.0
        uj = u[j]
        ua = uj - aj
        t0 = -aj if aj < 0.0 else 0.0
        t1 = -ua if ua < 0.0 else 0.0
        t2 = abs(aj * (r if r > 0.0 else 0.0))
        t3 = abs(ua * xi)
        if not (math.isfinite(r) and math.isfinite(aj) and math.isfinite(uj)):
            ok = False
        terms[0, j] = t0
        terms[1, j] = t1
        terms[2, j] = t2
        terms[3, j] = t3
        terms[4, j] = xi
        h = 0 if j < cut else 1
        if t0 > mx[0, h]:
            mx[0, h] = t0
        if t1 > mx[1, h]:
            mx[1, h] = t1
        if t2 > mx[2, h]:
            mx[2, h] = t2
        if t3 > mx[3, h]:
            mx[3, h] = t3
    return terms, mx, ok


@njit(cache=True)
def rbf_exponent(X: np.ndarray, S: np.ndarray, gamma: float,
                 out: np.ndarray) -> None:  # pragma: no cover - compiled
    r"""``out[i, k] = -gamma ||x_i - x_{S_k}||^2`` from the coordinate differences (no
    cancellation; :func:`numpy.exp` of it is the RBF block ``K[:, S]``, vectorised). The
    columns ``x_{S_k}`` are read transposed, so that the innermost loop runs along a row of
    ``out`` (SIMD)."""
    n, d = X.shape
    m = S.shape[0]
    ZT = np.empty((d, m))
    for k in range(m):
        for f in range(d):
            ZT[f, k] = X[S[k], f]
    for i in range(n):
        row = out[i]
        for k in range(m):
            row[k] = 0.0
        for f in range(d):
            xf = X[i, f]
            zf = ZT[f]
            for k in range(m):
                df = xf - zf[k]
                row[k] += df * df
        for k in range(m):
            row[k] = -gamma * row[k]
