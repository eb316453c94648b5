"""The catalogue's road to a backend (one road for every method): the structure *detected* on the
method's derived dual, once per shape, bound to each fit's data in ``O(N)``.

A method states its dual as a Problem built from a few named numbers, its **dual data**
(``_dual_data(data)``: per-sample arrays such as ``y``, ``C``, ``C/N`` and scalars such as
``epsilon`` or ``nu``; ``_dual(data, values)`` builds the Problem from exactly those). The
backend is chosen from the :class:`~primaldual.model.records.BoxQP` that
:func:`~primaldual.model.detection._read_box_qp` -- the detector a user's spec goes through --
reads from that Problem; nothing about the structure is written by hand. The contract that
makes a template valid: ``_dual(data, values)`` depends on the data only through ``values``,
``N``, the rows ``X`` and the kernel (a branch on anything else must show in the dual data,
as C-SVC's hard margin does by leaving out ``C``).

Detection builds expression objects (milliseconds even at ``N = 150``, where a whole C-SVC fit
takes 0.7 ms), so it runs once per **shape** -- the class and, for each dual datum, whether it
is a scalar, a ``±1`` vector, a vector or infinite (``C = inf``) -- and not once per fit:

1. the dual is built on five small probes (random rows of the fit's data, the dual data
   perturbed so that no two of them are proportional) and detected on each;
2. every array of the records (``p``, ``C``, ``sign``, ``Q``'s signs, index map and diagonal,
   the maps of eliminated variables) is read, block of ``N`` entries by block, as an
   elementwise affine function of the dual data
   ``F_i = c_0 + sum_k c_k v_k[i] + sum_j d_j s_j + c_pos i`` (least squares on four probes,
   exact up to round-off or refused), every other field must agree on all probes;
3. the template is checked on the fifth probe and on the fit's own dual, detected in full once.

Later fits of the shape bind the template (a few numpy operations, no expression object); the
record is the one detection would read (tests/methods/test_one_road.py checks them equal on
random data). A shape whose records are not of this form is detected on every fit (the same
road, only slower; learning is tried again on the next ``_RETRIES - 1`` fits of the shape, whose
data may separate better); :func:`structure_templates` says which shapes have a template and why
not.
"""

from __future__ import annotations

import itertools
import math
import threading
from typing import Any

import numpy as np

from ..model import detection
from ..model.records import BoxQP
from ._fit import FitData
from ._structure_template import (
    _F64,
    _Ctx,
    _ctx,
    _equal,
    _kind,
    _NoTemplate,
    _perturbed,
    _probe_rows,
    _shape,
    _shape_ctx,
    _Template,
)

__all__ = ["dual_structure", "spec_structure", "structure_templates",
           "clear_structure_templates"]


#: (class, shape) -> _Template, or the reason (str) why the shape has none
_TEMPLATES: dict[tuple, Any] = {}
_LOCK = threading.Lock()
_N_PROBES = 5
#: a shape whose template could not be learned is tried again on this many fits (other data)
_RETRIES = 3
_PROBE_SIZES = (6, 7, 8, 9, 11)


def structure_templates() -> dict[str, str]:
    """Which shapes have a template (``"template"``) and which are detected on every fit (the
    reason), by ``"Class: shape"``."""
    out = {}
    for (cls, shape), v in list(_TEMPLATES.items()):
        out[f"{cls.__name__}: {shape}"] = ("template" if isinstance(v, _Template)
                                           else f"{v[0]} ({v[1]} tries)")
    for (_, shape), (der, v) in list(_SPEC_TEMPLATES.items()):
        name = getattr(getattr(der, "primal", None), "name", "spec")
        out[f"Variant({name!r}, derivation {id(der):#x}): {shape}"] = (
            "template" if isinstance(v, _Template) else f"{v[0]} ({v[1]} tries)")
    return out


#: caches built on the templates (a Variant's bound derivations carry their records), emptied
#: with them: registered by their owners, so this module imports none of them
ON_CLEAR: list = []


