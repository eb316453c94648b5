"""Reading a Problem as a quadratic program, for :mod:`primaldual.model.structure` (which
imports this module; the records it builds are in :mod:`primaldual.model.records`).

:func:`_quad_model` reads ``max -(1/2) zᵀQz + rᵀz`` over at most two stacked plain variables
(eliminating a variable defined by an equality, SVR's ``beta = alpha - alpha*``) with its
constraint rows; :func:`_read_box_qp` and :func:`_read_kkt_system` turn it into the records the
SMO/low-rank and KKT backends solve, or raise :class:`_NoShape` naming the condition that fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .records import BoxQP, KKTSystem


class _NoShape(Exception):
    """The problem lacks a backend's structure; the message names the condition that fails."""


@dataclass
class _QuadModel:
    """A maximisation read as ``max -(1/2) zᵀQz + rᵀz`` over the stacked plain variables ``z``
    (``Q`` = ``op`` plus ``u uᵀ`` when ``rank_one`` is ``u``), with its constraint rows
    ``g = M z + g0`` (``>= 0`` or ``= 0``) and the variables eliminated through an equality
    ``v = A z`` (``derived``: their values; ``derived_multipliers``: that equality's
    multiplier)."""

    blocks: list
    offsets: list[int]
    op: Any
    rank_one: np.ndarray | None
    r: np.ndarray
    rows: list
    derived: dict[str, Any]
    derived_multipliers: dict[str, Any]

    @property
    def n(self) -> int:
        return int(self.r.shape[0])


class LinearMap:
    """``values -> scale * sum_v M_v values[v]`` (an eliminated variable, e.g. SVR's
    ``beta = alpha - alpha_star``; ``M_v`` a matrix or a number ``c`` for ``c I``;
    picklable)."""

    def __init__(self, parts: list[tuple[str, Any]], scale: float) -> None:
        self.parts, self.scale = parts, scale

    def __call__(self, values: dict) -> np.ndarray:
        # a part is a matrix, or a number c standing for c I (a bound template's blocks)
        out = sum((M * np.asarray(values[name], dtype=float)) if np.isscalar(M)
                  else M @ np.asarray(values[name], dtype=float) for name, M in self.parts)
        return self.scale * np.asarray(out, dtype=float).ravel()


class QuadGradient:
    """``values -> factor * Q v(values)``: the multiplier of the equality that defines an
    eliminated variable ``v`` (stationarity in ``v``; SVR's ``lambda = K beta``; picklable)."""

    def __init__(self, op: Any, factor: float, v: LinearMap) -> None:
        self.op, self.factor, self.v = op, factor, v

    def __call__(self, values: dict) -> np.ndarray:
        return self.factor * self.op.matvec(self.v(values))


def _stacked(e: Any, where: dict, n: int, skip: Any = None):
    """The linear part of ``e`` as a CSR matrix over the stacked variables (``None`` when it
    involves a variable outside ``where`` other than ``skip``, or squared-distance rows)."""
    import scipy.sparse as sp

    if getattr(e, "rq", None):
        return None
    m = e.size
    items = [(v, M) for v, M in e.lin.items() if v is not skip]
    if len(items) == 1 and where.get(items[0][0]) == 0 and items[0][0].size == n:
        S = items[0][1]                  # one variable, the whole stack: no re-assembly
        S = S if isinstance(S, sp.csr_matrix) else sp.csr_matrix(S)
        if S.shape[0] == 1 and m > 1:
            S = sp.csr_matrix(np.ones((m, 1))) @ S
        if not S.has_canonical_format or np.any(S.data == 0):
            S = S.copy()                 # never modify the expression's own matrix
            S.sum_duplicates()
            S.eliminate_zeros()
        return S
    rows, cols, vals = [], [], []
    for v, M in items:
        C = sp.coo_matrix(M)
        if v not in where:
            if np.any(C.data != 0):
                return None
            continue
        if C.shape[0] == 1 and m > 1:
            C = sp.coo_matrix(sp.csr_matrix(np.ones((m, 1))) @ sp.csr_matrix(C))
        rows.append(C.row)
        cols.append(C.col + where[v])
        vals.append(C.data)
    if not rows:
        return sp.csr_matrix((m, n))
    S = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(m, n))
    S.sum_duplicates()
    S.eliminate_zeros()
    return S


