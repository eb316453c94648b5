"""epsilon-SVR and nu-SVR (docs/formulations.md sections 5 and 6; Zhang 8.3.12-8.3.49).

epsilon-SVR primal (``f_i = <w, phi(x_i)> + b``)::

    min  1/2 ||w||^2 + sum_i C_i (xi_i + xi*_i)
    s.t. y_i - f_i <= eps + xi_i       [alpha_i >= 0]
         f_i - y_i <= eps + xi*_i      [alpha*_i >= 0]
         xi_i >= 0 [mu_i],  xi*_i >= 0 [mu*_i]

Stationarity: ``w = sum (alpha_i - alpha*_i) phi(x_i)``, ``1^T (alpha - alpha*) = 0``,
``C_i - alpha_i - mu_i = 0``, ``C_i - alpha*_i - mu*_i = 0``.

Dual, written with the auxiliary ``beta = alpha - alpha*`` so that both multiplier vectors keep
their names (eliminating ``beta`` gives the 2N-variable box QP of LIBSVM with
``Q = [[K, -K], [-K, K]]``, which :func:`~primaldual.model.structure.detect_box_qp` derives from
this problem)::

    max  -1/2 beta^T K beta - eps 1^T (alpha + alpha*) + y^T (alpha - alpha*)
    s.t. beta = alpha - alpha*        [lambda free; lambda_i = <w, phi(x_i)>]
         1^T (alpha - alpha*) = 0     [eta free;    eta = -b]
         alpha_i >= 0 [s_i], alpha*_i >= 0 [s*_i]           (the primal constraint slacks)
         alpha_i <= C_i [xi_i], alpha*_i <= C_i [xi*_i]     (the primal slack variables)

Recovery: ``beta = alpha - alpha*``; ``b = y_i - sum_j beta_j K_ij - eps`` for
``0 < alpha_i < C_i`` and ``... + eps`` for ``0 < alpha*_i < C_i``, averaged over all of them
(LIBSVM midpoint with no free SV); the solver's multiplier ``eta = -b`` is preferred when given.
At most one of ``alpha_i, alpha*_i`` is non-zero, and points strictly inside the tube have both 0.

nu-SVR replaces the fixed tube width by a variable ``eps >= 0`` [delta] priced by ``nu sum_i C_i``
(LIBSVM's convention for ``C``: ``C_i = C * sample_weight_i`` bounds each multiplier, ``C nu N``
bounds their sum when unweighted; the textbook ``C (nu eps + 1/N sum xi)`` is this with
``C_textbook = C N``)::

    min  1/2 ||w||^2 + nu (sum_i C_i) eps + sum_i C_i (xi_i + xi*_i)   (same tube constraints)
    max  -1/2 beta^T K beta + y^T (alpha - alpha*)
    s.t. beta = alpha - alpha* [lambda],  1^T (alpha - alpha*) = 0 [eta = -b],
         1^T (alpha + alpha*) <= nu sum_i C_i [eps >= 0],  0 <= alpha, alpha* <= C_i

``b`` and ``eps`` come from the free SVs on each side: ``r1`` = mean of ``y_i - sum_j beta_j K_ij``
over free ``alpha_i`` (``= b + eps``), ``r2`` the same over free ``alpha*_i`` (``= b - eps``);
``b = (r1 + r2)/2``, ``eps = (r1 - r2)/2``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import model as pm
from ..distributed import DaskLowRankMixin
from ._base import (
    FitData,
    Recovered,
    Regressor,
    bias_from_gradient,
    mean_or_midpoint,
)
from ._params import (
    KERNEL,
    LOWRANK,
    RUN,
    SMO,
    check_bool,
    check_C_or_inf,
    check_nonnegative,
    check_nu,
    check_positive,
)


def _is_hard(data: FitData) -> bool:
    """``C = inf``: no slack variables (every point inside the tube)."""
    return bool(data.C.size) and bool(np.all(np.isinf(data.C)))


def _hard_tube(rec: Recovered, data: FitData) -> Recovered:
    """Drop the slack variables and their multipliers when ``C = inf``."""
    if _is_hard(data):
        for k in ("xi", "xi_star"):
            rec.primal_point.pop(k, None)
        for k in ("mu", "mu_star"):
            rec.primal_multipliers.pop(k, None)
    return rec


def _beta_of(values: dict) -> np.ndarray:
    """``beta = alpha - alpha_star`` from the dual's two blocks."""
    return values["alpha"] - values["alpha_star"]


