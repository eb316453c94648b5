"""The model layer's solver hook: :meth:`Problem.solve <primaldual.model.problem.Problem.solve>`
calls the function registered here.

The model layer imports no backend. :mod:`primaldual.backends` registers its dispatcher
(:func:`primaldual.backends.solve`) when it is imported, and the package's ``__init__`` imports
``primaldual.backends`` eagerly, so the hook is filled as soon as any part of ``primaldual`` is
imported (``from primaldual.model import Problem`` imports the package first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: name -> solve function ``(problem, backend=..., **options) -> Solution``; ``"backends"`` is
#: :func:`primaldual.backends.solve`, filled by that package when it is imported.
SOLVERS: dict[str, Callable[..., Any]] = {}


def register_solver(name: str, solve: Callable[..., Any]) -> None:
    """Register ``solve`` under ``name`` (``primaldual.backends`` registers ``"backends"``)."""
    SOLVERS[name] = solve


def solve_problem(problem: Any, backend: str = "cvxpy", **options: Any) -> Any:
    """Solve ``problem`` with the registered backend dispatcher (see the module docstring)."""
    try:
        solve = SOLVERS["backends"]
    except KeyError:  # only reachable when primaldual/__init__.py was bypassed
        raise RuntimeError("no solver registered: import primaldual.backends first") from None
    return solve(problem, backend=backend, **options)
