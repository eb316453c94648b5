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
``G = J K P^{-1} J^T`` from ``dual_beta_``; per sub-problem for multiclass LapSVC).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .certificate import audit_tolerance

__all__ = ["OracleReport", "oracle_gap", "assert_oracle_optimal", "oracle_tolerance",
           "numpy_kernel"]


@dataclass
class OracleReport:
    """What :func:`oracle_gap` recomputed for one (sub-)problem.

    ``relative_gap = (primal - dual) / unit`` where ``unit = max(u, |primal|)``;
    ``dual_infeasibility`` is relative (to the box, or to the multipliers' size);
    ``status`` is the estimator's own status; ``tol`` the bound "optimal" must meet."""

    estimator: str
    primal: float
    dual: float
    gap: float
    unit: float
    relative_gap: float
    dual_infeasibility: float
    status: str
    tol: float
    independent_kernel: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    parts: list[OracleReport] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        """Why the fit's ``"optimal"`` is not borne out (empty when it is, or when the
        status is not ``"optimal"``)."""
        out: list[str] = []
        for p in self.parts:
            out += [f"{self.estimator}: part {i}: {m}" for i, m in enumerate(p.violations)]
        if self.status != "optimal" or self.parts:
            return out
        # rounding of the recomputed objectives, relative to the unit: a floor, or 4 times the
        # gap's measured sensitivity to the kernel's rounding (:func:`_binary`)
        slack = max(1e-9, 4.0 * float(self.extra.get("rounding", 0.0)))
        vals = (self.primal, self.dual, self.relative_gap)
        if not all(np.isfinite(v) for v in vals):
            out.append(f"{self.estimator}: 'optimal' but primal {self.primal!r}, dual "
                       f"{self.dual!r}, relative gap {self.relative_gap!r} not finite")
            return out
        if not self.relative_gap <= self.tol + slack:
            out.append(f"{self.estimator}: 'optimal' but the oracle's relative gap is "
                       f"{self.relative_gap:.3e} > tol {self.tol:.1e} (P = {self.primal:.10g}, "
                       f"D = {self.dual:.10g}, unit {self.unit:.3g})")
        if self.relative_gap < -(self.tol + slack):
            out.append(f"{self.estimator}: the oracle's relative gap {self.relative_gap:.3e} "
                       "is negative beyond tol: P or D is not what the model says")
        if not self.dual_infeasibility <= self.tol + slack:
            out.append(f"{self.estimator}: 'optimal' but the multipliers are dual infeasible "
                       f"by {self.dual_infeasibility:.3e} (relative) > tol {self.tol:.1e}")
        for k, v in self.extra.items():
            if k.startswith("violation:") and not v <= self.tol + slack:
                out.append(f"{self.estimator}: 'optimal' but {k[10:]} = {v:.3e} > tol "
                           f"{self.tol:.1e}")
        return out

    @property
    def ok(self) -> bool:
        return not self.violations


def oracle_tolerance(estimator: Any) -> float:
    """The bound "optimal" must meet: the estimator's ``tol`` through the fits' own audit rule
    (:func:`primaldual.certificate.audit_tolerance`: clipped to ``[1e-6, 1e-2]``, ``1e-3`` when
    it has none)."""
    return audit_tolerance(getattr(estimator, "tol", None))


# ----------------------------------------------------------------------------- kernels
def numpy_kernel(kernel: Any, A: Any, B: Any) -> tuple[np.ndarray, bool]:
    """``(k(A, B), independent)``: the kernel block from the kernel's name and parameters in
    plain numpy; ``independent=False`` when the kernel is not one of linear, RBF, polynomial,
    sigmoid, precomputed (then ``kernel(A, B)`` is evaluated)."""
    name = type(kernel).__name__
    if name == "Precomputed":
        raise ValueError("a precomputed kernel is a block of the user's own Gram matrix")
    A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=float)
    B = B.toarray() if sp.issparse(B) else np.asarray(B, dtype=float)
    p = kernel.params() if hasattr(kernel, "params") else {}
    if name == "Linear":
        return A @ B.T, True
    if name == "RBF":
        d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
        # exact differences where the expansion cancels (nearby points at a large scale)
        if A.shape[0] * B.shape[0] * A.shape[1] <= 4_000_000:
            d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
        return np.exp(-float(p["gamma"]) * np.maximum(d2, 0.0)), True
    if name == "Polynomial":
        return (float(p["gamma"]) * (A @ B.T) + float(p["coef0"])) ** int(p["degree"]), True
    if name == "Sigmoid":
        return np.tanh(float(p["gamma"]) * (A @ B.T) + float(p["coef0"])), True
    return np.asarray(kernel(A, B), dtype=float), False


