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
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import math
import os
import stat
import zipfile
from typing import Any

import numpy as np
import scipy.sparse as sp

from .catalogue import NAMES, method_class
from .exceptions import ModelFileError
from .persistence_sparse import CSR_PARTS, pack_sparse, unpack_sparse

__all__ = ["MAX_FILE_BYTES", "ModelFileError", "SCHEMA_VERSION", "load", "preprocess", "save"]

SCHEMA_VERSION = 1
#: Default cap on a model file's size (bytes); ``load(..., max_bytes=)`` overrides it.
MAX_FILE_BYTES = 1 << 30
_MAX_META_BYTES = 1 << 24
_ARRAYS = ("support_vectors_", "dual_coef_", "support_", "alpha_", "alpha_star_", "beta_",
           "free_support_", "bounded_support_", "n_support_")
#: Array schema: name -> (dtype kinds allowed, ndim).
_ARRAY_SCHEMA = {
    "support_vectors_": ("f", 2), "dual_coef_": ("f", 2), "support_": ("iu", 1),
    "alpha_": ("f", 1), "alpha_star_": ("f", 1), "beta_": ("f", 1),
    "free_support_": ("iu", 1), "bounded_support_": ("iu", 1), "n_support_": ("iu", 1),
    "eta_": ("f", 1),
    "lowrank__V": ("f", 2), "lowrank__basis_index": ("iu", 1), "lowrank__basis": ("f", 2),
    "lowrank__proj": ("f", 2),
}
_SPECIAL = ("__meta__", "__digest__", "__signature__")
#: Zip general-purpose flags the reader refuses: encrypted (bit 0), compressed patched data
#: (bit 5), strong encryption (bit 6); numpy never writes them.
_BAD_ZIP_FLAGS = 0x1 | 0x20 | 0x40
#: The load-time predict check reads one row of ``n_features_in`` floats: its width must be
#: backed by the data present (at most twice the file's bytes, or this floor).
_MIN_ROW_BYTES = 1 << 20
#: The preprocessing record a file may carry (the CLI's standardisation): arrays
#: ``pre__mean`` and ``pre__scale``, ``x -> (x - mean) / scale``.
_PRE_ARRAYS = ("pre__mean", "pre__scale")


def _classes() -> dict[str, type]:
    """The storable classes: the catalogue's primal-dual methods."""
    return {name: method_class(name) for name in NAMES}


def _jsonable(v: Any) -> Any:
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (str, int, float, bool)) or v is None:
        if isinstance(v, float) and not np.isfinite(v):
            return repr(v)
        return v
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if hasattr(v, "to_dict"):
        return {"__kernel__": v.to_dict()}
    raise TypeError(f"cannot store parameter value of type {type(v).__name__}")


def _check_preprocessing(pre: Any, n_features: int, where: str) -> dict[str, Any]:
    """A standardisation record ``{"mean", "scale"}``: finite float arrays of length
    ``n_features``, ``scale > 0`` (``ValueError`` naming what is wrong)."""
    if not isinstance(pre, dict) or set(pre) - {"kind", "mean", "scale"} \
            or pre.get("kind", "standardize") != "standardize":
        raise ValueError(f"{where} must be a dict {{'mean': array, 'scale': array}}")
    out: dict[str, Any] = {"kind": "standardize"}
    for k in ("mean", "scale"):
        a = np.asarray(pre.get(k), dtype=np.float64) if pre.get(k) is not None else None
        if a is None or a.shape != (n_features,) or not np.all(np.isfinite(a)):
            raise ValueError(f"{where}: {k} must be {n_features} finite numbers")
        out[k] = a
    if not np.all(out["scale"] > 0):
        raise ValueError(f"{where}: scale must be > 0")
    return out


def preprocess(model: Any, X: Any) -> np.ndarray:
    """``X`` through the preprocessing a loaded model carries (``preprocessing_``:
    ``(X - mean) / scale``), unchanged when it carries none."""
    X = np.asarray(X, dtype=np.float64)
    pre = getattr(model, "preprocessing_", None)
    if pre is None:
        return X
    return (X - pre["mean"]) / pre["scale"]


def _check_key(key: Any) -> bytes | None:
    if key is None:
        return None
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, (bytes, bytearray)) or len(key) == 0:
        raise TypeError("key must be a non-empty bytes or str secret")
    return bytes(key)


