r"""The lean route of a one-vs-one sub-problem of C-SVC and nu-SVC.

A multiclass fit on small data (iris: three sub-problems of 100 rows, each solved by SMO in
about 0.1 ms) spent most of its time in the generic layers around each sub-problem: choosing
the backend, the backend's argument checks, the fit's layers of calls. For the sub-problems
whose route is known before the first one is solved -- a C-SVC (finite ``C``) or nu-SVC on
dense float64 rows, a built-in positive semi-definite kernel, the SMO backend chosen by
``backend="auto"`` or named, the dual form, no weights, no probability, no iteration limit,
``verbose`` off -- :func:`pair_route` states the route once per multiclass fit and
:func:`fit_pair` fits each sub-problem through exactly the steps of the generic fit
(:meth:`~primaldual.methods._base.KernelMethod._fit_binary_in_context`) on that route, in one
function:

* the same FitData (the estimator's ``_prepare``), the same BoxQP record (the shape template
  bound to the pair's dual data, :func:`~._structure.dual_structure`);
* the SMO solve of :func:`primaldual.backends.smo.adapter.solve` on that record (the same
  scaling, start and stopping rule, the multipliers read back in the record's names) without
  its argument checks (the estimator validated ``tol``, ``cache_size`` once);
* the same recovery (``_from_dual``), certificate (the estimator's ``_certify``: the box-QP
  certificate of :func:`~._box_certificate.box_qp_fast_certificate`, ``K beta`` recomputed from the
  kernel at the ``beta``, ``b`` predict uses), audit and fitted attributes (``_set_fitted``),
  written out for this record shape in one function (:func:`_finish`):
  ``K beta`` from the kernel, then one compiled pass (:mod:`._pair_compiled`) for the
  certificate's per-sample terms, its five inner products and the support split. The inner
  products are summed in index order (the generic steps: numpy's BLAS and pairwise sums), so
  the certificate's objectives, gap and equality/sum residuals agree with the generic
  route's to a few ulps, not bit for bit; everything else is the same bits.

Anything else -- a status other than ``"optimal"``, a non-finite point or certificate --
returns ``False`` before the estimator is used, and the caller fits that sub-problem through
the generic route instead (which then says what went wrong).
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, Literal

import numpy as np

from ..backends import auto_passes_smo
from ..backends.smo.adapter import greedy_start as _greedy_start
from ..backends.smo.adapter import structure_check as _structure_check
from ..backends.smo.solver import solve_arrays as _smo_solve
from ..certificate import Certificate
from ..certificate import layout as _layout
from ..engine import audit_fit
from ..engine import finish as engine_finish
from ..kernels import Kernel
from ..kernels.cpus import free_cpus
from ..solution import Solution
from ..validation import NumericalTroubleError
from ._box_certificate import _same_vec
from ._fit import Recovered, _small_block_matvec
from ._structure import _TEMPLATES, dual_structure
from ._structure_template import _Ctx, _shape_ctx, _Template
from ._task import CatalogueTask

__all__ = ["fit_pair", "pair_route", "pair_threads"]

#: the shape of the dual data of this route's sub-problems, by estimator class
_SHAPES: dict[type, tuple] = {}

#: kernels of the lean route: built-in, positive semi-definite (no indefinite-kernel warning)
_KERNELS = ("rbf", "linear", "poly")


def pair_route(base: Any, X: Any, params: dict | None, backend: str | None,
               form: str | None, sample_weight: Any) -> dict | None:
    """The lean route's constants for the sub-problems of ``base`` on ``X`` (once per
    multiclass fit), or ``None`` when a sub-problem must take the generic route."""
    kind = type(base).__dict__.get("_pair_kind")
    if kind is None or params is None or sample_weight is not None:
        return None
    if type(X) is not np.ndarray or X.dtype != np.float64 or X.ndim != 2:
        return None
    kernel = params.get("_kernel")
    if params.get("kernel") not in _KERNELS or not isinstance(kernel, Kernel) \
            or not getattr(kernel, "psd", True) or kernel.spec() is None:
        return None
    if params.get("probability") or params.get("verbose") or params.get("solver") is not None \
            or params.get("class_weight") is not None or params.get("rank") \
            or params.get("rank_tol") or (isinstance(params.get("gamma"), str)
                                          and params["kernel"] != "linear"):
        return None
    max_iter = params.get("max_iter")
    if max_iter is not None and max_iter != -1:
        return None
    if kind == "csvc":
        C = params.get("C")
        if isinstance(C, bool) or not isinstance(C, (int, float)) \
                or not 0.0 < float(C) < math.inf:
            return None
    try:
        how = base._backend_form(params, backend, form)
    except (ValueError, TypeError):
        return None
    if how[0] not in ("auto", "smo") or how[1] != "dual":
        return None
    if how[0] == "auto" and auto_passes_smo(params["kernel"], X.shape[0]):
        return None   # auto would not choose SMO for these sub-problems: the generic fit
    tol = float(params["tol"])
    cache = float(params["cache_size"])
    if not (0.0 < tol < math.inf and 0.0 < cache < math.inf):
        return None
    return {"params": {**params, "_xy_checked": True}, "tol": tol, "cache_size": cache,
            "shrinking": bool(params.get("shrinking", True)), "kernel": kernel}


#: ``n_threads_min_work`` of a solve that must not start column-helper threads
_NO_HELPERS = 1 << 62

#: at most this many threads run one-vs-one pairs side by side (LIBSVM runs them on one)
PAIR_THREADS: int = 2
#: pairs run side by side when their mean ``n_l d`` (rows times features: the cost of one of
#: a pair's kernel columns) reaches this. Measured on this 2-CPU machine (benchmarks/
#: bench_sklearn_small.py): digits' pairs (~360 x 64 = 23,000) fit 1.5x faster in
#: wall time on two threads; iris' (100 x 4) and wine's (~118 x 13 = 1,500) spend most of a
#: pair in Python steps that hold the GIL, and two threads saved nothing or lost
PAIR_THREADS_MIN_WORK: int = 1 << 13


def pair_threads(sizes: list[int], n_features: int) -> int:
    """Threads that run the lean one-vs-one pairs of a multiclass fit side by side: ``1``
    (one after the other, as LIBSVM) for fewer than two pairs or a mean ``n_l d`` (pair
    ``l`` of ``n_l`` rows, ``d`` features) below :data:`PAIR_THREADS_MIN_WORK`; otherwise the
    CPUs other processes leave free (:func:`~primaldual.kernels.cpus.free_cpus`, measured
    over the last quarter second), at most numba's thread count and :data:`PAIR_THREADS`.
    Each pair's SMO solve releases the GIL, so the pairs' solves run truly in parallel; the
    fitted models do not depend on the count."""
    if len(sizes) < 2 or PAIR_THREADS <= 1:
        return 1
    if float(sum(sizes)) * max(1, n_features) < PAIR_THREADS_MIN_WORK * len(sizes):
        return 1
    from ..backends.smo.core import helper_threads

    return max(1, min(PAIR_THREADS, len(sizes), free_cpus(), helper_threads() + 1))


def _bound_record(est: Any, data: Any, route: dict) -> dict | None:
    """:func:`~._structure.dual_structure` of one sub-problem, the shape of its dual data read
    once per estimator class (:data:`_SHAPES`): on this route every sub-problem's dual data
    have the same kinds (labels ``y`` taking both signs, positive finite bounds, scalar
    ``nu``), so the shape template learned for them is bound to each pair's data directly."""
    values = est._dual_data(data)
    shape = _SHAPES.get(type(est))
    tmpl = None if shape is None else _TEMPLATES.get((type(est), shape))
    if type(tmpl) is not _Template:
        _SHAPES[type(est)] = _shape_ctx(values, data.N, data.X, data.kernel)[0]
        return dual_structure(est, data)
    vec = {k: (v if type(v) is np.ndarray and v.dtype == np.float64 else np.asarray(v, float))
           for k, kind in shape if kind in ("pm1", "vector") for v in (values[k],)}
    sca = {k: float(values[k]) for k, kind in shape if kind == "scalar"}
    return {"box_qp": tmpl.bind(_Ctx(data.N, vec, sca, data.X, data.kernel))}


