"""Mechanical Lagrangian dual of a convex primal (docs/formulations.md sign convention): QP
blocks, and blocks whose term has a known convex conjugate (l1 and l-inf norms, the logistic
and Huber losses).

Supported primal (``sense="min"``)::

    min   sum_v q_v(x_v) + m^T x + const
    s.t.  g_c(x) = sum_v M_{c,v} (G_v x_v) + g0_c  >= 0  or == 0     [lambda_c]

with ``q_v`` a PSD quadratic of one block: ``c ||w||^2`` of a feature-space variable
(``G_w = K``, the representer form) or of a plain variable, ``c sum_i (d_i x_i)^2``
(``sum_squares`` of a single scaled variable) or ``c x^T P x`` (``quad_form``). The Lagrangian is
``L = f - sum_c lambda_c^T g_c`` and each block's linear coefficient is
``r_v(lambda) = m_v - sum_c M_{c,v}^T lambda_c``.

Per block the derivation does what one does on a board:

* quadratic, positive definite ``q_v``: ``dL/dx_v = H_v x_v + r_v = 0`` gives
  ``x_v = -H_v^{-1} r_v`` (feature space: ``w = sum_j beta_j phi(z_j)``,
  ``beta = -r_w / (2c)``) and contributes ``-1/2 r_v^T H_v^{-1} r_v`` to the dual
  (``-(1/(4c)) r_w^T K r_w``);
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

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import DualizationError
from .expressions import (
    CONST,
    PROD,
    SUM,
    Expr,
    FeatureNorm,
    GramOperator,
    Huber,
    Norm1,
    NormInf,
    QuadForm,
    SumBinaryEntropy,
    SumLogistic,
    SumSquares,
    Variable,
    _has_top_sum,
    coef_mul,
    quad_form,
    vsum,
)
from .kkt import sums_over_rows
from .problem import Constraint, Problem
from .symbols import latex_symbol, text_symbol


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
    kind: str                      # "feature" | "quad" | "equality" | "fold" | "norm1"
    coef: float = 0.0              # feature: c in c ||w||^2
    H: np.ndarray | None = None    # plain quadratic Hessian
    m: np.ndarray | None = None    # objective linear coefficient (adjoint coordinates)
    fold: Constraint | None = None
    fold_d: np.ndarray | None = None
    divisor: tuple[str, str] = ("1", "1")
    n_terms: int = 1               # objective terms of the block (divisor is exact for one)


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

    def __str__(self) -> str:
        return "\n\n".join(f"({k}) {s}" for k, s in enumerate(self.steps, 1))

    def to_latex(self) -> str:
        """The whole derivation as a LaTeX ``align*``-free sequence of display blocks."""
        return "\n\n".join(rf"\textbf{{({k}) {s.title}}}" + "\n\\[\n" + s.latex + "\n\\]"
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

    def _A(self, blk: _Block) -> np.ndarray:
        """``sum_c M_{c,v}^T lambda_c`` as a matrix over the stacked kept multipliers."""
        cols = []
        for c in self._kept:
            M = c.g.lin.get(blk.var)
            cols.append(np.zeros((blk.var.size, c.size)) if M is None
                        else _dense(_bcast(M, c.size)).T)
        return np.hstack(cols) if cols else np.zeros((blk.var.size, 0))

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
            elif blk.kind == "quad":
                x[blk.var.name] = np.linalg.solve(blk.H, A @ lam - blk.m)
            elif blk.kind in ("logistic", "huber"):
                # t = l'(u) with u = s v + c0: u = logit(t), or for Huber u = t inside the box
                # and t + (ρ_hi - ρ_lo)/c on it (the box multipliers carry the excess)
                t = (A @ lam - blk.m) / (blk.coef * blk.s)
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
        for blk in fold_blocks:
            nm = self._fold_names[blk.var.name]
            if nm in mults:
                x[blk.var.name] = np.maximum(0.0, np.asarray(mults[nm], dtype=float).ravel())
                continue
            xi = np.zeros(blk.var.size)
            for c in self._kept:
                M = c.g.lin.get(blk.var)
                if M is None:
                    continue
                M = _dense(_bcast(M, c.size))
                g = np.atleast_1d(c.g.affine_value(_point(self.primal, x)))
                for i in range(c.size):
                    nz = np.nonzero(M[i])[0]
                    if len(nz) == 1 and M[i, nz[0]] > 0:
                        xi[nz[0]] = max(xi[nz[0]], -g[i] / M[i, nz[0]])
            x[blk.var.name] = xi
        return {v.name: (x[v.name][0:1] if v.scalar else x[v.name]) for v in self.primal.variables}

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
                cols = np.nonzero(np.any(np.abs(_dense(_bcast(M, c.size))[act]) > 0, axis=0))[0]
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
                    Mf = _dense(_bcast(c.g.lin[fb.var], c.size))
                    act &= ~np.any((np.abs(Mf) > 0) & (slack_ok[fb.var][None, :]
                                                      <= tol * scale), axis=1)
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
    D = _dense(M)
    if D.shape[0] != D.shape[1]:
        return None
    d = np.diag(D).copy()
    if np.allclose(D, np.diag(d), rtol=0, atol=0):
        return d
    return None


# ---------------------------------------------------------------------- expression builders
def _affine(pieces: list[tuple[Variable, np.ndarray]], const: np.ndarray, txt: str, tex: str,
            size: int, scalar: bool) -> Expr:
    lin = {v: sp.csr_matrix(M) for v, M in pieces}
    prec = SUM if _has_top_sum(txt) else PROD     # -(α_i) reads -α_i
    return Expr(size, scalar, lin, np.asarray(const, float), [], txt, tex, prec,
                ctx={v: ("1", "1") for v, _ in pieces})


def _coef_text(c: float) -> tuple[str, str]:
    if c == 1:
        return "", ""
    if c == -1:
        return "-", "-"
    s = f"{c:.6g}"
    return s + " ", s + " "


# ---------------------------------------------------------------------- main entry
def dualize(primal: Problem, *, name: str | None = None) -> Derivation:
    """Derive the Lagrangian dual of a convex ``primal`` mechanically.

    Parameters
    ----------
    primal : Problem
        A minimisation whose objective is a sum of PSD quadratic blocks (``norm2`` of a feature or
        plain variable, ``sum_squares`` of one scaled variable, ``quad_form``), norms
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
        ``.recover(dual_solution)``.

    Raises
    ------
    DualizationError
        A term without a known conjugate (an entropy), a nonconvex quadratic, a quadratic
        coupling blocks, a singular quadratic block, or a feature-space block that appears only
        linearly.
    """
    if not isinstance(primal, Problem):
        raise TypeError(f"primal must be a Problem, got {type(primal).__name__}")
    if primal.sense != "min":
        raise DualizationError("dualize needs a minimisation primal (sense='min'); write "
                               "max f as min -f")
    steps: list[Step] = [Step("Primal", str(primal), primal.to_latex())]
    primal = _introduce_loss_variables(primal, steps)
    obj = primal.objective
    lag = primal.lagrangian()
    steps.append(Step("Lagrangian (L = f - Σ λ g, λ ≥ 0 on inequalities)", str(lag),
                      lag.to_latex()))

    # ---- classify blocks
    quad: dict[Variable, list] = {v: [] for v in primal.variables}
    for t in obj.terms:
        if not isinstance(t, (FeatureNorm, SumSquares, QuadForm, Norm1, NormInf, SumLogistic,
                              Huber)):
            blk = ", ".join(v.name for v in t.variables)
            raise DualizationError(f"objective term {type(t).__name__} in block(s) {blk!r} has no "
                                   "conjugate known to dualize (it dualises quadratic terms, "
                                   "norm1, norm_inf, logistic and huber)")
        if t.coef < 0:
            raise DualizationError(f"quadratic term in block {t.variables[0].name!r} has a "
                                   "negative coefficient: the objective is nonconvex")
        if len(t.variables) != 1 and isinstance(t, (SumLogistic, Huber, Norm1, NormInf)):
            raise DualizationError(  # pragma: no cover - rewritten on a variable above
                f"a {type(t).__name__} term couples blocks {[v.name for v in t.variables]}: it "
                "is dualised through its conjugate when its argument is one variable; write the "
                "loss on a variable r and r = ... as a constraint with its multiplier")
        if len(t.variables) != 1:
            raise DualizationError("a quadratic term couples blocks "
                                   f"{[v.name for v in t.variables]}; write one block per term")
        quad[t.variables[0]].append(t)

    kkt = {c.key: c for c in primal.kkt().conditions}
    sign_of: dict[Variable, tuple[Constraint, np.ndarray]] = {}
    for c in primal.constraints:
        if c.equality or len(c.g.lin) != 1 or np.any(c.g.const != 0):
            continue
        (v, M), = c.g.lin.items()
        if v.feature or v in sign_of or quad[v]:
            continue
        d = _is_diag(_bcast(M, c.size)) if c.size == v.size else None
        if d is not None and np.all(d > 0):
            sign_of[v] = (c, d)

    blocks: list[_Block] = []
    folded: set[Constraint] = set()
    for v in primal.variables:
        m = np.zeros(v.size)
        if v in obj.lin:
            m = _dense(obj.lin[v]).ravel()
        terms = quad[v]
        ball = [c for c in primal.constraints if v in c.g.rq]
        if v.feature and ball and all(isinstance(t, FeatureNorm) for t in terms):
            # ||phi(x_i) - a||^2 <= ...: the coefficient of ||a||^2 in L is
            # c_obj + Σ_i λ_i (-q_i), fixed below by a derived equality (SVDD: Σ α_i = 1)
            blocks.append(_Block(v, "feature", coef=sum(t.coef for t in terms), m=m,
                                 divisor=("2", "2")))
            blocks[-1].fold_d = None
            blocks[-1].H = None
            blocks[-1].ball = True
        elif v.feature:
            if not terms:
                raise DualizationError(f"feature-space block {v.name!r} appears only linearly: "
                                       "its stationarity K r = 0 is not an equality on the "
                                       "multipliers (add a norm2 term)")
            if not all(isinstance(t, FeatureNorm) for t in terms):
                raise DualizationError(f"feature-space block {v.name!r}: only norm2 terms are "
                                       "supported")
            c = sum(t.coef for t in terms)
            if c <= 0:
                raise DualizationError(f"block {v.name!r}: zero quadratic coefficient")
            blocks.append(_Block(v, "feature", coef=c, m=m,
                                 divisor=terms[0].factor_text(2.0) if len(terms) == 1
                                 else _coef_text_pair(2 * c)))
        elif terms and any(isinstance(t, Norm1) for t in terms):
            # c ||x||_1: its conjugate is the indicator of ||.||_inf <= c, so stationarity
            # 0 ∈ c ∂||x||_1 + m - A λ becomes the two-sided bound |A λ - m| <= c
            if len(terms) != 1 or set(terms[0].e.lin) != {v} or np.any(terms[0].e.const != 0) \
                    or not np.allclose(_dense(_bcast(terms[0].e.lin[v], terms[0].e.size)),
                                       np.eye(v.size)):
                raise DualizationError(f"block {v.name!r}: norm1 is dualised for norm1({v.name}) "
                                       "alone (no other term of the same block)")
            blocks.append(_Block(v, "norm1", coef=terms[0].coef, m=m,
                                 divisor=terms[0].factor_text(1.0)))
            blocks[-1].weights = terms[0].weights          # Σ_k c_k |x_k|: |r_k| <= c c_k
            if terms[0].weights is not None:
                ws = terms[0].weights_sym or _num_text(terms[0].weights)
                blocks[-1].divisor = coef_mul(blocks[-1].divisor, ws)
        elif terms and any(isinstance(t, NormInf) for t in terms):
            # c ||x||_inf: its conjugate is the indicator of ||.||_1 <= c, so stationarity
            # becomes ||A λ - m||_1 <= c, written with a bound τ_k >= |(A λ - m)_k|
            if len(terms) != 1 or set(terms[0].e.lin) != {v} or np.any(terms[0].e.const != 0) \
                    or not np.allclose(_dense(_bcast(terms[0].e.lin[v], terms[0].e.size)),
                                       np.eye(v.size)):
                raise DualizationError(f"block {v.name!r}: norm_inf is dualised for "
                                       f"norm_inf({v.name}) alone (no other term of the block)")
            blocks.append(_Block(v, "norminf", coef=terms[0].coef, m=m,
                                 divisor=terms[0].factor_text(1.0)))
        elif terms and any(isinstance(t, (SumLogistic, Huber)) for t in terms):
            # a separable loss c Σ_i l(s_i v_i + c0_i) with a known conjugate l*: the block
            # leaves -c Σ_i l*(t_i) - Σ_i r_i c0_i / s_i in the dual, t = (A λ - m)/(c s)
            t = terms[0]
            loss = "logistic" if isinstance(t, SumLogistic) else "huber"
            e = t.e
            if len(terms) != 1:
                raise DualizationError(f"block {v.name!r}: a {loss} loss is dualised alone "
                                       "(no other term of the same block)")
            S = (_is_diag(_bcast(e.lin[v], e.size)) if set(e.lin) == {v} and e.size == v.size
                 else None)
            if S is None or np.any(S == 0) or t.coef <= 0:
                raise DualizationError(
                    f"block {v.name!r}: the {loss} loss is dualised through its conjugate when "
                    f"its argument is one variable, entry by entry (s_i {v.name}_i + c_i); write "
                    f"the loss on a variable r and r = ... as a constraint with its multiplier")
            blk = _Block(v, loss, coef=t.coef, m=m, divisor=t.factor_text(1.0))
            blk.term, blk.s = t, S
            blk.c0 = np.broadcast_to(e.const, (v.size,)).astype(float)
            if loss == "huber":
                blk.H = np.diag(t.coef * S ** 2)
                if not np.allclose(S ** 2, 1.0):
                    blk.divisor = _coef_text_pair(float(t.coef * S[0] ** 2)) if np.allclose(
                        S ** 2, S[0] ** 2) else ("H", "H")
            blocks.append(blk)
        elif terms:
            H = np.zeros((v.size, v.size))
            for t in terms:
                if isinstance(t, FeatureNorm):
                    H += 2 * t.coef * np.eye(v.size)
                elif isinstance(t, SumSquares):
                    e = t.e
                    if set(e.lin) != {v} or np.any(e.const != 0):
                        raise DualizationError(f"sum_squares in block {v.name!r} must be of a "
                                               "single scaled variable without offset")
                    D = _dense(_bcast(e.lin[v], e.size))
                    H += 2 * t.coef * D.T @ D
                else:
                    H += 2 * t.coef * t.op.dense()
            lam_min = np.linalg.eigvalsh(0.5 * (H + H.T))[0] if v.size else 1.0
            if lam_min <= 1e-12 * max(1.0, float(np.max(np.abs(H)))):
                raise DualizationError(f"quadratic block {v.name!r} is singular (smallest "
                                       f"eigenvalue {lam_min:.3g}) and cannot be eliminated")
            blocks.append(_Block(v, "quad", H=H, m=m, divisor=terms[0].factor_text(2.0)
                                 if len(terms) == 1 else _coef_text_pair(1.0),
                                 n_terms=len(terms)))
        elif v in sign_of:
            c, d = sign_of[v]
            folded.add(c)
            blocks.append(_Block(v, "fold", m=m, fold=c, fold_d=d))
        else:
            blocks.append(_Block(v, "equality", m=m))

    kept = [c for c in primal.constraints if c not in folded]
    # layout: quadratic multipliers first, stacked into one variable if several
    Aq = {}
    for c in kept:
        Aq[c] = any(c.g.lin.get(b.var) is not None and abs(_dense(c.g.lin[b.var])).sum() > 0
                    for b in blocks if b.kind in ("feature", "quad", "huber"))
    qcons = [c for c in kept if Aq[c]]
    order = qcons + [c for c in kept if not Aq[c]]
    layout: dict[str, tuple[Variable, int]] = {}
    dvars: list[Variable] = []
    if len(qcons) > 1:
        nm = "_".join(c.multiplier for c in qcons)
        stacked = Variable(nm, sum(c.size for c in qcons))
        _name_stacked(stacked, qcons)
        dvars.append(stacked)
        off = 0
        for c in qcons:
            layout[c.multiplier] = (stacked, off)
            off += c.size
        rest = order[len(qcons):]
    else:
        rest = order
    for c in rest:
        dv = Variable(c.multiplier, None if c.scalar else c.size, index=c.index_set)
        dvars.append(dv)
        layout[c.multiplier] = (dv, 0)
    kept = order
    n = sum(c.size for c in kept)

    der = Derivation(primal, primal, steps, blocks, kept, layout)
    for blk in blocks:
        if getattr(blk, "ball", False):
            _fix_ball_coefficient(blk, blocks, kept, der)

    def to_expr(R: np.ndarray, const, txt: str, tex: str, size: int, scalar: bool) -> Expr:
        """Affine expression ``R lambda + const`` over the dual variables."""
        pieces: dict[Variable, np.ndarray] = {}
        off = 0
        for c in kept:
            dv, lo = layout[c.multiplier]
            blockR = R[:, off:off + c.size]
            off += c.size
            if np.any(blockR != 0):
                P = pieces.setdefault(dv, np.zeros((size, dv.size)))
                P[:, lo:lo + c.size] += blockR
        return _affine(list(pieces.items()), np.broadcast_to(const, (size,)), txt, tex, size,
                       scalar)

    # ---- per-block stationarity steps and dual pieces
    Q = np.zeros((n, n))
    p = np.zeros(n)
    const = float(obj.const[0])
    off = 0
    for c in kept:
        p[off:off + c.size] -= np.broadcast_to(c.g.const, (c.size,))
        off += c.size
    feature_ops = []
    extra_terms: list[Expr] = []      # non-quadratic dual terms (a logistic loss's entropy)
    extra_vars: list[Variable] = []   # auxiliary dual variables (norm_inf's bound τ)
    dual_cons: list[Constraint] = []
    eq_names: dict[str, str] = {}
    fold_names: dict[str, str] = {}
    for blk in blocks:
        v = blk.var
        st = kkt.get(f"stationarity[{v.name}]")
        head_t, head_x = (st.txt, st.tex) if st is not None else ("", "")
        A = der._A(blk)
        if blk.kind == "feature":
            Kf = v.gram()
            Hinv = Kf / (2 * blk.coef)
            feature_ops.append((blk, A))
            Q += A.T @ Hinv @ A
            p += A.T @ Hinv @ blk.m
            const -= 0.5 * blk.m @ Hinv @ blk.m
            steps.append(Step(f"Stationarity in {v.block_txt}: eliminate (positive definite)",
                              head_t + f"\nsubstituting {v.block_txt} back, its terms in L "
                              f"become -1/2 Σ_ij λ_i λ_j Q_ij (Q below): the dual sees only "
                              "kernel values",
                              head_x + r"\;\Rightarrow\; \text{substitute: } -\frac{1}{2} "
                              r"\lambda^T Q \lambda"))
        elif blk.kind == "quad":
            Hinv = np.linalg.inv(blk.H)
            Q += A.T @ Hinv @ A
            p += A.T @ Hinv @ blk.m
            const -= 0.5 * blk.m @ Hinv @ blk.m
            solved = _solved_text(v, blk, kept, layout)
            if solved is not None:
                # a diagonal block, e.g. LS-SVM's e_i = alpha_i / C
                steps.append(Step(f"Stationarity in {v.block_txt}: eliminate (positive "
                                  "definite)", head_t + f"\n⇒ {solved[0]}",
                                  head_x + rf"\;\Rightarrow\; {solved[1]}"))
            else:
                steps.append(Step(f"Stationarity in {v.block_txt}: eliminate (positive definite)",
                                  head_t + f"\n⇒ {v.block_txt} = H⁻¹(Σ_c M_cᵀλ_c - m) "
                                  f"(H = ∂²L/∂{v.block_txt}², factor {blk.divisor[0]})",
                                  head_x + rf"\;\Rightarrow\; {v.block_tex} = H^{{-1}}\left("
                                  r"\sum_c M_c^T\lambda_c - m\right)"))
        elif blk.kind == "equality":
            # write the equality with nonnegative coefficients when possible (1^T alpha = 1)
            flip = -1.0 if (np.all(A <= 0) and np.any(A < 0)) else 1.0
            # the multiplier of this equality is the primal variable itself (-b, or rho when
            # flipped): name it so, never a fresh Greek letter that clashes with nu-SVC's nu
            nm = f"minus_{v.name}" if flip > 0 else v.name
            eq_names[v.name] = nm
            blk.fold_d = np.array([flip])
            txt, tex = _sum_text(v, kept, layout, flip)
            e = to_expr(flip * A, 0.0, txt, tex, v.size, v.scalar)
            rt_ = _rhs_text(v, obj, blk.m)
            if flip < 0:
                rt_ = coef_mul(("-1", "-1"), rt_)
            rhs = _affine([], flip * blk.m, *rt_, v.size, v.scalar)
            con = Constraint(e, "==", rhs, nm)
            ball = [b for b in blocks if getattr(b, "kappa_from", None) is v]
            if ball and v.scalar:
                # the weight of ||a||^2 was fixed with this equality (SVDD): its multiplier is
                # flip (t ||a||^2 - x_v), not -x_v (recover adds t ||a||^2 back)
                a, t = ball[0].var, ball[0].kappa_t
                tt = _coef_text(t)
                at = (f"{tt[0]}‖{a.block_txt}‖²", rf"{tt[1]}\|{a.block_tex}\|^2")
                con.label = ((f"{at[0]} - {v.txt}", f"{at[1]} - {v.tex}") if flip > 0
                             else (f"{v.txt} - {at[0]}", f"{v.tex} - {at[1]}"))
            dual_cons.append(con)
            rel = f"its multiplier is {con.mult_txt}"
            steps.append(Step(f"Stationarity in {v.block_txt}: linear only ⇒ equality on the "
                              "multipliers", head_t + f"\n⇒ {con.txt()}   [{rel}]",
                              head_x + rf"\;\Rightarrow\; {con.tex()}"))
        elif blk.kind == "norm1":
            comp = None if v.scalar else _sum_text(v, kept, layout, component=True)
            txt, tex = _sum_text(v, kept, layout)
            where = None
            if comp is not None:    # per component k: Σ_i y_i x_ik α_i ≤ 1,  k = 1..d
                txt, tex = comp
                where = f"{v.letter} = 1..{v.index or v.size}"
            elif v.blockwise:       # the vector inequality, read componentwise
                where = f"componentwise in R^{v.index or v.size}"
            ct, cx = blk.divisor
            mt, mx = _rhs_text(v, obj, blk.m) if np.any(blk.m != 0) else ("", "")
            up_t = ct if not mt else f"{mt} + {ct}"
            up_x = cx if not mx else f"{mx} + {cx}"
            lo_t = ct if not mt else f"{ct} - {mt}"
            lo_x = cx if not mx else f"{cx} - {mx}"
            e_pos = to_expr(A, 0.0, txt, tex, v.size, v.scalar)
            e_neg = to_expr(-A, 0.0, "-" + txt if " " not in txt else f"-({txt})",
                            "-" + tex if " " not in tex else rf"-\left({tex}\right)",
                            v.size, v.scalar)
            cb = blk.coef * (np.ones(v.size) if blk.weights is None else blk.weights)
            c_pos = Constraint(e_pos, "<=", _affine([], blk.m + cb, up_t, up_x, v.size,
                                                    v.scalar), f"{v.name}_plus", where)
            c_neg = Constraint(e_neg, "<=", _affine([], cb - blk.m, lo_t, lo_x, v.size,
                                                    v.scalar), f"{v.name}_minus", where)
            for c_ in (c_pos, c_neg):   # rows over the block's own index (k = 1..d)
                c_.letter, c_.index_set = v.letter, v.index
            dual_cons += [c_pos, c_neg]
            steps.append(Step(f"Stationarity in {v.block_txt}: conjugate of the l1 norm "
                              "⇒ a two-sided bound",
                              head_t + f"\n⇒ |{txt}| ≤ {up_t}"
                              + (f",  {where}" if where else "") + "   "
                              f"[{v.block_txt} = {text_symbol(v.name + '_plus')} - "
                              f"{text_symbol(v.name + '_minus')}]",
                              head_x + rf"\;\Rightarrow\; \left|{tex}\right| \leq {up_x}"))
        elif blk.kind in ("logistic", "huber"):
            cs = blk.coef * blk.s
            R = A / cs[:, None]                       # t = (A λ - m) / (c s)
            t0 = -blk.m / cs
            tt, tx = _conj_arg_text(v, blk, kept, layout)
            t_expr = to_expr(R, t0, tt, tx, v.size, v.scalar)
            # the offset c0 of the argument: - Σ_i r_i c0_i / s_i with r = m - A λ
            p += A.T @ (blk.c0 / blk.s)
            const -= float(blk.m @ (blk.c0 / blk.s))
            k_ = v.letter
            lo_nm, hi_nm = f"{v.name}_lo", f"{v.name}_hi"
            lp = "σ" if blk.kind == "logistic" else f"h'_{blk.term.delta_sym[0]}"
            if blk.kind == "huber":
                Hinv = np.diag(1.0 / (blk.coef * blk.s ** 2))
                Q += A.T @ Hinv @ A
                p += A.T @ Hinv @ blk.m
                const -= 0.5 * blk.m @ Hinv @ blk.m
                d, dx = blk.term.delta_sym
                delta = blk.term.delta
                cons_ = [Constraint(t_expr, "<=", _affine([], np.full(v.size, delta), d, dx,
                                                          v.size, v.scalar), hi_nm),
                         Constraint(t_expr, ">=", _affine([], np.full(v.size, -delta), f"-{d}",
                                                          f"-{dx}", v.size, v.scalar), lo_nm)]
                conj_t = (f"conjugate of the Huber loss: h*(t) = t²/2 on |t| ≤ {d}",
                          rf"h^*(t) = t^2/2,\ |t| \leq {dx}")
                res_t = (f"-1/2 Σ_{k_} {blk.divisor[0]} ({tt})² joins -1/2 λᵀQλ, "
                         f"|{tt}| ≤ {d}")
                res_x = rf"|{tx}| \leq {dx}"
            else:
                H_expr = _term_expr_of(SumBinaryEntropy(t_expr), blk.coef, blk.divisor, tt, tx,
                                       k_, v.scalar)
                extra_terms.append(H_expr)
                cons_ = [Constraint(t_expr, ">=", _affine([], np.zeros(v.size), "0", "0",
                                                          v.size, v.scalar), lo_nm),
                         Constraint(t_expr, "<=", _affine([], np.ones(v.size), "1", "1",
                                                          v.size, v.scalar), hi_nm)]
                conj_t = ("conjugate of the logistic loss l(u) = log(1 + exp(u)): l' = σ "
                          "(σ(u) = 1/(1 + exp(-u))), l*(t) = -H(t) on 0 ≤ t ≤ 1",
                          r"\ell^*(t) = -H(t),\ 0 \leq t \leq 1")
                res_t = f"{H_expr.txt} joins the dual, 0 ≤ {tt} ≤ 1"
                res_x = rf"{H_expr.tex},\ 0 \leq {tx} \leq 1"
            for c_ in cons_:
                c_.letter, c_.index_set = v.letter, v.index
            dual_cons += cons_
            steps.append(Step(f"Stationarity in {v.block_txt}: {conj_t[0]}",
                              head_t + f"\n⇒ t_{k_} = {tt} = {lp}({blk.term.e.txt}): {res_t}",
                              head_x + rf"\;\Rightarrow\; {conj_t[1]}:\ {res_x}"))
        elif blk.kind == "norminf":
            txt, tex = _sum_text(v, kept, layout)
            comp = None if v.scalar else _sum_text(v, kept, layout, component=True)
            if comp is not None:
                txt, tex = comp
            tau = Variable(f"tau_{v.name}", v.size, index=v.index)   # indexed like v
            extra_vars.append(tau)
            mt, mx = _rhs_text(v, obj, blk.m) if np.any(blk.m != 0) else ("", "")
            e_pos = to_expr(A, -blk.m, txt if not mt else f"{txt} - {mt}",
                            tex if not mx else f"{tex} - {mx}", v.size, v.scalar)
            e_neg = -e_pos
            where = f"{tau.letter} = 1..{tau.index}" if v.blockwise else None
            c_pos = Constraint(e_pos, "<=", tau.as_expr(), f"{v.name}_plus", where)
            c_neg = Constraint(e_neg, "<=", tau.as_expr(), f"{v.name}_minus", where)
            for c_ in (c_pos, c_neg):
                c_.letter, c_.index_set = tau.letter, tau.index
            ct, cx = blk.divisor
            c_sum = Constraint(vsum(tau), "<=", _affine([], np.array([blk.coef]), ct, cx, 1,
                                                        True), f"{v.name}_sum")
            dual_cons += [c_pos, c_neg, c_sum]
            steps.append(Step(f"Stationarity in {v.block_txt}: conjugate of the l∞ norm "
                              "⇒ an l1 bound",
                              head_t + f"\n⇒ Σ_{tau.letter} |{e_pos.txt}| ≤ {ct}, written "
                              f"with {tau.block_txt}_{tau.letter} ≥ |{e_pos.txt}|   "
                              f"[{v.block_txt} = {text_symbol(v.name + '_plus')} - "
                              f"{text_symbol(v.name + '_minus')}]",
                              head_x + rf"\;\Rightarrow\; \sum_{{{tau.letter}}} "
                              rf"\left|{e_pos.tex}\right| \leq {cx}"))
        else:  # fold
            mu = blk.fold.multiplier
            fold_names[v.name] = v.name
            rt, rx = _rhs_text(v, obj, blk.m)
            if np.all(A <= 0) and np.any(A < 0) and np.all(blk.m <= 0):
                # -Σ_i α_i ≤ -ν reads Σ_i α_i ≥ ν (the same row, the same multiplier)
                txt, tex = _sum_text(v, kept, layout, -1.0)
                e = to_expr(-A, 0.0, txt, tex, v.size, v.scalar)
                rt, rx = coef_mul(("-1", "-1"), (rt, rx))
                rhs = _affine([], -blk.m, rt, rx, v.size, v.scalar)
                con = Constraint(e, ">=", rhs, v.name, blk.fold.where)
            else:
                txt, tex = _sum_text(v, kept, layout)
                e = to_expr(A, 0.0, txt, tex, v.size, v.scalar)
                rhs = _affine([], blk.m, rt, rx, v.size, v.scalar)
                con = Constraint(e, "<=", rhs, v.name, blk.fold.where)
            dual_cons.append(con)
            steps.append(Step(f"Stationarity in {v.block_txt}: fold the sign constraint "
                              f"[{text_symbol(mu)} ≥ 0] into a bound",
                              head_t + f"\n{blk.fold.mult_txt} ≥ 0 ⇒ {con.txt()}   "
                              f"(its multiplier is {v.block_txt})",
                              head_x + rf"\;,\; {blk.fold.mult_tex} \geq 0 \;\Rightarrow\; "
                              + con.tex()))
    der._eq_names, der._fold_names = eq_names, fold_names

    # ---- nonnegativity of inequality multipliers
    from .render import n_samples
    n_samp = n_samples(primal)
    ineq_by_var: dict[Variable, list[Constraint]] = {}
    for c in kept:
        if not c.equality:
            ineq_by_var.setdefault(layout[c.multiplier][0], []).append(c)
    n_s = len(ineq_by_var)
    sign_cons = []
    for dv, cs in ineq_by_var.items():
        if sum(c.size for c in cs) != dv.size:
            raise DualizationError(f"multipliers stacked in {dv.name!r} mix equality and "
                                   "inequality constraints; not supported")
        nm = "s" if n_s == 1 else f"s_{dv.name}"
        con = (dv >= 0).named(nm)
        if dv._stack is None and len(cs) == 1 and cs[0].where:
            con.where = cs[0].where      # the rows of the constraint it multiplies
        if dv._stack is not None:
            sizes = {size for _, size, sc in dv._stack_parts if not sc}
            if any(sc for _, _, sc in dv._stack_parts):
                raise DualizationError(f"stacked multipliers {dv.block_txt} mix scalars and "
                                       "vectors")
            if len(sizes) == 1:
                n0 = sizes.pop()
                con.where = "i = 1..N" if n0 == n_samp else f"i = 1..{n0}"
            else:   # parts over different row sets (Weston-Watkins: i with y_i ≠ k)
                con.where = "entrywise"
        sign_cons.append(con)
    der._sign_names = {c.multiplier for c in sign_cons}

    # ---- dual objective
    qvars = {layout[c.multiplier][0] for c in kept if Aq[c]}
    # the quadratic form covers the whole variable holding the quadratic multipliers (stacked
    # first in the layout), including rows whose coefficient happens to be zero
    nq = sum(c.size for c in kept if Aq[c])
    qidx = np.arange(nq)
    obj_expr: Expr | None = None
    for dv in dvars:
        pv = _slice_vec(p, dv, kept, layout)
        if np.any(pv != 0):
            if np.allclose(pv, pv[0]) and dv._stack is None:
                ct, cx = _coef_text(float(pv[0]))
                k_ = dv.letter
                bt, bx = (f"Σ_{k_} {dv.txt}", rf"\sum_{{{k_}}} {dv.tex}") if not dv.scalar \
                    else (dv.txt, dv.tex)
                term = _affine([(dv, np.full((1, dv.size), pv[0]))], np.zeros(1),
                               f"{ct}{bt}", f"{cx}{bx}", 1, True)
            elif (sym := _const_symbol(dv, pv, kept, layout)) is not None:
                term = _affine([(dv, pv[None, :])], np.zeros(1),
                               f"Σ_{dv.letter} {sym[0]} {dv.txt}",
                               rf"\sum_{{{dv.letter}}} {sym[1]} {dv.tex}",
                               1, True)
            else:
                lt, lx = _linear_text(dv, kept, layout, p)
                term = _affine([(dv, pv[None, :])], np.zeros(1), lt, lx, 1, True)
            obj_expr = term if obj_expr is None else obj_expr + term
    gram = qt = qv = None
    if len(qidx):
        if len(qvars) != 1:  # pragma: no cover - layout stacks quadratic multipliers
            raise DualizationError("quadratic part spans several dual variables")
        qv = next(iter(qvars))
        gram = _gram_operator(Q[np.ix_(qidx, qidx)], feature_ops, blocks, der, qidx)
        qt = _diag_text(gram, blocks)
        if qt is not None:   # the eliminated diagonal block shows: αᵀ(Q + I/C)α
            qterm = -(0.5 * quad_form(qv, gram, txt=f"{qv.block_txt}ᵀ(Q + {qt[0]}){qv.block_txt}",
                                      tex=rf"{qv.block_tex}^T (Q + {qt[1]}) {qv.block_tex}"))
        else:
            qterm = -(0.5 * quad_form(qv, gram))
        obj_expr = qterm if obj_expr is None else obj_expr + qterm
    for et in extra_terms:
        obj_expr = et if obj_expr is None else obj_expr + et
    if const != 0:
        obj_expr = (obj_expr + const) if obj_expr is not None else _affine(
            [], np.array([const]), *_num_text(np.array([const])), 1, True)
    if obj_expr is None:
        obj_expr = _affine([], np.zeros(1), "0", "0", 1, True)
    dname = name or (primal.name.replace("primal", "dual (derived)") if "primal" in primal.name
                     else primal.name + " dual (derived)")
    cons = ([c for c in dual_cons if c.equality] + sign_cons
            + [c for c in dual_cons if not c.equality])
    dual = Problem(obj_expr, cons, "max", dname, variables=dvars + extra_vars)
    dual.n_samples_hint = n_samp
    # no structure record is attached: SMO/KKT read it from the dual itself (model/structure.py)
    der.dual = dual
    qtxt = None if gram is None else _q_text(
        feature_ops, blocks, [c for c in kept if Aq[c]], qv,
        _diag_block(blocks) if qt is not None else None,
        frozenset(v.name for v in primal.variables))
    if qtxt:
        (ht, hx), defs = qtxt
        over = "" if qv._stack is None else f" over the entries r, s of {qv.block_txt}"
        dt = "; ".join(t for t, _ in defs)
        dx = r",\; ".join(x for _, x in defs)
        line_t = ht + (f" with {dt}" if dt else "")
        line_x = hx + (rf",\quad {dx}" if dx else "")
        expl = ("the coefficient of each eliminated block in each constraint, divided by the "
                "block's curvature" + ("; kernel trick: only k(x_i, x_j) appears"
                                       if feature_ops else ""))
        steps.insert(len(steps), Step("Quadratic form of the multipliers",
                                      f"{ht}{over}" + (f", where {dt}" if dt else "")
                                      + f" ({expl})", line_x))
        dual.definitions.append((line_t, line_x))
    steps.append(Step("Substitute back: the dual", str(dual), dual.to_latex()))
    return der


def _introduce_loss_variables(primal: Problem, steps: list[Step]) -> Problem:
    """A logistic or Huber loss of an affine argument, ``c Σ_i l(e_i)`` (the textbook
    ``C Σ log(1 + exp(-y_i f_i))``), becomes ``c Σ_i l(u_i)`` with ``u_i = e_i [λ_i]``: its
    conjugate then applies entry by entry. Returns the rewritten primal (``primal`` itself when
    every loss is already on a variable) and records the step."""
    from .expressions import Expr as _E
    obj = primal.objective
    names = {v.name for v in primal.variables} | set(primal.multipliers)
    new_terms, cons, lins = [], list(primal.constraints), dict(obj.lin)
    txt, tex = obj.txt, obj.tex
    changed = False
    for t in obj.terms:
        e = getattr(t, "e", None)
        if not isinstance(t, (SumLogistic, Huber, Norm1, NormInf)) or _on_a_variable(t):
            new_terms.append(t)
            continue
        u_name = next(n for n in ("u", "r", "z", "u_1", "u_2", "u_3") if n not in names)
        m_name = next(n for n in ("alpha", "lambda", "lambda_u", "nu_u") if n not in names)
        names |= {u_name, m_name}
        u = Variable(u_name, None if e.scalar else e.size)
        ut, ux = (u.txt, u.tex)
        ttxt, ttex = getattr(t, "txt", None), getattr(t, "tex", None)
        et, ex = e.txt, e.tex
        if ttxt is None or txt.count(ttxt) != 1 or tex.count(ttex) != 1 or et not in ttxt:
            raise DualizationError(
                f"a {type(t).__name__} term of an affine argument could not be rewritten on a "
                "variable; write the loss on a variable r and r = ... as a constraint")
        # the same atom and factor on u: c Σ_i l(u_i)
        nt = object.__new__(type(t))
        nt.__dict__.update(t.__dict__)
        nt.e = u.as_expr()
        nt.variables = [u]
        txt = txt.replace(ttxt, ttxt.replace(f"({et})", f"({ut})").replace(et, ut))
        tex = tex.replace(ttex, ttex.replace(ex, ux))
        nt.txt, nt.tex = ttxt.replace(et, ut), ttex.replace(ex, ux)
        new_terms.append(nt)
        cons.append((u == e).named(m_name))
        changed = True
    if not changed:
        return primal
    new_obj = _E(1, True, lins, obj.const, new_terms, txt, tex, obj.prec, ctx=obj.ctx,
                 summed=obj.summed)
    known = {id(v) for v in primal.variables}
    P = Problem(new_obj, cons, "min", primal.name,
                variables=list(primal.variables) + [v for c in cons for v in c.g.variables
                                                    if id(v) not in known])
    steps.append(Step("Write each loss on a variable of its own (its conjugate then applies "
                      "entry by entry)", str(P), P.to_latex()))
    return P


def _on_a_variable(t) -> bool:
    """The term's argument is one plain variable, entry by entry (a loss: any nonzero scale and
    offset; a norm: the variable itself)."""
    e = t.e
    if len(e.lin) != 1:
        return False
    (v, M), = e.lin.items()
    if v.feature or v.size != e.size:
        return False
    d = _is_diag(_bcast(M, e.size))
    if d is None or np.any(d == 0):
        return False
    if isinstance(t, (Norm1, NormInf)):
        return bool(np.allclose(d, 1.0) and not np.any(e.const != 0))
    return True


def _conj_arg_text(v: Variable, blk: _Block, kept, layout) -> tuple[str, str]:
    """Text of the conjugate's argument ``t = (A λ - m) / (c s)`` of a loss block (``α_i/C``
    for kernel logistic regression's ``C Σ log(1 + exp(-z_i))`` with ``y_i f_i = z_i [α_i]``)."""
    if not (np.allclose(blk.s, blk.s[0]) and np.allclose(blk.m, blk.m[0])):
        raise DualizationError(f"block {v.name!r}: the loss's scale or linear term varies with "
                               "the entry; the conjugate's argument has no symbolic text")
    nt, nx = _sum_text(v, kept, layout)
    if blk.m[0] != 0:
        mt = _coef_text_pair(float(blk.m[0]))
        nt, nx = f"{nt} - {mt[0]}", f"{nx} - {mt[1]}"
    s0 = float(blk.s[0])
    if s0 < 0:      # divide by s: a negative scale flips the sign
        if nt.startswith("-") and not _has_top_sum(nt[1:]):
            nt, nx = nt[1:], nx[1:]
        else:
            nt, nx = (f"-({nt})", rf"-\left({nx}\right)")
    ct, cx = blk.divisor if abs(s0) == 1 else coef_mul(_coef_text_pair(abs(s0)), blk.divisor)
    if ct == "1":
        return nt, nx
    pt = f"({nt})" if _has_top_sum(nt) else nt
    return f"{pt}/{ct}", rf"\frac{{{nx}}}{{{cx}}}"


