"""A :class:`~primaldual.GPClassifier` in a model file.

A Laplace GP predicts from every training row: the file holds them (``gp__X``) and, per
binary GP ``i`` (one for two classes, one per class for one-vs-rest), the arrays
``u<i>__<name>`` (the labels ``y_`` in {0, 1}, the mode ``f_``, ``pi_ = sigma(f_)``,
``W_sr_ = sqrt(pi_ (1 - pi_))``, the Cholesky factor ``L_`` of ``I + W^1/2 K W^1/2`` and
``theta_``) and the ``i``-th entry of the metadata's ``units`` (the kernel at the fitted
gamma, the amplitude, the evidence, the Newton record). The evidence object behind
``log_marginal_likelihood(theta)`` is rebuilt from the training rows and the parameters, as
the fit builds it. The file grows as ``N^2`` per class (``L_``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import expit

from .format import SCHEMA_VERSION
from .reader import (
    _is_num,
    _need,
    check_classes,
    check_finite_on_rows,
    check_kernel,
    check_own_header,
    check_unit_numbers,
)

#: A binary GP's arrays (all float64): name -> ndim.
_UNIT_SCHEMA = {"y_": 1, "f_": 1, "pi_": 1, "W_sr_": 1, "L_": 2, "theta_": 1}


def _is_gp(model: Any) -> bool:
    from ..gaussian_process import GPClassifier
    return isinstance(model, GPClassifier)


def _gp_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and metadata of a fitted GPClassifier."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd

    from .parts import _jsonable
    check_is_fitted(model, "estimators_")
    arrays = {"gp__X": np.asarray(model._X)}
    units = []
    for i, st in enumerate(model.estimators_):
        arrays.update({f"u{i}__{k}": np.asarray(st[k]) for k in _UNIT_SCHEMA})
        units.append({"kernel": st["kernel_"].to_dict(), "amplitude": float(st["amplitude_"]),
                      "log_marginal_likelihood": float(st["log_marginal_likelihood_value_"]),
                      "n_iter": int(st["n_iter_"]), "converged": bool(st["converged_"]),
                      "search_converged": bool(st.get("search_converged_", True)),
                      "mode_residual": _jsonable(float(st["mode_residual_"]))})
    meta = {"schema_version": SCHEMA_VERSION, "library_version": pd.__version__,
            "class": "GPClassifier", "params": _jsonable(model.get_params()),
            "n_features_in": int(model.n_features_in_), "units": units,
            "classes": _jsonable(model.classes_),
            "classes_dtype": str(np.asarray(model.classes_).dtype)}
    return arrays, meta


def _check_unit(u: Any, arrays: dict[str, np.ndarray], i: int, n: int, where: str) -> None:
    """Binary GP ``i``'s scalars and arrays (``ModelFileError`` naming them)."""
    w = f"{where}: unit {i}" if i else where
    _need(isinstance(u, dict), w, "must be a JSON object")
    _need(isinstance(u.get("kernel"), dict), w, "kernel must be a JSON object")
    amp: Any = u.get("amplitude")
    _need(_is_num(amp) and math.isfinite(amp) and amp > 0, w,
          "amplitude must be a finite number > 0")
    check_unit_numbers(u, w, "mode_residual")
    _need(isinstance(u.get("converged"), bool), w, "converged must be true or false")
    _need(isinstance(u.get("search_converged", True), bool), w,
          "search_converged must be true or false")
    for k in _UNIT_SCHEMA:
        _need(f"u{i}__{k}" in arrays, w, f"array {k!r} is missing")
    a = {k: arrays[f"u{i}__{k}"] for k in _UNIT_SCHEMA}
    for k, ndim in _UNIT_SCHEMA.items():
        v = a[k]
        _need(v.dtype == np.float64 and v.ndim == ndim, w,
              f"array {k!r} must be {ndim}-D float64, got {v.ndim}-D {v.dtype}")
        _need(bool(np.all(np.isfinite(v))), w, f"array {k!r} has non-finite values")
        if k != "theta_":
            _need(v.shape == ((n, n) if k == "L_" else (n,)), w,
                  f"array {k!r} must have {n} rows (one per training row)")
    _need(a["theta_"].shape[0] <= 2, w, "theta_ has at most two entries")
    _need(bool(np.all((a["y_"] == 0) | (a["y_"] == 1))), w, "y_ must be 0 or 1")
    # the file's derived arrays are what the fit computes from the mode, bit for bit
    pi = expit(a["f_"])
    _need(bool(np.array_equal(a["pi_"], pi)), w, "pi_ must be sigma(f_)")
    _need(bool(np.array_equal(a["W_sr_"], np.sqrt(pi * (1 - pi)))), w,
          "W_sr_ must be sqrt(pi_ (1 - pi_))")
    L = a["L_"]
    _need(bool(np.all(np.triu(L, 1) == 0)) and bool(np.all(np.diag(L) > 0)), w,
          "L_ must be a lower Cholesky factor (zero above the diagonal, positive diagonal)")


