"""Codes shared by the compiled SMO core and its Python entry, importable without numba
(a fit that takes the dense route never imports numba)."""

import math

# kernel codes understood by the compiled kernel-column routine
_K_LINEAR, _K_RBF, _K_POLY, _K_SIGMOID, _K_PRE = 0, 1, 2, 3, 4
_KERNEL_CODES = {"linear": _K_LINEAR, "rbf": _K_RBF, "poly": _K_POLY, "sigmoid": _K_SIGMOID}
_EQ_CODES = {"one": 0, "nu": 1, "none": 2}

# rows x features from which a kernel column is shared with helper threads (the
# threads exist only for large dense problems: core.HELPER_MIN_WORK)
_PARALLEL_WORK = 1 << 15

# while the violating-pair tolerance is tightened to reach gap_tol, the O(l) duality gap is
# checked every this many iterations (one extra pass over the variables per check)
_GAP_CHECK_EVERY = 16


def midpoint(lb: float, ub: float) -> float:
    """LIBSVM's midpoint of the interval ``[lb, ub]`` that bounded variables leave for the bias
    (or nu-SVC's ``r1``/``r2``), a half-infinite interval read as its finite end and the whole
    line as ``0`` (LIBSVM would return +-inf: e.g. weighted nu-SVC at its largest feasible nu,
    where every alpha of one class sits at its bound).  Plain Python: the dense route calls it
    as is, the compiled core compiles the same function."""
    if ub == math.inf:
        return lb if lb > -math.inf else 0.0
    if lb == -math.inf:
        return ub
    return (ub + lb) / 2.0
