"""Codes shared by the compiled SMO core and its Python entry, importable without numba
(a fit that takes the dense route never imports numba)."""

# kernel codes understood by the compiled kernel-column routine
_K_LINEAR, _K_RBF, _K_POLY, _K_SIGMOID, _K_PRE = 0, 1, 2, 3, 4
_KERNEL_CODES = {"linear": _K_LINEAR, "rbf": _K_RBF, "poly": _K_POLY, "sigmoid": _K_SIGMOID}
_EQ_CODES = {"one": 0, "nu": 1, "none": 2}

# rows x features above which a kernel column is computed with prange
_PARALLEL_WORK = 1 << 30  # effectively off by default (see docs/benchmarks/smo.md)

# while the violating-pair tolerance is tightened to reach gap_tol, the O(l) duality gap is
# checked every this many iterations (one extra pass over the variables per check)
_GAP_CHECK_EVERY = 16