def _gram(est: Any, A: Any, B: Any, cols: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """Kernel block between rows ``A`` (training rows, or the precomputed block) and ``B``;
    for a precomputed kernel ``A`` is the ``n x N`` Gram block and ``cols`` selects ``B``'s
    columns."""
    kern = est.kernel_
    if type(kern).__name__ == "Precomputed":
        A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=float)
        K, indep = (A[:, cols] if cols is not None else A), True
    else:
        K, indep = numpy_kernel(kern, A, B)
    if _ROUNDING["on"]:  # the kernel as another rounding would give it: K (1 +- 64 eps)
        rng = np.random.default_rng(K.shape[0] * 7919 + K.shape[1])
        K = K * (1.0 + 64.0 * np.finfo(float).eps * rng.choice([-1.0, 1.0], size=K.shape))
    return K, indep


#: set while :func:`_binary` recomputes the gap with a perturbed kernel (rounding sensitivity)
_ROUNDING = {"on": False}


# ----------------------------------------------------------------------------- helpers
def _unit(cmax: float) -> float:
    return min(1.0, cmax * cmax) if 0.0 < cmax < np.inf else 1.0


def _report(name: str, P: float, D: float, cmax: float, dinf: float, status: str, tol: float,
            indep: bool, **extra: Any) -> OracleReport:
    unit = max(_unit(cmax), abs(P)) if np.isfinite(P) else np.inf
    gap = P - D
    rel = gap / unit if np.isfinite(unit) and unit > 0 else float("nan")
    return OracleReport(name, float(P), float(D), float(gap), float(unit), float(rel),
                        float(dinf), status, tol, indep, dict(extra))


def _box(a: np.ndarray, lo: Any, up: Any, scale: float) -> float:
    if a.size == 0:
        return 0.0
    v = max(0.0, float(np.max(lo - a)), float(np.max(a - up)))
    return v / scale if scale > 0 else v


def _eq(v: float, scale: float) -> float:
    return abs(v) / scale if scale > 0 else abs(v)


def _per_sample_C(est: Any, y_raw: np.ndarray, y_pm: np.ndarray | None, sample_weight: Any,
                  C: float, class_weight: Any) -> np.ndarray:
    """``C_i = C * sample_weight_i * class_weight[y_i]`` (scikit-learn's ``balanced``:
    ``n / (n_classes n_c)`` via :func:`sklearn.utils.class_weight.compute_class_weight`)."""
    n = y_raw.shape[0]
    Ci = np.full(n, float(C))
    if sample_weight is not None:
        Ci = Ci * np.asarray(sample_weight, dtype=float)
    if class_weight is not None and y_pm is not None:
        from sklearn.utils.class_weight import compute_class_weight
        classes = np.unique(y_raw)
        w = compute_class_weight(class_weight, classes=classes, y=y_raw)
        Ci = Ci * w[np.searchsorted(classes, y_raw)]
    return Ci


# ----------------------------------------------------------------------------- predictor
def _predictor(est: Any, X: Any) -> tuple[np.ndarray, float, bool, dict]:
    """``(f on X, ||w||^2, independent kernel, info)`` from what ``decision_function`` uses
    (low-rank: the eta-problem's ``||eta||^2`` and ``V`` rebuilt from the factor)."""
    eta = getattr(est, "eta_", None)
    F = getattr(est, "lowrank_factor_", None)
    if eta is not None and F is not None:
        V, indep = _factor_features(est, F, X)
        f = V @ eta + float(est.b_)
        return f, float(eta @ eta), indep, {"V": V}
    coef = np.ravel(est.dual_coef_.toarray() if sp.issparse(est.dual_coef_)
                    else np.asarray(est.dual_coef_, dtype=float))
    b = float(np.ravel(est.intercept_)[0])
    sv = np.asarray(est.support_, dtype=np.intp)
    if coef.size == 0:
        return np.full(_rows(X), b), 0.0, True, {}
    if type(est.kernel_).__name__ == "Precomputed":
        Kx, indep = _gram(est, X, None, sv)
        Kss = Kx[sv]
    else:
        Z = est.support_vectors_
        Kx, indep = _gram(est, X, Z)
        Kss, _ = _gram(est, Z, Z)
    return Kx @ coef + b, float(coef @ Kss @ coef), indep, {"coef": coef, "b": b}


def _rows(X: Any) -> int:
    return int(X.shape[0])


def _factor_features(est: Any, F: Any, X: Any) -> tuple[np.ndarray, bool]:
    """``V = v(X)`` of a low-rank factor from its basis and projection (numpy kernel):
    ``proj^T k(basis, x)``, or ``L^{-1} k(basis, x)`` for the incomplete Cholesky."""
    import scipy.linalg

    idx = np.asarray(F.basis_index, dtype=np.intp)
    if type(est.kernel_).__name__ == "Precomputed":
        Kxb, indep = _gram(est, X, None, idx)
    else:
        Kxb, indep = _gram(est, X, F.basis)
    proj = np.asarray(F.proj, dtype=float)
    if F.method == "icholesky":
        if proj.size == 0:
            return np.zeros((_rows(X), 0)), indep
        return scipy.linalg.solve_triangular(proj, Kxb.T, lower=True).T, indep
    return Kxb @ proj, indep


