"""An EnclosingBall round-trips through the safe format bit for bit (its support rows,
weights, radius and certificate), and a file forged with a recomputed digest is refused."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
from primaldual.exceptions import ModelFileError
from primaldual.persistence import load, save
from tests.persistence.forge_file import refile


def _data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((40, 3)), 2.0 * rng.standard_normal((25, 3))


@pytest.mark.parametrize("kw", [{}, {"kernel": "linear"},
                                {"kernel": "poly", "degree": 2, "coef0": 1.0},
                                {"backend": "cvxpy"}],
                         ids=["rbf", "linear", "poly", "cvxpy"])
def test_ball_round_trips_bit_for_bit(tmp_path, kw):
    Z, Q = _data()
    m = pd.EnclosingBall(**kw).fit(Z)
    save(m, tmp_path / "b.npz", key="k")
    m2 = load(tmp_path / "b.npz", key="k")
    for rows in (Z, Q):
        assert np.array_equal(m.decision_function(rows), m2.decision_function(rows))
    assert np.array_equal(m.alpha_, m2.alpha_) and np.array_equal(m.support_, m2.support_)
    assert (m2.radius2_, m2.radius_, m2.center_norm2_) == (m.radius2_, m.radius_,
                                                           m.center_norm2_)
    assert m2.status_ == m.status_ == "optimal"
    assert m2.certificate_.duality_gap == m.certificate_.duality_gap
    assert m2.X_fit_ is None and m2.get_params() == m.get_params()


def test_a_precomputed_ball_is_refused_by_save_and_by_decision_function(tmp_path):
    Z, Q = _data()
    m = pd.EnclosingBall(kernel="precomputed").fit(Z @ Z.T)
    with pytest.raises(TypeError, match="precomputed kernel is not supported"):
        save(m, tmp_path / "b.npz")
    assert not (tmp_path / "b.npz").exists()
    with pytest.raises(ValueError, match="k\\(x, x\\)"):
        m.decision_function(Q @ Z.T)


def _forge(tmp_path, edit_meta=None, edit_arrays=None):
    Z, _ = _data()
    save(pd.EnclosingBall().fit(Z), tmp_path / "b.npz")
    return refile(tmp_path / "b.npz", tmp_path / "forged.npz", edit_meta, edit_arrays)


def _set(key, value):
    def edit(a):
        a[key] = value(a[key])
    return edit


@pytest.mark.parametrize("edit_meta, edit_arrays, match", [
    (None, None, None),
    (lambda m: m.update(radius2="nan"), None, "radius2 must be a finite number"),
    (lambda m: m["params"].update(evil=1), None, "unknown hyper-parameter"),
    (lambda m: m.update(kernel={"name": "poly", "degree": 10**9, "gamma": 1.0, "coef0": 1.0}),
     None, "kernel 'poly': degree must be an integer <= 1000"),
    (lambda m: m.update(certificate=[]), None, "certificate"),
    (None, _set("alpha_", lambda a: -a), "alpha_ must be >= 0 and sum to 1"),
    (None, _set("alpha_", lambda a: 2 * a), "alpha_ must be >= 0 and sum to 1"),
    (None, _set("support_", lambda a: a + 1000), "support_ indexes outside"),
    (None, _set("support_", lambda a: np.full_like(a, a[0])), "repeated"),
    (None, _set("support_vectors_", lambda a: a.astype(np.float16)), "must be float64"),
    (None, _set("support_vectors_", lambda a: a[:, :2]), "support_vectors_ must have shape"),
    (None, lambda a: a.update(beta_=np.zeros(3)), "unexpected array"),
    (None, lambda a: a.pop("alpha_"), "missing")],
    ids=["unforged", "radius-nan", "param", "poly-1e9", "certificate", "alpha-negative",
         "alpha-sum", "support-range", "support-repeated", "float16", "width", "extra",
         "missing"])
def test_a_forged_ball_file_is_refused(tmp_path, edit_meta, edit_arrays, match):
    path = _forge(tmp_path, edit_meta, edit_arrays)
    if match is None:
        assert load(path).status_ == "optimal"
        return
    with pytest.raises(ModelFileError, match=match):
        load(path)
