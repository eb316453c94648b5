"""Predictions of a multiclass fit from its binary outputs: the outputs' scores, one-vs-one
voting (LIBSVM's rule) and scikit-learn's ovr-shaped decision values, decoding, and pairwise
coupling of the outputs' probabilities.

Read by the binary estimators' ``predict`` / ``decision_function`` / ``predict_proba`` once a
fit on more than two classes (:func:`._multiclass.fit_multiclass_estimator`) has set
``estimators_``, ``codes_``, ``multiclass_strategy_`` and ``decoding_``; re-exported by
:mod:`primaldual.multiclass.estimators`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._codings import decode

__all__ = ["multiclass_decision", "multiclass_predict", "multiclass_predict_proba",
           "ovr_from_ovo"]


def class_scores(estimator: Any, X: Any) -> np.ndarray:
    rows = getattr(estimator, "estimator_rows_", None)
    precomputed = getattr(estimator, "kernel", None) == "precomputed" or getattr(
        estimator, "_samples_fit_", None) is not None  # (a callable kernel on raw samples)
    if precomputed and rows is not None:
        # a precomputed test kernel has one column per training row: each sub-problem
        # sees the columns of its own rows
        X = np.asarray(X, dtype=float)
        return np.column_stack([e.decision_function(X[:, r])
                                for e, r in zip(estimator.estimators_, rows, strict=True)])
    return np.column_stack([e.decision_function(X) for e in estimator.estimators_])


def ovr_from_ovo(S: np.ndarray, n_classes: int) -> np.ndarray:
    """scikit-learn's ``decision_function_shape="ovr"`` transform of one-vs-one scores ``S``
    (positive = lower class of the pair): votes plus the summed confidences squashed into
    ``(-1/3, 1/3)`` so they only break ties."""
    votes = np.zeros((S.shape[0], n_classes))
    conf = np.zeros((S.shape[0], n_classes))
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            votes[:, i] += S[:, k] >= 0
            votes[:, j] += S[:, k] < 0
            conf[:, i] += S[:, k]
            conf[:, j] -= S[:, k]
            k += 1
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


def _vote(S: np.ndarray, n_classes: int) -> np.ndarray:
    """Max-wins voting as LIBSVM's ``svm_predict``: the pair ``(i, j)`` votes ``i`` when its
    score is ``> 0`` and ``j`` otherwise (a score of exactly 0 goes to ``j``); ties between
    vote counts go to the lowest class index."""
    votes = np.zeros((S.shape[0], n_classes), dtype=np.int64)
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            votes[:, i] += S[:, k] > 0
            votes[:, j] += S[:, k] <= 0
            k += 1
    return np.argmax(votes, axis=1)  # ties: the lowest class index


def multiclass_decision(estimator: Any, X: Any) -> np.ndarray:
    """Decision values of a multiclass-fitted estimator.

    One-vs-one strategies: ``(n_samples, n_classes)`` (scikit-learn's ovr transform) when
    ``decision_function_shape == "ovr"`` (default), raw pair scores ``(n_samples, K(K-1)/2)``
    (positive = lower class) when ``"ovo"``. One-vs-rest and codings: the output scores
    ``f_l(x)`` (n_samples, n_outputs).
    """
    S = class_scores(estimator, X)
    strategy = estimator.multiclass_strategy_
    if strategy in ("ovo", "dag"):
        shape = getattr(estimator, "decision_function_shape", "ovr") or "ovr"
        if shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo', got {shape!r}")
        if shape == "ovr":
            return ovr_from_ovo(S, estimator.classes_.shape[0])
    return S


def check_break_ties(estimator: Any) -> None:
    shape = getattr(estimator, "decision_function_shape", "ovr") or "ovr"
    if shape not in ("ovr", "ovo"):
        raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo', got {shape!r}")
    if getattr(estimator, "break_ties", False) and shape == "ovo":
        raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")


def multiclass_predict(estimator: Any, X: Any) -> np.ndarray:
    """Class labels of a multiclass-fitted estimator (max-wins voting with ties to the lowest
    class for one-vs-one, argmax for one-vs-rest, DAG, Hamming or loss-based decoding)."""
    break_ties = bool(getattr(estimator, "break_ties", False))
    check_break_ties(estimator)
    S = class_scores(estimator, X)
    K = estimator.classes_.shape[0]
    decoding, loss = estimator.decoding_
    if break_ties and decoding == "vote":
        # scikit-learn's SVC: the argmax of the ovr-shaped decision values (votes plus
        # squashed confidences) instead of the vote winner with ties to the lowest class
        idx = np.argmax(ovr_from_ovo(S, K), axis=1)
    elif decoding == "vote":
        idx = _vote(S, K)
    elif decoding == "argmax":
        idx = np.argmax(S, axis=1)
    else:
        idx = decode(S, estimator.codes_, method=decoding, loss=loss)
    return estimator.classes_[idx]


def multiclass_predict_proba(estimator: Any, X: Any) -> np.ndarray:
    r"""Class probabilities of a multiclass fit of a probabilistic binary estimator.

    One-vs-rest: ``p_c = P_c(x) / sum_k P_k(x)``. One-vs-one (and DAG): pairwise coupling of
    Wu, Lin & Weng (2004, method 2, as LIBSVM): with ``r_ij = P(i | i or j, x)``,
    ``min_p sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2`` s.t. ``sum p = 1``, solved through its
    KKT system ``[[Q, 1], [1^T, 0]] [p; mu] = [0; 1]``, ``Q_ii = sum_{j != i} r_ji^2``,
    ``Q_ij = -r_ji r_ij``.
    """
    K = estimator.classes_.shape[0]
    P = np.stack([e.predict_proba(X)[:, 1] for e in estimator.estimators_], axis=1)
    if estimator.multiclass_strategy_ == "ovr":
        return P / np.maximum(P.sum(axis=1, keepdims=True), 1e-300)
    if estimator.multiclass_strategy_ not in ("ovo", "dag"):
        raise ValueError("predict_proba needs the ovr, ovo or dag strategy")
    out = np.empty((P.shape[0], K))
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    A = np.zeros((K + 1, K + 1))
    A[:K, K] = A[K, :K] = 1.0
    rhs = np.zeros(K + 1)
    rhs[K] = 1.0
    for n in range(P.shape[0]):
        r = np.zeros((K, K))
        for k, (i, j) in enumerate(pairs):
            r[i, j], r[j, i] = P[n, k], 1.0 - P[n, k]
        Q = -r.T * r
        np.fill_diagonal(Q, (r ** 2).sum(axis=0))
        A[:K, :K] = Q
        p = np.linalg.lstsq(A, rhs, rcond=None)[0][:K]
        p = np.clip(p, 0.0, None)
        out[n] = p / p.sum()
    return out
