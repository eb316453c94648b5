"""GPClassifier round-trips through the safe format bit for bit (probabilities, decision
values, the evidence and its gradient in theta), binary and one-vs-rest, and a forged file
is refused."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual as pd
from primaldual.exceptions import ModelFileError
from primaldual.persistence import load, save
from tests.persistence.forge_file import refile


def _data(n_classes):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    labels = np.array(["ab", "cd", "ef"])[:n_classes]
    y = labels[np.argmax(X @ rng.standard_normal((2, n_classes))
                         + 0.3 * rng.standard_normal((40, n_classes)), axis=1)]
    return X, y, 2.0 * rng.standard_normal((20, 2))


def _fit(n_classes=2, **kw):
    X, y, _ = _data(n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.GPClassifier(**kw).fit(X, y)


@pytest.mark.parametrize("kw", [{}, {"optimizer": None}, {"kernel": "poly", "degree": 2},
                                {"max_iter_predict": 1}],
                         ids=["rbf-search", "fixed", "poly", "cut-off"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_gp_round_trips_bit_for_bit(tmp_path, n_classes, kw):
    X, _, Q = _data(n_classes)
    m = _fit(n_classes, **kw)
    save(m, tmp_path / "g.npz", key="k")
    m2 = load(tmp_path / "g.npz", key="k")
    for rows in (X, Q):
        assert np.array_equal(m.predict_proba(rows), m2.predict_proba(rows))
        assert np.array_equal(m.decision_function(rows), m2.decision_function(rows))
        assert np.array_equal(m.predict(rows), m2.predict(rows))
    assert (m2.converged_, m2.status_) == (m.converged_, m.status_)
    assert m2.log_marginal_likelihood_value_ == m.log_marginal_likelihood_value_
    assert np.array_equal(m.classes_, m2.classes_) and m.classes_.dtype == m2.classes_.dtype
    if n_classes == 2 and m.theta_.size:
        a = m.log_marginal_likelihood(m.theta_ + 0.1, eval_gradient=True)
        b = m2.log_marginal_likelihood(m.theta_ + 0.1, eval_gradient=True)
        assert a[0] == b[0] and np.array_equal(a[1], b[1])


def _forge(tmp_path, edit_meta=None, edit_arrays=None, n_classes=2):
    save(_fit(n_classes), tmp_path / "g.npz")
    return refile(tmp_path / "g.npz", tmp_path / "forged.npz", edit_meta, edit_arrays)


def _set(key, value):
    def edit(a):
        a[key] = value(a[key])
    return edit


def _unit(**kv):
    def edit(m):
        m["units"][0].update(kv)
    return edit


def _upper(L):
    L = L.copy()
    L[0, -1] = 1.0
    return L


@pytest.mark.parametrize("edit_meta, edit_arrays, match", [
    (None, None, None),
    (lambda m: m.update(classes=["ab", "ab"]), None, "classes are not unique"),
    (lambda m: m.update(classes_dtype="<U1"), None, "not representable"),
    (lambda m: m.update(units=[]), None, "units must be a list of 1"),
    (_unit(amplitude=-1.0), None, "amplitude must be a finite number > 0"),
    (_unit(kernel={"name": "poly", "degree": 10**9, "gamma": 1.0, "coef0": 1.0}), None,
     "unit 0: kernel 'poly': degree must be an integer <= 1000"),
    (lambda m: m["params"].update(evil=1), None, "unknown hyper-parameter"),
    (None, _set("u0__pi_", lambda p: 1 - p), "pi_ must be sigma"),
    (None, _set("u0__y_", lambda y: 2 * y), "y_ must be 0 or 1"),
    (None, _set("u0__L_", _upper), "lower Cholesky factor"),
    (None, _set("u0__L_", lambda L: -L), "lower Cholesky factor"),
    (None, _set("u0__f_", lambda f: f[:-1]), "one per training row"),
    (None, _set("gp__X", lambda X: X.astype(np.float16)), "float64"),
    (None, _set("u0__theta_", lambda t: np.r_[t, t, t]), "theta_"),
    (None, lambda a: a.update(u1__f_=np.zeros(3)), "unexpected array"),
    (None, lambda a: a.pop("gp__X"), "training rows")],
    ids=["unforged", "duplicate", "U1", "units", "amplitude", "poly-1e9", "param", "pi", "y",
         "L-upper", "L-negative", "f-length", "float16", "theta", "extra", "missing"])
def test_a_forged_gp_file_is_refused(tmp_path, edit_meta, edit_arrays, match):
    path = _forge(tmp_path, edit_meta, edit_arrays)
    if match is None:
        assert load(path).status_ == "optimal"
        return
    with pytest.raises(ModelFileError, match=match):
        load(path)
