"""The oracles of the estimators fitted without a loss: the enclosing ball (the radius
at the fitted centre against the ball dual), kernel PCA (the full spectrum of the
centred Gram matrix) and kernel PLS (an independent NIPALS reference)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .predictor import numpy_kernel
from .report import OracleReport, _box


def _ball(est: Any, X: Any, tol: float) -> OracleReport:
    """Ball: primal ``R^2(c) = max_i ||phi(x_i) - c||^2`` at the fitted centre
    ``c = sum a_i phi(x_i)``, dual ``a^T diag(K) - a^T K a``; unit ``1e-10 max_i k_ii``."""
    Xd = np.asarray(X, dtype=float)
    if type(est.kernel_).__name__ == "Precomputed":
        K, indep = Xd, True
    else:
        K, indep = numpy_kernel(est.kernel_, Xd, Xd)
    a = np.asarray(est.alpha_, dtype=float)
    d = np.diag(K).copy()
    Ka = K @ a
    c2 = float(a @ Ka)
    R2 = float(np.max(d - 2.0 * Ka + c2))
    D = float(a @ d) - c2
    kmax = float(np.max(np.abs(d), initial=0.0))
    unit = max(abs(R2), 1e-10 * kmax, 1e-300)
    dinf = max(_box(a, 0.0, np.inf, 1.0), abs(float(a.sum()) - 1.0))
    status = str(getattr(est, "status_", getattr(est.certificate_, "status", "")))
    rep = OracleReport("EnclosingBall", R2, D, R2 - D, unit, (R2 - D) / unit, dinf, status,
                       tol, indep, {"violation:|radius2_ - R^2| / R^2":
                                    abs(float(est.radius2_) - R2) / unit})
    return rep


def _kpca(est: Any, X: Any) -> OracleReport:
    """Kernel PCA: the full spectrum of the centred Gram matrix (``numpy.linalg.eigvalsh``).
    ``primal`` is the variance the kept components capture, ``sum_k ||Omega_c u_k||^2 /
    lambda_k``... recomputed as ``sum_k u_k^T Omega_c u_k``; ``dual`` the sum of the top-``k``
    eigenvalues (Ky Fan: the maximum of ``trace(U^T Omega_c U)`` over orthonormal ``U``);
    the gap is ``dual - primal >= 0``, relative to ``dual``. Violations: a kept eigenvalue
    that is not one of the leading ones, an omitted eigenvalue above the smallest kept, an
    eigen-residual or non-orthonormality above ``tol``."""
    Xd = np.asarray(X, dtype=float)
    tol = 1e-6
    kern = est.kernel_
    if type(kern).__name__ == "CenteredKernel" or not hasattr(kern, "params"):
        base = getattr(kern, "kernel", kern)
    else:
        base = kern
    if type(base).__name__ == "Precomputed":
        K, indep = Xd, True
    else:
        K, indep = numpy_kernel(base, Xd, Xd)
    N = K.shape[0]
    J = np.eye(N) - 1.0 / N
    Kc = J @ K @ J
    Kc = 0.5 * (Kc + Kc.T)
    # the rounding of K itself (N eps max|K|) bounds how well any eigenpair can be verified:
    # a centred kernel far below its uncentred entries (RBF on tiny X) is known only to that
    tol = max(tol, 10.0 * N * float(np.finfo(float).eps) * float(np.max(np.abs(K), initial=0.0))
              / max(float(np.max(np.abs(np.linalg.eigvalsh(Kc)), initial=0.0)), 1e-300))
    spec = np.sort(np.linalg.eigvalsh(Kc))[::-1]
    lam = np.asarray(est.eigenvalues_, dtype=float)
    U = np.asarray(est.eigenvectors_, dtype=float)
    k = lam.shape[0]
    top = float(spec[0]) if spec.size else 0.0
    scale = max(abs(top), 1e-300)
    captured = float(np.sum(U * (Kc @ U)))
    ky_fan = float(np.sum(spec[:k]))
    gap = ky_fan - captured
    omitted = float(spec[k]) if k < N else -np.inf
    smallest = float(np.min(lam)) if k else np.inf
    res = float(np.max(np.linalg.norm(Kc @ U - U * lam, axis=0), initial=0.0)) / scale
    orth = float(np.max(np.abs(U.T @ U - np.eye(k)), initial=0.0))
    extra = {"violation:max |kept - leading eigenvalues| / lambda_1":
             float(np.max(np.abs(lam - spec[:k]), initial=0.0)) / scale,
             "violation:(omitted - smallest kept) / lambda_1":
             max(0.0, omitted - smallest) / scale if k < N else 0.0,
             "violation:eigen-residual / lambda_1": res,
             "violation:orthonormality": orth,
             }
    if getattr(est, "n_components", None) is None:  # "every component with lambda > 0"
        extra["violation:kept eigenvalues below 1e-12 lambda_1 (numerically zero)"] = \
            float(np.sum(lam <= 1e-12 * scale))
    if getattr(est, "lowrank_factor_", None) is not None:
        extra = {"note": "low-rank fit: the oracle checks the exact kernel only for exact fits"}
        return OracleReport("KernelPCA", ky_fan, captured, gap, scale, gap / scale, 0.0,
                            "nystrom", tol, indep, extra)
    status = str(getattr(est.certificate_, "status", "optimal"))
    return OracleReport("KernelPCA", ky_fan, captured, gap, scale, gap / scale, 0.0,
                        status, tol, indep, extra)


def _kpls(est: Any, X: Any, y: Any) -> OracleReport:
    """Kernel PLS: scores orthonormal (``T^T T = I``) and the training predictions equal
    those of an independent NIPALS kernel PLS (Rosipal & Trejo 2001) on the centred Gram
    matrix (numpy here), relative to ``max |y|``."""
    Xd = np.asarray(X, dtype=float)
    Y = np.asarray(y, dtype=float)
    Y2 = Y.reshape(Y.shape[0], -1)
    kern = est.kernel_
    base = getattr(kern, "kernel", kern)
    if type(base).__name__ == "Precomputed":
        K, indep = Xd, True
    else:
        K, indep = numpy_kernel(base, Xd, Xd)
    T = np.asarray(est.x_scores_, dtype=float)
    k = T.shape[1]
    orth = float(np.max(np.abs(T.T @ T - np.eye(k)), initial=0.0))
    ref, scales = _nipals_kpls(K, Y2, k)
    pred = np.asarray(est.predict(Xd), dtype=float).reshape(Y2.shape)
    yscale = max(float(np.max(np.abs(Y2 - Y2.mean(0)), initial=0.0)), 1e-300)
    diff = float(np.max(np.abs(pred - ref), initial=0.0)) / yscale
    extra = {"violation:orthonormality of x_scores_": orth,
             "violation:max |predict - NIPALS reference| / max |y - mean y|": diff,
             "smallest deflated kernel scale / largest": min(scales, default=1.0)
             / max(max(scales, default=1.0), 1e-300)}
    tol = max(1e-6, 10.0 * K.shape[0] * float(np.finfo(float).eps)
              * float(np.max(np.abs(K), initial=0.0)) / max(min(scales, default=1.0), 1e-300))
    return OracleReport("KernelPLSRegression", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, "optimal", tol,
                        indep, extra)


def _nipals_kpls(K: np.ndarray, Y: np.ndarray, k: int) -> tuple[np.ndarray, list[float]]:
    r"""Training predictions of kernel PLS with ``k`` components, and the scale of the
    deflated kernel each component is extracted from.

    Deflated centred Gram matrix ``K_a``, score ``t = K_a u / ||K_a u||`` iterated to the
    dominant direction of ``K_a Y_a Y_a^T`` (its leading eigenvector, here by
    ``numpy.linalg.eig``), then ``Y_hat = mean(Y) + T T^T Y_c``.

    Why each component gets its own scale ``s_a = lambda_max(K_a)``: ``K`` is known only to
    its rounding, ``|dK_ij| <= eps max|K|``, so ``||dK||_2 <= N eps max|K|``; centring and
    the exact deflations are orthogonal projections, which do not enlarge it. ``t_a`` is the
    dominant direction of a matrix of size ``s_a`` perturbed by that much, so it turns by
    about ``N eps max|K| / s_a`` (Davis-Kahan with the gap taken as ``s_a``), and the
    predictions ``T T^T Y_c`` move by that times ``max |Y_c|`` up to a modest factor (the
    ``10`` of the tolerance; an estimate, not a bound: a gap below ``s_a`` turns ``t_a``
    more). A late component whose ``K_a`` is small next to ``K_0`` (RBF with
    ``gamma = 1e-5`` on features of ``0.1``: ``s_0 = 5.1e-6``, ``s_2 = 3.4e-12``, tolerance
    ``10 * 13 eps / s_2 = 8.6e-3``) is resolved only that far in float64, however exact the
    code: perturbing ``K`` by one rounding unit moves that third component's predictions by
    ``3e-5`` of ``max |y|``. The tolerance uses the smallest ``s_a``, not ``s_0``.
    """
    N = K.shape[0]
    J = np.eye(N) - 1.0 / N
    Kd = J @ K @ J
    Yc = Y - Y.mean(0)
    Yd = Yc.copy()
    T = np.zeros((N, 0))
    scales: list[float] = []
    for _ in range(k):
        scales.append(float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (Kd + Kd.T))),
                                   initial=0.0)))
        # the fixed point of NIPALS' t = K u, u = Y Y^T t: the leading eigenvector of
        # K_d Y_d Y_d^T (real spectrum: a product of two PSD matrices)
        w, V = np.linalg.eig(Kd @ Yd @ Yd.T)
        t = np.real(V[:, int(np.argmax(np.real(w)))])
        t = Kd @ (Yd @ (Yd.T @ t))
        nt = np.linalg.norm(t)
        if nt == 0:
            break
        t = t / nt
        T = np.column_stack([T, t])
        Pm = np.eye(N) - np.outer(t, t)
        Kd = Pm @ Kd @ Pm
        Yd = Pm @ Yd
    return Y.mean(0) + T @ (T.T @ Yc), scales
