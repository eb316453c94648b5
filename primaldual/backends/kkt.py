"""Deprecated alias of :mod:`primaldual.backends.linsys` (the KKT linear-system backend moved
there; LOO/GCV/GP variance moved to :mod:`primaldual.tuning`, pruning to
:mod:`primaldual.sparsity`, the Gram block to :mod:`primaldual.kernels.gram`). Importing this
module warns; every name it had keeps working."""

import warnings

from ..exceptions import ConvergenceWarning, SingularKKTError
from ..kernels.gram import gram
from ..sparsity import PrunePath, prune_path
from ..tuning import gcv_score, gp_predictive_variance, loo_residuals
from .linsys import (
    CGResult,
    KernelCholesky,
    factor_kernel,
    fit_direct,
    kkt_residual,
    solve_bordered,
    solve_bordered_cg,
    solve_lowrank,
)

warnings.warn("primaldual.backends.kkt is deprecated; use primaldual.backends.linsys "
              "(and primaldual.tuning / primaldual.sparsity for LOO, GCV and pruning)",
              DeprecationWarning, stacklevel=2)

__all__ = ["SingularKKTError", "ConvergenceWarning", "KernelCholesky", "CGResult", "PrunePath",
           "factor_kernel", "solve_bordered", "fit_direct", "kkt_residual", "solve_bordered_cg",
           "solve_lowrank", "loo_residuals", "gcv_score", "gp_predictive_variance", "prune_path",
           "gram"]
