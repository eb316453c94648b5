"""epsilon-SVR and nu-SVR: primal vs dual, scikit-learn, complementarity identities."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.svm import SVR, NuSVR

import primaldual as pd
from primaldual.model.structure import box_qp_of


def _data(seed, n=40):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


def _check_pair(md, mp, X):
    for m in (md, mp):
        assert abs(m.certificate_.relative_gap) <= 1e-6
        assert m.certificate_.max_kkt_residual <= 1e-6
    np.testing.assert_allclose(md.predict(X), mp.predict(X), atol=1e-4)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_epsilon_svr(seed, kernel):
    X, y = _data(seed)
    kw = dict(C=2.0, epsilon=0.15, kernel=kernel, gamma=0.5)
    md = pd.EpsilonSVR(**kw).fit(X, y, backend="cvxpy")
    mp = pd.EpsilonSVR(**kw).fit(X, y, backend="cvxpy", form="primal")
    _check_pair(md, mp, X)
    ref = SVR(tol=1e-8, **kw).fit(X, y)
    np.testing.assert_allclose(md.predict(X), ref.predict(X), atol=1e-4)
    a, a_s = md.alpha_, md.alpha_star_
    tol = 1e-6 * 2.0
    assert np.all(np.minimum(a, a_s) <= tol)            # never both non-zero
    r = np.abs(y - md.predict(X))
    inside = r < 0.15 - 1e-5
    assert np.all((a[inside] <= tol) & (a_s[inside] <= tol))  # strictly inside: not SVs
    np.testing.assert_allclose(md.beta_, a - a_s)
    # the +-eps averaging rule reproduces the exact multiplier b
    assert abs(md._bias(md._prepare(X, y), a, a_s) - md.intercept_) <= 1e-5


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_nu_svr(seed, kernel):
    X, y = _data(seed)
    N = len(y)
    md = pd.NuSVR(nu=0.4, C=2.0, kernel=kernel, gamma=0.5).fit(X, y, backend="cvxpy")
    mp = pd.NuSVR(nu=0.4, C=2.0, kernel=kernel, gamma=0.5).fit(X, y, backend="cvxpy",
                                                                   form="primal")
    for m in (md, mp):
        assert abs(m.certificate_.relative_gap) <= 1e-6
        assert m.certificate_.max_kkt_residual <= 1e-6
    # w is unique; (b, eps) can be an interval when a side has no free SV (linear cases here)
    np.testing.assert_allclose(md.predict(X) - md.intercept_, mp.predict(X) - mp.intercept_,
                               atol=1e-4)
    assert abs(md.intercept_ - mp.intercept_) <= 1e-2
    assert abs(md.epsilon_ - mp.epsilon_) <= 1e-2
    # at its optimum nu-SVR is epsilon-SVR with eps = epsilon_ and the same C (LIBSVM as reference)
    # (w is unique; b may be an interval at that eps when LIBSVM finds no free SV, so b loosely)
    ref = SVR(C=2.0, epsilon=md.epsilon_, kernel=kernel, gamma=0.5, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(md.predict(X) - md.intercept_, ref.predict(X) - ref.intercept_[0],
                               atol=1e-4)
    assert abs(md.intercept_ - ref.intercept_[0]) <= 1e-2
    if kernel == "rbf":  # LIBSVM's nu-SVR, same C convention
        ref = NuSVR(nu=0.4, C=2.0, kernel=kernel, gamma=0.5, tol=1e-8).fit(X, y)
        np.testing.assert_allclose(md.predict(X), ref.predict(X), atol=1e-3)
    # (b, eps) lie in an interval when a side has no free SV: the rule picks its midpoint
    b, eps = md._bias_eps(md._prepare(X, y), md.alpha_, md.alpha_star_)
    assert abs(b - md.intercept_) <= 1e-3 and abs(eps - md.epsilon_) <= 1e-3
    # nu bounds the fraction outside the tube (above) and of SVs (below)
    out = np.sum(np.abs(y - md.predict(X)) > md.epsilon_ + 1e-6)
    assert out / N <= 0.4 + 1e-9 and len(md.support_) / N >= 0.4 - 1e-9


def test_svr_dual_structure():
    X, y = _data(0, 10)
    box = box_qp_of(pd.EpsilonSVR(C=1.0, epsilon=0.2, kernel="linear").dual(X, y))
    K = X @ X.T
    np.testing.assert_allclose(box.Q.dense(), np.block([[K, -K], [-K, K]]))
    np.testing.assert_allclose(box.p, np.r_[0.2 - y, 0.2 + y])
    assert box.variables == ("alpha", "alpha_star")


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_svr_weak_duality(seed):
    rng = np.random.default_rng(seed)
    X, y = _data(seed % 53, 10)
    m = pd.EpsilonSVR(C=1.0, epsilon=0.1, kernel="rbf", gamma=0.5)
    P, D = m.primal(X, y), m.dual(X, y)
    a, a_s = rng.uniform(0, 1, 10), rng.uniform(0, 1, 10)
    a_s *= a.sum() / a_s.sum()
    if a_s.max() > 1:
        s = 1 / a_s.max()
        a, a_s = a * s, a_s * s
    dual_pt = {"alpha": a, "alpha_star": a_s, "beta": a - a_s}
    assert D.infeasibility(dual_pt) <= 1e-12
    beta, b = rng.normal(size=10), rng.normal()
    f = m._prepare(X, y).gram() @ beta + b
    pt = {"w": beta, "b": b, "xi": np.maximum(0, y - f - 0.1),
          "xi_star": np.maximum(0, f - y - 0.1)}
    assert D.evaluate(dual_pt) <= P.evaluate(pt) + 1e-9
