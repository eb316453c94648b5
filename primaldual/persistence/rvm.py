""":class:`~primaldual.RVR` and :class:`~primaldual.RVC` in a model file.

A binary RVM (an RVR, a two-class RVC, or one class of a one-vs-rest RVC) is a *unit*: what
its predictions read, the relevance rows, the posterior ``mu_`` and ``sigma_`` over the
model's columns, the precisions ``alpha_`` (and an RVR's noise ``beta_``), with the fit's
evidence and convergence record. Unit ``i``'s arrays are ``u<i>__<name>``, its scalars the
``i``-th entry of the metadata's ``units``; an RVR and a two-class RVC have one unit, a
one-vs-rest RVC one per class.

In the fitted model ``active_`` indexes the candidate basis ``[k(., x_1) .. k(., x_N), 1]``
of the ``N`` training rows; the file keeps only the relevance rows, so a loaded unit's
candidate basis is ``[k(., r_1) .. k(., r_m), 1]`` and its ``active_`` is renumbered onto it
(the same columns in the same order: predictions are bit for bit). ``relevance_`` keeps the
training indices.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import reader as rd
from .format import SCHEMA_VERSION

#: A unit's arrays: name -> (dtype kinds, ndim).
_UNIT_SCHEMA = {"relevance_vectors_": ("f", 2), "relevance_": ("iu", 1), "alpha_": ("f", 1),
                "mu_": ("f", 1), "sigma_": ("f", 2)}


def _is_rvm(model: Any) -> bool:
    from ..rvm import RVC, RVR
    return isinstance(model, (RVR, RVC))


def _unit_parts(est: Any, i: int) -> tuple[dict[str, np.ndarray], dict]:
    from .parts import _jsonable
    arrays = {f"u{i}__{k}": np.asarray(getattr(est, k)) for k in _UNIT_SCHEMA}
    meta = {"kernel": est.kernel_.to_dict(),
            "bias_in_model": bool(len(est.active_) > len(est.relevance_)),
            "log_marginal_likelihood": float(est.log_marginal_likelihood_value_),
            "optimality": _jsonable(float(est.optimality_)),
            "n_iter": int(est.n_iter_), "converged": bool(est.converged_)}
    if hasattr(est, "beta_"):
        meta["beta"] = float(est.beta_)
    return arrays, meta


def _rvm_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and metadata of a fitted RVR or RVC."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd

    from .parts import _jsonable
    check_is_fitted(model, "n_iter_")
    units = getattr(model, "estimators_", None) or [model]
    arrays: dict[str, np.ndarray] = {}
    metas = []
    for i, est in enumerate(units):
        a, m = _unit_parts(est, i)
        arrays.update(a)
        metas.append(m)
    classes = getattr(model, "classes_", None)
    meta = {"schema_version": SCHEMA_VERSION, "library_version": pd.__version__,
            "class": type(model).__name__, "params": _jsonable(model.get_params()),
            "n_features_in": int(model.n_features_in_), "units": metas,
            "classes": None if classes is None else _jsonable(classes),
            "classes_dtype": None if classes is None else str(np.asarray(classes).dtype)}
    return arrays, meta


def _check_unit(u: Any, arrays: dict[str, np.ndarray], i: int, nf: int, regression: bool,
                bias: bool, where: str) -> None:
    """Unit ``i``'s scalars and arrays against the schema (``ModelFileError`` naming them)."""
    w = f"{where}: unit {i}" if i else where
    rd._need(isinstance(u, dict), w, "must be a JSON object")
    rd._need(isinstance(u.get("kernel"), dict), w, "kernel must be a JSON object")
    for k in ("bias_in_model", "converged"):
        rd._need(isinstance(u.get(k), bool), w, f"{k} must be true or false")
    rd._need(bias or not u["bias_in_model"], w, "bias_in_model needs bias=True")
    if regression:
        beta: Any = u.get("beta")
        rd._need(rd._is_num(beta) and math.isfinite(beta) and beta > 0, w,
              "beta must be a finite number > 0")
    else:
        rd._need("beta" not in u, w, "a classifier has no noise precision beta")
    rd.check_unit_numbers(u, w, "optimality")
    for k in _UNIT_SCHEMA:
        rd._need(f"u{i}__{k}" in arrays, w, f"array {k!r} is missing")
    a = {k: arrays[f"u{i}__{k}"] for k in _UNIT_SCHEMA}
    for k, (kinds, ndim) in _UNIT_SCHEMA.items():
        v = a[k]
        rd._need(v.dtype.kind in kinds and v.ndim == ndim, w,
              f"array {k!r} must be {ndim}-D of kind {kinds!r}, got {v.ndim}-D {v.dtype}")
        if v.dtype.kind == "f":
            rd._need(v.dtype == np.float64, w, f"array {k!r} must be float64, got {v.dtype}")
            rd._need(bool(np.all(np.isfinite(v))), w, f"array {k!r} has non-finite values")
    rel = a["relevance_"]
    m = rel.shape[0] + int(u["bias_in_model"])
    rd._need(a["relevance_vectors_"].shape == (rel.shape[0], nf), w,
          f"relevance_vectors_ must have shape ({rel.shape[0]}, {nf})")
    rd._need(rel.size == 0 or (int(rel.min()) >= 0 and bool(np.all(np.diff(rel) > 0))), w,
          "relevance_ must be increasing training indices")
    for k, shape in (("alpha_", (m,)), ("mu_", (m,)), ("sigma_", (m, m))):
        rd._need(a[k].shape == shape, w, f"{k} must have shape {shape}")
    rd._need(bool(np.all(a["alpha_"] >= 0)), w, "alpha_ must be >= 0 (precisions)")
    S = a["sigma_"]
    # a posterior covariance (inverted from A + beta Phi^T Phi, or the Laplace Hessian, and
    # symmetrised by no one, so exact symmetry is not asked)
    scale = float(np.max(np.abs(S), initial=0.0))
    rd._need(bool(np.all(np.diag(S) >= 0)) and bool(np.all(np.abs(S - S.T) <= 1e-8 * scale)),
          w, "sigma_ must be a symmetric covariance")


