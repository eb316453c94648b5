r"""The stages of a fit, from a bound problem to a certified model, in the order :func:`run`
calls them::

    task (bound) --choose--> backend name, target problem
                 --options--> the backend's solve options (the registry's table, the backend's
                              own defaults for this problem, the task's extras)
                 --solve--> Solution (the backend's own post-processing applied)
                 --recover--> the point predict uses          (task.recover)
                 --certify--> Certificate recomputed from it  (task.certify)
                 --audit--> status: the one rule of every road
                 --store--> fitted attributes                 (task.store)

Every stage but the task's own three (recover, certify, store) is written once, here; the
catalogue's binary fits, the one-vs-one pairs and ``Variant`` all call them.
"""

from __future__ import annotations

import functools
import inspect
import math
import time
import warnings
from typing import Any

import numpy as np

from ..backends import SPARSE_ROWS, estimator_options, finish_solution, get_backend, option_owner
from ..backends import prepare_options as backend_prepare
from ..backends import select as select_backend
from ..certificate import Certificate, audit, audit_tolerance
from ..exceptions import (
    IgnoredParameterWarning,
    IndefiniteKernelWarning,
    InfeasibleProblemError,
    SingularKKTError,
)
from ..model.problem import Problem
from ..solution import Solution
from ..validation import NumericalTroubleError, audit_kernel, indefinite_eigenvalue, indefinite_text
from .task import FitTask

__all__ = ["audit_fit", "choose", "finish", "require_finite", "run", "solve", "solve_options",
           "warn_ignored_parameters"]

#: Solver hyper-parameters an estimator may set; a non-default value that the chosen backend
#: does not receive warns once per class, parameter and backend (IgnoredParameterWarning).
SOLVER_PARAMS = ("tol", "max_iter", "cache_size", "rank", "rank_tol", "solver")
_WARNED_IGNORED: set[tuple[str, str, str]] = set()


def choose(task: FitTask, backend: str) -> tuple[str, Problem]:
    """The backend for the task's target (``"auto"``: the first specialised backend whose
    structure test accepts it, :func:`primaldual.backends.select`) and the target itself,
    rebound on dense rows when that backend does not read sparse rows."""
    target = task.target()
    name = select_backend(target, backend)
    if name not in SPARSE_ROWS:
        dense = task.densify()
        if dense is not None:
            target = dense
    return name, target


@functools.cache
def _init_signature(cls: Any) -> Any:
    try:
        return inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return None


def warn_ignored_parameters(est: Any, name: str, options: dict) -> None:
    """Warn once (per class, parameter and backend) when a solver hyper-parameter of ``est``
    set to a non-default value is not among the options backend ``name`` receives."""
    cls: Any = type(est)
    sig = _init_signature(cls)
    if sig is None:
        return
    for p in SOLVER_PARAMS:
        if p in options or p not in sig:
            continue
        v, default = getattr(est, p, None), sig[p].default
        if v is None or (type(v) is type(default) and v == default) \
                or (isinstance(v, (int, float)) and isinstance(default, (int, float))
                    and not isinstance(v, bool) and v == default):
            continue
        key = (type(est).__name__, p, name)
        if key in _WARNED_IGNORED:
            continue
        _WARNED_IGNORED.add(key)
        warnings.warn(f"{type(est).__name__}: {p}={v!r} is ignored by backend {name!r} "
                      f"(it is used by backend {option_owner(p)!r})",
                      IgnoredParameterWarning, stacklevel=6)


def solve_options(task: FitTask, name: str, target: Problem, extra: dict) -> dict:
    """Backend ``name``'s solve options: the estimator parameters the registry lists for it
    (:func:`primaldual.backends.estimator_options`), the backend's own defaults for this
    problem (its adapter's ``prepare``), then ``extra`` (a caller's
    ``alpha0``, ``record_trace``); warns about a solver parameter the backend ignores."""
    options = estimator_options(name, task.params)
    backend_prepare(name, target, options, task.hints())
    options.update(extra)
    warn_ignored_parameters(task.estimator, name, options)
    return options


