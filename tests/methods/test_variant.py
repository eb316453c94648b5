"""``primaldual.Variant`` (issue 26): a user's primal spec and decision expression as a
scikit-learn estimator. References are independent of the estimator: scikit-learn's LIBSVM
(``OneClassSVM``, ``SVC``), or the catalogue's ``CSVC``.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.svm import SVC, OneClassSVM
from sklearn.utils.estimator_checks import check_estimator
from variant_specs import placeholder_specs, svr_spec  # tests/methods (on the path)

import primaldual as pd
from primaldual.exceptions import ModelFileError
from primaldual.model import (
    Data,
    FeatureVariable,
    Problem,
    Variable,
    norm2,
    phi,
    sum_squares,
    vsum,
)
from primaldual.persistence import load, save


# ----------------------------------------------------------------------------- specs (factories)
def one_class(X, y, kernel, nu):
    """Schölkopf et al.: min 1/2||w||^2 + 1/(nu N) sum xi - rho, <w, phi(x_i)> >= rho - xi_i."""
    N = X.shape[0]
    w, rho, xi = FeatureVariable("w", kernel, X), Variable("rho"), Variable("xi", N)
    c = Data("c", 1.0 / (nu * N), txt="1/(νN)")
    P = Problem(0.5 * norm2(w) + c * vsum(xi) - rho,
                [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                "one-class SVM primal")
    return P, w @ phi(X) - rho


def c_svc(X, y, kernel, C):
    """The C-SVC primal: min 1/2||w||^2 + C sum xi, y_i(<w, phi(x_i)> + b) >= 1 - xi_i."""
    N = X.shape[0]
    w, b, xi = FeatureVariable("w", kernel, X), Variable("b"), Variable("xi", N)
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi),
                [(Data("y", y) * (w @ phi(X) + b) >= 1 - xi).named("alpha"),
                 (xi >= 0).named("mu")], "min", "C-SVC primal")
    return P, w @ phi(X) + b


def _blobs(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.4 * rng.normal(size=n) > 0, "yes", "no")
    return X, y


# ----------------------------------------------------------------------------- scikit-learn
def test_check_estimator_on_a_factory_spec():
    est = pd.Variant(c_svc, task="classification", C=1.0)    # placeholder specs: below
    failed = [r for r in check_estimator(est, on_fail=None) if r["status"] == "failed"]
    assert not failed, [(r["check_name"], str(r["exception"])[:300]) for r in failed]


def test_hyper_parameters_are_estimator_parameters():
    m = pd.Variant(one_class, task="novelty", kernel="rbf", gamma=0.5, nu=0.2)
    assert m.get_params()["nu"] == 0.2 and type(m).__name__ == "Variant"
    assert isinstance(m, pd.Variant)
    c = clone(m)
    assert c.get_params()["nu"] == 0.2 and c.spec is m.spec
    assert m.set_params(nu=0.3).nu == 0.3
    with pytest.raises(ValueError, match="Invalid parameter 'nu'"):
        pd.Variant(c_svc, C=1.0, kernel="rbf").set_params(nu=1)
    with pytest.raises(ValueError, match="'C' is not set"):
        type(pd.Variant(c_svc, C=1.0))(spec=c_svc).fit(*_blobs())


def test_classifier_matches_libsvm_and_cross_validates():
    X, y = _blobs(1, 80)
    m = pd.Variant(c_svc, kernel="rbf", gamma=0.5, C=2.0, tol=1e-6).fit(X, y)
    sk = SVC(C=2.0, gamma=0.5, tol=1e-6).fit(X, y)
    Xt = np.random.default_rng(2).normal(size=(50, 2))
    np.testing.assert_allclose(m.decision_function(Xt), sk.decision_function(Xt), atol=1e-4)
    np.testing.assert_array_equal(m.predict(Xt), sk.predict(Xt))
    assert list(m.classes_) == ["no", "yes"] and m.backend_ == "smo"
    # the certificate is computed from the point predict uses: its f is predict's f
    np.testing.assert_allclose(m.certificate_.f, m.decision_function(X), rtol=0, atol=1e-12)
    assert m.certificate_.status == "optimal" and abs(m.certificate_.relative_gap) < 1e-5
    assert np.all(m.dual_coef_ != 0) and m.support_vectors_.shape == (m.support_.size, 2)
    s = cross_val_score(pd.Variant(c_svc, gamma=0.5, C=1.0), X, y, cv=3)
    assert s.shape == (3,) and s.mean() > 0.7
    g = GridSearchCV(pd.Variant(c_svc, gamma=0.5, C=1.0), {"C": [0.1, 10.0]}, cv=3).fit(X, y)
    assert g.best_params_["C"] in (0.1, 10.0)


def test_one_class_matches_libsvm_scaled_by_nu_n():
    X = np.random.default_rng(3).normal(size=(120, 2))
    Xt = 1.5 * np.random.default_rng(4).normal(size=(80, 2))
    nu = 0.15
    m = pd.Variant(one_class, task="novelty", gamma=0.5, nu=nu, tol=1e-6).fit(X)
    sk = OneClassSVM(nu=nu, gamma=0.5, tol=1e-6).fit(X)
    # LIBSVM: sum alpha = nu N, alpha <= 1 -- its decision function is ours times nu N
    np.testing.assert_allclose(m.decision_function(Xt) * nu * 120, sk.decision_function(Xt),
                               atol=1e-5)
    np.testing.assert_array_equal(m.predict(Xt), sk.predict(Xt))
    np.testing.assert_allclose(m.score_samples(Xt), m.decision_function(Xt) + m.offset_)
    assert m.offset_ == pytest.approx(float(m.point_["rho"][0]))


def test_backend_is_passed_on_and_chosen_from_the_structure():
    X, y = _blobs(5, 40)
    a = pd.Variant(c_svc, gamma=0.5, C=1.0, tol=1e-7).fit(X, y)
    b = pd.Variant(c_svc, gamma=0.5, C=1.0, backend="cvxpy").fit(X, y)
    c = pd.Variant(c_svc, gamma=0.5, C=1.0).fit(X, y, backend="cvxpy")
    assert a.backend_ == "smo" and b.backend_ == "cvxpy" and c.backend_ == "cvxpy"
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-4)
    with pytest.raises(ValueError, match="backend"):
        pd.Variant(c_svc, C=1.0, backend="kkt").fit(X, y)   # not an equality-only QP


# ----------------------------------------------------------------------------- errors
def test_bad_input_names_the_argument_and_a_failed_fit_changes_nothing():
    X, y = _blobs(6, 30)
    m = pd.Variant(c_svc, gamma=0.5, C=1.0).fit(X, y)
    before = m.decision_function(X)
    for bad, match in [({"tol": -1.0}, "tol"), ({"task": "clustering"}, "task"),
                       ({"gamma": "wide"}, "gamma"), ({"C": "big"}, "'C'"),
                       ({"backend": "magic"}, "backend")]:
        with pytest.raises((ValueError, TypeError), match=match):
            clone(m).set_params(**bad).fit(X, y)
        with pytest.raises((ValueError, TypeError), match=match):
            m.set_params(**bad).fit(X, y)
        m.set_params(**{k: pd.Variant(c_svc, C=1.0, gamma=0.5).get_params()[k] for k in bad})
        np.testing.assert_array_equal(m.decision_function(X), before)
    with pytest.raises(ValueError, match="Only binary"):
        pd.Variant(c_svc, C=1.0).fit(X, np.arange(30) % 3)
    with pytest.raises(TypeError, match="spec must be"):
        pd.Variant(42, C=1.0).fit(X, y)


def test_a_decision_that_is_not_an_expansion_is_refused():
    def squared(X, y, kernel, C):
        P, f = c_svc(X, y, kernel, C)
        return P, f + Data("s", X[:, 0] ** 2)   # a data term varying with the row
    X, y = _blobs(7, 30)
    with pytest.raises(ValueError, match="decision"):
        pd.Variant(squared, C=1.0).fit(X, y)


# ----------------------------------------------------------------------------- model file
def test_model_file_round_trip(tmp_path):
    X, y = _blobs(8, 50)
    m = pd.Variant(c_svc, gamma=0.5, C=1.0).fit(X, y)
    path = tmp_path / "variant.npz"
    save(m, path)
    a = load(path)                         # predicts without the spec (numbers only)
    np.testing.assert_array_equal(a.predict(X), m.predict(X))
    np.testing.assert_allclose(a.decision_function(X), m.decision_function(X), rtol=1e-15)
    assert a.spec is None and a.get_params()["C"] == 1.0
    assert a.certificate_.relative_gap == m.certificate_.relative_gap
    with pytest.raises(ValueError, match="spec is None"):
        clone(a).fit(X, y)
    b = load(path, spec=c_svc)             # the same spec: refittable
    np.testing.assert_allclose(clone(b).fit(X, y).decision_function(X), m.decision_function(X))
    with pytest.raises(ModelFileError, match="not the one"):
        load(path, spec=one_class)
    raw = bytearray(path.read_bytes())
    i = raw.find(b'"task"')
    raw[i + 9] ^= 1
    (tmp_path / "bad.npz").write_bytes(bytes(raw))
    with pytest.raises(ModelFileError):
        load(tmp_path / "bad.npz")


# ----------------------------------------------------------------------------- placeholder specs
@pytest.mark.parametrize("which", ["one-class", "classifier", "regressor"])
def test_check_estimator_on_placeholder_specs(which):
    import pickle
    (oc, f_oc), (svc, f_svc) = placeholder_specs()
    est = {"one-class": lambda: pd.Variant(oc, decision=f_oc, nu=0.2),
           "classifier": lambda: pd.Variant(svc, decision=f_svc, C=1.0),
           "regressor": lambda: pd.Variant(*svr_spec(), task="regression", C=1.0,
                                           epsilon=0.1)}[which]()
    failed = [r for r in check_estimator(est, on_fail=None) if r["status"] == "failed"]
    assert not failed, [(r["check_name"], str(r["exception"])[:300]) for r in failed]
    X, y = _blobs(10, 40)
    fitted = est.fit(X, X[:, 0] if which == "regressor" else y)
    back = pickle.loads(pickle.dumps(fitted))     # the spec pickles (a recorded expression)
    np.testing.assert_array_equal(back.predict(X), fitted.predict(X))
    assert back.derivation_ is not None and back.get_params().keys() == est.get_params().keys()


def test_placeholder_spec_is_derived_once_and_predicts_like_libsvm():
    (oc, f_oc), (svc, f_svc) = placeholder_specs()
    m = pd.Variant(oc, decision=f_oc, gamma=0.5, nu=0.15, tol=1e-6)
    assert sorted(p for p in m.get_params() if p not in pd.Variant(c_svc).get_params()) == ["nu"]
    X = np.random.default_rng(3).normal(size=(120, 2))
    Xt = 1.5 * np.random.default_rng(4).normal(size=(80, 2))
    m.fit(X)
    sk = OneClassSVM(nu=0.15, gamma=0.5, tol=1e-6).fit(X)
    np.testing.assert_allclose(m.decision_function(Xt) * 0.15 * 120, sk.decision_function(Xt),
                               atol=1e-5)
    # one derivation per spec: every fit, clone and grid-search candidate reuses it
    c = clone(m).set_params(nu=0.3).fit(X[:60])
    assert c.derivation_ is m.derivation_ and not c.derivation_.bound
    assert m._task() == "novelty"          # the spec does not use y
    Xc, yc = _blobs(9, 60)
    k = pd.Variant(svc, decision=f_svc, gamma=0.5, C=2.0, tol=1e-6).fit(Xc, yc)
    ref = pd.Variant(c_svc, gamma=0.5, C=2.0, tol=1e-6).fit(Xc, yc)   # the factory form
    np.testing.assert_allclose(k.decision_function(Xt), ref.decision_function(Xt), atol=1e-5)
    assert list(k.classes_) == ["no", "yes"] and k._task() == "classification"


def test_placeholder_spec_model_file(tmp_path):
    (oc, f_oc), _ = placeholder_specs()
    X = np.random.default_rng(5).normal(size=(60, 2))
    m = pd.Variant(oc, decision=f_oc, gamma=0.5, nu=0.2).fit(X)
    save(m, tmp_path / "oc.npz")
    a = load(tmp_path / "oc.npz", spec=oc, decision=f_oc)
    np.testing.assert_array_equal(a.predict(X), m.predict(X))
    assert a.get_params()["nu"] == 0.2 and a._task() == "novelty"
    (other, _), _ = placeholder_specs()    # the same text: the same fingerprint
    load(tmp_path / "oc.npz", spec=other, decision=f_oc)
    with pytest.raises(ModelFileError, match="not the one"):
        load(tmp_path / "oc.npz", spec=placeholder_specs()[1][0])


def linear_svm(X, y, kernel, C):
    """A linear SVM over w in R^d (no kernel expansion): decision x^T w + b."""
    N, d = X.shape
    w, b, xi = Variable("w", d, index="d"), Variable("b"), Variable("xi", N)
    f = Data("X", X) @ w + b
    P = Problem(0.5 * sum_squares(w) + Data("C", C) * vsum(xi),
                [(Data("y", y) * f >= 1 - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                "linear SVM primal")
    return P, f


def ordinal(X, y, kernel, C):
    """Two thresholds on one latent f(x) = <w, phi(x)> (all rows per threshold)."""
    w = FeatureVariable("w", kernel, X)
    b1, b2 = Variable("b1"), Variable("b2")
    xi1, xi2 = Variable("xi1", X.shape[0]), Variable("xi2", X.shape[0])
    s1, s2 = Data("s1", np.where(y >= 1, 1.0, -1.0)), Data("s2", np.where(y >= 2, 1.0, -1.0))
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi1 + xi2),
                [(s1 * (w @ phi(X) - b1) >= 1 - xi1).named("alpha1"),
                 (s2 * (w @ phi(X) - b2) >= 1 - xi2).named("alpha2"),
                 (xi1 >= 0).named("mu1"), (xi2 >= 0).named("mu2")], "min", "ordinal primal")
    return P, [w @ phi(X) - b1, w @ phi(X) - b2]


def test_linear_and_ordinal_variants_round_trip(tmp_path):
    X, y = _blobs(11, 60)
    lin = pd.Variant(linear_svm, kernel="linear", C=1.0).fit(X, y)
    sk = SVC(kernel="linear", C=1.0, tol=1e-8).fit(X, y)
    assert lin.dual_coef_.shape == (1, 0) and lin.linear_coef_.shape == (2, 1)
    np.testing.assert_allclose(lin.linear_coef_[:, 0], sk.coef_[0], atol=1e-4)
    z = X @ np.array([1.0, 0.5])
    yo = np.digitize(z, [-0.5, 0.5]) * 10            # labels 0 < 10 < 20
    o = pd.Variant(ordinal, task="ordinal", kernel="rbf", gamma=0.5, C=1.0).fit(X, yo)
    F = o.decision_function(X)
    assert F.shape == (60, 2) and list(o.classes_) == [0, 10, 20]
    np.testing.assert_array_equal(o.predict(X), o.classes_[(F > 0).sum(axis=1)])
    assert o.score(X, yo) > 0.8
    for m in (lin, o):
        save(m, tmp_path / "m.npz")
        back = load(tmp_path / "m.npz")
        np.testing.assert_array_equal(back.predict(X), m.predict(X))
        np.testing.assert_allclose(back.decision_function(X), m.decision_function(X),
                                   rtol=1e-14, atol=1e-14)


def test_regression_variant_matches_libsvm():
    from sklearn.svm import SVR
    rng = np.random.default_rng(12)
    X = rng.uniform(-3, 3, size=(80, 1))
    yv = np.sinc(X[:, 0]) + 0.05 * rng.normal(size=80)
    m = pd.Variant(*svr_spec(), task="regression", gamma=1.0, C=3.0, epsilon=0.05,
                   tol=1e-6).fit(X, yv)
    sk = SVR(C=3.0, epsilon=0.05, gamma=1.0, tol=1e-6).fit(X, yv)
    Xt = np.linspace(-3, 3, 50)[:, None]
    np.testing.assert_allclose(m.predict(Xt), sk.predict(Xt), atol=1e-4)
    assert not hasattr(m, "decision_function")          # scikit-learn's regressor convention
    assert m.score(Xt, np.sinc(Xt[:, 0])) > 0.95 and m.backend_ == "smo"


def test_a_param_named_like_an_estimator_parameter_is_refused():
    from primaldual.model import N, Param, X
    g = Param("gamma")
    w, xi = FeatureVariable("w"), Variable("xi", N)
    spec = Problem(0.5 * norm2(w) + g * vsum(xi), [(w @ phi(X) >= 1 - xi).named("alpha"),
                                                    (xi >= 0).named("mu")], "min", "p")
    with pytest.raises(ValueError, match="rename the Param"):
        pd.Variant(spec, gamma=0.5)
