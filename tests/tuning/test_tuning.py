"""Tuning: scikit-learn's model selection unchanged, Suykens' shrinking grid, closed-form LOO /
GCV of the LS-SVM family against brute-force refits, warm-started C paths."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV, LeaveOneOut, cross_val_score

import primaldual as pd
from primaldual.tuning import c_path, lssvm_gcv, lssvm_loo, lssvm_select, shrinking_grid_search


def _f(m, X):
    """``f(x)``: ``decision_function`` of a classifier, ``predict`` of a regressor (which has
    no ``decision_function``, as in scikit-learn)."""
    return m.decision_function(X) if hasattr(m, "decision_function") else m.predict(X)


def _clf(seed, n=40):
    X, y = make_classification(n_samples=n, n_features=4, n_informative=3, n_redundant=0,
                               random_state=seed)
    return X, y


def _reg(seed, n=40):
    X, y = make_regression(n_samples=n, n_features=3, noise=5.0, random_state=seed)
    return X, y / np.std(y)


def test_gridsearch_and_cross_val_score_unchanged():
    X, y = _clf(0)
    gs = GridSearchCV(pd.CSVC(), {"C": [0.1, 10.0], "gamma": [0.1, 1.0]}, cv=3).fit(X, y)
    assert gs.best_estimator_.certificate_ is not None and 0.5 < gs.best_score_ <= 1.0
    s = cross_val_score(pd.LSSVC(C=1.0, gamma=0.2), X, y, cv=4)
    assert s.shape == (4,) and np.all(s > 0.5)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", ["LSSVC", "LSSVR", "KernelRidge"])
def test_closed_form_loo_equals_refits(name, seed):
    X, y = _clf(seed, 25) if name == "LSSVC" else _reg(seed, 25)
    est = getattr(pd, name)(C=3.0, gamma=0.3)
    res = lssvm_loo(est, X, y)
    f_ref = np.empty(len(y))
    for tr, te in LeaveOneOut().split(X):
        f_ref[te] = _f(est.fit(X[tr], y[tr]), X[te])
    np.testing.assert_allclose(res["f_loo"], f_ref, atol=1e-7)
    if name == "LSSVC":
        yp = np.where(y == np.unique(y)[1], 1.0, -1.0)
        assert res["score"] == pytest.approx(np.mean(yp * f_ref > 0))


@pytest.mark.parametrize("seed", [0, 1])
def test_gcv_matches_hat_matrix(seed):
    X, y = _reg(seed, 30)
    C, g = 2.0, 0.4
    gcv = lssvm_gcv(pd.KernelRidge(C=C, gamma=g), X, y)
    K = np.exp(-g * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    S = K @ np.linalg.inv(K + np.eye(len(y)) / C)  # kernel ridge hat matrix (no bias)
    r = y - S @ y
    ref = len(y) * (r @ r) / np.trace(np.eye(len(y)) - S) ** 2
    assert gcv == pytest.approx(ref, rel=1e-8)


def test_lssvm_select_and_bad_input():
    X, y = _clf(3, 40)
    out = lssvm_select(pd.LSSVC(), X, y, [0.1, 1.0, 10.0], [0.05, 0.5], criterion="loo")
    i, j = np.unravel_index(np.argmax(out["scores"]), out["scores"].shape)
    assert out["best_params"] == {"C": out["C_grid"][i], "gamma": out["gamma_grid"][j]}
    with pytest.raises(ValueError, match="criterion"):
        lssvm_select(pd.LSSVC(), X, y, [1.0], [1.0], criterion="aic")
    with pytest.raises(TypeError, match="LS-SVM"):
        lssvm_loo(pd.CSVC(), X, y)


def test_shrinking_grid_search_refines_around_best():
    X, y = _clf(4, 60)
    res = shrinking_grid_search(pd.LSSVC(), X, y, C_grid=np.logspace(-1, 3, 3),
                                sigma_grid=np.logspace(-0.5, 1.5, 3), i_max=3, cv=5,
                                verbose=True)
    assert len(res.history) == 3 and res.n_fits == 3 * 9 * 5
    for k in range(1, 3):  # each round's grid is centred on the best so far and narrower
        Cs, ss, _ = res.history[k]
        Cp, sp, _ = res.history[k - 1]
        assert np.log(Cs[-1] / Cs[0]) == pytest.approx(0.5 * np.log(Cp[-1] / Cp[0]))
    best_hist = max(float(h[2].max()) for h in res.history)
    assert res.best_score_ == pytest.approx(best_hist)
    assert res.best_params_["gamma"] == pytest.approx(1.0 / res.best_params_["sigma"] ** 2)
    with pytest.raises(ValueError, match="i_max"):
        shrinking_grid_search(pd.LSSVC(), X, y, i_max=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_warm_started_c_path_equals_cold_fits(seed):
    X, y = _clf(seed, 80)
    Cs = np.geomspace(0.1, 10.0, 9)  # neighbouring C's: the scaled start is close (~10% fewer)
    warm = c_path(pd.CSVC(gamma=0.5, tol=1e-6), X, y, Cs)
    cold = c_path(pd.CSVC(gamma=0.5, tol=1e-6), X, y, Cs, warm_start=False)
    for w, c in zip(warm, cold, strict=True):
        np.testing.assert_allclose(w.decision_function(X), c.decision_function(X), atol=1e-4)
    assert sum(w.n_iter_ for w in warm[1:]) < sum(c.n_iter_ for c in cold[1:])
