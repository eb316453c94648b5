"""Mechanical Lagrangian dual of a convex primal (docs/formulations.md sign convention): QP
blocks, and blocks whose term has a known convex conjugate (l1 and l-inf norms, the logistic
and Huber losses).

Supported primal (``sense="min"``)::

    min   sum_v q_v(x_v) + m^T x + const
    s.t.  g_c(x) = sum_v M_{c,v} (G_v x_v) + g0_c  >= 0  or == 0     [lambda_c]

with ``q_v`` a PSD quadratic of one block: ``c ||w||^2`` of a feature-space variable
(``G_w = K``, the representer form) or of a plain variable, ``c sum_i (d_i x_i)^2``
(``sum_squares`` of a single scaled variable) or ``c x^T P x`` (``quad_form``), or a PSD
quadratic over several plain variables, ``c ||M z + m0||^2`` with ``z = (w, b)`` stacked (the
twin SVM's ``1/2 ||A w + b||^2``), eliminated jointly as one block. The Lagrangian is
``L = f - sum_c lambda_c^T g_c`` and each block's linear coefficient is
``r_v(lambda) = m_v - sum_c M_{c,v}^T lambda_c``.

Per block the derivation does what one does on a board:

* quadratic, positive definite ``q_v``: ``dL/dx_v = H_v x_v + r_v = 0`` gives
  ``x_v = -H_v^{-1} r_v`` (feature space: ``w = sum_j beta_j phi(z_j)``,
  ``beta = -r_w / (2c)``) and contributes ``-1/2 r_v^T H_v^{-1} r_v`` to the dual
  (``-(1/(4c)) r_w^T K r_w``); plain variables coupled by a quadratic term are one block
  ``z`` with ``H = Σ 2c MᵀM`` (its Cholesky factor ``L``: ``Q`` gains the linear kernel on the
  columns of ``L⁻¹ A_z``), refused when ``H`` is singular (the message names the twin SVM's
  regulariser ``eps/2 ||z||^2``);
* linear only: ``r_v(lambda) = 0`` becomes an equality on the multipliers, written
  ``sum_c M_{c,v}^T lambda_c = m_v`` (``y^T alpha = 0``) with multiplier ``nu = -x_v``;
* linear only with its own sign constraint ``D x_v >= 0 [mu]``: ``r_v - D mu = 0`` and
  ``mu >= 0`` fold into ``sum_c M_{c,v}^T lambda_c <= m_v`` (``alpha <= C``), whose multiplier
  is ``x_v`` itself (``xi``);
* a term with a known conjugate, ``c l(s x_v + c0)`` entry by entry: ``inf_x`` gives
  ``-c sum_i l^*(t_i) - sum_i r_i c0_i / s_i`` with ``t = -r_v / (c s)``: ``l^* = -H`` (binary
  entropy, ``0 <= t <= 1``) for the logistic loss, ``t^2/2`` on ``|t| <= delta`` for Huber's,
  the indicator of ``|t| <= 1`` for ``|.|`` (norm1) and of ``||t||_1 <= 1`` for norm_inf. A loss
  of an affine argument is first written on a variable ``u = e [lambda]`` of its own.

The dual is ``max D(lambda) = const - sum_c g0_c^T lambda_c - 1/2 sum_v r_v^T H_v^{-1} r_v``
subject to the equalities, folded bounds and ``lambda_c >= 0`` on inequality multipliers.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import DualizationError
from .ball_radius import substitute_radius
from .derivation import Derivation, Step
from .placeholders import Deferred, make_env
from .problem import Problem
from .reduce_assemble import assemble_dual
from .reduce_classify import classify_blocks
from .reduce_entries import split_entry_variables
from .reduce_layout import layout_multipliers
from .reduce_signs import multiplier_signs
from .reduce_state import DualizeState
from .reduce_stationarity import stationarity_per_block
from .rewrite import _introduce_loss_variables

__all__ = ["CHAIN", "Derivation", "DualizationError", "Step", "dualize"]


class _SymbolicKernel:
    """The template's kernel: an RBF kernel that prints as ``k`` (the user's kernel comes with
    ``bind``)."""

    def __init__(self) -> None:
        from ..kernels import make_kernel
        self._k = make_kernel("rbf", gamma=0.5)

    def __call__(self, A, B=None):
        return self._k(A, B)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_k":
            raise AttributeError(name)
        return getattr(self._k, name)

    def __repr__(self) -> str:
        return "k"


def _dualize_spec(spec: Deferred, name: str | None) -> Derivation:
    """``dualize`` of a placeholder spec: derived on a small template data set (7 points in
    2-D, labels ±1, every parameter 1) whose numbers never reach the text, since the spec
    names its data by symbols."""
    rng = np.random.default_rng(0)
    n = 7
    env = make_env(rng.standard_normal((n, 2)), np.where(np.arange(n) % 2 == 0, 1.0, -1.0),
                   _SymbolicKernel(), {p: 1.0 for p in spec.params})
    primal = spec.resolve(env)
    if not isinstance(primal, Problem):
        raise TypeError(f"dualize: the spec records a {type(primal).__name__}, not a Problem")
    der = dualize(primal, name=name)
    der._spec = spec
    return der


# ---------------------------------------------------------------------- main entry
#: the reductions after the loss variables and the Lagrangian, in order; each takes and returns
#: the :class:`~primaldual.model.reduce_state.DualizeState` and records its steps
CHAIN = (classify_blocks, layout_multipliers, stationarity_per_block, multiplier_signs,
         assemble_dual)


def dualize(primal: Problem, *, name: str | None = None) -> Derivation:
    """Derive the Lagrangian dual of a convex ``primal`` mechanically.

    Parameters
    ----------
    primal : Problem or placeholder spec
        A minimisation whose objective is a sum of PSD quadratic blocks (``norm2`` of a feature or
        plain variable, ``sum_squares`` or ``norm2`` of an affine expression of plain
        variables, ``quad_form``), norms
        (``norm1``, ``vsum(c * abs(x))``, ``norm_inf``) and losses (``logistic``, ``huber``) of
        one block each, and linear terms, with affine constraints (or an upper bound on
        ``norm2(phi(X) - a)``) owning named multipliers.
    name : str, optional
        Name of the dual Problem (default: the primal's name with "primal" replaced by
        "dual (derived)").

    Returns
    -------
    Derivation
        ``.dual`` (a maximisation over the multipliers; with the box-QP or LS-SVM shape, SMO or
        the KKT backend detects it from the problem itself), ``.steps``,
        ``.recover(dual_solution)``. For a spec written on data placeholders
        (``primaldual.model``: ``X``, ``y``, ``N``, ``d``, ``Param``, ``FeatureVariable("w")``
        without a kernel) the derivation is made without the user's data (on a small internal
        template, so its text and LaTeX carry only the spec's symbols; ``.bound`` is False) and
        ``.bind(X=..., y=..., kernel=..., params={...})`` returns the derivation bound to a data
        set: its dual forms no ``N x N`` array (``Q`` is a kernel operator), so binding costs
        O(N) work besides the data's own size.

    Raises
    ------
    DualizationError
        A term without a known conjugate (an entropy), a nonconvex quadratic, a quadratic
        coupling a feature-space block with others, a singular quadratic block (alone or
        joint), or a feature-space block that appears only linearly.
    """
    if isinstance(primal, Deferred):
        return _dualize_spec(primal, name)
    if not isinstance(primal, Problem):
        raise TypeError(f"primal must be a Problem, got {type(primal).__name__}")
    if primal.sense != "min":
        raise DualizationError("dualize needs a minimisation primal (sense='min'); write "
                               "max f as min -f")
    steps: list[Step] = [Step("Primal", str(primal), primal.to_latex())]
    primal, entries = split_entry_variables(primal, steps)
    primal, ball = substitute_radius(primal)
    if ball is not None:
        t, x = ball.note()
        steps.append(Step(f"Substitute {t} (each squared distance row becomes affine)",
                          str(primal), rf"{x}:\quad " + primal.to_latex()))
    primal = _introduce_loss_variables(primal, steps)
    obj = primal.objective
    lag = primal.lagrangian()
    steps.append(Step("Lagrangian (L = f - Σ λ g, λ ≥ 0 on inequalities)", str(lag),
                      lag.to_latex()))

    s = DualizeState(primal, steps, name, obj=obj)
    for reduction in CHAIN:
        reduction(s)
    s.der._derive = dualize     # Derivation.bind derives again on bound data (no import back)
    s.der._entries = entries    # vectors split into scalar entries, given back by recover
    s.der._ball = ball          # R^2 = s + ||a||^2, given back by recover
    return s.der
