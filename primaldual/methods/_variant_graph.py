"""The object graph of a bound derivation, learned from several bindings and bound to a new
one (:mod:`._variant_template` says when, and checks the result): the binding's data
(:class:`_Bind`), the template's nodes, the parallel walk that learns them
(:class:`_Learner`) and the field-by-field equality a template is checked with (:func:`_same`).
Pure functions of objects and data; no cache lives here.
"""

from __future__ import annotations

import functools
import threading
import types
from collections import OrderedDict
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..model.expr import Expr
from ..model.leaves import Data
from ..model.placeholders import Deferred
from ._structure_template import _NoTemplate

__all__: list[str] = []

_SCALARS = (str, bytes, bool, np.bool_, type(None))
_ATOMS = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
          types.MethodWrapperType, types.WrapperDescriptorType)


# ----------------------------------------------------------------------------- one binding
class _Bind:
    """What a template is bound to: the spec resolved on the data (``env``), ``N``, the
    labels and the scalar data (the hyper-parameters, ``N``, their reciprocals and products)."""

    __slots__ = ("env", "N", "y", "sca", "pos", "memo", "kernel_text", "kdiag")

    def __init__(self, env: Any) -> None:
        self.env = env
        self.N = int(env.X.shape[0])
        self.y = None if env.y is None else np.asarray(env.y, dtype=float)
        self.sca = {**_spec_scalars(env), **_scalar_data(env.params, self.N)}
        self.pos = np.arange(self.N, dtype=float)
        self.memo: dict[int, Any] = {}
        self.kernel_text = "" if env.kernel is None else repr(env.kernel)
        self.kdiag: np.ndarray | None = None

    def vec(self, name: str) -> np.ndarray:
        """A per-sample datum: ``y``, column ``j`` of ``X`` (``X3``) or ``y`` times it
        (``yX3``), the kernel's diagonal (``kd``); ``~`` before a name: in reverse order."""
        if name == "y":
            return self.y
        if name.startswith("~"):       # in reverse order (a sparse transpose's entries)
            return self.vec(name[1:])[::-1]
        if name == "kd":               # k(x_i, x_i) (SVDD's linear term)
            if self.kdiag is None:
                self.kdiag = np.asarray(self.env.kernel.diag(self.env.X), dtype=float)
            return self.kdiag
        if name.startswith("yX"):
            return self.y * self.vec(name[1:])
        return np.asarray(self.env.X[:, int(name[1:])], dtype=float)


def _scalar_data(params: dict, N: int) -> dict[str, float]:
    """``b``, ``1/b`` for each base ``b`` (a hyper-parameter, ``N``) and ``b1^±1 b2^±1`` for
    two of them: the numbers a derivation forms from the spec's scalars (``1/(nu N)``,
    ``C/N``, ``1/(2C)``)."""
    base = {str(k): float(v) for k, v in sorted(params.items())}
    base["N"] = float(N)
    out: dict[str, float] = {}
    names = list(base)
    for n in names:
        out[n] = base[n]
        out[f"1/{n}"] = 1.0 / base[n]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for ea in (1, -1):
                for eb in (1, -1):
                    out[f"{a}^{ea}*{b}^{eb}"] = base[a] ** ea * base[b] ** eb
    return out


def _spec_scalars(env: Any) -> dict[str, float]:
    """The numbers the spec itself forms (``1/(nu N)``, ``C``: its scalar ``Data`` leaves and
    constant expressions, by node), first among the scalar data: a number of the derivation
    equal to one of them is bound to it bit for bit."""
    out = {}
    for key, v in env.cache.items():
        if isinstance(v, Data):
            c = v.value
        elif isinstance(v, Expr) and not v.lin and not v.terms and not getattr(v, "rq", None):
            c = v.const
        else:
            continue
        c = np.asarray(c)
        if c.size == 1 and c.dtype.kind in "fiu":
            out[f"spec{key}"] = float(c.reshape(()))
    return out


