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
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import lapack as _lapack

from ...exceptions import SingularKKTError
from ...kernels.cpus import free_cpus
from ...kernels.gram import blas_threads, dense_form, fill_gram_lower, gram
from ...validation import check_data_matrix, check_kernel_or_none, check_positive

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
    threads : int
        BLAS threads the factorisation ran with (the CPUs other processes left free).
    """

    L: np.ndarray
    C: float
    jitter: float = 0.0
    threads: int = 1
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
        # a large solve gets the factorisation's thread rule (spinning BLAS threads on a busy
        # machine doubled an N = 10,000 two-column solve); a small one is not worth the switch
        with blas_threads(free_cpus()) if self.n >= 2048 else nullcontext():
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
        from ...validation import check_memory

        check_memory(N * N * np.dtype(dtype).itemsize, f"the {N} x {N} kernel matrix")
        G = np.zeros((N, N), dtype=dtype, order="F")  # calloc: zero pages, no extra pass
        # this reading of the CPU counters opens the window (the fill) over which the
        # Cholesky's thread count below is measured: the other processes' CPU use, not the
        # load average, which counts this process's own threads (85 s of two-thread fits on an
        # idle 2-core machine lift it past 1.5, which would leave the Cholesky one thread)
        with blas_threads(free_cpus()):
            fill_gram_lower(X, kernel, G, form=spec)
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
    threads = free_cpus()
    with blas_threads(threads):  # no spinning BLAS threads on a busy machine
        L, info = potrf(G, lower=1, clean=0, overwrite_a=1)
    return L, info, adiag, threads


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
    return _factor_kernel(X, check_kernel_or_none(kernel), check_positive(C, "C", allow_inf=True),
                          jitter=jitter, dtype=dtype, overwrite_k=overwrite_k)


def _factor_kernel(X: np.ndarray, kernel: Any, Cf: float, *, jitter: float | str | None = None,
                   dtype=np.float64, overwrite_k: bool = False,
                   matrix_name: str | None = None) -> KernelCholesky:
    """:func:`factor_kernel` with ``kernel`` and ``C`` already checked (the adapter's path: the
    estimators check ``C`` once, in ``methods/_params.py``). ``matrix_name``: what a
    precomputed ``X`` is, for the error message (the KKT adapter passes its assembled matrix
    ``Q + diag(1/C_i)`` with ``C = inf``)."""
    dtype = np.dtype(dtype).type
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {np.dtype(dtype)}")
    precomputed = kernel is None
    if precomputed:
        X = np.asarray(X)
        if X.ndim != 2 or not np.all(np.isfinite(X)):
            raise ValueError("X (precomputed Gram matrix) must be a finite 2-D array")
    else:
        X = check_data_matrix(X)
    spec = None if precomputed else dense_form(kernel)
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
        L, info, adiag, threads = _factor_once(X, kernel, spec, Cf, jit, dtype, precomputed,
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
                return KernelCholesky(L=L, C=Cf, jitter=jit, threads=threads)
            last_msg = (f"smallest Cholesky pivot {piv.min():.3g} is below N*eps*max(diag) = "
                        f"{N * eps * adiag.max():.3g} (numerically singular)")
        elif info > 0:
            last_msg = f"leading minor of order {info} is not positive definite"
        else:  # pragma: no cover
            raise ValueError(f"LAPACK potrf: illegal argument {-info}")
    if matrix_name is not None:
        raise SingularKKTError(
            f"{matrix_name} is singular or indefinite ({last_msg}; jitter={schedule[-1]!r}). "
            "The kernel may not be positive semi-definite, or its entries are too large or "
            "small for the diagonal 1/C_i to register. Pass jitter=<small float> or "
            "jitter='auto', rescale the features or the kernel, or use a positive "
            "semi-definite kernel.")
    raise SingularKKTError(
        f"K + I/C is singular or indefinite ({last_msg}; C={Cf:g}, jitter={schedule[-1]!r}). "
        "The kernel may not be positive semi-definite, or C=inf with duplicate (or nearly "
        "duplicate) points makes K singular. Use a finite C, pass jitter=<small float> or "
        "jitter='auto', or use a positive semi-definite kernel."
    )


# ---------------------------------------------------------------------------
# the bordered solve
# ---------------------------------------------------------------------------


def prep_rhs(d: Any, N: int, sign: Any) -> tuple[np.ndarray, np.ndarray | None, bool]:
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
    D, S, one_d = prep_rhs(d, factor.n, sign)
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
        from ...kernels import kernel_matvec
        if P.ndim == 2 and P.shape[1] == 1:  # one column: the same product as K v
            return kernel_matvec(kernel, X, P[:, 0])[:, None]
        return kernel_matvec(kernel, X, P)
    spec = dense_form(kernel) if spec is None else spec
    out = np.zeros_like(P, dtype=np.float64)
    Pd = P.astype(dtype, copy=False)
    Xd = X.astype(dtype, copy=False)
    for i0 in range(0, N, block):
        i1 = min(N, i0 + block)
        Kb = gram(kernel, Xd[i0:i1], Xd[:i1], dtype=dtype, _form=spec)
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
    return _kkt_residual(X_or_K, check_kernel_or_none(kernel),
                         check_positive(C, "C", allow_inf=True), sign, d, b, a, bias=bias,
                         block_size=block_size)


def _kkt_residual(X_or_K: np.ndarray, kernel: Any, Cf: float, sign: np.ndarray | None,
                  d: np.ndarray, b: Any, a: np.ndarray, *, bias: bool = True,
                  block_size: int = 2048) -> float:
    """:func:`kkt_residual` with ``kernel`` and ``C`` already checked (the adapter's path)."""
    X_or_K = np.asarray(X_or_K, dtype=np.float64)
    N = X_or_K.shape[0]
    D, S, one_d = prep_rhs(d, N, sign)
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
