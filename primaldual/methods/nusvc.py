"""nu-SVC (docs/formulations.md section 4; Zhang 8.4.24-8.4.37, corrected).

Primal (``f_i = <w, phi(x_i)> + b``; ``C_i`` = sample/class weights, 1 by default)::

    min_{w,b,xi,rho}  1/2 ||w||^2 - nu rho + 1/N sum_i C_i xi_i
    s.t.              y_i f_i >= rho - xi_i     [alpha_i >= 0]
                      xi_i >= 0                 [mu_i >= 0]
                      rho >= 0                  [delta >= 0]

Lagrangian ``L = 1/2||w||^2 - nu rho + 1/N sum C_i xi_i - sum alpha_i (y_i f_i - rho + xi_i)
- sum mu_i xi_i - delta rho``; stationarity ``w = sum alpha_i y_i phi(x_i)``, ``y^T alpha = 0``,
``C_i/N - alpha_i - mu_i = 0``, ``1^T alpha = nu + delta``.

Dual::

    max_alpha  -1/2 alpha^T Q alpha                   (Q = D_y K D_y)
    s.t.       y^T alpha = 0          [eta free; eta = -b]
               1^T alpha >= nu        [rho >= 0; the primal margin parameter]
               alpha_i >= 0           [s_i >= 0; s_i = y_i f_i - rho + xi_i]
               alpha_i <= C_i / N     [xi_i >= 0; the primal slack]

Recovery (LIBSVM's r1/r2 rule): over free SVs (``0 < alpha_i < C_i/N``) of each class,
``r1 = mean_{y=+1} sum_j beta_j K_ij``, ``r2 = -mean_{y=-1} sum_j beta_j K_ij`` (with no free SV
in a class, the midpoint of the interval its KKT conditions allow); ``b = -(r1 - r2)/2``,
``rho = (r1 + r2)/2``. An interior-point solver's multipliers ``eta`` and ``rho`` are exact and
preferred. Scaling ``(alpha, b)`` by ``1/rho`` gives the C-SVC solution with ``C = 1/(N rho)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import model as pm
from ._base import (
    BinaryClassifier,
    FitData,
    Recovered,
    mean_or_midpoint,
)
from ._params import (
    KERNEL,
    MULTICLASS,
    RUN,
    SMO,
    check_bool,
    check_class_weight,
    check_nu,
    passed_on,
)
from .svc import _margin_expr


def _bound_data(data: FitData, scale: float = 1.0, sym: str = "",
                up: np.ndarray | None = None) -> pm.Data:
    """The per-sample bound ``scale * C_i / N`` (or ``up``) as data, rendered ``1/N`` when
    uniform."""
    up = scale * data.C / data.N if up is None else up
    if np.all(up == up[0]):
        return pm.Data("bound", float(up[0]), txt=f"{sym or 1}/N", tex=rf"\frac{{{sym or 1}}}{{N}}")
    return pm.Data("bound", up, txt=f"{sym or 'w'}/N", tex=rf"\frac{{{sym or 'w'}}}{{N}}")


class NuSVC(BinaryClassifier):
    """nu-SVC (docs/formulations.md section 4): ``nu`` bounds the fraction of margin errors
    from above and the fraction of support vectors from below.

    Parameters
    ----------
    nu : float in (0, 1], default 0.5
    kernel, gamma, degree, coef0 : kernel (as :class:`~primaldual.methods.svc.CSVC`)
    class_weight : dict, "balanced" or None
        Scales the per-sample bound ``C_i/N`` (``C_i`` = weight).
    tol, max_iter, backend, form, solver, cache_size, verbose : as :class:`CSVC`
    multiclass, decision_function_shape, n_jobs, shrinking, probability, break_ties,
    random_state : as :class:`CSVC`

    Fitted attributes additionally include ``rho_`` (the margin parameter). Weights are
    relative (normalised to mean 1); ``dual_coef_``, ``intercept_`` and ``decision_function``
    are LIBSVM's model ``(beta, b) / rho``.
    """
    # sparse X stays sparse on the SMO route (KernelMethod._keeps_sparse)
    _sparse_smo = True

    _name = "nu-SVC"
    #: the lean route of its one-vs-one sub-problems (:mod:`._pair`)
    _pair_kind = "nusvc"
    _parameter_constraints = {**KERNEL, **RUN, **SMO, **MULTICLASS, "nu": check_nu,
                              "class_weight": check_class_weight,
                              # scikit-learn's NuSVC options (docs/ecosystem.md)
                              "shrinking": check_bool, "probability": check_bool,
                              "break_ties": check_bool, "random_state": passed_on}

    def __init__(self, nu: float = 0.5, kernel: Any = "rbf", gamma: Any = "scale",
                 degree: int = 3, coef0: float = 0.0, class_weight: Any = None,
                 tol: float = 1e-3, max_iter: int = -1, backend: str = "auto",
                 form: str = "dual", solver: str | None = None, cache_size: float = 200.0,
                 verbose: bool = False,
                 multiclass: str = "ovo", decision_function_shape: str = "ovr",
                 n_jobs: int | None = None, shrinking: bool = True, probability: bool = False,
                 break_ties: bool = False, random_state: Any = None) -> None:
        self._store_init_args(locals())

    def _box_C(self, params: dict) -> float:
        return 1.0  # no C: the weights C_i start at 1 (sample/class weights only), box C_i/N

    def _prepare(self, X, y, sample_weight=None, params=None) -> FitData:
        data = super()._prepare(X, y, sample_weight, params)
        nu = data.params["nu"]
        if sample_weight is None and data.params.get("class_weight") is None \
                and type(self)._sample_C is _PLAIN_SAMPLE_C and self._box_C(data.params) == 1.0:
            # unit weights (every one-vs-one pair has them): C is all ones, whose sums are
            # exact in any order -- the normalisation below multiplies by exactly 1 and the
            # summed weights are the class counts: the same values without three passes
            w_pos = float(np.count_nonzero(data.y > 0))
            cap = 2.0 * min(w_pos, float(data.N) - w_pos) / data.N
        else:
            # weights are relative (LIBSVM: box w_i, 1^T alpha = nu sum_i w_i): normalised to
            # a mean of 1, so multiplying every weight by a constant leaves the model unchanged
            data.C = data.C * (data.N / float(data.C.sum()))
            w_pos = float(data.C[data.y > 0].sum())
            cap = 2.0 * min(w_pos, float(data.C.sum()) - w_pos) / data.N
        if nu > cap + 1e-12:
            raise ValueError(f"nu={nu} is infeasible: it must be <= 2 min(W+, W-)/W = {cap:.6g} "
                             "(W+, W-: summed weights of each class; LIBSVM: 'specified nu is "
                             "infeasible')")
        return data

    def _one_class_left_message(self) -> str:
        return ("specified nu is infeasible: all samples with positive weights belong to the "
                "same class")

    def _coef_scale(self, rec: Recovered) -> float:
        """LIBSVM's nu-SVC model is ``(alpha, b) / rho`` (margin at +-1): ``dual_coef_`` and
        ``intercept_`` (hence ``decision_function``) follow it; ``beta_``, ``b_`` keep the
        nu-SVC scale of docs/formulations.md."""
        rho = float(rec.extra.get("rho", 0.0))
        return 1.0 / rho if rho > 0 else 1.0

    def _upper(self, data: FitData) -> np.ndarray:
        return data.C / data.N

    #: the 1/N box makes the objective O(rho^2) (tiny): a solver's absolute tolerances are
    #: tightened so rho and b keep their relative accuracy (engine.BackendHints.tight)
    _tight_objective = True

    # ----- problems
    def _primal(self, data: FitData) -> pm.Problem:
        w, b, Y, f = _margin_expr(data)
        xi = pm.Variable("xi", data.N)
        rho = pm.Variable("rho")
        Cn = _bound_data(data)
        nu = pm.Data("nu", data.params["nu"])
        return pm.Problem(0.5 * pm.norm2(w) - nu * rho + pm.vsum(Cn * xi),
                          [(Y * f >= rho - xi).named("alpha"), (xi >= 0).named("mu"),
                        (rho >= 0).named("delta")],
                          "min", f"{self._name} primal", variables=[w, b, xi, rho])

    def _dual_data(self, data: FitData) -> dict:
        """The numbers the dual is written with (:mod:`._structure`): ``y``, the box
        ``C_i/N`` and ``nu``."""
        return {"y": data.y, "bound": data.C / data.N, "nu": float(data.params["nu"])}

    def _dual(self, data: FitData, values: dict | None = None) -> pm.Problem:
        v = self._dual_data(data) if values is None else values
        a = pm.Variable("alpha", data.N)
        Y = pm.Data("y", v["y"])
        U = _bound_data(data, up=v["bound"])
        Q = pm.GramOperator(data.kernel, data.X, sign=v["y"])
        nu = pm.Data("nu", v["nu"])
        return pm.Problem(-(0.5 * pm.quad_form(a, Q)),
                          [(pm.dot(Y, a) == 0).named("minus_b"), (pm.vsum(a) >= nu).named("rho"),
                        (a >= 0).named("s"), (a <= U).named("xi")],
                          "max", f"{self._name} dual")

    # ----- recovery
    def _bias_rho(self, data: FitData, a: np.ndarray) -> tuple[float, float]:
        """The r1/r2 rule: ``(b, rho)`` from free SVs of each class (midpoints otherwise)."""
        up = data.C / data.N
        g = data.y * data.kmatvec(a * data.y)  # = y_i <w, phi(x_i)>
        tol = 1e-7 * float(np.max(up))
        lo, hi = a <= tol, a >= up - tol
        free = ~(lo | hi)
        r = []
        for s in (1.0, -1.0):
            c = data.y == s
            # alpha = 0: g_i >= r (upper bound on r); alpha = C/N: g_i <= r (lower bound)
            r.append(mean_or_midpoint(g, free & c, lo & c, hi & c))
        r1, r2 = r
        return -0.5 * (r1 - r2), 0.5 * (r1 + r2)

    def _from_alpha(self, data: FitData, a: np.ndarray, b: float, rho: float) -> Recovered:
        beta = a * data.y
        f = data.kmatvec(beta) + b
        xi = np.maximum(0.0, rho - data.y * f)
        up = data.C / data.N
        return Recovered(beta, b, {"alpha": a},
                         {"w": beta, "b": b, "xi": xi, "rho": rho},
                         {"alpha": a, "mu": up - a,
                          "delta": max(0.0, float(a.sum()) - data.params["nu"])},
                         {"alpha": a}, extra={"rho": rho})

    def _has_free_both(self, data: FitData, a: np.ndarray) -> bool:
        up = data.C / data.N
        tol = 1e-6 * float(np.max(up))
        free = (a > tol) & (a < up - tol)
        return bool(np.any(free & (data.y > 0)) and np.any(free & (data.y < 0)))

    def _b_rho(self, data: FitData, a: np.ndarray, sol, eq: str, rho: str
               ) -> tuple[float, float]:
        """The solver's values (multipliers ``-b``/``rho`` of the dual, or ``b``/``rho`` of the
        primal) when it reports them, else docs/formulations.md's r1/r2 rule over free SVs (midpoint
        when a class has none)."""
        src = sol.multipliers if eq == "minus_b" else sol.values
        if eq in src and rho in src:
            # the solver's own multipliers (interior point: exact to its tolerance; SMO: LIBSVM's
            # r1/r2 rule on its gradient) -- free-SV detection near the 1/N bound is fragile
            b = float(np.ravel(src[eq])[0])
            return (-b if eq == "minus_b" else b), float(np.ravel(src[rho])[0])
        return self._bias_rho(data, a)

    def _from_dual(self, data: FitData, sol) -> Recovered:
        a = np.asarray(sol.values["alpha"], dtype=float)
        b, rho = self._b_rho(data, a, sol, "minus_b", "rho")
        return self._from_alpha(data, a, b, rho)

    def _from_primal(self, data: FitData, sol) -> Recovered:
        a = np.asarray(sol.multipliers["alpha"], dtype=float)
        b, rho = self._b_rho(data, a, sol, "b", "rho")
        return self._from_alpha(data, a, b, rho)


#: the weights ``C_i`` of :meth:`NuSVC._prepare`'s unit-weight case (a subclass that changes
#: how they are formed takes the general normalisation)
_PLAIN_SAMPLE_C = NuSVC._sample_C
