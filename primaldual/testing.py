"""Assertions for users' own test suites (usable from pytest; plain ``AssertionError`` messages
that state the numbers).

* :func:`assert_strong_duality` — primal and dual optimal values agree (``p* = d*``).
* :func:`assert_kkt` — a solution satisfies its problem's KKT conditions.
* :func:`assert_same_problem` — two duals (e.g. a hand-written and a :func:`dualize`-derived one)
  have the same optimal value and map to the same primal solution.
* :func:`assert_forms_agree` — an estimator fitted through its primal and through its dual
  gives the same certified optimum and the same predictor.
* :func:`oracle_gap` / :func:`assert_oracle_optimal` — an independent oracle: the primal of
  the predictor ``predict`` uses (optimal slacks), the dual of the multipliers, the kernel
  rebuilt in numpy; "optimal" must mean a relative gap ``<= min(tol, 1e-2)``.
* :func:`assert_honest_fit` — a fit either raises one of primaldual's own errors or returns a
  model whose status, certificate and predictions agree (docs/reliability.md, fuzzing).
* :func:`assert_derivation` — a hand-derived dual, Lagrangian or KKT system agrees with the
  mechanical derivation; the failure message names the first line that differs, with a
  witness (:mod:`primaldual.derivation_check`).

Problems may be given directly, as a :class:`~primaldual.model.dualize.Derivation` (its ``.dual``
is used, and its ``.recover`` as the solution map), or as a callable that builds the problem from
``data`` (``data`` a tuple of arguments, or a list of such tuples to check several data sets).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._oracle import OracleReport, assert_oracle_optimal, oracle_gap, oracle_tolerance
from .derivation_check import assert_derivation
from .model.problem import Problem

__all__ = ["FUZZ_BACKENDS", "ORACLE_FUZZ_EXTRA", "ORACLE_FUZZ_VARIANTS", "OracleReport",
           "assert_derivation",
           "assert_forms_agree", "assert_honest_fit", "assert_kkt", "assert_oracle_optimal",
           "assert_same_problem", "assert_strong_duality", "oracle_case", "oracle_gap",
           "oracle_tolerance", "scaled_case"]


def _datasets(data: Any) -> list:
    if data is None:
        return [None]
    if isinstance(data, list):
        return data
    return [data]


def _build(obj: Any, data: Any) -> tuple[Problem, Callable | None]:
    """``(problem, recover)`` from a Problem, Derivation or builder callable."""
    if data is not None and callable(obj) and not isinstance(obj, Problem) \
            and not hasattr(obj, "dual"):
        obj = obj(*data) if isinstance(data, tuple) else obj(data)
    if hasattr(obj, "dual") and hasattr(obj, "recover") and not isinstance(obj, Problem):
        return obj.dual, obj.recover
    if isinstance(obj, Problem):
        return obj, None
    raise TypeError(f"expected a Problem, a Derivation or a callable building one from data, "
                    f"got {type(obj).__name__}")


def _solve(problem: Problem, solve_options: dict | None):
    sol = problem.solve(**(solve_options or {"backend": "cvxpy"}))
    if sol.status not in ("optimal", "inaccurate"):
        raise AssertionError(f"{problem.name}: solver status {sol.status!r}, no optimal value")
    return sol


def _solve_both(A: Problem, B: Problem, options: dict | None, tol: float, head: str,
                labels: tuple[str, str]) -> tuple[Any, Any]:
    """Solve ``A`` and ``B``; ``AssertionError`` (``head``, both values, the gap) unless their
    optimal values agree to ``tol`` relative."""
    sa, sb = _solve(A, options), _solve(B, options)
    va, vb = sa.objective_value, sb.objective_value
    r = _rel(va, vb)
    if not r <= tol:
        raise AssertionError(f"{head}: {labels[0]} {va:.12g}, {labels[1]} {vb:.12g}, gap "
                             f"{va - vb:.3e}, relative difference {r:.3e} > tol {tol:.1e}")
    return sa, sb


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(a), abs(b))


def assert_strong_duality(primal: Any, dual: Any, data: Any = None, tol: float = 1e-6, *,
                          solve_options: dict | None = None) -> list[tuple[float, float]]:
    """Assert ``|p* - d*| <= tol * max(1, |p*|, |d*|)`` for the optimal values.

    Parameters
    ----------
    primal, dual : Problem, Derivation or callable
        ``primal`` must be a minimisation and ``dual`` a maximisation (weak duality
        ``d* <= p*``); a callable is called with ``data``.
    data : tuple, list of tuples or None
    tol : float
        Relative tolerance.
    solve_options : dict, optional
        Passed to ``Problem.solve`` (default ``backend="cvxpy"``).

    Returns
    -------
    list of (p*, d*) per data set.
    """
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    out = []
    for k, ds in enumerate(_datasets(data)):
        P, _ = _build(primal, ds) if not hasattr(primal, "dual") else (primal.primal, None)
        D, _ = _build(dual, ds)
        head = f"strong duality fails on data set {k}"
        sp, sd = _solve_both(P, D, solve_options, tol, head, ("primal value", "dual value"))
        out.append((sp.objective_value, sd.objective_value))
    return out


def assert_kkt(solution: Any, tol: float = 1e-6) -> dict[str, float]:
    """Assert every KKT residual of ``solution.problem`` at the solution is ``<= tol``.

    Residuals are recomputed from the returned point (``Solution.kkt_residuals``): stationarity,
    primal and dual feasibility, complementary slackness. Returns the residual dictionary.
    """
    if not hasattr(solution, "kkt_residuals"):
        raise TypeError(f"solution must be a Solution, got {type(solution).__name__}")
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    res = solution.kkt_residuals()
    bad = {k: v for k, v in res.items() if not v <= tol}
    if bad:
        lines = ", ".join(f"{k} = {v:.3e}" for k, v in sorted(bad.items(), key=lambda t: -t[1]))
        raise AssertionError(f"KKT conditions of {solution.problem.name!r} violated beyond tol "
                             f"{tol:.1e}: {lines}")
    return res


def _compare_points(pa: dict, pb: dict, primal: Problem | None, tol: float) -> list[str]:
    errs = []
    for name in sorted(set(pa) & set(pb)):
        a = np.atleast_1d(np.asarray(pa[name], dtype=float)).ravel()
        b = np.atleast_1d(np.asarray(pb[name], dtype=float)).ravel()
        if a.shape != b.shape:
            errs.append(f"{name}: shapes {a.shape} vs {b.shape}")
            continue
        if primal is not None:
            try:
                v = primal.variable(name)
            except KeyError:
                v = None
            if v is not None and v.feature:  # compare <w, phi(z_i)>, not the coefficients
                a, b = v.gram_matvec(a), v.gram_matvec(b)
        diff = float(np.max(np.abs(a - b), initial=0.0))
        scale = max(1.0, float(np.max(np.abs(a), initial=0.0)))
        if not diff <= tol * scale:
            errs.append(f"{name}: max |difference| {diff:.3e} (scale {scale:.3g})")
    return errs


def assert_same_problem(dual_a: Any, dual_b: Any, data: Any = None, tol: float = 1e-7, *,
                        recover_a: Callable | None = None, recover_b: Callable | None = None,
                        map_tol: float = 1e-5, primal: Problem | None = None,
                        solve_options: dict | None = None) -> list[tuple[float, float]]:
    """Assert two duals have the same optimal value and map to the same primal solution.

    Parameters
    ----------
    dual_a, dual_b : Problem, Derivation or callable
        A Derivation brings its ``recover`` map.
    data : tuple, list of tuples or None
        Arguments for callables; a list checks several (e.g. random) data sets.
    tol : float
        Relative tolerance on the optimal values.
    recover_a, recover_b : callable, optional
        ``Solution -> dict`` of primal values (override/provide the solution maps).
    map_tol : float
        Tolerance on the recovered primal values (relative to their scale; feature-space
        variables compared through ``<w, phi(z_i)>``). The maps are compared only when both are
        available.
    primal : Problem, optional
        Used to identify feature-space variables (taken from a Derivation if omitted).

    Returns
    -------
    list of (value_a, value_b) per data set.
    """
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    out = []
    for k, ds in enumerate(_datasets(data)):
        A, ra = _build(dual_a, ds)
        B, rb = _build(dual_b, ds)
        ra, rb = recover_a or ra, recover_b or rb
        pr = primal
        for obj in (dual_a, dual_b):
            if pr is None and hasattr(obj, "primal") and isinstance(obj.primal, Problem):
                pr = obj.primal
        sa, sb = _solve_both(A, B, solve_options, tol, f"optimal values differ on data set {k}",
                             (repr(A.name), repr(B.name)))
        if ra is not None and rb is not None:
            errs = _compare_points(ra(sa), rb(sb), pr, map_tol)
            if errs:
                raise AssertionError(f"solution maps differ on data set {k}: " + "; ".join(errs))
        out.append((sa.objective_value, sb.objective_value))
    return out


def assert_forms_agree(estimator: Any, X: Any, y: Any, tol: float = 1e-6, *,
                       output_tol: float | None = None, backend: str = "cvxpy",
                       output: str = "decision_function",
                       sample_weight: Any = None) -> Any:
    """Fit ``estimator`` with ``form="dual"`` and then ``form="primal"`` (same ``backend``,
    same ``sample_weight``): both certificates have relative gap and KKT residuals ``<= tol``,
    and ``output`` (``"decision_function"`` or ``"predict"``) on ``X`` and ``intercept_`` (if
    any) agree to ``output_tol`` absolute (default ``tol``).

    Returns the certificate of the dual fit; ``estimator`` is left fitted through its primal.
    """
    kw = {} if sample_weight is None else {"sample_weight": sample_weight}
    estimator.fit(X, y, backend=backend, form="dual", **kw)
    cert, out = estimator.certificate_, np.asarray(getattr(estimator, output)(X), dtype=float)
    b = np.asarray(getattr(estimator, "intercept_", 0.0), dtype=float)
    estimator.fit(X, y, backend=backend, form="primal", **kw)
    for form, c in (("dual", cert), ("primal", estimator.certificate_)):
        if not (abs(c.relative_gap) <= tol and c.max_kkt_residual <= tol):
            raise AssertionError(f"form={form!r}: relative gap {c.relative_gap:.3e}, max KKT "
                                 f"residual {c.max_kkt_residual:.3e} > tol {tol:.1e}")
    for what, new, old in ((output, getattr(estimator, output)(X), out),
                           ("intercept_", getattr(estimator, "intercept_", 0.0), b)):
        diff = float(np.max(np.abs(np.asarray(new, dtype=float) - old)))
        if not diff <= (tol if output_tol is None else output_tol):
            raise AssertionError(f"{what} of the primal and dual fits differ by {diff:.3e}")
    return cert


def _raised_by_primaldual(exc: BaseException) -> bool:
    """Whether ``exc`` is one of primaldual's error classes, or a ``ValueError``/``TypeError``
    raised by primaldual's own code (the innermost traceback frame is in the package)."""
    import os
    import traceback

    from . import exceptions

    own = tuple(getattr(exceptions, n) for n in exceptions.__all__
                if isinstance(getattr(exceptions, n), type)
                and issubclass(getattr(exceptions, n), BaseException)
                and not issubclass(getattr(exceptions, n), Warning))
    if isinstance(exc, own):
        return True
    if not isinstance(exc, (ValueError, TypeError)) or exc.__traceback__ is None:
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    pkg = os.path.dirname(os.path.abspath(__file__))
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(pkg + os.sep)


