"""A user's variant as a scikit-learn estimator: :class:`Variant`.

The road (docs/write_your_own_variant.md)::

    spec (a primal on placeholders X, y, N, Param)  --dualize, once per spec-->  derivation_
        --bind(X, y, kernel, params) per fit--> numeric dual  --backend chosen from its
        structure (primaldual.backends.choose)-->  Solution  --recover-->  primal point
        --certify(primal, dual)-->  certificate_
        decision expression at the point  -->  the expansion predict uses:
            f(x) = sum_{j in S} B_j k(x, x_j) + x^T L + c          (one column per decision)

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
import hashlib
import inspect
import time
from collections import OrderedDict
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils._available_if import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..backends import estimator_options, get_backend
from ..backends import select as select_backend
from ..certificate import audit, audit_negative_gap, audit_tolerance, certify, objective_unit
from ..kernels import Kernel, kernel_matvec, make_kernel, matvec_cache
from ..solution import InfeasibleProblemError
from ..validation import NumericalTroubleError, audit_kernel, check_choice, check_positive
from ._fit import atomic_fit, snap_interior_point
from ._params import check_backend
from ._structure import ON_CLEAR

__all__ = ["TASKS", "Variant", "spec_param_names"]

#: What ``predict`` returns: ``"classification"`` (binary labels, ``classes_[f > 0]``),
#: ``"regression"`` (``f``), ``"ordinal"`` (``classes_[#{k: f_k(x) > 0}]``, one decision per
#: threshold), ``"novelty"`` (``+1`` where ``f >= 0``, else ``-1``, as ``OneClassSVM``);
#: ``"auto"``: novelty for a spec without ``y``, classification otherwise.
TASKS = ("auto", "classification", "regression", "ordinal", "novelty")
#: The constructor's own parameters (the spec's hyper-parameters come after them).
_OWN = ("spec", "decision", "task", "kernel", "gamma", "degree", "coef0", "backend", "tol",
        "max_iter", "cache_size")


# ----------------------------------------------------------------------------- the spec
def _deferred_type() -> type | None:
    try:
        from ..model.placeholders import Deferred
    except ImportError:  # pragma: no cover - the placeholders are part of the model
        return None
    return Deferred


def _is_deferred(obj: Any) -> bool:
    D = _deferred_type()
    return D is not None and isinstance(obj, D)


def _is_spec(spec: Any) -> bool:
    """A placeholder spec (a recorded ``Problem``: derived without data, bound per fit)."""
    return _is_deferred(spec)


def _is_factory(spec: Any) -> bool:
    """A function ``spec(X, y, kernel, **params) -> Problem`` (data-embedded, derived per
    fit)."""
    return callable(spec) and not _is_deferred(spec) and not isinstance(spec, type) \
        and not hasattr(spec, "constraints")


def spec_param_names(spec: Any) -> tuple[str, ...]:
    """The names of the ``Param`` objects a placeholder spec uses (its hyper-parameters), in
    order of appearance; ``()`` for a factory (its parameters are the keyword arguments the
    estimator is given)."""
    if not _is_spec(spec):
        return ()
    return tuple(str(p) for p in spec.params)


def _spec_uses(spec: Any, name: str) -> bool | None:
    """Whether a placeholder spec uses the placeholder ``name`` (``None``: cannot tell)."""
    v = spec.placeholders if _is_spec(spec) else None
    return None if v is None else name in {str(p) for p in v}


#: Derivations of placeholder specs, by spec identity (a spec is immutable once written):
#: derived once per spec, reused by every fit, clone and grid-search candidate.
_DERIVED: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
_DERIVED_MAX = 32


def derive(spec: Any) -> Any:
    """``dualize(spec)``, computed once per spec object (cached)."""
    hit = _DERIVED.get(id(spec))
    if hit is not None and hit[0] is spec:
        _DERIVED.move_to_end(id(spec))
        return hit[1]
    from ..model.dualize import dualize
    der = dualize(spec)
    _DERIVED[id(spec)] = (spec, der)
    while len(_DERIVED) > _DERIVED_MAX:
        _DERIVED.popitem(last=False)
    return der


#: Bound derivations by (spec, data, kernel, hyper-parameters): a refit on the same rows (a
#: benchmark loop, a warm start, a grid search's refit) binds nothing and runs no reduction.
_BOUND: OrderedDict[tuple, tuple[Any, Any]] = OrderedDict()
#: a bound derivation holds its rows: two entries keep the memory bounded
_BOUND_MAX = 2


def _forget_bound() -> None:
    _BOUND.clear()


ON_CLEAR.append(_forget_bound)


def _digest(a: np.ndarray | None) -> tuple | None:
    """A content key of an array (shape, dtype, BLAKE2 of its bytes): a row edited in place
    between two fits changes the key."""
    if a is None:
        return None
    a = np.ascontiguousarray(a)
    return a.shape, a.dtype.str, hashlib.blake2b(a.data, digest_size=16).digest()


def _bound(der: Any, spec: Any, X: np.ndarray, y: np.ndarray | None, kernel: Kernel,
           hyper: dict[str, float]) -> Any:
    """``der.bind(X, y, kernel, hyper)``, reused when the same spec was bound to the same
    rows, labels, kernel and hyper-parameters (by content). A kernel without a spec (a
    callable) is bound afresh every time: its equality cannot be told."""
    ks = kernel.spec() if hasattr(kernel, "spec") else None
    if ks is None:
        return der.bind(X=X, y=y, kernel=kernel, params=hyper)
    key = (id(spec), _digest(X), _digest(y), repr(ks), tuple(sorted(hyper.items())))
    hit = _BOUND.get(key)
    if hit is not None and hit[0] is spec:
        _BOUND.move_to_end(key)
        return hit[1]
    bd = der.bind(X=X, y=y, kernel=kernel, params=hyper)
    _BOUND[key] = (spec, bd)
    while len(_BOUND) > _BOUND_MAX:
        _BOUND.popitem(last=False)
    return bd


def spec_fingerprint(spec: Any) -> str:
    """SHA-256 of the spec's printed primal (a factory: of its qualified name), stored in a
    model file and compared on load."""
    if spec is None:
        return ""
    if _is_spec(spec):
        text = str(derive(spec).primal)     # the primal as printed (symbols only, no data)
    elif _is_factory(spec):
        text = f"factory {getattr(spec, '__module__', '')}.{getattr(spec, '__qualname__', '')}"
    else:
        text = repr(spec)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    task : {"auto", "classification", "regression", "ordinal", "novelty"}
        What ``predict`` returns (:data:`TASKS`). Classification maps the two labels to
        ``y = -1, +1`` (``classes_[1]`` is ``+1``), ordinal ones to ``y = 0..r-1``.
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
        elif task == "regression":
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
        if task == "regression":
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
            from ..kernels.factory import _resolve_gamma
            gamma = _resolve_gamma(gamma, X)
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
        if task == "novelty" or y is None:
            if task != "novelty":
                raise ValueError(f"Variant(task={task!r}) requires y to be passed, but the "
                                 "target y is None")
            X = validate_data(self, X, dtype=np.float64)
            y_enc = None
        else:
            X, y = validate_data(self, X, y, dtype=np.float64,
                                 y_numeric=task == "regression")
            y_enc = self._encode_y(y, task)
        data = {k: np.asarray(v, dtype=float) for k, v in data.items()}
        for k, v in data.items():
            if v.shape[:1] != X.shape[:1] or not np.all(np.isfinite(v)):
                raise ValueError(f"fit: {k} must have one finite row per sample of X "
                                 f"({X.shape[0]}), got shape {v.shape}")
        kernel = self._kernel_for(X)
        with matvec_cache():
            der, bd, decisions = self._bind(X, y_enc, kernel, p["hyper"], data)
            if _is_spec(self.spec):
                _spec_box_qp(der, bd, X, y_enc, kernel, p["hyper"])
            t_bind = time.perf_counter() - t0
            sol, name = self._solve(bd, p)
            point = bd.recover(sol)
            mults = bd.multipliers(sol)
            expansion = _expansion(bd, decisions, point, X, kernel)
            cert = certify(bd.primal, point, mults, bd.dual, dict(sol.values),
                           status=sol.status, unit=_unit(bd.dual))
        B, L, c, S = expansion
        self.derivation_ = der
        self.kernel_ = kernel
        self.point_ = point
        self.support_ = S
        self.support_vectors_ = X[S]
        self.dual_coef_ = B.T.copy()
        self.linear_coef_ = L
        self.intercept_ = c
        f = self._raw_decision(X)
        _check_expansion(bd, decisions, point, X, f)
        cert.f = f if f.shape[1] > 1 else f[:, 0]
        cert.extra.update({"time [s]": time.perf_counter() - t0, "bind [s]": t_bind,
                           "#SV": int(S.shape[0]), "backend": sol.backend})
        if not all(np.isfinite(v) for v in (cert.primal_objective, cert.dual_objective,
                                             cert.relative_gap)):
            raise NumericalTroubleError(f"Variant: the {sol.backend} solve gave a certificate "
                                        "that is not finite", sol)
        # the one audit rule of every road (a tol of 10 must not certify a gap of 1)
        if audit(cert, audit_tolerance(p["tol"])) != sol.status:
            sol.status = cert.status
        if audit_kernel(cert, kernel, X) != sol.status:
            sol.status = cert.status
        # a gap below round-off with an infeasible point certifies nothing (weak duality)
        if audit_negative_gap(cert) != sol.status:
            sol.status = cert.status
        self.certificate_ = cert
        self.solution_ = sol
        self.backend_ = sol.backend
        self.status_ = sol.status
        self.n_iter_ = int(sol.n_iter or 0)
        if task == "novelty":
            self.offset_ = -float(c[0])
        return self

    def _solve(self, bd: Any, p: dict[str, Any]) -> tuple[Any, str]:
        D = bd.dual
        name = select_backend(D, p["backend"])
        opts = estimator_options(name, p)   # the registry's one table of options
        sol = get_backend(name).solve(D, **opts)
        if sol.backend == "cvxpy" and sol.has_point:
            # interior-point solutions hold no exact zeros: entries below 1e-9 of their array's
            # scale become 0 before recovery, so the certificate sees the sparse point that
            # predicts (as every catalogue fit)
            snap_interior_point(sol)
        if not sol.has_point:
            if sol.status == "solver_error":
                raise NumericalTroubleError(f"Variant: the {name} backend failed on the derived "
                                            f"dual ({sol.status})", sol)
            raise InfeasibleProblemError(f"Variant: the derived dual is {sol.status} (the "
                                         "primal is infeasible or unbounded on this data)", sol)
        return sol, name

    # ----- predict
    def _raw_decision(self, X: np.ndarray) -> np.ndarray:
        """``f(x) = K(X, SV) B + X L + c``, one column per decision expression."""
        B = self.dual_coef_.T
        f = np.tile(np.asarray(self.intercept_, dtype=float), (X.shape[0], 1))
        if B.shape[0]:
            for j in range(B.shape[1]):
                f[:, j] += kernel_matvec(self.kernel_, X, B[:, j], Z=self.support_vectors_)
        if self.linear_coef_ is not None:
            f += X @ self.linear_coef_
        return f

    def _has_decision_function(self) -> bool:
        if self._task() == "regression":
            raise AttributeError("a regression Variant has no decision_function (scikit-learn's "
                                 "convention); predict(X) returns f(x)")
        return True

    @available_if(_has_decision_function)
    def decision_function(self, X: Any) -> np.ndarray:
        """The decision expression at the fitted point on the rows of ``X``:
        ``f(x) = sum_j B_j k(x, x_j) + x^T L + c`` (shape ``(n,)``, or ``(n, k)`` for ``k``
        decision expressions). A regression variant has none: its ``predict`` is ``f``."""
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
        if task == "regression":
            return f
        if task == "novelty":
            return np.where(f >= 0, 1, -1)
        F = f.reshape(f.shape[0], -1)
        if task == "ordinal":
            return self.classes_[np.minimum((F > 0).sum(axis=1), self.classes_.shape[0] - 1)]
        return self.classes_[(F[:, 0] > 0).astype(int)]

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy (classification, ordinal; novelty with ``y`` in ``{+1, -1}``) or the
        coefficient of determination ``R^2`` (regression)."""
        if y is None:
            raise ValueError("score: y is None; pass the true labels (+1 inlier, -1 outlier "
                             "for a novelty detector)")
        from sklearn.metrics import accuracy_score, r2_score
        pred = self.predict(X)
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


