"""The quadratic program read from a Problem for an interior-point solver called directly:

    ``min 1/2 zᵀ P z + qᵀ z``  s.t.  ``A z + s = b``, ``s`` in the zero cone (equality rows)
    then the nonnegative cone (inequality rows),

over the stacked plain variables ``z`` (a maximisation is read as the minimisation of its
negative). The objective may hold a linear part and convex ``sum_squares`` of affine
expressions, ``x^T Q x`` quadratic forms (a ``GramOperator`` or a matrix) and ``||x||^2`` of plain
variables; constraints are affine. Feature-space variables and every other term are refused
with the condition that failed, so the backend choice moves on.

Multipliers (the library's convention for the min form, ``∇f = Σ_c λ_cᵀ ∇g_c``, ``λ >= 0`` on
``g >= 0``): a row ``G z + g0 >= 0`` enters as ``-G z + s = g0``, ``s >= 0``, and the solver's
dual ``y >= 0`` of ``P z + q + Aᵀ y = 0`` is ``λ = y``; a row ``G z + g0 = 0`` enters as
``G z + s = -g0``, ``s = 0``, and ``μ = -y``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ...model.terms import FeatureNorm, QuadForm, SumSquares

#: the largest block of a quadratic form written out densely (its N x N entries go to the
#: solver's sparse factorisation; larger problems belong to SMO or the low-rank route)
MAX_DENSE_BLOCK = 4000


@dataclass
class QPForm:
    """The arrays of the QP and how to map the solution back to the Problem's names:
    ``variables`` lists ``(name, offset, size)``, ``rows`` maps each constraint's multiplier
    to ``(kind, start, size)`` with ``kind`` ``"eq"`` or ``"ineq"`` (starts counted in the
    stacked rows, equalities first)."""

    P: sp.csc_matrix
    q: np.ndarray
    A: sp.csc_matrix
    b: np.ndarray
    n_eq: int
    sign: float
    variables: list   # (name, offset, size) of each variable
    rows: dict        # constraint multiplier -> (kind, start, size)

    def values(self, z: np.ndarray) -> dict[str, np.ndarray]:
        return {name: z[o:o + s].copy() for name, o, s in self.variables}

    def multipliers(self, y: np.ndarray) -> dict[str, np.ndarray]:
        out = {}
        for name, (kind, start, size) in self.rows.items():
            part = y[start:start + size]
            out[name] = -part.copy() if kind == "eq" else np.maximum(0.0, part)
        return out


def _linear(e: Any, where: dict, n: int) -> sp.csr_matrix:
    """The linear part of ``e`` as a CSR matrix over the stacked variables."""
    if getattr(e, "rq", None):
        raise ValueError("a squared distance ||phi(x) - a||^2 appears (a feature-space term)")
    blocks = []
    for v, M in e.lin.items():
        if v not in where:
            raise ValueError(f"it involves {v.name!r}, which is not one of the problem's variables")
        if getattr(M, "cross", False) or not (sp.issparse(M) or isinstance(M, np.ndarray)):
            raise ValueError("an affine map is not a matrix (a kernel expansion)")
        S = sp.csr_matrix(M, dtype=float)
        if S.shape[0] == 1 and e.size > 1:
            S = sp.csr_matrix(np.ones((e.size, 1))) @ S
        blocks.append((where[v], S))
    out = sp.csr_matrix((e.size, n))
    for off, S in blocks:
        pad = sp.hstack([sp.csr_matrix((e.size, off)), S,
                         sp.csr_matrix((e.size, n - off - S.shape[1]))]).tocsr()
        out = out + pad
    return out


def _const(e: Any) -> np.ndarray:
    return np.broadcast_to(np.asarray(e.const, dtype=float), (e.size,)).copy()


def _quadratic(terms, sgn: float, where: dict, n: int):
    """``(P, q, c)`` of the objective's terms: ``sgn * Σ terms = 1/2 zᵀPz + qᵀz + c``."""
    P = sp.csr_matrix((n, n))
    q = np.zeros(n)
    c = 0.0
    for t in terms:
        coef = sgn * t.coef
        if coef < 0:
            raise ValueError(f"a {type(t).__name__} term enters with the concave sign")
        if isinstance(t, SumSquares):
            E = _linear(t.e, where, n)
            e0 = _const(t.e)
            P = P + 2.0 * coef * (E.T @ E)
            q += 2.0 * coef * np.asarray(E.T @ e0).ravel()
            c += coef * float(e0 @ e0)
        elif isinstance(t, QuadForm):
            x = t.x
            if x not in where or getattr(x, "feature", False):
                raise ValueError("a quadratic form is not on a plain problem variable")
            if x.size > MAX_DENSE_BLOCK:
                raise ValueError(f"a quadratic form of {x.size} variables (> {MAX_DENSE_BLOCK}) "
                             "would be written out densely")
            Q = np.asarray(t.op.dense(), dtype=float)
            off = where[x]
            P = P + 2.0 * coef * sp.csr_matrix(
                (Q.ravel(), (np.repeat(np.arange(off, off + x.size), x.size),
                             np.tile(np.arange(off, off + x.size), x.size))), shape=(n, n))
        elif isinstance(t, FeatureNorm) and not getattr(t.w, "feature", False) \
                and t.w in where:
            off = where[t.w]
            idx = np.arange(off, off + t.w.size)
            P = P + 2.0 * coef * sp.csr_matrix((np.ones(idx.size), (idx, idx)), shape=(n, n))
        else:
            raise ValueError(f"its objective has a {type(t).__name__} term (not a convex "
                         "quadratic)")
    return P, q, c