def _term_expr_of(term, coef: float, ctext: tuple[str, str], tt: str, tx: str, k: str,
                  scalar: bool) -> Expr:
    """``c Σ_k H(t_k)``: a dual term ``coef * term`` with its text."""
    from .expressions import _term_expr
    term.coef = term.num = float(coef)
    body_t = f"H({tt})" if scalar else f"Σ_{k} H({tt})"
    body_x = rf"H\left({tx}\right)" if scalar else rf"\sum_{{{k}}} H\left({tx}\right)"
    if ctext[0] != "1":
        body_t, body_x = f"{ctext[0]} {body_t}", f"{ctext[1]} {body_x}"
    return _term_expr(term, body_t, body_x)


def _coef_text_pair(c: float) -> tuple[str, str]:
    s = f"{c:.6g}"
    return s, s


def _num_text(v: np.ndarray) -> tuple[str, str]:
    v = np.atleast_1d(v)
    if np.allclose(v, v[0]):
        s = "0" if v[0] == 0 else f"{v[0]:.6g}"
        return s, s
    # no symbol for these numbers: say so rather than print an undefined letter
    return "(numbers without a symbol)_i", r"(\text{numbers without a symbol})_{i}"


def _rhs_text(v: Variable, obj: Expr, m: np.ndarray) -> tuple[str, str]:
    if v in obj.ctx and obj.ctx[v] != ("1", "1"):
        return obj.ctx[v]
    return _num_text(m)


