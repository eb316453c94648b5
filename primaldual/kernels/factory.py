"""Building kernels by name: :func:`make_kernel` (scikit-learn's ``kernel``/``gamma``/``degree``/
``coef0`` convention, ``gamma="scale"/"auto"`` resolved on ``X``), :func:`kernel_from_dict` (the
inverse of :meth:`Kernel.to_dict`) and :func:`mercer_check`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..validation import mercer_check
from .extended import (
    ARDRBF,
    BSpline,
    Laplacian,
    Paraboloid,
    Periodic,
    Product,
    RationalQuadratic,
    Sum,
)
from .functions import (
    _FROM_DICT,
    RBF,
    CallableKernel,
    Kernel,
    Linear,
    Polynomial,
    Precomputed,
    Sigmoid,
    _as_rows,
    as_2d,
)

__all__ = ["KERNEL_NAMES", "make_kernel", "kernel_from_dict", "mercer_check"]


# --------------------------------------------------------------------------- registry

_REGISTRY: dict[str, Callable[..., Kernel]] = {
    "linear": Linear,
    "rbf": RBF,
    "poly": Polynomial,
    "polynomial": Polynomial,
    "sigmoid": Sigmoid,
    "laplacian": lambda **p: Laplacian(norm="l1", **p),
    "exponential": lambda **p: Laplacian(norm="l2", **p),
    "rational_quadratic": RationalQuadratic,
    "periodic": Periodic,
    "ard_rbf": ARDRBF,
    "bspline": BSpline,
    "paraboloid": Paraboloid,
    "precomputed": Precomputed,
}

#: Names accepted by :func:`make_kernel` and :func:`kernel_from_dict`.
KERNEL_NAMES: tuple[str, ...] = tuple(_REGISTRY) + ("sum", "product")


def kernel_from_dict(d: dict) -> Kernel:
    """Inverse of :meth:`Kernel.to_dict`: ``kernel_from_dict(k.to_dict()) == k``."""
    if not isinstance(d, dict) or "name" not in d:
        raise ValueError("d must be a dict with a 'name' key (output of Kernel.to_dict)")
    p = dict(d)
    name = p.pop("name")
    if name in ("sum", "product"):
        cls = Sum if name == "sum" else Product
        return cls(kernel_from_dict(p["k1"]), kernel_from_dict(p["k2"]))
    if name == "callable":
        raise ValueError("a callable kernel cannot be rebuilt from its dict")
    if name not in _REGISTRY:
        raise ValueError(f"unknown kernel name {name!r}; allowed: {', '.join(KERNEL_NAMES)}")
    return _REGISTRY[name](**p)


_FROM_DICT.append(kernel_from_dict)  # Kernel.from_dict

_GAMMA_KERNELS = ("rbf", "poly", "polynomial", "sigmoid", "laplacian", "exponential", "ard_rbf",
                  "rational_quadratic", "periodic")


def _variance(A: Any) -> float:
    """``A.var()`` over all entries; for a scipy sparse ``A`` from its stored values in O(nnz),
    the same two-pass formula as numpy's (the mean, then the squared deviations, the implicit
    zeros contributing ``mean^2`` each)."""
    # finite values near the float64 limit overflow the sum of squares to inf: the caller
    # reports that in words (resolve_gamma), so numpy's RuntimeWarning would only be noise
    with np.errstate(over="ignore", invalid="ignore"):
        if not sp.issparse(A):
            return float(A.var())
        n = A.shape[0] * A.shape[1]
        if n == 0:
            return float("nan")
        vals = A.data
        mean = float(vals.sum()) / n
        dev = vals - mean
        return (float(dev @ dev) + (n - vals.shape[0]) * mean * mean) / n


def _constant(A: Any) -> bool:
    """Every entry of ``A`` the same (a sparse ``A``'s implicit zeros included)."""
    vals = A.data if sp.issparse(A) else A
    if sp.issparse(A) and vals.size < A.shape[0] * A.shape[1]:
        vals = np.append(vals, 0.0)
    return bool(vals.size == 0 or np.min(vals) == np.max(vals))


def resolve_gamma(gamma: Any, X: Any) -> float:
    if isinstance(gamma, str):
        if gamma not in ("scale", "auto"):
            raise ValueError(f"gamma must be 'scale', 'auto' or a positive number, got {gamma!r}")
        if X is None:
            raise ValueError(f"gamma={gamma!r} needs the training data X")
        A = _as_rows(X, "X")
        n_features = A.shape[1]
        if gamma == "auto":
            return 1.0 / n_features
        var = _variance(A)
        if A.shape[0] * A.shape[1] == 0 or (var == 0 and _constant(A)):
            return 1.0                            # no spread at all: scikit-learn's 1.0
        g = 1.0 / (n_features * var) if math.isfinite(var) and var > 0 else math.nan
        if not (math.isfinite(g) and g > 0):
            # A is finite (_as_rows checked it): a non-finite variance is an overflow of its
            # sums (1 / (d inf) = 0 would make every kernel value constant), a zero one of
            # a non-constant A an underflow (like a subnormal one, 1 / (d var) overflows)
            from ..exceptions import NumericalTroubleError
            # (scikit-learn's SVC says "The dual coefficients or intercepts are not finite"
            # on overflow; its estimator checks match that sentence, so it is kept)
            how = ("overflows (X holds finite values near the float64 limit), so the kernel "
                   "width would be 0 and the model would not be finite. The dual coefficients "
                   "or intercepts are not finite" if not var < math.inf else
                   f"underflows (X.var() = {var:.3g}: X holds values near the smallest "
                   "float64), so the kernel width 1 / (n_features X.var()) is not a finite "
                   "number")
            raise NumericalTroubleError(f"gamma='scale': X.var() {how}; rescale X (e.g. "
                                        "sklearn.preprocessing.StandardScaler) or give gamma "
                                        "as a number")
        return g
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real):
        raise TypeError(f"gamma must be 'scale', 'auto' or a positive number, got {gamma!r}")
    if not (float(gamma) > 0 and math.isfinite(float(gamma))):
        raise ValueError(f"gamma must be 'scale', 'auto' or a positive number, got {gamma!r}")
    return float(gamma)