def _smo(box: Any, D: Any, route: dict, sg: Any, helpers: bool = True) -> Solution | None:
    """:func:`primaldual.backends.smo.adapter.solve` on the record ``box`` (kernel operator,
    finite bounds, signs equal to the equality's), or ``None`` when the record is not that.
    ``helpers=False``: the solve starts no column-helper threads (the pairs already run side
    by side on the free CPUs)."""
    t0 = time.perf_counter()
    op = box.Q
    diag = op.diag
    if op.matrix is not None or (
            diag is not None and (diag.any() if type(diag) is np.ndarray else np.any(diag))):
        return None
    # a record bound from its template shares one signs array between Q and the equality
    # (adapter.kernel_multiple: c^2 = 1); its bounds' positivity (adapter._bound_refusal) is
    # tested below with their maximum
    same = box.sign is not None and box.sign is op.sign
    if not same:
        c2, why = _structure_check(box)
        if c2 != 1.0 or why is not None:
            return None
    # fresh float64 vectors handed to the solve (``owned``: the core permutes them)
    sign = np.array(box.sign, dtype=np.float64)
    C = np.asarray(box.C, dtype=np.float64)
    n = sign.shape[0]
    if sign.ndim != 1 or C.shape != (n,) or not n:
        return None
    c_max = float(C.max())
    if not c_max < math.inf or (same and not float(C.min()) > 0.0):
        return None
    s = 1.0 / c_max if c_max < 1.0 else 1.0
    p = np.asarray(box.p, dtype=np.float64)
    if p.shape != (n,) or not math.isfinite(float(p.sum())):
        return None
    if s != 1.0:
        p = s * p
        up = s * C
    else:
        p = p.copy()
        up = C.copy()
    if box.equality == "nu":
        half = s * float(box.nu_total) / 2.0
        a0 = _greedy_start(sign, up, half, half)
    elif box.equality == "one" and box.delta == 0:
        a0 = None
    else:
        return None
    tol = route["tol"]
    kw: dict[str, Any] = dict(equality=box.equality, tol=tol, cache_size=route["cache_size"],
                              shrinking=route["shrinking"], alpha0=a0, verbose=False,
                              record_trace=False, gap_tol=tol, gap_unit=1.0, dense=None)
    if not helpers:
        kw["n_threads_min_work"] = _NO_HELPERS
    if sg is not None and sg.kernel is op.kernel and getattr(op.X, "shape", (None,))[0] == sg.n:
        kw["gram"] = (sg.K, sg.rows)
    r = _smo_solve(op.X, op.kernel, p, up, sign=sign, index=op.index, diag_add=None,
                   owned=True, **kw)
    if r.status != "optimal":
        return None
    a = r.alpha / s if s != 1.0 else r.alpha
    grad = r.grad / s if s != 1.0 else r.grad
    if box.equality == "nu":
        nu_eq = (r.r1 - r.r2) / (2.0 * s)
        nu_sum = (r.r1 + r.r2) / (2.0 * s)
    else:
        nu_eq, nu_sum = -r.b / s, 0.0
    info = {"max_violation": r.max_violation / s, "trace": r.trace,
            "compile_time": r.compile_time, "route": r.route, "b": -nu_eq, "scale": s}
    m = box.multipliers
    if box.variables is None and not box.derived and not box.derived_multipliers \
            and box.sum_sense == ">=" and m.get("lower") and m.get("upper") \
            and box.sign is not None:
        # BoxQP.multipliers_from_gradient for this record (one block, finite bounds: its
        # np.where(isfinite(C), ...) keeps every entry), the same operations (the record's
        # own signs: the solve may have permuted its copy ``sign``)
        rr = grad - nu_eq * box.sign - nu_sum
        mult: dict[str, np.ndarray] = {}
        if "eq" in m:
            mult[m["eq"]] = np.array([nu_eq])
        if "sum" in m:
            mult[m["sum"]] = np.array([nu_sum])
        mult[m["lower"]] = np.maximum(0.0, rr)
        mult[m["upper"]] = np.maximum(0.0, -rr)
        values = {box.variable: a}
    else:
        values = box.split_values(a)
        mult = box.multipliers_from_gradient(a, grad, nu_eq, nu_sum)
    return Solution(D, "optimal", values, mult, backend="smo", solver="smo", n_iter=r.n_iter,
                    info=info, solve_time=time.perf_counter() - t0)


