r"""KKT linear-system backend: LS-SVM, proximal SVM and kernel ridge by one Cholesky.

Every solver here works on raw arrays; the adapter from ``Problem`` objects lives elsewhere.

The bordered KKT system (docs/formulations.md 7, 8, 11 and "Solving the bordered KKT system")
is

.. math::

    \begin{bmatrix} 0 & u^T \\ u & H \end{bmatrix}
    \begin{bmatrix} b \\ a \end{bmatrix} =
    \begin{bmatrix} 0 \\ d \end{bmatrix},
    \qquad H = D_s (K + I/C) D_s,\quad u = s,

with a sign vector ``s`` in ``{-1, +1}^N``: ``s = y`` for the LS-SVM classifier
(``d = 1``, or Fisher targets), ``s = 1`` for LS-SVM regression (``d = y``) and for kernel ridge
(``bias=False``: ``H a = d``, ``b = 0``). Because ``D_s^2 = I`` one Cholesky factor of
``A = K + I/C`` serves every sign pattern: with ``eta = H^{-1} u = D_s A^{-1} 1`` and
``nu = H^{-1} d = D_s A^{-1} D_s d``,

    ``b = u^T nu / u^T eta = 1^T A^{-1}(s*d) / 1^T A^{-1} 1``,   ``a = nu - b eta``.

Both right-hand sides ``[1, s*d]`` go through one triangular solve. ``a`` is the multiplier
``alpha`` of the signed system; the predictor coefficient is ``beta = s * a`` and
``f(x) = sum_i beta_i k(x, x_i) + b``. The bordered matrix itself is indefinite and is never
formed or LU-factorised.

Paths: direct (:func:`factor_kernel` + :func:`solve_bordered`), matrix-free preconditioned CG
(:func:`solve_bordered_cg`), low-rank / fixed-size LS-SVM (:func:`solve_lowrank`), plus
leave-one-out residuals, GCV, the Gaussian-process variance and LS-SVM pruning.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import blas as _blas
from scipy.linalg import lapack as _lapack

from ..exceptions import ConvergenceWarning, SingularKKTError

__all__ = [
    "SingularKKTError",
    "ConvergenceWarning",
    "KernelCholesky",
    "CGResult",
    "PrunePath",
    "factor_kernel",
    "solve_bordered",
    "fit_direct",
    "kkt_residual",
    "solve_bordered_cg",
    "solve_lowrank",
    "loo_residuals",
    "gcv_score",
    "gp_predictive_variance",
    "prune_path",
    "gram",
]


# ---------------------------------------------------------------------------
# kernels: fast in-place Gram construction for rbf / linear / poly, generic fallback
# ---------------------------------------------------------------------------


def _kernel_spec(kernel: Any) -> tuple | None:
    """Recognise RBF / linear / polynomial kernels for the in-place fast path.

    Returns ``("rbf", gamma)``, ``("linear",)``, ``("poly", gamma, coef0, degree)`` or ``None``
    (then the kernel object is called).
    """
    if kernel is None:
        return None
    spec_fn = getattr(kernel, "spec", None)
    if callable(spec_fn):  # primaldual.kernels.Kernel.spec: the one kernel description
        from ..kernels import SPEC_LINEAR, SPEC_POLY, SPEC_RBF
        spec = spec_fn()
        if spec is None:
            return None
        if spec.code == SPEC_RBF:
            return ("rbf", spec.gamma)
        if spec.code == SPEC_LINEAR:
            return ("linear",)
        if spec.code == SPEC_POLY:
            return ("poly", spec.gamma, spec.coef0, spec.degree)
        return None
    name = str(getattr(kernel, "name", "")).lower()

    def num(attr):
        v = getattr(kernel, attr, None)
        if isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v):
            return float(v)
        return None

    if name in ("rbf", "gaussian"):
        g = num("gamma")
        return ("rbf", g) if g is not None and g > 0 else None
    if name == "linear":
        return ("linear",)
    if name in ("poly", "polynomial"):
        g, c0, deg = num("gamma"), num("coef0"), num("degree")
        if g is not None and c0 is not None and deg is not None:
            return ("poly", g, c0, deg)
    return None


def _check_kernel(kernel: Any) -> Any:
    """Validate ``kernel``; a ``Precomputed`` kernel object is normalised to ``None``."""
    if kernel is not None and str(getattr(kernel, "name", "")).lower() == "precomputed":
        return None
    if kernel is not None and not callable(kernel):
        raise TypeError(
            f"kernel must be a primaldual.kernels.Kernel (callable kernel(X, Z)) or None for a "
            f"precomputed Gram matrix, got {type(kernel).__name__}"
        )
    return kernel


def gram(kernel: Any, A: np.ndarray, B: np.ndarray | None = None, *, dtype=np.float64,
         _spec: tuple | None = None) -> np.ndarray:
    """Kernel block ``K_ij = k(A_i, B_j)`` as a C-ordered array of ``dtype``.

    RBF (``exp(-gamma ||a-b||^2)``), linear and polynomial kernels are computed with one GEMM
    and in-place elementwise updates; any other kernel is called as ``kernel(A, B)``.
    """
    spec = _kernel_spec(kernel) if _spec is None else _spec
    if spec is None:
        K = kernel(A) if B is None else kernel(A, B)
        return np.asarray(K, dtype=dtype)
    Bm = A if B is None else B
    Aa = np.asarray(A, dtype=dtype)
    Ba = np.asarray(Bm, dtype=dtype)
    if spec[0] == "rbf":
        # exp(2g a.b - g|a|^2 - g|b|^2): scale the small factor, then 4 passes over the block
        g = spec[1]
        K = (Aa * (2.0 * g)).astype(dtype, copy=False) @ Ba.T
        sa = (g * np.einsum("ij,ij->i", Aa, Aa)).astype(dtype)
        sb = sa if B is None else (g * np.einsum("ij,ij->i", Ba, Ba)).astype(dtype)
        K -= sa[:, None]
        K -= sb[None, :]
        np.minimum(K, 0.0, out=K)
        np.exp(K, out=K)
        return K
    K = Aa @ Ba.T
    if spec[0] == "poly":
        _, g, c0, deg = spec
        K *= g
        K += c0
        if deg != 1.0:
            np.power(K, deg, out=K)
    return K


def _kernel_diag(kernel: Any, X: np.ndarray) -> np.ndarray:
    spec = _kernel_spec(kernel)
    if spec is not None and spec[0] == "rbf":
        return np.ones(X.shape[0])
    if spec is not None and spec[0] == "linear":
        return np.einsum("ij,ij->i", X, X)
    if spec is not None and spec[0] == "poly":
        _, g, c0, deg = spec
        return (g * np.einsum("ij,ij->i", X, X) + c0) ** deg
    diag = getattr(kernel, "diag", None)
    if diag is not None:
        return np.asarray(diag(X), dtype=float)
    return np.array([float(np.asarray(kernel(X[i:i + 1], X[i:i + 1]))[0, 0])
                     for i in range(X.shape[0])])


def _fill_gram_lower(X: np.ndarray, spec: tuple, G: np.ndarray, block: int = 1024) -> None:
    """Write the lower triangle of the Gram matrix of ``X`` into the F-ordered ``G`` in place.

    One SYRK (half the flops of ``X @ X.T``) then in-place elementwise updates on column
    blocks of the lower triangle. The strict upper triangle is left untouched (garbage).
    """
    N = X.shape[0]
    dt = G.dtype
    Xf = np.asfortranarray(X, dtype=dt)
    syrk = _blas.get_blas_funcs("syrk", (G,))
    kind = spec[0]
    alpha = 2.0 * spec[1] if kind == "rbf" else (spec[1] if kind == "poly" else 1.0)
    out = syrk(alpha, Xf, beta=0.0, c=G, trans=0, lower=1, overwrite_c=1)
    if not np.shares_memory(out, G):  # pragma: no cover - defensive: BLAS wrapper copied
        G[...] = out
    if kind == "linear":
        return
    if kind == "rbf":
        sq = (spec[1] * np.einsum("ij,ij->i", Xf, Xf)).astype(dt)
    for j0 in range(0, N, block):
        j1 = min(N, j0 + block)
        V = G[j0:, j0:j1]
        if kind == "rbf":
            V -= sq[j0:, None]
            V -= sq[None, j0:j1]
            np.minimum(V, 0.0, out=V)
            np.exp(V, out=V)
        else:
            V += spec[2]
            if spec[3] != 1.0:
                np.power(V, spec[3], out=V)


# ---------------------------------------------------------------------------
# the factor
# ---------------------------------------------------------------------------


@dataclass
class KernelCholesky:
    r"""Cholesky factor ``L`` (lower) of ``A = K + I/C + jitter*I``, ``A = L L^T``.

    Attributes
    ----------
    L : ndarray, shape (N, N), Fortran order
        Lower triangle holds the factor; the strict upper triangle is unspecified (never read).
    C : float
        Error weight (``np.inf`` allowed: then ``A = K + jitter*I``).
    jitter : float
        Diagonal shift actually applied (0 if none).
    """

    L: np.ndarray
    C: float
    jitter: float = 0.0
    _inv_diag: np.ndarray | None = field(default=None, repr=False)
    _eta: np.ndarray | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        """Number of training rows ``N``."""
        return self.L.shape[0]

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """Return ``A^{-1} rhs`` for ``rhs`` of shape (N,) or (N, k) (one POTRS call)."""
        rhs = np.asarray(rhs)
        if rhs.shape[0] != self.n:
            raise ValueError(f"rhs has {rhs.shape[0]} rows, the factor has {self.n}")
        one_d = rhs.ndim == 1
        R = np.array(rhs.reshape(self.n, -1), dtype=self.L.dtype, order="F")
        potrs = _lapack.get_lapack_funcs("potrs", (self.L,))
        x, info = potrs(self.L, R, lower=1, overwrite_b=1)
        if info != 0:  # pragma: no cover - only on invalid arguments
            raise ValueError(f"LAPACK potrs failed with info={info}")
        x = np.asarray(x, dtype=np.float64)
        return x[:, 0] if one_d else x

    def solve_lower(self, rhs: np.ndarray) -> np.ndarray:
        """Return ``L^{-1} rhs`` (forward substitution), rhs (N,) or (N, k)."""
        rhs = np.asarray(rhs)
        one_d = rhs.ndim == 1
        R = np.array(rhs.reshape(self.n, -1), dtype=self.L.dtype, order="F")
        trtrs = _lapack.get_lapack_funcs("trtrs", (self.L,))
        x, info = trtrs(self.L, R, lower=1, overwrite_b=1)
        if info != 0:  # pragma: no cover
            raise ValueError(f"LAPACK trtrs failed with info={info}")
        x = np.asarray(x, dtype=np.float64)
        return x[:, 0] if one_d else x

    def logdet(self) -> float:
        """``log det A = 2 sum_i log L_ii``."""
        return float(2.0 * np.sum(np.log(np.diagonal(self.L).astype(np.float64))))

    def eta(self) -> np.ndarray:
        """``A^{-1} 1`` (cached): the unsigned ``eta`` of the bordered reformulation."""
        if self._eta is None:
            self._eta = self.solve(np.ones(self.n))
        return self._eta

    def inverse_diag(self, block: int = 1024) -> np.ndarray:
        """``diag(A^{-1})`` (cached), from ``L^{-1}`` (TRTRI on one extra N x N copy).

        ``(A^{-1})_ii = sum_k (L^{-1})_{ki}^2``: column sums of squares of the lower triangle.
        """
        if self._inv_diag is None:
            Li = np.array(self.L, order="F", copy=True)
            trtri = _lapack.get_lapack_funcs("trtri", (Li,))
            Li, info = trtri(Li, lower=1, overwrite_c=1)
            if info != 0:  # pragma: no cover
                raise SingularKKTError("the Cholesky factor is singular")
            N = self.n
            out = np.empty(N)
            for j0 in range(0, N, block):
                j1 = min(N, j0 + block)
                diag_blk = np.tril(Li[j0:j1, j0:j1])
                out[j0:j1] = np.einsum("ij,ij->j", diag_blk, diag_blk, dtype=np.float64)
                if j1 < N:
                    low = Li[j1:, j0:j1]
                    out[j0:j1] += np.einsum("ij,ij->j", low, low, dtype=np.float64)
            self._inv_diag = out
        return self._inv_diag


def _check_C(C: Any) -> float:
    try:
        Cf = float(C)
    except (TypeError, ValueError):
        raise TypeError(f"C must be a positive number or np.inf, got {C!r}") from None
    if not (Cf > 0):
        raise ValueError(f"C must be > 0 (np.inf allowed), got {C!r}")
    return Cf


def _check_X(X: Any, name: str = "X") -> np.ndarray:
    if hasattr(X, "dask") or hasattr(X, "compute"):
        raise TypeError(f"{name} must be an in-memory array here; dask arrays go to solve_lowrank")
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    if not np.issubdtype(X.dtype, np.number):
        raise TypeError(f"{name} must be numeric, got dtype {X.dtype}")
    X = np.asarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or inf")
    return X


def _factor_once(X, kernel, spec, Cf, jit, dtype, precomputed, overwrite_k):
    N = X.shape[0]
    if precomputed:
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"precomputed Gram matrix must be square, got shape {X.shape}")
        if overwrite_k and X.flags.f_contiguous and X.dtype == dtype:
            G = X
        elif overwrite_k and X.flags.c_contiguous and X.dtype == dtype:
            G = X.T  # symmetric: the transpose view is F-ordered with the same lower triangle
        else:
            G = np.array(X, dtype=dtype, order="F")
    elif spec is not None:
        from ..validation import check_memory

        check_memory(N * N * np.dtype(dtype).itemsize, f"the {N} x {N} kernel matrix")
        G = np.zeros((N, N), dtype=dtype, order="F")  # calloc: zero pages, no extra pass
        _fill_gram_lower(X, spec, G)
    else:
        K = np.asarray(kernel(X))
        if K.shape != (N, N):
            raise ValueError(f"kernel(X) returned shape {K.shape}, expected {(N, N)}")
        if np.shares_memory(K, X):
            K = np.array(K, dtype=dtype, order="F")
        if K.dtype == dtype and K.flags.f_contiguous:
            G = K
        elif K.dtype == dtype and K.flags.c_contiguous:
            G = K.T
        else:
            G = np.array(K, dtype=dtype, order="F")
    idx = np.arange(N)
    kdiag = G[idx, idx].astype(np.float64)
    if not np.all(np.isfinite(kdiag)):
        raise ValueError("kernel produced non-finite values on the diagonal")
    shift = (0.0 if math.isinf(Cf) else 1.0 / Cf) + jit
    if shift:
        G[idx, idx] += shift
    adiag = kdiag + shift
    potrf = _lapack.get_lapack_funcs("potrf", (G,))
    L, info = potrf(G, lower=1, clean=0, overwrite_a=1)
    return L, info, adiag


def factor_kernel(X: np.ndarray, kernel: Any, C: float, *, jitter: float | str | None = None,
                  dtype=np.float64, overwrite_k: bool = False) -> KernelCholesky:
    r"""Factor ``A = K + I/C (+ jitter I)`` with the Gram matrix built in the factor's storage.

    The lower triangle of ``K`` is written straight into one preallocated Fortran-ordered
    ``N x N`` array (SYRK + in-place ``exp`` for RBF; linear and polynomial alike), ``1/C`` is
    added to its diagonal and LAPACK ``potrf`` overwrites it with ``L``: peak memory is one
    ``N x N`` array, and no copy of it is ever made.

    Parameters
    ----------
    X : ndarray (N, n)
        Training rows; or, with ``kernel=None``, a precomputed symmetric Gram matrix (N, N)
        (copied unless ``overwrite_k=True``).
    kernel : Kernel or None
        A ``primaldual.kernels.Kernel`` (callable ``kernel(X, Z=None)``, ``.name``, ``.gamma``).
    C : float
        Error weight, ``> 0``; ``np.inf`` drops the ``I/C`` term (interpolation).
    jitter : float, "auto" or None
        Extra diagonal shift. ``"auto"`` retries with ``1e-10, 1e-8, ..., 1e-4`` times the mean
        kernel diagonal when the factorisation fails, and warns with the value used.
    dtype : numpy dtype
        ``float64`` (default) or ``float32`` storage.

    Raises
    ------
    SingularKKTError (a ValueError and LinAlgError)
        When ``A`` is not numerically positive definite (non-PSD kernel, or ``C = inf`` with
        duplicate points): the smallest Cholesky pivot ``L_ii^2`` is below
        ``N * eps * max_i A_ii``. The message suggests a finite ``C`` or a jitter.
    """
    kernel = _check_kernel(kernel)
    Cf = _check_C(C)
    dtype = np.dtype(dtype).type
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {np.dtype(dtype)}")
    precomputed = kernel is None
    if precomputed:
        X = np.asarray(X)
        if X.ndim != 2 or not np.all(np.isfinite(X)):
            raise ValueError("X (precomputed Gram matrix) must be a finite 2-D array")
    else:
        X = _check_X(X)
    spec = None if precomputed else _kernel_spec(kernel)
    if jitter is None:
        schedule = [0.0]
        auto = False
    elif isinstance(jitter, str):
        if jitter != "auto":
            raise ValueError(f"jitter must be None, a float >= 0 or 'auto', got {jitter!r}")
        schedule = [0.0, 1e-10, 1e-8, 1e-6, 1e-4]
        auto = True
    else:
        jf = float(jitter)
        if not (jf >= 0) or math.isinf(jf):
            raise ValueError(f"jitter must be a finite float >= 0, got {jitter!r}")
        schedule = [jf]
        auto = False
    N = X.shape[0]
    eps = np.finfo(dtype).eps
    scale = None
    last_msg = ""
    for k, rel in enumerate(schedule):
        jit = rel * scale if (auto and k > 0) else rel
        L, info, adiag = _factor_once(X, kernel, spec, Cf, jit, dtype, precomputed,
                                      overwrite_k and k == 0)
        if scale is None:
            scale = max(float(np.mean(np.abs(adiag))), np.finfo(np.float64).tiny)
        if info == 0:
            piv = np.diagonal(L).astype(np.float64) ** 2
            ok = np.all(np.isfinite(piv)) and piv.min() > N * eps * max(adiag.max(), 0.0)
            if ok:
                if auto and k > 0:
                    warnings.warn(f"K + I/C was not numerically positive definite; added "
                                  f"jitter={jit:.3g} to the diagonal", RuntimeWarning,
                                  stacklevel=2)
                return KernelCholesky(L=L, C=Cf, jitter=jit)
            last_msg = (f"smallest Cholesky pivot {piv.min():.3g} is below N*eps*max(diag) = "
                        f"{N * eps * adiag.max():.3g} (numerically singular)")
        elif info > 0:
            last_msg = f"leading minor of order {info} is not positive definite"
        else:  # pragma: no cover
            raise ValueError(f"LAPACK potrf: illegal argument {-info}")
    raise SingularKKTError(
        f"K + I/C is singular or indefinite ({last_msg}; C={Cf:g}, jitter={schedule[-1]!r}). "
        "The kernel may not be positive semi-definite, or C=inf with duplicate (or nearly "
        "duplicate) points makes K singular. Use a finite C, pass jitter=<small float> or "
        "jitter='auto', or use a positive semi-definite kernel."
    )


# ---------------------------------------------------------------------------
# the bordered solve
# ---------------------------------------------------------------------------


def _prep_rhs(d: Any, N: int, sign: Any) -> tuple[np.ndarray, np.ndarray | None, bool]:
    d = np.asarray(d, dtype=np.float64)
    if d.ndim not in (1, 2) or d.shape[0] != N:
        raise ValueError(f"d must have shape ({N},) or ({N}, k), got {d.shape}")
    if not np.all(np.isfinite(d)):
        raise ValueError("d contains NaN or inf")
    one_d = d.ndim == 1
    D = d.reshape(N, -1)
    S = None
    if sign is not None:
        S = np.asarray(sign, dtype=np.float64)
        if S.ndim == 1:
            S = S.reshape(N, 1) if S.shape[0] == N else None
        if S is None or S.shape[0] != N or S.shape[1] not in (1, D.shape[1]):
            raise ValueError(f"sign must have shape ({N},) or ({N}, {D.shape[1]}), got "
                             f"{np.shape(sign)}")
        if not np.all(np.abs(S) == 1.0):
            raise ValueError("sign entries must be -1 or +1")
        S = np.broadcast_to(S, D.shape)
    return D, S, one_d


def _combine(z1: np.ndarray, Z2: np.ndarray, S: np.ndarray | None):
    """``b = 1^T Z2 / 1^T z1``, ``a = s * (Z2 - b z1)`` from unsigned solves of A."""
    den = float(np.sum(z1))
    b = Z2.sum(axis=0) / den
    A = Z2 - z1[:, None] * b[None, :]
    if S is not None:
        A = A * S
    return b, A


def _finish(b, A, one_d):
    if one_d:
        return float(b[0]), A[:, 0].copy()
    return b, A


def solve_bordered(factor: KernelCholesky, d: np.ndarray, *, sign: np.ndarray | None = None,
                   bias: bool = True) -> tuple[Any, np.ndarray]:
    r"""Solve ``[[0, u^T], [u, H]] [b; a] = [0; d]`` with ``H = D_s A D_s``, ``u = s``.

    ``eta = s * A^{-1} 1``, ``nu = s * A^{-1} (s * d)`` from one POTRS with the right-hand
    sides ``[1, s*d_1, ..., s*d_k]``; ``b = u^T nu / u^T eta``, ``a = nu - b eta``.

    Parameters
    ----------
    factor : KernelCholesky
        Factor of ``A = K + I/C``.
    d : ndarray (N,) or (N, k)
        Right-hand side(s): ``1`` (LS-SVM classifier), Fisher targets, or ``y`` (regression).
        Several columns share the factor (multi-output / multiclass).
    sign : ndarray (N,) or (N, k), optional
        ``s`` in ``{-1, +1}``: ``y`` for classifiers, ``None`` (all ones) for regression. A
        per-column sign pattern (multiclass codings) still shares the single factor.
    bias : bool
        ``False``: no bias row, ``a = H^{-1} d``, ``b = 0`` (kernel ridge, LS-SVM without bias).

    Returns
    -------
    b : float or ndarray (k,)
    a : ndarray (N,) or (N, k)
        Multipliers of the signed system; ``beta = s * a`` are the predictor coefficients.
    """
    if not isinstance(factor, KernelCholesky):
        raise TypeError(f"factor must be a KernelCholesky, got {type(factor).__name__}")
    D, S, one_d = _prep_rhs(d, factor.n, sign)
    SD = D if S is None else D * S
    N, k = D.shape
    if bias:
        R = np.empty((N, k + 1), order="F")
        R[:, 0] = 1.0
        R[:, 1:] = SD
        Z = factor.solve(R)
        factor._eta = Z[:, 0].copy()
        b, A = _combine(Z[:, 0], Z[:, 1:], S)
    else:
        Z = factor.solve(SD)
        A = Z if S is None else Z * S
        b = np.zeros(k)
    return _finish(b, A, one_d)


def fit_direct(X: np.ndarray, kernel: Any, C: float, d: np.ndarray, *,
               sign: np.ndarray | None = None, bias: bool = True,
               jitter: float | str | None = None, dtype=np.float64):
    """Factor and solve in one call: returns ``(b, a, factor)`` (see :func:`solve_bordered`)."""
    factor = factor_kernel(X, kernel, C, jitter=jitter, dtype=dtype)
    b, a = solve_bordered(factor, d, sign=sign, bias=bias)
    return b, a, factor


# ---------------------------------------------------------------------------
# blocked kernel mat-vec (memory O(N * block))
# ---------------------------------------------------------------------------


def _kernel_matvec(X, kernel, P, *, block=2048, dtype=np.float64, spec=None) -> np.ndarray:
    """``K @ P`` for P (N, m) with kernel rows computed in blocks; K symmetric, so only the
    blocks on and below the diagonal are computed (each used twice)."""
    N = X.shape[0]
    if kernel is None:  # precomputed
        return np.asarray(X, dtype=np.float64) @ P
    if dtype == np.float64 and hasattr(kernel, "_fill"):
        # the library's one chunked K v (primaldual.kernels.kernel_matvec): inside a fit's
        # evaluation context this residual check and the certificate share the product
        from ..kernels import kernel_matvec
        if P.ndim == 2 and P.shape[1] == 1:  # one column: the same product as K v
            return kernel_matvec(kernel, X, P[:, 0])[:, None]
        return kernel_matvec(kernel, X, P)
    spec = _kernel_spec(kernel) if spec is None else spec
    out = np.zeros_like(P, dtype=np.float64)
    Pd = P.astype(dtype, copy=False)
    Xd = X.astype(dtype, copy=False)
    for i0 in range(0, N, block):
        i1 = min(N, i0 + block)
        Kb = gram(kernel, Xd[i0:i1], Xd[:i1], dtype=dtype, _spec=spec)
        out[i0:i1] += Kb @ Pd[:i1]
        if i0 > 0:
            out[:i0] += Kb[:, :i0].T @ Pd[i0:i1]
    return out


def _H_apply(X_or_K, kernel, Cf, S, a, block=2048):
    """``H a = s * (K (s * a)) + a / C`` column-wise."""
    sa = a if S is None else a * S
    Ka = _kernel_matvec(X_or_K, kernel, sa, block=block)
    Ha = Ka if S is None else Ka * S
    if not math.isinf(Cf):
        Ha = Ha + a / Cf
    return Ha


def kkt_residual(X_or_K: np.ndarray, kernel: Any, C: float, sign: np.ndarray | None,
                 d: np.ndarray, b: Any, a: np.ndarray, *, bias: bool = True,
                 block_size: int = 2048) -> float:
    r"""Relative residual of the bordered KKT system, computed independently of any factor.

    With ``r_0 = u^T a`` and ``r = u b + H a - d`` (``H a = s*(K (s*a)) + a/C`` by blocked
    kernel mat-vecs, never the factor), returns

        ``sqrt(r_0^2 + ||r||^2) / max(||d||, ||u b|| + ||H a||, tiny)``

    (max over columns for multi-output ``d``). Without bias: ``||H a - d|| / max(...)``.
    ``X_or_K`` is the training data, or the precomputed Gram matrix with ``kernel=None``.
    """
    kernel = _check_kernel(kernel)
    Cf = _check_C(C)
    X_or_K = np.asarray(X_or_K, dtype=np.float64)
    N = X_or_K.shape[0]
    D, S, one_d = _prep_rhs(d, N, sign)
    A = np.asarray(a, dtype=np.float64).reshape(N, -1)
    if A.shape != D.shape:
        raise ValueError(f"a has shape {np.shape(a)}, expected {D.shape}")
    bb = np.atleast_1d(np.asarray(b, dtype=np.float64)).reshape(-1)
    U = np.ones_like(D) if S is None else np.asarray(S)
    Ha = _H_apply(X_or_K, kernel, Cf, S, A, block=block_size)
    r = Ha - D
    num2 = np.sum(r**2, axis=0) if not bias else None
    if bias:
        r = r + U * bb[None, :]
        r0 = np.sum(U * A, axis=0)
        num2 = r0**2 + np.sum(r**2, axis=0)
    scale = np.maximum(np.linalg.norm(D, axis=0),
                       np.linalg.norm(U * bb[None, :], axis=0) * bias
                       + np.linalg.norm(Ha, axis=0))
    scale = np.maximum(scale, np.finfo(float).tiny)
    return float(np.max(np.sqrt(num2) / scale))


# ---------------------------------------------------------------------------
# conjugate gradient, matrix-free
# ---------------------------------------------------------------------------


#: The cost ``V(x)`` is evaluated to about machine precision, so relative decreases below this
#: are rounding noise: a smaller ``cost_tol`` disables the cost criterion (residual only).
_COST_RESOLUTION = 1e-13


@dataclass
class CGResult:
    """Result of :func:`solve_bordered_cg`.

    ``b, a`` as in :func:`solve_bordered`; ``n_iter`` CG iterations (one blocked kernel
    mat-vec each, shared by all right-hand sides); ``residual`` the relative residual of the
    bordered system ``||s*(b r_1 - r_2)|| / ||d||`` from the CG residuals ``r_1, r_2`` of
    ``A x = 1`` and ``A x = s*d`` (``u^T a = 0`` holds exactly by construction of ``b``);
    ``cost_trace`` the quadratic costs ``V(x) = 1/2 x^T A x - x^T rhs`` per iteration
    (rows) and right-hand side (columns), monotonically decreasing.
    """

    b: Any
    a: np.ndarray
    n_iter: int
    residual: float
    converged: bool
    cost_trace: np.ndarray
    residual_trace: np.ndarray


def _nystrom_precond(X, kernel, Cf, rank, rng, spec):
    """``P^{-1} r = C (r - V (I/C + V^T V)^{-1} V^T r)`` with ``V V^T`` a Nystrom approximation."""
    N = X.shape[0]
    m = min(rank, N)
    idx = np.sort(rng.choice(N, size=m, replace=False))
    Kmm = gram(kernel, X[idx], _spec=spec)
    Kmm[np.diag_indices(m)] += 1e-8 * max(np.trace(Kmm) / m, 1e-300)
    w, Q = np.linalg.eigh(Kmm)
    keep = w > 1e-10 * w.max()
    Kmm_isqrt = Q[:, keep] / np.sqrt(w[keep])
    V = np.empty((N, int(keep.sum())))
    for i0 in range(0, N, 4096):
        i1 = min(N, i0 + 4096)
        V[i0:i1] = gram(kernel, X[i0:i1], X[idx], _spec=spec) @ Kmm_isqrt
    M = V.T @ V
    M[np.diag_indices_from(M)] += 1.0 / Cf
    cf = np.linalg.cholesky(M)

    def apply(R):
        T = V.T @ R
        T = np.linalg.solve(cf.T, np.linalg.solve(cf, T))
        return Cf * (R - V @ T)

    return apply


def solve_bordered_cg(X: np.ndarray, kernel: Any, C: float, d: np.ndarray, *,
                      sign: np.ndarray | None = None, bias: bool = True, tol: float = 1e-8,
                      cost_tol: float | None = None, max_iter: int | None = None,
                      block_size: int = 2048, dtype=np.float64,
                      preconditioner: str | None = "jacobi", precond_rank: int = 200,
                      random_state: int | None = 0, verbose: bool = False) -> CGResult:
    r"""Bordered KKT system by preconditioned conjugate gradient on ``A = K + I/C`` (SPD).

    Suykens' reformulation (3.24-3.25): solve ``A x_1 = 1`` and ``A x_2 = s*d`` (all columns in
    lock-step, one blocked kernel mat-vec per iteration shared by every right-hand side;
    memory ``O(N * block_size)``, only blocks on/below the diagonal are computed), then
    ``b = 1^T x_2 / 1^T x_1`` and ``a = s*(x_2 - b x_1)``.

    Stopping, per column: relative residual ``||rhs - A x|| / ||rhs|| <= tol``, or relative
    decrease of the quadratic cost ``V(x) = 1/2 x^T A x - x^T rhs`` between two iterations
    ``<= cost_tol`` (default ``tol**2``, since ``V - V* = 1/2 ||x - x*||_A^2``), as Suykens
    advises. ``V`` is only known to rounding (~1e-16 relative), so the cost criterion is used
    only when ``cost_tol >= 1e-13`` (i.e. ``tol >= ~3e-7`` by default); tighter tolerances
    stop on the residual alone. Non-convergence within ``max_iter`` (default
    ``max(100, 10 sqrt N)``) emits a :class:`ConvergenceWarning` and returns
    ``converged=False``.

    Parameters
    ----------
    dtype : float64 or float32
        Precision of the kernel blocks and their products (``float32`` halves the bandwidth;
        accuracy is then limited to about ``1e-6``). Iterates are always float64.
    preconditioner : "jacobi", "nystrom" or None
        ``"nystrom"``: ``P = V V^T + I/C`` from ``precond_rank`` random landmarks, applied by
        Woodbury (needs a finite C; falls back to Jacobi otherwise).
    """
    kernel = _check_kernel(kernel)
    Cf = _check_C(C)
    X = _check_X(X) if kernel is not None else np.asarray(X, dtype=np.float64)
    N = X.shape[0]
    if tol <= 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    dtype = np.dtype(dtype).type
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {np.dtype(dtype)}")
    if preconditioner not in ("jacobi", "nystrom", None):
        raise ValueError(f"preconditioner must be 'jacobi', 'nystrom' or None, "
                         f"got {preconditioner!r}")
    cost_tol = tol**2 if cost_tol is None else float(cost_tol)
    max_iter = int(min(max(100, 10 * math.isqrt(N)), 10 * N)) if max_iter is None else max_iter
    D, S, one_d = _prep_rhs(d, N, sign)
    SD = D if S is None else D * S
    k = D.shape[1]
    R = np.concatenate([np.ones((N, 1)), SD], axis=1) if bias else SD.copy()
    spec = _kernel_spec(kernel)
    shift = 0.0 if math.isinf(Cf) else 1.0 / Cf

    def matvec(P):
        out = _kernel_matvec(X, kernel, P, block=block_size, dtype=dtype, spec=spec)
        if shift:
            out += shift * P
        return out

    if preconditioner == "nystrom" and math.isinf(Cf):
        preconditioner = "jacobi"
    if preconditioner == "jacobi":
        dA = (np.diagonal(X).copy() if kernel is None else _kernel_diag(kernel, X)) + shift
        if np.any(dA <= 0):
            raise SingularKKTError("K + I/C has a non-positive diagonal entry; CG needs A > 0")
        Minv = lambda r: r / dA[:, None]
    elif preconditioner == "nystrom":
        if kernel is None:
            raise ValueError("preconditioner='nystrom' needs the kernel and X, not a Gram matrix")
        Minv = _nystrom_precond(X, kernel, Cf, precond_rank, np.random.default_rng(random_state),
                                spec)
    else:
        Minv = lambda r: r

    m = R.shape[1]
    x = np.zeros((N, m))
    r = R.copy()
    rn0 = np.linalg.norm(R, axis=0)
    rn0[rn0 == 0] = 1.0
    z = Minv(r)
    p = z.copy()
    rz = np.einsum("ij,ij->j", r, z)
    active = np.ones(m, dtype=bool)
    cost_prev = np.zeros(m)
    costs, ress = [], []
    it = 0
    while it < max_iter and active.any():
        it += 1
        cols = np.flatnonzero(active)
        q = matvec(p[:, cols])
        pq = np.einsum("ij,ij->j", p[:, cols], q)
        if np.any(pq <= 0):
            raise SingularKKTError("CG met a direction of non-positive curvature: K + I/C is not "
                                   "positive definite (non-PSD kernel, or C=inf with duplicate "
                                   "points); use a finite C or a PSD kernel")
        lam = rz[cols] / pq
        x[:, cols] += lam * p[:, cols]
        r[:, cols] -= lam * q
        cost = -0.5 * np.einsum("ij,ij->j", x, R + r)
        res = np.linalg.norm(r, axis=0) / rn0
        costs.append(cost.copy())
        ress.append(res.copy())
        dec = (cost_prev - cost) / np.maximum(np.abs(cost), np.finfo(float).tiny)
        done = res <= tol
        if cost_tol >= _COST_RESOLUTION and it > 1:
            done |= dec <= cost_tol
        cost_prev = cost
        if verbose:
            print(f"CG it {it:4d}  max rel res {res.max():.3e}  cost {cost.sum():.6e}")
        active &= ~done
        cols = np.flatnonzero(active)
        if cols.size:
            zc = Minv(r[:, cols])
            rz_new = np.einsum("ij,ij->j", r[:, cols], zc)
            beta = rz_new / rz[cols]
            p[:, cols] = zc + beta * p[:, cols]
            rz[cols] = rz_new
    converged = not active.any()
    if bias:
        b, A = _combine(x[:, 0], x[:, 1:], S)
        rb = r[:, 1:] - r[:, :1] * b[None, :]  # s*(b r1 - r2), up to the sign pattern
    else:
        A = x if S is None else x * S
        b = np.zeros(k)
        rb = r
    dn = np.linalg.norm(D, axis=0)
    dn[dn == 0] = 1.0
    residual = float(np.max(np.linalg.norm(rb, axis=0) / dn))
    if not converged:
        warnings.warn(f"CG did not converge in {it} iterations (relative residual "
                      f"{residual:.3g} > tol={tol:g}); raise max_iter, use "
                      f"preconditioner='nystrom' or a smaller C", ConvergenceWarning,
                      stacklevel=2)
    b_out, a_out = _finish(b, A, one_d)
    return CGResult(b=b_out, a=a_out, n_iter=it, residual=residual, converged=converged,
                    cost_trace=np.array(costs), residual_trace=np.array(ress))


# ---------------------------------------------------------------------------
# low rank: fixed-size LS-SVM by Woodbury
# ---------------------------------------------------------------------------


def _is_dask(V) -> bool:
    return type(V).__module__.startswith("dask")


def solve_lowrank(V: Any, C: float, d: np.ndarray, *, sign: np.ndarray | None = None,
                  bias: bool = True) -> tuple[Any, np.ndarray, np.ndarray]:
    r"""Bordered KKT system with ``K ~= V V^T`` (fixed-size LS-SVM), by Sherman-Morrison-Woodbury.

    ``A^{-1} R = C (R - V (I/C + V^T V)^{-1} V^T R)`` for ``R = [1, s*d]``: one SYRK
    ``V^T V`` (``O(N M^2)``), one ``M x M`` Cholesky, two thin products; memory ``O(N M)``
    (``V`` itself) plus ``O(N k)``. Then ``b``, ``a`` as in :func:`solve_bordered`, and the
    primal weight in the low-rank feature space ``w = V^T beta = V^T (s*a)`` (M,) or (M, k),
    obtained from the ``M x M`` quantities without another pass over ``V``; prediction is
    ``f(x) = v(x)^T w + b``.

    ``V`` may be a numpy array or a ``dask.array`` (chunked along rows): ``V^T V`` and
    ``V^T R`` are chunked reductions; the result equals the in-memory one to rounding.
    ``C`` must be finite (``V V^T`` is singular when ``N > M``).
    """
    Cf = _check_C(C)
    if math.isinf(Cf):
        raise ValueError("C must be finite for the low-rank path: V V^T has rank <= M < N, so "
                         "K + I/C with C=inf is singular")
    dask = _is_dask(V)
    if not dask:
        V = np.asarray(V)
        if V.ndim != 2 or not np.issubdtype(V.dtype, np.floating):
            raise ValueError(f"V must be a 2-D float array (N, M), got shape {V.shape}, "
                             f"dtype {V.dtype}")
    elif V.ndim != 2:
        raise ValueError(f"V must be 2-D (N, M), got ndim={V.ndim}")
    N, M = V.shape
    D, S, one_d = _prep_rhs(d, N, sign)
    SD = D if S is None else D * S
    k = D.shape[1]
    R = np.concatenate([np.ones((N, 1)), SD], axis=1) if bias else np.array(SD)
    if dask:
        import dask.array as da

        G = np.asarray((V.T @ V).compute(), dtype=np.float64)
        Rd = da.from_array(R, chunks=(V.chunks[0], R.shape[1]))
        VtR = np.asarray((V.T @ Rd).compute(), dtype=np.float64)
    else:
        if V.flags.c_contiguous:
            VT = V.T  # F-ordered (M, N): SYRK without a copy
            G = _blas.get_blas_funcs("syrk", (VT,))(1.0, VT, trans=0, lower=1)
        else:
            Vf = np.asfortranarray(V)
            G = _blas.get_blas_funcs("syrk", (Vf,))(1.0, Vf, trans=1, lower=1)
        G = np.tril(G) + np.tril(G, -1).T
        G = np.asarray(G, dtype=np.float64)
        VtR = np.asarray(V.T @ R, dtype=np.float64)
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(VtR))):
        raise ValueError("V contains NaN or inf")
    Gs = G.copy()
    Gs[np.diag_indices(M)] += 1.0 / Cf
    try:
        cf = np.linalg.cholesky(Gs)
    except np.linalg.LinAlgError:  # pragma: no cover - I/C > 0 makes Gs SPD
        raise SingularKKTError("I/C + V^T V is not positive definite") from None
    T = np.linalg.solve(cf.T, np.linalg.solve(cf, VtR))  # (I/C + G)^{-1} V^T R
    if dask:
        VT_ = np.asarray((V @ T).compute(), dtype=np.float64)
    else:
        VT_ = np.asarray(V @ T, dtype=np.float64)
    Z = Cf * (R - VT_)               # A^{-1} R
    VtZ = Cf * (VtR - G @ T)        # V^T A^{-1} R, no pass over V
    if bias:
        b, A = _combine(Z[:, 0], Z[:, 1:], S)
        W = VtZ[:, 1:] - VtZ[:, :1] * b[None, :]  # V^T (x2 - b x1) = V^T beta
    else:
        A = Z if S is None else Z * S
        b = np.zeros(k)
        W = VtZ
    b_out, a_out = _finish(b, A, one_d)
    return b_out, a_out, (W[:, 0].copy() if one_d else W)


# ---------------------------------------------------------------------------
# leave-one-out, GCV, GP variance
# ---------------------------------------------------------------------------


def _bordered_inv_diag(factor: KernelCholesky, bias: bool) -> np.ndarray:
    r"""Diagonal of the alpha block of the bordered inverse:
    ``diag(A^{-1}) - eta_i^2 / 1^T eta`` with ``eta = A^{-1} 1`` (sign-invariant)."""
    dinv = factor.inverse_diag()
    if not bias:
        return dinv
    eta = factor.eta()
    return dinv - eta**2 / np.sum(eta)


def loo_residuals(factor: KernelCholesky, d: np.ndarray, b: Any, a: np.ndarray, *,
                  sign: np.ndarray | None = None, bias: bool = True) -> np.ndarray:
    r"""Closed-form leave-one-out residuals (Cawley & Talbot 2004) from the factor.

    ``r_i = d_i - s_i f^{(-i)}(x_i) = a_i / [M^{-1}]_{ii}``, where ``f^{(-i)}`` is the model
    refitted without row ``i`` and ``M`` the bordered matrix; its alpha-block diagonal is
    ``diag(A^{-1}) - eta_i^2 / 1^T eta`` (``eta = A^{-1} 1``), or ``diag(A^{-1})`` without bias.
    Regression: ``y_i - f^{(-i)}(x_i)``; classifier (``d = 1``, ``s = y``):
    ``1 - y_i f^{(-i)}(x_i)``. Shape follows ``a``.
    """
    if not isinstance(factor, KernelCholesky):
        raise TypeError(f"factor must be a KernelCholesky, got {type(factor).__name__}")
    a = np.asarray(a, dtype=np.float64)
    if a.shape[0] != factor.n:
        raise ValueError(f"a has {a.shape[0]} rows, the factor has {factor.n}")
    _prep_rhs(d, factor.n, sign)  # validation only
    m = _bordered_inv_diag(factor, bias)
    return a / (m if a.ndim == 1 else m[:, None])


def gcv_score(factor: KernelCholesky, d: np.ndarray, b: Any, a: np.ndarray, *,
              sign: np.ndarray | None = None, bias: bool = True) -> float:
    r"""Generalised cross-validation score for kernel ridge / LS-SVM.

    ``GCV = (1/N) ||(I - S) y||^2 / ((1/N) tr(I - S))^2`` with the hat matrix ``S``. Here
    ``(I - S) = M^{-1}_{aa} / C`` and the training residual ``e = a / C``, so
    ``GCV = N ||a||^2 / tr(M^{-1}_{aa})^2`` (mean over outputs), where ``M^{-1}_{aa}`` is the
    alpha block of the bordered inverse (``A^{-1}`` without bias).
    """
    if not isinstance(factor, KernelCholesky):
        raise TypeError(f"factor must be a KernelCholesky, got {type(factor).__name__}")
    a = np.asarray(a, dtype=np.float64).reshape(factor.n, -1)
    tr = float(np.sum(_bordered_inv_diag(factor, bias)))
    N = factor.n
    return float(np.mean(N * np.sum(a**2, axis=0) / tr**2))


def gp_predictive_variance(factor: KernelCholesky, X_train: np.ndarray, kernel: Any,
                           X_new: np.ndarray) -> np.ndarray:
    r"""Gaussian-process posterior variance ``k(x,x) - k_x^T (K + I/C)^{-1} k_x``.

    docs/formulations.md 11: with noise variance ``sigma_n^2 = 1/C`` the posterior mean is the
    kernel ridge / LS-SVR-without-bias predictor; the variance uses the same factor:
    ``v = L^{-1} k_x``, ``var = k(x,x) - ||v||^2`` (clipped at 0). Latent-function variance
    (without the noise term ``1/C``).
    """
    if not isinstance(factor, KernelCholesky):
        raise TypeError(f"factor must be a KernelCholesky, got {type(factor).__name__}")
    kernel = _check_kernel(kernel)
    if kernel is None:
        raise ValueError("kernel is required for the predictive variance")
    X_train = _check_X(X_train, "X_train")
    X_new = _check_X(X_new, "X_new")
    if X_train.shape[0] != factor.n:
        raise ValueError(f"X_train has {X_train.shape[0]} rows, the factor has {factor.n}")
    if X_new.shape[1] != X_train.shape[1]:
        raise ValueError(f"X_new has {X_new.shape[1]} features, X_train has {X_train.shape[1]}")
    out = np.empty(X_new.shape[0])
    for i0 in range(0, X_new.shape[0], 2048):
        i1 = min(X_new.shape[0], i0 + 2048)
        Kx = gram(kernel, X_train, X_new[i0:i1])
        v = factor.solve_lower(Kx)
        out[i0:i1] = _kernel_diag(kernel, X_new[i0:i1]) - np.einsum("ij,ij->j", v, v)
    return np.maximum(out, 0.0)


# ---------------------------------------------------------------------------
# pruning (Suykens 3.7)
# ---------------------------------------------------------------------------


@dataclass
class PrunePath:
    """LS-SVM pruning path (Suykens 3.7). Step ``t`` keeps rows ``support[t]`` (indices into
    the original training set) with multipliers ``alpha[t]``, bias ``b[t]`` (``beta = s*a``)
    and validation score ``score[t]`` (accuracy for classification, minus the mean squared
    error for regression; higher is better). ``best`` is the step with the best score before
    the stop (the sparsest one among ties)."""

    n_sv: list[int]
    score: list[float]
    support: list[np.ndarray]
    alpha: list[np.ndarray]
    b: list[float]
    beta: list[np.ndarray]
    best: int
    stopped_by: str

    def __len__(self) -> int:
        return len(self.n_sv)


def prune_path(X: np.ndarray, y: np.ndarray, kernel: Any, C: float, *,
               task: str = "classification", fraction: float = 0.05,
               X_val: np.ndarray | None = None, y_val: np.ndarray | None = None,
               min_sv: int | None = None, tol: float = 0.0, max_steps: int | None = None,
               bias: bool = True, jitter: float | str | None = None,
               scorer: Callable[[np.ndarray, np.ndarray], float] | None = None) -> PrunePath:
    r"""LS-SVM pruning (Suykens 3.7): drop the ``fraction`` of rows with the smallest
    ``|alpha|``, re-solve on the rest, record the step; stop when the validation score
    drops by more than ``tol`` (absolute, in the score's units) below the best score so far
    (the degrading step is recorded too), or at ``min_sv`` rows.

    The full Gram matrix is computed once and each step factors a sub-block of it (kernel
    evaluations are reused across steps). Without ``X_val`` the score is measured on the
    complete training set (pruned points included).

    Classification: ``y in {-1,+1}``, ``s = y``, ``d = 1``; regression: ``s = 1``, ``d = y``.
    """
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
    if not (0 < fraction < 1):
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    kernel = _check_kernel(kernel)
    if kernel is None:
        raise ValueError("prune_path needs a kernel object (not a precomputed Gram matrix)")
    X = _check_X(X)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    N = X.shape[0]
    if y.shape[0] != N:
        raise ValueError(f"y has {y.shape[0]} entries, X has {N} rows")
    if task == "classification" and not np.all(np.abs(y) == 1):
        raise ValueError("y must be in {-1, +1} for task='classification'")
    Cf = _check_C(C)
    if X_val is None:
        X_val, y_val = X, y
    else:
        X_val = _check_X(X_val, "X_val")
        if y_val is None:
            raise ValueError("y_val is required with X_val")
        y_val = np.asarray(y_val, dtype=np.float64).reshape(-1)
    min_sv = max(2, int(math.ceil(0.01 * N)) if min_sv is None else int(min_sv))
    if scorer is None:
        if task == "classification":
            scorer = lambda yt, f: float(np.mean(np.where(f >= 0, 1.0, -1.0) == yt))
        else:
            scorer = lambda yt, f: -float(np.mean((yt - f) ** 2))
    Kfull = gram(kernel, X)
    Kval = gram(kernel, X_val, X)
    path = PrunePath([], [], [], [], [], [], 0, "")
    idx = np.arange(N)
    step = 0
    while True:
        sub = np.array(Kfull[np.ix_(idx, idx)], order="F")
        fac = factor_kernel(sub, None, Cf, jitter=jitter, overwrite_k=True)
        ysub = y[idx]
        if task == "classification":
            b, a = solve_bordered(fac, np.ones(idx.size), sign=ysub, bias=bias)
            beta = a * ysub
        else:
            b, a = solve_bordered(fac, ysub, bias=bias)
            beta = a
        f = Kval[:, idx] @ beta + b
        score = scorer(y_val, f)
        if path.score and score < path.score[path.best] - tol:
            path.n_sv.append(idx.size)
            path.score.append(score)
            path.support.append(idx.copy())
            path.alpha.append(a)
            path.b.append(float(b))
            path.beta.append(beta)
            path.stopped_by = "validation"
            break
        path.n_sv.append(idx.size)
        path.score.append(score)
        path.support.append(idx.copy())
        path.alpha.append(a)
        path.b.append(float(b))
        path.beta.append(beta)
        if score >= path.score[path.best]:
            path.best = len(path.n_sv) - 1
        step += 1
        n_drop = max(1, int(round(fraction * idx.size)))
        if idx.size - n_drop < min_sv:
            path.stopped_by = "min_sv"
            break
        if max_steps is not None and step >= max_steps:
            path.stopped_by = "max_steps"
            break
        order = np.argsort(np.abs(a), kind="stable")
        idx = np.sort(idx[order[n_drop:]])
    return path