# ----------------------------------------------------------------------------- the structure
def _spec_box_qp(der: Any, bd: Any, X: np.ndarray, y: np.ndarray | None, kernel: Kernel,
                 hyper: dict[str, float]) -> Any:
    """The bound dual's BoxQP through the shape template of the spec (the catalogue's road,
    :func:`primaldual.methods._structure.spec_structure`): detected on the first fit of a
    shape, bound to later fits in ``O(N)``; stored in ``bd.dual.structure`` for the backend's
    choice and the solve. ``None``: not a box QP (the backend reads the Problem)."""
    from ._structure import spec_structure

    uses_y = _spec_uses(der._spec, "y") is not False
    yv = y if uses_y else None

    def build(Xp: np.ndarray, yp: np.ndarray | None, pp: dict[str, float]) -> Any:
        return der.bind(X=Xp, y=yp, kernel=kernel, params=pp).dual

    return spec_structure(der, bd.dual, build, X, yv, hyper, kernel)


# ----------------------------------------------------------------------------- the expansion
def _unit(D: Any) -> float:
    """The certificate's objective unit from the dual's box (``objective_unit``), when the
    dual carries a BoxQP record; 1 otherwise."""
    from ..model.structure import box_qp_of
    box = box_qp_of(D)
    return objective_unit(None if box is None else np.asarray(box.C, dtype=float))