def _digest(arrays: dict[str, np.ndarray], meta_bytes: bytes, key: bytes | None = None) -> str:
    """SHA-256 (or, with ``key``, HMAC-SHA256) over the metadata and every array except the
    digest and signature themselves."""
    h = hmac.new(key, meta_bytes, hashlib.sha256) if key else hashlib.sha256(meta_bytes)
    for k in sorted(arrays):
        if k in ("__digest__", "__signature__"):
            continue
        a = np.ascontiguousarray(arrays[k])
        h.update(k.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _check_path(path: Any, name: str = "path") -> str:
    """``path`` as a string: a ``str`` or ``os.PathLike`` (not a file descriptor, not bytes)."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike file path, got "
                        f"{type(path).__name__}")
    out = os.fspath(path)
    if not isinstance(out, str):
        raise TypeError(f"{name} must be a str or os.PathLike of str, got bytes")
    return out


def _check_max_bytes(max_bytes: Any) -> int:
    """``max_bytes`` as a positive int (a bool or float is refused, not truncated)."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)):
        raise TypeError(f"max_bytes must be a positive int, got {type(max_bytes).__name__}")
    if int(max_bytes) <= 0:
        raise ValueError(f"max_bytes must be a positive int, got {max_bytes}")
    return int(max_bytes)


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
    elif name not in _classes():
        if type(model).__module__.split(".")[0] == "primaldual":
            raise TypeError(f"model: saving a {name} is not supported (save writes the "
                            f"kernel-expansion estimators: {', '.join(sorted(_classes()))} "
                            "and Variant)")
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


#: The multiclass layout (scikit-learn's attributes of the whole model) stored with a
#: multiclass file, name -> (dtype kinds, ndim).
_LAYOUT_SCHEMA = {"support_": ("iu", 1), "support_vectors_": ("f", 2), "dual_coef_": ("f", 2),
                  "intercept_": ("f", 1), "n_support_": ("iu", 1), "n_iter_": ("iu", 1)}


def _sparse_flags(model: Any) -> list[bool]:
    """Whether the model was fitted on sparse X, and whether it predicts from sparse rows:
    ``predict`` accepts sparse input only then, so a loaded model must know it too."""
    return [bool(getattr(model, "_sparse", False)), bool(getattr(model, "_sparse_rows", False))]


def _restore_sparse_flags(model: Any, meta: dict) -> None:
    flags = meta.get("sparse_input", [False, False])
    if not (isinstance(flags, list) and len(flags) == 2
            and all(isinstance(f, bool) for f in flags)):
        raise ModelFileError("sparse_input must be a list of two booleans")
    model._sparse, model._sparse_rows = flags


def _multiclass_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """A multiclass model as one file: the binary sub-models' arrays concatenated per name
    (``mc__<name>``, with offsets ``mc__off__<name>``; ``dual_coef_`` raveled), the rows of
    each sub-problem (``mc__rows``), the whole model's scikit-learn layout (``mcl__<name>``)
    and, in the metadata, each sub-model's own metadata, the code matrix and decoding."""
    import primaldual as pd
    subs = [_model_parts(e) for e in model.estimators_]
    names = sorted(set().union(*(a.keys() for a, _ in subs)))
    arrays: dict[str, np.ndarray] = {}
    for nm in names + ["rows"]:
        parts = ([np.asarray(r, dtype=np.int64) for r in model.estimator_rows_] if nm == "rows"
                 else [a[nm].ravel() if nm == "dual_coef_" else a[nm] for a, _ in subs])
        arrays["mc__" + nm] = np.concatenate(parts, axis=0)
        arrays["mc__off__" + nm] = np.r_[0, np.cumsum([p.shape[0] for p in parts])].astype(
            np.int64)
    layout = pack_sparse({nm: getattr(model, nm) if sp.issparse(getattr(model, nm))
                          else np.asarray(getattr(model, nm))
                          for nm in _LAYOUT_SCHEMA if hasattr(model, nm)})
    arrays.update({"mcl__" + nm: a for nm, a in layout.items()})
    decoding, loss = model.decoding_
    classes = model.classes_
    meta = {
        "schema_version": SCHEMA_VERSION,
        "library_version": pd.__version__,
        "class": type(model).__name__,
        "params": _jsonable(model.get_params()),
        "n_features_in": int(model.n_features_in_),
        "classes": _jsonable(classes),
        "classes_dtype": str(np.asarray(classes).dtype),
        "multiclass": {"strategy": model.multiclass_strategy_, "decoding": decoding,
                       "loss": loss if isinstance(loss, str) or loss is None else "callable",
                       "codes": np.asarray(model.codes_).astype(int).tolist(),
                       "estimators": [m for _, m in subs]},
        "sparse_input": _sparse_flags(model),
    }
    return arrays, meta


def _model_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and the metadata of a fitted binary (or regression) model."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd
    check_is_fitted(model, "beta_")
    arrays = pack_sparse({k: getattr(model, k) if sp.issparse(getattr(model, k))
                          else np.asarray(getattr(model, k)) for k in _ARRAYS if hasattr(model, k)})
    lowrank_meta = None
    if getattr(model, "eta_", None) is not None and getattr(model, "lowrank_factor_", None):
        # the low-rank map v(x) and eta: predictions f(x) = v(x)^T eta + b
        arrays["eta_"] = np.asarray(model.eta_)
        lowrank_meta = {}
        for k, v in model.lowrank_factor_.to_dict().items():
            if isinstance(v, np.ndarray):
                arrays["lowrank__" + k] = v
            else:
                lowrank_meta[k] = _jsonable(v)
    classes = getattr(model, "classes_", None)
    meta = {
        "schema_version": SCHEMA_VERSION,
        "library_version": pd.__version__,
        "class": type(model).__name__,
        "params": _jsonable(model.get_params()),
        "kernel": model.kernel_.to_dict(),
        "intercept": float(np.ravel(model.intercept_)[0]),
        "b": float(getattr(model, "b_", np.ravel(model.intercept_)[0])),
        "n_features_in": int(model.n_features_in_),
        "classes": None if classes is None else _jsonable(classes),
        "classes_dtype": None if classes is None else str(np.asarray(classes).dtype),
        "certificate": _jsonable(model.certificate_.to_dict()),
        "backend": model.backend_,
        "lowrank": lowrank_meta,
        "sparse_input": _sparse_flags(model),
    }
    return arrays, meta


# ----------------------------------------------------------------------------- reading
def _read_members(raw: bytes, where: str) -> dict[str, np.ndarray]:
    """The ``.npy`` members of an uncompressed zip, each header checked before its data."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError,
            RuntimeError, NotImplementedError) as exc:  # e.g. "zip file version 9.9"

        raise ModelFileError(f"{where} is not a readable primaldual model file (truncated or "
                             f"not an .npz): {exc}") from exc
    if len(infos) > 64:
        raise ModelFileError(f"{where} has {len(infos)} entries; a model file has at most 16")
    total = 0
    for info in infos:
        if info.flag_bits & _BAD_ZIP_FLAGS:
            raise ModelFileError(f"{where}: entry {info.filename!r} has zip flags "
                                 f"{info.flag_bits:#x} (encrypted or patched data); primaldual "
                                 "writes plain uncompressed .npz files")
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise ModelFileError(f"{where}: entry {info.filename!r} is compressed; primaldual "
                                 "writes uncompressed .npz files (a compressed entry could "
                                 "expand without bound)")
        total += info.file_size
        if not info.filename.endswith(".npy") or info.file_size > len(raw) or total > len(raw):
            raise ModelFileError(f"{where}: entry {info.filename!r} (declared "
                                 f"{info.file_size} bytes) does not fit in a file of "
                                 f"{len(raw)} bytes")
    out: dict[str, np.ndarray] = {}
    for info in infos:
        name = info.filename[:-4]
        if name in out:
            raise ModelFileError(f"{where}: entry {name!r} appears twice")
        try:
            with zf.open(info) as fh:
                data = fh.read(info.file_size + 1)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError,
                NotImplementedError) as exc:
            raise ModelFileError(f"{where}: entry {name!r} is unreadable: {exc}") from exc
        if len(data) != info.file_size:
            raise ModelFileError(f"{where}: entry {name!r} has {len(data)} bytes, its directory "
                                 f"says {info.file_size}")
        out[name] = _parse_npy(data, name, where)
    return out


def _parse_npy(data: bytes, name: str, where: str) -> np.ndarray:
    fmt = np.lib.format
    fh = io.BytesIO(data)
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh, max_header_size=10000)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh, max_header_size=10000)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except (ValueError, OSError, EOFError, SyntaxError, TypeError, RecursionError,
            MemoryError) as exc:
        raise ModelFileError(f"{where}: array {name!r} has a bad .npy header: {exc}") from exc
    if dtype.hasobject or dtype.kind not in "biuf" or dtype.fields is not None \
            or dtype.subdtype is not None:
        raise ModelFileError(f"{where}: array {name!r} has dtype {dtype}; only numeric arrays "
                             "are allowed")
    if len(shape) > 3 or any(not isinstance(s, int) or s < 0 for s in shape):
        raise ModelFileError(f"{where}: array {name!r} has an invalid shape {shape}")
    body = len(data) - fh.tell()
    if math.prod(shape) * dtype.itemsize != body:
        raise ModelFileError(f"{where}: array {name!r} declares shape {shape} of {dtype} "
                             f"({math.prod(shape) * dtype.itemsize} bytes) but holds {body}")
    arr = np.frombuffer(data, dtype=dtype, offset=fh.tell()).copy()
    return arr.reshape(shape, order="F" if fortran else "C")


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise ModelFileError(f"{where}: {what}")


def _base_name(name: str) -> str:
    """The array a packed CSR part belongs to (``name`` itself when it is not a part)."""
    for suffix in CSR_PARTS:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _classes_array(labels: Any, dtype: str, where: str) -> np.ndarray:
    """The fitted ``classes_``: unique labels that survive their stored dtype unchanged (a
    ``'<U1'`` dtype would truncate ``'ab'`` to ``'a'`` and merge classes silently)."""
    try:
        exact = np.asarray(labels)
        out = np.asarray(labels, dtype=dtype)
        same = out.shape == exact.shape and bool(np.all(out.astype(exact.dtype) == exact))
    except (TypeError, ValueError, OverflowError) as exc:
        raise ModelFileError(f"{where}: classes do not fit classes_dtype {dtype!r}") from exc
    _need(out.ndim == 1 and same, where,
          f"classes {exact.tolist()!r} are not representable in classes_dtype {dtype!r}")
    _need(np.unique(out).shape[0] == out.shape[0], where, "classes are not unique")
    return out


def _check_arrays(arrays: dict[str, np.ndarray], meta: dict, where: str) -> None:
    d = meta["n_features_in"]
    for k, a in arrays.items():
        _need(k in _ARRAY_SCHEMA, where, f"unexpected array {k!r}")
        kinds, ndim = _ARRAY_SCHEMA[k]
        _need(a.dtype.kind in kinds and a.ndim == ndim, where,
              f"array {k!r} must be {ndim}-D of kind {kinds!r}, got {a.ndim}-D {a.dtype}")
        if a.dtype.kind == "f":
            # save writes float64 only: a narrower float is a forged or converted file
            _need(a.dtype == np.float64, where, f"array {k!r} must be float64, got {a.dtype}")
            vals = a.data if sp.issparse(a) else a
            _need(bool(np.all(np.isfinite(vals))), where, f"array {k!r} has non-finite values")
    for k in ("support_vectors_", "dual_coef_", "support_", "beta_"):
        _need(k in arrays, where, f"array {k!r} is missing")
    n = arrays["beta_"].shape[0]
    n_sv = arrays["support_"].shape[0]
    _need(arrays["support_vectors_"].shape == (n_sv, d), where,
          f"support_vectors_ must have shape ({n_sv}, {d}), got "
          f"{arrays['support_vectors_'].shape}")
    _need(arrays["dual_coef_"].shape == (1, n_sv), where,
          "dual_coef_ and support_ differ in length (dual_coef_ must be (1, n_SV))")
    for k in ("alpha_", "alpha_star_"):
        if k in arrays:
            _need(arrays[k].shape == (n,), where, f"{k} must have length {n}")
    for k in ("support_", "free_support_", "bounded_support_"):
        if k in arrays:
            a = arrays[k]
            _need(a.size == 0 or (int(a.min()) >= 0 and int(a.max()) < n), where,
                  f"{k} indexes outside 0..{n - 1}")
    if "eta_" in arrays:
        V = arrays.get("lowrank__V")
        _need(V is not None and V.shape[1] == arrays["eta_"].shape[0], where,
              "eta_ and the low-rank factor differ in rank")


def _check_header(meta: Any, where: str, classes: dict[str, type]) -> None:
    """Schema version, model class and its hyper-parameter names (binary and multiclass)."""
    _need(meta.get("schema_version") == SCHEMA_VERSION, where,
          f"has schema version {meta.get('schema_version')!r}; this primaldual reads version "
          f"{SCHEMA_VERSION}")
    _need(isinstance(meta.get("class"), str) and meta["class"] in classes, where,
          f"names an unknown model class {meta.get('class')!r}; allowed: {sorted(classes)}")
    _need(isinstance(meta.get("params"), dict), where, "params must be a JSON object")
    allowed = set(classes[meta["class"]]().get_params(deep=False))
    bad = sorted(set(meta["params"]) - allowed)
    _need(not bad, where, f"unknown hyper-parameter(s) {bad} for {meta['class']}")


def _check_meta(meta: Any, where: str, classes: dict[str, type]) -> None:
    _need(isinstance(meta, dict), where, "metadata is not a JSON object")
    _check_header(meta, where, classes)
    _need(isinstance(meta.get("kernel"), dict), where, "kernel must be a JSON object")
    _need(_is_num(meta.get("intercept")) and math.isfinite(meta["intercept"]), where,
          "intercept must be a finite number")
    nf = meta.get("n_features_in")
    _need(isinstance(nf, int) and not isinstance(nf, bool) and 1 <= nf <= 10**8, where,
          "n_features_in must be a positive integer")
    classifier = getattr(classes[meta["class"]], "_task", None) == "classification"
    _need((meta.get("classes") is not None) == classifier, where,
          f"classes must be {'a list of two labels' if classifier else 'null'} for "
          f"{meta['class']}")
    if meta.get("classes") is not None:
        _need(isinstance(meta["classes"], list) and len(meta["classes"]) == 2
              and all(isinstance(c, (str, int, float)) for c in meta["classes"]), where,
              "classes must be a list of two labels")
        _need(isinstance(meta.get("classes_dtype"), str) and meta["classes_dtype"][:2]
              in ("in", "ui", "fl", "<U", "bo", "st", "|S", "ob"), where,
              f"classes_dtype {meta.get('classes_dtype')!r} is not allowed")
    c = meta.get("certificate")
    _need(isinstance(c, dict), where, "certificate must be a JSON object")
    for k in ("primal_objective", "dual_objective", "duality_gap", "relative_gap"):
        _need(_is_num(c.get(k)) or c.get(k) in ("nan", "inf", "-inf"), where,
              f"certificate field {k!r} must be a number")
    _need(isinstance(c.get("kkt"), dict) and all(_is_num(v) or v in ("nan", "inf")
                                                  for v in c["kkt"].values()), where,
          "certificate kkt must map names to numbers")
    _need(isinstance(c.get("status"), str), where, "certificate status must be a string")
    _need(isinstance(c.get("extra", {}), dict), where, "certificate extra must be an object")
    _need(meta.get("backend") is None or isinstance(meta["backend"], str), where,
          "backend must be a string")
    _need(meta.get("lowrank") is None or isinstance(meta["lowrank"], dict), where,
          "lowrank must be a JSON object")


def _restore_param(v: Any) -> Any:
    from .kernels import kernel_from_dict
    if isinstance(v, dict) and "__kernel__" in v:
        return kernel_from_dict(v["__kernel__"])
    if v in ("inf", "-inf", "nan"):
        return float(v)
    return v


def _num(v: Any) -> float:
    return float(v)


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
        try:
            return _build_variant(meta, arrays, where, spec, decision)
        except ModelFileError:
            raise
        except (Exception, RecursionError) as exc:
            raise ModelFileError(f"{where}: the stored model is inconsistent "
                                 f"({type(exc).__name__}: {exc})") from exc
    if spec is not None or decision is not None:
        raise TypeError("load: spec and decision are for a Variant's model file; "
                        f"{where} holds a {meta.get('class') if isinstance(meta, dict) else '?'}")
    if isinstance(meta, dict) and "multiclass" in meta:
        try:
            model = _build_multiclass(meta, arrays, classes, where)
        except ModelFileError:
            raise
        except (Exception, RecursionError) as exc:
            raise ModelFileError(f"{where}: the stored model is inconsistent "
                                 f"({type(exc).__name__}: {exc})") from exc
    else:
        _check_meta(meta, where, classes)
        unpack_sparse(arrays, where, ModelFileError)
        _check_arrays(arrays, meta, where)
        try:
            model = _build(meta, arrays, classes)
        except ModelFileError:
            raise
        except (Exception, RecursionError) as exc:  # anything else the schema did not foresee
            raise ModelFileError(f"{where}: the stored model is inconsistent "
                                 f"({type(exc).__name__}: {exc})") from exc
    _attach_preprocessing(model, meta, pre, where)
    return model


def _read_regular_file(path: str | os.PathLike, where: str, max_bytes: int) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes``: opened
    without blocking (``O_NONBLOCK``) and checked with ``fstat`` on the open descriptor, so a
    named pipe, a device or a directory is refused instead of read forever."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except (OSError, ValueError, TypeError) as exc:
        raise ModelFileError(f"{where} cannot be read: {exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a named pipe"
                    if stat.S_ISFIFO(st.st_mode) else "a device"
                    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a socket"
                    if stat.S_ISSOCK(st.st_mode) else "not a regular file")
            raise ModelFileError(f"{where} is {kind}; a model file must be a regular file")
        if st.st_size > max_bytes:
            raise ModelFileError(f"{where} is {st.st_size} bytes, more than "
                                 f"max_bytes={max_bytes}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            raw = fh.read(st.st_size + 1)
    except ModelFileError:
        raise
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"{where} cannot be read: {exc}") from exc
    finally:
        if fd >= 0:
            os.close(fd)
    if len(raw) > max_bytes:
        raise ModelFileError(f"{where} grew beyond max_bytes={max_bytes} while being read")
    return raw


def _check_widths(meta: Any, budget: int, where: str) -> None:
    """Every ``n_features_in`` the file declares (the model's and its sub-models') must be
    backed by the data present: the predict check reads one row of that many floats, so its
    bytes may not exceed ``budget`` (twice the file) or :data:`_MIN_ROW_BYTES`. A file of a
    few kB declaring ``n_features_in = 1e8`` is refused before anything is allocated."""
    if not isinstance(meta, dict):
        return
    metas = [meta]
    mc = meta.get("multiclass")
    if isinstance(mc, dict) and isinstance(mc.get("estimators"), list):
        metas += [m for m in mc["estimators"] if isinstance(m, dict)]
    limit = max(budget, _MIN_ROW_BYTES)
    for m in metas:
        nf = m.get("n_features_in")
        if isinstance(nf, int) and not isinstance(nf, bool) and 8 * nf > limit:
            raise ModelFileError(f"{where}: n_features_in = {nf} is not backed by the data in "
                                 f"the file ({limit // 2} bytes): one row of it would need "
                                 f"{8 * nf} bytes")


def _attach_preprocessing(model: Any, meta: dict, pre: dict[str, np.ndarray],
                          where: str) -> None:
    """Check the file's preprocessing record (both arrays or neither, matching the
    metadata) and attach it as ``model.preprocessing_`` (``None`` when absent)."""
    declared = meta.get("preprocessing")
    _need(declared is None or declared == {"kind": "standardize"}, where,
          f"unknown preprocessing {declared!r}; allowed: {{'kind': 'standardize'}}")
    _need((declared is None and not pre) or (declared is not None and len(pre) == 2), where,
          "the preprocessing record and its arrays pre__mean, pre__scale do not match")
    if declared is None:
        model.preprocessing_ = None
        return
    try:
        model.preprocessing_ = _check_preprocessing(
            {"mean": pre["pre__mean"], "scale": pre["pre__scale"]}, int(model.n_features_in_),
            "preprocessing")
    except (ValueError, TypeError) as exc:
        raise ModelFileError(f"{where}: {exc}") from exc
    model.preprocessing_["mean"].setflags(write=False)
    model.preprocessing_["scale"].setflags(write=False)


def _build(meta: dict, arrays: dict[str, np.ndarray], classes: dict[str, type]) -> Any:
    from .certificate import Certificate
    from .kernels import kernel_from_dict

    cls = classes[meta["class"]]
    model = cls(**{k: _restore_param(v) for k, v in meta["params"].items()})
    lowrank = {k[len("lowrank__"):]: arrays.pop(k) for k in list(arrays)
               if k.startswith("lowrank__")}
    eta = arrays.pop("eta_", None)
    for k, v in arrays.items():
        setattr(model, k, v)
    model.eta_, model.lowrank_factor_ = None, None
    if meta.get("lowrank") is not None and eta is not None:
        from .kernels import LowRankFactor
        model.eta_ = eta
        model.lowrank_factor_ = LowRankFactor.from_dict({**meta["lowrank"], **lowrank})
    model.kernel_ = kernel_from_dict(meta["kernel"])
    model.intercept_ = np.array([float(meta["intercept"])])
    model.b_ = float(meta.get("b", meta["intercept"]))
    model.n_features_in_ = int(meta["n_features_in"])
    if meta.get("classes") is not None:
        model.classes_ = _classes_array(meta["classes"], meta["classes_dtype"], "model file")
    c = meta["certificate"]
    model.certificate_ = Certificate(_num(c["primal_objective"]), _num(c["dual_objective"]),
                                     _num(c["duality_gap"]), _num(c["relative_gap"]),
                                     {k: _num(v) for k, v in c["kkt"].items()}, {},
                                     c["status"], c.get("extra", {}))
    model.backend_ = meta.get("backend")
    _restore_sparse_flags(model, meta)
    _predict_check(model)
    return model


def _predict_check(model: Any) -> None:
    """The model must predict: one row of zeros through the decision function and through
    ``predict`` (a classifier without its labels, for one, fails here, not at the user's first
    ``predict``); any error is raised to :func:`load`, which reports a ``ModelFileError``."""
    row = np.zeros((1, model.n_features_in_))
    if hasattr(model, "decision_function"):
        f = np.asarray(model.decision_function(row), dtype=float)
        # the training rows it keeps too: kernel parameters out of range (a poly degree of
        # 1e9) give finite values at 0 but overflow on real rows
        sv = getattr(model, "support_vectors_", None)
        if sv is not None and getattr(sv, "ndim", 0) == 2 and sv.shape[0]:
            with np.errstate(all="ignore"):
                f = np.append(f, np.asarray(model.decision_function(sv[:50]), dtype=float))
        if not np.all(np.isfinite(f)):
            raise ModelFileError("the stored model predicts a non-finite value (kernel "
                                 "parameters out of range?)")
    p = np.asarray(model.predict(row))
    if p.shape != (1,) or (p.dtype.kind == "f" and not np.all(np.isfinite(p))):
        raise ModelFileError("the stored model's predict does not return one finite value "
                             "per row")


def _build_multiclass(meta: dict, arrays: dict[str, np.ndarray], classes: dict[str, type],
                      where: str) -> Any:
    """A multiclass model from :func:`_multiclass_parts`' file: every sub-model passes the
    binary schema and checks on its own slice of the packed arrays."""
    mc = meta["multiclass"]
    _need(isinstance(mc, dict), where, "multiclass must be a JSON object")
    subs_meta = mc.get("estimators")
    _need(isinstance(subs_meta, list) and 1 <= len(subs_meta) <= 100_000, where,
          "multiclass estimators must be a non-empty list")
    _check_header(meta, where, classes)
    nf: Any = meta.get("n_features_in")
    _need(isinstance(nf, int) and not isinstance(nf, bool) and 1 <= nf <= 10**8, where,
          "n_features_in must be a positive integer")
    labels: Any = meta.get("classes")
    _need(isinstance(labels, list) and len(labels) >= 2
          and all(isinstance(c, (str, int, float)) for c in labels), where,
          "classes must be a list of at least two labels")
    _need(isinstance(meta.get("classes_dtype"), str) and meta["classes_dtype"][:2]
          in ("in", "ui", "fl", "<U", "bo", "st", "|S", "ob"), where,
          f"classes_dtype {meta.get('classes_dtype')!r} is not allowed")
    codes = np.asarray(mc.get("codes"))
    _need(codes.ndim == 2 and codes.shape == (len(labels), len(subs_meta))
          and codes.dtype.kind == "i" and bool(np.all(np.isin(codes, (-1, 0, 1)))), where,
          "codes must be a (n_classes, n_estimators) matrix of -1, 0, +1")
    _need(mc.get("strategy") in ("ovo", "ovr", "dag") or str(mc.get("strategy", "")).startswith(
        "coding-"), where, "unknown multiclass strategy")
    _need(mc.get("decoding") in ("vote", "argmax", "dag", "hamming", "loss"), where,
          "unknown decoding")
    _need(mc.get("loss") is None or mc.get("loss") in ("squared", "hinge", "exponential",
                                                         "linear"), where,
          "decoding loss must be a named loss (a callable is not stored)")
    packed: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for k, a in arrays.items():
        if k.startswith("mc__off__"):
            continue
        if k.startswith("mc__"):
            nm = k[4:]
            off = arrays.get("mc__off__" + nm)
            _need(off is not None and off.dtype.kind in "iu" and off.shape == (len(subs_meta) + 1,)
                  and int(off[0]) == 0 and int(off[-1]) == a.shape[0]
                  and bool(np.all(np.diff(off) >= 0)), where, f"offsets of {k!r} are invalid")
            _need(nm == "rows" or _base_name(nm) in _ARRAY_SCHEMA, where,
                  f"unexpected array {k!r}")
            packed[nm] = (a, np.asarray(off))
        elif k.startswith("mcl__") and _base_name(k[5:]) != k[5:]:
            _need(_base_name(k[5:]) in _LAYOUT_SCHEMA, where, f"unexpected array {k!r}")
        elif k.startswith("mcl__"):
            _need(k[5:] in _LAYOUT_SCHEMA, where, f"unexpected array {k!r}")
            kinds, ndim = _LAYOUT_SCHEMA[k[5:]]
            _need(a.dtype.kind in kinds and a.ndim == ndim, where,
                  f"array {k!r} must be {ndim}-D of kind {kinds!r}")
            if a.dtype.kind == "f":
                _need(bool(np.all(np.isfinite(a))), where, f"array {k!r} has non-finite values")
        else:
            _need(False, where, f"unexpected array {k!r}")
    _need("rows" in packed, where, "the sub-problems' rows are missing")
    subs = []
    for i, m in enumerate(subs_meta):
        _check_meta(m, where, classes)
        _need(m["class"] == meta["class"], where, "sub-models must be of the model's class")
        part = {nm: a[int(off[i]):int(off[i + 1])] for nm, (a, off) in packed.items()
                if nm != "rows"}
        if "dual_coef_" in part:
            part["dual_coef_"] = part["dual_coef_"].reshape(1, -1)
        unpack_sparse(part, where, ModelFileError)
        _check_arrays(part, m, where)
        subs.append(_build(m, part, classes))
    rows_a, rows_off = packed["rows"]
    _need(rows_a.dtype.kind in "iu" and rows_a.ndim == 1 and (rows_a.size == 0 or (
        int(rows_a.min()) >= 0)), where, "rows must be non-negative integers")
    cls = classes[meta["class"]]
    model = cls(**{k: _restore_param(v) for k, v in meta["params"].items()})
    model.classes_ = _classes_array(labels, meta["classes_dtype"], where)
    model.n_features_in_ = nf
    model.estimators_ = subs
    model.estimator_rows_ = [rows_a[int(rows_off[i]):int(rows_off[i + 1])]
                             for i in range(len(subs))]
    model.codes_ = codes.astype(np.int8)
    model.multiclass_strategy_ = mc["strategy"]
    model.decoding_ = (mc["decoding"], mc.get("loss"))
    model.certificates_ = [e.certificate_ for e in subs]
    layout = unpack_sparse({k: a for k, a in arrays.items() if k.startswith("mcl__")}, where,
                           ModelFileError)
    for k, a in layout.items():
        setattr(model, k[5:], a)
    _restore_sparse_flags(model, meta)
    _predict_check(model)
    return model


# ----------------------------------------------------------------------------- Variant (issue 26)
#: A Variant's arrays: name -> (dtype kinds, ndim).
_VARIANT_SCHEMA = {"support_vectors_": ("f", 2), "dual_coef_": ("f", 2), "support_": ("iu", 1),
                   "intercept_": ("f", 1), "linear_coef_": ("f", 2)}
_VARIANT_TASKS = ("classification", "regression", "ordinal", "novelty")


def _is_variant(model: Any) -> bool:
    from .methods.variant import Variant
    return isinstance(model, Variant)


def _variant_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """A fitted :class:`~primaldual.Variant` as arrays and metadata: its expansion
    ``f(x) = K(x, SV) dual_coef_^T + x^T linear_coef_ + intercept_`` (what predicts), never
    the spec (code); the spec's fingerprint lets ``load(spec=...)`` check it is the same."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd

    from .methods.variant import spec_fingerprint
    check_is_fitted(model, "dual_coef_")
    arrays = {k: np.asarray(getattr(model, k)) for k in ("support_vectors_", "dual_coef_",
                                                          "support_", "intercept_")}
    if model.linear_coef_ is not None:
        arrays["linear_coef_"] = np.asarray(model.linear_coef_)
    params = model.get_params(deep=False)
    own = {k: v for k, v in params.items() if k not in ("spec", "decision")}
    classes = getattr(model, "classes_", None)
    meta = {
        "schema_version": SCHEMA_VERSION,
        "library_version": pd.__version__,
        "class": "Variant",
        "params": _jsonable(own),
        "hyper": list(type(model)._hyper),
        "task": model._task(),
        "kernel": model.kernel_.to_dict(),
        "n_features_in": int(model.n_features_in_),
        "classes": None if classes is None else _jsonable(classes),
        "classes_dtype": None if classes is None else str(np.asarray(classes).dtype),
        "certificate": _jsonable(model.certificate_.to_dict()),
        "backend": model.backend_,
        "offset": getattr(model, "offset_", None),
        "spec_sha256": spec_fingerprint(model.spec),
    }
    return arrays, meta


