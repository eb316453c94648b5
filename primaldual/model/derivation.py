"""The record of a mechanical dualisation: :class:`Step` (one line on the board) and
:class:`Derivation` (primal, Lagrangian, steps, dual, recovery map, summary), produced by
:func:`primaldual.model.dualize.dualize`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .expr import _as_expr
from .leaves import Variable
from .placeholders import Deferred, Env, make_env
from .problem import Constraint, Problem
from .symbols import latex_title

__all__ = ["Derivation", "Step"]


@dataclass
class Step:
    """One line of the derivation: a title, its text and its LaTeX."""

    title: str
    text: str
    latex: str

    def __str__(self) -> str:
        return f"{self.title}:\n    " + self.text.replace("\n", "\n    ")


def _dense(M) -> np.ndarray:
    return np.asarray(M.toarray() if sp.issparse(M) else M, dtype=float)


@dataclass
class _Block:
    var: Variable
    kind: str                      # "feature" | "quad" | "joint" | "equality" | "fold" | ...
    coef: float = 0.0              # feature: c in c ||w||^2
    H: np.ndarray | None = None    # plain quadratic Hessian
    m: np.ndarray | None = None    # objective linear coefficient (adjoint coordinates)
    fold: Constraint | None = None
    fold_d: np.ndarray | None = None
    divisor: tuple[str, str] = ("1", "1")
    n_terms: int = 1               # objective terms of the block (divisor is exact for one)
    # a joint block (plain variables coupled by a quadratic term, reduce_joint): its variables
    # in z's order, their columns of z, its terms, the offsets' constant, H's Cholesky factor
    vars: list[Variable] = field(default_factory=list)
    cols: dict = field(default_factory=dict)
    terms: list = field(default_factory=list)
    const0: float = 0.0
    L: np.ndarray | None = None


@dataclass
class Derivation:
    """Result of :func:`dualize`: the dual Problem, the derivation steps, and the recovery map."""

    primal: Problem
    dual: Problem
    steps: list[Step] = field(default_factory=list)
    _blocks: list[_Block] = field(default_factory=list, repr=False)
    _kept: list[Constraint] = field(default_factory=list, repr=False)
    _layout: dict = field(default_factory=dict, repr=False)
    _eq_names: dict = field(default_factory=dict, repr=False)
    _fold_names: dict = field(default_factory=dict, repr=False)
    #: the placeholder spec this derivation was made from (None: a data-embedded primal)
    _spec: Any = field(default=None, repr=False)
    #: the placeholder values it is bound to (None for a spec's template derivation)
    _env: Any = field(default=None, repr=False)
    _derive: Any = field(default=None, repr=False)
    _entries: dict = field(default_factory=dict, repr=False)
    #: the ball's substitution R^2 = s + ||a||^2 (model/ball_radius.py) the primal was
    #: dualised under, inverted by recover; None when there was none
    _ball: Any = field(default=None, repr=False)

    @property
    def bound(self) -> bool:
        """Whether ``.primal``/``.dual`` carry the user's data (``False`` for ``dualize(spec)``
        of a placeholder spec: its problems are on a small internal template, for display)."""
        return self._spec is None or self._env is not None

    def bind(self, X: Any = None, y: Any = None, kernel: Any = None,
             params: dict | None = None) -> Derivation:
        r"""The derivation of the placeholder spec bound to data.

        Parameters
        ----------
        X : array (n, d)
            Training inputs (placeholder ``X``; ``N = n``, ``d`` its columns).
        y : array (n,), optional
            Targets (placeholder ``y``).
        kernel : callable, optional
            Kernel of the ``FeatureVariable``\ s written without one.
        params : dict, optional
            Values of the spec's :class:`~primaldual.model.placeholders.Param`\ s by name.

        Returns
        -------
        Derivation
            Bound: ``.primal``/``.dual`` numeric (the dual's ``Q`` a kernel operator, no
            ``N x N`` array), ``.recover``, ``.evaluate``; the same steps as this one.
        """
        if self._spec is None:
            raise ValueError("this derivation is of a data-embedded primal: there is nothing to "
                             "bind (write the spec on placeholders X, y, N, Param(...))")
        env = make_env(X, y, kernel, params)
        missing = [p for p in self._spec.params if p not in env.params]
        if missing:
            raise ValueError(f"params: no value for {missing} (the spec's parameters are "
                             f"{self._spec.params})")
        primal = self._spec.resolve(env)
        der = self._derive(primal)      # dualize, handed over by it (no import back)
        der._spec, der._env = self._spec, env
        return der

    def evaluate(self, expr: Any, point: dict, x: Any = None) -> np.ndarray:
        """Value of an expression at a primal ``point`` (from :meth:`recover`), e.g. a decision
        function ``w @ phi(x) - rho`` written on the placeholder ``x`` of new inputs.

        ``w @ phi(x)`` is ``Σ_j β_j k(x, x_j)`` over the training basis, computed in row
        chunks over the non-zero ``β_j`` only. A spec expression needs a bound derivation; an
        ordinary expression (of this derivation's own variables) is evaluated as is.
        """
        return np.asarray(self.at_rows(expr, x).value(point), dtype=float)

    def at_rows(self, expr: Any, x: Any = None) -> Any:
        """``expr`` with the placeholder ``x`` bound to the rows ``x`` (a spec expression; an
        ordinary one is returned as an expression): what :meth:`evaluate` evaluates, for a
        caller that evaluates it at several points."""
        if isinstance(expr, Deferred):
            if self._env is None:
                raise ValueError("evaluate: bind the derivation to data first (der.bind(...))")
            base = self._env
            env: Env = make_env(base.X, base.y, base.kernel, base.params, x)
            expr = expr.resolve(env)
        return _as_expr(expr)

    def __str__(self) -> str:
        return "\n\n".join(f"({k}) {s}" for k, s in enumerate(self.steps, 1))

    def to_latex(self) -> str:
        """The whole derivation as a LaTeX ``align*``-free sequence of display blocks."""
        return "\n\n".join(rf"\textbf{{({k}) {latex_title(s.title)}}}" + "\n\\[\n" + s.latex
                             + "\n\\]"
                           for k, s in enumerate(self.steps, 1))

    def _repr_markdown_(self) -> str:
        return "\n\n".join(f"**({k}) {s.title}**\n\n$$\n{s.latex}\n$$"
                           for k, s in enumerate(self.steps, 1))

    # ------------------------------------------------------------------ recovery
    def _lambda(self, values: dict) -> np.ndarray:
        parts = []
        for c in self._kept:
            var, lo = self._layout[c.multiplier]
            if var.name not in values:
                raise KeyError(f"recover: no value for dual variable {var.name!r}")
            v = np.atleast_1d(np.asarray(values[var.name], dtype=float)).ravel()
            parts.append(v[lo:lo + c.size])
        return np.concatenate(parts) if parts else np.zeros(0)

    def multipliers(self, dual_solution: Any) -> dict[str, np.ndarray]:
        """Primal multipliers (``alpha``, and folded ones such as ``mu = (m - M^T alpha)/d``)."""
        values = _values_of(dual_solution)
        lam = self._lambda(values)
        out: dict[str, np.ndarray] = {}
        off = 0
        for c in self._kept:
            out[c.multiplier] = lam[off:off + c.size]
            off += c.size
        for blk in self._blocks:
            if blk.kind == "fold":
                r = blk.m - self._A(blk) @ lam
                out[blk.fold.multiplier] = np.maximum(0.0, r / blk.fold_d)
        return out

    def _A(self, blk: _Block) -> Any:
        """``sum_c M_{c,v}^T lambda_c`` as a matrix over the stacked kept multipliers (a joint
        block: its variables' rows stacked in its order): sparse, or for a joint block whose
        constraints hold a dense coefficient block (kernel rows ``K_B``, full as a sparse
        matrix too) a Fortran-ordered dense array, the layout its triangular solve takes."""
        if blk.kind == "joint":
            if any(isinstance(c.g.lin.get(v), np.ndarray) for v in blk.vars for c in self._kept):
                return self._A_dense(blk.vars)
            return sp.vstack([self._A_of(v) for v in blk.vars]).tocsr()
        return self._A_of(blk.var)

    def _A_dense(self, vs: list[Variable]) -> np.ndarray:
        """:meth:`_A` filled block by block into one Fortran-ordered array (the layout the
        triangular solve of a joint block works in): no sparse copy of a dense block."""
        rows = np.cumsum([0] + [v.size for v in vs])
        cols = np.cumsum([0] + [c.size for c in self._kept])
        A = np.zeros((rows[-1], cols[-1]), order="F")
        for i, v in enumerate(vs):
            for j, c in enumerate(self._kept):
                M = c.g.lin.get(v)
                if M is None:
                    continue
                M = _bcast(M, c.size)
                A[rows[i]:rows[i + 1], cols[j]:cols[j + 1]] = \
                    M.T.toarray() if sp.issparse(M) else M.T
        return A

    def _A_of(self, var: Variable) -> sp.csr_matrix:
        cols = []
        for c in self._kept:
            M = c.g.lin.get(var)
            cols.append(sp.csr_matrix((var.size, c.size)) if M is None
                        else sp.csr_matrix(_bcast(M, c.size)).T)
        # sparse: a feature block's coefficients are a row selection, never an N x N array
        return (sp.hstack(cols).tocsr() if cols
                else sp.csr_matrix((var.size, 0)))

    def recover(self, dual_solution: Any, tol: float = 1e-7) -> dict[str, np.ndarray]:
        """Primal variable values from a dual solution (a Solution or a dict of values, which may
        also hold the dual's multipliers).

        Quadratic blocks: ``x_v = H_v^{-1}(A_v lambda - m_v)`` (feature space: coefficients
        ``beta = (A_w lambda - m_w)/(2c)``). Equality blocks: ``x_v = -nu_v`` when the dual
        multiplier is given, else least squares on the rows that complementarity makes active
        (``tol < lambda_i`` and the folded bound slack ``> tol``). Folded blocks: the dual
        multiplier of the folded bound when given, else ``max(0, -g_i / d_i)`` at ``x_v = 0``.
        """
        values = _values_of(dual_solution)
        mults = _mults_of(dual_solution)
        lam = self._lambda(values)
        x: dict[str, np.ndarray] = {}
        for blk in self._blocks:
            A = self._A(blk)
            if blk.kind == "feature":
                x[blk.var.name] = (A @ lam - blk.m) / (2.0 * blk.coef)
            elif blk.kind == "joint":     # z = H⁻¹(A λ - m) (H = L Lᵀ), split into its variables
                z = sla.cho_solve((blk.L, True), A @ lam - blk.m)
                x.update({v.name: z[blk.cols[v]] for v in blk.vars})
            elif blk.kind == "quad":
                dH = _is_diag(blk.H)
                x[blk.var.name] = ((A @ lam - blk.m) / dH if dH is not None
                                   else np.linalg.solve(blk.H, A @ lam - blk.m))
            elif blk.kind in ("logistic", "huber"):
                # t = l'(u) with u = s v + c0: u = logit(t), or for Huber u = t inside the box
                # and t + (ρ_hi - ρ_lo)/c on it (the box multipliers carry the excess)
                t = (A @ lam - blk.m) / (blk.coef * blk.s * getattr(blk, "w", 1.0))
                if blk.kind == "logistic":
                    t = np.clip(t, 1e-300, 1.0 - 1e-16)
                    u = np.log(t) - np.log1p(-t)
                else:
                    u = t.copy()
                    hi, lo = f"{blk.var.name}_hi", f"{blk.var.name}_lo"
                    if hi in mults and lo in mults:
                        u += (np.asarray(mults[hi], float).ravel()
                              - np.asarray(mults[lo], float).ravel()) / blk.coef
                    elif np.any(np.abs(t) >= blk.term.delta * (1 - 1e-9)):
                        raise KeyError(f"recover: entries of {blk.var.name!r} on the Huber box "
                                       f"are read from the multipliers {hi!r}, {lo!r}; solve "
                                       "the dual with a backend that reports them (CVXPY)")
                x[blk.var.name] = (u - blk.c0) / blk.s
        for blk in self._blocks:
            if blk.kind in ("norm1", "norminf"):
                names = (f"{blk.var.name}_plus", f"{blk.var.name}_minus")
                if not all(nm in mults for nm in names):
                    raise KeyError(f"recover: the l1 block {blk.var.name!r} is read from the "
                                   f"multipliers {names} of the dual's bounds; solve the dual "
                                   "with a backend that reports them (CVXPY)")
                x[blk.var.name] = (np.asarray(mults[names[0]], float).ravel()
                                   - np.asarray(mults[names[1]], float).ravel())
        eq_blocks = [b for b in self._blocks if b.kind == "equality"]
        fold_blocks = [b for b in self._blocks if b.kind == "fold"]
        missing = []
        for blk in eq_blocks:
            nm = self._eq_names[blk.var.name]
            if nm in mults:
                flip = float(blk.fold_d[0]) if blk.fold_d is not None else 1.0
                x[blk.var.name] = -flip * np.atleast_1d(np.asarray(mults[nm],
                                                                   dtype=float)).ravel()
            else:
                missing.append(blk)
        for blk in self._blocks:
            # ball constraints: the QP dual fixed κ(λ) = c + t A_u λ with the equality of u;
            # the true multiplier of that equality carries + t ||a||^2 (SVDD: R² = ν + ‖a‖²)
            u = getattr(blk, "kappa_from", None)
            if u is not None and all(b is not u for b in (m.var for m in missing)):
                beta = x[blk.var.name]
                x[u.name] = x[u.name] + blk.kappa_t * float(beta @ blk.var.gram_matvec(beta))
        for blk in fold_blocks:
            x[blk.var.name] = np.zeros(blk.var.size)
        if missing:
            self._solve_linear(missing, fold_blocks, x, lam, tol)
        # slacks penalised by a diagonal quadratic (L2 slacks): their optimal values too
        quad_slacks = [b for b in self._blocks if b.kind == "quad" and b.m is not None
                       and _is_diag(b.H) is not None]
        slack_blocks = fold_blocks + quad_slacks
        for blk in fold_blocks:
            nm = self._fold_names[blk.var.name]
            base = (np.maximum(0.0, np.asarray(mults[nm], dtype=float).ravel())
                    if nm in mults else None)
            x[blk.var.name] = self._optimal_slacks(blk, slack_blocks, x, base)
        for blk in quad_slacks:
            x[blk.var.name] = self._optimal_slacks(blk, slack_blocks, x, x[blk.var.name])
        out = {v.name: (x[v.name][0:1] if v.scalar else x[v.name]) for v in self.primal.variables}
        for vec, parts in self._entries.items():    # b = (b1, b2) split by the derivation
            out[vec] = np.concatenate([np.ravel(out[u]) for u in parts])
        if self._ball is not None:                  # the user's R^2 = s + ||a||^2
            out = self._ball.invert(out)
        return out

    def _optimal_slacks(self, blk: _Block, fold_blocks: list, x: dict,
                        base: np.ndarray | None) -> np.ndarray:
        """The values of the folded block ``v`` (``d v >= 0``, linear cost ``m``) given every
        other variable in ``x``: the optimal slacks ``v_k = max(0, max_i -g_i / M_ik)`` over the
        rows ``g_i + M_ik v_k >= 0`` (``g_i`` at ``v = 0``) for every entry whose rows all have
        that form (one positive coefficient in ``v``, no other folded variable, an
        inequality) and whose cost and bound are ``m_k >= 0``, ``d_k > 0`` -- the primal point
        is then feasible in those rows by construction, and the primal value is that of the
        predictor. Other entries keep ``base`` (the folded bound's multiplier from the dual
        solution) when given, else the same lower bound; their feasibility is what the
        certificate measures."""
        size = blk.var.size
        x[blk.var.name] = np.zeros(size)
        m = np.broadcast_to(np.asarray(blk.m if blk.m is not None else 0.0,
                                       dtype=float).ravel(), (size,)) if size else np.zeros(0)
        mixed = np.zeros(size, bool)
        if blk.kind == "quad":
            # 1/2 h_k v_k^2 + m_k v_k: unconstrained minimum -m_k / h_k, raised to the rows'
            # lower bounds (the squared hinge's max(0, 1 - y f) for m = 0)
            h = np.asarray(_is_diag(blk.H), dtype=float)
            lb = np.where(h > 0, -m / np.where(h > 0, h, 1.0), 0.0)
            mixed |= ~(h > 0)
        else:
            lb = np.zeros(size)
            d = np.broadcast_to(np.asarray(blk.fold_d if blk.fold_d is not None else 1.0,
                                           dtype=float).ravel(), (size,)) if size \
                else np.zeros(0)
            mixed |= ~(d > 0) | ~(m >= 0)
        pt = _point(self.primal, x)
        for c in self._kept:
            M = c.g.lin.get(blk.var)
            if M is None:
                continue
            M = sp.csr_matrix(_bcast(M, c.size))
            M.eliminate_zeros()
            g = np.atleast_1d(c.g.affine_value(pt))
            cnt = np.diff(M.indptr)
            # rows that also hold another slack variable: the slacks are not separable there
            other = np.zeros(c.size, bool)
            for fb in fold_blocks:
                Mo = c.g.lin.get(fb.var) if fb is not blk else None
                if Mo is not None:
                    Mo = sp.csr_matrix(_bcast(Mo, c.size))
                    Mo.eliminate_zeros()
                    other |= np.diff(Mo.indptr) > 0
            one = np.flatnonzero(cnt == 1)
            col, val = M.indices[M.indptr[one]], M.data[M.indptr[one]]
            pos = val > 0
            np.maximum.at(lb, col[pos], -g[one[pos]] / val[pos])
            bad_rows = (cnt > 0) & ~((cnt == 1) & ~other)
            if c.equality or getattr(c.g, "terms", None):
                bad_rows = cnt > 0     # (a nonlinear scalar term: not read off g here)
            bad_rows[one[~pos]] = True
            if np.any(bad_rows):
                Mb = M[np.flatnonzero(bad_rows)]
                mixed[np.unique(Mb.indices)] = True
        if base is None or not np.any(mixed):
            return lb
        return np.where(mixed, np.broadcast_to(np.asarray(base, dtype=float).ravel(), (size,)),
                        lb)

    def summary(self, dual_solution: Any, tol: float = 1e-7) -> dict[str, Any]:
        """What a derived dual says about the primal, in the user's names.

        Returns a dict with, per multiplier ``λ`` (e.g. ``"alpha"``): ``support[λ]`` (indices
        with ``|λ_i| > tol * max(1, max |λ|)``), ``free[λ]`` (support vectors strictly inside
        every bound the dual puts on them, e.g. ``0 < α_i < C``, or Huber's ``|α_i| < C δ``) and
        ``at_bound[λ]`` (on one of them); ``intercept`` with, per linear-only block (``b``,
        ``ρ``, ``R²``), its value from the equality multiplier (``from_multiplier``, when the
        solution reports it) and from the free support vectors (``from_free``: least squares
        on the rows complementarity makes active); and ``values``, every primal variable by
        name (:meth:`recover`)."""
        values = _values_of(dual_solution)
        lam = self._lambda(values)
        scale = max(1.0, float(np.max(np.abs(lam), initial=0.0)))
        out: dict[str, Any] = {"support": {}, "free": {}, "at_bound": {}, "intercept": {}}
        # the entries of the dual's variables, as positions in the stacked λ
        pos: dict[str, np.ndarray] = {}
        off = 0
        for c in self._kept:
            dv, lo = self._layout[c.multiplier]
            pos.setdefault(dv.name, np.full(dv.size, -1))[lo:lo + c.size] = \
                np.arange(off, off + c.size)
            off += c.size
        # at a bound: an entry in an active row of one of the dual's inequalities (α_i ≤ C,
        # |α_i|/C ≤ δ, ...), the multipliers' own signs apart
        at = np.zeros(lam.shape[0], bool)
        for c in self.dual.constraints:
            if c.equality or c.multiplier in getattr(self, "_sign_names", ()):
                continue
            try:
                g = c.value(values)
            except KeyError:
                continue
            act = g <= tol * scale
            for dv, M in c.g.lin.items():
                if dv.name not in pos or not np.any(act):
                    continue
                Ma = sp.csr_matrix(_bcast(M, c.size))[np.flatnonzero(act)]
                cols = np.unique(Ma.indices[Ma.data != 0])
                p_ = pos[dv.name][cols]
                at[p_[p_ >= 0]] = True
        off = 0
        for c in self._kept:
            lc = lam[off:off + c.size]
            ab = at[off:off + c.size]
            off += c.size
            sup = np.nonzero(np.abs(lc) > tol * scale)[0]
            out["support"][c.multiplier] = sup
            out["free"][c.multiplier] = sup[~ab[sup]]
            out["at_bound"][c.multiplier] = sup[ab[sup]]
        rec = self.recover(dual_solution, tol=tol)
        out["values"] = rec
        eq = [b for b in self._blocks if b.kind == "equality"]
        if eq:
            mults = _mults_of(dual_solution)
            x: dict[str, np.ndarray] = {k: np.asarray(v, float) for k, v in rec.items()}
            free_x = dict(x)
            fold_blocks = [b for b in self._blocks if b.kind == "fold"]
            self._solve_linear(eq, fold_blocks, free_x, lam, tol)
            for blk in eq:
                nm = self._eq_names[blk.var.name]
                entry = {"from_free": free_x[blk.var.name]}
                if nm in mults:
                    entry["from_multiplier"] = rec[blk.var.name]
                out["intercept"][blk.var.name] = entry
        return out

    def _solve_linear(self, missing, fold_blocks, x, lam, tol) -> None:
        """Least-squares values of equality blocks from the complementarity-active rows."""
        for blk in missing:
            x[blk.var.name] = np.zeros(blk.var.size)
        rows, rhs = [], []
        slack_ok = {}
        for fb in fold_blocks:
            r = fb.m - self._A(fb) @ lam
            slack_ok[fb.var] = r / fb.fold_d
        scale = max(1.0, float(np.max(np.abs(lam), initial=0.0)))
        off = 0
        pt = _point(self.primal, x)
        for c in self._kept:
            lc = lam[off:off + c.size]
            off += c.size
            g0 = np.atleast_1d(c.g.affine_value(pt))
            Ms = [(_dense(_bcast(c.g.lin[b.var], c.size)) if b.var in c.g.lin
                   else np.zeros((c.size, b.var.size))) for b in missing]
            act = np.ones(c.size, bool) if c.equality else lc > tol * scale
            for fb in fold_blocks:
                if fb.var in c.g.lin:
                    Mf = abs(sp.csr_matrix(_bcast(c.g.lin[fb.var], c.size)))
                    tight = (slack_ok[fb.var] <= tol * scale).astype(float)
                    act &= ~(np.asarray(Mf @ tight).ravel() > 0)
            if np.any(act):
                rows.append(np.hstack(Ms)[act])
                rhs.append(-g0[act])
        if not rows:
            return
        A, y = np.vstack(rows), np.concatenate(rhs)
        sol = np.linalg.lstsq(A, y, rcond=None)[0]
        off = 0
        for blk in missing:
            x[blk.var.name] = sol[off:off + blk.var.size]
            off += blk.var.size


def _values_of(s: Any) -> dict:
    if hasattr(s, "values") and hasattr(s, "multipliers") and not isinstance(s, dict):
        return dict(s.values)
    if isinstance(s, dict):
        return s
    raise TypeError("dual_solution must be a Solution or a dict of values")


def _mults_of(s: Any) -> dict:
    if hasattr(s, "multipliers") and not isinstance(s, dict):
        return dict(s.multipliers)
    return s


def _point(primal: Problem, x: dict) -> dict:
    return {v.name: x.get(v.name, np.zeros(v.size)) for v in primal.variables}


def _bcast(M, m: int):
    if M.shape[0] == m:
        return M
    return sp.csr_matrix(np.ones((m, 1))) @ sp.csr_matrix(M)


def _is_diag(M) -> np.ndarray | None:
    """The diagonal of a square ``M`` that has no other non-zero entry, else ``None`` (sparse
    input stays sparse)."""
    if M.shape[0] != M.shape[1]:
        return None
    if sp.issparse(M):
        S = sp.csr_matrix(M)
        d = np.asarray(S.diagonal(), dtype=float).copy()
        off = S - sp.diags(d)
        return d if sp.csr_matrix(off).count_nonzero() == 0 else None
    D = np.asarray(M, dtype=float)
    d = np.diag(D).copy()
    if np.array_equal(D, np.diag(d)):
        return d
    return None
