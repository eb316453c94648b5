"""The dense regression evidence of the RVM (Zhang 8.7.24), a reference for small N."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg

__all__ = ["rvr_log_evidence"]

_LOG2PI = math.log(2 * math.pi)


def rvr_log_evidence(Phi: Any, t: Any, alpha: Any, beta: float,
                     eval_gradient: bool = False):
    r"""Dense regression evidence ``L(alpha, beta)`` (Zhang 8.7.24) and its gradient.

    ``L = -1/2 [N log 2 pi + log|C| + t^T C^{-1} t]`` with ``C = I/beta + Phi A^{-1} Phi^T``
    formed explicitly (O(N^3); a reference for small N).  ``alpha = inf`` drops a column.
    The gradient is in ``(log alpha, log beta)``:
    ``dL/dlog alpha_m = (S_m - Q_m^2) / (2 alpha_m)`` with ``S_m = phi_m^T C^{-1} phi_m``,
    ``Q_m = phi_m^T C^{-1} t``, and ``dL/dlog beta = (tr C^{-1} - ||C^{-1} t||^2) / (2 beta)``.
    """
    Phi = np.asarray(Phi, dtype=float)
    t = np.asarray(t, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    N = len(t)
    inv_a = np.where(np.isinf(alpha), 0.0, 1.0 / alpha)
    C = np.eye(N) / beta + (Phi * inv_a) @ Phi.T
    cf = scipy.linalg.cho_factor(C, lower=True)
    Ct = scipy.linalg.cho_solve(cf, t)
    L = -0.5 * (N * _LOG2PI + 2 * np.log(np.diag(cf[0])).sum() + t @ Ct)
    if not eval_gradient:
        return float(L)
    CP = scipy.linalg.cho_solve(cf, Phi)
    S = np.einsum("ij,ij->j", Phi, CP)
    Q = Phi.T @ Ct
    g_alpha = 0.5 * (S - Q**2) * inv_a
    Cinv_tr = np.trace(scipy.linalg.cho_solve(cf, np.eye(N)))
    g_beta = 0.5 * (Cinv_tr - Ct @ Ct) / beta
    return float(L), np.append(g_alpha, g_beta)
