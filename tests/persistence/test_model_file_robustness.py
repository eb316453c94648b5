"""Issue 27, item 9: every failure of a model file is a ``ModelFileError`` (zip flags
included), a loaded model passes a ``predict`` check, memory on load is bounded by the data
present, and non-regular paths are refused instead of read forever."""

from __future__ import annotations

import json
import os
import struct
import threading
import tracemalloc

import numpy as np
import pytest

import primaldual as pd
from primaldual.cli import main
from primaldual.persistence import ModelFileError, load, save
from primaldual.persistence.format import _digest
from primaldual.persistence.reader import _read_members


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] - X[:, 1] > 0, 1, -1)
    m = pd.CSVC(kernel="rbf", gamma=0.5, backend="smo").fit(X, y)
    path = tmp_path_factory.mktemp("m") / "m.npz"
    save(m, path)
    return path


def _rewrite(path, out, edit_meta=None, edit_arrays=None):
    """Re-save ``path``'s members with edited metadata/arrays and a recomputed digest (what
    anyone can do: the digest is not a signature)."""
    arrays = _read_members(path.read_bytes(), "x")
    meta = json.loads(arrays["__meta__"].tobytes())
    if edit_meta:
        edit_meta(meta)
    if edit_arrays:
        edit_arrays(arrays)
    mb = json.dumps(meta).encode()
    arrays["__meta__"] = np.frombuffer(mb, dtype=np.uint8)
    arrays.pop("__digest__")
    arrays["__digest__"] = np.frombuffer(_digest(arrays, mb).encode(), dtype=np.uint8)
    with open(out, "wb") as fh:
        np.savez(fh, **arrays)
    return out


def _patch_central_directory(raw: bytes, offset: int, value: int) -> bytes:
    """Set a 2-byte field (``offset`` from the signature) of every central-directory entry
    (and, for the flags, of every local header)."""
    b = bytearray(raw)
    i = b.find(b"PK\x01\x02")
    while i >= 0:
        struct.pack_into("<H", b, i + offset, value)
        i = b.find(b"PK\x01\x02", i + 4)
    if offset == 8:  # general-purpose flags: also in the local headers (offset 6)
        i = b.find(b"PK\x03\x04")
        while i >= 0:
            struct.pack_into("<H", b, i + 6, value)
            i = b.find(b"PK\x03\x04", i + 4)
    return bytes(b)


@pytest.mark.parametrize("flag", [0x1, 0x40, 0x20], ids=["encrypted", "strong-encryption",
                                                         "patched"])
def test_zip_encryption_or_patch_flag_is_model_file_error(tmp_path, saved, flag):
    path = tmp_path / "flag.npz"
    path.write_bytes(_patch_central_directory(saved.read_bytes(), 8, flag))
    with pytest.raises(ModelFileError, match="flags"):
        load(path)


def test_zip_version_flag_is_model_file_error(tmp_path, saved):
    # "version needed to extract" 9.9: zipfile raises NotImplementedError on its own
    path = tmp_path / "version.npz"
    path.write_bytes(_patch_central_directory(saved.read_bytes(), 6, 99))
    with pytest.raises(ModelFileError):
        load(path)


def test_cli_reports_zip_flags_as_a_model_file_error_not_internal(tmp_path, saved, capsys):
    path = tmp_path / "flag.npz"
    path.write_bytes(_patch_central_directory(saved.read_bytes(), 8, 0x1))
    csv = tmp_path / "x.csv"
    csv.write_text("0,0,0\n")
    assert main(["predict", str(path), str(csv)]) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and "flags" in err


def test_null_classes_with_recomputed_digest_is_refused_on_load(tmp_path, saved):
    def edit(meta):
        meta["classes"] = None
        meta["classes_dtype"] = None
    path = _rewrite(saved, tmp_path / "noclasses.npz", edit_meta=edit)
    with pytest.raises(ModelFileError, match="classes"):
        load(path)


def test_regressor_with_classes_is_refused(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 2))
    m = pd.EpsilonSVR(kernel="linear").fit(X, X[:, 0])
    src = tmp_path / "r.npz"
    save(m, src)

    def edit(meta):
        meta["classes"] = [0, 1]
        meta["classes_dtype"] = "int64"
    with pytest.raises(ModelFileError, match="classes must be null"):
        load(_rewrite(src, tmp_path / "r2.npz", edit_meta=edit))


def test_load_runs_predict_so_a_model_that_cannot_predict_is_refused(tmp_path, saved,
                                                                      monkeypatch):
    # whatever makes predict fail (here: predict itself, patched to raise NotFittedError as
    # a label-less classifier did) is reported by load, as a ModelFileError
    from sklearn.exceptions import NotFittedError

    def broken(self, X):
        raise NotFittedError("no classes_")
    monkeypatch.setattr(pd.CSVC, "predict", broken)
    with pytest.raises(ModelFileError, match="NotFittedError"):
        load(saved)


def test_huge_declared_width_is_refused_without_allocating(tmp_path, saved):
    d = 10**8

    def edit_meta(meta):
        meta["n_features_in"] = d

    def edit_arrays(a):  # no support vector: nothing in the file has the declared width
        a["support_vectors_"] = np.zeros((0, d))
        a["dual_coef_"] = np.zeros((1, 0))
        a["support_"] = np.zeros(0, dtype=np.int64)
        for k in ("free_support_", "bounded_support_"):
            a[k] = np.zeros(0, dtype=np.int64)
    path = _rewrite(saved, tmp_path / "wide.npz", edit_meta, edit_arrays)
    assert path.stat().st_size < 64 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match="n_features_in"):
            load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_width_backed_by_support_vectors_still_loads(tmp_path):
    # a real model whose width exceeds the 1 MiB floor: its support vectors back the width
    rng = np.random.default_rng(2)
    X = rng.normal(size=(12, 150_000))
    y = np.where(np.arange(12) % 2 == 0, 1, -1)
    m = pd.CSVC(kernel="linear").fit(X, y)
    path = tmp_path / "wide_ok.npz"
    save(m, path)
    np.testing.assert_array_equal(load(path).predict(X), m.predict(X))


def _load_in_thread(path):
    out: dict = {}

    def run():
        try:
            load(path)
        except BaseException as exc:  # noqa: BLE001 -- reported to the test
            out["exc"] = exc
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "load() blocked"
    return out.get("exc")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_named_pipe_is_refused_not_blocking(tmp_path):
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    exc = _load_in_thread(fifo)
    assert isinstance(exc, ModelFileError) and "named pipe" in str(exc)


def test_directory_and_device_are_refused(tmp_path):
    exc = _load_in_thread(tmp_path)
    assert isinstance(exc, ModelFileError) and "directory" in str(exc)
    if os.path.exists("/dev/zero"):
        exc = _load_in_thread("/dev/zero")
        assert isinstance(exc, ModelFileError) and "device" in str(exc)