def _sources(env: Any) -> dict[int, tuple]:
    """The objects of one binding's resolution, by identity -> how a new binding finds its
    own: a spec node's value, the rows, the labels, the kernel, the environment itself."""
    out: dict[int, tuple] = {}
    for key, v in env.cache.items():
        if not isinstance(v, (*_SCALARS, int, float)):
            out.setdefault(id(v), ("cache", key))
    for name in ("X", "y", "kernel"):
        v = getattr(env, name)
        if v is not None:
            out[id(v)] = ("env", name)
    out[id(env)] = ("self",)
    return out


# ----------------------------------------------------------------------------- template nodes
class _Src:
    def __init__(self, where: tuple) -> None:
        self.where = where

    def bind(self, b: _Bind) -> Any:
        w = self.where
        if w[0] == "cache":
            return b.env.cache[w[1]]
        if w[0] == "env":
            return getattr(b.env, w[1])
        return b.env


class _Const:
    def __init__(self, value: Any) -> None:
        self.value = value

    def bind(self, b: _Bind) -> Any:
        return self.value


class _KernelText:
    """A text that names the kernel (a step's ``w ∈ H (feature space of RBF(gamma=0.5))``):
    the binding's kernel named instead."""

    def __init__(self, parts: list[str]) -> None:
        self.parts = parts

    def bind(self, b: _Bind) -> str:
        return b.kernel_text.join(self.parts)


class _Int:
    def __init__(self, a: int, c: int, kind: type) -> None:
        self.a, self.c, self.kind = a, c, kind

    def bind(self, b: _Bind) -> Any:
        return self.kind(self.a * b.N + self.c)


class _Scalar:
    """``c0 + c1 s`` (``s`` a scalar datum by name, or none)."""

    def __init__(self, c0: float, s: str | None, c1: float, kind: type) -> None:
        self.c0, self.s, self.c1, self.kind = c0, s, c1, kind

    def value(self, b: _Bind) -> float:
        return self.c0 if self.s is None else self.c0 + self.c1 * b.sca[self.s]

    def bind(self, b: _Bind) -> Any:
        return self.kind(self.value(b))


class _Block:
    """``c0 + cp i + sum_v c_v v_i + s (d0 + sum_v d_v v_i)`` over ``i < N`` (``v`` per-sample
    data by name, ``s`` a scalar datum or none); ``coef`` a float: every entry is it
    (``+inf``)."""

    def __init__(self, coef: Any, s: str | None, vecs: tuple = (), c0: float = 0.0,
                 cp: float = 0.0, d0: float = 0.0) -> None:
        self.coef, self.s, self.vecs = coef, s, vecs      # vecs: (name, c_v, d_v)
        self.c0, self.cp, self.d0 = c0, cp, d0

    def bind(self, b: _Bind) -> np.ndarray:
        if self.coef is not None:
            return np.full(b.N, self.coef)
        sv = 0.0 if self.s is None else b.sca[self.s]
        out = np.full(b.N, self.c0 + sv * self.d0)
        if self.cp:
            out += self.cp * b.pos
        for name, c, dd in self.vecs:
            out += (c + sv * dd) * b.vec(name)
        return out


class _Vec:
    """A 1-D array of ``a`` blocks of ``N`` entries followed by fixed entries."""

    def __init__(self, blocks: list[_Block], tail: list[_Scalar], dtype: np.dtype) -> None:
        self.blocks, self.tail, self.dtype = blocks, tail, dtype

    def bind(self, b: _Bind) -> np.ndarray:
        parts = [blk.bind(b) for blk in self.blocks]
        if self.tail:
            parts.append(np.array([t.value(b) for t in self.tail], dtype=float))
        v = np.concatenate(parts) if len(parts) != 1 else parts[0]
        if v.dtype != self.dtype:
            v = (np.rint(v) if self.dtype.kind in "iub" else v).astype(self.dtype)
        return v