def _sum_text(v: Variable, kept: list[Constraint], layout, flip: float = 1.0,
              component: bool = False) -> tuple[str, str] | None:
    """``Σ_c M_{c,v}^T λ_c`` rendered from the constraints' symbolic coefficients of ``v``;
    ``component``: the k-th entry of that vector (``Σ_i y_i x_ik α_i``) from the per-component
    coefficients, ``None`` when a constraint has none."""
    parts_t, parts_x = [], []
    for c in kept:
        if v not in c.g.ctx:
            continue
        k = c.g.ctx[v]
        if component:
            if v not in c.g.comp:
                return None
            k = c.g.comp[v]
        lt, lx = c.mult_txt, c.mult_tex
        k0, k1 = k
        neg = k0.startswith("-") and not _has_top_sum(k0[1:])
        if neg:
            k0, k1 = k0[1:], k1[1:]
        if _has_top_sum(k0):      # a sum as a factor: ([y_i=0] - 1) α_0,i
            k0, k1 = f"({k0})", rf"\left({k1}\right)"
        kt = "" if k0 == "1" else (k0 + " ")
        kx = "" if k1 == "1" else (k1 + " ")
        neg = neg != (flip < 0)
        if sums_over_rows(v, c):
            t, x = f"Σ_{c.letter} {kt}{lt}", rf"\sum_{{{c.letter}}} {kx}{lx}"
        else:
            t, x = f"{kt}{lt}", f"{kx}{lx}"
        parts_t.append(("-" if neg else "+", t))
        parts_x.append(("-" if neg else "+", x))
    if not parts_t:
        return "0", "0"

    def join(parts):
        s = ""
        for sg, t in parts:
            s = (("-" if sg == "-" else "") + t) if not s else f"{s} {sg} {t}"
        return s
    return join(parts_t), join(parts_x)


