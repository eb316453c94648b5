r"""The smallest enclosing ball in feature space and the radius-margin bound.

Vapnik's bound (Vapnik & Chapelle 2000; Vapnik 1998) on the expected leave-one-out error rate
of a hard-margin SVM is ``E[D^2 ||w||^2] / N`` with ``D`` the diameter of the smallest ball
containing the training images ``phi(x_i)``; with its radius ``R``, ``D^2 = 4 R^2``, i.e.
``4 R^2 ||w||^2 / N``. The library reports the criterion ``R^2 ||w||^2`` (Chapelle et al.
2002 select models with it); multiply by ``4 / N`` for the bound. The ball is itself
a primal-dual problem (the SVDD ball with ``C = inf``). Its primal ``min R^2 s.t. ||phi(x_i) -
c||^2 <= R^2`` is not affine in ``(R^2, c)``; with ``r = R^2 - ||c||^2`` it becomes a QP with
affine constraints::

    min_{c, r}  ||c||^2 + r
    s.t.        2 <c, phi(x_i)> + r >= k(x_i, x_i)          [a_i >= 0]

(``||phi(x_i) - c||^2 <= R^2`` expanded: ``k_ii - 2<c, phi(x_i)> + ||c||^2 <= r + ||c||^2``).
Lagrangian ``L = ||c||^2 + r - sum a_i (2<c, phi(x_i)> + r - k_ii)``; stationarity ``sum a_i =
1`` and ``c = sum a_i phi(x_i)``; the dual::

    max_a  sum_i a_i k(x_i, x_i) - a^T K a
    s.t.   sum_i a_i = 1          [nu free]
           a_i >= 0               [s_i >= 0]

At the optimum ``R^2 = a^T diag(K) - a^T K a`` (the dual value); the points with ``a_i > 0``
lie on the sphere. The dual is a box-constrained QP with one equality, so the SMO backend solves
it (the minimisation ``1/2 a^T K a - 1/2 diag(K)^T a`` has the same minimiser: objective halved).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from .backends import get_backend
from .backends import select as select_backend
from .certificate import Certificate, certify, relative_gap
from .engine import atomic_fit
from .kernels import Kernel, Precomputed, make_kernel
from .model import (
    Data,
    FeatureVariable,
    GramOperator,
    Problem,
    Variable,
    norm2,
    phi,
    quad_form,
    vsum,
)
from .validation import audit_certificate

__all__ = ["EnclosingBall", "radius_margin_bound"]


class EnclosingBall(BaseEstimator):
    r"""The smallest ball enclosing the training points in feature space (SVDD with
    ``C = inf``) as a primal-dual problem (module docstring).

    Parameters
    ----------
    kernel : str, Kernel or callable, default "rbf"
    gamma : float or {"scale", "auto"}, default "scale"
    degree : int, default 3
    coef0 : float, default 0.0
    tol : float, default 1e-6
        SMO stopping tolerance (maximal violating pair), relative to ``max_i k(x_i, x_i)``.
        SMO keeps float32 kernel columns, so the support set it finds is then polished by one
        float64 Newton step on the KKT system of the support (exact when the support is
        right; kept only if the gap shrinks).
    backend : {"auto", "smo", "cvxpy"}, default "auto"
    solver : str, optional
        CVXPY solver.

    Attributes
    ----------
    alpha_ : ndarray (N,)
        The dual weights ``a`` (``a >= 0``, ``sum a = 1``); the centre is
        ``c = sum_i a_i phi(x_i)``.
    radius2_ : float
        ``R^2``.
    support_ : ndarray of int
        Indices with ``a_i > 0`` (on the sphere).
    support_vectors_ : ndarray (n_SV, n_features)
        Their rows, ``X[support_]``: with ``alpha_[support_]``, ``radius2_`` and
        ``center_norm2_`` all that :meth:`decision_function` reads (and what
        :func:`primaldual.persistence.save` stores; a loaded ball has ``X_fit_ = None``).
    certificate_ : Certificate
        Primal ``||c||^2 + r``, dual ``a^T diag(K) - a^T K a``, gap and KKT residuals.
    """

    def __init__(self, kernel: Any = "rbf", gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, tol: float = 1e-6, backend: str = "auto",
                 solver: str | None = None) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.backend = backend
        self.solver = solver

    def _kernel(self, X: np.ndarray) -> Kernel:
        return make_kernel(self.kernel, self.gamma, self.degree, self.coef0, X)

    def _diag(self, kernel: Kernel, X: np.ndarray) -> np.ndarray:
        if hasattr(kernel, "diag"):
            return np.asarray(kernel.diag(X), dtype=float)
        return np.diag(np.asarray(kernel(X), dtype=float)).copy()

    # ----- problems
    def _primal(self, kernel: Kernel, X: np.ndarray) -> Problem:
        c = FeatureVariable("c", kernel, X)
        r = Variable("r")
        kd = Data("kappa", self._diag(kernel, X), txt="κ", tex=r"\kappa")
        return Problem(norm2(c) + r, [(2 * (c @ phi(X)) + r >= kd).named("alpha")], "min",
                       "enclosing ball primal (r = R² - ‖c‖², κ_i = k(x_i, x_i))",
                       variables=[c, r])

    def _dual(self, kernel: Kernel, X: np.ndarray) -> Problem:
        N = X.shape[0]
        a = Variable("alpha", N)
        d = self._diag(kernel, X)
        kd = Data("kappa", d, txt="κ", tex=r"\kappa")
        Q = GramOperator(kernel, X)
        return Problem(vsum(kd * a) - quad_form(a, Q, name="K"),
                       [(vsum(a) == 1).named("nu"), (a >= 0).named("s")], "max",
                       "enclosing ball dual")

    def _data(self, X: Any) -> tuple[Kernel, np.ndarray]:
        X = np.asarray(X, dtype=float) if not hasattr(X, "dtype") else X
        from sklearn.utils.validation import check_array
        X = check_array(X, dtype=np.float64)
        return self._kernel(X), X

    def primal(self, X: Any, y: Any = None) -> Problem:
        """``min ||c||^2 + r  s.t.  2<c, phi(x_i)> + r >= k(x_i, x_i)``."""
        return self._primal(*self._data(X))

    def dual(self, X: Any, y: Any = None) -> Problem:
        """``max sum a_i k(x_i, x_i) - a^T K a  s.t.  sum a = 1, a >= 0``."""
        return self._dual(*self._data(X))

    def lagrangian(self, X: Any, y: Any = None):
        return self.primal(X).lagrangian()

    def kkt(self, X: Any, y: Any = None):
        return self.primal(X).kkt()

    # ----- fitting
    @atomic_fit
    def fit(self, X: Any, y: Any = None, backend: str | None = None) -> EnclosingBall:
        """Solve the dual, recover ``c`` and ``R^2``, certify against the primal."""
        t0 = time.perf_counter()
        X = validate_data(self, X, dtype=np.float64)
        if not (isinstance(self.tol, (int, float)) and self.tol > 0):
            raise ValueError(f"tol must be a positive number, got {self.tol!r}")
        kernel = self._kernel(X)
        P, D = self._primal(kernel, X), self._dual(kernel, X)
        name = select_backend(D, backend or self.backend)
        opts: dict[str, Any] = {}
        if name == "smo":
            # relative to the kernel's scale (SMO's kernel columns are float32)
            opts = {"tol": self.tol * _kernel_scale(self._diag(kernel, X))}
        elif name == "cvxpy" and self.solver:
            opts = {"solver": self.solver}
        target = D
        if name == "cvxpy" and not isinstance(kernel, Precomputed):
            # the maximiser a is scale free (the dual objective is linear in K): CVXPY solves
            # the ball of K / max k_ii, whose numbers are O(1) whatever the scale of X (on
            # X * 1e6 the raw problem is reported 'unbounded' by the conic solver)
            Kn = np.asarray(kernel(X), dtype=float) / _kernel_scale(self._diag(kernel, X))
            target = self._dual(Precomputed(), Kn)
        sol = get_backend(name).solve(target, **opts)
        if not sol.has_point:
            from .exceptions import NumericalTroubleError
            raise NumericalTroubleError(
                f"EnclosingBall: the {sol.backend} solve of the dual returned status "
                f"{sol.status!r}, but the ball problem is always feasible and bounded: numerical "
                "trouble (rescale X, or try the other backend)", sol)
        a = np.maximum(np.asarray(sol.values["alpha"], dtype=float), 0.0)
        a = a / a.sum()
        d = self._diag(kernel, X)
        Q = GramOperator(kernel, X)
        a, Ka = _polish(a, Q.matvec(a), kernel, X, d, Q.matvec)
        c2 = float(a @ Ka)
        dist2 = d - 2.0 * Ka + c2  # ||phi(x_i) - c||^2
        R2 = float(np.max(dist2))  # the smallest radius enclosing every point at this centre
        r = R2 - c2
        cert = certify(P, {"c": a, "r": np.array([r])}, {"alpha": a}, D, {"alpha": a},
                       status=sol.status, unit=ball_unit(d))
        # the one unit (R^2 itself, floored at 1e-10 max k_ii: the ball's objective scales with
        # the kernel, a floor of 1 would certify any radius of a small-scale kernel) and the
        # audit every estimator gets: "optimal" only with relative gap and KKT <= min(tol, 1e-2)
        cert.relative_gap = relative_gap(cert.duality_gap, cert.primal_objective, ball_unit(d))
        gtol = min(max(float(self.tol), 1e-6), 1e-2)
        audit_certificate(cert, gap_tol=gtol, kkt_tol=gtol)
        cert.extra.update({"R^2": R2, "time [s]": time.perf_counter() - t0,
                           "backend": sol.backend})
        self.kernel_, self.X_fit_ = kernel, X
        self.alpha_, self.radius2_, self.center_norm2_ = a, R2, c2
        self.radius_ = float(np.sqrt(max(R2, 0.0)))
        tol_sv = 1e-7 * max(1.0, float(np.max(a)))
        self.support_ = np.flatnonzero(a > tol_sv)
        self.support_vectors_ = X[self.support_]   # what decision_function reads (and a file)
        self.certificate_, self.solution_, self.backend_ = cert, sol, sol.backend
        self.status_ = cert.status
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """``R^2 - ||phi(x) - c||^2`` (``>= 0`` inside the ball)."""
        check_is_fitted(self, "alpha_")
        if isinstance(self.kernel_, Precomputed):
            # K(X_new, X_train) holds no k(x, x) of a new point, which the distance needs
            raise ValueError("EnclosingBall.decision_function needs k(x, x) of the new rows, "
                             "which a precomputed kernel matrix K(X_new, X_train) does not "
                             "hold; fit with a kernel function to score new points")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        sv = self.support_
        Kx = np.asarray(self.kernel_(X, self.support_vectors_), dtype=float)
        return self.radius2_ - (self._diag(self.kernel_, X) - 2.0 * Kx @ self.alpha_[sv]
                                + self.center_norm2_)


def _kernel_scale(d: np.ndarray) -> float:
    """``max_i |k(x_i, x_i)|`` (1 for an all-zero diagonal): the ball's objective scale."""
    top = float(np.max(np.abs(d), initial=0.0))
    return top if np.isfinite(top) and top > 0 else 1.0


