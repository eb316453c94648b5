r"""The compiled part of a lean one-vs-one pair's finish (:func:`._pair._finish`).

One numba call (``cache=True``) computes, from the dual point ``a``, the labels ``y``, the
record's bounds ``u`` and linear term ``p``, the fitted bounds ``upper`` and ``K beta`` (the
kernel recomputed at ``beta = a y``, never the solver's gradient), everything the box-QP
certificate and the fitted attributes need beyond it:

* the per-sample terms of :func:`primaldual.certificate.box_qp_certificate` and their maxima
  (:func:`primaldual.kernels.compiled.box_terms`, the same operations as the numpy route);
* the support split, class grouping and sorted ``|a|`` of ``_set_fitted``
  (:func:`primaldual.kernels.compiled.support_layout`);
* the five inner products of the certificate: ``beta^T K beta``, ``u^T xi``, ``p^T a``,
  ``y^T a`` and ``1^T a`` -- summed here in index order, where the generic route's numpy
  calls (BLAS ``ddot``, pairwise summation) may round differently: the two routes agree to a
  few ulps of the sums, not bit for bit (tests/multiclass/test_pair_route.py).

This module imports numba: :mod:`._pair` imports it only once numba is loaded in the process
(the compiled SMO core or the certificate's compiled terms run).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels.compiled import box_terms, support_layout

__all__ = ["pair_terms"]


@njit(cache=True)
def pair_terms(a: np.ndarray, y: np.ndarray, u: np.ndarray, p: np.ndarray,
               upper: np.ndarray, Kb: np.ndarray, nu_eq: float,
               nu_sum: float):  # pragma: no cover - compiled
    r"""``(terms, mx, ok, sums, sv, free, bounded, n_pos, spectrum)`` of one pair.

    ``terms``, ``mx``, ``ok``: :func:`~primaldual.kernels.compiled.box_terms` of the margins
    ``r_j = y_j (K beta)_j + p_j - nu_eq y_j - nu_sum`` (``nu_eq = -b``; ``nu_sum = rho`` for
    nu-SVC, else 0), the record's signs being ``y``; ``sums`` = ``[beta^T K beta, u^T xi,
    p^T a, y^T a, 1^T a, min upper, max upper]`` with ``beta = a y`` and ``xi = terms[4]``
    (the bounds' extremes: the relative gap's unit); the rest is
    :func:`~primaldual.kernels.compiled.support_layout` of ``a`` (``n_pos = -1``: a
    non-finite entry)."""
    n = a.shape[0]
    terms, mx, ok = box_terms(a, u, p, y, y, Kb, a, False, nu_eq, nu_sum, n)
    sums = np.zeros(7)
    wkw = 0.0
    uxi = 0.0
    pa = 0.0
    sa = 0.0
    tot = 0.0
    for j in range(n):
        aj = a[j]
        wkw += (aj * y[j]) * Kb[j]
        uxi += u[j] * terms[4, j]
        pa += p[j] * aj
        sa += y[j] * aj
        tot += aj
    sums[0] = wkw
    sums[1] = uxi
    sums[2] = pa
    sums[3] = sa
    sums[4] = tot
    lo = hi = upper[0]
    for j in range(1, n):
        uj = upper[j]
        if uj < lo or uj != uj:     # (a NaN bound stays: the caller's test then fails)
            lo = uj
        if uj > hi:
            hi = uj
    sums[5] = lo
    sums[6] = hi
    sv, free, bnd, n_pos, spectrum = support_layout(a, upper, y, True, a)
    return terms, mx, ok, sums, sv, free, bnd, n_pos, spectrum
