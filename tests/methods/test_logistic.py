"""Kernel logistic regression: primal vs entropy dual (zero gap), scikit-learn, probabilities."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import primaldual as pd


def _data(seed, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 2] + 0.8 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_klr_primal_equals_dual(seed, kernel):
    X, y = _data(seed)
    md = pd.KernelLogisticRegression(C=1.5, kernel=kernel, gamma=0.5).fit(X, y, backend="cvxpy")
    mp = pd.KernelLogisticRegression(C=1.5, kernel=kernel, gamma=0.5).fit(
        X, y, backend="cvxpy", form="primal")
    for m in (md, mp):
        assert abs(m.certificate_.relative_gap) <= 1e-6
        assert m.certificate_.max_kkt_residual <= 1e-6
    np.testing.assert_allclose(md.decision_function(X), mp.decision_function(X), atol=1e-4)
    # the dual value (with the N C log C constant) equals the primal value
    assert abs(md.certificate_.dual_objective - mp.certificate_.primal_objective) <= \
        1e-6 * abs(mp.certificate_.primal_objective)
    assert np.all((md.alpha_ > 0) & (md.alpha_ < 1.5))   # interior optimum


@pytest.mark.parametrize("seed", [0, 1])
def test_klr_linear_matches_sklearn(seed):
    """sklearn's objective C sum log-loss + 1/2||w||^2 with unpenalised intercept is ours."""
    X, y = _data(seed)
    m = pd.KernelLogisticRegression(C=0.8, kernel="linear").fit(X, y, backend="cvxpy")
    ref = LogisticRegression(C=0.8, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(m.coef_.ravel(), ref.coef_.ravel(), atol=1e-5)
    assert abs(m.intercept_ - ref.intercept_[0]) <= 1e-5
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(np.exp(m.predict_log_proba(X)), m.predict_proba(X), atol=1e-12)


def test_klr_sample_weight_rejected():
    X, y = _data(0, 10)
    with pytest.raises(ValueError, match="sample_weight"):
        pd.KernelLogisticRegression().fit(X, y, sample_weight=np.ones(10), backend="cvxpy")
