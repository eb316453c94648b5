"""scikit-learn conformance of every method class (``parametrize_with_checks``).

Each expected failure names its reason; most are properties of a formulation or of another
module (listed in the issue-8 report for their owners), not of the estimator API.
"""

from __future__ import annotations

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import primaldual as pd

_SW_EQ = ("sample_weight equals repeating rows only up to the solver tolerance (SMO tol=1e-3, "
          "interior point 1e-8) and gamma='scale' uses the unweighted X.var(); the check needs "
          "rtol=1e-7 (scikit-learn's own SVC/NuSVC are marked the same way)")
_SW_GRAPH = ("repeating a row adds a node to the k-nearest-neighbour graph (the Laplacian and the "
             "heat width change) and gamma='scale' uses the unweighted X.var(); sample_weight "
             "equals repeated rows without the graph term and with a numeric gamma (LapRLS to "
             "1e-15, LapSVC to the solver tolerance): "
             "tests/methods/test_laplacian.py::test_laplacian_integer_weights_equal_repeated_rows")
_SW_KLR = ("gamma='scale' uses the unweighted X.var() (scikit-learn's SVC convention), which "
           "repeating rows changes: decision values differ by ~4e-3 on the check's data; with a "
           "numeric gamma they agree to ~3e-6 (the interior-point tolerance), still above the "
           "check's rtol=1e-7 (tests/methods/test_logistic.py::"
           "test_klr_integer_weights_equal_repeated_rows)")

EXPECTED: dict[str, dict[str, str]] = {
    "HardMarginSVC": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ},
    "CSVC": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ},
    "L2SVC": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ},
    "NuSVC": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ,
              "check_class_weight_classifiers": "nu=0.5 is infeasible for the check's highly "
              "weighted data (nu <= 2 min(N+, N-)/N), as LIBSVM's NuSVC; scikit-learn marks its "
              "own NuSVC as failing this check too"},
    "EpsilonSVR": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ},
    "NuSVR": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ},
    "LSSVC": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ},
    "LSSVR": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ},
    "ProximalSVC": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ},
    "KernelRidge": {"check_sample_weight_equivalence_on_dense_data": _SW_EQ},
    "LapRLS": {"check_sample_weight_equivalence_on_dense_data": _SW_GRAPH},
    "LapSVC": {"check_sample_weight_equivalence_on_dense_data": _SW_GRAPH},
    "KernelLogisticRegression": {"check_sample_weight_equivalence_on_dense_data": _SW_KLR},
}

# sparse X is densified by the shared fit: the sparse weight-equivalence check fails exactly
# where the dense one does (same reason)
for _reasons in EXPECTED.values():
    if "check_sample_weight_equivalence_on_dense_data" in _reasons:
        _reasons.setdefault("check_sample_weight_equivalence_on_sparse_data",
                            _reasons["check_sample_weight_equivalence_on_dense_data"])
_HM_SPARSE = ("the check's random sparse X has repeated all-zero rows with both labels: not "
              "separable, so the hard margin refuses (InfeasibleProblemError) as it must")
EXPECTED["HardMarginSVC"].update(dict.fromkeys(
    ("check_estimator_sparse_tag", "check_estimator_sparse_array",
     "check_estimator_sparse_matrix"), _HM_SPARSE))

#: Hard margin needs data separable in feature space: a narrow RBF makes any set of distinct
#: points separable with a well-conditioned Gram matrix (the linear default is not, on
#: scikit-learn's random check data).
PARAMS = {"HardMarginSVC": {"kernel": "rbf", "gamma": 10.0}}


def _instances():
    return [getattr(pd, name)(**PARAMS.get(name, {})) for name in pd._METHODS]


def _expected(est):
    return EXPECTED.get(type(est).__name__, {})