# ----------------------------------------------------------------------------- binary methods
_CLASSIFIER_LOSS = {"CSVC", "L2SVC", "HardMarginSVC", "NuSVC", "LSSVC", "ProximalSVC",
                    "KernelLogisticRegression"}


def _kind(est: Any) -> str:
    for cls in type(est).__mro__:
        if cls.__name__ in _CLASSIFIER_LOSS | {"EpsilonSVR", "NuSVR", "LSSVR", "KernelRidge"}:
            return cls.__name__
    raise TypeError(f"oracle_gap: no oracle for {type(est).__name__}")


def _binary(est: Any, X: Any, y: np.ndarray, Ci: np.ndarray, tol: float) -> OracleReport:
    """:func:`_binary_once`, plus the gap's sensitivity to the kernel's rounding: recomputed
    with every kernel entry perturbed by ``64 eps`` relative (what another summation order or
    kernel formula gives), ``|gap' - gap| / unit`` is how far the relative gap is resolved at
    all (``rounding`` in ``extra``; an ill-conditioned problem, e.g. least squares at ``C =
    1e12``, resolves it to 1e-4 only). The checks allow 4 times that."""
    rep = _binary_once(est, X, y, Ci, tol)
    _ROUNDING["on"] = True
    try:
        alt = _binary_once(est, X, y, Ci, tol)
    finally:
        _ROUNDING["on"] = False
    d = abs(alt.relative_gap - rep.relative_gap)
    rep.extra["rounding"] = float(d) if np.isfinite(d) else 0.0
    return rep


