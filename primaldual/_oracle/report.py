"""The oracle's report of one (sub-)problem and the rules it is judged by: the tolerance
"optimal" must meet, the unit of the relative gap and the relative infeasibilities."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..certificate import audit_tolerance


@dataclass
class OracleReport:
    """What :func:`oracle_gap` recomputed for one (sub-)problem.

    ``relative_gap = (primal - dual) / unit`` where ``unit = max(u, |primal|)``;
    ``dual_infeasibility`` is relative (to the box, or to the multipliers' size);
    ``status`` is the estimator's own status; ``tol`` the bound "optimal" must meet."""

    estimator: str
    primal: float
    dual: float
    gap: float
    unit: float
    relative_gap: float
    dual_infeasibility: float
    status: str
    tol: float
    independent_kernel: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    parts: list[OracleReport] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        """Why the fit's ``"optimal"`` is not borne out (empty when it is, or when the
        status is not ``"optimal"``)."""
        out: list[str] = []
        for p in self.parts:
            out += [f"{self.estimator}: part {i}: {m}" for i, m in enumerate(p.violations)]
        if self.status != "optimal" or self.parts:
            return out
        # rounding of the recomputed objectives, relative to the unit: a floor, or 4 times the
        # gap's measured sensitivity to the kernel's rounding (:func:`_binary`)
        slack = max(1e-9, 4.0 * float(self.extra.get("rounding", 0.0)))
        vals = (self.primal, self.dual, self.relative_gap)
        if not all(np.isfinite(v) for v in vals):
            out.append(f"{self.estimator}: 'optimal' but primal {self.primal!r}, dual "
                       f"{self.dual!r}, relative gap {self.relative_gap!r} not finite")
            return out
        if not self.relative_gap <= self.tol + slack:
            out.append(f"{self.estimator}: 'optimal' but the oracle's relative gap is "
                       f"{self.relative_gap:.3e} > tol {self.tol:.1e} (P = {self.primal:.10g}, "
                       f"D = {self.dual:.10g}, unit {self.unit:.3g})")
        if self.relative_gap < -(self.tol + slack):
            out.append(f"{self.estimator}: the oracle's relative gap {self.relative_gap:.3e} "
                       "is negative beyond tol: P or D is not what the model says")
        if not self.dual_infeasibility <= self.tol + slack:
            out.append(f"{self.estimator}: 'optimal' but the multipliers are dual infeasible "
                       f"by {self.dual_infeasibility:.3e} (relative) > tol {self.tol:.1e}")
        for k, v in self.extra.items():
            if k.startswith("violation:") and not v <= self.tol + slack:
                out.append(f"{self.estimator}: 'optimal' but {k[10:]} = {v:.3e} > tol "
                           f"{self.tol:.1e}")
        return out

    @property
    def ok(self) -> bool:
        return not self.violations


def oracle_tolerance(estimator: Any) -> float:
    """The bound "optimal" must meet: the estimator's ``tol`` through the fits' own audit rule
    (:func:`primaldual.certificate.audit_tolerance`: clipped to ``[1e-6, 1e-2]``, ``1e-3`` when
    it has none)."""
    return audit_tolerance(getattr(estimator, "tol", None))


def _unit(cmax: float) -> float:
    return min(1.0, cmax * cmax) if 0.0 < cmax < np.inf else 1.0


def _report(name: str, P: float, D: float, cmax: float, dinf: float, status: str, tol: float,
            indep: bool, **extra: Any) -> OracleReport:
    unit = max(_unit(cmax), abs(P)) if np.isfinite(P) else np.inf
    gap = P - D
    rel = gap / unit if np.isfinite(unit) and unit > 0 else float("nan")
    return OracleReport(name, float(P), float(D), float(gap), float(unit), float(rel),
                        float(dinf), status, tol, indep, dict(extra))


def _box(a: np.ndarray, lo: Any, up: Any, scale: float) -> float:
    if a.size == 0:
        return 0.0
    v = max(0.0, float(np.max(lo - a)), float(np.max(a - up)))
    return v / scale if scale > 0 else v


def _eq(v: float, scale: float) -> float:
    return abs(v) / scale if scale > 0 else abs(v)
