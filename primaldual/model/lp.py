"""Linear programs read from a Problem: the record the HiGHS backend solves.

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
    """``min cᵀx`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq``, ``lb <= x <= ub``: the columns
    ``x`` are the stacked Problem variables ``z`` (first ``n_var``), then the negative parts of
    the variables split for a norm1 term (``z_j = x_j - x_{neg_j}``, both ``>= 0``), then the
    epigraph variables of the other norm1 entries.

    ``sign`` is ``+1`` for a minimisation, ``-1`` for a maximisation (its objective is
    ``-(cᵀx)``); ``rows`` maps each Problem constraint read as rows to ``("ub" | "eq", start,
    size)``, ``bound_rows`` each one read as bounds to ``(side, cols, coef)``; ``variables``
    lists ``(name, offset, size)``; ``split`` the pairs ``(j, neg_j)``."""

    c: np.ndarray
    A_ub: Any
    b_ub: np.ndarray
    A_eq: Any
    b_eq: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    n_var: int
    sign: float
    variables: list = field(default_factory=list)
    rows: dict = field(default_factory=dict)
    bound_rows: dict = field(default_factory=dict)
    split: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))

    def values(self, x: np.ndarray) -> dict[str, np.ndarray]:
        z = x[:self.n_var].copy()
        if self.split.size:
            z[self.split[:, 0]] -= x[self.split[:, 1]]
        return {name: z[o:o + s].copy() for name, o, s in self.variables}

    def multipliers(self, ub_marg: np.ndarray, eq_marg: np.ndarray, lo_marg: np.ndarray,
                    up_marg: np.ndarray) -> dict[str, np.ndarray]:
        """The Problem's multipliers from HiGHS's marginals (signs in the module docstring; a
        bound ``d z_j + g0 >= 0`` read as ``z_j >= -g0/d`` has ``λ = lower marginal / d``, read
        as ``z_j <= g0/|d|`` has ``λ = -upper marginal / |d|``)."""
        out = {}
        for name, (kind, start, size) in self.rows.items():
            if kind == "ub":
                out[name] = np.maximum(0.0, -ub_marg[start:start + size])
            else:
                out[name] = eq_marg[start:start + size].copy()
        for name, (side, cols, coef) in self.bound_rows.items():
            if side == "lo":
                out[name] = np.maximum(0.0, lo_marg[cols]) / coef
            else:
                out[name] = np.maximum(0.0, -up_marg[cols]) / np.abs(coef)
        return out


def read_lp(problem: Any) -> LPForm:
    """The :class:`LPForm` of ``problem``, or :class:`~primaldual.model.detection._NoShape`
    naming the condition that fails.

    Constraints whose rows each bound one variable become column bounds (HiGHS treats them
    as such, not as rows); a norm1 entry ``w |d z_j|`` on a variable without bounds, named by
    no other norm1 entry, splits ``z_j`` into its positive and negative parts (objective
    ``w |d|`` each); any other entry gets an epigraph variable ``t >= ±(E z + e)``."""
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
    c = sgn * np.asarray(cz.toarray(), dtype=float).ravel()
    lb, ubd = np.full(n, -np.inf), np.full(n, np.inf)
    ub_rows, ub_rhs, eq_rows, eq_rhs = [], [], [], []
    rows: dict[str, tuple[str, int, int]] = {}
    bound_rows: dict[str, tuple[Any, Any, Any]] = {}
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
            continue
        if np.all(np.diff(M.indptr) == 1):
            cols, coef = M.indices.astype(np.int64), M.data.astype(float)
            side = "lo" if np.all(coef > 0) else ("up" if np.all(coef < 0) else None)
            fresh = np.unique(cols).size == cols.size and side is not None and (
                np.all(np.isinf(lb[cols])) if side == "lo" else np.all(np.isinf(ubd[cols])))
            if fresh:
                if side == "lo":
                    lb[cols] = -g0 / coef
                else:
                    ubd[cols] = g0 / -coef
                bound_rows[con.multiplier] = (side, cols, coef)
                continue
        ub_rows.append(-M)
        ub_rhs.append(g0)
        rows[con.multiplier] = ("ub", n_ub, con.size)
        n_ub += con.size
    # norm1 entries: split a free variable's entry, else an epigraph variable
    split: list[tuple[int, float]] = []           # (j, weight |d| w)
    epi: list[tuple[Any, np.ndarray, float]] = []  # (row of E, e0, weight)
    named = np.zeros(n, dtype=np.int64)
    terms = []
    for t in obj.terms:
        E = _stacked(t.e, where, n)
        if E is None:
            raise _NoShape("a norm1 term's argument involves a foreign variable")
        e0 = np.broadcast_to(t.e.const, (t.e.size,)).astype(float)
        terms.append((E, e0, sgn * t.coef * t._w()))
        named[E.indices] += 1
    for E, e0, w in terms:
        for k in range(E.shape[0]):
            lo_, hi_ = E.indptr[k], E.indptr[k + 1]
            if hi_ - lo_ == 1 and e0[k] == 0:
                j = int(E.indices[lo_])
                if named[j] == 1 and np.isinf(lb[j]) and np.isinf(ubd[j]):
                    split.append((j, abs(float(E.data[lo_])) * w[k]))
                    continue
            epi.append((E[k], e0[k], w[k]))
    ns, ne = len(split), len(epi)
    width = n + ns + ne
    sj = np.array([j for j, _ in split], dtype=np.int64)
    sw = np.array([w for _, w in split])
    # columns: z, then the negative parts (column -A[:, j]), then the epigraph variables
    Sneg = sp.csr_matrix((-np.ones(ns), (sj, np.arange(ns))), shape=(n, ns))

    def widen(R):
        R = sp.csr_matrix(R)
        return sp.hstack([R, R @ Sneg, sp.csr_matrix((R.shape[0], ne))]).tocsr()

    ub = [widen(R) for R in ub_rows]
    for k, (Ek, e, _w) in enumerate(epi):
        row = widen(Ek)
        tk = sp.csr_matrix(([1.0], ([0], [n + ns + k])), shape=(1, width))
        ub += [row - tk, -row - tk]          # E z + e <= t,  -(E z + e) <= t
        ub_rhs += [np.array([-e]), np.array([e])]
    c_full = np.concatenate([c, -c[sj] if ns else np.zeros(0),
                             np.array([w for _, _, w in epi]) if ne else np.zeros(0)])
    if ns:
        c_full[sj] += sw
        c_full[n:n + ns] += sw
        lb[sj] = 0.0
    A_ub = sp.vstack(ub).tocsr() if ub else sp.csr_matrix((0, width))
    eq = [widen(R) for R in eq_rows]
    A_eq = sp.vstack(eq).tocsr() if eq else sp.csr_matrix((0, width))
    lb_full = np.concatenate([lb, np.zeros(ns), np.full(ne, -np.inf)])
    ub_full = np.concatenate([ubd, np.full(ns + ne, np.inf)])
    return LPForm(c_full, A_ub, np.concatenate(ub_rhs) if ub_rhs else np.zeros(0), A_eq,
                  np.concatenate(eq_rhs) if eq_rhs else np.zeros(0), lb_full, ub_full, n, sgn,
                  [(v.name, offsets[k], v.size) for k, v in enumerate(blocks)], rows,
                  bound_rows, np.column_stack([sj, n + np.arange(ns)]).astype(np.int64)
                  if ns else np.zeros((0, 2), dtype=np.int64))


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
    except (ValueError, TypeError, AttributeError, IndexError, KeyError) as exc:
        # a shape the reader does not know how to take apart: a refusal, never a crash of
        # backend selection
        memo["lp"] = why = f"it could not be read ({type(exc).__name__}: {exc})"
        return None, why
    if st is not None:
        st["lp"] = rec
    return rec, None
