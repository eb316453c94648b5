"""The linear-system backend (``backend="kkt"``): LS-SVM, proximal SVM, kernel ridge and LapRLS
duals, whose optimality conditions are one bordered KKT linear system.

* :mod:`~primaldual.backends.linsys.direct` -- one Cholesky of ``K + I/C`` (built in place),
  :func:`factor_kernel`, :func:`solve_bordered`, the independent :func:`kkt_residual`;
* :mod:`~primaldual.backends.linsys.iterative` -- matrix-free preconditioned CG
  (:func:`solve_bordered_cg`) and the fixed-size / low-rank route (:func:`solve_lowrank`);
* :mod:`~primaldual.backends.linsys.adapter` -- ``accepts``/``solve`` on Problem objects (what
  the backend registry calls).

(Named ``linsys`` so that it is not confused with :mod:`primaldual.model.kkt`, the KKT
conditions of a Problem.)
"""

from ...exceptions import ConvergenceWarning, SingularKKTError
from .adapter import accepts, solve
from .direct import KernelCholesky, factor_kernel, fit_direct, kkt_residual, solve_bordered
from .iterative import CGResult, solve_bordered_cg, solve_lowrank

__all__ = [
    "SingularKKTError",
    "ConvergenceWarning",
    "KernelCholesky",
    "CGResult",
    "factor_kernel",
    "solve_bordered",
    "fit_direct",
    "kkt_residual",
    "solve_bordered_cg",
    "solve_lowrank",
    "accepts",
    "solve",
]
