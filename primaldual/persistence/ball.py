"""An :class:`~primaldual.EnclosingBall` in a model file: what its ``decision_function``
``R^2 - (k(x, x) - 2 sum_{i in S} a_i k(x, x_i) + ||c||^2)`` reads (the support rows, the
weights ``alpha_``, ``radius2_``, ``center_norm2_``, the kernel) with its certificate, and the
ball rebuilt from a checked file (the training rows ``X_fit_`` are not stored: ``None``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .format import SCHEMA_VERSION
from .reader import (
    _check_certificate,
    _is_num,
    _need,
    check_array_schema,
    check_finite_on_rows,
    check_kernel,
    check_own_header,
)

#: A ball's arrays: name -> (dtype kinds, ndim).
_BALL_SCHEMA = {"support_vectors_": ("f", 2), "support_": ("iu", 1), "alpha_": ("f", 1)}
#: A ball's scalars in the metadata (finite numbers).
_BALL_SCALARS = ("radius2", "center_norm2")


def _is_ball(model: Any) -> bool:
    from ..bounds import EnclosingBall
    return isinstance(model, EnclosingBall)


def _ball_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and metadata of a fitted ball."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd

    from ..kernels import Precomputed
    from .parts import _jsonable
    check_is_fitted(model, "alpha_")
    if isinstance(model.kernel_, Precomputed):
        raise TypeError("model: saving an EnclosingBall fitted on a precomputed kernel is not "
                        "supported (it cannot score new rows: k(x, x) of a new point is not "
                        "in K(X_new, X_train))")
    arrays = {k: np.asarray(getattr(model, k)) for k in _BALL_SCHEMA}
    meta = {
        "schema_version": SCHEMA_VERSION,
        "library_version": pd.__version__,
        "class": "EnclosingBall",
        "params": _jsonable(model.get_params()),
        "kernel": model.kernel_.to_dict(),
        "n_features_in": int(model.n_features_in_),
        "radius2": float(model.radius2_),
        "center_norm2": float(model.center_norm2_),
        "certificate": _jsonable(model.certificate_.to_dict()),
        "backend": model.backend_,
    }
    return arrays, meta


def _check_ball(meta: dict, arrays: dict[str, np.ndarray], where: str) -> None:
    """Every field of a ball's file against its schema (``ModelFileError`` naming it)."""
    from ..bounds import EnclosingBall
    check_own_header(meta, where, EnclosingBall, "EnclosingBall")
    _need(isinstance(meta.get("kernel"), dict), where, "kernel must be a JSON object")
    nf = meta["n_features_in"]
    for k in _BALL_SCALARS:
        _need(_is_num(meta.get(k)) and math.isfinite(meta[k]), where,
              f"{k} must be a finite number")
    _need(meta.get("backend") is None or isinstance(meta["backend"], str), where,
          "backend must be a string")
    _check_certificate(meta.get("certificate"), where)
    check_array_schema(arrays, _BALL_SCHEMA, where)
    for k in _BALL_SCHEMA:
        _need(k in arrays, where, f"array {k!r} is missing")
    n, sv = arrays["alpha_"].shape[0], arrays["support_"]
    _need(arrays["support_vectors_"].shape == (sv.shape[0], nf), where,
          f"support_vectors_ must have shape ({sv.shape[0]}, {nf})")
    _need(sv.size == 0 or (int(sv.min()) >= 0 and int(sv.max()) < n), where,
          f"support_ indexes outside 0..{n - 1}")
    _need(np.unique(sv).shape[0] == sv.shape[0], where, "support_ has repeated indices")
    # the dual's feasible set: a >= 0, sum a = 1 (the centre is a convex combination)
    a = arrays["alpha_"]
    _need(bool(np.all(a >= 0)) and abs(float(a.sum()) - 1.0) <= 1e-9 * max(1, n), where,
          "alpha_ must be >= 0 and sum to 1")


def _build_ball(meta: dict, arrays: dict[str, np.ndarray], where: str) -> Any:
    """The ball of a checked file; its ``decision_function`` must be finite on a row of
    zeros and on its own support rows."""
    from ..bounds import EnclosingBall
    from ..certificate import Certificate
    from ..kernels import kernel_from_dict
    from .build import _num, _restore_param

    _check_ball(meta, arrays, where)
    model = EnclosingBall(**{k: _restore_param(v) for k, v in meta["params"].items()})
    for k, v in arrays.items():
        setattr(model, k, v)
    model.support_ = model.support_.astype(np.intp, copy=False)
    check_kernel(meta["kernel"], where)
    model.kernel_ = kernel_from_dict(meta["kernel"])
    model.n_features_in_ = int(meta["n_features_in"])
    model.radius2_, model.center_norm2_ = float(meta["radius2"]), float(meta["center_norm2"])
    model.radius_ = math.sqrt(max(model.radius2_, 0.0))
    model.X_fit_, model.solution_ = None, None
    model.backend_ = meta.get("backend")
    c = meta["certificate"]
    model.certificate_ = Certificate(_num(c["primal_objective"]), _num(c["dual_objective"]),
                                     _num(c["duality_gap"]), _num(c["relative_gap"]),
                                     {k: _num(v) for k, v in c["kkt"].items()}, {},
                                     c["status"], c.get("extra", {}))
    model.status_ = model.certificate_.status
    check_finite_on_rows(model.decision_function, model.n_features_in_,
                         model.support_vectors_, where, "the stored ball's decision_function")
    return model
