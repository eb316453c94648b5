"""LIBSVM / scikit-learn conventions that would silently change results (issue 17).

Each test fits primaldual and scikit-learn on the same data and compares what a user moving
from ``sklearn.svm`` reads: predictions, decision values and the fitted attributes.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import datasets, svm

import primaldual as pd


def _f(m, X):
    """``f(x)``: ``decision_function`` of a classifier, ``predict`` of a regressor (which has
    no ``decision_function``, as in scikit-learn)."""
    return m.decision_function(X) if hasattr(m, "decision_function") else m.predict(X)


@pytest.fixture(scope="module")
def iris():
    X, y = datasets.load_iris(return_X_y=True)
    return X[::2] * np.array([1.0, 10.0, 1.0, 1.0]), y[::2]  # anisotropic: gamma matters


@pytest.fixture(scope="module")
def diabetes():
    X, y = datasets.load_diabetes(return_X_y=True)
    return X[:150], y[:150]


def test_nusvr_C_is_libsvm_C(diabetes):
    """nu-SVR's C bounds each multiplier (LIBSVM), not C/N: NuSVR(C=1) is scikit-learn's."""
    X, y = diabetes
    rng = np.random.default_rng(0)
    for sw in (None, rng.uniform(0.2, 3.0, len(y))):
        ref = svm.NuSVR(C=10.0).fit(X, y, sample_weight=sw)
        m = pd.NuSVR(C=10.0).fit(X, y, sample_weight=sw)
        np.testing.assert_allclose(m.predict(X), ref.predict(X), atol=1e-3 * np.ptp(y))
        assert abs(m.score(X, y) - ref.score(X, y)) < 1e-3


def test_gamma_scale_resolved_once_before_multiclass_split(iris):
    X, y = iris
    ref = svm.SVC().fit(X, y)
    m = pd.CSVC().fit(X, y)
    assert m._gamma == pytest.approx(ref._gamma)
    assert all(e.kernel_.gamma == pytest.approx(ref._gamma) for e in m.estimators_)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X), atol=1e-3)


def test_gamma_scale_uses_rows_with_zero_weight():
    X, y = datasets.make_classification(n_samples=60, random_state=0)
    sw = np.ones(60)
    sw[:10] = 0.0
    ref = svm.SVC().fit(X, y, sample_weight=sw)
    m = pd.CSVC().fit(X, y, sample_weight=sw)
    assert m.kernel_.gamma == pytest.approx(ref._gamma)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X), atol=1e-3)


def test_C_inf_is_hard_margin():
    X, y = datasets.make_classification(n_samples=60, random_state=1)
    m = pd.CSVC(C=np.inf).fit(X, y)
    ref = svm.SVC(C=np.inf).fit(X, y)
    assert m.status_ == "optimal" and np.isfinite(m.certificate_.relative_gap)
    np.testing.assert_array_equal(m.predict(X), ref.predict(X))
    np.testing.assert_array_equal(m.predict(X), pd.CSVC(C=1e10).fit(X, y).predict(X))
    Xr, yr = datasets.make_regression(n_samples=40, n_features=5, random_state=1)
    r = pd.EpsilonSVR(C=np.inf).fit(Xr, yr)
    assert r.status_ == "optimal"
    np.testing.assert_allclose(r.predict(Xr), svm.SVR(C=np.inf).fit(Xr, yr).predict(Xr),
                               atol=1e-3 * np.ptp(yr))


@pytest.mark.parametrize("name", ["CSVC", "NuSVC", "EpsilonSVR", "NuSVR"])
def test_nonpositive_weights_drop_samples(name):
    X, y = datasets.make_classification(n_samples=50, random_state=2)
    sw = np.ones(50)
    sw[:6] = [0.0, -0.5, 0.0, -3.0, 0.0, -1e-3]
    m = getattr(pd, name)(kernel="linear").fit(X, y, sample_weight=sw)
    sub = getattr(pd, name)(kernel="linear").fit(X[6:], y[6:])
    np.testing.assert_allclose(_f(m, X), _f(sub, X), atol=1e-6)
    assert np.all(m.support_ >= 6) and np.all(m.beta_[:6] == 0)
    with pytest.raises(ValueError, match="all samples have zero or negative weights"):
        getattr(pd, name)().fit(X, y, sample_weight=-np.ones(50))


@pytest.mark.parametrize("name, msg", [("CSVC", "belong to the same class"),
                                       ("NuSVC", "nu is infeasible")])
def test_weights_leaving_one_class_raise(name, msg):
    X, y = datasets.make_classification(n_samples=30, random_state=3)
    sw = np.where(y == 0, -1.0, 1.0)
    with pytest.raises(ValueError, match=msg):
        getattr(pd, name)().fit(X, y, sample_weight=sw)


def test_weighted_nu_models_invariant_to_weight_scale():
    X, y = datasets.load_breast_cancer(return_X_y=True)
    X, y = X[::3], y[::3]
    rng = np.random.default_rng(1)
    w = rng.uniform(0.5, 2.0, len(y))
    a = pd.NuSVC().fit(X, y, sample_weight=w)
    b = pd.NuSVC().fit(X, y, sample_weight=7.0 * w)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)
    ref = svm.NuSVC().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(a.decision_function(X), ref.decision_function(X), atol=1e-2)
    assert (a.predict(X) == ref.predict(X)).mean() >= 0.99


def test_binary_attribute_shapes():
    X, y = datasets.make_classification(n_samples=40, random_state=4)
    ref = svm.SVC(kernel="linear").fit(X, y)
    m = pd.CSVC(kernel="linear").fit(X, y)
    for name in ("dual_coef_", "intercept_", "coef_", "n_support_", "n_iter_", "support_"):
        assert np.shape(getattr(m, name)) == np.shape(getattr(ref, name)), name
    np.testing.assert_array_equal(m.support_, ref.support_)  # grouped by class, as LIBSVM
    np.testing.assert_array_equal(m.n_support_, ref.n_support_)
    np.testing.assert_allclose(m.dual_coef_, ref.dual_coef_, atol=1e-3)
    np.testing.assert_allclose(m.intercept_, ref.intercept_, atol=1e-3)
    assert isinstance(m.b_, float) and m.beta_.shape == (40,)
    with pytest.raises(ValueError):
        m.coef_[0, 0] = 1.0
    with pytest.raises(AttributeError):
        m.coef_ = np.zeros(3)
    r = pd.EpsilonSVR(kernel="linear").fit(X, y.astype(float))
    assert r.dual_coef_.shape == (1, r.support_.size) and r.n_support_.shape == (1,)
    assert isinstance(r.n_iter_, int)


@pytest.mark.parametrize("est", ["SVC", "NuSVC"])
def test_multiclass_attributes_match_libsvm(iris, est):
    X, y = iris
    ref = getattr(svm, est)(kernel="linear").fit(X, y)
    m = getattr(pd, "CSVC" if est == "SVC" else "NuSVC")(kernel="linear").fit(X, y)
    np.testing.assert_array_equal(m.support_, ref.support_)
    np.testing.assert_array_equal(m.n_support_, ref.n_support_)
    assert m.dual_coef_.shape == ref.dual_coef_.shape == (2, ref.support_.size)
    scale = np.abs(ref.dual_coef_).max()
    # the same SMO steps as LIBSVM: agreement to ~2e-15 measured (issue 27), checked to 100x
    np.testing.assert_allclose(m.dual_coef_, ref.dual_coef_, atol=2e-13 * scale)
    np.testing.assert_allclose(m.intercept_, ref.intercept_, atol=2e-13)
    np.testing.assert_allclose(m.coef_, ref.coef_, atol=2e-13 * np.abs(ref.coef_).max())
    assert m.n_iter_.shape == (3,)
    m.set_params(decision_function_shape="ovo")
    np.testing.assert_allclose(X @ m.coef_.T + m.intercept_, m.decision_function(X), atol=1e-8)


def test_precomputed_kernel_multiclass(iris):
    X, y = iris
    K = X @ X.T
    m = pd.CSVC(kernel="precomputed").fit(K, y)
    lin = pd.CSVC(kernel="linear").fit(X, y)
    np.testing.assert_array_equal(m.predict(K), lin.predict(X))
    np.testing.assert_allclose(m.decision_function(K), lin.decision_function(X), atol=1e-6)
    np.testing.assert_allclose(m.dual_coef_, lin.dual_coef_, atol=1e-6)
    # only the support columns of a test kernel are read (LIBSVM)
    Kt = np.zeros_like(K)
    Kt[:, m.support_] = K[:, m.support_]
    np.testing.assert_array_equal(m.predict(Kt), lin.predict(X))


def test_precomputed_kernel_binary_predict_reads_support_columns():
    X, y = datasets.make_classification(n_samples=40, random_state=5)
    K = X @ X.T
    m = pd.CSVC(kernel="precomputed").fit(K, y)
    assert m.support_.size < 40
    Kt = np.zeros((7, 40))
    Kt[:, m.support_] = X[:7] @ X[m.support_].T
    np.testing.assert_allclose(m.decision_function(Kt),
                               pd.CSVC(kernel="linear").fit(X, y).decision_function(X[:7]),
                               atol=1e-6)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("cls", [pd.CSVC, pd.NuSVC])
def test_class_weight_keys_checked_as_scikit_learn(cls, n_classes):
    """A class_weight dict whose keys are not classes, while some class has no entry, raises
    scikit-learn's ValueError; a dict covering every class may carry extra keys."""
    from sklearn import datasets, svm

    X, y = datasets.load_iris(return_X_y=True)
    X, y = X[y < n_classes], y[y < n_classes]
    with pytest.raises(ValueError) as ref:
        svm.SVC(class_weight={5: 1}).fit(X, y)
    with pytest.raises(ValueError) as ours:
        cls(class_weight={5: 1}).fit(X, y)
    assert str(ours.value) == str(ref.value)
    cover = {c: 1.0 + c for c in range(n_classes)} | {7: 3.0}
    m = cls(class_weight=cover).fit(X, y)
    ref_m = cls(class_weight={c: 1.0 + c for c in range(n_classes)}).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), ref_m.decision_function(X))


