"""Printed lines as affine rows, and the witness search: whether a row follows from the other
side's rows (a positive multiple, a tighter constant, else a HiGHS linear program), a sparse
point violating it when it does not, and the pieces of two systems compared line by line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog

from ..model.problem import Constraint
from .coords import _num, _Space
from .report import Piece


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