def _evaluate(bd: Any, dec: Any, point: dict, Xq: np.ndarray) -> np.ndarray:
    """The decision expression ``dec`` at ``point`` on the rows ``Xq``: a placeholder
    expression through the bound derivation (``bd.evaluate``), a factory's expression on the
    training rows through :func:`_evaluate_rows`."""
    if not _is_deferred(dec):
        return _evaluate_rows(bd, dec, point, Xq)
    return np.asarray(bd.evaluate(dec, point, x=Xq), dtype=float).reshape(Xq.shape[0])


def _evaluate_rows(bd: Any, dec: Any, point: dict, Xq: np.ndarray) -> np.ndarray:
    """A factory's decision, written on the training rows (``w @ phi(X) + b``,
    ``Data("X", X) @ w + b``), at new rows ``Xq``: row ``i`` of each term is read as a
    function of ``x_i`` -- ``<w, phi(x_i)>`` (the feature map of all training rows, in
    order) becomes ``k(x, .) beta``, ``x_i^T w`` (the training matrix itself) becomes
    ``x^T w``, a term equal on every row (``b``) stays; anything else is refused."""
    import scipy.sparse as sp
    n = None
    out = np.zeros(Xq.shape[0])
    const = np.atleast_1d(np.asarray(dec.const, dtype=float))
    if np.ptp(const) != 0 or getattr(dec, "rq", None) or getattr(dec, "terms", None):
        raise ValueError("decision: a term of the training-row decision varies with the row "
                         "but is not <w, phi(x_i)> or x_i^T w")
    out += const[0]
    for v, M in dec.lin.items():
        val = np.asarray(point[v.name], dtype=float).ravel()
        if getattr(v, "feature", False):
            n = v.basis.shape[0]
            M = sp.csr_matrix(M)
            if M.shape != (n, n) or (M - sp.identity(n, format="csr")).count_nonzero():
                raise ValueError(f"decision: write <{v.name}, phi(x)> over all training rows "
                                 f"({v.name} @ phi(X))")
            S = np.flatnonzero(val)
            if S.size:
                out += kernel_matvec(v.kernel, Xq, val[S], Z=v.basis[S])
            continue
        Md = M.toarray() if sp.issparse(M) else np.asarray(M, dtype=float)
        Md = np.atleast_2d(Md)
        if Md.shape[0] == 1 or np.all(Md == Md[0]):
            out += float(Md[0] @ val)
            continue
        Xtr = _training_rows(bd)
        if Xtr is not None and Md.shape == Xtr.shape and np.array_equal(Md, Xtr):
            out += Xq @ val
            continue
        kern = getattr(bd, "_variant_kernel", None)
        if Xtr is not None and kern is not None and Md.shape == (Xtr.shape[0],) * 2 and \
                np.allclose(Md, np.asarray(kern(Xtr), dtype=float), rtol=1e-12, atol=0):
            S = np.flatnonzero(val)   # K u: the kernel expansion sum_j u_j k(x, x_j)
            if S.size:
                out += kernel_matvec(kern, Xq, val[S], Z=Xtr[S])
            continue
        raise ValueError(f"decision: the term in {v.name!r} is not the same on every row, "
                         f"nor x_i^T {v.name} (Data('X', X) @ {v.name}), nor the kernel "
                         f"expansion K {v.name} (Data('K', K) @ {v.name})")
    return out


