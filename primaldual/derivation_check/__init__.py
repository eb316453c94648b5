"""Check a hand derivation against the mechanical one and point at the first line that differs.

:func:`check_derivation` takes a primal :class:`~primaldual.model.Problem` and any of the
pieces a person derives by hand from it, written in the modelling language:

* ``dual=`` a dual :class:`~primaldual.model.Problem` (``max`` or ``min``);
* ``lagrangian=`` a :class:`~primaldual.model.Lagrangian` (of a problem of your own) or a
  function ``L(x, multipliers) -> float`` of two dicts keyed by name;
* ``kkt=`` a :class:`~primaldual.model.KKTConditions`, or a list of conditions: affine
  :class:`~primaldual.model.Constraint` objects over variables named like the primal's
  variables and multipliers (a feature-space ``w`` is a plain vector of its coefficients
  ``beta``, ``w = Σ_j β_j φ(x_j)``), and complementarity pairs ``(multiplier, expr)`` meaning
  ``multiplier_i * expr_i = 0``;
* ``recover=`` a function ``dual values -> primal values`` (your recovery formulas).

Each is aligned with :func:`~primaldual.model.dualize.dualize` ``(primal)``: variables are
matched by name (a dual variable by the name of the primal multiplier it is, ``alpha``), then by
shape, or by ``mapping={"yours": "derived"}``; a variable of yours matched to nothing is read
off your equalities (the catalogue's ``β = α - α*``). The comparison is numeric and piece by
piece, in the printed order:

* objective: the quadratic, linear and constant parts on the common affine hull of the two
  equality systems (``F(z) = ±f(z)`` with ``+`` for ``max``, so ``min -f`` equals ``max f``);
* constraints: every row ``g_k(z) >= 0`` (or ``= 0``) of each line is read off exactly (the
  lines are affine) and must be implied by the other side's rows: a row with a positive multiple
  on the other side passes at once, otherwise a linear program (HiGHS) looks for a point feasible
  for one side that violates the row; that point is the witness;
* KKT: stationarity, primal and dual feasibility as one affine system in the primal variables
  and multipliers (compared the same way), then each complementarity pair;
* Lagrangian: ``L(x, 0)`` and the term of each multiplier entry; an equality multiplier may
  carry the opposite sign (a free multiplier's sign is a convention);
* recovery: your formulas against ``Derivation.recover`` at the dual optimum (CVXPY).

The :class:`DerivationReport` names the first piece that differs, prints both lines side by
side (the problems' own rendering) and a witness: a point where the two disagree and by how
much. Equivalent forms pass: a constraint scaled by a positive number, ``min -f`` for
``max f``, constraints reordered or split, variables renamed.

The package's modules, bottom first: ``report`` (the pieces and their text), ``coords`` (the
compared coordinates), ``systems`` (printed lines as affine rows and the witness search),
``align`` (your variables matched with the derived ones), ``objective`` (two objectives on an
affine hull), then one module per piece: ``dual``, ``kkt``, ``lagrangian``, ``recovery``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..model.dualize import dualize
from ..model.problem import Problem
from .dual import _check_dual
from .kkt import _check_kkt
from .lagrangian import _check_lagrangian
from .recovery import _check_recover
from .report import DerivationReport, Piece

__all__ = ["DerivationReport", "Piece", "assert_derivation", "check_derivation"]


def check_derivation(primal: Problem, dual: Problem | None = None, lagrangian: Any = None,
                     kkt: Any = None, *, recover: Callable | None = None,
                     mapping: dict[str, str] | None = None, tol: float = 1e-7,
                     seed: int = 0) -> DerivationReport:
    """Compare hand-derived pieces with the mechanical derivation of ``primal``.

    Parameters
    ----------
    primal : Problem
        The primal (a minimisation :func:`~primaldual.model.dualize.dualize` accepts).
    dual : Problem, optional
        Your dual (``max F`` or ``min -F``), over variables named like the primal's
        multipliers (``alpha``) or matched by shape or ``mapping``; extra variables are read
        off your equalities.
    lagrangian : Lagrangian or callable, optional
        ``L(x, multipliers)`` with the convention ``L = f - Σ λᵀ g`` for ``g ≥ 0`` (a
        minimisation); a free multiplier may carry the opposite sign.
    kkt : KKTConditions or list, optional
        Your KKT system: :class:`~primaldual.model.Constraint` objects (stationarity,
        primal and dual feasibility, affine in the primal variables and the multipliers) and
        complementarity pairs ``(multiplier, expression)``.
    recover : callable, optional
        ``dual values (dict) -> primal values (dict)``; compared with
        ``Derivation.recover`` at the dual optimum (CVXPY).
    mapping : dict, optional
        Your names -> the derived names (``{"a": "alpha"}``).
    tol : float
        Relative tolerance of every numeric comparison.
    seed : int
        Seed of the random sample points.

    Returns
    -------
    DerivationReport
        ``ok``, ``first`` (the first piece that differs) and ``str()`` the report.
    """
    if not isinstance(primal, Problem):
        if hasattr(primal, "primal") and isinstance(primal.primal, Problem):
            primal = primal.primal
        else:
            raise TypeError(f"primal must be a Problem, got {type(primal).__name__}")
    if dual is not None and not isinstance(dual, Problem):
        if hasattr(dual, "dual") and isinstance(dual.dual, Problem):
            dual = dual.dual
        else:
            raise TypeError(f"dual must be a Problem, got {type(dual).__name__}")
    if not (tol > 0):
        raise ValueError(f"tol must be positive, got {tol!r}")
    mapping = dict(mapping or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise TypeError("mapping must map names (str) to names (str)")
    if dual is None and lagrangian is None and kkt is None and recover is None:
        raise ValueError("nothing to check: give dual=, lagrangian=, kkt= or recover=")
    rng = np.random.default_rng(seed)
    report = DerivationReport(repr(primal.name))
    der = dualize(primal) if (dual is not None or recover is not None) else None
    if lagrangian is not None:
        _check_lagrangian(primal, lagrangian, mapping, tol, rng, report)
    if kkt is not None:
        _check_kkt(primal, kkt, mapping, tol, rng, report)
    aligned = None
    if dual is not None:
        aligned = _check_dual(der, dual, mapping, tol, rng, report)
    if recover is not None:
        if dual is not None and aligned is None:
            report.pieces.append(Piece("recovery", "not checked: your dual's variables could "
                                       "not be aligned", False))
        else:
            _check_recover(der, recover, aligned, tol, report)
    return report


def assert_derivation(primal: Problem, dual: Problem | None = None, lagrangian: Any = None,
                      kkt: Any = None, **kwargs: Any) -> DerivationReport:
    """:func:`check_derivation`, raising ``AssertionError`` with the report as its message
    when a piece differs (for pytest); returns the report otherwise."""
    rep = check_derivation(primal, dual, lagrangian, kkt, **kwargs)
    if not rep.ok:
        raise AssertionError(str(rep))
    return rep