class _Mat:
    """A 2-D array: its rows (``axis=0``) or columns (``axis=1``) each a :class:`_Vec`, or
    (``axis=None``) a fixed shape."""

    def __init__(self, axis: int | None, parts: list[_Vec], shape: tuple, order: str) -> None:
        self.axis, self.parts, self.shape, self.order = axis, parts, shape, order

    def bind(self, b: _Bind) -> np.ndarray:
        if self.axis is None:
            return self.parts[0].bind(b).reshape(self.shape, order=self.order)
        cols = [p.bind(b) for p in self.parts]
        return np.ascontiguousarray(np.stack(cols, axis=self.axis)) if self.order == "C" \
            else np.asfortranarray(np.stack(cols, axis=self.axis))


class _Sparse:
    """A sparse matrix of its format's own arrays (CSR/CSC: ``indptr``, ``indices``,
    ``data``; COO: ``row``, ``col``, ``data``) in their stored order: a product with it sums
    in the same order as the derivation's own, bit for bit."""

    def __init__(self, cls: type, shape: tuple, parts: list[_Vec]) -> None:
        self.cls, self.shape, self.parts = cls, shape, parts

    def bind(self, b: _Bind) -> Any:
        shape = tuple(int(s.bind(b)) for s in self.shape)
        p0, p1, p2 = (p.bind(b) for p in self.parts)
        if self.cls.format == "coo":
            return self.cls((p2, (p0, p1)), shape=shape)
        return self.cls((p2, p1, p0), shape=shape)


class _Seq:
    def __init__(self, kind: type, items: list) -> None:
        self.kind, self.items = kind, items

    def bind(self, b: _Bind) -> Any:
        if self.kind is list:
            out: list = []
            b.memo[id(self)] = out
            out.extend(n.bind(b) for n in self.items)
            return out
        return self.kind(n.bind(b) for n in self.items)


class _Dict:
    def __init__(self, kind: type, items: list[tuple[Any, Any]]) -> None:
        self.kind, self.items = kind, items

    def bind(self, b: _Bind) -> Any:
        out = self.kind()
        b.memo[id(self)] = out
        for k, v in self.items:
            out[k.bind(b)] = v.bind(b)
        return out


