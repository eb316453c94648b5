r"""The relevance vector machine (Zhang 8.7; Tipping 2001; Tipping & Faul 2003).

Model.  ``y(x) = sum_m w_m phi_m(x)`` over the candidate basis ``phi_m(x) = k(x, x_m)``
(``m = 1..N``, one column per training point) plus, with ``bias=True``, the constant
``phi_0 = 1``.  Each weight has its own Gaussian prior ``w_m ~ N(0, 1/alpha_m)``; the precisions
``alpha`` (and, for regression, the noise precision ``beta = 1/sigma^2``) maximise the marginal
likelihood (evidence)

    L(alpha) = -1/2 [N log 2 pi + log|C| + t^T C^{-1} t],   C = beta^{-1} I + Phi A^{-1} Phi^T

(Zhang 8.7.24).  Most ``alpha_m`` go to infinity: their basis functions leave the model, and the
training points whose columns remain are the *relevance vectors*.

Fast sequential algorithm (Tipping & Faul 2003; Zhang 8.7.35-8.7.56).  With ``B = beta I`` and
``Sigma = (A + Phi^T B Phi)^{-1}`` over the basis functions in the model,

    S_m = phi_m^T B phi_m - phi_m^T B Phi Sigma Phi^T B phi_m,     (8.7.39)
    Q_m = phi_m^T B t_hat - phi_m^T B Phi Sigma Phi^T B t_hat,     (8.7.40)
    s_m = alpha_m S_m / (alpha_m - S_m),  q_m = alpha_m Q_m / (alpha_m - S_m)   (in the model;
    s_m = S_m, q_m = Q_m outside)                                   (8.7.35)

and ``L`` as a function of one ``alpha_m`` has its unique maximum at ``s_m^2 / (q_m^2 - s_m)``
when ``theta_m = q_m^2 - s_m > 0`` and at infinity otherwise (8.7.31).  Every step computes the
likelihood change of re-estimating (8.7.42), adding (8.7.47) or deleting (8.7.52) each candidate,
performs the single best one, re-estimates the noise
``sigma^2 = ||t - Phi mu||^2 / (N - M + sum_m alpha_m Sigma_mm)`` (regression), and recomputes
``Sigma``, ``mu``, ``S``, ``Q`` (step 10 of the text's algorithm; the model is small, so the
recomputation is cheaper and more accurate than the rank-one updates 8.7.43-8.7.56).  It stops
when no addition or deletion increases ``L`` and every re-estimate changes ``log alpha_m`` (and
``log beta``) by less than ``tol``: then every ``alpha_m`` is at its one-dimensional optimum
(8.7.31), which is the stationarity condition of ``L`` (``optimality_`` reports the largest
violation).

Classification (Bernoulli likelihood ``p(t = 1 | x) = sigma(y(x))``): the Laplace step replaces
the Gaussian likelihood, i.e. IRLS (Newton) for the posterior mode ``mu`` of the weights in the
model, ``B = diag(y_i (1 - y_i))``, ``Sigma = (A + Phi^T B Phi)^{-1}`` at the mode and the
effective targets ``t_hat = Phi mu + B^{-1} (t - y)``, so that ``Q_m = phi_m^T (t - y)``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
import scipy.linalg
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from .exceptions import ConvergenceWarning
from .kernels import Kernel, make_kernel

__all__ = ["RVC", "RVR", "rvr_log_evidence"]

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


def _check_int(v: Any, name: str, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def _check_pos(v: Any, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0 < v < math.inf):
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    return float(v)


class _RVMBase(BaseEstimator):
    """Shared fast sequential evidence maximisation (the subclasses fix the likelihood)."""

    _classification = False

    def __init__(self, kernel: str | Kernel = "rbf", gamma: float | str = "scale",
                 degree: int = 3, coef0: float = 0.0, bias: bool = True,
                 max_iter: int = 5000, tol: float = 1e-6) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.bias = bias
        self.max_iter = max_iter
        self.tol = tol

    # -- basis --------------------------------------------------------------------------
    def _design(self, X: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
        """Candidate basis ``[k(x, x_1) .. k(x, x_N), 1]`` (columns ``cols`` only if given)."""
        N = len(self._Xtrain)
        if cols is None:
            cols = np.arange(N + (1 if self.bias else 0))
        cols = np.asarray(cols, dtype=int)
        kern = cols[cols < N]
        out = np.empty((len(X), len(cols)))
        out[:, cols < N] = self.kernel_(X, self._Xtrain[kern]) if len(kern) else 0.0
        out[:, cols >= N] = 1.0
        return out

    # -- posterior on the active set ------------------------------------------------------
    def _posterior(self, Pa: np.ndarray, t: np.ndarray, a: np.ndarray, beta: float,
                   mu0: np.ndarray | None):
        """``mu``, ``Sigma``, the diagonal weights ``b`` of ``B``, the residual weight ``r``
        (``Q = Phi^T r``) and the evidence ``L`` for the active design ``Pa``."""
        if not self._classification:
            H = beta * (Pa.T @ Pa) + np.diag(a)
            cf = scipy.linalg.cho_factor(H, lower=True)
            mu = scipy.linalg.cho_solve(cf, beta * (Pa.T @ t))
            e = t - Pa @ mu
            N = len(t)
            logdetH = 2 * np.log(np.diag(cf[0])).sum()
            L = -0.5 * (N * _LOG2PI - N * math.log(beta) + logdetH - np.log(a).sum()
                        + beta * (e @ e) + mu @ (a * mu))
            b = np.full(N, beta)
            r = beta * e
        else:
            mu = np.zeros(Pa.shape[1]) if mu0 is None else mu0.copy()

            def obj(w):
                f = Pa @ w
                return (t * f - np.logaddexp(0, f)).sum() - 0.5 * w @ (a * w)

            val = obj(mu)
            for _ in range(100):  # IRLS / Newton with step halving
                yv = expit(Pa @ mu)
                g = Pa.T @ (t - yv) - a * mu
                b = yv * (1 - yv)
                H = (Pa.T * b) @ Pa + np.diag(a)
                step = scipy.linalg.cho_solve(scipy.linalg.cho_factor(H, lower=True), g)
                for _ in range(30):
                    new = obj(mu + step)
                    if new >= val - 1e-12 * abs(val):
                        break
                    step *= 0.5
                mu = mu + step
                done = new - val < 1e-12 * max(1.0, abs(val)) and np.abs(step).max() < 1e-9
                val = new
                if done:
                    break
            yv = expit(Pa @ mu)
            b = yv * (1 - yv)
            H = (Pa.T * b) @ Pa + np.diag(a)
            cf = scipy.linalg.cho_factor(H, lower=True)
            # Laplace evidence: log p(t|mu) - mu^T A mu / 2 - log|H| / 2 + log|A| / 2
            L = val - np.log(np.diag(cf[0])).sum() + 0.5 * np.log(a).sum()
            r = t - yv
        Sigma = scipy.linalg.cho_solve(cf, np.eye(len(a)))
        return mu, Sigma, b, r, float(L)

    # -- the fast algorithm -------------------------------------------------------------------
    def _fit_fast(self, X: np.ndarray, t: np.ndarray) -> None:
        # the steps are many small products: a multi-threaded BLAS only adds overhead (and is
        # 4x slower on a loaded machine) below a few thousand points
        if len(t) <= 2000:
            with threadpool_limits(1, user_api="blas"):
                return self._fit_fast_impl(X, t)
        return self._fit_fast_impl(X, t)

    def _fit_fast_impl(self, X: np.ndarray, t: np.ndarray) -> None:
        if len(t) < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 samples; got n_samples = 1")
        _check_int(self.max_iter, "max_iter", 1)
        _check_pos(self.tol, "tol")
        if not isinstance(self.bias, (bool, np.bool_)):
            raise TypeError(f"bias must be True or False, got {self.bias!r}")
        self.kernel_ = make_kernel(self.kernel, gamma=self.gamma, degree=self.degree,
                                   coef0=self.coef0, X=X)
        self._Xtrain = X
        N = len(t)
        P = self._design(X)                       # N x M candidates
        M = P.shape[1]
        P2 = P * P
        clf = self._classification
        PtP = None if clf else P.T @ P           # regression: B = beta I, G = beta P^T P_act
        if clf:
            beta = 1.0
            t_init = np.log((0.9 * t + 0.05) / (1 - (0.9 * t + 0.05)))  # logit of squashed t
            var0 = 1.0
        else:
            var_t = float(np.var(t))
            beta = 1.0 / max(0.1 * var_t, 1e-12)      # step 1: sigma^2 = 0.1 var(t)
            t_init = t
            var0 = 1.0 / beta
        # step 2: start with the single basis function best aligned with the targets
        norms2 = P2.sum(axis=0)
        proj = (P.T @ t_init) ** 2 / np.maximum(norms2, 1e-300)
        i0 = int(np.argmax(proj))
        alpha = np.full(M, np.inf)
        alpha[i0] = norms2[i0] / max(proj[i0] - var0, 1e-6 * proj[i0] + 1e-12)   # (8.7.41)
        active = [i0]
        mu_prev = None
        n_iter = 0
        converged = False
        for n_iter in range(1, self.max_iter + 1):  # noqa: B007
            act = np.asarray(active)
            Pa = P[:, act]
            mu, Sigma, b, r, L = self._posterior(Pa, t, alpha[act], beta, mu_prev)
            # S_m, Q_m for every candidate (8.7.39, 8.7.40)
            G = beta * PtP[:, act] if PtP is not None else P.T @ (b[:, None] * Pa)
            S = b @ P2 - np.einsum("ij,ij->i", G @ Sigma, G)
            Q = P.T @ r
            s, q = S.copy(), Q.copy()
            ina = np.isfinite(alpha)
            den = alpha[ina] - S[ina]
            s[ina] = alpha[ina] * S[ina] / den
            q[ina] = alpha[ina] * Q[ina] / den
            theta = q**2 - s
            gain = np.full(M, -np.inf)            # 2 Delta L of the action on each candidate
            new_alpha = np.full(M, np.inf)
            # re-estimate (8.7.42)
            re = ina & (theta > 0)
            new_alpha[re] = s[re] ** 2 / theta[re]
            d = 1.0 / new_alpha[re] - 1.0 / alpha[re]
            gain[re] = Q[re] ** 2 * d / (S[re] * d + 1) - np.log1p(S[re] * d)
            # add (8.7.47)
            add = ~ina & (theta > 0)
            gain[add] = (Q[add] ** 2 - S[add]) / S[add] + np.log(S[add] / Q[add] ** 2)
            new_alpha[add] = s[add] ** 2 / theta[add]
            # delete (8.7.52), never the last basis function
            dele = ina & (theta <= 0) if len(active) > 1 else np.zeros(M, bool)
            gain[dele] = Q[dele] ** 2 / (S[dele] - alpha[dele]) - np.log1p(-S[dele] / alpha[dele])
            dlog = np.zeros(M)
            dlog[re] = np.abs(np.log(new_alpha[re]) - np.log(alpha[re]))
            structural = (add | dele) & (gain > 0)
            self._last = {"L": L, "mu": mu, "Sigma": Sigma, "act": act, "beta": beta,
                          "theta": theta, "ina": ina}
            beta_change = 0.0
            if not clf:
                e = t - Pa @ mu
                gam = 1 - alpha[act] * np.diag(Sigma)
                beta_new = max(N - gam.sum(), 1e-12) / max(e @ e, 1e-300)
                beta_change = abs(math.log(beta_new / beta))
            if not structural.any() and dlog.max(initial=0) < self.tol and beta_change < self.tol:
                converged = True
                break
            j = int(np.argmax(gain))
            if gain[j] <= 0 and beta_change >= self.tol:
                pass  # only the noise moves
            elif add[j]:
                active.append(j)
                alpha[j] = new_alpha[j]
                mu_prev = None if mu is None else np.append(mu, 0.0)
            elif dele[j]:
                k = active.index(j)
                active.pop(k)
                alpha[j] = np.inf
                mu_prev = np.delete(mu, k)
            else:
                alpha[j] = new_alpha[j]
                mu_prev = mu
            if not clf:
                beta = beta_new
                mu_prev = None
        act = np.asarray(active)
        Pa = P[:, act]
        mu, Sigma, b, r, L = self._posterior(Pa, t, alpha[act], beta, mu_prev)
        if not converged:
            warnings.warn(f"{type(self).__name__}: the fast algorithm did not converge in "
                          f"max_iter={self.max_iter} steps; increase max_iter or tol",
                          ConvergenceWarning, stacklevel=4)
        self._store(X, act, alpha[act], mu, Sigma, beta, L, n_iter, converged)
        # optimality: largest relative violation of the 1-D conditions (8.7.31)
        self.optimality_ = self._optimality(P, t, alpha, beta)

    def _optimality(self, P, t, alpha, beta) -> float:
        """``max |log alpha_m - log(s_m^2/theta_m)|`` over the model and ``max theta_m^+ /
        s_m`` outside (0 at an exact stationary point of the evidence)."""
        act = np.flatnonzero(np.isfinite(alpha))
        Pa = P[:, act]
        mu, Sigma, b, r, _ = self._posterior(Pa, t, alpha[act], beta, self.mu_)
        G = P.T @ (b[:, None] * Pa)
        S = b @ (P * P) - np.einsum("ij,ij->i", G @ Sigma, G)
        Q = P.T @ r
        ina = np.isfinite(alpha)
        s, q = S.copy(), Q.copy()
        s[ina] = alpha[ina] * S[ina] / (alpha[ina] - S[ina])
        q[ina] = alpha[ina] * Q[ina] / (alpha[ina] - S[ina])
        theta = q**2 - s
        viol = [0.0]
        if ina.any():
            th = theta[ina]
            viol.append(np.max(np.where(th > 0, np.abs(np.log(np.maximum(th, 1e-300))
                                                       - np.log(s[ina] ** 2 / alpha[ina])),
                                        np.inf)))
        out = ~ina
        if out.any():
            viol.append(float(np.max(np.maximum(theta[out], 0) / s[out])))
        return float(max(viol))

    def _store(self, X, act, alpha, mu, Sigma, beta, L, n_iter, converged) -> None:
        N = len(X)
        order = np.argsort(act)
        act, alpha, mu = act[order], alpha[order], mu[order]
        Sigma = Sigma[np.ix_(order, order)]
        self.active_ = act                                  # columns of the candidate basis
        self.relevance_ = act[act < N]                      # training indices
        self.relevance_vectors_ = X[self.relevance_]
        self.alpha_ = alpha
        self.mu_ = mu
        self.sigma_ = Sigma
        self.coef_ = mu[act < N]
        self.intercept_ = float(mu[act >= N][0]) if (act >= N).any() else 0.0
        self.log_marginal_likelihood_value_ = L
        self.n_iter_ = n_iter
        self.converged_ = converged
        if not self._classification:
            self.beta_ = float(beta)
            self.noise_variance_ = 1.0 / float(beta)

    @property
    def n_relevance_vectors_(self) -> int:
        """Number of relevance vectors (the bias is not counted)."""
        return len(self.relevance_)

    def _latent(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Pa = self._design(X, self.active_)
        return Pa @ self.mu_, Pa

    def decision_function(self, X: Any) -> np.ndarray:
        """``y(x) = sum_{m in model} mu_m phi_m(x)`` (the posterior-mean weights)."""
        return self._latent(X)[0]


class RVR(RegressorMixin, _RVMBase):
    r"""Relevance vector regression (Tipping 2001), fitted by the fast sequential algorithm.

    Gaussian likelihood ``t = y(x) + e``, ``e ~ N(0, sigma^2)``; posterior
    ``w ~ N(mu, Sigma)`` with ``Sigma = (A + beta Phi^T Phi)^{-1}``, ``mu = beta Sigma Phi^T t``;
    predictive distribution ``N(phi(x)^T mu, 1/beta + phi(x)^T Sigma phi(x))``.

    Parameters
    ----------
    kernel, gamma, degree, coef0 :
        The kernel of the basis ``phi_m(x) = k(x, x_m)`` (:func:`primaldual.kernels.make_kernel`).
    bias : bool
        Offer the constant basis function ``phi_0 = 1`` (the intercept) as a candidate.
    max_iter : int
        Maximum add/re-estimate/delete steps (one basis function per step: a model with
        ``M`` relevance vectors needs several times ``M`` steps); ``ConvergenceWarning`` if
        reached.
    tol : float
        Convergence: no add/delete increases the evidence and every re-estimate moves
        ``log alpha_m`` (and ``log beta``) by less than ``tol``.

    Attributes
    ----------
    relevance_ : ndarray of int
        Training indices of the relevance vectors.
    relevance_vectors_ : ndarray, shape (n_rv, n_features)
    alpha_ : ndarray
        Precisions of the basis functions in the model, ordered as ``active_`` (kernel columns
        by training index, then the bias if present).
    active_ : ndarray of int
        Candidate columns in the model (index ``N`` is the bias).
    mu_, sigma_ : ndarray
        Posterior mean and covariance of those weights.
    coef_, intercept_ :
        ``mu_`` split into kernel weights and bias weight (0 when the bias was pruned).
    beta_, noise_variance_ : float
        Noise precision ``beta`` and ``sigma^2 = 1/beta``.
    log_marginal_likelihood_value_ : float
        The evidence ``L`` at the fitted ``alpha_, beta_``.
    optimality_ : float
        Largest violation of the one-dimensional optimality conditions (8.7.31).
    n_iter_, converged_ :
        Steps taken; whether the stopping rule was met before ``max_iter``.
    """

    def fit(self, X: Any, y: Any) -> RVR:
        """Maximise the evidence over ``alpha`` and ``beta`` (fast sequential algorithm)."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self._fit_fast(X, y.astype(float))
        return self

    def predict(self, X: Any, return_std: bool = False):
        """Predictive mean ``phi(x)^T mu``; with ``return_std`` also
        ``sqrt(1/beta + phi(x)^T Sigma phi(x))``."""
        mean, Pa = self._latent(X)
        if not return_std:
            return mean
        var = 1.0 / self.beta_ + np.einsum("ij,jk,ik->i", Pa, self.sigma_, Pa)
        return mean, np.sqrt(var)


