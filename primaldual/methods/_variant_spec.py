"""The spec side of :class:`~primaldual.methods.variant.Variant`: what a spec is (a placeholder
``Problem`` or a factory), its hyper-parameter names, its derivation (computed once per spec
object) and its binding to a fit's data (reused for the same rows, labels, kernel and
hyper-parameters), and the fingerprint a model file stores.

The estimator class reads these; they read nothing of it, so the caches live apart from the
scikit-learn plumbing.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

import numpy as np

from ..kernels import Kernel
from ._structure import ON_CLEAR
from ._variant_template import bind_spec

__all__ = ["derive", "spec_fingerprint", "spec_param_names"]


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
    callable) is bound afresh every time: its equality cannot be told. New data are bound
    through the shape's derivation template (:func:`._variant_template.bind_spec`: no
    reduction after the shape's first fit)."""
    ks = kernel.spec() if hasattr(kernel, "spec") else None
    if ks is None:
        return bind_spec(der, X, y, kernel, hyper)
    key = (id(spec), _digest(X), _digest(y), repr(ks), tuple(sorted(hyper.items())))
    hit = _BOUND.get(key)
    if hit is not None and hit[0] is spec:
        _BOUND.move_to_end(key)
        return hit[1]
    bd = bind_spec(der, X, y, kernel, hyper)
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
