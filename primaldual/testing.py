"""Assertions for users' own test suites (usable from pytest; plain ``AssertionError`` messages
that state the numbers).

* :func:`assert_strong_duality` — primal and dual optimal values agree (``p* = d*``).
* :func:`assert_kkt` — a solution satisfies its problem's KKT conditions.
* :func:`assert_same_problem` — two duals (e.g. a hand-written and a :func:`dualize`-derived one)
  have the same optimal value and map to the same primal solution.

Problems may be given directly, as a :class:`~primaldual.model.dualize.Derivation` (its ``.dual``
is used, and its ``.recover`` as the solution map), or as a callable that builds the problem from
``data`` (``data`` a tuple of arguments, or a list of such tuples to check several data sets).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .model.problem import Problem

__all__ = ["assert_kkt", "assert_same_problem", "assert_strong_duality"]


def _datasets(data: Any) -> list:
    if data is None:
        return [None]
    if isinstance(data, list):
        return data
    return [data]


def _build(obj: Any, data: Any) -> tuple[Problem, Callable | None]:
    """``(problem, recover)`` from a Problem, Derivation or builder callable."""
    if data is not None and callable(obj) and not isinstance(obj, Problem) \
            and not hasattr(obj, "dual"):
        obj = obj(*data) if isinstance(data, tuple) else obj(data)
    if hasattr(obj, "dual") and hasattr(obj, "recover") and not isinstance(obj, Problem):
        return obj.dual, obj.recover
    if isinstance(obj, Problem):
        return obj, None
    raise TypeError(f"expected a Problem, a Derivation or a callable building one from data, "
                    f"got {type(obj).__name__}")


def _solve(problem: Problem, solve_options: dict | None):
    sol = problem.solve(**(solve_options or {"backend": "cvxpy"}))
    if sol.status not in ("optimal", "inaccurate"):
        raise AssertionError(f"{problem.name}: solver status {sol.status!r}, no optimal value")
    return sol


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(a), abs(b))


def assert_strong_duality(primal: Any, dual: Any, data: Any = None, tol: float = 1e-6, *,
                          solve_options: dict | None = None) -> list[tuple[float, float]]:
    """Assert ``|p* - d*| <= tol * max(1, |p*|, |d*|)`` for the optimal values.

    Parameters
    ----------
    primal, dual : Problem, Derivation or callable
        ``primal`` must be a minimisation and ``dual`` a maximisation (weak duality
        ``d* <= p*``); a callable is called with ``data``.
    data : tuple, list of tuples or None
    tol : float
        Relative tolerance.
    solve_options : dict, optional
        Passed to ``Problem.solve`` (default ``backend="cvxpy"``).

    Returns
    -------
    list of (p*, d*) per data set.
    """
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    out = []
    for k, ds in enumerate(_datasets(data)):
        P, _ = _build(primal, ds) if not hasattr(primal, "dual") else (primal.primal, None)
        D, _ = _build(dual, ds)
        sp, sd = _solve(P, solve_options), _solve(D, solve_options)
        p, d = sp.objective_value, sd.objective_value
        r = _rel(p, d)
        if not r <= tol:
            raise AssertionError(f"strong duality fails on data set {k}: primal value {p:.12g}, "
                                 f"dual value {d:.12g}, gap {p - d:.3e}, relative {r:.3e} > "
                                 f"tol {tol:.1e}")
        out.append((p, d))
    return out


def assert_kkt(solution: Any, tol: float = 1e-6) -> dict[str, float]:
    """Assert every KKT residual of ``solution.problem`` at the solution is ``<= tol``.

    Residuals are recomputed from the returned point (``Solution.kkt_residuals``): stationarity,
    primal and dual feasibility, complementary slackness. Returns the residual dictionary.
    """
    if not hasattr(solution, "kkt_residuals"):
        raise TypeError(f"solution must be a Solution, got {type(solution).__name__}")
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    res = solution.kkt_residuals()
    bad = {k: v for k, v in res.items() if not v <= tol}
    if bad:
        lines = ", ".join(f"{k} = {v:.3e}" for k, v in sorted(bad.items(), key=lambda t: -t[1]))
        raise AssertionError(f"KKT conditions of {solution.problem.name!r} violated beyond tol "
                             f"{tol:.1e}: {lines}")
    return res


def _compare_points(pa: dict, pb: dict, primal: Problem | None, tol: float) -> list[str]:
    errs = []
    for name in sorted(set(pa) & set(pb)):
        a = np.atleast_1d(np.asarray(pa[name], dtype=float)).ravel()
        b = np.atleast_1d(np.asarray(pb[name], dtype=float)).ravel()
        if a.shape != b.shape:
            errs.append(f"{name}: shapes {a.shape} vs {b.shape}")
            continue
        if primal is not None:
            try:
                v = primal.variable(name)
            except KeyError:
                v = None
            if v is not None and v.feature:  # compare <w, phi(z_i)>, not the coefficients
                a, b = v.gram_matvec(a), v.gram_matvec(b)
        diff = float(np.max(np.abs(a - b), initial=0.0))
        scale = max(1.0, float(np.max(np.abs(a), initial=0.0)))
        if not diff <= tol * scale:
            errs.append(f"{name}: max |difference| {diff:.3e} (scale {scale:.3g})")
    return errs


def assert_same_problem(dual_a: Any, dual_b: Any, data: Any = None, tol: float = 1e-7, *,
                        recover_a: Callable | None = None, recover_b: Callable | None = None,
                        map_tol: float = 1e-5, primal: Problem | None = None,
                        solve_options: dict | None = None) -> list[tuple[float, float]]:
    """Assert two duals have the same optimal value and map to the same primal solution.

    Parameters
    ----------
    dual_a, dual_b : Problem, Derivation or callable
        A Derivation brings its ``recover`` map.
    data : tuple, list of tuples or None
        Arguments for callables; a list checks several (e.g. random) data sets.
    tol : float
        Relative tolerance on the optimal values.
    recover_a, recover_b : callable, optional
        ``Solution -> dict`` of primal values (override/provide the solution maps).
    map_tol : float
        Tolerance on the recovered primal values (relative to their scale; feature-space
        variables compared through ``<w, phi(z_i)>``). The maps are compared only when both are
        available.
    primal : Problem, optional
        Used to identify feature-space variables (taken from a Derivation if omitted).

    Returns
    -------
    list of (value_a, value_b) per data set.
    """
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    out = []
    for k, ds in enumerate(_datasets(data)):
        A, ra = _build(dual_a, ds)
        B, rb = _build(dual_b, ds)
        ra, rb = recover_a or ra, recover_b or rb
        pr = primal
        for obj in (dual_a, dual_b):
            if pr is None and hasattr(obj, "primal") and isinstance(obj.primal, Problem):
                pr = obj.primal
        sa, sb = _solve(A, solve_options), _solve(B, solve_options)
        va, vb = sa.objective_value, sb.objective_value
        r = _rel(va, vb)
        if not r <= tol:
            raise AssertionError(f"optimal values differ on data set {k}: {A.name!r} {va:.12g} "
                                 f"vs {B.name!r} {vb:.12g}, relative difference {r:.3e} > tol "
                                 f"{tol:.1e}")
        if ra is not None and rb is not None:
            errs = _compare_points(ra(sa), rb(sb), pr, map_tol)
            if errs:
                raise AssertionError(f"solution maps differ on data set {k}: " + "; ".join(errs))
        out.append((va, vb))
    return out
