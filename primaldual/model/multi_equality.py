"""Box QPs with several linear equalities, read from a Problem.

:func:`read_box_qp_eq` reads a maximisation ``max -(1/2) aᵀQa - pᵀa - qᵀm`` over one kernel
variable ``a`` (``0 <= a <= C``) and a few scalar variables ``m`` (``lo <= m``, ``m`` absent
from ``Q``) subject to ``k`` linear equalities ``A a + B m = c`` and coupled inequalities
``A' a + B' m >= c'`` (read as equalities with a slack ``s >= 0`` appended to ``m``). Duals of
this shape: the one-class SVM (1 equality), nu-SVC with a free ``rho`` (2), SVOR-EXC
(``r - 1`` equalities plus the ordering multipliers ``m``), Crammer-Singer (one per point).

The record :class:`BoxQPEq` also carries the *group* form the decomposition solver works in:
the box variables are partitioned into groups ``g`` whose equality reads
``sum_{t in g} e_t a_t + sum_l b_{g l} m_l = c_g`` (each box variable in at most one group;
group ``-1``: in no equality). It exists when the columns of ``A`` take at most ``rank(A)``
directions (rows that partition the variables, or nu-SVC's ``[y; 1]``); then a pair of
variables of one group moves without leaving any equality (LIBSVM's nu-solver, generalised),
and a scalar variable ``m_l`` moves together with one variable of each group it touches.

Multiplier convention (min form ``f = 1/2 aᵀQa + pᵀa + qᵀm``): stationarity
``∇f = Σ_c λ_cᵀ ∇g_c`` over the Problem's constraints ``g_c >= 0`` / ``= 0`` (``λ >= 0`` for
inequalities), the convention of :class:`~primaldual.model.structure.BoxQP`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .detection import _NoShape, _scaled, _stacked

#: at most this many scalar (non-kernel) variables and slacks, and this many dense equalities
MAX_SCALARS = 64
MAX_DENSE_EQ = 64


@dataclass
class BoxQPEq:
    """``min 1/2 aᵀQa + pᵀa + qᵀm`` s.t. ``0 <= a <= C``, ``lo <= m <= hi``, ``A a + B m = c``.

    Attributes
    ----------
    Q : GramOperator
        Over the box variables ``a`` (kernel columns on demand, or a dense matrix).
    p, C : ndarray (n,)
    q, lo, hi : ndarray (L,)
        Scalar variables ``m`` (Problem variables not in ``Q``, then slacks).
    A : scipy.sparse.csr_matrix (k, n)
    B : ndarray (k, L)
    c : ndarray (k,)
    group, e : ndarray (n,)
        Group form: variable ``t`` is in group ``group[t]`` (``-1``: none) with coefficient
        ``e[t]``; group ``g``'s equality is ``Σ_{t∈g} e_t a_t + Σ_l Bg[g, l] m_l = cg[g]``.
    Bg : ndarray (G, L)
    cg : ndarray (G,)
    T : ndarray (G, k)
        ``Bg = T B``, ``cg = T c`` and the group multipliers ``λ_g`` give the equality
        multipliers ``μ = Tᵀ λ``.
    names : dict
        How to report: ``"a"`` (variable name, or tuple of stacked names and offsets),
        ``"m"`` (list of (name, size) of the Problem's scalar variables), ``"eq"``
        (list of (multiplier, row, k_row)), ``"bounds"`` (list of (multiplier, size, rows)),
        ``"slack"`` (list of (multiplier, row, l)).
    """

    Q: Any
    p: np.ndarray
    C: np.ndarray
    q: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    A: Any
    B: np.ndarray
    c: np.ndarray
    group: np.ndarray
    e: np.ndarray
    Bg: np.ndarray
    cg: np.ndarray
    T: np.ndarray
    names: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.p.shape[0])

    @property
    def n_groups(self) -> int:
        return int(self.cg.shape[0])

    def objective(self, a: np.ndarray, m: np.ndarray) -> float:
        """``1/2 aᵀQa + pᵀa + qᵀm`` (the minimisation form)."""
        return float(0.5 * a @ self.Q.matvec(a) + self.p @ a + self.q @ m)

    # ------------------------------------------------------------------ reporting
    def values(self, a: np.ndarray, m: np.ndarray) -> dict[str, np.ndarray]:
        """The Problem's variables from ``(a, m)`` (slacks dropped)."""
        out = {self.names["a"]: a}
        off = 0
        for name, size in self.names["m"]:
            out[name] = m[off:off + size].copy()
            off += size
        return out

    def multipliers(self, a: np.ndarray, m: np.ndarray, grad: np.ndarray,
                    lam: np.ndarray) -> dict[str, np.ndarray]:
        """The Problem's multipliers from the group multipliers ``λ`` (G) and the min-form
        gradient ``grad = Q a + p``: ``μ = Tᵀλ`` on the equalities, reduced costs
        ``r = grad - Aᵀμ`` (box) and ``r_m = q - Bᵀμ`` (scalars) split into the bound
        multipliers ``max(0, r)`` (``a >= 0``, ``m >= lo``) and ``max(0, -r)`` (``a <= C``);
        a coupled inequality's multiplier is the ``μ`` of its row (its slack's ``r_m`` is
        ``μ`` itself)."""
        mu = self.T.T @ lam
        r = grad - self.A.T @ mu
        rm = self.q - self.B.T @ mu
        out: dict[str, np.ndarray] = {}
        for name, row, size in self.names["eq"]:
            out[name] = mu[row:row + size].copy()
        for name, row, size in self.names["slack"]:
            out[name] = mu[row:row + size].copy()
        for name, size, kind, idx, coef in self.names["bounds"]:
            if kind == "a_lo":
                val = np.maximum(0.0, r[idx]) / coef
            elif kind == "a_hi":
                val = np.maximum(0.0, -r[idx]) / coef
            else:   # "m_lo"
                val = np.maximum(0.0, rm[idx]) / coef
            out[name] = np.asarray(val, dtype=float).reshape(size)
        return out


# ---------------------------------------------------------------------- detection
def read_box_qp_eq(problem: Any) -> BoxQPEq:
    """Derive a :class:`BoxQPEq` from ``problem`` (see the module docstring), or raise
    :class:`~primaldual.model.detection._NoShape` naming the condition that fails."""
    import scipy.sparse as sp

    from .leaves import FeatureVariable
    from .terms import QuadForm

    if getattr(problem, "sense", None) != "max":
        raise _NoShape("it is not a maximisation")
    obj = problem.objective
    quads = [t for t in obj.terms if isinstance(t, QuadForm)]
    if len(quads) != 1 or quads[0].coef >= 0 or len(obj.terms) != 1:
        raise _NoShape("its objective is not one concave quad_form term (-c aᵀQa, c > 0) plus "
                       "a linear part")
    quad = quads[0]
    if any(isinstance(v, FeatureVariable) for v in problem.variables):
        raise _NoShape("it has a feature-space variable")
    a_var = quad.x
    if a_var not in problem.variables:
        raise _NoShape("the quad_form's variable is not a variable of the problem")
    others = [v for v in problem.variables if v is not a_var]
    n = a_var.size
    blocks = [a_var] + others
    offsets = np.cumsum([0] + [v.size for v in blocks]).tolist()
    where = {v: offsets[k] for k, v in enumerate(blocks)}
    ntot = offsets[-1]
    L0 = ntot - n
    op = _scaled(quad.op, -2.0 * quad.coef)
    if op.n != n:
        raise _NoShape("the quad_form's size differs from its variable's")
    r = _stacked(obj, where, ntot)
    if r is None:
        raise _NoShape("the objective's linear part involves a foreign variable")
    r = np.asarray(r.toarray(), dtype=float).ravel()
    p, q = -r[:n], -r[n:]
    C = np.full(n, np.inf)
    a_lower = np.zeros(n, dtype=bool)
    m_lo = np.full(L0, -np.inf)
    eq_rows: list[np.ndarray] = []   # rows of [A | B] (over ntot), rhs
    eq_rhs: list[float] = []
    eq_names: list[tuple[str, int, int]] = []
    ineq: list[tuple[Any, Any, np.ndarray]] = []
    bounds: list[tuple] = []
    for c in problem.constraints:
        M = _stacked(c.g, where, ntot)
        if M is None:
            raise _NoShape("a constraint involves a squared distance or a foreign variable")
        g0 = np.broadcast_to(c.g.const, (c.size,)).astype(float)
        nnz = np.diff(M.indptr)
        if c.equality:
            eq_names.append((c.multiplier, len(eq_rhs), c.size))
            eq_rows.append(M)
            eq_rhs.extend((-g0).tolist())
            continue
        if not np.all(nnz == 1):
            if np.any(nnz == 0):
                raise _NoShape("an inequality row is constant")
            ineq.append((c, M, g0))
            continue
        cols, coef = M.indices, M.data
        if np.unique(cols).size != cols.size:
            raise _NoShape("a bound constraint names a variable twice")
        box = cols < n
        if np.any(box) and not np.all(box):
            raise _NoShape("a bound constraint mixes the kernel variable and scalar ones")
        if np.all(box):
            if np.all(coef > 0) and np.all(g0 == 0):             # d a_j >= 0
                a_lower[cols] = True
                bounds.append((c.multiplier, c.size, "a_lo", cols.copy(), coef.copy()))
            elif np.all(coef < 0):                                # -d a_j + u_j >= 0
                C[cols] = np.minimum(C[cols], g0 / -coef)
                bounds.append((c.multiplier, c.size, "a_hi", cols.copy(), -coef))
            else:
                raise _NoShape("a bound on the kernel variable is neither a_j >= 0 nor "
                               "d_j a_j <= C_j (d_j > 0)")
        else:
            if np.all(coef > 0):                                  # d m_l + g0 >= 0
                m_lo[cols - n] = np.maximum(m_lo[cols - n], -g0 / coef)
                bounds.append((c.multiplier, c.size, "m_lo", cols - n, coef.copy()))
            else:
                raise _NoShape("a scalar variable has an upper bound (only m >= lo is read)")
    if not np.all(a_lower):
        raise _NoShape("not every entry of the kernel variable has the lower bound a >= 0")
    if not np.all(np.isfinite(m_lo) | (m_lo == -np.inf)):
        raise _NoShape("a non-finite bound")
    # coupled inequalities: rows M z + g0 - s = 0 with a slack s >= 0 per row
    slack_names: list[tuple[str, int, int]] = []
    n_slack = sum(c.size for c, _, _ in ineq)
    L = L0 + n_slack
    if L > MAX_SCALARS:
        raise _NoShape(f"more than {MAX_SCALARS} scalar variables and coupled inequality rows")
    rows_all = [sp.hstack([M, sp.csr_matrix((M.shape[0], n_slack))]).tocsr() for M in eq_rows]
    at = L0
    for c, M, g0 in ineq:
        S = sp.csr_matrix((-np.ones(c.size), (np.arange(c.size), at + n + np.arange(c.size))),
                          shape=(c.size, ntot + n_slack))
        Mp = sp.hstack([M, sp.csr_matrix((M.shape[0], n_slack))]).tocsr() + S
        slack_names.append((c.multiplier, len(eq_rhs), c.size))
        rows_all.append(Mp)
        eq_rhs.extend((-g0).tolist())
        at += c.size
    if not rows_all:
        raise _NoShape("it has no equality or coupled inequality (a plain box QP)")
    full = sp.vstack(rows_all).tocsr()
    A = full[:, :n].tocsr()
    B = np.asarray(full[:, n:].toarray(), dtype=float)
    cvec = np.asarray(eq_rhs, dtype=float)
    q = np.concatenate([q, np.zeros(n_slack)])
    lo = np.concatenate([m_lo, np.zeros(n_slack)])
    hi = np.full(L, np.inf)
    group, e, T = _groups(A)
    Bg, cg = T @ B, T @ cvec
    _check_pure_scalar_rows(A, B, cvec, T)
    names = {"a": a_var.name, "m": [(v.name, v.size) for v in others], "eq": eq_names,
             "bounds": bounds, "slack": slack_names}
    return BoxQPEq(op, p, C, q, lo, hi, A, B, cvec, group, e, Bg, cg, T, names)


def _groups(A) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The group form of ``A`` (k x n, sparse): ``(group, e, T)`` with ``T A`` having one
    non-zero per non-zero column (``e``, in row ``group``), or :class:`_NoShape`.

    Columns are grouped by direction (``A_t = e_t d_g``, ``d_g`` normalised to a first
    non-zero of 1); the directions must be linearly independent, then ``T`` is the
    pseudo-inverse of ``D = [d_1 ... d_G]`` (``T D = I``). A matrix whose columns have one
    non-zero each is already in group form (``T`` selects the rows in use)."""
    A = A.tocsc()
    k, n = A.shape
    nnz = np.diff(A.indptr)
    group = np.full(n, -1, dtype=np.int64)
    e = np.zeros(n)
    if np.all(nnz <= 1):
        has = nnz == 1
        rows = A.indices
        used = np.unique(rows)
        pos = np.full(k, -1, dtype=np.int64)
        pos[used] = np.arange(used.size)
        group[has] = pos[rows]
        e[has] = A.data
        T = np.zeros((used.size, k))
        T[np.arange(used.size), used] = 1.0
        return group, e, T
    if k > MAX_DENSE_EQ:
        raise _NoShape(f"more than {MAX_DENSE_EQ} equalities whose columns are not one-per-row")
    Ad = np.asarray(A.toarray(), dtype=float)
    dirs: list[np.ndarray] = []
    keys: dict[tuple, int] = {}
    for t in range(n):
        col = Ad[:, t]
        nzr = np.flatnonzero(col)
        if nzr.size == 0:
            continue
        d = col / col[nzr[0]]
        key = tuple(np.round(d, 12))
        g = keys.get(key)
        if g is None:
            g = keys[key] = len(dirs)
            dirs.append(d)
        group[t] = g
        e[t] = col[nzr[0]]
    D = np.column_stack(dirs) if dirs else np.zeros((k, 0))
    if np.linalg.matrix_rank(D) < D.shape[1]:
        raise _NoShape("the equalities' columns take more directions than the equalities' rank "
                       "(no pair of variables moves within every equality)")
    T = np.linalg.pinv(D)
    return group, e, T


def _check_pure_scalar_rows(A, B, c, T) -> None:
    """The equalities outside ``T``'s range must be trivial: ``N = I - D T`` projects the
    rows onto what the groups do not see; ``N A = 0`` by construction, so ``N B`` and
    ``N c`` must vanish (no equality acting on the scalar variables alone)."""
    k = c.shape[0]
    D = np.linalg.pinv(T) if T.size else np.zeros((k, 0))
    Nm = np.eye(k) - D @ T
    nB, nc = float(np.linalg.norm(B)), float(np.linalg.norm(c))
    if float(np.linalg.norm(Nm @ B)) > 1e-9 * max(1.0, nB) or \
            float(np.linalg.norm(Nm @ c)) > 1e-9 * max(1.0, nc):
        raise _NoShape("an equality acts on the scalar variables alone")


def box_qp_eq_of(problem: Any) -> BoxQPEq | None:
    """The problem's :class:`BoxQPEq`, read once (cached in ``problem.structure``)."""
    return _cached(problem)[0]


def box_qp_eq_refusal(problem: Any) -> str | None:
    """Why ``problem`` has no :class:`BoxQPEq` (``None`` if it has one)."""
    return _cached(problem)[1]


def _cached(problem: Any) -> tuple[BoxQPEq | None, str | None]:
    st = getattr(problem, "structure", None)
    if st is not None and "box_qp_eq" in st:
        return st["box_qp_eq"], None
    memo = problem.__dict__.setdefault("_not_detected", {}) if hasattr(problem, "__dict__") \
        else {}
    if "box_qp_eq" in memo:
        return None, memo["box_qp_eq"]
    try:
        rec = read_box_qp_eq(problem)
    except _NoShape as exc:
        memo["box_qp_eq"] = str(exc)
        return None, str(exc)
    except (ValueError, TypeError, AttributeError, IndexError, KeyError) as exc:
        # a shape the reader does not know how to take apart: a refusal, never a crash of
        # backend selection
        memo["box_qp_eq"] = why = f"it could not be read ({type(exc).__name__}: {exc})"
        return None, why
    if st is not None:
        st["box_qp_eq"] = rec
    return rec, None
