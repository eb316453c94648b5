"""The fit engine's steps around a catalogue solve that are not a method's own: what is
done to a solver's point before recovery (an interior point clipped to its box, its equality
restored), the checks after it (a low-rank factor that reproduces its pivots, margins in the
margin's units), and the data helpers of preparation (sorted CSR rows, the densify memory
guard, the labels, the variance of ``gamma="scale"``).

They are functions of the estimator and its data, not methods, so the lean one-vs-one pairs
and the generic fit call the same code.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..certificate import Certificate
from ..solution import Solution
from ..validation import NumericalTroubleError
from ._fit import FitData, Recovered, _scale_hint
from ._params import check_class_weight_keys


def check_lowrank_factor(est: Any, data: FitData, sol: Solution) -> None:
    """The low-rank model predicts through ``v(x)`` (the factor's feature map), which must
    give back the factor's own rows ``V[P]`` on its pivots; when kernel evaluations lose
    their precision (e.g. RBF on features of 1e10) it does not, and no fit is returned."""
    F = sol.info["factor"]
    idx = np.asarray(getattr(F, "basis_index", []), dtype=np.intp)[:64]
    if idx.size == 0 or getattr(data.kernel, "name", "") == "precomputed":
        return
    try:
        if getattr(F, "formed", True):
            V = np.asarray(F.V, dtype=float)
            Vi, big = V[idx], max(float(V.max()), -float(V.min()))
        else:  # a FactoredNystrom (V = C P never formed): its rows C[idx] P
            Vi = np.asarray(F.rows(idx), dtype=float)
            big = float(np.max(np.abs(Vi), initial=0.0))
        with np.errstate(all="ignore"):
            v = np.asarray(F.transform(data.X[idx]), dtype=float)
        ok = v.shape == Vi.shape and bool(np.allclose(
            v, Vi, rtol=1e-6, atol=1e-6 * max(1e-300, big)))
    except (np.linalg.LinAlgError, ValueError, FloatingPointError):
        ok = False
    if not ok:
        raise NumericalTroubleError(
            f"{type(est).__name__}: the low-rank factor's feature map does not reproduce "
            "its own pivot rows (the kernel evaluations lost their precision): numerical "
            "trouble; " + _scale_hint(data), sol)


def _unique_labels(y: np.ndarray) -> np.ndarray:
    """``np.unique(y)``: for integer or boolean labels, sorted once and the first of each run
    kept (the same array, without ``np.unique``'s general machinery)."""
    if type(y) is not np.ndarray or y.ndim != 1 or y.dtype.kind not in "biu" or not y.size:
        return np.unique(y)
    u = np.sort(y)
    keep = np.empty(u.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(u[1:], u[:-1], out=keep[1:])
    return u[keep]


def _var(X: np.ndarray) -> float:
    """``float(X.var())`` of a float64 array, the same operations in the same order as
    numpy's ``_var`` (sum / count, the deviations squared in place, their sum / count), so the
    same bits, without its argument handling (~20 us on small data)."""
    n = X.size
    x = X - X.sum() / n
    np.multiply(x, x, out=x)
    return float(x.sum() / n)


def _audit_margins(est: Any, cert: Certificate, rec: Recovered, tol: float) -> None:
    """The margin constraints ``y_i f_i >= 1 - xi_i`` of a classifier are violated in the
    units of the margin (1), not of the objective: ``audit_certificate`` scales residuals by
    ``max(1, |P|)``, which is ``1e24`` for a hard margin on features of ``1e-12``. An
    ``"optimal"`` fit whose ``primal_feasibility[alpha]`` exceeds ``tol`` becomes
    ``"inaccurate"`` (nu-SVC's margin is ``rho``, not 1: not checked here)."""
    v = cert.kkt.get("primal_feasibility[alpha]")
    if (cert.status != "optimal" or v is None or est._task != "classification"
            or "rho" in rec.extra or float(v) <= tol):
        return
    from ..solution import InaccurateSolutionWarning
    cert.status = "inaccurate"
    warnings.warn(f"the recomputed certificate violates the margins by {float(v):.3e} > tol "
                  f"{tol:g} (in units of the margin): status set to 'inaccurate'",
                  InaccurateSolutionWarning, stacklevel=4)


def _check_densify_memory(X: Any) -> None:
    """Sparse ``X`` is densified for the solvers (``N x d`` float64): refuse before allocating
    when that exceeds the available memory, with both sizes and what to do instead."""
    from ..exceptions import InsufficientMemoryError
    from ..validation import available_memory

    need = 8 * int(X.shape[0]) * int(X.shape[1])
    avail = available_memory()
    if avail is not None and need > avail:
        raise InsufficientMemoryError(
            f"sparse X ({X.shape[0]} x {X.shape[1]}, {X.nnz} stored values) is densified for "
            f"the solver: {need / 2**30:.1f} GiB, but only {avail / 2**30:.1f} GiB of memory are "
            "available; reduce the features first (e.g. sklearn.feature_selection or "
            "sklearn.decomposition.TruncatedSVD), or pass the Gram matrix with "
            "kernel='precomputed'")


def apply_class_weight(Ci: np.ndarray, y_pm: np.ndarray, cw: Any, classes: np.ndarray) -> None:
    """Multiply ``C_i`` in place by ``class_weight[y_i]``: ``"balanced"`` is
    ``n / (2 n_class)``, a dict maps each class label (``classes[0]`` is ``y = -1``,
    ``classes[1]`` is ``+1``) to a finite weight ``>= 0``; every class needs a positive
    weight somewhere."""
    if cw == "balanced":
        n = y_pm.shape[0]
        for s in (-1.0, 1.0):
            cnt = np.sum(y_pm == s)
            if cnt:
                Ci[y_pm == s] *= n / (2.0 * cnt)
    elif isinstance(cw, dict):
        check_class_weight_keys(cw, classes)
        for lab, v in cw.items():
            ok = isinstance(v, (int, float, np.integer, np.floating)) \
                and not isinstance(v, bool)
            if not ok or not (0 <= float(v) < np.inf):
                raise ValueError(f"class_weight must map each class to a finite weight "
                                 f">= 0, got {lab!r}: {v!r}")
        for s, lab in zip((-1.0, 1.0), classes, strict=True):
            if lab in cw:
                Ci[y_pm == s] *= float(cw[lab])
        for s, lab in zip((-1.0, 1.0), classes, strict=True):
            if np.any(y_pm == s) and not np.any(Ci[y_pm == s] > 0):
                raise ValueError(f"class_weight: every sample of class {lab!r} has "
                                 "weight 0; each class needs a positive weight")
    else:
        raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {cw!r}")


#: validated parameters by (class, checks, (name, type, value) of every parameter): fits
#: of the same estimator settings (a benchmark loop, a grid search's refits) skip the checks
_VALIDATED: dict[tuple, tuple[Any, dict[str, Any]]] = {}
_PLAIN = (str, int, float, bool, type(None))


def _params_key(cls: type, table: Any, params: dict[str, Any]) -> tuple | None:
    """The cache key of :meth:`KernelMethod._validate_params`, or ``None`` when a parameter
    is not a plain scalar or string (or is NaN: it never equals itself)."""
    key = []
    for name, v in params.items():
        t = type(v)
        if t not in _PLAIN or (t is float and v != v):
            return None
        key.append((name, t, v))
    return (cls, id(table), tuple(key))