@parametrize_with_checks(_instances(), expected_failed_checks=_expected)
def test_sklearn_conformance(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


def test_expected_failures_name_real_classes():
    assert set(EXPECTED) <= set(pd._METHODS)
    for reasons in EXPECTED.values():
        assert all(isinstance(r, str) and r for r in reasons.values())


@pytest.mark.parametrize("name", ["CSVC", "LSSVC"])
def test_feature_names_and_string_labels(name):
    pdx = pytest.importorskip("pandas")
    import numpy as np
    rng = np.random.default_rng(0)
    X = pdx.DataFrame(rng.normal(size=(30, 2)), columns=["a", "b"])
    y = np.where(X["a"] + 0.3 * rng.normal(size=30) > 0, "yes", "no")
    m = getattr(pd, name)().fit(X, y)
    assert list(m.feature_names_in_) == ["a", "b"] and m.n_features_in_ == 2
    assert set(m.predict(X)) <= {"yes", "no"} and list(m.classes_) == ["no", "yes"]
    # +1 is classes_[1]: f > 0 <=> "yes" (no sign flip)
    assert np.all((m.decision_function(X) > 0) == (m.predict(X) == "yes"))


# ----------------------------------------------------------------------------- issue 30
# every other public estimator: the estimators beyond the SVMs, the multiclass wrappers and the
# sparsity meta-estimators. Allowed failures only where scikit-learn marks its own counterpart
# (SVC/SVR's sample-weight equivalence for the wrappers of an SMO-fitted CSVC); none is
# left for KernelPCA and KernelPLSRegression since issue 27 fixed them).
_WRAP_SW = dict.fromkeys(("check_sample_weight_equivalence_on_dense_data",
                          "check_sample_weight_equivalence_on_sparse_data"), _SW_EQ)


def _more_instances():
    from primaldual.multiclass import DAGClassifier, OneVsOneClassifier, OneVsRestClassifier
    from primaldual.sparsity import SVMRFE, PrunedLSSVM
    return [OneVsOneClassifier(pd.CSVC()), OneVsRestClassifier(pd.CSVC()),
            DAGClassifier(pd.CSVC()), SVMRFE(pd.CSVC(kernel="linear")),
            PrunedLSSVM(pd.LSSVC()), PrunedLSSVM(pd.LSSVR()), pd.KernelPCA(),
            pd.KernelPLSRegression(), pd.GPClassifier(optimizer=None)]


MORE_EXPECTED: dict[str, dict[str, str]] = {
    "OneVsOneClassifier": _WRAP_SW, "OneVsRestClassifier": _WRAP_SW, "DAGClassifier": _WRAP_SW,
}


@parametrize_with_checks(_more_instances(),
                         expected_failed_checks=lambda e: MORE_EXPECTED.get(type(e).__name__, {}))
def test_sklearn_conformance_other_estimators(estimator, check, request):
    # runtime subset, GPClassifier only (each fit a Laplace Newton loop per class, ~1/2 minute
    # per variant on the shared machine): check_classifiers_train runs on in-memory arrays, its
    # read-only-memmap variants (the same fits on memory-mapped copies) are left out; the
    # instance has optimizer=None (with L-BFGS the set takes ~8 minutes; the evidence and its
    # gradient, which the optimizer follows, are tested against scikit-learn in
    # tests/gaussian_process)
    if isinstance(estimator, pd.GPClassifier) and "readonly_memmap=True" in request.node.name:
        pytest.skip("runtime: GPClassifier runs check_classifiers_train on in-memory arrays only")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


#: where the remaining public estimators run the same checks
CHECKED_ELSEWHERE = {"RVR": "tests/rvm/test_rvm_conformance.py",
                     "RVC": "tests/rvm/test_rvm_conformance.py",
                     "EnclosingBall": "tests/decomposition/test_decomposition.py",
                     "Variant": "tests/methods/test_variant.py",
                     "TwinSVC": "tests/methods/test_variant_twin.py"}


def test_every_public_estimator_runs_the_checks():
    import inspect

    from sklearn.base import BaseEstimator

    import primaldual.multiclass
    import primaldual.sparsity
    public = set()
    for mod in (pd, primaldual.multiclass, primaldual.sparsity):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                public.add(name)
    covered = (set(pd._METHODS) | {type(e).__name__ for e in _more_instances()}
               | set(CHECKED_ELSEWHERE))
    assert public <= covered, public - covered
