"""Shared argument validators: every bad input raises ``ValueError``/``TypeError`` naming the
argument and the values it allows, before any numpy, CVXPY or numba code sees it.

Conventions
-----------
* ``TypeError``: the value has the wrong kind (a string where a number is needed, an object
  array, ...).
* ``ValueError``: the kind is right but the value is outside the allowed set (``C <= 0``,
  ``nu`` outside ``(0, 1]``, NaN in ``X``, a precomputed kernel that is not PSD, ...).

Each message starts with the argument's name and states what is allowed, e.g.
``"C must be a finite number > 0, got -1.0"``.  docs/reliability.md lists every bad input class,
the error it raises and the test that proves it.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.linalg

from .exceptions import InaccurateSolutionWarning, IndefiniteKernelWarning, NumericalTroubleError

__all__ = [
    "IndefiniteKernelWarning", "NumericalTroubleError", "audit_certificate", "audit_kernel",
    "available_memory", "block_bytes", "check_cache_size", "check_memory", "memory_limits",
    "check_choice", "check_finite_array", "check_int", "check_max_iter", "check_nonnegative",
    "check_nu", "check_nu_feasible", "check_positive", "check_precomputed_kernel",
    "check_rank", "check_sample_weight", "indefinite_eigenvalue", "indefinite_text",
    "plain_xy", "warn_indefinite_kernel",
]


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_positive(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """``value`` as a float ``> 0`` (finite unless ``allow_inf``).

    Raises ``TypeError`` for a non-number (bools included) and ``ValueError`` for ``<= 0``,
    NaN or (without ``allow_inf``) infinity.
    """
    if not _is_real(value):
        what = "a number > 0" + (" (inf allowed)" if allow_inf else " (finite)")
        raise TypeError(f"{name} must be {what}, got {type(value).__name__} {value!r}")
    v = float(value)
    if not v > 0 or (v == math.inf and not allow_inf):  # (NaN fails v > 0)
        what = "a number > 0" + (" (inf allowed)" if allow_inf else " (finite)")
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return v


def check_real(value: Any, name: str) -> float:
    """``value`` as a finite float (``TypeError`` for a non-number, bools included;
    ``ValueError`` for NaN or infinity)."""
    if not _is_real(value):
        raise TypeError(f"{name} must be a finite number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return v


def check_nonnegative(value: Any, name: str) -> float:
    """``value`` as a finite float ``>= 0`` (e.g. ``epsilon``, a jitter, a tolerance of 0)."""
    if not _is_real(value):
        raise TypeError(f"{name} must be a finite number >= 0, got {type(value).__name__} "
                        f"{value!r}")
    v = float(value)
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def check_nu(nu: Any, name: str = "nu") -> float:
    """``nu`` in the half-open interval ``(0, 1]`` (nu-SVC, nu-SVR)."""
    if not _is_real(nu):
        raise TypeError(f"{name} must be a real number in (0, 1], got {type(nu).__name__} {nu!r}")
    v = float(nu)
    if not (0.0 < v <= 1.0):
        raise ValueError(f"{name} must be in (0, 1], got {nu!r}")
    return v


def check_nu_feasible(nu: float, y_pm: np.ndarray, name: str = "nu") -> None:
    """nu-SVC's dual ``y^T a = 0, 1^T a = nu N, 0 <= a_i <= 1`` (in LIBSVM's scaling) is
    feasible iff ``nu <= 2 min(N+, N-) / N``."""
    y_pm = np.asarray(y_pm)
    n = y_pm.shape[0]
    cap = 2.0 * min(int(np.sum(y_pm > 0)), int(np.sum(y_pm < 0))) / max(n, 1)
    if nu > cap + 1e-12:
        raise ValueError(f"{name}={nu} is infeasible for this class balance: it must be "
                         f"<= 2 min(N+, N-)/N = {cap:.6g}")


def check_int(value: Any, name: str, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """An integer (``numbers.Integral``, not bool) within ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, got {v}")
    return v


