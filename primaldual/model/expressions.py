"""The modelling language's expressions, in four files: :mod:`~primaldual.model.leaves`
(variables, data, ``phi``, Gram operators), :mod:`~primaldual.model.expr` (:class:`Expr` and its
algebra), :mod:`~primaldual.model.terms` (norms, losses, quadratic forms) and
:mod:`~primaldual.model.atoms` (the builders: ``norm2``, ``sum_squares``, ``quad_form``, ``huber``,
...). This module re-exports their public names under their old home.
"""

from .atoms import *  # noqa: F403
from .expr import *  # noqa: F403
from .leaves import *  # noqa: F403
from .terms import *  # noqa: F403