class RVC(ClassifierMixin, _RVMBase):
    r"""Relevance vector classification (Tipping 2001, Laplace step by IRLS).

    ``p(classes_[1] | x) = sigma(y(x))`` at the posterior mode ``mu`` of the weights (Tipping's
    choice); ``Sigma`` is the inverse Hessian at the mode.  Parameters and attributes as
    :class:`RVR` (no noise precision).  More than two classes: one-vs-rest, one binary RVC per
    class in ``estimators_`` (each with its own ``alpha_``, ``sigma_``); ``relevance_`` is the
    union of their relevance vectors and the probabilities are normalised to sum to one.
    """

    _classification = True

    def fit(self, X: Any, y: Any) -> RVC:
        """Maximise the Laplace evidence over ``alpha`` (fast sequential algorithm)."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError("RVC needs at least 2 classes in y; got 1 class")
        if len(self.classes_) == 2:
            self._fit_fast(X, yi.astype(float))
            self.estimators_ = []
            return self
        # one-vs-rest: one binary RVC per class
        self.estimators_ = [RVC(**self.get_params()).fit(X, (yi == c).astype(int))
                            for c in range(len(self.classes_))]
        self.relevance_ = np.unique(np.concatenate([e.relevance_ for e in self.estimators_]))
        self.relevance_vectors_ = X[self.relevance_]
        self.n_iter_ = max(e.n_iter_ for e in self.estimators_)
        self.converged_ = all(e.converged_ for e in self.estimators_)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """``y(x)`` (binary); one column per class for one-vs-rest."""
        check_is_fitted(self)
        if not self.estimators_:
            return super().decision_function(X)
        validate_data(self, X, dtype=np.float64, reset=False)
        return np.column_stack([e.decision_function(X) for e in self.estimators_])

    def predict_proba(self, X: Any) -> np.ndarray:
        """``[1 - sigma(y(x)), sigma(y(x))]``, columns in the order of ``classes_``
        (one-vs-rest: the per-class ``sigma(y_c(x))`` normalised to sum to one)."""
        F = self.decision_function(X)
        if F.ndim == 2:
            P = expit(F)
            return P / P.sum(axis=1, keepdims=True)
        p = expit(F)
        return np.column_stack([1 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where ``y(x) > 0``; one-vs-rest: the largest ``y_c(x)``."""
        F = self.decision_function(X)
        if F.ndim == 2:
            return self.classes_[np.argmax(F, axis=1)]
        return self.classes_[(F > 0).astype(int)]
