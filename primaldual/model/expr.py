"""Expressions of the modelling core: :class:`Expr` with its algebra, and :class:`Constraint`.

An :class:`Expr` is a vector (length ``m``, rendered per index ``i``) or a scalar. Its numeric
content is an affine part, ``sum_v M_v (G_v x_v) + c``, plus (scalars only) a list of convex or
concave *terms* (``||w||^2``, ``sum_squares``, ``x^T P x``, logistic, entropy). ``G_v`` is the
identity for ordinary variables and the Gram matrix ``K`` for a feature-space variable: a
feature-space ``w`` is stored by its coefficients ``beta`` over its basis points,
``w = sum_j beta_j phi(z_j)``, so ``<w, phi(z_i)> = (K beta)_i`` and ``||w||^2 = beta^T K beta``.
This is the representer form that makes the kernel trick mechanical.

Every expression also carries its text and LaTeX rendering, built with the names the user gave,
in per-index notation (``y_i (<w, phi(x_i)> + b)``).

This is the base of the expression modules: :mod:`~primaldual.model.leaves` (variables, data,
``phi``), :mod:`~primaldual.model.terms` (the nonlinear terms) and
:mod:`~primaldual.model.atoms` (the builders) import it, never the other way round. The few
classes and builders of theirs that the operators here need (``abs(e)`` builds an ``absolute``,
``e * Data`` converts the data) are reached through :data:`bindings`, which those modules fill
when they are imported.
"""

from __future__ import annotations

import itertools
import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import placeholders as _ph
from .coef_text import (
    ATOM,
    PROD,
    SUM,
    _const_txt,
    _has_top_sum,
    _merge_ctx,
    _mono_mul,
    _mono_text,
    _paren,
    coef_mul,
)
from .symbols import latex_indexed, latex_symbol, text_indexed, text_symbol

#: key of the constant's symbolic text in ``Expr.ctx`` (``ε - y_i`` in ``ε + ξ_i - y_i``)
CONST = "__const__"


# ----------------------------------------------------------------------------- operator protocol
class _Unbound:
    """Stands for a class not registered yet: nothing is an instance of it."""


