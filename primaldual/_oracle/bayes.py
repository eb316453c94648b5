"""The oracles of the Bayesian kernel machines: the Laplace mode of the Gaussian-process
classifier and the evidence stationarity of the relevance vector machines."""

from __future__ import annotations

from typing import Any

import numpy as np

from .predictor import _plain_kernel
from .report import OracleReport


def _gpc(est: Any, X: Any, y: Any) -> OracleReport:
    r"""Gaussian-process classifier (Laplace): at the stored latent mode ``f_`` (``predict``'s
    training latent mean is ``K (t - pi_)``) the stationarity of
    ``Psi(f) = log p(t | f) - f^T K^{-1} f / 2`` is ``f = K (t - sigma(f))`` (``t`` in
    ``{0, 1}``), checked as ``||f_ - K (t - sigma(f_))|| / max(1, ||f_||)`` with ``K`` rebuilt
    in numpy (``amplitude_ * k_0``) and ``sigma`` the logistic; also ``pi_ = sigma(f_)``.
    One-vs-rest: one part per class. ``status`` is ``"optimal"`` when Newton stopped before
    ``max_iter_predict`` (the estimator's own convergence), else ``"max_iter"``; and
    ``"unverifiable ..."`` when the rounding floor of the residual,
    ``16 (1 + ||K|| / 4) eps || |K| |t - pi| || / max(1, ||f_||)`` (``f_`` known to
    ``eps |K| |t - pi|`` at best, amplified by the Jacobian ``I + K W``), exceeds ``1e-2``
    (e.g. a linear kernel on features at ``1e4``: ``||K|| ~ 1e9``).

    Tolerance: Newton stops when ``Psi`` rises by less than ``tol`` (the estimator's); near
    the mode the rise of a Newton step is ``lambda^2 / 2`` (Newton decrement
    ``lambda^2 = g^T H^{-1} g``, ``H = K^{-1} + W``), and ``||K g||^2 <= ||K|| (1 + ||K|| / 4)
    lambda^2``, so a residual ``<= sqrt(2 tol ||K|| (1 + ||K|| / 4))`` is what the stopping
    rule allows (capped at ``1e-2``, floored at the rounding ``64 N eps ||K|| ||t - pi||``),
    relative to ``max(1, ||f_||)``."""
    Xd = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes = np.asarray(est.classes_)
    parts = []
    states = est.estimators_
    for c, st in enumerate(states):
        cls = classes[1] if len(states) == 1 else classes[c]
        t = (y == cls).astype(float)
        K0, indep = _plain_kernel(st["kernel_"], Xd)
        K = float(st["amplitude_"]) * K0
        f = np.asarray(st["f_"], dtype=float)
        pi = 1.0 / (1.0 + np.exp(-f))
        res = f - K @ (t - pi)
        fn = max(1.0, float(np.linalg.norm(f)))
        rel = float(np.linalg.norm(res)) / fn
        knorm = float(np.linalg.norm(K, 2))
        eps = float(np.finfo(float).eps)
        # rounding: f itself is known to eps |K| |t - pi| at best, and the map
        # f -> f - K (t - sigma(f)) amplifies that by up to 1 + ||K|| / 4
        rnd = 16.0 * (1.0 + knorm / 4.0) * eps * float(
            np.linalg.norm(np.abs(K) @ np.abs(t - pi))) / fn
        tol = float(min(1e-2, max(np.sqrt(2.0 * float(est.tol) * knorm * (1.0 + knorm / 4.0))
                                  / fn, 1e-9)) + rnd)
        pi_dev = float(np.max(np.abs(np.asarray(st["pi_"]) - pi), initial=0.0))
        n_iter = int(st["n_iter_"])
        status = "optimal" if n_iter < int(est.max_iter_predict) else "max_iter"
        if rnd > 1e-2:  # the residual is not verifiable in float64 at this conditioning
            status = "unverifiable (rounding floor above 1e-2)"
        checks = {"violation:||f_ - K (t - sigma(f_))|| / max(1, ||f_||)": rel,
                  "violation:max |pi_ - sigma(f_)|": pi_dev}
        # the search is judged where the fit claims it ended stationary (a search that says
        # it stopped short, search_converged_ False with its warning, claims no maximum)
        if status == "optimal" and getattr(est, "optimizer", None) is not None and indep \
                and st.get("search_converged_", True):
            checks.update(_gp_search(est, st, Xd, t, tol))
        parts.append(OracleReport(
            "GPClassifier", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, status, tol, indep, checks))
    if len(parts) == 1:
        return parts[0]
    return OracleReport("GPClassifier", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
                        "optimal" if all(p.status == "optimal" for p in parts) else "mixed",
                        max(p.tol for p in parts), all(p.independent_kernel for p in parts),
                        {}, parts)


