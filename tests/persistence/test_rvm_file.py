"""RVR and RVC round-trip through the safe format bit for bit (an RVR's mean and predictive
deviation, an RVC's probabilities, binary and one-vs-rest), their relevance rows renumbered
onto a basis of their own, and a forged file is refused."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual as pd
from primaldual.exceptions import ModelFileError
from primaldual.persistence import load, save
from tests.persistence.forge_file import refile


def _sinc(n=60):
    rng = np.random.default_rng(0)
    X = rng.uniform(-10, 10, (n, 1))
    return X, np.sinc(X[:, 0] / np.pi) + 0.1 * rng.standard_normal(n), rng.uniform(-12, 12,
                                                                                   (30, 1))


def _fit(y=None, **kw):
    X, t, _ = _sinc()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.RVR(**kw).fit(X, t if y is None else y)


@pytest.mark.parametrize("kw", [{}, {"bias": False}, {"bias_prior": "flat"},
                                {"kernel": "linear"}, {"kernel": "poly", "degree": 2},
                                {"tol": 10.0}],
                         ids=["rbf", "no-bias", "flat-bias", "linear", "poly", "loose-tol"])
def test_rvr_round_trips_bit_for_bit(tmp_path, kw):
    X, _, Q = _sinc()
    m = _fit(**kw)
    save(m, tmp_path / "r.npz", key="k")
    m2 = load(tmp_path / "r.npz", key="k")
    for rows in (X, Q):
        a, sa = m.predict(rows, return_std=True)
        b, sb = m2.predict(rows, return_std=True)
        assert np.array_equal(a, b) and np.array_equal(sa, sb)
    for k in ("relevance_", "relevance_vectors_", "alpha_", "mu_", "sigma_", "coef_"):
        assert np.array_equal(getattr(m, k), getattr(m2, k)), k
    for k in ("intercept_", "beta_", "noise_variance_", "log_marginal_likelihood_value_",
              "optimality_", "n_iter_", "converged_", "n_relevance_vectors_"):
        assert getattr(m, k) == getattr(m2, k), k
    assert m2.get_params() == m.get_params()


@pytest.mark.parametrize("c", [2.0, 0.0], ids=["bias-only", "empty"])
def test_rvr_on_constant_targets_round_trips(tmp_path, c):
    X, _, Q = _sinc()
    m = _fit(y=np.full(len(X), c))
    save(m, tmp_path / "r.npz")
    m2 = load(tmp_path / "r.npz")
    assert np.array_equal(m.predict(Q), m2.predict(Q)) and not m2.converged_


def _forge(tmp_path, edit_meta=None, edit_arrays=None, model=None):
    save(_fit() if model is None else model, tmp_path / "r.npz")
    return refile(tmp_path / "r.npz", tmp_path / "forged.npz", edit_meta, edit_arrays)


def _set(key, value, unit=0):
    def edit(a):
        a[f"u{unit}__{key}"] = value(a[f"u{unit}__{key}"])
    return edit


def _unit(**kv):
    def edit(m):
        m["units"][0].update(kv)
    return edit


def _asymmetric(S):
    S = S.copy()
    S[0, -1] += 1.0
    return S


@pytest.mark.parametrize("edit_meta, edit_arrays, match", [
    (None, None, None),
    (_unit(beta=-1.0), None, "beta must be a finite number > 0"),
    (_unit(beta="nan"), None, "beta must be"),
    (lambda m: m["params"].update(evil=1), None, "unknown hyper-parameter"),
    (_unit(bias_in_model=False), None, "must have shape"),
    (_unit(converged="yes"), None, "converged must be true or false"),
    (_unit(kernel={"name": "poly", "degree": 10**9, "gamma": 1.0, "coef0": 1.0}), None,
     "unit 0: kernel 'poly': degree must be an integer <= 1000"),
    (lambda m: m.update(units=[]), None, "units must be a list of 1"),
    (lambda m: m.update(classes=["a", "b"], classes_dtype="<U1"), None, "classes must be null"),
    (None, _set("sigma_", _asymmetric), "symmetric covariance"),
    (None, _set("sigma_", lambda S: -S), "symmetric covariance"),
    (None, _set("alpha_", lambda a: -a), "alpha_ must be >= 0"),
    (None, _set("relevance_", lambda r: r[::-1].copy()), "increasing"),
    (None, _set("mu_", lambda a: a.astype(np.float16)), "must be float64"),
    (None, _set("mu_", lambda a: a[:-1]), "mu_ must have shape"),
    (None, _set("relevance_vectors_", lambda a: np.hstack([a, a])), "must have shape"),
    (None, lambda a: a.update(beta_=np.zeros(3)), "unexpected array"),
    (None, lambda a: a.pop("u0__sigma_"), "missing")],
    ids=["unforged", "beta-negative", "beta-nan", "param", "bias-flag", "converged-type",
         "poly-1e9", "no-units", "classes", "sigma-asymmetric", "sigma-negative", "alpha-negative",
         "relevance-order", "float16", "mu-length", "width", "extra", "missing"])
def test_a_forged_rvr_file_is_refused(tmp_path, edit_meta, edit_arrays, match):
    path = _forge(tmp_path, edit_meta, edit_arrays)
    if match is None:
        assert load(path).n_relevance_vectors_ > 0
        return
    with pytest.raises(ModelFileError, match=match):
        load(path)


def _classification(n_classes):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 2))
    labels = np.array(["ab", "cd", "ef"])[:n_classes]
    y = labels[np.argmax(X @ rng.standard_normal((2, n_classes)), axis=1)]
    return X, y, 2.0 * rng.standard_normal((30, 2))


@pytest.mark.parametrize("kw", [{}, {"bias": False}, {"kernel": "linear"}],
                         ids=["rbf", "no-bias", "linear"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_rvc_round_trips_bit_for_bit(tmp_path, n_classes, kw):
    X, y, Q = _classification(n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = pd.RVC(**kw).fit(X, y)
    save(m, tmp_path / "c.npz")
    m2 = load(tmp_path / "c.npz")
    for rows in (X, Q):
        assert np.array_equal(m.predict_proba(rows), m2.predict_proba(rows))
        assert np.array_equal(m.decision_function(rows), m2.decision_function(rows))
        assert np.array_equal(m.predict(rows), m2.predict(rows))
    assert np.array_equal(m.classes_, m2.classes_) and m.classes_.dtype == m2.classes_.dtype
    for k in ("relevance_", "relevance_vectors_"):
        assert np.array_equal(getattr(m, k), getattr(m2, k)), k
    assert (m.converged_, m.n_iter_) == (m2.converged_, m2.n_iter_)
    assert len(m.estimators_) == len(m2.estimators_) == (0 if n_classes == 2 else 3)
    for e, e2 in zip(m.estimators_, m2.estimators_, strict=True):
        assert np.array_equal(e.sigma_, e2.sigma_) and e.optimality_ == e2.optimality_


@pytest.mark.parametrize("edit_meta, edit_arrays, match", [
    (None, None, None),
    (lambda m: m.update(classes=["ab", "ab", "cd"]), None, "classes are not unique"),
    (lambda m: m.update(classes_dtype="<U1"), None, "not representable"),
    (lambda m: m.update(units=m["units"][:2]), None, "units must be a list of 3"),
    (lambda m: m["units"][1].update(beta=1.0), None, "no noise precision"),
    (None, _set("sigma_", lambda S: -S, unit=2), "unit 2: sigma_ must be a symmetric"),
    (None, lambda a: a.update(u3__mu_=np.zeros(2)), "unexpected array")],
    ids=["unforged", "duplicate", "U1", "unit-count", "beta", "sigma", "extra-unit"])
def test_a_forged_multiclass_rvc_file_is_refused(tmp_path, edit_meta, edit_arrays, match):
    X, y, _ = _classification(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = pd.RVC().fit(X, y)
    path = _forge(tmp_path, edit_meta, edit_arrays, model=m)
    if match is None:
        assert list(load(path).classes_) == ["ab", "cd", "ef"]
        return
    with pytest.raises(ModelFileError, match=match):
        load(path)
