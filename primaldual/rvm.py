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
violation, recomputed after the search; ``converged_`` requires it within ``10 tol``).

Regression specifics (:func:`_rvr_sequential`, compiled with numba).  With ``bias=True`` the
search starts from the bias and keeps it until the first convergence, then continues without
that restriction (SparseBayes keeps its bias; starting from the kernel column best aligned with
``t`` often drops the bias early and ends at a lower local maximum).  Once no addition or
deletion gains, a damped Newton step on the model's ``(log alpha, log beta)`` replaces the
one-at-a-time re-estimates (kept only if ``L`` rose), which otherwise need hundreds of steps
where precisions are coupled.  ``beta`` is capped at ``1e6 / var(t)`` (SparseBayes' cap).
Constant targets have no maximum (``L`` grows as the noise goes to 0): the model is the bias at
the noise floor, with a :class:`ConvergenceWarning`.  A last basis function whose own optimum is
``alpha = inf`` leaves the model: the evidence is then stationary at the empty model ``y = 0``.

Classification (Bernoulli likelihood ``p(t = 1 | x) = sigma(y(x))``): the Laplace step replaces
the Gaussian likelihood, i.e. IRLS (Newton) for the posterior mode ``mu`` of the weights in the
model, ``B = diag(y_i (1 - y_i))``, ``Sigma = (A + Phi^T B Phi)^{-1}`` at the mode and the
effective targets ``t_hat = Phi mu + B^{-1} (t - y)``, so that ``Q_m = phi_m^T (t - y)``.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from typing import Any

import numpy as np
import scipy.linalg
from numba import njit
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import ThreadpoolController

from .exceptions import ConvergenceWarning, InsufficientMemoryError, NumericalTroubleError
from .kernels import Kernel, make_kernel
from .methods._fit import atomic_fit
from .validation import check_memory

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


# ----------------------------------------------------------------------------- compiled core
@njit(cache=True, error_model="numpy")
def _chol_inverse(H: np.ndarray) -> tuple[np.ndarray, float, bool]:
    """``H^{-1}`` and ``log|H|`` of a small symmetric positive definite ``H`` by Cholesky
    ``H = L L^T`` (``Sigma = L^{-T} L^{-1}``); ``ok = False`` when a pivot is not positive."""
    m = H.shape[0]
    L = np.zeros((m, m))
    logdet = 0.0
    for j in range(m):
        d = H[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return np.zeros((m, m)), 0.0, False
        L[j, j] = math.sqrt(d)
        logdet += 2.0 * math.log(L[j, j])
        for i in range(j + 1, m):
            v = H[i, j]
            for k in range(j):
                v -= L[i, k] * L[j, k]
            L[i, j] = v / L[j, j]
    W = np.zeros((m, m))                      # W = L^{-1}, lower triangular
    for j in range(m):
        W[j, j] = 1.0 / L[j, j]
        for i in range(j + 1, m):
            v = 0.0
            for k in range(j, i):
                v -= L[i, k] * W[k, j]
            W[i, j] = v / L[i, i]
    Sig = np.empty((m, m))
    for i in range(m):
        for j in range(i + 1):
            v = 0.0
            for k in range(i, m):
                v += W[k, i] * W[k, j]
            Sig[i, j] = v
            Sig[j, i] = v
    return Sig, logdet, True


@njit(cache=True, error_model="numpy")
def _newton_step(PtP: np.ndarray, Ptt: np.ndarray, act: np.ndarray, alpha: np.ndarray,
                 Sig: np.ndarray, mu: np.ndarray, beta: float, ee: float, N: int, lam: float,
                 keep: int, beta_max: float) -> float:
    """One damped Newton step of the regression evidence in ``x = log alpha`` (the model's
    precisions, ``alpha`` updated in place) and ``y = log beta`` (returned).

    With ``B = Phi^T Phi`` and ``u = Phi^T e`` over the model, ``e = t - Phi mu``:
    ``dL/dx_i = (1 - alpha_i Sigma_ii - alpha_i mu_i^2) / 2``,
    ``dL/dy = (N - beta tr(Sigma B) - beta ||e||^2) / 2``,
    ``d2L/dx_i dx_j = alpha_i alpha_j (Sigma_ij^2 + 2 mu_i Sigma_ij mu_j) / 2
    + delta_ij (dL/dx_i - 1/2)``,
    ``d2L/dx_i dy = alpha_i beta ((Sigma B Sigma)_ii - 2 mu_i (Sigma u)_i) / 2``,
    ``d2L/dy^2 = (beta^2 tr((Sigma B)^2) + 2 beta^2 u^T Sigma u - N) / 2 + dL/dy``
    (from ``dSigma = -Sigma dH Sigma``, ``dmu/dalpha_j = -Sigma e_j mu_j``,
    ``dmu/dbeta = Sigma u``).  The step solves ``(-Hess + lam' I) d = grad`` with the
    smallest ``lam' >= lam`` that makes the matrix positive definite, each component
    clipped to +-5; a precision beyond ``1e12 beta B_ii`` leaves the model.
    """
    m = act.shape[0]
    n = m + 1
    B = np.empty((m, m))
    for a in range(m):
        for b in range(m):
            B[a, b] = PtP[act[a], act[b]]
    u = np.empty(m)
    for a in range(m):
        v = Ptt[act[a]]
        for b in range(m):
            v -= B[a, b] * mu[b]
        u[a] = v
    SB = Sig @ B
    SBS = SB @ Sig
    Su = Sig @ u
    grad = np.empty(n)
    Hs = np.empty((n, n))
    trSB = 0.0
    trSB2 = 0.0
    for a in range(m):
        trSB += SB[a, a]
        for b in range(m):
            trSB2 += SB[a, b] * SB[b, a]
    for a in range(m):
        al = alpha[act[a]]
        grad[a] = 0.5 * (1.0 - al * Sig[a, a] - al * mu[a] * mu[a])
    grad[m] = 0.5 * (N - beta * trSB - beta * ee)
    for a in range(m):
        ai = alpha[act[a]]
        for b in range(m):
            aj = alpha[act[b]]
            Hs[a, b] = 0.5 * ai * aj * (Sig[a, b] * Sig[a, b] + 2.0 * mu[a] * Sig[a, b] * mu[b])
        Hs[a, a] += grad[a] - 0.5
        Hs[a, m] = 0.5 * ai * beta * (SBS[a, a] - 2.0 * mu[a] * Su[a])
        Hs[m, a] = Hs[a, m]
    uSu = 0.0
    for a in range(m):
        uSu += u[a] * Su[a]
    Hs[m, m] = 0.5 * (beta * beta * trSB2 + 2.0 * beta * beta * uSu - N) + grad[m]
    scale = 0.0
    for a in range(n):
        scale = max(scale, abs(Hs[a, a]))
    lam_eff = lam * max(scale, 1e-300)
    for _ in range(60):
        A = -Hs.copy()
        for a in range(n):
            A[a, a] += lam_eff
        Ainv, _ld, ok = _chol_inverse(A)
        if ok:
            break
        lam_eff = max(2.0 * lam_eff, 1e-8 * max(scale, 1e-300))
    if not ok:
        return beta
    for a in range(n):
        d = 0.0
        for b in range(n):
            d += Ainv[a, b] * grad[b]
        d = min(max(d, -5.0), 5.0)
        if a < m:
            i = act[a]
            la = math.log(alpha[i]) + d
            if i != keep and la > math.log(1e12 * beta * PtP[i, i]):
                alpha[i] = np.inf
            else:
                alpha[i] = math.exp(la)
        else:
            beta = min(beta * math.exp(d), beta_max)
    return beta


@njit(cache=True, error_model="numpy")
def _noise_violation(Pa: np.ndarray, t: np.ndarray, a: np.ndarray, mu: np.ndarray,
                     Sigma: np.ndarray, beta: float, beta_max: float) -> float:
    """``|log beta - log beta*|`` with the noise precision's fixed point
    ``beta* = (N - sum_m gamma_m) / ||t - Phi mu||^2``, ``gamma_m = 1 - a_m Sigma_mm`` (Tipping
    2001, (8.7.23)): the evidence is stationary in ``beta`` only there, so a model whose alphas
    stopped moving but whose noise did not is not converged. A ``beta`` held at its cap
    ``beta_max`` with ``beta* >= beta_max`` is at the constrained optimum (0)."""
    N = t.shape[0]
    gam = float(np.sum(1.0 - a * np.diag(Sigma))) if a.size else 0.0
    ee = float(np.sum((t - Pa @ mu) ** 2)) if a.size else float(t @ t)
    target = max(N - gam, 1e-12) / max(ee, 1e-300)
    if beta >= beta_max * (1.0 - 1e-12) and target >= beta_max:
        return 0.0
    return abs(math.log(beta) - math.log(min(target, beta_max)))


def _rvr_sequential(PT: np.ndarray, PtP: np.ndarray, Ptt: np.ndarray, t: np.ndarray,
                    i0: int, alpha0: float, beta: float, beta_max: float, keep: int,
                    tol: float, max_iter: int):
    """The fast sequential algorithm for regression (module docstring), compiled.

    ``PT`` is the candidate design transposed (``M x N``), ``PtP = Phi^T Phi``,
    ``Ptt = Phi^T t``.  Starts from candidate ``i0`` with precision ``alpha0``; candidate
    ``keep`` (the bias, or -1) is not deleted until the first convergence, after which the
    search continues without that restriction.  A step performs the single action (add,
    delete, re-estimate) of largest likelihood gain; once no addition or deletion gains,
    every precision in the model is re-estimated at once (each to its one-dimensional
    optimum, a Jacobi sweep), kept only if the evidence increased (else undone and replaced by
    the single best re-estimate).  The noise ``beta`` is re-estimated at every step (capped
    at ``beta_max``).  Returns ``(alpha, beta, n_iter, status)``, ``alpha = inf`` outside the
    model; status 0 converged, 1 ``max_iter`` reached, 2 a posterior precision matrix that
    is not numerically positive definite, 3 stalled (200 steps without progress: the evidence
    not rising above rounding, the largest re-estimate not halving).
    """
    M, N = PT.shape
    alpha = np.full(M, np.inf)
    alpha[i0] = alpha0
    act = np.empty(M, np.int64)
    act[0] = i0
    m = 1
    S = np.empty(M)
    Q = np.empty(M)
    new_alpha = np.full(M, np.inf)
    saved_alpha = alpha.copy()
    saved_beta = beta
    saved_L = -np.inf
    newton_pending = False
    no_newton = False
    lam = 0.0
    n_iter = 0
    status = 1
    L_best = -np.inf
    dlog_best = np.inf
    stall = 0
    for it in range(1, max_iter + 1):
        n_iter = it
        H = np.empty((m, m))
        for a in range(m):
            for b in range(m):
                H[a, b] = beta * PtP[act[a], act[b]]
            H[a, a] += alpha[act[a]]
        Sig, logdet, ok = _chol_inverse(H)
        if not ok and not newton_pending:
            status = 2
            break
        mu = np.zeros(m)
        if ok:
            for a in range(m):
                v = 0.0
                for b in range(m):
                    v += Sig[a, b] * Ptt[act[b]]
                mu[a] = beta * v
        # ||t - Phi mu||^2 from the residual itself (no cancellation)
        ee = 0.0
        for n in range(N):
            r = t[n]
            for a in range(m):
                r -= PT[act[a], n] * mu[a]
            ee += r * r
        # evidence up to the constant -N/2 log 2 pi (Zhang 8.7.24 in the posterior form)
        L = 0.0
        if ok:
            L = N * math.log(beta) - logdet - beta * ee
            for a in range(m):
                L += math.log(alpha[act[a]]) - alpha[act[a]] * mu[a] * mu[a]
            L *= 0.5
        if newton_pending:
            newton_pending = False
            if not ok or L < saved_L - 1e-12 * abs(saved_L):
                # the step lost evidence: undo it, more damping, one single step from here
                m = 0
                for i in range(M):
                    alpha[i] = saved_alpha[i]
                    if alpha[i] < np.inf:
                        act[m] = i
                        m += 1
                beta = saved_beta
                no_newton = True
                lam = max(10.0 * lam, 1e-3)
                continue
            lam = 0.1 * lam if lam > 1e-6 else 0.0
        # (8.7.39-40): S_i = beta P_ii - beta^2 g^T Sigma g, Q_i = beta (Ptt_i - g^T mu),
        # g = (Phi^T Phi)[i, model]
        g = np.empty(m)
        for i in range(M):
            quad = 0.0
            gm = 0.0
            for a in range(m):
                g[a] = PtP[i, act[a]]
            for a in range(m):
                v = 0.0
                for b in range(m):
                    v += Sig[a, b] * g[b]
                quad += g[a] * v
                gm += g[a] * mu[a]
            S[i] = beta * PtP[i, i] - beta * beta * quad
            Q[i] = beta * (Ptt[i] - gm)
        # noise re-estimate sigma^2 = ||t - Phi mu||^2 / (N - sum gamma), gamma_m = 1 -
        # alpha_m Sigma_mm
        gam = 0.0
        for a in range(m):
            gam += 1.0 - alpha[act[a]] * Sig[a, a]
        beta_new = min(max(N - gam, 1e-12) / max(ee, 1e-300), beta_max)
        beta_change = abs(math.log(beta_new / beta))
        # the likelihood change 2 Delta L of every action (8.7.42, 8.7.47, 8.7.52)
        # additions gaining less than rounding do not count (collinear candidates, e.g. a
        # linear kernel of rank d < N, otherwise enter and leave forever with 2 Delta L ~ 0)
        gain_min = 1e-12 * max(1.0, abs(L))
        best = 0.0
        j = -1
        j_kind = 0                            # 1 re-estimate, 2 add, 3 delete
        max_dlog = 0.0
        structural = False
        for i in range(M):
            Si = S[i]
            Qi = Q[i]
            new_alpha[i] = np.inf
            if alpha[i] < np.inf:
                den = alpha[i] - Si
                if not den > 0.0:             # rounding (S_i < alpha_i in exact arithmetic)
                    new_alpha[i] = alpha[i]
                    continue
                s = alpha[i] * Si / den
                q = alpha[i] * Qi / den
                theta = q * q - s
                if theta > 0.0:
                    na = s * s / theta
                    new_alpha[i] = na
                    d = 1.0 / na - 1.0 / alpha[i]
                    if not Si * d > -1.0:     # rounding
                        new_alpha[i] = alpha[i]
                        continue
                    gain = Qi * Qi * d / (Si * d + 1.0) - math.log1p(Si * d)
                    max_dlog = max(max_dlog, abs(math.log(na) - math.log(alpha[i])))
                    kind = 1
                elif m > 1 and i != keep:
                    gain = Qi * Qi / (Si - alpha[i]) - math.log1p(-Si / alpha[i])
                    kind = 3
                    if gain > 0.0:
                        structural = True
                else:
                    new_alpha[i] = alpha[i]
                    continue
            else:
                # S_i ~ 0: phi_i (numerically) in the span of the model, not a candidate
                if not (Si > 1e-12 * beta * PtP[i, i]) or Qi * Qi <= Si:
                    continue
                gain = (Qi * Qi - Si) / Si + math.log(Si / (Qi * Qi))
                if not gain > gain_min:
                    continue
                new_alpha[i] = Si * Si / (Qi * Qi - Si)
                kind = 2
                structural = True
            if gain > best:
                best = gain
                j = i
                j_kind = kind
        # stalled: 200 steps in which neither the evidence rose above rounding nor the largest
        # re-estimate fell below half its smallest value so far (e.g. noise-free targets, beta
        # at its cap, where the one-dimensional optima only jitter)
        if L > L_best + 1e-13 * max(1.0, abs(L_best)) or max_dlog < 0.5 * dlog_best:
            L_best = max(L, L_best)
            dlog_best = min(max_dlog, dlog_best)
            stall = 0
        else:
            stall += 1
            if stall >= 200:
                status = 3
                break
        if not structural and max_dlog < tol and beta_change < tol:
            if keep < 0:
                status = 0
                break
            keep = -1                         # converged with the bias kept: release it
            continue
        if not structural and not no_newton:
            # a Newton step on the model's (log alpha, log beta), Levenberg-damped by lam and
            # checked by the evidence at the next step (undone there, lam raised, if it lost):
            # single re-estimates converge slowly where precisions and the noise are coupled
            for i in range(M):
                saved_alpha[i] = alpha[i]
            saved_beta = beta
            saved_L = L
            beta = _newton_step(PtP, Ptt, act[:m].copy(), alpha, Sig, mu, beta, ee, N, lam,
                                keep, beta_max)
            m = 0
            for i in range(M):
                if alpha[i] < np.inf:
                    act[m] = i
                    m += 1
            if m == 0:                        # never empty the model
                for i in range(M):
                    alpha[i] = saved_alpha[i]
                    if alpha[i] < np.inf:
                        act[m] = i
                        m += 1
            newton_pending = True
            no_newton = False
            continue
        elif j >= 0:
            if j_kind == 2:
                act[m] = j
                m += 1
            elif j_kind == 3:
                k = 0
                while act[k] != j:
                    k += 1
                for b in range(k, m - 1):
                    act[b] = act[b + 1]
                m -= 1
            alpha[j] = new_alpha[j]
        no_newton = False
        beta = beta_new
    return alpha, beta, n_iter, status


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
                if not (np.all(np.isfinite(H)) and np.all(np.isfinite(g))):
                    raise NumericalTroubleError(
                        f"{type(self).__name__}: the IRLS Hessian of the Laplace step is not "
                        "finite (the kernel values overflow); rescale X or use a smaller "
                        "gamma or degree")
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
        M = P.shape[1]
        P2 = P * P
        beta = 1.0
        t_init = np.log((0.9 * t + 0.05) / (1 - (0.9 * t + 0.05)))  # logit of squashed t
        # step 2: start with the single basis function best aligned with the targets
        norms2 = P2.sum(axis=0)
        proj = (P.T @ t_init) ** 2 / np.maximum(norms2, 1e-300)
        i0 = int(np.argmax(proj))
        alpha = np.full(M, np.inf)
        alpha[i0] = norms2[i0] / max(proj[i0] - 1.0, 1e-6 * proj[i0] + 1e-12)   # (8.7.41)
        active = [i0]
        mu_prev = None
        n_iter = 0
        converged = False
        for n_iter in range(1, self.max_iter + 1):  # noqa: B007
            act = np.asarray(active)
            Pa = P[:, act]
            mu, Sigma, b, r, L = self._posterior(Pa, t, alpha[act], beta, mu_prev)
            # S_m, Q_m for every candidate (8.7.39, 8.7.40)
            G = P.T @ (b[:, None] * Pa)
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
            if not structural.any() and dlog.max(initial=0) < self.tol:
                converged = True
                break
            j = int(np.argmax(gain))
            if add[j]:
                active.append(j)
                alpha[j] = new_alpha[j]
                mu_prev = np.append(mu, 0.0)
            elif dele[j]:
                k = active.index(j)
                active.pop(k)
                alpha[j] = np.inf
                mu_prev = np.delete(mu, k)
            else:
                alpha[j] = new_alpha[j]
                mu_prev = mu
        self._finish(X, P, t, alpha, beta, n_iter, 0 if converged else 1, beta_max=1.0)

    def _fit_regression(self, X: np.ndarray, t: np.ndarray) -> None:
        """Regression: the compiled sequential algorithm (:func:`_rvr_sequential`), then the
        posterior, evidence and optimality on the final model in numpy."""
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
            return self._fit_constant(X, P, t, 1e6 / var_ref)
        # start from the bias (kept in the model until the first convergence, then free to
        # leave: on Tipping's sinc this reaches higher evidence than starting from the kernel
        # column best aligned with t), else from that column
        if self.bias:
            i0 = M - 1
        else:
            i0 = int(np.argmax(Ptt**2 / np.maximum(np.diag(PtP), 1e-300)))
        s0, q0 = beta0 * PtP[i0, i0], beta0 * Ptt[i0]
        alpha0 = s0**2 / (q0**2 - s0) if q0**2 > s0 else 1e3 * PtP[i0, i0]   # (8.7.41)
        alpha, beta, n_iter, status = _rvr_sequential(
            np.ascontiguousarray(P.T), PtP, Ptt, t, i0, float(alpha0), beta0, 1e6 / var_ref,
            M - 1 if self.bias else -1, float(self.tol), int(self.max_iter))
        if status == 2:
            raise NumericalTroubleError(
                f"{type(self).__name__}: the posterior precision A + beta Phi^T Phi became "
                "numerically singular; rescale X or y, or use a wider kernel")
        self._finish(X, P, t, alpha, float(beta), int(n_iter), int(status), 1e6 / var_ref)

    def _fit_constant(self, X: np.ndarray, P: np.ndarray, t: np.ndarray,
                      beta_max: float) -> None:
        """Targets without spread, ``t = c``: the bias alone fits them exactly and the evidence
        grows without bound as the noise goes to 0, so there is no stationary point; the model
        is the bias at the noise floor ``1 / beta_max`` with ``alpha = 1/c^2`` (the limit of
        its one-dimensional optimum as ``beta -> inf``), or the empty model for ``c = 0``."""
        N = len(t)
        c = float(t[0])
        alpha = np.full(P.shape[1], np.inf)
        if c != 0.0:
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
        precision's fixed point included) is within ``10 tol``.

        The search never empties the model; a last basis function whose own optimum is
        ``alpha = inf`` (``theta <= 0``) leaves it here: the evidence is then stationary at
        the empty model ``y(x) = 0`` (e.g. two points of different labels, whose Laplace
        evidence favours no basis function; targets that are all 0)."""
        act = np.flatnonzero(np.isfinite(alpha))
        if len(act) == 1 and self._theta(P, t, alpha, beta)[act[0]] <= 0:
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
        self.converged_ = bool(status == 0 and self.optimality_ <= 10 * max(self.tol, 1e-6))
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
        s_m`` outside (0 at an exact stationary point of the evidence)."""
        s, _, theta = self._factors(P, t, alpha, beta)
        ina = np.isfinite(alpha)
        viol = [0.0]
        if ina.any():
            th = theta[ina]
            with np.errstate(divide="ignore", invalid="ignore"):
                dev = np.abs(np.log(np.maximum(th, 1e-300)) - np.log(s[ina] ** 2 / alpha[ina]))
            viol.append(np.max(np.where((th > 0) & np.isfinite(dev), dev, np.inf)))
        out = ~ina
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
