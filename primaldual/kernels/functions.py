"""Kernel functions: the kernel classes, :func:`make_kernel` and :meth:`Kernel.spec`.

Conventions (docs/formulations.md, "Conventions"):

* ``K[i, j] = k(x_i, z_j) = <phi(x_i), phi(z_j)>``; rows of ``X`` are samples.
* The RBF kernel is stored by ``gamma``: ``exp(-gamma ||x - z||^2)``.  Suykens'
  ``sigma2`` (``exp(-||x-z||^2 / sigma2)``) and Zhang's ``sigma``
  (``exp(-||x-z||^2 / (2 sigma^2))``) are accepted by the constructor and converted,
  so one number means one thing.

Every kernel is a small immutable object.  ``kernel(X, Z)`` returns the dense block
``K[i, j] = k(X_i, Z_j)``, computed in row chunks so that temporaries stay bounded
(about ``CHUNK_ELEMENTS`` floats); ``kernel(X)`` returns the symmetric Gram matrix and
only evaluates its upper triangle.  ``kernel.diag(X)`` returns ``k(x_i, x_i)``
without forming the Gram matrix.  :meth:`Kernel.spec` is the one description of a
kernel that compiled (numba) code reads: ``(code, gamma, coef0, degree)``.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ..validation import as_2d, check_memory, check_positive, check_real

__all__ = [
    "CHUNK_ELEMENTS",
    "KernelSpec",
    "SPEC_LINEAR",
    "SPEC_RBF",
    "SPEC_POLY",
    "SPEC_SIGMOID",
    "Kernel",
    "Linear",
    "RBF",
    "Polynomial",
    "Sigmoid",
    "Precomputed",
    "CallableKernel",
]

#: Target number of float64 elements of one temporary block (rows x columns).
CHUNK_ELEMENTS: int = 2**22
#: [rbf_exponent_gemm] once imported (numba loaded; :meth:`_Stationary._block`)
_COMPILED: list = []
_TILE = 256
_SYM_BLOCKS = 4


#: The inverse of :meth:`Kernel.to_dict`, installed by :mod:`.factory` (whose registry knows every
#: subclass) when the package is imported: the base class imports none of the modules built on it.
_FROM_DICT: list[Callable[[dict], Kernel]] = []

#: Codes of the kernels that compiled code evaluates itself (:meth:`Kernel.spec`).
SPEC_LINEAR, SPEC_RBF, SPEC_POLY, SPEC_SIGMOID = 0, 1, 2, 3


class KernelSpec(NamedTuple):
    """What compiled code needs to evaluate ``k(x, z)`` from ``t = x^T z`` (and norms).

    ``code`` is one of ``SPEC_LINEAR`` (``t``), ``SPEC_RBF``
    (``exp(-gamma (|x|^2 + |z|^2 - 2 t))``), ``SPEC_POLY`` (``(gamma t + coef0)^degree``),
    ``SPEC_SIGMOID`` (``tanh(gamma t + coef0)``).
    """

    code: int
    gamma: float
    coef0: float
    degree: float


# --------------------------------------------------------------------------- helpers


def _as_rows(X: Any, name: str = "X") -> Any:
    """:func:`as_2d`, except that a scipy sparse ``X`` stays sparse: a float64 CSR matrix
    (finite stored values checked; O(nnz), never densified). The kernels' blocks take either."""
    if sp.issparse(X):
        A = X.tocsr() if X.format != "csr" else X
        if A.dtype != np.float64:
            A = A.astype(np.float64)
        if A.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {A.shape}")
        if not np.all(np.isfinite(A.data)):
            raise ValueError(f"{name} contains NaN or infinite values")
        return A
    return as_2d(X, name)


def _dot_t(A: Any, B: Any, out: np.ndarray | None = None) -> np.ndarray:
    """``A @ B.T`` as a dense float64 array (optionally into ``out``); either may be scipy
    sparse (the product of sparse rows is computed sparse and written dense)."""
    if not (sp.issparse(A) or sp.issparse(B)):
        return np.dot(A, B.T, out=out)
    P = A @ B.T
    P = P.toarray() if sp.issparse(P) else np.asarray(P)
    if out is None:
        return np.ascontiguousarray(P, dtype=np.float64)
    out[...] = P
    return out


