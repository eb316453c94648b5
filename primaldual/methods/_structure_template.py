"""The shape template of a BoxQP record (:mod:`._structure` says when one is learned and bound).

A record detected on a method's (or a spec's) dual is learned here as a function of the dual
data: the *shape* of the data (each datum a scalar, ``±1`` labels, a vector or infinite), the
template's nodes (an array of blocks of ``N`` entries, each an elementwise affine function of
the data; a scalar; a field equal on every binding; a kernel operator; the maps of eliminated
variables), the least squares that learn them from probes and refuse what is not of that form
(:class:`_NoTemplate`), the probes' rows and perturbed data, and the field-by-field equality a
template is checked with.

Everything here is a pure function of records and data: the caches of templates and the
decision of when to learn live in :mod:`._structure`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..model.detection import LinearMap, QuadGradient
from ..model.gram import GramOperator
from ..model.records import BoxQP

__all__: list[str] = []


class _NoTemplate(Exception):
    """The detected records are not an elementwise affine function of the dual data."""


# ----------------------------------------------------------------------------- the shape
_F64 = np.dtype(np.float64)


def _kind(v: Any) -> str:
    """``"scalar"``, ``"pm1"`` (labels: both -1 and +1, nothing else), ``"vector"``, ``"inf"``
    (every entry ``+inf``: the hard margin's C) or ``"mixed"`` (some infinite or NaN)."""
    if type(v) is np.ndarray:
        a = v if v.dtype is _F64 else v.astype(np.float64)
        if a.ndim == 0:
            return "scalar"
    elif isinstance(v, (float, int, np.number)):
        return "scalar"
    else:
        a = np.asarray(v, dtype=np.float64)
        if a.ndim == 0:
            return "scalar"
    if not a.size:
        return "vector"
    ss = float(a @ a)                  # one pass: finite iff every entry is (but for overflow)
    if not math.isfinite(ss):
        return "inf" if bool(np.all(a == math.inf)) else "mixed"
    if ss == a.size:                   # labels: both -1 and +1, nothing else
        pos = np.count_nonzero(a == 1.0)
        if 0 < pos < a.size and pos + np.count_nonzero(a == -1.0) == a.size:
            return "pm1"
    return "vector"


def _shape(values: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((k, _kind(v)) for k, v in values.items())


def _shape_ctx(values: dict[str, Any], N: int, X: Any, kernel: Any) -> tuple[tuple, _Ctx]:
    """:func:`_shape` and :func:`_ctx` in one pass (what every fit runs)."""
    shape, vec, sca = [], {}, {}
    for k, v in values.items():
        kind = _kind(v)
        shape.append((k, kind))
        if kind == "scalar":
            sca[k] = float(v)
        elif kind in ("pm1", "vector"):
            vec[k] = v if type(v) is np.ndarray and v.dtype is _F64 else np.asarray(v, float)
    return tuple(shape), _Ctx(N, vec, sca, X, kernel)


class _Ctx:
    """One binding: the dual data split into per-sample vectors and scalars, with ``N``, the
    rows and the kernel the dual's ``Q`` is built on."""

    __slots__ = ("N", "vec", "sca", "X", "kernel")

    def __init__(self, N: int, vec: dict, sca: dict, X: Any, kernel: Any) -> None:
        self.N, self.vec, self.sca, self.X, self.kernel = N, vec, sca, X, kernel


def _ctx(values: dict[str, Any], shape: tuple, N: int, X: Any, kernel: Any) -> _Ctx:
    vec = {k: np.asarray(values[k], dtype=float) for k, kind in shape
           if kind in ("pm1", "vector")}
    sca = {k: float(values[k]) for k, kind in shape if kind == "scalar"}
    return _Ctx(N, vec, sca, X, kernel)


# ----------------------------------------------------------------------------- template nodes
class _Arr:
    """An array of ``nb`` blocks of ``N`` entries (or a fixed length), each an affine function
    of the dual data (``coef``: ``[c_0, c_k (vectors), d_j (scalars), c_pos]``; ``None``: the
    block is ``+inf``), compiled into a plan per block (binding runs every fit: a few numpy
    operations, no Python loop over entries)."""

    def __init__(self, nb: int, fixed: int | None, coefs: list, vnames: list[str],
                 snames: list[str], integer: bool) -> None:
        self.nb, self.fixed, self.coefs = nb, fixed, coefs
        self.vnames, self.snames, self.integer = vnames, snames, integer
        nv, ns = len(vnames), len(snames)
        self.plans = []
        for coef in coefs if fixed is None else []:
            if coef is None:
                self.plans.append((np.inf, (), (), 0.0))
                continue
            sca = tuple((s, float(d)) for s, d in zip(snames, coef[1 + nv:1 + nv + ns],
                                                      strict=True) if d)
            vec = tuple((v, float(c)) for v, c in zip(vnames, coef[1:1 + nv], strict=True)
                        if c)
            self.plans.append((float(coef[0]), sca, vec, float(coef[-1])))
        self.zero = fixed is None and all(p[0] == 0.0 and not p[1] and not p[2] and not p[3]
                                          for p in self.plans)
        # one block equal to one datum (C-SVC's C, y): the datum itself (records are read,
        # never written in place)
        pl = self.plans[0] if len(self.plans) == 1 else None
        self.alias = (pl[2][0][0] if pl is not None and pl[0] == 0.0 and not pl[1]
                      and len(pl[2]) == 1 and pl[2][0][1] == 1.0 and not pl[3]
                      and not integer else None)

    def bind(self, c: _Ctx) -> np.ndarray:
        if self.fixed is not None:
            coef = self.coefs[0]
            base = coef[0] + sum(d * c.sca[s] for d, s in zip(coef[1:], self.snames, strict=True)
                                 if d)
            return np.full(self.fixed, base)
        N = c.N
        if self.alias is not None:
            return c.vec[self.alias]
        if self.zero:
            return np.zeros(self.nb * N, dtype=np.int64 if self.integer else float)
        if self.nb == 1 and not self.plans[0][2] and not self.plans[0][3] and not self.integer:
            c0, sca = self.plans[0][0], self.plans[0][1]       # one constant block (p = -1)
            for s_, d in sca:
                c0 += d * c.sca[s_]
            return np.full(N, c0)
        out = np.empty(self.nb * N)
        for k, (c0, sca, vec, pos) in enumerate(self.plans):
            o = out[k * N:(k + 1) * N]
            base = c0
            for s, d in sca:
                base += d * c.sca[s]
            if not vec:
                o.fill(base)
            else:
                v, ck = vec[0]
                np.multiply(c.vec[v], ck, out=o)
                for v, ck in vec[1:]:
                    o += ck * c.vec[v]
                if base:
                    o += base
            if pos:
                o += pos * np.arange(N)
        return np.rint(out).astype(np.int64) if self.integer else out


class _Scalar:
    def __init__(self, coef: np.ndarray, snames: list[str]) -> None:
        self.coef, self.snames = coef, snames
        self.c0 = float(coef[0])
        self.terms = tuple((s, float(d)) for d, s in zip(coef[1:], snames, strict=True) if d)

    def bind(self, c: _Ctx) -> float:
        out = self.c0
        for s, d in self.terms:
            out += d * c.sca[s]
        return out


class _Const:
    def __init__(self, value: Any) -> None:
        self.value = value

    def bind(self, c: _Ctx) -> Any:
        return self.value


class _Size:
    """An integer equal to ``k N`` (the split of two stacked blocks)."""

    def __init__(self, k: int) -> None:
        self.k = k

    def bind(self, c: _Ctx) -> int:
        return self.k * c.N


class _Gram:
    def __init__(self, sign: Any, index: Any, diag: Any) -> None:
        self.sign, self.index, self.diag = sign, index, diag

    def bind(self, c: _Ctx) -> GramOperator:
        return GramOperator(c.kernel, c.X, sign=self.sign.bind(c),
                            index=None if self.index is None else self.index.bind(c),
                            diag=None if self.diag.zero else self.diag.bind(c))


class _LinMap:
    def __init__(self, parts: list[tuple[str, Any]], scale: float) -> None:
        self.parts, self.scale = parts, scale

    def bind(self, c: _Ctx) -> LinearMap:
        return LinearMap([(name, coef.bind(c)) for name, coef in self.parts], self.scale)


class _QuadGrad:
    def __init__(self, op: _Gram, factor: Any, v: _LinMap) -> None:
        self.op, self.factor, self.v = op, factor, v

    def bind(self, c: _Ctx) -> QuadGradient:
        return QuadGradient(self.op.bind(c), self.factor.bind(c), self.v.bind(c))


# ----------------------------------------------------------------------------- learning
def _snap(c: np.ndarray) -> np.ndarray:
    """Coefficients within round-off of an integer are that integer (``-1``, ``0``, ``1``)."""
    r = np.rint(c)
    return np.where(np.abs(c - r) <= 1e-9 * np.maximum(1.0, np.abs(r)), r, c)


def _solve_affine(A: np.ndarray, t: np.ndarray) -> np.ndarray:
    # columns scaled to unit size first (C = 1e10 next to labels of 1 would leave the constant
    # term at 1e-6 of round-off), the coefficients scaled back
    scale = np.max(np.abs(A), axis=0)
    scale[scale == 0] = 1.0
    As = A / scale
    if np.linalg.matrix_rank(As) < A.shape[1]:
        raise _NoTemplate("the probes do not separate the dual data (rank-deficient)")
    cs = np.linalg.lstsq(As, t, rcond=None)[0]
    # a term contributing round-off only is 0 (then near-integers are integers): the maps
    # are structural (0, +-1, ...), and a constant of 1e-16 |t| would not be scale-free
    cs[np.abs(cs) <= 1e-11 * max(1.0, float(np.max(np.abs(t), initial=0.0)))] = 0.0
    coef = _snap(cs / scale)
    err = float(np.max(np.abs(A @ coef - t), initial=0.0))
    if err > 1e-9 * max(1.0, float(np.max(np.abs(t), initial=0.0))):
        raise _NoTemplate("an array of the record is not affine in the dual data")
    return coef


def _learn_array(arrs: list, ctxs: list[_Ctx]) -> _Arr:
    arrs = [np.asarray(a) for a in arrs]
    if any(a.ndim != 1 for a in arrs):
        raise _NoTemplate("a record array is not one-dimensional")
    integer = arrs[0].dtype.kind in "iu"
    vnames, snames = list(ctxs[0].vec), list(ctxs[0].sca)
    ms, Ns = [a.shape[0] for a in arrs], [c.N for c in ctxs]
    if len(set(ms)) == 1 and len(set(Ns)) > 1 and ms[0] not in Ns:
        fixed = ms[0]                      # a fixed length (a row of the equalities)
        A = np.array([[1.0, *[c.sca[s] for s in snames]] for c in ctxs for _ in range(fixed)])
        t = np.concatenate([a.astype(float) for a in arrs])
        if not np.all(np.isfinite(t)):
            raise _NoTemplate("a fixed-length record array is not finite")
        return _Arr(0, fixed, [_solve_affine(A, t)], vnames, snames, integer)
    nbs = {m // n if m % n == 0 else -1 for m, n in zip(ms, Ns, strict=True)}
    if len(nbs) != 1 or -1 in nbs or 0 in nbs:
        raise _NoTemplate("a record array is not made of blocks of N entries")
    nb = nbs.pop()
    coefs: list = []
    for b in range(nb):
        blocks = [a[b * c.N:(b + 1) * c.N].astype(float) for a, c in zip(arrs, ctxs,
                                                                           strict=True)]
        t = np.concatenate(blocks)
        if np.all(np.isposinf(t)):
            coefs.append(None)
            continue
        if not np.all(np.isfinite(t)):
            raise _NoTemplate("a record array mixes finite and infinite entries")
        rows = []
        for c in ctxs:
            cols = [np.ones(c.N)] + [c.vec[v] for v in vnames] \
                + [np.full(c.N, c.sca[s]) for s in snames] + [np.arange(c.N, dtype=float)]
            rows.append(np.column_stack(cols))
        coefs.append(_solve_affine(np.vstack(rows), t))
    return _Arr(nb, None, coefs, vnames, snames, integer)


def _learn_scalar(vals: list, ctxs: list[_Ctx]) -> _Scalar:
    snames = list(ctxs[0].sca)
    A = np.array([[1.0, *[c.sca[s] for s in snames]] for c in ctxs])
    t = np.asarray(vals, dtype=float)
    if not np.all(np.isfinite(t)):
        raise _NoTemplate("a scalar of the record is not finite")
    return _Scalar(_solve_affine(A, t), snames)


def _same(vals: list) -> _Const:
    v0 = vals[0]
    for v in vals[1:]:
        if type(v) is not type(v0) or v != v0:
            raise _NoTemplate("a field of the record differs between the probes")
    return _Const(v0)


def _learn_gram(ops: list, ctxs: list[_Ctx]) -> _Gram:
    for op, c in zip(ops, ctxs, strict=True):
        if not isinstance(op, GramOperator) or op.matrix is not None:
            raise _NoTemplate("Q is not a kernel operator")
        if op.kernel is not c.kernel or op.X is not c.X:
            raise _NoTemplate("Q is not built on the fit's kernel and rows")
    if any(op.index is None for op in ops) and not all(op.index is None for op in ops):
        raise _NoTemplate("Q's index map differs between the probes")
    index = None if ops[0].index is None else _learn_array([op.index for op in ops], ctxs)
    return _Gram(_learn_array([op.sign for op in ops], ctxs), index,
                 _learn_array([op.diag for op in ops], ctxs))


def _learn_linmap(maps: list, ctxs: list[_Ctx]) -> _LinMap:
    import scipy.sparse as sp

    if not all(isinstance(m, LinearMap) for m in maps):
        raise _NoTemplate("an eliminated variable is not a linear map of the record's blocks")
    names = [[n for n, _ in m.parts] for m in maps]
    if any(n != names[0] for n in names) or len({m.scale for m in maps}) != 1:
        raise _NoTemplate("an eliminated variable's map differs between the probes")
    parts = []
    for k, name in enumerate(names[0]):
        coefs = []
        for m, c in zip(maps, ctxs, strict=True):
            M = m.parts[k][1]
            if np.isscalar(M):
                coefs.append(float(M))
                continue
            S = sp.csr_matrix(M)
            d = S.diagonal()
            if S.shape != (c.N, c.N) or S.count_nonzero() != c.N or not np.all(d == d[0]):
                raise _NoTemplate("an eliminated variable is not a multiple of one block")
            coefs.append(float(d[0]))
        parts.append((name, _learn_scalar(coefs, ctxs)))
    return _LinMap(parts, maps[0].scale)


def _learn_derived(dicts: list[dict], ctxs: list[_Ctx], kind: str) -> dict:
    keys = list(dicts[0])
    if any(list(d) != keys for d in dicts):
        raise _NoTemplate("the eliminated variables differ between the probes")
    out = {}
    for k in keys:
        objs = [d[k] for d in dicts]
        if kind == "values":
            out[k] = _learn_linmap(objs, ctxs)
        else:
            if not all(isinstance(o, QuadGradient) for o in objs):
                raise _NoTemplate("a derived multiplier is not a kernel gradient")
            out[k] = _QuadGrad(_learn_gram([o.op for o in objs], ctxs),
                               _learn_scalar([o.factor for o in objs], ctxs),
                               _learn_linmap([o.v for o in objs], ctxs))
    return out


class _Template:
    """A BoxQP record as a function of the dual data (see the module docstring)."""

    def __init__(self, records: list[BoxQP], ctxs: list[_Ctx], name: str) -> None:
        self.name = name
        self.fields: dict[str, Any] = {}
        for f in dataclasses.fields(BoxQP):
            vals = [getattr(r, f.name) for r in records]
            if f.name == "Q":
                node: Any = _learn_gram(vals, ctxs)
            elif f.name in ("p", "C", "sign"):
                node = _Const(None) if vals[0] is None else _learn_array(vals, ctxs)
            elif f.name in ("delta", "nu_total"):
                node = _Const(None) if vals[0] is None else _learn_scalar(vals, ctxs)
            elif f.name == "split":
                if vals[0] is None:
                    node = _same(vals)
                else:
                    ks = {v // c.N if v % c.N == 0 else -1 for v, c in zip(vals, ctxs,
                                                                          strict=True)}
                    if len(ks) != 1 or -1 in ks:
                        raise _NoTemplate("the split of the stacked blocks is not k N")
                    node = _Size(ks.pop())
            elif f.name == "derived":
                node = _learn_derived(vals, ctxs, "values")
            elif f.name == "derived_multipliers":
                node = _learn_derived(vals, ctxs, "multipliers")
            elif f.name == "origin":
                continue
            else:
                node = _same(vals)
            self.fields[f.name] = node

        self.origin = f"detected on {self.name!r} (shape template)"
        # the fields equal on every binding (kind, names, ...) are set at once; dicts copied
        for k, node in list(self.fields.items()):
            if isinstance(node, _Scalar) and not node.terms:
                self.fields[k] = _Const(node.c0)      # a number equal on every binding
        self.static = {k: node.value for k, node in self.fields.items()
                       if isinstance(node, _Const) and not isinstance(node.value, dict)}
        self.static["origin"] = self.origin
        self.plan = [(k, 2 if isinstance(node, dict) else
                      1 if isinstance(node, _Const) else 0, node)
                     for k, node in self.fields.items() if k not in self.static]

    def bind(self, c: _Ctx) -> BoxQP:
        rec = object.__new__(BoxQP)        # every field is set below (no __post_init__)
        kw = rec.__dict__
        kw.update(self.static)
        for k, how, node in self.plan:
            if how == 0:
                kw[k] = node.bind(c)
            elif how == 1:
                kw[k] = dict(node.value)
            else:
                kw[k] = {n: v.bind(c) for n, v in node.items()}
        return rec


def _arr_eq(u: Any, v: Any) -> bool:
    """Two record arrays (or two ``None``) equal in shape and to round-off (``rtol`` 1e-12)."""
    if u is None or v is None:
        return u is None and v is None
    u, v = np.asarray(u), np.asarray(v)
    return u.shape == v.shape and bool(np.allclose(u, v, rtol=1e-12, atol=1e-300))


def _equal(a: BoxQP, b: BoxQP) -> bool:
    """Field-by-field equality of two records to round-off (the check of a template)."""
    for f in dataclasses.fields(BoxQP):
        u, v = getattr(a, f.name), getattr(b, f.name)
        if f.name == "origin":
            continue
        if f.name == "Q":
            if not _same_gram(u, v):
                return False
        elif f.name in ("p", "C", "sign"):
            if not _arr_eq(u, v):
                return False
        elif f.name in ("derived", "derived_multipliers"):
            if list(u) != list(v) or not all(_same_map(u[k], v[k]) for k in u):
                return False
        elif f.name in ("delta", "nu_total"):
            if (u is None) != (v is None) or (u is not None and not np.isclose(
                    u, v, rtol=1e-12, atol=0.0)):
                return False
        elif u != v:
            return False
    return True


def _same_gram(u: Any, v: Any) -> bool:
    """The same kernel operator: one kernel and row set, equal signs, indices and diagonal."""
    return (isinstance(u, GramOperator) and isinstance(v, GramOperator)
            and u.kernel is v.kernel and u.X is v.X and u.matrix is None and v.matrix is None
            and _arr_eq(u.sign, v.sign) and _arr_eq(u.index, v.index)
            and _arr_eq(u.diag, v.diag))


def _same_map(u: Any, v: Any) -> bool:
    """Two maps of eliminated variables agree: the same parts applied to one random vector
    (a linear map), or the same operator, factor and map (a kernel gradient)."""
    if isinstance(u, QuadGradient) and isinstance(v, QuadGradient):
        return (_same_gram(u.op, v.op) and bool(np.isclose(u.factor, v.factor, rtol=1e-12))
                and _same_map(u.v, v.v))
    if not (isinstance(u, LinearMap) and isinstance(v, LinearMap)):
        return False
    if [n for n, _ in u.parts] != [n for n, _ in v.parts] or u.scale != v.scale:
        return False
    rng = np.random.default_rng(0)
    for (_, A), (_, B) in zip(u.parts, v.parts, strict=True):
        n = B.shape[1] if not np.isscalar(B) else (A.shape[1] if not np.isscalar(A) else 1)
        z = rng.standard_normal(n)
        fa = A * z if np.isscalar(A) else A @ z
        fb = B * z if np.isscalar(B) else B @ z
        if not np.allclose(fa, fb, rtol=1e-12, atol=0.0):
            return False
    return True


# ----------------------------------------------------------------------------- probes
def _perturbed(values: dict[str, Any], shape: tuple, rows: np.ndarray,
               rng: np.random.Generator) -> dict[str, Any]:
    """The dual data of a probe: vectors restricted to ``rows`` and perturbed (positive ones
    scaled by U(1, 2), signed ones shifted), scalars at least 0.1 in size and scaled by
    U(0.5, 1) (a smaller nu keeps the structural conditions the data met); ``±1`` and infinite
    vectors kept."""
    out: dict[str, Any] = {}
    for k, kind in shape:
        v = values[k]
        if kind == "scalar":           # at least 0.1 in size (epsilon = 1e-6 would leave its
            s = float(v)               # coefficient at 1e-9 of round-off), then scaled down
            out[k] = (-1.0 if s < 0 else 1.0) * max(abs(s), 0.1) * rng.uniform(0.5, 1.0)
        elif kind in ("pm1", "inf"):
            out[k] = np.asarray(v, dtype=float)[rows].copy()
        else:
            a = np.asarray(v, dtype=float)[rows]
            if np.all(a > 0):
                out[k] = a * rng.uniform(1.0, 2.0, size=a.shape)
            else:
                out[k] = a + rng.standard_normal(a.shape) * max(1.0, float(np.std(a)))
    return out


def _probe_rows(values: dict, shape: tuple, N: int, size: int,
                rng: np.random.Generator) -> np.ndarray:
    """``size`` random rows in which every ``±1`` vector takes both signs (when it does)."""
    pm = [np.asarray(values[k]) for k, kind in shape if kind == "pm1"]
    for _ in range(50):
        rows = rng.choice(N, size=size, replace=N < size)
        if all(np.unique(v[rows]).size == np.unique(v).size for v in pm):
            return rows
    raise _NoTemplate("no probe takes every sign of the ±1 data")
