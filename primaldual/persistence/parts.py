"""What a file holds for each kind of estimator: the arrays and JSON metadata of a binary (or
regression) model, of a multiclass model (its sub-models packed per array name) and of a
:class:`~primaldual.Variant` (its expansion, never its spec)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .format import _ARRAYS, _LAYOUT_SCHEMA, SCHEMA_VERSION
from .sparse import pack_sparse


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


def _sparse_flags(model: Any) -> list[bool]:
    """Whether the model was fitted on sparse X, and whether it predicts from sparse rows:
    ``predict`` accepts sparse input only then, so a loaded model must know it too."""
    return [bool(getattr(model, "_sparse", False)), bool(getattr(model, "_sparse_rows", False))]


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


def _is_variant(model: Any) -> bool:
    from ..methods.variant import Variant
    return isinstance(model, Variant)


def _variant_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """A fitted :class:`~primaldual.Variant` as arrays and metadata: its expansion
    ``f(x) = K(x, SV) dual_coef_^T + x^T linear_coef_ + intercept_ + k(x, x) diag_coef_``
    (what predicts), never the spec (code); the spec's fingerprint lets ``load(spec=...)``
    check it is the same."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd

    from ..methods.variant import spec_fingerprint
    check_is_fitted(model, "dual_coef_")
    arrays = {k: np.asarray(getattr(model, k)) for k in ("support_vectors_", "dual_coef_",
                                                          "support_", "intercept_")}
    if model.linear_coef_ is not None:
        arrays["linear_coef_"] = np.asarray(model.linear_coef_)
    if getattr(model, "diag_coef_", None) is not None:
        arrays["diag_coef_"] = np.asarray(model.diag_coef_)
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
