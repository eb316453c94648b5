r"""Kernel PLS, kernel NIPALS with deflation (Rosipal & Trejo 2001; Zhang 8.2.36-8.2.43 with its
normalisations corrected)::

    repeat until t converges:  t = Omega_c u, t <- t/||t||;  c = Y^T t;  u = Y c, u <- u/||u||
    deflate:  Omega_c <- (I - t t^T) Omega_c (I - t t^T),   Y <- Y - t t^T Y
    predict:  Y_new = Omega_c(X_new, X) U (T^T Omega_c U)^{-1} T^T Y   (+ mean of Y)

with ``Omega_c`` the centred kernel of the undeflated data in the prediction formula.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..engine import atomic_fit
from .kpca import _check_n_components, _kernel_from, center_gram

__all__ = ["KernelPLSRegression"]




# ----------------------------------------------------------------------------- kernel PLS
class KernelPLSRegression(TransformerMixin, RegressorMixin, MultiOutputMixin, BaseEstimator):
    r"""Kernel partial least squares regression by kernel NIPALS with deflation (Zhang 8.2.4;
    Rosipal & Trejo 2001; module docstring).

    With ``kernel="linear"`` the predictions equal scikit-learn's
    :class:`~sklearn.cross_decomposition.PLSRegression` (same ``scale``).

    Parameters
    ----------
    n_components : int, default 2
    kernel : str, Kernel or callable, default "rbf"
    gamma, degree, coef0 : kernel parameters (``gamma=None``: ``1/n_features``)
    scale : bool, default False
        Standardise the columns of ``X`` and ``Y`` first (scikit-learn's ``scale=True``).
    tol : float, default 1e-12
        NIPALS stops when ``||t - t_old|| < tol`` (one step for a single output).
    max_iter : int, default 500

    Attributes
    ----------
    x_scores_ : ndarray (N, n_components)
        Unit score vectors ``T``.
    y_scores_ : ndarray (N, n_components)
        ``U``.
    dual_coef_ : ndarray (N, n_targets)
        ``U (T^T Omega_c U)^{-1} T^T Y_c``, so ``Y_hat = Omega_c(X_new, X) dual_coef_ + mean``.
    n_iter_ : int
        The largest number of NIPALS iterations over the components (scikit-learn's
        convention for a transformer with ``max_iter``: a number ``>= 1``).
    n_iter_per_component_ : ndarray of int
        NIPALS iterations per component.
    n_components_ : int
        Components extracted: ``n_components``, or fewer when ``Y`` or the centred kernel is
        exhausted first (``n_components`` above the rank of the centred kernel matrix; a
        warning says so), so that ``x_scores_`` stays orthonormal.
    """

    def __init__(self, n_components: int = 2, kernel: Any = "rbf", gamma: Any = None,
                 degree: int = 3, coef0: float = 1.0, scale: bool = False, tol: float = 1e-12,
                 max_iter: int = 500) -> None:
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.scale = scale
        self.tol = tol
        self.max_iter = max_iter

    @atomic_fit
    def fit(self, X: Any, y: Any) -> KernelPLSRegression:
        """Extract ``n_components`` score pairs ``(t, u)`` by kernel NIPALS."""
        _check_n_components(self.n_components)
        if self.n_components is None:
            raise ValueError("n_components must be a positive integer, got None")
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        X, Y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        self._y_1d = Y.ndim == 1
        Y = Y.reshape(len(Y), -1).astype(float)
        N = X.shape[0]
        if N < 2:
            raise ValueError(f"kernel PLS needs at least 2 samples (a centred kernel of one "
                             f"sample is zero), got n_samples = {N}")
        if self.n_components > N:
            raise ValueError(f"n_components must be <= N = {N}, got {self.n_components}")
        self.x_mean_, self.y_mean_ = X.mean(axis=0), Y.mean(axis=0)
        if self.scale:
            xs = X.std(axis=0, ddof=1)
            ys = Y.std(axis=0, ddof=1)
            xs[xs == 0] = 1.0
            ys[ys == 0] = 1.0
        else:
            xs, ys = np.ones(X.shape[1]), np.ones(Y.shape[1])
        self.x_std_, self.y_std_ = xs, ys
        Xs = (X - self.x_mean_) / xs if self.scale else X
        self.kernel_ = _kernel_from(self, Xs)
        self.X_fit_ = Xs
        K_raw = np.asarray(self.kernel_(Xs), dtype=float)
        K0 = center_gram(K_raw)
        Yc = (Y - self.y_mean_) / ys
        Kd, Yd = K0.copy(), Yc.copy()
        # the centred kernel has no direction left when it is zero to rounding: constant X
        # (or a kernel that is constant on it) has none at all, and components beyond its
        # rank would be scores of rounding noise (not orthonormal, NaN for a zero kernel)
        # rounding of the centred kernel is relative to the entries of K itself (an RBF kernel
        # of tiny width on tiny X is 1 - 1e-15 everywhere: its centred part is noise)
        k_top = float(np.max(np.abs(K_raw), initial=0.0))
        k_zero = 100.0 * N * float(np.finfo(float).eps) * k_top
        if not (np.isfinite(k_top) and k_top > 0) or float(np.max(np.abs(np.linalg.eigvalsh(
                0.5 * (K0 + K0.T))), initial=0.0)) <= k_zero:
            raise ValueError("kernel PLS: the centred kernel matrix of X is zero (X is "
                             "constant, or the kernel is constant on it, e.g. an RBF gamma far "
                             "too small for the scale of X): there is no component to extract")
        T = np.zeros((N, self.n_components))
        U = np.zeros((N, self.n_components))
        iters = []
        eps = np.finfo(float).eps
        for a in range(self.n_components):
            nz = [j for j in range(Yd.shape[1]) if np.any(np.abs(Yd[:, j]) > 10 * eps)]
            if not nz:
                warnings.warn(f"kernel PLS: Y is fully deflated after {a} components",
                              UserWarning, stacklevel=2)
                T, U = T[:, :a], U[:, :a]
                break
            if float(np.max(np.abs(Kd), initial=0.0)) <= k_zero:
                warnings.warn(f"kernel PLS: the centred kernel matrix is exhausted after {a} "
                              f"components (its rank); n_components={self.n_components} "
                              f"reduced to {a}", UserWarning, stacklevel=2)
                T, U = T[:, :a], U[:, :a]
                break
            u = Yd[:, nz[0]].copy()
            t_old = np.zeros(N)
            it, done = 0, False
            while not done:
                it += 1
                t = Kd @ u
                t /= np.linalg.norm(t)
                c = Yd.T @ t
                u = Yd @ c
                u /= np.linalg.norm(u)
                done = (Yd.shape[1] == 1 or np.linalg.norm(t - t_old) < self.tol
                        or it >= self.max_iter)
                t_old = t
            if a > 0 and float(np.max(np.abs(T[:, :a].T @ t))) > 1e-8:
                # the deflated kernel is rounding noise (its scores are no longer orthogonal
                # to the earlier ones): the components end here
                warnings.warn(f"kernel PLS: component {a + 1} is numerical noise (the centred "
                              "kernel is resolved only to its rounding); n_components="
                              f"{self.n_components} reduced to {a}", UserWarning, stacklevel=2)
                T, U = T[:, :a], U[:, :a]
                break
            iters.append(it)
            T[:, a], U[:, a] = t, u
            Pt = Kd @ t  # deflation K <- (I - t t^T) K (I - t t^T)
            tKt = float(t @ Pt)
            Kd = Kd - np.outer(t, Pt) - np.outer(Pt, t) + tKt * np.outer(t, t)
            Yd = Yd - np.outer(t, t @ Yd)
        self.x_scores_, self.y_scores_ = T, U
        self.n_iter_per_component_ = np.asarray(iters, dtype=int)
        self.n_iter_ = int(max(iters, default=0))
        self.n_components_ = int(T.shape[1])
        self._fit_col_mean = K_raw.mean(axis=0)
        self.dual_coef_ = U @ np.linalg.solve(T.T @ K0 @ U, T.T @ Yc)
        return self

    def _prep(self, X: np.ndarray) -> np.ndarray:
        return (X - self.x_mean_) / self.x_std_ if self.scale else X

    def predict(self, X: Any) -> np.ndarray:
        """``Y_hat = Omega_c(X, X_fit) U (T^T Omega_c U)^{-1} T^T Y_c`` (+ mean, rescaled)."""
        check_is_fitted(self, "dual_coef_")
        X = self._prep(validate_data(self, X, dtype=np.float64, reset=False))
        Kx = np.asarray(self.kernel_(X, self.X_fit_), dtype=float)
        col = self._fit_col_mean
        Kc = Kx - col[None, :] - Kx.mean(axis=1)[:, None] + col.mean()
        Y = (Kc @ self.dual_coef_) * self.y_std_ + self.y_mean_
        return Y.ravel() if self._y_1d else Y

    def transform(self, X: Any) -> np.ndarray:
        """Scores of new points on the ``n_components`` directions
        (``Omega_c(X, X_fit) U (T^T Omega_c U)^{-1}``)."""
        check_is_fitted(self, "dual_coef_")
        X = self._prep(validate_data(self, X, dtype=np.float64, reset=False))
        Kx = np.asarray(self.kernel_(X, self.X_fit_), dtype=float)
        col = self._fit_col_mean
        Kc = Kx - col[None, :] - Kx.mean(axis=1)[:, None] + col.mean()
        K0 = center_gram(np.asarray(self.kernel_(self.X_fit_), dtype=float))
        T, U = self.x_scores_, self.y_scores_
        return Kc @ U @ np.linalg.inv(T.T @ K0 @ U)
