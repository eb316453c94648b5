"""Kernels: functions, Gram blocks and the chunked mat-vec, low-rank factors.

* :mod:`primaldual.kernels.functions`: the kernel classes, :func:`make_kernel`,
  :meth:`Kernel.spec` (what compiled code reads);
* :mod:`primaldual.kernels.gram`: :func:`kernel_columns` and the fused chunked
  :func:`kernel_matvec` (``f = K[:, S] v`` straight from ``X``) that fits and
  certificates use;
* :mod:`primaldual.kernels.factors`: low-rank factors ``K ~= V V^T``.

Every public name is importable from ``primaldual.kernels``.
"""

import warnings as _warnings
from typing import Any as _Any

from ..exceptions import IndefiniteKernelWarning
from . import factors as _factors
from . import functions as _functions
from . import gram as _gram
from .factors import *  # noqa: F403  (each submodule's __all__ is the public list)
from .functions import *  # noqa: F403
from .gram import *  # noqa: F403

__all__ = ["IndefiniteKernelWarning", *_functions.__all__, *_gram.__all__, *_factors.__all__]


def __getattr__(name: str) -> _Any:
    """Deprecated names: ``KernelNotPSDWarning`` is now
    :class:`~primaldual.exceptions.IndefiniteKernelWarning`."""
    if name == "KernelNotPSDWarning":
        _warnings.warn("primaldual.kernels.KernelNotPSDWarning is deprecated; use "
                       "primaldual.exceptions.IndefiniteKernelWarning", DeprecationWarning,
                       stacklevel=2)
        return IndefiniteKernelWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