def _binary_once(est: Any, X: Any, y: np.ndarray, Ci: np.ndarray, tol: float
                 ) -> OracleReport:
    kind = _kind(est)
    name = type(est).__name__
    status = str(getattr(est, "status_", ""))
    f, w2, indep, info = _predictor(est, X)
    if "V" in info:  # the eta-problem: K ~= V V^T
        V = info["V"]

        def quad(beta: np.ndarray) -> float:
            v = V.T @ beta
            return float(v @ v)
        info_extra = {"problem": "eta (K ~= V V^T)"}
    else:
        if type(est.kernel_).__name__ == "Precomputed":
            K, ind2 = _gram(est, X, None, np.arange(_rows(X)))
        else:
            K, ind2 = _gram(est, X, X)
        indep = indep and ind2

        def quad(beta: np.ndarray) -> float:
            return float(beta @ K @ beta)
        info_extra = {}
    a = np.asarray(getattr(est, "alpha_", np.zeros(0)), dtype=float)
    cmax = float(np.max(Ci[np.isfinite(Ci)], initial=0.0))
    csum = float(np.sum(np.abs(a))) if a.size else 0.0
    if kind in ("CSVC", "L2SVC", "HardMarginSVC", "LSSVC", "ProximalSVC",
                "KernelLogisticRegression"):
        m = y * f
        beta = a * y
        bw = quad(beta)
        ascale = max(cmax if np.isfinite(cmax) and cmax > 0 else 0.0, float(np.max(np.abs(a),
                                                                               initial=0.0)))
        if kind == "CSVC":
            P = 0.5 * w2 + float(Ci @ np.maximum(0.0, 1.0 - m))
            D = float(a.sum()) - 0.5 * bw
            dinf = max(_box(a, 0.0, Ci, ascale), _eq(float(y @ a), max(csum, 1e-300)))
        elif kind == "L2SVC":
            xi = np.maximum(0.0, 1.0 - m)
            P = 0.5 * w2 + 0.5 * float(Ci @ (xi * xi))
            inv = np.where(np.isfinite(Ci), 1.0 / Ci, 0.0)
            D = float(a.sum()) - 0.5 * bw - 0.5 * float(inv @ (a * a))
            dinf = max(_box(a, 0.0, np.inf, ascale), _eq(float(y @ a), max(csum, 1e-300)))
        elif kind == "HardMarginSVC":
            # P = 1/2 ||w||^2 of the predictor, whose margins y_i f_i >= 1 may be violated by
            # what tol allows (SMO stops on the violating pair): the violation is checked
            # against tol on its own; the predictor scaled to feasibility (t = 1 / min y f, a
            # truly feasible point) gives the "feasible gap" reported alongside
            mmin = float(np.min(m)) if m.size else 1.0
            P = 0.5 * w2
            D = float(a.sum()) - 0.5 * bw
            dinf = max(_box(a, 0.0, np.inf, ascale), _eq(float(y @ a), max(csum, 1e-300)))
            info_extra["violation:margin violation max(0, 1 - min y_i f_i)"] = max(0.0,
                                                                                1.0 - mmin)
            pf = 0.5 * w2 / (mmin * mmin) if mmin > 0 else np.inf
            info_extra["feasible relative gap"] = (pf - D) / max(1.0, abs(pf))
            cmax = np.inf
        elif kind == "LSSVC":
            e = 1.0 - m
            P = 0.5 * w2 + 0.5 * float(Ci @ (e * e))
            D = float(a.sum()) - 0.5 * bw - 0.5 * float((a * a) @ (1.0 / Ci))
            dinf = _eq(float(y @ a), max(csum, 1e-300))
        elif kind == "ProximalSVC":
            b = float(info.get("b", getattr(est, "b_", 0.0)))
            e = 1.0 - m
            P = 0.5 * (w2 + b * b) + 0.5 * float(Ci @ (e * e))
            D = float(a.sum()) - 0.5 * bw - 0.5 * float(y @ a) ** 2 \
                - 0.5 * float((a * a) @ (1.0 / Ci))
            dinf = 0.0
        else:  # kernel logistic regression
            from scipy.special import xlogy
            P = 0.5 * w2 + float(Ci @ np.logaddexp(0.0, -m))
            ac = np.clip(a, 0.0, Ci)
            D = -0.5 * bw - float(np.sum(xlogy(ac, ac) + xlogy(Ci - ac, Ci - ac))) \
                + float(np.sum(xlogy(Ci, Ci)))
            dinf = _box(a, 0.0, Ci, ascale)
            if getattr(est, "fit_intercept", True):
                dinf = max(dinf, _eq(float(y @ a), max(csum, 1e-300)))
        return _report(name, P, D, cmax, dinf, status, tol, indep, **info_extra)
    if kind == "NuSVC":
        nu = float(est.nu)
        u = Ci / y.shape[0]
        fs = f * (1.0 if "V" in info else 1.0)
        m = y * fs
        # the ray t (w', b'), rho = t rho': P(t) = t^2 A - t B, B = max_rho' [nu rho' -
        # sum u_i max(0, rho' - m_i)] (concave piecewise linear: its breakpoints suffice)
        A = 0.5 * w2
        cand = np.concatenate([[0.0], m[m > 0]])
        B = max(nu * r - float(u @ np.maximum(0.0, r - m)) for r in cand)
        P = -B * B / (4.0 * A) if A > 0 and B > 0 else 0.0
        beta = a * y
        D = -0.5 * quad(beta)
        ascale = float(np.max(u))
        dinf = max(_box(a, 0.0, u, ascale), _eq(float(y @ a), max(csum, 1e-300)),
                   max(0.0, nu - float(a.sum())) / max(nu, 1e-300))
        return _report(name, P, D, ascale, dinf, status, tol, indep, **info_extra)
    # regression
    a_s = np.asarray(getattr(est, "alpha_star_", np.zeros_like(a)), dtype=float)
    beta = a - a_s if kind in ("EpsilonSVR", "NuSVR") else a
    r = y - f
    bw = quad(beta)
    ascale = max(cmax, float(np.max(np.abs(beta), initial=0.0)))
    if kind == "EpsilonSVR":
        eps = float(est.epsilon)
        P = 0.5 * w2 + float(Ci @ np.maximum(0.0, np.abs(r) - eps))
        D = -0.5 * bw - eps * float(np.sum(a + a_s)) + float(y @ beta)
        dinf = max(_box(a, 0.0, Ci, ascale), _box(a_s, 0.0, Ci, ascale),
                   _eq(float(beta.sum()), max(float(np.sum(a + a_s)), 1e-300)))
    elif kind == "NuSVR":
        cnu = float(est.nu) * float(Ci.sum())
        ar = np.abs(r)
        cand = np.concatenate([[0.0], ar])
        lin = min(cnu * e + float(Ci @ np.maximum(0.0, ar - e)) for e in cand)
        P = 0.5 * w2 + lin
        D = -0.5 * bw + float(y @ beta)
        tot = float(np.sum(a + a_s))
        dinf = max(_box(a, 0.0, Ci, ascale), _box(a_s, 0.0, Ci, ascale),
                   _eq(float(beta.sum()), max(tot, 1e-300)),
                   max(0.0, tot - cnu) / max(cnu, 1e-300))
    else:  # LSSVR / KernelRidge
        P = 0.5 * w2 + 0.5 * float(Ci @ (r * r))
        D = float(y @ a) - 0.5 * bw - 0.5 * float((a * a) @ (1.0 / Ci))
        has_b = kind == "LSSVR" and bool(getattr(est, "fit_intercept", True)) \
            and type(est).__name__ != "KernelRidge"
        dinf = _eq(float(a.sum()), max(float(np.abs(a).sum()), 1e-300)) if has_b else 0.0
    return _report(name, P, D, cmax, dinf, status, tol, indep, **info_extra)


# ----------------------------------------------------------------------------- entry points
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


def _nu_normalised(est: Any, Ci: np.ndarray) -> np.ndarray:
    """nu-SVC's weights are relative (normalised to mean 1)."""
    if _kind(est) == "NuSVC":
        return Ci * (Ci.shape[0] / float(Ci.sum()))
    return Ci


