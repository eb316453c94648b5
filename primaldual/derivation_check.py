"""Check a hand derivation against the mechanical one and point at the first line that differs.

:func:`check_derivation` takes a primal :class:`~primaldual.model.Problem` and any of the
pieces a person derives by hand from it, written in the modelling language:

* ``dual=`` a dual :class:`~primaldual.model.Problem` (``max`` or ``min``);
* ``lagrangian=`` a :class:`~primaldual.model.Lagrangian` (of a problem of your own) or a
  function ``L(x, multipliers) -> float`` of two dicts keyed by name;
* ``kkt=`` a :class:`~primaldual.model.KKTConditions`, or a list of conditions: affine
  :class:`~primaldual.model.Constraint` objects over variables named like the primal's
  variables and multipliers (a feature-space ``w`` is a plain vector of its coefficients
  ``beta``, ``w = Σ_j β_j φ(x_j)``), and complementarity pairs ``(multiplier, expr)`` meaning
  ``multiplier_i * expr_i = 0``;
* ``recover=`` a function ``dual values -> primal values`` (your recovery formulas).

Each is aligned with :func:`~primaldual.model.dualize.dualize` ``(primal)``: variables are
matched by name (a dual variable by the name of the primal multiplier it is, ``alpha``), then by
shape, or by ``mapping={"yours": "derived"}``; a variable of yours matched to nothing is read
off your equalities (the catalogue's ``β = α - α*``). The comparison is numeric and piece by
piece, in the printed order:

* objective: the quadratic, linear and constant parts on the common affine hull of the two
  equality systems (``F(z) = ±f(z)`` with ``+`` for ``max``, so ``min -f`` equals ``max f``);
* constraints: every row ``g_k(z) >= 0`` (or ``= 0``) of each line is read off exactly (the
  lines are affine) and must be implied by the other side's rows: a row with a positive multiple
  on the other side passes at once, otherwise a linear program (HiGHS) looks for a point feasible
  for one side that violates the row; that point is the witness;
* KKT: stationarity, primal and dual feasibility as one affine system in the primal variables
  and multipliers (compared the same way), then each complementarity pair;
* Lagrangian: ``L(x, 0)`` and the term of each multiplier entry; an equality multiplier may
  carry the opposite sign (a free multiplier's sign is a convention);
* recovery: your formulas against ``Derivation.recover`` at the dual optimum (CVXPY).

The :class:`DerivationReport` names the first piece that differs, prints both lines side by
side (the problems' own rendering) and a witness: a point where the two disagree and by how
much. Equivalent forms pass: a constraint scaled by a positive number, ``min -f`` for
``max f``, constraints reordered or split, variables renamed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import linprog

from .model.dualize import dualize
from .model.expr import Expr
from .model.leaves import Variable
from .model.problem import Constraint, Problem
from .model.symbols import text_symbol

__all__ = ["DerivationReport", "Piece", "assert_derivation", "check_derivation"]


# ============================================================================ the report
@dataclass
class Piece:
    """One compared piece: a line of the dual, a KKT condition, a Lagrangian term, ...

    ``yours`` and ``derived`` are the printed lines; ``witness`` states a point where the two
    disagree and by how much (empty when the piece agrees); ``hint`` is a reading of the
    difference when one applies (a constant factor, a sign)."""

    part: str
    title: str
    ok: bool
    yours: str = ""
    derived: str = ""
    witness: str = ""
    hint: str = ""
    #: the witness as values by the derived names (``{"alpha": ...}``; KKT and Lagrangian
    #: pieces: the primal variables and multipliers), and the disagreement there
    point: dict[str, np.ndarray] | None = None
    amount: float | None = None

    def lines(self) -> list[str]:
        out = [f"{self.part}: {self.title}"]
        if self.yours or self.derived:
            out.append(f"    yours   : {self.yours or '(nothing)'}")
            out.append(f"    derived : {self.derived or '(nothing)'}")
        if self.witness:
            out.append(f"    witness : {self.witness}")
        if self.hint:
            out.append(f"    hint    : {self.hint}")
        return out


@dataclass
class DerivationReport:
    """What :func:`check_derivation` found: ``ok``, the compared ``pieces`` (in printed
    order), the first differing piece (``first``) and the alignment of the variables.

    Each differing piece carries its witness as numbers too (``point``, ``amount``).
    ``str(report)`` is a one-line summary when everything agrees, otherwise the first
    difference with both lines, a witness and the other differing pieces, one line each."""

    subject: str
    pieces: list[Piece] = field(default_factory=list)
    alignment: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.pieces)

    @property
    def first(self) -> Piece | None:
        return next((p for p in self.pieces if not p.ok), None)

    def __bool__(self) -> bool:
        return self.ok

    def summary(self) -> str:
        what = "; ".join(self.checked) or "nothing"
        if self.ok:
            notes = [a for a in self.alignment if "(name)" not in a]
            al = f" ({', '.join(notes)})" if notes else ""
            return f"derivation OK for {self.subject}: {what} agree with the mechanical " \
                   f"derivation{al}"
        bad = [p for p in self.pieces if not p.ok]
        return (f"derivation of {self.subject} differs from the mechanical one in {len(bad)} "
                f"piece{'s' if len(bad) > 1 else ''}; first: {bad[0].part}, {bad[0].title}")

    def __str__(self) -> str:
        if self.ok:
            return self.summary()
        bad = [p for p in self.pieces if not p.ok]
        out = [self.summary(), *bad[0].lines()]
        if self.alignment:
            out.append("    aligned : " + _alignment_text(self.alignment))
        if len(bad) > 1:
            out.append("also differ:")
            out += [f"  - {p.part}: {p.title}" for p in bad[1:]]
        return "\n".join(out)

    __repr__ = __str__


def _alignment_text(entries: list[str]) -> str:
    """``α, b by name; a ↔ α (shape)``: the name matches grouped per piece."""
    groups: dict[str, list[str]] = {}
    other: list[str] = []
    for e in entries:
        head, _, rest = e.partition(" ") if e.startswith(("KKT ", "L ")) else ("", "", e)
        if rest.endswith(" (name)"):
            groups.setdefault(head, []).append(rest[:-7])
        else:
            other.append(e)
    parts = [f"{(h + ': ') if h else ''}{', '.join(v)} by name" for h, v in groups.items()]
    return "; ".join(parts + other)


# ============================================================================ coordinates
@dataclass
class _Block:
    name: str         # the derived side's name (a primal multiplier, a primal variable)
    size: int
    scalar: bool
    sym: str          # printed symbol (α, α*, b)
    offset: int = 0


class _Space:
    """The coordinates both sides are compared in: named blocks stacked into one vector."""

    def __init__(self, blocks: list[_Block]) -> None:
        off = 0
        for b in blocks:
            b.offset = off
            off += b.size
        self.blocks = blocks
        self.n = off
        self.by_name = {b.name: b for b in blocks}

    def part(self, z: np.ndarray, name: str) -> np.ndarray:
        b = self.by_name[name]
        return z[b.offset:b.offset + b.size]

    def coord(self, k: int, syms: dict[str, str] | None = None) -> str:
        """The printed name of coordinate ``k`` (``α_3``, ``b``)."""
        for b in self.blocks:
            if b.offset <= k < b.offset + b.size:
                s = (syms or {}).get(b.name, b.sym)
                return s if b.scalar else f"{s}_{k - b.offset + 1}"
        raise IndexError(k)

    def split(self, z: np.ndarray) -> dict[str, np.ndarray]:
        return {b.name: self.part(z, b.name).copy() for b in self.blocks}

    def block_of(self, k: int) -> _Block:
        return next(b for b in self.blocks if b.offset <= k < b.offset + b.size)

    def fmt(self, z: np.ndarray, syms: dict[str, str] | None = None, limit: int = 8) -> str:
        """``α_3 = 0.1, α_7 = 0.1 (other entries 0)``: the nonzero entries, 1-based."""
        syms = syms or {}
        items, zero_left = [], False
        scale = max(1.0, float(np.max(np.abs(z), initial=0.0)))
        for b in self.blocks:
            v = self.part(z, b.name)
            s = syms.get(b.name, b.sym)
            for k in range(b.size):
                if abs(v[k]) <= 1e-10 * scale:
                    zero_left = True
                    continue
                items.append(f"{s} = {_num(v[k])}" if b.scalar else f"{s}_{k + 1} = {_num(v[k])}")
        if not items:
            return "the origin (every entry 0)"
        more = len(items) - limit
        text = ", ".join(items[:limit]) + (f", … ({more} more)" if more > 0 else "")
        return text + (" (other entries 0)" if zero_left else "")


def _num(x: float) -> str:
    x = float(x)
    if x == 0:
        return "0"
    r = round(x)
    if abs(x - r) <= 1e-9 * max(1.0, abs(x)):
        return str(int(r))
    return f"{x:.4g}"


def _affine(fun: Callable[[np.ndarray], np.ndarray], n: int, rng: np.random.Generator
            ) -> tuple[np.ndarray, np.ndarray] | None:
    """``(A, b)`` with ``fun(z) = A z + b``, read off at ``0`` and the unit vectors; ``None``
    when ``fun`` is not affine (checked at a random point)."""
    z = np.zeros(n)
    b = np.atleast_1d(np.asarray(fun(z), dtype=float)).copy()
    A = np.empty((b.size, n))
    for k in range(n):
        z[k] = 1.0
        A[:, k] = np.atleast_1d(np.asarray(fun(z), dtype=float)) - b
        z[k] = 0.0
    t = rng.standard_normal(n)
    ft = np.atleast_1d(np.asarray(fun(t), dtype=float))
    scale = 1.0 + float(np.max(np.abs(ft), initial=0.0)) + float(np.max(np.abs(A @ t),
                                                                      initial=0.0))
    if not np.all(np.abs(ft - (A @ t + b)) <= 1e-8 * scale):
        return None
    return A, b


# ============================================================================ affine systems
@dataclass
class _Item:
    """One printed line of a system (a constraint, a KKT condition) as affine rows in the
    common coordinates: ``A z + b >= 0`` (``eq``: ``= 0``)."""

    title: str
    text: str
    A: np.ndarray
    b: np.ndarray
    eq: bool
    key: str = ""
    detail: Callable[[np.ndarray, int], str] | None = None
    definition: bool = False
    short: str = ""
    origin: str = ""
    rowname: Callable[[int], str] | None = None

    def row_text(self, z: np.ndarray, k: int) -> str:
        if self.detail is not None:
            try:
                return self.detail(z, k)
            except Exception:  # noqa: BLE001 - a rendering aid only
                pass
        g = float(self.A[k] @ z + self.b[k])
        name = self.rowname(k) if self.rowname is not None else f"row {k + 1} of it"
        return f"{name} = {_num(g)} there, but must be {'= 0' if self.eq else '≥ 0'}"


def _constraint_detail(c: Constraint, point_of: Callable[[np.ndarray], dict]
                       ) -> Callable[[np.ndarray, int], str]:
    """``i = 3: α_i = 1 there, but must be ≤ 1/N = 0.125 (fails by 0.875)``."""
    def detail(z: np.ndarray, k: int) -> str:
        pt = point_of(z)
        lv = np.atleast_1d(c.lhs.affine_value(pt))
        rv = np.atleast_1d(c.rhs.affine_value(pt))
        lk = float(lv[k] if lv.size > 1 else lv[0])
        rk = float(rv[k] if rv.size > 1 else rv[0])
        where = "" if c.scalar else f"{c.letter} = {k + 1}: "
        op = {">=": "≥", "<=": "≤", "==": "="}[c.op]
        rt = c.rhs.txt if c.rhs.txt == _num(rk) else f"{c.rhs.txt} = {_num(rk)}"
        if not c.rhs.is_constant:
            rt = f"{c.rhs.txt} (= {_num(rk)} there)"
        return (f"{where}{c.lhs.txt} = {_num(lk)} there, but must be {op} {rt} (fails by "
                f"{_num(_fails_by(c.op, lk, rk))})")
    return detail


def _fails_by(op: str, lhs: float, rhs: float) -> float:
    if op == "==":
        return abs(lhs - rhs)
    return max(0.0, rhs - lhs) if op == ">=" else max(0.0, lhs - rhs)


class _System:
    """Rows of several items stacked, for the linear programs."""

    def __init__(self, items: list[_Item], n: int) -> None:
        ineq = [(it.A, it.b) for it in items if not it.eq and it.A.size]
        eq = [(it.A, it.b) for it in items if it.eq and it.A.size]
        self.AI = np.vstack([a for a, _ in ineq]) if ineq else np.zeros((0, n))
        self.bI = np.concatenate([b for _, b in ineq]) if ineq else np.zeros(0)
        self.AE = np.vstack([a for a, _ in eq]) if eq else np.zeros((0, n))
        self.bE = np.concatenate([b for _, b in eq]) if eq else np.zeros(0)
        self.n = n
        self.keys = {_key(a, b, False) for a, b in zip(self.AI, self.bI, strict=True)}
        self.keys |= {_key(a, b, True) for a, b in zip(self.AE, self.bE, strict=True)}
        aug = np.column_stack([self.AE, self.bE]) if self.AE.size else np.zeros((0, n + 1))
        self.eq_basis = _row_basis(aug)
        # the tightest constant per direction: a row a z + b >= 0 is implied by a row of the
        # same direction with a smaller constant (a box row by a tighter box row), no LP
        self.tightest: dict[tuple, float] = {}
        for A_, b_, is_eq in ((self.AI, self.bI, False), (self.AE, self.bE, True)):
            for a, b in zip(A_, b_, strict=True):
                s = float(np.linalg.norm(a))
                if s == 0:
                    continue
                for sg in ((1.0, -1.0) if is_eq else (1.0,)):
                    d = _direction(sg * a / s)
                    self.tightest[d] = min(self.tightest.get(d, np.inf), sg * float(b) / s)

    def minimize(self, c: np.ndarray, R: float) -> np.ndarray | None:
        """A vertex minimising ``c z`` over the system within the box ``|z| <= R``."""
        kw: dict[str, Any] = {}
        if self.AI.shape[0]:
            kw.update(A_ub=-self.AI, b_ub=self.bI)
        if self.AE.shape[0]:
            kw.update(A_eq=self.AE, b_eq=-self.bE)
        res = linprog(c, bounds=[(-R, R)] * self.n, method="highs-ds", **kw)
        if res.status != 0 or res.x is None:
            return None
        return np.asarray(res.x, dtype=float)

    def feasible(self, z: np.ndarray, tol: float) -> bool:
        return bool(np.all(self.AI @ z + self.bI >= -tol) and
                    np.all(np.abs(self.AE @ z + self.bE) <= tol))


def _direction(a_unit: np.ndarray) -> tuple:
    return tuple(np.round(a_unit, 8) + 0.0)


def _key(a: np.ndarray, b: float, eq: bool) -> tuple:
    s = float(np.linalg.norm(a))
    if s == 0:
        return ("const", eq, round(float(np.sign(b)), 0))
    v = np.r_[a, b] / s
    if eq:
        nz = np.flatnonzero(np.abs(v[:-1]) > 1e-12)
        if nz.size and v[nz[0]] < 0:
            v = -v
    return (eq, tuple(np.round(v, 8) + 0.0))


def _row_basis(M: np.ndarray) -> np.ndarray:
    if M.shape[0] == 0:
        return M
    _, s, vt = np.linalg.svd(M, full_matrices=False)
    r = int(np.sum(s > 1e-9 * max(1.0, float(s[0]) if s.size else 1.0)))
    return vt[:r]


def _in_span(basis: np.ndarray, v: np.ndarray) -> bool:
    if not np.any(v):
        return True
    if basis.shape[0] == 0:
        return False
    r = v - basis.T @ (basis @ v)
    return float(np.linalg.norm(r)) <= 1e-8 * float(np.linalg.norm(v))


def _violation(a: np.ndarray, b: float, eq: bool, other: _System, R: float, tol: float
               ) -> tuple[np.ndarray, float] | None:
    """A point of ``other`` violating ``a z + b >= 0`` (``= 0``), with the value there; None
    when ``other`` implies the row."""
    if _key(a, b, eq) in other.keys:
        return None
    if not eq and _key(a, b, True) in other.keys:
        return None
    s = float(np.linalg.norm(a))
    if s == 0:
        ok = (abs(b) <= tol) if eq else (b >= -tol)
        return None if ok else (np.zeros(other.n), float(b))
    if eq and _in_span(other.eq_basis, np.r_[a, b]):
        return None
    if not eq and other.tightest.get(_direction(a / s), np.inf) <= b / s + 1e-9 * max(
            1.0, abs(b) / s):
        return None
    for sgn in ((1.0, -1.0) if eq else (1.0,)):
        z = other.minimize(sgn * a, R)
        if z is None:   # an empty side: nothing to violate
            return None
        v = float(a @ z + b)
        if sgn * v < -tol * max(1.0, s * R):
            z = _sparsify(_clean(z), other, a, b, eq, tol)
            return z, float(a @ z + b)
    return None


def _sparsify(z: np.ndarray, S: _System, a: np.ndarray, b: float, eq: bool, tol: float
              ) -> np.ndarray:
    """Zero entries of the witness one at a time while it stays feasible for ``S`` and keeps
    violating the row (a witness with few nonzeros reads at a glance)."""
    thr = tol * max(1.0, float(np.linalg.norm(a)) * float(np.max(np.abs(z), initial=1.0)))

    def bad(u: np.ndarray) -> bool:
        v = float(a @ u + b)
        return abs(v) > thr if eq else v < -thr
    for k in np.argsort(np.abs(z)):
        if z[k] == 0:
            continue
        u = z.copy()
        u[k] = 0.0
        if S.feasible(u, 1e-9 * max(1.0, float(np.max(np.abs(z))))) and bad(u):
            z = u
    nz = np.flatnonzero(z)
    if nz.size <= 12:      # pairs (an equality such as yᵀα = 0 drops entries two at a time)
        for i in nz:
            for j in nz:
                if i < j and z[i] != 0 and z[j] != 0:
                    u = z.copy()
                    u[[i, j]] = 0.0
                    if S.feasible(u, 1e-9 * max(1.0, float(np.max(np.abs(z))))) and bad(u):
                        z = u
    return z


def _clean(z: np.ndarray) -> np.ndarray:
    z = z.copy()
    z[np.abs(z) < 1e-11 * max(1.0, float(np.max(np.abs(z), initial=0.0)))] = 0.0
    return z


def _local_witness(a: np.ndarray, b: float, eq: bool, p: _Item, tol: float
                   ) -> np.ndarray | None:
    """A small point violating ``a z + b >= 0`` (``= 0``) on which the rows of the line ``p``
    that share a variable with the row hold: the two printed lines disagree there."""
    sup = a != 0
    rows = [j for j in range(p.A.shape[0]) if np.any(p.A[j][sup] != 0)]
    if not rows:
        return None
    loc = _Item("", "", p.A[rows], p.b[rows], p.eq)
    S = _System([loc], a.size)
    R = 2.0 * max(1.0, abs(b) / max(float(np.linalg.norm(a)), 1e-300),
                  float(np.max(np.abs(loc.b), initial=0.0)))
    hit = _violation(a, b, eq, S, R, tol)
    return None if hit is None else hit[0]


def _partner(it: _Item, others: list[_Item]) -> _Item | None:
    """The line on the other side to print next to ``it``: the same multiplier name, else a
    line with a row of the same left-hand side, else the most overlapping variables."""
    for o in others:
        if o.key and o.key == it.key:
            return o
    dirs = {_key(a, 0.0, it.eq)[1:] for a in it.A if np.any(a)}
    for o in others:
        if any(_key(a, 0.0, it.eq)[1:] in dirs or _key(-a, 0.0, it.eq)[1:] in dirs
               for a in o.A if np.any(a)):
            return o
    sup = np.any(it.A != 0, axis=0)
    best, score = None, 0.0
    for o in others:
        if o.eq != it.eq:
            continue
        so = np.any(o.A != 0, axis=0)
        s = float(np.sum(sup & so)) / max(1.0, float(np.sum(sup | so)))
        if s > score:
            best, score = o, s
    return best


def _rhs_hint(it: _Item, other: _Item | None) -> str:
    """Same left-hand side, different constant: the ratio of the right-hand sides."""
    if other is None or it.eq != other.eq or not it.A.size or not other.A.size:
        return ""
    si, so = np.linalg.norm(it.A, axis=1), np.linalg.norm(other.A, axis=1)
    ki, ko = si > 0, so > 0
    if not (np.any(ki) and np.any(ko)):
        return ""
    Ai, Ao = it.A[ki] / si[ki, None], other.A[ko] / so[ko, None]
    bi, bo = it.b[ki] / si[ki], other.b[ko] / so[ko]
    same = (Ai @ Ao.T) >= 1.0 - 1e-10
    for k, j in np.argwhere(same):
        if abs(bi[k] - bo[j]) > 1e-9 * max(1.0, abs(bi[k]), abs(bo[j])) and bi[k] and bo[j]:
            return (f"the same left-hand side with another constant: yours {_num(bo[j])}, "
                    f"derived {_num(bi[k])} (ratio {_num(bo[j] / bi[k])})")
    return ""


def _compare_systems(space: _Space, ref: list[_Item], mine: list[_Item], part: str,
                     tol: float, syms: dict[str, str], kind: str) -> list[Piece]:
    """Pieces for every line: each derived row implied by yours, each of your rows implied by
    the derived ones (an LP finds the witness otherwise)."""
    ref = [it for it in ref if it.A.size]
    mine_real = [it for it in mine if it.A.size and not it.definition]
    S_ref, S_mine = _System(ref, space.n), _System(mine_real, space.n)
    bvals = np.concatenate([np.abs(it.b) / np.maximum(np.linalg.norm(it.A, axis=1), 1e-300)
                            for it in ref + mine_real if np.any(it.A)] or [np.zeros(1)])
    R = 10.0 * max(1.0, float(np.max(bvals[np.isfinite(bvals)], initial=0.0)))
    pieces: list[Piece] = []
    done: set[int] = set()

    def check_mine(o: _Item) -> None:
        done.add(id(o))
        for k in range(o.A.shape[0]):
            hit = _violation(o.A[k], float(o.b[k]), o.eq, S_ref, R, tol)
            if hit is not None:
                z, _ = hit
                p = _partner(o, ref)
                where = "which satisfies every derived " + kind
                if p is not None and int(np.sum(z != 0)) > 4:
                    loc = _local_witness(o.A[k], float(o.b[k]), o.eq, p, tol)
                    if loc is not None:
                        z, where = loc, f"where the derived '{p.short or p.text}' holds"
                pieces.append(Piece(
                    part, f"your {kind} '{o.short or o.text}' does not follow from the "
                    f"derived ones", False, o.text, p.text if p else "",
                    f"at {space.fmt(z, syms)}, {where}: {o.row_text(z, k)}",
                    _rhs_hint(p, o) if p else "", space.split(z),
                    float(o.A[k] @ z + o.b[k])))
                return

    for it in ref:
        bad = None
        for k in range(it.A.shape[0]):
            hit = _violation(it.A[k], float(it.b[k]), it.eq, S_mine, R, tol)
            if hit is not None:
                bad = (k, hit[0])
                break
        p = _partner(it, mine_real)
        name = it.short or it.text
        if bad is None:
            pieces.append(Piece(part, f"{kind} '{name}'", True, p.text if p else "", it.text))
        else:
            k, z = bad
            where = "which satisfies all of yours"
            if p is not None and int(np.sum(z != 0)) > 4:
                loc = _local_witness(it.A[k], float(it.b[k]), it.eq, p, tol)
                if loc is not None:
                    z, where = loc, f"where your '{p.short or p.text}' holds"
            hint = _rhs_hint(it, p) if p else ""
            if not hint and it.origin:
                hint = it.origin
            pieces.append(Piece(
                part, f"the derived {kind} '{name}' " + ("is missing from yours" if p is None
                                                         else "does not follow from yours"),
                False, p.text if p else "(no counterpart)", it.text,
                f"at {space.fmt(z, syms)}, {where}: {it.row_text(z, k)}", hint,
                space.split(z), float(it.A[k] @ z + it.b[k])))
        if p is not None and id(p) not in done:
            check_mine(p)
    for o in mine_real:
        if id(o) not in done:
            check_mine(o)
    return pieces


# ============================================================================ alignment
def _match(user_vars: Sequence[Variable], blocks: list[_Block], mapping: dict[str, str],
           groups: dict[str, list[str]] | None = None
           ) -> tuple[dict[str, list[str]], list[Variable], list[str], list[str]]:
    """Match user variables to blocks: ``mapping``, then names, then a derived variable's
    name standing for several blocks (``groups``), then unique shapes. Returns (user name ->
    block names, unmatched user variables, unmatched blocks, how each was matched)."""
    groups = groups or {}
    by_name = {b.name: b for b in blocks}
    free = [b.name for b in blocks]
    out: dict[str, list[str]] = {}
    how: list[str] = []

    def take(v: Variable, names: list[str], why: str) -> bool:
        if any(nm not in free for nm in names) or sum(by_name[nm].size for nm in names) != v.size:
            return False
        for nm in names:
            free.remove(nm)
        out[v.name] = names
        d = ", ".join(by_name[nm].sym for nm in names)
        how.append(f"{d} (name)" if why == "name" and d == v.block_txt else
                   f"{v.block_txt} ↔ {d} ({why})")
        return True

    rest = list(user_vars)
    for v in list(rest):
        if v.name in mapping:
            tgt = mapping[v.name]
            names = [tgt] if tgt in by_name else groups.get(tgt, [])
            if not names:
                raise ValueError(f"mapping: {v.name!r} -> {tgt!r}, but the derived side has no "
                                 f"{tgt!r}; it has {[b.name for b in blocks]}")
            if not take(v, names, "mapping"):
                raise ValueError(f"mapping: {v.name!r} (size {v.size}) cannot stand for "
                                 f"{tgt!r}")
            rest[:] = [u for u in rest if u is not v]
    for v in list(rest):
        if v.name in by_name and take(v, [v.name], "name"):
            rest[:] = [u for u in rest if u is not v]
        elif v.name in groups and take(v, groups[v.name], "name"):
            rest[:] = [u for u in rest if u is not v]
    for v in list(rest):
        cands = [[nm] for nm in free if by_name[nm].size == v.size]
        cands += [g for g in groups.values() if all(nm in free for nm in g)
                  and sum(by_name[nm].size for nm in g) == v.size]
        same = [u for u in rest if u.size == v.size]
        if len(cands) == 1 and len(same) == 1 and take(v, cands[0], "shape"):
            rest[:] = [u for u in rest if u is not v]
    return out, rest, free, how


# ============================================================================ the dual
def _dual_space(der: Any) -> tuple[_Space, Callable[[np.ndarray], dict], dict[str, list[str]]]:
    """Blocks of the derived dual: one per primal multiplier it keeps (read through the public
    ``Derivation.multipliers``), plus any variable of its own (``τ``)."""
    D: Problem = der.dual
    primal: Problem = der.primal
    codes: dict[str, np.ndarray] = {}
    base = 7919.0
    for v in D.variables:
        codes[v.name] = base + np.arange(v.size, dtype=float)
        base += v.size + 7919.0
    where: dict[float, tuple[str, int]] = {}
    for v in D.variables:
        for k, c in enumerate(codes[v.name]):
            where[float(c)] = (v.name, k)
    kept: list[tuple[str, str, int, int]] = []   # (multiplier, dual var, offset, size)
    try:
        mults = der.multipliers({k: c.copy() for k, c in codes.items()})
    except Exception:  # noqa: BLE001 - fall back to the dual's own variables
        mults = {}
    for name, val in mults.items():
        val = np.atleast_1d(np.asarray(val, dtype=float))
        locs = [where.get(float(x)) for x in val]
        if not val.size or any(loc is None for loc in locs):
            continue
        vars_ = {loc[0] for loc in locs if loc is not None}
        offs = [loc[1] for loc in locs if loc is not None]
        if len(vars_) == 1 and offs == list(range(offs[0], offs[0] + len(offs))):
            kept.append((name, vars_.pop(), offs[0], len(offs)))
    blocks: list[_Block] = []
    groups: dict[str, list[str]] = {}
    src: dict[str, tuple[str, int]] = {}
    mult_sym = {c.multiplier: c.mult_block_txt for c in primal.constraints}
    for v in D.variables:
        mine = sorted([k for k in kept if k[1] == v.name], key=lambda t: t[2])
        covered = np.zeros(v.size, bool)
        for _name, _, off, size in mine:
            covered[off:off + size] = True
        if mine and covered.all():
            for name, _, off, size in mine:
                scalar = v.scalar and size == 1
                blocks.append(_Block(name, size, scalar, mult_sym.get(name, text_symbol(name))))
                src[name] = (v.name, off)
            if len(mine) > 1:
                groups[v.name] = [m[0] for m in mine]
        else:
            blocks.append(_Block(v.name, v.size, v.scalar, v.block_txt))
            src[v.name] = (v.name, 0)
    space = _Space(blocks)
    sizes = {v.name: v.size for v in D.variables}

    def point(z: np.ndarray) -> dict:
        vals = {nm: np.zeros(sz) for nm, sz in sizes.items()}
        for b in space.blocks:
            vn, off = src[b.name]
            vals[vn][off:off + b.size] = space.part(z, b.name)
        return vals
    return space, point, groups


def _user_point_map(space: _Space, U_vars: Sequence[Variable], matched: dict[str, list[str]],
                    aux: list[Variable], eqs: list[Constraint], rng: np.random.Generator
                    ) -> Callable[[np.ndarray], dict]:
    """``z -> your point``: matched variables are slices of ``z``; the others are solved from
    your equalities (least squares, which must determine them)."""
    def base(z: np.ndarray, a: np.ndarray | None = None) -> dict:
        pt: dict[str, np.ndarray] = {}
        for v in U_vars:
            if v.name in matched:
                pt[v.name] = np.concatenate([space.part(z, nm) for nm in matched[v.name]])
        off = 0
        for v in aux:
            pt[v.name] = (np.zeros(v.size) if a is None else a[off:off + v.size])
            off += v.size
        return pt

    if not aux:
        return base
    na = sum(v.size for v in aux)
    use = [c for c in eqs if any(_uses(c, v) for v in aux)] if eqs else []
    if not use:
        raise _Unaligned(aux)
    # rows of the equalities in (z, a)
    n = space.n

    def g_all(u: np.ndarray) -> np.ndarray:
        pt = base(u[:n], u[n:])
        return np.concatenate([np.atleast_1d(c.value(pt)) for c in use])
    ab = _affine(g_all, n + na, rng)
    if ab is None:
        raise _Unaligned(aux)
    A, b0 = ab
    Az, Aa = A[:, :n], A[:, n:]
    if np.linalg.matrix_rank(Aa) < na:
        raise _Unaligned(aux)
    pinv = np.linalg.pinv(Aa)

    def point(z: np.ndarray) -> dict:
        return base(z, -pinv @ (Az @ z + b0))
    return point


def _uses(c: Constraint, v: Variable) -> bool:
    """``v`` appears in ``c`` (by identity: ``==`` on variables builds a constraint)."""
    return any(u is v for u in c.lhs.variables + c.rhs.variables)


class _Unaligned(Exception):
    def __init__(self, aux: list[Variable]) -> None:
        super().__init__(", ".join(v.name for v in aux))
        self.aux = aux


def _sense(P: Problem) -> float:
    return 1.0 if P.sense == "max" else -1.0


def _objective_line(P: Problem) -> str:
    defs = "; ".join(d[0] for d in getattr(P, "definitions", []) or [])
    return f"{P.sense}imize {P.objective.txt}" + (f"   where {defs}" if defs else "")


def _origin(c: Constraint, primal: Problem | None) -> str:
    """Where a derived dual line comes from: its multiplier is a primal variable (``[-b]``,
    ``[ξ_i ≥ 0]``), whose stationarity gave the line."""
    if primal is None:
        return ""
    name = c.multiplier[6:] if c.multiplier.startswith("minus_") else c.multiplier
    for v in primal.variables:
        if v.name == name:
            s = v.block_txt
            return (f"its multiplier [{c.mult_txt}] is the primal {s}: the line is the "
                    f"stationarity in {s} (∂L/∂{s} = 0), there whenever the primal has {s}")
    return ""


def _sign_origin(it: _Item, space: _Space, primal: Problem) -> str:
    """``α_i ≥ 0`` in a dual: dual feasibility of the primal inequality's multiplier."""
    if np.any(it.b != 0) or not it.A.size:
        return ""
    nz = [np.flatnonzero(r) for r in it.A]
    if not all(len(j) == 1 and it.A[k, j[0]] > 0 for k, j in enumerate(nz)):
        return ""
    names = {space.block_of(int(j[0])).name for j in nz}
    lines = [f"'{c.txt()}' [{c.mult_txt} ≥ 0]" for c in primal.constraints
             if c.multiplier in names and not c.equality]
    if not lines:
        return ""
    return ("dual feasibility: the multiplier of the primal inequality " + ", ".join(lines)
            + " is nonnegative")


