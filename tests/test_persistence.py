"""Persistence: .npz + JSON, no pickle; round trips are bit-identical; bad files raise."""

from __future__ import annotations

import json

import numpy as np
import pytest

import primaldual as pd
from primaldual.persistence import ModelFileError, load, save


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] - X[:, 1] > 0, "yes", "no")
    return X, y


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_round_trip_is_bit_identical(tmp_path, data, kernel):
    X, y = data
    m = pd.CSVC(C=2.0, kernel=kernel, backend="cvxpy").fit(X, y)
    path = tmp_path / "m.npz"
    save(m, path)
    m2 = load(path)
    np.testing.assert_array_equal(m.decision_function(X), m2.decision_function(X))
    np.testing.assert_array_equal(m.predict(X), m2.predict(X))
    assert m2.get_params() == m.get_params()
    assert m2.certificate_.relative_gap == m.certificate_.relative_gap
    with np.load(path, allow_pickle=False) as z:  # data only: loads without pickle
        assert "__meta__" in z.files


def test_tampered_truncated_and_foreign_files(tmp_path, data):
    X, y = data
    m = pd.CSVC(kernel="linear", backend="cvxpy").fit(X, y)
    path = tmp_path / "m.npz"
    save(m, path)
    raw = path.read_bytes()
    (tmp_path / "trunc.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ModelFileError, match="truncated|readable"):
        load(tmp_path / "trunc.npz")
    # tamper with one coefficient
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["dual_coef_"] = arrays["dual_coef_"] * 1.0001
    np.savez(tmp_path / "tam.npz", **arrays)
    with pytest.raises(ModelFileError, match="integrity"):
        load(tmp_path / "tam.npz")
    # another schema version (with a consistent digest) is refused by version
    from primaldual import persistence as P
    meta = json.loads(arrays.pop("__meta__").tobytes())
    arrays.pop("__digest__")
    arrays["dual_coef_"] = arrays["dual_coef_"] / 1.0001
    meta["schema_version"] = 99
    mb = json.dumps(meta).encode()
    arrays["__meta__"] = np.frombuffer(mb, dtype=np.uint8)
    arrays["__digest__"] = np.frombuffer(P._digest(arrays, mb).encode(), dtype=np.uint8)
    np.savez(tmp_path / "v99.npz", **arrays)
    with pytest.raises(ModelFileError, match="schema version"):
        load(tmp_path / "v99.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all")
    with pytest.raises(ModelFileError):
        load(tmp_path / "junk.npz")
    with pytest.raises(TypeError):
        save(object(), tmp_path / "x.npz")


def _every_method():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    yc = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    yr = np.sin(X[:, 0]) + 0.1 * rng.normal(size=40)
    ylap = yc.astype(float).copy()
    ylap[::3] = np.nan
    Xs = np.r_[X[yc > 0] + 2.0, X[yc < 0] - 2.0]
    ys = np.r_[np.ones((yc > 0).sum()), -np.ones((yc < 0).sum())]
    return [
        (pd.HardMarginSVC(kernel="linear"), Xs, ys), (pd.CSVC(), X, yc), (pd.L2SVC(), X, yc),
        (pd.NuSVC(nu=0.3), X, yc), (pd.EpsilonSVR(), X, yr), (pd.NuSVR(), X, yr),
        (pd.LSSVC(), X, yc), (pd.LSSVR(), X, yr), (pd.ProximalSVC(), X, yc),
        (pd.KernelRidge(), X, yr), (pd.LapRLS(), X, ylap), (pd.LapSVC(), X, ylap),
        (pd.KernelLogisticRegression(), X, yc),
    ]


@pytest.mark.parametrize("case", range(13))
def test_round_trip_every_method(tmp_path, case):
    model, X, y = _every_method()[case]
    model.fit(X, y)
    save(model, tmp_path / "m.npz")
    m2 = load(tmp_path / "m.npz")
    assert type(m2) is type(model)
    np.testing.assert_array_equal(model.predict(X), m2.predict(X))
    np.testing.assert_array_equal(model.decision_function(X), m2.decision_function(X))


def test_multiclass_save_is_refused_clearly(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.repeat([0, 1, 2], 10)
    m = pd.CSVC(backend="cvxpy").fit(X, y)
    with pytest.raises(TypeError, match="multiclass"):
        save(m, tmp_path / "m.npz")


def test_round_trip_low_rank_model(tmp_path, data):
    X, y = data
    m = pd.CSVC(kernel="rbf", rank=20).fit(X, y)
    assert m.backend_ == "lowrank" and m.eta_ is not None
    save(m, tmp_path / "lr.npz")
    m2 = load(tmp_path / "lr.npz")
    assert m2.eta_ is not None
    np.testing.assert_array_equal(m.decision_function(X), m2.decision_function(X))
