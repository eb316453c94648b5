"""The compiled core of relevance vector regression: the fast sequential algorithm of Tipping &
Faul (2003) (:func:`_rvr_sequential`, one add/delete/re-estimate per step, Zhang 8.7.35-8.7.56),
the damped Newton step on the model's ``(log alpha, log beta)`` (:func:`_newton_step`) and the
noise precision's fixed-point check (:func:`_noise_violation`).  The theory is in the package
docstring (:mod:`primaldual.rvm`)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


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
    clipped to +-5; a precision beyond ``1e12 beta B_ii`` leaves the model.  A precision of 0
    (a flat prior, the unregularised intercept) is held at 0: its row and column of the system
    are replaced by the identity's.
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
    for a in range(m):
        if alpha[act[a]] == 0.0:
            grad[a] = 0.0
            for b in range(n):
                Hs[a, b] = 0.0
                Hs[b, a] = 0.0
            Hs[a, a] = -1.0
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
            if alpha[i] == 0.0:
                continue
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


@njit(cache=True, error_model="numpy")
def _collect_model(alpha: np.ndarray, act: np.ndarray) -> int:
    """Write the candidates with ``alpha < inf`` into ``act`` (ascending); return their count."""
    m = 0
    for i in range(alpha.shape[0]):
        if alpha[i] < np.inf:
            act[m] = i
            m += 1
    return m


@njit(cache=True, error_model="numpy")
def _model_posterior(PT: np.ndarray, PtP: np.ndarray, Ptt: np.ndarray, t: np.ndarray,
                     act: np.ndarray, m: int, alpha: np.ndarray, beta: float):
    """Posterior of the model ``act[:m]``: ``Sigma = (A + beta Phi^T Phi)^{-1}``,
    ``mu = beta Sigma Phi^T t``, the residual ``||t - Phi mu||^2`` and the evidence ``L`` up to
    the constant ``-N/2 log 2 pi`` (Zhang 8.7.24 in the posterior form).  Returns
    ``(Sigma, mu, ee, L, ok)``; ``ok = False`` (``mu = 0``, ``L = 0``) when ``A + beta Phi^T
    Phi`` is not numerically positive definite.  A precision of 0 (a flat prior) adds no
    ``log alpha`` term."""
    N = t.shape[0]
    H = np.empty((m, m))
    for a in range(m):
        for b in range(m):
            H[a, b] = beta * PtP[act[a], act[b]]
        H[a, a] += alpha[act[a]]
    Sig, logdet, ok = _chol_inverse(H)
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
    L = 0.0
    if ok:
        L = N * math.log(beta) - logdet - beta * ee
        for a in range(m):
            if alpha[act[a]] > 0.0:
                L += math.log(alpha[act[a]]) - alpha[act[a]] * mu[a] * mu[a]
        L *= 0.5
    return Sig, mu, ee, L, ok


@njit(cache=True, error_model="numpy")
def _sparsity_quality(PtP: np.ndarray, Ptt: np.ndarray, act: np.ndarray, m: int,
                      Sig: np.ndarray, mu: np.ndarray, beta: float, S: np.ndarray,
                      Q: np.ndarray) -> None:
    """``S`` and ``Q`` of every candidate, in place (8.7.39-40):
    ``S_i = beta P_ii - beta^2 g^T Sigma g``, ``Q_i = beta (Ptt_i - g^T mu)`` with
    ``g = (Phi^T Phi)[i, model]``."""
    g = np.empty(m)
    for i in range(PtP.shape[0]):
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


@njit(cache=True, error_model="numpy")
def _noise_reestimate(alpha: np.ndarray, act: np.ndarray, m: int, Sig: np.ndarray, ee: float,
                      N: int, beta_max: float) -> float:
    """``beta = (N - sum gamma) / ||t - Phi mu||^2``, ``gamma_m = 1 - alpha_m Sigma_mm``
    (Tipping 2001), capped at ``beta_max``."""
    gam = 0.0
    for a in range(m):
        gam += 1.0 - alpha[act[a]] * Sig[a, a]
    return min(max(N - gam, 1e-12) / max(ee, 1e-300), beta_max)


@njit(cache=True, error_model="numpy")
def _best_action(S: np.ndarray, Q: np.ndarray, alpha: np.ndarray, new_alpha: np.ndarray,
                 PtP: np.ndarray, m: int, keep: int, beta: float, L: float):
    """The likelihood change ``2 Delta L`` of re-estimating (8.7.42), adding (8.7.47) or
    deleting (8.7.52) each candidate; ``new_alpha`` receives each candidate's proposed
    precision.  Returns ``(j, kind, max_dlog, structural)``: the candidate of the largest gain
    (-1 if none gains) and its action (1 re-estimate, 2 add, 3 delete), the largest
    ``|log alpha|`` change of a re-estimate, and whether some addition or deletion gains.  A
    precision of 0 (a flat prior) is neither re-estimated nor deleted."""
    # additions gaining less than rounding do not count (collinear candidates, e.g. a linear
    # kernel of rank d < N, otherwise enter and leave forever with 2 Delta L ~ 0)
    gain_min = 1e-12 * max(1.0, abs(L))
    best = 0.0
    j = -1
    j_kind = 0
    max_dlog = 0.0
    structural = False
    for i in range(S.shape[0]):
        Si = S[i]
        Qi = Q[i]
        new_alpha[i] = np.inf
        if alpha[i] == 0.0:
            new_alpha[i] = 0.0
            continue
        if alpha[i] < np.inf:
            den = alpha[i] - Si
            if not den > 0.0:                 # rounding (S_i < alpha_i in exact arithmetic)
                new_alpha[i] = alpha[i]
                continue
            s = alpha[i] * Si / den
            q = alpha[i] * Qi / den
            theta = q * q - s
            if theta > 0.0:
                na = s * s / theta
                new_alpha[i] = na
                d = 1.0 / na - 1.0 / alpha[i]
                if not Si * d > -1.0:         # rounding
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
    return j, j_kind, max_dlog, structural


@njit(cache=True, error_model="numpy")
def _apply_action(act: np.ndarray, m: int, alpha: np.ndarray, new_alpha: np.ndarray, j: int,
                  kind: int) -> int:
    """Perform action ``kind`` (1 re-estimate, 2 add, 3 delete) on candidate ``j``; return the
    new model size."""
    if kind == 2:
        act[m] = j
        m += 1
    elif kind == 3:
        k = 0
        while act[k] != j:
            k += 1
        for b in range(k, m - 1):
            act[b] = act[b + 1]
        m -= 1
    alpha[j] = new_alpha[j]
    return m


@njit(cache=True, error_model="numpy")
def _rvr_sequential(PT: np.ndarray, PtP: np.ndarray, Ptt: np.ndarray, t: np.ndarray,
                    i0: int, alpha0: float, beta: float, beta_max: float, keep: int,
                    tol: float, max_iter: int):
    """The fast sequential algorithm for regression (:mod:`primaldual.rvm`), compiled.

    ``PT`` is the candidate design transposed (``M x N``), ``PtP = Phi^T Phi``, ``Ptt = Phi^T
    t``. Starts from candidate ``i0`` with precision ``alpha0``; candidate ``keep`` (the bias,
    or -1) is not deleted until the first convergence, after which the search continues without
    that restriction; a candidate started at ``alpha0 = 0`` (the bias under a flat prior) stays
    in the model at that precision. A step performs the single action (add, delete,
    re-estimate) of largest likelihood gain; once no addition or deletion gains, a damped
    Newton step on the model's ``(log alpha, log beta)`` (:func:`_newton_step`) is tried, kept
    only if the evidence did not fall (else undone, the damping raised, and one single action
    taken instead). The noise ``beta`` is re-estimated at every single action (capped at
    ``beta_max``). Returns ``(alpha, beta, n_iter, status)``, ``alpha = inf`` outside the
    model; status 0 converged, 1 ``max_iter`` reached, 2 a posterior precision matrix that is
    not numerically positive definite, 3 stalled (200 steps without progress: the evidence not
    rising above rounding, the largest re-estimate not halving).
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
        Sig, mu, ee, L, ok = _model_posterior(PT, PtP, Ptt, t, act, m, alpha, beta)
        if not ok and not newton_pending:
            status = 2
            break
        if newton_pending:
            newton_pending = False
            if not ok or L < saved_L - 1e-12 * abs(saved_L):
                # the step lost evidence: undo it, more damping, one single step from here
                alpha[:] = saved_alpha
                m = _collect_model(alpha, act)
                beta = saved_beta
                no_newton = True
                lam = max(10.0 * lam, 1e-3)
                continue
            lam = 0.1 * lam if lam > 1e-6 else 0.0
        _sparsity_quality(PtP, Ptt, act, m, Sig, mu, beta, S, Q)
        beta_new = _noise_reestimate(alpha, act, m, Sig, ee, N, beta_max)
        beta_change = abs(math.log(beta_new / beta))
        j, j_kind, max_dlog, structural = _best_action(S, Q, alpha, new_alpha, PtP, m, keep,
                                                       beta, L)
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
            saved_alpha[:] = alpha
            saved_beta = beta
            saved_L = L
            beta = _newton_step(PtP, Ptt, act[:m].copy(), alpha, Sig, mu, beta, ee, N, lam,
                                keep, beta_max)
            m = _collect_model(alpha, act)
            if m == 0:                        # never empty the model
                alpha[:] = saved_alpha
                m = _collect_model(alpha, act)
            newton_pending = True
            no_newton = False
            continue
        elif j >= 0:
            m = _apply_action(act, m, alpha, new_alpha, j, j_kind)
        no_newton = False
        beta = beta_new
    return alpha, beta, n_iter, status
