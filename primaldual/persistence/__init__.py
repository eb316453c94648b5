"""Saving and loading fitted models without pickle: one ``.npz`` of plain arrays + JSON metadata.

The file holds numeric arrays only and a JSON document (stored as a UTF-8 byte array) with the
schema version, library version, class name, kernel, hyper-parameters, intercept, classes and
certificate. Nothing in the file names code: the class is looked up in a fixed table of
primaldual's own estimators.

What the loader guarantees (docs/reliability.md, tests/persistence/test_persistence.py)
--------------------------------------------------------------------------
* **Bounded work before any check.** The zip directory is read first: every member must be an
  uncompressed (``ZIP_STORED``, as :func:`numpy.savez` writes) ``.npy`` entry whose declared
  size fits in the file, and the file is at most ``max_bytes``; so a zip bomb is refused
  before anything is decompressed and memory stays within about twice the file's size.
* **Schema.** Every ``.npy`` header is parsed and checked (allowed dtype, no object arrays,
  shape consistent with the bytes present) before its data is read; every array's dtype,
  dimension and length, and every metadata field's type, are checked against the schema; the
  loaded model must then predict on one row.
* **Regular files only, bounded by the data present.** The path is opened without blocking
  and must be a regular file (a named pipe, device or directory is refused); zip entries with
  the encryption or patched-data flags are refused; a declared ``n_features_in`` must be backed
  by the bytes in the file (the predict row is at most twice the file, or 1 MiB).
* **A model that predicts.** A classifier must carry its labels; the loaded model's
  ``decision_function`` and ``predict`` run on a row of zeros.
* **One error class.** Anything wrong raises :class:`~primaldual.exceptions.ModelFileError`
  (a ``ValueError``); a missing path raises ``FileNotFoundError``.
* **Preprocessing.** ``save(..., preprocessing={"mean", "scale"})`` stores a standardisation
  (the CLI's) as plain arrays; :func:`load` returns it as ``preprocessing_`` and
  :func:`preprocess` applies it.

What a digest proves
--------------------
Every file carries a SHA-256 digest over its arrays and metadata. A matching digest proves the
file was not **corrupted** (truncated, bit flips); it does **not** prove who wrote it: anyone
can edit a file and recompute the digest. For tamper evidence, save and load with a secret
``key``: the file then carries an HMAC-SHA256 signature (stdlib :mod:`hmac`), which only a
holder of the key can produce; ``load(path, key=...)`` refuses unsigned files and files whose
signature does not match. A loaded certificate is what the file says; re-certify with
``primaldual.certify`` on the training data when the file's origin is not trusted.

The package's modules: ``format`` (the schema, the digest, the argument checks), ``sparse`` (a
CSR matrix as plain arrays), ``parts`` (what the writer stores for each kind of estimator),
``reader`` (the file read and checked) and ``build`` (the model rebuilt from it); ``twin``
(:class:`~primaldual.TwinSVC`, its two planes stored as Variants), ``ball``
(:class:`~primaldual.EnclosingBall`), ``rvm`` (:class:`~primaldual.RVR`,
:class:`~primaldual.RVC`), ``gp`` (:class:`~primaldual.GPClassifier`) and ``kpca``
(:class:`~primaldual.KernelPCA`) hold the writer, the checks and the builder of those
estimators, which are not the catalogue's kernel expansions.
"""

from __future__ import annotations

import hmac
import json
import os
from typing import Any

import numpy as np

from ..exceptions import ModelFileError
from .ball import _ball_parts, _build_ball, _is_ball
from .build import _attach_preprocessing, _build, _build_multiclass, _build_variant
from .format import (
    _MAX_META_BYTES,
    _PRE_ARRAYS,
    _SPECIAL,
    MAX_FILE_BYTES,
    SCHEMA_VERSION,
    _check_key,
    _check_max_bytes,
    _check_path,
    _check_preprocessing,
    _classes,
    _digest,
)
from .gp import _build_gp, _gp_parts, _is_gp
from .kpca import _build_kpca, _is_kpca, _kpca_parts
from .parts import _is_variant, _model_parts, _multiclass_parts, _variant_parts
from .reader import (
    _check_arrays,
    _check_meta,
    _check_widths,
    _need,
    _read_members,
    _read_regular_file,
)
from .rvm import _build_rvm, _is_rvm, _rvm_parts
from .sparse import unpack_sparse
from .twin import _build_twin, _is_twin, _twin_parts