def check_max_iter(value: Any, name: str = "max_iter") -> int | None:
    """``None`` or ``-1`` (no limit) or a positive integer; returns ``None`` for no limit."""
    if value is None:
        return None
    v = check_int(value, name, minimum=-1)
    if v == 0:
        raise ValueError(f"{name} must be -1 (no limit) or an integer >= 1, got 0")
    return None if v < 0 else v


def check_cache_size(value: Any, name: str = "cache_size") -> float:
    """Kernel cache size in MB: a finite number ``> 0``."""
    return check_positive(value, name)


def check_rank(rank: Any, n_samples: int, name: str = "rank") -> int | None:
    """``None`` or an integer in ``[1, N]``."""
    if rank is None:
        return None
    return check_int(rank, name, minimum=1, maximum=int(n_samples))


def check_choice(value: Any, name: str, allowed: Iterable[Any]) -> Any:
    """``value`` must be one of ``allowed`` (compared with ``==``)."""
    allowed = tuple(allowed)
    try:
        ok = value in allowed
    except TypeError:  # unhashable / odd comparisons
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def check_finite_array(a: Any, name: str, *, ndim: int | None = None,
                       min_samples: int = 1) -> np.ndarray:
    """``a`` as a float64 array: numeric (``TypeError`` otherwise, object/strings included),
    of ``ndim`` dimensions if given, with at least ``min_samples`` rows, all finite."""
    if isinstance(a, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, got {type(a).__name__}")
    arr = np.asarray(a)
    if arr.dtype == object or arr.dtype.kind in "USVOM":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be a numeric array, got dtype {np.asarray(a).dtype} "
                            f"({exc})") from None
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} must be a real numeric array, got complex values")
    arr = np.asarray(arr, dtype=np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.ndim >= 1 and arr.shape[0] < min_samples:
        raise ValueError(f"{name} must have at least {min_samples} sample(s), got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = "NaN" if np.any(np.isnan(arr)) else "infinite values"
        raise ValueError(f"{name} contains {bad}; all entries must be finite")
    return arr


def check_sample_weight(sample_weight: Any, n_samples: int,
                        name: str = "sample_weight") -> np.ndarray | None:
    """``None`` or a finite, non-negative vector of length ``N`` with at least one positive
    entry."""
    if sample_weight is None:
        return None
    sw = check_finite_array(sample_weight, name, ndim=1, min_samples=0)
    if sw.shape != (n_samples,):
        raise ValueError(f"{name} must have shape ({n_samples},), got {sw.shape}")
    if np.any(sw < 0):
        raise ValueError(f"{name} must be >= 0 everywhere")
    if not np.any(sw > 0):
        raise ValueError(f"{name}: all weights are zero; at least one must be > 0")
    return sw


def check_precomputed_kernel(K: Any, name: str = "X", *, n_train: int | None = None,
                             sym_tol: float = 1e-8, psd_tol: float = 1e-8) -> np.ndarray:
    """A precomputed training Gram matrix: finite, square (``N x N``), symmetric and positive
    semi-definite.

    Symmetry: ``max|K - K^T| <= sym_tol * max(1, max|K|)``.  PSD: the smallest eigenvalue of
    ``(K + K^T)/2`` (:func:`primaldual.kernels.mercer_check`) is ``>= -psd_tol * max(1,
    lambda_max)``.  A matrix failing either is not a kernel, so the dual would be non-convex
    and no certificate could be trusted: ``ValueError`` naming ``name``.

    With ``n_train`` the matrix is a test-time cross kernel (``M x n_train``): only the shape
    and finiteness are checked.
    """
    K = check_finite_array(K, name, ndim=2)
    if n_train is not None:
        if K.shape[1] != n_train:
            raise ValueError(f"{name} must have {n_train} columns (one per training sample) "
                             f"for a precomputed kernel, got shape {K.shape}")
        return K
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be the square N x N Gram matrix for a precomputed "
                         f"kernel, got shape {K.shape}")
    scale = max(1.0, float(np.max(np.abs(K))))
    asym = float(np.max(np.abs(K - K.T)))
    if asym > sym_tol * scale:
        raise ValueError(f"{name} must be a symmetric Gram matrix for a precomputed kernel "
                         f"(max |K - K^T| = {asym:.3g})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo = mercer_check(K, tol=psd_tol, warn=False)
    radius = float(np.max(np.sum(np.abs(K), axis=1)))  # >= spectral radius
    if lo < -psd_tol * max(1.0, radius):
        raise ValueError(f"{name} must be positive semi-definite for a precomputed kernel "
                         f"(smallest eigenvalue {lo:.3g}); add a jitter to the diagonal or use "
                         "a Mercer kernel")
    return K


#: What each backend does with an indefinite kernel (documented in docs/reliability.md).
INDEFINITE_POLICY = {
    "cvxpy": "refuses: the quadratic form is not DCP-convex (ValueError at compile time)",
    "smo": "runs LIBSVM's tau-clipped two-variable steps: the result is a stationary point of "
           "a non-convex dual, the certificate's gap is not a bound",
    "kkt": "factors K + I/C; if that is indefinite, a diagonal jitter is added (RuntimeWarning) "
           "or the solve is refused",
    "lowrank": "the factor V V^T is PSD by construction: the negative eigen-directions of K are "
               "dropped, i.e. a PSD approximation of the kernel is fitted",
}


def warn_indefinite_kernel(kernel: Any, backend: str, stacklevel: int = 3,
                           X: Any = None, n_check: int = 200) -> bool:
    """Warn (:class:`IndefiniteKernelWarning`) when ``kernel`` is not positive semi-definite
    and say what ``backend`` does about it; returns whether it warned.

    A kernel declared non-PSD (``kernel.psd is False``, e.g. sigmoid) always warns. A user's
    callable claims PSD without proof, so with training rows ``X`` its Gram matrix on the first
    ``n_check`` rows is checked (:func:`~primaldual.kernels.mercer_check`, an ``O(n_check^3)``
    eigenvalue bound) and an indefinite one warns with its smallest eigenvalue.
    """
    if kernel is None:
        return False
    name = getattr(kernel, "name", type(kernel).__name__)
    detail = ""
    if getattr(kernel, "psd", True):
        if X is None or name != "callable":
            return False
        Xs = np.asarray(X)[:n_check]
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                Ks = np.asarray(kernel(Xs), dtype=float)
                lo = mercer_check(Ks, warn=False)
            hi = float(np.max(np.sum(np.abs(Ks), axis=1)))
        except Exception:  # the fit itself reports a kernel that cannot be evaluated
            return False
        if not (np.isfinite(lo) and lo < -1e-8 * max(hi, 1e-300)):
            return False
        detail = (f" (smallest eigenvalue {lo:.3g} of its Gram matrix on {Xs.shape[0]} "
                  "training rows)")
    warnings.warn(f"kernel {name!r} is not positive semi-definite{detail}; backend {backend!r} "
                  f"{INDEFINITE_POLICY.get(backend, 'has no documented policy')}",
                  IndefiniteKernelWarning, stacklevel=stacklevel)
    return True


def indefinite_eigenvalue(kernel: Any, X: Any, n_check: int = 200) -> float | None:
    """The smallest eigenvalue of ``kernel``'s Gram matrix on up to ``n_check`` training rows
    when it proves the kernel indefinite on this data, else ``None``.

    Only kernels not positive semi-definite for every data set are checked (``kernel.psd`` is
    ``False``: sigmoid, a polynomial with ``coef0 < 0``; or a user's callable, whose PSD claim
    is unproven): RBF, linear and polynomial kernels with ``coef0 >= 0`` cost nothing. The rows
    are spread evenly over ``X``; their Gram matrix is a principal submatrix of the full one,
    so an eigenvalue below ``-1e-8`` times its largest absolute row sum proves the full Gram
    matrix indefinite (the check can miss an indefinite direction outside the sample, never
    invent one). Cost: one ``n_check x n_check`` kernel block and its smallest eigenvalue.
    """
    if kernel is None or X is None:
        return None
    if getattr(kernel, "psd", True) and getattr(kernel, "name", "") != "callable":
        return None
    n = int(X.shape[0]) if hasattr(X, "shape") else len(X)
    if n == 0:
        return None
    idx = np.unique(np.linspace(0, n - 1, min(n, n_check)).astype(np.int64))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            Xs = X[idx] if hasattr(X, "tocsr") else np.asarray(X)[idx]  # sparse rows stay sparse
            Ks = kernel(Xs)
            Ks = np.asarray(Ks.toarray() if hasattr(Ks, "toarray") else Ks, dtype=float)
            if not np.all(np.isfinite(Ks)):
                return None
            lo = mercer_check(Ks, warn=False)
        hi = float(np.max(np.sum(np.abs(Ks), axis=1)))
    except Exception:  # the fit itself reports a kernel that cannot be evaluated
        return None
    return lo if (np.isfinite(lo) and lo < -1e-8 * max(hi, 1e-300)) else None


def audit_kernel(cert: Any, kernel: Any, X: Any, n_check: int = 200) -> str:
    """Never call a fit with an indefinite kernel ``optimal``.

    With an indefinite Gram matrix the primal is unbounded below (along a negative
    eigen-direction ``v``, ``beta^T K beta -> -inf``) and the dual is a non-convex program: the
    solver's point is at best stationary and the certificate's gap bounds nothing. When
    :func:`indefinite_eigenvalue` finds such an eigenvalue on the training rows ``X``, an
    :class:`IndefiniteKernelWarning` names it whatever the status, and an ``"optimal"``
    ``cert`` becomes ``"inaccurate"``. Returns the (possibly downgraded) status.
    """
    status = getattr(cert, "status", "optimal")
    lo = indefinite_eigenvalue(kernel, X, n_check)
    if lo is None:
        return status
    cert.extra["smallest kernel eigenvalue"] = lo
    if status != "optimal":   # not certified already, for its own reason: said all the same
        warnings.warn(indefinite_text(kernel, lo, n_check) + f" (status {status!r})",
                      IndefiniteKernelWarning, stacklevel=3)
        return status
    cert.status = "inaccurate"
    warnings.warn(indefinite_text(kernel, lo, n_check) + ", so the fit is not certified "
                  "optimal: status set to 'inaccurate'", IndefiniteKernelWarning, stacklevel=3)
    return cert.status


def indefinite_text(kernel: Any, lo: float, n_check: int = 200) -> str:
    """What an indefinite kernel means for a fit, in words (the audit's and the engine's)."""
    name = getattr(kernel, "name", type(kernel).__name__)
    return (f"kernel {name!r} is indefinite on the training data (smallest eigenvalue "
            f"{lo:.3g} of its Gram matrix on up to {n_check} rows): the primal is unbounded "
            "below and the dual non-convex")


def scale_hint(K_absmax: float, C_max: float) -> str:
    """One sentence on why a kernel of magnitude ``K_absmax`` with ``C`` up to ``C_max`` is
    hard for a solver, and what to do."""
    return (f"kernel values reach {K_absmax:.3g} and C reaches {C_max:.3g} (dual Hessian entries "
            f"~{K_absmax:.1e}, multipliers up to {C_max:.1e}); standardize the features "
            "(e.g. sklearn.preprocessing.StandardScaler) or lower C")


def separability_ray(Q: np.ndarray, y_pm: np.ndarray, tol: float = 1e-7
                     ) -> tuple[np.ndarray | None, float]:
    """Certificate that a hard-margin dual ``max 1^T a - 1/2 a^T Q a, y^T a = 0, a >= 0`` is
    unbounded (the classes are not separable in feature space).

    Solves ``min d^T Q d`` over ``d >= 0, y^T d = 0, 1^T d = 1`` (the squared distance of the
    two classes' convex hulls, scaled). The test is relative to the problem's scale: ``Q`` is
    taken with the kernel double-centred (the objective is unchanged on ``y^T d = 0``) and
    divided by its largest entry, so data scaled by ``1e-10`` or ``1e10`` get the same answer;
    if the optimum is ``<= tol`` (relative) then ``d`` is a ray: the dual objective along ``t d``
    is ``t - t^2/2 d^T Q d -> +inf``. Returns ``(d, relative d^T Q d)`` or
    ``(None, relative d^T Q d)`` when the classes are separable.
    """
    import cvxpy as cp

    n = y_pm.shape[0]
    Q = 0.5 * (Q + Q.T)
    # d^T Q d = u^T K u with u = Y d, 1^T u = 0: adding a constant to the kernel changes
    # nothing, so Q is measured after double centring K (a nearly constant kernel, e.g. RBF
    # with gamma = 1e-12, keeps its whole scale there)
    K = y_pm[:, None] * Q * y_pm[None, :]
    K = K - K.mean(axis=0, keepdims=True)
    K = K - K.mean(axis=1, keepdims=True)
    Q = y_pm[:, None] * (0.5 * (K + K.T)) * y_pm[None, :]
    qmax = float(np.max(np.abs(Q))) if Q.size else 0.0
    if not (np.isfinite(qmax) and qmax > 0):
        # Q = 0 (all points identical in feature space): every direction is a ray
        d0 = np.where(y_pm > 0, 0.5 / max(1, int(np.sum(y_pm > 0))),
                      0.5 / max(1, int(np.sum(y_pm < 0))))
        return (d0, 0.0) if qmax == 0 else (None, float("nan"))
    Q = Q / qmax
    lam, U = np.linalg.eigh(Q)
    keep = lam > 1e-12 * max(float(lam[-1]), 1e-300)
    F = U[:, keep] * np.sqrt(lam[keep])  # Q ~= F F^T
    d = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(F.T @ d)),
                      [d >= 0, y_pm @ d == 0, cp.sum(d) == 1])
    prob.solve(solver="CLARABEL")
    if d.value is None:
        return None, float("nan")
    dv = np.maximum(np.asarray(d.value, dtype=float), 0.0)
    dv /= dv.sum()
    val = float(dv @ Q @ dv)
    if val <= tol:
        return dv, val
    return None, val


