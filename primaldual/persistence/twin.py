"""A :class:`~primaldual.TwinSVC` in a model file: its two planes, each stored as the
:class:`~primaldual.Variant` it is (its expansion ``f_k(x) = K(x, SV_k) dual_coef_kᵀ +
xᵀ linear_coef_k + b_k``, kernel and certificate; plane ``k``'s arrays are
``plane<k>__<name>``, its metadata the ``k``-th entry of ``planes``), with what the
nearest-plane rule reads besides: the planes' normal lengths ``||w_k||`` (``norms``; for the
kernel surfaces ``sqrt(u_kᵀ K(C, Cᵀ) u_k)`` over the training rows, which the file does not
keep), the two labels, the solver iterations and, for linear planes, ``coef_``.

A loaded plane is rebuilt with its factory spec (:func:`~primaldual.methods.twin.
twin_plane_spec`), whose fingerprint must be the stored one, so a loaded twin SVM can also be
refitted. ``decision_function`` and ``predict`` are bit for bit those of the saved model.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import reader as rd
from .format import SCHEMA_VERSION

#: the planes' labels in ``planes_`` order (plane ``+1`` first)
_LABELS = (1.0, -1.0)
#: the arrays of the model itself (beside its planes'): name -> (dtype kinds, ndim)
_TWIN_SCHEMA = {"coef_": ("f", 2)}


def _is_twin(model: Any) -> bool:
    from ..methods.twin import TwinSVC
    return isinstance(model, TwinSVC)


def _twin_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and metadata of a fitted twin SVM."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd

    from .parts import _jsonable, _variant_parts
    check_is_fitted(model, "planes_")
    arrays: dict[str, np.ndarray] = {}
    planes = []
    for k, plane in enumerate(model.planes_):
        a, m = _variant_parts(plane)
        arrays.update({f"plane{k}__{n}": v for n, v in a.items()})
        planes.append(m)
    if getattr(model, "coef_", None) is not None:
        arrays["coef_"] = np.asarray(model.coef_, dtype=float)
    meta = {
        "schema_version": SCHEMA_VERSION,
        "library_version": pd.__version__,
        "class": "TwinSVC",
        "params": _jsonable(model.get_params()),
        "n_features_in": int(model.n_features_in_),
        "classes": _jsonable(model.classes_),
        "classes_dtype": str(np.asarray(model.classes_).dtype),
        "norms": [float(v) for v in model._norms],
        "n_iter": [int(v) for v in model.n_iter_],
        "planes": planes,
    }
    return arrays, meta


def _check_twin(meta: dict, arrays: dict[str, np.ndarray], where: str) -> tuple[Any, int]:
    """The twin SVM's own fields (its planes are checked as Variants when built); returns the
    labels and ``n_features_in``."""
    from ..methods.twin import TwinSVC
    rd.check_own_header(meta, where, TwinSVC, "TwinSVC")
    nf = int(meta["n_features_in"])
    classes = rd.check_classes(meta, where)
    rd._need(classes.shape[0] == 2, where, "a twin SVM has two classes")
    norms: Any = meta.get("norms")
    rd._need(isinstance(norms, list) and len(norms) == 2
          and all(rd._is_num(v) and math.isfinite(v) and v > 0 for v in norms), where,
          "norms must be two finite numbers > 0 (the planes' normal lengths)")
    n_iter: Any = meta.get("n_iter")
    rd._need(isinstance(n_iter, list) and len(n_iter) == 2
          and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in n_iter),
          where, "n_iter must be two non-negative integers")
    planes: Any = meta.get("planes")
    rd._need(isinstance(planes, list) and len(planes) == 2
          and all(isinstance(p, dict) for p in planes), where,
          "planes must be a list of two JSON objects")
    for k, p in enumerate(planes):
        rd._need(p.get("class") == "Variant" and p.get("task") == "regression", where,
              f"plane {k} must be a Variant of task 'regression' (a plane's decision)")
        rd._need(p.get("n_features_in") == nf, where,
              f"plane {k} has n_features_in {p.get('n_features_in')!r}, the model {nf}")
        rd.check_kernel(p.get("kernel"), f"{where}: plane {k}")
    # one kernel for both surfaces: the norms were computed with it
    rd._need(planes[0].get("kernel") == planes[1].get("kernel"), where,
          "the planes' kernels differ (a twin SVM's two planes share its kernel)")
    own = {k: a for k, a in arrays.items() if not k.startswith(("plane0__", "plane1__"))}
    rd.check_array_schema(own, _TWIN_SCHEMA, where)
    if "coef_" in own:
        rd._need(own["coef_"].shape == (2, nf), where, f"coef_ must have shape (2, {nf})")
    return classes, nf


def _build_twin(meta: dict, arrays: dict[str, np.ndarray], where: str) -> Any:
    """The twin SVM of a checked file; its ``decision_function`` must be finite on a row of
    zeros and on the first plane's stored rows."""
    from ..methods.twin import TwinSVC, twin_plane_spec
    from .build import _build_variant, _restore_param

    classes, nf = _check_twin(meta, arrays, where)
    planes = []
    for k, label in enumerate(_LABELS):
        sub = {n[len(f"plane{k}__"):]: a for n, a in arrays.items()
               if n.startswith(f"plane{k}__")}
        planes.append(_build_variant(meta["planes"][k], sub, f"{where}, plane {k}",
                                     twin_plane_spec(label), None))
    model = TwinSVC(**{k: _restore_param(v) for k, v in meta["params"].items()})
    model.classes_ = classes
    model.n_features_in_ = nf
    model.planes_ = tuple(planes)
    model.certificates_ = tuple(p.certificate_ for p in planes)
    model.n_iter_ = np.array(meta["n_iter"])
    model.intercept_ = np.array([float(p.intercept_[0]) for p in planes])
    if "coef_" in arrays:
        model.coef_ = arrays["coef_"]
    model._norms = np.array([float(v) for v in meta["norms"]])
    rd.check_finite_on_rows(model.decision_function, nf, planes[0].support_vectors_, where,
                         "the stored twin SVM's decision_function")
    return model