def _build_variant(meta: dict, arrays: dict[str, np.ndarray], where: str, spec: Any,
                   decision: Any) -> Any:
    """A Variant from :func:`_variant_parts`' file, every field checked first."""
    from .certificate import Certificate
    from .kernels import kernel_from_dict
    from .methods.variant import _OWN, Variant, spec_fingerprint

    _need(meta.get("schema_version") == SCHEMA_VERSION, where,
          f"has schema version {meta.get('schema_version')!r}; this primaldual reads version "
          f"{SCHEMA_VERSION}")
    hyper: Any = meta.get("hyper")
    _need(isinstance(hyper, list) and all(isinstance(h, str) and h.isidentifier()
                                          for h in hyper), where,
          "hyper must be a list of parameter names")
    params: Any = meta.get("params")
    _need(isinstance(params, dict), where, "params must be a JSON object")
    bad = sorted(set(params) - set(_OWN) - set(hyper))
    _need(not bad, where, f"unknown hyper-parameter(s) {bad} for Variant")
    _need(meta.get("task") in _VARIANT_TASKS, where, f"task must be one of {_VARIANT_TASKS}")
    _need(isinstance(meta.get("kernel"), dict), where, "kernel must be a JSON object")
    nf: Any = meta.get("n_features_in")
    _need(isinstance(nf, int) and not isinstance(nf, bool) and 1 <= nf <= 10**8, where,
          "n_features_in must be a positive integer")
    for k, a in arrays.items():
        _need(k in _VARIANT_SCHEMA, where, f"unexpected array {k!r}")
        kinds, ndim = _VARIANT_SCHEMA[k]
        _need(a.dtype.kind in kinds and a.ndim == ndim, where,
              f"array {k!r} must be {ndim}-D of kind {kinds!r}, got {a.ndim}-D {a.dtype}")
        if a.dtype.kind == "f":
            _need(bool(np.all(np.isfinite(a))), where, f"array {k!r} has non-finite values")
    for k in ("support_vectors_", "dual_coef_", "support_", "intercept_"):
        _need(k in arrays, where, f"array {k!r} is missing")
    n_sv, kdec = arrays["support_"].shape[0], arrays["intercept_"].shape[0]
    _need(kdec >= 1, where, "intercept_ must have one entry per decision")
    _need(arrays["support_vectors_"].shape == (n_sv, nf), where,
          f"support_vectors_ must have shape ({n_sv}, {nf})")
    _need(arrays["dual_coef_"].shape == (kdec, n_sv), where,
          f"dual_coef_ must have shape ({kdec}, {n_sv})")
    if "linear_coef_" in arrays:
        _need(arrays["linear_coef_"].shape == (nf, kdec), where,
              f"linear_coef_ must have shape ({nf}, {kdec})")
    _need(arrays["support_"].size == 0 or int(arrays["support_"].min()) >= 0, where,
          "support_ must be non-negative indices")
    task = meta["task"]
    if task in ("classification", "ordinal"):
        labels: Any = meta.get("classes")
        _need(isinstance(labels, list) and len(labels) >= 2
              and all(isinstance(c, (str, int, float)) for c in labels)
              and (task == "ordinal" or len(labels) == 2), where,
              "classes must be a list of labels (two for classification)")
        _need(isinstance(meta.get("classes_dtype"), str) and meta["classes_dtype"][:2]
              in ("in", "ui", "fl", "<U", "bo", "st", "|S"), where,
              f"classes_dtype {meta.get('classes_dtype')!r} is not allowed")
    if task == "novelty":
        _need(_is_num(meta.get("offset")), where, "offset must be a number")
    c: Any = meta.get("certificate")
    _need(isinstance(c, dict) and isinstance(c.get("kkt"), dict)
          and isinstance(c.get("status"), str), where, "certificate must be a JSON object")
    for k in ("primal_objective", "dual_objective", "duality_gap", "relative_gap"):
        _need(_is_num(c.get(k)) or c.get(k) in ("nan", "inf", "-inf"), where,
              f"certificate field {k!r} must be a number")
    if spec is not None:
        _need(spec_fingerprint(spec) == meta.get("spec_sha256"), where,
              "the spec passed to load is not the one the model was fitted with (its printed "
              "primal differs)")
    kw = {k: _restore_param(v) for k, v in params.items() if k not in hyper}
    kw.update({h: _restore_param(params.get(h)) for h in hyper})
    model = Variant(spec, decision, **kw)
    for k, a in arrays.items():
        setattr(model, k, a)
    model.linear_coef_ = arrays.get("linear_coef_")
    model.kernel_ = kernel_from_dict(meta["kernel"])
    model.n_features_in_ = nf
    if task in ("classification", "ordinal"):
        model.classes_ = _classes_array(meta["classes"], meta["classes_dtype"], "model file")
    if task == "novelty":
        model.offset_ = float(meta["offset"])
    model.certificate_ = Certificate(_num(c["primal_objective"]), _num(c["dual_objective"]),
                                     _num(c["duality_gap"]), _num(c["relative_gap"]),
                                     {k: _num(v) for k, v in c["kkt"].items()}, {},
                                     c["status"], c.get("extra", {}))
    model.backend_ = meta.get("backend")
    model.status_ = c["status"]
    if spec is None:
        model._stored_task = task
    f = model._raw_decision(np.zeros((1, nf)))
    if not np.all(np.isfinite(f)):
        raise ModelFileError("the stored model predicts a non-finite value")
    return model
