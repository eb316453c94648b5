"""The oracle of the semi-supervised Laplacian RLS / SVM: the k-NN graph Laplacian
rebuilt in numpy, the primal of the predictor on labelled and unlabelled rows and the
dual from ``dual_beta_``."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .predictor import numpy_kernel
from .report import OracleReport, _box, _eq, _report, oracle_tolerance


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
    try:
        G = K[loss] @ np.linalg.solve(Pm, Jt)
    except np.linalg.LinAlgError:   # P singular in float64 (a linear kernel at 1e7): least squares
        G = K[loss] @ np.linalg.lstsq(Pm, Jt, rcond=None)[0]
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