def fit_pair(est: Any, X: np.ndarray, y: np.ndarray, classes: np.ndarray, route: dict,
             sg: Any = None, helpers: bool = True) -> bool:
    """Fit the unfitted copy ``est`` on one sub-problem (rows ``X``, labels ``y`` in ``{0, 1}``,
    both present) through the lean route; ``False`` (``est`` then unusable, the caller fits
    a fresh copy through the generic route) when the sub-problem leaves it. ``helpers=False``:
    its SMO solve starts no column-helper threads (:func:`pair_threads` runs pairs side by
    side); the results do not depend on it."""
    t0 = time.perf_counter()
    d = est.__dict__
    params = route["params"]
    d["n_features_in_"] = X.shape[1]
    d["_sparse"] = d["_sparse_rows"] = False
    d["_gamma"] = params["gamma"]
    d["classes_"] = classes
    # (no matvec_cache context: the pair's few products are memoised by FitData.kmatvec)
    data = est._prepare(X, y, None, {**params, "_classes": classes})
    if sg is not None:
        if sg.kernel is not data.kernel:
            return False
        data.extra["shared_gram"] = sg
    if type(est).__dict__.get("_pair_kind") == "csvc":
        # C-SVC's hard-margin test (CSVC._is_hard, asked by every step): this route's C is
        # one finite positive number (pair_route) and no weights: never the hard margin
        data.extra["_hard"] = False
    st = _bound_record(est, data, route)
    box = None if st is None else st.get("box_qp")
    if box is None:
        return False
    sol = _smo(box, None, route, sg, helpers)
    if sol is None:
        return False
    task = CatalogueTask(est, data, "dual", structure=st)
    done = _finish(est, data, box, sol, t0, task)
    if done is not None:
        return done
    # anything the lean finish does not cover: the engine's stages, on the same solution
    sol.problem = task.D
    return _finish_generic(est, task, sol, t0)


