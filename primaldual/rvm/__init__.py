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

Regression specifics (:mod:`~primaldual.rvm.sequential`, compiled with numba). With
``bias=True`` the search starts from the bias and keeps it until the first convergence, then
continues without that restriction (SparseBayes keeps its bias; starting from the kernel column
best aligned with ``t`` often drops the bias early and ends at a lower local maximum). Once no
addition or deletion gains, a damped Newton step on the model's ``(log alpha, log beta)``
replaces the one-at-a-time re-estimates (kept only if ``L`` rose), which otherwise need
hundreds of steps where precisions are coupled. ``beta`` is capped at ``1e6 / var(t)``
(SparseBayes' cap). Constant targets have no maximum (``L`` grows as the noise goes to 0): the
model is the bias at the noise floor, with a :class:`ConvergenceWarning`. A last basis function
whose own optimum is ``alpha = inf`` leaves the model: the evidence is then stationary at the
empty model ``y = 0``.

Classification (Bernoulli likelihood ``p(t = 1 | x) = sigma(y(x))``): the Laplace step replaces
the Gaussian likelihood, i.e. IRLS (Newton) for the posterior mode ``mu`` of the weights in the
model, ``B = diag(y_i (1 - y_i))``, ``Sigma = (A + Phi^T B Phi)^{-1}`` at the mode and the
effective targets ``t_hat = Phi mu + B^{-1} (t - y)``, so that ``Q_m = phi_m^T (t - y)``.

Modules: :mod:`~primaldual.rvm.estimators` (:class:`RVR`, :class:`RVC`, the shared posterior,
optimality and bookkeeping), :mod:`~primaldual.rvm.sequential` (the compiled regression search),
:mod:`~primaldual.rvm.laplace` (the classification search around the IRLS Laplace step),
:mod:`~primaldual.rvm.evidence` (the dense reference :func:`rvr_log_evidence`).
"""

from .estimators import RVC, RVR
from .evidence import rvr_log_evidence

__all__ = ["RVC", "RVR", "rvr_log_evidence"]
