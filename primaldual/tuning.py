r"""Hyper-parameter tuning: Suykens' shrinking grid search, closed-form LOO / GCV for the LS-SVM
family, warm-started C paths for the SMO methods.

scikit-learn's ``GridSearchCV`` and ``cross_val_score`` work unchanged on every method (they go
through joblib, so ``joblib.parallel_config(backend="dask")`` runs them on a Dask cluster); this
module adds what is specific to the texts:

* :func:`shrinking_grid_search` -- Suykens 3.4.2: ``cv``-fold CV over a log grid of
  ``(C, sigma)`` (RBF ``k(x, z) = exp(-||x - z||^2 / sigma^2)``, i.e. ``gamma = 1/sigma^2``),
  then a grid of the same size, shrunk by ``shrink`` in log-space, centred on the best pair, for
  ``i_max`` rounds.
* :func:`lssvm_loo` / :func:`lssvm_gcv` -- leave-one-out residuals and the GCV score of an
  LS-SVM-family estimator from ONE Cholesky factor of ``K + I/C`` (Cawley & Talbot 2004;
  :func:`loo_residuals`, :func:`gcv_score`),
  and :func:`lssvm_select` to pick ``(C, gamma)`` by either criterion without refitting.
* :func:`c_path` -- fits along increasing ``C`` with SMO warm starts: the optimum ``alpha`` at
  ``C_k`` is feasible at ``C_{k+1} >= C_k`` (``0 <= alpha <= C_k <= C_{k+1}``, ``y^T alpha = 0``).
* :func:`radius_margin_select` -- pick ``(C, gamma)`` of a binary SVM by the radius-margin
  criterion ``R^2 ||w||^2 / N`` (Vapnik & Chapelle 2000: the bound itself is four times it):
  one enclosing ball per ``gamma``, one fit per
  pair, no cross-validation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

from .backends.linsys.direct import KernelCholesky, factor_kernel, prep_rhs, solve_bordered
from .engine import finish as engine_finish
from .kernels.gram import gram, kernel_diag
from .validation import check_data_matrix, check_kernel_or_none

__all__ = ["ShrinkingGridResult", "shrinking_grid_search", "lssvm_loo", "lssvm_gcv",
           "lssvm_select", "c_path", "fit_with_options", "radius_margin_select"]


# ----------------------------------------------------------------------------- helpers
def _log_grid(center: float, half_width: float, n: int) -> np.ndarray:
    return np.exp(np.linspace(np.log(center) - half_width, np.log(center) + half_width, n))


def _check_positive_grid(g: Any, name: str) -> np.ndarray:
    a = np.asarray(g, dtype=float).ravel()
    if a.size < 1 or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name} must be a non-empty array of positive finite numbers")
    return np.unique(a)


def fit_with_options(estimator: Any, X: Any, y: Any, *, backend: str = "smo",
                     sample_weight: Any = None, **solver_options: Any) -> Any:
    """Fit a binary primaldual estimator passing extra options to the backend's ``solve``
    (SMO: ``alpha0`` warm start, ``record_trace`` for the convergence trace); otherwise the
    same pipeline as ``fit`` (problem -> backend -> recovery -> certificate)."""
    X, y = estimator._validate_input(X, y)
    if estimator._task == "classification":
        estimator.classes_ = np.unique(y)
        if estimator.classes_.shape[0] != 2:
            raise ValueError("fit_with_options fits one binary (or regression) problem; "
                             f"y has {estimator.classes_.shape[0]} classes")
    t0 = time.perf_counter()
    data = estimator._prepare(X, y, sample_weight)
    task = estimator._fit_task(data, "dual")
    sol, rec, _ = estimator._solve(data, backend, "dual", task=task, **solver_options)
    engine_finish(task, sol, rec, t0)   # certified and audited as every fit
    return estimator


# ----------------------------------------------------------------------------- shrinking grid
@dataclass
class ShrinkingGridResult:
    """Outcome of :func:`shrinking_grid_search`.

    ``history`` holds one ``(C_grid, sigma_grid, mean CV score matrix)`` per round;
    ``best_estimator_`` is refit on all the data with the best pair.
    """

    best_params_: dict
    best_score_: float
    best_estimator_: Any
    history: list = field(default_factory=list)
    n_fits: int = 0


def shrinking_grid_search(estimator: Any, X: Any, y: Any, *, C_grid: Any = None,
                          sigma_grid: Any = None, i_max: int = 3, cv: Any = 10,
                          shrink: float = 0.5, scoring: Any = None, n_jobs: int | None = None,
                          random_state: int | None = 0, verbose: bool = False
                          ) -> ShrinkingGridResult:
    r"""Suykens 3.4.2 shrinking grid search over ``(C, sigma)`` with ``cv``-fold CV.

    Round 0 evaluates ``C_grid x sigma_grid`` (defaults: 7 values of ``C`` in ``[1e-2, 1e4]``,
    7 of ``sigma`` around ``sqrt(n_features)`` over 4 decades); each further round (``i_max``
    in all) re-grids with the same numbers of points, centred at the best pair, each log-span
    multiplied by ``shrink``. The RBF width enters as ``gamma = 1 / sigma^2``. Each round is one
    :class:`~sklearn.model_selection.GridSearchCV` (joblib: ``n_jobs``, Dask-able); a tqdm
    progress bar shows the rounds when ``verbose``.

    Returns
    -------
    ShrinkingGridResult
    """
    if isinstance(i_max, bool) or not isinstance(i_max, (int, np.integer)) or i_max < 1:
        raise ValueError(f"i_max must be a positive integer, got {i_max!r}")
    if not (0.0 < shrink < 1.0):
        raise ValueError(f"shrink must be in (0, 1), got {shrink!r}")
    if "gamma" not in estimator.get_params() or "C" not in estimator.get_params():
        raise ValueError("estimator must have C and gamma parameters (an RBF kernel method)")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    Cs = _check_positive_grid(np.logspace(-2, 4, 7) if C_grid is None else C_grid, "C_grid")
    s0 = np.sqrt(X.shape[1])
    ss = _check_positive_grid(s0 * np.logspace(-2, 2, 7) if sigma_grid is None else sigma_grid,
                              "sigma_grid")
    if isinstance(cv, (int, np.integer)):
        splitter = (StratifiedKFold if is_classifier(estimator) else KFold)(
            int(cv), shuffle=True, random_state=random_state)
    else:
        splitter = cv
    base = clone(estimator).set_params(kernel="rbf")
    span_C = 0.5 * np.log(Cs[-1] / Cs[0]) if Cs.size > 1 else 1.0
    span_s = 0.5 * np.log(ss[-1] / ss[0]) if ss.size > 1 else 1.0
    nC, ns = Cs.size, ss.size
    history, best, best_score, n_fits = [], None, -np.inf, 0
    rounds = range(i_max)
    if verbose:
        from tqdm.auto import tqdm
        rounds = tqdm(rounds, desc="shrinking grid", unit="round")
    for r in rounds:
        if r > 0:
            span_C *= shrink
            span_s *= shrink
            Cs = _log_grid(best["C"], span_C, max(nC, 3))
            ss = _log_grid(best["sigma"], span_s, max(ns, 3))
        gs = GridSearchCV(base, {"C": list(Cs), "gamma": list(1.0 / ss**2)}, cv=splitter,
                          scoring=scoring, n_jobs=n_jobs, refit=False, error_score=-np.inf)
        gs.fit(X, y)
        n_fits += len(gs.cv_results_["params"]) * gs.n_splits_
        scores = np.asarray(gs.cv_results_["mean_test_score"]).reshape(len(Cs), len(ss))
        history.append((Cs.copy(), ss.copy(), scores))
        i, j = np.unravel_index(np.argmax(scores), scores.shape)
        if scores[i, j] > best_score or best is None:
            best_score = float(scores[i, j])
            best = {"C": float(Cs[i]), "sigma": float(ss[j])}
        if verbose and hasattr(rounds, "set_postfix"):
            rounds.set_postfix(C=f"{best['C']:.3g}", sigma=f"{best['sigma']:.3g}",
                               score=f"{best_score:.4f}")
    params = {"C": best["C"], "gamma": 1.0 / best["sigma"] ** 2, "sigma": best["sigma"]}
    est = clone(base).set_params(C=params["C"], gamma=params["gamma"]).fit(X, y)
    return ShrinkingGridResult(params, best_score, est, history, n_fits)


# ----------------------------------------------------------------------------- LOO / GCV
def _kkt_parts(estimator: Any, X: Any, y: Any):
    if not hasattr(estimator, "_kkt"):
        raise TypeError(f"{type(estimator).__name__} is not an LS-SVM-family method "
                        "(LSSVC, LSSVR, KernelRidge)")
    est = clone(estimator)
    X, y = est._validate_input(X, y)
    if est._task == "classification":
        if np.unique(y).shape[0] != 2:
            raise ValueError("closed-form LOO/GCV for a classifier needs exactly 2 classes")
    data = est._prepare(X, y)
    sysm = est._kkt(data)
    if sysm.rank_one:
        raise TypeError("closed-form LOO/GCV does not cover the proximal SVM's rank-one term")
    C = np.asarray(sysm.C, dtype=float)
    if C.ndim and not np.all(C == C.ravel()[0]):
        raise ValueError("closed-form LOO/GCV needs one C for all samples (no sample weights)")
    fac = factor_kernel(data.X, sysm.kernel, float(C.ravel()[0]))
    b, a = solve_bordered(fac, sysm.d, sign=sysm.sign, bias=sysm.bias)
    return est, data, sysm, fac, b, a


def lssvm_loo(estimator: Any, X: Any, y: Any) -> dict:
    r"""Closed-form leave-one-out of an LS-SVM-family estimator (one factorisation).

    Residuals ``r_i = d_i - s_i f^{(-i)}(x_i)`` (:func:`loo_residuals`).
    Regression: ``f^{(-i)}(x_i) = y_i - r_i``, score ``PRESS/N = mean r_i^2``. Classifier
    (``d = t_i``, ``s = y_i``): ``y_i f^{(-i)}(x_i) = t_i - r_i``, LOO error rate
    ``mean[t_i - r_i <= 0]``.

    Returns
    -------
    dict with ``residuals``, ``f_loo`` (the held-out decision values ``f^{(-i)}(x_i)``) and
    ``score`` (LOO accuracy for classifiers, ``-PRESS/N`` for regression: larger is better).
    """
    est, data, sysm, fac, b, a = _kkt_parts(estimator, X, y)
    r = loo_residuals(fac, sysm.d, b, a, sign=sysm.sign, bias=sysm.bias)
    s = sysm.signs
    f_loo = s * (sysm.d - r)
    if est._task == "classification":
        score = float(np.mean(data.y * f_loo > 0))
    else:
        score = -float(np.mean(r**2))
    return {"residuals": r, "f_loo": f_loo, "score": score}


def lssvm_gcv(estimator: Any, X: Any, y: Any) -> float:
    r"""GCV score ``N ||a||^2 / tr(M^{-1}_{aa})^2`` of an LS-SVM-family estimator
    (:func:`gcv_score`; smaller is better)."""
    _, _, sysm, fac, b, a = _kkt_parts(estimator, X, y)
    return gcv_score(fac, sysm.d, b, a, sign=sysm.sign, bias=sysm.bias)


def lssvm_select(estimator: Any, X: Any, y: Any, C_grid: Any, gamma_grid: Any, *,
                 criterion: str = "loo", verbose: bool = False) -> dict:
    """Pick ``(C, gamma)`` of an LS-SVM-family estimator by closed-form LOO or GCV (one
    factorisation per pair, no refits); returns the best pair, the score table and the refit
    estimator."""
    if criterion not in ("loo", "gcv"):
        raise ValueError(f"criterion must be 'loo' or 'gcv', got {criterion!r}")
    Cs = _check_positive_grid(C_grid, "C_grid")
    gs = _check_positive_grid(gamma_grid, "gamma_grid")
    table = np.empty((Cs.size, gs.size))
    pairs = [(i, j) for i in range(Cs.size) for j in range(gs.size)]
    if verbose:
        from tqdm.auto import tqdm
        pairs = tqdm(pairs, desc=f"LS-SVM {criterion}")
    for i, j in pairs:
        e = clone(estimator).set_params(C=float(Cs[i]), gamma=float(gs[j]))
        table[i, j] = (lssvm_loo(e, X, y)["score"] if criterion == "loo"
                       else -lssvm_gcv(e, X, y))
    i, j = np.unravel_index(np.argmax(table), table.shape)
    best = {"C": float(Cs[i]), "gamma": float(gs[j])}
    return {"best_params": best, "scores": table, "C_grid": Cs, "gamma_grid": gs,
            "best_estimator": clone(estimator).set_params(**best).fit(X, y)}


# ----------------------------------------------------------------------------- warm C path
def c_path(estimator: Any, X: Any, y: Any, Cs: Any, *, warm_start: bool = True) -> list:
    r"""Fit ``estimator`` (a box-constrained SMO method with a ``C``: CSVC, L2SVC, EpsilonSVR)
    for each ``C`` in increasing order with the SMO backend; with ``warm_start`` the solve at
    ``C_{k+1}`` starts from ``(C_{k+1} / C_k) alpha(C_k)``: feasible (``0 <= alpha <= C_k``
    scales into the new box, and the equality ``y^T alpha = 0`` is homogeneous), with the
    variables at their bound kept at it, which most of them stay at (the usual C-path warm
    start). Returns the fitted estimators (``n_iter_`` records the SMO iterations of each)."""
    Cs = np.sort(_check_positive_grid(Cs, "Cs"))
    out, prev, prev_C = [], None, None
    for C in Cs:
        est = clone(estimator).set_params(C=float(C))
        opts = {}
        if warm_start and prev is not None:
            opts["alpha0"] = prev * (float(C) / prev_C)
        fit_with_options(est, X, y, backend="smo", **opts)
        sol = est.solution_
        prev, prev_C = np.asarray(sol.values[sol_variable(sol)], dtype=float), float(C)
        out.append(est)
    return out


def sol_variable(sol: Any) -> str:
    """Name of the box variable of an SMO solution (``alpha``, or the stacked SVR variable)."""
    for name in ("alpha", "a", "alphas"):
        if name in sol.values:
            return name
    return next(iter(sol.values))


# ----------------------------------------------------------------------------- radius-margin
def radius_margin_select(estimator: Any, X: Any, y: Any, C_grid: Any, gamma_grid: Any, *,
                         verbose: bool = False) -> dict:
    r"""Pick ``(C, gamma)`` of a binary kernel SVM (``CSVC``, ``L2SVC``, ...) by the
    radius-margin criterion ``T = R^2 ||w||^2 / N`` (Vapnik & Chapelle 2000: ``4 T`` bounds the
    expected leave-one-out error rate of the hard margin), smaller is better.

    ``R^2`` comes from the smallest enclosing ball in the feature space of ``gamma``
    (:class:`primaldual.bounds.EnclosingBall`, one per ``gamma``, independent of ``C``);
    ``||w||^2 = beta^T K beta`` from one fit per pair; for an ``L2SVC`` both use ``K + I/C``
    (:func:`primaldual.bounds.radius_margin_bound`). Returns ``best_params``, the table
    ``bounds`` (``len(C_grid) x len(gamma_grid)``, values of ``T``), ``radius2`` (same shape),
    ``w_norm2`` and the refit ``best_estimator``.
    """
    from .bounds import EnclosingBall

    Cs = _check_positive_grid(C_grid, "C_grid")
    gs = _check_positive_grid(gamma_grid, "gamma_grid")
    X = np.asarray(X, dtype=float)
    N = X.shape[0]
    W2 = np.empty((Cs.size, gs.size))
    from .methods.svc import L2SVC

    l2 = isinstance(estimator, L2SVC)  # R and w in the feature space of K + I/C
    R2 = np.empty((Cs.size, gs.size))
    for j, g in enumerate(gs):
        kernel = clone(estimator).set_params(gamma=float(g))._kernel(X)
        r2 = None if l2 else EnclosingBall(kernel=kernel).fit(X).radius2_
        for i, C in enumerate(Cs):
            m = clone(estimator).set_params(C=float(C), gamma=float(g)).fit(X, y)
            if hasattr(m, "estimators_"):
                raise ValueError("radius_margin_select needs a binary problem (y has "
                                 f"{len(m.classes_)} classes)")
            beta = np.asarray(m.beta_, dtype=float)
            if l2:
                from .bounds import radius_margin_bound
                radius_margin_bound(m)
                R2[i, j], W2[i, j] = m.certificate_.extra["R^2"], m.certificate_.extra["||w||^2"]
            else:
                R2[i, j], W2[i, j] = r2, float(beta @ m.kernel_(X) @ beta)
            if verbose:
                print(f"C={C:.4g} gamma={g:.4g}  R^2={R2[i, j]:.4g}  ||w||^2={W2[i, j]:.4g}  "
                      f"T={R2[i, j] * W2[i, j] / N:.4g}")
    T = W2 * R2 / N
    i, j = np.unravel_index(np.argmin(T), T.shape)
    best = {"C": float(Cs[i]), "gamma": float(gs[j])}
    return {"best_params": best, "bounds": T, "radius2": R2, "w_norm2": W2, "C_grid": Cs,
            "gamma_grid": gs, "best_estimator": clone(estimator).set_params(**best).fit(X, y)}


# ---------------------------------------------------------------------------
# leave-one-out, GCV, GP variance
# ---------------------------------------------------------------------------


def _bordered_inv_diag(factor: KernelCholesky, bias: bool) -> np.ndarray:
    r"""Diagonal of the alpha block of the bordered inverse:
    ``diag(A^{-1}) - eta_i^2 / 1^T eta`` with ``eta = A^{-1} 1`` (sign-invariant)."""
    dinv = factor.inverse_diag()
    if not bias:
        return dinv
    eta = factor.eta()
    return dinv - eta**2 / np.sum(eta)


def loo_residuals(factor: KernelCholesky, d: np.ndarray, b: Any, a: np.ndarray, *,
                  sign: np.ndarray | None = None, bias: bool = True) -> np.ndarray:
    r"""Closed-form leave-one-out residuals (Cawley & Talbot 2004) from the factor.

    ``r_i = d_i - s_i f^{(-i)}(x_i) = a_i / [M^{-1}]_{ii}``, where ``f^{(-i)}`` is the model
    refitted without row ``i`` and ``M`` the bordered matrix; its alpha-block diagonal is
    ``diag(A^{-1}) - eta_i^2 / 1^T eta`` (``eta = A^{-1} 1``), or ``diag(A^{-1})`` without bias.
    Regression: ``y_i - f^{(-i)}(x_i)``; classifier (``d = 1``, ``s = y``):
    ``1 - y_i f^{(-i)}(x_i)``. Shape follows ``a``.
    """
    if not isinstance(factor, KernelCholesky):
        raise TypeError(f"factor must be a KernelCholesky, got {type(factor).__name__}")
    a = np.asarray(a, dtype=np.float64)
    if a.shape[0] != factor.n:
        raise ValueError(f"a has {a.shape[0]} rows, the factor has {factor.n}")
    prep_rhs(d, factor.n, sign)  # validation only
    m = _bordered_inv_diag(factor, bias)
    return a / (m if a.ndim == 1 else m[:, None])


def gcv_score(factor: KernelCholesky, d: np.ndarray, b: Any, a: np.ndarray, *,
              sign: np.ndarray | None = None, bias: bool = True) -> float:
    r"""Generalised cross-validation score for kernel ridge / LS-SVM.

    ``GCV = (1/N) ||(I - S) y||^2 / ((1/N) tr(I - S))^2`` with the hat matrix ``S``. Here
    ``(I - S) = M^{-1}_{aa} / C`` and the training residual ``e = a / C``, so
    ``GCV = N ||a||^2 / tr(M^{-1}_{aa})^2`` (mean over outputs), where ``M^{-1}_{aa}`` is the
    alpha block of the bordered inverse (``A^{-1}`` without bias).
    """
    if not isinstance(factor, KernelCholesky):
        raise TypeError(f"factor must be a KernelCholesky, got {type(factor).__name__}")
    a = np.asarray(a, dtype=np.float64).reshape(factor.n, -1)
    tr = float(np.sum(_bordered_inv_diag(factor, bias)))
    N = factor.n
    return float(np.mean(N * np.sum(a**2, axis=0) / tr**2))


def gp_predictive_variance(factor: KernelCholesky, X_train: np.ndarray, kernel: Any,
                           X_new: np.ndarray) -> np.ndarray:
    r"""The latent function's Gaussian-process variance ``k(x,x) - k_x^T (K + I/C)^{-1} k_x``.

    docs/formulations.md 11: with noise variance ``sigma_n^2 = 1/C`` the posterior mean is the
    kernel ridge / LS-SVR-without-bias predictor; the variance uses the same factor:
    ``v = L^{-1} k_x``, ``var = k(x,x) - ||v||^2`` (clipped at 0). Latent-function variance:
    a new observation's (Suykens (3.60)) adds the noise variance ``1/C``.
    """
    if not isinstance(factor, KernelCholesky):
        raise TypeError(f"factor must be a KernelCholesky, got {type(factor).__name__}")
    kernel = check_kernel_or_none(kernel)
    if kernel is None:
        raise ValueError("kernel is required for the predictive variance")
    X_train = check_data_matrix(X_train, "X_train")
    X_new = check_data_matrix(X_new, "X_new")
    if X_train.shape[0] != factor.n:
        raise ValueError(f"X_train has {X_train.shape[0]} rows, the factor has {factor.n}")
    if X_new.shape[1] != X_train.shape[1]:
        raise ValueError(f"X_new has {X_new.shape[1]} features, X_train has {X_train.shape[1]}")
    out = np.empty(X_new.shape[0])
    for i0 in range(0, X_new.shape[0], 2048):
        i1 = min(X_new.shape[0], i0 + 2048)
        Kx = gram(kernel, X_train, X_new[i0:i1])
        v = factor.solve_lower(Kx)
        out[i0:i1] = kernel_diag(kernel, X_new[i0:i1]) - np.einsum("ij,ij->j", v, v)
    return np.maximum(out, 0.0)