def _scalar_identity(M, size: int) -> float | None:
    """``c`` when the linear map ``M`` is ``c I`` (``c != 0``), else ``None``."""
    import scipy.sparse as sp

    S = sp.csr_matrix(M)
    if S.shape != (size, size):
        return None
    d = S.diagonal()
    if d[0] == 0 or not np.all(d == d[0]) or S.count_nonzero() != size:
        return None
    return float(d[0])


def _eliminable(problem: Any, quad: Any) -> tuple[Any, Any, float] | None:
    """``(v, constraint, c)`` when the quadratic form's variable ``v`` is defined by one equality
    ``c v + (terms in other variables) = 0`` and appears nowhere else (SVR's
    ``beta = alpha - alpha*``)."""
    v = quad.x
    obj = problem.objective
    if v in obj.lin and np.any(_dense(obj.lin[v]) != 0):
        return None
    if any(v in t.variables for t in obj.terms if t is not quad):
        return None
    found = [c for c in problem.constraints if v in c.g.lin or v in c.g.rq]
    if len(found) != 1 or not found[0].equality or len(found[0].g.lin) < 2:
        return None
    c = found[0]
    if np.any(c.g.const != 0):
        return None
    coef = _scalar_identity(c.g.lin[v], v.size)
    return None if coef is None else (v, c, coef)


def _substituted(op: Any, A) -> Any:
    """``Aᵀ Q A`` as a GramOperator when each column of ``A`` has at most one non-zero (a signed
    selection: index and sign maps of the kernel form); ``None`` otherwise."""
    from .gram import GramOperator

    A = A.tocsc()
    nnz = np.diff(A.indptr)
    if np.any(nnz > 1):
        return None
    has = nnz == 1
    idx = np.zeros(A.shape[1], dtype=np.int64)
    s = np.zeros(A.shape[1])
    idx[has] = A.indices
    s[has] = A.data
    if op.matrix is not None:
        Ad = A.toarray()
        return GramOperator.dense_matrix(Ad.T @ (op.matrix + np.diag(op.diag)) @ Ad)
    diag = None
    if op.coef is not None:
        # (B A)^T K (B A): the combination form carries the selection in its coefficients
        if np.any(op.diag != 0):
            if len(set(idx[has].tolist())) != int(np.sum(has)):
                return None
            diag = op.diag[idx] * s * s
        return GramOperator(op.kernel, op.X, coef=op.coef @ A, diag=diag)
    if np.any(op.diag != 0):
        if len(set(idx[has].tolist())) != int(np.sum(has)):
            return None           # diag(d) of v would couple the variables that share a row
        diag = op.diag[idx] * s * s
    index = idx if op.index is None else op.index[idx]
    return GramOperator(op.kernel, op.X, sign=op.sign[idx] * s, index=index, diag=diag)


def _scaled(op: Any, scale: float) -> Any:
    """``scale * op`` (``scale > 0``), kept in kernel form."""
    from .gram import GramOperator

    if scale == 1.0:
        return op
    if op.matrix is not None:
        return GramOperator(matrix=scale * op.matrix, diag=scale * op.diag)
    if op.coef is not None:
        return GramOperator(op.kernel, op.X, coef=np.sqrt(scale) * op.coef, diag=scale * op.diag)
    return GramOperator(op.kernel, op.X, sign=np.sqrt(scale) * op.sign, index=op.index,
                        diag=scale * op.diag)


def _with_diag(op: Any, extra: np.ndarray) -> Any:
    from .gram import GramOperator

    if not np.any(extra):
        return op
    if op.matrix is not None:
        return GramOperator(matrix=op.matrix, diag=op.diag + extra)
    if op.coef is not None:
        return GramOperator(op.kernel, op.X, coef=op.coef, diag=op.diag + extra)
    return GramOperator(op.kernel, op.X, sign=op.sign, index=op.index, diag=op.diag + extra)


