"""What every method shares: data preparation, the fit pipeline, recovery helpers, estimator API.

The pipeline (DESIGN.md, one direction)::

    method(hyper-parameters) --_validate_params--> params (checked once, ``_params.py``)
        --_prepare--> FitData (X, y, kernel, C_i, params) --_primal/_dual--> Problem
        --backend--> Solution --_from_dual/_from_primal--> Recovered (beta, b, points)
        --certify(primal, dual)--> Certificate --> fitted attributes (alpha_, dual_coef_, ...)

A method class implements four functions: ``_primal(data)``, ``_dual(data)``,
``_from_dual(data, solution)`` and ``_from_primal(data, solution)``; everything else is here,
the steps before the problem (parameters, ``gamma``, rows, ``C_i``) in :mod:`._inputs` and
those around the solve in :mod:`._steps`.
"""

from __future__ import annotations

import functools
import time
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._available_if import available_if
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from ..backends import SPARSE_ROWS, estimator_options, get_backend
from ..backends import select as select_backend
from ..certificate import (
    Certificate,
    audit,
    audit_tolerance,
    certificate_unit,
    certify,
    objective_unit,
    relative_gap,
)
from ..kernels import Kernel, make_kernel, matvec_cache
from ..kernels.gram import sorted_csr
from ..model.problem import LazyProblem, Problem
from ..solution import InfeasibleProblemError, Solution
from ..validation import NumericalTroubleError, audit_kernel
from ._box_certificate import box_qp_fast_certificate
from ._fit import (  # noqa: F401  (FitData ... are also imported from here by the methods)
    FitData,
    Recovered,
    _dense,
    _HardMarginMarker,
    _lowrank_certificate,
    _n_rows,
    _no_decision_function,
    _numeric,
    _param_names,
    _probability_on,
    _require_finite_certificate,
    _scale_hint,
    atomic_fit,
    bias_from_gradient,
    mean_or_midpoint,
    snap_interior_point,
    support_split,
)
from ._fitted import FittedState
from ._inputs import (
    backend_form,
    prepare,
    resolve_gamma,
    sample_C,
    validate_xy,
    validated_params,
)
from ._multiclass_predict import _check_break_ties, multiclass_predict, multiclass_predict_proba
from ._params import FORMS, ParamCheck
from ._steps import (
    _audit_margins,
    _balance_equality,
    _check_densify_memory,
    _clip_to_box,
    _unique_labels,
    check_lowrank_factor,
    warn_ignored_parameters,
)
from ._structure import dual_structure


