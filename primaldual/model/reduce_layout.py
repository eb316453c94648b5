"""Reduction: the dual variables (one per kept constraint, quadratic ones stacked)."""

from __future__ import annotations

from .derivation import Derivation
from .dual_text import (
    _fix_ball_coefficient,
    _name_stacked,
)
from .leaves import Variable
from .reduce_state import (
    DualizeState,
    _nonzero,
)

__all__ = ["layout_multipliers"]


def layout_multipliers(s: DualizeState) -> DualizeState:
    """Lay the kept constraints' multipliers out as dual variables (those that meet an eliminated
    block first, stacked into one variable when several) and open the Derivation record."""
    primal = s.primal
    steps = s.steps
    blocks = s.blocks
    folded = s.folded
    kept = [c for c in primal.constraints if c not in folded]
    # layout: quadratic multipliers first, stacked into one variable if several
    Aq = {}
    for c in kept:
        Aq[c] = any(c.g.lin.get(v) is not None and _nonzero(c.g.lin[v])
                    for b in blocks if b.kind in ("feature", "quad", "huber", "joint")
                    for v in (b.vars or [b.var]))
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
        # the multiplier runs over its constraint's rows with their letter (j = 1..N_B)
        dv = Variable(c.multiplier, None if c.scalar else c.size, index=c.index_set,
                      letter=c.letter if c.index_set is not None and not c.scalar else None)
        if c.where and c.where.startswith("i ∈ I_"):    # rows of an index set (render.py)
            dv.dim_txt = f"|{c.where[4:]}|"
        dvars.append(dv)
        layout[c.multiplier] = (dv, 0)
    kept = order
    n = sum(c.size for c in kept)

    der = Derivation(primal, primal, steps, blocks, kept, layout)
    for blk in blocks:
        if getattr(blk, "ball", False):
            _fix_ball_coefficient(blk, blocks, kept, der)
    s.kept = kept
    s.layout = layout
    s.dvars = dvars
    s.Aq = Aq
    s.der = der
    s.n = n
    return s