def make_kernel(kernel: str | Kernel | Callable = "rbf", gamma: float | str = "scale",
                degree: int = 3, coef0: float = 0.0, X: Any = None) -> Kernel:
    """Build a :class:`Kernel` from scikit-learn style arguments.

    Parameters
    ----------
    kernel : str, Kernel or callable
        A :class:`Kernel` is returned as is.  A callable ``k(X, Z) -> ndarray`` is
        wrapped in :class:`CallableKernel`.  Names: scikit-learn's ``"linear"``,
        ``"poly"``, ``"rbf"``, ``"sigmoid"``, ``"precomputed"`` plus ``"polynomial"``,
        ``"laplacian"``, ``"exponential"``, ``"rational_quadratic"``, ``"periodic"``,
        ``"ard_rbf"``, ``"bspline"``, ``"paraboloid"``.
    gamma : float or {"scale", "auto"}
        ``"scale"`` = ``1 / (n_features * X.var())`` (``X`` required), ``"auto"`` =
        ``1 / n_features``, as in scikit-learn.  Used by rbf, poly, sigmoid, laplacian,
        exponential, ard_rbf (same gamma for every feature) and, through
        ``length_scale = 1/sqrt(2 gamma)``, by rational_quadratic and periodic.
    degree : int
        Polynomial degree; B-spline order ``p`` for ``"bspline"``.
    coef0 : float
        Offset of poly and sigmoid.
    X : array-like, optional
        Training data, needed for ``gamma="scale"`` and ``"ard_rbf"``.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if callable(kernel) and not isinstance(kernel, str):
        return CallableKernel(kernel)
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a string, a Kernel or a callable, got {type(kernel)}")
    if kernel not in _REGISTRY:
        raise ValueError(
            f"kernel must be one of {', '.join(_REGISTRY)} (or a Kernel / callable), "
            f"got {kernel!r}"
        )
    if kernel in ("linear", "paraboloid", "precomputed"):
        return _REGISTRY[kernel]()
    if kernel == "bspline":
        return BSpline(order=degree)
    g = resolve_gamma(gamma, X)
    if kernel == "rbf":
        return RBF(gamma=g)
    if kernel in ("poly", "polynomial"):
        return Polynomial(degree=degree, gamma=g, coef0=coef0)
    if kernel == "sigmoid":
        return Sigmoid(gamma=g, coef0=coef0)
    if kernel == "laplacian":
        return Laplacian(gamma=g)
    if kernel == "exponential":
        return Laplacian(gamma=g, norm="l2")
    if kernel == "ard_rbf":
        if X is None:
            raise ValueError("kernel='ard_rbf' needs X to know the number of features")
        return ARDRBF(np.full(as_2d(X, "X").shape[1], g))
    ls = 1.0 / math.sqrt(2.0 * g)
    if kernel == "rational_quadratic":
        return RationalQuadratic(alpha=1.0, length_scale=ls)
    return Periodic(period=1.0, length_scale=ls)
