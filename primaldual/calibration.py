r"""Platt scaling: probabilities from decision values (LIBSVM's ``probability=True``).

Platt (1999) with the safeguarded Newton method of Lin, Lin & Weng (2007): given decision
values ``f_i`` and labels ``t_i in {0, 1}`` (``1`` = ``classes_[1]``, the side where ``f > 0``),

.. math::

    P(t = 1 \mid f) = \frac{1}{1 + \exp(A f + B)},

where ``(A, B)`` minimise the cross-entropy against the smoothed targets
``t_+ = (N_+ + 1)/(N_+ + 2)``, ``t_- = 1/(N_- + 2)``. A good fit has ``A < 0``. The decision
values are out-of-fold (5-fold cross-validation, as LIBSVM), so the sigmoid is not fit to the
training points' own, over-confident scores.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["platt_fit", "platt_proba", "cross_val_decision"]


def _objective(f: np.ndarray, t: np.ndarray, A: float, B: float) -> float:
    z = f * A + B
    return float(np.sum(np.where(z >= 0, t * z + np.log1p(np.exp(-np.abs(z))),
                                 (t - 1.0) * z + np.log1p(np.exp(-np.abs(z))))))


def platt_fit(f: Any, target: Any, max_iter: int = 100) -> tuple[float, float]:
    """``(A, B)`` of Platt's sigmoid for decision values ``f`` and boolean ``target``
    (``True`` = the positive class)."""
    f = np.asarray(f, dtype=float).ravel()
    y = np.asarray(target, dtype=bool).ravel()
    if f.shape != y.shape:
        raise ValueError(f"f and target must have the same length, got {f.shape} and {y.shape}")
    n1 = float(np.sum(y))
    n0 = float(y.size - n1)
    t = np.where(y, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))
    A, B = 0.0, float(np.log((n0 + 1.0) / (n1 + 1.0)))
    fval = _objective(f, t, A, B)
    sigma, eps, min_step = 1e-12, 1e-5, 1e-10
    for _ in range(max_iter):
        z = f * A + B
        p = np.where(z >= 0, np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))),
                     1.0 / (1.0 + np.exp(-np.abs(z))))
        d2 = p * (1.0 - p)
        h11, h22, h21 = sigma + float(f @ (f * d2)), sigma + float(d2.sum()), float(f @ d2)
        d1 = t - p
        g1, g2 = float(f @ d1), float(d1.sum())
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            nA, nB = A + step * dA, B + step * dB
            nf = _objective(f, t, nA, nB)
            if nf < fval + 1e-4 * step * gd:
                A, B, fval = nA, nB, nf
                break
            step /= 2.0
        else:
            break
    return float(A), float(B)


def platt_proba(f: Any, A: float, B: float) -> np.ndarray:
    """``P(t = 1 | f) = 1 / (1 + exp(A f + B))``, computed without overflow."""
    z = A * np.asarray(f, dtype=float) + B
    return np.where(z >= 0, np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))),
                    1.0 / (1.0 + np.exp(-np.abs(z))))


def cross_val_decision(estimator: Any, X: Any, y: np.ndarray, sample_weight: Any = None,
                       n_folds: int = 5, random_state: Any = None,
                       fit_kw: dict | None = None) -> np.ndarray:
    """Out-of-fold decision values of a binary classifier (stratified ``n_folds``-fold CV).

    A fold whose training part holds a single class scores its test points ``+1`` or ``-1``
    for that class (LIBSVM)."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(y)
    classes = np.unique(y)
    counts = np.bincount(np.searchsorted(classes, y))
    k = int(max(2, min(n_folds, counts.min())))
    out = np.zeros(y.shape[0])
    folds = StratifiedKFold(k, shuffle=True, random_state=random_state).split(np.zeros(len(y)), y)
    for train, test in folds:
        yt = y[train]
        if np.unique(yt).shape[0] < 2:
            out[test] = 1.0 if yt[0] == classes[1] else -1.0
            continue
        kw = dict(fit_kw or {})
        if sample_weight is not None:
            kw["sample_weight"] = np.asarray(sample_weight)[train]
            if not np.any(kw["sample_weight"] > 0):
                continue
        est = clone(estimator)
        if getattr(estimator, "kernel", None) == "precomputed":
            est.fit(X[np.ix_(train, train)], yt, **kw)
            out[test] = est.decision_function(X[np.ix_(test, train)])
        else:
            est.fit(X[train], yt, **kw)
            out[test] = est.decision_function(X[test])
    return out