def solve(task: FitTask, backend: str, **extra: Any) -> tuple[Solution, Problem]:
    """Choose, set the options, solve, let the backend post-process its own answer (an
    interior-point solver's rounding, :func:`primaldual.backends.finish_solution`), and hand a
    solve without a point to the task (which raises the error that fits it). Returns the
    solution and the problem it solved. A solve that fails (singular, infeasible, numerical
    trouble) on a kernel indefinite on the training rows warns that this is the likely cause
    (:func:`primaldual.validation.indefinite_eigenvalue`): every road, whichever backend."""
    name, target = choose(task, backend)
    options = solve_options(task, name, target, extra)
    try:
        sol = get_backend(name).solve(target, **options)
        finish_solution(name, sol, target, task.hints())
        if not sol.has_point:
            task.no_point(sol)
    except (NumericalTroubleError, InfeasibleProblemError, SingularKKTError):
        lo = indefinite_eigenvalue(task.kernel, task.X)
        if lo is not None:
            warnings.warn(indefinite_text(task.kernel, lo) + ": the likely cause of the "
                          "error that follows; use a positive semi-definite kernel (e.g. "
                          "'rbf', or 'poly' with coef0 >= 0)", IndefiniteKernelWarning,
                          stacklevel=3)
        raise
    return sol, target


def require_finite(task: FitTask, cert: Certificate, sol: Solution) -> None:
    """A certificate whose objectives, gap or KKT residuals are NaN/inf (multipliers that
    overflowed, e.g. ``C = 1e9`` on features of ``1e-7``) certifies nothing:
    :class:`~primaldual.validation.NumericalTroubleError` naming what is not finite."""
    kkt = cert.kkt or {}
    try:  # one check for the usual case of scalars
        ok = all(map(math.isfinite, (cert.primal_objective, cert.dual_objective,
                                     cert.relative_gap, *kkt.values())))
    except (TypeError, ValueError):
        ok = False
    if ok:
        return
    vals = {"primal objective": cert.primal_objective, "dual objective": cert.dual_objective,
            "relative gap": cert.relative_gap}
    vals.update({f"KKT {k}": v for k, v in kkt.items()})
    bad = [k for k, v in vals.items() if not np.all(np.isfinite(np.asarray(v, dtype=float)))]
    if bad:
        raise NumericalTroubleError(
            f"{task.label}: the {sol.backend} solve ended with status {sol.status!r} but its "
            f"certificate is not finite ({', '.join(bad[:3])}): numerical trouble; "
            + task.scale_hint(), sol)


def audit_fit(task: FitTask, cert: Certificate, sol: Solution, rec: Any) -> str:
    """The one audit of every road; sets and returns the fit's status.

    ``"optimal"`` survives only when, with ``tol = audit_tolerance(task.tol)`` (the estimator's
    ``tol`` clipped to ``[1e-6, 1e-2]``): the certificate is finite, ``|relative gap| <= tol``
    and every KKT residual ``<= tol max(1, |P|)`` (:func:`primaldual.certificate.audit`), the
    kernel is not indefinite on the training rows (:func:`primaldual.validation.audit_kernel`),
    and the task's own checks pass (``task.audit_more``: a classifier's margins; a
    ``Variant``'s negative gap at a point its generic recovery left infeasible,
    :func:`primaldual.certificate.audit_negative_gap`). Each downgrade warns."""
    require_finite(task, cert, sol)
    tol = audit_tolerance(task.tol)
    if cert.status == "optimal":
        scale = max(1.0, abs(cert.primal_objective))
        kkt = cert.kkt
        # (the full check, with its message, only when a number is over its bound)
        if not (abs(cert.relative_gap) <= tol and (not kkt or max(kkt.values()) <= tol * scale)):
            audit(cert, tol)
    # (whatever the status: an indefinite kernel is said even of a fit not certified anyway)
    audit_kernel(cert, task.kernel, task.X)
    if cert.status == "optimal":
        task.audit_more(cert, rec, tol)
    sol.status = cert.status
    return cert.status


def finish(task: FitTask, sol: Solution, rec: Any, t0: float) -> Certificate:
    """The stages after the recovery: certify (``task.certify``), audit (:func:`audit_fit`),
    store (``task.store``); ``t0`` is the fit's start (``time.perf_counter``), its time goes
    into ``certificate.extra["time [s]"]``. Returns the audited certificate."""
    cert = task.certify(rec, sol)
    cert.extra["time [s]"] = time.perf_counter() - t0
    audit_fit(task, cert, sol, rec)
    task.store(sol, rec, cert)
    return cert


def run(task: FitTask, backend: str, **extra: Any) -> tuple[Solution, Any, Certificate]:
    """A fit through every stage (module docstring); returns ``(solution, recovered,
    certificate)`` with the fitted attributes set (``task.store``)."""
    t0 = time.perf_counter()
    sol, _ = solve(task, backend, **extra)
    rec = task.recover(sol)
    return sol, rec, finish(task, sol, rec, t0)