def _laplace_lml(K: np.ndarray, t: np.ndarray) -> float | None:
    """The Laplace log marginal likelihood ``Psi(f_hat) - sum log diag(chol(I + W^1/2 K
    W^1/2))`` (GPML 3.32) with its own Newton mode (plain numpy, tight: 200 steps, step
    halving); ``None`` when Newton does not settle."""
    n = t.shape[0]
    s = 2.0 * t - 1.0
    f = np.zeros(n)
    a = np.zeros(n)
    psi = -n * np.log(2.0)
    for _ in range(200):
        pi = 1.0 / (1.0 + np.exp(-f))
        W = pi * (1.0 - pi)
        r = np.sqrt(W)
        B = np.eye(n) + r[:, None] * K * r[None, :]
        b = W * f + (t - pi)
        a_new = b - r * np.linalg.solve(B, r * (K @ b))
        for _ in range(40):
            f_new = K @ a_new
            psi_new = -0.5 * a_new @ f_new - np.logaddexp(0.0, -s * f_new).sum()
            if psi_new >= psi - 1e-13 * abs(psi):
                break
            a_new = 0.5 * (a + a_new)
        done = abs(psi_new - psi) <= 1e-13 * max(1.0, abs(psi))
        a, f, psi = a_new, f_new, psi_new
        if done:
            break
    else:
        return None
    pi = 1.0 / (1.0 + np.exp(-f))
    r = np.sqrt(pi * (1.0 - pi))
    ev = np.linalg.eigvalsh(np.eye(n) + r[:, None] * K * r[None, :])
    return float(psi - 0.5 * np.sum(np.log(ev)))


def _gp_search(est: Any, st: dict, X: np.ndarray, t: np.ndarray, tol: float
               ) -> dict[str, float]:
    """The hyper-parameter search of one binary GP, checked at the hyper-parameters it chose
    (``amplitude_``, ``kernel_``'s ``gamma``) with the Laplace evidence rebuilt in numpy:
    the stored ``log_marginal_likelihood_value_`` is that evidence; the search ended no lower
    than its start (the constructor's ``amplitude``/``gamma`` clipped to the bounds); and the
    chosen point is stationary in ``log amplitude``, ``log gamma`` (central differences,
    ``h = 1e-3``) unless on a bound. Thresholds, relative to ``max(1, |log q|)``: ``e = 1e-6 +
    min(tol, 1e-2)`` for the evidence (``tol`` the estimator's Newton tolerance), ``2 e`` for
    the fall, ``1e-2 + e / h`` for the gradient (L-BFGS-B stops on a relative fall of the
    objective, not on a gradient); each entry is reported as ``raw / threshold * tol_part``,
    so it is a violation exactly when it exceeds its threshold."""
    from .predictor import numpy_kernel

    kern = st["kernel_"]
    params = dict(kern.params()) if hasattr(kern, "params") else {}
    kname = type(kern).__name__

    def gram(amp: float, gamma: float | None) -> np.ndarray | None:
        p = dict(params)
        if gamma is not None:
            p["gamma"] = gamma
        shim = type(kname, (), {"params": lambda self: p})()
        K0, ok = numpy_kernel(shim, X, X)
        return amp * K0 if ok else None

    def bounds(b: Any) -> tuple[float, float] | None:
        return None if isinstance(b, str) else (float(b[0]), float(b[1]))

    amp, g = float(st["amplitude_"]), params.get("gamma")
    has_g = isinstance(g, (int, float)) and not isinstance(g, bool)
    ab = bounds(est.amplitude_bounds)
    gb = bounds(est.gamma_bounds) if has_g else None
    K = gram(amp, float(g) if has_g else None)
    if K is None:
        return {}
    here = _laplace_lml(K, t)
    if here is None:
        return {}
    scale = max(1.0, abs(here))
    e = 1e-6 + min(float(est.tol), 1e-2)
    out = {"violation:|log_marginal_likelihood_value_ - log q(theta_)| (scaled)":
           abs(float(st["log_marginal_likelihood_value_"]) - here) / scale / e * tol}
    a0 = float(est.amplitude) if ab is None else float(np.clip(est.amplitude, *ab))
    g0 = None
    if has_g:
        g0 = float(est.gamma) if isinstance(est.gamma, (int, float)) else float(g)
        g0 = g0 if gb is None else float(np.clip(g0, *gb))
    K0 = gram(a0, g0)
    start = None if K0 is None else _laplace_lml(K0, t)
    if start is not None:
        out["violation:log q(start) - log q(theta_), the search fell (scaled)"] = \
            max(0.0, start - here) / scale / (2 * e) * tol
    h = 1e-3
    grads = []
    for which, b in (("amp", ab), ("gamma", gb)):
        if b is None:
            continue
        v = amp if which == "amp" else float(g)
        lo, hi = np.log(b[0]), np.log(b[1])
        lv = np.log(v)
        vals = []
        for dv in (h, -h):
            x = float(np.exp(lv + dv))
            Kp = gram(x, float(g) if has_g else None) if which == "amp" else gram(amp, x)
            vals.append(None if Kp is None else _laplace_lml(Kp, t))
        if None in vals:
            continue
        d = (vals[0] - vals[1]) / (2 * h)
        # on a bound only the inward part of the gradient must vanish
        if (lv <= lo + 1e-6 and d < 0) or (lv >= hi - 1e-6 and d > 0):
            d = 0.0
        grads.append(abs(d))
    if grads:
        out["violation:|d log q / d log theta| at theta_ (scaled)"] = \
            max(grads) / scale / (1e-2 + e / h) * tol
    return out