def _finish_generic(est: Any, task: CatalogueTask, sol: Solution, t0: float) -> bool:
    """The engine's stages after the solve (recover, certify, audit, store) on this pair's
    task, when the lean :func:`_finish` declined the sub-problem; ``False`` when recovery or
    certificate are not finite (the caller then fits the pair through the generic route,
    which says what went wrong)."""
    try:
        rec = task.recover(sol)
        engine_finish(task, sol, rec, t0)
    except NumericalTroubleError:
        return False
    est.__dict__["probability_"] = False
    est._drop_session_state()
    return True


#: the residual names of a layout (:func:`primaldual.certificate._layout`), by record kind
_PLANS: dict[tuple, tuple] = {}
#: the layouts' row codes of this route's two record kinds (C-SVC's "one", nu-SVC's "nu")
_CODES_ONE = (-1, -2, 0, 1, 2, 3, 4)
_CODES_NU = (-1, -2, -3, -4, 0, 1, 2, 3, 4, -5)
#: [_pair_compiled.pair_terms] once imported (numba loaded)
_PAIR_TERMS: list = []


def _finish(est: Any, data: Any, box: Any, sol: Solution, t0: float,
            task: CatalogueTask) -> bool | None:
    r"""Recovery, certificate, audit and fitted attributes of a lean pair in one function:
    what :func:`_finish_generic` computes -- ``_from_dual``, the estimator's
    ``_certify`` (:func:`~._box_certificate.box_qp_fast_certificate` then
    :func:`~primaldual.certificate.box_qp_certificate`), :func:`relative_gap`, the audits,
    ``_set_fitted``, ``_training_decision`` -- for this route's one record shape (one block
    ``alpha``, no index map, no diagonal, signs ``y``), the same operations but for the five
    inner products of the certificate, summed in index order in the compiled pass
    (:func:`._pair_compiled.pair_terms`; the objectives, gap and equality/sum residuals then
    agree with the generic steps' to a few ulps), without the generic steps' layers and the
    values only a later teaching view reads (the primal slacks of the recovery, dropped with
    the session state).

    The certificate is the bidual at the predictor (docs/formulations.md; C-SVC:
    ``P = 1/2 beta^T K beta + sum_i C_i max(0, 1 - y_i f_i)``, ``D = 1^T a - 1/2 a^T Q a``;
    nu-SVC: ``P = 1/2 beta^T K beta + sum_i u_i max(0, rho - y_i f_i) - nu rho``,
    ``D = -1/2 a^T Q a``), with ``f = K beta + b``: ``K beta`` recomputed from the kernel at
    the ``beta = a y`` and ``b`` (``-`` the solver's multiplier of ``y^T a = 0``) that
    ``decision_function`` uses, never the solver's gradient. ``None``: a case it does not
    cover (numba not loaded, the record's signs not ``y``...); nothing is written then and the
    caller runs the generic steps. ``False``: the lean route declines (a non-finite point or
    certificate), as :func:`_finish_generic` does. The audit is the engine's
    (:func:`primaldual.engine.audit_fit` on the pair's ``task``), as on every road."""
    got = _lean_point(est, data, box, sol)
    if got is None:
        return None
    a, b, rho, upper = got
    y = data.y
    nu = box.equality == "nu"
    beta = a * y
    Kb = _kernel_times_beta(data, beta)
    if not _PAIR_TERMS:
        from ._pair_compiled import pair_terms
        _PAIR_TERMS.append(pair_terms)
    # the certificate's terms and sums, the support split: one compiled pass
    terms, mxs, ok, sums, sv, free, bnd, n_pos, spectrum = _PAIR_TERMS[0](
        a, y, box.C, box.p, upper, Kb, -b, rho)
    if not ok or n_pos < 0:
        return None
    s = sums.tolist()
    cert = _lean_certificate(box, sol, terms, mxs.tolist(), s, b, rho, a.shape[0])
    if cert is None or cert is False:
        return cert
    est.__dict__["exact_certificate_"] = None
    cert.extra["time [s]"] = time.perf_counter() - t0
    extra = {"rho": rho} if nu else {}
    try:
        audit_fit(task, cert, sol, Recovered(beta, b, {"alpha": a}, {}, {}, {}, extra))
    except NumericalTroubleError:
        return False
    _set_lean_fitted(est, data, sol, cert, a, beta, b, rho if nu else None,
                     (sv, free, bnd, n_pos, spectrum), s[0], Kb)
    return True


