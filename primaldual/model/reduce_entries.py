"""Reduction: a vector variable used entry by entry (thresholds ``b[0] <= b[1]``) becomes
scalar variables ``b1, b2, ...`` (printed ``b_1, b_2``), so that each entry's stationarity is
an equality of its own; the recovered point gives the vector back under its name."""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp

from ..exceptions import DualizationError
from .coef_text import _const_txt
from .derivation import Step
from .expr import Expr
from .leaves import Variable
from .problem import Problem

__all__ = ["split_entry_variables"]


def _split(e: Expr, parts: dict[Variable, list[Variable]]) -> Expr:
    """``e`` with each split vector's coefficient columns moved to its scalar entries."""
    if not any(v in e.lin for v in parts):
        return e
    out = copy.copy(e)
    out.lin, out.ctx, out.comp = dict(e.lin), dict(e.ctx), dict(e.comp)
    out.summed = set(e.summed)
    for v, us in parts.items():
        if v not in out.lin:
            continue
        M = sp.csr_matrix(out.lin.pop(v))
        if M.shape[0] != e.size:
            M = sp.csr_matrix(np.ones((e.size, 1))) @ M
        k_v = out.ctx.pop(v, None)
        out.comp.pop(v, None)
        used = [j for j in range(len(us)) if M[:, j].count_nonzero()]
        for j in used:
            u = us[j]
            col = np.asarray(M[:, j].toarray()).ravel()
            if np.allclose(col, col[0]):
                k_u = _const_txt(float(col[0]))
            elif len(used) == 1 and k_v is not None:
                k_u = k_v            # the one entry used here: v's row coefficient (-y_i)
            else:
                raise DualizationError(
                    f"the entry {v.name}[{j}] has a different coefficient in different rows "
                    f"next to other entries; write the entries as scalar variables")
            out.lin[u] = sp.csr_matrix(col[:, None])
            out.ctx[u] = k_u
            if v in e.summed:
                out.summed.add(u)
        out.summed.discard(v)
    return out


def split_entry_variables(primal: Problem, steps: list[Step]) -> tuple[Problem, dict]:
    """Replace every vector variable used as ``v[j]`` by scalar variables ``v1, v2, ...``.

    Returns the rewritten primal (``primal`` itself when there is none) and the map
    ``{vector name: [entry names]}`` that :meth:`Derivation.recover` uses to give the vector
    back. Refused (``DualizationError``) when the vector also enters a nonlinear term."""
    vs = [v for v in primal.variables
          if getattr(v, "entry_indexed", False) and not v.scalar and not v.feature]
    if not vs:
        return primal, {}
    names = {v.name for v in primal.variables}
    parts: dict[Variable, list[Variable]] = {}
    for v in vs:
        if any(u is v for t in primal.objective.terms for u in t.variables):
            raise DualizationError(
                f"the vector {v.name!r} is used entry by entry ({v.name}[j]) and in a nonlinear "
                f"term; write its entries as scalar variables (Variable('{v.name}1'), ...)")
        us = [Variable(f"{v.name}{j + 1}") for j in range(v.size)]
        if any(u.name in names for u in us):
            raise DualizationError(f"the entries of {v.name!r} would be named "
                                   f"{[u.name for u in us]}, which clash with other variables")
        parts[v] = us
    obj = _split(primal.objective, parts)
    cons = []
    for c in primal.constraints:
        c2 = copy.copy(c)
        c2.g, c2.lhs, c2.rhs = _split(c.g, parts), _split(c.lhs, parts), _split(c.rhs, parts)
        cons.append(c2)
    variables = []
    for v in primal.variables:
        variables += parts.get(v, [v])
    out = Problem(obj, cons, primal.sense, primal.name, variables=variables)
    listed = ", ".join(f"{v.block_txt} = ({', '.join(u.block_txt for u in parts[v])})"
                       for v in vs)
    steps.append(Step("Entries of a vector used one by one become scalar variables", listed,
                      listed))
    return out, {v.name: [u.name for u in us] for v, us in parts.items()}
