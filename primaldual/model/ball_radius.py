"""The ball's radius substitution, an apply/invert pair: a primal that bounds squared distances
``||phi(x) - a||^2`` from below as well as from above (Tax & Duin's SVDD with negative
examples, as printed) becomes convex in ``(a, s)`` with ``s = R^2 - ||a||^2``.

As printed (targets ``i``, negatives ``l``)::

    min  R^2 + C_1 Σ_i ξ_i + C_2 Σ_l ξ_l
    s.t. ||φ(x_i) - a||^2 <= R^2 + ξ_i,   ||φ(x_l) - a||^2 >= R^2 - ξ_l,   ξ >= 0

the negatives' rows are the superlevel set of a convex function (nonconvex). Expanding
``||φ(x) - a||^2 = k(x, x) - 2 <a, φ(x)> + ||a||^2`` and substituting ``R^2 = s + ||a||^2``
cancels ``||a||^2`` in every row whose ``R^2`` coefficient is the negative of its ``||a||^2``
coefficient (in ``g >= 0`` form: ``+1`` on ``R^2`` where the distance enters with ``-1``, and
the reverse), so the rows become affine,
``k(x_i, x_i) - 2 <a, φ(x_i)> <= s + ξ_i`` and ``k(x_l, x_l) - 2 <a, φ(x_l)> >= s - ξ_l``, and
the objective ``c R^2 + ...`` becomes ``c s + c ||a||^2 + ...`` (convex for ``c > 0``). The
change of variables is one to one, so the multipliers of every row are those of the printed
problem; :meth:`BallRadius.invert` gives the user's ``R^2 = s + ||a||^2`` back.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .atoms import norm2
from .expr import Constraint, Expr
from .leaves import FeatureVariable, Variable
from .problem import Problem

__all__ = ["BallRadius", "substitute_radius"]


@dataclass
class BallRadius:
    """The substitution ``R^2 = s + ||a||^2``: ``radius`` (the user's ``R^2``), ``s`` (the new
    variable), ``centre`` (the feature-space ``a``)."""

    radius: Variable
    s: Variable
    centre: FeatureVariable

    def invert(self, point: dict[str, Any]) -> dict[str, np.ndarray]:
        """``point`` (values of the substituted problem's variables) with the user's
        ``R^2 = s + ||a||^2`` added (``||a||^2 = βᵀ K β`` for ``a = Σ_j β_j φ(z_j)``)."""
        out = dict(point)
        beta = np.asarray(point[self.centre.name], dtype=float).ravel()
        s = float(np.ravel(point[self.s.name])[0])
        out[self.radius.name] = np.array([s + float(beta @ self.centre.gram_matvec(beta))])
        return out

    def note(self) -> tuple[str, str]:
        """The substitution as one printed line (text, LaTeX)."""
        r, s, a = self.radius, self.s, self.centre
        return (f"{r.txt} = {s.txt} + ‖{a.txt}‖²", rf"{r.tex} = {s.tex} + \|{a.tex}\|^2")


def _col(M: Any, size: int) -> np.ndarray:
    """A scalar variable's coefficient column over ``size`` rows."""
    D = M.toarray() if sp.issparse(M) else np.asarray(M, dtype=float)
    return np.broadcast_to(np.atleast_2d(D).reshape(-1, 1)[:, 0] if D.size else D,
                           (size,)).astype(float)


def _find(problem: Problem) -> tuple[Variable, FeatureVariable]:
    """The ball's ``R^2`` and centre ``a`` of a problem with a row bounding a squared distance
    from below, or a ``TypeError`` naming what is missing."""
    balls = [c for c in problem.constraints if c.g.rq]
    centres = {v for c in balls for v in c.g.rq}
    if len(centres) != 1:
        raise TypeError("a squared distance bounded from below is made convex by the ball's "
                        "substitution R^2 = s + ||a||^2 for one centre a; the rows measure "
                        f"distances to {sorted(v.name for v in centres)}")
    a, = centres
    shape = ("every row ||phi(x_i) - a||^2 <= R2 + xi_i and ||phi(x_l) - a||^2 >= R2 - "
             "xi_l, with coefficient +1 on R2 on the side opposite the distance")
    cands = None
    for c in balls:
        q = np.broadcast_to(np.asarray(c.g.rq[a], dtype=float), (c.size,))
        ok = {v for v, M in c.g.lin.items() if not v.feature and v.scalar
              and np.allclose(_col(M, c.size), -q, rtol=0, atol=1e-12)}
        cands = ok if cands is None else cands & ok
    if not cands:
        raise TypeError(
            "a squared distance ||phi(x_l) - a||^2 bounded from below (SVDD's negatives) is "
            "convex only after substituting R^2 = s + ||a||^2, which needs the ball's radius: "
            f"one scalar variable R2 in {shape}; no scalar variable enters every "
            "squared-distance row that way (a lower bound with no ball variable is "
            "nonconvex)")
    if len(cands) > 1:
        raise TypeError("the ball's radius is ambiguous: the variables "
                        f"{sorted(v.name for v in cands)} all enter {shape}")
    r, = cands
    return r, a


def _check_objective(problem: Problem, r: Variable) -> float:
    obj = problem.objective
    if any(r is u for t in obj.terms for u in t.variables):
        raise TypeError(f"the ball's radius {r.name!r} enters the objective nonlinearly; the "
                        f"substitution {r.name} = s + ||a||^2 (which makes the squared-distance "
                        f"rows affine) needs the objective linear in {r.name}")
    c0 = float(_col(obj.lin[r], 1)[0]) if r in obj.lin else 0.0
    if problem.sense != "min" or c0 <= 0:
        raise TypeError(f"the ball's radius {r.name!r} must be minimised with a positive "
                        f"coefficient (min {r.name} + ...): after {r.name} = s + ||a||^2 the "
                        f"objective carries {c0:g} ||a||^2, convex only for a positive one")
    return c0


def _sub_side(e: Expr, r: Variable, s: Variable, a: FeatureVariable) -> Expr:
    """``e`` with ``R^2`` replaced by ``s`` and each ``q_i ||phi(x_i) - a||^2`` by its
    expansion without ``||a||^2`` (``k(x_i, x_i) - 2 <a, phi(x_i)>``), in numbers and text."""
    if r not in e.lin and a not in e.rq:
        return e
    out = copy.copy(e)
    out.lin, out.ctx = dict(e.lin), dict(e.ctx)
    out.summed, out.rq, out.rq_txt = set(e.summed), dict(e.rq), dict(e.rq_txt)
    txt, tex = e.txt, e.tex
    if a in out.rq:
        t, x = out.rq_txt.pop(a)
        del out.rq[a]
        arg, argx = t[t.find("(") + 1:-1], x[x.find("(") + 1:-1]
        et, ex = f"‖{t} - {a.txt}‖²", rf"\|{x} - {a.tex}\|^2"
        nt = f"k({arg}, {arg}) - 2 ⟨{a.txt}, {t}⟩"
        nx = rf"k({argx}, {argx}) - 2 \langle {a.tex}, {x} \rangle"
        alone = txt == et
        txt = txt.replace(et, nt if alone else f"({nt})")
        tex = tex.replace(ex, nx if alone else rf"\left({nx}\right)")
    if r in out.lin:
        out.lin[s] = out.lin.pop(r)
        if r in out.ctx:
            out.ctx[s] = out.ctx.pop(r)
        if r in out.summed:
            out.summed.discard(r)
            out.summed.add(s)
        txt, tex = txt.replace(r.txt, s.txt), tex.replace(r.tex, s.tex)
    out.txt, out.tex = txt, tex
    return out


def substitute_radius(problem: Problem) -> tuple[Problem, BallRadius | None]:
    """Apply ``R^2 = s + ||a||^2`` to a problem with a row bounding a squared distance from
    below (:attr:`Constraint.below_ball`); ``(problem, None)`` when it has none.

    Returns the problem in ``(a, s)`` (every row affine, the objective ``c s + c ||a||^2 +
    ...``; the same multiplier names) and the :class:`BallRadius` whose ``invert`` gives
    ``R^2`` back. Raises ``TypeError`` naming what is missing when the pattern does not hold:
    no common scalar ``R^2`` with coefficient ``+1`` opposite every distance, ``R^2`` in the
    objective nonlinearly or not minimised, distances to several centres, or a row on ``R^2``
    without a distance (``R^2 >= 0`` becomes ``s + ||a||^2 >= 0``, nonconvex).
    """
    if not any(getattr(c, "below_ball", False) for c in problem.constraints):
        return problem, None
    r, a = _find(problem)
    c0 = _check_objective(problem, r)
    for c in problem.constraints:
        if r in c.g.lin and not c.g.rq:
            raise TypeError(
                f"the row {c.txt()!r} bounds the ball's radius {r.name!r} without a squared "
                f"distance: after {r.name} = s + ||a||^2 (which makes SVDD's rows with "
                "negative examples affine) it bounds s + ||a||^2, a nonconvex set when bounded "
                f"from below; Tax & Duin's SVDD has no {r.name} >= 0 row: drop it")
    names = {v.name for v in problem.variables} | set(problem.multipliers)
    s_name = next(n for n in ("s", "s_R", "s_ball", "s_0") if n not in names)
    s = Variable(s_name)
    cons = []
    for c in problem.constraints:
        if r not in c.g.lin and a not in c.g.rq:
            cons.append(c)
            continue
        c2: Constraint = copy.copy(c)
        c2.lhs, c2.rhs = _sub_side(c.lhs, r, s, a), _sub_side(c.rhs, r, s, a)
        c2.g = _sub_side(c.g, r, s, a)
        c2.below_ball = False
        cons.append(c2)
    obj = _sub_side(problem.objective, r, s, a)
    na = norm2(a)
    new = obj + c0 * na
    head = f"{s.txt} + {na.txt}" if c0 == 1.0 else f"{c0:g} ({s.txt} + {na.txt})"
    headx = f"{s.tex} + {na.tex}" if c0 == 1.0 else rf"{c0:g} \left({s.tex} + {na.tex}\right)"
    # the objective as printed with R^2 replaced by s + ||a||^2 in place
    st = problem.objective.txt
    new.txt = st.replace(r.txt, head, 1) if st.startswith(r.txt) else f"{obj.txt} + {c0:g} {na.txt}"
    sx = problem.objective.tex
    new.tex = sx.replace(r.tex, headx, 1) if sx.startswith(r.tex) else \
        f"{obj.tex} + {c0:g} {na.tex}"
    variables = [s if v is r else v for v in problem.variables]
    out = Problem(new, cons, problem.sense, problem.name, variables=variables)
    return out, BallRadius(r, s, a)
