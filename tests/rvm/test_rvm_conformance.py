"""scikit-learn conformance of RVR and RVC (parametrize_with_checks)."""

from __future__ import annotations

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from primaldual.rvm import RVC, RVR

_REG_DF = ("DESIGN contract: every estimator exposes f(x) = decision_function(X), regressors "
           "included (predict == decision_function)")


def _expected(est):
    return {"check_regressors_no_decision_function": _REG_DF} if isinstance(est, RVR) else {}


# tol=1e-3 (SparseBayes' default) keeps the 200-point checks fast; tests/rvm/test_rvm.py checks the
# algorithm itself at tight tolerances
@parametrize_with_checks([RVR(tol=1e-3), RVC(tol=1e-3)], expected_failed_checks=_expected)
def test_sklearn_conformance(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)
