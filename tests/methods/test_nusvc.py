"""nu-SVC: primal vs dual, scikit-learn, the nu-property and the C-SVC scaling identity."""

import numpy as np
import pytest
from sklearn.svm import SVC

import primaldual as pd


def _data(seed, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] - 0.4 * X[:, 1] + 0.25 * rng.normal(size=n) > 0, 1, -1)
    return X, y


_KNOWN = pytest.mark.xfail(
    reason="rho and b are not unique on these degenerate linear data: both forms certify a gap "
           "~1e-14 with rho differing by ~1%, so equal rho cannot be required",
    strict=False)


@pytest.mark.parametrize("seed,kernel", [
    (0, "rbf"), (1, "rbf"),
    (2, "rbf"), pytest.param(0, "linear", marks=_KNOWN),
    pytest.param(1, "linear", marks=_KNOWN), pytest.param(2, "linear", marks=_KNOWN)])
def test_nusvc_primal_dual_sklearn(seed, kernel):
    X, y = _data(seed)
    nu = 0.2
    md = pd.NuSVC(nu=nu, kernel=kernel, gamma=0.5).fit(X, y, backend="cvxpy")
    mp = pd.NuSVC(nu=nu, kernel=kernel, gamma=0.5).fit(X, y, backend="cvxpy", form="primal")
    for m in (md, mp):
        assert abs(m.certificate_.relative_gap) <= 1e-6
        assert m.certificate_.max_kkt_residual <= 1e-6
    np.testing.assert_allclose(md.decision_function(X), mp.decision_function(X), atol=1e-4)
    assert md.rho_ > 1e-4  # non-degenerate (nu small enough that w != 0)
    # the 1/N box makes the objective O(rho^2): interior-point absolute tolerances give ~1e-3
    # relative accuracy on rho (LIBSVM scales alpha by N for this reason)
    assert abs(md.rho_ - mp.rho_) <= 2e-3 * md.rho_
    # r1/r2 rule agrees with the exact multipliers
    data = md._prepare(X, y)
    b, rho = md._bias_rho(data, md.alpha_)
    assert abs(b - md.b_) <= 2e-3 * md.rho_ and abs(rho - md.rho_) <= 2e-3 * md.rho_
    # scaled by 1/rho it is LIBSVM's C-SVC with C = 1/(N rho) (LIBSVM's own nu-SVC stops at a
    # visibly different point on degenerate linear cases, so the C-SVC is the reference)
    ref = SVC(C=1.0 / (len(y) * md.rho_), kernel=kernel, gamma=0.5, tol=1e-10).fit(X, y)
    # decision_function is LIBSVM's (alpha, b) / rho
    np.testing.assert_allclose(md.decision_function(X), ref.decision_function(X),
                               atol=1e-3 * max(1.0, np.abs(ref.decision_function(X)).max()))
    # nu bounds margin errors from above and SVs from below
    N = len(y)
    yy = np.where(y == md.classes_[1], 1.0, -1.0)
    margin_err = np.sum(yy * md.decision_function(X) * md.rho_ < md.rho_ - 1e-6)
    assert margin_err / N <= nu + 1e-9
    assert len(md.support_) / N >= nu - 1e-9


@pytest.mark.parametrize("seed", [0, 3])
def test_nusvc_scaled_equals_csvc(seed):
    X, y = _data(seed)
    m = pd.NuSVC(nu=0.3, kernel="rbf", gamma=0.5).fit(X, y, backend="cvxpy")
    C = 1.0 / (len(y) * m.rho_)
    c = pd.CSVC(C=C, kernel="rbf", gamma=0.5).fit(X, y, backend="cvxpy")
    np.testing.assert_allclose(m.alpha_ / m.rho_, c.alpha_, atol=1e-5 * max(1.0, C))
    assert abs(m.b_ / m.rho_ - c.b_) <= 1e-4
    assert abs(m.intercept_[0] - c.intercept_[0]) <= 1e-4  # intercept_ is LIBSVM's b / rho


def test_nusvc_bad_nu():
    X, y = _data(0, 20)
    with pytest.raises(ValueError, match="nu"):
        pd.NuSVC(nu=1.5).fit(X, y, backend="cvxpy")
    with pytest.raises(TypeError, match="nu"):
        pd.NuSVC(nu="a").dual(X, y)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nusvc_degenerate_linear_both_forms_optimal(seed):
    """Where rho/b are not unique, both forms are certified optimal with the same value."""
    X, y = _data(seed)
    md = pd.NuSVC(nu=0.2, kernel="linear").fit(X, y, backend="cvxpy")
    mp = pd.NuSVC(nu=0.2, kernel="linear").fit(X, y, backend="cvxpy", form="primal")
    for m in (md, mp):
        assert abs(m.certificate_.relative_gap) <= 1e-8  # relative to |P| ~ 6e-5 (the 1/N box)
        assert m.certificate_.max_kkt_residual <= 1e-8
    P = md.certificate_.primal_objective
    assert mp.certificate_.primal_objective == pytest.approx(P, rel=1e-6)
    np.testing.assert_allclose(md.beta_, mp.beta_, atol=1e-6 * len(y))
