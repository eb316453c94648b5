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

def _assert_dual_fit_equals_primal_fit(md, mp, X, kkt_tol):
    """Both fits certified (relative gap <= 1e-6, KKT <= ``kkt_tol``), the same predictor, and
    the dual value (with its constant ``sum_i C_i log C_i``) equal to the primal value."""
    for m in (md, mp):
        assert abs(m.certificate_.relative_gap) <= 1e-6
        assert m.certificate_.max_kkt_residual <= kkt_tol
    np.testing.assert_allclose(md.decision_function(X), mp.decision_function(X), atol=1e-4)
    assert abs(md.certificate_.dual_objective - mp.certificate_.primal_objective) <= \
        1e-6 * abs(mp.certificate_.primal_objective)



@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_klr_primal_equals_dual(seed, kernel):
    X, y = _data(seed)
    md = pd.KernelLogisticRegression(C=1.5, kernel=kernel, gamma=0.5).fit(X, y, backend="cvxpy")
    mp = pd.KernelLogisticRegression(C=1.5, kernel=kernel, gamma=0.5).fit(
        X, y, backend="cvxpy", form="primal")
    _assert_dual_fit_equals_primal_fit(md, mp, X, kkt_tol=1e-6)
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


@pytest.mark.parametrize("seed", [0, 1])
def test_klr_weighted_primal_equals_dual(seed):
    """Weighted KLR, ``C_i = C s_i``: primal ``1/2||w||^2 + sum C_i log(1 + exp(-y_i f_i))`` and
    dual ``-1/2 a^T Q a - sum [a_i log a_i + (C_i - a_i) log(C_i - a_i)] + sum C_i log C_i``,
    ``0 <= a_i <= C_i``: equal optimal values, small KKT residuals, the same predictor; the
    mechanically derived dual (weighted logistic conjugate, ``sum_i C_i H(a_i/C_i)``) agrees."""
    from primaldual.model.dualize import dualize
    X, y = _data(seed, 30)
    sw = np.random.default_rng(seed + 7).uniform(0.3, 3.0, size=len(y))
    kw = {"C": 1.5, "kernel": "rbf", "gamma": 0.5}
    md = pd.KernelLogisticRegression(**kw).fit(X, y, sample_weight=sw, backend="cvxpy")
    mp = pd.KernelLogisticRegression(**kw).fit(X, y, sample_weight=sw, backend="cvxpy",
                                               form="primal")
    _assert_dual_fit_equals_primal_fit(md, mp, X, kkt_tol=1e-5)
    assert np.all((md.alpha_ > 0) & (md.alpha_ < 1.5 * sw))   # interior, per-sample box
    m = pd.KernelLogisticRegression(**kw)
    P, D = m.primal(X, y, sample_weight=sw), m.dual(X, y, sample_weight=sw)
    assert "Σ_i C_i log(1 + exp(-z_i))" in str(P) and "α_i ≤ C_i" in str(D)
    der = dualize(P)
    assert "Σ_i C_i H(α_i/C_i)" in str(der.dual)
    s_mech, s_hand = der.dual.solve(), D.solve()
    assert abs(s_mech.objective_value - s_hand.objective_value) <= \
        1e-6 * abs(s_hand.objective_value)
    assert abs(s_hand.objective_value - mp.certificate_.primal_objective) <= \
        1e-6 * abs(mp.certificate_.primal_objective)
    np.testing.assert_allclose(s_mech.values["alpha"], md.alpha_, atol=1e-4)


