"""Backends: one file per backend, each a thin module with two functions of fixed signature::

    accepts(problem: Problem) -> bool        # from the problem's structure
    solve(problem: Problem, **options) -> Solution

``backend="auto"`` tries the specialised backends in :data:`AUTO_ORDER` and falls back to CVXPY,
which accepts every convex problem.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

#: name -> module path; a backend registers itself here (and nowhere else).
REGISTRY: dict[str, str] = {
    "cvxpy": "primaldual.backends.cvxpy_",
    "smo": "primaldual.backends.smo",
    "kkt": "primaldual.backends.kkt",
    "lowrank": "primaldual.backends.lowrank",
}
AUTO_ORDER = ("smo", "kkt", "lowrank")
BACKENDS = ("auto",) + tuple(REGISTRY)


def get_backend(name: str) -> ModuleType:
    """The backend module called ``name`` (ValueError naming the allowed values otherwise)."""
    if name not in REGISTRY:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    mod = importlib.import_module(REGISTRY[name])
    if not (hasattr(mod, "accepts") and hasattr(mod, "solve")) and name in ADAPTERS:
        mod = importlib.import_module(ADAPTERS[name])
    if not (hasattr(mod, "accepts") and hasattr(mod, "solve")):
        raise ValueError(f"backend {name!r} is not available for Problem objects yet")
    return mod


def select(problem: Any, backend: str = "auto") -> str:
    """Resolve ``backend`` for ``problem`` (``"auto"``: first specialised backend that accepts)."""
    if backend != "auto":
        mod = get_backend(backend)
        if not mod.accepts(problem):
            raise ValueError(f"backend {backend!r} does not accept problem {problem.name!r} "
                             "(its structure does not match); use backend='cvxpy' or 'auto'")
        return backend
    for name in AUTO_ORDER:
        try:
            mod = get_backend(name)
        except (ValueError, ImportError):
            continue
        if mod.accepts(problem):
            return name
    return "cvxpy"


def solve(problem: Any, backend: str = "cvxpy", **options: Any):
    """Solve ``problem`` with the chosen backend and return a Solution."""
    name = select(problem, backend)
    return get_backend(name).solve(problem, **options)


#: Problem-level adapters of backends whose solver file is raw-array only.
ADAPTERS: dict[str, str] = {"smo": "primaldual.backends._smo_problem",
                            "kkt": "primaldual.backends._kkt_problem",
                            "lowrank": "primaldual.backends._lowrank_problem"}
