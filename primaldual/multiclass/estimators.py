"""Any binary estimator made multiclass: one-vs-one (LIBSVM's layout and voting), one-vs-rest,
DAG, or any code matrix of :mod:`~primaldual.multiclass.codings`; fitted once per column, the
scores decoded to a class (:func:`fit_multiclass_estimator`, :func:`multiclass_decision`,
:func:`multiclass_predict`, :func:`multiclass_predict_proba`, and the wrappers
:class:`OneVsOneClassifier`, :class:`OneVsRestClassifier`, :class:`DAGClassifier`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from primaldual.engine import atomic_fit
from primaldual.methods._multiclass import (  # noqa: F401  (re-exported: the binary estimators' home)
    MC_ATTRS,
    STRATEGIES,
    fit_multiclass_estimator,
)
from primaldual.methods._multiclass_predict import (  # noqa: F401  (re-exported, as above)
    check_break_ties,
    class_scores,
    multiclass_decision,
    multiclass_predict,
    multiclass_predict_proba,
    ovr_from_ovo,
)

__all__ = ["fit_multiclass_estimator", "multiclass_decision", "multiclass_predict",
            "multiclass_predict_proba",
            "OneVsOneClassifier", "OneVsRestClassifier", "DAGClassifier", "STRATEGIES",
            "ovr_from_ovo"]


class _Wrapper(ClassifierMixin, BaseEstimator):
    """Shared code of the standalone multiclass wrappers."""

    _strategy = "ovo"

    def __init__(self, estimator: Any, *, n_jobs: int | None = None) -> None:
        self.estimator = estimator
        self.n_jobs = n_jobs

    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, **fit_params: Any):
        """Fit one binary clone of ``estimator`` per output of the decomposition."""
        if not hasattr(self.estimator, "fit"):
            raise TypeError("estimator must be a primaldual binary classifier")
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.shape[0] < 2:
            raise ValueError("y must contain at least 2 classes, got 1 class")
        proxy = clone(self.estimator)
        proxy.classes_ = self.classes_
        proxy.multiclass = self._strategy
        proxy.n_jobs = self.n_jobs
        fit_multiclass_estimator(proxy, X, y, sample_weight, fit_params.get("backend"),
                                 fit_params.get("form"))
        self.estimators_ = proxy.estimators_
        self.codes_ = proxy.codes_
        self.multiclass_strategy_ = proxy.multiclass_strategy_
        self.decoding_ = proxy.decoding_
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Multiclass: :func:`multiclass_decision`.  Two classes: one column, positive for
        ``classes_[1]`` (scikit-learn's binary convention): ``f_1 - f_0`` of the one-vs-rest
        pair, minus the one-vs-one score (positive there means the lower class)."""
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.classes_.shape[0] == 2:
            S = class_scores(self, X)
            return S[:, 1] - S[:, 0] if self.multiclass_strategy_ == "ovr" else -S[:, 0]
        return multiclass_decision(self, X)

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return multiclass_predict(self, X)


class OneVsOneClassifier(_Wrapper):
    """One-vs-one: ``K(K-1)/2`` binary clones, max-wins voting (ties to the lowest class).

    ``decision_function`` returns scikit-learn's ovr transform (``n_classes`` columns)."""

    _strategy = "ovo"


class OneVsRestClassifier(_Wrapper):
    """One-vs-rest: ``K`` binary clones (class ``c`` against the rest), ``argmax_c f_c(x)``."""

    _strategy = "ovr"


class DAGClassifier(_Wrapper):
    """One-vs-one training with decision-DAG prediction [Zhang 8.5.1]: ``K - 1`` evaluations
    per point (first against last candidate, the loser is dropped)."""

    _strategy = "dag"
