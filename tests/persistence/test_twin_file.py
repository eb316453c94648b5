"""A TwinSVC round-trips through the safe format bit for bit (its two planes stored as
Variants, the planes' normal lengths, labels and certificates), a loaded one refits, and a file
forged with a recomputed digest is refused."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

import primaldual as pd
from primaldual.exceptions import ModelFileError
from primaldual.persistence import load, save
from tests.persistence.forge_file import refile


def _data():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(25, 3)) + 0.8, rng.normal(size=(25, 3)) - 0.8])
    return X, np.r_[["yes"] * 25, ["no"] * 25], rng.normal(size=(30, 3))


@pytest.mark.parametrize("kw", [{}, {"kernel": "rbf", "gamma": 0.5, "eps": 1e-3},
                                {"c1": 0.5, "c2": 2.0, "eps": 1e-4}],
                         ids=["linear", "rbf", "weighted"])
def test_twin_round_trips_bit_for_bit(tmp_path, kw):
    X, y, Xt = _data()
    m = pd.TwinSVC(**kw).fit(X, y)
    save(m, tmp_path / "t.npz", key="k")
    m2 = load(tmp_path / "t.npz", key="k")
    for rows in (X, Xt):
        assert np.array_equal(m.distances(rows), m2.distances(rows))
        assert np.array_equal(m.decision_function(rows), m2.decision_function(rows))
        assert np.array_equal(m.predict(rows), m2.predict(rows))
    assert np.array_equal(m2.classes_, m.classes_) and m2.classes_.dtype == m.classes_.dtype
    assert np.array_equal(m2.intercept_, m.intercept_)
    assert np.array_equal(m2.n_iter_, m.n_iter_)
    assert (getattr(m2, "coef_", None) is None) == (getattr(m, "coef_", None) is None)
    if kw.get("kernel", "linear") == "linear":
        assert np.array_equal(m2.coef_, m.coef_)
    assert [c.duality_gap for c in m2.certificates_] == [c.duality_gap for c in
                                                          m.certificates_]
    assert m2.get_params() == m.get_params()
    # the planes come back with their spec: the loaded model refits to the same planes
    refit = clone(m2).fit(X, y)
    np.testing.assert_allclose(refit.decision_function(Xt), m.decision_function(Xt),
                               rtol=1e-12, atol=1e-12)


def _forge(tmp_path, edit_meta=None, edit_arrays=None, **kw):
    X, y, _ = _data()
    save(pd.TwinSVC(**kw).fit(X, y), tmp_path / "t.npz")
    return refile(tmp_path / "t.npz", tmp_path / "forged.npz", edit_meta, edit_arrays)


def _set(key, value):
    def edit(a):
        a[key] = value(a[key])
    return edit


def _plane(k, **fields):
    def edit(m):
        m["planes"][k].update(fields)
    return edit


@pytest.mark.parametrize("edit_meta, edit_arrays, match", [
    (None, None, None),
    (lambda m: m.update(norms=[1.0, "nan"]), None, "norms must be two finite numbers"),
    (lambda m: m.update(norms=[1.0, -2.0]), None, "norms must be two finite numbers"),
    (lambda m: m.update(norms=[1.0]), None, "norms must be two"),
    (lambda m: m.update(n_iter=[1, -1]), None, "n_iter must be two"),
    (lambda m: m["params"].update(evil=1), None, "unknown hyper-parameter"),
    (lambda m: m.update(classes=["a", "b", "c"]), None, "two classes"),
    (lambda m: m.update(planes=m["planes"][:1]), None, "planes must be a list of two"),
    (_plane(1, task="classification"), None, "plane 1 must be a Variant"),
    (_plane(0, n_features_in=7), None, "plane 0 has n_features_in"),
    (_plane(0, spec_sha256="0" * 64), None, "not the one the model was fitted with"),
    (_plane(1, kernel={"name": "rbf", "gamma": 2.0}), None, "the planes' kernels differ"),
    (None, _set("coef_", lambda a: a[:, :2]), "coef_ must have shape"),
    (None, _set("plane0__dual_coef_", lambda a: a.astype(np.float16)), "must be float64"),
    (None, _set("plane1__support_vectors_", lambda a: a[:, :2]), "support_vectors_ must"),
    (None, lambda a: a.pop("plane1__intercept_"), "missing"),
    (None, lambda a: a.update(extra=np.zeros(3)), "unexpected array")],
    ids=["unforged", "norm-nan", "norm-negative", "norms-short", "n-iter", "param",
         "three-classes", "one-plane", "plane-task", "plane-width", "plane-spec", "kernels-differ",
         "coef-width", "float16", "sv-width", "missing", "extra"])
def test_a_forged_twin_file_is_refused(tmp_path, edit_meta, edit_arrays, match):
    path = _forge(tmp_path, edit_meta, edit_arrays)
    if match is None:
        assert [c.status for c in load(path).certificates_] == ["optimal", "optimal"]
        return
    with pytest.raises(ModelFileError, match=match):
        load(path)


def test_a_forged_twin_kernel_is_refused(tmp_path):
    """Both planes' kernel forged to a poly of degree 1e9: refused by the kernel's own check
    (degree at most 1000) before any stored row is evaluated, where it would overflow."""
    poly = {"name": "poly", "degree": 10**9, "gamma": 1.0, "coef0": 1.0}

    def edit(m):
        for p in m["planes"]:
            p["kernel"] = poly
    path = _forge(tmp_path, edit, kernel="rbf", gamma=0.5, eps=1e-3)
    with pytest.raises(ModelFileError, match=r"kernel 'poly': degree must be an integer <= 1000"):
        load(path)
