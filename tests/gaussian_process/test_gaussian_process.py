"""GPClassifier (Laplace) against scikit-learn's GaussianProcessClassifier."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF
from sklearn.gaussian_process.kernels import ConstantKernel as CK

from primaldual.datasets import load_dataset
from primaldual.gaussian_process import GPClassifier


@pytest.fixture(scope="module")
def ripley():
    return load_dataset("ripley", n_samples=80, random_state=1)


@pytest.mark.parametrize("c,ls", [(1.0, 1.0), (4.0, 0.3), (50.0, 0.1)])
def test_fixed_kernel_matches_sklearn(ripley, c, ls):
    X, y = ripley
    Xt, _ = load_dataset("ripley", n_samples=50, random_state=2)
    sk = GaussianProcessClassifier(CK(c) * RBF(ls), optimizer=None).fit(X, y)
    ours = GPClassifier(gamma=1 / (2 * ls**2), amplitude=c, optimizer=None).fit(X, y)
    b = sk.base_estimator_
    np.testing.assert_allclose(ours.f_, b.f_cached, atol=1e-6)
    assert abs(ours.log_marginal_likelihood_value_ - b.log_marginal_likelihood_value_) < 1e-6
    np.testing.assert_allclose(ours.predict_proba(Xt), sk.predict_proba(Xt), atol=1e-6)
    assert np.array_equal(ours.predict(Xt), sk.predict(Xt))
    # gradient (GPML Algorithm 5.1): d/dlog l = -2 d/dlog gamma
    v, g = b.log_marginal_likelihood(np.log([c, ls]), eval_gradient=True)
    v2, g2 = ours.log_marginal_likelihood(np.log([c, 1 / (2 * ls**2)]), eval_gradient=True)
    assert abs(v - v2) < 1e-6
    np.testing.assert_allclose([g2[0], -2 * g2[1]], g, rtol=1e-6, atol=1e-8)


def test_gradient_matches_finite_differences_laplacian(ripley):
    X, y = ripley
    m = GPClassifier(kernel="laplacian", gamma=2.0, amplitude=3.0, optimizer=None).fit(X, y)
    th = m.theta_.copy()
    _, g = m.log_marginal_likelihood(th, eval_gradient=True)
    h = 1e-5
    fd = [(m.log_marginal_likelihood(th + h * e) - m.log_marginal_likelihood(th - h * e)) / (2 * h)
          for e in np.eye(len(th))]
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-6)


def test_optimised_likelihood_at_least_sklearn(ripley):
    X, y = ripley
    sk = GaussianProcessClassifier(CK(1.0) * RBF(1.0)).fit(X, y)
    ours = GPClassifier().fit(X, y)
    lml_sk = sk.log_marginal_likelihood_value_
    assert ours.log_marginal_likelihood_value_ >= lml_sk - 1e-6 * abs(lml_sk)
    # the reported value is the likelihood at the reported hyper-parameters
    assert ours.log_marginal_likelihood(ours.theta_) == pytest.approx(
        ours.log_marginal_likelihood_value_, abs=1e-9)


def test_multiclass_one_vs_rest_matches_sklearn():
    X, y = load_dataset("iris")
    X, y = X[::2], y[::2]
    sk = GaussianProcessClassifier(CK(1.0) * RBF(1.0), optimizer=None).fit(X, y)
    ours = GPClassifier(optimizer=None).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-6)
    assert abs(ours.log_marginal_likelihood_value_ - sk.log_marginal_likelihood_value_) < 1e-6
    assert np.array_equal(ours.predict(X), sk.predict(X))
    assert ours.decision_function(X).shape == (len(X), 3)


def test_string_labels_and_errors(ripley):
    X, y = ripley
    labels = np.where(y > 0, "pos", "neg")
    m = GPClassifier(optimizer=None).fit(X, labels)
    assert set(m.predict(X)) <= {"pos", "neg"}
    assert np.all((m.decision_function(X) > 0) == (m.predict(X) == "pos"))
    # decision_function is the moderated output: logit of predict_proba, same sign as f_*
    p = m.predict_proba(X)[:, 1]
    np.testing.assert_allclose(m.decision_function(X), np.log(p / (1 - p)), rtol=1e-10)
    assert np.all(np.sign(m.latent_mean_and_variance(X)[0]) == np.sign(m.decision_function(X)))
    with pytest.raises(ValueError, match="optimizer"):
        GPClassifier(optimizer="bfgs").fit(X, y)
    with pytest.raises(ValueError, match="amplitude"):
        GPClassifier(amplitude=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="gamma_bounds"):
        GPClassifier(gamma_bounds=(2.0, 1.0)).fit(X, y)
    with pytest.raises(ValueError, match="2 classes"):
        GPClassifier().fit(X, np.ones(len(X)))
