"""An :class:`~primaldual.RVR` in a model file: what ``predict(X, return_std=True)`` reads, the
relevance rows, the posterior ``mu_``, ``sigma_`` over the model's columns, the precisions
``alpha_`` and the noise ``beta_``, with the fit's evidence and convergence record.

In the fitted model ``active_`` indexes the candidate basis ``[k(., x_1) .. k(., x_N), 1]``
of the ``N`` training rows; the file keeps only the relevance rows, so a loaded model's
candidate basis is ``[k(., r_1) .. k(., r_m), 1]`` and its ``active_`` is renumbered onto it
(same columns in the same order: the predictions are bit for bit). ``relevance_`` keeps the
training indices.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .format import SCHEMA_VERSION
from .reader import _is_num, _need

#: An RVR's arrays: name -> (dtype kinds, ndim).
_RVR_SCHEMA = {"relevance_vectors_": ("f", 2), "relevance_": ("iu", 1), "alpha_": ("f", 1),
               "mu_": ("f", 1), "sigma_": ("f", 2)}


def _is_rvr(model: Any) -> bool:
    from ..rvm import RVR
    return isinstance(model, RVR)


def _rvr_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and metadata of a fitted RVR."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd

    from .parts import _jsonable
    check_is_fitted(model, "beta_")
    arrays = {k: np.asarray(getattr(model, k)) for k in _RVR_SCHEMA}
    meta = {
        "schema_version": SCHEMA_VERSION,
        "library_version": pd.__version__,
        "class": "RVR",
        "params": _jsonable(model.get_params()),
        "kernel": model.kernel_.to_dict(),
        "n_features_in": int(model.n_features_in_),
        "bias_in_model": bool(len(model.active_) > len(model.relevance_)),
        "beta": float(model.beta_),
        "log_marginal_likelihood": float(model.log_marginal_likelihood_value_),
        "optimality": _jsonable(float(model.optimality_)),
        "n_iter": int(model.n_iter_),
        "converged": bool(model.converged_),
    }
    return arrays, meta


def _check_rvr(meta: dict, arrays: dict[str, np.ndarray], where: str) -> None:
    """Every field of an RVR's file against its schema (``ModelFileError`` naming it)."""
    from ..rvm import RVR
    _need(meta.get("schema_version") == SCHEMA_VERSION, where,
          f"has schema version {meta.get('schema_version')!r}; this primaldual reads version "
          f"{SCHEMA_VERSION}")
    params: Any = meta.get("params")
    _need(isinstance(params, dict), where, "params must be a JSON object")
    bad = sorted(set(params) - set(RVR().get_params(deep=False)))
    _need(not bad, where, f"unknown hyper-parameter(s) {bad} for RVR")
    _need(isinstance(meta.get("kernel"), dict), where, "kernel must be a JSON object")
    nf: Any = meta.get("n_features_in")
    _need(isinstance(nf, int) and not isinstance(nf, bool) and 1 <= nf <= 10**8, where,
          "n_features_in must be a positive integer")
    for k in ("bias_in_model", "converged"):
        _need(isinstance(meta.get(k), bool), where, f"{k} must be true or false")
    _need(bool(meta["bias_in_model"]) <= bool(params.get("bias", True)), where,
          "bias_in_model needs bias=True")
    beta: Any = meta.get("beta")
    _need(_is_num(beta) and math.isfinite(beta) and beta > 0, where,
          "beta must be a finite number > 0")
    _need(_is_num(meta.get("log_marginal_likelihood")), where,
          "log_marginal_likelihood must be a number")
    _need(_is_num(meta.get("optimality")) or meta.get("optimality") in ("inf", "nan"), where,
          "optimality must be a number")
    n_iter: Any = meta.get("n_iter")
    _need(isinstance(n_iter, int) and not isinstance(n_iter, bool) and n_iter >= 0, where,
          "n_iter must be an integer >= 0")
    for k, a in arrays.items():
        _need(k in _RVR_SCHEMA, where, f"unexpected array {k!r}")
        kinds, ndim = _RVR_SCHEMA[k]
        _need(a.dtype.kind in kinds and a.ndim == ndim, where,
              f"array {k!r} must be {ndim}-D of kind {kinds!r}, got {a.ndim}-D {a.dtype}")
        if a.dtype.kind == "f":
            _need(a.dtype == np.float64, where, f"array {k!r} must be float64, got {a.dtype}")
            _need(bool(np.all(np.isfinite(a))), where, f"array {k!r} has non-finite values")
    for k in _RVR_SCHEMA:
        _need(k in arrays, where, f"array {k!r} is missing")
    rel = arrays["relevance_"]
    m = rel.shape[0] + int(meta["bias_in_model"])
    _need(arrays["relevance_vectors_"].shape == (rel.shape[0], nf), where,
          f"relevance_vectors_ must have shape ({rel.shape[0]}, {nf})")
    _need(rel.size == 0 or (int(rel.min()) >= 0 and bool(np.all(np.diff(rel) > 0))), where,
          "relevance_ must be increasing training indices")
    for k, shape in (("alpha_", (m,)), ("mu_", (m,)), ("sigma_", (m, m))):
        _need(arrays[k].shape == shape, where, f"{k} must have shape {shape}")
    _need(bool(np.all(arrays["alpha_"] >= 0)), where, "alpha_ must be >= 0 (precisions)")
    S = arrays["sigma_"]
    # a posterior covariance: symmetric with a non-negative diagonal (it is inverted from
    # A + beta Phi^T Phi and symmetrised by no one, so exact symmetry is not asked)
    scale = float(np.max(np.abs(S), initial=0.0))
    _need(bool(np.all(np.diag(S) >= 0)) and bool(np.all(np.abs(S - S.T) <= 1e-8 * scale)),
          where, "sigma_ must be a symmetric covariance")


def _build_rvr(meta: dict, arrays: dict[str, np.ndarray], where: str) -> Any:
    """The RVR of a checked file; its predictions and predictive deviations must be finite
    on a row of zeros and on its own relevance rows."""
    from ..exceptions import ModelFileError
    from ..kernels import kernel_from_dict
    from ..rvm import RVR
    from .build import _restore_param

    _check_rvr(meta, arrays, where)
    model = RVR(**{k: _restore_param(v) for k, v in meta["params"].items()})
    for k, v in arrays.items():
        setattr(model, k, v)
    n_rv = model.relevance_vectors_.shape[0]
    model.relevance_ = model.relevance_.astype(np.intp, copy=False)
    model._Xtrain = model.relevance_vectors_
    model.active_ = np.arange(n_rv + int(meta["bias_in_model"]))   # the bias column is n_rv
    model.coef_ = model.mu_[:n_rv]
    model.intercept_ = float(model.mu_[n_rv]) if meta["bias_in_model"] else 0.0
    model.kernel_ = kernel_from_dict(meta["kernel"])
    model.n_features_in_ = int(meta["n_features_in"])
    model.beta_ = float(meta["beta"])
    model.noise_variance_ = 1.0 / model.beta_
    model.log_marginal_likelihood_value_ = float(meta["log_marginal_likelihood"])
    model.optimality_ = float(meta["optimality"])
    model.n_iter_ = int(meta["n_iter"])
    model.converged_ = bool(meta["converged"])
    rows = np.vstack([np.zeros((1, model.n_features_in_)), model.relevance_vectors_[:50]])
    with np.errstate(all="ignore"):
        mean, std = model.predict(rows, return_std=True)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(std))):
        raise ModelFileError(f"{where}: the stored RVR predicts a non-finite value (kernel "
                             "parameters out of range?)")
    return model
