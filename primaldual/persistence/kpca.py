"""A :class:`~primaldual.KernelPCA` fitted on the exact kernel matrix, in a model file.

``transform(x) = Omega_c(x, X_fit) dual_coef_`` reads the training rows, the column means of
their kernel matrix (the centring; stored, so that loading never forms the ``N x N`` matrix)
and ``dual_coef_``; the file also holds the eigenpairs, the explained variance, the
certificate and, with ``fit_inverse_transform=True``, the pre-image regression. Derived
arrays are checked to be what the fit computes from the eigenpairs, bit for bit. A model fitted
with ``rank=`` (a Nystrom factor) is refused by :func:`~primaldual.persistence.save`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .format import SCHEMA_VERSION
from .reader import (
    _check_certificate,
    _is_num,
    _need,
    check_finite_on_rows,
    check_kernel,
    check_own_header,
)

#: The arrays (all float64): name -> ndim; the last two only with ``fit_inverse_transform``.
_KPCA_SCHEMA = {"X_fit_": 2, "fit_col_mean": 1, "eigenvalues_": 1, "eigenvectors_": 2,
                "dual_coef_": 2, "explained_variance_ratio_": 1, "inverse_dual_coef_": 2,
                "X_transformed_fit_": 2}
_INVERSE = ("inverse_dual_coef_", "X_transformed_fit_")


def _is_kpca(model: Any) -> bool:
    from ..decomposition import KernelPCA
    return isinstance(model, KernelPCA)


def _kpca_parts(model: Any) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and metadata of a KernelPCA fitted on the exact kernel matrix."""
    from sklearn.utils.validation import check_is_fitted

    import primaldual as pd

    from .parts import _jsonable
    check_is_fitted(model, "eigenvalues_")
    if getattr(model, "lowrank_factor_", None) is not None:
        raise TypeError("model: saving a KernelPCA fitted with rank= (a Nystrom factor) is not "
                        "supported; fit with rank=None to save it")
    arrays = {k: np.asarray(getattr(model, k)) for k in _KPCA_SCHEMA
              if k != "fit_col_mean" and (k not in _INVERSE or model.fit_inverse_transform)}
    arrays["fit_col_mean"] = np.asarray(model._fit_col_mean)
    meta = {"schema_version": SCHEMA_VERSION, "library_version": pd.__version__,
            "class": "KernelPCA", "params": _jsonable(model.get_params()),
            "kernel": model.kernel_.to_dict(), "n_features_in": int(model.n_features_in_),
            "trace": float(model.trace_), "solver": str(model.solver_),
            "certificate": _jsonable(model.certificate_.to_dict())}
    return arrays, meta


def _check_kpca(meta: dict, arrays: dict[str, np.ndarray], where: str) -> Any:
    """Every field against the schema; returns the restored parameters."""
    from ..decomposition import KernelPCA
    from .build import _restore_param
    params = check_own_header(meta, where, KernelPCA, "KernelPCA")
    kw = {k: _restore_param(v) for k, v in params.items()}
    _need(kw.get("rank") is None, where, "a KernelPCA file holds an exact fit (rank=None)")
    inverse = bool(kw.get("fit_inverse_transform", False))
    _need(isinstance(meta.get("kernel"), dict), where, "kernel must be a JSON object")
    nf: Any = meta.get("n_features_in")
    _need(isinstance(nf, int) and not isinstance(nf, bool) and 1 <= nf <= 10**8, where,
          "n_features_in must be a positive integer")
    tr: Any = meta.get("trace")
    _need(_is_num(tr) and math.isfinite(tr), where, "trace must be a finite number")
    _need(isinstance(meta.get("solver"), str), where, "solver must be a string")
    _check_certificate(meta.get("certificate"), where)
    expected = {k for k in _KPCA_SCHEMA if inverse or k not in _INVERSE}
    _need(set(arrays) == expected, where,
          f"arrays must be {sorted(expected)}, got {sorted(arrays)}")
    for k, a in arrays.items():
        _need(a.dtype == np.float64 and a.ndim == _KPCA_SCHEMA[k], where,
              f"array {k!r} must be {_KPCA_SCHEMA[k]}-D float64, got {a.ndim}-D {a.dtype}")
        _need(bool(np.all(np.isfinite(a))), where, f"array {k!r} has non-finite values")
    X, lam, U = arrays["X_fit_"], arrays["eigenvalues_"], arrays["eigenvectors_"]
    N, n = X.shape[0], lam.shape[0]
    _need(X.shape[1] == nf and N >= 1, where, f"X_fit_ must have {nf} columns")
    _need(arrays["fit_col_mean"].shape == (N,), where, f"fit_col_mean must have length {N}")
    _need(U.shape == (N, n) and n <= N, where, f"eigenvectors_ must have shape ({N}, {n})")
    _need(bool(np.all(lam >= 0)) and bool(np.all(np.diff(lam) <= 0)), where,
          "eigenvalues_ must be >= 0 and in decreasing order")
    # the derived arrays are what the fit computes from the eigenpairs, bit for bit
    pos = lam > 0
    dual = np.zeros_like(U)
    dual[:, pos] = U[:, pos] / np.sqrt(lam[pos])
    _need(bool(np.array_equal(arrays["dual_coef_"], dual)), where,
          "dual_coef_ must be eigenvectors_ / sqrt(eigenvalues_)")
    ratio = lam / tr if tr > 0 else lam * 0.0
    _need(bool(np.array_equal(arrays["explained_variance_ratio_"], ratio)), where,
          "explained_variance_ratio_ must be eigenvalues_ / trace")
    if inverse:
        _need(bool(np.array_equal(arrays["X_transformed_fit_"],
                                  U * np.sqrt(np.maximum(lam, 0.0)))), where,
              "X_transformed_fit_ must be eigenvectors_ * sqrt(eigenvalues_)")
        _need(arrays["inverse_dual_coef_"].shape == (N, nf), where,
              f"inverse_dual_coef_ must have shape ({N}, {nf})")
    return kw


def _build_kpca(meta: dict, arrays: dict[str, np.ndarray], where: str) -> Any:
    """The KernelPCA of a checked file; its scores must be finite on a row of zeros and on
    its first training rows."""
    from ..certificate import Certificate
    from ..decomposition import KernelPCA
    from ..kernels import kernel_from_dict
    from .build import _num

    kw = _check_kpca(meta, arrays, where)
    model = KernelPCA(**kw)
    for k, v in arrays.items():
        if k != "fit_col_mean":
            setattr(model, k, v)
    model._fit_col_mean = arrays["fit_col_mean"]
    check_kernel(meta["kernel"], where)
    model.kernel_ = kernel_from_dict(meta["kernel"])
    model.n_features_in_ = int(meta["n_features_in"])
    model.trace_, model.solver_, model.lowrank_factor_ = float(meta["trace"]), meta["solver"], None
    c = meta["certificate"]
    model.certificate_ = Certificate(_num(c["primal_objective"]), _num(c["dual_objective"]),
                                     _num(c["duality_gap"]), _num(c["relative_gap"]),
                                     {k: _num(v) for k, v in c["kkt"].items()}, {},
                                     c["status"], c.get("extra", {}))
    check_finite_on_rows(model.transform, model.n_features_in_, model.X_fit_, where,
                         "the stored KernelPCA's scores")
    return model