def _take(X: Any, keep: np.ndarray) -> Any:
    return X[keep] if not sp.issparse(X) else X[np.flatnonzero(keep)]


class _Restricted:
    """An estimator view on the rows a fit kept (weights > 0): multipliers restricted."""

    def __init__(self, est: Any, keep: np.ndarray) -> None:
        self._est, self._keep = est, keep

    def __getattr__(self, k: str) -> Any:
        v = getattr(self._est, k)
        if k in ("alpha_", "alpha_star_", "beta_") and np.shape(v) == self._keep.shape:
            return np.asarray(v)[self._keep]
        return v


type.__setattr__(_Restricted, "__name__", "_Restricted")


def _multiclass(est: Any, X: Any, y: Any, sample_weight: Any, tol: float) -> OracleReport:
    y = np.asarray(y)
    classes = np.unique(y)
    y_idx = np.searchsorted(classes, y)
    M = np.asarray(est.codes_)
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    cw = getattr(est, "class_weight", None)
    if cw is not None:
        from sklearn.utils.class_weight import compute_class_weight
        w = compute_class_weight(cw, classes=classes, y=y)[y_idx]
        sw = w if sw is None else sw * w
    Xd = X if sp.issparse(X) else np.asarray(X, dtype=float)
    parts = []
    rows_of = getattr(est, "estimator_rows_", None)
    if rows_of is None:  # the wrappers: the rows coded +-1 in each column
        rows_of = [np.flatnonzero(M[y_idx, c] != 0) for c in range(M.shape[1])]
    for col, (sub, rows) in enumerate(zip(est.estimators_, rows_of, strict=True)):
        rows = np.asarray(rows)
        yb = np.where(M[y_idx[rows], col] > 0, 1.0, -1.0)
        Xs = Xd[np.ix_(rows, rows)] if type(sub.kernel_).__name__ == "Precomputed" \
            else _take(Xd, rows)
        Csub = 1.0 if _kind(sub) == "NuSVC" else float(getattr(sub, "C", 1.0))
        Ci = np.full(rows.shape[0], Csub) * (1.0 if sw is None else sw[rows])
        tsub = oracle_tolerance(sub)
        if sw is not None and np.any(sw[rows] <= 0):
            keep = sw[rows] > 0
            parts.append(_binary(_Restricted(sub, keep), _take(Xs, keep), yb[keep],
                                 _nu_normalised(sub, Ci[keep]), tsub))
        else:
            parts.append(_binary(sub, Xs, yb, _nu_normalised(sub, Ci), tsub))
    worst = max(parts, key=lambda p: p.relative_gap if np.isfinite(p.relative_gap) else np.inf)
    rep = OracleReport(type(est).__name__, worst.primal, worst.dual, worst.gap, worst.unit,
                       worst.relative_gap, max(p.dual_infeasibility for p in parts),
                       str(getattr(est, "status_", "")), tol,
                       all(p.independent_kernel for p in parts), {}, parts)
    return rep


def _ball(est: Any, X: Any, tol: float) -> OracleReport:
    """Ball: primal ``R^2(c) = max_i ||phi(x_i) - c||^2`` at the fitted centre
    ``c = sum a_i phi(x_i)``, dual ``a^T diag(K) - a^T K a``; unit ``1e-10 max_i k_ii``."""
    Xd = np.asarray(X, dtype=float)
    if type(est.kernel_).__name__ == "Precomputed":
        K, indep = Xd, True
    else:
        K, indep = numpy_kernel(est.kernel_, Xd, Xd)
    a = np.asarray(est.alpha_, dtype=float)
    d = np.diag(K).copy()
    Ka = K @ a
    c2 = float(a @ Ka)
    R2 = float(np.max(d - 2.0 * Ka + c2))
    D = float(a @ d) - c2
    kmax = float(np.max(np.abs(d), initial=0.0))
    unit = max(abs(R2), 1e-10 * kmax, 1e-300)
    dinf = max(_box(a, 0.0, np.inf, 1.0), abs(float(a.sum()) - 1.0))
    status = str(getattr(est, "status_", getattr(est.certificate_, "status", "")))
    rep = OracleReport("EnclosingBall", R2, D, R2 - D, unit, (R2 - D) / unit, dinf, status,
                       tol, indep, {"violation:|radius2_ - R^2| / R^2":
                                    abs(float(est.radius2_) - R2) / unit})
    return rep


