"""Constraints that own their multipliers, and the Problem object.

Sign convention (docs/formulations.md, fixed once): every constraint is stored as
``g(x) >= 0`` (inequality, multiplier ``>= 0``) or ``h(x) = 0`` (equality, multiplier free), with
``g = lhs - rhs`` for ``lhs >= rhs``, ``g = rhs - lhs`` for ``lhs <= rhs`` and ``h = lhs - rhs``.
The Lagrangian of a minimisation is ``f - sum(lambda * g)``; a maximisation is read as the
minimisation of ``-f``, so its Lagrangian is ``f + sum(lambda * g)`` (the upper bound on
``f`` over the feasible set).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from . import placeholders as _ph
from .atoms import row_index
from .expr import Expr, _as_expr
from .leaves import FeatureVariable, Variable
from .solvers import solve_problem
from .symbols import latex_indexed, latex_symbol, text_indexed, text_symbol

_auto = itertools.count()

OPS_TXT = {">=": "≥", "<=": "≤", "==": "="}
OPS_TEX = {">=": r"\geq", "<=": r"\leq", "==": "="}


def _is_zero(e: Expr) -> bool:
    return not e.lin and not e.terms and bool(np.all(e.const == 0))


class Constraint:
    """``lhs (>=|<=|==) rhs`` with its named multiplier (born with the constraint).

    Parameters
    ----------
    lhs, rhs : Expr
    op : {">=", "<=", "=="}
    multiplier : str, optional
        Name of the multiplier (``"alpha"``); auto-named ``lambda<k>`` / ``nu<k>`` if omitted.
    where : str, optional
        Index-set text shown in rendering (default ``i = 1..N`` for vector constraints).
    """

    def __init__(self, lhs: Expr, op: str, rhs: Expr, multiplier: str | None = None,
                 where: str | None = None) -> None:
        if op not in OPS_TXT:
            raise ValueError(f"op must be one of '>=', '<=', '==', got {op!r}")
        lhs, rhs = _as_expr(lhs), _as_expr(rhs)
        if lhs.terms or rhs.terms:
            raise TypeError("constraints must be affine (no norm2/sum_squares/... terms), or "
                            "bound a squared distance norm2(phi(X) - a) from above")
        self.lhs, self.op, self.rhs = lhs, op, rhs
        self.g = (lhs - rhs) if op != "<=" else (rhs - lhs)
        if self.g.rq and (op == "==" or any(np.any(q > 0) for q in self.g.rq.values())):
            raise TypeError("a squared distance must be bounded from above (||phi(x_i) - a||^2 "
                            "<= ...): any other use makes the feasible set nonconvex")
        self.size = self.g.size
        self.scalar = self.g.scalar
        self.multiplier = multiplier or (("nu" if op == "==" else "lambda") + str(next(_auto)))
        self.where = where
        #: (txt, tex) printed for a scalar multiplier instead of its name (a derived dual whose
        #: equality multiplier is an expression of the primal, SVDD's ``‖a‖² - R²``)
        self.label: tuple[str, str] | None = None
        ri = None if self.scalar else row_index(self.g)
        self.index_set, self.letter = ri if ri is not None else (None, "i")

    def named(self, multiplier: str, where: str | None = None) -> Constraint:
        """Name the multiplier (returns ``self`` for chaining)."""
        self.multiplier = multiplier
        if where is not None:
            self.where = where
        return self

    @property
    def equality(self) -> bool:
        return self.op == "=="

    @property
    def sign_domain(self) -> str:
        """``"free"`` for equalities, ``">= 0"`` for inequalities."""
        return "free" if self.equality else ">= 0"

    # ----- rendering
    @property
    def mult_txt(self) -> str:
        if self.label is not None:
            return self.label[0]
        return text_symbol(self.multiplier) if self.scalar else text_indexed(self.multiplier,
                                                                             self.letter)

    @property
    def mult_tex(self) -> str:
        if self.label is not None:
            return self.label[1]
        return latex_symbol(self.multiplier) if self.scalar else latex_indexed(self.multiplier,
                                                                               self.letter)

    @property
    def mult_block_txt(self) -> str:
        return text_symbol(self.multiplier)

    def where_txt(self, n_samples: int | None = None) -> str:
        """The index set of the rows (``i = 1..N``; the length itself when the rows are not
        the problem's ``n_samples`` samples)."""
        if self.scalar:
            return ""
        if self.where:
            return self.where
        note = self.lhs.row_note or self.rhs.row_note
        if note is not None:
            return self._where_default(n_samples) + f" ({note[0]})"
        return self._where_default(n_samples)

    def _where_default(self, n_samples: int | None) -> str:
        sub = self.lhs.subset_of or self.rhs.subset_of
        if sub is not None:   # rows picked from an expression over i: name the subset
            return f"{self.letter} ∈ I, a subset of {sub[0]} of the {sub[1]} rows"
        if self.index_set is not None:
            return f"{self.letter} = 1..{self.index_set}"
        if n_samples is not None and self.size != n_samples:
            return f"i = 1..{self.size}"
        return "i = 1..N"

    def txt(self) -> str:
        return f"{self.lhs.txt} {OPS_TXT[self.op]} {self.rhs.txt}"

    def tex(self) -> str:
        return f"{self.lhs.tex} {OPS_TEX[self.op]} {self.rhs.tex}"

    def g_render(self) -> tuple[str, str]:
        """``g(x)`` as (txt, tex) in the form used by the Lagrangian, zero sides dropped."""
        pos, neg = (self.lhs, self.rhs) if self.op != "<=" else (self.rhs, self.lhs)
        if _is_zero(neg):
            return pos.txt, pos.tex
        if _is_zero(pos):
            n = -neg
            return n.txt, n.tex
        return self.g.txt, self.g.tex

    def __str__(self) -> str:
        return self.render()

    def render(self, n_samples: int | None = None) -> str:
        """One line: the constraint, its index set and its multiplier with its sign."""
        dom = "" if self.equality else " ≥ 0"
        w = self.where_txt(n_samples)
        return f"{self.txt()}" + (f",  {w}" if w else "") + f"   [{self.mult_txt}{dom}]"

    def __repr__(self) -> str:
        return f"Constraint({self.txt()!r}, multiplier={self.multiplier!r})"

    def __bool__(self) -> bool:  # `a == b` must not be used as a truth value by accident
        raise TypeError("a Constraint has no truth value; did you mean to compare numbers?")

    # ----- numerics
    def value(self, point: dict) -> np.ndarray:
        """``g(x)`` (inequality: feasible when >= 0; equality: feasible when == 0)."""
        return np.atleast_1d(self.g.affine_value(point))

    def violation(self, point: dict) -> np.ndarray:
        """Per-row infeasibility: ``max(0, -g)`` or ``|h|``."""
        v = self.value(point)
        return np.abs(v) if self.equality else np.maximum(0.0, -v)


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
        from .terms import FeatureNorm, QuadForm, SumSquares
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
        from .lagrangian import Lagrangian
        return Lagrangian(self)

    def kkt(self):
        from .kkt import KKTConditions
        return KKTConditions(self)

    # ----- rendering
    def __str__(self) -> str:
        from .render import problem_text
        return problem_text(self)

    def __repr__(self) -> str:
        return f"<Problem {self.name!r}: {self.sense} over {[v.name for v in self.variables]}>"

    def to_latex(self) -> str:
        from .render import problem_latex
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


class LazyProblem(Problem):
    """A :class:`Problem` built on first use: ``builder()`` runs (once) the first time an
    attribute that is not set here is read, and the built problem's state is adopted.

    A fit hands its primal and dual to the backend this way: the SMO backend reads only the
    attached ``structure`` (given here, so it is never rebuilt), and the expression objects
    are constructed only if someone asks for them (``est.solution_.problem``, rendering, KKT
    conditions). ``builder`` must be picklable (e.g. a :func:`functools.partial` of a bound
    method) for the fitted estimator to pickle.
    """

    def __init__(self, builder: Any, *, structure: dict | None = None) -> None:
        self.__dict__["_builder"] = builder
        if structure is not None:
            self.__dict__["structure"] = dict(structure)

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
