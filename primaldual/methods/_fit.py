"""The fit pipeline's records and helpers: :class:`FitData` (what a method fits on),
:class:`Recovered` (what it recovers from a solution), recovery helpers (bias from the gradient,
support split) and the
low-rank certificate (the box-QP certificate of the drop-in SVMs is
:func:`primaldual.certificate.box_qp_certificate`, reached through :mod:`._structure`).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..certificate import Certificate
from ..kernels import RBF, Kernel, kernel_matvec
from ..kernels import functions as _kf
from ..solution import Solution
from ..validation import (
    scale_hint,
)


@dataclass
class FitData:
    """Validated training data of one (binary or regression) problem.

    ``y`` is in {-1, +1} for classifiers (mapped by the estimator, never inside a problem) and real
    for regression; ``C`` is the per-sample error weight ``C_i`` (``C`` times sample and class
    weights); ``params`` the estimator's validated parameters (``_params.validate_params``).
    """

    X: np.ndarray
    y: np.ndarray
    kernel: Kernel
    C: np.ndarray
    extra: dict = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    #: rows of ``X`` (a plain attribute: read on every stage of a fit; ``X`` is only ever
    #: replaced by the same rows, e.g. densified)
    N: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.N = int(self.X.shape[0])

    def gram(self) -> np.ndarray:
        if "K" not in self.extra:
            sg = self.extra.get("shared_gram")  # a multiclass fit's Gram matrix
            self.extra["K"] = (sg.block() if sg is not None
                               else np.asarray(self.kernel(self.X), dtype=float))
        return self.extra["K"]

    def kmatvec(self, v: np.ndarray) -> np.ndarray:
        """``K v``: from the cached Gram matrix if one exists, else the fused chunked
        :func:`~primaldual.kernels.kernel_matvec` over the nonzero entries of ``v`` only
        (no ``N x N`` array)."""
        if "K" in self.extra:
            return self.extra["K"] @ v
        v = np.asarray(v, dtype=float)
        lowrank = "lowrank_V" in self.extra  # a low-rank fit uses its K ~= V V^T throughout
        sg = self.extra.get("shared_gram")  # kernel(X_full) of a multiclass fit, computed once
        if v.ndim != 1:
            if lowrank:
                V = self.extra["lowrank_V"]
                return V @ (V.T @ v)
            return sg.matvec(v) if sg is not None else kernel_matvec(self.kernel, self.X, v)
        # the products of one fit (recovery, certificate, ||w||^2, training f) share the same
        # few coefficient vectors: each K v is computed once (cleared when the fit ends)
        memo = self.extra.setdefault("_kmatvec", {})
        key = (lowrank, v.tobytes())
        hit = memo.get(key)
        if hit is None and lowrank:
            V = self.extra["lowrank_V"]
            hit = V @ (V.T @ v)
            memo[key] = hit
        elif hit is None and sg is not None:
            hit = memo[key] = sg.matvec(v)
        elif hit is None:
            S = v.nonzero()[0]           # (np.flatnonzero of a vector, without its wrapper)
            hit = (_small_block_matvec(self.kernel, self.X, S, v[S]) if S.size < v.size
                   else None)
            if hit is None:
                hit = (kernel_matvec(self.kernel, self.X, v[S], columns=S) if S.size < v.size
                       else kernel_matvec(self.kernel, self.X, v))
            memo[key] = hit
        return hit.copy()


#: [rbf_exponent, rbf_exponent_gemm, row_sq_norms] once imported (numba at hand)
_COMPILED: list = []


def _small_block_matvec(kernel: Any, X: Any, S: np.ndarray, vS: np.ndarray
                        ) -> np.ndarray | None:
    """``K[:, S] v_S`` of a small dense problem, evaluated as
    :func:`~primaldual.kernels.kernel_matvec` evaluates it (one block ``k(X, X[S])`` filled
    by the kernel, then one GEMV, on one BLAS thread by OpenBLAS's own thresholds), without
    that function's argument handling and product cache (a fit's products are memoised by
    :meth:`FitData.kmatvec`): a few tens of microseconds per multiclass sub-problem. The
    RBF block, once numba is loaded, takes its exponent from one compiled pass over the
    coordinate differences (:func:`~primaldual.kernels.compiled.rbf_exponent`; the
    kernel's own block is ``||x||^2 + ||z||^2 - 2 x.z``: equal to a few roundings).
    A block with more multiply-adds than ``2^18`` and at most ``2^16`` entries (digits'
    pairs, ``d = 64``) takes :func:`_small_gemm_matvec` (RBF only).
    ``None`` when the product is not that case (sparse or precomputed rows, the linear
    kernel, a block above ``2^15`` entries, or more multiply-adds than ``2^18`` outside the
    GEMM form; measured on this 2-CPU machine at ``d = 13``, wine's pairs of
    ``8,700-11,400`` entries: 1.8-2.5x faster than ``kernel_matvec``); the caller
    then asks ``kernel_matvec``. ``S`` is a strict subset of the rows (all rows take
    ``kernel_matvec``'s symmetric route) and ``vS`` has no zero."""
    if type(X) is not np.ndarray or X.dtype != np.float64 or X.ndim != 2 \
            or not isinstance(kernel, Kernel) or kernel.name in ("precomputed", "linear"):
        return None
    n, m = X.shape[0], S.shape[0]
    if m == 0:
        return None
    if n * m * X.shape[1] > 1 << 18:
        return _small_gemm_matvec(kernel, X, S, vS) if n * m <= 1 << 16 else None
    if n * m > 1 << 15:
        return None
    B = np.empty((n, m))
    if type(kernel) is RBF and "numba" in sys.modules and X.flags.c_contiguous:
        # the exponent from the coordinate differences in one compiled pass (the
        # kernel's own block takes ~10 numpy calls), then numpy's vectorised exp
        if len(_COMPILED) < 3:
            from ..kernels.compiled import rbf_exponent, rbf_exponent_gemm, row_sq_norms
            _COMPILED[:] = [rbf_exponent, rbf_exponent_gemm, row_sq_norms]
        _COMPILED[0](X, S, float(kernel.gamma), B)
        np.exp(B, out=B)
    else:
        kernel._fill(X, X[S], B)
    return B @ vS


def _small_gemm_matvec(kernel: Any, X: np.ndarray, S: np.ndarray, vS: np.ndarray
                       ) -> np.ndarray | None:
    r"""``K[:, S] v_S`` of an RBF block of at most ``2^16`` entries with more multiply-adds
    than :func:`_small_block_matvec`'s compiled pass takes (digits' pairs, ``d =
    64``): the RBF kernel's own GEMM form (``D = X X_S^T``, then
    :func:`~primaldual.kernels.compiled.rbf_exponent_gemm`, ``exp(-gamma max(0, ||x||^2 +
    ||z||^2 - 2 x.z))``, then :func:`numpy.exp`), the operations of
    :meth:`primaldual.kernels.RBF._block` and :func:`~primaldual.kernels.kernel_matvec`, but
    the GEMM's right factor ``X_S^T`` copied contiguous first (OpenBLAS, one thread, the 45
    digits pairs' GEMMs: 2.6-2.7 ms against 2.8-3.1 ms on the transposed view) and without
    the products' argument handling (all 45 products: ~4.3 ms against 6.3-8.2 ms through
    ``kernel_matvec``). The
    squared norms ``||x||^2`` are computed once, compiled
    (:func:`~primaldual.kernels.compiled.row_sq_norms`; those of ``X_S`` are their entries
    ``S``): ``K v`` agrees with ``kernel_matvec``'s to rounding.
    ``None`` (the caller asks ``kernel_matvec``): not RBF, numba not loaded, rows not
    C-contiguous, or the distances' cancellation guard of ``RBF._block`` would take its exact
    route."""
    if type(kernel) is not RBF or "numba" not in sys.modules or not X.flags.c_contiguous:
        return None
    if len(_COMPILED) < 3:
        from ..kernels.compiled import rbf_exponent, rbf_exponent_gemm, row_sq_norms
        _COMPILED[:] = [rbf_exponent, rbf_exponent_gemm, row_sq_norms]
    a2 = _COMPILED[2](X)
    b2 = a2[S]
    gamma = float(kernel.gamma)
    if _kf._GEMM_DIST_ERR * gamma * (float(a2.max()) + float(b2.max())) > _kf._PROFILE_TOL:
        return None
    B = np.dot(X, np.ascontiguousarray(X[S].T))
    _COMPILED[1](B, a2, b2, gamma)
    np.exp(B, out=B)
    return B @ vS


@dataclass
class Recovered:
    """What a solution gives back in the method's terms.

    ``beta`` signed dual coefficients (``f(x) = sum beta_i k(x, x_i) + b``), ``b`` the bias,
    ``alpha`` the multipliers by name, the primal point and multipliers (for the primal KKT
    residuals) and the dual point (for the dual value).
    """

    beta: np.ndarray
    b: float
    alpha: dict[str, np.ndarray]
    primal_point: dict[str, Any]
    primal_multipliers: dict[str, Any]
    dual_point: dict[str, Any]
    extra: dict[str, float] = field(default_factory=dict)


# ----------------------------------------------------------------------------- recovery helpers
def bias_from_gradient(grad: np.ndarray, sign: np.ndarray, a: np.ndarray, upper: np.ndarray,
                       tol: float | None = None) -> float:
    """LIBSVM's ``calculate_rho`` in our sign: ``b = -rho``.

    ``grad`` is the gradient of the min-form dual ``1/2 a^T Q a + p^T a``; over free variables
    ``rho = mean(sign_i grad_i)``; with no free variable, the midpoint of the interval the KKT
    conditions allow (``[max lb, min ub]``).
    """
    yg = sign * grad
    if tol is None:
        # relative to the problem's scale: the box when it is finite, else the multipliers
        # (hard margin on data scaled by 1e4 has every alpha ~ 1e-8)
        upper = np.broadcast_to(upper, np.shape(a))
        fin = upper[np.isfinite(upper)]
        scale = float(np.max(fin)) if fin.size else float(np.max(np.abs(a), initial=0.0))
        tol = 1e-7 * scale
    at_up = a >= upper - tol
    at_lo = a <= tol
    free = ~(at_up | at_lo)
    ub_mask = (at_up & (sign < 0)) | (at_lo & (sign > 0))
    lb_mask = (at_up & (sign > 0)) | (at_lo & (sign < 0))
    return -mean_or_midpoint(yg, free, ub_mask, lb_mask)


def mean_or_midpoint(g: np.ndarray, free: np.ndarray, ub_mask: np.ndarray,
                     lb_mask: np.ndarray) -> float:
    """``mean(g[free])`` if any variable is free, else the midpoint of
    ``[max g[lb_mask], min g[ub_mask]]`` (LIBSVM's rule for one group of variables)."""
    if np.any(free):
        return float(np.mean(g[free]))
    ub = float(np.min(g[ub_mask])) if np.any(ub_mask) else np.inf
    lb = float(np.max(g[lb_mask])) if np.any(lb_mask) else -np.inf
    if not np.isfinite(ub):
        ub = lb
    if not np.isfinite(lb):
        lb = ub
    return 0.5 * (ub + lb) if np.isfinite(ub) else 0.0


def support_split(a: np.ndarray, upper: np.ndarray, tol: float | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of support vectors, free and bounded ones.

    The support is exactly ``a != 0``: the coefficients the certificate was computed from
    are the ones ``predict`` uses (no thresholding after certification).  Only the split
    into free (``0 < |a| < upper - tol``) and bounded (``|a| >= upper - tol``) uses ``tol``
    (default ``1e-7 * max |a|``, relative to the multipliers' scale); it labels support
    vectors and never drops one.
    """
    absa = np.abs(a)
    if tol is None:  # relative
        tol = 1e-7 * float(absa.max()) if absa.size else 0.0
    sv = absa > 0
    bounded = sv & (absa >= np.abs(upper) - tol) & np.isfinite(upper)
    return sv.nonzero()[0], (sv & ~bounded).nonzero()[0], bounded.nonzero()[0]


def stationarity_in_residual_units(cert: Certificate, key: str, C: np.ndarray) -> None:
    """Report the stationarity ``C_i e_i - alpha_i = 0`` of an error variable ``e`` (slack of
    an equality constraint, least squares) as ``|e_i - alpha_i / C_i|``: in the units of the
    residuals ``e`` the constraint rows are measured in. ``e`` is the predictor's own residual,
    so ``C_i e_i`` carries ``C_i`` times the rounding of ``f`` (0.05 at ``C = 1e12``) although
    the point is optimal to its gap; the quotient does not."""
    v = cert.kkt_per_sample.get(key)
    if v is None:
        return
    C = np.broadcast_to(np.asarray(C, dtype=float), np.shape(v))
    w = np.where(np.isfinite(C) & (C > 0), np.abs(v) / np.where(C > 0, C, 1.0), np.abs(v))
    cert.kkt_per_sample[key] = w
    cert.kkt[key] = float(np.max(w)) if w.size else 0.0


def _scale_hint(data: FitData) -> str:
    """:func:`~primaldual.validation.scale_hint` for ``data`` (``max|K| = max k(x_i, x_i)``
    for a PSD kernel, so no Gram matrix is formed)."""
    try:
        with np.errstate(all="ignore"):
            kmax = float(np.max(np.abs(data.kernel.diag(data.X))))
    except Exception:  # a kernel without a usable diagonal: the hint stays generic
        kmax = float("nan")
    cmax = float(np.max(data.C)) if data.C.size else float("nan")
    return scale_hint(kmax, cmax)


@functools.cache
def _param_names(cls: type) -> tuple[str, ...]:
    return tuple(BaseEstimator._get_param_names.__func__(cls))


def _lowrank_certificate(sol: Solution) -> Certificate:
    """The certificate of the eta-problem a low-rank fit solved (``K`` replaced by ``V V^T``),
    recomputed from its point by :func:`~primaldual.backends.lowrank.lowrank_qp_solve`
    (the interior-point diagnostics ``ipm_*`` left out)."""
    r = sol.info["lowrank"]
    kkt = {k: float(v) for k, v in r.kkt.items() if not k.startswith("ipm_")}
    factor = sol.info["factor"]
    cert = Certificate(float(r.primal_objective), float(r.dual_objective), float(r.gap),
                       float(r.relative_gap), kkt, {}, sol.status)
    cert.extra.update({"certifies": f"eta-problem (K ~= V V^T, {factor.method} rank "
                                    f"{factor.rank})"})
    if getattr(factor, "formed", True):
        # (a factor kept as V = C P computes it on access, O(N B M): lowrank_factor_)
        cert.extra["trace(K - V V^T) / trace(K)"] = float(factor.relative_error)
    sel = sol.info.get("rank_selection")
    if sel is not None:  # rank="auto": which rank was reached and why
        cert.extra.update({"rank selection": sel["reason"], "rank converged": sel["converged"],
                           "ranks tried": list(sel["ranks"])})
    return cert


def _numeric(X: Any) -> bool:
    """``X`` converts to a numeric array (sparse matrices, DataFrames and numeric lists do;
    lists of strings or other objects do not)."""
    if sp.issparse(X) or hasattr(X, "dtype") and np.asarray(X).dtype.kind in "biuf":
        return True
    try:
        np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return True


def _dense(a: Any) -> np.ndarray:
    return a.toarray() if sp.issparse(a) else np.asarray(a)


def _n_rows(X: Any) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)


class _HardMarginMarker:
    """Marks methods whose infeasibility means 'not separable'."""


def _probability_on(self: Any) -> bool:
    if not getattr(self, "probability", False):
        raise AttributeError("predict_proba is not available when probability=False")
    return True


def _no_decision_function(self: Any) -> bool:
    raise AttributeError(f"{type(self).__name__} is a regressor: it has no decision_function "
                         "(scikit-learn's convention); predict(X) returns f(x)")