def _constraint_items(P: Problem, point_of: Callable[[np.ndarray], dict], n: int,
                      rng: np.random.Generator, aux: Sequence[Variable] = (),
                      primal: Problem | None = None) -> list[_Item]:
    items = []
    for c in P.constraints:
        def g(z: np.ndarray, c: Constraint = c) -> np.ndarray:
            return np.atleast_1d(c.value(point_of(z)))
        ab = _affine(g, n, rng)
        if ab is None:
            raise ValueError(f"constraint {c.txt()!r} of {P.name!r} is not affine in the "
                             "dual variables; check_derivation compares affine constraints")
        A, b = ab
        defines = bool(aux) and any(_uses(c, v) for v in aux) and c.equality and \
            not np.any(np.abs(A) > 1e-12) and not np.any(np.abs(b) > 1e-9)
        items.append(_Item(f"constraint {c.render()}", c.render(), A, b, c.equality,
                           c.multiplier, _constraint_detail(c, point_of), defines, c.txt(),
                           _origin(c, primal)))
    return items


def _check_dual(der: Any, U: Problem, mapping: dict[str, str], tol: float,
                rng: np.random.Generator, report: DerivationReport) -> tuple | None:
    """Compare your dual with ``der.dual``; returns ``(space, z -> your point)``."""
    M: Problem = der.dual
    space, m_point, groups = _dual_space(der)
    matched, rest, free, how = _match(U.variables, space.blocks, mapping, groups)
    report.alignment += how
    syms = {}
    for v in U.variables:
        if v.name in matched and len(matched[v.name]) == 1:
            syms[matched[v.name][0]] = v.block_txt
    if free:
        report.pieces.append(Piece(
            "dual", "variables", False,
            ", ".join(v.describe() for v in U.variables),
            ", ".join(v.describe() for v in M.variables),
            "the derived dual's " + ", ".join(space.by_name[f].sym for f in free)
            + " has no counterpart in yours (matched by name, then by shape; give "
              "mapping={'yours': 'derived'})"))
        return None
    try:
        u_point = _user_point_map(space, U.variables, matched, rest,
                                  [c for c in U.constraints if c.equality], rng)
    except _Unaligned as e:
        report.pieces.append(Piece(
            "dual", "variables", False, ", ".join(v.describe() for v in U.variables),
            ", ".join(v.describe() for v in M.variables),
            f"your {', '.join(v.block_txt for v in e.aux)} matches no derived variable by "
            "name or shape, and your equalities do not determine it (give mapping=)"))
        return None
    for v in rest:
        report.alignment.append(f"{v.block_txt} read off your equalities")
    n = space.n
    ref = _constraint_items(M, m_point, n, rng, primal=der.primal)
    for it in ref:
        if not it.origin and not it.eq:
            it.origin = _sign_origin(it, space, der.primal)
    mine = _constraint_items(U, u_point, n, rng, rest)

    # ---------------- objective, on the common affine hull of the equalities
    def F_M(z: np.ndarray) -> float:
        return _sense(M) * M.evaluate(m_point(z))

    def F_U(z: np.ndarray) -> float:
        return _sense(U) * U.evaluate(u_point(z))
    E = [it for it in ref + mine if it.eq and it.A.size and not it.definition]
    EA = np.vstack([it.A for it in E]) if E else np.zeros((0, n))
    Eb = np.concatenate([it.b for it in E]) if E else np.zeros(0)
    z0, B = _affine_hull(EA, Eb, n)
    if z0 is None:   # the two equality systems contradict: the derived hull alone
        EM = [it for it in ref if it.eq and it.A.size]
        z0, B = _affine_hull(np.vstack([it.A for it in EM]) if EM else np.zeros((0, n)),
                             np.concatenate([it.b for it in EM]) if EM else np.zeros(0), n)
        assert z0 is not None
    S_ref = _System(ref, n)
    R = 10.0 * max(1.0, float(np.max(np.abs(np.concatenate([it.b for it in ref] or
                                                             [np.zeros(1)])), initial=0.0)))
    cands = _vertices(S_ref, n, R, rng)
    report.pieces += _compare_objectives(space, F_U, F_M, z0, B, cands, tol, rng, syms,
                                         _objective_line(U), _objective_line(M))
    report.pieces += _compare_systems(space, ref, mine, "dual", tol, syms, "constraint")
    nrows = sum(it.A.shape[0] for it in ref)
    report.checked.append(f"dual: objective (quadratic, linear, constant parts) and "
                          f"{len(ref)} constraints ({nrows} rows)")
    return space, u_point