class _Copy:
    """A mutable container equal in every binding (a set of names): a fresh copy each time."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def bind(self, b: _Bind) -> Any:
        return type(self.value)(self.value)


class _Obj:
    def __init__(self, cls: type, attrs: list[tuple[str, Any]], slots: bool) -> None:
        self.cls, self.attrs, self.slots = cls, attrs, slots

    def bind(self, b: _Bind) -> Any:
        o = object.__new__(self.cls)
        b.memo[id(self)] = o
        if self.slots:
            for k, n in self.attrs:
                object.__setattr__(o, k, n.bind(b))
        else:
            o.__dict__.update({k: n.bind(b) for k, n in self.attrs})
        return o


class _Method:
    def __init__(self, func: Any, owner: Any) -> None:
        self.func, self.owner = func, owner

    def bind(self, b: _Bind) -> Any:
        return types.MethodType(self.func, self.owner.bind(b))


class _Partial:
    def __init__(self, func: Any, args: Any, kw: Any) -> None:
        self.func, self.args, self.kw = func, args, kw

    def bind(self, b: _Bind) -> Any:
        return functools.partial(self.func.bind(b), *self.args.bind(b), **self.kw.bind(b))


class _Shared:
    """A node reached from several places: bound once per binding (aliasing kept)."""

    def __init__(self) -> None:
        self.node: Any = None

    def bind(self, b: _Bind) -> Any:
        k = id(self.node)
        if k in b.memo:
            return b.memo[k]
        v = b.memo[k] = self.node.bind(b)
        return v


# ----------------------------------------------------------------------------- learning
def _exact(A: np.ndarray, t: np.ndarray) -> np.ndarray | None:
    """The coefficients ``c`` with ``A c = t`` to round-off (near-integers snapped), or
    ``None`` (not of that form, or the columns do not determine them)."""
    if A.shape[0] < A.shape[1]:
        return None
    scale = np.max(np.abs(A), axis=0)
    scale[scale == 0] = 1.0
    As = A / scale
    top = max(1.0, float(np.max(np.abs(t), initial=0.0)))
    cs, _, rank, _ = np.linalg.lstsq(As, t, rcond=None)
    if rank < A.shape[1]:
        return None
    cs[np.abs(cs) <= 1e-12 * top] = 0.0
    c = cs / scale
    r = np.rint(c)
    c = np.where(np.abs(c - r) <= 1e-10 * np.maximum(1.0, np.abs(r)), r, c)
    if float(np.max(np.abs(A @ c - t), initial=0.0)) > 1e-10 * top:
        return None
    return c


def _learn_scalar(vals: list, bs: list[_Bind], kind: type) -> Any:
    t = np.asarray(vals, dtype=float)
    if not np.all(np.isfinite(t)):
        if all(v == vals[0] for v in vals):
            return _Const(vals[0])
        raise _NoTemplate("a number of the derivation is infinite on some bindings only")
    if np.all(t == t[0]):
        return _Const(vals[0])
    for s in bs[0].sca:
        A = np.column_stack([np.ones(t.size), [b.sca[s] for b in bs]])
        c = _exact(A, t)
        if c is not None:
            return _Scalar(float(c[0]), s, float(c[1]), kind)
    raise _NoTemplate("a number of the derivation is not affine in one scalar datum")


def _learn_int(vals: list, bs: list[_Bind], kind: type) -> Any:
    if all(v == vals[0] for v in vals):
        return _Const(vals[0])
    Ns = [b.N for b in bs]
    a = (vals[1] - vals[0]) // (Ns[1] - Ns[0]) if Ns[1] != Ns[0] else None
    if a is None or any(v != a * n + (vals[0] - a * Ns[0]) for v, n in zip(vals, Ns,
                                                                          strict=True)):
        raise _NoTemplate("an integer of the derivation is not a N + b")
    return _Int(int(a), int(vals[0] - a * Ns[0]), kind)


def _learn_block(ts: list[np.ndarray], bs: list[_Bind], names: tuple[str, ...]) -> _Block:
    """One block of ``N`` entries per binding as :class:`_Block`: the smallest model (no
    scalar datum, then each in turn) that reproduces every binding's entries exactly."""
    t = np.concatenate(ts)
    if np.all(np.isinf(t)) and np.all(t == t[0]):
        return _Block(float(t[0]), None)
    if not np.all(np.isfinite(t)):
        raise _NoTemplate("an array of the derivation mixes finite and infinite entries")
    one = np.ones(t.size)
    pos = np.concatenate([b.pos for b in bs])
    vs = [np.concatenate([b.vec(n) for b in bs]) for n in names]
    keep = [k for k, v in enumerate(vs) if np.ptp(v) > 0]   # (a constant column is the 1's)
    names, vs = tuple(names[k] for k in keep), [vs[k] for k in keep]
    for s in (None, *bs[0].sca):
        cols = [one, pos, *vs]
        if s is not None:
            sv = np.concatenate([np.full(b.N, b.sca[s]) for b in bs])
            cols += [sv, *(sv * v for v in vs)]
        c = _exact(np.column_stack(cols), t)
        if c is not None:
            k = len(names)
            dv = c[3 + k:] if s is not None else np.zeros(k)
            vecs = tuple((n, float(a), float(dd)) for n, a, dd in zip(names, c[2:2 + k], dv,
                                                                       strict=True) if a or dd)
            return _Block(None, s, vecs, float(c[0]), float(c[1]),
                          float(c[2 + k]) if s is not None else 0.0)
    raise _NoTemplate("an array of the derivation is not elementwise affine in its data")


