"""The catalogue of methods: one list, read by the package, the command line and persistence.

Each :class:`Entry` names an estimator class, the module that defines it and the short names the
command line accepts for it. :data:`METHODS` holds the primal-dual methods in the order of the
formulations page (each has a ``primal()`` and a ``dual()``); :data:`ESTIMATORS` holds estimators
outside that catalogue (Bayesian kernel machines), importable from :mod:`primaldual` and storable
with :mod:`primaldual.persistence` but without a primal-dual pair.

>>> from primaldual.catalogue import resolve, method_class
>>> resolve("ls-svm")
'LSSVC'
>>> method_class("LSSVC").__name__
'LSSVC'
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

__all__ = ["ALIASES", "ESTIMATORS", "METHODS", "NAMES", "Entry", "method_class", "resolve"]


@dataclass(frozen=True)
class Entry:
    """One estimator: its class ``name``, the ``module`` that defines it (relative to
    :mod:`primaldual`) and the lower-case ``aliases`` the command line accepts."""

    name: str
    module: str
    aliases: tuple[str, ...] = ()


#: The primal-dual methods, in the order of the formulations page.
METHODS: tuple[Entry, ...] = (
    Entry("HardMarginSVC", "methods.svc", ("hard-margin", "hard-margin-svc", "hardmargin")),
    Entry("CSVC", "methods.svc", ("c-svc", "svc", "svm")),
    Entry("L2SVC", "methods.svc", ("l2-svc",)),
    Entry("NuSVC", "methods.nusvc", ("nu-svc",)),
    Entry("EpsilonSVR", "methods.svr", ("epsilon-svr", "eps-svr", "svr")),
    Entry("NuSVR", "methods.svr", ("nu-svr",)),
    Entry("LSSVC", "methods.lssvm", ("ls-svc", "ls-svm", "lssvm")),
    Entry("LSSVR", "methods.lssvm", ("ls-svr",)),
    Entry("ProximalSVC", "methods.proximal", ("proximal", "psvm")),
    Entry("KernelRidge", "methods.ridge", ("kernel-ridge", "krr", "rls")),
    Entry("LapRLS", "methods.laplacian"),
    Entry("LapSVC", "methods.laplacian", ("lapsvm",)),
    Entry("KernelLogisticRegression", "methods.logistic", ("klr", "logistic", "kernel-logistic")),
)

#: Estimators outside the primal-dual catalogue (no ``primal()``/``dual()`` pair).
ESTIMATORS: tuple[Entry, ...] = (
    Entry("GPClassifier", "gaussian_process"),
    Entry("KernelPCA", "decomposition"),
    Entry("KernelPLSRegression", "decomposition"),
    Entry("EnclosingBall", "bounds"),
    Entry("RVR", "rvm"),
    Entry("RVC", "rvm"),
)

_ALL: dict[str, Entry] = {e.name: e for e in METHODS + ESTIMATORS}

#: Class names of the primal-dual methods, in catalogue order.
NAMES: tuple[str, ...] = tuple(e.name for e in METHODS)

#: Accepted short names of the methods (lower case, ``-`` between words) -> class name. The
#: lower-cased class name itself (``"csvc"``) is always accepted too.
ALIASES: dict[str, str] = {a: e.name for e in METHODS for a in e.aliases}


def resolve(name: str) -> str:
    """The class name of the method called ``name``: a class name or an alias (case, ``_``
    and ``-`` do not matter).

    Raises
    ------
    ValueError
        ``name`` names no method; the message lists the allowed values.
    """
    if name in NAMES:
        return name
    key = str(name).strip().lower().replace("_", "-")
    lower = {n.lower(): n for n in NAMES}
    found = ALIASES.get(key) or lower.get(key.replace("-", ""))
    if found is None:
        raise ValueError(f"unknown method {name!r}; allowed: {', '.join(NAMES)} "
                         f"(or aliases: {', '.join(sorted(ALIASES))})")
    return found


def method_class(name: str) -> type:
    """The class of a catalogue entry (method or estimator) by class name, or of a method by
    alias, imported from its module on first use."""
    entry = _ALL.get(name) or _ALL[resolve(name)]
    return getattr(import_module(f"primaldual.{entry.module}"), entry.name)
