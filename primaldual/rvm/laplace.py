"""Relevance vector classification: the Laplace step (IRLS for the posterior mode of the
weights, Tipping 2001) and the fast sequential search around it (Tipping & Faul 2003).

With the Bernoulli likelihood ``p(t = 1 | x) = sigma(y(x))`` the Gaussian posterior of
regression is replaced by the Laplace approximation at the mode ``mu``: ``B = diag(y_i (1 -
y_i))``, ``Sigma = (A + Phi^T B Phi)^{-1}`` and the effective targets
``t_hat = Phi mu + B^{-1} (t - y)``, so that ``Q_m = phi_m^T (t - y)``.  The search is the
regression one (add, delete or re-estimate the candidate of largest likelihood gain), in numpy,
with no noise precision.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg
from scipy.special import expit

from ..exceptions import NumericalTroubleError

__all__ = ["laplace_posterior", "rvc_sequential"]


def laplace_posterior(Pa: np.ndarray, t: np.ndarray, a: np.ndarray, mu0: np.ndarray | None,
                      name: str = "RVC"):
    """The Laplace step on the model's design ``Pa`` (at least one column) with precisions
    ``a``: IRLS (Newton with step halving) from ``mu0`` (0 if None) to the mode ``mu`` of
    ``log p(t | w) - w^T A w / 2``.

    Returns ``(mu, Sigma, b, r, L)``: ``Sigma = H^{-1}`` with ``H = Phi^T B Phi + A`` at the
    mode, the diagonal ``b`` of ``B``, the residual weight ``r = t - y`` (``Q = Phi^T r``) and
    the Laplace evidence ``log p(t | mu) - mu^T A mu / 2 - log|H| / 2 + log|A| / 2``.  ``name``
    prefixes the error raised when the Hessian is not finite.
    """
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
                f"{name}: the IRLS Hessian of the Laplace step is not finite (the kernel "
                "values overflow); rescale X or use a smaller gamma or degree")
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


def rvc_sequential(P: np.ndarray, t: np.ndarray, posterior: Callable, max_iter: int,
                   tol: float) -> tuple[np.ndarray, int, bool]:
    """The fast sequential search for classification on the candidate design ``P`` (``N x M``)
    with 0/1 targets ``t``; ``posterior(Pa, t, a, beta, mu0)`` is the Laplace step (the
    estimator's, :func:`laplace_posterior` for a non-empty model).

    Starts from the candidate best aligned with the logit of the squashed targets (with its
    one-dimensional optimum, 8.7.41); each step performs the action (add 8.7.47, delete 8.7.52,
    re-estimate 8.7.42) of largest likelihood gain, warm-starting IRLS from the previous mode;
    never deletes the last basis function.  Stops when no addition or deletion gains and every
    re-estimate moves ``log alpha_m`` by less than ``tol``.  Returns ``(alpha, n_iter,
    converged)``, ``alpha = inf`` outside the model.
    """
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
    for n_iter in range(1, max_iter + 1):  # noqa: B007
        act = np.asarray(active)
        Pa = P[:, act]
        mu, Sigma, b, r, L = posterior(Pa, t, alpha[act], beta, mu_prev)
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
        if not structural.any() and dlog.max(initial=0) < tol:
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
    return alpha, n_iter, converged
