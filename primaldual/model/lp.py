"""Linear programs read from a Problem (issue 28): the record the HiGHS backend solves.

:func:`read_lp` reads ``min cᵀz + Σ_k coef_k Σ_i w_ki |E_k z + e_k|_i`` (a maximisation is
read as the minimisation of its negative) over the stacked plain variables ``z`` subject to the
Problem's affine constraints ``G z + g0 >= 0`` / ``= 0``. Each ``norm1`` term (``coef > 0``)
becomes ``Σ w t`` with ``t >= ±(E z + e)`` (an epigraph variable per entry), so the record is a
plain LP ``min c'ᵀx`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq`` (free variables) for
``scipy.optimize.linprog(method="highs")``. LP-SVR (``||β||₁`` with a kernel matrix as data),
the 1-norm SVM and other L1-regularised variants have this shape; anything with a quadratic or
smooth nonlinear term, or a feature-space variable, does not.

Multipliers (the Problem's convention, ``∇f = Σ_c λ_cᵀ ∇g_c`` for the min form, ``λ >= 0`` on
``g >= 0``): a row ``G z + g0 >= 0`` enters as ``-G z <= g0``, whose HiGHS marginal is
``∂f*/∂b_ub = -λ``; a row ``G z + g0 = 0`` as ``G z = -g0`` with marginal ``∂f*/∂b_eq = μ``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .detection import _NoShape, _stacked


@dataclass
class LPForm:
    """``min cᵀx`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq`` (``x`` free), with ``x`` the
    stacked Problem variables (first ``n_var`` entries) then the norm1 epigraph variables.

    ``sign`` is ``+1`` for a minimisation, ``-1`` for a maximisation (its objective is
    ``-(cᵀx)``); ``rows`` maps each Problem constraint to ``("ub" | "eq", start, size)``;
    ``variables`` lists ``(name, offset, size)``."""

    c: np.ndarray
    A_ub: Any
    b_ub: np.ndarray
    A_eq: Any
    b_eq: np.ndarray
    n_var: int
    sign: float
    variables: list = field(default_factory=list)
    rows: dict = field(default_factory=dict)
    const: float = 0.0

    def values(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {name: x[o:o + s].copy() for name, o, s in self.variables}

    def multipliers(self, ub_marg: np.ndarray, eq_marg: np.ndarray) -> dict[str, np.ndarray]:
        """The Problem's multipliers from HiGHS's marginals (signs in the module docstring;
        a maximisation's are those of the minimised negative, the Problem's convention)."""
        out = {}
        for name, (kind, start, size) in self.rows.items():
            if kind == "ub":
                out[name] = np.maximum(0.0, -ub_marg[start:start + size])
            else:
                out[name] = eq_marg[start:start + size].copy()
        return out


def read_lp(problem: Any) -> LPForm:
    """The :class:`LPForm` of ``problem``, or :class:`~primaldual.model.detection._NoShape`
    naming the condition that fails."""
    import scipy.sparse as sp

    from .leaves import FeatureVariable
    from .terms import Norm1

    sense = getattr(problem, "sense", None)
    if sense not in ("min", "max"):
        raise _NoShape("it has no min/max sense")
    if any(isinstance(v, FeatureVariable) or getattr(v, "feature", False)
           for v in problem.variables):
        raise _NoShape("it has a feature-space variable (write the kernel matrix as data)")
    sgn = 1.0 if sense == "min" else -1.0
    obj = problem.objective
    for t in obj.terms:
        if not isinstance(t, Norm1):
            raise _NoShape(f"its objective has a {type(t).__name__} term (not linear or norm1)")
        if sgn * t.coef < 0:
            raise _NoShape("a norm1 term enters with the concave sign")
    blocks = list(problem.variables)
    offsets = np.cumsum([0] + [v.size for v in blocks]).tolist()
    where = {v: offsets[k] for k, v in enumerate(blocks)}
    n = offsets[-1]
    cz = _stacked(obj, where, n)
    if cz is None:
        raise _NoShape("the objective's linear part involves a foreign variable")
    c_parts = [sgn * np.asarray(cz.toarray(), dtype=float).ravel()]
    const = float(np.sum(np.broadcast_to(obj.const, (1,)))) if obj.scalar else 0.0
    ub_rows, ub_rhs, eq_rows, eq_rhs = [], [], [], []
    rows: dict[str, tuple[str, int, int]] = {}
    n_ub = n_eq = 0
    for con in problem.constraints:
        M = _stacked(con.g, where, n)
        if M is None:
            raise _NoShape("a constraint is not affine in the problem's variables")
        g0 = np.broadcast_to(con.g.const, (con.size,)).astype(float)
        if con.equality:
            eq_rows.append(M)
            eq_rhs.append(-g0)
            rows[con.multiplier] = ("eq", n_eq, con.size)
            n_eq += con.size
        else:
            ub_rows.append(-M)
            ub_rhs.append(g0)
            rows[con.multiplier] = ("ub", n_ub, con.size)
            n_ub += con.size
    n_t = sum(t.e.size for t in obj.terms)
    width = n + n_t
    ub = [sp.hstack([R, sp.csr_matrix((R.shape[0], n_t))]).tocsr() for R in ub_rows]
    at = n
    for t in obj.terms:
        E = _stacked(t.e, where, n)
        if E is None:
            raise _NoShape("a norm1 term's argument involves a foreign variable")
        k = t.e.size
        e0 = np.broadcast_to(t.e.const, (k,)).astype(float)
        It = sp.csr_matrix((np.ones(k), (np.arange(k), at + np.arange(k))), shape=(k, width))
        Ew = sp.hstack([E, sp.csr_matrix((k, n_t))]).tocsr()
        ub += [Ew - It, -Ew - It]           # E z + e <= t,  -(E z + e) <= t
        ub_rhs += [-e0, e0]
        c_parts.append(sgn * t.coef * t._w())
        at += k
    A_ub = sp.vstack(ub).tocsr() if ub else sp.csr_matrix((0, width))
    eq = [sp.hstack([R, sp.csr_matrix((R.shape[0], n_t))]).tocsr() for R in eq_rows]
    A_eq = sp.vstack(eq).tocsr() if eq else sp.csr_matrix((0, width))
    return LPForm(np.concatenate(c_parts), A_ub,
                  np.concatenate(ub_rhs) if ub_rhs else np.zeros(0), A_eq,
                  np.concatenate(eq_rhs) if eq_rhs else np.zeros(0), n, sgn,
                  [(v.name, offsets[k], v.size) for k, v in enumerate(blocks)], rows, const)


def lp_of(problem: Any) -> tuple[LPForm | None, str | None]:
    """``(record, None)`` or ``(None, why)``, read once per problem (cached in
    ``problem.structure["lp"]``)."""
    st = getattr(problem, "structure", None)
    if st is not None and "lp" in st:
        return st["lp"], None
    memo = problem.__dict__.setdefault("_not_detected", {})
    if "lp" in memo:
        return None, memo["lp"]
    try:
        rec = read_lp(problem)
    except _NoShape as exc:
        memo["lp"] = str(exc)
        return None, str(exc)
    if st is not None:
        st["lp"] = rec
    return rec, None