def clear_structure_templates() -> None:
    """Forget every template (the next fit of each shape detects again), and every cache
    registered in :data:`ON_CLEAR` that holds records bound from them."""
    with _LOCK:
        _TEMPLATES.clear()
        _SPEC_TEMPLATES.clear()
    for forget in ON_CLEAR:
        forget()


# ----------------------------------------------------------------------------- a method's dual
def _learn(est: Any, data: Any, values: dict, shape: tuple) -> _Template:
    """The template of ``est``'s record: its dual built (``est._dual``) and detected on
    :data:`_N_PROBES` probes of random rows with the dual data perturbed, learned on all but
    the last and checked on it."""
    rng = np.random.default_rng(20261126)
    recs, ctxs, name = [], [], ""
    for size in _PROBE_SIZES[:_N_PROBES]:
        rows = _probe_rows(values, shape, data.N, size, rng)
        # the probe's numbers at unit scale, whatever the fit's (C = 1e10 or y of 1e6 would
        # leave round-off of 1e-6 in the coefficients): labels and an infinite box kept
        y = np.asarray(data.y, dtype=float)[rows]
        if _kind(np.asarray(data.y, dtype=float)) != "pm1":
            y = rng.standard_normal(size)
        C = np.asarray(data.C, dtype=float)[rows]
        if _kind(C) == "vector":
            C = rng.uniform(0.5, 2.0, size)
        probe = FitData(data.X[rows], y, data.kernel, C, params=data.params)
        own = est._dual_data(probe)        # the probe's own dual data (nu sum C over its rows)
        if _shape(own) != shape:
            raise _NoTemplate("a probe's dual data have another shape")
        pv = _perturbed(own, shape, np.arange(size), rng)
        D = est._dual(probe, pv)
        name = D.name
        try:
            recs.append(detection._read_box_qp(D))
        except detection._NoShape as exc:
            raise _NoTemplate(f"a probe's dual has no box QP ({exc})") from exc
        ctxs.append(_ctx(pv, shape, size, probe.X, probe.kernel))
    tmpl = _Template(recs[:-1], ctxs[:-1], name)
    if not _equal(tmpl.bind(ctxs[-1]), recs[-1]):
        raise _NoTemplate("the template does not reproduce the held-out probe's record")
    return tmpl


# ----------------------------------------------------------------------------- the road
def dual_structure(est: Any, data: Any) -> dict | None:
    """``{"box_qp": record}``: the BoxQP detected on ``est``'s dual on ``data`` (through the
    shape's template when it has one, else detected on this fit's dual), or ``None`` when the
    dual is not a box QP (or the method states no dual data): the backend then reads the
    Problem itself, as for any other problem."""
    dual_data = getattr(est, "_dual_data", None)
    if dual_data is None:
        return None
    values = dual_data(data)
    shape, ctx = _shape_ctx(values, data.N, data.X, data.kernel)
    key = (type(est), shape)
    hit = _TEMPLATES.get(key)
    if type(hit) is _Template:
        return {"box_qp": hit.bind(ctx)}
    D = est._dual(data, values)
    try:
        rec = detection._read_box_qp(D)
    except detection._NoShape:
        return None                # not a box QP: the backend reads the Problem (and says why)
    rec.origin = f"detected on {D.name!r} (this fit)"
    if (hit is None or (type(hit) is tuple and hit[1] < _RETRIES)) \
            and all(kind != "mixed" for _, kind in shape):
        tries = 1 if hit is None else hit[1] + 1
        try:
            tmpl = _learn(est, data, values, shape)
            if not _equal(tmpl.bind(_ctx(values, shape, data.N, data.X, data.kernel)), rec):
                raise _NoTemplate("the template does not reproduce the fit's own record")
            hit = tmpl
        except _NoTemplate as exc:
            hit = (str(exc), tries)
        except Exception as exc:   # a probe the method's builder refuses: no template, no harm
            hit = (f"{type(exc).__name__} on a probe: {exc}", tries)
        with _LOCK:
            _TEMPLATES[key] = hit
    return {"box_qp": rec}


