"""The model file's format, shared by the writer and the reader: the schema of its arrays,
the storable classes, the digest (or HMAC signature), and the checks of the arguments of
:func:`~primaldual.persistence.save` and :func:`~primaldual.persistence.load`."""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any

import numpy as np

from ..catalogue import NAMES, method_class

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


#: The multiclass layout (scikit-learn's attributes of the whole model) stored with a
#: multiclass file, name -> (dtype kinds, ndim).
_LAYOUT_SCHEMA = {"support_": ("iu", 1), "support_vectors_": ("f", 2), "dual_coef_": ("f", 2),
                  "intercept_": ("f", 1), "n_support_": ("iu", 1), "n_iter_": ("iu", 1)}


#: A Variant's arrays: name -> (dtype kinds, ndim).
_VARIANT_SCHEMA = {"support_vectors_": ("f", 2), "dual_coef_": ("f", 2), "support_": ("iu", 1),
                   "intercept_": ("f", 1), "linear_coef_": ("f", 2), "diag_coef_": ("f", 1)}
_VARIANT_TASKS = ("classification", "regression", "ordinal", "novelty", "ranking")


def _classes() -> dict[str, type]:
    """The storable classes: the catalogue's primal-dual methods."""
    return {name: method_class(name) for name in NAMES}


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