def _learn_vec(arrs: list[np.ndarray], bs: list[_Bind], col: int | None = None) -> _Vec:
    lens = _learn_int([int(a.shape[0]) for a in arrs], bs, int)
    nb, tail = (lens.a, lens.c) if isinstance(lens, _Int) else (0, int(lens.value))
    if tail < 0 or nb < 0:
        raise _NoTemplate("an array's length is not a N + b with a, b >= 0")
    fl = [np.asarray(a, dtype=float) if a.dtype.kind in "iubf" else None for a in arrs]
    if any(f is None for f in fl):
        raise _NoTemplate(f"an array of dtype {arrs[0].dtype} in the derivation")
    names: tuple[str, ...] = ("y", "~y") if all(b.y is not None for b in bs) else ()
    if all(callable(getattr(b.env.kernel, "diag", None))
           and not getattr(b.env.kernel, "stationary", False) for b in bs):
        names += ("kd",)               # (a stationary kernel's diagonal is a constant)
    if col is not None:                # a column of a matrix of N rows: of X's column too
        names += (f"X{col}",) + ((f"yX{col}", f"~yX{col}") if names else ())
    blocks = [_learn_block([f[k * b.N:(k + 1) * b.N] for f, b in zip(fl, bs, strict=True)],
                           bs, names) for k in range(nb)]
    tails = []
    for j in range(tail):
        node = _learn_scalar([float(f[nb * b.N + j]) for f, b in zip(fl, bs, strict=True)],
                             bs, float)
        tails.append(node if isinstance(node, _Scalar) else _Scalar(float(node.value), None,
                                                                     0.0, float))
    return _Vec(blocks, tails, arrs[0].dtype)


def _learn_array(arrs: list[np.ndarray], bs: list[_Bind]) -> Any:
    a0 = arrs[0]
    if any(a.dtype != a0.dtype or a.ndim != a0.ndim for a in arrs):
        raise _NoTemplate("an array of the derivation changes dtype or dimension")
    if a0.ndim == 0:
        node = _learn_scalar([a.item() for a in arrs], bs, float)
        return _Const(a0.copy()) if isinstance(node, _Const) else _Arr0(node, a0.dtype)
    if a0.ndim == 1:
        return _learn_vec(arrs, bs)
    if a0.ndim != 2:
        raise _NoTemplate("an array of more than two dimensions in the derivation")
    order = "F" if a0.flags.f_contiguous and not a0.flags.c_contiguous else "C"
    r = _learn_int([a.shape[0] for a in arrs], bs, int)
    c = _learn_int([a.shape[1] for a in arrs], bs, int)
    if isinstance(r, _Const) and isinstance(c, _Const):
        return _Mat(None, [_learn_vec([a.ravel(order=order) for a in arrs], bs)],
                    a0.shape, order)
    if isinstance(c, _Const):          # columns of N entries
        dx = {b.env.X.shape[1] for b in bs}
        return _Mat(1, [_learn_vec([a[:, j] for a in arrs], bs,
                                   j if dx == {a0.shape[1]} else None)
                        for j in range(a0.shape[1])], (), order)
    if isinstance(r, _Const):
        return _Mat(0, [_learn_vec([a[j] for a in arrs], bs) for j in range(a0.shape[0])],
                    (), order)
    raise _NoTemplate("a matrix of the derivation grows with N along both axes")


class _Arr0:
    def __init__(self, node: _Scalar, dtype: np.dtype) -> None:
        self.node, self.dtype = node, dtype

    def bind(self, b: _Bind) -> np.ndarray:
        return np.asarray(self.node.value(b), dtype=self.dtype)


def _learn_sparse(mats: list, bs: list[_Bind]) -> _Sparse:
    cls = type(mats[0])
    if any(type(m) is not cls for m in mats) or mats[0].format not in ("csr", "csc", "coo"):
        raise _NoTemplate(f"a sparse matrix of the derivation in format {mats[0].format}")
    names = ("row", "col", "data") if mats[0].format == "coo" else ("indptr", "indices", "data")
    shape = tuple(_learn_int([m.shape[k] for m in mats], bs, int) for k in range(2))
    return _Sparse(cls, shape, [_learn_vec([getattr(m, n) for m in mats], bs) for n in names])