class _SVRBase(Regressor):
    """Shared pieces of the two SVRs (tube expression, dual skeleton, recovery helpers)."""

    def __init__(self, C: float = 1.0, kernel: Any = "rbf", gamma: Any = "scale",
                 degree: int = 3, coef0: float = 0.0, tol: float = 1e-3, max_iter: int = -1,
                 backend: str = "auto", form: str = "dual", solver: str | None = None,
                 cache_size: float = 200.0, verbose: bool = False, shrinking: bool = True) -> None:
        self._store_init_args(locals())

    _parameter_constraints = {**KERNEL, **RUN, **SMO, "C": check_positive,
                              "shrinking": check_bool}
    _name = "SVR"

    def _tube(self, data: FitData):
        w = pm.FeatureVariable("w", data.kernel, data.X)
        b = pm.Variable("b")
        xi, xis = pm.Variable("xi", data.N), pm.Variable("xi_star", data.N)
        Y = pm.Data("y", data.y)
        return w, b, xi, xis, Y, w @ pm.phi(data.X) + b

    def _dual_parts(self, data: FitData, y: np.ndarray):
        a, a_s = pm.Variable("alpha", data.N), pm.Variable("alpha_star", data.N)
        beta = pm.Variable("beta", data.N)
        Y, one = pm.Data("y", y), pm.Data("1", np.ones(data.N), txt="1", tex="1")
        K = pm.GramOperator(data.kernel, data.X)
        quad = 0.5 * pm.quad_form(beta, K, name="K")
        cons = [(beta == a - a_s).named("lambda"),
                (pm.dot(one, a) - pm.dot(one, a_s) == 0).named("minus_b"),
                (a >= 0).named("s"), (a_s >= 0).named("s_star")]
        return a, a_s, beta, Y, quad, cons

    def _point(self, data: FitData, a: np.ndarray, a_s: np.ndarray, b: float, eps: float,
               upper: np.ndarray) -> Recovered:
        beta = a - a_s
        f = data.kmatvec(beta) + b
        xi = np.maximum(0.0, data.y - f - eps)
        xis = np.maximum(0.0, f - data.y - eps)
        return Recovered(beta, b, {"alpha": a, "alpha_star": a_s},
                         {"w": beta, "b": b, "xi": xi, "xi_star": xis},
                         {"alpha": a, "alpha_star": a_s, "mu": upper - a, "mu_star": upper - a_s},
                         {"alpha": a, "alpha_star": a_s, "beta": beta})

    @staticmethod
    def _values(sol) -> tuple[np.ndarray, np.ndarray]:
        return (np.asarray(sol.values["alpha"], dtype=float),
                np.asarray(sol.values["alpha_star"], dtype=float))