def _quad_model(problem: Any) -> _QuadModel:
    """Read ``problem`` as a concave quadratic maximisation over at most two stacked plain
    variables (see :class:`_QuadModel`).

    Objective terms: one ``coef * quad_form(v, Q)`` (``coef < 0``; ``Q`` a GramOperator), plus
    ``coef * sum_squares(E z + e)`` (``coef < 0``; diagonal ``EᵀE``, or one row: a rank-one
    term) and ``coef * ||z_k||^2``. ``v`` is a variable of the problem or one defined by an
    equality ``c v = A z`` whose columns select one entry of ``v`` each (then
    ``Q_z = c^-2 Aᵀ Q A`` keeps the kernel form with index and sign maps). Raises
    :class:`_NoShape` naming the condition that fails."""
    from .leaves import FeatureVariable
    from .terms import FeatureNorm, QuadForm, SumSquares

    if getattr(problem, "sense", None) != "max":
        raise _NoShape("it is not a maximisation")
    obj = problem.objective
    quads = [t for t in obj.terms if isinstance(t, QuadForm)]
    if len(quads) != 1 or quads[0].coef >= 0:
        raise _NoShape("its objective has no single concave quad_form term (-c aᵀQa, c > 0)")
    quad = quads[0]
    others = [t for t in obj.terms if t is not quad]
    if any(not isinstance(t, (SumSquares, FeatureNorm)) or t.coef >= 0 for t in others):
        raise _NoShape("its objective has a term other than one quad_form and concave "
                       "sum_squares/||v||² terms")
    if any(isinstance(v, FeatureVariable) for v in problem.variables):
        raise _NoShape("it has a feature-space variable")
    elim = _eliminable(problem, quad) if len(problem.variables) > 1 else None
    blocks = [v for v in problem.variables if elim is None or v is not elim[0]]
    if not blocks or len(blocks) > 2:
        raise _NoShape("it has more than two variables once an equality-defined variable is "
                       "eliminated")
    offsets = np.cumsum([0] + [v.size for v in blocks]).tolist()
    where = {v: offsets[k] for k, v in enumerate(blocks)}
    n = offsets[-1]
    derived: dict[str, Any] = {}
    derived_mult: dict[str, Any] = {}
    if elim is not None:
        v, con, c = elim
        A = _stacked(con.g, where, n, skip=v)   # c v + A z = 0, i.e. v = -A z / c
        if A is None:
            raise _NoShape("the equality defining the quad_form's variable involves other kinds of "
                           "terms")
        A = (-1.0 / c) * A
        op = _substituted(quad.op, A)
        if op is None:
            raise _NoShape("the equality defining the quad_form's variable mixes its entries (not "
                           "a signed selection)")
        parts = [(b.name, A[:, offsets[k]:offsets[k + 1]]) for k, b in enumerate(blocks)]
        vmap = LinearMap(parts, 1.0)
        derived[v.name] = vmap
        # stationarity in v: 2 coef Q v + c lambda = 0
        derived_mult[con.multiplier] = QuadGradient(quad.op, -2.0 * quad.coef / c, vmap)
        constraints = [k for k in problem.constraints if k is not con]
    else:
        if quad.x not in where or len(blocks) != 1:
            raise _NoShape("the quad_form's variable is not the problem's only variable (nor "
                           "defined by an equality)")
        op = quad.op
        constraints = list(problem.constraints)
    op = _scaled(op, -2.0 * quad.coef)
    r = _stacked(obj, where, n)
    if r is None:
        raise _NoShape("the objective's linear part involves an eliminated or foreign variable")
    r = np.asarray(r.toarray(), dtype=float).ravel()
    diag = np.zeros(n)
    rank_one = None
    for t in others:
        if isinstance(t, FeatureNorm):
            k = blocks.index(t.w) if t.w in blocks else -1
            if k < 0:
                raise _NoShape("a ||v||² term is on a variable that is not one of the problem's "
                               "own")
            diag[offsets[k]:offsets[k + 1]] += -2.0 * t.coef
            continue
        E = _stacked(t.e, where, n)
        if E is None:
            raise _NoShape("a sum_squares term involves an eliminated or foreign variable")
        e0 = np.broadcast_to(t.e.const, (t.e.size,)).astype(float)
        r += 2.0 * t.coef * np.asarray(E.T @ e0).ravel()
        if E.shape[0] == 1:
            if rank_one is not None:
                raise _NoShape("more than one rank-one sum_squares term")
            rank_one = np.sqrt(-2.0 * t.coef) * E.toarray().ravel()
            continue
        G = (E.T @ E).tocsr()
        d = G.diagonal()
        if G.count_nonzero() != np.count_nonzero(d):
            raise _NoShape("a sum_squares term couples variables (EᵀE is not diagonal)")
        diag += -2.0 * t.coef * d
    if op.n != n:
        raise _NoShape("the quad_form's size differs from the variables'")
    rows = []
    for c in constraints:
        M = _stacked(c.g, where, n)
        if M is None:
            raise _NoShape("a constraint involves an eliminated variable or a squared distance")
        rows.append((c, M, np.broadcast_to(c.g.const, (c.size,)).astype(float)))
    return _QuadModel(blocks, offsets, _with_diag(op, diag), rank_one, r, rows, derived,
                      derived_mult)


