"""Proximal SVC, PSVM (docs/formulations.md section 10; Zhang 8.4.49-8.4.53, 8.5.23-8.5.31).

Primal (``f_i = <w, phi(x_i)> + b``; the bias is regularised too)::

    min_{w,b,xi}  1/2 (||w||^2 + b^2) + 1/2 sum_i C_i xi_i^2
    s.t.          y_i f_i = 1 - xi_i                       [alpha_i free]

Lagrangian ``L = 1/2(||w||^2 + b^2) + 1/2 sum C_i xi_i^2 - sum alpha_i (y_i f_i - 1 + xi_i)``;
stationarity ``w = sum alpha_i y_i phi(x_i)``, ``b = y^T alpha``, ``alpha_i = C_i xi_i``.

Dual (unconstrained: ``b`` is regularised, so there is no ``y^T alpha = 0``)::

    max_alpha  1^T alpha - 1/2 alpha^T (Q + y y^T + I/C) alpha       (Q = D_y K D_y)
    optimality: (Q + y y^T + I/C) alpha = 1   =  D_y (K + 1 1^T + I/C) D_y alpha = 1

Recovery: ``beta = alpha * y``, ``b = y^T alpha``, ``xi = alpha / C``; every point is a support
vector.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import model as pm
from ..model.structure import KKTSystem
from ..solution import Solution
from ._base import BinaryClassifier, FitData, Recovered
from ._params import MULTICLASS
from .lssvm import _C_value, _half_C_sum_squares, _LSBase

__all__ = ["ProximalSVC"]


class ProximalSVC(_LSBase, BinaryClassifier):
    """Proximal support-vector classifier (docs/formulations.md section 10).

    Primal ``min 1/2(||w||^2 + b^2) + 1/2 sum C_i xi_i^2  s.t.  y_i (<w, phi(x_i)> + b) =
    1 - xi_i [alpha_i free]``; dual ``max 1^T alpha - 1/2 alpha^T (Q + y y^T + I/C) alpha``
    (unconstrained), i.e. the linear system ``(Q + y y^T + I/C) alpha = 1``. ``b = y^T alpha``,
    ``beta = alpha * y``.

    Parameters
    ----------
    C : float, default 1.0
        Error weight (per sample ``C_i = C * sample_weight_i``).
    kernel, gamma, degree, coef0 : kernel specification.
    backend : {"auto", "cvxpy", "kkt"}, default "auto"
    form : {"dual", "primal"}, default "dual"
    solver : str, optional (CVXPY solver)
    tol : float, default 1e-8
    verbose : bool
    """

    _classifier = True
    _has_bias = False  # no border in the KKT system; b = y^T alpha is recovered afterwards
    _bias_kind = "penalised"
    _error_key = "xi"
    _name = "proximal SVC"
    _parameter_constraints = {**_LSBase._parameter_constraints, **MULTICLASS}

    def __init__(self, C: float = 1.0, kernel: Any = "rbf", gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, backend: str = "auto", form: str = "dual",
                 solver: str | None = None, tol: float = 1e-8, verbose: bool = False,
                 multiclass: str = "ovo", decision_function_shape: str = "ovr",
                 n_jobs: int | None = None) -> None:
        self._store_init_args(locals())

    def _kkt(self, data: FitData) -> KKTSystem:
        return KKTSystem(data.kernel, data.X, _C_value(data), np.ones(data.N), sign=data.y.copy(),
                         bias=False, rank_one=True, variable="alpha", multipliers={})

    def _primal(self, data: FitData) -> pm.Problem:
        w, b = pm.FeatureVariable("w", data.kernel, data.X), pm.Variable("b")
        xi = pm.Variable("xi", data.N)
        Y = pm.Data("y", data.y)
        return pm.Problem(0.5 * (pm.norm2(w) + pm.norm2(b)) + _half_C_sum_squares(data, xi),
                          [(Y * (w @ pm.phi(data.X) + b) == 1 - xi).named("alpha")],
                          "min", f"{self._name} primal", variables=[w, b, xi])

    def _dual(self, data: FitData) -> pm.Problem:
        a = pm.Variable("alpha", data.N)
        Y = pm.Data("y", data.y)
        H = pm.GramOperator(data.kernel, data.X, sign=data.y, diag=1.0 / data.C)
        bias_term = pm.sum_squares(pm.dot(Y, a))
        bias_term.txt, bias_term.tex = "(yᵀα)²", r"(y^T \alpha)^2"
        obj = (pm.vsum(a) - 0.5 * pm.quad_form(a, H, txt="αᵀ(Q + I/C)α",
                                               tex=r"\alpha^T (Q + I/C) \alpha")
               - 0.5 * bias_term)
        return pm.Problem(obj, [], "max", f"{self._name} dual")

    # ----- recovery: b = y^T alpha
    def _from_alpha(self, data: FitData, a: np.ndarray, b: float) -> Recovered:
        beta = a * data.y
        # the predictor's own residuals xi_i = 1 - y_i f_i (= alpha_i / C_i only at the exact
        # optimum): the certificate's primal is the primal of what predict uses
        xi = 1.0 - data.y * (data.kmatvec(beta) + b)
        return Recovered(beta, b, {"alpha": a}, {"w": beta, "b": b, "xi": xi},
                         {"alpha": a}, {"alpha": a})

    def _from_dual(self, data: FitData, sol: Solution) -> Recovered:
        a = np.asarray(sol.values["alpha"], dtype=float)
        return self._from_alpha(data, a, float(data.y @ a))

    def _from_primal(self, data: FitData, sol: Solution) -> Recovered:
        a = np.asarray(sol.multipliers["alpha"], dtype=float)
        rec = self._from_alpha(data, a, float(np.asarray(sol.values["b"]).ravel()[0]))
        rec.primal_point = dict(sol.values)
        rec.primal_multipliers = dict(sol.multipliers)
        return rec