class _Learner:
    """The parallel walk of the bound derivations of several bindings (one graph each)."""

    def __init__(self, bs: list[_Bind]) -> None:
        self.bs = bs
        self.srcs = [_sources(b.env) for b in bs]
        self.seen: dict[int, tuple[tuple, _Shared]] = {}

    def node(self, objs: list) -> Any:
        o = objs[0]
        if not isinstance(o, (*_SCALARS, int, float, np.generic)):
            where = {s.get(id(x)) for s, x in zip(self.srcs, objs, strict=True)}
            if len(where) == 1 and None not in where:
                return _Src(where.pop())
        t = type(o)
        if isinstance(o, (float, np.floating)) and all(isinstance(x, (float, np.floating))
                                                        for x in objs):
            return _learn_scalar([float(x) for x in objs], self.bs, float)
        if any(type(x) is not t for x in objs):
            raise _NoTemplate(f"a {t.__name__} of the derivation changes type between bindings")
        if isinstance(o, str) and len(self.bs[0].kernel_text) > 3 and \
                all(self.bs[0].kernel_text == b.kernel_text for b in self.bs) and \
                self.bs[0].kernel_text in o:
            if any(x != o for x in objs):
                raise _NoTemplate("a text of the derivation differs between bindings")
            return _KernelText(o.split(self.bs[0].kernel_text))
        if isinstance(o, _SCALARS):
            if any(x != o for x in objs):
                raise _NoTemplate(f"a {t.__name__} of the derivation differs between bindings"
                                  f" ({o!r} / {next(x for x in objs if x != o)!r})")
            return _Const(o)
        if isinstance(o, (int, np.integer)):
            return _learn_int([int(x) for x in objs], self.bs, t)
        if isinstance(o, (float, np.floating)):
            return _learn_scalar([float(x) for x in objs], self.bs, t)
        if isinstance(o, np.generic):
            raise _NoTemplate(f"a {t.__name__} in the derivation")
        if all(x is o for x in objs) and not isinstance(o, (dict, list, set)):
            return _Const(o)
        key = tuple(id(x) for x in objs)
        hit = self.seen.get(key[0])
        if hit is not None:
            if hit[0] != key:
                raise _NoTemplate("the derivation's objects alias differently between bindings")
            return hit[1]
        sh = _Shared()
        self.seen[key[0]] = (key, sh)
        sh.node = self._build(objs, t)
        return sh

    def _build(self, objs: list, t: type) -> Any:
        o = objs[0]
        if isinstance(o, np.ndarray):
            if t is not np.ndarray:
                raise _NoTemplate(f"an array subclass {t.__name__} in the derivation")
            return _learn_array(objs, self.bs)
        if sp.issparse(o):
            return _learn_sparse(objs, self.bs)
        if t in (set, frozenset):
            if all(isinstance(e, (*_SCALARS, int, float)) for e in o):
                if any(x != o for x in objs):
                    raise _NoTemplate("a set of the derivation differs between bindings")
                return _Copy(o) if t is set else _Const(o)
            if any(len(x) != len(o) for x in objs):
                raise _NoTemplate("a set of the derivation changes size")
            els = [_ordered(x) for x in objs]
            return _Seq(t, [self.node([e[k] for e in els]) for k in range(len(o))])
        if t in (list, tuple):
            if any(len(x) != len(o) for x in objs):
                raise _NoTemplate("a sequence of the derivation changes length")
            return _Seq(t, [self.node([x[k] for x in objs]) for k in range(len(o))])
        if isinstance(o, dict):
            if t not in (dict, OrderedDict) or any(len(x) != len(o) for x in objs):
                raise _NoTemplate("a mapping of the derivation changes size")
            items = [list(x.items()) for x in objs]
            return _Dict(t, [(self.node([it[k][0] for it in items]),
                              self.node([it[k][1] for it in items])) for k in range(len(o))])
        if t is types.MethodType:
            if any(x.__func__ is not o.__func__ for x in objs):
                raise _NoTemplate("a bound method of the derivation differs")
            return _Method(o.__func__, self.node([x.__self__ for x in objs]))
        if t is functools.partial:
            return _Partial(self.node([x.func for x in objs]), self.node([x.args for x in objs]),
                            self.node([dict(x.keywords) for x in objs]))
        if isinstance(o, (*_ATOMS, Deferred, threading.Lock().__class__)):
            raise _NoTemplate(f"a {t.__name__} of the derivation differs between bindings")
        if hasattr(o, "__dict__") and not getattr(t, "__slots__", ()):
            keys = list(o.__dict__)
            if any(list(x.__dict__) != keys for x in objs):
                raise _NoTemplate(f"a {t.__name__} of the derivation has other attributes")
            return _Obj(t, [(k, self.node([x.__dict__[k] for x in objs])) for k in keys], False)
        slots = [s for c in t.__mro__ for s in getattr(c, "__slots__", ())
                 if s not in ("__dict__", "__weakref__")]
        if slots and not hasattr(o, "__dict__"):
            present = [s for s in slots if hasattr(o, s)]
            if any([s for s in slots if hasattr(x, s)] != present for x in objs):
                raise _NoTemplate(f"a {t.__name__} of the derivation has other attributes")
            return _Obj(t, [(s, self.node([getattr(x, s) for x in objs])) for s in present],
                        True)
        raise _NoTemplate(f"a {t.__name__} of the derivation cannot be rebuilt")