def _quad_model_once(problem: Any) -> _QuadModel:
    """:func:`_quad_model`, read once per problem (the BoxQP and KKTSystem readings share it;
    a refusal is remembered too)."""
    memo = getattr(problem, "__dict__", {})
    if "_quad_model" not in memo:
        try:
            memo["_quad_model"] = _quad_model(problem)
        except _NoShape as e:
            memo["_quad_model"] = e
    qm = memo["_quad_model"] if "_quad_model" in memo else _quad_model(problem)
    if isinstance(qm, _NoShape):
        raise _NoShape(str(qm))
    return qm


def _dense(M) -> np.ndarray:
    import scipy.sparse as sp
    return np.asarray(M.toarray() if sp.issparse(M) else M, dtype=float)


def _nu_pairs_ok(qm: _QuadModel, sign: np.ndarray, p: np.ndarray, C: np.ndarray,
                 nu_total: float) -> bool:
    """``1ᵀa <= nu_total`` may be solved at equality: every variable pairs with one of the other
    sign whose kernel column is its negative (same data row, opposite kernel sign, no diagonal)
    and ``p_k + p_l = 0``, so raising both leaves ``sign^T a`` and the objective unchanged; and
    the pairs reach ``nu_total`` (``sum_pairs min(C_k, C_l) >= nu_total``). SVR's stacked
    ``alpha, alpha*`` are such pairs."""
    op = qm.op
    if op.matrix is not None or op.coef is not None or np.any(op.diag != 0):
        return False
    rows = np.arange(qm.n) if op.index is None else op.index
    pos, neg = np.flatnonzero(sign > 0), np.flatnonzero(sign < 0)
    if pos.size != neg.size:
        return False
    order_p = pos[np.lexsort((op.sign[pos], rows[pos]))]
    order_n = neg[np.lexsort((-op.sign[neg], rows[neg]))]
    k, l_ = order_p, order_n
    if not (np.array_equal(rows[k], rows[l_]) and np.allclose(op.sign[k], -op.sign[l_])
            and np.allclose(p[k], -p[l_])):
        return False
    return bool(np.sum(np.minimum(C[k], C[l_])) >= nu_total)