def _lean_point(est: Any, data: Any, box: Any, sol: Solution
                ) -> tuple[np.ndarray, float, float, np.ndarray] | None:
    """``(alpha, b, rho, upper)`` of a solve :func:`_finish` covers (rho 0 for C-SVC), or
    ``None``: the record is not this route's one shape (one block ``alpha``, no index map,
    signs ``y``, the sum row ``>=``), numba is not loaded, or a number is not a finite float64
    of the pair's length."""
    op = box.Q
    y = data.y
    nu = box.equality == "nu"
    qs = op.sign
    if op.index is not None or box.variables is not None or box.derived or box.variable != "alpha" \
            or "numba" not in sys.modules or type(qs) is not np.ndarray \
            or type(y) is not np.ndarray or (qs is not y and not _same_vec(qs, y)) \
            or (box.sign is not qs and not _same_vec(box.sign, qs)) \
            or (box.equality != "one" and not nu) or box.sum_sense != ">=":
        return None
    a = sol.values["alpha"]
    m = sol.multipliers
    b = -float(m["minus_b"][0])
    rho = float(m["rho"][0]) if nu else 0.0
    n = a.shape[0]
    upper = est._upper(data)
    if type(a) is not np.ndarray or a.dtype != np.float64 or n < 2 or y.shape != (n,) \
            or y.dtype != np.float64 or not math.isfinite(b) or not math.isfinite(rho):
        return None
    for v in (upper, box.C, box.p):
        if type(v) is not np.ndarray or v.dtype != np.float64 or v.shape != (n,):
            return None
    return a, b, rho, upper


def _kernel_times_beta(data: Any, beta: np.ndarray) -> np.ndarray:
    """``K beta`` from the kernel at the predictor's beta (FitData.kmatvec's operations,
    without its product cache: nothing else asks for it here)."""
    ext = data.extra
    Kb = None
    if "K" not in ext and "shared_gram" not in ext:
        S = beta.nonzero()[0]
        if S.shape[0] < beta.shape[0]:
            Kb = _small_block_matvec(data.kernel, data.X, S, beta[S])
    if Kb is None:
        Kb = data.kmatvec(beta)
        ext.pop("_kmatvec", None)
    return Kb