#: Root of the cgroup file system (a test points it at a temporary folder).
_CGROUP_ROOT = "/sys/fs/cgroup"
#: A cgroup "limit" at or above this many bytes means "no limit" (cgroup v1 writes 2^63 - 4096).
_NO_LIMIT = 1 << 60


def _read_int(path: str) -> int | None:
    """The integer in a one-line file (``None``: missing, unreadable or ``max``)."""
    try:
        with open(path) as fh:
            text = fh.read(64).strip()
    except (OSError, ValueError):
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _cgroup_paths() -> list[tuple[str, str]]:
    """``(version, relative path)`` of this process's memory cgroups, from ``/proc/self/cgroup``
    (v2 lines ``0::PATH``, v1 lines ``N:...memory...:PATH``); the root is always tried too
    (inside a container the process's own cgroup is mounted at the root)."""
    out: list[tuple[str, str]] = []
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) != 3:
                    continue
                if parts[0] == "0" and parts[1] == "":
                    out.append(("v2", parts[2].lstrip("/")))
                elif "memory" in parts[1].split(","):
                    out.append(("v1", parts[2].lstrip("/")))
    except OSError:
        pass
    return out + [("v2", ""), ("v1", "")]


def _cgroup_available() -> int | None:
    """Bytes left under the cgroup memory limit: v2 ``memory.max - memory.current``, v1
    ``memory.limit_in_bytes - memory.usage_in_bytes`` (the smallest over the cgroups found);
    ``None`` when no limit is set or readable."""
    import os

    best: int | None = None
    for version, rel in _cgroup_paths():
        if version == "v2":
            folder = os.path.join(_CGROUP_ROOT, rel)
            limit = _read_int(os.path.join(folder, "memory.max"))
            used = _read_int(os.path.join(folder, "memory.current"))
        else:
            folder = os.path.join(_CGROUP_ROOT, "memory", rel)
            limit = _read_int(os.path.join(folder, "memory.limit_in_bytes"))
            used = _read_int(os.path.join(folder, "memory.usage_in_bytes"))
        if limit is None or limit >= _NO_LIMIT:
            continue
        left = max(0, limit - (used or 0))
        best = left if best is None else min(best, left)
    return best


