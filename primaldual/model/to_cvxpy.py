"""Compile a Problem to ``cvxpy.Problem`` and read the multipliers back.

Feature-space variables compile through a factor of the Gram matrix: with ``K = L L^T``
(:func:`~primaldual.model.gram.psd_factor`: pivoted Cholesky, only round-off dropped),
the CVXPY variable is ``u = L^T beta`` (``r = rank K`` entries), so ``||w||^2 = ||u||^2`` and
``<w, phi(x_i)> = (K beta)_i = (L u)_i``: no ``quad_form`` on a dense matrix that could fail
CVXPY's PSD check, and a linear kernel gives an ``n_features``-dimensional problem. ``beta`` is
read back as ``L (L^T L)^+ u``, the minimum-norm representer of the same ``w``.

Multiplier signs: CVXPY's dual value of ``g >= 0`` is our ``lambda >= 0``; of ``h == 0`` it is
``-nu`` (CVXPY's Lagrangian adds ``nu h``, ours subtracts it). Maximisations are compiled as
``Minimize(-f)`` so only CVXPY's minimisation convention is relied upon.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from .ball_radius import substitute_radius
from .expr import Expr
from .gram import psd_factor
from .leaves import Variable
from .problem import Problem
from .terms import (
    FeatureNorm,
    Huber,
    Norm1,
    NormInf,
    QuadForm,
    SumBinaryEntropy,
    SumEntropy,
    SumLogistic,
    SumSquares,
)


@dataclass
class Compiled:
    """A compiled problem: the CVXPY problem plus the maps back to our names."""

    cvx: cp.Problem
    variables: dict[str, cp.Variable]
    constraints: dict[str, cp.Constraint]
    feature_maps: dict[str, np.ndarray] = field(default_factory=dict)  # name -> beta = T @ u

    def values(self) -> dict[str, np.ndarray]:
        """The variables' values by name (a feature variable's ``beta = T u``); a variable
        CVXPY left without a value is absent."""
        vals = _read(self.variables, lambda v: v.value)
        return {k: self.feature_maps[k] @ v if k in self.feature_maps else v
                for k, v in vals.items()}

    def multipliers(self) -> dict[str, np.ndarray]:
        """The multipliers by name, in our sign convention (an equality's is minus CVXPY's)."""
        eq = (cp.constraints.Zero, cp.constraints.Equality)
        return {k: -v if isinstance(self.constraints[k], eq) else v
                for k, v in _read(self.constraints, lambda c: c.dual_value).items()}


def _read(items: dict[str, Any], get: Any) -> dict[str, np.ndarray]:
    """``get(item)`` of each named CVXPY object as a flat float vector, skipping ``None``."""
    out = {}
    for name, obj in items.items():
        v = get(obj)
        if v is not None:
            out[name] = np.atleast_1d(np.asarray(v, dtype=float)).ravel()
    return out


class _Ctx:
    def __init__(self, problem: Problem) -> None:
        self.vars: dict[Variable, Any] = {}
        self.L: dict[Variable, np.ndarray] = {}
        self.T: dict[str, np.ndarray] = {}
        self.links: list[Any] = []      # auxiliary variables' defining equalities
        for v in problem.variables:
            if v.feature:
                try:
                    L = psd_factor(v.gram())
                except ValueError as exc:
                    raise ValueError(f"the kernel of {v.name!r} is not positive semidefinite: "
                                     f"{exc}") from exc
                self.L[v] = L
                # u = L^T beta; the minimum-norm representer of the same w is L (L^T L)^-1 u
                G = L.T @ L
                self.T[v.name] = L @ np.linalg.pinv(G, hermitian=True)
                self.vars[v] = cp.Variable(L.shape[1], name=v.name)
            else:
                self.vars[v] = cp.Variable(v.size, name=v.name)

    def affine(self, e: Expr):
        terms = []
        for v, M in e.lin.items():
            x = self.vars[v]
            if v.feature:
                ML = M @ self.L[v]
                terms.append(np.asarray(ML) @ x)
            elif sp.issparse(M) and M.shape[0] == M.shape[1] and M.nnz == M.shape[0] and \
                    np.all(M.diagonal() == 1.0):
                terms.append(x)
            else:
                terms.append((M if sp.issparse(M) else np.asarray(M)) @ x)
        out = e.const if e.const.shape[0] == e.size else np.broadcast_to(e.const, (e.size,))
        expr = cp.Constant(np.array(out))
        for t in terms:
            expr = expr + t
        for v, q in e.rq.items():   # q_i ||v||^2 rows (q <= 0 in a constraint g >= 0)
            expr = expr + cp.multiply(np.broadcast_to(q, (e.size,)).copy(),
                                      cp.sum_squares(self.vars[v]))
        return expr

    def _combination(self, op: Any, x: Any) -> Any:
        """``xᵀ(Bᵀ K B + diag d)x`` of a combination-form operator (the RBF ranking SVM's
        pair differences, ``B`` sparse ``N x P``) on the basis points' scores ``v = B x``, a
        variable of its own linked once by ``v == B x``: ``||Lᵀv||²`` with ``K = L Lᵀ``,
        ``N r + nnz(B)`` non-zeros for the solver instead of the dense ``P x r`` factor rows."""
        L = psd_factor(np.asarray(op.kernel(op.X), dtype=float))
        v = cp.Variable(L.shape[0], name="combination_scores")
        self.links.append(v == op.coef @ x)
        q = cp.sum_squares(L.T @ v)
        d = np.asarray(op.diag, dtype=float)
        if np.any(d != 0):
            q = q + cp.sum(cp.multiply(d, cp.square(x)))
        return q

    def term(self, t) -> Any:
        if isinstance(t, FeatureNorm):
            return t.coef * cp.sum_squares(self.vars[t.w])
        if isinstance(t, SumSquares):
            return t.coef * cp.sum_squares(self.affine(t.e))
        if isinstance(t, QuadForm):
            x = self.vars[t.x]
            Z = t.op.linear_factor() if hasattr(t.op, "linear_factor") else None
            if Z is not None and np.all(np.asarray(t.op.diag) >= 0):
                # Q = Z Zᵀ + diag(d): the features themselves, no n x n factor
                q = cp.sum_squares(Z.T @ x)
                d = np.asarray(t.op.diag, dtype=float)
                if np.any(d != 0):
                    q = q + cp.sum(cp.multiply(d, cp.square(x)))
                return t.coef * q
            B = getattr(t.op, "coef", None)
            if B is not None and np.all(np.asarray(t.op.diag) >= 0):
                return t.coef * self._combination(t.op, x)
            L = t.op.factor()
            return t.coef * cp.sum_squares(L.T @ x)
        if isinstance(t, Norm1):
            x = self.affine(t.e)
            if t.weights is not None:
                x = cp.multiply(t.weights, x)
            return t.coef * cp.norm1(x)
        if isinstance(t, NormInf):
            return t.coef * cp.norm_inf(self.affine(t.e))
        if isinstance(t, SumLogistic):
            loss = cp.logistic(self.affine(t.e))
            if t.weights is not None:
                loss = cp.multiply(t.weights, loss)
            return t.coef * cp.sum(loss)
        if isinstance(t, Huber):   # cp.huber(x, M) is 2 h_M(x)
            return 0.5 * t.coef * cp.sum(cp.huber(self.affine(t.e), t.delta))
        if isinstance(t, SumBinaryEntropy):
            x = self.affine(t.e)
            h = cp.entr(x) + cp.entr(1 - x)
            if t.weights is not None:
                h = cp.multiply(t.weights, h)
            return t.coef * cp.sum(h)
        if isinstance(t, SumEntropy):
            return t.coef * cp.sum(cp.entr(self.affine(t.e)))
        raise TypeError(f"no CVXPY compilation for term {type(t).__name__}")


def to_cvxpy(problem: Problem) -> Compiled:
    """Compile ``problem`` (must be convex: DCP) to a :class:`Compiled` CVXPY problem.

    A problem bounding a squared distance from below (SVDD with negatives as printed) is
    compiled in ``(a, s)`` after the ball's substitution ``R^2 = s + ||a||^2``
    (:func:`~primaldual.model.ball_radius.substitute_radius`); the user's ``R^2`` is read back
    as the CVXPY expression ``s + ||u_a||^2`` (``||a||^2 = ||u_a||^2``), with ``s`` beside it.
    """
    if not problem.is_convex:
        raise ValueError(f"problem {problem.name!r} is not convex for sense={problem.sense!r}")
    problem, ball = substitute_radius(problem)
    ctx = _Ctx(problem)
    obj = problem.objective
    f = ctx.affine(Expr(1, True, obj.lin, obj.const, [], "", "", 0))[0]
    for t in obj.terms:
        f = f + ctx.term(t)
    cons = {}
    for c in problem.constraints:
        g = ctx.affine(c.g)
        cons[c.multiplier] = (g == 0) if c.equality else (g >= 0)
    # a maximisation is compiled as the minimisation of -f: the multipliers of max f (with
    # L = f + sum lambda g) equal those of min -f (with L = -f - sum lambda g), and CVXPY's
    # sign convention is only relied upon for Minimize.
    cvx = cp.Problem(cp.Minimize(f if problem.sense == "min" else -f),
                     list(cons.values()) + ctx.links)
    variables = {v.name: x for v, x in ctx.vars.items()}
    if ball is not None:
        variables[ball.radius.name] = variables[ball.s.name] + cp.sum_squares(
            ctx.vars[ball.centre])
    return Compiled(cvx, variables, cons, ctx.T)
