"""What every method shares: data preparation, the fit pipeline, recovery helpers, estimator API.

The pipeline (docs/architecture.md, one direction)::

    method(hyper-parameters) --_validate_params--> params (checked once, ``_params.py``)
        --_prepare--> FitData (X, y, kernel, C_i, params) --_primal/_dual--> Problem
        --backend--> Solution --_from_dual/_from_primal--> Recovered (beta, b, points)
        --certify(primal, dual)--> Certificate --> fitted attributes (alpha_, dual_coef_, ...)

A method class implements four functions: ``_primal(data)``, ``_dual(data)``,
``_from_dual(data, solution)`` and ``_from_primal(data, solution)``; everything else is here,
the steps before the problem (parameters, ``gamma``, rows, ``C_i``) included; those around
the solve are in :mod:`._steps`.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._available_if import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from ..backends import SPARSE_ROWS
from ..certificate import (
    Certificate,
    audit_tolerance,
    certify,
    objective_unit,
)
from ..engine import atomic_fit
from ..engine import finish as engine_finish
from ..engine import solve as engine_solve
from ..kernels import Kernel, make_kernel, matvec_cache
from ..kernels.gram import sorted_csr
from ..model.problem import Problem
from ..solution import Solution
from ..validation import check_precomputed_kernel
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
    _scale_hint,
    bias_from_gradient,
    mean_or_midpoint,
    support_split,
)
from ._fitted import FittedState
from ._multiclass_predict import check_break_ties, multiclass_predict, multiclass_predict_proba
from ._params import FORMS, ParamCheck, check_backend, check_form, validate_params
from ._steps import (
    _VALIDATED,
    _check_densify_memory,
    _params_key,
    _unique_labels,
    _var,
    apply_class_weight,
    check_lowrank_factor,
)
from ._structure import dual_structure
from ._task import CatalogueTask


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
        naming the parameter), once per class and plain values."""
        params = self.get_params(deep=False)
        table = self._parameter_constraints
        key = _params_key(type(self), table, params)
        hit = None if key is None else _VALIDATED.get(key)
        if hit is not None and hit[0] is table:
            return dict(hit[1])
        out = validate_params(type(self).__name__, params, table)
        if key is not None and len(_VALIDATED) < 512:
            # (the entry holds the table: its id cannot be reused by another table meanwhile)
            _VALIDATED[key] = (table, dict(out))
        return out

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

    def _certify(self, data: FitData, rec: Recovered, task: CatalogueTask,
                 status: str) -> Certificate:
        """The certificate of ``rec``: a dual that is a box QP with finite bounds (linearly
        penalised slacks) is certified by its bidual at the predictor
        (:func:`~primaldual.certificate.box_qp_certificate`, no expression objects); anything
        else through the modelling layer (:func:`~primaldual.certificate.certify`) on the
        task's primal and dual (``task.P``, ``task.D``: built only on that route)."""
        upper = task.upper
        cert = box_qp_fast_certificate(data, rec, task.D, status, upper)
        if cert is not None:
            return cert
        return certify(task.P, rec.primal_point, rec.primal_multipliers, task.D,
                       rec.dual_point, status=status, unit=objective_unit(upper))

    # ----- data
    def _kernel(self, X: np.ndarray, params: dict[str, Any] | None = None) -> Kernel:
        p = self._validate_params() if params is None else params
        return make_kernel(p["kernel"], p["gamma"], p["degree"], p["coef0"], X)

    def _sample_C(self, y_pm: np.ndarray, sample_weight: Any, C: float,
                  cw: Any = None) -> np.ndarray:
        """``C_i = C * sample_weight_i * class_weight[y_i]`` (``cw``: the validated
        ``class_weight``)."""
        Ci = np.full(y_pm.shape[0], C, dtype=float)
        if sample_weight is not None:
            sw = np.asarray(sample_weight, dtype=float)
            if sw.shape != (y_pm.shape[0],):
                raise ValueError(f"sample_weight must have shape ({y_pm.shape[0]},), "
                                 f"got {sw.shape}")
            if not np.all(np.isfinite(sw)) or np.any(sw < 0):
                raise ValueError("sample_weight must be finite and >= 0")
            Ci = Ci * sw
        if cw is not None and self._task == "classification":
            apply_class_weight(Ci, y_pm, cw, self._binary_classes)
        return Ci

    def _prepare(self, X: Any, y: Any, sample_weight: Any = None,
                 params: dict[str, Any] | None = None) -> FitData:
        """Validate ``X``, ``y`` into a :class:`FitData` (labels mapped to -1/+1 for classifiers),
        with the validated ``params`` (validated here when not given). Used by
        ``primal``/``dual``/``fit``."""
        params = self._validate_params() if params is None else params
        if not params.get("_xy_checked"):  # fit validated X, y already (once)
            X = np.asarray(X, dtype=float) if not hasattr(X, "dtype") else X
            X, y = self._validate_xy(X, y)
        if params["kernel"] == "precomputed":
            check_precomputed_kernel(X, "X")
        if self._task == "classification":
            # (a multiclass fit passes its sub-problem's classes, {0, 1}, checked present)
            classes = params.get("_classes")
            if classes is None:
                classes = np.unique(y)
            if classes.shape[0] != 2:
                raise ValueError(f"{type(self).__name__}.primal/dual need exactly 2 classes in y, "
                                 f"got {classes.shape[0]}")
            self._binary_classes = classes
            y_pm = np.where(y == classes[1], 1.0, -1.0)
        else:
            y_pm = np.asarray(y, dtype=float)
        Ci = self._sample_C(y_pm, sample_weight, self._box_C(params), params.get("class_weight"))
        sg = params.get("_shared_gram")
        if sg is None:
            # (a multiclass fit builds its sub-problems' kernel object once: "_kernel")
            kernel = params.get("_kernel")
            if kernel is None:
                kernel = self._kernel(X, params)
            return FitData(X, y_pm, kernel, Ci, params=params)
        # a multiclass sub-problem: its kernel matrix is K[rows][:, rows] of the Gram matrix
        # its parent computed once on the full X, with the same kernel object
        return FitData(X, y_pm, sg.kernel, Ci, extra={"shared_gram": sg}, params=params)

    def _validate_xy(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        from sklearn.utils.validation import check_X_y
        X, y = check_X_y(X, y, dtype=np.float64, y_numeric=self._task == "regression")
        if self._task == "classification":
            check_classification_targets(y)
        return X, y
    # ----- public problem API (the documented contract, docs/api.md)
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
    def _fit_task(self, data: FitData, form: str) -> CatalogueTask:
        """This fit bound to ``data`` as a task of the fit engine."""
        if form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {form!r}")
        return CatalogueTask(self, data, form)

    def _solve(self, data: FitData, backend: str, form: str, task: CatalogueTask | None = None,
               **opts: Any) -> tuple[Solution, Recovered, CatalogueTask]:
        """The engine's solve and this method's recovery on ``task`` (default: a new
        :class:`._task.CatalogueTask` of ``data``): ``(solution, recovered, task)`` (the
        task's ``P`` and ``D`` are the primal and the dual, built when read); ``opts`` go
        to the backend as they are (``alpha0``, ``record_trace``)."""
        if task is None:
            task = self._fit_task(data, form)
        sol, _ = engine_solve(task, backend, **opts)
        return sol, task.recover(sol), task

    def _check_lowrank_factor(self, data: FitData, sol: Solution) -> None:
        """:func:`._steps.check_lowrank_factor` of this fit."""
        check_lowrank_factor(self, data, sol)

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
        or the kernel takes no gamma."""
        p = self._validate_params() if params is None else params
        gamma, kernel = p["gamma"], p["kernel"]
        if isinstance(gamma, str) and isinstance(kernel, str) and gamma in ("scale", "auto") \
                and kernel not in ("linear", "precomputed", "bspline"):
            g = None
            if gamma == "scale" and type(X) is np.ndarray and X.dtype == np.float64 \
                    and X.ndim == 2 and X.shape[1]:
                # the factory's formula on the array it would use (np.asarray(X) is X), without
                # its second finiteness pass (fit validated X); any other variance (0:
                # constant or underflowed; subnormal; NaN, inf: overflow) goes to the factory,
                # which raises or resolves
                with np.errstate(over="ignore", invalid="ignore"):  # (the factory says why)
                    var = _var(X)
                if math.isfinite(var) and var > 0 and math.isfinite(1.0 / (X.shape[1] * var)):
                    g = 1.0 / (X.shape[1] * var)
            if g is None:
                from ..kernels.factory import resolve_gamma
                g = resolve_gamma(gamma, X)
            if not g > 0:  # "scale" with X.var() = inf: 1 / (d inf) = 0
                raise ValueError("gamma='scale': X.var() overflows (X holds values near the "
                                 "float64 limit), so the kernel width is 0 and the model would "
                                 "not be finite. The dual coefficients or intercepts are not "
                                 "finite; rescale X (e.g. StandardScaler)")
            return g
        return gamma

    @staticmethod
    def _backend_form(params: dict[str, Any], backend: str | None, form: str | None
                      ) -> tuple[str, str]:
        """``fit``'s ``backend``/``form`` arguments (checked) or else the parameters; a rank
        asked for makes ``"auto"`` the low-rank backend."""
        backend = params["backend"] if backend is None else check_backend(backend, "backend")
        form = params["form"] if form is None else check_form(form, "form")
        if backend == "auto" and (params.get("rank") or params.get("rank_tol")):
            backend = "lowrank"  # a rank was asked for: the low-rank eta-reformulation
        return backend, form

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
        task = self._fit_task(data, form)
        sol, rec, _ = self._solve(data, backend, form, task=task)
        engine_finish(task, sol, rec, t0)
        return rec

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
        check_break_ties(self)
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