def _lean_certificate(box: Any, sol: Solution, terms: Any, mxl: list, sums: list, b: float,
                      rho: float, n: int) -> Certificate | Literal[False] | None:
    """:func:`~primaldual.certificate.box_qp_certificate` of the pair from the compiled
    pass's per-sample ``terms``, largest residuals ``mxl`` and ``sums``, its residuals in the
    layout's order (:func:`primaldual.certificate._layout`). ``None``: a case it does not
    cover (a bound not in ``[0, inf)``, another layout); ``False``: a value is not finite."""
    nu = box.equality == "nu"
    dfa, dfu, ca, cu = terms[0], terms[1], terms[2], terms[3]
    wKw, uxi, pa, sa, tot, lo_u, top = sums
    if not nu:
        tot = 0.0
    nu_eq = -b
    T = float(box.nu_total) if nu else 0.0
    delta = 0.0 if nu else float(box.delta)
    D = -(0.5 * wKw + pa)
    P = 0.5 * wKw + uxi - nu_eq * delta - rho * T
    eq = abs(sa - delta)
    sum_viol = max(0.0, T - tot) if nu else 0.0
    lo, hi = mxl[0][0], mxl[1][0]
    worst = max(eq, sum_viol, max(lo, hi))
    gap = P - D
    # objective_unit(upper) = certificate_unit(upper, C) for bounds in [0, inf), max > 0
    # (a NaN bound fails the test: the generic steps)
    if not (lo_u >= 0.0 and 0.0 < top < math.inf):
        return None
    unit = min(1.0, top * top)
    rel = gap / max(unit, abs(P))
    m_names = box.multipliers
    key = (box.equality, box.variable, m_names.get("eq"), m_names.get("sum"),
           m_names.get("upper"), len(m_names))
    names = _PLANS.get(key)
    if names is None:
        rows = _layout(box, (box.variable,), m_names, True)
        codes = tuple(r[1] for r in rows)
        if codes != (_CODES_NU if nu else _CODES_ONE):
            return None
        names = _PLANS[key] = tuple(r[0] for r in rows) + ("dual_feasibility_of_dual",)
    # box_qp_certificate's residuals in its layout's order (primaldual.certificate._layout)
    c_lo, c_hi = mxl[2][0], mxl[3][0]
    pf = np.zeros(n)
    if nu:
        sr, pr, cr = sum_viol, max(0.0, -rho), abs(rho) * abs(tot - T)
        per = dict(zip(names, (np.array([0.0]), np.array([eq]), np.array([sr]),
                               np.array([pr]), pf, dfa, dfu, ca, cu, np.array([cr]),
                               np.array([worst])), strict=True))
        mx = dict(zip(names, (0.0, eq, sr, pr, 0.0, lo, hi, c_lo, c_hi, cr, worst),
                      strict=True))
    else:
        per = dict(zip(names, (np.array([0.0]), np.array([eq]), pf, dfa, dfu, ca, cu,
                               np.array([worst])), strict=True))
        mx = dict(zip(names, (0.0, eq, 0.0, lo, hi, c_lo, c_hi, worst), strict=True))
    if not all(map(math.isfinite, (P, D, rel, *mx.values()))):
        return False
    return Certificate(P, D, gap, rel, mx, per, sol.status)


def _set_lean_fitted(est: Any, data: Any, sol: Solution, cert: Certificate, a: np.ndarray,
                     beta: np.ndarray, b: float, rho: float | None, split: tuple, wKw: float,
                     Kb: np.ndarray) -> None:
    """``_set_fitted``'s attributes of a lean pair, in its order (``rho``: nu-SVC's, ``None``
    for C-SVC; ``split``: the compiled pass's support split and spectrum), and
    ``certificate_.f``."""
    sv, free, bnd, n_pos, spectrum = split
    d = est.__dict__
    d["alpha_"] = a
    d["beta_"] = beta
    d["b_"] = b
    d["support_"] = sv
    d["free_support_"] = free
    d["bounded_support_"] = bnd
    d["support_vectors_"] = data.X[sv]
    scale = 1.0 if rho is None else (1.0 / rho if rho > 0 else 1.0)
    coef = beta[sv]
    d["dual_coef_"] = (coef * scale if scale != 1.0 else coef).reshape(1, -1)
    d["intercept_"] = np.array([b * scale])
    d["kernel_"] = data.kernel
    sol._objective = float("nan")   # (Solution.lean(False) of a sub-problem)
    d["solution_"] = sol
    d["certificate_"] = cert
    d["backend_"] = sol.backend
    d["status_"] = sol.status
    n_sv = len(sv)
    d["n_support_"] = np.array([n_sv - n_pos, n_pos], dtype=np.int32)
    d["n_iter_"] = np.array([int(sol.n_iter or 0)])
    d["margin_"] = 2.0 / np.sqrt(wKw) if wKw > 0 else np.inf
    d["alpha_spectrum_"] = spectrum[::-1]
    if rho is not None:
        d["rho_"] = rho
    d["lowrank_factor_"] = None
    d["eta_"] = None
    extra: dict[str, Any] = cert.extra   # (numbers and the backend's names)
    extra["#SV"] = n_sv
    extra["#SV free"] = len(free)
    extra["#SV bounded"] = len(bnd)
    extra["b"] = b
    extra["backend"] = sol.backend
    info = sol.info
    if "route" in info:
        extra["smo route"] = info["route"]
    cert.f = scale * (Kb + b) if scale != 1.0 else Kb + b
    d["probability_"] = False
    d.pop("X_fit_", None)
    d.pop("_kkt_state", None)
