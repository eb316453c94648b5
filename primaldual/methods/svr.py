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
from ..model.structure import BoxQP
from ._base import (
    FitData,
    Recovered,
    Regressor,
    bias_from_gradient,
    box_violation,
    closed_form_certificate,
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


class _KBeta:
    """``lambda = K beta`` (the multiplier of ``beta = alpha - alpha_star``; picklable)."""

    def __init__(self, data: FitData) -> None:
        self.data = data

    def __call__(self, values: dict) -> np.ndarray:
        return self.data.kmatvec(_beta_of(values))


def _stacked_gram(data: FitData) -> pm.GramOperator:
    N = data.N
    return pm.GramOperator(data.kernel, data.X, sign=np.r_[np.ones(N), -np.ones(N)],
                           index=np.r_[np.arange(N), np.arange(N)])


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

    def _dual_parts(self, data: FitData):
        a, a_s = pm.Variable("alpha", data.N), pm.Variable("alpha_star", data.N)
        beta = pm.Variable("beta", data.N)
        Y, one = pm.Data("y", data.y), pm.Data("1", np.ones(data.N), txt="1", tex="1")
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

    def _dual_structure(self, data: FitData) -> dict:
        return {"box_qp": self._box_qp(data)}

    def _tube_residuals(self, data: FitData, rec: Recovered, eps: float
                        ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], float]:
        """Closed-form KKT residuals shared by the two SVR primals (tube constraints
        ``g = eps + xi - y + f >= 0`` [alpha], ``g* = eps + xi* + y - f >= 0`` [alpha*],
        ``xi, xi* >= 0`` [mu, mu*], ``f = K w + b``): stationarity ``|1^T(alpha - alpha*)|``
        and ``|C - alpha - mu|`` (and starred), then the feasibility and complementarity
        groups; plus the dual point's largest violation of ``beta = alpha - alpha*``,
        ``1^T(alpha - alpha*) = 0``, ``0 <= alpha, alpha* <= C``."""
        x, m, dp = rec.primal_point, rec.primal_multipliers, rec.dual_point
        xi, xis = np.asarray(x["xi"], float), np.asarray(x["xi_star"], float)
        a, a_s = np.asarray(m["alpha"], float), np.asarray(m["alpha_star"], float)
        mu, mus = np.asarray(m["mu"], float), np.asarray(m["mu_star"], float)
        f = data.kmatvec(np.asarray(x["w"], float)) + float(np.ravel(x["b"])[0])
        g, gs = eps + xi - data.y + f, eps + xis + data.y - f
        stat = {"stationarity[b]": np.array([abs(float(np.sum(a) - np.sum(a_s)))]),
                "stationarity[xi]": np.abs(data.C - a - mu),
                "stationarity[xi_star]": np.abs(data.C - a_s - mus)}
        rest = {"primal_feasibility[alpha]": np.maximum(0.0, -g),
                "primal_feasibility[alpha_star]": np.maximum(0.0, -gs),
                "primal_feasibility[mu]": np.maximum(0.0, -xi),
                "primal_feasibility[mu_star]": np.maximum(0.0, -xis),
                "dual_feasibility[alpha]": np.maximum(0.0, -a),
                "dual_feasibility[alpha_star]": np.maximum(0.0, -a_s),
                "dual_feasibility[mu]": np.maximum(0.0, -mu),
                "dual_feasibility[mu_star]": np.maximum(0.0, -mus),
                "complementarity[alpha]": np.abs(a * g),
                "complementarity[alpha_star]": np.abs(a_s * gs),
                "complementarity[mu]": np.abs(mu * xi),
                "complementarity[mu_star]": np.abs(mus * xis)}
        da, das, db = (np.asarray(dp["alpha"], float), np.asarray(dp["alpha_star"], float),
                       np.asarray(dp["beta"], float))
        dinf = max(float(np.max(np.abs(db - (da - das)), initial=0.0)),
                   abs(float(np.sum(da) - np.sum(das))),
                   box_violation(da, data.C), box_violation(das, data.C))
        return stat, rest, dinf

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

    def _dual(self, data: FitData) -> pm.Problem:
        eps = data.params["epsilon"]
        a, a_s, beta, Y, quad, cons = self._dual_parts(data)
        C, E = pm.Data("C", data.C), pm.Data("eps", eps)
        one = pm.Data("1", np.ones(data.N), txt="1", tex="1")
        obj = -quad - E * (pm.dot(one, a) + pm.dot(one, a_s)) + pm.dot(Y, a) - pm.dot(Y, a_s)
        if not _is_hard(data):
            cons += [(a <= C).named("xi"), (a_s <= C).named("xi_star")]
        return pm.Problem(obj, cons, "max", f"{self._name} dual",
                          variables=[a, a_s, beta])

    def _box_qp(self, data: FitData) -> BoxQP:
        """LIBSVM's 2N-variable box QP of the dual (``Q = [[K, -K], [-K, K]]``)."""
        eps, N = data.params["epsilon"], data.N
        return BoxQP(_stacked_gram(data), np.r_[eps - data.y, eps + data.y],
                     np.r_[data.C, data.C], "one", np.r_[np.ones(N), -np.ones(N)],
                     variable="alpha", variables=("alpha", "alpha_star"),
                     multipliers={"eq": "minus_b", "lower": "s", "lower_star": "s_star",
                                  **({} if _is_hard(data) else
                                     {"upper": "xi", "upper_star": "xi_star"})},
                     derived={"beta": _beta_of}, derived_multipliers={"lambda": _KBeta(data)})

    def _certify(self, data: FitData, rec: Recovered, P: pm.Problem, D: pm.Problem, status: str):
        """The certificate of :meth:`_primal`/:meth:`_dual` in closed form
        (:meth:`_tube_residuals`; the hard tube goes through the modelling layer). Primal
        ``1/2||w||^2 + C^T (xi + xi*)``, dual ``-1/2 beta^T K beta - eps 1^T(alpha + alpha*)
        + y^T(alpha - alpha*)``."""
        if _is_hard(data):
            return super()._certify(data, rec, P, D, status)
        eps = float(data.params["epsilon"])
        stat, rest, dinf = self._tube_residuals(data, rec, eps)
        x, m, dp = rec.primal_point, rec.primal_multipliers, rec.dual_point
        w_mult = np.asarray(m["alpha"], float) - np.asarray(m["alpha_star"], float)
        da, das = np.asarray(dp["alpha"], float), np.asarray(dp["alpha_star"], float)
        primal_lin = float(data.C @ np.asarray(x["xi"], float)
                           + data.C @ np.asarray(x["xi_star"], float))
        dual_lin = -eps * float(np.sum(da) + np.sum(das)) + float(data.y @ da - data.y @ das)
        return closed_form_certificate(data, rec, w_mult, primal_lin, dual_lin,
                                       {**stat, **rest}, dinf,
                                       status, upper=self._upper(data))

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

    def _nu_data(self, data: FitData, nu: float) -> pm.Data:
        uniform = bool(np.all(data.C == data.C[0]))
        return pm.Data("CnuN", self._nu_total(data, nu), txt="C ν N" if uniform else "ν Σ C_i",
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

    def _dual(self, data: FitData) -> pm.Problem:
        nu = data.params["nu"]
        a, a_s, beta, Y, quad, cons = self._dual_parts(data)
        U = pm.Data("C", data.C)
        one = pm.Data("1", np.ones(data.N), txt="1", tex="1")
        CNU = self._nu_data(data, nu)
        obj = -quad + pm.dot(Y, a) - pm.dot(Y, a_s)
        cons += [(pm.dot(one, a) + pm.dot(one, a_s) <= CNU).named("eps"),
                 (a <= U).named("xi"), (a_s <= U).named("xi_star")]
        return pm.Problem(obj, cons, "max", f"{self._name} dual",
                          variables=[a, a_s, beta])

    def _box_qp(self, data: FitData) -> BoxQP:
        """LIBSVM's 2N-variable box QP of the dual, with the sum constraint at equality,
        ``1^T(alpha + alpha*) = nu sum_i C_i``; its sum multiplier is ``-eps`` in our
        convention, so it is not mapped to ``"eps"`` here."""
        N, up = data.N, data.C
        return BoxQP(_stacked_gram(data), np.r_[-data.y, data.y], np.r_[up, up], "nu",
                     np.r_[np.ones(N), -np.ones(N)],
                     nu_total=self._nu_total(data, data.params["nu"]),
                     variable="alpha", variables=("alpha", "alpha_star"), sum_sense="<=",
                     multipliers={"eq": "minus_b", "sum": "eps", "lower": "s",
                                  "lower_star": "s_star", "upper": "xi", "upper_star": "xi_star"},
                     derived={"beta": _beta_of}, derived_multipliers={"lambda": _KBeta(data)})

    def _certify(self, data: FitData, rec: Recovered, P: pm.Problem, D: pm.Problem, status: str):
        """The certificate of :meth:`_primal`/:meth:`_dual` in closed form
        (:meth:`_tube_residuals` with the variable ``eps``): primal ``1/2||w||^2 + nu (sum C)
        eps + C^T(xi + xi*)``, dual ``-1/2 beta^T K beta + y^T(alpha - alpha*)``; also
        stationarity ``|nu sum C - 1^T(alpha + alpha*) - delta|``, ``max(0, -eps)``,
        ``|delta eps|`` and the dual point's ``max(0, 1^T(alpha + alpha*) - nu sum C)``."""
        x, m, dp = rec.primal_point, rec.primal_multipliers, rec.dual_point
        eps = float(np.ravel(x["eps"])[0])
        delta = float(np.ravel(m["delta"])[0])
        cnu = self._nu_total(data, data.params["nu"])
        stat, rest, dinf = self._tube_residuals(data, rec, eps)
        a, a_s = np.asarray(m["alpha"], float), np.asarray(m["alpha_star"], float)
        da, das = np.asarray(dp["alpha"], float), np.asarray(dp["alpha_star"], float)
        per = {"stationarity[b]": stat["stationarity[b]"],
               "stationarity[eps]": np.array([abs(cnu - float(np.sum(a) + np.sum(a_s))
                                                  - delta)]),
               "stationarity[xi]": stat["stationarity[xi]"],
               "stationarity[xi_star]": stat["stationarity[xi_star]"]}
        for kind in ("primal_feasibility", "dual_feasibility", "complementarity"):
            per.update({k: v for k, v in rest.items() if k.startswith(kind)})
            per[f"{kind}[delta]"] = np.array([
                max(0.0, -eps) if kind == "primal_feasibility" else
                max(0.0, -delta) if kind == "dual_feasibility" else abs(delta * eps)])
        dinf = max(dinf, max(0.0, float(np.sum(da) + np.sum(das)) - cnu))
        primal_lin = cnu * eps + float(data.C @ np.asarray(x["xi"], float)
                                       + data.C @ np.asarray(x["xi_star"], float))
        return closed_form_certificate(data, rec, a - a_s, primal_lin,
                                       float(data.y @ da - data.y @ das),
                                       per, dinf, status)

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
