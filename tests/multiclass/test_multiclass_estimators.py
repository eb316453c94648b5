"""Multiclass for every binary classifier: one-vs-one (as scikit-learn's SVC), one-vs-rest,
DAG, LS-SVM codings with Hamming / loss-based decoding, wrappers, class weights."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_blobs
from sklearn.svm import SVC

import primaldual as pd
from primaldual.multiclass import (
    DAGClassifier,
    OneVsOneClassifier,
    OneVsRestClassifier,
    code_matrix,
    decode,
    ovr_from_ovo,
)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


@pytest.mark.parametrize("shape", ["ovr", "ovo"])
@pytest.mark.parametrize("C,gamma", [(1.0, 0.5), (10.0, 0.1)])
def test_csvc_ovo_matches_sklearn_svc(iris, shape, C, gamma):
    X, y = iris
    m = pd.CSVC(C=C, gamma=gamma, tol=1e-6)
    m.decision_function_shape = shape
    m.fit(X, y)
    s = SVC(C=C, gamma=gamma, tol=1e-6, decision_function_shape=shape).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), s.decision_function(X), atol=1e-4)
    np.testing.assert_array_equal(m.predict(X), s.predict(X))
    np.testing.assert_array_equal(m.n_support_, s.n_support_)
    assert len(m.estimators_) == 3


def test_string_labels_and_refit_binary(iris):
    X, y = iris
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    m = pd.LSSVC(C=10.0, gamma=0.5).fit(X, labels)
    assert m.predict(X).dtype.kind == "U" and np.mean(m.predict(X) == labels) > 0.95
    m.fit(X[y > 0], labels[y > 0])  # a binary refit drops the multiclass state
    assert not hasattr(m, "estimators_") and m.decision_function(X).ndim == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_max_wins_voting_ties_to_lowest(seed):
    rng = np.random.default_rng(seed)
    S = rng.choice([-1.0, 1.0], size=(200, 6))  # 4 classes, many vote ties
    M = code_matrix(4, "ovo")
    votes = np.zeros((200, 4))
    k = 0
    for i in range(4):
        for j in range(i + 1, 4):
            votes[:, i] += S[:, k] > 0
            votes[:, j] += S[:, k] < 0
            k += 1
    ref = np.array([np.flatnonzero(v == v.max())[0] for v in votes])
    np.testing.assert_array_equal(decode(S, M, method="hamming"), ref)
    np.testing.assert_array_equal(np.argmax(ovr_from_ovo(S, 4) // 1, axis=1), ref)


@pytest.mark.parametrize("strategy", ["ovo", "ovr", "dag"])
@pytest.mark.parametrize("seed", [0, 1])
def test_strategies_agree_with_sklearn_wrappers(strategy, seed):
    from sklearn.multiclass import OneVsOneClassifier as SkOvO
    from sklearn.multiclass import OneVsRestClassifier as SkOvR
    X, y = make_blobs(n_samples=90, centers=4, cluster_std=2.0, random_state=seed)
    m = pd.CSVC(C=1.0, gamma=0.2, tol=1e-6)
    m.multiclass = strategy
    m.fit(X, y)
    base = SVC(C=1.0, gamma=0.2, tol=1e-6)
    if strategy == "ovr":
        ref = SkOvR(base).fit(X, y)
        np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X), atol=1e-4)
        np.testing.assert_array_equal(m.predict(X), ref.predict(X))
    else:
        ref = SVC(C=1.0, gamma=0.2, tol=1e-6).fit(X, y)
        agree = np.mean(m.predict(X) == ref.predict(X))
        assert agree == 1.0 if strategy == "ovo" else agree > 0.9
        if strategy == "ovo":
            np.testing.assert_array_equal(SkOvO(base).fit(X, y).predict(X), m.predict(X))


@pytest.mark.parametrize("coding", ["moc", "ecoc", "1vsA", "1vs1"])
@pytest.mark.parametrize("decoding", ["hamming", "loss"])
def test_lssvc_codings_match_block_kkt(iris, coding, decoding):
    from primaldual.multiclass import fit_lssvm_multiclass
    X, y = iris
    m = pd.LSSVC(C=5.0, gamma=0.5)
    m.coding, m.decoding = coding, decoding
    m.fit(X, y)
    name = {"1vsA": "ova", "1vs1": "ovo"}.get(coding, coding)
    ref = fit_lssvm_multiclass(X, y, m.estimators_[0].kernel_, 5.0, name, random_state=0)
    np.testing.assert_array_equal(m.codes_, ref.codes)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X), atol=1e-6)
    np.testing.assert_array_equal(m.predict(X), ref.predict(X, method=decoding))
    assert np.mean(m.predict(X) == y) > 0.9


def test_wrappers_and_parallel(iris):
    X, y = iris
    for W, strategy in ((OneVsOneClassifier, "ovo"), (OneVsRestClassifier, "ovr"),
                        (DAGClassifier, "dag")):
        w = W(pd.LSSVC(C=10.0, gamma=0.5), n_jobs=2).fit(X, y)
        m = pd.LSSVC(C=10.0, gamma=0.5)
        m.multiclass = strategy
        m.fit(X, y)
        np.testing.assert_array_equal(w.predict(X), m.predict(X))
        assert w.score(X, y) > 0.95
    with pytest.raises(TypeError, match="estimator"):
        OneVsOneClassifier(object()).fit(X, y)


def test_class_weight_balanced_multiclass_matches_sklearn():
    X, y = make_blobs(n_samples=[40, 15, 10], centers=None, cluster_std=2.5, random_state=3)
    m = pd.CSVC(C=1.0, gamma=0.3, class_weight="balanced", tol=1e-6).fit(X, y)
    s = SVC(C=1.0, gamma=0.3, class_weight="balanced", tol=1e-6).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), s.decision_function(X), atol=1e-4)


def test_bad_strategy(iris):
    X, y = iris
    m = pd.CSVC()
    m.multiclass = "bogus"
    with pytest.raises(ValueError, match="multiclass"):
        m.fit(X, y)


@pytest.mark.parametrize("strategy", ["ovo", "ovr"])
def test_multiclass_predict_proba_coupling(iris, strategy):
    from sklearn.linear_model import LogisticRegression

    from primaldual.multiclass import fit_multiclass_estimator, multiclass_predict_proba

    X, y = iris
    m = LogisticRegression(C=10.0)
    m.classes_ = np.unique(y)
    m.multiclass = strategy
    fit_multiclass_estimator(m, X, y)
    P = multiclass_predict_proba(m, X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(P >= 0) and np.mean(np.argmax(P, axis=1) == y) > 0.95
    if strategy == "ovo":  # coupling of exact pairwise posteriors recovers them
        p = np.array([[0.2, 0.5, 0.3]])
        r = np.array([[p[0, i] / (p[0, i] + p[0, j]) for i in range(3) for j in range(i + 1, 3)]])

        class _E:
            def __init__(self, v):
                self.v = v

            def predict_proba(self, X):
                return np.column_stack([1 - self.v, self.v])

        fake = type("F", (), {})()
        fake.classes_, fake.multiclass_strategy_ = np.arange(3), "ovo"
        fake.estimators_ = [_E(r[:, k]) for k in range(3)]
        np.testing.assert_allclose(multiclass_predict_proba(fake, None), p, atol=1e-10)


def test_semi_supervised_multiclass_keeps_unlabelled_rows():
    """fit_multiclass_estimator keeps NaN (unlabelled) rows in every sub-problem, as LapSVC
    needs (LapSVC.fit routes > 2 classes here once wired)."""
    from primaldual.multiclass import fit_multiclass_estimator, multiclass_predict

    X, y = make_blobs(n_samples=90, centers=3, cluster_std=1.0, random_state=0)
    y_semi = y.astype(float)
    y_semi[np.random.default_rng(0).random(90) < 0.6] = np.nan
    m = pd.LapSVC(gamma_A=1e-2, gamma_I=1.0)
    m.classes_ = np.unique(y_semi)
    fit_multiclass_estimator(m, X, y_semi)
    np.testing.assert_array_equal(m.classes_, [0.0, 1.0, 2.0])
    for e in m.estimators_:  # every pair sees all unlabelled rows
        assert e.certificate_.extra["u"] == int(np.isnan(y_semi).sum())
    assert np.mean(multiclass_predict(m, X) == y) > 0.9
