"""The Solution record every backend returns, and the library's status vocabulary."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .exceptions import (
    InaccurateSolutionWarning,
    InfeasibleProblemError,
    InfeasibleProblemWarning,
)

__all__ = ["STATUSES", "InaccurateSolutionWarning", "InfeasibleProblemError",
           "InfeasibleProblemWarning", "Solution"]

#: Every status a solve can end with.  Only "optimal" (and, with a warning, "inaccurate")
#: carry a point that a certificate may call optimal.
STATUSES = ("optimal", "inaccurate", "infeasible", "unbounded", "infeasible_or_unbounded",
            "max_iter", "solver_error")


@dataclass
class Solution:
    """What a backend returns for one Problem.

    Attributes
    ----------
    problem : Problem
    status : str
        One of :data:`STATUSES`.
    values : dict
        Primal values by variable name (feature-space variables by coefficients ``beta``).
    multipliers : dict
        Multipliers by name, in the library's sign convention (``>= 0`` on inequalities).
        For an infeasible/unbounded status they are the backend's certificate ray, if any.
    objective_value : float
        The objective recomputed from ``values`` by the problem itself (never the solver's
        report); ``nan`` when the status carries no point.  Evaluated on first access (an
        exact-kernel objective costs a kernel product over the support, which a low-rank
        fit, certified on its own eta-problem, never needs).
    backend, solver : str
    n_iter : int or None
    solve_time : float
        Seconds spent in the backend (compile + solve).
    info : dict
        Backend-specific extras (solver status string, trace, ...).
    """

    problem: Any
    status: str
    values: dict[str, np.ndarray] = field(default_factory=dict)
    multipliers: dict[str, np.ndarray] = field(default_factory=dict)
    backend: str = ""
    solver: str | None = None
    n_iter: int | None = None
    solve_time: float = 0.0
    info: dict = field(default_factory=dict)
    _objective: float | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @property
    def objective_value(self) -> float:
        """The problem's objective at ``values`` (computed once, on first access)."""
        if self._objective is None:
            if self.has_point and self.values:
                self._objective = float(self._problem().evaluate(self.values))
            else:
                self._objective = float("nan")
        return self._objective

    @objective_value.setter
    def objective_value(self, value: float) -> None:
        self._objective = float(value)

    @property
    def has_point(self) -> bool:
        return self.status in ("optimal", "inaccurate", "max_iter")

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self.values:
            return self.values[name]
        if name in self.multipliers:
            return self.multipliers[name]
        raise KeyError(f"{name!r} is neither a variable nor a multiplier of this solution")

    def kkt_residuals(self) -> dict[str, float]:
        """Max-abs KKT residuals of the problem at (values, multipliers), recomputed here."""
        if not self.has_point:
            raise ValueError(f"status {self.status!r}: there is no point to evaluate")
        return self._problem().kkt().max_residuals(self.values, self.multipliers)

    def certificate(self):
        """A :class:`~primaldual.certificate.Certificate` of this single problem (gap measured
        through the Lagrangian: ``f - L(x, lambda)``)."""
        from .certificate import certify_problem
        return certify_problem(self)

    def warn_status(self) -> None:
        """Issue the warning that matches a non-optimal status."""
        if self.status == "inaccurate":
            warnings.warn(f"{self.problem.name}: solver {self.solver} returned an inaccurate "
                          "solution", InaccurateSolutionWarning, stacklevel=3)
        elif self.status in ("infeasible", "unbounded", "infeasible_or_unbounded"):
            warnings.warn(f"{self.problem.name} is {self.status}: no optimal value exists",
                          InfeasibleProblemWarning, stacklevel=3)

    def lean(self, evaluate: bool = True) -> Solution:
        """A copy without the ``problem`` (whose expressions hold the training data): status,
        values, multipliers, iterations and ``info`` are kept, so that a fitted estimator's
        ``solution_`` costs O(N), not O(N d) (``problem`` is then ``None``:
        :meth:`kkt_residuals` and :meth:`certificate` need the solution of a fit made in this
        session).  ``evaluate``: compute the objective value first (it needs the problem; a
        lazily built problem is then built), else keep it only if it is known already
        (``nan`` otherwise)."""
        if self.problem is None:
            return self
        out = Solution(None, self.status, dict(self.values), dict(self.multipliers),
                       backend=self.backend, solver=self.solver, n_iter=self.n_iter,
                       solve_time=self.solve_time, info=dict(self.info))
        if evaluate:
            out._objective = self.objective_value
        elif self._objective is not None:
            out._objective = self._objective
        else:
            out._objective = float("nan")
        return out

    def _problem(self) -> Any:
        if self.problem is None:
            raise ValueError("this solution was kept without its problem (a pickled model or "
                             "a multiclass sub-problem): refit in this session to evaluate it")
        return self.problem

    def __repr__(self) -> str:
        return (f"Solution(status={self.status!r}, objective_value={self.objective_value:.10g}, "
                f"backend={self.backend!r}, n_iter={self.n_iter})")