def _unbound(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("the expression builders are not registered: import primaldual.model")


class Bindings:
    """The classes and builders of the modules built on this one that the operators use.

    ``leaves`` binds ``Variable`` and ``Data`` (the operands an expression is converted from),
    ``atoms`` binds ``AbsVector`` (``c * abs(e)``) and the builders ``absolute`` (``abs(e)``),
    ``matmul`` and ``inner`` (the two meanings of ``@``), each when it is imported (:func:`bind`).
    The package imports every one of them, so no operator runs before its entry is bound, and
    the imports still run downhill (``expr`` <- ``leaves`` <- ``terms`` <- ``atoms``).
    """

    Variable: Any = _Unbound
    Data: Any = _Unbound
    AbsVector: Any = _Unbound
    absolute: Any = staticmethod(_unbound)
    matmul: Any = staticmethod(_unbound)
    inner: Any = staticmethod(_unbound)


#: the registered classes and builders (:class:`Bindings`)
bindings = Bindings()


def bind(**entries: Any) -> None:
    """Register classes or builders by their :class:`Bindings` name (``bind(Data=Data)``)."""
    for name, value in entries.items():
        if not hasattr(Bindings, name):
            raise AttributeError(f"no expression binding named {name!r}")
        setattr(bindings, name, value)


# ----------------------------------------------------------------------------- helpers
def _eye(n: int):
    return sp.identity(n, format="csr")


def array_operand_error(o: Any) -> TypeError:
    """The error for a plain numpy array as an operand of the model: an array has no name to
    print, so the derivation could not say what it is."""
    shape = "x".join(str(k) for k in np.shape(o))
    return TypeError(
        f"a plain numpy array ({shape}) cannot enter a model expression: it has no name to "
        f"print in the primal, its Lagrangian and the dual. Wrap it in Data: "
        f"Data(\"A\", array) @ x, Data(\"c\", array) * e")


class ArrayOperand:
    """Numpy defers to the model's operators (``__array_ufunc__ = None``): ``ndarray @ x`` and
    ``ndarray * e`` reach the reflected operators below instead of numpy's own broadcasting,
    which would build an object array or fail with its own ``ValueError``. A number (or a
    numpy scalar, a 0-d array) is a constant; an array must be wrapped in ``Data``."""

    __array_ufunc__ = None
    __array_priority__ = 1000

    def __rmatmul__(self, o: Any) -> Any:
        if isinstance(o, np.ndarray) or sp.issparse(o):
            raise array_operand_error(o)
        return NotImplemented

    def __matmul__(self, o: Any) -> Any:
        return self.__rmatmul__(o)


def _as_expr(o: Any, size: int = 1) -> Expr:
    if isinstance(o, np.ndarray) and o.ndim == 0:
        o = float(o)
    if isinstance(o, Expr):
        return o
    if isinstance(o, bindings.Variable):
        return o.as_expr()
    if isinstance(o, bindings.Data):
        if o.ndim == 0:
            v = float(o.value)
            return Expr(1, True, {}, np.array([v]), [], o.txt, o.tex, ATOM,
                        mono=(1.0, (o.txt, o.tex)), ctx={CONST: (o.txt, o.tex)})
        if o.ndim == 1:
            return Expr(o.value.shape[0], False, {}, o.value.astype(float), [], o.txt, o.tex, ATOM,
                        mono=(1.0, (o.txt, o.tex)), ctx={CONST: (o.txt, o.tex)})
        raise TypeError(f"matrix data {o.name!r} enters an expression only as '{o.name} @ x' "
                        "(a matrix-vector product)")
    if isinstance(o, numbers.Real):
        t, x = _const_txt(float(o))
        return Expr(1, True, {}, np.array([float(o)]), [], t, x, ATOM, mono=(float(o), None),
                    ctx={CONST: (t, x)} if float(o) != 0 else None)
    if isinstance(o, np.ndarray) or sp.issparse(o):
        raise array_operand_error(o)
    raise TypeError(f"cannot use {type(o).__name__} in an expression")


def _broadcast(M, m: int):
    """Broadcast a 1-row linear map to ``m`` rows."""
    if M.shape[0] == m:
        return M
    if M.shape[0] != 1:
        raise ValueError(f"shape mismatch: {M.shape[0]} rows vs {m}")
    return sp.csr_matrix(np.ones((m, 1))) @ sp.csr_matrix(M)


def _scale_rows(M, d: np.ndarray):
    return sp.diags(d) @ M if sp.issparse(M) else d[:, None] * M



def _scale(f: Expr, e: Expr) -> Expr:
    """The product of the constant ``f`` (scalar, or a vector acting elementwise) and ``e``."""
    ft = f._factor_text()
    if e.is_constant and e.mono is not None and f.mono is not None:
        mono = _mono_mul(f.mono, e.mono)
        m = max(f.size, e.size) if not (f.scalar and e.scalar) else 1
        t, x = _mono_text(mono)
        val = _bcast_vec(f.const, m) * _bcast_vec(e.const, m)
        prec = ATOM if (mono[1] is None and mono[0] >= 0) or (
            mono[0] == 1.0 and " " not in t) else PROD
        return Expr(m, f.scalar and e.scalar, {}, val, [], t, x, prec, mono=mono,
                    ctx={CONST: (t, x)} if np.any(val != 0) else None)
    t, x = _paren(e.txt, e.tex, e.prec, PROD)
    if e.mono is not None and e.mono[1] is None and e.mono[0] == 1.0:
        t, x = "", ""
    if ft == ("1", "1"):
        txt, tex = t, x
    elif ft == ("-1", "-1"):
        if t.startswith("-") and x.startswith("-") and not _has_top_sum(t[1:]):
            txt, tex = t[1:], x[1:]           # -(-y_i f_i) reads y_i f_i
        else:
            txt, tex = "-" + t, "-" + x
    elif not t:
        txt, tex = ft
    else:
        txt, tex = f"{ft[0]} {t}", f"{ft[1]} {x}"
    if txt == "":
        txt, tex = "1", "1"
    ctx = {v: coef_mul(ft, k) for v, k in e.ctx.items()}
    if f.scalar:
        c = float(f.const[0])
        lin = {v: M * c for v, M in e.lin.items()}
        rq = {v: c * q for v, q in e.rq.items()}
        if f.mono is not None:
            num, sym = f.mono
            terms = [tm.scaled(num) for tm in e.terms]
            if sym is not None:
                terms = [tm.scaled(c / num if num else 0.0, sym) for tm in terms]
        else:
            terms = [tm.scaled(c, ft) for tm in e.terms]
        out = Expr(e.size, e.scalar, lin, c * e.const, terms, txt, tex, PROD, ctx=ctx,
                   summed=e.summed)
        out.rq, out.rq_txt = rq, dict(e.rq_txt)
        out.comp = {v: coef_mul(ft, k) for v, k in e.comp.items()}
        out.subset_of = e.subset_of
        out.row_note = e.row_note
        out.row_set = e.row_set
        out.entrywise = e.entrywise
        return out
    if e.terms:
        _fail_terms()
    d = f.const
    m = d.shape[0]
    if not e.scalar and e.size != m:
        raise ValueError(f"shape mismatch: data of length {m} times an expression of {e.size} "
                         "rows")
    lin = {v: _scale_rows(_broadcast(M, m), d) for v, M in e.lin.items()}
    out = Expr(m, False, lin, d * _bcast_vec(e.const, m), [], txt, tex, PROD, ctx=ctx)
    out.rq = {v: d * _bcast_vec(q, m) for v, q in e.rq.items()}
    out.rq_txt = dict(e.rq_txt)
    out.comp = {v: coef_mul(ft, k) for v, k in e.comp.items()}
    out.subset_of = e.subset_of
    out.row_note = e.row_note
    out.row_set = e.row_set
    out.entrywise = True
    return out


# ----------------------------------------------------------------------------- Expr
class Expr(ArrayOperand):
    """Affine vector/scalar expression, plus nonlinear terms for scalar objectives."""

    def __init__(self, size, scalar, lin, const, terms, txt, tex, prec, ctx=None,
                 summed=False, mono=None) -> None:
        self.size = int(size)
        # a constant monomial ``num * sym`` (``2``, ``C``, ``1/2 C``, ``-y_i``): rendered and
        # multiplied symbolically, so ``0.5 * C * e`` and ``C * 0.5 * e`` print alike
        self.mono: tuple[float, tuple[str, str] | None] | None = mono
        # symbolic coefficient of each variable, per row i (txt, tex); see coef_mul/coef_add
        self.ctx: dict[Any, tuple[str, str]] = dict(ctx or {})
        # variables whose row coefficients are summed over i in this (scalar) expression
        self.summed: set = (set(self.ctx) if summed is True else set() if summed is False
                            else set(summed))
        self.scalar = bool(scalar)
        self.lin: dict[Any, Any] = lin
        self.const = np.zeros(self.size) if const is None else np.asarray(const, dtype=float)
        self.terms: list[Any] = terms   # Term objects (terms.py)
        # per-row squared norms: rq[v] = q means row i carries + q_i ||v||^2 (SVDD's ball
        # ||phi(x_i) - a||^2); allowed in constraints whose feasible set stays convex
        self.rq: dict[Any, np.ndarray] = {}
        self.rq_txt: dict[Any, tuple[str, str]] = {}   # the point's text, phi(x_i)
        # per-component coefficient of a variable with its own index set, in row i: ``x_ik``
        # for ``w`` in ``X @ w`` (ctx holds the row's coefficient vector ``x_i``)
        self.comp: dict[Any, tuple[str, str]] = {}
        #: (rows kept, rows before) when this is a subset of another expression's rows
        self.subset_of: tuple[int, int] | None = None
        #: (index set, letter) of the rows when no variable says it (``Xᵀα``: ``("d", "k")``)
        self.row_set: tuple[str, str] | None = None
        #: a vector of data multiplies it entry by entry (``c * w``): no block rendering
        self.entrywise = False
        #: what an index symbol in the text stands for (``I_i`` of ``phi(X)[I]``): (txt, tex)
        self.row_note: tuple[str, str] | None = None
        self.txt, self.tex, self.prec = txt, tex, prec

    # ----- structure
    @property
    def variables(self) -> list[Any]:
        seen: dict[Any, None] = {v: None for v in self.lin}
        for t in self.terms:
            for v in t.variables:
                seen[v] = None
        return list(seen)

    @property
    def is_affine(self) -> bool:
        return not self.terms and not self.rq

    # ----- arithmetic
    @property
    def is_constant(self) -> bool:
        return not self.lin and not self.terms

    def __add__(self, o: Any) -> Expr:
        if isinstance(o, numbers.Real) and o == 0 and not isinstance(o, bool):
            return self
        o = _as_expr(o)
        if o.is_constant and not o.scalar and self.scalar and not self.is_constant:
            pass
        m = self.size if not self.scalar else o.size
        scalar = self.scalar and o.scalar
        if not self.scalar and not o.scalar and self.size != o.size:
            raise ValueError(f"shape mismatch: {self.size} rows vs {o.size}")
        lin = {v: _broadcast(M, m) for v, M in self.lin.items()}
        for v, M in o.lin.items():
            M = _broadcast(M, m)
            lin[v] = lin[v] + M if v in lin else M
        const = _bcast_vec(self.const, m) + _bcast_vec(o.const, m)
        if o.txt.startswith("-"):
            txt, tex = f"{self.txt} - {o.txt[1:]}", f"{self.tex} - {o.tex[1:]}"
        else:
            txt, tex = f"{self.txt} + {o.txt}", f"{self.tex} + {o.tex}"
        if (o.terms or self.terms) and not scalar:
            _fail_terms()
        out = Expr(m, scalar, lin, const, self.terms + o.terms, txt, tex, SUM,
                   ctx=_merge_ctx(self.ctx, o.ctx), summed=self.summed | o.summed)
        for src in (self.rq, o.rq):
            for v, q in src.items():
                out.rq[v] = out.rq.get(v, 0) + _bcast_vec(q, m)
        out.rq_txt = {**self.rq_txt, **o.rq_txt}
        out.comp = _merge_ctx(self.comp, o.comp)
        out.subset_of = self.subset_of or o.subset_of
        out.row_note = self.row_note or o.row_note
        out.row_set = self.row_set or o.row_set
        out.entrywise = self.entrywise or o.entrywise
        return out

    def __radd__(self, o: Any) -> Expr:
        if isinstance(o, numbers.Real) and o == 0 and not isinstance(o, bool):
            return self  # Python's sum() starts from 0
        return _as_expr(o) + self

    def __neg__(self) -> Expr:
        return self.__rmul__(-1.0)

    def __abs__(self):
        return bindings.absolute(self)

    def __sub__(self, o: Any) -> Expr:
        return self + (-_as_expr(o))

    def __rsub__(self, o: Any) -> Expr:
        return _as_expr(o) + (-self)

    def __mul__(self, o: Any) -> Expr:
        if isinstance(o, bindings.AbsVector):
            return o.__rmul__(self)
        if isinstance(o, (numbers.Real, bindings.Data, bindings.Variable, np.ndarray)):
            o = _as_expr(o)
        if isinstance(o, Expr) and self.is_constant and not self.terms:
            return _scale(self, o)   # keep the written order: C * y prints "C y_i"
        return self.__rmul__(o)

    def __truediv__(self, o: Any) -> Expr:
        if isinstance(o, numbers.Real):
            if o == 0:
                raise ZeroDivisionError("division of an expression by zero")
            return self.__rmul__(1.0 / float(o))
        if isinstance(o, bindings.Data) and o.ndim == 0:
            v = float(o.value)
            f = Expr(1, True, {}, np.array([1.0 / v]), [], f"1/{o.txt}", rf"\frac{{1}}{{{o.tex}}}",
                     ATOM, mono=(1.0, (f"1/{o.txt}", rf"\frac{{1}}{{{o.tex}}}")))
            return self.__rmul__(f)
        if isinstance(o, Expr) and o.is_constant and o.scalar:
            # e / (nu N) is (1/(nu N)) e: the same term, derived and printed as that product
            return self.__rmul__(o.__rtruediv__(1.0))
        raise TypeError(f"an expression can only be divided by a number, a scalar Data or a "
                        f"constant scalar expression (a Param, N, their products), not "
                        f"{type(o).__name__}" + ("" if not isinstance(o, Expr) else
                                                 " that depends on a variable"))

    def __rtruediv__(self, o: Any) -> Expr:
        """``o / e`` for a number ``o`` and a constant scalar ``e`` (``1 / (nu * N)`` prints
        ``1/(ν N)``)."""
        if not isinstance(o, numbers.Real) or isinstance(o, bool):
            raise TypeError(f"only a number can be divided by an expression, not "
                            f"{type(o).__name__}")
        if not (self.is_constant and self.scalar):
            raise TypeError("only a constant scalar expression can be a divisor")
        c = float(self.const[0])
        if c == 0:
            raise ZeroDivisionError("division by an expression whose value is zero")
        num, sym = self.mono if self.mono is not None else (1.0, (self.txt, self.tex))
        if sym is None:
            return _as_expr(float(o) / c)
        st, sx = sym
        inv = (f"1/({st})" if " " in st or "/" in st else f"1/{st}", rf"\frac{{1}}{{{sx}}}")
        mono = (float(o) / num, inv)
        t, x = _mono_text(mono)
        return Expr(1, True, {}, np.array([float(o) / c]), [], t, x,
                    ATOM if mono[0] == 1.0 else PROD, mono=mono, ctx={CONST: (t, x)})

    def _factor_text(self) -> tuple[str, str]:
        """Text of this constant as a factor (monomials bare, sums parenthesised)."""
        if self.mono is not None:
            return _mono_text(self.mono)
        return _paren(self.txt, self.tex, self.prec, PROD)

    def __rmul__(self, o: Any) -> Expr:
        if isinstance(o, (numbers.Real, bindings.Data, np.ndarray)):
            o = _as_expr(o)
        if isinstance(o, bindings.Variable):
            o = o.as_expr()
        if not isinstance(o, Expr):
            raise TypeError(f"cannot multiply an expression by {type(o).__name__}")
        f, e = o, self
        if not f.is_constant:
            f, e = e, f
        if not f.is_constant:
            raise TypeError("products of two expressions are not affine; use norm2, "
                            "sum_squares or quad_form for quadratic terms")
        return _scale(f, e)

    def __getitem__(self, idx) -> Expr:
        if self.scalar:
            raise TypeError("cannot index a scalar expression")
        rows = np.arange(self.size)[idx]
        rows = np.atleast_1d(rows)
        lin = {v: _broadcast(M, self.size)[rows] for v, M in self.lin.items()}
        out = Expr(len(rows), False, lin, _bcast_vec(self.const, self.size)[rows], [], self.txt,
                   self.tex, self.prec, ctx=self.ctx)
        out.row_note = self.row_note
        out.row_set = self.row_set
        if not np.array_equal(rows, np.arange(self.size)):
            # the rows keep their index i: they are a subset, which the default where says
            out.subset_of = (len(rows), self.size)
        out.rq = {v: _bcast_vec(q, self.size)[rows] for v, q in self.rq.items()}
        out.rq_txt = dict(self.rq_txt)
        out.comp = dict(self.comp)
        if isinstance(idx, numbers.Integral) and not isinstance(idx, bool):
            # one entry, b[0]: a scalar (it broadcasts over rows, as a threshold does), printed
            # with its 1-based index (b_1) when the expression is a bare vector variable
            out.scalar = True
            for u in self.lin:
                if isinstance(u, bindings.Variable):
                    u.entry_indexed = True   # dualize refuses it until per-entry text exists
            (v, k), = self.ctx.items() if len(self.ctx) == 1 else ((None, None),)
            if v is not None and k == ("1", "1") and self.txt == getattr(v, "txt", None):
                j = int(rows[0]) + 1
                out.txt, out.tex = f"{v.block_txt}_{j}", f"{{{v.block_tex}}}_{{{j}}}"
                out.prec = ATOM
            out.subset_of = None
        return out

    # ----- constraints (Constraint is defined below in this module)
    def __ge__(self, o: Any):
        return Constraint(self, ">=", _as_expr(o))

    def __le__(self, o: Any):
        return Constraint(self, "<=", _as_expr(o))

    def __eq__(self, o: Any):  # type: ignore[override]
        return Constraint(self, "==", _as_expr(o))

    __hash__ = object.__hash__

    # ----- numerics
    def affine_value(self, point: dict[str, np.ndarray]) -> np.ndarray:
        """Value of the affine part at ``point`` (dict name -> value; feature variables by
        their coefficients ``beta``)."""
        out = _bcast_vec(self.const, self.size).astype(float).copy()
        for v, M in self.lin.items():
            x = _lookup(point, v)
            # new points (phi(x) of the placeholder x): Σ_j β_j k(x, x_j), not through K
            # (a plain variable's metric is the identity: no call)
            out = out + (M.apply(x) if getattr(M, "cross", False)
                         else M @ (v.gram_matvec(x) if v.feature else x))
        for v, q in self.rq.items():
            x = _lookup(point, v)
            out = out + q * float(x @ (v.gram_matvec(x) if v.feature else x))
        return out

    def value(self, point: dict[str, np.ndarray]) -> np.ndarray | float:
        val = self.affine_value(point)
        if self.scalar:
            return float(val[0]) + sum(t.value(point) for t in self.terms)
        return val

    def gradient(self, point: dict[str, np.ndarray], weights: np.ndarray | None = None
                 ) -> dict[Any, np.ndarray]:
        """Gradient of ``weights^T expr`` per variable (feature variables: coefficient form, i.e.
        the gradient is ``sum_j g_j phi(z_j)``)."""
        w = np.ones(self.size) if weights is None else np.asarray(weights, dtype=float)
        grads: dict[Any, np.ndarray] = {}
        for v, M in self.lin.items():
            g = _rmatvec(M, w)
            grads[v] = grads.get(v, 0) + g
        for v, q in self.rq.items():   # d/dx (q_i ||x||^2) in coefficient form: 2 q_i x
            grads[v] = grads.get(v, 0) + 2.0 * float(w @ _bcast_vec(q, self.size)) * \
                _lookup(point, v)
        if self.terms:
            scale = float(w[0]) if self.scalar else 1.0
            for t in self.terms:
                for v, g in t.gradient(point).items():
                    grads[v] = grads.get(v, 0) + scale * g
        return grads

    def __repr__(self) -> str:
        return f"Expr({self.txt})"

    def __str__(self) -> str:
        return self.txt


def _rmatvec(M: Any, w: np.ndarray) -> np.ndarray:
    r"""``M^T w`` as a flat vector. A canonical CSR ``M`` (sorted, no duplicates) is summed
    column by column in row order, as the product with its transpose sums them, without
    building that transpose (a certificate takes a dozen such products per fit):
    ``(M^T w)_k = \sum_{i: M_{ik} \neq 0} M_{ik} w_i``."""
    if getattr(M, "format", None) == "csr" and M.has_canonical_format and w.ndim == 1:
        return np.bincount(M.indices, weights=M.data * np.repeat(w, np.diff(M.indptr)),
                           minlength=M.shape[1])
    return np.asarray(M.T @ w).ravel()


def _bcast_vec(c: np.ndarray, m: int) -> np.ndarray:
    return np.broadcast_to(c, (m,)) if c.shape[0] != m else c


def _fail_terms():
    raise TypeError("nonlinear terms (norm2, sum_squares, ...) are only allowed in scalar "
                    "objective expressions")


def _lookup(point: dict, v: Any) -> np.ndarray:
    if v.name not in point:
        raise KeyError(f"no value for variable {v.name!r} in the point")
    x = np.asarray(point[v.name], dtype=float)
    return np.atleast_1d(x).reshape(v.size)


# ----------------------------------------------------------------------------- constraints
_auto = itertools.count()

OPS_TXT = {">=": "≥", "<=": "≤", "==": "="}
OPS_TEX = {">=": r"\geq", "<=": r"\leq", "==": "="}


def _is_zero(e: Expr) -> bool:
    return not e.lin and not e.terms and bool(np.all(e.const == 0))


class Constraint:
    """``lhs (>=|<=|==) rhs`` with its named multiplier (born with the constraint).

    Parameters
    ----------
    lhs, rhs : Expr
    op : {">=", "<=", "=="}
    multiplier : str, optional
        Name of the multiplier (``"alpha"``); auto-named ``lambda<k>`` / ``nu<k>`` if omitted.
    where : str, optional
        Index-set text shown in rendering (default ``i = 1..N`` for vector constraints).
    """

    def __init__(self, lhs: Expr, op: str, rhs: Expr, multiplier: str | None = None,
                 where: str | None = None) -> None:
        if op not in OPS_TXT:
            raise ValueError(f"op must be one of '>=', '<=', '==', got {op!r}")
        lhs, rhs = _as_expr(lhs), _as_expr(rhs)
        if lhs.terms or rhs.terms:
            raise TypeError("constraints must be affine (no norm2/sum_squares/... terms), or "
                            "bound a squared distance norm2(phi(X) - a) from above")
        self.lhs, self.op, self.rhs = lhs, op, rhs
        self.g = (lhs - rhs) if op != "<=" else (rhs - lhs)
        below = bool(self.g.rq) and any(np.any(q > 0) for q in self.g.rq.values())
        if self.g.rq and op == "==":
            raise TypeError(
                "a squared distance norm2(phi(x_i) - a) cannot be fixed by an equality: its "
                "level set is a sphere, a nonconvex set; bound it from above (<= R^2 + xi_i), "
                "or from below with the ball's own R^2 (>= R^2 - xi_l, SVDD with negatives)")
        #: rows bounding a squared distance from below (SVDD's negatives,
        #: ``||phi(x_l) - a||^2 >= R^2 - xi_l``): nonconvex as written, kept as printed and
        #: made affine by the substitution ``R^2 = s + ||a||^2`` (model/ball_radius.py)
        #: when the problem is dualised or compiled
        self.below_ball = below
        self.size = self.g.size
        self.scalar = self.g.scalar
        self.multiplier = multiplier or (("nu" if op == "==" else "lambda") + str(next(_auto)))
        self.where = where
        #: (txt, tex) printed for a scalar multiplier instead of its name (a derived dual whose
        #: equality multiplier is an expression of the primal, SVDD's ``‖a‖² - R²``)
        self.label: tuple[str, str] | None = None
        ri = None if self.scalar else row_index(self.g)
        self.index_set, self.letter = ri if ri is not None else (None, "i")

    def named(self, multiplier: str, where: str | None = None) -> Constraint:
        """Name the multiplier (returns ``self`` for chaining)."""
        self.multiplier = multiplier
        if where is not None:
            self.where = where
        return self

    @property
    def equality(self) -> bool:
        return self.op == "=="

    @property
    def sign_domain(self) -> str:
        """``"free"`` for equalities, ``">= 0"`` for inequalities."""
        return "free" if self.equality else ">= 0"

    # ----- rendering
    @property
    def mult_txt(self) -> str:
        if self.label is not None:
            return self.label[0]
        return text_symbol(self.multiplier) if self.scalar else text_indexed(self.multiplier,
                                                                             self.letter)

    @property
    def mult_tex(self) -> str:
        if self.label is not None:
            return self.label[1]
        return latex_symbol(self.multiplier) if self.scalar else latex_indexed(self.multiplier,
                                                                               self.letter)

    @property
    def mult_block_txt(self) -> str:
        return text_symbol(self.multiplier)

    def where_txt(self, n_samples: int | None = None) -> str:
        """The index set of the rows (``i = 1..N``; the length itself when the rows are not
        the problem's ``n_samples`` samples)."""
        if self.scalar:
            return ""
        if self.where:
            return self.where
        note = self.lhs.row_note or self.rhs.row_note
        if note is not None:
            return self._where_default(n_samples) + f" ({note[0]})"
        return self._where_default(n_samples)

    def _where_default(self, n_samples: int | None) -> str:
        sub = self.lhs.subset_of or self.rhs.subset_of
        if sub is not None:   # rows picked from an expression over i: name the subset
            return f"{self.letter} ∈ I, a subset of {sub[0]} of the {sub[1]} rows"
        if self.index_set is not None:
            return f"{self.letter} = 1..{self.index_set}"
        if n_samples is not None and self.size != n_samples:
            return f"i = 1..{self.size}"
        return "i = 1..N"

    def txt(self) -> str:
        return f"{self.lhs.txt} {OPS_TXT[self.op]} {self.rhs.txt}"

    def tex(self) -> str:
        return f"{self.lhs.tex} {OPS_TEX[self.op]} {self.rhs.tex}"

    def g_render(self) -> tuple[str, str]:
        """``g(x)`` as (txt, tex) in the form used by the Lagrangian, zero sides dropped."""
        pos, neg = (self.lhs, self.rhs) if self.op != "<=" else (self.rhs, self.lhs)
        if _is_zero(neg):
            return pos.txt, pos.tex
        if _is_zero(pos):
            n = -neg
            return n.txt, n.tex
        return self.g.txt, self.g.tex

    def __str__(self) -> str:
        return self.render()

    def render(self, n_samples: int | None = None) -> str:
        """One line: the constraint, its index set and its multiplier with its sign."""
        dom = "" if self.equality else " ≥ 0"
        w = self.where_txt(n_samples)
        return f"{self.txt()}" + (f",  {w}" if w else "") + f"   [{self.mult_txt}{dom}]"

    def __repr__(self) -> str:
        return f"Constraint({self.txt()!r}, multiplier={self.multiplier!r})"

    def __bool__(self) -> bool:  # `a == b` must not be used as a truth value by accident
        raise TypeError("a Constraint has no truth value; did you mean to compare numbers?")

    # ----- numerics
    def value(self, point: dict) -> np.ndarray:
        """``g(x)`` (inequality: feasible when >= 0; equality: feasible when == 0)."""
        return np.atleast_1d(self.g.affine_value(point))

    def violation(self, point: dict) -> np.ndarray:
        """Per-row infeasibility: ``max(0, -g)`` or ``|h|``."""
        v = self.value(point)
        return np.abs(v) if self.equality else np.maximum(0.0, -v)


def row_index(e: Expr) -> tuple[str, str] | None:
    """``(index set, letter)`` of the rows of a vector expression whose variables all carry
    the same index set of their own (``("d", "k")`` for ``t >= 0`` with ``t`` indexed by
    features); ``None`` for rows over the samples."""
    if getattr(e, "row_set", None) is not None:
        return e.row_set
    sets = {(v.index, v.letter) for v in e.lin if not v.scalar and not v.feature}
    if len(sets) != 1:
        return None
    (iset, letter), = sets
    if iset in (None, "N") or any(v.size != e.size for v in e.lin
                                       if not v.scalar and not v.feature):
        return None
    return iset, letter



_ph.defer_calls(Expr, _ph.BINOPS + ("__rtruediv__",))