# ----------------------------------------------------------------------------- a user's spec
#: (id(derivation), shape) -> (derivation, _Template or (reason, tries)): a user's placeholder
#: spec (``pd.Variant``) on the same road. The derivation object is kept and compared by
#: identity, so two specs (two derivations) never share a template, even if an id is reused.
_SPEC_TEMPLATES: dict[tuple, tuple[Any, Any]] = {}
#: at most this many hyper-parameters get a template (3**(k+1) scalar monomials to learn)
_SPEC_MAX_PARAMS = 2
#: templates kept (each holds its derivation): the oldest is forgotten beyond this
_SPEC_MAX_ENTRIES = 64
#: a spec's template is learned on this fit of its shape (the 2nd: learning costs 50-150 ms of
#: probes, so a single fit pays nothing; a refit, a grid search or a cross-validation does, once)
_SPEC_LEARN_ON_FIT = 2
_DEFERRED = "a template is learned from the next fit of this shape (a single fit pays nothing)"


def _monomials(params: dict[str, float], N: int) -> dict[str, float]:
    """The scalar dual data of a spec: every ``p^a N^b`` of one hyper-parameter ``p`` (or
    none) with exponents in ``{-1, 0, 1}`` (not both 0). A spec's dual holds its
    hyper-parameters and ``N`` through products and quotients such as ``1/(nu N)`` or ``C/N``;
    the record is learned as affine in these (and in the per-sample ``y``). A product of two
    hyper-parameters is not among them: such a spec gets no template (refused exactly, by
    the least-squares residual), and is detected on every fit."""
    names = sorted(params)
    out = {}
    for exps in itertools.product((-1, 0, 1), repeat=len(names) + 1):
        if not any(exps) or sum(1 for e in exps[:-1] if e) > 1:
            continue
        v = float(N) ** exps[-1]
        for n, e in zip(names, exps, strict=False):
            v *= float(params[n]) ** e
        out["*".join(f"{n}^{e}" for n, e in zip([*names, "N"], exps, strict=True) if e)] = v
    return out


def _spec_ctx(y: Any, y_kind: str, params: dict, N: int, X: Any, kernel: Any) -> _Ctx:
    vec = {"y": y} if y_kind in ("pm1", "vector") else {}
    return _Ctx(N, vec, _monomials(params, N), X, kernel)


def _learn_spec(build: Any, X: Any, y: Any, y_kind: str, params: dict, kernel: Any) -> _Template:
    """The template of a spec's record: the dual built (``build(X, y, params)``, the spec's
    derivation bound to a probe) and detected on probes of random rows with perturbed ``y``
    (unless labels) and hyper-parameters, learned on all probes but one and checked on it."""
    if len(params) > _SPEC_MAX_PARAMS:
        raise _NoTemplate(f"more than {_SPEC_MAX_PARAMS} hyper-parameters (the scalar data "
                          "would need too many probes)")
    if any(float(v) == 0.0 for v in params.values()):
        raise _NoTemplate("a hyper-parameter is 0 (its reciprocal is not data)")
    n_probes = len(_monomials(params, 1)) + 3        # the constant, a spare, the held-out
    # (sizes cycle through 8 values of N: small probes keep the least squares cheap)
    rng = np.random.default_rng(20261127)
    N = X.shape[0]
    shape = (("y", y_kind),) if y_kind == "pm1" else ()
    recs, ctxs, name = [], [], ""
    for k in range(n_probes):
        size = 6 + k % 8
        rows = _probe_rows({"y": y}, shape, N, size, rng)
        Xp = X[rows]
        yp = None if y is None else (np.asarray(y, dtype=float)[rows] if y_kind == "pm1"
                                     else rng.standard_normal(size))
        pp = {n: (-1.0 if v < 0 else 1.0) * max(abs(float(v)), 0.1) * rng.uniform(0.5, 1.0)
              for n, v in params.items()}
        D = build(Xp, yp, pp)
        name = D.name
        try:
            recs.append(detection._read_box_qp(D))
        except detection._NoShape as exc:
            raise _NoTemplate(f"a probe's dual has no box QP ({exc})") from exc
        ctxs.append(_spec_ctx(yp, y_kind, pp, size, Xp, kernel))
    tmpl = _Template(recs[:-1], ctxs[:-1], name)
    if not _equal(tmpl.bind(ctxs[-1]), recs[-1]):
        raise _NoTemplate("the template does not reproduce the held-out probe's record")
    return tmpl


