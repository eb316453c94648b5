"""Saving and loading fitted models without pickle: one ``.npz`` of plain arrays + JSON metadata.

The file holds numeric arrays only (``np.load(..., allow_pickle=False)``), and a JSON document
(stored as a UTF-8 byte array) with the schema version, library version, class name, kernel,
hyper-parameters, intercept, classes and certificate, plus a SHA-256 digest over every array and
the metadata, so a truncated, tampered or foreign file raises :class:`ModelFileError` instead of
loading. Nothing in the file names code: the class is looked up in a fixed table of primaldual's
own estimators.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from typing import Any

import numpy as np

from .catalogue import NAMES, method_class
from .exceptions import ModelFileError

__all__ = ["ModelFileError", "SCHEMA_VERSION", "load", "save"]

SCHEMA_VERSION = 1
_ARRAYS = ("support_vectors_", "dual_coef_", "support_", "alpha_", "alpha_star_", "beta_",
           "free_support_", "bounded_support_")


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


def _digest(arrays: dict[str, np.ndarray], meta_bytes: bytes) -> str:
    h = hashlib.sha256(meta_bytes)
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        h.update(k.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save(model: Any, path: str | os.PathLike) -> None:
    """Write a fitted primaldual estimator to ``path`` (``.npz``)."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd
    name = type(model).__name__
    if name not in _classes():
        raise TypeError(f"model must be a primaldual estimator, got {name}")
    if getattr(model, "estimators_", None) is not None:
        raise TypeError("saving multiclass models is not supported yet; save each binary model")
    check_is_fitted(model, "beta_")
    arrays = {k: np.asarray(getattr(model, k)) for k in _ARRAYS if hasattr(model, k)}
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
        "class": name,
        "params": _jsonable(model.get_params()),
        "kernel": model.kernel_.to_dict(),
        "intercept": float(model.intercept_),
        "n_features_in": int(model.n_features_in_),
        "classes": None if classes is None else _jsonable(classes),
        "classes_dtype": None if classes is None else str(np.asarray(classes).dtype),
        "certificate": _jsonable(model.certificate_.to_dict()),
        "backend": model.backend_,
        "lowrank": lowrank_meta,
    }
    meta_bytes = json.dumps(meta, sort_keys=True).encode("utf-8")
    arrays["__meta__"] = np.frombuffer(meta_bytes, dtype=np.uint8)
    arrays["__digest__"] = np.frombuffer(_digest(arrays, meta_bytes).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def _restore_param(v: Any) -> Any:
    from .kernels import kernel_from_dict
    if isinstance(v, dict) and "__kernel__" in v:
        return kernel_from_dict(v["__kernel__"])
    if v in ("inf", "-inf", "nan"):
        return float(v)
    return v


def load(path: str | os.PathLike) -> Any:
    """Read a model written by :func:`save`; raises :class:`ModelFileError` on any mismatch."""
    from .kernels import kernel_from_dict
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError) as exc:
        raise ModelFileError(f"{os.fspath(path)!r} is not a readable primaldual model file "
                             f"(truncated or not an .npz): {exc}") from exc
    if "__meta__" not in arrays or "__digest__" not in arrays:
        raise ModelFileError(f"{os.fspath(path)!r} has no primaldual metadata")
    meta_bytes = arrays.pop("__meta__").tobytes()
    digest = arrays.pop("__digest__").tobytes().decode("ascii", "replace")
    check = dict(arrays)
    check["__meta__"] = np.frombuffer(meta_bytes, dtype=np.uint8)
    if _digest(check, meta_bytes) != digest:
        raise ModelFileError(f"{os.fspath(path)!r} failed its integrity check (tampered or "
                             "corrupted)")
    try:
        meta = json.loads(meta_bytes.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{os.fspath(path)!r}: metadata is not valid JSON") from exc
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise ModelFileError(f"{os.fspath(path)!r} has schema version "
                             f"{meta.get('schema_version')!r}; this primaldual reads "
                             f"version {SCHEMA_VERSION}")
    classes = _classes()
    if meta.get("class") not in classes:
        raise ModelFileError(f"{os.fspath(path)!r} names an unknown model class "
                             f"{meta.get('class')!r}; allowed: {sorted(classes)}")
    cls = classes[meta["class"]]
    params = {k: _restore_param(v) for k, v in meta["params"].items()}
    model = cls(**params)
    lowrank = {k[len("lowrank__"):]: arrays.pop(k) for k in list(arrays)
               if k.startswith("lowrank__")}
    eta = arrays.pop("eta_", None)
    for k, v in arrays.items():
        if k not in _ARRAYS:
            raise ModelFileError(f"{os.fspath(path)!r} holds an unexpected array {k!r}")
        setattr(model, k, v)
    model.eta_, model.lowrank_factor_ = None, None
    if meta.get("lowrank") is not None and eta is not None:
        from .kernels import LowRankFactor
        model.eta_ = eta
        model.lowrank_factor_ = LowRankFactor.from_dict({**meta["lowrank"], **lowrank})
    model.kernel_ = kernel_from_dict(meta["kernel"])
    model.intercept_ = float(meta["intercept"])
    model.n_features_in_ = int(meta["n_features_in"])
    if meta.get("classes") is not None:
        model.classes_ = np.asarray(meta["classes"], dtype=meta["classes_dtype"])
    from .certificate import Certificate
    c = meta["certificate"]
    model.certificate_ = Certificate(c["primal_objective"], c["dual_objective"],
                                     c["duality_gap"], c["relative_gap"], c["kkt"], {},
                                     c["status"], c.get("extra", {}))
    model.backend_ = meta.get("backend")
    return model
