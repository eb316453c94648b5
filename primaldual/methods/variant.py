"""A user's variant as a scikit-learn estimator: :class:`Variant`.

The road (docs/write_your_own_variant.md)::

    spec (a primal on placeholders X, y, N, Param)  --dualize, once per spec-->  derivation_
        --bind(X, y, kernel, params) per fit (the first fit of a shape learns the bound
          derivation as a function of the data, later fits bind that, no reduction)-->
        numeric dual  --backend chosen from its
        structure (primaldual.backends.choose)-->  Solution  --recover-->  primal point
        --certify(primal, dual)-->  certificate_
        decision expression at the point  -->  the expansion predict uses:
            f(x) = sum_{j in S} B_j k(x, x_j) + x^T L + c + q k(x, x)   (one per decision)

``B``, ``L`` and ``c`` are read off the decision expression at the recovered point (the
expression is affine in the point and in ``x``) and checked against it on training rows; the
certificate and ``certificate_.f`` are computed from the same point, so what is certified is
what predicts.

Two ways to write a spec:

* **placeholders** (preferred): a :class:`~primaldual.model.Problem` written on ``X``, ``y``,
  ``N`` and :class:`~primaldual.model.Param` (no data); derived once, bound to each data set;
  the decision is an expression in the new-input placeholder ``x`` (``w @ phi(x) - rho``);
* **a factory** ``spec(X, y, kernel, **params) -> (Problem, decision)`` building a
  data-embedded primal and its decision on the training rows (``w @ phi(X) + b``, read row by
  row as a function of ``x_i``); derived per fit. Useful for primals the placeholders do not
  express (per-class row blocks, e.g. SVOR-EXC; extra data such as SVM+'s ``X_star``).

Hyper-parameters named by the spec's ``Param`` objects (or, for a factory, the keyword
arguments given) are estimator parameters: ``get_params``/``set_params``/``clone``/grid
search see ``nu``, ``C``, ... as they see ``kernel`` and ``gamma``.
"""

from __future__ import annotations

import functools
import inspect
import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils._available_if import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..engine import atomic_fit
from ..engine import finish as engine_finish
from ..engine import solve as engine_solve
from ..kernels import Kernel, kernel_matvec, make_kernel, matvec_cache
from ..kernels.gram import kernel_diag
from ..validation import check_choice, check_positive
from ._params import check_backend
from ._variant_expansion import _spec_box_qp
from ._variant_spec import (  # noqa: F401  (derive, spec_fingerprint: also imported from here)
    _bound,
    _is_factory,
    _is_spec,
    _spec_uses,
    derive,
    spec_fingerprint,
    spec_param_names,
)
from ._variant_task import VariantTask

__all__ = ["TASKS", "Variant", "spec_param_names"]

#: What ``predict`` returns: ``"classification"`` (binary labels, ``classes_[f > 0]``),
#: ``"regression"`` (``f``), ``"ordinal"`` (``classes_[#{k: f_k(x) > 0}]``, one decision per
#: threshold), ``"novelty"`` (``+1`` where ``f >= 0``, else ``-1``, as ``OneClassSVM``);
#: ``"auto"``: novelty for a spec without ``y``, classification otherwise.
TASKS = ("auto", "classification", "regression", "ordinal", "novelty", "ranking")
#: The constructor's own parameters (the spec's hyper-parameters come after them).
_OWN = ("spec", "decision", "task", "kernel", "gamma", "degree", "coef0", "backend", "tol",
        "max_iter", "cache_size")



# ----------------------------------------------------------------------------- classes per spec
@functools.cache
def _variant_class(names: tuple[str, ...]) -> type:
    """``Variant`` with the spec's hyper-parameters ``names`` in its constructor's signature
    (scikit-learn reads an estimator's parameters from that signature): one class per tuple of
    names, named ``Variant`` too."""
    base = inspect.signature(Variant.__init__)
    own = [p for p in base.parameters.values() if p.kind is not p.VAR_KEYWORD]
    extra = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None) for n in names]

    def __init__(self, spec, decision=None, **kwargs):  # noqa: N807
        for n in names:
            kwargs.setdefault(n, None)
        Variant.__init__(self, spec, decision, **kwargs)

    __init__.__signature__ = base.replace(parameters=own + extra)  # type: ignore[attr-defined]
    __init__.__doc__ = Variant.__init__.__doc__
    return type("Variant", (Variant,), {"__init__": __init__, "_hyper": names,
                                        "__module__": Variant.__module__,
                                        "__qualname__": "Variant", "__doc__": Variant.__doc__})