def _rvm(est: Any, X: Any, y: Any) -> OracleReport:
    r"""Relevance vector machine (RVR; RVC at the Laplace mode), a fit with ``converged_``:
    the evidence is stationary. With the candidate basis ``P = [K, 1]`` rebuilt in numpy,
    the model's columns ``Phi = P[:, active_]``, ``A = diag(alpha_)``, ``B = beta I``
    (regression, ``beta_``) or ``diag(y (1 - y))``, ``y = sigma(Phi mu_)`` (classification),
    ``Sigma = (A + Phi^T B Phi)^{-1}`` (numpy) and ``gamma_i = 1 - alpha_i Sigma_ii``:

    * the posterior mean: regression ``||(A + beta Phi^T Phi) mu_ - beta Phi^T t|| /
      (||H|| ||mu_|| + ||beta Phi^T t||)``; classification the mode
      ``||Phi^T (t - y) - A mu_|| / (||H|| max(1, ||mu_||))``;
    * every kept basis function: ``alpha_i = gamma_i / mu_i^2``, as
      ``|log(alpha_i mu_i^2 / gamma_i)|`` (its slope in ``log alpha_i`` is ``gamma_i <= 1``,
      so it is at most the estimator's ``optimality_`` measure ``|log alpha_i - log
      alpha_i^*|``), except an intercept at ``alpha_i = 0`` (``bias_prior="flat"``: a flat
      prior, no precision to be stationary in);
    * regression, the noise: ``beta = (N - sum gamma) / ||t - Phi mu||^2`` as
      ``|log(beta ||t - Phi mu||^2 / (N - sum gamma))|`` (one-sided at the cap
      ``beta <= 1e6 / var(t)``: there the update may only ask for more);
    * every pruned basis function: ``q_i^2 <= s_i`` (Tipping & Faul), as
      ``max(0, q_i^2 - s_i) / s_i`` with ``s_i = S_i = phi_i^T B phi_i - phi_i^T B Phi Sigma
      Phi^T B phi_i`` and ``q_i = Q_i = phi_i^T r`` (``r = beta (t - Phi mu)`` or ``t - y``).

    Tolerance ``10 max(tol, 1e-6)``: what ``converged_`` requires of ``optimality_``.
    A fit not converged claims nothing (status ``"not converged"``). RVC one-vs-rest: one
    part per class."""
    Xd = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if type(est).__name__ == "RVC" and getattr(est, "estimators_", None):
        classes = np.asarray(est.classes_)
        parts = [_rvm_binary(sub, Xd, (y == c).astype(float))
                 for sub, c in zip(est.estimators_, classes, strict=True)]
        return OracleReport("RVC", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
                            "optimal" if est.converged_ else "not converged",
                            max(p.tol for p in parts), all(p.independent_kernel for p in parts),
                            {}, parts)
    if type(est).__name__ == "RVC":
        t = (y == np.asarray(est.classes_)[1]).astype(float)
    else:
        t = y.astype(float)
    return _rvm_binary(est, Xd, t)


