r"""An optimality oracle that trusts nothing but the fitted predictor and the data.

For a fitted estimator and its training data, :func:`oracle_gap` recomputes, with plain
numpy (never the library's kernel, certificate or recovery code):

* the kernel ``K_ij = k(x_i, x_j)`` from the kernel's *name and parameters* (linear, RBF,
  polynomial, sigmoid, precomputed; any other kernel is evaluated through ``kernel_`` and the
  report says ``independent_kernel=False``);
* the predictor ``f(x) = sum_s c_s k(x, z_s) + b`` from exactly what ``decision_function``
  uses (``support_vectors_``, ``dual_coef_``, ``intercept_``; a low-rank fit's
  ``v(x)^T eta_ + b_`` with ``v`` rebuilt from the factor's basis and projection);
* the primal objective ``P`` of that predictor with its *optimal* slacks (hinge, squared hinge,
  tube, logistic loss, ...), optimal ``rho`` / ``epsilon`` for the nu-variants (nu-SVC: optimal
  over the free scale of the predictor's ray too, since ``predict`` fixes only the direction),
  hard margin: ``1/2 ||w||^2`` with the margin violation ``max(0, 1 - min_i y_i f_i)``
  checked against ``tol`` on its own (the predictor scaled to feasibility, ``t = 1 / min_i
  y_i f_i``, gives the ``feasible relative gap`` reported alongside);
* the dual objective ``D`` from the multipliers alone (``alpha_``, ``alpha_star_``) and
  their infeasibility (box, equality, nu constraint), relative to the box;
* ``relative_gap = (P - D) / max(u, |P|)`` with the documented unit
  ``u = min(1, C_max^2)`` (``C_max`` the largest finite per-sample weight ``C_i``; 1 without
  one).

``P`` is the objective of a primal-feasible point and, when the multipliers are dual feasible,
``D <= d* = p*``; so ``P - D`` bounds the suboptimality of the predictor and of the multipliers
whatever the solver or the certificate claims.  :func:`assert_oracle_optimal` fails when a fit
called ``"optimal"`` has a relative gap (or dual infeasibility) above its estimator's ``tol``,
capped at ``1e-2`` whatever ``tol`` is (and not below ``1e-6``: SMO's float32 kernel cache).

Also covered: the multiclass wrappers (each sub-problem rebuilt from ``estimator_rows_`` and
``codes_``), :class:`~primaldual.bounds.EnclosingBall` (``R^2`` of the centre versus the ball
dual, unit ``1e-10 max_i k_ii``), :class:`~primaldual.decomposition.KernelPCA` (the full
spectrum of the centred Gram matrix by ``numpy.linalg.eigvalsh``: kept eigenvalues equal the
leading ones, no omitted eigenvalue above the smallest kept, eigen-residuals and
orthonormality) and :class:`~primaldual.decomposition.KernelPLSRegression` (orthonormal
scores, predictions equal to an independent NIPALS kernel PLS written here), the Bayesian
kernel machines :class:`~primaldual.gaussian_process.GPClassifier` (the Laplace mode's
stationarity ``f = K (t - sigma(f))``, per class for one-vs-rest) and
:class:`~primaldual.rvm.RVR` / :class:`~primaldual.rvm.RVC` (evidence stationarity of a fit
called ``converged_``: ``alpha_i = gamma_i / mu_i^2`` for kept basis functions, the noise
update, ``q_i^2 <= s_i`` for pruned ones, the posterior mean / IRLS mode), and the
semi-supervised :class:`~primaldual.methods.laplacian.LapRLS` /
:class:`~primaldual.methods.laplacian.LapSVC` (the k-NN graph Laplacian rebuilt with numpy,
the primal of the predictor on labelled and unlabelled rows, the dual through
``G = J K P^{-1} J^T`` from ``dual_beta_``; per sub-problem for multiclass LapSVC), and the
fuzz's ``Variant`` shapes (:mod:`primaldual.fuzz_variants`: the predictor's primal with
optimal slacks against CVXPY's optimum of the same primal on the numpy kernel).

The package's modules: ``report`` (the report and its tolerance), ``predictor`` (the kernel and
the predictor in numpy), then one module per family: ``binary`` (the loss-based kernel machines
and the multiclass wrappers), ``decomposition`` (the ball, kernel PCA and PLS), ``laplacian``
and ``bayes`` (the Gaussian-process classifier and the relevance vector machines).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .bayes import _gpc, _rvm
from .binary import _binary, _kind, _multiclass, _nu_normalised, _per_sample_C, _Restricted, _take
from .decomposition import _ball, _kpca, _kpls
from .laplacian import _laplacian
from .predictor import numpy_kernel
from .report import OracleReport, oracle_tolerance
from .variant import variant_oracle

__all__ = ["OracleReport", "oracle_gap", "assert_oracle_optimal", "oracle_tolerance",
           "numpy_kernel"]


def oracle_gap(estimator: Any, X: Any, y: Any = None, sample_weight: Any = None
               ) -> OracleReport:
    """Recompute the duality gap of a fitted ``estimator`` on its training data ``(X, y)``
    (and ``sample_weight``) independently of the library (module docstring).

    Parameters
    ----------
    estimator : fitted primaldual estimator
        A binary or multiclass kernel classifier/regressor of the catalogue (C-SVC, L2-SVC,
        hard margin, nu-SVC, epsilon-/nu-SVR, LS-SVC/LS-SVR, kernel ridge, proximal SVC,
        kernel logistic regression), a multiclass wrapper, :class:`EnclosingBall`,
        :class:`KernelPCA`, :class:`KernelPLSRegression`, :class:`GPClassifier`,
        :class:`RVR` / :class:`RVC`, :class:`LapRLS` / :class:`LapSVC` (``y`` with ``NaN``
        for unlabelled rows).
    X, y : the training data the estimator was fitted on (``y`` unused for the ball and PCA).
    sample_weight : array, optional

    Returns
    -------
    OracleReport
        ``relative_gap = (P - D) / max(min(1, C_max^2), |P|)``; multiclass fits carry one
        report per sub-problem in ``parts``.
    """
    name = type(estimator).__name__
    tol = oracle_tolerance(estimator)
    if name == "EnclosingBall":
        return _ball(estimator, X, tol)
    if name == "KernelPCA":
        return _kpca(estimator, X)
    if name == "KernelPLSRegression":
        return _kpls(estimator, X, y)
    if name == "GPClassifier":
        return _gpc(estimator, X, y)
    if name in ("RVR", "RVC"):
        return _rvm(estimator, X, y)
    if name in ("LapRLS", "LapSVC"):
        return _laplacian(estimator, X, y, sample_weight, tol)
    if name == "Variant":
        return variant_oracle(estimator, X, y, tol)
    if getattr(estimator, "estimators_", None) is not None and \
            getattr(estimator, "codes_", None) is not None:
        return _multiclass(estimator, X, y, sample_weight, tol)
    Xd = X if sp.issparse(X) else np.asarray(X, dtype=float)
    y_raw = np.asarray(y)
    if getattr(estimator, "_task", "") == "classification":
        classes = np.unique(y_raw)
        y_pm = np.where(y_raw == classes[-1], 1.0, -1.0)
    else:
        y_pm = None
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    yv = y_pm if y_pm is not None else y_raw.astype(float)
    C = 1.0 if _kind(estimator) == "NuSVC" else float(getattr(estimator, "C", 1.0))
    Ci = _per_sample_C(estimator, y_raw, y_pm, sw, C, getattr(estimator, "class_weight", None))
    if sw is not None and np.any(sw <= 0):  # rows with weight <= 0 are dropped (LIBSVM)
        keep = sw > 0
        return _binary(_Restricted(estimator, keep), _take(Xd, keep), yv[keep],
                       _nu_normalised(estimator, Ci[keep]), tol)
    return _binary(estimator, Xd, yv, _nu_normalised(estimator, Ci), tol)


def assert_oracle_optimal(estimator: Any, X: Any, y: Any = None, sample_weight: Any = None
                          ) -> OracleReport:
    """Assert that a fit called ``"optimal"`` is optimal by :func:`oracle_gap`: relative gap
    and dual infeasibility ``<= tol`` (the estimator's ``tol`` clipped to ``[1e-6, 1e-2]``),
    finite objectives, and every named check of the ball, PCA and PLS oracles. A fit not
    called ``"optimal"`` passes (it claims nothing). Returns the report."""
    rep = oracle_gap(estimator, X, y, sample_weight)
    bad = rep.violations
    if bad:
        raise AssertionError("; ".join(bad[:5]))
    return rep
