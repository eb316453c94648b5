"""Aligning your variables with the derived ones: by ``mapping``, name, group and shape, and
reading a variable matched to nothing off your equalities."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..model.leaves import Variable
from ..model.problem import Constraint
from .coords import _affine, _Block, _Space


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
