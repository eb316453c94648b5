"""Kernel ridge regression = regularised least squares = LS-SVM without bias
(docs/formulations.md section 11; Zhang 8.2.21-8.2.35; Suykens 3.46-3.63).

Primal (feature space)::

    min_{w,e}  1/2 ||w||^2 + 1/2 sum_i C_i e_i^2
    s.t.       <w, phi(x_i)> + e_i = y_i                    [alpha_i free]

Lagrangian ``L = 1/2||w||^2 + 1/2 sum C_i e_i^2 - sum alpha_i (<w, phi(x_i)> + e_i - y_i)``;
stationarity ``w = sum alpha_i phi(x_i)``, ``alpha_i = C_i e_i``.

Dual::

    max_alpha  y^T alpha - 1/2 alpha^T (K + I/C) alpha      optimality: (K + I/C) alpha = y

Zhang's RLS ``(K + gamma_A l I)^{-1} y`` is the same with ``1/C = gamma_A l``; scikit-learn's
``KernelRidge(alpha=a)`` is ``C = 1/a``; the Gaussian-process posterior mean with noise variance
``sigma_n^2 = 1/C`` is the same predictor, and the latent function's variance
``k(x,x) - k_x^T (K + I/C)^{-1} k_x`` comes from the same factor (:meth:`KernelRidge.predict`
with ``return_std=True``); a new observation's predictive variance (Suykens (3.60), whose
``gamma`` is ``C``) adds the noise variance ``1/C``.
Recovery: ``beta = alpha``, ``b = 0``, ``e = alpha / C``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from .lssvm import LSSVR

__all__ = ["KernelRidge"]


class KernelRidge(LSSVR):
    """Kernel ridge regression / LS-SVM without bias (docs/formulations.md section 11).

    Primal ``min 1/2||w||^2 + 1/2 sum C_i e_i^2  s.t.  <w, phi(x_i)> + e_i = y_i [alpha_i]``;
    dual ``max y^T alpha - 1/2 alpha^T (K + I/C) alpha``, i.e. ``(K + I/C) alpha = y``.

    Parameters
    ----------
    C : float, default 1.0
        Error weight; scikit-learn's ``KernelRidge(alpha)`` is ``C = 1/alpha``, Zhang's
        ``gamma_A l`` is ``1/C``, the GP noise variance is ``1/C``.
    kernel, gamma, degree, coef0 : kernel specification.
    backend : {"auto", "cvxpy", "kkt"}, default "auto"
    form : {"dual", "primal"}, default "dual"
    solver : str, optional (CVXPY solver)
    tol : float, default 1e-8
    verbose : bool
    """

    _name = "kernel ridge"
    _parameter_constraints = {k: v for k, v in LSSVR._parameter_constraints.items()
                              if k != "fit_intercept"}

    def __init__(self, C: float = 1.0, kernel: Any = "rbf", gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, backend: str = "auto", form: str = "dual",
                 solver: str | None = None, tol: float = 1e-8, verbose: bool = False) -> None:
        self._store_init_args(locals())

    #: ``predict(return_std=True)`` reads the training rows: kept in pickles
    _predict_reads_X_fit = True

    @property
    def _has_bias(self) -> bool:  # type: ignore[override]
        return False

    def predict(self, X: Any, return_std: bool = False):
        """Predictions ``f(x) = sum_i alpha_i k(x, x_i)``; with ``return_std=True`` also the
        Gaussian-process posterior standard deviation ``sqrt(k(x,x) - k_x^T (K + I/C)^{-1}
        k_x)`` of the noise-free latent function (uniform ``C`` only); a new observation's
        predictive variance adds the noise variance ``1/C`` to its square."""
        f = super().predict(X)
        if not return_std:
            return f
        check_is_fitted(self, "beta_")
        Xv = validate_data(self, X, dtype=np.float64, reset=False)
        C = float(self.C)
        A = np.asarray(self.kernel_(self.X_fit_), dtype=float)
        A[np.diag_indices_from(A)] += 1.0 / C
        Kx = np.asarray(self.kernel_(self.X_fit_, Xv), dtype=float)
        Lc = np.linalg.cholesky(A)
        V = np.linalg.solve(Lc, Kx)
        kxx = np.array([float(self.kernel_(Xv[i:i + 1])[0, 0]) for i in range(Xv.shape[0])])
        var = np.maximum(kxx - np.sum(V * V, axis=0), 0.0)
        return f, np.sqrt(var)
