"""Every error and warning class primaldual raises, in one place.

The classes are also importable from the modules that raise them (``primaldual.solution``,
``primaldual.validation``, ``primaldual.backends.linsys``, ...), which re-export them from here, and
from the top-level package (``primaldual.InfeasibleProblemError``).

Errors subclass :class:`ValueError` (so ``except ValueError`` keeps catching bad input);
warnings subclass :class:`UserWarning` (so ``warnings.simplefilter`` can silence one class).

==============================  ==============================================================
class                           raised / warned when
==============================  ==============================================================
DualizationError                :func:`primaldual.dualize` meets a primal outside its class
InfeasibleProblemError          ``fit`` on an infeasible or unbounded problem
NumericalTroubleError           a solver status the structure rules out (bad scaling)
SingularKKTError                ``K + I/C`` is singular or indefinite in a KKT solve
ModelFileError                  a model file is truncated, tampered with or of another schema
DatasetFileNotFoundError        a dataset CSV path does not exist
DerivationFileError             a derivation or exercise answer file cannot be graded
InsufficientMemoryError         an N x N array would not fit in the available memory
InaccurateSolutionWarning       the solver stopped at an only approximately optimal point
InfeasibleProblemWarning        a solve found the problem infeasible or unbounded
IndefiniteKernelWarning         a kernel (or Gram matrix) is not positive semi-definite
IgnoredParameterWarning         a hyper-parameter set by the user is not used by the backend
LowRankApproximationWarning     a low-rank factor explains less than half of trace(K)
RankNotConvergedWarning         rank="auto" hit its cap before the solution stopped moving
ConvergenceWarning              an iteration limit was reached (scikit-learn's class)
==============================  ==============================================================
"""

from __future__ import annotations

import warnings as _warnings
from typing import Any

import numpy as np

__all__ = [
    "ConvergenceWarning",  # noqa: F822 (module __getattr__: scikit-learn imported on use)
    "DatasetFileNotFoundError",
    "DerivationFileError",
    "DualizationError",
    "InaccurateSolutionWarning",
    "IgnoredParameterWarning",
    "IndefiniteKernelWarning",
    "InfeasibleProblemError",
    "InfeasibleProblemWarning",
    "InsufficientMemoryError",
    "LowRankApproximationWarning",
    "ModelFileError",
    "NumericalTroubleError",
    "RankNotConvergedWarning",
    "SingularKKTError",
]


# --------------------------------------------------------------------------- errors


class DualizationError(ValueError):
    """The primal is outside the class :func:`dualize` handles; the message names the block."""


class InfeasibleProblemError(ValueError):
    """Raised when fitting a model whose problem is infeasible (e.g. hard margin on
    non-separable data). ``.solution`` holds the status and, where the backend provides it, the
    certificate of infeasibility (the multipliers form an unbounded ray of the dual)."""

    def __init__(self, message: str, solution: Any = None) -> None:
        super().__init__(message)
        self.solution = solution


class NumericalTroubleError(ValueError):
    """A solver reported a status that the problem's structure rules out (e.g. an unbounded
    dual with finite box bounds) or a point whose residuals contradict its status: the data are
    too badly scaled for the solver. The message says what to change; ``.solution`` holds the
    solver's record."""

    def __init__(self, message: str, solution: Any = None) -> None:
        super().__init__(message)
        self.solution = solution


class SingularKKTError(np.linalg.LinAlgError, ValueError):
    """``K + I/C`` is singular or indefinite, so the KKT system has no unique solution.

    Raised instead of returning NaN or meaningless huge multipliers. It is both a
    :class:`numpy.linalg.LinAlgError` and a :class:`ValueError`.
    """


class ModelFileError(ValueError):
    """The file is not a valid primaldual model file (truncated, tampered, other schema)."""


class DatasetFileNotFoundError(FileNotFoundError, ValueError):
    """A CSV path that does not exist (both a ``FileNotFoundError`` and a ``ValueError``)."""


class DerivationFileError(ValueError):
    """A derivation file (``check-derivation``, an exercise's answer) cannot be graded:
    missing, not a regular file, failing to run, or defining no primal or no piece. The message
    says which, without the file's traceback."""


class InsufficientMemoryError(MemoryError):
    """An ``N x M`` array (a dense kernel matrix) would need more bytes than the memory
    available: raised before allocating, with the size and the backends that avoid the dense
    matrix (:func:`primaldual.validation.check_memory`). A :class:`MemoryError`."""


# --------------------------------------------------------------------------- warnings


class InaccurateSolutionWarning(UserWarning):
    """The solver stopped at a point it reports as only approximately optimal."""


class LowRankApproximationWarning(UserWarning):
    """The low-rank factor ``V V^T ~= K`` explains less than half of ``trace(K)``: the fit
    solved (and certified) a problem far from the exact-kernel one."""


class RankNotConvergedWarning(LowRankApproximationWarning):
    """``rank="auto"`` reached its cap while the low-rank solution was still moving: the decision
    values of successive ranks still differed by more than the tolerance (the message names the
    rank reached and the criterion's value)."""


class InfeasibleProblemWarning(UserWarning):
    """The problem was found infeasible or unbounded: no optimal value exists."""


class IndefiniteKernelWarning(UserWarning):
    """A kernel is not positive semi-definite: either a backend was given a kernel declared
    non-PSD (e.g. sigmoid), or a Gram matrix has a clearly negative eigenvalue
    (:func:`primaldual.kernels.mercer_check`)."""


class IgnoredParameterWarning(UserWarning):
    """A solver hyper-parameter (``tol``, ``max_iter``, ``cache_size``, ``rank``, ``rank_tol``,
    ``solver``) was set to a non-default value but the backend that ran does not use it; warned
    once per estimator class, parameter and backend."""


def __getattr__(name: str) -> Any:
    """``ConvergenceWarning`` is scikit-learn's class (imported on first use, so that
    ``import primaldual`` does not import scikit-learn); ``KernelNotPSDWarning`` is a
    deprecated name of :class:`IndefiniteKernelWarning`."""
    if name == "ConvergenceWarning":
        from sklearn.exceptions import ConvergenceWarning

        return ConvergenceWarning
    if name == "KernelNotPSDWarning":
        _warnings.warn("KernelNotPSDWarning is deprecated; use IndefiniteKernelWarning",
                       DeprecationWarning, stacklevel=2)
        return IndefiniteKernelWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