def _check_indefinite_warned(estimator: Any, X: Any, seen: list, exc: Any) -> None:
    """A catalogue fit on a kernel the oracle finds indefinite on ``X`` (an eigenvalue of its
    Gram matrix below ``-1e-8`` of its scale) that returned a model, or raised because a solve
    failed (numerical trouble, a singular system, infeasibility), warned with an
    ``IndefiniteKernelWarning`` and is not ``"optimal"``. An error raised before any solve
    (an argument's check) need not name the kernel."""
    from .exceptions import IndefiniteKernelWarning, InfeasibleProblemError, SingularKKTError
    from .kernels import make_kernel
    from .validation import NumericalTroubleError, indefinite_eigenvalue

    if exc is not None and not isinstance(exc, (NumericalTroubleError, SingularKKTError,
                                                InfeasibleProblemError)):
        return
    p = estimator.get_params() if hasattr(estimator, "get_params") else {}
    if not isinstance(p.get("kernel"), str) or p.get("kernel") in ("precomputed",) or \
            "coef0" not in p or not hasattr(estimator, "_task"):
        return
    try:
        k = make_kernel(p["kernel"], p.get("gamma", "scale"), p.get("degree", 3), p["coef0"],
                        np.asarray(X, dtype=float))
    except (ValueError, TypeError):   # the fit refused the same parameters
        return
    lo = indefinite_eigenvalue(k, np.asarray(X, dtype=float))
    if lo is None:
        return
    name = type(estimator).__name__
    if not any(issubclass(w.category, IndefiniteKernelWarning) for w in seen):
        raise AssertionError(f"{name}: kernel indefinite on the training rows (smallest "
                             f"eigenvalue {lo:.3g}) and no IndefiniteKernelWarning")
    if exc is None and getattr(estimator, "status_", None) == "optimal":
        raise AssertionError(f"{name}: 'optimal' on a kernel indefinite on the training rows "
                             f"(smallest eigenvalue {lo:.3g})")


