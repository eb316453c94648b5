"""C-SVC (weights, Amini examples) and L2-SVC: primal vs dual, identities, scikit-learn."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.svm import SVC

import primaldual as pd
from primaldual.model.structure import box_qp_of

SEEDS = [0, 1, 2]


def _data(seed, n=40, d=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.6 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_l2svc_primal_equals_dual(seed, kernel):
    X, y = _data(seed)
    md = pd.L2SVC(C=0.7, kernel=kernel, gamma=0.5).fit(X, y, backend="cvxpy", form="dual")
    mp = pd.L2SVC(C=0.7, kernel=kernel, gamma=0.5).fit(X, y, backend="cvxpy", form="primal")
    for m in (md, mp):
        assert abs(m.certificate_.relative_gap) <= 1e-6
        assert m.certificate_.max_kkt_residual <= 1e-6
    Pd, Pp = md.certificate_.primal_objective, mp.certificate_.primal_objective
    assert abs(Pd - Pp) <= 1e-6 * max(1, abs(Pp))
    np.testing.assert_allclose(md.decision_function(X), mp.decision_function(X), atol=1e-4)
    # xi = alpha / C, read off the primal solution independently
    xi_primal = mp.solution_.values["xi"]
    np.testing.assert_allclose(xi_primal, md.alpha_ / 0.7, atol=1e-5)


def test_l2svc_dual_structure():
    X, y = _data(0, 20)
    D = pd.L2SVC(C=2.0, kernel="linear").dual(X, y)
    box = box_qp_of(D)      # derived from the problem itself
    assert np.all(np.isinf(box.C))
    K = X @ X.T
    yy = np.where(y == 1, 1.0, -1.0)
    np.testing.assert_allclose(box.Q.dense(), yy[:, None] * K * yy[None, :] + np.eye(20) / 2.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_csvc_class_and_sample_weights_match_sklearn(seed):
    X, y = _data(seed)
    rng = np.random.default_rng(seed + 10)
    sw = rng.uniform(0.5, 2.0, size=y.shape[0])
    cw = {-1: 0.6, 1: 1.7}
    ours = pd.CSVC(C=1.3, kernel="rbf", gamma=0.5, class_weight=cw).fit(
        X, y, sample_weight=sw, backend="cvxpy")
    ref = SVC(C=1.3, kernel="rbf", gamma=0.5, class_weight=cw, tol=1e-8).fit(
        X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-4)
    # the bound alpha_i <= C_i uses the combined weight
    Ci = 1.3 * sw * np.where(y == 1, 1.7, 0.6)
    assert np.all(ours.alpha_ <= Ci + 1e-8)
    mp = pd.CSVC(C=1.3, kernel="rbf", gamma=0.5, class_weight=cw).fit(
        X, y, sample_weight=sw, backend="cvxpy", form="primal")
    assert abs(mp.certificate_.relative_gap) <= 1e-6
    np.testing.assert_allclose(mp.decision_function(X), ref.decision_function(X), atol=1e-4)


# Amini lecture, "Samples of SVM" (printed data rounded to 2 decimals, results to 4)
AMINI_X = np.array([[2.16, 2.94], [2.95, 1.89], [3.09, 2.77], [1.17, 0.92], [-0.97, 0.98],
                    [-0.85, -1.21]])
AMINI = [  # (model, y, printed alpha, printed w0)
    (lambda: pd.HardMarginSVC(kernel="linear"), [1, 1, 1, -1, -1, -1],
     [0.1105, 0.3898, 0.0, 0.5003, 0.0, 0.0], None),
    (lambda: pd.CSVC(C=10.0, kernel="linear"), [1, 1, -1, -1, -1, -1],
     [5.5408, 8.1495, 10.0, 3.6904, 0.0, 0.0], None),
]


def _fit_alpha_b(make, X, y):
    m = make().fit(X, y, backend="cvxpy")
    return np.r_[m.alpha_, m.intercept_]


@pytest.mark.parametrize("case", range(len(AMINI)))
def test_amini_examples(case):
    """Our alpha agrees with the printed one within the first-order effect of rounding the
    printed X to 2 decimals (|dX| <= 0.005) plus the printing precision of alpha."""
    make, y, alpha_printed, _ = AMINI[case]
    y = np.array(y)
    base = _fit_alpha_b(make, AMINI_X, y)
    h = 1e-4
    sens = np.zeros_like(base)
    for i in range(AMINI_X.shape[0]):
        for j in range(AMINI_X.shape[1]):
            Xp = AMINI_X.copy()
            Xp[i, j] += h
            sens += np.abs(_fit_alpha_b(make, Xp, y) - base) / h
    bound = 0.005 * sens + 5e-5 + 1e-6
    err = np.abs(base[:-1] - np.array(alpha_printed))
    assert np.all(err <= bound[:-1]), (err, bound)
    # same sign pattern: the printed support vectors are ours
    np.testing.assert_array_equal(base[:-1] > 1e-6, np.array(alpha_printed) > 0)


def test_amini_hard_margin_w0():
    """The printed w0 = -2.4943 of the hard-margin example, within rounding sensitivity."""
    y = np.array([1, 1, 1, -1, -1, -1])
    make = AMINI[0][0]
    base = _fit_alpha_b(make, AMINI_X, y)
    h = 1e-4
    sens = 0.0
    for i in range(6):
        for j in range(2):
            Xp = AMINI_X.copy()
            Xp[i, j] += h
            sens += abs(_fit_alpha_b(make, Xp, y)[-1] - base[-1]) / h
    assert abs(base[-1] - (-2.4943)) <= 0.005 * sens + 5e-5


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_l2svc_weak_duality(seed):
    rng = np.random.default_rng(seed)
    X, y = _data(seed % 97, 12)
    m = pd.L2SVC(C=0.5, kernel="rbf", gamma=0.7)
    P, D = m.primal(X, y), m.dual(X, y)
    yy = np.where(y == 1, 1.0, -1.0)
    a = rng.uniform(0, 2, size=12)
    pos, neg = a[yy > 0].sum(), a[yy < 0].sum()
    a[yy > 0] *= min(pos, neg) / pos
    a[yy < 0] *= min(pos, neg) / neg
    beta, b = rng.normal(size=12), rng.normal()
    K = m._prepare(X, y).gram()
    xi = np.maximum(0.0, 1 - yy * (K @ beta + b))
    assert D.infeasibility({"alpha": a}) <= 1e-12
    assert D.evaluate({"alpha": a}) <= P.evaluate({"w": beta, "b": b, "xi": xi}) + 1e-9
