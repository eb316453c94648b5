"""Persistence: .npz + JSON, no pickle; round trips are bit-identical; bad files raise."""

from __future__ import annotations

import json

import numpy as np
import pytest

import primaldual as pd
from primaldual.persistence import ModelFileError, load, save


def _f(m, X):
    """``f(x)``: ``decision_function`` of a classifier, ``predict`` of a regressor (which has
    no ``decision_function``, as in scikit-learn)."""
    return m.decision_function(X) if hasattr(m, "decision_function") else m.predict(X)


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
    from primaldual.persistence.format import _digest
    meta = json.loads(arrays.pop("__meta__").tobytes())
    arrays.pop("__digest__")
    arrays["dual_coef_"] = arrays["dual_coef_"] / 1.0001
    meta["schema_version"] = 99
    mb = json.dumps(meta).encode()
    arrays["__meta__"] = np.frombuffer(mb, dtype=np.uint8)
    arrays["__digest__"] = np.frombuffer(_digest(arrays, mb).encode(), dtype=np.uint8)
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
    np.testing.assert_array_equal(_f(model, X), _f(m2, X))


@pytest.mark.parametrize("params", [{}, {"multiclass": "ovr"}, {"kernel": "precomputed"}],
                         ids=["ovo", "ovr", "precomputed"])
