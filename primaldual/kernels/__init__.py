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
from .factors import (
    LowRankFactor,
    eig_factor,
    incomplete_cholesky,
    low_rank_factor,
    nystrom_factor,
)
from .functions import (
    ARDRBF,
    CHUNK_ELEMENTS,
    KERNEL_NAMES,
    RBF,
    SPEC_LINEAR,
    SPEC_POLY,
    SPEC_RBF,
    SPEC_SIGMOID,
    BSpline,
    CallableKernel,
    Kernel,
    KernelSpec,
    Laplacian,
    Linear,
    Periodic,
    Polynomial,
    Precomputed,
    Product,
    RationalQuadratic,
    Sigmoid,
    Sum,
    kernel_from_dict,
    make_kernel,
    mercer_check,
)
from .gram import kernel_columns, kernel_matvec, matvec_cache

__all__ = [
    "CHUNK_ELEMENTS",
    "KERNEL_NAMES",
    "Kernel",
    "KernelSpec",
    "IndefiniteKernelWarning",
    "SPEC_LINEAR",
    "SPEC_RBF",
    "SPEC_POLY",
    "SPEC_SIGMOID",
    "Linear",
    "RBF",
    "Polynomial",
    "Sigmoid",
    "Laplacian",
    "RationalQuadratic",
    "Periodic",
    "ARDRBF",
    "BSpline",
    "Sum",
    "Product",
    "Precomputed",
    "CallableKernel",
    "make_kernel",
    "kernel_from_dict",
    "mercer_check",
    "kernel_columns",
    "kernel_matvec",
    "matvec_cache",
    "LowRankFactor",
    "eig_factor",
    "nystrom_factor",
    "incomplete_cholesky",
    "low_rank_factor",
]


def __getattr__(name: str) -> _Any:
    """Deprecated names: ``KernelNotPSDWarning`` is now
    :class:`~primaldual.exceptions.IndefiniteKernelWarning`."""
    if name == "KernelNotPSDWarning":
        _warnings.warn("primaldual.kernels.KernelNotPSDWarning is deprecated; use "
                       "primaldual.exceptions.IndefiniteKernelWarning", DeprecationWarning,
                       stacklevel=2)
        return IndefiniteKernelWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