def assert_honest_fit(estimator: Any, X: Any, y: Any, *, gap_tol: float = 1e-2,
                      oracle: bool = True, **fit_params: Any) -> Any:
    """Fit ``estimator`` and assert that it does not lie (the fuzz contract of
    docs/reliability.md).

    Either ``fit`` raises one of primaldual's errors (:mod:`primaldual.exceptions`, or a
    ``ValueError``/``TypeError`` raised by primaldual's own code: a clear message), and the
    function returns the exception; or the fitted model satisfies all of

    * ``status_ == "optimal"`` only if the recomputed relative duality gap is finite and
      ``<= gap_tol`` (for a low-rank fit: the gap of the eta-problem it solved);
    * no NaN or infinity in any certificate field (objectives, gap, KKT residuals), the
      intercept or the coefficients ``beta_``;
    * training predictions are finite and, for a binary classifier, equal the sign of the
      certified decision function ``f = K beta + b`` wherever ``|f| > 1e-6 (|K| |beta| + |b|)``
      (a sign not decided by rounding);

    * with ``oracle=True`` (default): :func:`assert_oracle_optimal` — a fit called
      ``"optimal"`` is optimal by the independent oracle (relative gap ``<= min(tol, 1e-2)``);
      estimators without a kernel-method certificate (:class:`EnclosingBall`,
      :class:`KernelPCA`, :class:`KernelPLSRegression`) get the oracle's checks only;

    and the function returns the estimator. Anything else raises ``AssertionError``.
    """
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            if y is None:
                estimator.fit(X, **fit_params)
            else:
                estimator.fit(X, y, **fit_params)
        except Exception as exc:  # noqa: BLE001 - the contract is about which ones
            if _raised_by_primaldual(exc):
                _check_indefinite_warned(estimator, X, seen, exc)
                return exc
            raise AssertionError(f"{type(estimator).__name__}.fit raised a raw "
                                 f"{type(exc).__name__}: {exc}") from exc
        _check_indefinite_warned(estimator, X, seen, None)
        if oracle:
            _oracle_check(estimator, X, y, fit_params.get("sample_weight"))
        X = np.asarray(X, dtype=float)
        name = type(estimator).__name__
        if name == "Variant":
            _honest_variant(estimator, X, gap_tol)
            return estimator
        if getattr(estimator, "estimators_", None) is not None or not hasattr(
                estimator, "_task"):
            return estimator
        cert = estimator.certificate_
        fields = {"primal objective": cert.primal_objective, "dual objective":
                  cert.dual_objective, "duality gap": cert.duality_gap,
                  "relative gap": cert.relative_gap, "intercept": estimator.intercept_}
        fields.update({f"kkt {k}": float(np.max(np.abs(v))) if np.size(v) else 0.0
                       for k, v in cert.kkt.items()})
        bad = [k for k, v in fields.items() if not np.all(np.isfinite(np.asarray(v, dtype=float)))]
        if not np.all(np.isfinite(estimator.beta_)):
            bad.append("beta_")
        if bad:
            raise AssertionError(f"{name}: status {estimator.status_!r} with non-finite "
                                 f"{', '.join(bad)}")
        gap = float(cert.relative_gap)
        if estimator.backend_ == "lowrank":
            gap = float(cert.extra.get("eta relative gap", gap))
        if estimator.status_ == "optimal" and not abs(gap) <= gap_tol:
            raise AssertionError(f"{name}: status 'optimal' with relative gap {gap:.3e} > "
                                 f"{gap_tol:g} ({estimator.backend_})")
        pred = estimator.predict(X)
        if getattr(estimator, "_task", "") == "regression":
            if not np.all(np.isfinite(pred)):
                raise AssertionError(f"{name}: non-finite training predictions")
            return estimator
        if getattr(estimator, "eta_", None) is not None:
            b = getattr(estimator, "b_", estimator.intercept_)  # eta's own bias (nu-scaled)
            V = estimator.lowrank_factor_.transform(X)
            f = V @ estimator.eta_ + b
            mag = np.abs(V) @ np.abs(estimator.eta_) + np.abs(b)
        else:
            # the model's coefficients are the certified beta up to a positive scale (nu-SVC
            # divides by rho); the scale is read off the support vectors
            beta = np.asarray(estimator.beta_, dtype=float)
            sv = np.asarray(estimator.support_)
            ratio = np.asarray(estimator.dual_coef_, dtype=float).ravel() / np.where(
                beta[sv] != 0, beta[sv], np.nan) if sv.size else np.ones(1)
            ratio = ratio[np.isfinite(ratio)]
            scale = float(np.median(ratio)) if ratio.size else 1.0
            if not (scale > 0 and np.allclose(ratio, scale, rtol=1e-8)):
                raise AssertionError(f"{name}: dual_coef_ is not a positive multiple of the "
                                     "certified beta_ on the support vectors")
            Kx = estimator.kernel_(X, estimator.X_fit_)
            f = scale * (Kx @ beta) + estimator.intercept_
            mag = scale * (np.abs(Kx) @ np.abs(beta)) + np.abs(estimator.intercept_)
        if not np.all(np.isfinite(f)):
            raise AssertionError(f"{name}: the certified decision function is not finite")
        clear = np.abs(f) > 1e-6 * mag  # not decided by rounding of the terms of f
        expect = estimator.classes_[(f > 0).astype(int)]
        wrong = np.flatnonzero(clear & (np.asarray(pred) != expect))
        if wrong.size:
            raise AssertionError(f"{name}: {wrong.size} training predictions differ from the "
                                 "sign of the certified decision function")
        return estimator