def _rvm_binary(est: Any, Xd: np.ndarray, t: np.ndarray) -> OracleReport:
    name = type(est).__name__
    classification = name == "RVC"
    tol = 10.0 * max(float(est.tol), 1e-6)
    status = "optimal" if bool(est.converged_) else "not converged"
    K, indep = _plain_kernel(est.kernel_, Xd)
    N = t.shape[0]
    P = np.column_stack([K, np.ones(N)]) if est.bias else K
    act = np.asarray(est.active_, dtype=int)
    a = np.asarray(est.alpha_, dtype=float)
    mu = np.asarray(est.mu_, dtype=float)
    Pa = P[:, act]
    extra: dict[str, Any] = {}
    if classification:
        yv = 1.0 / (1.0 + np.exp(-(Pa @ mu)))
        b = yv * (1.0 - yv)
        r = t - yv
        H = (Pa.T * b) @ Pa + np.diag(a)
        g = Pa.T @ r - a * mu
        hn = float(np.linalg.norm(H, 2)) if act.size else 1.0
        extra["violation:Laplace mode ||Phi^T (t - y) - A mu_|| / (||H|| max(1, ||mu_||))"] = \
            float(np.linalg.norm(g)) / max(hn * max(1.0, float(np.linalg.norm(mu))), 1e-300)
    else:
        beta = float(est.beta_)
        b = np.full(N, beta)
        H = beta * (Pa.T @ Pa) + np.diag(a)
        rhs = beta * (Pa.T @ t)
        hn = float(np.linalg.norm(H, 2)) if act.size else 1.0
        extra["violation:posterior mean ||H mu_ - beta Phi^T t|| / (||H|| ||mu_|| + "
              "||beta Phi^T t||)"] = float(np.linalg.norm(H @ mu - rhs)) / max(
                  hn * float(np.linalg.norm(mu)) + float(np.linalg.norm(rhs)), 1e-300)
        e = t - Pa @ mu
        r = beta * e
    Sigma = np.linalg.inv(H) if act.size else np.zeros((0, 0))
    gam = 1.0 - a * np.diag(Sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        # a precision of 0 is a flat prior (RVR's bias_prior="flat"), not a hyperparameter
        dev = np.abs(np.log(a[a > 0] * mu[a > 0] ** 2 / gam[a > 0]))
    extra["violation:max |log(alpha_i mu_i^2 / gamma_i)| (kept)"] = \
        float(np.max(np.where(np.isnan(dev), np.inf, dev), initial=0.0))
    if not classification:
        e2 = float(e @ e)
        dof = N - float(gam.sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            lb = float(np.log(beta * e2 / dof))
        var_t = float(np.var(t))
        sq = float(np.mean(t * t))
        var_ref = var_t if var_t > 1e-12 * sq else (1e-12 * sq if sq > 0 else 1.0)
        at_cap = beta >= (1.0 - 1e-12) * 1e6 / var_ref
        # at the cap the update (N - sum gamma) / ||e||^2 may exceed beta: lb <= 0 allowed
        v = max(0.0, lb) if at_cap else abs(lb)
        extra["violation:|log(beta ||t - Phi mu||^2 / (N - sum gamma))|"] = \
            v if np.isfinite(v) else float("inf")
    out = np.setdiff1d(np.arange(P.shape[1]), act)
    if out.size:
        Po = P[:, out]
        G = Po.T @ (b[:, None] * Pa)
        S = b @ (Po * Po) - np.einsum("ij,ij->i", G @ Sigma, G)
        Q = Po.T @ r
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.maximum(Q * Q - S, 0.0) / S
        extra["violation:max (q_i^2 - s_i)^+ / s_i (pruned)"] = \
            float(np.max(np.where(np.isnan(v), np.inf, v)))
    return OracleReport(name, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, status, tol, indep, extra)