class EpsilonSVR(DaskLowRankMixin, _SVRBase):
    """epsilon-SVR (docs/formulations.md section 5): the epsilon-insensitive loss.

    Parameters
    ----------
    C : float, default 1.0
        Error weight (per sample ``C_i = C * sample_weight_i``).
    epsilon : float, default 0.1
        Half-width of the insensitive tube.
    kernel, gamma, degree, coef0, tol, max_iter, backend, form, solver, cache_size, verbose,
    shrinking : as :class:`~primaldual.methods.svc.CSVC`.
    rank, rank_tol, factor, certify : the low-rank route, as :class:`~primaldual.methods.svc.CSVC`
        (``backend="lowrank"``, or a ``rank`` given; ``rank="auto"`` grows the factor until the
        decision values stop moving).

    Fitted attributes include ``alpha_`` and ``alpha_star_`` (``beta_ = alpha_ - alpha_star_``).
    """
    # sparse X stays sparse on the SMO route (KernelMethod._keeps_sparse)
    _sparse_smo = True

    _name = "epsilon-SVR"
    # C = inf: every point inside the tube (as scikit-learn's SVR)
    _parameter_constraints = {**_SVRBase._parameter_constraints, **LOWRANK, "C": check_C_or_inf,
                              "epsilon": check_nonnegative}

    def __init__(self, C: float = 1.0, epsilon: float = 0.1, kernel: Any = "rbf",
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0, tol: float = 1e-3,
                 max_iter: int = -1, backend: str = "auto", form: str = "dual",
                 solver: str | None = None, cache_size: float = 200.0,
                 verbose: bool = False, shrinking: bool = True, rank: Any = None,
                 rank_tol: float | None = None, factor: Any = "nystrom",
                 certify: str = "auto") -> None:
        self._store_init_args(locals())

    def _primal(self, data: FitData) -> pm.Problem:
        w, b, xi, xis, Y, f = self._tube(data)
        if _is_hard(data):  # C = inf: every point inside the tube, no slack variables
            eps = pm.Data("eps", data.params["epsilon"])
            return pm.Problem(0.5 * pm.norm2(w), [(Y - f <= eps).named("alpha"),
                                                  (f - Y <= eps).named("alpha_star")],
                              "min", f"hard-tube {self._name} primal", variables=[w, b])
        C, eps = pm.Data("C", data.C), pm.Data("eps", data.params["epsilon"])
        return pm.Problem(0.5 * pm.norm2(w) + pm.vsum(C * xi) + pm.vsum(C * xis),
                          [(Y - f <= eps + xi).named("alpha"),
                        (f - Y <= eps + xis).named("alpha_star"),
                        (xi >= 0).named("mu"), (xis >= 0).named("mu_star")],
                          "min", f"{self._name} primal", variables=[w, b, xi, xis])

    def _dual_data(self, data: FitData) -> dict:
        """The numbers the dual is written with (:mod:`._structure`): ``y``, the box ``C``
        (none for the hard tube) and ``epsilon``."""
        if _is_hard(data):
            return {"y": data.y, "eps": float(data.params["epsilon"])}
        return {"y": data.y, "C": data.C, "eps": float(data.params["epsilon"])}

    def _dual(self, data: FitData, values: dict | None = None) -> pm.Problem:
        v = self._dual_data(data) if values is None else values
        a, a_s, beta, Y, quad, cons = self._dual_parts(data, v["y"])
        E = pm.Data("eps", v["eps"])
        one = pm.Data("1", np.ones(data.N), txt="1", tex="1")
        obj = -quad - E * (pm.dot(one, a) + pm.dot(one, a_s)) + pm.dot(Y, a) - pm.dot(Y, a_s)
        if "C" in v:
            C = pm.Data("C", v["C"])
            cons += [(a <= C).named("xi"), (a_s <= C).named("xi_star")]
        return pm.Problem(obj, cons, "max", f"{self._name} dual",
                          variables=[a, a_s, beta])

    def _bias(self, data: FitData, a: np.ndarray, a_s: np.ndarray) -> float:
        eps = data.params["epsilon"]
        kb = data.kmatvec(a - a_s)
        st = np.r_[a, a_s]
        sign = np.r_[np.ones(data.N), -np.ones(data.N)]
        grad = np.r_[kb + eps - data.y, -kb + eps + data.y]  # of the min-form 2N box QP
        return bias_from_gradient(grad, sign, st, np.r_[data.C, data.C])

    def _from_dual(self, data: FitData, sol) -> Recovered:
        a, a_s = self._values(sol)
        if "minus_b" in sol.multipliers:
            b = -float(np.asarray(sol.multipliers["minus_b"]).ravel()[0])
        else:
            b = self._bias(data, a, a_s)
        return _hard_tube(self._point(data, a, a_s, b, data.params["epsilon"], data.C), data)

    def _from_primal(self, data: FitData, sol) -> Recovered:
        a = np.asarray(sol.multipliers["alpha"], dtype=float)
        a_s = np.asarray(sol.multipliers["alpha_star"], dtype=float)
        rec = self._point(data, a, a_s, float(np.ravel(sol.values["b"])[0]),
                          data.params["epsilon"], data.C)
        rec = _hard_tube(rec, data)
        rec.primal_point = dict(sol.values)
        rec.primal_multipliers = dict(sol.multipliers)
        return rec


