"""primaldual: executable primal-dual theory for the support-vector family.

Every method is an explicit primal and dual problem object (variables, constraints with named
multipliers, Lagrangian, KKT conditions) that compiles to CVXPY or to a specialised solver, and
every solve returns a certificate (primal and dual value, gap, KKT residuals) recomputed from the
returned point.

>>> import primaldual as pd
>>> m = pd.CSVC(C=1.0, kernel="rbf", gamma=0.5)            # doctest: +SKIP
>>> print(m.primal(X, y)); m.fit(X, y).certificate_         # doctest: +SKIP
"""

from importlib import import_module as _imp

from . import backends as _backends  # noqa: F401  (fills Problem.solve's solver hook)
from . import catalogue, exceptions, kernels
from .certificate import Certificate, certify
from .model import Constraint, Data, FeatureVariable, Problem, Variable
from .solution import Solution

__version__ = "0.1.0"

#: Class name -> module (relative to this package), derived from :mod:`primaldual.catalogue`.
_METHODS = {e.name: e.module for e in catalogue.METHODS}
_ESTIMATORS = {e.name: e.module for e in catalogue.ESTIMATORS}

__all__ = ["Certificate", "Constraint", "Data", "FeatureVariable", "Problem", "Solution",
           "TwinSVC", "Variable", "Variant", "catalogue", "certify", "dualize", "exceptions",
           "kernels",
           *exceptions.__all__,  # every error and warning class (primaldual.exceptions)
           *_METHODS, *_ESTIMATORS,
           # check a hand derivation against the mechanical one
           "assert_derivation", "check_derivation"]


def __getattr__(name: str):
    """Method classes are imported on first use (one family per module)."""
    if name in exceptions.__all__:  # errors and warnings not imported above
        return getattr(exceptions, name)
    if name in ("dualize", "Derivation"):
        return getattr(_imp(".model.dualize", __name__), name)
    if name in ("check_derivation", "assert_derivation"):
        return getattr(_imp(".derivation_check", __name__), name)
    if name == "Variant":  # a user's primal spec as an estimator
        return _imp(".methods.variant", __name__).Variant
    if name == "TwinSVC":  # two derived planes and the nearest-plane rule
        return _imp(".methods.twin", __name__).TwinSVC
    if name in _METHODS or name in _ESTIMATORS:
        return catalogue.method_class(name)
    raise AttributeError(f"module 'primaldual' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Every public name, the lazily imported method classes included (``dir(primaldual)``,
    tab completion)."""
    return sorted(set(globals()) | set(__all__) | {"Derivation"})
