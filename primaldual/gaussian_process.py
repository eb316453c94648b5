r"""Gaussian-process classification with the Laplace approximation (Zhang 8.6.4).

Model (Rasmussen & Williams 2006, "GPML", chapter 3).  A latent function ``f ~ GP(0, k)`` with
the covariance ``k(x, z) = s * k_0(x, z; gamma)`` (amplitude ``s > 0`` times a kernel of the
kernel module) and the logistic likelihood ``p(y_i = 1 | f_i) = sigma(f_i) = 1/(1 + e^{-f_i})``
with labels ``y_i in {0, 1}`` (``classes_[1]`` is class 1).

* **Posterior mode** ``f_hat = argmax_f Psi(f)``, ``Psi(f) = log p(y | f) - 1/2 f^T K^{-1} f``, by
  Newton's method (GPML Algorithm 3.1), kept stable by factorising
  ``B = I + W^{1/2} K W^{1/2} = L L^T`` (eigenvalues in ``[1, 1 + N max(K)/4]``), with
  ``W = diag(pi (1 - pi))``, ``pi = sigma(f)``::

      b = W f + (y - pi),   a = b - W^{1/2} B^{-1} W^{1/2} K b,   f <- K a.

  At the mode ``a = y - pi`` (stationarity ``grad Psi = (y - pi) - K^{-1} f = 0``).
* **Laplace log marginal likelihood** (GPML 3.32)
  ``log q(y | X, theta) = -1/2 a^T f_hat + log p(y | f_hat) - sum_i log L_ii``.
* **Prediction** (GPML Algorithm 3.2): latent mean ``f_* = k_*^T (y - pi)``, variance
  ``V_* = k(x_*, x_*) - ||L^{-1} W^{1/2} k_*||^2``; the probability
  ``int sigma(z) N(z | f_*, V_*) dz`` is approximated, exactly as scikit-learn does, by the
  logistic sigmoid written as a combination of five error functions (Williams & Barber 1998,
  appendix A), whose Gaussian integrals are closed form.
* **Hyper-parameters** ``theta = (log s, log gamma)`` maximise ``log q`` with L-BFGS-B; the
  gradient is GPML Algorithm 5.1 (explicit term plus the implicit term through ``f_hat``).
  L-BFGS-B may stop on "no relative reduction" with its curvature memory stale while the
  gradient is still large; a run that ends with a projected gradient above
  ``SEARCH_GTOL max(1, |log q|)`` is restarted from its end point (fresh memory), up to
  ``SEARCH_RESTARTS`` times, and a search that still stops there warns and says so
  (``search_converged_``).
  ``dK/dlog gamma`` is analytic for the RBF kernel and a central difference of the Gram matrix
  for other kernels with a ``gamma``.

Multiclass: one-vs-rest, one binary GP per class with its own hyper-parameters; the
probabilities are normalised to sum to one (as scikit-learn's ``GaussianProcessClassifier``).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.spatial.distance
from scipy.special import erf, expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .engine import atomic_fit
from .exceptions import ConvergenceWarning, NumericalTroubleError
from .kernels import RBF, Kernel, kernel_from_dict, make_kernel
from .validation import block_bytes, check_memory

__all__ = ["GPClassifier"]

# Williams & Barber's five-erf fit of the logistic sigmoid (the constants of scikit-learn).
_LAMBDAS = np.array([0.41, 0.4, 0.37, 0.44, 0.39])[:, None]
_COEFS = np.array([-1854.8214151, 3516.89893646, 221.29346712, 128.12323805,
                   -2010.49422654])[:, None]
#: the search's stationarity, relative to ``max(1, |log q|)``: the largest projected gradient
#: component in ``log theta`` it may end with
SEARCH_GTOL = 1e-3
#: restarts of L-BFGS-B from its own end point while that is not met
SEARCH_RESTARTS = 5
_FD_STEP = 1e-5  # relative step of the central difference dK/dlog gamma (non-RBF kernels)


def _has_gamma(kernel: Kernel) -> bool:
    g = kernel.params().get("gamma")
    return isinstance(g, numbers.Real) and not isinstance(g, bool)


def _with_gamma(kernel: Kernel, gamma: float) -> Kernel:
    if isinstance(kernel, RBF):
        return RBF(gamma=float(gamma))
    return kernel_from_dict({**kernel.to_dict(), "gamma": float(gamma)})


def _check_bounds(bounds: Any, name: str) -> tuple[float, float] | None:
    """``"fixed"`` -> None, else a positive (low, high) pair."""
    if isinstance(bounds, str):
        if bounds != "fixed":
            raise ValueError(f"{name} must be 'fixed' or a (low, high) pair, got {bounds!r}")
        return None
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be 'fixed' or a (low, high) pair, got {bounds!r}") from exc
    if not (0 < lo <= hi < math.inf):
        raise ValueError(f"{name} must satisfy 0 < low <= high < inf, got {bounds!r}")
    return lo, hi


class _LaplaceBinary:
    """One binary Laplace GP: labels ``y01`` in {0, 1}, kernel ``s * k_0(gamma)``."""

    def __init__(self, base: Kernel, X: np.ndarray, y01: np.ndarray, max_iter: int, tol: float):
        self.base, self.X, self.y, self.max_iter, self.tol = base, X, y01, max_iter, tol
        self.sq_dists = None
        if isinstance(base, RBF):
            self.sq_dists = scipy.spatial.distance.cdist(X, X, "sqeuclidean")

    # -- Gram matrix and its theta-derivatives ------------------------------------------
    def gram(self, amplitude: float, gamma: float | None, grad_gamma: bool = False):
        """``K = s K_0(gamma)`` and (optionally) ``dK / dlog gamma``."""
        k0 = self.base if gamma is None else _with_gamma(self.base, gamma)
        if self.sq_dists is not None:
            K0 = np.exp(-k0.gamma * self.sq_dists)
        else:
            K0 = k0(self.X)
        if not grad_gamma:
            return amplitude * K0, None
        if self.sq_dists is not None:
            dK = -amplitude * gamma * self.sq_dists * K0      # d/dlog gamma of exp(-gamma d2)
        else:
            h = _FD_STEP
            Kp = _with_gamma(self.base, gamma * math.exp(h))(self.X)
            Km = _with_gamma(self.base, gamma * math.exp(-h))(self.X)
            dK = amplitude * (Kp - Km) / (2 * h)
        return amplitude * K0, dK

    # -- posterior mode (GPML Algorithm 3.1) ------------------------------------------------
    def mode(self, K: np.ndarray) -> dict:
        y = self.y
        s = 2 * y - 1
        n = len(y)
        f = np.zeros(n)
        a = np.zeros(n)
        psi = -n * math.log(2.0)  # Psi(0)
        n_iter, done, res = 0, False, math.inf
        for n_iter in range(1, self.max_iter + 1):  # noqa: B007
            pi = expit(f)
            W = pi * (1 - pi)
            W_sr = np.sqrt(W)
            W_sr_K = W_sr[:, None] * K
            B = np.eye(n) + W_sr_K * W_sr
            L = scipy.linalg.cholesky(B, lower=True)
            b = W * f + (y - pi)
            a_new = b - W_sr * scipy.linalg.cho_solve((L, True), W_sr_K @ b)
            f_new = K @ a_new
            psi_new = -0.5 * a_new @ f_new - np.logaddexp(0, -s * f_new).sum()
            # Newton on a concave function: halve the step if Psi decreased (GPML 3.4.1)
            for _ in range(30):
                if psi_new >= psi - 1e-12 * abs(psi):
                    break
                a_new = 0.5 * (a + a_new)
                f_new = K @ a_new
                psi_new = -0.5 * a_new @ f_new - np.logaddexp(0, -s * f_new).sum()
            # stop when Psi rises by less than tol AND the mode's stationarity f = K (y - pi)
            # holds to min(1e-2, sqrt(tol)) relative (a loose tol alone left residuals of 0.15)
            res = np.linalg.norm(f_new - K @ (y - expit(f_new)))
            done = (psi_new - psi < self.tol and res <= min(1e-2, math.sqrt(self.tol))
                    * max(1.0, float(np.linalg.norm(f_new))))
            a, f, psi = a_new, f_new, psi_new
            if done:
                break
        pi = expit(f)
        W = pi * (1 - pi)
        W_sr = np.sqrt(W)
        L = scipy.linalg.cholesky(np.eye(n) + (W_sr[:, None] * K) * W_sr, lower=True)
        lml = psi - np.log(np.diag(L)).sum()
        return {"f": f, "a": a, "pi": pi, "W_sr": W_sr, "L": L, "lml": float(lml),
                "n_iter": n_iter, "converged": bool(done), "residual": float(res)}

    # -- log marginal likelihood and gradient (GPML Algorithm 5.1) --------------------------
    def lml(self, theta: np.ndarray, fit_amp: bool, fit_gamma: bool, amp0: float,
            gamma0: float | None, eval_gradient: bool = False):
        amp, gamma = self.unpack(theta, fit_amp, fit_gamma, amp0, gamma0)
        K, dKg = self.gram(amp, gamma, grad_gamma=eval_gradient and fit_gamma)
        m = self.mode(K)
        if not eval_gradient:
            return m["lml"]
        pi, W_sr, L, a = m["pi"], m["W_sr"], m["L"], m["a"]
        R = W_sr[:, None] * scipy.linalg.cho_solve((L, True), np.diag(W_sr))
        C = scipy.linalg.solve_triangular(L, W_sr[:, None] * K, lower=True)
        s2 = -0.5 * (np.diag(K) - np.einsum("ij,ij->j", C, C)) * (pi * (1 - pi) * (1 - 2 * pi))
        dKs = ([K] if fit_amp else []) + ([dKg] if fit_gamma else [])
        grad = np.empty(len(dKs))
        for j, dK in enumerate(dKs):
            s1 = 0.5 * a @ dK @ a - 0.5 * np.sum(R * dK)
            b = dK @ (self.y - pi)
            s3 = b - K @ (R @ b)
            grad[j] = s1 + s2 @ s3
        return m["lml"], grad

    @staticmethod
    def unpack(theta, fit_amp, fit_gamma, amp0, gamma0):
        theta = list(np.asarray(theta, dtype=float))
        amp = math.exp(theta.pop(0)) if fit_amp else amp0
        gamma = math.exp(theta.pop(0)) if fit_gamma else gamma0
        return amp, gamma


def _projected_gradient(res: Any, bounds: np.ndarray) -> float:
    """``max |g_i|`` over the components of the gradient that may move: one pointing out of
    the box at a bound is 0 (minimisation form, ``g = d(-log q)/d log theta``)."""
    g = np.asarray(res.jac, dtype=float)
    x = np.asarray(res.x, dtype=float)
    out = ((x <= bounds[:, 0] + 1e-10) & (g > 0)) | ((x >= bounds[:, 1] - 1e-10) & (g < 0))
    return float(np.max(np.abs(np.where(out, 0.0, g)), initial=0.0))


def _stationary(res: Any, bounds: np.ndarray) -> bool:
    return _projected_gradient(res, bounds) <= SEARCH_GTOL * max(1.0, abs(float(res.fun)))


def _search(obj: Any, t0: np.ndarray, bounds: np.ndarray) -> Any:
    """L-BFGS-B from ``t0``, restarted from its end point while that is not stationary and a
    restart still lowers ``-log q``."""
    res = scipy.optimize.minimize(obj, t0, method="L-BFGS-B", jac=True, bounds=bounds)
    for _ in range(SEARCH_RESTARTS):
        if _stationary(res, bounds):
            break
        nxt = scipy.optimize.minimize(obj, res.x, method="L-BFGS-B", jac=True, bounds=bounds)
        if not nxt.fun < res.fun:
            break
        res = nxt
    return res


class GPClassifier(ClassifierMixin, BaseEstimator):
    r"""Gaussian-process classifier, Laplace approximation, logistic likelihood.

    Covariance ``k(x, z) = amplitude * k_0(x, z)`` with ``k_0`` built by
    :func:`primaldual.kernels.make_kernel` (``exp(-gamma ||x - z||^2)`` by default).  The
    defaults ``amplitude=1, gamma=0.5`` are scikit-learn's ``1.0 * RBF(length_scale=1.0)``
    (``gamma = 1 / (2 length_scale^2)``).  See the module docstring for the algorithms.

    Parameters
    ----------
    kernel : str or Kernel
        Kernel name or object (``"rbf"``, ``"laplacian"``, ``"poly"``, ...).
    gamma : float or {"scale", "auto"}
        Initial width of the kernel (ignored for a :class:`Kernel` object or a kernel without
        ``gamma``).
    amplitude : float
        Initial signal variance ``s`` (scikit-learn's ``ConstantKernel`` value).
    degree, coef0 : int, float
        Passed to :func:`make_kernel`.
    optimizer : {"fmin_l_bfgs_b", None}
        ``None`` keeps the hyper-parameters fixed.
    amplitude_bounds, gamma_bounds : (float, float) or "fixed"
        Box for the optimiser; the gamma default is scikit-learn's length-scale box
        ``(1e-5, 1e5)`` converted to ``gamma = 1/(2 l^2)``.
    n_restarts_optimizer : int
        Extra L-BFGS-B runs from log-uniform random starts inside the bounds.
    max_iter_predict : int
        Maximum Newton iterations for the posterior mode.
    tol : float
        Newton stops when ``Psi`` increases by less than ``tol`` and the mode's stationarity
        ``f = K (t - pi(f))`` holds to ``min(1e-2, sqrt(tol))`` relative to ``max(1, ||f||)``.
    random_state : int or None
        Seed of the restarts.

    Attributes
    ----------
    classes_ : ndarray
    kernel_ : Kernel
        ``k_0`` with the fitted ``gamma`` (binary problems; per class in ``estimators_``).
    amplitude_ : float
    theta_ : ndarray
        Fitted ``(log amplitude, log gamma)`` (the free ones).
    log_marginal_likelihood_value_ : float
        Laplace ``log q(y | X, theta_)``; the mean over classes for one-vs-rest.
    f_ : ndarray
        Posterior mode of the latent function at the training points (binary).
    pi_, W_sr_, L_ : ndarray
        ``sigma(f_)``, ``W^{1/2}`` and the Cholesky factor of ``B`` at the mode (binary).
    n_iter_ : int
        Newton iterations of the final mode (binary).
    converged_ : bool
        Whether every final Laplace mode reached its fixed point ``f = K (y - sigma(f))``
        within ``max_iter_predict`` Newton steps (else a ``ConvergenceWarning``).
    status_ : str
        ``"optimal"`` when converged, ``"max_iter"`` when a Newton loop was cut off.
    mode_residual_ : float
        ``||f - K (y - sigma(f))||`` at the final mode (binary).
    search_converged_ : bool
        Whether the hyper-parameter search ended stationary: largest projected gradient of
        ``log q`` in ``log theta`` at most ``SEARCH_GTOL max(1, |log q|)`` (True when the
        hyper-parameters are fixed); else a ``ConvergenceWarning``.
    estimators_ : list of dict
        One-vs-rest: the fitted state of each binary GP (multiclass only).
    """

    def __init__(self, kernel: str | Kernel = "rbf", gamma: float | str = 0.5,
                 amplitude: float = 1.0, degree: int = 3, coef0: float = 0.0,
                 optimizer: str | None = "fmin_l_bfgs_b",
                 amplitude_bounds: Any = (1e-5, 1e5), gamma_bounds: Any = (5e-11, 5e9),
                 n_restarts_optimizer: int = 0, max_iter_predict: int = 100,
                 tol: float = 1e-10, random_state: int | None = None) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.amplitude = amplitude
        self.degree = degree
        self.coef0 = coef0
        self.optimizer = optimizer
        self.amplitude_bounds = amplitude_bounds
        self.gamma_bounds = gamma_bounds
        self.n_restarts_optimizer = n_restarts_optimizer
        self.max_iter_predict = max_iter_predict
        self.tol = tol
        self.random_state = random_state

    # ---------------------------------------------------------------------------- fit
    def _check_params(self) -> None:
        if self.optimizer not in ("fmin_l_bfgs_b", None):
            raise ValueError(f"optimizer must be 'fmin_l_bfgs_b' or None, got {self.optimizer!r}")
        if isinstance(self.amplitude, bool) or not isinstance(self.amplitude, numbers.Real) \
                or not (0 < self.amplitude < math.inf):
            raise ValueError(f"amplitude must be a positive finite number, got {self.amplitude!r}")
        for name in ("n_restarts_optimizer", "max_iter_predict"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) \
                    or v < (0 if name == "n_restarts_optimizer" else 1):
                raise ValueError(f"{name} must be an integer >= "
                                 f"{0 if name == 'n_restarts_optimizer' else 1}, got {v!r}")
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real) or self.tol <= 0:
            raise ValueError(f"tol must be a positive number, got {self.tol!r}")

    @atomic_fit
    def fit(self, X: Any, y: Any) -> GPClassifier:
        """Fit the hyper-parameters (unless ``optimizer=None``) and the posterior mode.

        Atomic: a fit that raises (``KeyboardInterrupt`` included) leaves the estimator as it
        was. Before any ``N x N`` array is formed, the memory the fit holds at once is checked
        against the system, process and cgroup limits (``InsufficientMemoryError``).
        """
        self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError("GPClassifier needs at least 2 classes in y; got 1 class")
        n_gp = 1 if len(self.classes_) == 2 else len(self.classes_)
        n = X.shape[0]
        # N x N blocks held at once: every fitted binary GP keeps its Cholesky factor L and its
        # squared distances (2 per GP); the gradient of the last one holds K, dK/dlog gamma,
        # L, diag(W^1/2), W^1/2 B^-1 W^1/2 (R and its cho_solve), C = L^-1 W^1/2 K and R * dK
        # (7 more); 8 + 2 n_gp is a bound of that.
        check_memory(block_bytes([(n, n)] * (8 + 2 * n_gp)),
                     f"GPClassifier.fit on {n} points ({8 + 2 * n_gp} blocks of {n} x {n})",
                     hint="the Laplace GP needs dense N x N matrices: fit on a subsample, or "
                          "use CSVC or KernelLogisticRegression with backend='smo' or 'lowrank'")
        base = make_kernel(self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                           X=X)
        self._X = X
        try:
            if len(self.classes_) == 2:
                self.estimators_ = [self._fit_binary(base, X, (yi == 1).astype(float))]
            else:
                self.estimators_ = [self._fit_binary(base, X, (yi == c).astype(float))
                                    for c in range(len(self.classes_))]
        except np.linalg.LinAlgError as exc:
            # B = I + W^1/2 K W^1/2 is positive definite in exact arithmetic; a Gram matrix
            # far from positive semi-definite in floating point (huge kernel values) breaks it
            raise NumericalTroubleError(
                "GPClassifier: the Cholesky factor of B = I + W^1/2 K W^1/2 failed (the "
                f"kernel matrix is not numerically positive semi-definite: {exc}); rescale X "
                "or use a smaller gamma, amplitude or degree") from exc
        self._summarise()
        if not self.search_converged_:
            warnings.warn("GPClassifier: the hyper-parameter search stopped where the "
                          "evidence's gradient in log theta is still above "
                          f"{SEARCH_GTOL:g} max(1, |log q|) after {SEARCH_RESTARTS} restarts "
                          "of L-BFGS-B: the hyper-parameters are not at a maximum of the "
                          "evidence (search_converged_ = False); try n_restarts_optimizer or "
                          "other bounds", ConvergenceWarning, stacklevel=2)
        if not self.converged_:
            worst = max(st["mode_residual_"] for st in self.estimators_)
            warnings.warn(f"GPClassifier: the Laplace mode's Newton iteration stopped at "
                          f"max_iter_predict={self.max_iter_predict} before its fixed point "
                          f"(||f - K (y - sigma(f))|| = {worst:.3g}); raise max_iter_predict: "
                          "status 'max_iter'", ConvergenceWarning, stacklevel=2)
        return self

    def _summarise(self) -> None:
        """The model's attributes from its binary GPs ``estimators_`` (after a fit or a
        :func:`~primaldual.persistence.load`): a binary model's own, or the mean evidence of
        one-vs-rest; ``converged_``, ``status_`` and ``search_converged_``."""
        if len(self.estimators_) == 1:
            st = self.estimators_[0]
            for key in ("kernel_", "amplitude_", "theta_", "log_marginal_likelihood_value_",
                        "f_", "pi_", "W_sr_", "L_", "n_iter_", "mode_residual_"):
                setattr(self, key, st[key])
        else:
            self.log_marginal_likelihood_value_ = float(
                np.mean([st["log_marginal_likelihood_value_"] for st in self.estimators_]))
        # the Laplace mode is the fixed point f = K (y - sigma(f)); a Newton loop cut off by
        # max_iter_predict leaves predictions at a point that is not it: say so
        self.converged_ = all(st["converged_"] for st in self.estimators_)
        self.status_ = "optimal" if self.converged_ else "max_iter"
        self.search_converged_ = all(st.get("search_converged_", True)
                                     for st in self.estimators_)

    def _laplace(self, base: Kernel, X: np.ndarray, y01: np.ndarray):
        """One binary GP's evidence (``_LaplaceBinary``), the layout of its ``theta``
        (``args``: which of amplitude and gamma are free, and their starting values) and the
        search bounds; what ``log_marginal_likelihood(theta)`` evaluates, after a fit or a
        :func:`~primaldual.persistence.load`."""
        gp = _LaplaceBinary(base, X, y01, self.max_iter_predict, self.tol)
        amp_b = _check_bounds(self.amplitude_bounds, "amplitude_bounds")
        gam_b = _check_bounds(self.gamma_bounds, "gamma_bounds") if _has_gamma(base) else None
        fit_amp, fit_gamma = amp_b is not None, gam_b is not None
        amp0 = float(self.amplitude)
        gamma0 = float(base.params()["gamma"]) if _has_gamma(base) else None
        return gp, (fit_amp, fit_gamma, amp0, gamma0), (amp_b, gam_b)

    def _fit_binary(self, base: Kernel, X: np.ndarray, y01: np.ndarray) -> dict:
        gp, args, (amp_b, gam_b) = self._laplace(base, X, y01)
        fit_amp, fit_gamma, amp0, gamma0 = args
        theta0 = np.log([v for v, fit in ((amp0, fit_amp), (gamma0, fit_gamma)) if fit])
        bounds = np.log([b for b in (amp_b, gam_b) if b is not None]).reshape(-1, 2)
        if self.optimizer is not None and len(theta0):
            def obj(theta):
                v, g = gp.lml(theta, *args, eval_gradient=True)
                return -v, -g

            starts = [np.clip(theta0, bounds[:, 0], bounds[:, 1])]
            rng = np.random.default_rng(self.random_state)
            starts += [rng.uniform(bounds[:, 0], bounds[:, 1])
                       for _ in range(self.n_restarts_optimizer)]
            best = None
            for t0 in starts:
                res = _search(obj, t0, bounds)
                if best is None or res.fun < best.fun:
                    best = res
            theta = best.x
            searched = _stationary(best, bounds)
        else:
            theta, searched = theta0, True
        amp, gamma = _LaplaceBinary.unpack(theta, *args)
        k0 = base if gamma is None else _with_gamma(base, gamma)
        K, _ = gp.gram(amp, gamma)
        m = gp.mode(K)
        return {"kernel_": k0, "amplitude_": amp, "theta_": np.asarray(theta, dtype=float),
                "log_marginal_likelihood_value_": m["lml"], "f_": m["f"], "pi_": m["pi"],
                "W_sr_": m["W_sr"], "L_": m["L"], "n_iter_": m["n_iter"], "y_": y01,
                "converged_": m["converged"], "mode_residual_": m["residual"],
                "search_converged_": searched,
                "_gp": gp, "_args": args}

    # ------------------------------------------------------------------------ evaluation
    def log_marginal_likelihood(self, theta: Any = None, eval_gradient: bool = False):
        """Laplace ``log q(y | X, theta)`` (and its gradient in ``theta``) of a binary fit.

        ``theta`` is ``(log amplitude, log gamma)`` restricted to the free hyper-parameters
        (``theta_`` has the layout); ``None`` returns ``log_marginal_likelihood_value_``.
        For one-vs-rest the mean over the classes is returned (no gradient).
        """
        check_is_fitted(self)
        if theta is None:
            if eval_gradient:
                raise ValueError("eval_gradient=True needs theta")
            return self.log_marginal_likelihood_value_
        theta = np.asarray(theta, dtype=float)
        if len(self.estimators_) == 1:
            st = self.estimators_[0]
            if theta.shape != st["theta_"].shape:
                raise ValueError(f"theta must have shape {st['theta_'].shape}, got {theta.shape}")
            return st["_gp"].lml(theta, *st["_args"], eval_gradient=eval_gradient)
        if eval_gradient:
            raise ValueError("the gradient is available for binary problems only")
        return float(np.mean([st["_gp"].lml(theta, *st["_args"]) for st in self.estimators_]))

    def _latent(self, st: dict, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, m = self._X.shape[0], X.shape[0]
        if n * m > 2**20:  # K_*, W^1/2 K_* and L^-1 W^1/2 K_*: three N x M blocks at once
            check_memory(block_bytes([(n, m)] * 3),
                         f"GPClassifier's prediction of {m} rows ({n} training points)",
                         hint="predict in smaller batches of rows")
        Ks = st["amplitude_"] * st["kernel_"](self._X, X)
        mean = Ks.T @ (st["y_"] - st["pi_"])
        v = scipy.linalg.solve_triangular(st["L_"], st["W_sr_"][:, None] * Ks, lower=True)
        var = st["amplitude_"] * st["kernel_"].diag(X) - np.einsum("ij,ij->j", v, v)
        return mean, var

    def latent_mean_and_variance(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Mean ``f_*`` and variance ``V_*`` of the latent function (GPML Algorithm 3.2)."""
        check_is_fitted(self)
        if len(self.estimators_) != 1:
            raise ValueError("latent_mean_and_variance is defined for binary problems only")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._latent(self.estimators_[0], X)

    def _class_probas(self, X: np.ndarray) -> np.ndarray:
        """Per binary GP: ``p(class | x) = int sigma(z) N(z | f_*, V_*) dz``, shape (n, n_gp)."""
        return np.column_stack([self._averaged_sigmoid(*self._latent(st, X))
                                for st in self.estimators_])

    def decision_function(self, X: Any) -> np.ndarray:
        """The moderated output ``log(p / (1 - p))`` of the predictive probability ``p``.

        Binary: ``p = p(classes_[1] | x)``; its sign is that of the latent mean ``f_*``
        (``latent_mean_and_variance`` gives ``f_*`` itself), but it is shrunk towards 0 where
        the latent variance is large, so it ranks points exactly as ``predict_proba``.
        One-vs-rest: one column per class.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        P = np.clip(self._class_probas(X), 1e-300, 1.0)
        F = np.log(P) - np.log1p(-np.minimum(P, 1 - 1e-16))
        return F[:, 0] if F.shape[1] == 1 else F

    @staticmethod
    def _averaged_sigmoid(mean: np.ndarray, var: np.ndarray) -> np.ndarray:
        """``int sigma(z) N(z | mean, var) dz`` by the five-erf approximation."""
        var = np.maximum(var, 1e-300)
        alpha = 1 / (2 * var)
        z = _LAMBDAS * mean * np.sqrt(alpha / (alpha + _LAMBDAS**2))
        integrals = np.sqrt(np.pi / alpha) * erf(z) / (2 * np.sqrt(var * 2 * np.pi))
        return (_COEFS * integrals).sum(axis=0) + 0.5 * _COEFS.sum()

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        P = self._class_probas(X)
        if P.shape[1] == 1:
            return np.column_stack([1 - P[:, 0], P[:, 0]])
        return P / P.sum(axis=1, keepdims=True)

    def predict(self, X: Any) -> np.ndarray:
        """Binary: the sign of the latent mean (GPML 3.4.2); one-vs-rest: the most probable."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if len(self.estimators_) == 1:
            f = self._latent(self.estimators_[0], X)[0]
            return self.classes_[(f > 0).astype(int)]
        return self.classes_[np.argmax(self._class_probas(X), axis=1)]
