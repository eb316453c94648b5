"""Relevance vector machine: the fast sequential algorithm against a dense exact evidence."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
from threadpoolctl import threadpool_limits

from primaldual.datasets import load_dataset
from primaldual.exceptions import ConvergenceWarning
from primaldual.rvm import RVC, RVR, rvr_log_evidence

INF_LOG = 30.0  # log alpha at the upper bound of the dense reference: the column is pruned


def _sinc(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-10, 10, (n, 1))
    return X, np.sinc(X[:, 0] / np.pi) + 0.1 * rng.normal(size=n)


def _dense_optimum(P, t, z0):
    """Maximise the dense evidence over (log alpha, log beta) with L-BFGS-B."""
    def obj(z):
        v, g = rvr_log_evidence(P, t, np.exp(z[:-1]), np.exp(z[-1]), eval_gradient=True)
        return -v, -g

    M = P.shape[1]
    with threadpool_limits(1, user_api="blas"):  # 30 x 30 products: threads only cost
        res = scipy.optimize.minimize(obj, z0, jac=True, method="L-BFGS-B",
                                      bounds=[(-20, INF_LOG)] * M + [(-20, 20)],
                                      options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10})
    return -res.fun, np.flatnonzero(res.x[:-1] < 15), np.exp(res.x[-1])


# seeds on which scipy from its generic start reaches the same local maximum as the fast
# algorithm (see the next test for seeds 0-9; it checks the fast optimum is a local maximum
# where the two differ)
@pytest.mark.parametrize("seed", [5, 7])
def test_fast_algorithm_agrees_with_dense_scipy_optimum(seed):
    X, t = _sinc(30, seed)
    m = RVR(gamma=1 / 9, tol=1e-8).fit(X, t)
    assert m.converged_ and m.optimality_ < 1e-6
    P = m._design(X)
    alpha = np.full(P.shape[1], np.inf)
    alpha[m.active_] = m.alpha_
    L_fast = rvr_log_evidence(P, t, alpha, m.beta_)
    assert L_fast == pytest.approx(m.log_marginal_likelihood_value_, abs=1e-8)
    # scipy from the generic start (all alpha = 1, sigma^2 = 0.1 var t) finds the same optimum
    z0 = np.append(np.zeros(P.shape[1]), np.log(10 / np.var(t)))
    L_ref, act_ref, beta_ref = _dense_optimum(P, t, z0)
    assert L_fast >= L_ref - 1e-7
    assert L_fast == pytest.approx(L_ref, abs=1e-6)
    assert np.array_equal(act_ref, m.active_)
    assert beta_ref == pytest.approx(m.beta_, rel=1e-4)


@pytest.mark.parametrize("seed", [0, 2])
def test_fast_optimum_is_a_local_maximum_of_the_dense_evidence(seed):
    # the evidence has several local maxima (on seeds 0-9 scipy from the generic start reaches
    # the fast optimum on 5, 7, 9, a lower maximum on 3, 4, 6, a higher one by 0.06-0.51 nat on
    # 0, 1, 2, e.g. on these seeds; on 8 the dense reference's Cholesky fails): scipy started
    # at the fast optimum cannot improve it and keeps the same vectors
    X, t = _sinc(30, seed)
    m = RVR(gamma=1 / 9, tol=1e-8).fit(X, t)
    P = m._design(X)
    z0 = np.full(P.shape[1], INF_LOG)
    z0[m.active_] = np.log(m.alpha_)
    L_ref, act_ref, _ = _dense_optimum(P, t, np.append(z0, np.log(m.beta_)))
    assert L_ref <= m.log_marginal_likelihood_value_ + 1e-7
    assert np.array_equal(act_ref, m.active_)


def test_posterior_and_predictive_variance_match_dense_formulas():
    X, t = _sinc(40, 5)
    m = RVR(gamma=1 / 9).fit(X, t)
    Pa = m._design(X, m.active_)
    Sigma = np.linalg.inv(np.diag(m.alpha_) + m.beta_ * Pa.T @ Pa)
    np.testing.assert_allclose(m.sigma_, Sigma, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(m.mu_, m.beta_ * Sigma @ Pa.T @ t, rtol=1e-8, atol=1e-12)
    Xt = np.linspace(-10, 10, 7).reshape(-1, 1)
    mean, std = m.predict(Xt, return_std=True)
    Pt = m._design(Xt, m.active_)
    np.testing.assert_allclose(mean, Pt @ m.mu_)
    np.testing.assert_allclose(std**2, 1 / m.beta_ + np.einsum("ij,jk,ik->i", Pt, Sigma, Pt))
    np.testing.assert_array_equal(m.relevance_vectors_, X[m.relevance_])
    assert m.n_relevance_vectors_ < 10


def test_rvc_on_ripley_sparser_than_csvc_with_same_error():
    import primaldual as pd

    X, y = load_dataset("ripley", n_samples=250, random_state=0)
    Xt, yt = load_dataset("ripley", n_samples=1000, random_state=1)
    rvc = RVC(gamma=2.0).fit(X, y)
    svc = pd.CSVC(C=0.3, kernel="rbf", gamma=2.0).fit(X, y)  # 5-fold CV choice (example)
    err_rvc, err_svc = 1 - rvc.score(Xt, yt), 1 - svc.score(Xt, yt)
    assert abs(err_rvc - err_svc) <= 0.01
    assert rvc.n_relevance_vectors_ < len(svc.support_) / 5
    assert rvc.converged_ and rvc.optimality_ < 1e-4
    # Laplace mode: Phi^T (t - sigma(Phi mu)) = A mu
    Pa = rvc._design(X, rvc.active_)
    t = (y == rvc.classes_[1]).astype(float)
    p = 1 / (1 + np.exp(-Pa @ rvc.mu_))
    np.testing.assert_allclose(Pa.T @ (t - p), rvc.alpha_ * rvc.mu_, atol=1e-6)
    proba = rvc.predict_proba(Xt)
    assert np.array_equal(rvc.predict(Xt), rvc.classes_[(proba[:, 1] > 0.5).astype(int)])


def test_errors_and_string_labels():
    X, y = load_dataset("ripley", n_samples=60, random_state=0)
    m = RVC(gamma=2.0).fit(X, np.where(y > 0, "b", "a"))
    assert set(m.predict(X)) <= {"a", "b"}
    with pytest.raises(ValueError, match="2 classes"):
        RVC().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="max_iter"):
        RVR(max_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="tol"):
        RVR(tol=-1.0).fit(X, y)
    with pytest.raises(TypeError, match="bias"):
        RVR(bias="yes").fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        short = RVR(max_iter=3).fit(X, y.astype(float))
    assert not short.converged_
    nb = RVR(bias=False).fit(X, y.astype(float))
    assert nb.intercept_ == 0.0 and np.all(nb.active_ < len(X))


def test_rvc_one_vs_rest_on_iris():
    X, y = load_dataset("iris")
    m = RVC(gamma=0.5).fit(X[::2], y[::2])
    assert len(m.estimators_) == 3 and m.decision_function(X).shape == (len(X), 3)
    P = m.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.array_equal(m.predict(X), m.classes_[P.argmax(axis=1)])
    assert m.score(X[1::2], y[1::2]) > 0.85
    assert m.n_relevance_vectors_ < 20