def _const_symbol(dv: Variable, pv: np.ndarray, kept, layout) -> tuple[str, str] | None:
    """Text of ``-g0_c`` when the dual variable is one constraint's multiplier whose constant is a
    single data vector (``y_i`` in ``<w, phi(x_i)> + b + e_i = y_i``)."""
    cs = [c for c in kept if layout[c.multiplier][0] is dv]
    if len(cs) != 1:
        return None
    c = cs[0]
    if not np.allclose(-np.broadcast_to(c.g.const, (c.size,)), pv):
        return None
    side, other = (c.rhs, c.lhs) if c.op != "<=" else (c.lhs, c.rhs)
    if side.lin or np.any(other.const != 0) or side.prec < 2:
        return None
    return side.txt, side.tex


def _fix_ball_coefficient(blk: _Block, blocks, kept, der) -> None:
    """Set the coefficient of ``||a||^2`` in ``L`` for a block in ball constraints:
    ``κ(λ) = c_obj + Σ_c Σ_i λ_{c,i} (-q_{c,i})`` must be fixed by the equality of a linear-only
    block (``R²``'s stationarity gives ``Σ_i α_i = 1``), else the dual is not a QP."""
    k = np.concatenate([-np.broadcast_to(c.g.rq[blk.var], (c.size,)) if blk.var in c.g.rq
                        else np.zeros(c.size) for c in kept])
    for eb in blocks:
        if eb.kind != "equality" or eb.var.size != 1:
            continue
        row = der._A(eb).ravel()
        j = np.argmax(np.abs(row))
        if row[j] == 0:
            continue
        t = k[j] / row[j]
        if np.allclose(k, t * row, atol=1e-12) and t > 0:
            kappa = blk.coef + t * float(eb.m[0])
            if kappa <= 0:
                break
            blk.coef = kappa
            blk.divisor = _coef_text_pair(2 * kappa)
            blk.kappa_from, blk.kappa_t = eb.var, t
            return
    raise DualizationError(f"block {blk.var.name!r} in ball constraints: the weight "
                           f"Σ_i λ_i of ||{blk.var.name}||² in the Lagrangian is not fixed by "
                           "an equality of the dual (add a variable such as R² priced in the "
                           "objective), so the dual is not a QP")