def spec_structure(der: Any, D: Any, build: Any, X: Any, y: Any, params: dict,
                   kernel: Any) -> BoxQP | None:
    """The BoxQP of a user's spec bound to one fit (``D``: the bound dual; ``der``: the spec's
    derivation, the template's owner), put in ``D.structure["box_qp"]`` so that the backend's
    choice and the solve read it without detecting again.

    The first fit of a *shape* (the spec, whether ``y`` is absent, ``±1`` labels or a vector,
    the hyper-parameters' names and signs) detects on its own dual, then learns the record as
    a template on probes (``build(X, y, params)`` -> the spec's dual on a few rows) and checks
    it against that detection; later fits of the shape bind it in ``O(N)`` (``origin``: "(shape
    template)"). A shape without a template is detected on every fit (``origin`` and
    :func:`structure_templates` say why). ``None``: the dual is not a box QP (the backend
    reads the Problem)."""
    st = getattr(D, "structure", None)
    if st is None or "box_qp" in st:
        return None if st is None else st["box_qp"]
    yk = "none" if y is None else _kind(y)
    # the hyper-parameters' names and signs (the probes keep each sign: a structure that
    # changes with a sign is learned apart)
    key = (id(der), (("y", yk), ("params", tuple((n, "-" if params[n] < 0 else "+")
                                                 for n in sorted(params)))))
    entry = _SPEC_TEMPLATES.get(key)
    hit = entry[1] if entry is not None and entry[0] is der else None
    ok = yk in ("none", "pm1", "vector") and all(math.isfinite(float(v))
                                                   for v in params.values())
    if type(hit) is _Template and ok:
        yv = None if yk == "none" else (y if type(y) is np.ndarray and y.dtype is _F64
                                        else np.asarray(y, dtype=float))
        rec = hit.bind(_spec_ctx(yv, yk, params, X.shape[0], X, kernel))
        st["box_qp"] = rec
        return rec
    try:
        rec = detection._read_box_qp(D)
    except detection._NoShape:
        return None                # not a box QP: the backend reads the Problem (and says why)
    why = hit[0] if type(hit) is tuple else None
    if ok and hit is None and _SPEC_LEARN_ON_FIT > 1:
        why = _DEFERRED            # first fit of the shape: detected only, learned next time
        with _LOCK:
            _SPEC_TEMPLATES[key] = (der, (_DEFERRED, 0))
            while len(_SPEC_TEMPLATES) > _SPEC_MAX_ENTRIES:
                _SPEC_TEMPLATES.pop(next(iter(_SPEC_TEMPLATES)))
    elif ok and (hit is None or (type(hit) is tuple and hit[1] < _RETRIES)):
        tries = 1 if hit is None else hit[1] + 1
        try:
            tmpl = _learn_spec(build, X, y, yk, params, kernel)
            if not _equal(tmpl.bind(_spec_ctx(None if y is None else np.asarray(y, float), yk,
                                              params, X.shape[0], X, kernel)), rec):
                raise _NoTemplate("the template does not reproduce the fit's own record")
            new: Any = tmpl
            why = None
        except _NoTemplate as exc:
            new = (str(exc), tries)
            why = str(exc)
        except Exception as exc:   # a probe the derivation refuses: no template, no harm
            new = (f"{type(exc).__name__} on a probe: {exc}", tries)
            why = new[0]
        with _LOCK:
            _SPEC_TEMPLATES[key] = (der, new)
            while len(_SPEC_TEMPLATES) > _SPEC_MAX_ENTRIES:    # the oldest spec goes first
                _SPEC_TEMPLATES.pop(next(iter(_SPEC_TEMPLATES)))
    elif not ok:
        why = "the data are not of a shape with a template (y infinite/NaN or params not finite)"
    rec.origin = f"detected on {D.name!r} (this fit" + (f"; no shape template: {why})"
                                                        if why else ")")
    st["box_qp"] = rec
    return rec
