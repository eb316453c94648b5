"""Reduction: the signs of the inequality multipliers."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import DualizationError
from .leaves import Variable
from .problem import Constraint
from .reduce_state import (
    DualizeState,
    _affine,
)

__all__ = ["multiplier_signs"]


def multiplier_signs(s: DualizeState) -> DualizeState:
    """Nonnegativity of the inequality multipliers (per part when equality multipliers share
    their stacked variable)."""
    primal = s.primal
    kept = s.kept
    layout = s.layout
    der = s.der
    # ---- nonnegativity of inequality multipliers
    from .render import n_samples
    n_samp = n_samples(primal)
    ineq_by_var: dict[Variable, list[Constraint]] = {}
    for c in kept:
        if not c.equality:
            ineq_by_var.setdefault(layout[c.multiplier][0], []).append(c)
    n_s = len(ineq_by_var)
    # the dual's constraints are named after the primal's variables (ξ for α ≤ C): a user's
    # variable or multiplier called s keeps its name, the sign constraint takes another
    taken = {v.name for v in primal.variables} | {c.multiplier for c in primal.constraints}
    sign_cons = []
    for dv, cs in ineq_by_var.items():
        if sum(c.size for c in cs) != dv.size:
            # equality multipliers stacked with inequality ones (an auxiliary variable defined
            # by an equality, SVM+'s ξ = ⟨w*, φ(x*_i)⟩ + b* [η]): a sign per inequality part
            for c in cs:
                _, lo = layout[c.multiplier]
                E = sp.csr_matrix((np.ones(c.size), (np.arange(c.size), lo + np.arange(c.size))),
                                  shape=(c.size, dv.size))
                e = _affine([(dv, E)], np.zeros(c.size), c.mult_txt, c.mult_tex, c.size,
                            c.scalar)
                zero = _affine([], np.zeros(c.size), "0", "0", c.size, c.scalar)
                sign_cons.append(Constraint(e, ">=", zero, f"s_{c.multiplier}", c.where))
            continue
        nm = _fresh("s" if n_s == 1 else f"s_{dv.name}", taken)
        taken.add(nm)
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

    s.sign_cons = sign_cons
    s.n_samp = n_samp
    return s


def _fresh(name: str, taken: set[str]) -> str:
    """``name``, or the first of ``t``, ``r``, ``sigma``, ``name2``, ``name3``, ... not in
    ``taken``."""
    if name not in taken:
        return name
    for alt in ("t", "r", "sigma") if name == "s" else ():
        if alt not in taken:
            return alt
    k = 2
    while f"{name}{k}" in taken:
        k += 1
    return f"{name}{k}"
