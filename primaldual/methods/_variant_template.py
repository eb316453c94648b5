"""A placeholder spec's bound derivation as a function of its data: learned once per shape,
bound to new rows without running the derivation's reductions.

``der.bind(X, y, kernel, params)`` resolves the spec on the data (the primal: a replay of the
record, no reduction) and dualises that primal (the reductions: classification of the blocks,
stationarity, the dual's assembly). The reductions branch on the primal's *structure* only, so
two bindings of one spec to data of the same shape give object graphs of the same form: the
same classes, strings, flags and aliasing, with numbers that differ. This module learns that
graph once and binds it to new data:

* an object of the spec's resolved primal (a variable, a constraint, a ``Data`` leaf, the rows
  ``X``, the labels ``y``, the kernel) is taken from the new binding's own resolution
  (``env.cache``, by the spec node it resolves);
* an integer is ``a N + b``; a float is ``c_0 + c_1 s`` for one scalar datum ``s`` of the
  binding (``p``, ``1/p``, ``N``, ``1/N`` and the products of two of them, ``p`` a
  hyper-parameter) or a constant;
* an array of ``a N + b`` entries is ``a`` blocks of ``N`` entries, each elementwise
  ``F_i = c_0 + c_pos i + sum_v c_v v_i + s (d_0 + sum_v d_v v_i)`` over per-sample data
  ``v`` (``y``, ``y`` reversed, the kernel's diagonal ``k(x_i, x_i)``; for a column of a matrix
  of ``N`` rows also ``X``'s column and ``y`` times it) and one scalar datum ``s``, and ``b``
  trailing scalars; a matrix is such arrays per row or column; a sparse matrix its own arrays
  (``indptr``, ``indices``, ``data`` in stored order, so products sum in the same order) and
  its shape; a text that names the kernel names the binding's;
* containers and objects are rebuilt from their learned parts (the aliasing preserved); a
  string, a flag, a class or a function is the same in every binding, or no template.

The graph is learned on the first fit's bound derivation and two probes (random rows of the
fit, perturbed labels and hyper-parameters) and checked on a third probe (bound with the
kernel's ``gamma`` scaled, so a number that hides a kernel parameter shows), whose bound
derivation must equal the template's, field by field, objects of the primal included (a
reduction that annotated a primal object would show there). A shape that is not of this form
is refused (:class:`_NoTemplate`) and bound by ``der.bind`` on every fit, as before.

The primal a fit certifies against is always the spec resolved on the fit's data; the
template gives the dual and the recovery map.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from ..model.placeholders import make_env
from ._structure import ON_CLEAR
from ._structure_template import _kind, _NoTemplate
from ._variant_graph import _Bind, _Learner, _same

__all__ = ["DerivationTemplate", "bind_spec", "derivation_templates", "learn"]

#: probes beside the first fit's own binding: two to learn from, one held out
_PROBE_SIZES = (7, 9, 11, 8)


# ----------------------------------------------------------------------------- the template
class DerivationTemplate:
    """A spec's bound derivation as a function of one binding (see the module docstring)."""

    def __init__(self, spec: Any, root: Any) -> None:
        self.spec, self.root = spec, root

    def bind(self, X: Any, y: Any, kernel: Any, params: dict) -> Any:
        """The bound derivation of the spec on ``X, y, kernel, params``: the spec resolved
        on them (the primal) and the template's dual and recovery map bound to it."""
        env = make_env(X, y, kernel, params)
        self.spec.resolve(env)
        return self.root.bind(_Bind(env))


def _probe(X: np.ndarray, y: np.ndarray | None, yk: str, params: dict, size: int,
           rng: np.random.Generator) -> tuple:
    """Random rows of the fit (every label sign kept), labels perturbed unless ``±1`` and the
    hyper-parameters scaled by U(0.5, 1) (at least 0.1 in size, signs kept)."""
    n = X.shape[0]
    for _ in range(50):
        rows = rng.choice(n, size=size, replace=n < size)
        if yk != "pm1" or np.unique(np.asarray(y)[rows]).size == 2:
            break
    else:
        raise _NoTemplate("no probe takes both label signs")
    yp = None if y is None else (np.asarray(y, dtype=float)[rows] if yk == "pm1"
                                 else rng.standard_normal(size))
    pp = {k: (-1.0 if v < 0 else 1.0) * max(abs(float(v)), 0.1) * rng.uniform(0.5, 1.0)
          for k, v in params.items()}
    return np.ascontiguousarray(X[rows]), yp, pp


