"""Models from a checked file: a binary model, a multiclass model (each sub-model checked on
its own slice), a :class:`~primaldual.Variant`, and the predict check every loaded model
passes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import ModelFileError
from .format import (
    _ARRAY_SCHEMA,
    _LAYOUT_SCHEMA,
    _VARIANT_SCHEMA,
    _VARIANT_TASKS,
    SCHEMA_VERSION,
    _check_preprocessing,
)
from .reader import (
    CLASS_DTYPES,
    _base_name,
    _check_arrays,
    _check_header,
    _check_meta,
    _classes_array,
    _is_num,
    _need,
    check_array_schema,
    check_classes,
    check_n_features,
)
from .sparse import unpack_sparse


def _restore_param(v: Any) -> Any:
    from ..kernels import kernel_from_dict
    if isinstance(v, dict) and "__kernel__" in v:
        return kernel_from_dict(v["__kernel__"])
    if v in ("inf", "-inf", "nan"):
        return float(v)
    return v


def _num(v: Any) -> float:
    return float(v)


def _restore_sparse_flags(model: Any, meta: dict) -> None:
    flags = meta.get("sparse_input", [False, False])
    if not (isinstance(flags, list) and len(flags) == 2
            and all(isinstance(f, bool) for f in flags)):
        raise ModelFileError("sparse_input must be a list of two booleans")
    model._sparse, model._sparse_rows = flags


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
    from ..certificate import Certificate
    from ..kernels import kernel_from_dict

    cls = classes[meta["class"]]
    model = cls(**{k: _restore_param(v) for k, v in meta["params"].items()})
    lowrank = {k[len("lowrank__"):]: arrays.pop(k) for k in list(arrays)
               if k.startswith("lowrank__")}
    eta = arrays.pop("eta_", None)
    for k, v in arrays.items():
        setattr(model, k, v)
    model.eta_, model.lowrank_factor_ = None, None
    if meta.get("lowrank") is not None and eta is not None:
        from ..kernels import LowRankFactor
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
    nf = check_n_features(meta, where)
    labels = check_classes(meta, where, CLASS_DTYPES + ("ob",))
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
    model.classes_ = labels
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


def _build_variant(meta: dict, arrays: dict[str, np.ndarray], where: str, spec: Any,
                   decision: Any) -> Any:
    """A Variant from :func:`_variant_parts`' file, every field checked first."""
    from ..certificate import Certificate
    from ..kernels import kernel_from_dict
    from ..methods.variant import _OWN, Variant, spec_fingerprint

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
    nf = check_n_features(meta, where)
    check_array_schema(arrays, _VARIANT_SCHEMA, where)
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
    if "diag_coef_" in arrays:
        _need(arrays["diag_coef_"].shape == (kdec,), where,
              f"diag_coef_ must have shape ({kdec},)")
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
    model.diag_coef_ = arrays.get("diag_coef_")
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
