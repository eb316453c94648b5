"""Text and LaTeX rendering of a Problem, in the notation of the texts."""

from __future__ import annotations

from typing import Any

from .expr import OPS_TEX

_SENSE_TXT = {"min": "minimize", "max": "maximize"}
_SENSE_TEX = {"min": r"\min", "max": r"\max"}


def problem_text(p: Any) -> str:
    """Multi-line text::

        C-SVC primal
          minimize    1/2 ‖w‖² + Σ_i C_i ξ_i
          over        w ∈ H (feature space of RBF(gamma=0.5)), b ∈ R, ξ ∈ R^N
          subject to  y_i (⟨w, φ(x_i)⟩ + b) ≥ 1 - ξ_i,  i = 1..N   [α_i ≥ 0]
    """
    lines = [p.name, f"  {_SENSE_TXT[p.sense]:<11} {p.objective.txt}"]
    n = n_samples(p)
    lines.append(f"  {'over':<11} " + ", ".join(v.describe(n) for v in p.variables))
    for k, c in enumerate(p.constraints):
        head = "subject to" if k == 0 else ""
        lines.append(f"  {head:<11} {c.render(n)}")
    for k, (t, _) in enumerate(getattr(p, "definitions", [])):
        lines.append(f"  {'where' if k == 0 else '':<11} {t}")
    return "\n".join(lines)


def n_samples(p: Any) -> int | None:
    """The problem's number of samples ``N``: the basis size of a feature-space variable, else
    the most common length of its vector constraints (``None`` when there is none)."""
    hint = getattr(p, "n_samples_hint", None)
    if hint is not None:
        return hint
    for v in p.variables:
        if v.feature:
            return v.size
    sizes = [c.size for c in p.constraints if not c.scalar] or [
        v.size for v in p.variables if not v.scalar and v.index is None]
    if not sizes:
        return None
    return max(set(sizes), key=lambda k: (sizes.count(k), -k))


def problem_latex(p: Any) -> str:
    """An ``aligned`` block: ``\\min_{w,b,\\xi}`` objective, then ``\\text{s.t.}`` rows with the
    multiplier of each constraint in brackets."""
    over = ", ".join(v.block_tex for v in p.variables)
    n = n_samples(p)
    rows = [rf"{_SENSE_TEX[p.sense]}_{{{over}}} \quad & {p.objective.tex}"]
    for k, c in enumerate(p.constraints):
        head = r"\text{s.t.} \quad" if k == 0 else ""
        dom = "" if c.equality else r" \geq 0"
        where = "" if c.scalar else (r",\ " + _tex_where(c.where_txt(n)))
        note = c.lhs.row_note or c.rhs.row_note
        if note and not c.where and not c.scalar:   # the note's words in \text
            where = (r",\ " + _tex_where(c._where_default(n)) + rf"\ ({note[1]})")
        rows.append(rf"{head} & {c.lhs.tex} {OPS_TEX[c.op]} {c.rhs.tex}{where}"
                    rf" && [{c.mult_tex}{dom}]")
    for k, (_, x) in enumerate(getattr(p, "definitions", [])):
        head = r"\text{where} \quad" if k == 0 else ""
        rows.append(rf"{head} & {x}")
    return r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}"


def _tex_where(w: str) -> str:
    return (w.replace("i = 1..N", r"i = 1,\dots,N").replace("∈", r"\in ").replace("≠", r"\neq ")
            .replace("..", r",\dots,"))