def _honest_variant(est: Any, X: np.ndarray, gap_tol: float) -> None:
    """A fitted ``Variant``: a finite certificate, ``"optimal"`` only with
    ``0 <= -rounding, |relative gap| <= gap_tol`` (a negative gap beyond round-off is a point
    off its feasible set), finite training decisions equal to ``certificate_.f``."""
    cert = est.certificate_
    vals = [cert.primal_objective, cert.dual_objective, cert.relative_gap,
            *cert.kkt.values()]
    if not all(np.isfinite(float(v)) for v in vals):
        raise AssertionError(f"Variant: status {est.status_!r} with a non-finite certificate")
    gap = float(cert.relative_gap)
    if est.status_ == "optimal" and not (-1e-9 <= gap <= gap_tol):
        raise AssertionError(f"Variant: status 'optimal' with relative gap {gap:.3e}")
    f = est._raw_decision(X)
    ref = np.asarray(cert.f, dtype=float).reshape(f.shape)
    if not (np.all(np.isfinite(f)) and np.allclose(f, ref, rtol=1e-9, atol=1e-12)):
        raise AssertionError("Variant: the training decisions differ from certificate_.f")


def _oracle_check(estimator: Any, X: Any, y: Any, sample_weight: Any) -> None:
    """:func:`assert_oracle_optimal` where the oracle covers the estimator."""
    try:
        rep = oracle_gap(estimator, X, y, sample_weight)
    except TypeError as exc:
        if "no oracle" in str(exc):
            return
        raise
    bad = rep.violations
    if bad:
        raise AssertionError("oracle: " + "; ".join(bad[:3]))