def _name_stacked(v: Variable, cons: list[Constraint]) -> None:
    """Render a stacked dual variable as the tuple of its multipliers: ``(α, α*)``, entries
    ``(α_i, α*_i)``, ``(α, α*) ∈ R^N × R^N``."""
    bt = "(" + ", ".join(c.mult_block_txt for c in cons) + ")"
    bx = r"\left(" + ", ".join(latex_symbol(c.multiplier) for c in cons) + r"\right)"
    it = "(" + ", ".join(c.mult_txt for c in cons) + ")"
    ix = r"\left(" + ", ".join(c.mult_tex for c in cons) + r"\right)"
    v._stack = (bt, bx, it, ix)
    v._stack_parts = [(c.multiplier, c.size, c.scalar) for c in cons]


def _linear_text(dv: Variable, kept, layout, p: np.ndarray) -> tuple[str, str]:
    """``Σ_c -g0_c^T λ_c`` for the constraints held by ``dv``, from the constants' own text
    (``- Σ_i (ε - y_i) α_i``); numbers when a constant has no symbolic text."""
    parts_t, parts_x = [], []
    off = 0
    for c in kept:
        v, lo = layout[c.multiplier]
        pc = p[off:off + c.size]
        off += c.size
        if v is not dv or not np.any(pc != 0):
            continue
        if np.allclose(pc, pc[0]):
            k = _const_txt_pair(float(pc[0]))
            neg = False
        elif CONST in c.g.ctx:
            k, neg = c.g.ctx[CONST], True   # p = -g0
        else:
            raise DualizationError(f"the constant of constraint [{c.multiplier}] has no "
                                   "symbolic text; cannot render the dual's linear term")
        kt, kx = k
        if neg:   # the coefficient is -g0: negate the constant's text
            if kt.startswith("-") and (not _has_top_sum(kt[1:])):
                neg, kt, kx = False, kt[1:], kx[1:]
            elif _has_top_sum(kt):
                kt, kx = f"({kt})", rf"\left({kx}\right)"
        elif kt.startswith("-"):
            neg, kt, kx = True, kt[1:], kx[1:]
        kt = "" if kt == "1" else kt + " "
        kx = "" if kx == "1" else kx + " "
        if c.scalar:
            t, x = f"{kt}{c.mult_txt}", f"{kx}{c.mult_tex}"
        else:
            t, x = f"Σ_{c.letter} {kt}{c.mult_txt}", rf"\sum_{{{c.letter}}} {kx}{c.mult_tex}"
        parts_t.append(("-" if neg else "+", t))
        parts_x.append(("-" if neg else "+", x))

    def join(parts):
        out = ""
        for sg, t in parts:
            out = (("-" if sg == "-" else "") + t) if not out else f"{out} {sg} {t}"
        return out
    return join(parts_t), join(parts_x)