def _training_rows(bd: Any) -> np.ndarray | None:
    for v in bd.primal.variables:
        if getattr(v, "feature", False):
            return v.basis
    return getattr(bd, "_variant_X", None)


def _expansion(bd: Any, decisions: list[Any], point: dict, X: np.ndarray, kernel: Kernel
               ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    """``(B, L, c, S)``: the decision expressions at ``point`` as
    ``f_k(x) = sum_{j in S} B_jk k(x, x_j) + x^T L_k + c_k``.

    Read off the expressions (affine in the point and in ``x``) by evaluating them. The
    candidates for the kernel part are the feature-space variables and the vectors of one
    entry per training row (LP-SVR's expansion coefficients ``u`` in ``K u``): the
    contribution ``h`` of all of them, on a few training rows, is fitted by least squares as
    ``sum_v s_v k(x, X) v`` (exactly, or else each alone is compared with ``k(x, X) v``); a
    variable with ``s_v != 0`` adds ``s_v v`` to ``B``. With those at 0, ``c`` is the value at
    ``x = 0`` and ``L`` the change along each unit vector (read only when the value depends
    on ``x`` at all). :func:`_check_expansion` then checks the
    whole expansion against the expressions on training rows.
    """
    n, d = X.shape
    cands = [v for v in bd.primal.variables
             if getattr(v, "feature", False) or (not v.scalar and v.size == n)]
    k = len(decisions)
    p0 = dict(point)
    for v in cands:
        p0[v.name] = np.zeros(np.shape(point[v.name]))
    B = np.zeros((n, k))
    c = np.zeros(k)
    L = np.zeros((d, k))
    nz = sorted({int(j) for v in cands for j in np.flatnonzero(point[v.name])})
    rows = np.asarray(nz[:24] if len(nz) >= 4 else list(range(min(n, 24))), dtype=np.intp)
    probe_x = np.random.default_rng(0).standard_normal((3, d))
    nr = rows.size
    Z = np.vstack([X[rows], np.zeros((1, d)), probe_x])
    active = []
    for v in cands:
        val = np.asarray(point[v.name], dtype=float).ravel()
        S = np.flatnonzero(val)
        if S.size:
            active.append((v, val, kernel_matvec(kernel, X[rows], val[S], Z=X[S])))
    for j, dec in enumerate(decisions):
        F0 = _evaluate(bd, dec, p0, Z)            # kernel-part candidates at 0: rows, 0, probes
        f0, p_lin = F0[:nr], p0
        h_all = _evaluate(bd, dec, point, X[rows]) - f0
        done = not np.any(h_all)
        if not done and active:
            # one least-squares fit h = sum_v s_v k(x, X) v over the candidates together
            G = np.column_stack([g for _, _, g in active])
            sv = np.linalg.lstsq(G, h_all, rcond=None)[0]
            sv[np.abs(sv) <= 1e-10 * float(np.max(np.abs(sv)))] = 0.0
            if np.linalg.matrix_rank(G) == G.shape[1] and \
                    np.linalg.norm(G @ sv - h_all) <= 1e-9 * np.linalg.norm(h_all):
                for (_, val, _), s_ in zip(active, sv, strict=True):
                    if s_:
                        B[:, j] += s_ * val
                done = True
        if done:
            c[j], g = F0[nr], F0[nr + 1:]
        else:                                      # one candidate at a time (the general case)
            p1 = dict(point)                       # the point with the kernel part at 0
            for v, val, gk in active:
                pv = dict(p0)
                pv[v.name] = point[v.name]
                h = _evaluate(bd, dec, pv, X[rows]) - f0
                den = float(gk @ gk)
                s_ = float(gk @ h) / den if den > 0 and np.any(h) else 0.0
                if s_ and np.linalg.norm(h - s_ * gk) <= 1e-9 * np.linalg.norm(h):
                    B[:, j] += s_ * val
                    p1[v.name] = np.zeros(np.shape(point[v.name]))
            G1 = _evaluate(bd, dec, p1, Z[nr:])
            c[j], g, p_lin = G1[0], G1[1:], p1
        if not np.allclose(g, c[j], rtol=1e-12, atol=1e-12 * max(1.0, abs(c[j]))):
            L[:, j] = _evaluate(bd, dec, p_lin, np.eye(d)) - c[j]
    S = np.flatnonzero(np.any(B != 0, axis=1))
    return B[S], (L if np.any(L) else None), c, S


def _check_expansion(bd: Any, decisions: list[Any], point: dict, X: np.ndarray,
                     f: np.ndarray) -> None:
    """The expansion must reproduce the decision expressions at the point (checked on up to
    256 training rows); otherwise the decision is not of the form the estimator predicts
    with, and no model is returned."""
    n = X.shape[0]
    rows = np.arange(n) if n <= 256 else np.random.default_rng(1).choice(n, 256, replace=False)
    for j, dec in enumerate(decisions):
        ref = _evaluate(bd, dec, point, X[rows])
        err = float(np.max(np.abs(ref - f[rows, j]), initial=0.0))
        if err > 1e-8 * max(1.0, float(np.max(np.abs(ref), initial=0.0))):
            raise ValueError(f"decision: expression {j} is not of the form sum_j B_j k(x, x_j) "
                             f"+ x^T L + c in the primal variables (deviation {err:.3g} on the "
                             "training rows); write it affine in the variables and in x, e.g. "
                             "w @ phi(x) + b")