def test_klr_integer_weights_equal_repeated_rows():
    """Integer weights equal repeated rows, weight 0 equals a removed row (up to the solver
    tolerance; a numeric gamma, as gamma='scale' reads the unweighted X.var())."""
    X, y = _data(3, 30)
    rng = np.random.default_rng(3)
    sw = rng.integers(0, 4, size=len(y))
    sw[:2] = [2, 0]
    rep = np.repeat(np.arange(len(y)), sw)
    kw = {"C": 0.7, "kernel": "rbf", "gamma": 0.3}
    m = pd.KernelLogisticRegression(**kw).fit(X, y, sample_weight=list(sw))
    r = pd.KernelLogisticRegression(**kw).fit(X[rep], y[rep])
    Xt = rng.normal(size=(15, 3))
    np.testing.assert_allclose(m.decision_function(Xt), r.decision_function(Xt), atol=1e-5)
    np.testing.assert_allclose(m.predict_proba(Xt), r.predict_proba(Xt), atol=1e-5)
    assert abs(m.certificate_.primal_objective - r.certificate_.primal_objective) <= 1e-6
    # a zero-weight row is dropped as LIBSVM does: its multiplier is exactly 0
    assert m.alpha_.shape == (len(y),) and np.all(m.alpha_[sw == 0] == 0)


def test_klr_bad_sample_weight():
    X, y = _data(0, 10)
    m = pd.KernelLogisticRegression()
    for bad in (np.ones(3), np.r_[np.nan, np.ones(9)], np.ones((10, 2))):
        with pytest.raises(ValueError, match="(?i)sample_weight|sample weights|NaN"):
            m.fit(X, y, sample_weight=bad)
    with pytest.raises(ValueError, match="zero"):
        m.fit(X, y, sample_weight=np.zeros(10))
    with pytest.raises(ValueError, match="class"):
        m.fit(X, y, sample_weight=(y > 0).astype(float))
    with pytest.raises(ValueError, match="sample_weight must be finite and >= 0"):
        m.primal(X, y, sample_weight=np.r_[-1.0, np.ones(9)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_klr_dual_newton_polish_recovers_the_optimum(seed):
    """The dual polish (used when an exponential-cone solver stops 'almost solved') takes a
    perturbed interior alpha back to the optimum: same alpha and b as a fit whose certificate
    is exact to round-off, y^T alpha = 0 kept, and stationarity alpha_i = C sigma(-y_i f_i)."""
    from scipy.special import expit

    X, y = _data(seed)
    m = pd.KernelLogisticRegression(C=1.5, kernel="rbf", gamma=0.5).fit(X, y, backend="cvxpy")
    assert m.certificate_.max_kkt_residual <= 1e-9
    data = m._prepare(X, y, None, None)
    rng = np.random.default_rng(seed)
    a0 = m.alpha_ * (1.0 + 1e-2 * rng.uniform(-1.0, 1.0, size=m.alpha_.shape))
    assert np.max(np.abs(a0 - m.alpha_)) > 1e-4           # a real perturbation
    a, b = pd.KernelLogisticRegression._newton_polish_dual(data, a0)
    np.testing.assert_allclose(a, m.alpha_, atol=1e-10)
    assert abs(b - m.b_) <= 1e-9 and abs(data.y @ a) <= 1e-12
    f = data.kmatvec(a * data.y) + b
    np.testing.assert_allclose(a, 1.5 * expit(-data.y * f), atol=1e-10)


def test_one_vs_rest_predict_is_the_argmax_of_the_decision_values_when_sigmoids_saturate():
    """Far from the data every one-vs-rest sigmoid rounds to 1.0 (or 0.0), so predict_proba's
    columns tie; predict must still be the argmax of decision_function (decoding 'argmax')."""
    import warnings

    rng = np.random.default_rng(0)
    X = np.vstack([c + 0.3 * rng.standard_normal((20, 2)) for c in ([0, 0], [3, 0], [0, 3])])
    y = np.repeat([0, 1, 2], 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = pd.KernelLogisticRegression(C=1e3, kernel="linear", multiclass="ovr").fit(X, y)
    Z = np.array([[180.0, 180.0], [240.0, 30.0], [30.0, 240.0], [1.0, 1.0]])
    F = m.decision_function(Z)
    P = m.predict_proba(Z)
    assert np.sum(P[0] == P[0].max()) > 1          # the tie predict must not decide by index
    assert np.array_equal(m.predict(Z), m.classes_[np.argmax(F, axis=1)])