def _read_box_qp(problem: Any) -> BoxQP:
    """Derive a :class:`BoxQP` from the problem itself (no attached record needed).

    Recognised shape: ``max -(1/2) aᵀQa + rᵀa`` (:func:`_quad_model`: one ``quad_form`` term,
    possibly over a variable ``beta = A a`` defined by an equality, plus diagonal
    ``sum_squares`` terms) over one variable ``a`` or two stacked ones (SVR's ``alpha``,
    ``alpha_star``), subject to ``a >= 0``, rows ``d_j a_j <= u_j`` (``d_j > 0``) and either at
    most one equality ``signᵀa = delta`` or LIBSVM's nu pair: ``signᵀa = 0`` (``sign = ±1``) with
    ``1ᵀa >= nu_total`` when the objective is homogeneous (``r = 0``: scaling ``a`` down lowers
    it, so the sum is tight) or ``1ᵀa <= nu_total`` when every variable pairs with one that
    cancels it (:func:`_nu_pairs_ok`); both are solved at equality. Anything else (rank-one
    terms, coupled rows, more equalities) raises :class:`_NoShape` naming the condition."""
    qm = _quad_model_once(problem)
    if qm.rank_one is not None:
        raise _NoShape("its objective has a rank-one sum_squares term (Q is not a kernel form)")
    n, blocks, off = qm.n, qm.blocks, qm.offsets
    p = -qm.r
    C = np.full(n, np.inf)
    lower = np.zeros(n, dtype=bool)
    mults: dict[str, str] = {}
    eqs, sums = [], []
    for c, M, g0 in qm.rows:
        nnz = np.diff(M.indptr)
        if c.size == 1 and nnz[0] > 1:
            (eqs if c.equality else sums).append((c, M.toarray().ravel(), float(g0[0])))
            continue
        if c.equality or not np.all(nnz == 1):
            raise _NoShape("a vector constraint is an equality or couples variables (not bound "
                           "rows a_j >= 0, d_j a_j <= C_j)")
        cols, coef = M.indices, M.data
        if np.unique(cols).size != cols.size:
            raise _NoShape("a bound constraint names a variable twice")
        covers = [k for k in range(len(blocks))
                  if np.array_equal(np.sort(cols), np.arange(off[k], off[k + 1]))]
        suffix = ("", "_star")[covers[0]] if covers else None
        if np.all(coef > 0) and np.all(g0 == 0):                   # d a_j >= 0
            lower[cols] = True
            if suffix is not None and np.all(coef == 1):
                mults["lower" + suffix] = c.multiplier
        elif np.all(coef < 0):                                       # -d a_j + u_j >= 0
            C[cols] = np.minimum(C[cols], g0 / -coef)
            if suffix is not None and np.all(coef == -1):
                mults["upper" + suffix] = c.multiplier
        else:
            raise _NoShape("a bound is neither a_j >= 0 nor d_j a_j <= C_j with d_j > 0 (a lower "
                           "bound other than 0)")
    if not np.all(lower):
        raise _NoShape("not every variable has the lower bound a >= 0")
    equality, sign, delta, nu_total, sense = "none", np.ones(n), 0.0, None, ">="
    if len(eqs) == 1 and not sums:
        c, row, g0 = eqs[0]
        if not np.all(row != 0):
            raise _NoShape("the equality sign^T a = delta has a zero coefficient")
        equality, sign, delta = "one", row, 0.0 - g0 + 0.0
        mults["eq"] = c.multiplier
    elif len(eqs) == 1 and len(sums) == 1:
        (ce, row, g0e), (cs, srow, g0s) = eqs[0], sums[0]
        k = srow[0]
        if g0e != 0 or not np.all(np.abs(row) == 1) or not np.all(srow == k):
            raise _NoShape("the nu pair is not sign^T a = 0 (sign = ±1) with a sum constraint on "
                           "1^T a")
        equality, sign = "nu", row
        if k > 0:                      # k 1ᵀa + g0 >= 0: 1ᵀa >= nu_total
            nu_total = -g0s / k
            if np.any(p != 0) or nu_total <= 0:
                raise _NoShape("the sum constraint 1^T a >= nu_total cannot be taken at equality "
                               "(the objective has a linear term, or nu_total <= 0)")
        else:                          # 1ᵀa <= nu_total
            sense, nu_total = "<=", g0s / -k
            if not _nu_pairs_ok(qm, sign, p, C, nu_total):
                raise _NoShape("the sum constraint 1^T a <= nu_total cannot be taken at equality "
                               "(no pairs of variables that cancel in Q and p, or the bounds "
                               "cannot reach nu_total)")
        mults["eq"] = ce.multiplier
        if abs(k) == 1:
            mults["sum"] = cs.multiplier
    elif eqs or sums:
        raise _NoShape("more than one equality, or a coupled inequality other than LIBSVM's nu "
                       "pair")
    two = len(blocks) == 2
    return BoxQP(qm.op, p, C, equality, sign, delta, nu_total=nu_total,
                 variable=blocks[0].name, sense_max=True, multipliers=mults,
                 variables=tuple(b.name for b in blocks) if two else None,
                 split=off[1] if two else None, sum_sense=sense, derived=qm.derived,
                 derived_multipliers=qm.derived_multipliers)


