"""Text and LaTeX rendering of a Problem, in the notation of the texts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .problem import OPS_TEX

if TYPE_CHECKING:
    from .problem import Problem

_SENSE_TXT = {"min": "minimize", "max": "maximize"}
_SENSE_TEX = {"min": r"\min", "max": r"\max"}


def problem_text(p: Problem) -> str:
    """Multi-line text::

        C-SVC primal
          minimize    1/2 ‖w‖² + Σ_i C_i ξ_i
          over        w ∈ H (feature space of RBF(gamma=0.5)), b ∈ R, ξ ∈ R^N
          subject to  y_i (⟨w, φ(x_i)⟩ + b) ≥ 1 - ξ_i,  i = 1..N   [α_i ≥ 0]
    """
    lines = [p.name, f"  {_SENSE_TXT[p.sense]:<11} {p.objective.txt}"]
    lines.append(f"  {'over':<11} " + ", ".join(_describe(v) for v in p.variables))
    for k, c in enumerate(p.constraints):
        head = "subject to" if k == 0 else ""
        lines.append(f"  {head:<11} {c}")
    return "\n".join(lines)


def _describe(v) -> str:
    if v.feature:
        return v.describe()
    dim = getattr(v, "dim_txt", "N")   # e.g. "l" for the labelled points of LapSVM
    return f"{v.block_txt} ∈ R" + ("" if v.scalar else f"^{dim}" if v.size > 1 else "")


def problem_latex(p: Problem) -> str:
    """An ``aligned`` block: ``\\min_{w,b,\\xi}`` objective, then ``\\text{s.t.}`` rows with the
    multiplier of each constraint in brackets."""
    over = ", ".join(v.block_tex for v in p.variables)
    rows = [rf"{_SENSE_TEX[p.sense]}_{{{over}}} \quad & {p.objective.tex}"]
    for k, c in enumerate(p.constraints):
        head = r"\text{s.t.} \quad" if k == 0 else ""
        dom = "" if c.equality else r" \geq 0"
        where = "" if c.scalar else (r",\ " + _tex_where(c.where_txt()))
        rows.append(rf"{head} & {c.lhs.tex} {OPS_TEX[c.op]} {c.rhs.tex}{where}"
                    rf" && [{c.mult_tex}{dom}]")
    return r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}"


def _tex_where(w: str) -> str:
    return (w.replace("i = 1..N", r"i = 1,\dots,N").replace("∈", r"\in ")
            .replace("..", r",\dots,"))