def _build_unit(cls: type, params: dict, u: dict, arrays: dict[str, np.ndarray], i: int,
                nf: int) -> Any:
    from ..kernels import kernel_from_dict
    est = cls(**params)
    for k in _UNIT_SCHEMA:
        setattr(est, k, arrays[f"u{i}__{k}"])
    n_rv = est.relevance_vectors_.shape[0]
    est.relevance_ = est.relevance_.astype(np.intp, copy=False)
    est._Xtrain = est.relevance_vectors_
    est.active_ = np.arange(n_rv + int(u["bias_in_model"]))   # the bias column is n_rv
    est.coef_ = est.mu_[:n_rv]
    est.intercept_ = float(est.mu_[n_rv]) if u["bias_in_model"] else 0.0
    est.kernel_ = kernel_from_dict(u["kernel"])
    est.n_features_in_ = nf
    if "beta" in u:
        est.beta_ = float(u["beta"])
        est.noise_variance_ = 1.0 / est.beta_
    est.log_marginal_likelihood_value_ = float(u["log_marginal_likelihood"])
    est.optimality_ = float(u["optimality"])
    est.n_iter_ = int(u["n_iter"])
    est.converged_ = bool(u["converged"])
    return est


def _build_rvm(meta: dict, arrays: dict[str, np.ndarray], where: str) -> Any:
    """The RVR or RVC of a checked file; its predictions (an RVR's predictive deviations
    too) must be finite on a row of zeros and on its own relevance rows."""
    from ..rvm import RVC, RVR
    from .build import _restore_param

    cls = {"RVR": RVR, "RVC": RVC}[meta["class"]]
    regression = cls is RVR
    params = rd.check_own_header(meta, where, cls, meta["class"])
    nf = meta["n_features_in"]
    classes: np.ndarray | None = None
    if regression:
        rd._need(meta.get("classes") is None, where, "classes must be null for RVR")
        n_units = 1
    else:
        classes = rd.check_classes(meta, where)
        n_units = 1 if len(classes) == 2 else len(classes)
    units: Any = meta.get("units")
    rd._need(isinstance(units, list) and len(units) == n_units, where,
          f"units must be a list of {n_units} binary models")
    expected = {f"u{i}__{k}" for i in range(n_units) for k in _UNIT_SCHEMA}
    extra = sorted(set(arrays) - expected)
    rd._need(not extra, where, f"unexpected array(s) {extra}")
    kw = {k: _restore_param(v) for k, v in params.items()}
    bias = bool(kw.get("bias", True))
    for i, u in enumerate(units):
        _check_unit(u, arrays, i, nf, regression, bias, where)
    for i, u in enumerate(units):
        rd.check_kernel(u.get("kernel"), where, f"unit {i}: kernel")
    ests = [_build_unit(cls, kw, u, arrays, i, nf) for i, u in enumerate(units)]
    model: Any
    if n_units == 1:
        model = ests[0]
        if classes is not None:
            model.classes_, model.estimators_ = classes, []
    else:
        for e in ests:
            e.classes_, e.estimators_ = np.array([0, 1]), []
        model = cls(**kw)
        model.classes_, model.estimators_, model.n_features_in_ = classes, ests, nf
        rel = np.concatenate([e.relevance_ for e in ests])
        rows = np.concatenate([e.relevance_vectors_ for e in ests])
        model.relevance_, first = np.unique(rel, return_index=True)
        model.relevance_vectors_ = rows[first]
        model.n_iter_ = max(e.n_iter_ for e in ests)
        model.converged_ = all(e.converged_ for e in ests)
    rd.check_finite_on_rows((lambda r: model.predict(r, return_std=True)) if regression
                         else model.predict_proba, nf, model.relevance_vectors_, where,
                         f"the stored {meta['class']}'s prediction")
    return model
