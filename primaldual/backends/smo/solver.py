"""SMO's Python entry: :func:`smo_solve` validates the arrays, permutes, calls the compiled
core (:mod:`primaldual.backends.smo.core`) and returns an :class:`SMOResult`.

While the compiled core is not available yet (a fresh install: numba would compile it for about
40 s of CPU), problems with at most ``DENSE_MAX_VAR`` variables are solved by the same
algorithm in numpy on the dense kernel matrix (:mod:`primaldual.backends.smo.dense`); see
:func:`smo_solve`'s ``dense``.

Sign conventions (docs/formulations.md): the predictor is ``f(x) = sum_i beta_i k(x, x_i) + b``;
LIBSVM's ``rho`` is ``-b``.
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...exceptions import ConvergenceWarning
from . import dense as _dense
from .codes import (
    _EQ_CODES,
    _K_RBF,
    _PARALLEL_WORK,
)
from .inputs import (
    _NO_ROWS,
    _as_vec,
    _data_arrays,
)

# the compiled core (and numba) is imported on first use: a fit on the dense route never does


# --------------------------------------------------------------------------------------
# result record
# --------------------------------------------------------------------------------------
@dataclass
class SMOResult:
    """What :func:`smo_solve` returns.

    Attributes
    ----------
    alpha : ndarray (n_var,)
        Optimal variables ``a``.
    grad : ndarray (n_var,)
        Gradient ``Q a + p`` at ``alpha``.
    b : float
        Bias in the convention ``f(x) = sum_i beta_i k(x, x_i) + b`` (LIBSVM's ``rho = -b``).
        ``0.0`` for ``equality="none"``.
    rho_nu : float or None
        nu-variants: ``(r1 + r2) / 2`` (nu-SVC: the margin variable ``rho``; nu-SVR: ``-epsilon``).
    r1, r2 : float or None
        nu-variants: mean gradient over free variables with sign +1 and -1 (LIBSVM's r1, r2).
    objective : float
        ``1/2 a^T Q a + p^T a`` (the minimised dual; the catalogue's dual value is its negative).
    n_iter : int
        SMO iterations (pair updates).
    max_violation : float
        Final maximal violating pair gap ``m(a) - M(a)`` (``equality="none"``: max projected
        gradient).
    status : str
        ``"optimal"`` or ``"max_iter"``.
    trace : dict or None
        With ``record_trace``: ``{"iter", "objective", "violation"}`` lists.
    compile_time : float
        Seconds of numba compilation spent in this call (0 once warm).
    route : str
        ``"numba"`` (the compiled core), ``"dense"`` (the numpy SMO on the dense kernel
        matrix, :mod:`primaldual.backends.smo.dense`) or ``"dense+numba"`` (a dense run that
        did not finish within ``DENSE_MAX_ITER`` iterations, continued by the compiled core).
    beta : ndarray or None
        Wrappers only: signed coefficients on the N data points.
    extras : dict
        Wrappers only: e.g. ``alpha``, ``alpha_star``, ``epsilon`` for SVR.
    """

    alpha: np.ndarray
    grad: np.ndarray
    b: float
    rho_nu: float | None
    r1: float | None
    r2: float | None
    objective: float
    n_iter: int
    max_violation: float
    status: str
    trace: dict | None
    compile_time: float
    route: str = "numba"
    beta: np.ndarray | None = None
    extras: dict = field(default_factory=dict)



# --------------------------------------------------------------------------------------
# Python front end
# --------------------------------------------------------------------------------------
def _core_index_exists() -> bool:
    """Whether numba may have the core cached on disk, checked without importing numba: an
    index file ``core._smo_core-*.nbi`` for this Python where numba's cache locators look
    (``NUMBA_CACHE_DIR`` if set; else the package's ``__pycache__`` or, when that is not
    writable, the user-wide ``~/.cache/numba``).  Only a pre-test: :func:`_numba_ready` then
    asks numba itself."""
    here = os.path.dirname(os.path.abspath(__file__))
    sub = f"{os.path.basename(here)}_{hashlib.sha1(here.encode()).hexdigest()}"
    if os.environ.get("NUMBA_CACHE_DIR"):
        dirs = [os.path.join(os.environ["NUMBA_CACHE_DIR"], sub)]
    else:
        user = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        dirs = [os.path.join(here, "__pycache__"), os.path.join(user, "numba", sub)]
    pattern = f"core._smo_core-*.py{sys.version_info[0]}{sys.version_info[1]}*.nbi"
    return any(glob.glob(os.path.join(d, pattern)) for d in dirs)


_LOADED: list[bool] = []  # [True] once the compiled core is loaded in this process (sticky)


def _core_loaded(smo_core: Any) -> bool:
    """``smo_core.signatures`` is non-empty, asked of numba only until it is (the property
    rebuilds a list on every read, ~0.1 ms per small fit otherwise)."""
    if not _LOADED and smo_core.signatures:
        _LOADED.append(True)
    return bool(_LOADED)


def _numba_ready() -> bool:
    """Whether the compiled SMO core is at hand: loaded in this process, or in numba's on-disk
    cache (its index for ``_smo_core`` lists a compilation of the current source).  ``False``
    on a fresh install, where the first call would compile for about 40 s of CPU."""
    core = sys.modules.get(__package__ + ".core")
    # a module another thread is still importing has no _smo_core yet (joblib/Dask threads
    # fitting at once): then fall through to the import below, which waits for it
    smo_core = getattr(core, "_smo_core", None)
    if smo_core is not None and _core_loaded(smo_core):
        return True
    if not _core_index_exists():
        return False
    from .core import _smo_core

    try:
        return bool(_smo_core.signatures or _smo_core._cache._cache_file._load_index())
    except Exception:  # numba internals changed: say cold (only the route's speed depends on it)
        return False


def _use_dense(n_var: int, dense: bool | None, cache_size: float = 200.0) -> bool:
    """The route of :func:`smo_solve`: ``dense=None`` takes the dense numpy SMO for at most
    ``DENSE_MAX_VAR`` variables whose ``n_var x n_var`` float64 matrix fits in ``cache_size``
    megabytes, while the compiled core is not available; numba otherwise."""
    if dense is None:
        fits = 8.0 * n_var * n_var <= cache_size * 1024 * 1024
        return n_var <= _dense.DENSE_MAX_VAR and fits and not _numba_ready()
    return bool(dense)


def compile_core(block: bool = False) -> float:
    """Compile the numba SMO core now (or load it from numba's on-disk cache); return the
    seconds spent (``0.0`` when it is already loaded).

    Afterwards every SMO solve in this process runs the compiled core, never the dense route:
    call it before timing fits or before a loop of many small fits (a fresh install compiles
    for about 40 s of CPU once; numba caches the result for later processes).  ``block``:
    the block route's compiled passes too (:mod:`primaldual.backends.smo.block`, taken from
    ``BLOCK_MIN_VAR`` variables on), e.g. before timing large fits.
    """
    spent = _warm_up()
    if block:
        t0 = time.perf_counter()
        from . import block as _block
        _block.warm()
        spent += time.perf_counter() - t0
    return spent


#: the compiled core's transposed float32 data ``Xt`` when it has none
_NO_XT = np.zeros((0, 0), dtype=np.float32)

#: an RBF solve on dense rows reads its kernel columns from a transposed float32 copy of the
#: data (``core._kcol``) from this many rows * features on (below, the float64 rows stay in
#: the CPU's cache and the data are used as given)
TRANSPOSED_MIN_WORK = 1 << 18


def _transposed(Xd: np.ndarray, min_work: int | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(Xd, Xt)`` for the compiled core: the rows rounded to float32 (returned as float64)
    and their transpose in float32 (``core._kcol``); ``(Xd, _NO_XT)`` when the data are too
    small to gain from it (fewer than ``min_work`` rows * features, by default
    :data:`TRANSPOSED_MIN_WORK`, read at the call) or rounding them to
    float32 would lose more than its relative precision (entries beyond float32's normal
    range)."""
    if Xd.shape[0] * Xd.shape[1] < (TRANSPOSED_MIN_WORK if min_work is None else min_work):
        return Xd, _NO_XT
    a = np.abs(Xd)
    nz = a[a > 0]
    if not (a.max() < 1e30 and (nz.size == 0 or nz.min() > 1e-30)):
        return Xd, _NO_XT
    x32 = Xd.astype(np.float32)
    return x32.astype(np.float64), np.ascontiguousarray(x32.T)


def _helpers(min_work: int, *data: Any) -> Any:
    """The compiled core's helper-thread arguments: with only ``min_work``,
    ``core.no_helpers(min_work)``; with the core's data arguments ``(kcode, Xd, ..., degree)``,
    the context ``core.column_helpers(..., min_work)`` yielding ``(ctrl, hbuf)``."""
    core = sys.modules.get(__package__ + ".core")
    if core is None:
        from . import core
    if not data:
        return core.no_helpers(min_work)
    return core.column_helpers(*data, min_work)


def _core_function() -> Any:
    """The compiled core ``core._smo_core``, read from the loaded module (no import
    statement per solve; numba is imported on the first call only)."""
    fn = getattr(sys.modules.get(__package__ + ".core"), "_smo_core", None)
    if fn is None:
        from .core import _smo_core as fn
    return fn


def _start_module() -> Any:
    """The compiled start functions (:mod:`._start`) once the compiled core is loaded in this
    process (numba imported, :data:`_LOADED`), else ``None`` (the numpy code is taken)."""
    if not _LOADED:
        fn = getattr(sys.modules.get(__package__ + ".core"), "_smo_core", None)
        if fn is None or not _core_loaded(fn):
            return None
    mod = sys.modules.get(__package__ + "._start")
    if mod is None:
        from . import _start as mod
    return mod


def _warm_up() -> float:
    """Compile (or load from numba's cache) the core on a tiny problem; return seconds spent."""
    _smo_core = _core_function()
    if _core_loaded(_smo_core):
        return 0.0
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((6, 2))
    yw = np.array([1.0, -1.0] * 3)
    for eq in (0, 1):
        a0 = np.full(6, 0.5) if eq == 1 else np.zeros(6)
        _smo_core(_K_RBF, Xw.copy(), _NO_XT, *_NO_ROWS,
                  sys.modules[__package__ + ".core"].row_sq_norms(Xw),
                  np.zeros((0, 0)),
                  np.arange(6), 1.0, 0.0, 3.0, True, np.arange(6), np.arange(6),
                  -np.ones(6), yw.copy(), np.ones(6), np.zeros(6), a0, np.empty(6),
                  np.empty(6), eq, 1e-3, 1000, 2, True, False, 0, *_helpers(_PARALLEL_WORK),
                  1e-3, 1.0)
    return time.perf_counter() - t0


def smo_solve(
    X: Any,
    kernel: Any,
    p: Any,
    C: Any,
    *,
    sign: Any,
    index: Any = None,
    diag_add: Any = None,
    Q: Any = None,
    equality: str = "one",
    tol: float = 1e-3,
    max_iter: int = 10_000_000,
    cache_size: float = 200.0,
    shrinking: bool = True,
    alpha0: Any = None,
    verbose: bool = False,
    record_trace: bool = False,
    n_threads_min_work: int | None = None,
    gap_tol: float | None = None,
    gap_unit: float = 1.0,
    dense: bool | None = None,
    block: bool | None = None,
) -> SMOResult:
    r"""Solve a box-constrained convex QP with at most two linear equalities by SMO.

    Problem::

        min_a  1/2 a^T Q a + p^T a
        s.t.   0 <= a_j <= C_j                                  (C_j may be inf)
               equality="one":  sum_j sign_j a_j = delta        (delta = sign @ alpha0, 0 if none)
               equality="nu":   sum_{sign_j=+1} a_j = delta_+,  sum_{sign_j=-1} a_j = delta_-
                                (both read from alpha0, which is then required)
               equality="none": no equality (no bias; coordinate descent on one variable)

    with ``Q_jk = sign_j sign_k K(X[index_j], X[index_k]) + diag_add_j [j == k]``.

    Parameters
    ----------
    X : array (N, d)
        Data; for ``kernel.name == "precomputed"`` the N x N Gram matrix. Ignored when ``Q``
        is given.
    kernel : Kernel
        A :mod:`primaldual.kernels` kernel (``linear``, ``rbf``, ``poly``, ``sigmoid`` are
        evaluated inside numba, columns on demand; any other kernel is evaluated once as a
        full Gram matrix).
    p : array (n_var,)
        Linear term.
    C : array (n_var,) or float
        Per-variable upper bounds ``C_j > 0`` (LIBSVM's name; ``np.inf`` allowed): C-SVC's
        ``C w_i``, nu-SVC's ``1``, SVR's ``C`` on both halves.
    sign : array (n_var,) of +-1
        Signs ``s_j`` (labels for classifiers; ``[+1]*N + [-1]*N`` for SVR).
    index : array (n_var,) of int, optional
        Data row of each variable (default identity; SVR: ``[0..N-1, 0..N-1]``).
    diag_add : array (n_var,) or float, optional
        Added to the diagonal of ``Q`` (L2-SVC: ``1/C``).
    Q : array (n_var, n_var), optional
        Dense ``Q`` used directly (it includes the signs); ``diag_add`` is added if given.
    equality : {"one", "nu", "none"}
        Which linear equalities hold (see above). For the nu variants the caller passes
        ``alpha0`` with the required per-sign sums, e.g. nu-SVC in LIBSVM scale
        (``C = 1``, ``sum_{y=+1} a = sum_{y=-1} a = nu N / 2``; :func:`smo_nusvc` does
        this and rescales to docs/formulations.md's ``C = 1/N``).
    tol : float
        Stop when ``m(a) - M(a) < tol`` (LIBSVM's ``eps``); ``"none"``: max projected
        gradient ``< tol``.
    max_iter : int
        Iteration limit; reaching it gives ``status="max_iter"`` and a ConvergenceWarning.
    cache_size : float
        Kernel column cache in MB (float32 columns, LRU), counted as LIBSVM counts it: a
        column is stored at the length requested (the active variables' while some are
        shrunk), and the stored entries take at most ``cache_size`` MB (at least two whole
        columns).  With an RBF kernel on dense data whose rows times features reach
        ``TRANSPOSED_MIN_WORK``, the columns are computed from a transposed float32 copy of
        ``X`` (the solve is then that of ``X`` rounded to float32: kernel values change by
        ~1e-7 relative, the size of the float32 cache's own rounding).
    shrinking : bool
        LIBSVM shrinking heuristic.
    alpha0 : array (n_var,), optional
        Feasible warm start (checked; values within 1e-12 relative of a bound are snapped).
    verbose : bool
        Print progress.
    record_trace : bool
        Record ``(iteration, objective, violation)`` (every iteration, thinned to at most
        100,000 records for long runs).
    n_threads_min_work : int, optional
        Kernel columns with ``rows * features`` at least this are shared with helper threads
        (:func:`primaldual.backends.smo.core.column_helpers`; default ``2**15``).  Helper
        threads run only for dense rows with ``rows * features >= 2**18`` (one per further CPU
        of the affinity set), and columns are shared only while that is measured faster;
        results are bit for bit the serial ones.
    gap_tol : float, optional
        Also require the relative duality gap, computed from the gradient in O(n_var)
        (``sum_j a_j max(r_j, 0) + (u_j - a_j) max(-r_j, 0)`` with the reduced gradient
        ``r``, divided by ``max(gap_unit, |primal|)``), to be ``<= gap_tol``: while it is not,
        the violating-pair tolerance is divided by 10 (at most 4 times) and SMO goes on
        without shrinking, checking the gap every 16 iterations: it stops as soon as the gap
        is met and the maximal violation is below ``tol`` (not the tightened tolerance).
        ``None`` (default): LIBSVM's rule alone.
    gap_unit : float
        ``1`` in the problem's own units; ``s**2`` when ``p`` and ``C`` were scaled by
        ``s`` (so the relative gap is that of the unscaled problem).
    dense : bool, optional
        ``True``: the numpy SMO on the dense ``n_var x n_var`` kernel matrix (same working-set
        rule, same stopping rules, no shrinking, nothing compiled); ``False``: the numba core.
        ``None`` (default): dense for at most ``DENSE_MAX_VAR`` (2,500) variables whose
        dense matrix fits in ``cache_size``, while the numba core is not compiled yet (a fresh
        install: compiling it costs ~40 s of CPU), numba otherwise; a dense run still going
        after ``DENSE_MAX_ITER`` (20,000) iterations (e.g. the long divergent run on an
        unbounded hard-margin dual) is continued by the numba core from its current point.
    block : bool, optional
        The block working-set route (:mod:`primaldual.backends.smo.block`: working sets of
        ``BLOCK_SIZE`` variables, their kernel rows as one float32 matrix product, the
        sub-problem solved by SMO on the cached block, the gradient updated by the rows) for
        a one-equality RBF dual on dense rows with finite bounds and no ``diag_add`` (C-SVC):
        ``True`` takes it whenever the problem has that form, ``False`` never; ``None``
        (default) from ``BLOCK_MIN_VAR`` variables on.  Same stopping rules, same result
        record (``route="block"``); a block run that stalls is continued by the pair route
        from its current point (``route="block+numba"``).

    Returns
    -------
    SMOResult
        ``b`` is the bias of ``f(x) = sum_i beta_i k(x, x_i) + b``: ``b = -rho`` with LIBSVM's
        ``rho`` (mean of ``sign_j G_j`` over free variables; midpoint of the KKT interval if
        none). nu: ``r1, r2`` = mean ``G`` over free variables with sign +1 / -1,
        ``b = -(r1 - r2)/2``, ``rho_nu = (r1 + r2)/2``.
    """
    _check_arguments(equality, tol, max_iter, cache_size, sign, C)
    return solve_arrays(X, kernel, p, C, sign=sign, index=index, diag_add=diag_add, Q=Q,
                  equality=equality, tol=tol, max_iter=max_iter, cache_size=cache_size,
                  shrinking=shrinking, alpha0=alpha0, verbose=verbose,
                  record_trace=record_trace, n_threads_min_work=n_threads_min_work,
                  gap_tol=gap_tol, gap_unit=gap_unit, dense=dense, block=block)


def _check_arguments(equality: str, tol: Any, max_iter: Any, cache_size: Any, sign: Any,
                     C: Any) -> None:
    """The checks of :func:`smo_solve`'s own arguments (the estimators check theirs once, in
    ``methods/_params.py``, and reach the solver through the adapter, which calls
    :func:`solve_arrays` directly)."""
    if equality not in _EQ_CODES:
        raise ValueError(f"equality must be one of {sorted(_EQ_CODES)}, got {equality!r}")
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    if not cache_size > 0:
        raise ValueError(f"cache_size must be positive, got {cache_size!r}")
    s = np.asarray(sign, dtype=np.float64).ravel()
    if s.shape[0] == 0:
        raise ValueError("sign must be non-empty")
    if not np.all(np.abs(s) == 1.0):
        raise ValueError("sign must contain only -1 and +1")
    if np.any(~(np.asarray(C, dtype=np.float64) > 0)):
        raise ValueError("C must be > 0 (inf allowed)")


def _start_point(alpha0: Any, eq_mode: int, n_var: int, C: np.ndarray) -> np.ndarray:
    """The starting point of :func:`solve_arrays`: zero, or ``alpha0`` checked against the box
    (to ``1e-12`` relative) and snapped onto the bounds it is that close to."""
    if alpha0 is None:
        if eq_mode == 1:
            raise ValueError("equality='nu' needs a feasible alpha0 (it fixes the per-sign sums)")
        alpha = np.zeros(n_var)
    else:
        alpha = _as_vec(alpha0, n_var, "alpha0")
        start = _start_module()
        if start is None:
            fin = np.isfinite(C)
            eps = 1e-12 * np.where(fin, C, 1.0)   # bounds are met to 1e-12 relative
            if (alpha < -eps).any() or (alpha > C + eps).any():
                raise ValueError("alpha0 violates 0 <= alpha0 <= C")
            alpha[alpha <= eps] = 0.0             # (alpha >= -eps here: |alpha| <= eps)
            near = fin & (alpha >= C - eps)        # (alpha <= C + eps here: |alpha - C| <= eps)
            alpha[near] = C[near]
        elif not start.snap_start(alpha, C):     # the same, one compiled pass
            raise ValueError("alpha0 violates 0 <= alpha0 <= C")
    return alpha


def solve_arrays(X: Any, kernel: Any, p: Any, C: Any, *, sign: Any, index: Any = None,
           diag_add: Any = None, Q: Any = None, equality: str = "one", tol: float = 1e-3,
           max_iter: int = 10_000_000, cache_size: float = 200.0, shrinking: bool = True,
           alpha0: Any = None, verbose: bool = False, record_trace: bool = False,
           n_threads_min_work: int | None = None, gap_tol: float | None = None,
           gap_unit: float = 1.0, dense: bool | None = None,
           gram: tuple[np.ndarray, np.ndarray] | None = None, owned: bool = False,
           block: bool | None = None) -> SMOResult:
    """:func:`smo_solve` on arguments already checked (by :func:`_check_arguments`, or by the
    estimator's parameter table and the structure the adapter read).

    ``gram = (K, rows)``: the kernel matrix of ``X`` is ``K[rows][:, rows]`` (``X[i]`` is row
    ``rows[i]`` of the data ``K`` was computed on; a multiclass fit's shared Gram matrix,
    :class:`~primaldual.kernels.SharedGram`): kernel columns are read from ``K`` (the
    compiled core's precomputed form with data positions ``rows``) instead of evaluated.

    ``owned=True`` (the lean one-vs-one route, :mod:`primaldual.methods._pair`):
    ``sign``, ``p``, ``C`` are fresh float64 vectors of one length that the caller checked
    and hands over (the core may permute them), ``X`` dense float64 rows: used as they are,
    without the copies and checks."""
    eq_mode = _EQ_CODES[equality]
    if owned:
        n_var = sign.shape[0]
    else:
        sign = np.asarray(sign, dtype=np.float64).ravel().copy()
        n_var = sign.shape[0]
        p = _as_vec(p, n_var, "p")
        C = _as_vec(C, n_var, "C")
    diag = np.zeros(n_var) if diag_add is None else _as_vec(diag_add, n_var, "diag_add")

    X, kcode, Kpre, Xd, rows, dorig, gamma, coef0, degree, n_data, idx = _data_arrays(
        X, kernel, Q, gram, owned, index, sign, n_var)
    identity = n_var == n_data and (index is None or bool(np.array_equal(idx, np.arange(n_var))))
    dpos = np.arange(n_var, dtype=np.int64) if index is None else idx.astype(np.int64)
    if dorig is None:
        dorig = np.arange(n_data, dtype=np.int64)
    vorig = np.arange(n_var, dtype=np.int64)

    alpha = _start_point(alpha0, eq_mode, n_var, C)

    # ---- cache ----
    # float32 kernel entries, counted as LIBSVM counts them: columns are stored at the length
    # requested (shorter while variables are shrunk); at least two whole columns
    cache_floats = max(2 * n_data, int(cache_size * 1024 * 1024 // 4))

    trace_cap = 100_000 if record_trace else 0
    par_min = _PARALLEL_WORK if n_threads_min_work is None else int(n_threads_min_work)

    G = np.empty(n_var)
    route = "dense" if _use_dense(n_var, dense, cache_size) else "numba"
    compile_time = 0.0
    done = 0  # iterations of the dense route
    if route == "numba" and block is not False and _block_form(
            eq_mode, kcode, rows, gram, Q, identity, diag, C, trace_cap, Xd) and (
            block or (n_var >= _block_min_var(eq_mode, identity)
                      and (identity or (gap_tol or 0.0) >= SHARED_BLOCK_MIN_GAP))):
        out = _block_route(Xd, gamma, p, sign, C, alpha, G, tol, max_iter, gap_tol, gap_unit,
                           shrinking, cache_floats, verbose, None if identity else dpos,
                           eq_mode == 1)
        if out[1] != 2:
            return _result(out, alpha, G, vorig, eq_mode, max_iter, tol, record_trace, 0.0,
                           "block")
        route, done, first = "block+numba", int(out[0]), None
    if route == "dense":
        if gram is not None and Q is None:
            Kd = Kpre[np.ix_(dorig, dorig)]
        elif rows is not None:
            Kd = np.asarray(kernel(X), dtype=np.float64)  # (the kernels take sparse rows)
        else:
            Kd = np.asarray(kernel(Xd), dtype=np.float64) if Xd.shape[0] else Kpre
        if not identity:
            Kd = Kd[np.ix_(dpos, dpos)]
        # chosen automatically, the dense route hands a long run (ill-conditioned problems
        # can take millions of iterations) over to the compiled core, from its current point
        budget = int(max_iter) if dense else min(int(max_iter), _dense.DENSE_MAX_ITER)
        out = _dense.dense_smo(Kd, p, sign, C, diag, alpha, G, eq_mode, float(tol), budget,
                               bool(verbose), trace_cap, float(gap_tol or 0.0), float(gap_unit))
        if out[1] == 1 and budget < int(max_iter):
            route, done, first = "dense+numba", int(out[0]), out
    if route != "dense":
        _smo_core = _core_function()
        G_bar = np.empty(n_var)
        Xt = _NO_XT
        if rows is not None:
            Xptr, Xind, Xval, Xs, xsq = rows
        else:
            Xptr, Xind, Xval, Xs = _NO_ROWS
            if kcode == _K_RBF and Xd.shape[0]:  # columns from the transposed rows
                Xd, Xt = _transposed(Xd)
        compile_time = _warm_up()
        core = sys.modules[__package__ + ".core"]
        if rows is None:
            # (compiled, without the GIL: 3.7 us instead of einsum's 9 us on a
            # digits pair of 360 x 64)
            xsq = core.row_sq_norms(Xd) if Xd.shape[0] else np.zeros(0)
        if not core.helpers_wanted(kcode, Xd, Xptr, par_min):
            # no helper thread would start (core.column_helpers' own test): its arguments
            # without the context (~4 us per small solve)
            helpers = nullcontext(core.no_helpers(par_min))
        else:
            helpers = _helpers(par_min, kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig,
                               gamma, coef0, degree)
        with helpers as (ctrl, hbuf):  # threads for long columns
            out = _smo_core(kcode, Xd, Xt, Xptr, Xind, Xval, Xs, xsq, Kpre, dorig, float(gamma),
                            float(coef0), float(degree), identity, dpos, vorig, p, sign, C, diag,
                            alpha, G, G_bar, eq_mode,
                            float(tol), int(max_iter) - done, cache_floats, bool(shrinking),
                            bool(verbose), trace_cap, ctrl, hbuf, float(gap_tol or 0.0),
                            float(gap_unit))
        if done and first is not None:
            out = (out[0] + done, *out[1:7], np.concatenate([first[7], out[7] + done]),
                   np.concatenate([first[8], out[8]]), np.concatenate([first[9], out[9]]))
        elif done:
            out = (out[0] + done, *out[1:])
    return _result(out, alpha, G, vorig, eq_mode, max_iter, tol, record_trace, compile_time,
                   route)


def _block_min_var(eq_mode: int = 0, identity: bool = True) -> float:
    """Variables from which the block route is taken by default:
    :data:`primaldual.backends.smo.block.BLOCK_MIN_VAR` (one variable per data row),
    ``BLOCK_MIN_VAR_SVR`` (one equality, variables sharing data rows: eps-SVR) or
    ``BLOCK_MIN_VAR_NU`` (two equalities on shared rows: nu-SVR); never for the nu form on
    one variable per row (nu-SVC: not measured).  Read without importing the block module
    (numba) for the small problems that never take it."""
    mod = sys.modules.get(__package__ + ".block")
    if eq_mode == 1:
        if identity:
            return np.inf
        return float(getattr(mod, "BLOCK_MIN_VAR_NU", BLOCK_MIN_VAR_NU))
    if not identity:
        return float(getattr(mod, "BLOCK_MIN_VAR_SVR", BLOCK_MIN_VAR_SVR))
    return float(getattr(mod, "BLOCK_MIN_VAR", BLOCK_MIN_VAR))


#: variables from which the block route is taken by default (the block module's own
#: ``BLOCK_MIN_VAR``, ``BLOCK_MIN_VAR_SVR``, ``BLOCK_MIN_VAR_NU`` once it is imported, e.g.
#: set by a test; the same values)
BLOCK_MIN_VAR = 30_000
BLOCK_MIN_VAR_SVR = 10_000
#: the smallest relative-gap target for which variables on shared rows (SVR) take the block
#: route by default: its float32 kernel rows agree with the float64 kernel the certificate
#: recomputes to ~1e-7 relative, and at a target of 1e-6 the recomputed gap measured 1.4e-6
#: (above the audit's cap) where the pair route's was 8.4e-7; from 1e-5 on both certify
SHARED_BLOCK_MIN_GAP = 1e-5
BLOCK_MIN_VAR_NU = 10_000


def _block_form(eq_mode: int, kcode: int, rows: Any, gram: Any, Q: Any, identity: bool,
                diag: np.ndarray, C: np.ndarray, trace_cap: int, Xd: np.ndarray) -> bool:
    """Whether the problem has the block route's form: one equality or two (nu), an RBF
    kernel on dense rows (no Gram matrix; variables on data rows through an index, as SVR's),
    no diagonal term, finite bounds, no trace asked for."""
    return (eq_mode in (0, 1) and kcode == _K_RBF and rows is None and gram is None
            and Q is None and trace_cap == 0 and Xd.shape[0] > 0 and not np.any(diag)
            and bool(np.all(np.isfinite(C))))


def _block_route(Xd: np.ndarray, gamma: float, p: np.ndarray, sign: np.ndarray, C: np.ndarray,
                 alpha: np.ndarray, G: np.ndarray, tol: float, max_iter: int,
                 gap_tol: float | None, gap_unit: float, shrinking: bool, cache_floats: int,
                 verbose: bool, dpos: np.ndarray | None = None, nu: bool = False) -> tuple:
    """The block route's solve (:func:`primaldual.backends.smo.block.block_smo`) as the core's
    result tuple (``alpha`` and ``G`` in place; no trace)."""
    _warm_up()
    from . import block as _block
    core = sys.modules[__package__ + ".core"]
    Xr, Xt = _transposed(Xd, 0)
    if Xt.shape[0] == 0:   # beyond float32's range: the float32 rows of the columns as they are
        Xr, Xt = Xd, np.ascontiguousarray(Xd.astype(np.float32).T)
    xsq = core.row_sq_norms(Xr)
    it, code, gap, obj, b, stats = _block.block_smo(
        Xt, xsq, float(gamma), p, sign, C, alpha, G, float(tol), int(max_iter),
        gap_tol=float(gap_tol or 0.0), gap_unit=float(gap_unit), shrinking=bool(shrinking),
        cache_floats=int(cache_floats), verbose=bool(verbose), dpos=dpos, nu=nu)
    empty = np.zeros(0)
    r1, r2 = (stats["r1"], stats["r2"]) if nu else (0.0, 0.0)
    return (it, code, gap, obj, b, r1, r2, np.zeros(0, dtype=np.int64), empty, empty)


def _result(out: tuple, alpha: np.ndarray, G: np.ndarray, vorig: np.ndarray, eq_mode: int,
            max_iter: int, tol: float, record_trace: bool, compile_time: float,
            route: str) -> SMOResult:
    """The :class:`SMOResult` of the core's tuple ``out`` (permutation undone; a warning when
    ``max_iter`` was reached)."""
    it, stcode, gap, obj, b, r1, r2, tri, tro, trv = out

    # undo the permutation
    a_out = np.empty(alpha.shape[0])
    g_out = np.empty(alpha.shape[0])
    a_out[vorig] = alpha
    g_out[vorig] = G
    status = "optimal" if stcode == 0 else "max_iter"
    if stcode == 1:
        warnings.warn(
            f"Solver terminated early (max_iter={max_iter}).  Consider pre-processing your data "
            f"with StandardScaler or MinMaxScaler. (SMO reached max_iter={max_iter} with "
            f"maximal violation {gap:.3e} > tol={tol:g})",
            ConvergenceWarning, stacklevel=3)
    trace = None
    if record_trace:
        trace = {"iter": tri.tolist(), "objective": tro.tolist(), "violation": trv.tolist()}
    nu = eq_mode == 1
    return SMOResult(
        alpha=a_out, grad=g_out, b=float(b),
        rho_nu=float((r1 + r2) / 2) if nu else None,
        r1=float(r1) if nu else None, r2=float(r2) if nu else None,
        objective=float(obj), n_iter=int(it), max_violation=float(gap), status=status,
        trace=trace, compile_time=float(compile_time), route=route)