# ----------------------------------------------------------------------------- the base class
class KernelMethod(FittedState, BaseEstimator):
    """Shared estimator machinery for the catalogue (scikit-learn conventions: the constructor
    only stores; validation happens in ``fit``; fitted state ends in ``_``).

    Subclasses set ``_task`` (``"classification"`` or ``"regression"``), declare
    ``_parameter_constraints`` (one check per constructor parameter, :mod:`._params`) and
    implement ``_primal``, ``_dual``, ``_from_dual``, ``_from_primal``.
    """

    _task = "classification"
    _has_bias = True
    #: ``name -> check`` for exactly the constructor's parameters; run once per fit
    #: (:meth:`_validate_params`).
    _parameter_constraints: ClassVar[dict[str, ParamCheck]] = {}

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The constructor's parameter names (scikit-learn's rule, read once per class:
        ``get_params``, ``clone`` and every constructor call ask for them)."""
        return list(_param_names(cls))

    def _store_init_args(self, args: dict[str, Any]) -> None:
        """Store the constructor's arguments unchanged (scikit-learn: ``__init__`` only
        stores; validation is :meth:`_validate_params`, in ``fit``). Called as
        ``self._store_init_args(locals())``: the signature is the one list of parameters."""
        for name in self._get_param_names():
            setattr(self, name, args[name])

    def _validate_params(self) -> dict[str, Any]:
        """The constructor parameters, each validated by its check (ValueError/TypeError
        naming the parameter), once per class and plain values (:func:`._inputs.
        validated_params`)."""
        return validated_params(self)

    def _box_C(self, params: dict[str, Any]) -> float:
        """The scalar ``C`` that sample and class weights multiply into the per-sample
        ``C_i`` (the parameter ``C``; methods without one override this)."""
        return params["C"]

    # ----- to be implemented by a method
    def _primal(self, data: FitData) -> Problem:  # pragma: no cover - abstract
        raise NotImplementedError

    def _dual(self, data: FitData) -> Problem:  # pragma: no cover - abstract
        raise NotImplementedError

    def _from_dual(self, data: FitData, sol: Solution) -> Recovered:  # pragma: no cover
        raise NotImplementedError

    def _from_primal(self, data: FitData, sol: Solution) -> Recovered:  # pragma: no cover
        raise NotImplementedError

    def _upper(self, data: FitData) -> np.ndarray:
        """Per-sample upper bound of the dual variable (for free/bounded SV split)."""
        return data.C

    def _dual_structure(self, data: FitData) -> dict | None:
        """The structure records of ``_dual(data)`` that the backend is chosen from: for a
        method stating its dual data (``_dual_data``), the BoxQP detected on its dual, once per
        shape and bound to ``data`` (:func:`._structure.dual_structure`); ``None``:
        the backend builds the dual and detects them
        (:func:`~primaldual.model.structure.box_qp_of`).
        The public ``dual()`` carries no record."""
        return dual_structure(self, data)

    def _certify(self, data: FitData, rec: Recovered, P: Problem, D: Problem,
                 status: str) -> Certificate:
        """The certificate of ``rec``: a dual that is a box QP with finite bounds (linearly
        penalised slacks) is certified by its bidual at the predictor
        (:func:`~primaldual.certificate.box_qp_certificate`, no expression objects); anything
        else through the modelling layer (:func:`~primaldual.certificate.certify`)."""
        cert = box_qp_fast_certificate(data, rec, D, status, self._upper(data))
        if cert is not None:
            return cert
        return certify(P, rec.primal_point, rec.primal_multipliers, D, rec.dual_point,
                       status=status, unit=objective_unit(self._upper(data)))

    # ----- data
    def _kernel(self, X: np.ndarray, params: dict[str, Any] | None = None) -> Kernel:
        p = self._validate_params() if params is None else params
        return make_kernel(p["kernel"], p["gamma"], p["degree"], p["coef0"], X)

    def _sample_C(self, y_pm: np.ndarray, sample_weight: Any, C: float,
                  cw: Any = None) -> np.ndarray:
        """``C_i = C * sample_weight_i * class_weight[y_i]`` (``cw``: the validated
        ``class_weight``; :func:`._inputs.sample_C`)."""
        return sample_C(self, y_pm, sample_weight, C, cw)

    def _prepare(self, X: Any, y: Any, sample_weight: Any = None,
                 params: dict[str, Any] | None = None) -> FitData:
        """Validate ``X``, ``y`` into a :class:`FitData` (labels mapped to -1/+1 for classifiers),
        with the validated ``params`` (validated here when not given). Used by
        ``primal``/``dual``/``fit`` (:func:`._inputs.prepare`)."""
        return prepare(self, X, y, sample_weight, params)

    def _validate_xy(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        return validate_xy(self, X, y)

    # ----- public problem API (DESIGN.md contract)
    def primal(self, X: Any, y: Any, sample_weight: Any = None) -> Problem:
        """The primal problem on (X, y), as a :class:`~primaldual.model.Problem`."""
        return self._primal(self._prepare(X, y, sample_weight))

    def dual(self, X: Any, y: Any, sample_weight: Any = None) -> Problem:
        """The hand-derived dual problem on (X, y)."""
        return self._dual(self._prepare(X, y, sample_weight))

    def lagrangian(self, X: Any, y: Any, sample_weight: Any = None):
        """The Lagrangian of the primal problem."""
        return self.primal(X, y, sample_weight).lagrangian()

    def kkt(self, X: Any, y: Any, sample_weight: Any = None):
        """The KKT conditions of the primal problem."""
        return self.primal(X, y, sample_weight).kkt()

    # ----- fitting
    def _solve(self, data: FitData, backend: str, form: str, **opts: Any
               ) -> tuple[Solution, Recovered, Problem, Problem]:
        if form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {form!r}")
        # built on first use only: the SMO backend reads the fast-path BoxQP record (equal to
        # the one detection derives from the dual), and the expression objects are constructed
        # when someone asks for them (solution_.problem)
        P = LazyProblem(functools.partial(self._primal, data))
        D = LazyProblem(functools.partial(self._dual, data), structure=self._dual_structure(data))
        target = D if form == "dual" else P
        name = select_backend(target, backend)
        if sp.issparse(data.X) and name not in SPARSE_ROWS:
            # sparse rows are kept for the backends that read CSR rows: any other gets dense
            _check_densify_memory(data.X)
            data.X = data.X.toarray()
            self._sparse_rows = False
            P = LazyProblem(functools.partial(self._primal, data))
            D = LazyProblem(functools.partial(self._dual, data),
                            structure=self._dual_structure(data))
            target = D if form == "dual" else P
        if name == "cvxpy" and data.N * data.N > 2**20:
            # the CVXPY route holds several N x N blocks at once (K, Q, the
            # problem's data and the solver's copies; traced peak 5.2 blocks for C-SVC, 9.2
            # for LS-SVC at N = 1200): the guard checks all of them, not the kernel alone
            from ..validation import block_bytes, check_memory
            check_memory(block_bytes([(data.N, data.N)] * 10),
                         f"{type(self).__name__} through CVXPY: 10 blocks the size of the "
                         f"{data.N} x {data.N} kernel matrix")
        options = self._backend_options(name, data.params)
        if name == "cvxpy" and (data.params.get("solver") or "CLARABEL").upper() == "CLARABEL" \
                and "tol_gap_abs" not in options:
            fin = data.C[np.isfinite(data.C)]
            if fin.size and 0 < float(np.max(fin)) < 1e-2:
                # a small box makes the objective O(C^2): Clarabel's default absolute
                # tolerances (1e-8) would leave the dual point infeasible relative to its box
                # (as nu-SVC's 1/N box, which tightens them the same way)
                options.update(tol_gap_abs=1e-15, tol_gap_rel=1e-12, tol_feas=1e-12,
                               tol_ktratio=1e-10)
        options.update(opts)
        if name == "smo" and "shared_gram" in data.extra:
            options["shared_gram"] = data.extra["shared_gram"]  # kernel columns read from it
        self._warn_ignored_parameters(name, options)
        sol = get_backend(name).solve(target, **options)
        if sol.backend == "cvxpy" and sol.has_point:
            snap_interior_point(sol)
            if form == "dual":
                _clip_to_box(sol, self._upper(data))
                if not getattr(self, "_free_multipliers", False):
                    _balance_equality(sol, data.y if self._task == "classification" else None)
        if sol.backend == "lowrank" and "factor" in sol.info:
            # recovery (intercept, slacks, ||w||^2) uses the K ~= V V^T the eta-problem solved
            # (an operator for a factor kept as V = C P: products C (P w), V never formed)
            data.extra["lowrank_V"] = sol.info["factor"].operator()
        if not sol.has_point:
            hard = isinstance(self, _HardMarginMarker) or bool(np.all(np.isinf(data.C)))
            if not hard:
                # every finite-C / least-squares problem of the catalogue is feasible and
                # bounded: an infeasible status is the solver's numerical failure, not a fact
                raise NumericalTroubleError(
                    f"{type(self).__name__}: the solver reported the {form} problem "
                    f"{sol.status}, but it is always feasible and bounded: numerical trouble; "
                    + _scale_hint(data), sol)
            # hard margin: a failed solve (the low-rank solver's "solver_error" included) may
            # be non-separable data; CSVC._solve verifies the unbounded dual ray and turns
            # this into NumericalTroubleError when there is none
            what = (f"is {sol.status}" if sol.status in ("infeasible", "unbounded")
                    else f"stopped with status {sol.status!r}")
            raise InfeasibleProblemError(
                f"{type(self).__name__}: the {form} problem {what} (hard margin: the "
                "classes are not linearly separable in feature space)", sol)
        if "factor" in sol.info:
            self._check_lowrank_factor(data, sol)
        rec = self._from_dual(data, sol) if form == "dual" else self._from_primal(data, sol)
        if not (np.isfinite(rec.beta).all() and np.isfinite(rec.b)):
            raise NumericalTroubleError(
                f"{type(self).__name__}: the {sol.backend} solve returned non-finite "
                "coefficients or intercept (NaN/inf): numerical trouble; " + _scale_hint(data),
                sol)
        return sol, rec, P, D

    def _check_lowrank_factor(self, data: FitData, sol: Solution) -> None:
        """:func:`._steps.check_lowrank_factor` of this fit."""
        check_lowrank_factor(self, data, sol)

    def _warn_ignored_parameters(self, name: str, options: dict) -> None:
        """:func:`._steps.warn_ignored_parameters` of this fit."""
        warn_ignored_parameters(self, name, options)

    def _backend_options(self, name: str, params: dict[str, Any]) -> dict:
        """The options backend ``name`` takes, from the validated ``params`` (a parameter the
        estimator does not declare is left to the backend's default)."""
        opts = estimator_options(name, params)   # the registry's one table of options
        if name == "cvxpy" and not params.get("solver"):
            opts.pop("solver", None)
        if name == "smo" and not params.get("shrinking", getattr(self, "shrinking", True)):
            opts["shrinking"] = False
        if name == "lowrank":
            opts.update(rank=params.get("rank"), rank_tol=params.get("rank_tol"))
            factor = params.get("factor")
            if isinstance(factor, str):
                opts["method"] = factor
            elif factor is not None:
                opts["factor"] = factor
        return opts

    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, backend: str | None = None,
            form: str | None = None) -> KernelMethod:
        """Fit by solving the dual (default) or primal with a backend and certify the result.

        Parameters
        ----------
        backend : {"auto", "cvxpy", "smo", "kkt", "lowrank"}, optional
            Overrides the constructor's ``backend``.
        form : {"dual", "primal"}, optional
            Overrides the constructor's ``form``.
        """
        params = self._validate_params()
        backend, form = self._backend_form(params, backend, form)
        if callable(self.kernel) and not _numeric(X):
            return self._fit_on_samples(X, y, sample_weight, backend, form)
        X, y = self._validate_input(X, y)
        self._sparse = sp.issparse(X)
        self._sparse_rows = False
        if self._sparse:
            # sparse input: kept sparse (CSR, O(nnz)) where the fit can take it (the SMO route
            # of the LIBSVM-type SVMs, _keeps_sparse), else solved on the dense rows;
            # support_vectors_ and dual_coef_ are returned sparse, as scikit-learn's
            if getattr(self, "kernel", None) == "precomputed":
                raise TypeError("Sparse precomputed kernels are not supported; pass the Gram "
                                "matrix as a dense array")
            if self._keeps_sparse(params, backend, form):
                X = sorted_csr(X)
                self._sparse_rows = True
            else:
                _check_densify_memory(X)
                X = X.toarray()
        self._fit_dense(X, y, sample_weight, backend, form, params)
        if self._sparse and hasattr(self, "support_vectors_"):
            self.support_vectors_ = sp.csr_matrix(self.support_vectors_)
            self.dual_coef_ = sp.csr_matrix(self.dual_coef_)
        return self

    #: the estimator's dual goes to SMO as a kernel-defined box QP whose certificate, recovery
    #: and predictions only use kernel products: sparse X can stay sparse (see _keeps_sparse)
    _sparse_smo: bool = False

    def _keeps_sparse(self, params: dict[str, Any], backend: str, form: str) -> bool:
        """Whether a fit on sparse ``X`` keeps it sparse end to end: a route reading CSR rows
        (``"auto"`` or a backend of ``SPARSE_ROWS``, the dual form) of an estimator declaring
        ``_sparse_smo``, with a kernel evaluated from CSR rows (linear, rbf, poly, sigmoid).
        Any other route densifies ``X`` first (:meth:`_solve` too, should ``"auto"`` choose
        a dense backend)."""
        return (self._sparse_smo and (backend == "auto" or backend in SPARSE_ROWS)
                and form == "dual" and isinstance(params.get("kernel"), str)
                and params["kernel"] in ("linear", "rbf", "poly", "sigmoid"))

    def _fit_on_samples(self, X: Any, y: Any, sample_weight: Any, backend: str,
                        form: str) -> KernelMethod:
        """A callable kernel on samples that are not numeric arrays (strings, graphs, as
        scikit-learn's SVC allows): the callable gets the raw samples once, ``K = kernel(X, X)``,
        and the model is fit on that Gram matrix exactly as ``kernel="precomputed"``;
        ``predict`` evaluates ``kernel(X_test, X)`` the same way (``_samples_fit_`` keeps the
        training samples)."""
        samples = X if isinstance(X, (list, tuple, np.ndarray)) else list(X)
        K = np.asarray(self.kernel(samples, samples), dtype=np.float64)
        n = _n_rows(samples)
        if K.shape != (n, n):
            raise ValueError(f"kernel callable must return an array of shape ({n}, {n}) for "
                             f"{n} samples, got {K.shape}")
        kernel = self.kernel
        self.kernel = "precomputed"  # for the duration of the fit: the Gram matrix is given
        try:
            KernelMethod.fit(self, K, y, sample_weight=sample_weight, backend=backend,
                             form=form)
        finally:
            self.kernel = kernel
        self._samples_fit_ = samples
        return self

    def _fit_subproblem(self, X: np.ndarray, y: np.ndarray, sample_weight: Any,
                        backend: str | None, form: str | None,
                        params: dict[str, Any]) -> KernelMethod:
        """``fit`` on rows a multiclass fit has validated and split already (dense float64
        ``X``, labels ``{0, 1}``) with this estimator's validated ``params``: no second
        validation of the inputs or the parameters per sub-problem."""
        backend, form = self._backend_form(params, backend, form)
        self.n_features_in_ = X.shape[1]
        self._sparse = self._sparse_rows = sp.issparse(X)
        self._fit_dense(X, y, sample_weight, backend, form, params)
        self._after_fit(X, y, sample_weight, backend, form)
        return self

    def _after_fit(self, X: Any, y: Any, sample_weight: Any, backend: Any, form: Any) -> None:
        """What a fit adds after the model (classifiers: Platt's sigmoid)."""

    def _fit_dense(self, X: np.ndarray, y: np.ndarray, sample_weight: Any, backend: str,
                   form: str, params: dict[str, Any]) -> KernelMethod:
        self._reset_multiclass_state()
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 allow_all_zero_weights=True)
            if not np.any(sample_weight > 0):
                # LIBSVM drops rows with a weight <= 0 (scikit-learn's message)
                raise ValueError("Invalid input - all samples have zero or negative weights "
                                 "(sample_weight must have at least one weight > 0)")
        # data-dependent hyper-parameters are resolved ONCE on the full X (scikit-learn's
        # convention): gamma="scale"/"auto" before dropping rows and before multiclass splits
        self._gamma = self._resolve_gamma(X, params)
        # "_xy_checked": X, y were validated by fit (or by the multiclass fit that split them)
        params = {**params, "gamma": self._gamma, "_xy_checked": True}
        if self._task == "classification":
            classes = params.get("_classes")  # a multiclass sub-problem's {0, 1}, both present
            self.classes_ = _unique_labels(y) if classes is None else classes
            if self.classes_.shape[0] < 2:
                raise ValueError("y must contain at least 2 classes, got 1 class")
            if sample_weight is not None and np.unique(y[sample_weight > 0]).shape[0] < 2:
                raise ValueError(self._one_class_left_message())
            if self.classes_.shape[0] > 2:
                return self._fit_multiclass(X, y, sample_weight, backend, form, params)
        kept = None
        if sample_weight is not None and np.any(sample_weight <= 0):
            # a weight <= 0 removes the sample (LIBSVM): its multiplier is 0, so the problem is
            # solved on the positive-weight rows and alpha/beta are padded with exact zeros
            # (indices in support_ refer to the full training set)
            kept = np.flatnonzero(sample_weight > 0)
            X_full, X, y, sample_weight = X, X[kept], y[kept], sample_weight[kept]
            if params.get("_shared_gram") is not None:
                params["_shared_gram"] = params["_shared_gram"].subset(kept)
        rec = self._fit_binary(X, y, sample_weight, backend, form, params)
        if kept is not None:
            self._expand_rows(kept, X_full, [k + "_" for k in rec.alpha] + ["beta_"])
            self._kkt_state = None   # the table would index the kept rows only
        return self

    def _one_class_left_message(self) -> str:
        return ("Invalid input - all samples with positive weights belong to the same class "
                "(y must contain at least 2 classes with a positive sample_weight)")

    def _resolve_gamma(self, X: np.ndarray, params: dict[str, Any] | None = None) -> Any:
        """The numeric kernel width used by this fit (``"scale"``: ``1/(d X.var())``,
        ``"auto"``: ``1/d``, on the full training X); the parameter itself when it is a number
        or the kernel takes no gamma (:func:`._inputs.resolve_gamma`)."""
        return resolve_gamma(self, X, params)

    @staticmethod
    def _backend_form(params: dict[str, Any], backend: str | None, form: str | None
                      ) -> tuple[str, str]:
        """``fit``'s ``backend``/``form`` arguments (checked) or else the parameters; a rank
        asked for makes ``"auto"`` the low-rank backend (:func:`._inputs.backend_form`)."""
        return backend_form(params, backend, form)

    def _reset_multiclass_state(self) -> None:
        for name in ("estimators_", "codes_", "multiclass_strategy_", "decoding_",
                     "certificates_", "pair_threads_", "_kkt_state"):
            self.__dict__.pop(name, None)  # state of an earlier multiclass fit

    def _fit_binary(self, X: np.ndarray, y: Any, sample_weight: Any, backend: str, form: str,
                    params: dict[str, Any] | None = None) -> Recovered:
        """The one pipeline every method fits through: prepare, solve, recover, certify,
        audit, set the fitted attributes."""
        # one evaluation context: the solve's objective, the recovery (intercept, f), the
        # certificate (objectives, KKT residuals) and ||w||^2 share each kernel product
        # f = K[:, S] beta_S (kernels.matvec_cache)
        with matvec_cache():
            return self._fit_binary_in_context(X, y, sample_weight, backend, form, params)

    def _fit_binary_in_context(self, X: np.ndarray, y: Any, sample_weight: Any, backend: str,
                               form: str, params: dict[str, Any] | None) -> Recovered:
        t0 = time.perf_counter()
        data = self._prepare(X, y, sample_weight, params)
        sol, rec, P, D = self._solve(data, backend, form)
        exact = None
        if sol.backend == "lowrank" and "lowrank" in sol.info:
            # a low-rank fit certifies the eta-problem it solved (K ~= V V^T); the exact-kernel
            # check is opt-in (certify="exact") and reported under its own name
            cert = _lowrank_certificate(sol)
            if data.params.get("certify", "auto") == "exact":
                V = data.extra.pop("lowrank_V")
                exact = certify(P, rec.primal_point, rec.primal_multipliers, D, rec.dual_point,
                                status=sol.status, unit=objective_unit(self._upper(data)))
                data.extra["lowrank_V"] = V
                cert.extra.update({"exact-kernel relative gap": exact.relative_gap,
                                   "exact-kernel max KKT": exact.max_kkt_residual})
        else:
            cert = self._certify(data, rec, P, D, sol.status)
        self.exact_certificate_ = exact
        # one unit for every route (closed form, modelling layer, low rank): no per-method floor
        cert.relative_gap = relative_gap(cert.duality_gap, cert.primal_objective,
                                         certificate_unit(self._upper(data), data.C))
        _require_finite_certificate(self, cert, sol, data)
        cert.extra.update({"time [s]": time.perf_counter() - t0})
        cert.extra.update({k: data.extra[k] for k in ("l", "u") if k in data.extra})
        # never keep "optimal" when the recomputed certificate contradicts it: "optimal" means
        # relative gap and KKT residuals (relative to max(1, |primal|)) within the
        # estimator's tol, no NaN anywhere (low-rank: of the eta-problem that was solved)
        tol = self._certify_tol()
        if audit(cert, tol) != sol.status:
            sol.status = cert.status
        audit_kernel(cert, data.kernel, data.X)
        _audit_margins(self, cert, rec, tol)
        if cert.status != sol.status:
            sol.status = cert.status
        self._set_fitted(data, sol, rec, cert)
        cert.f = self._training_decision(data, rec)
        data.extra.pop("_kmatvec", None)
        return rec

    def _audit_fitted_margins(self, cert: Certificate, rec: Recovered, tol: float) -> None:
        """:func:`_audit_margins` of this fit (the lean pair route, :mod:`._pair`)."""
        _audit_margins(self, cert, rec, tol)

    def _certify_tol(self) -> float:
        """The tolerance the certificate is audited with: the estimator's ``tol`` under the
        one rule of every road (:func:`~primaldual.certificate.audit_tolerance`)."""
        return audit_tolerance(self.__dict__.get("tol", 1e-3))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # sparse X is accepted by the shared fit (densified rows; sparse support_vectors_)
        tags.input_tags.sparse = getattr(type(self).fit, "__qualname__", "").split(".")[0] in (
            "KernelMethod", "BinaryClassifier")
        return tags