class NuSVR(_SVRBase):
    """nu-SVR (docs/formulations.md section 6): the tube width ``eps`` is a variable and ``nu``
    bounds the fraction of points outside the tube from above and of SVs from below.

    Parameters
    ----------
    nu : float in (0, 1], default 0.5
    C : float, default 1.0
    kernel, gamma, degree, coef0, tol, max_iter, backend, form, solver, cache_size, verbose,
    shrinking : as :class:`~primaldual.methods.svc.CSVC`.

    Fitted attributes include ``alpha_``, ``alpha_star_`` and ``epsilon_`` (the tube width).
    """
    # sparse X stays sparse on the SMO route (KernelMethod._keeps_sparse)
    _sparse_smo = True

    _name = "nu-SVR"
    _parameter_constraints = {**_SVRBase._parameter_constraints, "nu": check_nu}

    def __init__(self, nu: float = 0.5, C: float = 1.0, kernel: Any = "rbf",
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0, tol: float = 1e-3,
                 max_iter: int = -1, backend: str = "auto", form: str = "dual",
                 solver: str | None = None, cache_size: float = 200.0,
                 verbose: bool = False, shrinking: bool = True) -> None:
        self._store_init_args(locals())

    def _upper(self, data: FitData) -> np.ndarray:
        return data.C

    @staticmethod
    def _nu_total(data: FitData, nu: float) -> float:
        """LIBSVM's bound of ``1^T (alpha + alpha*)``: ``nu sum_i C_i`` (``C nu N`` unweighted)."""
        return nu * float(np.sum(data.C))

    def _nu_data(self, data: FitData, nu: float, total: float | None = None,
                 C: np.ndarray | None = None) -> pm.Data:
        C = data.C if C is None else C
        uniform = bool(np.all(C == C[0]))
        total = self._nu_total(data, nu) if total is None else total
        return pm.Data("CnuN", total, txt="C ν N" if uniform else "ν Σ C_i",
                       tex=r"C \nu N" if uniform else r"\nu \sum_i C_i")

    def _primal(self, data: FitData) -> pm.Problem:
        nu = data.params["nu"]
        w, b, xi, xis, Y, f = self._tube(data)
        eps = pm.Variable("eps")
        Cn = pm.Data("C", data.C)
        CNU = self._nu_data(data, nu)
        return pm.Problem(0.5 * pm.norm2(w) + CNU * eps + pm.vsum(Cn * xi) + pm.vsum(Cn * xis),
                          [(Y - f <= eps + xi).named("alpha"),
                        (f - Y <= eps + xis).named("alpha_star"),
                        (xi >= 0).named("mu"), (xis >= 0).named("mu_star"),
                        (eps >= 0).named("delta")],
                          "min", f"{self._name} primal", variables=[w, b, eps, xi, xis])

    def _dual_data(self, data: FitData) -> dict:
        """The numbers the dual is written with (:mod:`._structure`): ``y``, the box ``C`` and
        the bound ``nu sum_i C_i`` of ``1^T (alpha + alpha*)``."""
        return {"y": data.y, "C": data.C,
                "CnuN": self._nu_total(data, data.params["nu"])}

    def _dual(self, data: FitData, values: dict | None = None) -> pm.Problem:
        v = self._dual_data(data) if values is None else values
        a, a_s, beta, Y, quad, cons = self._dual_parts(data, v["y"])
        U = pm.Data("C", v["C"])
        one = pm.Data("1", np.ones(data.N), txt="1", tex="1")
        CNU = self._nu_data(data, data.params["nu"], v["CnuN"], v["C"])
        obj = -quad + pm.dot(Y, a) - pm.dot(Y, a_s)
        cons += [(pm.dot(one, a) + pm.dot(one, a_s) <= CNU).named("eps"),
                 (a <= U).named("xi"), (a_s <= U).named("xi_star")]
        return pm.Problem(obj, cons, "max", f"{self._name} dual",
                          variables=[a, a_s, beta])

    def _bias_eps(self, data: FitData, a: np.ndarray, a_s: np.ndarray) -> tuple[float, float]:
        """``(b, eps)`` from the free SVs of each side (midpoints when a side has none)."""
        up = data.C
        g = data.y - data.kmatvec(a - a_s)
        tol = 1e-7 * float(np.max(up))
        lo, hi = a <= tol, a >= up - tol
        # alpha side, r1 = b + eps: alpha = 0 -> g <= r1 (lower bound); alpha = C/N -> g >= r1
        r1 = mean_or_midpoint(g, ~(lo | hi), hi, lo)
        lo, hi = a_s <= tol, a_s >= up - tol
        # alpha* side, r2 = b - eps: alpha* = 0 -> g >= r2 (upper bound); alpha* = C/N -> g <= r2
        r2 = mean_or_midpoint(g, ~(lo | hi), lo, hi)
        return 0.5 * (r1 + r2), max(0.0, 0.5 * (r1 - r2))

    def _with_eps(self, rec: Recovered, eps: float, data: FitData) -> Recovered:
        rec.primal_point["eps"] = eps
        rec.primal_multipliers["delta"] = max(
            0.0, self._nu_total(data, data.params["nu"]) - float(np.sum(rec.alpha["alpha"]
                                                               + rec.alpha["alpha_star"])))
        rec.extra["epsilon"] = eps
        return rec

    def _from_dual(self, data: FitData, sol) -> Recovered:
        a, a_s = self._values(sol)
        if "minus_b" in sol.multipliers and "eps" in sol.multipliers:
            b = -float(np.asarray(sol.multipliers["minus_b"]).ravel()[0])
            eps = float(np.asarray(sol.multipliers["eps"]).ravel()[0])
        else:
            b, eps = self._bias_eps(data, a, a_s)
        rec = self._point(data, a, a_s, b, eps, data.C)
        return self._with_eps(rec, eps, data)

    def _from_primal(self, data: FitData, sol) -> Recovered:
        a = np.asarray(sol.multipliers["alpha"], dtype=float)
        a_s = np.asarray(sol.multipliers["alpha_star"], dtype=float)
        eps = float(np.ravel(sol.values["eps"])[0])
        rec = self._point(data, a, a_s, float(np.ravel(sol.values["b"])[0]), eps,
                          data.C)
        rec = self._with_eps(rec, eps, data)
        rec.primal_point = dict(sol.values)
        rec.primal_multipliers = dict(sol.multipliers)
        return rec
