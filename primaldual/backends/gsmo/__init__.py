"""Generalised SMO: box QPs with several linear equalities (one-class, nu-SVC with a free
``rho``, SVOR-EXC with its ordering multipliers, ...), from kernel columns.

* :mod:`~primaldual.backends.gsmo.core` -- the compiled loop (pair, single and scalar steps);
* :mod:`~primaldual.backends.gsmo.solver` -- :func:`gsmo_solve` on a
  :class:`~primaldual.model.multi_equality.BoxQPEq` record;
* :mod:`~primaldual.backends.gsmo.adapter` -- ``accepts``/``refusal``/``solve`` on Problems.
"""

from .adapter import accepts, refusal, solve

__all__ = ["accepts", "refusal", "solve"]