def _kpca(est: Any, X: Any) -> OracleReport:
    """Kernel PCA: the full spectrum of the centred Gram matrix (``numpy.linalg.eigvalsh``).
    ``primal`` is the variance the kept components capture, ``sum_k ||Omega_c u_k||^2 /
    lambda_k``... recomputed as ``sum_k u_k^T Omega_c u_k``; ``dual`` the sum of the top-``k``
    eigenvalues (Ky Fan: the maximum of ``trace(U^T Omega_c U)`` over orthonormal ``U``);
    the gap is ``dual - primal >= 0``, relative to ``dual``. Violations: a kept eigenvalue
    that is not one of the leading ones, an omitted eigenvalue above the smallest kept, an
    eigen-residual or non-orthonormality above ``tol``."""
    Xd = np.asarray(X, dtype=float)
    tol = 1e-6
    kern = est.kernel_
    if type(kern).__name__ == "CenteredKernel" or not hasattr(kern, "params"):
        base = getattr(kern, "kernel", kern)
    else:
        base = kern
    if type(base).__name__ == "Precomputed":
        K, indep = Xd, True
    else:
        K, indep = numpy_kernel(base, Xd, Xd)
    N = K.shape[0]
    J = np.eye(N) - 1.0 / N
    Kc = J @ K @ J
    Kc = 0.5 * (Kc + Kc.T)
    # the rounding of K itself (N eps max|K|) bounds how well any eigenpair can be verified:
    # a centred kernel far below its uncentred entries (RBF on tiny X) is known only to that
    tol = max(tol, 10.0 * N * float(np.finfo(float).eps) * float(np.max(np.abs(K), initial=0.0))
              / max(float(np.max(np.abs(np.linalg.eigvalsh(Kc)), initial=0.0)), 1e-300))
    spec = np.sort(np.linalg.eigvalsh(Kc))[::-1]
    lam = np.asarray(est.eigenvalues_, dtype=float)
    U = np.asarray(est.eigenvectors_, dtype=float)
    k = lam.shape[0]
    top = float(spec[0]) if spec.size else 0.0
    scale = max(abs(top), 1e-300)
    captured = float(np.sum(U * (Kc @ U)))
    ky_fan = float(np.sum(spec[:k]))
    gap = ky_fan - captured
    omitted = float(spec[k]) if k < N else -np.inf
    smallest = float(np.min(lam)) if k else np.inf
    res = float(np.max(np.linalg.norm(Kc @ U - U * lam, axis=0), initial=0.0)) / scale
    orth = float(np.max(np.abs(U.T @ U - np.eye(k)), initial=0.0))
    extra = {"violation:max |kept - leading eigenvalues| / lambda_1":
             float(np.max(np.abs(lam - spec[:k]), initial=0.0)) / scale,
             "violation:(omitted - smallest kept) / lambda_1":
             max(0.0, omitted - smallest) / scale if k < N else 0.0,
             "violation:eigen-residual / lambda_1": res,
             "violation:orthonormality": orth,
             }
    if getattr(est, "n_components", None) is None:  # "every component with lambda > 0"
        extra["violation:kept eigenvalues below 1e-12 lambda_1 (numerically zero)"] = \
            float(np.sum(lam <= 1e-12 * scale))
    if getattr(est, "lowrank_factor_", None) is not None:
        extra = {"note": "low-rank fit: the oracle checks the exact kernel only for exact fits"}
        return OracleReport("KernelPCA", ky_fan, captured, gap, scale, gap / scale, 0.0,
                            "nystrom", tol, indep, extra)
    status = str(getattr(est.certificate_, "status", "optimal"))
    return OracleReport("KernelPCA", ky_fan, captured, gap, scale, gap / scale, 0.0,
                        status, tol, indep, extra)


def _kpls(est: Any, X: Any, y: Any) -> OracleReport:
    """Kernel PLS: scores orthonormal (``T^T T = I``) and the training predictions equal
    those of an independent NIPALS kernel PLS (Rosipal & Trejo 2001) on the centred Gram
    matrix (numpy here), relative to ``max |y|``."""
    Xd = np.asarray(X, dtype=float)
    Y = np.asarray(y, dtype=float)
    Y2 = Y.reshape(Y.shape[0], -1)
    kern = est.kernel_
    base = getattr(kern, "kernel", kern)
    if type(base).__name__ == "Precomputed":
        K, indep = Xd, True
    else:
        K, indep = numpy_kernel(base, Xd, Xd)
    T = np.asarray(est.x_scores_, dtype=float)
    k = T.shape[1]
    orth = float(np.max(np.abs(T.T @ T - np.eye(k)), initial=0.0))
    ref = _nipals_kpls(K, Y2, k)
    pred = np.asarray(est.predict(Xd), dtype=float).reshape(Y2.shape)
    yscale = max(float(np.max(np.abs(Y2 - Y2.mean(0)), initial=0.0)), 1e-300)
    diff = float(np.max(np.abs(pred - ref), initial=0.0)) / yscale
    extra = {"violation:orthonormality of x_scores_": orth,
             "violation:max |predict - NIPALS reference| / max |y - mean y|": diff}
    # as for kernel PCA: the centred kernel is known only to the rounding of K itself
    N = K.shape[0]
    J = np.eye(N) - 1.0 / N
    top = float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (J @ K @ J + (J @ K @ J).T))),
                       initial=0.0))
    tol = max(1e-6, 10.0 * N * float(np.finfo(float).eps)
              * float(np.max(np.abs(K), initial=0.0)) / max(top, 1e-300))
    return OracleReport("KernelPLSRegression", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, "optimal", tol,
                        indep, extra)


