"""scikit-learn conformance of RVR and RVC (parametrize_with_checks)."""

from __future__ import annotations

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from primaldual.rvm import RVC, RVR


def _expected(est):
    return {}


# tol=1e-3 (SparseBayes' default) keeps the 200-point checks fast; tests/rvm/test_rvm.py checks the
# algorithm itself at tight tolerances
@parametrize_with_checks([RVR(tol=1e-3), RVR(tol=1e-3, bias_prior="flat"), RVC(tol=1e-3)],
                         expected_failed_checks=_expected)
def test_sklearn_conformance(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)