@pytest.mark.parametrize("backend", ["smo", "cvxpy"])
def test_weighted_nusvc_at_its_largest_feasible_nu(backend):
    """iris setosa (weight 1) vs virginica (weight 3), nu = 0.5 = 2 min(W+, W-)/W: every alpha
    of the lighter class sits at its bound, so no free support vector gives r1; the bias is
    the finite end of the interval the bounded ones leave (it was inf -> NaN), certified by
    both backends with the same optimal value."""
    from sklearn import datasets

    X, y = datasets.load_iris(return_X_y=True)
    keep = y != 1
    X, y = X[keep], y[keep]
    kw = dict(class_weight={0: 1.0, 2: 3.0}, gamma=0.05)
    m = pd.NuSVC(**kw).fit(X, y, backend=backend)
    assert m.certificate_.status == "optimal" and np.isfinite(m.intercept_).all()
    assert abs(m.certificate_.relative_gap) <= 1e-3
    ref = pd.NuSVC(**kw).fit(X, y, backend="cvxpy")
    assert m.certificate_.dual_objective == pytest.approx(ref.certificate_.dual_objective,
                                                          rel=1e-3)
    np.testing.assert_array_equal(m.predict(X), y)


def test_sparse_input_too_large_to_densify_is_refused_clearly(monkeypatch):
    """Sparse X is densified for a solver that needs dense rows (here L2-SVC's; C-SVC's SMO
    route keeps X sparse, tests/methods/test_sparse_smo.py): when that would not fit in memory
    the fit raises InsufficientMemoryError with both sizes before allocating (and leaves no
    fitted state)."""
    import scipy.sparse as sp_

    import primaldual.validation as val
    from primaldual.exceptions import InsufficientMemoryError

    X = sp_.random(40, 100_000, density=1e-4, format="csr", random_state=0)
    y = np.arange(40) % 2
    monkeypatch.setattr(val, "available_memory", lambda: 8 * 40 * 50_000)
    m = pd.L2SVC(kernel="linear")
    with pytest.raises(InsufficientMemoryError, match="densified .* 0.0 GiB"):
        m.fit(X, y)
    assert not hasattr(m, "support_")
    # C-SVC on its SMO route never densifies X: the same memory limit is no obstacle
    assert pd.CSVC(kernel="linear").fit(X, y).support_.size > 0
    monkeypatch.setattr(val, "available_memory", lambda: 8 * 40 * 200_000)
    assert m.fit(X, y).support_.size > 0