def _nipals_kpls(K: np.ndarray, Y: np.ndarray, k: int) -> np.ndarray:
    """Training predictions of kernel PLS with ``k`` components: deflated centred Gram
    matrix, score ``t = K_d u / ||K_d u||`` iterated to the dominant direction of
    ``K_d Y_d Y_d^T`` (its leading eigenvector, here by ``numpy.linalg.eig``), then
    ``Y_hat = mean(Y) + T T^T Y_c``."""
    N = K.shape[0]
    J = np.eye(N) - 1.0 / N
    Kd = J @ K @ J
    Yc = Y - Y.mean(0)
    Yd = Yc.copy()
    T = np.zeros((N, 0))
    for _ in range(k):
        # the fixed point of NIPALS' t = K u, u = Y Y^T t: the leading eigenvector of
        # K_d Y_d Y_d^T (real spectrum: a product of two PSD matrices)
        w, V = np.linalg.eig(Kd @ Yd @ Yd.T)
        t = np.real(V[:, int(np.argmax(np.real(w)))])
        t = Kd @ (Yd @ (Yd.T @ t))
        nt = np.linalg.norm(t)
        if nt == 0:
            break
        t = t / nt
        T = np.column_stack([T, t])
        Pm = np.eye(N) - np.outer(t, t)
        Kd = Pm @ Kd @ Pm
        Yd = Pm @ Yd
    return Y.mean(0) + T @ (T.T @ Yc)


# ----------------------------------------------------------------------------- Laplacian
def _knn_laplacian(Z: np.ndarray, n_neighbors: int, weights: str, heat_t: Any) -> np.ndarray:
    """``L = D - W`` of the symmetrised k-nearest-neighbour graph, dense, from plain numpy:
    the ``k`` nearest other rows of each row by exact squared distances (stable order), heat
    weights ``exp(-d^2 / t)`` with ``t`` the mean squared k-NN distance (unless given) or
    binary ones, symmetrised by ``W = max(W, W^T)``."""
    n = Z.shape[0]
    k = min(int(n_neighbors), n - 1)
    if k < 1:
        return np.zeros((n, n))
    D2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D2, np.inf)
    nn = np.argsort(D2, axis=1, kind="stable")[:, :k]
    rows = np.repeat(np.arange(n), k)
    cols = nn.ravel()
    W = np.zeros((n, n))
    if weights == "binary":
        W[rows, cols] = 1.0
    else:
        d2 = D2[rows, cols]
        t = float(np.mean(d2)) if heat_t is None else float(heat_t)
        if not t > 0:
            t = 1.0
        W[rows, cols] = np.exp(-d2 / t)
    W = np.maximum(W, W.T)
    return np.diag(W.sum(axis=1)) - W