def _other_kernel(kernel: Any) -> Any:
    """The kernel of the same class with its ``gamma`` scaled (the held-out probe's), or the
    kernel itself when it has none or cannot be rebuilt from its parameters."""
    params = getattr(kernel, "params", None)
    try:
        p = dict(params()) if callable(params) else {}
        g = p.get("gamma")
        if not isinstance(g, (int, float)) or isinstance(g, bool) or not g > 0:
            return kernel
        p["gamma"] = 1.3 * float(g)
        return type(kernel)(**p)
    except (TypeError, ValueError):
        return kernel


def learn(der: Any, bd: Any, X: np.ndarray, y: np.ndarray | None, kernel: Any,
          params: dict) -> DerivationTemplate:
    """The template of ``der``'s bound derivations, from ``bd`` (this fit's, unmodified) and
    probes of this fit's rows; checked on a held-out probe. Raises :class:`_NoTemplate`."""
    spec = der._spec
    yk = "none" if y is None else _kind(np.asarray(y, dtype=float))
    if yk not in ("none", "pm1", "vector"):
        raise _NoTemplate(f"labels of kind {yk!r}")
    if any(float(v) == 0.0 for v in params.values()):
        raise _NoTemplate("a hyper-parameter is 0 (its reciprocal is a datum)")
    rng = np.random.default_rng(20261203)
    # sizes above 4 d: a derivation writes Q = M M^T as the linear kernel on the rows of M
    # from 4 rows per column of M on (model/qform.py), and the probes must take that road
    extra = 4 * X.shape[1]
    sizes = [s + extra for s in _PROBE_SIZES if s + extra != X.shape[0]][:3]
    probes = [_probe(X, y, yk, params, s, rng) for s in sizes]
    bds = [bd] + [der.bind(X=Xp, y=yp, kernel=kernel, params=pp) for Xp, yp, pp in probes[:2]]
    root = _Learner([_Bind(b._env) for b in bds]).node(bds)
    tmpl = DerivationTemplate(spec, root)
    Xh, yh, ph = probes[2]
    kh = _other_kernel(kernel)           # (a number of the kernel learned as data would show)
    held = der.bind(X=Xh, y=yh, kernel=kh, params=ph)
    if not _same(tmpl.bind(Xh, yh, kh, ph), held, {}):
        raise _NoTemplate("the template does not reproduce a held-out probe's derivation")
    return tmpl


# ----------------------------------------------------------------------------- the cache
#: (id(derivation), shape) -> (derivation, template or the reason there is none)
_TEMPLATES: OrderedDict[tuple, tuple[Any, Any]] = OrderedDict()
_MAX = 32
_LOCK = threading.Lock()


def _forget() -> None:
    with _LOCK:
        _TEMPLATES.clear()


ON_CLEAR.append(_forget)


def _shape_key(der: Any, X: Any, y: Any, kernel: Any, params: dict) -> tuple:
    """What a template is learned for: the derivation, the number of features (a matrix of
    ``d`` columns is learned column by column), the labels' kind, the kernel's class and the
    hyper-parameters' signs."""
    yk = "none" if y is None else _kind(np.asarray(y, dtype=float))
    return (id(der), int(X.shape[1]), yk, type(kernel).__name__,
            tuple((k, "-" if v < 0 else "0" if v == 0 else "+") for k, v in sorted(params.items())))


def derivation_templates() -> dict[str, str]:
    """Which shapes of which specs bind through a template (``"template"``) and which are
    derived on every fit (the reason), by ``"spec name: shape"``."""
    out = {}
    for key, (der, v) in list(_TEMPLATES.items()):
        name = getattr(getattr(der, "primal", None), "name", "spec")
        out[f"{name}: {key[1:]}"] = "template" if isinstance(v, DerivationTemplate) else v
    return out


def bind_spec(der: Any, X: np.ndarray, y: np.ndarray | None, kernel: Any, params: dict,
              learn_now: bool = True) -> Any:
    """``der.bind(X, y, kernel, params)`` through the shape's template when it has one (no
    reduction runs); otherwise bound by the derivation, and (``learn_now``) the template
    learned from that binding for the next fits of the shape."""
    key = _shape_key(der, X, y, kernel, params)
    entry = _TEMPLATES.get(key)
    hit = entry[1] if entry is not None and entry[0] is der else None
    if isinstance(hit, DerivationTemplate):
        return hit.bind(X, y, kernel, params)
    bd = der.bind(X=X, y=y, kernel=kernel, params=params)
    if hit is None and learn_now:
        try:
            new: Any = learn(der, bd, X, y, kernel, params)
        except _NoTemplate as exc:
            new = str(exc)
        except Exception as exc:   # a probe the derivation refuses: no template, no harm
            new = f"{type(exc).__name__} on a probe: {exc}"
        with _LOCK:
            _TEMPLATES[key] = (der, new)
            while len(_TEMPLATES) > _MAX:
                _TEMPLATES.popitem(last=False)
    return bd
