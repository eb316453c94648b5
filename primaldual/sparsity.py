r"""Sparsity: SVM-RFE feature selection (Zhang Algorithm 8.2) and LS-SVM pruning (Suykens 3.7).

SVM-RFE [Guyon et al.; Zhang 8.4.5, eq. 8.4.67]: train the SVM on the surviving features, score
each surviving feature ``i`` by the change of ``||w||^2`` when it is removed with the
multipliers held fixed,

    c_i = 1/2 | beta^T K beta - beta^T K^(i) beta |,   beta_j = alpha_j y_j,

(``K^(i)`` the Gram matrix without feature ``i``; linear kernel: ``c_i = w_i^2``), drop the
``step`` features with the smallest ``c_i`` and repeat until ``n_features_to_select`` remain.

LS-SVM pruning [Suykens 3.7]: :class:`PrunedLSSVM` wraps an LS-SVM-family estimator with the
pruning path of :func:`prune_path` (drop ~5 % of the rows with the
smallest ``|alpha|``, re-solve, stop when a validation score degrades) and predicts with the
best step of the path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .backends.linsys.direct import factor_kernel, solve_bordered
from .kernels.gram import gram
from .validation import check_data_matrix, check_kernel_or_none, check_positive

__all__ = ["SVMRFE", "rfe_criterion", "PrunedLSSVM", "prune_lssvm"]


def rfe_criterion(estimator: Any, X: np.ndarray) -> np.ndarray:
    r"""``c_i = 1/2 |beta^T K beta - beta^T K^(i) beta|`` for each column ``i`` of ``X``
    (Zhang 8.4.67, multipliers fixed) of a fitted binary primaldual estimator (``beta_``)."""
    check_is_fitted(estimator, "beta_")
    X = np.asarray(X, dtype=float)
    sv = estimator.support_
    bt = estimator.beta_[sv]
    Xs = X[sv]
    k = estimator.kernel_
    full = float(bt @ (k(Xs) @ bt))
    d = X.shape[1]
    c = np.empty(d)
    for i in range(d):
        keep = np.r_[0:i, i + 1:d]
        Ki = k(Xs[:, keep]) if keep.size else np.asarray(k(np.zeros((len(sv), 0))), float)
        c[i] = 0.5 * abs(full - float(bt @ (Ki @ bt)))
    return c


class SVMRFE(SelectorMixin, MetaEstimatorMixin, BaseEstimator):
    """SVM recursive feature elimination (Zhang Algorithm 8.2) as a scikit-learn selector.

    Parameters
    ----------
    estimator : primaldual binary estimator (CSVC, LSSVC, ...)
        Refit on the surviving features at every round. Kernel parameters such as
        ``gamma="scale"`` are re-resolved on each feature subset.
    n_features_to_select : int or float, default None (half of the features)
        Number (int) or fraction (float in (0, 1]) of features to keep.
    step : int, default 1
        Features removed per round.

    Attributes
    ----------
    support_ : bool mask of selected features;  ranking_ : 1 for selected, larger = removed
    earlier;  n_features_ ;  estimator_ : the estimator refit on the selected features;
    criteria_ : list of per-round criterion arrays (over the surviving features).
    """

    def __init__(self, estimator: Any, *, n_features_to_select: int | float | None = None,
                 step: int = 1) -> None:
        self.estimator = estimator
        self.n_features_to_select = n_features_to_select
        self.step = step

    def fit(self, X: Any, y: Any, **fit_params: Any) -> SVMRFE:
        """Rank the features by recursive elimination and refit on the selected ones."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        d = X.shape[1]
        n = self.n_features_to_select
        if n is None:
            n = max(1, d // 2)
        elif isinstance(n, float) and not isinstance(n, bool):
            if not (0.0 < n <= 1.0):
                raise ValueError(f"n_features_to_select as a float must be in (0, 1], got {n}")
            n = max(1, int(round(n * d)))
        elif isinstance(n, (int, np.integer)) and not isinstance(n, bool):
            if not (1 <= n <= d):
                raise ValueError(f"n_features_to_select must be in [1, {d}], got {n}")
        else:
            raise TypeError("n_features_to_select must be an int, a float or None")
        if isinstance(self.step, bool) or not isinstance(self.step, (int, np.integer)) \
                or self.step < 1:
            raise ValueError(f"step must be a positive integer, got {self.step!r}")
        alive = np.arange(d)
        removed_at = np.full(d, -1)
        self.criteria_ = []
        r = 0
        while alive.size > n:
            est = clone(self.estimator).fit(X[:, alive], y, **fit_params)
            if hasattr(est, "estimators_"):  # multiclass: sum over the binary sub-problems
                crit = sum(rfe_criterion(e, X[:, alive]) for e in est.estimators_)
            else:
                crit = rfe_criterion(est, X[:, alive])
            self.criteria_.append(crit)
            drop = np.argsort(crit, kind="stable")[:min(self.step, alive.size - n)]
            removed_at[alive[drop]] = r
            alive = np.delete(alive, drop)
            r += 1
        # as scikit-learn's RFE: 1 = selected, 2 = removed in the last round, ...
        self.ranking_ = np.where(removed_at < 0, 1, r - removed_at + 1)
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[alive] = True
        self.n_features_ = int(alive.size)
        self.estimator_ = clone(self.estimator).fit(X[:, alive], y, **fit_params)
        if is_classifier(self.estimator_):
            self.classes_ = self.estimator_.classes_
        return self

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        return self.support_

    def predict(self, X: Any) -> np.ndarray:
        """Predict with the estimator refit on the selected features."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(self.transform(X))

    def decision_function(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(self.transform(X))

    def score(self, X: Any, y: Any) -> float:
        check_is_fitted(self, "estimator_")
        return self.estimator_.score(self.transform(X), y)


# ----------------------------------------------------------------------------- LS-SVM pruning
def prune_lssvm(estimator: Any, X: Any, y: Any, *, fraction: float = 0.05,
                X_val: Any = None, y_val: Any = None, tol: float = 0.0,
                min_sv: int | None = None, max_steps: int | None = None) -> PrunePath:
    """The pruning path (Suykens 3.7) of an LS-SVM-family estimator's problem on ``(X, y)``
    (its kernel, ``C`` and bias; labels mapped to -1/+1 as the estimator does)."""
    if not hasattr(estimator, "_kkt"):
        raise TypeError(f"{type(estimator).__name__} is not an LS-SVM-family method")
    est = clone(estimator)
    X, y = est._validate_input(X, y)
    data = est._prepare(X, y)
    task = "classification" if is_classifier(est) else "regression"
    yv = None
    if X_val is not None:
        X_val = np.asarray(X_val, dtype=float)
        yv = np.asarray(y_val)
        if task == "classification":
            yv = np.where(yv == est._binary_classes[1], 1.0, -1.0)
    return prune_path(data.X, data.y, data.kernel, float(getattr(est, "C", 1.0)),
                           task=task, fraction=fraction, X_val=X_val, y_val=yv, tol=tol,
                           min_sv=min_sv, max_steps=max_steps, bias=bool(est._has_bias))


class PrunedLSSVM(MetaEstimatorMixin, BaseEstimator):
    """An LS-SVM (LSSVC / LSSVR / KernelRidge) sparsified by pruning (Suykens 3.7).

    ``fit`` holds out ``validation_fraction`` of the rows (None: score on the training set),
    runs :func:`prune_lssvm`, and keeps the step ``path_.best``; the model is
    ``f(x) = sum_{i in S} beta_i k(x, x_i) + b`` over the kept rows ``S``.

    Attributes
    ----------
    path_ : PrunePath;  support_ (indices into the training rows);  support_vectors_;
    dual_coef_;  intercept_;  n_support_;  classes_ (classifiers)
    """

    def __init__(self, estimator: Any, *, fraction: float = 0.05,
                 validation_fraction: float | None = 0.2, tol: float = 0.0,
                 min_sv: int | None = None, random_state: int | None = 0) -> None:
        self.estimator = estimator
        self.fraction = fraction
        self.validation_fraction = validation_fraction
        self.tol = tol
        self.min_sv = min_sv
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        """The wrapped estimator's type; binary classification only (the pruning path is an
        LS-SVM with labels -1/+1)."""
        import dataclasses

        from sklearn.utils import get_tags
        tags = super().__sklearn_tags__()
        sub = get_tags(self.estimator)
        tags.estimator_type = sub.estimator_type
        tags.regressor_tags = sub.regressor_tags
        if sub.classifier_tags is not None:
            tags.classifier_tags = dataclasses.replace(sub.classifier_tags, multi_class=False)
        return tags

    def fit(self, X: Any, y: Any) -> PrunedLSSVM:
        X, y = validate_data(self, X, y, dtype=np.float64)
        N = X.shape[0]
        if N < 2:
            raise ValueError(f"PrunedLSSVM needs at least 2 samples; got n_samples = {N}")
        if is_classifier(self.estimator):
            from sklearn.utils.multiclass import type_of_target
            kind = type_of_target(y)
            if kind not in ("binary", "unknown") and np.unique(y).size > 2:
                raise ValueError("Only binary classification is supported. The type of the "
                                 f"target is {kind}.")
        tr = np.arange(N)
        Xv = yv = None
        vf = self.validation_fraction
        if vf is not None:
            if not (0.0 < vf < 1.0):
                raise ValueError(f"validation_fraction must be in (0, 1) or None, got {vf}")
            perm = np.random.default_rng(self.random_state).permutation(N)
            nv = max(1, int(round(vf * N)))
            tr, va = np.sort(perm[nv:]), np.sort(perm[:nv])
            Xv, yv = X[va], y[va]
        path = prune_lssvm(self.estimator, X[tr], y[tr], fraction=self.fraction, X_val=Xv,
                           y_val=yv, tol=self.tol, min_sv=self.min_sv)
        t = path.best
        self.path_ = path
        self.support_ = tr[path.support[t]]
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = np.asarray(path.beta[t])
        self.intercept_ = float(path.b[t])
        self.n_support_ = int(self.support_.size)
        est = clone(self.estimator)
        self.kernel_ = est._kernel(X[tr])
        if is_classifier(est):
            self.classes_ = np.unique(y[tr])
        return self

    def _decision(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "path_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.kernel_(X, self.support_vectors_) @ self.dual_coef_ + self.intercept_

    @available_if(lambda self: is_classifier(self.estimator))
    def decision_function(self, X: Any) -> np.ndarray:
        """``f(x) = sum_{i in S} beta_i k(x, x_i) + b`` (classifiers; a regressor's is
        ``predict``)."""
        return self._decision(X)

    def predict(self, X: Any) -> np.ndarray:
        f = self._decision(X)
        if hasattr(self, "classes_"):
            return self.classes_[(f >= 0).astype(int)]
        return f

    def score(self, X: Any, y: Any) -> float:
        from sklearn.metrics import accuracy_score, r2_score
        p = self.predict(X)
        return float(accuracy_score(y, p) if hasattr(self, "classes_") else r2_score(y, p))


# ---------------------------------------------------------------------------
# pruning (Suykens 3.7)
# ---------------------------------------------------------------------------


@dataclass
class PrunePath:
    """LS-SVM pruning path (Suykens 3.7). Step ``t`` keeps rows ``support[t]`` (indices into
    the original training set) with multipliers ``alpha[t]``, bias ``b[t]`` (``beta = s*a``)
    and validation score ``score[t]`` (accuracy for classification, minus the mean squared
    error for regression; higher is better). ``best`` is the step with the best score before
    the stop (the sparsest one among ties)."""

    n_sv: list[int]
    score: list[float]
    support: list[np.ndarray]
    alpha: list[np.ndarray]
    b: list[float]
    beta: list[np.ndarray]
    best: int
    stopped_by: str

    def __len__(self) -> int:
        return len(self.n_sv)

    def record(self, support: np.ndarray, score: float, alpha: np.ndarray, b: float,
               beta: np.ndarray) -> None:
        """Append one pruning step."""
        self.n_sv.append(support.size)
        self.score.append(score)
        self.support.append(support.copy())
        self.alpha.append(alpha)
        self.b.append(b)
        self.beta.append(beta)


def prune_path(X: np.ndarray, y: np.ndarray, kernel: Any, C: float, *,
               task: str = "classification", fraction: float = 0.05,
               X_val: np.ndarray | None = None, y_val: np.ndarray | None = None,
               min_sv: int | None = None, tol: float = 0.0, max_steps: int | None = None,
               bias: bool = True, jitter: float | str | None = None,
               scorer: Callable[[np.ndarray, np.ndarray], float] | None = None) -> PrunePath:
    r"""LS-SVM pruning (Suykens 3.7): drop the ``fraction`` of rows with the smallest
    ``|alpha|``, re-solve on the rest, record the step; stop when the validation score
    drops by more than ``tol`` (absolute, in the score's units) below the best score so far
    (the degrading step is recorded too), or at ``min_sv`` rows.

    The full Gram matrix is computed once and each step factors a sub-block of it (kernel
    evaluations are reused across steps). Without ``X_val`` the score is measured on the
    complete training set (pruned points included).

    Classification: ``y in {-1,+1}``, ``s = y``, ``d = 1``; regression: ``s = 1``, ``d = y``.
    """
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
    if not (0 < fraction < 1):
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    kernel = check_kernel_or_none(kernel)
    if kernel is None:
        raise ValueError("prune_path needs a kernel object (not a precomputed Gram matrix)")
    X = check_data_matrix(X)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    N = X.shape[0]
    if y.shape[0] != N:
        raise ValueError(f"y has {y.shape[0]} entries, X has {N} rows")
    if task == "classification" and not np.all(np.abs(y) == 1):
        raise ValueError("y must be in {-1, +1} for task='classification'")
    Cf = check_positive(C, "C", allow_inf=True)
    if X_val is None:
        X_val, y_val = X, y
    else:
        X_val = check_data_matrix(X_val, "X_val")
        if y_val is None:
            raise ValueError("y_val is required with X_val")
        y_val = np.asarray(y_val, dtype=np.float64).reshape(-1)
    min_sv = max(2, int(math.ceil(0.01 * N)) if min_sv is None else int(min_sv))
    if scorer is None:
        if task == "classification":
            scorer = lambda yt, f: float(np.mean(np.where(f >= 0, 1.0, -1.0) == yt))
        else:
            scorer = lambda yt, f: -float(np.mean((yt - f) ** 2))
    Kfull = gram(kernel, X)
    Kval = gram(kernel, X_val, X)
    path = PrunePath([], [], [], [], [], [], 0, "")
    idx = np.arange(N)
    step = 0
    while True:
        sub = np.array(Kfull[np.ix_(idx, idx)], order="F")
        fac = factor_kernel(sub, None, Cf, jitter=jitter, overwrite_k=True)
        ysub = y[idx]
        if task == "classification":
            b, a = solve_bordered(fac, np.ones(idx.size), sign=ysub, bias=bias)
            beta = a * ysub
        else:
            b, a = solve_bordered(fac, ysub, bias=bias)
            beta = a
        f = Kval[:, idx] @ beta + b
        score = scorer(y_val, f)
        worse = bool(path.score) and score < path.score[path.best] - tol
        path.record(idx, score, a, float(b), beta)
        if worse:
            path.stopped_by = "validation"
            break
        if score >= path.score[path.best]:
            path.best = len(path.n_sv) - 1
        step += 1
        n_drop = max(1, int(round(fraction * idx.size)))
        if idx.size - n_drop < min_sv:
            path.stopped_by = "min_sv"
            break
        if max_steps is not None and step >= max_steps:
            path.stopped_by = "max_steps"
            break
        order = np.argsort(np.abs(a), kind="stable")
        idx = np.sort(idx[order[n_drop:]])
    return path