def _read_kkt_system(problem: Any) -> KKTSystem:
    """Derive a :class:`KKTSystem` from the problem itself: ``max -(1/2) aᵀHa + dᵀa`` over one
    free variable (:func:`_quad_model`) with at most the equality ``sᵀa = 0``, where either
    ``H = D_s (K + diag(1/C)) D_s`` with a kernel ``K`` and ``s = ±1``, plus ``s sᵀ`` when a
    ``sum_squares(sᵀa)`` term is present (PSVM), or ``H`` is a matrix (precomputed: LapRLS's
    ``J K P⁻¹ Jᵀ + l/2 I``); :class:`_NoShape` naming the condition otherwise."""
    qm = _quad_model_once(problem)
    if len(qm.blocks) != 1 or qm.derived:
        raise _NoShape("it has more than one variable")
    a, op = qm.blocks[0], qm.op
    mults: dict[str, str] = {}
    border = None
    for c, M, g0 in qm.rows:
        if not c.equality or border is not None or c.size != 1 or np.any(g0 != 0):
            raise _NoShape("it is not free: a constraint other than one scalar equality u^T a = 0")
        border, mults["eq"] = M.toarray().ravel(), c.multiplier
    if np.any(op.diag < 0):
        raise _NoShape("a negative diagonal term")
    with np.errstate(divide="ignore"):
        Cv = np.where(op.diag > 0, 1.0 / np.where(op.diag > 0, op.diag, 1.0), np.inf)
    C: Any = float(Cv[0]) if np.all(Cv == Cv[0]) else Cv
    u = qm.rank_one
    if op.matrix is not None:                        # a precomputed H (no kernel)
        A = op.matrix + (0.0 if u is None else np.outer(u, u))
        s = None
        if border is not None:
            if not np.all(np.abs(border) == 1):
                raise _NoShape("the border u of a precomputed H is not ±1")
            s = border
            A = A * np.outer(s, s)                   # H = D_s A D_s + diag(1/C)
        return KKTSystem(None, A, C, qm.r, sign=None if s is None or np.all(s == 1) else s,
                         bias=border is not None, variable=a.name, multipliers=mults)
    if op.kernel is None or op.index is not None or op.coef is not None:
        raise _NoShape("Q is not a kernel over the data rows (an index map or combinations)")
    s = op.sign
    if not np.all(np.abs(s) == 1):
        raise _NoShape("the kernel signs are not ±1 (or the quad_form's coefficient is not -1/2)")
    if border is not None and not np.allclose(border, s):
        raise _NoShape("the equality's coefficients are not the kernel's signs")
    rank_one = u is not None
    if rank_one and not (np.allclose(u, s) or np.allclose(u, -s)):
        raise _NoShape("the rank-one term is not (s^T a)² with the kernel's signs s")
    return KKTSystem(op.kernel, op.X, C, qm.r, sign=None if np.all(s == 1) else s.copy(),
                     bias=border is not None, rank_one=rank_one, variable=a.name,
                     multipliers=mults)
