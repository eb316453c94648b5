"""Certificates: primal value, dual value, gap and KKT residuals, recomputed from the point.

Nothing here reads a solver's own report. For a method (primal problem P, dual problem D):

* ``primal_objective = P.objective(x)`` at the recovered primal point ``x``;
* ``dual_objective = D.objective(alpha)`` at the dual point;
* ``duality_gap = primal_objective - dual_objective`` (``>= 0`` up to round-off when both points
  are feasible: weak duality), ``relative_gap = gap / max(u, |primal_objective|)`` with ``u``
  the problem's unit of objective (:func:`objective_unit`: ``1``, or ``C_max^2`` for a
  box-constrained dual whose largest finite bound ``C_max`` is below 1, e.g. nu-SVC's
  ``1/N`` box, whose objective is ``O(1/N^2)``: a floor of 1 would certify any gap there);
* ``kkt``: every KKT residual of ``P`` at ``(x, multipliers)`` as max-abs (``kkt``) and per
  sample (``kkt_per_sample``), plus ``dual_feasibility_of_dual``: the largest constraint
  violation of the dual point in ``D``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Certificate:
    """How optimal a returned point is, recomputed from the point and the data."""

    primal_objective: float
    dual_objective: float
    duality_gap: float
    relative_gap: float
    kkt: dict[str, float] = field(default_factory=dict)
    kkt_per_sample: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    status: str = "optimal"
    extra: dict[str, float] = field(default_factory=dict)
    #: For an estimator's fit: the decision values ``f_i = sum_j beta_j k(x_i, x_j) + b`` on
    #: the training rows, from exactly the coefficients, support and intercept that
    #: ``decision_function`` uses (``None`` for a bare problem).
    f: np.ndarray | None = field(default=None, repr=False)

    @property
    def max_kkt_residual(self) -> float:
        """Largest KKT residual; ``nan`` if any residual is NaN (never skipped)."""
        vals = [float(v) for v in self.kkt.values()]
        if any(np.isnan(v) for v in vals):
            return float("nan")
        return max(vals, default=0.0)

    def is_optimal(self, gap_tol: float = 1e-6, kkt_tol: float = 1e-6) -> bool:
        """``True`` when the status carries a point, ``|relative gap| <= gap_tol`` and every KKT
        residual is ``<= kkt_tol``; any NaN (gap, objective or residual) gives ``False``."""
        finite = all(np.isfinite(v) for v in (self.primal_objective, self.dual_objective,
                                              self.relative_gap))
        return bool(self.status in ("optimal", "inaccurate") and finite
                    and abs(self.relative_gap) <= gap_tol
                    and all(float(v) <= kkt_tol for v in self.kkt.values()))

    def rows(self) -> list[tuple[str, str]]:
        r = [("status", self.status),
             ("primal objective", f"{self.primal_objective:.10g}"),
             ("dual objective", f"{self.dual_objective:.10g}"),
             ("duality gap", f"{self.duality_gap:.3e}"),
             ("relative gap", f"{self.relative_gap:.3e}")]
        r += [(f"KKT {k}", f"{v + 0.0:.3e}") for k, v in self.kkt.items()]  # no "-0.000e+00"
        r += [(k, f"{v:.6g}" if isinstance(v, float) else str(v)) for k, v in self.extra.items()]
        return r

    def table(self) -> str:
        rows = self.rows()
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict:
        return {"primal_objective": self.primal_objective, "dual_objective": self.dual_objective,
                "duality_gap": self.duality_gap, "relative_gap": self.relative_gap,
                "kkt": dict(self.kkt), "status": self.status, "extra": dict(self.extra)}


def certify(primal, point: dict, multipliers: dict, dual=None, dual_point: dict | None = None,
            status: str = "optimal", unit: float = 1.0) -> Certificate:
    """Certificate of a primal point and multipliers against the primal problem, and of a dual
    point against the dual problem (if given; otherwise the dual value is the Lagrangian
    ``L(x, lambda)``, which equals the dual function when stationarity holds). ``unit``: the
    floor of the relative gap's denominator (:func:`objective_unit`).

    Runs in one :func:`~primaldual.kernels.matvec_cache` context: the objectives, constraint
    values and KKT residuals share each kernel product ``K[:, S] beta_S``."""
    from .kernels import matvec_cache

    with matvec_cache():
        return _certify(primal, point, multipliers, dual, dual_point, status, unit)


def objective_unit(upper: np.ndarray | None) -> float:
    """The unit ``u`` of :attr:`Certificate.relative_gap` for a dual with per-variable bounds
    ``upper``: ``min(1, C_max^2)`` (``C_max`` the largest finite bound; ``1`` without one).

    The objective of a box-constrained dual scales like ``C_max^2`` when ``C_max < 1``; SMO
    solves it rescaled to ``C_max = 1`` (LIBSVM's units) and stops on the same ratio."""
    if upper is None:
        return 1.0
    up = np.abs(np.asarray(upper, dtype=float))
    top = float(up.max()) if up.size else 0.0
    if 0.0 < top < math.inf:  # every bound finite (the usual case)
        return min(1.0, top * top)
    fin = up[np.isfinite(up) & (up > 0)]
    return min(1.0, float(np.max(fin)) ** 2) if fin.size else 1.0


def certificate_unit(upper: np.ndarray | None, weights: np.ndarray | None = None) -> float:
    """The one unit of every estimator's relative gap (closed-form, modelling-layer, low-rank,
    ball and PCA routes alike): :func:`objective_unit` of the dual's finite bounds ``upper``,
    or, where the dual has no finite bound (least squares, L2-SVC), of the error weights
    ``weights`` (``C_i``), whose size sets the objective's the same way."""
    if upper is not None:
        up = np.abs(np.asarray(upper, dtype=float))
        if up.size and np.any(np.isfinite(up) & (up > 0)):
            return objective_unit(up)
    return objective_unit(weights)


def relative_gap(gap: float, primal: float, unit: float) -> float:
    """``gap / max(unit, |primal|)`` (``nan`` when either is not finite): the relative duality
    gap of :class:`Certificate` (``unit`` from :func:`certificate_unit`)."""
    den = max(float(unit), abs(float(primal)))
    if not (np.isfinite(gap) and np.isfinite(den)) or den <= 0:
        return float("nan")
    return float(gap) / den


def _certify(primal, point: dict, multipliers: dict, dual, dual_point: dict | None,
             status: str, unit: float = 1.0) -> Certificate:
    P = float(primal.evaluate(point))
    kkt = primal.kkt()
    per = kkt.residuals(point, multipliers)
    if dual is not None and dual_point is not None:
        D = float(dual.evaluate(dual_point))
        per["dual_feasibility_of_dual"] = np.array([dual.infeasibility(dual_point)])
    else:
        D = float(primal.lagrangian().value(point, multipliers))
    if primal.sense == "max":
        gap = D - P
    else:
        gap = P - D
    mx = {k: (float(np.max(v)) if v.size else 0.0) for k, v in per.items()}
    return Certificate(P, D, gap, gap / max(unit, abs(P)), mx, per, status)


def certify_problem(solution) -> Certificate:
    """Certificate of a single problem's solution (gap through the Lagrangian)."""
    if not solution.has_point:
        nan = float("nan")
        return Certificate(nan, nan, nan, nan, {}, {}, solution.status)
    return certify(solution._problem(), solution.values, solution.multipliers,
                   status=solution.status)
