"""The low-rank backend: the eta-reformulation of kernel box QPs (docs/formulations.md 14).

* :mod:`~primaldual.backends.lowrank.solver` -- :func:`lowrank_qp_solve`, validation, the
  eta-problem's own certificate;
* :mod:`~primaldual.backends.lowrank.ipm` -- the interior-point method (O(N M) Newton systems);
* :mod:`~primaldual.backends.lowrank.newton` -- the smoothing Newton continuation (its
  working-set IPM finish is in ``solver``);
* :mod:`~primaldual.backends.lowrank.adapter` -- ``accepts``/``solve`` on Problem objects (what
  the backend registry calls);
* :mod:`~primaldual.backends.lowrank.shortcuts` -- ``lowrank_csvc``, ``eta_problem_cvxpy``,
  ``choose_rank``, ``exact_gap`` for tests and benchmarks.
"""

from .adapter import accepts, solve
from .shortcuts import choose_rank, eta_problem_cvxpy, exact_gap, lowrank_csvc
from .solver import LowRankResult, lowrank_qp_solve

__all__ = [
    "LowRankResult",
    "lowrank_qp_solve",
    "accepts",
    "solve",
    "eta_problem_cvxpy",
    "lowrank_csvc",
    "choose_rank",
    "exact_gap",
]