def _restore_variant(names: tuple[str, ...]) -> Variant:
    """Unpickling: an empty instance of the class for ``names`` (state set afterwards)."""
    cls = _variant_class(tuple(names)) if names else Variant
    return object.__new__(cls)


# ----------------------------------------------------------------------------- the estimator
class Variant(BaseEstimator):
    """A primal spec and its decision expression as a scikit-learn estimator.

    Parameters
    ----------
    spec : Problem on placeholders, or callable
        The primal, written on the placeholders ``X``, ``y``, ``N`` and ``Param`` objects
        (derived once, :attr:`derivation_`), or a factory ``spec(X, y, kernel, **params)``
        returning a data-embedded :class:`~primaldual.model.Problem` (derived per fit).
    decision : expression or sequence of expressions
        The decision function in the new-input placeholder ``x``, affine in the primal
        variables: ``w @ phi(x) + b`` (classifier), ``w @ phi(x) - rho`` (one-class),
        ``x @ w + b`` (a linear model), or one expression per threshold (ordinal regression).
    task : {"auto", "classification", "regression", "ordinal", "novelty", "ranking"}
        What ``predict`` returns (:data:`TASKS`). Classification maps the two labels to
        ``y = -1, +1`` (``classes_[1]`` is ``+1``), ordinal ones to ``y = 0..r-1``; ranking
        takes ``y`` as numeric relevance grades, ``predict`` returns the scores ``f(x)`` and
        ``score(X, y, qid=None)`` is the pairwise accuracy within each query
        (:func:`primaldual.ranking.ranking_score`), never an R².
    kernel, gamma, degree, coef0 : as scikit-learn's ``SVC``
        The kernel of every feature-space variable of the spec.
    backend : {"auto", "smo", "kkt", "lowrank", "cvxpy"}
        ``"auto"``: chosen from the structure of the derived dual
        (:func:`primaldual.backends.choose`), e.g. SMO for a box QP with one equality.
    tol, max_iter, cache_size : SMO's stopping tolerance, iteration cap, kernel cache (MB).
    **hyper : the spec's hyper-parameters by name (``nu=0.1``, ``C=1.0``).

    Attributes
    ----------
    derivation_ : Derivation
        The symbolic derivation (placeholder spec; the same object for every fit of this
        spec) or the derivation of this fit's primal (factory).
    certificate_ : Certificate
        Primal and dual value, gap and KKT residuals at the recovered point, computed by
        :func:`primaldual.certify` from the point ``predict`` uses (``certificate_.f``:
        the decision values on the training rows).
    support_, support_vectors_ : indices and rows with a nonzero expansion coefficient.
    dual_coef_ : ndarray (n_decisions, n_SV)
        Expansion coefficients ``B`` of ``f(x) = sum_j B_j k(x, x_j) + x^T L + c``.
    intercept_ : ndarray (n_decisions,)
        ``c``; ``linear_coef_`` is ``L`` (``None`` when the decision has no ``x^T`` term).
    diag_coef_ : ndarray (n_decisions,) or None
        ``q`` of a ``q k(x, x)`` term: SVDD's ``R^2 - ||phi(x) - a||^2`` is
        ``R^2 - ||a||^2 + 2 <a, phi(x)> - k(x, x)``, so ``q = -1`` on a linear or polynomial
        kernel; ``None`` when there is none (on RBF ``k(x, x) = 1`` is part of ``c``).
    point_ : dict
        The recovered primal point (feature-space variables as coefficients over the
        training rows).
    backend_, status_, n_iter_, classes_ (classification/ordinal), offset_ (novelty).

    Examples
    --------
    >>> oc = Variant(one_class, decision=w @ phi(x) - rho, kernel="rbf",
    ...              gamma=0.5, nu=0.1)                                      # doctest: +SKIP
    >>> oc.fit(X_train).predict(X_test); oc.certificate_                     # doctest: +SKIP
    """

    _hyper: tuple[str, ...] = ()

    def __new__(cls, spec: Any = None, decision: Any = None, **kwargs: Any) -> Variant:
        if cls is Variant:
            clash = sorted(set(spec_param_names(spec)) & set(_OWN))
            if clash:
                raise ValueError(f"spec: the Param name(s) {clash} are Variant's own parameters "
                                 f"(the kernel's, the solver's); rename the Param(s), e.g. "
                                 f"Param({clash[0] + '_'!r})")
            names = tuple(dict.fromkeys([*spec_param_names(spec),
                                         *(k for k in kwargs if k not in _OWN)]))
            if names:
                cls = _variant_class(names)
        return object.__new__(cls)

    def __init__(self, spec: Any, decision: Any = None, *, task: str = "auto",
                 kernel: Any = "rbf", gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, backend: str = "auto", tol: float = 1e-3,
                 max_iter: int = -1, cache_size: float = 200.0, **hyper: Any) -> None:
        self.spec = spec
        self.decision = decision
        self.task = task
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.backend = backend
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        unknown = [k for k in hyper if k not in self._hyper]
        if unknown:
            raise TypeError(f"Variant got unexpected keyword argument(s) {unknown}; this "
                            f"spec's hyper-parameters are {list(self._hyper)}")
        for k in self._hyper:
            setattr(self, k, hyper.get(k))

    # ----- scikit-learn plumbing
    def __sklearn_clone__(self) -> Variant:
        """A copy with the same parameters; the spec and the decision are shared, not copied
        (they are immutable, and the derivation is cached per spec object)."""
        p = self.get_params(deep=False)
        kw = {k: (v if k in ("spec", "decision") else clone(v, safe=False))
              for k, v in p.items()}
        return type(self)(**kw)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters and the spec's hyper-parameters (``deep``: also those
        of parameters that are estimators; the spec and the decision are recorded expressions,
        never estimators, and are not searched)."""
        out = super().get_params(deep=False)
        if deep:
            for k, v in list(out.items()):
                if k not in ("spec", "decision") and isinstance(v, BaseEstimator):
                    out.update({f"{k}__{kk}": vv for kk, vv in v.get_params().items()})
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_restore_variant, (type(self)._hyper,), self.__getstate__())

    def __getstate__(self) -> dict:
        state = dict(super().__getstate__())
        if _is_spec(state.get("spec")):
            state.pop("derivation_", None)  # rebuilt from the spec (derive) on unpickling
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if "dual_coef_" in state and "derivation_" not in state and _is_spec(self.spec):
            self.derivation_ = derive(self.spec)

    def _task(self) -> str:
        task = check_choice(self.task, "task", TASKS)
        if task != "auto":
            return task
        if self.spec is None and "_stored_task" in self.__dict__:
            return self.__dict__["_stored_task"]   # a model file loaded without its spec
        uses_y = _spec_uses(self.spec, "y") if _is_spec(self.spec) else True
        return "novelty" if uses_y is False else "classification"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            task = self._task()
        except (ValueError, TypeError):
            task = "classification"
        if task in ("classification", "ordinal"):
            from sklearn.utils import ClassifierTags
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags(multi_class=task == "ordinal")
            tags.target_tags.required = True
        elif task in ("regression", "ranking"):
            from sklearn.utils import RegressorTags
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
            tags.target_tags.required = True
        else:
            tags.estimator_type = "outlier_detector"
            tags.target_tags.required = False
        tags.input_tags.sparse = False
        return tags

    # ----- parameters
    def _validated(self) -> dict[str, Any]:
        spec = self.spec
        if spec is None:
            raise ValueError("Variant: spec is None (a model loaded without its spec predicts, "
                             "but refitting needs the spec: pass spec= to load)")
        if not (_is_spec(spec) or _is_factory(spec)):
            raise TypeError("spec must be a Problem written on placeholders (X, y, N, Param) "
                            "or a factory spec(X, y, kernel, **params) -> Problem, got "
                            f"{type(spec).__name__}")
        if self.decision is None and not _is_factory(spec):
            raise ValueError("decision must be given: the decision function in the new-input "
                             "placeholder x, e.g. w @ phi(x) + b")
        p = {"task": self._task(), "backend": check_backend(self.backend, "backend"),
             "tol": check_positive(self.tol, "tol")}
        from ..validation import check_cache_size, check_max_iter
        p["max_iter"] = check_max_iter(self.max_iter, "max_iter")
        p["cache_size"] = check_cache_size(self.cache_size, "cache_size")
        hyper = {}
        for k in self._hyper:
            v = getattr(self, k)
            if v is None:
                raise ValueError(f"Variant: the spec's hyper-parameter {k!r} is not set "
                                 f"(pass {k}=... to Variant or set_params)")
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)) \
                    or not np.isfinite(float(v)):
                raise TypeError(f"Variant: hyper-parameter {k!r} must be a finite number, got "
                                f"{type(v).__name__} {v!r}")
            hyper[k] = float(v)
        p["hyper"] = hyper
        return p

    def _decisions(self) -> list[Any]:
        d = self.decision
        return list(d) if isinstance(d, (list, tuple)) else [d]

    # ----- data
    def _encode_y(self, y: Any, task: str) -> np.ndarray | None:
        if task == "novelty":
            return None
        if task in ("regression", "ranking"):
            return np.asarray(y, dtype=float)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        r = self.classes_.shape[0]
        if task == "classification":
            y_type = type_of_target(y, input_name="y", raise_unknown=True)
            if r > 2 or y_type not in ("binary", "unknown") and r != 1:
                raise ValueError("Only binary classification is supported (Variant with "
                                 f"task='classification'). The type of the target is {y_type} "
                                 f"({r} classes; task='ordinal' for ordered classes)")
            if r != 2:
                raise ValueError(f"Variant(task='classification') needs 2 classes in y, got {r} "
                                 "class")
            return np.where(y == self.classes_[1], 1.0, -1.0)
        if r < 2:
            raise ValueError(f"Variant(task='ordinal') needs at least 2 classes in y, got {r} "
                             "class")
        return np.searchsorted(self.classes_, y).astype(float)

    def _kernel_for(self, X: np.ndarray) -> Kernel:
        gamma = self.gamma
        if isinstance(gamma, str):
            gamma = check_choice(gamma, "gamma", ("scale", "auto"))
        elif isinstance(gamma, (bool, np.bool_)) or not isinstance(gamma, (int, float,
                                                                            np.number)):
            raise TypeError(f"gamma must be 'scale', 'auto' or a number > 0, got {gamma!r}")
        else:
            gamma = check_positive(gamma, "gamma")
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            raise ValueError("kernel='precomputed' is not supported by Variant (the decision "
                             "is evaluated on new rows through the kernel)")
        if isinstance(gamma, str) and isinstance(self.kernel, str) and self.kernel not in (
                "linear", "bspline"):
            from ..kernels.factory import resolve_gamma
            gamma = resolve_gamma(gamma, X)
            if not gamma > 0:
                raise ValueError("gamma='scale': X.var() is 0 or overflows; give gamma as a "
                                 "number")
        return make_kernel(self.kernel, gamma, self.degree, self.coef0, X)

    def _bind(self, X: np.ndarray, y: np.ndarray | None, kernel: Kernel,
              hyper: dict[str, float], data: dict[str, Any]) -> tuple[Any, Any, list[Any]]:
        """``(derivation_, bound derivation, decision expressions)`` of this fit."""
        if _is_spec(self.spec):
            if data:
                raise TypeError(f"fit: further data ({', '.join(data)}) is passed to a factory "
                                "spec(X, y, kernel, ...); a placeholder spec binds X and y only")
            der = derive(self.spec)
            return der, _bound(der, self.spec, X, y, kernel, hyper), self._decisions()
        from ..model.dualize import dualize
        out = self.spec(X, y, kernel, **data, **hyper)
        P, dec = (out if isinstance(out, tuple) and len(out) == 2 else (out, None))
        if not hasattr(P, "constraints"):
            raise TypeError(f"spec(X, y, kernel, **params) must return a Problem (or a pair "
                            f"(Problem, decision on the training rows)), got {type(P).__name__}")
        if dec is None and self.decision is None:
            raise ValueError("decision must be given (or returned by the factory with the "
                             "Problem: (P, w @ phi(X) + b))")
        der = dualize(P)
        # the training rows and kernel: a linear decision x_i^T w and a kernel expansion K u
        # on the training rows are read with them (_evaluate_rows)
        setattr(der, "_variant_X", X)  # noqa: B010
        setattr(der, "_variant_kernel", kernel)  # noqa: B010
        decs = (list(dec) if isinstance(dec, (list, tuple)) else [dec]) if dec is not None \
            else self._decisions()
        return der, der, decs

    # ----- fit
    @atomic_fit
    def fit(self, X: Any, y: Any = None, backend: str | None = None, **data: Any) -> Variant:
        """Derive (once per spec), bind to ``X`` (and ``y``), solve the derived dual with the
        backend its structure selects, recover the primal point, certify it, and keep the
        expansion the decision expression gives at that point.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
        y : array-like (n_samples,), optional
            Labels (classification, ordinal), targets (regression); ignored for novelty.
        backend : {"auto", "smo", "kkt", "lowrank", "cvxpy"}, optional
            This fit's backend (default: the ``backend`` parameter); ``"auto"`` chooses from the
            structure of the derived dual (:func:`primaldual.backends.choose`).
        **data : further named data the spec is written on (e.g. SVM+'s privileged
            features ``X_star``), passed to ``bind`` (or to the factory) by name.
        """
        p = self._validated()
        if backend is not None:
            p["backend"] = check_backend(backend, "backend")
        task = p["task"]
        t0 = time.perf_counter()
        if task == "novelty" and y is not None and _is_spec(self.spec) \
                and _spec_uses(self.spec, "y") is not False:
            # a detector trained on targets and negatives (SVDD with negative examples):
            # the spec reads the labels y in {+1, -1}, the prediction stays f >= 0
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
            y_enc = np.asarray(y, dtype=float)
            if not np.all(np.isin(y_enc, (-1.0, 1.0))):
                raise ValueError("Variant(task='novelty') with a spec on y: y must be +1 "
                                 "(targets) or -1 (negative examples)")
        elif task == "novelty" or y is None:
            if task != "novelty":
                raise ValueError(f"Variant(task={task!r}) requires y to be passed, but the "
                                 "target y is None")
            X = validate_data(self, X, dtype=np.float64)
            y_enc = None
        else:
            X, y = validate_data(self, X, y, dtype=np.float64,
                                 y_numeric=task in ("regression", "ranking"))
            y_enc = self._encode_y(y, task)
        data = {k: np.asarray(v, dtype=float) for k, v in data.items()}
        for k, v in data.items():
            # a placeholder spec binds its named data row by row; a factory takes data sets
            # of any length (a universum U, a source domain) and indexes them itself
            rows_ok = v.shape[:1] == X.shape[:1] or not _is_spec(self.spec)
            if not rows_ok or not np.all(np.isfinite(v)):
                need = "one finite row per sample of X" if _is_spec(self.spec) else "finite"
                raise ValueError(f"fit: {k} must be {need} ({X.shape[0]} rows in X), got "
                                 f"shape {v.shape}")
        kernel = self._kernel_for(X)
        with matvec_cache():
            der, bd, decisions = self._bind(X, y_enc, kernel, p["hyper"], data)
            # a bound derivation reused from an earlier fit on the same rows (:func:`_bound`:
            # an equal kernel spec) holds that fit's kernel object: the fit's products are
            # cached per kernel object, so the model keeps the one its products were taken with
            env = getattr(bd, "_env", None)
            if env is not None and env.kernel is not None:
                kernel = env.kernel
            if _is_spec(self.spec):
                _spec_box_qp(der, bd, X, y_enc, kernel, p["hyper"])
            task = VariantTask(self, der, bd, decisions, X, kernel, p,
                               time.perf_counter() - t0)
            sol, _ = engine_solve(task, p["backend"])
            rec = task.recover(sol)
            engine_finish(task, sol, rec, t0)
        return self

    # ----- predict
    def _raw_decision(self, X: np.ndarray, expansion: tuple | None = None) -> np.ndarray:
        """``f(x) = K(X, SV) B + X L + c + q k(x, x)``, one column per decision expression.

        ``expansion = (P, S)`` names the support vectors as the rows ``S`` of the expansion
        points ``P`` (``support_vectors_ = P[S]``, the same numbers): the fit's training
        decision, whose product ``K(X, P[S]) B`` the recovery and the certificate asked for
        already, is then read from the fit's product cache
        (:func:`~primaldual.kernels.matvec_cache`) instead of evaluated again."""
        B = self.dual_coef_.T
        f = np.tile(np.asarray(self.intercept_, dtype=float), (X.shape[0], 1))
        Z, cols = (self.support_vectors_, None) if expansion is None else expansion
        if B.shape[0]:
            for j in range(B.shape[1]):
                f[:, j] += kernel_matvec(self.kernel_, X, B[:, j], columns=cols, Z=Z)
        if self.linear_coef_ is not None:
            f += X @ self.linear_coef_
        q = getattr(self, "diag_coef_", None)
        if q is not None:
            f += np.outer(kernel_diag(self.kernel_, X), q)
        return f

    def _has_decision_function(self) -> bool:
        if self._task() in ("regression", "ranking"):
            raise AttributeError(f"a {self._task()} Variant has no decision_function "
                                 "(scikit-learn's convention); predict(X) returns f(x)")
        return True

    @available_if(_has_decision_function)
    def decision_function(self, X: Any) -> np.ndarray:
        """The decision expression at the fitted point on the rows of ``X``:
        ``f(x) = sum_j B_j k(x, x_j) + x^T L + c + q k(x, x)`` (shape ``(n,)``, or ``(n, k)``
        for ``k`` decision expressions). A regression variant has none: its ``predict`` is ``f``."""
        return self._decision(X)

    def _decision(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "dual_coef_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        f = self._raw_decision(X)
        return f[:, 0] if f.shape[1] == 1 else f

    def predict(self, X: Any) -> np.ndarray:
        """Labels (classification: ``classes_[f > 0]``; ordinal: ``classes_[#{k: f_k > 0}]``),
        values (regression: ``f``) or ``+1``/``-1`` (novelty: ``f >= 0``)."""
        check_is_fitted(self, "dual_coef_")
        task = self._task()
        f = self._decision(X)
        if task in ("regression", "ranking"):
            return f
        if task == "novelty":
            return np.where(f >= 0, 1, -1)
        F = f.reshape(f.shape[0], -1)
        if task == "ordinal":
            return self.classes_[np.minimum((F > 0).sum(axis=1), self.classes_.shape[0] - 1)]
        return self.classes_[(F[:, 0] > 0).astype(int)]

    def score(self, X: Any, y: Any, sample_weight: Any = None, qid: Any = None) -> float:
        """Accuracy (classification, ordinal; novelty with ``y`` in ``{+1, -1}``), the
        coefficient of determination ``R^2`` (regression), or for ranking the fraction of
        pairs of rows of one query (``qid``; ``None``: one query) with different grades ``y``
        that the scores order as the grades do."""
        if y is None:
            raise ValueError("score: y is None; pass the true labels (+1 inlier, -1 outlier "
                             "for a novelty detector)")
        from sklearn.metrics import accuracy_score, r2_score
        pred = self.predict(X)
        if self._task() == "ranking":
            if sample_weight is not None:
                raise ValueError("score: sample_weight is not defined for task='ranking'")
            from ..ranking import ranking_score
            return ranking_score(y, pred, qid)
        if self._task() == "regression":
            return float(r2_score(y, pred, sample_weight=sample_weight))
        return float(accuracy_score(y, pred, sample_weight=sample_weight))

    def _is_novelty(self) -> bool:
        if self._task() != "novelty":
            raise AttributeError("score_samples/fit_predict exist for task='novelty' only")
        return True

    @available_if(_is_novelty)
    def score_samples(self, X: Any) -> np.ndarray:
        """``decision_function(X) + offset_`` (scikit-learn's outlier-detector convention)."""
        return self._decision(X) + self.offset_

    @available_if(_is_novelty)
    def fit_predict(self, X: Any, y: Any = None, **data: Any) -> np.ndarray:
        """``fit(X).predict(X)``."""
        return self.fit(X, **data).predict(X)