def _rlimit_available() -> int | None:
    """Bytes of address space left under the process limit ``RLIMIT_AS`` (``ulimit -v``):
    the soft limit minus the current virtual size (``/proc/self/statm``); ``None`` when
    unlimited or unreadable."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError, AttributeError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    import os

    used = 0
    try:
        with open("/proc/self/statm") as fh:
            used = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    return max(0, int(soft) - used)


def _system_available() -> int | None:
    """``psutil.virtual_memory().available``, else ``/proc/meminfo``'s ``MemAvailable``."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # psutil missing or unusable on this platform
        pass
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def memory_limits() -> dict[str, int]:
    """Bytes a new allocation may use, per source: ``"system"`` (``MemAvailable``),
    ``"process"`` (``RLIMIT_AS`` soft limit minus the virtual size, i.e. ``ulimit -v``) and
    ``"cgroup"`` (the container's limit minus its usage); a source without a limit is left
    out. :func:`available_memory` is the smallest."""
    out: dict[str, int] = {}
    for name, fn in (("system", _system_available), ("process", _rlimit_available),
                     ("cgroup", _cgroup_available)):
        v = fn()
        if v is not None:
            out[name] = int(v)
    return out


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation: the smallest of the system's
    ``MemAvailable``, the process limit (``RLIMIT_AS``) and the cgroup limit
    (:func:`memory_limits`); ``None`` when none is readable."""
    lim = memory_limits()
    return min(lim.values()) if lim else None


def block_bytes(shapes: Iterable[tuple[int, ...]], itemsize: int = 8) -> int:
    """Total bytes of the arrays of the given shapes (the blocks one route holds at once)."""
    return sum(itemsize * math.prod(int(d) for d in s) for s in shapes)


def check_memory(n_bytes: int, what: str, *, hint: str | None = None) -> None:
    """Raise :class:`~primaldual.exceptions.InsufficientMemoryError` before allocating
    ``n_bytes`` for ``what`` when that exceeds the available memory (:func:`available_memory`:
    system, process ``ulimit -v`` and cgroup limits); the message gives both sizes and names
    the routes that never form a dense ``N x N`` kernel (or ``hint``). Callers pass the total
    of every block the route holds at once (:func:`block_bytes`)."""
    from .exceptions import InsufficientMemoryError

    avail = available_memory()
    if avail is None or n_bytes <= avail:
        return
    if hint is None:
        hint = ("use backend='smo' (kernel rows on demand, cache_size), backend='lowrank' "
                "(rank=...) or the KKT backend's conjugate gradients (method='cg'), which never "
                "store the N x N kernel matrix")
    raise InsufficientMemoryError(
        f"{what} needs {n_bytes / 2**30:.1f} GiB but only {avail / 2**30:.1f} GiB of memory "
        f"are available; {hint}")


def audit_certificate(cert: Any, gap_tol: float = 1e-2, kkt_tol: float = 1e-2) -> str:
    """Never let a point be called optimal that its own certificate contradicts.

    If ``cert.status == "optimal"`` but ``|relative gap| > gap_tol`` or the largest recomputed
    KKT residual exceeds ``kkt_tol * max(1, |primal objective|)``, the status becomes
    ``"inaccurate"`` (on ``cert``) and an :class:`~primaldual.solution.InaccurateSolutionWarning`
    names the offending quantity.  The defaults only catch gross failures (a solver's
    ``optimal`` on a badly scaled problem), not the ``tol``-sized residuals SMO leaves by
    design.  Returns the (possibly downgraded) status.
    """
    if getattr(cert, "status", None) != "optimal":
        return getattr(cert, "status", "optimal")
    scale = max(1.0, abs(float(cert.primal_objective)))
    gap = float(cert.relative_gap)
    kkt = dict(getattr(cert, "kkt", {}) or {})
    bad = []
    if not np.isfinite(gap) or abs(gap) > gap_tol:
        bad.append(f"relative gap {gap:.3e} > {gap_tol:g}")
    if not np.isfinite(float(cert.primal_objective)) or not np.isfinite(
            float(cert.dual_objective)):
        bad.append("objective is not finite")
    # every residual is checked (a NaN anywhere fails; max() would skip a NaN not listed first)
    failed = {k: v for k, v in kkt.items() if not (float(v) <= kkt_tol * scale)}
    if failed:
        worst = next((k for k, v in failed.items() if not np.isfinite(v)),
                     max(failed, key=lambda k: failed[k]))
        bad.append(f"KKT residual {worst} = {kkt[worst]:.3e} > {kkt_tol * scale:.3g}")
    if bad:
        cert.status = "inaccurate"
        warnings.warn("the solver reported 'optimal' but the recomputed certificate disagrees ("
                      + "; ".join(bad) + "): status set to 'inaccurate'",
                      InaccurateSolutionWarning, stacklevel=3)
    return cert.status


def check_kernel_or_none(kernel: Any) -> Any:
    """Validate ``kernel``; a ``Precomputed`` kernel object is normalised to ``None``."""
    if kernel is not None and str(getattr(kernel, "name", "")).lower() == "precomputed":
        return None
    if kernel is not None and not callable(kernel):
        raise TypeError(
            f"kernel must be a primaldual.kernels.Kernel (callable kernel(X, Z)) or None for a "
            f"precomputed Gram matrix, got {type(kernel).__name__}"
        )
    return kernel


def check_data_matrix(X: Any, name: str = "X") -> np.ndarray:
    if hasattr(X, "dask") or hasattr(X, "compute"):
        raise TypeError(f"{name} must be an in-memory array here; dask arrays go to solve_lowrank")
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    if not np.issubdtype(X.dtype, np.number):
        raise TypeError(f"{name} must be numeric, got dtype {X.dtype}")
    X = np.asarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or inf")
    return X


def plain_xy(X: Any, y: Any, classification: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """``(X, y)`` when both are plain numpy arrays scikit-learn's ``validate_data`` and
    ``check_classification_targets`` would accept unchanged (``X`` 2-D real with at least one
    row and column and finite entries, ``y`` 1-D of the same length: integers, booleans or
    strings, or finite floats (integral ones for a classifier)); ``None`` otherwise, and the
    caller runs scikit-learn's checks, which say what is wrong.

    This is only a shortcut for the common case (~0.4 ms of a small fit, as long as the
    solve on iris): ``X`` comes back as float64 (not copied when it is float64 already) and
    ``y`` unchanged, exactly as the full checks return them.
    """
    if type(X) is not np.ndarray or type(y) is not np.ndarray:
        return None
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] < 1 or X.shape[1] < 1 \
            or y.shape[0] != X.shape[0] or X.dtype.kind not in "fiu":
        return None
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(all="ignore"):
        if not np.isfinite(X.sum()):   # NaN/inf, or an overflowing sum: the full check decides
            return None
        kind = y.dtype.kind
        if kind == "f":
            if not np.isfinite(y.sum()):
                return None
            if classification and not np.array_equal(y, np.floor(y)):
                return None            # non-integral floats: scikit-learn's "continuous" error
        elif kind not in ("iub" + ("U" if classification else "")):
            return None
    return X, y


# --------------------------------------------------------------------------- kernel matrices
# (below the kernels: :mod:`primaldual.kernels` re-exports :func:`mercer_check`)


def as_2d(X: Any, name: str = "X") -> np.ndarray:
    """Return ``X`` as a finite 2-D float64 array (1-D input is one feature)."""
    try:
        A = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array-like, got {type(X).__name__}") from exc
    if A.ndim == 1:
        A = A.reshape(-1, 1)
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return A


def mercer_check(K: Any, tol: float = 1e-8, warn: bool = True) -> float:
    """Smallest eigenvalue of the symmetric part of ``K``.

    Warns with :class:`~primaldual.exceptions.IndefiniteKernelWarning` when it is below
    ``-tol * max(1, |largest eigenvalue|)``.
    """
    K = as_2d(K, "K")
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be square, got shape {K.shape}")
    n = K.shape[0]
    if n == 0:
        return 0.0
    S = 0.5 * (K + K.T)
    lo = float(scipy.linalg.eigh(S, eigvals_only=True, subset_by_index=[0, 0])[0])
    hi = float(scipy.linalg.eigh(S, eigvals_only=True, subset_by_index=[n - 1, n - 1])[0])
    scale = max(1.0, abs(hi))
    if warn and lo < -tol * scale:
        warnings.warn(
            f"kernel matrix is not positive semi-definite: smallest eigenvalue {lo:.3e} "
            f"(largest {hi:.3e})",
            IndefiniteKernelWarning,
            stacklevel=2,
        )
    return lo
