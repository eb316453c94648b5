"""Kernels: functions, Gram blocks and the chunked mat-vec, low-rank factors.

* :mod:`primaldual.kernels.functions`: the :class:`Kernel` base class with :meth:`Kernel.spec`
  (what compiled code reads), LIBSVM's four kernels and the ``+``/``*`` algebra;
  :mod:`~primaldual.kernels.extended`: the other kernels; :mod:`~primaldual.kernels.factory`:
  :func:`make_kernel`, :func:`kernel_from_dict`, :func:`mercer_check` (defined in
  :mod:`primaldual.validation`, below the kernels);
* :mod:`primaldual.kernels.gram`: :func:`kernel_columns` and the fused chunked
  :func:`kernel_matvec` (``f = K[:, S] v`` straight from ``X``) that fits and
  certificates use;
* :mod:`primaldual.kernels.factors`: low-rank factors ``K ~= V V^T``;
  :mod:`~primaldual.kernels.growth`: nested Nystrom factors of growing rank
  (:class:`NystromGrowth`).

Every public name is importable from ``primaldual.kernels``.
"""

import warnings as _warnings
from typing import Any as _Any

from ..exceptions import IndefiniteKernelWarning
from . import extended as _extended
from . import factors as _factors
from . import factory as _factory
from . import functions as _functions
from . import gram as _gram
from . import growth as _growth
from .extended import *  # noqa: F403
from .factors import *  # noqa: F403  (each submodule's __all__ is the public list)
from .factory import *  # noqa: F403
from .functions import *  # noqa: F403
from .gram import *  # noqa: F403
from .growth import *  # noqa: F403

__all__ = ["IndefiniteKernelWarning", *_functions.__all__, *_extended.__all__, *_factory.__all__,
           *_gram.__all__, *_factors.__all__, *_growth.__all__]


def __getattr__(name: str) -> _Any:
    """Deprecated names: ``KernelNotPSDWarning`` is now
    :class:`~primaldual.exceptions.IndefiniteKernelWarning`."""
    if name == "KernelNotPSDWarning":
        _warnings.warn("primaldual.kernels.KernelNotPSDWarning is deprecated; use "
                       "primaldual.exceptions.IndefiniteKernelWarning", DeprecationWarning,
                       stacklevel=2)
        return IndefiniteKernelWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