__all__ = ["MAX_FILE_BYTES", "ModelFileError", "SCHEMA_VERSION", "load", "preprocess", "save"]


def _guarded(build: Any, where: str) -> Any:
    """``build()``, anything it raises other than a ``ModelFileError`` reported as one."""
    try:
        return build()
    except ModelFileError:
        raise
    except (Exception, RecursionError) as exc:  # anything else the schema did not foresee
        raise ModelFileError(f"{where}: the stored model is inconsistent "
                             f"({type(exc).__name__}: {exc})") from exc


def preprocess(model: Any, X: Any) -> np.ndarray:
    """``X`` through the preprocessing a loaded model carries (``preprocessing_``:
    ``(X - mean) / scale``), unchanged when it carries none."""
    X = np.asarray(X, dtype=np.float64)
    pre = getattr(model, "preprocessing_", None)
    if pre is None:
        return X
    return (X - pre["mean"]) / pre["scale"]


def save(model: Any, path: str | os.PathLike, *, key: bytes | str | None = None,
         preprocessing: dict[str, Any] | None = None) -> None:
    """Write a fitted primaldual estimator to ``path`` (``.npz``).

    Parameters
    ----------
    key : bytes or str, optional
        A secret: the file is signed with HMAC-SHA256 under it (tamper evidence; load with the
        same ``key``). Without a key the file carries a SHA-256 digest, which detects
        corruption but not deliberate edits.
    preprocessing : dict, optional
        A standardisation the model's inputs went through, ``{"mean": m, "scale": s}``
        (arrays of length ``n_features_in_``, ``s > 0``): the model was fit on
        ``(x - m) / s``. Stored as plain arrays (no pickle); :func:`load` returns it as the
        model's ``preprocessing_`` and :func:`preprocess` applies it (the CLI's ``predict``
        does).
    """
    key = _check_key(key)
    path = _check_path(path)
    name = type(model).__name__
    if name == "Variant" and _is_variant(model):
        arrays, meta = _variant_parts(model)
    elif name == "EnclosingBall" and _is_ball(model):
        arrays, meta = _ball_parts(model)
    elif name in ("RVR", "RVC") and _is_rvm(model):
        arrays, meta = _rvm_parts(model)
    elif name == "GPClassifier" and _is_gp(model):
        arrays, meta = _gp_parts(model)
    elif name == "KernelPCA" and _is_kpca(model):
        arrays, meta = _kpca_parts(model)
    elif name == "TwinSVC" and _is_twin(model):
        arrays, meta = _twin_parts(model)
    elif name not in _classes():
        if type(model).__module__.split(".")[0] == "primaldual":
            # the others (e.g. the sparsity wrappers, kernel PLS) hold state the file's schema
            # has no field for: refused by name, not stored half
            raise TypeError(f"model: saving {name} models is not supported; save writes the "
                            f"catalogue's primal-dual methods ({', '.join(sorted(_classes()))}"
                            "), Variant, TwinSVC, EnclosingBall, RVR, RVC, "
                            "GPClassifier and KernelPCA")
        raise TypeError(f"model must be a primaldual estimator, got {name}")
    elif getattr(model, "estimators_", None) is not None:
        arrays, meta = _multiclass_parts(model)
    else:
        arrays, meta = _model_parts(model)
    if preprocessing is not None:
        pre = _check_preprocessing(preprocessing, int(model.n_features_in_), "preprocessing")
        arrays["pre__mean"], arrays["pre__scale"] = pre["mean"], pre["scale"]
        meta["preprocessing"] = {"kind": "standardize"}
    meta_bytes = json.dumps(meta, sort_keys=True).encode("utf-8")
    arrays["__meta__"] = np.frombuffer(meta_bytes, dtype=np.uint8)
    arrays["__digest__"] = np.frombuffer(_digest(arrays, meta_bytes).encode(), dtype=np.uint8)
    if key is not None:
        arrays["__signature__"] = np.frombuffer(_digest(arrays, meta_bytes, key).encode(),
                                                dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy's stub: **kwds vs allow_pickle


def load(path: str | os.PathLike, *, key: bytes | str | None = None,
         max_bytes: int = MAX_FILE_BYTES, spec: Any = None, decision: Any = None) -> Any:
    """Read a model written by :func:`save`.

    Parameters
    ----------
    spec, decision : optional, for a :class:`~primaldual.Variant` only
        A model file holds numbers, never code: a ``Variant`` is stored as its expansion
        (support vectors, coefficients, intercepts, kernel), which predicts without the spec.
        Pass the spec (and decision) it was fitted with to get an estimator that can also be
        refitted, cloned and cross-validated; the spec's printed primal must match the
        fingerprint stored in the file (``ModelFileError`` otherwise).
    key : bytes or str, optional
        The secret the file was signed with: unsigned files and files whose HMAC-SHA256
        signature does not match are refused.
    max_bytes : int
        Largest file accepted (default 1 GiB).

    Raises
    ------
    ModelFileError
        On anything wrong with the file (size, zip structure, array headers and types,
        metadata schema, digest, signature, a model that cannot predict).
    FileNotFoundError
        When ``path`` does not exist.
    """
    key = _check_key(key)
    path = _check_path(path)
    max_bytes = _check_max_bytes(max_bytes)
    where = repr(path)
    raw = _read_regular_file(path, where, max_bytes)
    arrays = _read_members(raw, where)
    if "__meta__" not in arrays or "__digest__" not in arrays:
        raise ModelFileError(f"{where} has no primaldual metadata")
    meta_arr, digest_arr = arrays["__meta__"], arrays["__digest__"]
    _need(meta_arr.dtype == np.uint8 and meta_arr.ndim == 1 and meta_arr.size <= _MAX_META_BYTES,
          where, "metadata must be a 1-D uint8 array of at most 16 MiB")
    _need(digest_arr.dtype == np.uint8 and digest_arr.shape == (64,), where,
          "digest must be 64 hexadecimal characters")
    meta_bytes = meta_arr.tobytes()
    digest = digest_arr.tobytes().decode("ascii", "replace")
    if not hmac.compare_digest(_digest(arrays, meta_bytes), digest):
        raise ModelFileError(f"{where} failed its integrity check (tampered or corrupted)")
    if key is not None:
        sig = arrays.get("__signature__")
        _need(sig is not None, where, "is not signed, but a key was given: refusing an "
              "unsigned file")
        assert sig is not None  # _need raised otherwise
        _need(sig.dtype == np.uint8 and sig.shape == (64,)
              and hmac.compare_digest(_digest(arrays, meta_bytes, key),
                                      sig.tobytes().decode("ascii", "replace")), where,
              "signature does not match the key (tampered, or signed with another key)")
    for k in _SPECIAL:
        arrays.pop(k, None)
    try:
        meta = json.loads(meta_bytes.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise ModelFileError(f"{where}: metadata is not valid JSON ({exc})") from exc
    _check_widths(meta, 2 * len(raw), where)
    pre = {k: arrays.pop(k) for k in _PRE_ARRAYS if k in arrays}
    classes = _classes()
    if isinstance(meta, dict) and meta.get("class") == "Variant":
        return _guarded(lambda: _build_variant(meta, arrays, where, spec, decision), where)
    if spec is not None or decision is not None:
        raise TypeError("load: spec and decision are for a Variant's model file; "
                        f"{where} holds a {meta.get('class') if isinstance(meta, dict) else '?'}")
    own = {"EnclosingBall": _build_ball, "RVR": _build_rvm, "RVC": _build_rvm,
           "GPClassifier": _build_gp, "KernelPCA": _build_kpca, "TwinSVC": _build_twin}
    if isinstance(meta, dict) and meta.get("class") in own:
        build = own[meta["class"]]
        model = _guarded(lambda: build(meta, arrays, where), where)
        _attach_preprocessing(model, meta, pre, where)
        return model
    if isinstance(meta, dict) and "multiclass" in meta:
        model = _guarded(lambda: _build_multiclass(meta, arrays, classes, where), where)
    else:
        _check_meta(meta, where, classes)
        unpack_sparse(arrays, where, ModelFileError)
        _check_arrays(arrays, meta, where)
        model = _guarded(lambda: _build(meta, arrays, classes), where)
    _attach_preprocessing(model, meta, pre, where)
    return model