def _const_txt_pair(c: float) -> tuple[str, str]:
    from .expressions import _const_txt
    return _const_txt(c)


def _slice_vec(p: np.ndarray, dv: Variable, kept, layout) -> np.ndarray:
    out = np.zeros(dv.size)
    off = 0
    for c in kept:
        v, lo = layout[c.multiplier]
        if v is dv:
            out[lo:lo + c.size] = p[off:off + c.size]
        off += c.size
    return out


def _gram_operator(Qd: np.ndarray, feature_ops, blocks, der, qidx) -> GramOperator:
    """Keep kernel structure when the quadratic is ``D_s K[idx, idx] D_s + diag(d)``."""
    if len(feature_ops) == 1:
        blk, A = feature_ops[0]
        Aq = A[:, qidx] / np.sqrt(2 * blk.coef)
        nz = np.abs(Aq) > 0
        if np.all(nz.sum(axis=0) <= 1):
            index = np.argmax(nz, axis=0)
            sign = Aq[index, np.arange(len(qidx))]
            K = blk.var.gram()
            rest = Qd - np.outer(sign, sign) * K[np.ix_(index, index)]
            d = np.diag(rest).copy()
            if np.allclose(rest, np.diag(d), atol=1e-12 * max(1.0, np.abs(Qd).max())):
                op = GramOperator(blk.var.kernel, blk.var.basis, sign=sign,
                                  index=None if np.array_equal(index, np.arange(K.shape[0]))
                                  else index, diag=d)
                return op
    return GramOperator.dense_matrix(0.5 * (Qd + Qd.T))


