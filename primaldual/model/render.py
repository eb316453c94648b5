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
    n = next((v.size for v in p.variables if v.feature), None)
    sizes = [c.size for c in p.constraints if not c.scalar] or [
        v.size for v in p.variables if not v.scalar and v.index is None]
    if n is None and sizes:
        n = max(set(sizes), key=lambda k: (sizes.count(k), -k))
    if n is None or getattr(p, "_index_sets_named", False):
        return n
    # Index sets inferred from shapes and subsets, once per problem (the primal, its
    # Lagrangian, KKT conditions and derived dual all read what is set here): the rows a
    # constraint picks from phi(X) (phi(X)[I]) form an index set I_1, I_2, ... (one per
    # distinct subset, in order of appearance), printed "i ∈ I_k" with i the data row; a
    # vector of slacks written over those rows is indexed by the same set (ξ_1 ∈ R^|I_1|);
    # any other vector constraint whose length is not N prints its own length (i = 1..n).
    p._index_sets_named = True
    sets: dict[tuple, int] = {}
    var_set: dict = {}
    con_set: dict = {}

    def _picked(c):   # the data rows a constraint selects, when it selects a proper subset
        for v, G in c.g.lin.items():
            if not v.feature or not hasattr(G, "indptr") or G.shape[1] != n:
                continue
            if G.shape[0] == n or G.nnz != G.shape[0] or not all(
                    G.indptr[1:] - G.indptr[:-1] == 1):
                continue
            return tuple(int(r) for r in G.indices)
        return None

    def _own(c):      # its row-indexed variables without an index set of their own
        return [v for v in c.g.lin if not v.scalar and not v.feature and v.index is None
                and getattr(v, "dim_txt", None) is None and v.size == c.size]

    todo = [c for c in p.constraints if not c.scalar and not c.where and c.index_set is None
            and not (c.lhs.subset_of or c.rhs.subset_of)]
    for c in todo:
        rows = _picked(c)
        if rows is not None and len(rows) == c.size and len(set(rows)) == len(rows):
            k = sets.setdefault(rows, len(sets) + 1)
            con_set[c] = k
            for v in _own(c):
                var_set.setdefault(v, k)
    for c in todo:
        if c not in con_set:
            ks = {var_set[v] for v in _own(c) if v in var_set}
            if len(ks) == 1:
                con_set[c] = ks.pop()
    sizes_of = {k: len(r) for r, k in sets.items()}
    for c in todo:
        k = con_set.get(c)
        if k is not None:
            c.where = f"i ∈ I_{k}"
            for e in (c.lhs, c.rhs, c.g):   # i is now the data row itself: x_i, not x_{I_i}
                e.txt = e.txt.replace("_{I_i}", "_i")
                e.tex = e.tex.replace("_{I_i}", "_{i}")
                e.row_note = None
                for v, (t, x) in list(getattr(e, "ctx", {}).items()):
                    if isinstance(t, str) and isinstance(x, str):
                        e.ctx[v] = (t.replace("_{I_i}", "_i"), x.replace("_{I_i}", "_{i}"))
        elif c.size != n:     # its own length, said once for every display (KKT too)
            c.where = c.where_txt(n)
    for v, k in var_set.items():
        v.dim_txt = f"|I_{k}|"
    if sets and not any(t.startswith("I_1") for t, _ in p.definitions):
        names = ", ".join(f"I_{k}" for k in sorted(sizes_of))
        cards = ", ".join(f"|I_{k}| = {sizes_of[k]}" for k in sorted(sizes_of))
        cards_x = ", ".join(rf"|I_{{{k}}}| = {sizes_of[k]}" for k in sorted(sizes_of))
        p.definitions.append((f"{names} ⊂ {{1..N}}: the rows the constraints select, {cards}",
                              rf"{names} \subset \{{1,\dots,N\}} \text{{: the rows the "
                              rf"constraints select, }} {cards_x}"))
    return n


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
