"""LS-SVM classifier (with Fisher targets) and LS-SVM regression (docs/formulations.md 7 and 8).

LS-SVM classifier primal (``f_i = <w, phi(x_i)> + b``; Suykens' ``gamma`` is ``C`` here)::

    min_{w,b,e}  1/2 ||w||^2 + 1/2 sum_i C_i e_i^2
    s.t.         y_i f_i = t_i - e_i                 [alpha_i free]

with targets ``t_i = 1`` (Suykens 3.1-3.7) or Fisher targets ``t_i = t_1`` for class +1 and
``t_i = t_2`` for class -1 (Suykens 3.23; ``targets="fisher"`` gives ``t_1 = N/N_1``,
``t_2 = N/N_2``). Lagrangian ``L = 1/2||w||^2 + 1/2 sum C_i e_i^2 - sum alpha_i (y_i f_i - t_i +
e_i)``; stationarity ``w = sum alpha_i y_i phi(x_i)``, ``y^T alpha = 0``, ``alpha_i = C_i e_i``.

Dual (the KKT linear system and the same as an optimisation problem)::

    [[0, y^T], [y, Q + I/C]] [b; alpha] = [0; t]          (Q = D_y K D_y)
    max_alpha  t^T alpha - 1/2 alpha^T (Q + I/C) alpha
    s.t.       y^T alpha = 0                              [nu free;  nu = -b]

LS-SVM regression primal / dual::

    min 1/2 ||w||^2 + 1/2 sum C_i e_i^2   s.t.  <w, phi(x_i)> + b + e_i = y_i   [alpha_i free]
    max y^T alpha - 1/2 alpha^T (K + I/C) alpha   s.t.  1^T alpha = 0   [nu = -b]
    [[0, 1^T], [1, K + I/C]] [b; alpha] = [0; y]

Recovery: ``beta_i = alpha_i y_i`` (classifier) or ``beta = alpha`` (regression), ``b = -nu`` (the
equality multiplier, or equivalently the first unknown of the linear system); ``e = alpha / C``;
every point is a support vector (``alpha = C e``, nonzero unless the point is fitted exactly).
The duality gap is zero up to round-off; the KKT residual is the check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import model as pm
from ..certificate import least_squares_certificate
from ..model.structure import KKTSystem
from ..solution import Solution
from ._base import BinaryClassifier, FitData, KernelMethod, Recovered, Regressor
from ._params import KERNEL, MULTICLASS, RUN, check_bool, check_C_finite, passed_on

__all__ = ["LSSVC", "LSSVR"]


def _C_value(data: FitData) -> float | np.ndarray:
    """``C`` as a float when uniform (the KKT backend's fast path), else the per-sample array."""
    C = np.asarray(data.C, dtype=float)
    return float(C[0]) if np.all(C == C[0]) else C.copy()


def _half_C_sum_squares(data: FitData, e: pm.Variable):
    """``1/2 sum_i C_i e_i^2`` (rendered ``C/2 Σ_i e_i²`` when C is uniform)."""
    C = _C_value(data)
    if np.ndim(C) == 0:
        return 0.5 * (pm.Data("C", C) * pm.sum_squares(e))
    return 0.5 * pm.sum_squares(pm.Data("sqrtC", np.sqrt(data.C), txt="√C", tex=r"\sqrt{C}") * e)


def _reg_gram(data: FitData, sign: np.ndarray | None,
              extra: str = "") -> tuple[pm.GramOperator, str, str]:
    """``D_s K D_s + diag(1/C)`` kept structured, with its rendering."""
    op = pm.GramOperator(data.kernel, data.X, sign=sign, diag=1.0 / data.C)
    base = "Q" if sign is not None else "K"
    return op, f"{base}{extra} + I/C", f"{base}{extra} + I/C"


class _LSBase(KernelMethod):
    """Shared machinery of the LS-SVM family: the KKT system, recovery from ``alpha``."""

    _has_bias = True
    _classifier = True
    _name = "LS-SVM"
    #: the multipliers of equality constraints are free (no sign to restore after CVXPY)
    _free_multipliers = True
    # C = inf is meaningful here (interpolation: H = K); the KKT backend refuses a singular K
    # with a clear error naming the remedies (finite C, jitter)
    _parameter_constraints = {**KERNEL, **RUN, "C": check_C_finite}

    # ----- hooks
    def _targets(self, data: FitData) -> np.ndarray:
        """Right-hand side ``d`` of the KKT system."""
        return np.ones(data.N) if self._classifier else data.y.copy()

    def _sign(self, data: FitData) -> np.ndarray | None:
        return data.y.copy() if self._classifier else None

    def _upper(self, data: FitData) -> np.ndarray:
        return np.full(data.N, np.inf)  # alpha is free: no bounded support vectors

    def _kkt(self, data: FitData) -> KKTSystem:
        return KKTSystem(data.kernel, data.X, _C_value(data), self._targets(data),
                         sign=self._sign(data), bias=self._has_bias, variable="alpha",
                         multipliers={"eq": "minus_b"} if self._has_bias else {})

    def _dual_structure(self, data: FitData) -> dict:
        """The fit's fast path: :meth:`_kkt`, equal to what
        :func:`~primaldual.model.structure.detect_kkt_system` derives from :meth:`_dual`."""
        return {"kkt_system": self._kkt(data)}

    def kkt_system(self, X: Any, y: Any, sample_weight: Any = None) -> KKTSystem:
        """The linear KKT system of the dual on ``(X, y)`` (matrix blocks via ``.matrix()``,
        right-hand side via ``.rhs()``), as the KKT backend solves it."""
        return self._kkt(self._prepare(X, y, sample_weight))

    # ----- recovery
    def _beta(self, data: FitData, a: np.ndarray) -> np.ndarray:
        return a * data.y if self._classifier else a.copy()

    def _bias_from_alpha(self, data: FitData, a: np.ndarray) -> float:
        """``b`` from the active constraints (all are equalities): mean over i of
        ``s_i (d_i - alpha_i/C_i) - (K beta)_i``."""
        if not self._has_bias:
            return 0.0
        s = self._sign(data)
        s = np.ones(data.N) if s is None else s
        Kb = data.kmatvec(self._beta(data, a))
        return float(np.mean(s * (self._targets(data) - a / data.C) - Kb))

    #: how the bias enters the problem (:func:`~primaldual.certificate.least_squares_certificate`)
    _bias_kind = "free"
    _error_key = "e"

    def _certify(self, data: FitData, rec: Recovered, task: Any, status: str):
        """The certificate computed from numbers (:func:`~primaldual.certificate.
        least_squares_certificate`): the primal at the predictor ``f = K beta + b`` with its
        own residuals ``e`` and the dual at ``alpha``; the error variables' stationarity in
        the units of the residuals. The task's ``P`` and ``D`` are not built (equal to the modelling
        layer's certificate of them: ``tests/methods/test_ls_certificate.py``)."""
        a = np.asarray(rec.dual_point["alpha"], dtype=float)
        Kb = data.kmatvec(rec.beta)
        bias = self._bias_kind if self._has_bias or self._bias_kind == "penalised" else "none"
        e = rec.primal_point[self._error_key]
        return least_squares_certificate(a, rec.beta, Kb, rec.b if bias != "none" else 0.0,
                                         np.asarray(e, dtype=float), self._sign(data),
                                         self._targets(data), data.C, bias=bias,
                                         error_key=self._error_key, status=status)

    def _point(self, data: FitData, a: np.ndarray, b: float) -> dict:
        # e from the predictor f = K beta + b itself (the constraint s_i f_i = t_i - e_i
        # solved for e), not alpha / C, which equals it only at the exact optimum: the
        # certificate's primal is the primal of what predict uses
        beta = self._beta(data, a)
        f = data.kmatvec(beta) + (b if self._has_bias else 0.0)
        s = self._sign(data)
        pt = {"w": beta, "e": self._targets(data) - (f if s is None else s * f)}
        if self._has_bias:
            pt["b"] = b
        return pt

    def _from_alpha(self, data: FitData, a: np.ndarray, b: float) -> Recovered:
        return Recovered(self._beta(data, a), b, {"alpha": a}, self._point(data, a, b),
                         {"alpha": a}, {"alpha": a})

    def _from_dual(self, data: FitData, sol: Solution) -> Recovered:
        a = np.asarray(sol.values["alpha"], dtype=float)
        if self._has_bias and "minus_b" in sol.multipliers:
            b = -float(np.asarray(sol.multipliers["minus_b"]).ravel()[0])
        else:
            b = self._bias_from_alpha(data, a)
        return self._from_alpha(data, a, b)

    def _from_primal(self, data: FitData, sol: Solution) -> Recovered:
        a = np.asarray(sol.multipliers["alpha"], dtype=float)
        b = float(np.asarray(sol.values["b"]).ravel()[0]) if self._has_bias else 0.0
        rec = self._from_alpha(data, a, b)
        rec.primal_point = dict(sol.values)
        rec.primal_multipliers = dict(sol.multipliers)
        return rec


class LSSVC(_LSBase, BinaryClassifier):
    """LS-SVM classifier (docs/formulations.md section 7; Suykens 3.1-3.7, Fisher targets 3.23).

    Primal ``min 1/2||w||^2 + 1/2 sum C_i e_i^2  s.t.  y_i (<w, phi(x_i)> + b) = t_i - e_i
    [alpha_i free]``; dual ``max t^T alpha - 1/2 alpha^T (Q + I/C) alpha  s.t.  y^T alpha = 0
    [nu = -b]``, whose optimality conditions are the linear system
    ``[[0, y^T], [y, Q + I/C]] [b; alpha] = [0; t]``. ``beta = alpha * y``; every point is a
    support vector.

    Parameters
    ----------
    C : float, default 1.0
        Error weight (Suykens' ``gamma``); per sample ``C_i = C * sample_weight_i``.
    kernel, gamma, degree, coef0 : kernel specification (``gamma`` is the kernel width).
    targets : "unit", "fisher" or (t1, t2), default "unit"
        ``t_i`` on the right-hand side: 1 for every point; ``"fisher"``: ``t_1 = N/N_1`` for
        class +1 (``classes_[1]``) and ``t_2 = N/N_2`` for class -1 (regularised kernel Fisher
        discriminant, targets ``+N/N_1, -N/N_2`` in regression terms); or explicit positive
        ``(t1, t2)``.
    backend : {"auto", "cvxpy", "kkt"}, default "auto"
    form : {"dual", "primal"}, default "dual"
    solver : str, optional (CVXPY solver)
    tol : float, default 1e-8 (CG tolerance of the KKT backend)
    verbose : bool
    """

    _classifier = True
    _name = "LS-SVM classifier"

    def __init__(self, C: float = 1.0, kernel: Any = "rbf", gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, targets: Any = "unit", backend: str = "auto",
                 form: str = "dual", solver: str | None = None, tol: float = 1e-8,
                 verbose: bool = False,
                 multiclass: str = "ovo", decision_function_shape: str = "ovr",
                 n_jobs: int | None = None, coding: Any = None, decoding: str = "hamming") -> None:
        self._store_init_args(locals())

    # targets are checked where the Fisher targets are formed (_t1_t2); coding/decoding by
    # primaldual.multiclass
    _parameter_constraints = {**_LSBase._parameter_constraints, **MULTICLASS,
                              "targets": passed_on, "coding": passed_on, "decoding": passed_on}

    def _t1_t2(self, data: FitData) -> tuple[float, float]:
        t = self.targets
        if isinstance(t, str):
            if t == "unit":
                return 1.0, 1.0
            if t == "fisher":
                n1, n2 = float(np.sum(data.y > 0)), float(np.sum(data.y < 0))
                return data.N / n1, data.N / n2
            raise ValueError(f"targets must be 'unit', 'fisher' or (t1, t2), got {t!r}")
        try:
            t1, t2 = (float(v) for v in t)
        except (TypeError, ValueError):
            raise TypeError(f"targets must be 'unit', 'fisher' or a pair (t1, t2), got {t!r}"
                            ) from None
        if not (t1 > 0 and t2 > 0 and np.isfinite(t1) and np.isfinite(t2)):
            raise ValueError(f"targets (t1, t2) must be finite and > 0, got {t!r}")
        return t1, t2

    def _unit(self) -> bool:
        return isinstance(self.targets, str) and self.targets == "unit"

    def _targets(self, data: FitData) -> np.ndarray:
        t1, t2 = self._t1_t2(data)
        return np.where(data.y > 0, t1, t2)

    def _primal(self, data: FitData) -> pm.Problem:
        w, b = pm.FeatureVariable("w", data.kernel, data.X), pm.Variable("b")
        e = pm.Variable("e", data.N)
        Y = pm.Data("y", data.y)
        rhs = 1 - e if self._unit() else pm.Data("t", self._targets(data)) - e
        return pm.Problem(0.5 * pm.norm2(w) + _half_C_sum_squares(data, e),
                          [(Y * (w @ pm.phi(data.X) + b) == rhs).named("alpha")],
                          "min", f"{self._name} primal", variables=[w, b, e])

    def _dual(self, data: FitData) -> pm.Problem:
        a = pm.Variable("alpha", data.N)
        Y = pm.Data("y", data.y)
        H, txt, tex = _reg_gram(data, data.y)
        lin = pm.vsum(a) if self._unit() else pm.dot(pm.Data("t", self._targets(data)), a)
        obj = lin - 0.5 * pm.quad_form(a, H, txt=f"αᵀ({txt})α", tex=rf"\alpha^T ({tex}) \alpha")
        return pm.Problem(obj, [(pm.dot(Y, a) == 0).named("minus_b")], "max", f"{self._name} dual")


class LSSVR(_LSBase, Regressor):
    """LS-SVM regression (docs/formulations.md section 8; Suykens 3.28-3.34).

    Primal ``min 1/2||w||^2 + 1/2 sum C_i e_i^2  s.t.  <w, phi(x_i)> + b + e_i = y_i
    [alpha_i free]``; dual ``max y^T alpha - 1/2 alpha^T (K + I/C) alpha  s.t.  1^T alpha = 0
    [nu = -b]``, i.e. ``[[0, 1^T], [1, K + I/C]] [b; alpha] = [0; y]``. ``beta = alpha``.

    Parameters
    ----------
    C : float, default 1.0
        Error weight (Suykens' ``gamma``; ``1/C`` is the noise variance in the GP reading).
    kernel, gamma, degree, coef0 : kernel specification.
    fit_intercept : bool, default True
        ``False`` drops ``b`` (and the equality ``1^T alpha = 0``): LS-SVM without bias, which is
        kernel ridge regression (docs/formulations.md 11).
    backend, form, solver, tol, verbose : as :class:`LSSVC`.
    """

    _classifier = False
    _name = "LS-SVM regression"

    def __init__(self, C: float = 1.0, kernel: Any = "rbf", gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, fit_intercept: bool = True, backend: str = "auto",
                 form: str = "dual", solver: str | None = None, tol: float = 1e-8,
                 verbose: bool = False) -> None:
        self._store_init_args(locals())

    _parameter_constraints = {**_LSBase._parameter_constraints, "fit_intercept": check_bool}

    @property
    def _has_bias(self) -> bool:  # type: ignore[override]
        return bool(self.fit_intercept)

    def _primal(self, data: FitData) -> pm.Problem:
        w, e = pm.FeatureVariable("w", data.kernel, data.X), pm.Variable("e", data.N)
        Y = pm.Data("y", data.y)
        f = w @ pm.phi(data.X)
        variables = [w, e]
        if self._has_bias:
            b = pm.Variable("b")
            f = f + b
            variables = [w, b, e]
        return pm.Problem(0.5 * pm.norm2(w) + _half_C_sum_squares(data, e),
                          [(f + e == Y).named("alpha")], "min", f"{self._name} primal",
                          variables=variables)

    def _dual(self, data: FitData) -> pm.Problem:
        a = pm.Variable("alpha", data.N)
        Y = pm.Data("y", data.y)
        H, txt, tex = _reg_gram(data, None)
        obj = pm.dot(Y, a) - 0.5 * pm.quad_form(a, H, txt=f"αᵀ({txt})α",
                                                tex=rf"\alpha^T ({tex}) \alpha")
        ones = pm.Data("1", np.ones(data.N), txt="1", tex="1")
        cons = [(pm.dot(ones, a) == 0).named("minus_b")] if self._has_bias else []
        return pm.Problem(obj, cons, "max", f"{self._name} dual")