def _diag_block(blocks) -> _Block | None:
    """The one eliminated plain quadratic block when its Hessian is ``c I`` (LS-SVM's ``e``)."""
    quads = [b for b in blocks if b.kind == "quad"]
    if len(quads) != 1 or quads[0].H is None:
        return None
    H = np.asarray(quads[0].H, dtype=float)
    if not np.allclose(H, H[0, 0] * np.eye(H.shape[0])) or H[0, 0] <= 0:
        return None
    return quads[0]


def _diag_text(gram: GramOperator, blocks) -> tuple[str, str] | None:
    """``I/C`` when the dual's quadratic is ``Q + I/C`` from an eliminated ``1/2 C Σ e_i²``."""
    blk = _diag_block(blocks)
    if blk is None or gram.matrix is not None or not np.any(gram.diag != 0):
        return None
    d = blk.divisor
    if d[0] == "1":
        return "I", "I"
    return f"I/{d[0]}", rf"\frac{{I}}{{{d[1]}}}" if "\\" not in d[1] else rf"I/{d[1]}"


def _solved_text(v: Variable, blk: _Block, kept, layout) -> tuple[str, str] | None:
    """``e_i = α_i / C`` for a diagonal quadratic block without a linear term."""
    if _diag_block([blk]) is None or np.any(blk.m != 0):
        return None
    st, sx = _sum_text(v, kept, layout)
    if " + " in st or " - " in st:
        st, sx = f"({st})", rf"\left({sx}\right)"
    d = blk.divisor
    if d[0] == "1":
        return f"{v.txt} = {st}", f"{v.tex} = {sx}"
    return f"{v.txt} = {st} / {d[0]}", rf"{v.tex} = \frac{{{sx}}}{{{d[1]}}}"


