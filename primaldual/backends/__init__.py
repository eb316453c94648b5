"""Backends: one folder per backend (``smo/``, ``linsys/``, ``lowrank/``; CVXPY in ``cvxpy_.py``),
each with a thin ``adapter`` module of two functions of fixed signature::

    accepts(problem: Problem) -> bool        # from the problem's structure
    solve(problem: Problem, **options) -> Solution

``backend="auto"`` tries the specialised backends in :data:`AUTO_ORDER` and falls back to CVXPY,
which accepts every convex problem.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ..model.solvers import register_solver

#: name -> module path; a backend registers itself here (and nowhere else).
REGISTRY: dict[str, str] = {
    "cvxpy": "primaldual.backends.cvxpy_",
    "smo": "primaldual.backends.smo.adapter",
    "kkt": "primaldual.backends.linsys.adapter",
    "lowrank": "primaldual.backends.lowrank.adapter",
    "gsmo": "primaldual.backends.gsmo.adapter",
    "lp": "primaldual.backends.lp",
    "linear": "primaldual.backends.linear.adapter",
    "qpdirect": "primaldual.backends.qpdirect.adapter",
    "pairs": "primaldual.backends.pairs.adapter",
}
AUTO_ORDER = ("linear", "pairs", "smo", "gsmo", "kkt", "lowrank", "lp", "qpdirect")
#: name -> the estimator parameters the backend takes as solve options (the one table: the
#: catalogue's fits, ``Variant`` and the ignored-parameter warning all read it). A backend
#: not listed takes none of them.
OPTIONS: dict[str, tuple[str, ...]] = {
    "smo": ("tol", "cache_size", "verbose", "max_iter", "shrinking"),
    "gsmo": ("tol", "cache_size", "verbose", "max_iter"),
    "lowrank": ("rank", "rank_tol"),
    "linear": ("tol", "verbose", "max_iter"),
    "pairs": ("tol", "cache_size", "verbose", "max_iter"),
    "cvxpy": ("solver",),
}
BACKENDS = ("auto",) + tuple(REGISTRY)
#: the backends that read sparse (CSR) data rows as they are; a fit on sparse X densifies the
#: rows for any other
SPARSE_ROWS: tuple[str, ...] = ("smo", "linear")


def estimator_options(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The solve options of backend ``name`` from an estimator's validated ``params``: each
    parameter of :data:`OPTIONS` ``[name]`` that ``params`` holds and that is not ``None``
    (``None`` leaves the backend's default), then the backend's own reading of the
    parameters (its adapter's optional ``from_params(params, options)``: a parameter whose
    option has another name or form, e.g. the low-rank ``factor``)."""
    options = {k: params[k] for k in OPTIONS.get(name, ()) if params.get(k) is not None}
    hook = getattr(get_backend(name), "from_params", None)
    if hook is not None:
        hook(params, options)
    return options


def option_owner(param: str) -> str | None:
    """The first backend of :data:`OPTIONS` taking the estimator parameter ``param`` (named
    in the warning that a backend ignores it), or ``None``."""
    return next((name for name, opts in OPTIONS.items() if param in opts), None)


def prepare_options(name: str, problem: Any, options: dict[str, Any], hints: Any) -> None:
    """Let backend ``name`` set its own defaults in ``options`` for this ``problem`` (its
    adapter's optional ``prepare(problem, options, hints)``; ``hints`` is the fit's
    :class:`primaldual.engine.BackendHints`). A backend without the hook takes the options as
    they are."""
    hook = getattr(get_backend(name), "prepare", None)
    if hook is not None:
        hook(problem, options, hints)


def finish_solution(name: str, sol: Any, problem: Any, hints: Any) -> None:
    """Backend ``name``'s own post-processing of its answer before recovery (its adapter's
    optional ``finish(solution, problem, hints)``: an interior-point solver's rounding)."""
    hook = getattr(get_backend(name), "finish", None)
    if hook is not None:
        hook(sol, problem, hints)


