"""Data placeholders: a primal spec written once, without data, bound to any data set later.

A spec written on the placeholders ``X`` (training inputs), ``y`` (targets), ``N`` (number of
training samples), ``d`` (number of features), ``x`` (new inputs, for decision expressions) and
named hyper-parameters :class:`Param` records what it does instead of computing it, the way
CVXPY's ``Parameter`` defers values: every operator, model function (``norm2``, ``phi``,
``vsum``, ...) and constructor (``Variable("xi", N)``, ``FeatureVariable("w")`` without a kernel,
``Problem(...)``) applied to a placeholder returns a :class:`Deferred` node. Binding
(:meth:`Deferred.bind`) replays the record on concrete values, giving the ordinary numeric
objects (a :class:`~primaldual.model.problem.Problem`, an ``Expr``).

``dualize(spec)`` derives the dual once for display (on a small internal template data set, so
the text and LaTeX use only the spec's symbols) and ``derivation.bind(X=..., kernel=...,
params=...)`` gives the bound derivation a backend solves; see
:func:`primaldual.model.dualize.dualize`.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

__all__ = ["Deferred", "Env", "NewPoints", "Param", "N", "X", "d", "defer_calls", "deferrable",
           "has_deferred", "x", "y"]


class NewPoints(np.ndarray):
    """Rows of new inputs bound to the placeholder ``x``: ``w @ phi(x)`` evaluates
    ``Σ_j β_j k(x, x_j)`` over the training basis instead of requiring ``x`` to be in it."""


class Env:
    """Values of the placeholders for one binding (and the memo of resolved nodes, so a variable
    recorded once resolves to one object)."""

    def __init__(self, X: Any = None, y: Any = None, kernel: Any = None,
                 params: dict | None = None, x: Any = None) -> None:
        self.X, self.y, self.kernel, self.x = X, y, kernel, x
        self.params = dict(params or {})
        self.cache: dict[int, Any] = {}

    def need(self, what: str) -> Any:
        val = getattr(self, what)
        if val is None:
            raise ValueError(f"the spec uses the placeholder {what!r}: pass {what}=... to bind")
        return val


def has_deferred(obj: Any) -> bool:
    """Whether ``obj`` (or an item of a list/tuple/dict) is a :class:`Deferred`."""
    if isinstance(obj, Deferred):
        return True
    if isinstance(obj, (list, tuple)):
        return any(has_deferred(o) for o in obj)
    if isinstance(obj, dict):
        return any(has_deferred(o) for o in obj.values())
    return False


def _resolve(obj: Any, env: Env) -> Any:
    if isinstance(obj, Deferred):
        return obj.resolve(env)
    if isinstance(obj, list):
        return [_resolve(o, env) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_resolve(o, env) for o in obj)
    if isinstance(obj, dict):
        return {k: _resolve(v, env) for k, v in obj.items()}
    return obj


def _walk(obj: Any, seen: set[int]):
    if isinstance(obj, Deferred):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        yield obj
        for a in obj._args:
            yield from _walk(a, seen)
        for a in obj._kwargs.values():
            yield from _walk(a, seen)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _walk(o, seen)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _walk(o, seen)


def _binop(op, reflected: bool = False):
    def method(self, other):
        args = (other, self) if reflected else (self, other)
        return Deferred(op, args, label=op.__name__)
    return method


class Deferred:
    """A recorded computation ``fn(*args, **kwargs)`` whose arguments involve placeholders,
    evaluated by :meth:`resolve` (or :meth:`bind`) on concrete values."""

    __array_ufunc__ = None        # numpy defers to our reflected operators
    __array_priority__ = 1000

    def __init__(self, fn: Any, args: tuple = (), kwargs: dict | None = None, *,
                 label: str = "", leaf: str | None = None) -> None:
        self._fn, self._args, self._kwargs = fn, tuple(args), dict(kwargs or {})
        self._label, self._leaf = label, leaf

    # ------------------------------------------------------------------ binding
    def resolve(self, env: Env) -> Any:
        """The value of this node under ``env`` (memoised per node)."""
        key = id(self)
        if key not in env.cache:
            if self._leaf is not None:
                env.cache[key] = self._fn(env)
            else:
                env.cache[key] = self._fn(*_resolve(self._args, env),
                                          **_resolve(self._kwargs, env))
        return env.cache[key]

    def bind(self, X: Any = None, y: Any = None, kernel: Any = None, params: dict | None = None,
             x: Any = None) -> Any:
        """Replay the record on data: ``X`` (training inputs), ``y`` (targets), ``kernel``
        (for ``FeatureVariable``\\ s written without one), ``params`` (``{"nu": 0.1}``) and ``x``
        (new inputs of a decision expression). Returns the numeric object (a ``Problem`` for a
        spec)."""
        return self.resolve(make_env(X, y, kernel, params, x))

    @property
    def placeholders(self) -> set[str]:
        """Names of the placeholders the record uses (``{"X", "N", "nu"}``; parameters by name)."""
        return {n._leaf for n in _walk(self, set()) if n._leaf is not None}

    @property
    def params(self) -> list[str]:
        """Names of the :class:`Param` hyper-parameters used, in first-use order."""
        out: list[str] = []
        for n in _walk(self, set()):
            if isinstance(n, Param) and n.name not in out:
                out.append(n.name)
        return out

    def __repr__(self) -> str:
        return f"Deferred({self._leaf or self._label or getattr(self._fn, '__name__', '?')})"

    # ------------------------------------------------------------------ recording
    def __getattr__(self, name: str) -> Deferred:
        if name.startswith("_"):
            raise AttributeError(name)
        return Deferred(getattr, (self, name), label=f".{name}")

    def __call__(self, *args, **kwargs) -> Deferred:
        return Deferred(_call, (self, *args), kwargs, label="call")

    def __getitem__(self, idx) -> Deferred:
        return Deferred(operator.getitem, (self, idx), label="getitem")

    def __bool__(self) -> bool:
        raise TypeError("a placeholder expression has no truth value before binding")

    __add__ = _binop(operator.add)
    __radd__ = _binop(operator.add, True)
    __sub__ = _binop(operator.sub)
    __rsub__ = _binop(operator.sub, True)
    __mul__ = _binop(operator.mul)
    __rmul__ = _binop(operator.mul, True)
    __truediv__ = _binop(operator.truediv)
    __rtruediv__ = _binop(operator.truediv, True)
    __matmul__ = _binop(operator.matmul)
    __rmatmul__ = _binop(operator.matmul, True)
    __ge__ = _binop(operator.ge)
    __le__ = _binop(operator.le)
    __gt__ = _binop(operator.gt)
    __lt__ = _binop(operator.lt)
    __eq__ = _binop(operator.eq)
    __ne__ = _binop(operator.ne)
    __hash__ = object.__hash__

    def __neg__(self) -> Deferred:
        return Deferred(operator.neg, (self,), label="neg")

    def __abs__(self) -> Deferred:
        return Deferred(abs, (self,), label="abs")

    @property
    def T(self) -> Deferred:
        return Deferred(getattr, (self, "T"), label=".T")


def _call(f, *args, **kwargs):
    return f(*args, **kwargs)


def make_env(X: Any = None, y: Any = None, kernel: Any = None, params: dict | None = None,
             x: Any = None) -> Env:
    """An :class:`Env` with the inputs checked (arrays of floats; ``x`` marked as new points)."""
    if X is not None:
        import scipy.sparse as sp
        X = X if sp.issparse(X) else np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    if y is not None:
        y = np.asarray(y, dtype=float).ravel()
        if X is not None and y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries for {X.shape[0]} rows of X")
    if x is not None:
        x = np.asarray(x, dtype=float)
        if x.ndim == 1:
            x = x[None, :]
        x = x.view(NewPoints)
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"params must be a dict of name -> value, got {type(params).__name__}")
    return Env(X, y, kernel, params, x)


# ---------------------------------------------------------------------- leaves
def _leaf_X(env: Env) -> Any:
    return env.need("X")


def _leaf_x(env: Env) -> Any:
    return env.need("x")


#: constructors the model registers here (leaves.py sets "Data"): this module imports none
FACTORIES: dict[str, Any] = {}


def _leaf_y(env: Env) -> Any:
    return FACTORIES["Data"]("y", env.need("y"))


def _leaf_N(env: Env) -> Any:
    return FACTORIES["Data"]("N", float(env.need("X").shape[0]))


def _leaf_d(env: Env) -> Any:
    return FACTORIES["Data"]("d", float(env.need("X").shape[1]))


#: the training inputs (``n x d``): ``phi(X)``, ``Data("X", X)``
X = Deferred(_leaf_X, leaf="X")
#: new inputs of a decision expression: ``w @ phi(x) - rho``
x = Deferred(_leaf_x, leaf="x")
#: the training targets, rendered ``y_i``
y = Deferred(_leaf_y, leaf="y")
#: the number of training samples, rendered ``N`` (a size: ``Variable("xi", N)``, and a number)
N = Deferred(_leaf_N, leaf="N")
#: the number of features, rendered ``d``
d = Deferred(_leaf_d, leaf="d")


class Param(Deferred):
    """A named scalar hyper-parameter, bound by name (``params={"nu": 0.1}``) and rendered with
    its symbol (``ν``; ``txt``/``tex`` override it)."""

    name: str

    def __init__(self, name: str, *, txt: str | None = None, tex: str | None = None) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"Param name must be an identifier string, got {name!r}")
        self.__dict__["name"] = name
        super().__init__(self._value, leaf=name)
        self._txt, self._tex = txt, tex

    def _value(self, env: Env) -> Any:
        if self.name not in env.params:
            raise ValueError(f"no value for the parameter {self.name!r}: pass "
                             f"params={{{self.name!r}: ...}}")
        val = env.params[self.name]
        try:
            val = float(val)
        except (TypeError, ValueError):
            raise TypeError(f"parameter {self.name!r} must be a real number, got "
                            f"{type(val).__name__}") from None
        if not np.isfinite(val):
            raise ValueError(f"parameter {self.name!r} must be finite, got {val}")
        return FACTORIES["Data"](self.name, val, txt=self._txt, tex=self._tex)

    def __repr__(self) -> str:
        return f"Param({self.name!r})"


# ---------------------------------------------------------------------- hooks for the model
def deferrable(fn):
    """Wrap a model function so that a call with a placeholder argument is recorded."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if has_deferred(args) or has_deferred(kwargs):
            # the wrapper (the module attribute) is recorded, so that a spec pickles; called on
            # resolved arguments it calls fn
            return Deferred(wrapper, args, kwargs, label=fn.__name__)
        return fn(*args, **kwargs)
    wrapper.__wrapped_model__ = fn
    return wrapper


def defer_calls(cls, names: tuple[str, ...]) -> None:
    """Make the binary operators ``names`` of ``cls`` hand a placeholder operand over to
    :class:`Deferred` (``NotImplemented``, so Python calls the reflected operator)."""
    for nm in names:
        orig = cls.__dict__.get(nm)
        if orig is None:
            continue

        def method(self, o, _orig=orig):
            if isinstance(o, Deferred):
                return NotImplemented
            return _orig(self, o)
        method.__name__ = nm
        method.__doc__ = orig.__doc__
        setattr(cls, nm, method)


BINOPS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
          "__matmul__", "__ge__", "__le__", "__eq__")
