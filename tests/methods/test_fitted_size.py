"""Fitted size (issue 17): a fitted estimator pickles to what ``predict`` needs, O(n_SV d + N),
not the training data; the teaching views keep working on a fit made in this session."""

import pickle

import numpy as np
import pytest

import primaldual as pd
from primaldual.bounds import radius_margin_bound


def _data(n, d_pad, n_classes, seed=0):
    """Labels from the first 3 features; ``d_pad`` extra all-zero features change no kernel
    value (fixed gamma) and so no fit, only the size of every stored row."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    cuts = np.quantile(Z[:, 0], np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.digitize(Z[:, 0] + 0.3 * Z[:, 1], cuts)
    return np.hstack([Z, np.zeros((n, d_pad))]), y


def _fit_pickled(est, X, y):
    m = est.fit(X, y)
    return m, pickle.dumps(m)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("cls", [pd.CSVC, pd.NuSVC])
def test_pickle_grows_with_support_vectors_not_training_rows(cls, n_classes):
    d_pad = 200
    X0, y = _data(600, 0, n_classes)
    X1, _ = _data(600, d_pad, n_classes)
    m0, b0 = _fit_pickled(cls(gamma=0.5), X0, y)
    m1, b1 = _fit_pickled(cls(gamma=0.5), X1, y)
    np.testing.assert_array_equal(m0.support_, m1.support_)
    # stored rows: the support vectors, once (a multiclass sub-problem's support vectors are
    # pickled as positions in the model's, as LIBSVM stores them)
    n_rows = m1.support_.size
    grown = len(b1) - len(b0)
    assert grown <= 1.05 * n_rows * d_pad * 8 + 4096
    # the test can fail: one stored copy of the training rows adds more than the slack
    assert X1.shape[0] * d_pad * 8 > 0.05 * n_rows * d_pad * 8 + 4096


def test_pickled_model_predicts_the_same_and_says_what_it_dropped():
    X, y = _data(300, 5, 2)
    m = pd.CSVC(gamma=0.5).fit(X, y)
    r = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(r.decision_function(X), m.decision_function(X))
    assert r.certificate_.relative_gap == m.certificate_.relative_gap
    assert r.solution_.status == m.solution_.status and r.solution_.problem is None
    assert r.solution_.objective_value == m.solution_.objective_value
    # the in-session object keeps the teaching state; the pickled copy refuses clearly
    assert m.kkt_table() is not None and radius_margin_bound(m) > 0
    with pytest.raises(ValueError, match="fitted in this session"):
        r.kkt_table()
    with pytest.raises(ValueError, match="this session"):
        radius_margin_bound(r)
    with pytest.raises(ValueError, match="refit in this session"):
        r.solution_.kkt_residuals()


def test_multiclass_sub_problems_hold_no_training_rows():
    X, y = _data(300, 5, 3)
    m = pd.CSVC(gamma=0.5).fit(X, y)
    for e in m.estimators_:
        assert not hasattr(e, "X_fit_") and not hasattr(e, "_kkt_state")
        assert e.solution_.problem is None
    r = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(r.predict(X), m.predict(X))
    np.testing.assert_array_equal(r.decision_function(X), m.decision_function(X))
    for e, f in zip(m.estimators_, r.estimators_, strict=True):
        np.testing.assert_array_equal(e.support_vectors_, f.support_vectors_)


def test_kernel_ridge_keeps_its_training_rows_for_the_posterior_std():
    X, y = _data(80, 2, 2)
    m = pd.KernelRidge(C=10.0, gamma=0.5).fit(X, y.astype(float))
    r = pickle.loads(pickle.dumps(m))
    f0, s0 = m.predict(X[:5], return_std=True)
    f1, s1 = r.predict(X[:5], return_std=True)
    np.testing.assert_array_equal(f0, f1)
    np.testing.assert_array_equal(s0, s1)


@pytest.mark.parametrize("cls", [pd.CSVC, pd.NuSVC])
def test_multiclass_fit_builds_no_problem_objects(cls, monkeypatch):
    """Dropping a sub-problem's session state must not build the lazily built primal/dual
    expressions it drops (that cost ~1 ms per pair: a small multiclass fit took twice as
    long)."""
    from primaldual.model.problem import LazyProblem

    built = []
    original = LazyProblem.__getattr__

    def counting(self, name):
        if not name.startswith("__") and "_builder" in self.__dict__:
            built.append(name)
        return original(self, name)

    monkeypatch.setattr(LazyProblem, "__getattr__", counting)
    X, y = _data(150, 2, 3)
    cls(gamma=0.5).fit(X, y)
    assert built == []
