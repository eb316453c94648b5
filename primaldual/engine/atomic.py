"""A failed fit leaves the estimator as it was: :func:`atomic_fit`, shared by every estimator
(the catalogue, ``Variant``, the decompositions, the Bayesian models)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["atomic_fit", "is_fitted_name"]


def is_fitted_name(name: str) -> bool:
    """scikit-learn's convention: fitted state ends in ``_`` (``__dunder__`` excluded); the
    private ``_binary_classes`` is fitted state too."""
    return (name.endswith("_") and not name.startswith("__")) or name == "_binary_classes"


def atomic_fit(fit: Callable) -> Callable:
    """Make ``fit`` atomic: every earlier fitted attribute is dropped before the new fit starts
    (a binary fit followed by a 3-class fit keeps nothing of the binary model), and if the fit
    raises anything (``KeyboardInterrupt`` included) the estimator's ``__dict__`` is restored
    exactly as it was, so an old model is never mixed with new labels or shapes."""

    @functools.wraps(fit)
    def wrapper(self, *args: Any, **kwargs: Any):
        before = dict(self.__dict__)
        # (is_fitted_name inline: a fit's ~25 parameters are read on every call)
        for name in [k for k in before if (k[-1:] == "_" and k[:2] != "__")
                     or k == "_binary_classes"]:
            del self.__dict__[name]
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    return wrapper