class BinaryClassifier(ClassifierMixin, KernelMethod):
    """Binary classifiers: labels of any type mapped to -1/+1 inside the estimator only
    (``classes_[1]`` is +1), ``predict`` maps the sign back."""

    _task = "classification"

    # atomic as a whole: a Platt step that fails after a successful base
    # fit restores the previous model instead of keeping the new base fit without ``probA_``
    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, backend: str | None = None,
            form: str | None = None) -> BinaryClassifier:
        super().fit(X, y, sample_weight=sample_weight, backend=backend, form=form)
        self._after_fit(X, y, sample_weight, backend, form)
        return self

    def _after_fit(self, X: Any, y: Any, sample_weight: Any, backend: Any, form: Any) -> None:
        self.probability_ = bool(getattr(self, "probability", False))
        if self.probability_ and not hasattr(self, "estimators_"):
            self._fit_platt(X, y, sample_weight, backend, form)

    def _fit_platt(self, X: Any, y: Any, sample_weight: Any, backend: Any, form: Any) -> None:
        """Platt's sigmoid on 5-fold cross-validated decision values (LIBSVM's
        ``svm_binary_svc_probability``); multiclass fits do this per pair."""
        from ..calibration import cross_val_decision, platt_fit
        X = np.asarray(X) if not hasattr(X, "shape") else X
        y = np.asarray(y)
        inner = clone(self).set_params(probability=False)
        kw = {k: v for k, v in (("backend", backend), ("form", form)) if v is not None}
        f = cross_val_decision(inner, X, y, sample_weight, 5, getattr(self, "random_state", None),
                               kw)
        keep = np.ones(y.shape[0], dtype=bool) if sample_weight is None else \
            np.asarray(sample_weight, dtype=float) > 0
        A, B = platt_fit(f[keep], y[keep] == self.classes_[1])
        self.probA_, self.probB_ = np.array([A]), np.array([B])

    @available_if(_probability_on)
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (columns in ``classes_`` order): Platt's sigmoid of the decision
        value (binary), pairwise coupling of the pairs' sigmoids (one-vs-one, Wu, Lin & Weng
        2004, as LIBSVM)."""
        check_is_fitted(self, "classes_")
        if not getattr(self, "probability_", False):
            raise NotFittedError("predict_proba is not available when fitted with "
                                 "probability=False")
        if hasattr(self, "estimators_"):
            return multiclass_predict_proba(self, self._validate_predict(X))
        from ..calibration import platt_proba
        p1 = platt_proba(self.decision_function(X), float(self.probA_[0]),
                         float(self.probB_[0]))
        return np.column_stack([1.0 - p1, p1])

    @available_if(_probability_on)
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "classes_")
        if hasattr(self, "estimators_"):
            return self._multiclass_predict(X)
        f = self.decision_function(X)
        return self.classes_[(f > 0).astype(int)]

    def _multiclass_predict(self, X: Any) -> np.ndarray:
        """Labels of a multiclass fit (:func:`primaldual.multiclass.multiclass_predict`)."""
        _check_break_ties(self)
        X = self._validate_predict(X)
        return multiclass_predict(self, X)


class Regressor(RegressorMixin, KernelMethod):
    """Regression methods: ``predict(X)`` is ``f(x) = sum_i beta_i k(x, x_i) + b``; as in
    scikit-learn, a regressor has no ``decision_function`` (``hasattr`` is False)."""

    _task = "regression"

    def predict(self, X: Any) -> np.ndarray:
        """``f(x) = sum_i dual_coef_i k(x, x_i) + intercept_``."""
        return KernelMethod.decision_function(self, X)

    @available_if(_no_decision_function)
    def decision_function(self, X: Any) -> np.ndarray:  # pragma: no cover - never available
        return self.predict(X)