def get_backend(name: str) -> ModuleType:
    """The backend module called ``name`` (ValueError naming the allowed values otherwise)."""
    mod = _LOADED.get(name)
    if mod is None:
        if name not in REGISTRY:
            raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
        mod = _LOADED[name] = importlib.import_module(REGISTRY[name])
    return mod


_LOADED: dict[str, ModuleType] = {}


def select(problem: Any, backend: str = "auto") -> str:
    """Resolve ``backend`` for ``problem`` (``"auto"``: first specialised backend that accepts)."""
    if backend != "auto":
        mod = get_backend(backend)
        if not mod.accepts(problem):
            why = _why_not(mod, backend, problem)
            raise ValueError(f"backend {backend!r} does not accept problem {problem.name!r}: "
                             f"{why}; use backend='cvxpy' or 'auto'")
        return backend
    return choose(problem)[0]


def _why_not(mod: ModuleType, name: str, problem: Any) -> str:
    # each specialised adapter's refusal names the structural condition that failed
    return getattr(mod, "refusal", lambda p: None)(problem) or "structure does not match"


def auto_passes_smo(kernel: str, rows: int) -> bool:
    """Whether ``"auto"`` gives a kernel box QP on ``rows`` data rows of the named kernel to a
    backend tried before SMO (one whose adapter's ``auto_takes_kernel(kernel, rows)`` says so):
    a route that fits SMO's sub-problems without building them (the one-vs-one pairs) asks
    this, so it takes the generic fit exactly when ``"auto"`` would not choose SMO."""
    for name in AUTO_ORDER[:AUTO_ORDER.index("smo")]:
        takes = getattr(get_backend(name), "auto_takes_kernel", None)
        if takes is not None and takes(kernel, rows):
            return True
    return False


def _why_not_auto(mod: ModuleType, problem: Any) -> str | None:
    """Why ``"auto"`` passes over a backend (``None``: it takes the problem): its structural
    refusal, or its ``auto_refusal`` (a backend that accepts a problem but leaves it to a
    later one where that one is as good, e.g. at small sizes). A backend's ``accepts`` is
    its ``refusal`` being ``None`` where it has one: asked once."""
    refusal = getattr(mod, "refusal", None)
    if refusal is not None:
        why = refusal(problem)
        if why is not None:
            return why
    elif not mod.accepts(problem):
        return "structure does not match"
    return getattr(mod, "auto_refusal", lambda p: None)(problem)


def choose(problem: Any) -> tuple[str, str]:
    """``backend="auto"``: the first specialised backend of :data:`AUTO_ORDER` that accepts
    ``problem``, with the reason (which backends refused and on which structural condition)."""
    refused = []
    for name in AUTO_ORDER:
        try:
            mod = get_backend(name)
        except (ValueError, ImportError):
            continue
        why = _why_not_auto(mod, problem)
        if why is None:
            head = f"{name}: accepts the problem's structure"
            return name, head + (f" (refused before it: {'; '.join(refused)})" if refused
                                 else "")
        refused.append(f"{name}: {why}")
    return "cvxpy", "cvxpy: no specialised backend accepts it (" + "; ".join(refused) + ")"


def solve(problem: Any, backend: str = "cvxpy", **options: Any):
    """Solve ``problem`` with the chosen backend and return a Solution (with ``"auto"``,
    ``info["backend_choice"]`` says which backend was chosen and why; ``verbose=True`` prints
    it)."""
    if backend == "auto":
        name, why = choose(problem)
        if options.get("verbose"):
            print(f"backend='auto' chose {why}")
        sol = get_backend(name).solve(problem, **options)
        if getattr(sol, "info", None) is not None:
            sol.info["backend_choice"] = why
        return sol
    name = select(problem, backend)
    return get_backend(name).solve(problem, **options)


# Problem.solve() (model layer) calls this dispatcher through the model's solver hook
register_solver("backends", solve)