def _affine_hull(A: np.ndarray, b: np.ndarray, n: int
                 ) -> tuple[np.ndarray | None, np.ndarray]:
    if A.shape[0] == 0:
        return np.zeros(n), np.eye(n)
    z0 = np.linalg.lstsq(A, -b, rcond=None)[0]
    if np.max(np.abs(A @ z0 + b)) > 1e-8 * max(1.0, float(np.max(np.abs(b)))):
        return None, np.zeros((n, 0))
    _, s, vt = np.linalg.svd(A)
    r = int(np.sum(s > 1e-10 * max(1.0, float(s[0]))))
    return z0, vt[r:].T


def _vertices(S: _System, n: int, R: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Feasible points of a system: vertices for a few directions and their midpoints."""
    out: list[np.ndarray] = []
    dirs = [-np.eye(n)[k] for k in range(min(n, 4))] + [rng.standard_normal(n)
                                                         for _ in range(4)]
    for d in dirs:
        z = S.minimize(d, R)
        if z is not None:
            out.append(_clean(z))
    mids = [_clean(0.5 * (out[i] + out[j])) for i in range(len(out))
            for j in range(i + 1, len(out))]
    return out + mids


def _compare_objectives(space: _Space, F_U: Callable, F_M: Callable, z0: np.ndarray,
                        B: np.ndarray, cands: list[np.ndarray], tol: float,
                        rng: np.random.Generator, syms: dict[str, str], line_u: str,
                        line_m: str) -> list[Piece]:
    d = B.shape[1]
    T = [rng.standard_normal(d) / max(1.0, np.sqrt(d)) for _ in range(5)]
    c_u, c_m = F_U(z0), F_M(z0)

    def parts(F: Callable, c: float, t: np.ndarray) -> tuple[float, float, float]:
        p, m, p2 = F(z0 + B @ t), F(z0 - B @ t), F(z0 + 2 * B @ t)
        q, lin = 0.5 * (p + m) - c, 0.5 * (p - m)
        return q, lin, p2 - (c + 2 * lin + 4 * q)
    PU = [parts(F_U, c_u, t) for t in T]
    PM = [parts(F_M, c_m, t) for t in T]
    scale = max(1.0, abs(c_u), abs(c_m), *(abs(x) for P_ in PU + PM for x in P_[:2]))
    quadratic = all(abs(p[2]) <= 1e-7 * scale for p in PU + PM)
    pieces = []

    def witness(diff: Callable[[np.ndarray], float]) -> tuple[str, np.ndarray]:
        best = None
        for z in cands:
            dz = diff(z)
            if abs(dz) > tol * max(1.0, abs(F_U(z)), abs(F_M(z))):
                nnz = int(np.sum(z != 0))
                if best is None or nnz < best[0] or (nnz == best[0] and abs(dz) > best[1]):
                    best = (nnz, abs(dz), z, "")
        if best is None:
            z = z0 + B @ T[0]
            best = (0, abs(diff(z)), z, " (a point of the equalities' affine hull, "
                    "outside the inequalities)")
        z = best[2]
        fu, fm = F_U(z), F_M(z)
        txt = (f"at {space.fmt(z, syms)}{best[3]}: your objective {_num(fu)}, derived "
               f"{_num(fm)}, difference {fu - fm:.4g}")
        return txt, z

    def even(F: Callable, z: np.ndarray) -> float:
        return 0.5 * (F(z) + F(-z)) - F(np.zeros_like(z))

    if not quadratic:
        ok = all(abs(F_U(z) - F_M(z)) <= tol * max(1.0, abs(F_U(z)), abs(F_M(z)))
                 for z in cands)
        w = "" if ok else witness(lambda z: F_U(z) - F_M(z))[0]
        hint = ""
        if not ok:
            d = np.array([F_U(z) - F_M(z) for z in cands])
            if d.size > 1 and np.allclose(d, d[0], rtol=1e-7, atol=tol):
                hint = (f"the difference is the constant {d[0]:.6g} at every point compared: a "
                        "constant term")
        pieces.append(Piece("dual", "objective" + ("" if ok else " values differ"), ok,
                            line_u, line_m, w, hint))
        if not ok:
            z = witness(lambda z: F_U(z) - F_M(z))[1]
            pieces[-1].point, pieces[-1].amount = space.split(z), F_U(z) - F_M(z)
        return pieces
    specs = [("quadratic part", 0), ("linear part", 1)]
    for name, i in specs:
        du = np.array([p[i] for p in PU])
        dm = np.array([p[i] for p in PM])
        ok = bool(np.all(np.abs(du - dm) <= tol * scale))
        if ok:
            pieces.append(Piece("dual", f"objective, {name}", True, line_u, line_m))
            continue
        hint = _ratio_hint(du, dm, name)
        if hint.startswith("not a multiple") and space.n <= 60:
            hint = (_quad_entries_hint if i == 0 else _lin_entries_hint)(
                space, F_U, F_M, tol * scale, syms) or hint
        if i == 0:
            w, zq = witness(lambda z: even(F_U, z) - even(F_M, z))
            w += (f"; the quadratic parts there: yours {_num(even(F_U, zq))}, derived "
                  f"{_num(even(F_M, zq))}")
        else:
            w, zq = witness(lambda z: F_U(z) - F_M(z))
        pieces.append(Piece("dual", f"objective, {name} differs", False, line_u, line_m, w,
                            hint, space.split(zq), F_U(zq) - F_M(zq)))
        return pieces
    ok = abs(c_u - c_m) <= tol * scale
    pieces.append(Piece("dual", "objective, constant part" + ("" if ok else " differs"), ok,
                        line_u, line_m,
                        "" if ok else f"at {space.fmt(z0, syms)}: your objective {_num(c_u)}, "
                        f"derived {_num(c_m)}, difference {c_u - c_m:.4g} (the same at every "
                        "point of the equalities)", "", None if ok else space.split(z0),
                        None if ok else c_u - c_m))
    return pieces


def _quad_entries_hint(space: _Space, F_U: Callable, F_M: Callable, tol: float,
                       syms: dict[str, str]) -> str:
    """Which coefficients of the quadratic form differ (``z_i z_j``), and whether by sign."""
    n = space.n
    zero = np.zeros(n)

    def even(F: Callable, z: np.ndarray, f0: float) -> float:
        return 0.5 * (F(z) + F(-z)) - f0
    H = []
    for F in (F_U, F_M):
        f0 = F(zero)
        d = np.array([even(F, np.eye(n)[k], f0) for k in range(n)])
        M = np.diag(d)
        for i in range(n):
            for j in range(i + 1, n):
                M[i, j] = M[j, i] = even(F, np.eye(n)[i] + np.eye(n)[j], f0) - d[i] - d[j]
        H.append(M)
    Hu, Hm = H
    diff = np.abs(Hu - Hm) > tol
    if not np.any(diff):
        return ""
    iu = np.argwhere(np.triu(diff))
    flip = np.abs(Hu + Hm) <= tol
    i, j = iu[0]
    name = (f"{space.coord(i, syms)}²" if i == j else
            f"{space.coord(i, syms)} {space.coord(j, syms)}")
    both = f"the coefficient of {name}: yours {_num(Hu[i, j])}, derived {_num(Hm[i, j])}"
    n_diff = int(np.sum(np.triu(diff)))
    total = n * (n + 1) // 2
    if np.all(flip[diff]):
        return (f"{n_diff} of the {total} coefficients of the quadratic form have the "
                f"opposite sign, e.g. {both}: a sign error in Q?")
    return f"{n_diff} of the {total} coefficients of the quadratic form differ, e.g. {both}"


def _lin_entries_hint(space: _Space, F_U: Callable, F_M: Callable, tol: float,
                      syms: dict[str, str]) -> str:
    """Which linear coefficients differ, block by block."""
    n = space.n
    gu = np.array([0.5 * (F_U(np.eye(n)[k]) - F_U(-np.eye(n)[k])) for k in range(n)])
    gm = np.array([0.5 * (F_M(np.eye(n)[k]) - F_M(-np.eye(n)[k])) for k in range(n)])
    out, agree = [], []
    for b in space.blocks:
        sl = slice(b.offset, b.offset + b.size)
        d = np.abs(gu[sl] - gm[sl]) > tol
        sym = syms.get(b.name, b.sym)
        if not np.any(d):
            agree.append(sym)
            continue
        k = b.offset + int(np.flatnonzero(d)[0])
        out.append(f"{int(d.sum())} of the {b.size} coefficients of {sym} (e.g. of "
                   f"{space.coord(k, syms)}: yours {_num(gu[k])}, derived {_num(gm[k])})")
    if not out:
        return ""
    return "the linear coefficients differ: " + "; ".join(out) + (
        f"; those of {', '.join(agree)} agree" if agree else "")


def _ratio_hint(du: np.ndarray, dm: np.ndarray, name: str) -> str:
    big = np.abs(dm) > 1e-9 * max(1.0, float(np.max(np.abs(dm))))
    if not np.any(big):
        return f"the derived objective has no {name} on the feasible directions; yours has"
    r = du[big] / dm[big]
    if np.allclose(r, r[0], rtol=1e-6, atol=0) and np.allclose(du[~big], 0, atol=1e-9):
        k = float(r[0])
        extra = {2.0: ": a missing 1/2?", 0.5: ": an extra 1/2?",
                 -1.0: ": the opposite sign"}.get(round(k, 9), "")
        return f"your {name} is {_num(k)} × the derived one{extra}"
    return (f"not a multiple of the derived {name}: some entries differ (a sign, a factor "
            "or a missing term)")


# ============================================================================ KKT
def _kkt_space(primal: Problem) -> tuple[_Space, Callable[[np.ndarray], tuple[dict, dict]]]:
    blocks = [_Block(v.name, v.size, v.scalar, v.block_txt) for v in primal.variables]
    blocks += [_Block(c.multiplier, c.size, c.scalar, c.mult_block_txt)
               for c in primal.constraints]
    space = _Space(blocks)
    var_names = [v.name for v in primal.variables]
    mult_names = [c.multiplier for c in primal.constraints]

    def split(z: np.ndarray) -> tuple[dict, dict]:
        return ({nm: space.part(z, nm) for nm in var_names},
                {nm: space.part(z, nm) for nm in mult_names})
    return space, split


def _kkt_items_of(kkt: Any, point_of: Callable[[np.ndarray], tuple[dict, dict]], n: int,
                  rng: np.random.Generator) -> tuple[list[_Item], list[tuple]]:
    """Rows of a :class:`KKTConditions` (stationarity, feasibility) and its complementarity
    pairs ``(multiplier name, affine rows of g, text)``."""
    P: Problem = kkt.problem
    conds = {c.key: c for c in kkt.conditions}
    items: list[_Item] = []
    for v in P.variables:
        key = f"stationarity[{v.name}]"

        def grad(z: np.ndarray, v: Variable = v) -> np.ndarray:
            x, m = point_of(z)
            return np.atleast_1d(kkt.gradient(v, x, m))
        ab = _affine(grad, n, rng)
        if ab is None:
            raise ValueError(f"the stationarity in {v.name!r} is not affine (a non-quadratic "
                             "term): kkt= is compared for quadratic programs")
        text = conds[key].txt if key in conds else key
        items.append(_Item(f"stationarity in {v.block_txt}", text, ab[0], ab[1], True, key,
                           None, rowname=_grad_name(v)))
    for c in P.constraints:
        def g(z: np.ndarray, c: Constraint = c) -> np.ndarray:
            return np.atleast_1d(c.value(point_of(z)[0]))
        ab = _affine(g, n, rng)
        if ab is None:
            raise ValueError(f"constraint {c.txt()!r} is not affine: kkt= is compared for "
                             "affine constraints")
        key = f"primal_feasibility[{c.multiplier}]"
        items.append(_Item(f"primal feasibility [{c.mult_txt}]",
                           conds[key].txt if key in conds else c.txt(), ab[0], ab[1],
                           c.equality, key,
                           _constraint_detail(c, lambda z: point_of(z)[0])))
    comp = []
    for c in P.constraints:
        if c.equality:
            continue

        def lam(z: np.ndarray, c: Constraint = c) -> np.ndarray:
            return np.atleast_1d(point_of(z)[1][c.multiplier])
        ab = _affine(lam, n, rng)
        assert ab is not None
        key = f"dual_feasibility[{c.multiplier}]"
        items.append(_Item(f"dual feasibility [{c.mult_txt} ≥ 0]",
                           conds[key].txt if key in conds else f"{c.mult_txt} ≥ 0",
                           ab[0], ab[1], False, key))
        def gval(z: np.ndarray, c: Constraint = c) -> np.ndarray:
            return np.atleast_1d(c.value(point_of(z)[0]))
        gab = _affine(gval, n, rng)
        key = f"complementarity[{c.multiplier}]"
        comp.append((c.multiplier, gab, conds[key].txt if key in conds else key))
    return items, comp


def _grad_name(v: Variable) -> Callable[[int], str]:
    def name(k: int) -> str:
        return f"∂L/∂{v.block_txt}" + ("" if v.scalar else f"_{k + 1}")
    return name


def _check_kkt(primal: Problem, kkt: Any, mapping: dict[str, str], tol: float,
               rng: np.random.Generator, report: DerivationReport) -> None:
    from .model.kkt import KKTConditions

    space, split = _kkt_space(primal)
    n = space.n
    ref, ref_comp = _kkt_items_of(primal.kkt(), split, n, rng)
    if isinstance(kkt, KKTConditions):
        U: Problem = kkt.problem
        uvars = list(U.variables) + [Variable(c.multiplier, None if c.scalar else c.size)
                                     for c in U.constraints]
        matched, rest, free, how = _match(uvars, space.blocks, mapping)
        report.alignment += [f"KKT {h}" for h in how]
        if free or rest:
            _kkt_alignment_failure(report, space, free, rest)
            return
        inv_v = {v.name: matched[v.name][0] for v in U.variables}
        inv_m = {c.multiplier: matched[c.multiplier][0] for c in U.constraints}

        def u_split(z: np.ndarray) -> tuple[dict, dict]:
            return ({k: space.part(z, t) for k, t in inv_v.items()},
                    {k: space.part(z, t) for k, t in inv_m.items()})
        mine, mine_comp = _kkt_items_of(kkt, u_split, n, rng)
        comp_u = [(inv_m[m], g, t) for m, g, t in mine_comp]
    else:
        items = list(kkt)
        uv: dict[str, Variable] = {}
        for it in items:
            exprs = [it.g] if isinstance(it, Constraint) else []
            if isinstance(it, tuple) and len(it) == 2:
                m, e = it
                exprs = [e.g if isinstance(e, Constraint) else
                         e.as_expr() if isinstance(e, Variable) else e]
                if isinstance(m, Variable):
                    uv.setdefault(m.name, m)
            elif not isinstance(it, Constraint):
                raise TypeError("kkt= items must be Constraint objects or (multiplier, "
                                f"expression) pairs, got {type(it).__name__}")
            for e in exprs:
                if not isinstance(e, Expr):
                    raise TypeError("a complementarity pair is (multiplier, expression or "
                                    f"constraint), got {type(e).__name__}")
                for v in e.variables:
                    uv.setdefault(v.name, v)
        matched, rest, free, how = _match(list(uv.values()), space.blocks, mapping)
        report.alignment += [f"KKT {h}" for h in how]
        if rest:
            _kkt_alignment_failure(report, space, [], rest)
            return

        def u_point(z: np.ndarray) -> dict:
            return {nm: np.concatenate([space.part(z, b) for b in bl])
                    for nm, bl in matched.items()}
        mine, comp_u = [], []
        for it in items:
            if isinstance(it, Constraint):
                def cval(z: np.ndarray, c: Constraint = it) -> np.ndarray:
                    return np.atleast_1d(c.value(u_point(z)))
                ab = _affine(cval, n, rng)
                if ab is None:
                    raise ValueError(f"your KKT condition {it.txt()!r} is not affine")
                mine.append(_Item(it.txt(), it.txt(), ab[0], ab[1], it.equality,
                                  it.multiplier, _constraint_detail(it, u_point)))
            else:
                m, e = it
                mname = m.name if isinstance(m, Variable) else str(m)
                tgt = matched.get(mname, [mapping.get(mname, mname)])
                ex = e.g if isinstance(e, Constraint) else \
                    e.as_expr() if isinstance(e, Variable) else e
                def eval_(z: np.ndarray, ex: Expr = ex) -> np.ndarray:
                    return np.atleast_1d(ex.affine_value(u_point(z)))
                gab = _affine(eval_, n, rng)
                mt = m.block_txt if isinstance(m, Variable) else text_symbol(mname)
                comp_u.append((tgt[0], gab, f"{mt}_i ({ex.txt}) = 0"))
    report.pieces += _compare_systems(space, ref, mine, "KKT", tol, {}, "condition")
    report.pieces += _compare_complementarity(space, ref_comp, comp_u, tol, rng, mine)
    report.checked.append(f"KKT: {len(ref)} conditions, {len(ref_comp)} complementarity pairs")


def _kkt_alignment_failure(report: DerivationReport, space: _Space, free: list[str],
                           rest: list[Variable]) -> None:
    report.pieces.append(Piece(
        "KKT", "variables", False, ", ".join(v.name for v in rest) or "",
        ", ".join(b.name for b in space.blocks),
        ("no counterpart in yours for " + ", ".join(free) if free else "")
        + (("; " if free else "") + "yours has " + ", ".join(v.name for v in rest)
           + " matching no primal variable or multiplier (give mapping=)" if rest else "")))


def _compare_complementarity(space: _Space, ref: list[tuple], mine: list[tuple], tol: float,
                             rng: np.random.Generator, mine_items: list[_Item]) -> list[Piece]:
    pieces = []
    S_mine = _System([it for it in mine_items if it.A.size], space.n)
    for mult, gab, text in ref:
        A, b = gab
        b_ = space.by_name[mult]
        partner = next((m for m in mine if m[0] == mult), None)
        if partner is None:
            # a point satisfying all of yours with mult_1 > 0 and g_1 > 0
            c = np.zeros(space.n)
            c[b_.offset] = -1.0
            c -= A[0]
            R = 10.0 * max(1.0, float(np.max(np.abs(b), initial=0.0)))
            z = S_mine.minimize(c, R)
            w, pt, prod = "", None, None
            if z is not None:
                z = _clean(z)
                prod = float(z[b_.offset] * (A[0] @ z + b[0]))
                w = (f"at {space.fmt(z)}, which satisfies all of yours: "
                     f"{space.coord(b_.offset)} g_1 = {_num(prod)}, not 0")
                pt = space.split(z)
            pieces.append(Piece("KKT", f"complementarity [{b_.sym}]: missing from yours",
                                False, "(no counterpart)", text, w, "", pt, prod))
            continue
        Au, bu = partner[1]
        bad = None
        for k in range(A.shape[0]):
            v_ref = np.r_[A[k], b[k]]
            v_u = np.r_[Au[k], bu[k]] if k < Au.shape[0] else np.zeros_like(v_ref)
            if np.linalg.matrix_rank(np.vstack([v_ref, v_u]), tol=1e-9 * max(
                    1.0, float(np.max(np.abs(v_ref))))) != 1 or not np.any(v_u):
                bad = k
                break
        if bad is None:
            pieces.append(Piece("KKT", f"complementarity [{b_.sym}]", True, partner[2], text))
            continue
        k = bad
        # a sparse point where the derived g_k = 0 but yours is not
        a = A[k]
        z = -a * b[k] / float(a @ a) if np.any(a) else np.zeros(space.n)
        for j in np.argsort(-np.abs(a)):
            if a[j] == 0:
                break
            u = np.zeros(space.n)
            u[j] = -b[k] / a[j]
            if k >= Au.shape[0] or abs(Au[k] @ u + bu[k]) > tol:
                z = u
                break
        z[b_.offset + k] = 1.0
        gu = float(Au[k] @ z + bu[k]) if k < Au.shape[0] else float("nan")
        gm = float(A[k] @ z + b[k])
        pieces.append(Piece(
            "KKT", f"complementarity [{b_.sym}]: a different expression", False, partner[2],
            text, f"at {space.fmt(_clean(z))}: the derived {b_.sym}_{k + 1} g_{k + 1} = "
                  f"{_num(gm)}, yours {b_.sym}_{k + 1} × ({_num(gu)}) = {_num(gu)}", "",
            space.split(_clean(z)), gu - gm))
    return pieces


# ============================================================================ Lagrangian
def _check_lagrangian(primal: Problem, lag: Any, mapping: dict[str, str], tol: float,
                      rng: np.random.Generator, report: DerivationReport) -> None:
    from .model.lagrangian import Lagrangian

    space, split = _kkt_space(primal)
    L_M = primal.lagrangian()
    if isinstance(lag, Lagrangian):
        U = lag.problem
        uvars = list(U.variables) + [Variable(c.multiplier, None if c.scalar else c.size)
                                     for c in U.constraints]
        matched, rest, free, how = _match(uvars, space.blocks, mapping)
        if free or rest:
            report.pieces.append(Piece("Lagrangian", "variables", False,
                                       ", ".join(v.name for v in uvars),
                                       ", ".join(b.name for b in space.blocks),
                                       "no alignment by name or shape (give mapping=)"))
            return
        report.alignment += [f"L {h}" for h in how]
        inv = {k: v[0] for k, v in matched.items()}
        uv = {v.name for v in U.variables}

        def L_U(x: dict, m: dict) -> float:
            allv = {**x, **m}
            return lag.value({k: allv[t] for k, t in inv.items() if k in uv},
                             {k: allv[t] for k, t in inv.items() if k not in uv})
        texts = {c.multiplier: t for c, t in zip(U.constraints, lag.terms(), strict=True)}
        term_text = {inv.get(k, k): t for k, t in texts.items()}
        head_u = str(lag)
    elif callable(lag):
        back = {v: k for k, v in mapping.items()}

        def L_U(x: dict, m: dict) -> float:
            return float(lag({back.get(k, k): v for k, v in x.items()},
                             {back.get(k, k): v for k, v in m.items()}))
        term_text, head_u = {}, "your function L(x, multipliers)"
    else:
        raise TypeError(f"lagrangian must be a Lagrangian or a callable, got "
                        f"{type(lag).__name__}")
    m_terms = {c.multiplier: t for c, t in zip(primal.constraints, L_M.terms(), strict=True)}
    xnames = [v.name for v in primal.variables]
    nx = sum(v.size for v in primal.variables)
    zero_m = {c.multiplier: np.zeros(c.size) for c in primal.constraints}
    pts = [np.zeros(space.n)]
    for k in range(min(nx, 6)):
        z = np.zeros(space.n)
        z[k] = 1.0
        pts.append(z)
    pts += [np.r_[rng.standard_normal(nx), np.zeros(space.n - nx)] for _ in range(2)]

    def x_of(z: np.ndarray) -> dict:
        return {nm: space.part(z, nm) for nm in xnames}
    # f part
    bad = None
    for z in pts:
        fu, fm = L_U(x_of(z), zero_m), L_M.value(x_of(z), zero_m)
        if abs(fu - fm) > tol * max(1.0, abs(fu), abs(fm)):
            bad = (z, fu, fm)
            break
    line_m = str(L_M)
    if bad is not None:
        z, fu, fm = bad
        report.pieces.append(Piece("Lagrangian", "the objective part (L at zero multipliers)",
                                   False, head_u, line_m,
                                   f"at {space.fmt(z)} and all multipliers 0: yours "
                                   f"{_num(fu)}, derived {_num(fm)}", "", space.split(z),
                                   fu - fm))
    else:
        report.pieces.append(Piece("Lagrangian", "the objective part", True, head_u, line_m))
    for c in primal.constraints:
        badt: tuple | None = None
        flip_ok = c.equality
        signs = set()
        for z in pts[:4]:
            x = x_of(z)
            lu0, lm0 = L_U(x, zero_m), L_M.value(x, zero_m)
            for k in range(c.size):
                m = dict(zero_m)
                e = np.zeros(c.size)
                e[k] = 1.0
                m[c.multiplier] = e
                tu, tm = L_U(x, m) - lu0, L_M.value(x, m) - lm0
                sc = tol * max(1.0, abs(tu), abs(tm))
                if abs(tu - tm) <= sc:
                    signs.add(1)
                    continue
                if flip_ok and abs(tu + tm) <= sc:
                    signs.add(-1)
                    continue
                badt = (z, k, tu, tm)
                break
            if badt:
                break
        title = f"the term of {c.mult_txt}"
        if badt is None and len(signs) > 1:
            badt = (pts[0], 0, float("nan"), float("nan"))
        if badt is None:
            hint = "" if signs != {-1} else "the opposite sign convention for this free " \
                "multiplier (equivalent)"
            report.pieces.append(Piece("Lagrangian", title, True, term_text.get(
                c.multiplier, ""), m_terms[c.multiplier], "", hint))
            continue
        z, k, tu, tm = badt
        sym = space.by_name[c.multiplier].sym
        idx = "" if c.scalar else f"_{k + 1}"
        report.pieces.append(Piece(
            "Lagrangian", title + " differs", False,
            term_text.get(c.multiplier, head_u), m_terms[c.multiplier],
            f"at {space.fmt(z)}: the coefficient of {sym}{idx} in L is {_num(tu)} in yours, "
            f"{_num(tm)} derived", "a sign: L = f - Σ λ g for g ≥ 0 in a minimisation"
            if abs(tu + tm) <= tol * max(1.0, abs(tu)) else "", space.split(z), tu - tm))
    report.checked.append(f"Lagrangian: objective part and {len(primal.constraints)} "
                          "multiplier terms")


# ============================================================================ recovery
def _check_recover(der: Any, recover: Callable, aligned: tuple | None, tol: float,
                   report: DerivationReport) -> None:
    M: Problem = der.dual
    sol = M.solve(backend="cvxpy")
    ref = der.recover(sol)
    vals = dict(sol.values)
    if aligned is not None:   # your dual's names, through the alignment of the dual check
        space, u_point = aligned
        mm = der.multipliers(sol)
        z = np.zeros(space.n)
        for b in space.blocks:
            src = mm[b.name] if b.name in mm else vals[b.name]
            z[b.offset:b.offset + b.size] = np.asarray(src, float).ravel()[:b.size]
        vals = u_point(z)
    mine = recover(vals)
    worst = None
    for v in der.primal.variables:
        if v.name not in mine:
            report.pieces.append(Piece("recovery", f"{v.block_txt}: missing from yours",
                                       False, ", ".join(mine), ", ".join(ref)))
            return
        a = np.atleast_1d(np.asarray(mine[v.name], float)).ravel()
        r = np.atleast_1d(np.asarray(ref[v.name], float)).ravel()
        if a.shape != r.shape:
            report.pieces.append(Piece("recovery", f"{v.block_txt}: shape {a.shape} vs "
                                       f"{r.shape}", False))
            return
        if v.feature:
            a, r = v.gram_matvec(a), v.gram_matvec(r)
        diff = float(np.max(np.abs(a - r), initial=0.0))
        scale = max(1.0, float(np.max(np.abs(r), initial=0.0)))
        if diff > max(tol, 1e-5) * scale and worst is None:
            k = int(np.argmax(np.abs(a - r)))
            what = f"⟨{v.block_txt}, φ(x_{k + 1})⟩" if v.feature else (
                v.block_txt if v.scalar else f"{v.block_txt}_{k + 1}")
            worst = Piece("recovery", f"{v.block_txt} differs", False,
                          f"{what} = {_num(a[k])}", f"{what} = {_num(r[k])}",
                          f"at the dual optimum (CVXPY, value {_num(sol.objective_value)}): "
                          f"max |difference| {diff:.3g}")
    if worst is not None:
        report.pieces.append(worst)
    else:
        report.pieces.append(Piece("recovery", "primal values from the dual optimum", True))
    report.checked.append("recovery at the dual optimum")


# ============================================================================ entry points
def check_derivation(primal: Problem, dual: Problem | None = None, lagrangian: Any = None,
                     kkt: Any = None, *, recover: Callable | None = None,
                     mapping: dict[str, str] | None = None, tol: float = 1e-7,
                     seed: int = 0) -> DerivationReport:
    """Compare hand-derived pieces with the mechanical derivation of ``primal``.

    Parameters
    ----------
    primal : Problem
        The primal (a minimisation :func:`~primaldual.model.dualize.dualize` accepts).
    dual : Problem, optional
        Your dual (``max F`` or ``min -F``), over variables named like the primal's
        multipliers (``alpha``) or matched by shape or ``mapping``; extra variables are read
        off your equalities.
    lagrangian : Lagrangian or callable, optional
        ``L(x, multipliers)`` with the convention ``L = f - Σ λᵀ g`` for ``g ≥ 0`` (a
        minimisation); a free multiplier may carry the opposite sign.
    kkt : KKTConditions or list, optional
        Your KKT system: :class:`~primaldual.model.Constraint` objects (stationarity,
        primal and dual feasibility, affine in the primal variables and the multipliers) and
        complementarity pairs ``(multiplier, expression)``.
    recover : callable, optional
        ``dual values (dict) -> primal values (dict)``; compared with
        ``Derivation.recover`` at the dual optimum (CVXPY).
    mapping : dict, optional
        Your names -> the derived names (``{"a": "alpha"}``).
    tol : float
        Relative tolerance of every numeric comparison.
    seed : int
        Seed of the random sample points.

    Returns
    -------
    DerivationReport
        ``ok``, ``first`` (the first piece that differs) and ``str()`` the report.
    """
    if not isinstance(primal, Problem):
        if hasattr(primal, "primal") and isinstance(primal.primal, Problem):
            primal = primal.primal
        else:
            raise TypeError(f"primal must be a Problem, got {type(primal).__name__}")
    if dual is not None and not isinstance(dual, Problem):
        if hasattr(dual, "dual") and isinstance(dual.dual, Problem):
            dual = dual.dual
        else:
            raise TypeError(f"dual must be a Problem, got {type(dual).__name__}")
    if not (tol > 0):
        raise ValueError(f"tol must be positive, got {tol!r}")
    mapping = dict(mapping or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise TypeError("mapping must map names (str) to names (str)")
    if dual is None and lagrangian is None and kkt is None and recover is None:
        raise ValueError("nothing to check: give dual=, lagrangian=, kkt= or recover=")
    rng = np.random.default_rng(seed)
    report = DerivationReport(repr(primal.name))
    der = dualize(primal) if (dual is not None or recover is not None) else None
    if lagrangian is not None:
        _check_lagrangian(primal, lagrangian, mapping, tol, rng, report)
    if kkt is not None:
        _check_kkt(primal, kkt, mapping, tol, rng, report)
    aligned = None
    if dual is not None:
        aligned = _check_dual(der, dual, mapping, tol, rng, report)
    if recover is not None:
        if dual is not None and aligned is None:
            report.pieces.append(Piece("recovery", "not checked: your dual's variables could "
                                       "not be aligned", False))
        else:
            _check_recover(der, recover, aligned, tol, report)
    return report


def assert_derivation(primal: Problem, dual: Problem | None = None, lagrangian: Any = None,
                      kkt: Any = None, **kwargs: Any) -> DerivationReport:
    """:func:`check_derivation`, raising ``AssertionError`` with the report as its message
    when a piece differs (for pytest); returns the report otherwise."""
    rep = check_derivation(primal, dual, lagrangian, kkt, **kwargs)
    if not rep.ok:
        raise AssertionError(str(rep))
    return rep
