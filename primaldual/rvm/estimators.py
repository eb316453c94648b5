"""The relevance vector machine's estimators, :class:`RVR` and :class:`RVC` (theory:
:mod:`primaldual.rvm`): parameters and validation, the candidate basis, the posterior on the
model, the optimality report and the fitted attributes.  The searches are
:mod:`~primaldual.rvm.sequential` (regression, compiled) and :mod:`~primaldual.rvm.laplace`
(classification)."""

from __future__ import annotations

import functools
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
from threadpoolctl import ThreadpoolController

from ..certificate import audit_tolerance
from ..engine import atomic_fit
from ..exceptions import ConvergenceWarning, InsufficientMemoryError, NumericalTroubleError
from ..kernels import Kernel, make_kernel
from ..validation import check_memory
from .evidence import _LOG2PI
from .laplace import laplace_posterior, rvc_sequential
from .sequential import _noise_violation, _rvr_sequential

__all__ = ["RVC", "RVR"]



@functools.lru_cache(maxsize=1)
def _blas_controller() -> ThreadpoolController:
    """One controller per process (finding the BLAS libraries costs ~15 ms; limiting with an
    existing controller ~5 us)."""
    return ThreadpoolController()


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
        N = len(t)
        if Pa.shape[1] == 0:                      # the empty model, y(x) = 0
            if self._classification:
                return (np.zeros(0), np.zeros((0, 0)), np.full(N, 0.25), t - 0.5,
                        float(-N * math.log(2.0)))
            L = -0.5 * (N * _LOG2PI - N * math.log(beta) + beta * float(t @ t))
            return np.zeros(0), np.zeros((0, 0)), np.full(N, beta), beta * t, float(L)
        if self._classification:
            return laplace_posterior(Pa, t, a, mu0, type(self).__name__)
        H = beta * (Pa.T @ Pa) + np.diag(a)
        cf = scipy.linalg.cho_factor(H, lower=True)
        mu = scipy.linalg.cho_solve(cf, beta * (Pa.T @ t))
        e = t - Pa @ mu
        logdetH = 2 * np.log(np.diag(cf[0])).sum()
        # a precision of 0 is a flat prior (the unregularised intercept): no log alpha term
        L = -0.5 * (N * _LOG2PI - N * math.log(beta) + logdetH - np.log(a[a > 0]).sum()
                    + beta * (e @ e) + mu @ (a * mu))
        b = np.full(N, beta)
        r = beta * e
        Sigma = scipy.linalg.cho_solve(cf, np.eye(len(a)))
        return mu, Sigma, b, r, float(L)

    # -- the fast algorithm -------------------------------------------------------------------
    def _fit_fast(self, X: np.ndarray, t: np.ndarray) -> None:
        # the steps are many small products: a multi-threaded BLAS only adds overhead (and is
        # 4x slower on a loaded machine) below a few thousand points
        if len(t) <= 2000:
            with _blas_controller().limit(limits=1, user_api="blas"):
                return self._fit_fast_impl(X, t)
        return self._fit_fast_impl(X, t)

    def _fit_fast_impl(self, X: np.ndarray, t: np.ndarray) -> None:
        if len(t) < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 samples; got n_samples = 1")
        _check_int(self.max_iter, "max_iter", 1)
        _check_pos(self.tol, "tol")
        if not isinstance(self.bias, (bool, np.bool_)):
            raise TypeError(f"bias must be True or False, got {self.bias!r}")
        N = len(t)
        M = N + (1 if self.bias else 0)
        # the candidate design (N x M), its copy or square for the statistics and, regression,
        # Phi^T Phi (M x M): refuse up front rather than fail inside numpy
        need = 8 * (2 * N * M + (0 if self._classification else M * M))
        try:
            if need > 2**27:                  # reading the available memory costs ~1 ms
                check_memory(need, f"the RVM's {N} x {M} candidate basis")
        except InsufficientMemoryError as exc:
            raise InsufficientMemoryError(
                f"{type(self).__name__}: the relevance vector machine keeps one basis function "
                f"per training point and needs {need / 2**30:.1f} GiB for N = {N}, more than "
                "the memory available; fit on a subsample of the training points") from exc
        self.kernel_ = make_kernel(self.kernel, gamma=self.gamma, degree=self.degree,
                                   coef0=self.coef0, X=X)
        self._Xtrain = X
        if not self._classification:
            return self._fit_regression(X, t)
        # classification: the same search in numpy around the IRLS Laplace step (B and the
        # effective targets change with the mode; no noise precision, beta = 1 is a dummy)
        P = self._design(X)                       # N x M candidates
        alpha, n_iter, converged = rvc_sequential(P, t, self._posterior, self.max_iter,
                                                  self.tol)
        self._finish(X, P, t, alpha, 1.0, n_iter, 0 if converged else 1, beta_max=1.0)

    def _fit_regression(self, X: np.ndarray, t: np.ndarray) -> None:
        """Regression: the compiled sequential algorithm (:func:`_rvr_sequential`), then the
        posterior, evidence and optimality on the final model in numpy."""
        if self.bias_prior not in ("ard", "flat"):
            raise ValueError(f"bias_prior must be 'ard' or 'flat', got {self.bias_prior!r}")
        flat = bool(self.bias) and self.bias_prior == "flat"
        P = self._design(X)                       # N x M candidates
        M = P.shape[1]
        PtP = P.T @ P
        Ptt = P.T @ t
        # noise scale: var(t) (sigma^2 starts at 0.1 var(t), SparseBayes' cap beta <= 1e6 /
        # var(t)); constant targets fall back to a tiny fraction of their square
        var_t = float(np.var(t))
        sq = float(np.mean(t * t))
        var_ref = var_t if var_t > 1e-12 * sq else (1e-12 * sq if sq > 0 else 1.0)
        beta0 = 1.0 / (0.1 * var_ref)
        if self.bias and np.ptp(t) <= 1e-12 * float(np.max(np.abs(t))):
            return self._fit_constant(X, P, t, 1e6 / var_ref, flat)
        # start from the bias (kept in the model until the first convergence, then free to
        # leave: on Tipping's sinc this reaches higher evidence than starting from the kernel
        # column best aligned with t), else from that column
        if self.bias:
            i0 = M - 1
        else:
            i0 = int(np.argmax(Ptt**2 / np.maximum(np.diag(PtP), 1e-300)))
        s0, q0 = beta0 * PtP[i0, i0], beta0 * Ptt[i0]
        alpha0 = s0**2 / (q0**2 - s0) if q0**2 > s0 else 1e3 * PtP[i0, i0]   # (8.7.41)
        if flat:
            alpha0 = 0.0                          # the search never moves a zero precision
        alpha, beta, n_iter, status = _rvr_sequential(
            np.ascontiguousarray(P.T), PtP, Ptt, t, i0, float(alpha0), beta0, 1e6 / var_ref,
            M - 1 if self.bias else -1, float(self.tol), int(self.max_iter))
        if status == 2:
            raise NumericalTroubleError(
                f"{type(self).__name__}: the posterior precision A + beta Phi^T Phi became "
                "numerically singular; rescale X or y, or use a wider kernel")
        self._finish(X, P, t, alpha, float(beta), int(n_iter), int(status), 1e6 / var_ref)

    def _fit_constant(self, X: np.ndarray, P: np.ndarray, t: np.ndarray,
                      beta_max: float, flat: bool = False) -> None:
        """Targets without spread, ``t = c``: the bias alone fits them exactly and the evidence
        grows without bound as the noise goes to 0, so there is no stationary point; the model
        is the bias at the noise floor ``1 / beta_max`` with ``alpha = 1/c^2`` (the limit of
        its one-dimensional optimum as ``beta -> inf``), or the empty model for ``c = 0``;
        under the flat prior (``flat``) the bias at ``alpha = 0``."""
        N = len(t)
        c = float(t[0])
        alpha = np.full(P.shape[1], np.inf)
        if flat:
            alpha[N] = 0.0
        elif c != 0.0:
            alpha[N] = 1.0 / c**2
        act = np.flatnonzero(np.isfinite(alpha))
        mu, Sigma, _, _, L = self._posterior(P[:, act], t, alpha[act], beta_max, None)
        self._store(X, act, alpha[act], mu, Sigma, beta_max, L, 0, False)
        self.optimality_ = math.inf
        warnings.warn(f"{type(self).__name__}: the targets are constant ({c:g}); the evidence "
                      "has no maximum (it grows as the noise goes to 0), the model is the bias "
                      "alone at the noise floor", ConvergenceWarning, stacklevel=7)

    def _finish(self, X: np.ndarray, P: np.ndarray, t: np.ndarray, alpha: np.ndarray,
                beta: float, n_iter: int, status: int, beta_max: float) -> None:
        """Posterior, evidence and optimality of the final model; ``converged_`` only if the
        stopping rule was met *and* the recomputed optimality (for regression the noise
        precision's fixed point included) is within ``10 audit_tolerance(tol)`` (``tol``
        clipped to ``[1e-6, 1e-2]``).

        The search never empties the model; a last basis function whose own optimum is
        ``alpha = inf`` (``theta <= 0``) leaves it here: the evidence is then stationary at
        the empty model ``y(x) = 0`` (e.g. two points of different labels, whose Laplace
        evidence favours no basis function; targets that are all 0)."""
        act = np.flatnonzero(np.isfinite(alpha))
        if (len(act) == 1 and alpha[act[0]] > 0
                and self._theta(P, t, alpha, beta)[act[0]] <= 0):
            alpha = alpha.copy()
            alpha[act[0]] = np.inf
            act = act[:0]
            if not self._classification:           # the noise's fixed point with no weights
                beta = min(len(t) / max(float(t @ t), 1e-300), beta_max)
        mu, Sigma, _, _, L = self._posterior(P[:, act], t, alpha[act], beta, None)
        self._store(X, act, alpha[act], mu, Sigma, beta, L, n_iter, False)
        self.optimality_ = self._optimality(P, t, alpha, beta)
        if not self._classification:
            self.optimality_ = max(self.optimality_, _noise_violation(
                P[:, act], t, alpha[act], mu, Sigma, beta, beta_max))
        # the library's one tolerance rule: tol clipped to [1e-6, 1e-2]; the search may stop
        # at a looser tol (its moves < tol), but then alpha and beta are off their fixed
        # points by up to 10 tol in log (a noise precision 2.2x off its re-estimate at tol=1)
        # and such a fit is not called converged
        limit = 10 * audit_tolerance(self.tol)
        self.converged_ = bool(status == 0 and self.optimality_ <= limit)
        # a classifier with no relevance vector predicts y(x) = 0, p = 1/2 at every point: the
        # evidence is stationary there, but the labels are not learned (two points of different
        # labels), so a tie broken towards classes_[0] is never reported as a converged fit
        empty = self._classification and act.size == 0
        if empty:
            self.converged_ = False
        if not self.converged_:
            if empty:
                why = ("ended at the empty model y(x) = 0 (no relevance vector: every "
                       "prediction is a tie p = 1/2, the labels are not learned; more data or "
                       "another kernel width)")
            elif status == 1:
                why = (f"did not converge in max_iter={self.max_iter} steps; increase max_iter "
                       "or tol")
            elif status == 0 and self.optimality_ <= 10 * max(float(self.tol), 1e-6):
                why = (f"stopped at tol={self.tol:g}, a tolerance looser than 1e-2: the "
                       f"evidence is not stationary there (optimality_ = "
                       f"{self.optimality_:.3g}, a log-deviation of alpha or beta from its "
                       f"re-estimate, above {limit:g}); lower tol")
            elif status == 3:
                why = (f"stopped after {n_iter} steps: 200 steps without progress (the "
                       "evidence not rising above rounding, the re-estimates not shrinking; "
                       f"optimality_ = {self.optimality_:.3g}; e.g. noise-free targets, the "
                       "noise at its floor)")
            else:
                why = (f"stopped where the evidence is not stationary (optimality_ = "
                       f"{self.optimality_:.3g}, e.g. targets without spread or a noise at "
                       "its floor)")
            warnings.warn(f"{type(self).__name__}: the fast algorithm {why}",
                          ConvergenceWarning,
                          stacklevel=6 if self._classification else 7)   # the user's fit call

    def _theta(self, P, t, alpha, beta) -> np.ndarray:
        """``theta_m = q_m^2 - s_m`` of every candidate (8.7.31) at the posterior of the
        model ``alpha < inf``."""
        return self._factors(P, t, alpha, beta)[2]

    def _factors(self, P, t, alpha, beta):
        """Sparsity and quality factors ``s, q`` and ``theta = q^2 - s`` (8.7.35)."""
        act = np.flatnonzero(np.isfinite(alpha))
        Pa = P[:, act]
        _, Sigma, b, r, _ = self._posterior(Pa, t, alpha[act], beta, None)
        G = P.T @ (b[:, None] * Pa)
        S = b @ (P * P) - np.einsum("ij,ij->i", G @ Sigma, G)
        Q = P.T @ r
        ina = np.isfinite(alpha)
        s, q = S.copy(), Q.copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            s[ina] = alpha[ina] * S[ina] / (alpha[ina] - S[ina])
            q[ina] = alpha[ina] * Q[ina] / (alpha[ina] - S[ina])
        return s, q, q**2 - s

    def _optimality(self, P, t, alpha, beta) -> float:
        """``max |log alpha_m - log(s_m^2/theta_m)|`` over the model and ``max theta_m^+ /
        s_m`` outside (0 at an exact stationary point of the evidence); a precision of 0 (the
        flat-prior intercept) is not a variable of the evidence and is skipped."""
        s, _, theta = self._factors(P, t, alpha, beta)
        ina = np.isfinite(alpha) & (alpha > 0)
        viol = [0.0]
        if ina.any():
            th = theta[ina]
            with np.errstate(divide="ignore", invalid="ignore"):
                dev = np.abs(np.log(np.maximum(th, 1e-300)) - np.log(s[ina] ** 2 / alpha[ina]))
            viol.append(np.max(np.where((th > 0) & np.isfinite(dev), dev, np.inf)))
        out = ~np.isfinite(alpha)
        if out.any():
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.maximum(theta[out], 0) / s[out]
            viol.append(float(np.max(np.where(np.isnan(v), np.inf, v))))
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
    bias_prior : {"ard", "flat"}
        The intercept's prior.  ``"ard"`` (Tipping 2001): the bias is a basis function like the
        others, with its own precision ``alpha_0`` chosen by the evidence, free to leave the
        model.  ``"flat"``: an unregularised intercept, ``alpha_0 = 0`` (an improper flat
        prior), always in the model and excluded from the evidence's ``log alpha`` terms and
        from ``optimality_``; the fit is then equivariant to shifting the targets (``t + c``
        gives the same relevance vectors and the predictions plus ``c``), which ``"ard"``, whose
        prior shrinks the intercept towards 0, is not.  This is the intercept of SparseBayes'
        C++ port (``fastrvm``, ``fit_intercept=True``).
    max_iter : int
        Maximum add/re-estimate/delete steps (one basis function per step: a model with
        ``M`` relevance vectors needs several times ``M`` steps); ``ConvergenceWarning`` if
        reached.
    tol : float
        Convergence: no add/delete increases the evidence and every re-estimate moves
        ``log alpha_m`` (and ``log beta``) by less than ``tol``. ``converged_`` also needs the
        recomputed optimality (each ``log alpha_m`` and ``log beta`` against its
        re-estimate) within ``10 min(max(tol, 1e-6), 1e-2)``: a ``tol`` above ``1e-2`` stops
        early and says so (``ConvergenceWarning``).

    Attributes
    ----------
    relevance_ : ndarray of int
        Training indices of the relevance vectors.
    relevance_vectors_ : ndarray, shape (n_rv, n_features)
    alpha_ : ndarray
        Precisions of the basis functions in the model, ordered as ``active_`` (kernel columns
        by training index, then the bias if present; 0 for the bias under ``bias_prior="flat"``).
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

    def __init__(self, kernel: str | Kernel = "rbf", gamma: float | str = "scale",
                 degree: int = 3, coef0: float = 0.0, bias: bool = True,
                 max_iter: int = 5000, tol: float = 1e-6, bias_prior: str = "ard") -> None:
        super().__init__(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, bias=bias,
                         max_iter=max_iter, tol=tol)
        self.bias_prior = bias_prior

    @atomic_fit
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

    @atomic_fit
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
        """``y(x) = sum_{m in model} mu_m phi_m(x)`` (binary, the posterior-mode weights);
        one column per class for one-vs-rest."""
        check_is_fitted(self)
        if not self.estimators_:
            return self._latent(X)[0]
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
