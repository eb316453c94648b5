"""The oracles of the loss-based kernel machines (C-SVC, L2-SVC, hard margin, nu-SVC,
epsilon-/nu-SVR, LS-SVM, kernel ridge, proximal SVC, kernel logistic regression): the
primal of the predictor with its optimal slacks, the dual of the multipliers, and the
multiclass wrappers sub-problem by sub-problem."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .predictor import _ROUNDING, _gram, _predictor, _rows
from .report import OracleReport, _box, _eq, _report, oracle_tolerance


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