_NEXT_LETTER = {"i": "j", "p": "q", "k": "l", "j": "m"}


def _q_text(feature_ops, blocks, qcons, qv: Variable, skip: _Block | None,
            taken: frozenset = frozenset()
            ) -> tuple[tuple[str, str], list[tuple[str, str]]] | None:
    """Definition of the matrix ``Q`` of the dual's quadratic term, read off the eliminated
    blocks: ``Q_rs = Σ_v (a^v_r)ᵀ H_v⁻¹ a^v_s`` with ``a^v_r`` the coefficient of block ``v`` in
    the constraint of the multiplier entry ``r`` and ``H_v`` its curvature (``2c`` for
    ``c ||w||^2``). Returns the head (``Q_ij = ⟨a_i, a_j⟩``) and the definitions of the ``a``
    (``a_i = y_i φ(x_i) for α_i``); ``skip`` is a diagonal block printed apart (``Q + I/C``)."""
    quads = [b for b in blocks if b.kind in ("quad", "huber") and b is not skip
             and any(b.var in c.g.lin for c in qcons)]
    if not feature_ops and not quads:
        return None
    if qv._stack is None:
        r = qv.letter
        s_ = _NEXT_LETTER.get(r, "s")
    else:
        r, s_ = "r", "s"
    many = len(feature_ops) + len(quads) > 1
    heads_t, heads_x, defs = [], [], []
    # the coefficients' letter must not be a variable's name (SVDD's centre is a)
    a = next(c for c in ("a", "g", "h", "u", "z", "q") if c not in taken)

    def sym(v: Variable) -> tuple[str, str]:
        return ((f"{a}^({v.block_txt})", f"{a}^{{({v.block_tex})}}") if many else (a, a))

    def define(v: Variable, coef_of) -> None:
        st, sx = sym(v)
        absent = False
        for c in qcons:
            k = coef_of(c)
            if k is None:
                absent = True
                continue
            defs.append((f"{st}_{c.letter} = {k[0]} for {c.mult_txt}",
                         rf"{sx}_{{{c.letter}}} = {k[1]} \text{{ for }} {c.mult_tex}"))
        if absent:
            defs.append((f"{st} = 0 for the other multipliers",
                         rf"{sx} = 0 \text{{ for the other multipliers}}"))

    for blk, _ in feature_ops:
        w = blk.var
        st, sx = sym(w)
        dv_t = "" if blk.divisor[0] == "1" else f"/{blk.divisor[0]}"
        dv_x = "" if blk.divisor[1] == "1" else rf" / {blk.divisor[1]}"
        heads_t.append(f"⟨{st}_{r}, {st}_{s_}⟩{dv_t}")
        heads_x.append(rf"\langle {sx}_{{{r}}}, {sx}_{{{s_}}} \rangle{dv_x}")

        def coef_w(c, w=w):
            if w in c.g.rq:   # the coefficient of a in -||phi(x_i) - a||^2 is 2 phi(x_i)
                q = np.broadcast_to(c.g.rq[w], (c.size,))
                return coef_mul(_const_txt_pair(float(-2 * q[0])), c.g.rq_txt[w])
            return c.g.ctx.get(w)
        define(w, coef_w)
    for blk in quads:
        v = blk.var
        st, sx = sym(v)
        H = np.asarray(blk.H, dtype=float)
        h = float(H[0, 0])
        scaled_eye = np.allclose(H, h * np.eye(H.shape[0]))
        ht = blk.divisor if (scaled_eye and blk.n_terms == 1) else _coef_text_pair(h)
        dv_t = "" if ht[0] == "1" else f"/{ht[0]}"
        dv_x = "" if ht[1] == "1" else rf" / {ht[1]}"
        cs = [c for c in qcons if v in c.g.lin]
        diag = (len(cs) == 1 and not v.scalar and cs[0].size == v.size
                and _is_diag(_bcast(cs[0].g.lin[v], cs[0].size)) is not None
                and len(qcons) == 1)
        if scaled_eye and v.scalar:
            heads_t.append(f"{st}_{r} {st}_{s_}{dv_t}")
            heads_x.append(rf"{sx}_{{{r}}} {sx}_{{{s_}}}{dv_x}")
            define(v, lambda c, v=v: c.g.ctx.get(v))
        elif scaled_eye and diag:
            d = _is_diag(_bcast(cs[0].g.lin[v], cs[0].size))
            # the Kronecker delta as an Iverson bracket: δ is often a parameter (Huber's)
            if np.allclose(np.abs(d), 1.0):
                heads_t.append(f"[{r} = {s_}]{dv_t}")
                heads_x.append(rf"[{r} = {s_}]{dv_x}")
            else:
                heads_t.append(f"[{r} = {s_}] {st}_{r} {st}_{s_}{dv_t}")
                heads_x.append(rf"[{r} = {s_}]\, {sx}_{{{r}}} {sx}_{{{s_}}}{dv_x}")
                define(v, lambda c, v=v: c.g.ctx.get(v))
        else:
            heads_t.append(f"({st}_{r})ᵀH⁻¹{st}_{s_} (H = ∂²L/∂{v.block_txt}²)")
            heads_x.append(rf"({sx}_{{{r}}})^T H^{{-1}} {sx}_{{{s_}}}\ "
                           rf"(H = \partial^2 L / \partial {v.block_tex}^2)")
            define(v, lambda c, v=v: c.g.ctx.get(v))
    head = (f"Q_{r}{s_} = " + " + ".join(heads_t),
            rf"Q_{{{r}{s_}}} = " + " + ".join(heads_x))
    return head, defs


__all__ = ["Derivation", "DualizationError", "Step", "dualize"]
