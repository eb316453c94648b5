"""The contract between an estimator and the fit engine: :class:`FitTask`.

An estimator reaches the engine by binding its data to a task object (its primal, its dual, the
data the backend needs, its recovery); the engine runs the stages of
:func:`primaldual.engine.run` on it. The catalogue's binary fits (``methods/_task.py``), the
one-vs-one pairs (the same task with its route fixed once per multiclass fit) and ``Variant``
each provide one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

import numpy as np

from ..certificate import Certificate
from ..model.problem import Problem
from ..solution import Solution

__all__ = ["BackendHints", "FitTask"]


@dataclass
class BackendHints:
    """What a backend's optional ``prepare``/``finish`` hooks may read about the bound problem
    beyond the :class:`~primaldual.model.problem.Problem` itself (the catalogue's box duals
    fill it; a ``Variant`` leaves the defaults).

    Attributes
    ----------
    rows : int
        Data rows ``N`` (the CVXPY route's memory guard counts its ``N x N`` blocks).
    upper : ndarray or None
        The dual box's upper bounds ``0 <= alpha_i <= upper_i``: an interior-point point is
        projected onto it, so the certified dual point is feasible.
    labels : ndarray or None
        Signs ``y`` of the dual's equality ``y^T alpha = 0`` (``None``: the SVR form
        ``1^T (alpha - alpha*) = 0``, or no equality).
    balance : bool
        Restore that equality exactly on an interior-point point (multipliers ``>= 0``; not for
        the least-squares duals, whose multipliers have either sign).
    tight : bool
        The objective is small next to the variables' scale (a box ``C < 1e-2`` makes it
        ``O(C^2)``; nu-SVC's ``1/N`` box likewise): a solver's absolute tolerances must be
        tightened to keep the point's relative accuracy.
    label : str
        The estimator's name in the route's messages.
    shared_gram : SharedGram or None
        A kernel matrix a multiclass fit computed once on all its rows, which a sub-problem's
        kernel columns are read from (:class:`~primaldual.kernels.SharedGram`).
    """

    rows: int = 0
    upper: np.ndarray | None = None
    labels: np.ndarray | None = None
    balance: bool = False
    tight: bool = False
    label: str = ""
    shared_gram: Any = None


class FitTask(Protocol):
    """One fit bound to its data, as the engine's stages read it.

    Attributes
    ----------
    estimator : object
        The estimator being fitted (its constructor's parameters are read by the warning that a
        backend ignores a solver parameter).
    label : str
        The estimator's name in messages.
    params : dict
        Validated parameters; the registry's table (:data:`primaldual.backends.OPTIONS`) picks
        a backend's solve options from them.
    tol : float
        The estimator's ``tol``; audited under :func:`primaldual.certificate.audit_tolerance`.
    kernel, X
        The kernel and training rows the kernel audit reads (an indefinite Gram matrix is never
        certified optimal).
    """

    estimator: Any
    label: str
    params: dict
    tol: float
    kernel: Any
    X: Any

    def target(self) -> Problem:
        """The problem the backend solves (the dual, or the primal with ``form="primal"``)."""

    def densify(self) -> Problem | None:
        """Rebind on dense rows when the chosen backend cannot read sparse rows; ``None`` when
        the rows are dense already. Returns the new target."""

    def hints(self) -> BackendHints:
        """What the backend's ``prepare``/``finish`` hooks may read (:class:`BackendHints`)."""

    def no_point(self, sol: Solution) -> NoReturn:
        """Raise the error for a solve that returned no point (infeasible, unbounded, failed)."""

    def recover(self, sol: Solution) -> Any:
        """The primal point and coefficients ``predict`` uses, read from ``sol``."""

    def certify(self, rec: Any, sol: Solution) -> Certificate:
        """The certificate recomputed from ``rec`` (never the solver's own gap)."""

    def audit_more(self, cert: Certificate, rec: Any, tol: float) -> None:
        """Checks of this task beyond the engine's audit (a classifier's margins)."""

    def store(self, sol: Solution, rec: Any, cert: Certificate) -> None:
        """Set the fitted attributes from the audited certificate."""

    def scale_hint(self) -> str:
        """One sentence on the problem's scale, appended to numerical-trouble messages."""
