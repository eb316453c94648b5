"""The parameter tables of the estimators: one check per parameter name, validated once.

Each estimator declares ``_parameter_constraints``, a table ``name -> check`` covering exactly
its constructor parameters (as scikit-learn's ``_parameter_constraints``). At the start of
``fit`` (and of ``primal``/``dual``) :func:`validate_params` runs every check once and returns
the validated values; everything after that (the problem builders, the backend options, the
solver's Python entry) reads those values, under the same names.

A check is ``check(value, name) -> value``: it returns the value to use (``float(C)``,
``None`` for ``max_iter=-1``) or raises :class:`ValueError` / :class:`TypeError` naming
``name``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from ..backends import BACKENDS
from ..validation import (
    check_cache_size,
    check_choice,
    check_int,
    check_max_iter,
    check_nonnegative,
    check_nu,
    check_positive,
)

#: ``check(value, name) -> validated value``.
ParamCheck = Callable[[Any, str], Any]

FORMS = ("dual", "primal")


def passed_on(value: Any, name: str) -> Any:
    """No check here: the value is validated where it is consumed, once (the kernel
    parameters by :func:`~primaldual.kernels.make_kernel`, which needs ``X`` for
    ``gamma="scale"``; ``solver`` by the CVXPY backend; the multiclass options by
    :mod:`primaldual.multiclass`)."""
    return value


def check_bool(value: Any, name: str) -> bool:
    """``True`` or ``False`` (numpy bools included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_verbose(value: Any, name: str) -> Any:
    """A ``bool`` or a verbosity level ``>= 0``."""
    if not isinstance(value, numbers.Integral) or value < 0:
        raise TypeError(f"{name} must be True, False or an integer >= 0, got "
                        f"{type(value).__name__} {value!r}")
    return value


def check_class_weight(value: Any, name: str) -> Any:
    """``None``, ``"balanced"`` or a dict ``label -> weight`` (the weights are checked against
    the classes when the per-sample ``C_i`` are formed)."""
    if value is None or value == "balanced" or isinstance(value, dict):
        return value
    raise ValueError(f"{name} must be None, 'balanced' or a dict, got {value!r}")


def check_class_weight_keys(class_weight: dict, classes: Any) -> None:
    """scikit-learn's rule for a ``class_weight`` dict: when some class has no entry, every
    key must be a class (``ValueError: The classes, [...], are not in class_weight``)."""
    missing = [c for c in classes if c not in class_weight]
    if missing and len(classes) - len(missing) != len(class_weight):
        raise ValueError(f"The classes, {np.asarray(missing).tolist()}, are not in "
                         "class_weight")


def _optional(check: ParamCheck) -> ParamCheck:
    def optional(value: Any, name: str) -> Any:
        return None if value is None else check(value, name)

    optional.__doc__ = f"``None`` or: {check.__doc__}"
    return optional


check_backend = partial(check_choice, allowed=BACKENDS)
check_form = partial(check_choice, allowed=FORMS)
_check_rank_int = _optional(partial(check_int, minimum=1))  # <= N is checked by the backend


def check_rank_param(value: Any, name: str) -> Any:
    """``None``, ``"auto"`` (grow the factor until the solution stops moving) or a positive
    integer."""
    if isinstance(value, str):
        if value == "auto":
            return value
        raise ValueError(f"{name} must be a positive integer or 'auto', got {value!r}")
    return _check_rank_int(value, name)
check_rank_tol = _optional(check_positive)
check_C_or_inf = partial(check_positive, allow_inf=True)


def check_C_finite(value: Any, name: str) -> float:
    """``C`` as a finite float ``> 0``: the methods whose ``C = inf`` is not a supported
    limit (the squared-error and squared-hinge methods: L2-SVC, LS-SVC, LS-SVR, kernel ridge,
    proximal SVC; ``I/C`` would vanish from their systems) refuse it up front, by name
    (``ValueError: C must be a number > 0 (finite), got inf``), instead of solving and then
    failing numerically."""
    return check_positive(value, name)

#: Kernel parameters (every estimator has them).
KERNEL: dict[str, ParamCheck] = {"kernel": passed_on, "gamma": passed_on, "degree": passed_on,
                                 "coef0": passed_on}
#: How a fit runs (backend, form, CVXPY solver, tolerance, verbosity).
RUN: dict[str, ParamCheck] = {"backend": check_backend, "form": check_form,
                              "solver": passed_on, "tol": check_positive,
                              "verbose": check_verbose}
#: The SMO backend's options.
SMO: dict[str, ParamCheck] = {"max_iter": check_max_iter, "cache_size": check_cache_size}
#: The low-rank backend's options.
def check_factor(value: Any, name: str) -> Any:
    """A factor method (``"nystrom"``, ``"rpcholesky"``, ``"icholesky"``, ``"eig"``) or a
    :class:`~primaldual.kernels.LowRankFactor` computed on the training data."""
    from ..kernels import LowRankFactor

    if isinstance(value, LowRankFactor):
        return value
    return check_choice(value, name, allowed=("nystrom", "rpcholesky", "icholesky", "eig"))


check_certify = partial(check_choice, allowed=("auto", "exact"))
LOWRANK: dict[str, ParamCheck] = {"rank": check_rank_param, "rank_tol": check_rank_tol,
                                  "factor": check_factor, "certify": check_certify}
#: Binary decomposition of multiclass problems (validated by :mod:`primaldual.multiclass`).
MULTICLASS: dict[str, ParamCheck] = {"multiclass": passed_on,
                                     "decision_function_shape": passed_on,
                                     "n_jobs": passed_on}

__all__ = ["FORMS", "KERNEL", "LOWRANK", "MULTICLASS", "RUN", "SMO", "ParamCheck",
           "check_backend", "check_form",
           "check_C_or_inf", "check_C_finite", "check_bool", "check_verbose", "check_class_weight",
           "check_nonnegative", "check_nu", "check_positive", "passed_on", "validate_params"]


def validate_params(owner: str, params: Mapping[str, Any],
                    table: Mapping[str, ParamCheck]) -> dict[str, Any]:
    """Run ``table``'s check on every parameter of ``params`` (an estimator's ``get_params``)
    and return the validated values; a parameter without a check is a programming error of
    the estimator ``owner`` (``TypeError``)."""
    missing = sorted(set(params) - set(table))
    if missing:
        raise TypeError(f"{owner} declares no check for parameter(s) {', '.join(missing)}")
    return {name: table[name](value, name) for name, value in params.items()}
