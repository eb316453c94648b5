"""The coordinates both sides of a comparison live in (named blocks stacked into one vector),
their printing, and the exact reading of an affine map ``z -> A z + b``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


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