def ball_unit(d: np.ndarray) -> float:
    """The unit of the ball's relative gap: ``1e-10 max_i k(x_i, x_i)`` (the gap is divided by
    ``max(unit, R^2)``)."""
    return 1e-10 * _kernel_scale(d)


def _gap(a: np.ndarray, Ka: np.ndarray, d: np.ndarray) -> float:
    """``R^2(a) - D(a)``: the largest distance to the centre minus the dual value."""
    c2 = float(a @ Ka)
    dist2 = d - 2.0 * Ka + c2
    return float(np.max(dist2) - (a @ d - c2))


def _polish(a: np.ndarray, Ka: np.ndarray, kernel: Kernel, X: np.ndarray, d: np.ndarray,
            matvec: Any) -> tuple[np.ndarray, np.ndarray]:
    """One float64 Newton step on the support set: SMO keeps float32 kernel columns, which
    limits the gap to ~1e-8. On ``S = {a_i > 0}`` the equality-constrained QP
    ``min 1/2 a_S^T K_SS a_S - 1/2 kappa_S^T a_S, 1^T a_S = 1`` is solved from its KKT system;
    the step is kept only if ``a_S`` stays >= 0 and the gap shrinks."""
    S = np.flatnonzero(a > 1e-10 * max(1.0, float(np.max(a))))
    if S.size == 0 or S.size > 3000:
        return a, Ka
    KSS = (np.asarray(X[np.ix_(S, S)], dtype=float) if isinstance(kernel, Precomputed)
           else np.asarray(kernel(X[S]), dtype=float))
    n = S.size
    M = np.zeros((n + 1, n + 1))
    M[:n, :n] = KSS
    M[:n, n] = M[n, :n] = 1.0
    rhs = np.concatenate([0.5 * d[S], [1.0]])
    z = np.linalg.lstsq(M, rhs, rcond=None)[0]
    if np.any(z[:n] < 0):
        return a, Ka
    b = np.zeros_like(a)
    b[S] = z[:n] / z[:n].sum()
    Kb = matvec(b)
    return (b, Kb) if _gap(b, Kb, d) < _gap(a, Ka, d) else (a, Ka)