# one validator per kind of argument, shared with the estimators
_positive = check_positive
_real = check_real


def _sq_norms(A: Any) -> np.ndarray:
    if sp.issparse(A):
        return np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", A, A)


def _sq_dists(A: np.ndarray, B: np.ndarray, a2: np.ndarray, b2: np.ndarray,
              out: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances ``||a_i - b_j||^2`` (clipped at 0), optionally into ``out``."""
    D = _dot_t(A, B, out=out)
    D *= -2.0
    D += a2[:, None]
    D += b2[None, :]
    np.maximum(D, 0.0, out=D)
    return D


#: bound on the GEMM form's absolute error in ``||x - z||^2``, relative to
#: ``||x||^2 + ||z||^2`` (a few roundings of each term)
_GEMM_DIST_ERR = 8.0 * np.finfo(np.float64).eps
#: largest error in the profile's argument accepted from the GEMM form
_PROFILE_TOL = 1e-10


def _sq_dists_exact(A: np.ndarray, B: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``||a_i - b_j||^2`` from the differences, one feature at a time (O(n m) memory, no
    cancellation: ``||x - x||^2`` is exactly 0), optionally into ``out``."""
    D = np.zeros((A.shape[0], B.shape[0])) if out is None else out
    if out is not None:
        D[...] = 0.0
    if sp.issparse(A) or sp.issparse(B):  # one row of A at a time: ||(B - a_i)||^2, sparse
        As = sp.csr_matrix(A)
        Bs = sp.csr_matrix(B)
        ones = np.ones((Bs.shape[0], 1))
        for i in range(As.shape[0]):
            E = Bs - sp.csr_matrix(ones) @ As[i]
            D[i] = np.asarray(E.multiply(E).sum(axis=1)).ravel()
        return D
    tmp = np.empty_like(D)
    # finite rows whose distance exceeds the float64 range: inf is the correctly rounded
    # value (the profiles map it to their limit, e.g. exp(-inf) = 0), not an accident
    with np.errstate(over="ignore"):
        for t in range(A.shape[1]):
            np.subtract(A[:, t, None], B[None, :, t], out=tmp)
            tmp *= tmp
            D += tmp
    return D


def _mirror_upper(K: np.ndarray, tile: int = _TILE) -> None:
    """Copy the strict upper triangle of the square ``K`` onto its lower triangle,
    in cache-sized tiles (in place)."""
    n = K.shape[0]
    for i0 in range(0, n, tile):
        i1 = min(n, i0 + tile)
        D = K[i0:i1, i0:i1]
        D[...] = np.triu(D) + np.triu(D, 1).T
        for j0 in range(i1, n, tile):
            j1 = min(n, j0 + tile)
            K[j0:j1, i0:i1] = K[i0:i1, j0:j1].T


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(float(v))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return repr(v) if isinstance(v, str) else str(v)


# --------------------------------------------------------------------------- base class


class Kernel:
    """Base class of all kernels.

    Subclasses implement :meth:`_block` (a dense block for a few rows) and
    :meth:`diag`; this class provides chunking, symmetry, serialisation and the
    ``+`` / ``*`` algebra (:class:`Sum`, :class:`Product`).

    Attributes
    ----------
    name : str
        Registry name (``"rbf"``, ``"linear"``, ...), the ``"name"`` key of :meth:`to_dict`.
    psd : bool
        ``True`` when the kernel is positive semi-definite for every data set
        (``False`` for :class:`Sigmoid`).
    stationary : bool
        ``True`` when ``k(x, z)`` depends on ``x - z`` only.
    """

    name: str = "kernel"
    psd: bool = True
    stationary: bool = False
    _frozen: bool = False

    # -- immutability ------------------------------------------------------------
    def __setattr__(self, key: str, value: Any) -> None:
        if self._frozen:
            raise AttributeError(f"{type(self).__name__} is immutable; build a new kernel")
        object.__setattr__(self, key, value)

    def _freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)

    # -- evaluation --------------------------------------------------------------
    #: ``True`` when :meth:`_block` accepts ``out=`` (a C-contiguous float64 block).
    _writes_out: bool = False

    def _block(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _fill(self, X: np.ndarray, Z: np.ndarray, out: np.ndarray) -> None:
        if self._writes_out:
            self._block(X, Z, out=out)
        else:
            out[...] = self._block(X, Z)

    def _chunk_rows(self, n_cols: int, n_features: int) -> int:
        return max(1, CHUNK_ELEMENTS // max(1, n_cols))

    def __call__(self, X: Any, Z: Any = None) -> np.ndarray:
        """Kernel block ``K[i, j] = k(X_i, Z_j)``.

        Parameters
        ----------
        X : array-like, shape (n, d)
        Z : array-like, shape (m, d), optional
            ``None`` means ``Z = X``; then only the upper triangle is evaluated and
            mirrored, and the diagonal is taken from :meth:`diag`.

        Returns
        -------
        ndarray, shape (n, m)
        """
        X = _as_rows(X, "X")
        symmetric = Z is None
        Z = X if symmetric else _as_rows(Z, "Z")
        if Z.shape[1] != X.shape[1]:
            raise ValueError(
                f"X and Z must have the same number of features, got {X.shape[1]} and {Z.shape[1]}"
            )
        n, m = X.shape[0], Z.shape[0]
        if n * m > 2**20:  # a large block: refuse clearly before numpy (or the OS) fails
            check_memory(8 * n * m, f"the {n} x {m} kernel matrix")
        K = np.empty((n, m), dtype=np.float64)
        if n == 0 or m == 0:
            return K
        step = self._chunk_rows(m, X.shape[1])
        if not symmetric:
            for i0 in range(0, n, step):
                i1 = min(n, i0 + step)
                self._fill(X[i0:i1], Z, K[i0:i1])
            return K
        # Upper block-triangle only (row block [i0, i1) against columns [i0, n)); then the
        # strict upper triangle is mirrored tile by tile, so K is exactly symmetric.
        # Blocks stay as large as the chunk allows: many small GEMMs are slow on a
        # loaded multi-threaded BLAS.
        step = max(1, min(step, max(_TILE, -(-n // _SYM_BLOCKS))))
        if step >= n:
            self._fill(X, X, K)
        else:
            buf = np.empty(step * n)
            for i0 in range(0, n, step):
                i1 = min(n, i0 + step)
                out = buf[: (i1 - i0) * (n - i0)].reshape(i1 - i0, n - i0)
                self._fill(X[i0:i1], X[i0:], out)
                K[i0:i1, i0:] = out
        _mirror_upper(K)
        K.flat[:: n + 1] = self._diag(X)
        return K

    def diag(self, X: Any) -> np.ndarray:
        """``k(x_i, x_i)`` for every row, without forming the Gram matrix."""
        X = _as_rows(X, "X")
        return self._diag(X)

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return np.array([self._block(X[i : i + 1], X[i : i + 1])[0, 0] for i in range(len(X))])

    def spec(self) -> KernelSpec | None:
        """The kernel as compiled code reads it, or ``None`` when only :meth:`__call__`
        can evaluate it (then backends fall back to blocks computed in Python)."""
        return None

    # -- description ---------------------------------------------------------------
    #: names of the constructor arguments stored as attributes (what :meth:`params` returns)
    _param_names: tuple[str, ...] = ()

    def params(self) -> dict:
        """JSON-serialisable hyper-parameters (constructor keyword arguments)."""
        return {k: getattr(self, k) for k in self._param_names}

    def to_dict(self) -> dict:
        """``{"name": name, **params()}``; inverted by :meth:`from_dict`."""
        return {"name": self.name, **self.params()}

    @staticmethod
    def from_dict(d: dict) -> Kernel:
        """Rebuild a kernel from :meth:`to_dict` output
        (:func:`~primaldual.kernels.factory.kernel_from_dict`)."""
        return _FROM_DICT[0](d)

    def latex(self) -> str:
        """The kernel formula as a LaTeX string."""
        return r"k(x,z)"

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={_fmt(v)}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Kernel):
            return NotImplemented
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self))

    # -- algebra ---------------------------------------------------------------------
    def __add__(self, other: Kernel) -> Kernel:
        if not isinstance(other, Kernel):
            return NotImplemented
        return Sum(self, other)

    def __mul__(self, other: Kernel) -> Kernel:
        if not isinstance(other, Kernel):
            return NotImplemented
        return Product(self, other)


# --------------------------------------------------------------------------- kernels


class Linear(Kernel):
    r"""Linear kernel ``k(x, z) = x^T z``."""

    name = "linear"

    def __init__(self) -> None:
        self._freeze()

    _writes_out = True

    def _block(self, X, Z, out=None):
        return _dot_t(X, Z, out=out)

    def _diag(self, X):
        return _sq_norms(X)

    def spec(self) -> KernelSpec:
        return KernelSpec(SPEC_LINEAR, 1.0, 0.0, 1.0)

    def latex(self) -> str:
        return r"k(x,z)=x^\top z"


class _Stationary(Kernel):
    """``k(x, z) = profile(||x - z||^2)`` with ``k(x, x) = 1``: subclasses give ``_profile``,
    applied in place to the block of squared distances."""

    stationary = True
    _writes_out = True

    def _profile(self, D: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    #: the factor the profile multiplies ``||x - z||^2`` by (RBF: ``gamma``); ``None``: the
    #: profile has no such scale and the GEMM form is always used
    _dist_scale: float | None = None
    #: ``True`` (RBF): the profile is ``exp(-gamma D)`` and the GEMM form's elementwise passes
    #: may run compiled (:func:`~primaldual.kernels.compiled.rbf_exponent_gemm`)
    _compiled_exponent: bool = False

    def _block(self, X, Z, out=None):
        a2, b2 = _sq_norms(X), _sq_norms(Z)
        scale = self._dist_scale
        if scale is not None and a2.size and b2.size and \
                _GEMM_DIST_ERR * scale * (float(a2.max()) + float(b2.max())) > _PROFILE_TOL:
            # ||x||^2 + ||z||^2 - 2 x.z loses ~eps (||x||^2 + ||z||^2) to cancellation; once
            # that error, times the profile's scale, shows in the kernel value (e.g. RBF with
            # gamma = 1e5 on features of 1e6: k(x, x) came out 0 instead of 1, and the
            # certificate's block and predict's block disagreed), use the differences
            return self._profile(_sq_dists_exact(X, Z, out=out))
        if self._compiled_exponent and "numba" in sys.modules \
                and type(self)._profile is RBF._profile:
            # RBF once numba is loaded: the GEMM, then its exponent in one
            # compiled pass (the numpy passes below, bit for bit), then numpy's exp
            D = _dot_t(X, Z, out=out)
            if D.flags.c_contiguous and D.dtype == a2.dtype == b2.dtype == np.float64:
                if not _COMPILED:
                    from .compiled import rbf_exponent_gemm
                    _COMPILED.append(rbf_exponent_gemm)
                _COMPILED[0](D, a2, b2, float(self.gamma))
                return np.exp(D, out=D)
            D *= -2.0
            D += a2[:, None]
            D += b2[None, :]
            np.maximum(D, 0.0, out=D)
            return self._profile(D)
        return self._profile(_sq_dists(X, Z, a2, b2, out=out))

    def _diag(self, X):
        return np.ones(X.shape[0])


class _DotProduct(Kernel):
    """``k(x, z) = profile(gamma x^T z + coef0)``: subclasses give ``_profile`` (in place)."""

    _writes_out = True
    gamma: float
    coef0: float

    def _profile(self, G: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _block(self, X, Z, out=None):
        G = _dot_t(X, Z, out=out)
        G *= self.gamma
        G += self.coef0
        return self._profile(G)

    def _diag(self, X):
        return self._profile(self.gamma * _sq_norms(X) + self.coef0)


class RBF(_Stationary):
    r"""Gaussian kernel ``k(x, z) = exp(-gamma ||x - z||^2)``.

    Exactly one of ``gamma``, ``sigma2`` (Suykens: ``exp(-||x-z||^2 / sigma2)``,
    ``gamma = 1/sigma2``) and ``sigma`` (Zhang 8.2.15: ``exp(-||x-z||^2/(2 sigma^2))``,
    ``gamma = 1/(2 sigma^2)``) must be given; only ``gamma`` is stored.
    """

    name = "rbf"
    _param_names = ("gamma",)

    def __init__(self, gamma: float | None = None, sigma2: float | None = None,
                 sigma: float | None = None) -> None:
        given = [v is not None for v in (gamma, sigma2, sigma)]
        if sum(given) != 1:
            raise ValueError("RBF: give exactly one of gamma, sigma2, sigma")
        if gamma is not None:
            g = _positive(gamma, "gamma")
        elif sigma2 is not None:
            g = 1.0 / _positive(sigma2, "sigma2")
        else:
            g = 1.0 / (2.0 * _positive(sigma, "sigma") ** 2)
        self.gamma = g
        self._freeze()

    @property
    def sigma2(self) -> float:
        """Suykens' width: ``sigma2 = 1/gamma``."""
        return 1.0 / self.gamma

    @property
    def sigma(self) -> float:
        """Zhang's width: ``sigma = sqrt(1/(2 gamma))``."""
        return math.sqrt(0.5 / self.gamma)

    @property
    def _dist_scale(self) -> float:  # type: ignore[override]
        return self.gamma

    _compiled_exponent = True

    def _profile(self, D):
        D *= -self.gamma
        return np.exp(D, out=D)

    def spec(self) -> KernelSpec:
        return KernelSpec(SPEC_RBF, self.gamma, 0.0, 0.0)

    def latex(self) -> str:
        return r"k(x,z)=\exp(-\gamma\|x-z\|^2)"


#: Largest polynomial degree accepted (model files with a larger one are refused).
MAX_POLY_DEGREE = 1000


class Polynomial(_DotProduct):
    r"""Polynomial kernel ``k(x, z) = (gamma x^T z + coef0)^degree``."""

    name = "poly"
    _param_names = ("degree", "gamma", "coef0")

    def __init__(self, degree: int = 3, gamma: float = 1.0, coef0: float = 1.0) -> None:
        if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
            raise ValueError(f"degree must be an integer >= 1, got {degree!r}")
        if degree > MAX_POLY_DEGREE:
            # b^d is a normal float64 only for |ln|b|| <= 708/d: beyond 1000 the kernel of any
            # data set is 0 or inf off |gamma x'z + coef0| in (0.49, 2.03), never a model
            raise ValueError(f"degree must be an integer <= {MAX_POLY_DEGREE} (a larger "
                             f"power is 0 or inf in float64 for almost every pair of points), "
                             f"got {degree!r}")
        self.degree = int(degree)
        self.gamma = _positive(gamma, "gamma")
        self.coef0 = _real(coef0, "coef0")
        # (gamma x'z + coef0)^d is PSD for every data set when coef0 >= 0 (gamma > 0 here): a
        # sum of products of PSD kernels; a negative coef0 makes it data-dependent
        self.psd = self.coef0 >= 0
        self._freeze()

    def _profile(self, G):
        if self.degree == 2:
            return np.multiply(G, G, out=G)
        return np.power(G, self.degree, out=G)

    def spec(self) -> KernelSpec:
        return KernelSpec(SPEC_POLY, self.gamma, self.coef0, float(self.degree))

    def latex(self) -> str:
        return r"k(x,z)=(\gamma x^\top z + c_0)^{d}"


class Sigmoid(_DotProduct):
    r"""Sigmoid (multilayer-perceptron) kernel ``k(x, z) = tanh(gamma x^T z + coef0)``.

    Zhang (8.2.17) with ``rho = gamma``, ``theta = coef0``.  Not positive semi-definite
    in general: ``psd = False``.
    """

    name = "sigmoid"
    psd = False
    _param_names = ("gamma", "coef0")

    def __init__(self, gamma: float = 1.0, coef0: float = 0.0) -> None:
        self.gamma = _positive(gamma, "gamma")
        self.coef0 = _real(coef0, "coef0")
        self._freeze()

    def _profile(self, G):
        return np.tanh(G, out=G)

    def spec(self) -> KernelSpec:
        return KernelSpec(SPEC_SIGMOID, self.gamma, self.coef0, 0.0)

    def latex(self) -> str:
        return r"k(x,z)=\tanh(\gamma x^\top z + c_0)"


class Precomputed(Kernel):
    """Kernel values given directly (scikit-learn's ``kernel="precomputed"``).

    ``__call__(X, Z=None)`` returns ``X`` as a float array: at fit ``X`` is the
    ``N x N`` Gram matrix, at predict it is the ``n_test x N`` block ``k(x_test, x_train)``.
    ``Z`` is ignored.  ``diag(X) = np.diag(X)``.
    """

    name = "precomputed"

    def __init__(self) -> None:
        self._freeze()

    def __call__(self, X: Any, Z: Any = None) -> np.ndarray:
        return as_2d(X, "X").copy()

    def diag(self, X: Any) -> np.ndarray:
        X = as_2d(X, "X")
        return np.diag(X).copy()

    def latex(self) -> str:
        return r"K_{ij}\ \text{given}"


class CallableKernel(Kernel):
    """Wraps a user function ``func(X, Z) -> ndarray`` of shape ``(len(X), len(Z))``.

    ``psd`` is the user's claim (default ``True``).  Not serialisable by value:
    :meth:`to_dict` records the function's qualified name only and
    :func:`kernel_from_dict` refuses it.
    """

    name = "callable"

    def __init__(self, func: Callable[[np.ndarray, np.ndarray], Any], psd: bool = True) -> None:
        if not callable(func):
            raise TypeError("func must be callable")
        self.func = func
        self.psd = bool(psd)
        self._freeze()

    def _block(self, X, Z):
        K = np.asarray(self.func(X, Z), dtype=np.float64)
        if K.shape != (X.shape[0], Z.shape[0]):
            raise ValueError(
                f"kernel callable returned shape {K.shape}, expected {(X.shape[0], Z.shape[0])}"
            )
        return K

    def params(self) -> dict:
        return {"function": getattr(self.func, "__qualname__", repr(self.func))}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallableKernel) and other.func is self.func

    def __hash__(self) -> int:
        return hash(("callable", id(self.func)))


# --------------------------------------------------------------------------- algebra


class _Combined(Kernel):
    """Two kernels combined entrywise (``_op``); PSD and stationary if both parts are."""

    _op: Callable[[np.ndarray, np.ndarray], np.ndarray]
    _text: str  # str() pattern over {k1}, {k2}
    _tex: str

    def __init__(self, k1: Kernel, k2: Kernel) -> None:
        cls = type(self).__name__
        if not isinstance(k1, Kernel) or not isinstance(k2, Kernel):
            raise TypeError(f"{cls}: k1 and k2 must be Kernel instances")
        if isinstance(k1, Precomputed) or isinstance(k2, Precomputed):
            raise ValueError(f"{cls}: a precomputed kernel cannot be combined")
        self.k1 = k1
        self.k2 = k2
        self.psd = k1.psd and k2.psd
        self.stationary = k1.stationary and k2.stationary
        self._freeze()

    def _block(self, X, Z):
        return type(self)._op(self.k1._block(X, Z), self.k2._block(X, Z))

    def _diag(self, X):
        return type(self)._op(self.k1._diag(X), self.k2._diag(X))

    def params(self) -> dict:
        return {"k1": self.k1.to_dict(), "k2": self.k2.to_dict()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.k1!r}, {self.k2!r})"

    def __str__(self) -> str:
        return self._text.format(k1=self.k1, k2=self.k2)

    def latex(self) -> str:
        return self._tex


class Sum(_Combined):
    """Sum kernel ``k(x, z) = k1(x, z) + k2(x, z)`` (Zhang 8.2.20)."""

    name = "sum"
    _op = np.add
    _text = "{k1} + {k2}"
    _tex = r"k(x,z)=k_1(x,z)+k_2(x,z)"


class Product(_Combined):
    """Product kernel ``k(x, z) = k1(x, z) * k2(x, z)`` (PSD if both factors are)."""

    name = "product"
    _op = np.multiply
    _text = "({k1}) * ({k2})"
    _tex = r"k(x,z)=k_1(x,z)\,k_2(x,z)"
