"""Multiclass: code matrices and the LS-SVM multiclass solver (:mod:`.codings`), and the generic
decomposition of any binary estimator (:mod:`.estimators`)."""

from .codings import CODINGS, MulticlassLSSVM, code_matrix, decode, fit_lssvm_multiclass
from .estimators import (
    STRATEGIES,
    DAGClassifier,
    OneVsOneClassifier,
    OneVsRestClassifier,
    check_break_ties,
    fit_multiclass_estimator,
    multiclass_decision,
    multiclass_predict,
    multiclass_predict_proba,
    ovr_from_ovo,
)

__all__ = ["code_matrix", "decode", "fit_lssvm_multiclass", "MulticlassLSSVM", "CODINGS",
           "fit_multiclass_estimator", "multiclass_decision", "multiclass_predict",
           "multiclass_predict_proba", "OneVsOneClassifier", "OneVsRestClassifier",
           "DAGClassifier", "STRATEGIES", "ovr_from_ovo", "check_break_ties"]