def radius_margin_bound(model: Any, *, tol: float = 1e-6) -> float:
    r"""``R^2 ||w||^2`` of a fitted binary kernel classifier (Vapnik & Chapelle 2000).

    ``||w||^2 = beta^T K beta`` from the model's ``beta_`` and kernel; ``R^2`` from the smallest
    ball (:class:`EnclosingBall`) around its training points in the same feature space.
    ``4 R^2 ||w||^2 / N`` bounds the expected leave-one-out error rate of a hard-margin SVM
    (Vapnik's ``D^2 ||w||^2 / N`` with the ball's diameter ``D = 2R``). For the
    L2-SVC (squared hinge) the soft margin is a hard margin in the feature space of
    ``K + I/C`` (Chapelle, Vapnik, Bousquet & Mukherjee 2002), so both factors use that
    kernel: ``R~^2`` of the ball in ``K + diag(1/C_i)`` and ``||w~||^2 = beta^T K beta + sum
    alpha_i^2 / C_i`` (``C_i`` the per-sample weights of the fit). For the C-SVC (L1 soft
    margin) the value is a model-selection criterion, not a bound.
    The value is also stored in ``model.certificate_.extra["radius-margin bound"]`` (with
    ``R^2`` and ``||w||^2``).
    """
    if hasattr(model, "estimators_"):
        raise ValueError("radius_margin_bound needs a binary fit (the model is multiclass)")
    check_is_fitted(model, "beta_")
    if getattr(model, "X_fit_", None) is None:
        raise ValueError("radius_margin_bound needs the training rows of a fit made in this "
                         "session (a pickled model keeps only what predict needs); refit it")
    X, kernel, beta = model.X_fit_, model.kernel_, np.asarray(model.beta_, dtype=float)
    sv = np.flatnonzero(beta)
    w2 = float(beta[sv] @ (np.asarray(kernel(X[sv]), dtype=float) @ beta[sv])) if sv.size \
        else 0.0
    if getattr(type(model), "_squared_hinge", False):   # L2-SVC: K + diag(1/C_i) in the ball
        a = np.asarray(model.alpha_, dtype=float)
        # the per-sample C_i of the fit (C times sample and class weights), not the scalar C
        Ci = np.asarray(getattr(model, "sample_C_", np.full(a.shape, float(model.C))),
                        dtype=float)
        if Ci.shape != a.shape:
            raise ValueError("radius_margin_bound: the L2-SVC was fitted with some "
                             "sample_weight <= 0 (rows dropped); the bound needs every row's "
                             "C_i = C * sample_weight_i > 0")
        inv = np.where(np.isfinite(Ci), 1.0 / Ci, 0.0)
        w2 += float((a * a) @ inv)
        Kt = np.asarray(kernel(X), dtype=float)
        Kt[np.diag_indices_from(Kt)] += inv
        ball = EnclosingBall(kernel="precomputed", tol=tol).fit(Kt)
    else:
        ball = EnclosingBall(kernel=kernel, tol=tol).fit(X)
    bound = ball.radius2_ * w2
    cert = getattr(model, "certificate_", None)
    if isinstance(cert, Certificate):
        cert.extra.update({"R^2": ball.radius2_, "||w||^2": w2, "radius-margin bound": bound})
    return float(bound)
