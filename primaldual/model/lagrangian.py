"""The Lagrangian of a Problem.

Convention (docs/formulations.md): with every constraint written ``g(x) >= 0`` or ``h(x) = 0``,
``L = f - sum_k lambda_k^T g_k`` for a minimisation (``lambda >= 0`` on inequalities, free on
equalities), and ``L = f + sum_k lambda_k^T g_k`` for a maximisation (a maximisation is the
minimisation of ``-f``; this is the same Lagrangian up to the overall sign).
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Lagrangian:
    """``L(x; lambda)`` of a :class:`Problem`; renders itself and evaluates numerically."""

    def __init__(self, problem: Any) -> None:
        self.problem = problem
        self.sign = -1.0 if problem.sense == "min" else 1.0

    def _head(self, tex: bool) -> str:
        p = self.problem
        if tex:
            xs = ", ".join(v.block_tex for v in p.variables)
            ls = ", ".join(c.mult_tex.split("_{")[0] if not c.scalar else c.mult_tex
                           for c in p.constraints)
            return f"L({xs};\\, {ls})"
        xs = ", ".join(v.block_txt for v in p.variables)
        ls = ", ".join(c.mult_block_txt for c in p.constraints)
        return f"L({xs}; {ls})"

    def terms(self, tex: bool = False) -> list[str]:
        """The multiplier terms, each with its sign (``- Σ_i α_i (...)``)."""
        out = []
        op = "-" if self.sign < 0 else "+"
        for c in self.problem.constraints:
            gt, gx = c.g_render()
            mt, mx, o = c.mult_txt, c.mult_tex, op
            if mt.startswith("-"):  # a multiplier named -b: "+ -b yᵀα" reads "- b yᵀα"
                mt, mx, o = mt[1:], mx[1:], ("+" if op == "-" else "-")
            if tex:
                g = gx if (" + " not in gx and " - " not in gx) else rf"\left({gx}\right)"
                out.append(f"{o} " + (rf"\sum_{{{c.letter}}} {mx} {g}" if not c.scalar
                                      else f"{mx} {g}"))
            else:
                g = gt if (" + " not in gt and " - " not in gt) else f"({gt})"
                out.append(f"{o} " + (f"Σ_{c.letter} {mt} {g}" if not c.scalar
                                      else f"{mt} {g}"))
        return out

    def __str__(self) -> str:
        return f"{self._head(False)} = {self.problem.objective.txt} " + " ".join(self.terms())

    def to_latex(self) -> str:
        return (f"{self._head(True)} = {self.problem.objective.tex} "
                + " ".join(self.terms(True)))

    def _repr_latex_(self) -> str:
        return "$$" + self.to_latex() + "$$"

    __repr__ = __str__

    def value(self, point: dict, multipliers: dict) -> float:
        """``L`` at a primal point and multipliers (dicts keyed by name)."""
        p = self.problem
        val = p.evaluate(point)
        for c in p.constraints:
            lam = np.atleast_1d(np.asarray(multipliers[c.multiplier], dtype=float))
            val += self.sign * float(lam @ c.value(point))
        return float(val)