def test_multiclass_round_trip(tmp_path, params):
    """Multiclass models are saved in one file (issue 17): every sub-model, its rows, the
    code matrix and scikit-learn's layout; the loaded model predicts identically."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(45, 3))
    y = np.repeat(["a", "b", "c"], 15)
    X[y == "b"] += 1.5
    Xf = X @ X.T if params.get("kernel") == "precomputed" else X
    m = pd.CSVC(**params).fit(Xf, y)
    save(m, tmp_path / "mc.npz", key="secret")
    m2 = load(tmp_path / "mc.npz", key="secret")
    np.testing.assert_array_equal(m.predict(Xf), m2.predict(Xf))
    np.testing.assert_allclose(m.decision_function(Xf), m2.decision_function(Xf), rtol=1e-12)
    np.testing.assert_array_equal(m.classes_, m2.classes_)
    for k in ("support_", "n_support_", "dual_coef_", "intercept_"):
        np.testing.assert_array_equal(getattr(m, k), getattr(m2, k))
    assert len(m2.estimators_) == len(m.estimators_)
    assert [c.status for c in m2.certificates_] == [c.status for c in m.certificates_]


def test_round_trip_low_rank_model(tmp_path, data):
    X, y = data
    m = pd.CSVC(kernel="rbf", rank=20).fit(X, y)
    assert m.backend_ == "lowrank" and m.eta_ is not None
    save(m, tmp_path / "lr.npz")
    m2 = load(tmp_path / "lr.npz")
    assert m2.eta_ is not None
    np.testing.assert_array_equal(m.decision_function(X), m2.decision_function(X))


# ----------------------------------------------------------------------------- crafted files
# Every crafted file raises ModelFileError with bounded memory (issue 14): numpy's and Python's
# allocations are traced (tracemalloc) and the peak must stay below 200 MB.
import io  # noqa: E402
import tracemalloc  # noqa: E402
import zipfile  # noqa: E402

from primaldual.persistence.format import _digest  # noqa: E402
from primaldual.persistence.reader import _read_members  # noqa: E402

_LIMIT = 200 * 2**20


@pytest.fixture(scope="module")
def good_arrays(tmp_path_factory, data):
    X, y = data
    m = pd.CSVC(kernel="rbf", gamma=0.5, backend="smo").fit(X, y)
    path = tmp_path_factory.mktemp("good") / "m.npz"
    save(m, path)
    return _read_members(path.read_bytes(), "good")


def _write(path, arrays, meta=None, redigest=True):
    arrays = dict(arrays)
    if meta is not None:
        arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    if redigest:
        arrays["__digest__"] = np.frombuffer(
            _digest(arrays, arrays["__meta__"].tobytes()).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return path


def _meta(arrays):
    return json.loads(arrays["__meta__"].tobytes())


def _assert_refused(path, match=None, **kw):
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match=match):
            load(path, **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < _LIMIT, f"peak {peak / 2**20:.0f} MB"


def _npy_member(header: str, body: bytes) -> bytes:
    h = header.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + body


def _raw_zip(path, members, compress=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression=compress) as zf:
        for name, payload in (members.items() if isinstance(members, dict) else members):
            zf.writestr(name, payload)
    return path


def test_good_file_loads_under_the_memory_bound(tmp_path, good_arrays):
    path = _write(tmp_path / "ok.npz", good_arrays)
    tracemalloc.start()
    m = load(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert m.status_ if hasattr(m, "status_") else True
    assert peak < _LIMIT


def test_crafted_zip_bomb_is_refused_before_decompression(tmp_path):
    # 32 MB of zeros deflate to ~32 kB: refused from the directory (compressed entry)
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("__meta__.npy", "w", force_zip64=True) as fh:
            chunk = bytes(2**24)
            for _ in range(2):
                fh.write(chunk)
    assert path.stat().st_size < 2**20
    _assert_refused(path, "compressed")


def test_crafted_directory_lies_about_sizes(tmp_path, good_arrays):
    path = _write(tmp_path / "m.npz", good_arrays)
    raw = bytearray(path.read_bytes())
    # patch every central-directory entry's uncompressed size to 2.9 GB
    i = raw.find(b"PK\x01\x02")
    while i >= 0:
        raw[i + 24:i + 28] = (2_900_000_000).to_bytes(4, "little")
        i = raw.find(b"PK\x01\x02", i + 4)
    (tmp_path / "lie.npz").write_bytes(bytes(raw))
    _assert_refused(tmp_path / "lie.npz")


@pytest.mark.parametrize("payload", [b"", b"PK\x05\x06" + bytes(18), b"\x00" * 1000,
                                     b"PK\x03\x04garbage"])
def test_crafted_not_a_zip(tmp_path, payload):
    (tmp_path / "x.npz").write_bytes(payload)
    _assert_refused(tmp_path / "x.npz")


def test_crafted_truncated_file(tmp_path, good_arrays):
    raw = _write(tmp_path / "m.npz", good_arrays).read_bytes()
    for cut in (10, len(raw) // 3, len(raw) - 5):
        (tmp_path / "t.npz").write_bytes(raw[:cut])
        _assert_refused(tmp_path / "t.npz")


def test_crafted_file_over_max_bytes(tmp_path, good_arrays):
    path = _write(tmp_path / "m.npz", good_arrays)
    _assert_refused(path, "max_bytes", max_bytes=100)


def test_crafted_object_array_pickle(tmp_path, good_arrays):
    arrays = dict(good_arrays)
    arrays["beta_"] = np.array([{"x": 1}] * 3, dtype=object)
    path = tmp_path / "o.npz"
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    _assert_refused(path, "numeric")


@pytest.mark.parametrize("header, body", [
    ("{'descr': '<f8', 'fortran_order': False, 'shape': (10000000000000,), }", bytes(16)),
    ("{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }", bytes(16)),
    ("{'descr': '<f8', 'fortran_order': False, 'shape': " + "(" * 1000 + ")" * 1000 + ", }",
     b""),
    ("{'descr': 'O', 'fortran_order': False, 'shape': (1,), }", bytes(8)),
    ("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", bytes(8)),
    ("not a dict at all", b""),
])
def test_crafted_npy_headers(tmp_path, header, body):
    path = _raw_zip(tmp_path / "h.npz", {"beta_.npy": _npy_member(header, body)})
    _assert_refused(path)


def test_crafted_duplicate_and_foreign_members(tmp_path, good_arrays):
    buf = io.BytesIO()
    np.save(buf, np.zeros(3))
    with pytest.warns(UserWarning):  # zipfile warns about the duplicate name
        _raw_zip(tmp_path / "d.npz", [("beta_.npy", buf.getvalue())] * 2)
    _assert_refused(tmp_path / "d.npz", "twice")
    _assert_refused(_raw_zip(tmp_path / "t.npz", {"x.txt": b"hi"}), "does not fit|x.txt")
    arrays = dict(good_arrays)
    arrays["evil_"] = np.zeros(3)
    _assert_refused(_write(tmp_path / "e.npz", arrays), "unexpected array")


@pytest.mark.parametrize("edit, match", [
    (lambda m: m.update(schema_version=99), "schema version"),
    (lambda m: m.update({"class": "os.system"}), "unknown model class"),
    (lambda m: m["params"].update(evil=1), "unknown hyper-parameter"),
    (lambda m: m.update(intercept="0.5"), "intercept"),
    (lambda m: m.update(intercept=float("nan")), "intercept"),
    (lambda m: m.update(n_features_in=1e400), "n_features_in"),
    (lambda m: m.update(n_features_in=-1), "n_features_in"),
    (lambda m: m.update(classes=[[1], 2]), "classes"),
    (lambda m: m.update(certificate=[]), "certificate"),
    (lambda m: m["certificate"].update(relative_gap={"a": 1}), "certificate"),
    (lambda m: m.update(kernel={"name": "rbf", "gamma": "huge"}), "kernel .rbf.: gamma must be"),
    (lambda m: m.update(kernel={"name": "no-such-kernel"}), "unknown kernel name"),
    (lambda m: m.update(lowrank=5), "lowrank"),
])
def test_crafted_metadata_fields(tmp_path, good_arrays, edit, match):
    meta = _meta(good_arrays)
    edit(meta)
    _assert_refused(_write(tmp_path / "m.npz", good_arrays, meta), match)


@pytest.mark.parametrize("meta_bytes", [b"\xff\xfe not utf8", b"{not json",
                                        b"[" * 100000 + b"]" * 100000, b"123"],
                         ids=["utf8", "json", "deep", "scalar"])
def test_crafted_metadata_bytes(tmp_path, good_arrays, meta_bytes):
    arrays = dict(good_arrays)
    arrays["__meta__"] = np.frombuffer(meta_bytes, dtype=np.uint8)
    _assert_refused(_write(tmp_path / "m.npz", arrays))


@pytest.mark.parametrize("edit, match", [
    (lambda a: a.update(support_vectors_=a["support_vectors_"][:, :2]), "support_vectors_"),
    (lambda a: a.update(dual_coef_=a["dual_coef_"].astype(np.complex128)), "numeric"),
    (lambda a: a.update(dual_coef_=a["dual_coef_"].astype(np.int64)), "dual_coef_"),
    (lambda a: a.update(dual_coef_=a["dual_coef_"][:-1]), "differ in length"),
    (lambda a: a.update(support_=a["support_"] + 10**6), "indexes outside"),
    (lambda a: a.update(beta_=np.full_like(a["beta_"], np.nan)), "non-finite"),
    (lambda a: a.pop("beta_"), "missing"),
    (lambda a: a.update(__digest__=np.zeros(3, dtype=np.uint8)), "digest"),
    (lambda a: a.update(__meta__=np.zeros((2, 2), dtype=np.uint8)), "metadata"),
])
def test_crafted_arrays(tmp_path, good_arrays, edit, match):
    arrays = dict(good_arrays)
    edit(arrays)
    _assert_refused(_write(tmp_path / "m.npz", arrays,
                           redigest=arrays["__digest__"].shape == (64,)), match)


def test_digest_detects_corruption_but_not_forgery_signature_does(tmp_path, data):
    X, y = data
    m = pd.CSVC(kernel="linear", backend="smo").fit(X, y)
    key = b"a secret only the owner has"
    save(m, tmp_path / "s.npz", key=key)
    m2 = load(tmp_path / "s.npz", key=key)  # signed round trip
    np.testing.assert_array_equal(m.decision_function(X), m2.decision_function(X))
    # a forger edits the coefficients and recomputes the plain digest
    arrays = _read_members((tmp_path / "s.npz").read_bytes(), "s")
    arrays["dual_coef_"] = -arrays["dual_coef_"]
    forged = _write(tmp_path / "f.npz", arrays)
    assert load(forged).certificate_.status == m.certificate_.status  # digest alone: accepted
    _assert_refused(forged, "signature", key=key)
    _assert_refused(_write(tmp_path / "u.npz", {k: v for k, v in arrays.items()
                                                if k != "__signature__"}), "unsigned", key=key)
    _assert_refused(tmp_path / "s.npz", "signature", key=b"another key")
    with pytest.raises(TypeError, match="key"):
        save(m, tmp_path / "k.npz", key=b"")