def read_qp(problem: Any) -> QPForm:
    """The :class:`QPForm` of ``problem``, or :class:`ValueError` naming the condition that
    fails."""
    sense = getattr(problem, "sense", None)
    if sense not in ("min", "max"):
        raise ValueError("it has no min/max sense")
    blocks = list(problem.variables)
    if any(getattr(v, "feature", False) for v in blocks):
        raise ValueError("it has a feature-space variable (write the kernel matrix as data)")
    sgn = 1.0 if sense == "min" else -1.0
    offsets = np.cumsum([0] + [v.size for v in blocks]).tolist()
    where = {v: offsets[k] for k, v in enumerate(blocks)}
    n = offsets[-1]
    obj = problem.objective
    if not obj.terms:
        raise ValueError("its objective is linear (the LP route's shape)")
    P, q, _ = _quadratic(obj.terms, sgn, where, n)
    q = q + sgn * np.asarray(_linear(obj, where, n).toarray()).ravel()
    eq_A, eq_b, in_A, in_b = [], [], [], []
    kinds: dict[str, tuple[str, int]] = {}
    for con in problem.constraints:
        G = _linear(con.g, where, n)
        g0 = _const(con.g)
        if con.equality:
            eq_A.append(G)
            eq_b.append(-g0)
            kinds[con.multiplier] = ("eq", con.size)
        else:
            in_A.append(-G)
            in_b.append(g0)
            kinds[con.multiplier] = ("ineq", con.size)
    n_eq = int(sum(a.shape[0] for a in eq_A))
    rows, start_eq, start_in = {}, 0, n_eq
    for name, (kind, size) in kinds.items():
        if kind == "eq":
            rows[name] = (kind, start_eq, size)
            start_eq += size
        else:
            rows[name] = (kind, start_in, size)
            start_in += size
    A = sp.vstack(eq_A + in_A).tocsc() if eq_A or in_A else sp.csc_matrix((0, n))
    b = np.concatenate(eq_b + in_b) if eq_b or in_b else np.zeros(0)
    P = sp.triu(0.5 * (P + P.T)).tocsc()
    return QPForm(P, q, A, b, n_eq, sgn, [(v.name, offsets[k], v.size)
                                           for k, v in enumerate(blocks)], rows)