def _ordered(s: Any) -> list:
    r"""A set of objects in one order for every binding: by class and name (``Variable``\ s
    of one expression), which must tell its elements apart."""
    keyed = sorted(((type(e).__name__, str(getattr(e, "name", ""))), k, e)
                   for k, e in enumerate(s))
    if len({k for k, _, _ in keyed}) != len(keyed):
        raise _NoTemplate("a set of the derivation holds objects of one class and name")
    return [e for _, _, e in keyed]


# ----------------------------------------------------------------------------- equality
def _same(a: Any, b: Any, memo: dict) -> bool:
    """Two bound derivations (or parts) equal field by field: numbers and arrays to
    round-off, everything else exactly, objects compared by their attributes."""
    if a is b:
        return True
    num = (int, float, np.integer, np.floating)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) \
            and not isinstance(b, bool):      # (a float or numpy's, as the arithmetic gives)
        return bool(np.isclose(a, b, rtol=1e-12, atol=1e-300)) or bool(a == b)
    if type(a) is not type(b):
        return False
    if isinstance(a, _SCALARS):
        return a == b
    k = (id(a), id(b))
    if k in memo:
        return True
    memo[k] = True
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            np.allclose(a, b, rtol=1e-12, atol=1e-300, equal_nan=True))
    if sp.issparse(a):
        return a.shape == b.shape and a.format == b.format and abs(
            sp.csr_matrix(a) - sp.csr_matrix(b)).max() <= 1e-12 * max(
            1.0, float(abs(sp.csr_matrix(a)).max()) if a.nnz else 1.0)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(u, v, memo) for u, v in zip(a, b, strict=True))
    if isinstance(a, (set, frozenset)):
        if all(isinstance(e, (*_SCALARS, int, float)) for e in a):
            return a == b
        return len(a) == len(b) and _same(_ordered(a), _ordered(b), memo)
    if isinstance(a, dict):
        return len(a) == len(b) and all(_same(k1, k2, memo) and _same(v1, v2, memo) for
                                        (k1, v1), (k2, v2) in zip(a.items(), b.items(),
                                                                  strict=True))
    if isinstance(a, types.MethodType):
        return a.__func__ is b.__func__ and _same(a.__self__, b.__self__, memo)
    if isinstance(a, functools.partial):
        return _same((a.func, a.args, a.keywords), (b.func, b.args, b.keywords), memo)
    if isinstance(a, (*_ATOMS, Deferred)):
        return False
    if hasattr(a, "__dict__"):
        # a private attribute set on one side only is a lazy annotation (the rendering names
        # a problem's index sets on its first printing), made again where it is read
        da, db = a.__dict__, b.__dict__
        if any(not k.startswith("_") for k in da.keys() ^ db.keys()):
            return False
        return all(_same(v, db[k], memo) for k, v in da.items() if k in db)
    slots = [s for c in type(a).__mro__ for s in getattr(c, "__slots__", ())]
    return all(_same(getattr(a, s, None), getattr(b, s, None), memo) for s in slots)