#: Every estimator of the catalogue with the backends that accept it (``auto`` included): the
#: case space of the scale fuzzing (tests/integration/test_fuzz.py, benchmarks/fuzz_scales.py).
FUZZ_BACKENDS = {
    "HardMarginSVC": ["auto", "cvxpy", "smo", "lowrank"],
    "CSVC": ["auto", "cvxpy", "smo", "lowrank"],
    "L2SVC": ["auto", "cvxpy", "smo", "lowrank"],
    "NuSVC": ["auto", "cvxpy", "smo", "lowrank"],
    "EpsilonSVR": ["auto", "cvxpy", "smo", "lowrank"],
    "NuSVR": ["auto", "cvxpy", "smo", "lowrank"],
    "LSSVC": ["auto", "cvxpy", "kkt"],
    "LSSVR": ["auto", "cvxpy", "kkt"],
    "ProximalSVC": ["auto", "cvxpy", "kkt"],
    "KernelRidge": ["auto", "cvxpy", "kkt"],
    "LapRLS": ["auto", "cvxpy", "kkt"],
    "LapSVC": ["auto", "cvxpy", "smo"],
    "KernelLogisticRegression": ["auto", "cvxpy"],
}


def scaled_case(name: str, x_scale: float, c_scale: float, gamma: float, n: int, seed: int,
                kernel: str = "rbf") -> tuple[Any, np.ndarray, np.ndarray]:
    """One scale-fuzzing case: estimator ``name`` with ``C = c_scale`` (``gamma_A = 1/c_scale``
    for the Laplacian methods), the kernel (``gamma`` for RBF) and ``n`` seeded points in 2-D
    whose features are multiplied by ``x_scale`` (classes separable for the hard margin).
    Returns ``(estimator, X, y)``."""
    import primaldual as pd

    est = getattr(pd, name)()
    params = est.get_params()
    kw: dict[str, Any] = {"kernel": kernel}
    if kernel == "rbf":
        kw["gamma"] = gamma
    if "C" in params:
        kw["C"] = c_scale
    elif "gamma_A" in params:
        kw["gamma_A"] = 1.0 / c_scale
    est.set_params(**kw)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    if getattr(est, "_task", "") == "regression":
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    else:
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
        y[:2] = [1, -1]
        if name == "HardMarginSVC":
            X[:, 0] += 1.5 * y  # separable
    return est, X * x_scale, y