def _laplacian(est: Any, X: Any, y: Any, sample_weight: Any, tol: float) -> OracleReport:
    r"""Laplacian RLS / SVM, binary or each sub-problem of a multiclass LapSVC.

    Everything is rebuilt in the data's own order: the loss rows (labelled, weight ``> 0``),
    ``v_i = s_i / sum_j s_j``, the k-NN graph Laplacian ``L`` of all rows
    (:func:`_knn_laplacian`), the kernel, ``c_I = gamma_I / n^2``, the predictor ``f`` on all
    rows from what ``decision_function`` uses. Primal of the predictor with optimal slacks:
    ``sum_i v_i loss_i(f_i) + gamma_A ||w||^2 + c_I f^T L f`` (squared error for LapRLS, hinge
    for LapSVC; ``L 1 = 0``, so the bias does not enter the graph term). Dual from
    ``dual_beta_`` alone: ``G = J K P^{-1} J^T``, ``P = 2 gamma_A I + 2 c_I L K``; LapRLS
    ``y^T beta - sum beta_i^2 / (4 v_i) - 1/2 beta^T G beta`` (no constraint), LapSVC
    ``1^T beta - 1/2 (y beta)^T G (y beta)`` with ``0 <= beta <= v``, ``y^T beta = 0``."""
    if getattr(est, "estimators_", None) is not None and \
            getattr(est, "codes_", None) is not None:
        y = np.asarray(y, dtype=object if np.asarray(y).dtype == object else None)
        unl = _unlabelled(y)
        classes = np.unique(y[~unl])
        y_idx = np.zeros(y.shape[0], dtype=np.int64)
        y_idx[~unl] = np.searchsorted(classes, y[~unl])
        M = np.asarray(est.codes_)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        parts = []
        for col, (sub, rows) in enumerate(zip(est.estimators_, est.estimator_rows_,
                                              strict=True)):
            rows = np.asarray(rows)
            yb = (M[y_idx[rows], col] > 0).astype(float)
            yb[unl[rows]] = np.nan
            Xs = np.asarray(X, dtype=float)
            Xs = Xs[np.ix_(rows, rows)] if type(sub.kernel_).__name__ == "Precomputed" \
                else Xs[rows]
            parts.append(_laplacian(sub, Xs, yb, None if sw is None else sw[rows],
                                    oracle_tolerance(sub)))
        worst = max(parts, key=lambda p: p.relative_gap if np.isfinite(p.relative_gap)
                    else np.inf)
        return OracleReport(type(est).__name__, worst.primal, worst.dual, worst.gap,
                            worst.unit, worst.relative_gap,
                            max(p.dual_infeasibility for p in parts),
                            str(getattr(est, "status_", "")), tol,
                            all(p.independent_kernel for p in parts), {}, parts)
    name = type(est).__name__
    Xd = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=object if np.asarray(y).dtype == object else None)
    n = Xd.shape[0]
    unl = _unlabelled(y)
    s = np.ones(n) if sample_weight is None else np.maximum(
        np.asarray(sample_weight, dtype=float), 0.0)
    loss = ~unl & (s > 0)
    v = s[loss] / float(np.sum(s[loss]))
    y_loss = y[loss]
    if name == "LapSVC":
        classes = np.asarray(est.classes_)
        t = np.where(y_loss == classes[1], 1.0, -1.0)
    else:
        t = y_loss.astype(float)
    precomputed = type(est.kernel_).__name__ == "Precomputed"
    if precomputed:
        K, indep = Xd, True
    else:
        K, indep = numpy_kernel(est.kernel_, Xd, Xd)
    # the predictor (support_ indexes the rows of X as passed)
    coef = np.ravel(np.asarray(est.dual_coef_.toarray() if sp.issparse(est.dual_coef_)
                               else est.dual_coef_, dtype=float))
    b = float(np.ravel(est.intercept_)[0])
    if precomputed:
        sv = np.asarray(est.support_, dtype=np.intp)
        Kx = Xd[:, sv]
        Kss = Kx[sv]
    else:
        Z = np.asarray(est.support_vectors_, dtype=float)
        Kx, ind2 = numpy_kernel(est.kernel_, Xd, Z)
        Kss, _ = numpy_kernel(est.kernel_, Z, Z)
        indep = indep and ind2
    f = Kx @ coef + b
    w2 = float(coef @ Kss @ coef)
    L = _knn_laplacian(Xd, est.n_neighbors, est.graph_weights, est.heat_t)
    gA = float(est.gamma_A)
    cI = float(est.gamma_I) / float(n) ** 2
    reg = gA * w2 + cI * float(f @ L @ f)
    Pm = 2.0 * gA * np.eye(n) + 2.0 * cI * (L @ K)
    Jt = np.zeros((n, int(loss.sum())))
    Jt[np.flatnonzero(loss), np.arange(Jt.shape[1])] = 1.0
    G = K[loss] @ np.linalg.solve(Pm, Jt)
    G = 0.5 * (G + G.T)
    beta = np.asarray(est.dual_beta_, dtype=float)
    fl = f[loss]
    if name == "LapRLS":
        e = t - fl
        P = float(v @ (e * e)) + reg
        D = float(t @ beta) - float((beta * beta) @ (0.25 / v)) - 0.5 * float(beta @ G @ beta)
        dinf = 0.0
    else:
        P = float(v @ np.maximum(0.0, 1.0 - t * fl)) + reg
        tb = t * beta
        D = float(beta.sum()) - 0.5 * float(tb @ G @ tb)
        dinf = max(_box(beta, 0.0, v, float(np.max(v))),
                   _eq(float(t @ beta), max(float(np.abs(beta).sum()), 1e-300)))
    return _report(name, P, D, float(np.max(v)), dinf, str(getattr(est, "status_", "")), tol,
                   indep, problem="Laplacian (graph rebuilt with numpy)")


def _unlabelled(y: np.ndarray) -> np.ndarray:
    """``NaN`` (or ``None`` in an object array) marks an unlabelled entry."""
    if y.dtype == object:
        return np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in y],
                        dtype=bool)
    if np.issubdtype(y.dtype, np.floating):
        return np.isnan(y)
    return np.zeros(y.shape[0], dtype=bool)


def _plain_kernel(kernel: Any, X: np.ndarray) -> tuple[np.ndarray, bool]:
    if type(kernel).__name__ == "Precomputed":
        return X, True
    return numpy_kernel(kernel, X, X)


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
        parts.append(OracleReport(
            "GPClassifier", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, status, tol, indep,
            {"violation:||f_ - K (t - sigma(f_))|| / max(1, ||f_||)": rel,
             "violation:max |pi_ - sigma(f_)|": pi_dev}))
    if len(parts) == 1:
        return parts[0]
    return OracleReport("GPClassifier", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
                        "optimal" if all(p.status == "optimal" for p in parts) else "mixed",
                        max(p.tol for p in parts), all(p.independent_kernel for p in parts),
                        {}, parts)


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
