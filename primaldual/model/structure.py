"""Structural descriptions a Problem can carry so specialised backends can accept it.

A method (or the mechanical dualiser) that builds a dual of a known shape attaches one of these
records to ``problem.structure``; a backend's ``accepts(problem)`` looks for its record and its
``solve`` reads the arrays from it, then reports the solution in the Problem's own names.

* :class:`BoxQP` (SMO, low-rank): ``min_a 1/2 a^T Q a + p^T a`` s.t. ``0 <= a <= C``,
  ``sign^T a = delta`` (``equality="one"``), none, or LIBSVM's two nu equalities
  (``equality="nu"``: ``sum_{sign=+1} a = sum_{sign=-1} a = nu_total / 2``). If the Problem is a
  maximisation, its objective is ``-(1/2 a^T Q a + p^T a)`` (``sense_max=True``).
* :class:`KKTSystem` (KKT backend): the LS-SVM bordered system
  ``[[0, u^T], [u, D_s (K + I/C) D_s]] [b; a] = [0; d]`` (``bias=False``: no border).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class BoxQP:
    """``min 1/2 a^T Q a + p^T a`` s.t. ``0 <= a <= C`` and the equality rows.

    Attributes
    ----------
    Q : GramOperator
        ``D_s K D_s + diag`` with kernel, data rows and index map (for kernel columns on demand).
    p : ndarray
    C : ndarray
        Per-variable upper bounds ``C_j`` (LIBSVM's name and the estimators': C-SVC's
        ``C_i = C w_i``; ``np.inf`` allowed).
    equality : {"one", "none", "nu"}
    sign : ndarray
        Coefficients of the equality (``y``; ``[1, -1]`` blocks for SVR).
    delta : float
        Right-hand side of ``sign^T a = delta``.
    nu_total : float or None
        For ``equality="nu"``: ``1^T a = nu_total`` (the nu-SVC/nu-SVR sum constraint at equality).
    variable : str
        Name of the Problem's variable ``a``.
    sense_max : bool
        The Problem maximises ``-(1/2 a^T Q a + p^T a)``.
    multipliers : dict
        Role -> multiplier name in the Problem: ``"eq"``, ``"lower"``, ``"upper"``, ``"sum"``.
    split : int or None
        If the Problem has two variables (``alpha``, ``alpha_star``) stacked into ``a``, the
        length of the first block; ``variables`` then names both.
    """

    Q: Any
    p: np.ndarray
    C: np.ndarray
    equality: str = "one"
    sign: np.ndarray | None = None
    delta: float = 0.0
    nu_total: float | None = None
    variable: str = "alpha"
    sense_max: bool = True
    multipliers: dict[str, str] = field(default_factory=dict)
    variables: tuple[str, ...] | None = None
    sum_sense: str = ">="   # nu variants: 1^T a >= nu_total (nu-SVC) or <= (nu-SVR)
    #: extra Problem variables / multipliers that are functions of the solved ``a`` (e.g. the
    #: SVR dual's ``beta = alpha - alpha_star`` and its multiplier ``lambda = K beta``)
    derived: dict[str, Any] = field(default_factory=dict)
    derived_multipliers: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(np.asarray(self.p).shape[0])

    def objective(self, a: np.ndarray) -> float:
        """``1/2 a^T Q a + p^T a`` (the minimisation form)."""
        return float(0.5 * a @ self.Q.matvec(a) + self.p @ a)

    def split_values(self, a: np.ndarray) -> dict[str, np.ndarray]:
        if self.variables is None:
            out = {self.variable: a}
        else:
            n1 = len(a) // 2
            out = {self.variables[0]: a[:n1], self.variables[1]: a[n1:]}
        for name, fn in self.derived.items():
            out[name] = fn(out)
        return out

    def multipliers_from_gradient(self, a: np.ndarray, grad: np.ndarray, nu_eq: float,
                                  nu_sum: float = 0.0) -> dict[str, np.ndarray]:
        """Multipliers in the Problem's names from the min-form stationarity
        ``Q a + p - nu_eq sign - nu_sum 1 - s + t = 0`` (``s`` for ``a >= 0``, ``t`` for
        ``a <= C``): ``s = max(0, r)``, ``t = max(0, -r)`` with ``r = grad - nu_eq sign -
        nu_sum``."""
        sign = np.ones(self.n) if self.sign is None else self.sign
        r = grad - nu_eq * sign - nu_sum
        out: dict[str, np.ndarray] = {}
        m = self.multipliers
        if "eq" in m:
            out[m["eq"]] = np.array([nu_eq])
        if "sum" in m:
            out[m["sum"]] = np.array([nu_sum if self.sum_sense == ">=" else -nu_sum])
        for name, fn in self.derived_multipliers.items():
            out[name] = fn(self.split_values(a))
        lower = np.maximum(0.0, r)
        upper = np.where(np.isfinite(self.C), np.maximum(0.0, -r), 0.0)
        if self.variables is None:
            if "lower" in m:
                out[m["lower"]] = lower
            if "upper" in m:
                out[m["upper"]] = upper
        else:
            n1 = self.n // 2
            for role, arr in (("lower", lower), ("upper", upper)):
                if role in m:
                    out[m[role]] = arr[:n1]
                if role + "_star" in m:
                    out[m[role + "_star"]] = arr[n1:]
        return out


@dataclass
class KKTSystem:
    """The LS-SVM family's linear KKT system (docs/formulations.md 7-12).

    ``[[0, u^T], [u, H]] [b; a] = [0; d]`` with ``H = D_s (K + I/C) D_s + extra``, where
    ``u = s`` (classifier: ``y``; regression: ``1``), ``d`` the right-hand side (``1``, Fisher
    targets, or ``y``). ``bias=False`` drops the border (kernel ridge, PSVM with ``extra = s s^T``
    folded in by ``rank_one``).
    """

    kernel: Any
    X: np.ndarray
    C: float
    d: np.ndarray
    sign: np.ndarray | None = None
    bias: bool = True
    rank_one: bool = False     # PSVM: H = Q + y y^T + I/C
    variable: str = "alpha"
    multipliers: dict[str, str] = field(default_factory=dict)

    # ----- helpers (dense forms, for tests, small N and the KKT backend's adapter)
    @property
    def n(self) -> int:
        return int(np.asarray(self.d).shape[0])

    @property
    def signs(self) -> np.ndarray:
        """``s`` (all ones when ``sign`` is None)."""
        return np.ones(self.n) if self.sign is None else np.asarray(self.sign, dtype=float)

    def gram(self) -> np.ndarray:
        """``K`` (``X`` itself when ``kernel`` is None: a precomputed matrix)."""
        if self.kernel is None:
            return np.asarray(self.X, dtype=float)
        return np.asarray(self.kernel(self.X), dtype=float)

    def inv_C(self) -> np.ndarray:
        """``1/C_i`` per row (``C`` may be a scalar or a per-sample array; ``inf`` gives 0)."""
        C = np.broadcast_to(np.asarray(self.C, dtype=float), (self.n,))
        with np.errstate(divide="ignore"):
            return np.where(np.isinf(C), 0.0, 1.0 / C)

    def unsigned_matrix(self) -> np.ndarray:
        """``A = K (+ 1 1^T if rank_one) + diag(1/C)``, so that ``H = D_s A D_s``."""
        A = self.gram().copy()
        if self.rank_one:
            A += 1.0
        A[np.diag_indices_from(A)] += self.inv_C()
        return A

    def H(self) -> np.ndarray:
        """``H = D_s (K + I/C) D_s`` (plus ``s s^T`` for PSVM)."""
        s = self.signs
        return self.unsigned_matrix() * np.outer(s, s)

    def matrix(self) -> np.ndarray:
        """The dense KKT matrix: ``[[0, u^T], [u, H]]`` (``u = s``), or ``H`` without bias."""
        H = self.H()
        if not self.bias:
            return H
        n = self.n
        M = np.zeros((n + 1, n + 1))
        M[0, 1:] = self.signs
        M[1:, 0] = self.signs
        M[1:, 1:] = H
        return M

    def rhs(self) -> np.ndarray:
        """Right-hand side ``[0; d]`` (``d`` without bias)."""
        d = np.asarray(self.d, dtype=float)
        return np.concatenate([[0.0], d]) if self.bias else d.copy()

    def solve_dense(self) -> tuple[float, np.ndarray]:
        """Reference solve with a dense LU (small N only): returns ``(b, a)``, ``b = 0`` without
        bias."""
        z = np.linalg.solve(self.matrix(), self.rhs())
        return (float(z[0]), z[1:]) if self.bias else (0.0, z)

    def residual(self, b: float, a: np.ndarray) -> float:
        """Relative residual ``||M z - r|| / max(1, ||r||)`` of the dense system at ``(b, a)``."""
        z = np.concatenate([[b], a]) if self.bias else np.asarray(a, dtype=float)
        r = self.rhs()
        return float(np.linalg.norm(self.matrix() @ z - r) / max(1.0, np.linalg.norm(r)))


# ----------------------------------------------------------------------------- detection
def _dense(M) -> np.ndarray:
    import scipy.sparse as sp
    return np.asarray(M.toarray() if sp.issparse(M) else M, dtype=float)


def _rows(M, m: int) -> np.ndarray:
    D = _dense(M)
    return np.broadcast_to(D, (m, D.shape[1])) if D.shape[0] == 1 and m > 1 else D


def _single_quadratic_max(problem: Any) -> tuple[Any, Any] | None:
    """``(a, t)`` when ``problem`` maximises one quadratic-form term ``t`` over a single
    variable ``a`` (its objective may add linear terms); ``None`` otherwise. The shared first
    test of :func:`detect_box_qp` and :func:`detect_kkt_system`."""
    from .expressions import QuadForm

    if getattr(problem, "sense", None) != "max" or len(problem.variables) != 1:
        return None
    a = problem.variables[0]
    obj = problem.objective
    if len(obj.terms) != 1 or not isinstance(obj.terms[0], QuadForm) or obj.terms[0].x is not a:
        return None
    return a, obj.terms[0]


def detect_box_qp(problem: Any) -> BoxQP | None:
    """Derive a :class:`BoxQP` from the problem itself (no attached record needed).

    Recognised shape: ``max -(c/2) aᵀQa + rᵀa`` over one variable ``a`` (``c > 0``, ``Q`` a
    :class:`~primaldual.model.expressions.GramOperator` from ``quad_form``), subject to
    ``a >= 0``, rows ``d_j a_j <= u_j`` (``d_j > 0``) and at most one equality
    ``signᵀa = delta``. Returns ``None`` for anything else (two equalities, coupled rows,
    several variables): the caller then says which condition failed."""
    from .expressions import GramOperator

    found = _single_quadratic_max(problem)
    if found is None:
        return None
    a, t = found
    obj = problem.objective
    scale = -2.0 * t.coef            # objective -(scale/2) aᵀ op a
    if scale <= 0:
        return None
    op = t.op
    if scale != 1.0:
        if op.matrix is not None:
            op = GramOperator.dense_matrix(scale * op.dense())
        else:
            op = GramOperator(op.kernel, op.X, sign=np.sqrt(scale) * op.sign, index=op.index,
                              diag=scale * op.diag)
    n = a.size
    p = -(_dense(obj.lin[a]).ravel() if a in obj.lin else np.zeros(n))
    C = np.full(n, np.inf)
    equality, sign, delta = "none", None, 0.0
    mults: dict[str, str] = {}
    for c in problem.constraints:
        if set(c.g.lin) != {a} or c.g.rq:
            return None
        M = _rows(c.g.lin[a], c.size)
        g0 = np.broadcast_to(c.g.const, (c.size,))
        if c.equality:
            if equality != "none" or c.size != 1 or not np.all(np.abs(M) > 0):
                return None
            equality, sign, delta = "one", M.ravel().copy(), float(-g0[0])
            mults["eq"] = c.multiplier
            continue
        nz = M != 0
        if not np.all(nz.sum(axis=1) == 1):
            return None
        cols = np.argmax(nz, axis=1)
        coef = M[np.arange(M.shape[0]), cols]
        if len(set(cols.tolist())) != len(cols):
            return None
        if np.all(coef > 0) and np.all(g0 == 0) and len(cols) == n:
            mults["lower"] = c.multiplier            # a >= 0
        elif np.all(coef < 0):
            C[cols] = np.minimum(C[cols], g0 / -coef)   # -d a_j + C_j >= 0
            if len(cols) == n and np.allclose(coef, -1):
                mults["upper"] = c.multiplier
        else:
            return None
    if "lower" not in mults:
        return None
    if equality == "none":
        sign = np.ones(n)
    return BoxQP(op, p, C, equality, sign, delta, variable=a.name, sense_max=True,
                 multipliers=mults)


def detect_kkt_system(problem: Any) -> KKTSystem | None:
    """Derive a :class:`KKTSystem` from the problem itself: ``max -(1/2) aᵀQa + dᵀa`` over one
    free variable with a kernel ``Q = D_s (K + diag(1/C)) D_s`` (``s = ±1``, ``C > 0``) and at most
    the equality ``sᵀa = 0`` (the LS-SVM family). ``None`` otherwise."""
    found = _single_quadratic_max(problem)
    if found is None:
        return None
    a, t = found
    obj = problem.objective
    op = t.op
    if t.coef != -0.5 or op.matrix is not None or op.kernel is None or op.index is not None:
        return None
    s = op.sign
    if not np.allclose(np.abs(s), 1.0) or np.any(op.diag <= 0):
        return None
    d = _dense(obj.lin[a]).ravel() if a in obj.lin else np.zeros(a.size)
    mults: dict[str, str] = {}
    bias = False
    for c in problem.constraints:
        if not c.equality or bias or c.size != 1 or set(c.g.lin) != {a}:
            return None
        M = _dense(c.g.lin[a]).ravel()
        if not np.allclose(M, s) or np.any(np.broadcast_to(c.g.const, (1,)) != 0):
            return None
        bias, mults["eq"] = True, c.multiplier
    Cv = 1.0 / op.diag
    C = float(Cv[0]) if np.allclose(Cv, Cv[0]) else Cv
    return KKTSystem(op.kernel, op.X, C, d, sign=s.copy(), bias=bias, variable=a.name,
                     multipliers=mults)


def box_qp_of(problem: Any) -> BoxQP | None:
    """The problem's BoxQP: the attached record when there is one, else the detected one."""
    st = getattr(problem, "structure", {})
    return st.get("box_qp") or detect_box_qp(problem)


def kkt_system_of(problem: Any) -> KKTSystem | None:
    """The problem's KKTSystem: the attached record when there is one, else the detected one."""
    st = getattr(problem, "structure", {})
    return st.get("kkt_system") or detect_kkt_system(problem)