#: The estimators the oracle fuzz adds to :data:`FUZZ_BACKENDS` (their "backends" are the
#: solver options they are fitted with).
ORACLE_FUZZ_EXTRA = {
    "EnclosingBall": ["auto", "smo", "cvxpy"],
    "KernelPCA": ["dense", "arpack", "randomized", "nystrom"],
    "KernelPLSRegression": ["auto"],
    "GPClassifier": ["auto"],
    "RVR": ["auto"],
    "RVC": ["auto"],
}

#: The ``Variant`` shapes of the oracle fuzz (:mod:`primaldual.fuzz_variants`) with the backends
#: they are fitted with (``smo`` for the box QPs).
ORACLE_FUZZ_VARIANTS = {
    "uneven": ["auto", "smo", "cvxpy"], "l2": ["auto", "cvxpy"],
    "one_class": ["auto", "smo", "cvxpy"], "svdd": ["auto", "smo", "cvxpy"],
    "universum": ["auto", "cvxpy"], "ranking": ["auto", "smo", "cvxpy"],
    "svr": ["auto", "cvxpy"],
}


#: the share of the polynomial-kernel catalogue cases of :func:`oracle_case` given
#: ``coef0 = -1``, an indefinite kernel
INDEFINITE_SHARE = 0.3


def oracle_case(seed: int, extended: bool = False) -> dict[str, Any]:
    """One seeded case of the oracle fuzz (benchmarks/fuzz_oracle.py,
    tests/integration/test_fuzz.py): an estimator of :data:`FUZZ_BACKENDS` or
    :data:`ORACLE_FUZZ_EXTRA`, a backend, features / ``C`` / ``gamma`` each scaled by ``10^k``
    (``k`` uniform in ``[-12, 12]``), ``tol`` left at its default or ``10^k`` with ``k`` in
    ``[-8, 1]`` (up to 10), positive sample weights of size ``10^k`` up to ``1e12`` or class
    weights, two or three classes, an RBF / linear / polynomial kernel, N = 8..24, SMO's
    ``max_iter`` at 1e5.

    ``extended=True`` (the fuzz's default): a quarter of the seeds are ``Variant`` cases of
    :data:`ORACLE_FUZZ_VARIANTS` (:func:`primaldual.fuzz_variants.variant_case`) and one in
    twenty a :class:`GPClassifier` whose hyper-parameters are searched (``backend`` "search").

    Returns ``{"case": tuple, "estimator", "X", "y", "fit": dict of fit keyword arguments}``
    (``y`` is ``None`` for the ball and kernel PCA)."""
    rng = np.random.default_rng(seed)
    pool = [(n, b) for n, bs in {**FUZZ_BACKENDS, **ORACLE_FUZZ_EXTRA}.items() for b in bs]
    name, backend = pool[int(rng.integers(len(pool)))]
    if extended:
        # a separate stream picks the extension's cases: the other seeds keep their cases
        rx = np.random.default_rng([seed, 41])
        r = rx.random()
        if r < 0.25:
            vpool = [(f"Variant:{s}", b) for s, bs in ORACLE_FUZZ_VARIANTS.items() for b in bs]
            name, backend = vpool[int(rx.integers(len(vpool)))]
            rng = rx
        elif r < 0.3:
            name, backend = "GPClassifier", "search"
    if name.startswith("Variant:"):
        from .fuzz_variants import variant_case

        n = int(rng.integers(6, 21))
        kernel = ["rbf", "linear", "poly"][int(rng.integers(3))]
        tol = None if rng.random() < 0.5 else 10.0 ** int(rng.integers(-6, 0))
        c = variant_case(rng, name[8:], backend, n, kernel, tol)
        return {"case": (seed, name, backend, n, kernel, tol), **c, "fit": {}}
    sx, sc, sg = (10.0 ** int(rng.integers(-12, 13)) for _ in range(3))
    n = int(rng.integers(8, 25))
    kernel = ["rbf", "linear", "poly"][int(rng.integers(3))]
    tol = None if rng.random() < 0.5 else 10.0 ** int(rng.integers(-8, 2))
    case: tuple = (seed, name, backend, sx, sc, sg, n, kernel, tol)
    fit: dict[str, Any] = {}
    X = rng.normal(size=(n, 2))
    if name in ORACLE_FUZZ_EXTRA:
        import primaldual as pd  # the estimators (testing sits above them, as scaled_case)

        from .decomposition import KernelPCA, KernelPLSRegression

        kw: dict[str, Any] = {"kernel": kernel}
        if kernel != "linear":
            kw["gamma"] = sg
        if name == "EnclosingBall":
            est = pd.EnclosingBall(backend=backend, **kw)
            if tol is not None:
                est.set_params(tol=tol)
            return {"case": case, "estimator": est, "X": X * sx, "y": None, "fit": fit}
        if name == "KernelPCA":
            k = int(rng.integers(1, n))
            opts = ({"rank": int(rng.integers(2, n + 1))} if backend == "nystrom"
                    else {"eigen_solver": backend})
            est = KernelPCA(n_components=None if rng.random() < 0.3 else k, **kw, **opts,
                            random_state=0)
            return {"case": case, "estimator": est, "X": X * sx, "y": None, "fit": fit}
        if name in ("GPClassifier", "RVR", "RVC"):
            # the Bayesian kernel machines: scaled features and kernel width, tol left or
            # 10^k; GPClassifier's hyper-parameters optimised half of the time
            from .gaussian_process import GPClassifier
            from .rvm import RVC, RVR

            Xs = X * sx
            if name == "RVR":
                y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
                est = RVR(**kw)
            else:
                y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, 0)
                y[:2] = [0, 1]
                if rng.random() < 0.25:
                    y = np.where(y > 0, np.where(X[:, 1] > 0, 2, 1), 0)
                    y[:3] = [0, 1, 2]
                if name == "RVC":
                    est = RVC(**kw)
                else:
                    # "search": the hyper-parameter search always (its oracle checks the
                    # evidence, the fall from the start and the stationarity at theta_)
                    est = GPClassifier(**kw, optimizer="fmin_l_bfgs_b" if backend == "search"
                                       or rng.random() >= 0.5 else None)
                    if backend == "search":
                        Xs = X * 10.0 ** int(rng.integers(-2, 3))   # (the search's own scales)
            if tol is not None:
                est.set_params(tol=tol)
            return {"case": case, "estimator": est, "X": Xs, "y": y, "fit": fit}
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
        est = KernelPLSRegression(n_components=int(rng.integers(1, 4)), **kw)
        return {"case": case, "estimator": est, "X": X * sx, "y": y, "fit": fit}
    est, X, y = scaled_case(name, sx, sc, sg, n, int(rng.integers(2**16)), kernel)
    if tol is not None and "tol" in est.get_params():
        est.set_params(tol=tol)
    if "max_iter" in est.get_params():
        # SMO on a linear kernel of features at 1e11 runs to its 1e7 default (about a minute,
        # honestly reported 'max_iter'); the fuzz checks honesty, not patience
        est.set_params(max_iter=100_000)
    task = getattr(est, "_task", "")
    if task == "classification" and name not in ("HardMarginSVC", "LapSVC") \
            and rng.random() < 0.25:
        y = np.where(y > 0, np.where(X[:, 1] > 0, 2, 1), 0)  # three classes
        y[:3] = [0, 1, 2]
    r = rng.random()
    if r < 0.3 and name not in ("LapRLS", "LapSVC"):
        k = int(rng.integers(-12, 13))
        fit["sample_weight"] = 10.0 ** k * rng.uniform(0.5, 2.0, size=n)
    elif r < 0.4 and task == "classification" and "class_weight" in est.get_params():
        labels = np.unique(y)
        est.set_params(class_weight={c: 10.0 ** int(rng.integers(-6, 7)) for c in labels})
    if name in ("LapRLS", "LapSVC"):
        # semi-supervised: about 40% of the rows unlabelled half of the time (the first two
        # keep their labels), positive loss weights (some 0: graph nodes only) a third of it
        y = y.astype(float)
        if rng.random() < 0.5:
            unl = rng.random(n) < 0.4
            unl[:2] = False
            y[unl] = np.nan
        if rng.random() < 0.3:
            sw = 10.0 ** int(rng.integers(-6, 7)) * rng.uniform(0.5, 2.0, size=n)
            sw[2:][rng.random(n - 2) < 0.1] = 0.0
            fit["sample_weight"] = sw
    if backend != "auto":
        fit["backend"] = backend
    if kernel == "poly" and "coef0" in est.get_params() and \
            np.random.default_rng([seed, 17]).random() < INDEFINITE_SHARE:
        # an indefinite kernel, (gamma x'z - 1)^3 (a separate stream: the other seeds keep
        # their cases): the fit must warn and never be optimal (assert_honest_fit)
        est.set_params(coef0=-1.0)
        case = case + ("coef0=-1",)
    return {"case": case, "estimator": est, "X": X, "y": y, "fit": fit}
