"""The SMO backend: LIBSVM's sequential minimal optimisation for box-constrained duals.

* :mod:`~primaldual.backends.smo.core` -- the compiled (numba) loop; below it, compiled too,
  :mod:`~primaldual.backends.smo.columns` (kernel columns), :mod:`~primaldual.backends.smo.threads`
  (columns shared with helper threads), :mod:`~primaldual.backends.smo.cache` (the column
  cache), :mod:`~primaldual.backends.smo.select` (working-set selection, bias, gap) and
  :mod:`~primaldual.backends.smo.shrink` (shrinking, gradient reconstruction);
* :mod:`~primaldual.backends.smo.block` -- the block working-set route for large RBF C-SVC
  duals (working sets of hundreds of variables, kernel rows as matrix products), its compiled
  passes in :mod:`~primaldual.backends.smo.blockops`, its inner SMO on the working set in
  :mod:`~primaldual.backends.smo.blockinner`;
* :mod:`~primaldual.backends.smo.solver` -- :func:`smo_solve`, the array-level Python entry;
* :mod:`~primaldual.backends.smo.dense` -- the same algorithm in numpy on a dense kernel matrix,
  for small problems while the compiled core is not compiled yet (a fresh install);
* :mod:`~primaldual.backends.smo.codes` -- kernel and equality codes (no numba import);
* :mod:`~primaldual.backends.smo.adapter` -- ``accepts``/``solve`` on Problem objects (what the
  backend registry calls);
* :mod:`~primaldual.backends.smo.shortcuts` -- ``smo_csvc`` ... straight on ``(X, y, kernel)``
  for tests and benchmarks.
"""

from ...exceptions import ConvergenceWarning
from .adapter import accepts, kernel_multiple, refusal, solve
from .shortcuts import smo_csvc, smo_epsilon_svr, smo_hard_margin, smo_l2svc, smo_nusvc, smo_nusvr
from .solver import SMOResult, compile_core, smo_solve

__all__ = [
    "SMOResult",
    "smo_solve",
    "compile_core",
    "accepts",
    "refusal",
    "kernel_multiple",
    "solve",
    "smo_csvc",
    "smo_l2svc",
    "smo_hard_margin",
    "smo_epsilon_svr",
    "smo_nusvc",
    "smo_nusvr",
    "ConvergenceWarning",
]
