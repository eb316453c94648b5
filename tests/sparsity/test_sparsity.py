"""SVM-RFE (Zhang Algorithm 8.2) and the LS-SVM pruning estimator (Suykens 3.7)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.feature_selection import RFE
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

import primaldual as pd
from primaldual import sparsity as kkt
from primaldual.sparsity import SVMRFE, PrunedLSSVM, prune_lssvm, rfe_criterion


def _data(seed, n=60, d=8):
    return make_classification(n_samples=n, n_features=d, n_informative=3, n_redundant=0,
                               shuffle=True, random_state=seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_linear_rfe_matches_sklearn_rfe(seed):
    X, y = _data(seed)
    ours = SVMRFE(pd.CSVC(kernel="linear", C=0.5, tol=1e-8), n_features_to_select=3).fit(X, y)
    ref = RFE(SVC(kernel="linear", C=0.5, tol=1e-8), n_features_to_select=3).fit(X, y)
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_array_equal(ours.ranking_, ref.ranking_)


@pytest.mark.parametrize("seed", [0, 1])
def test_criterion_is_change_of_w_norm(seed):
    X, y = _data(seed, 40, 4)
    m = pd.LSSVC(C=2.0, gamma=0.3).fit(X, y)
    c = rfe_criterion(m, X)
    bt = m.beta_
    for i in range(4):  # brute force: full Gram matrices with and without feature i
        K = m.kernel_(X)
        Ki = m.kernel_(np.delete(X, i, axis=1))
        assert c[i] == pytest.approx(0.5 * abs(bt @ K @ bt - bt @ Ki @ bt), rel=1e-10)
    lin = pd.CSVC(kernel="linear").fit(X, y)
    np.testing.assert_allclose(rfe_criterion(lin, X), 0.5 * lin.coef_.ravel() ** 2, rtol=1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rbf_rfe_finds_informative_features_and_pipeline(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 6))
    y = (X[:, 1] + X[:, 4] + 0.3 * X[:, 1] ** 2 > 0).astype(int)  # features 1 and 4 only
    sel = SVMRFE(pd.CSVC(C=10.0, gamma=0.1), n_features_to_select=2).fit(X, y)
    assert set(np.flatnonzero(sel.support_)) == {1, 4}
    assert sel.transform(X).shape == (80, 2) and sel.score(X, y) > 0.9
    pipe = make_pipeline(SVMRFE(pd.LSSVC(), n_features_to_select=0.5), pd.CSVC()).fit(X, y)
    assert pipe[0].n_features_ == 3 and pipe.score(X, y) > 0.7
    with pytest.raises(ValueError, match="n_features_to_select"):
        SVMRFE(pd.CSVC(), n_features_to_select=0).fit(X, y)
    with pytest.raises(ValueError, match="step"):
        SVMRFE(pd.CSVC(), step=0).fit(X, y)


@pytest.mark.parametrize("seed", [0, 1])
def test_prune_path_matches_backend_and_estimator(seed):
    X, y = _data(seed, 120, 3)
    est = pd.LSSVC(C=5.0, gamma=0.5)
    path = prune_lssvm(est, X, y, max_steps=4)
    m = est.fit(X, y)
    ys = np.where(y == 1, 1.0, -1.0)
    ref = kkt.prune_path(X, ys, m.kernel_, 5.0, max_steps=4)
    assert path.n_sv == ref.n_sv
    # step 0 is the full LS-SVM: the estimator's fit
    np.testing.assert_allclose(path.beta[0], m.beta_, atol=1e-8)
    pr = PrunedLSSVM(est, validation_fraction=0.25, random_state=seed).fit(X, y)
    assert pr.n_support_ < len(y) and pr.score(X, y) > 0.75
    t = pr.path_.best
    assert pr.n_support_ == pr.path_.n_sv[t]


def test_pruned_regression():
    X, y = make_regression(n_samples=100, n_features=2, noise=1.0, random_state=0)
    y = y / y.std()
    pr = PrunedLSSVM(pd.LSSVR(C=10.0, gamma=0.2), validation_fraction=None, tol=0.05).fit(X, y)
    assert pr.n_support_ < len(y) and pr.score(X, y) > 0.8
    with pytest.raises(TypeError, match="LS-SVM"):
        prune_lssvm(pd.CSVC(), X, y > 0)
