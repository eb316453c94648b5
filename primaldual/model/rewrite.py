"""Rewrites applied before dualising: a logistic or Huber loss of an affine argument,
``c Σ_i l(e_i)``, is written on a variable of its own, ``c Σ_i l(u_i)`` with ``u = e [λ]``, so
that its convex conjugate applies entry by entry (one printed step of the derivation).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import DualizationError
from .derivation import Step, _bcast, _is_diag
from .leaves import Variable
from .problem import Problem
from .terms import Huber, Norm1, NormInf, SumLogistic


def _introduce_loss_variables(primal: Problem, steps: list[Step]) -> Problem:
    """A logistic or Huber loss of an affine argument, ``c Σ_i l(e_i)`` (the textbook
    ``C Σ log(1 + exp(-y_i f_i))``), becomes ``c Σ_i l(u_i)`` with ``u_i = e_i [λ_i]``: its
    conjugate then applies entry by entry. Returns the rewritten primal (``primal`` itself when
    every loss is already on a variable) and records the step."""
    from .expr import Expr as _E
    obj = primal.objective
    names = {v.name for v in primal.variables} | set(primal.multipliers)
    new_terms, cons, lins = [], list(primal.constraints), dict(obj.lin)
    txt, tex = obj.txt, obj.tex
    changed = False
    for t in obj.terms:
        e = getattr(t, "e", None)
        if not isinstance(t, (SumLogistic, Huber, Norm1, NormInf)) or _on_a_variable(t):
            new_terms.append(t)
            continue
        u_name = next(n for n in ("u", "r", "z", "u_1", "u_2", "u_3") if n not in names)
        m_name = next(n for n in ("alpha", "lambda", "lambda_u", "nu_u") if n not in names)
        names |= {u_name, m_name}
        u = Variable(u_name, None if e.scalar else e.size)
        ut, ux = (u.txt, u.tex)
        ttxt, ttex = getattr(t, "txt", None), getattr(t, "tex", None)
        et, ex = e.txt, e.tex
        if ttxt is None or txt.count(ttxt) != 1 or tex.count(ttex) != 1 or et not in ttxt:
            raise DualizationError(
                f"a {type(t).__name__} term of an affine argument could not be rewritten on a "
                "variable; write the loss on a variable r and r = ... as a constraint")
        # the same atom and factor on u: c Σ_i l(u_i)
        nt = object.__new__(type(t))
        nt.__dict__.update(t.__dict__)
        nt.e = u.as_expr()
        nt.variables = [u]
        txt = txt.replace(ttxt, ttxt.replace(f"({et})", f"({ut})").replace(et, ut))
        tex = tex.replace(ttex, ttex.replace(ex, ux))
        nt.txt, nt.tex = ttxt.replace(et, ut), ttex.replace(ex, ux)
        new_terms.append(nt)
        cons.append((u == e).named(m_name))
        changed = True
    if not changed:
        return primal
    new_obj = _E(1, True, lins, obj.const, new_terms, txt, tex, obj.prec, ctx=obj.ctx,
                 summed=obj.summed)
    known = {id(v) for v in primal.variables}
    P = Problem(new_obj, cons, "min", primal.name,
                variables=list(primal.variables) + [v for c in cons for v in c.g.variables
                                                    if id(v) not in known])
    steps.append(Step("Write each loss on a variable of its own (its conjugate then applies "
                      "entry by entry)", str(P), P.to_latex()))
    return P


def _on_a_variable(t) -> bool:
    """The term's argument is one plain variable, entry by entry (a loss: any nonzero scale and
    offset; a norm: the variable itself)."""
    e = t.e
    if len(e.lin) != 1:
        return False
    (v, M), = e.lin.items()
    if v.feature or v.size != e.size:
        return False
    d = _is_diag(_bcast(M, e.size))
    if d is None or np.any(d == 0):
        return False
    if isinstance(t, (Norm1, NormInf)):
        return bool(np.allclose(d, 1.0) and not np.any(e.const != 0))
    return True
