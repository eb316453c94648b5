"""Kernels beyond LIBSVM's four: Laplacian/exponential, rational quadratic, periodic, ARD
Gaussian, B-spline, the paraboloid lifting; the ``+``/``*`` algebra (:class:`Sum`,
:class:`Product`) is defined with the base class in :mod:`.functions` and re-exported here.

Each is a :class:`~primaldual.kernels.functions.Kernel`; none has a compiled
:meth:`~primaldual.kernels.functions.Kernel.spec`, so backends evaluate them in Python blocks.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import scipy.linalg
import scipy.spatial.distance

from .functions import (  # noqa: F401  (Sum, Product: the algebra lives with the base class)
    Kernel,
    Product,
    Sum,
    _dot_t,
    _positive,
    _sq_dists,
    _sq_norms,
    _Stationary,
)

__all__ = ["Laplacian", "RationalQuadratic", "Periodic", "ARDRBF", "BSpline", "Paraboloid", "Sum",
           "Product"]


class Laplacian(Kernel):
    r"""Laplacian kernel ``k(x, z) = exp(-gamma ||x - z||_1)`` (``norm="l1"``).

    With ``norm="l2"`` it is the exponential kernel ``exp(-gamma ||x - z||_2)``
    (Zhang 8.2.16 with ``gamma = 1/(2 sigma^2)``); registry name ``"exponential"``.
    Both are positive definite.
    """

    stationary = True
    _param_names = ("gamma",)

    def __init__(self, gamma: float = 1.0, norm: str = "l1") -> None:
        if norm not in ("l1", "l2"):
            raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}")
        self.gamma = _positive(gamma, "gamma")
        self.norm = norm
        self._freeze()

    @property
    def name(self) -> str:  # type: ignore[override]
        return "laplacian" if self.norm == "l1" else "exponential"

    _writes_out = True

    def _block(self, X, Z, out=None):
        if self.norm == "l2":
            D = _sq_dists(X, Z, _sq_norms(X), _sq_norms(Z), out=out)
            np.sqrt(D, out=D)
        elif out is None:
            D = scipy.spatial.distance.cdist(X, Z, "cityblock")
        else:
            D = scipy.spatial.distance.cdist(X, Z, "cityblock", out=out)
        D *= -self.gamma
        return np.exp(D, out=D)

    def _diag(self, X):
        return np.ones(X.shape[0])

    def to_dict(self) -> dict:
        return {"name": self.name, "gamma": self.gamma}

    def __repr__(self) -> str:
        if self.norm == "l1":
            return f"Laplacian(gamma={self.gamma!r})"
        return f"Laplacian(gamma={self.gamma!r}, norm='l2')"

    __str__ = __repr__

    def latex(self) -> str:
        if self.norm == "l1":
            return r"k(x,z)=\exp(-\gamma\|x-z\|_1)"
        return r"k(x,z)=\exp(-\gamma\|x-z\|_2)"


class RationalQuadratic(_Stationary):
    r"""Rational quadratic kernel ``(1 + ||x-z||^2 / (2 alpha l^2))^(-alpha)``.

    ``l = length_scale``; tends to ``exp(-||x-z||^2 / (2 l^2))`` as ``alpha -> inf``.
    Same parametrisation as :class:`sklearn.gaussian_process.kernels.RationalQuadratic`.
    """

    name = "rational_quadratic"
    _param_names = ("alpha", "length_scale")

    def __init__(self, alpha: float = 1.0, length_scale: float = 1.0) -> None:
        self.alpha = _positive(alpha, "alpha")
        self.length_scale = _positive(length_scale, "length_scale")
        self._freeze()

    def _profile(self, D):
        D *= 1.0 / (2.0 * self.alpha * self.length_scale**2)
        D += 1.0
        return np.power(D, -self.alpha, out=D)

    def latex(self) -> str:
        return r"k(x,z)=\left(1+\frac{\|x-z\|^2}{2\alpha\ell^2}\right)^{-\alpha}"


class Periodic(_Stationary):
    r"""Periodic (exp-sine-squared) kernel ``exp(-2 sin^2(pi ||x-z|| / p) / l^2)``.

    ``p = period``, ``l = length_scale``; same parametrisation as
    :class:`sklearn.gaussian_process.kernels.ExpSineSquared`.
    """

    name = "periodic"
    _param_names = ("period", "length_scale")

    def __init__(self, period: float = 1.0, length_scale: float = 1.0) -> None:
        self.period = _positive(period, "period")
        self.length_scale = _positive(length_scale, "length_scale")
        self._freeze()

    def _profile(self, D):
        np.sqrt(D, out=D)
        D *= math.pi / self.period
        np.sin(D, out=D)
        D *= D
        D *= -2.0 / self.length_scale**2
        return np.exp(D, out=D)

    def latex(self) -> str:
        return r"k(x,z)=\exp\left(-\frac{2\sin^2(\pi\|x-z\|/p)}{\ell^2}\right)"


class ARDRBF(Kernel):
    r"""Automatic-relevance-determination Gaussian ``exp(-sum_k gamma_k (x_k - z_k)^2)``.

    One positive ``gamma_k`` per feature (``gammas``, length ``n_features``).
    ``gamma_k = 1/(2 l_k^2)`` relates it to per-feature length scales ``l_k``.
    """

    name = "ard_rbf"
    stationary = True

    def __init__(self, gammas: Any) -> None:
        g = np.atleast_1d(np.asarray(gammas, dtype=np.float64))
        if g.ndim != 1 or g.size == 0:
            raise ValueError("gammas must be a non-empty 1-D vector")
        if not np.all(np.isfinite(g)) or np.any(g <= 0):
            raise ValueError("gammas must be positive and finite")
        self.gammas = tuple(float(v) for v in g)
        self._scale = np.sqrt(g)
        self._freeze()

    def _check(self, X):
        if X.shape[1] != len(self.gammas):
            raise ValueError(
                f"ARDRBF has {len(self.gammas)} gammas but X has {X.shape[1]} features"
            )

    _writes_out = True

    def _block(self, X, Z, out=None):
        self._check(X)
        A = X * self._scale
        B = Z * self._scale
        D = _sq_dists(A, B, _sq_norms(A), _sq_norms(B), out=out)
        D *= -1.0
        return np.exp(D, out=D)

    def _diag(self, X):
        self._check(X)
        return np.ones(X.shape[0])

    def params(self) -> dict:
        return {"gammas": list(self.gammas)}

    def latex(self) -> str:
        return r"k(x,z)=\exp\left(-\sum_k\gamma_k(x_k-z_k)^2\right)"


def _bspline(t: np.ndarray, n: int) -> np.ndarray:
    """Centred cardinal B-spline of degree ``n``:
    ``B_n(t) = 1/n! sum_{r=0}^{n+1} (-1)^r C(n+1, r) (t + (n+1)/2 - r)_+^n``."""
    out = np.zeros_like(t)
    half = (n + 1) / 2.0
    for r in range(n + 2):
        s = t + (half - r)
        np.maximum(s, 0.0, out=s)
        out += ((-1) ** r) * math.comb(n + 1, r) * s**n
    out /= math.factorial(n)
    # exact zero outside the support |t| < (n+1)/2 (removes cancellation noise)
    out[np.abs(t) >= half] = 0.0
    return out


class BSpline(Kernel):
    r"""Tensor-product B-spline kernel ``k(x, z) = prod_k B_{2p+1}(x_k - z_k)``.

    ``B_n`` is the centred cardinal B-spline of degree ``n`` (support ``|t| < (n+1)/2``,
    ``B_n(0)`` maximal).  Zhang (8.2.18) writes ``B_{2M+1}(||x - z||)``; the
    per-coordinate product used here is the positive-definite form (the Fourier
    transform of ``B_{2p+1}`` is ``sinc^{2p+2} >= 0``).  ``order = p``.
    """

    name = "bspline"
    stationary = True

    def __init__(self, order: int = 1) -> None:
        if isinstance(order, bool) or not isinstance(order, numbers.Integral) or order < 0:
            raise ValueError(f"order must be an integer >= 0, got {order!r}")
        if order > 50:
            # the spline's alternating sum divides by (2p + 1)!, which exceeds float64 from
            # p = 85, and costs 2p + 3 passes per coordinate: a forged order of 1e9 would hang
            raise ValueError(f"order must be an integer <= 50, got {order!r}")
        self.order = int(order)
        self._freeze()

    def _block(self, X, Z):
        n = 2 * self.order + 1
        K = np.ones((X.shape[0], Z.shape[0]))
        for k in range(X.shape[1]):
            K *= _bspline(X[:, k, None] - Z[None, :, k], n)
        return K

    def _diag(self, X):
        b0 = float(_bspline(np.zeros(1), 2 * self.order + 1)[0])
        return np.full(X.shape[0], b0 ** X.shape[1])

    def params(self) -> dict:
        return {"order": self.order}

    def latex(self) -> str:
        return r"k(x,z)=\prod_k B_{2p+1}(x_k-z_k)"


class Paraboloid(Kernel):
    r"""``k(x, z) = x^T z + ||x||^2 ||z||^2``: the inner product of the explicit feature map
    ``phi(x) = (x, ||x||^2)``, which lifts the plane onto the paraboloid ``x_3 = x_1^2 + x_2^2``.

    It is the kernel of Amini's slide "Linear Separability By Increasing Dimensions": a class
    inside a circle and one outside it become linearly separable in ``phi``-space (the datasets
    ``amini_kernel``, ``amini_kernel_soft``).  Positive semi-definite (an explicit inner product).
    """

    name = "paraboloid"

    def __init__(self) -> None:
        self._freeze()

    def _block(self, X, Z):
        return _dot_t(X, Z) + np.outer(_sq_norms(X), _sq_norms(Z))

    def _diag(self, X):
        s = _sq_norms(X)
        return s + s * s

    def latex(self) -> str:
        return r"k(x,z)=x^\top z+\|x\|^2\|z\|^2"
