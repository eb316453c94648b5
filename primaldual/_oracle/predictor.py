"""The kernel and the predictor rebuilt in plain numpy: a kernel block from the kernel's
name and parameters, and ``f`` from exactly what ``decision_function`` uses (a low-rank
fit's features from its factor's basis and projection)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp


def numpy_kernel(kernel: Any, A: Any, B: Any) -> tuple[np.ndarray, bool]:
    """``(k(A, B), independent)``: the kernel block from the kernel's name and parameters in
    plain numpy; ``independent=False`` when the kernel is not one of linear, RBF, polynomial,
    sigmoid, precomputed (then ``kernel(A, B)`` is evaluated)."""
    name = type(kernel).__name__
    if name == "Precomputed":
        raise ValueError("a precomputed kernel is a block of the user's own Gram matrix")
    A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=float)
    B = B.toarray() if sp.issparse(B) else np.asarray(B, dtype=float)
    p = kernel.params() if hasattr(kernel, "params") else {}
    if name == "Linear":
        return A @ B.T, True
    if name == "RBF":
        d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
        # exact differences where the expansion cancels (nearby points at a large scale)
        if A.shape[0] * B.shape[0] * A.shape[1] <= 4_000_000:
            d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
        return np.exp(-float(p["gamma"]) * np.maximum(d2, 0.0)), True
    if name == "Polynomial":
        return (float(p["gamma"]) * (A @ B.T) + float(p["coef0"])) ** int(p["degree"]), True
    if name == "Sigmoid":
        return np.tanh(float(p["gamma"]) * (A @ B.T) + float(p["coef0"])), True
    return np.asarray(kernel(A, B), dtype=float), False


#: set while :func:`_binary` recomputes the gap with a perturbed kernel (rounding sensitivity)
_ROUNDING = {"on": False}


def _gram(est: Any, A: Any, B: Any, cols: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """Kernel block between rows ``A`` (training rows, or the precomputed block) and ``B``;
    for a precomputed kernel ``A`` is the ``n x N`` Gram block and ``cols`` selects ``B``'s
    columns."""
    kern = est.kernel_
    if type(kern).__name__ == "Precomputed":
        A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=float)
        K, indep = (A[:, cols] if cols is not None else A), True
    else:
        K, indep = numpy_kernel(kern, A, B)
    if _ROUNDING["on"]:  # the kernel as another rounding would give it: K (1 +- 64 eps)
        rng = np.random.default_rng(K.shape[0] * 7919 + K.shape[1])
        K = K * (1.0 + 64.0 * np.finfo(float).eps * rng.choice([-1.0, 1.0], size=K.shape))
    return K, indep


def _plain_kernel(kernel: Any, X: np.ndarray) -> tuple[np.ndarray, bool]:
    if type(kernel).__name__ == "Precomputed":
        return X, True
    return numpy_kernel(kernel, X, X)


def _predictor(est: Any, X: Any) -> tuple[np.ndarray, float, bool, dict]:
    """``(f on X, ||w||^2, independent kernel, info)`` from what ``decision_function`` uses
    (low-rank: the eta-problem's ``||eta||^2`` and ``V`` rebuilt from the factor)."""
    eta = getattr(est, "eta_", None)
    F = getattr(est, "lowrank_factor_", None)
    if eta is not None and F is not None:
        V, indep = _factor_features(est, F, X)
        f = V @ eta + float(est.b_)
        return f, float(eta @ eta), indep, {"V": V}
    coef = np.ravel(est.dual_coef_.toarray() if sp.issparse(est.dual_coef_)
                    else np.asarray(est.dual_coef_, dtype=float))
    b = float(np.ravel(est.intercept_)[0])
    sv = np.asarray(est.support_, dtype=np.intp)
    if coef.size == 0:
        return np.full(_rows(X), b), 0.0, True, {}
    if type(est.kernel_).__name__ == "Precomputed":
        Kx, indep = _gram(est, X, None, sv)
        Kss = Kx[sv]
    else:
        Z = est.support_vectors_
        Kx, indep = _gram(est, X, Z)
        Kss, _ = _gram(est, Z, Z)
    return Kx @ coef + b, float(coef @ Kss @ coef), indep, {"coef": coef, "b": b}


def _rows(X: Any) -> int:
    return int(X.shape[0])


def _factor_features(est: Any, F: Any, X: Any) -> tuple[np.ndarray, bool]:
    """``V = v(X)`` of a low-rank factor from its basis and projection (numpy kernel):
    ``proj^T k(basis, x)``, or ``L^{-1} k(basis, x)`` for the incomplete Cholesky."""
    import scipy.linalg

    idx = np.asarray(F.basis_index, dtype=np.intp)
    if type(est.kernel_).__name__ == "Precomputed":
        Kxb, indep = _gram(est, X, None, idx)
    else:
        Kxb, indep = _gram(est, X, F.basis)
    proj = np.asarray(F.proj, dtype=float)
    if F.method == "icholesky":
        if proj.size == 0:
            return np.zeros((_rows(X), 0)), indep
        return scipy.linalg.solve_triangular(proj, Kxb.T, lower=True).T, indep
    return Kxb @ proj, indep
