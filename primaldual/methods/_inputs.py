"""The shared fit's inputs, before any problem is built: the estimator's parameters validated
(once per class and values), ``fit``'s ``backend``/``form`` arguments, the numeric kernel width
of ``gamma="scale"``/``"auto"``, the rows and labels checked, the per-sample box ``C_i`` and
the :class:`~._fit.FitData` every method's primal and dual are written on.

Functions of the estimator (``est``), not methods: :class:`~._base.KernelMethod` keeps one thin
method per step (subclasses override ``_prepare`` or ``_box_C`` and reach these through it), and
the lean one-vs-one pairs and the multiclass fit call the same code.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from ..validation import check_precomputed_kernel
from ._fit import FitData
from ._params import check_backend, check_form, validate_params
from ._steps import _VALIDATED, _params_key, _var, apply_class_weight

__all__ = ["backend_form", "prepare", "resolve_gamma", "sample_C", "validated_params",
           "validate_xy"]


def validated_params(est: Any) -> dict[str, Any]:
    """:meth:`~._base.KernelMethod._validate_params` of ``est``: its constructor parameters,
    each validated by its check (ValueError/TypeError naming the parameter). Parameters that
    are all plain scalars or strings are validated once per class and values (the checks are
    pure functions of them, and refuse without caching), then copied from :data:`_VALIDATED`."""
    params = est.get_params(deep=False)
    table = est._parameter_constraints
    key = _params_key(type(est), table, params)
    hit = None if key is None else _VALIDATED.get(key)
    if hit is not None and hit[0] is table:
        return dict(hit[1])
    out = validate_params(type(est).__name__, params, table)
    if key is not None and len(_VALIDATED) < 512:
        # (the entry holds the table: its id cannot be reused by another table meanwhile)
        _VALIDATED[key] = (table, dict(out))
    return out


def backend_form(params: dict[str, Any], backend: str | None, form: str | None
                 ) -> tuple[str, str]:
    """``fit``'s ``backend``/``form`` arguments (checked) or else the parameters; a rank
    asked for makes ``"auto"`` the low-rank backend."""
    backend = params["backend"] if backend is None else check_backend(backend, "backend")
    form = params["form"] if form is None else check_form(form, "form")
    if backend == "auto" and (params.get("rank") or params.get("rank_tol")):
        backend = "lowrank"  # a rank was asked for: the low-rank eta-reformulation
    return backend, form


def resolve_gamma(est: Any, X: np.ndarray, params: dict[str, Any] | None = None) -> Any:
    """The numeric kernel width used by ``est``'s fit (``"scale"``: ``1/(d X.var())``,
    ``"auto"``: ``1/d``, on the full training X); the parameter itself when it is a number
    or the kernel takes no gamma."""
    p = est._validate_params() if params is None else params
    gamma, kernel = p["gamma"], p["kernel"]
    if isinstance(gamma, str) and isinstance(kernel, str) and gamma in ("scale", "auto") \
            and kernel not in ("linear", "precomputed", "bspline"):
        g = None
        if gamma == "scale" and type(X) is np.ndarray and X.dtype == np.float64 \
                and X.ndim == 2 and X.shape[1]:
            # the factory's formula on the array it would use (np.asarray(X) is X), without
            # its second finiteness pass (fit validated X); any other variance (0: constant
            # or underflowed; subnormal; NaN, inf: overflow) goes to the factory, which
            # raises or resolves
            with np.errstate(over="ignore", invalid="ignore"):  # (the factory says why)
                var = _var(X)
            if math.isfinite(var) and var > 0 and math.isfinite(1.0 / (X.shape[1] * var)):
                g = 1.0 / (X.shape[1] * var)
        if g is None:
            from ..kernels.factory import _resolve_gamma
            g = _resolve_gamma(gamma, X)
        if not g > 0:  # "scale" with X.var() = inf: 1 / (d inf) = 0
            raise ValueError("gamma='scale': X.var() overflows (X holds values near the "
                             "float64 limit), so the kernel width is 0 and the model would "
                             "not be finite. The dual coefficients or intercepts are not "
                             "finite; rescale X (e.g. StandardScaler)")
        return g
    return gamma


def validate_xy(est: Any, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """``X``, ``y`` checked as scikit-learn's ``check_X_y`` (float64 rows; numeric targets for
    a regressor, classification targets for a classifier)."""
    from sklearn.utils.validation import check_X_y
    X, y = check_X_y(X, y, dtype=np.float64, y_numeric=est._task == "regression")
    if est._task == "classification":
        check_classification_targets(y)
    return X, y


def sample_C(est: Any, y_pm: np.ndarray, sample_weight: Any, C: float,
             cw: Any = None) -> np.ndarray:
    """``C_i = C * sample_weight_i * class_weight[y_i]`` (``cw``: the validated
    ``class_weight``)."""
    Ci = np.full(y_pm.shape[0], C, dtype=float)
    if sample_weight is not None:
        sw = np.asarray(sample_weight, dtype=float)
        if sw.shape != (y_pm.shape[0],):
            raise ValueError(f"sample_weight must have shape ({y_pm.shape[0]},), "
                             f"got {sw.shape}")
        if not np.all(np.isfinite(sw)) or np.any(sw < 0):
            raise ValueError("sample_weight must be finite and >= 0")
        Ci = Ci * sw
    if cw is not None and est._task == "classification":
        apply_class_weight(Ci, y_pm, cw, est._binary_classes)
    return Ci


def prepare(est: Any, X: Any, y: Any, sample_weight: Any = None,
            params: dict[str, Any] | None = None) -> FitData:
    """:meth:`~._base.KernelMethod._prepare` of ``est``: ``X``, ``y`` validated into a
    :class:`FitData` (labels mapped to -1/+1 for classifiers), with the validated ``params``
    (validated here when not given)."""
    params = est._validate_params() if params is None else params
    if not params.get("_xy_checked"):  # fit validated X, y already (once)
        X = np.asarray(X, dtype=float) if not hasattr(X, "dtype") else X
        X, y = est._validate_xy(X, y)
    if params["kernel"] == "precomputed":
        check_precomputed_kernel(X, "X")
    if est._task == "classification":
        # (a multiclass fit passes its sub-problem's classes, {0, 1}, checked present)
        classes = params.get("_classes")
        if classes is None:
            classes = np.unique(y)
        if classes.shape[0] != 2:
            raise ValueError(f"{type(est).__name__}.primal/dual need exactly 2 classes in y, "
                             f"got {classes.shape[0]}")
        est._binary_classes = classes
        y_pm = np.where(y == classes[1], 1.0, -1.0)
    else:
        y_pm = np.asarray(y, dtype=float)
    Ci = est._sample_C(y_pm, sample_weight, est._box_C(params), params.get("class_weight"))
    sg = params.get("_shared_gram")
    if sg is None:
        # (a multiclass fit builds its sub-problems' kernel object once: "_kernel")
        kernel = params.get("_kernel")
        if kernel is None:
            kernel = est._kernel(X, params)
        return FitData(X, y_pm, kernel, Ci, params=params)
    # a multiclass sub-problem: its kernel matrix is K[rows][:, rows] of the Gram matrix
    # its parent computed once on the full X, with the same kernel object
    return FitData(X, y_pm, sg.kernel, Ci, extra={"shared_gram": sg}, params=params)
