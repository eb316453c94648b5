"""Constraints that own their multipliers, and the Problem object (:class:`Constraint` is
defined with the expressions in :mod:`primaldual.model.expr`, which builds it for ``>=``,
``<=`` and ``==``, and is re-exported here).

Sign convention (docs/formulations.md, fixed once): every constraint is stored as
``g(x) >= 0`` (inequality, multiplier ``>= 0``) or ``h(x) = 0`` (equality, multiplier free), with
``g = lhs - rhs`` for ``lhs >= rhs``, ``g = rhs - lhs`` for ``lhs <= rhs`` and ``h = lhs - rhs``.
The Lagrangian of a minimisation is ``f - sum(lambda * g)``; a maximisation is read as the
minimisation of ``-f``, so its Lagrangian is ``f + sum(lambda * g)`` (the upper bound on
``f`` over the feasible set).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import placeholders as _ph
from .expr import OPS_TEX, OPS_TXT, Constraint, Expr, _as_expr, _is_zero  # noqa: F401
from .kkt import KKTConditions
from .lagrangian import Lagrangian
from .leaves import FeatureVariable, Variable
from .render import n_samples, problem_latex, problem_text
from .solvers import solve_problem
from .terms import FeatureNorm, QuadForm, SumSquares


class Problem:
    """``minimize|maximize objective subject to constraints``.

    Parameters
    ----------
    objective : Expr
        Scalar objective (convex for ``sense="min"``, concave for ``"max"``).
    constraints : list of Constraint
    sense : {"min", "max"}
    name : str
        Title used in rendering (``"C-SVC primal"``).
    structure : dict, optional
        Structural hints that specialised backends read (``"box_qp"``, ``"kkt_system"``,
        ``"lowrank"``); a backend's ``accepts`` looks here.

    Attributes
    ----------
    definitions : list of (str, str)
        ``(text, LaTeX)`` definitions of symbols the formulas use that no variable or data
        defines (a derived dual's ``Q``), printed after the constraints under ``where``.

    A problem written on data placeholders (``primaldual.model.placeholders``: ``X``, ``N``,
    ``Param``, ``FeatureVariable("w")`` without a kernel) is a recorded spec
    (:class:`~primaldual.model.placeholders.Deferred`): ``spec.bind(X=..., kernel=...,
    params=...)`` makes the numeric Problem; ``dualize(spec)`` derives its dual without data.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Problem and (_ph.has_deferred(args) or _ph.has_deferred(kwargs)):
            return _ph.Deferred(cls, args, kwargs, label="Problem")
        return super().__new__(cls)

    def __init__(self, objective: Any, constraints: list[Constraint] | None = None,
                 sense: str = "min", name: str = "problem", *, structure: dict | None = None,
                 variables: list[Variable] | None = None) -> None:
        if sense not in ("min", "max"):
            raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
        objective = _as_expr(objective)
        if not objective.scalar:
            raise ValueError("the objective must be a scalar expression (use vsum)")
        constraints = list(constraints or [])
        for c in constraints:
            if not isinstance(c, Constraint):
                raise TypeError(f"constraints must be Constraint objects, got {type(c).__name__}")
        names = [c.multiplier for c in constraints]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"multiplier names must be unique, repeated: {sorted(dup)}")
        self.objective, self.constraints = objective, constraints
        self.sense, self.name = sense, name
        self.structure = dict(structure or {})
        #: symbols the formulas use that no variable or data defines, each a ``(txt, tex)``
        #: line printed after the constraints (``Q_ij = ⟨a_i, a_j⟩, where a_i = y_i φ(x_i)``)
        self.definitions: list[tuple[str, str]] = []
        for t in objective.terms:      # atoms that need a definition (h_δ, H) bring it
            d = getattr(t, "definition", None)
            if d is not None and d not in self.definitions:
                self.definitions.append(d)
        found: dict[Variable, None] = {v: None for v in objective.variables}
        for c in constraints:
            for v in c.g.variables:
                found[v] = None
        if variables is not None:
            found = {v: None for v in variables} | found
        self.variables: list[Variable] = list(found)
        vnames = [v.name for v in self.variables]
        if len(set(vnames)) != len(vnames):
            raise ValueError(f"variable names must be unique, got {vnames}")
        clash = set(vnames) & set(names)
        if clash:
            raise ValueError(f"names used both for variables and multipliers: {sorted(clash)}")

    # ----- lookup
    def variable(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(f"no variable named {name!r}; variables: {[v.name for v in self.variables]}")

    def constraint(self, multiplier: str) -> Constraint:
        for c in self.constraints:
            if c.multiplier == multiplier:
                return c
        raise KeyError(f"no constraint with multiplier {multiplier!r}")

    @property
    def multipliers(self) -> list[str]:
        return [c.multiplier for c in self.constraints]

    @property
    def is_convex(self) -> bool:
        sign = 1 if self.sense == "min" else -1
        return all((t.curvature * t.coef * sign) >= 0 for t in self.objective.terms)

    @property
    def is_qp(self) -> bool:
        return all(isinstance(t, (FeatureNorm, SumSquares, QuadForm))
                   for t in self.objective.terms)

    # ----- numerics
    def evaluate(self, point: dict) -> float:
        """Objective value at ``point``."""
        return float(self.objective.value(point))

    def infeasibility(self, point: dict) -> float:
        """Largest constraint violation at ``point``."""
        return max((float(np.max(c.violation(point))) for c in self.constraints), default=0.0)

    # ----- Lagrangian and KKT
    def lagrangian(self):
        """The Lagrangian ``L = f - sum lambda g`` (index sets named first, as for printing)."""
        n_samples(self)
        return Lagrangian(self)

    def kkt(self):
        """The KKT conditions (index sets named first, as for printing)."""
        n_samples(self)
        return KKTConditions(self)

    # ----- rendering
    def __str__(self) -> str:
        return problem_text(self)

    def __repr__(self) -> str:
        return f"<Problem {self.name!r}: {self.sense} over {[v.name for v in self.variables]}>"

    def to_latex(self) -> str:
        return problem_latex(self)

    def _repr_latex_(self) -> str:
        return "$$" + self.to_latex() + "$$"

    def to_markdown(self) -> str:
        return f"**{self.name}**\n\n$$\n{self.to_latex()}\n$$\n"

    # ----- solving
    def solve(self, backend: str = "cvxpy", **options: Any):
        """Solve with a backend (``"cvxpy"`` default; ``"auto"`` picks a specialised one when
        :attr:`structure` allows) and return a :class:`~primaldual.solution.Solution`."""
        return solve_problem(self, backend=backend, **options)


class _OnlyShape(dict):
    """The structure readers' memo of shapes a problem lacks (``problem._not_detected``) for a
    problem whose structure record is complete: every other shape is absent, with ``why``."""

    def __init__(self, why: str) -> None:
        super().__init__()
        self.why = why

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return self.why


class LazyProblem(Problem):
    """A :class:`Problem` built on first use: ``builder()`` runs (once) the first time an
    attribute that is not set here is read, and the built problem's state is adopted.

    A fit hands its primal and dual to the backend this way: the SMO backend reads only the
    attached ``structure`` (given here, so it is never rebuilt), and the expression objects
    are constructed only if someone asks for them (``est.solution_.problem``, rendering, KKT
    conditions). ``builder`` must be picklable (e.g. a :func:`functools.partial` of a bound
    method) for the fitted estimator to pickle.
    """

    def __init__(self, builder: Any, *, structure: dict | None = None,
                 only: str | None = None) -> None:
        self.__dict__["_builder"] = builder
        if structure is not None:
            self.__dict__["structure"] = dict(structure)
        if only is not None:
            # the structure given is the whole truth: a backend asking for another shape is
            # told why at once, instead of the detection building the problem to find out
            self.__dict__["_not_detected"] = _OnlyShape(only)

    def __getattr__(self, name: str) -> Any:
        # only reached for attributes not set yet; dunder lookups (pickle, copy) never build
        if name.startswith("__") or "_builder" not in self.__dict__:
            raise AttributeError(name)
        built = self.__dict__["_builder"]()
        del self.__dict__["_builder"]
        if not isinstance(built, Problem):
            raise TypeError(f"LazyProblem builder returned {type(built).__name__}, "
                            "not a Problem")
        state = dict(built.__dict__)
        if "structure" in self.__dict__:
            # keep the structure records a backend already read (the same objects)
            state["structure"] = {**state.get("structure", {}), **self.__dict__["structure"]}
        self.__dict__.update(state)
        return getattr(self, name)


def feature_variables(problem: Problem) -> list[FeatureVariable]:
    return [v for v in problem.variables if isinstance(v, FeatureVariable)]