def _build_gp(meta: dict, arrays: dict[str, np.ndarray], where: str) -> Any:
    """The GPClassifier of a checked file; its probabilities must be finite on a row of
    zeros and on its first training rows."""
    from ..gaussian_process import GPClassifier
    from ..kernels import kernel_from_dict, make_kernel
    from .build import _restore_param

    params = check_own_header(meta, where, GPClassifier, "GPClassifier")
    nf = meta["n_features_in"]
    classes = check_classes(meta, where)
    n_units = 1 if len(classes) == 2 else len(classes)
    units: Any = meta.get("units")
    _need(isinstance(units, list) and len(units) == n_units, where,
          f"units must be a list of {n_units} binary GPs")
    expected = {"gp__X"} | {f"u{i}__{k}" for i in range(n_units) for k in _UNIT_SCHEMA}
    extra = sorted(set(arrays) - expected)
    _need(not extra, where, f"unexpected array(s) {extra}")
    _need("gp__X" in arrays, where, "array 'gp__X' (the training rows) is missing")
    X = arrays["gp__X"]
    _need(X.dtype == np.float64 and X.ndim == 2 and X.shape[1] == nf and X.shape[0] >= 2,
          where, f"gp__X must be a float64 array of shape (N >= 2, {nf})")
    _need(bool(np.all(np.isfinite(X))), where, "gp__X has non-finite values")
    for i, u in enumerate(units):
        _check_unit(u, arrays, i, X.shape[0], where)
    model = GPClassifier(**{k: _restore_param(v) for k, v in params.items()})
    model._check_params()
    model._X, model.classes_, model.n_features_in_ = X, classes, nf
    base = make_kernel(model.kernel, gamma=model.gamma, degree=model.degree,
                       coef0=model.coef0, X=X)
    sts = []
    for i, u in enumerate(units):
        y01 = arrays[f"u{i}__y_"]
        gp, args, _ = model._laplace(base, X, y01)
        _need(arrays[f"u{i}__theta_"].shape[0] == int(args[0]) + int(args[1]), where,
              f"unit {i}: theta_ must have one entry per free hyper-parameter")
        check_kernel(u["kernel"], where, f"unit {i}: kernel")
        st: dict[str, Any] = {k: arrays[f"u{i}__{k}"] for k in _UNIT_SCHEMA}
        st.update({"kernel_": kernel_from_dict(u["kernel"]), "amplitude_": float(u["amplitude"]),
                   "log_marginal_likelihood_value_": float(u["log_marginal_likelihood"]),
                   "n_iter_": int(u["n_iter"]), "converged_": bool(u["converged"]),
                   "search_converged_": bool(u.get("search_converged", True)),
                   "mode_residual_": float(u["mode_residual"]), "_gp": gp, "_args": args})
        sts.append(st)
    model.estimators_ = sts
    model._summarise()
    check_finite_on_rows(model.predict_proba, nf, X, where,
                         "the stored GPClassifier's probability")
    return model
