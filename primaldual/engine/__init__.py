"""The fit engine: one road from a bound problem to a certified, audited model.

Every estimator that solves a problem reaches the engine the same way: it binds its data to a
:class:`FitTask` (its primal, its dual, the data its backend needs, its recovery) and calls
:func:`run`, whose stages (:mod:`primaldual.engine.stages`) are written once::

    choose -> options -> solve -> recover -> certify -> audit -> store

``choose``, ``options``, ``solve`` (with the backend's own post-processing) and ``audit`` are
the engine's; ``recover``, ``certify`` and ``store`` are the task's. The catalogue's binary
fits, the one-vs-one pairs (their route fixed once per multiclass fit) and ``Variant`` are
three tasks of one engine; the decompositions, the Gaussian process and the RVM keep their own
solvers and share :func:`audit_fit` and :func:`atomic_fit`.
"""

from .atomic import atomic_fit, is_fitted_name
from .stages import (
    audit_fit,
    choose,
    finish,
    require_finite,
    run,
    solve,
    solve_options,
    warn_ignored_parameters,
)
from .task import BackendHints, FitTask

__all__ = ["BackendHints", "FitTask", "atomic_fit", "audit_fit", "choose", "finish",
           "is_fitted_name",
           "require_finite", "run", "solve", "solve_options", "warn_ignored_parameters"]
