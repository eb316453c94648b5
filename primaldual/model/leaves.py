"""Leaves of the modelling language: variables (plain and feature-space), data and the feature
map ``phi``.

Their operators build :class:`~primaldual.model.expr.Expr` objects; the builders they reach
(``abs``, ``@``) are bound in :data:`~primaldual.model.expr.bindings` by
:mod:`~primaldual.model.atoms`, and this module binds ``Variable`` and ``Data`` there so that
:class:`~primaldual.model.expr.Expr` converts them. A matrix :class:`Data` may hold a
:class:`~primaldual.model.gram.GramOperator` (the kernel matrix, kept structured).
"""

from __future__ import annotations

import functools
import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import placeholders as _ph
from .coef_text import ATOM
from .expr import ArrayOperand, Expr, _as_expr, _eye, bind, bindings
from .gram import GramOperator
from .symbols import latex_indexed, latex_symbol, text_indexed, text_of_tex, text_symbol

#: index set symbol -> running index letter
INDEX_LETTERS = {"N": "i", "d": "k", "D": "k", "K": "k", "P": "p", "M": "j"}


def _check_letter(letter: Any) -> str | None:
    if letter is not None and (not isinstance(letter, str) or not letter.isidentifier()
                               or len(letter) != 1):
        raise TypeError(f"letter must be one letter (the running index, 'j'), got {letter!r}")
    return letter


class Variable(ArrayOperand):
    """A decision variable: a scalar (``size=None``) or a vector of length ``size``.

    Parameters
    ----------
    name : str
        Name used in rendering and in solution dictionaries (``"alpha"``, ``"xi"``, ``"b"``).
    size : int or None
        Vector length; ``None`` for a scalar.
    index : str, optional
        The symbol of the variable's own index set, printed as its dimension (``"N"`` for one
        entry per sample, ``"d"`` for one per feature, ``"K"`` per class, ``"P"`` per preference
        pair). By default a vector prints ``R^N`` when its length is the problem's number of
        samples and its length (``R^5``) otherwise. A variable indexed by anything but the
        samples is rendered as a block (``w``, ``∂L/∂w``), never per sample.
    tex : str, optional
        LaTeX symbol overriding the automatic one.
    letter : str, optional
        The running index of its entries (default: ``i`` over ``N``, ``k`` over ``d``, ``p``
        over ``P``, ``j`` otherwise): two index sets of one problem print distinct letters.
    """

    feature = False

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # a size given by a placeholder (Variable("xi", N)): recorded, made at bind time
        if _ph.has_deferred(args) or _ph.has_deferred(kwargs):
            return _ph.Deferred(cls, args, kwargs, label=cls.__name__)
        return super().__new__(cls)

    def __init__(self, name: str, size: int | None = None, *, index: str | None = None,
                 tex: str | None = None, letter: str | None = None) -> None:
        if isinstance(size, Data) and size.ndim == 0:
            # a bound size placeholder (N, d): its value, and its symbol as the index set
            index = index if index is not None else size.name
            size = int(round(float(size.value)))
        if not isinstance(name, str) or not name:
            raise TypeError("name must be a non-empty string")
        if size is not None and (not isinstance(size, numbers.Integral) or size < 1):
            raise ValueError(f"size must be a positive integer or None, got {size!r}")
        if index is not None and (not isinstance(index, str) or not index):
            raise TypeError(f"index must be a non-empty string or None, got {index!r}")
        self.name = name
        self.scalar = size is None
        self.size = 1 if size is None else int(size)
        self.index = index
        self._letter = _check_letter(letter)
        self._tex = tex
        self._describe: tuple[str, str] | None = None  # (txt, tex) override, for stacked duals

    @property
    def blockwise(self) -> bool:
        """Rendered as one block (``w``), not per sample (``w_i``): feature-space variables and
        vectors with an index set of their own (``index`` other than ``"N"``)."""
        return self.feature or (not self.scalar and self.index not in (None, "N"))

    def dimension(self, n_samples: int | None = None) -> str:
        """The dimension symbol: ``index``, ``N`` when the length is ``n_samples``, else the
        length itself."""
        if self.index is not None:
            return self.index
        if getattr(self, "dim_txt", None):   # a dimension symbol set by a method ("l")
            return self.dim_txt
        if n_samples is not None and self.size == n_samples:
            return "N"
        return str(self.size)

    # rendering
    @property
    def letter(self) -> str:
        """The running index of the variable's entries (``i`` over samples; ``letter`` when
        given)."""
        own = self.__dict__.get("_letter")
        return own if own else INDEX_LETTERS.get(self.index or "N", "j")

    _stack: tuple[str, str, str, str] | None = None  # stacked dual: (block txt/tex, entry txt/tex)

    @property
    def txt(self) -> str:
        if self._stack is not None:
            return self._stack[2]
        return text_symbol(self.name) if self.scalar else text_indexed(self.name, self.letter)

    @property
    def tex(self) -> str:
        if self._stack is not None:
            return self._stack[3]
        if self._tex is not None:
            return self._tex if self.scalar else f"{{{self._tex}}}_{{{self.letter}}}"
        return latex_symbol(self.name) if self.scalar else latex_indexed(self.name, self.letter)

    @property
    def block_txt(self) -> str:
        return self._stack[0] if self._stack is not None else text_symbol(self.name)

    @property
    def block_tex(self) -> str:
        if self._stack is not None:
            return self._stack[1]
        return self._tex or latex_symbol(self.name)

    def _stack_dims(self, n_samples, tex: bool) -> str:
        out = []
        named = getattr(self, "_stack_dim_txt", None) or [None] * len(self._stack_parts)
        for (_, size, scalar), dn in zip(self._stack_parts, named, strict=True):
            d = "" if scalar else (dn or ("N" if size == n_samples else str(size)))
            out.append((r"\mathbb{R}" if tex else "R") + ((f"^{{{d}}}" if tex else f"^{d}")
                                                          if d else ""))
        return (r" \times " if tex else " × ").join(out)

    def describe(self, n_samples: int | None = None) -> str:
        if self._stack is not None:
            return f"{self.block_txt} ∈ {self._stack_dims(n_samples, False)}"
        if self._describe is not None:
            return self._describe[0]
        return f"{self.block_txt} ∈ R" + ("" if self.scalar else f"^{self.dimension(n_samples)}")

    def describe_tex(self, n_samples: int | None = None) -> str:
        if self._stack is not None:
            return rf"{self.block_tex} \in {self._stack_dims(n_samples, True)}"
        if self._describe is not None:
            return self._describe[1]
        if self.feature:
            return rf"{self.block_tex} \in \mathcal{{H}}"
        d = self.dimension(n_samples)
        return rf"{self.block_tex} \in \mathbb{{R}}" + ("" if self.scalar else f"^{{{d}}}")

    def as_expr(self) -> Expr:
        return Expr(self.size, self.scalar, {self: _eye(self.size)}, None, [], self.txt,
                    self.tex, ATOM, ctx={self: ("1", "1")})

    def gram_matvec(self, v: np.ndarray) -> np.ndarray:  # identity metric
        return v

    def __repr__(self) -> str:
        return f"Variable({self.name!r}, size={None if self.scalar else self.size})"

    # arithmetic delegates to Expr
    def __add__(self, o): return self.as_expr() + o
    def __radd__(self, o):
        return o + self.as_expr() if isinstance(o, Expr) else self.as_expr() + o
    def __sub__(self, o): return self.as_expr() - o
    def __rsub__(self, o): return _as_expr(o) - self.as_expr()
    def __neg__(self): return -self.as_expr()
    def __abs__(self): return bindings.absolute(self.as_expr())
    def __mul__(self, o): return self.as_expr() * o
    def __rmul__(self, o): return self.as_expr().__rmul__(o)
    def __ge__(self, o): return self.as_expr() >= o
    def __le__(self, o): return self.as_expr() <= o
    def __eq__(self, o): return self.as_expr() == o  # noqa: D105  (builds a Constraint)
    __hash__ = object.__hash__
    def __getitem__(self, idx): return self.as_expr()[idx]


class FeatureVariable(Variable):
    """A variable ``w`` in the feature space of ``kernel``, spanned by the basis points ``X``.

    Its value is the coefficient vector ``beta`` with ``w = sum_j beta_j phi(x_j)``; its metric is
    ``K``: ``||w||^2 = beta^T K beta``.  Only ``||w||^2`` and ``<w, phi(x_i)>`` (``w @ phi(X)``)
    are formed, which is what makes stationarity give ``w = sum beta_i phi(x_i)`` and the dual see
    only ``K``.
    """

    feature = True

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # written without data (FeatureVariable("w")): kernel and basis come with bind
        if not args and "name" not in kwargs:      # copy/unpickle protocol: cls.__new__(cls)
            return object.__new__(cls)
        name = args[0] if args else kwargs["name"]
        kernel = args[1] if len(args) > 1 else kwargs.get("kernel")
        X = args[2] if len(args) > 2 else kwargs.get("X")
        tex = kwargs.get("tex")
        if kernel is None or X is None or _ph.has_deferred((kernel, X)):
            # a module-level function (not a closure), so that a spec pickles
            make = functools.partial(_make_feature_variable, cls, name, kernel, X, tex)
            return _ph.Deferred(make, (X,), label=f"FeatureVariable({name!r})", leaf="kernel")
        return object.__new__(cls)

    def __init__(self, name: str, kernel: Any = None, X: Any = None, *,
                 tex: str | None = None) -> None:
        X = np.asarray(X, dtype=float)
        super().__init__(name, X.shape[0], tex=tex)
        self.scalar = False
        self.kernel = kernel
        self.basis = X
        self._K: np.ndarray | None = None

    @property
    def txt(self) -> str:
        return text_symbol(self.name)

    @property
    def tex(self) -> str:
        return self._tex or latex_symbol(self.name)

    def describe(self, n_samples: int | None = None) -> str:
        import re
        # RBF(gamma=0.33962264150943394) reads RBF(gamma=0.3396)
        k = re.sub(r"\d+\.\d{5,}(e-?\d+)?", lambda m: f"{float(m.group()):.4g}", repr(self.kernel))
        return f"{self.block_txt} ∈ H (feature space of {k})"

    def gram(self) -> np.ndarray:
        """The Gram matrix of the basis (cached)."""
        if self._K is None:
            self._K = np.asarray(self.kernel(self.basis), dtype=float)
        return self._K

    def gram_matvec(self, v: np.ndarray) -> np.ndarray:
        """``K v`` (from the cached Gram if any, else the chunked
        :func:`~primaldual.kernels.kernel_matvec`: no N x N storage). The last product is
        kept: a certificate evaluates the objective, every constraint and the stationarity at
        one ``beta``."""
        if self._K is not None:
            return self._K @ v
        from ..kernels import kernel_matvec
        v = np.asarray(v, dtype=float)
        key = (v.shape, v.tobytes())
        last = self.__dict__.get("_last_matvec")
        if last is not None and last[0] == key:
            return last[1].copy()
        if v.ndim == 1 and (nz := np.flatnonzero(v)).size < v.size:
            # a sparse expansion (support vectors): K[:, S] v_S only
            out = kernel_matvec(self.kernel, self.basis, v[nz], columns=nz)
        else:
            out = kernel_matvec(self.kernel, self.basis, v)
        self.__dict__["_last_matvec"] = (key, out)
        return out.copy()

    def as_expr(self) -> Expr:
        raise TypeError(f"feature-space variable {self.name!r} enters an expression only through "
                        f"'{self.name} @ phi(X)' (inner products) or 'norm2({self.name})'")

    def __matmul__(self, feat: FeatureMap) -> Expr:
        return bindings.inner(self, feat)


def _make_feature_variable(cls: type, name: str, kernel: Any, X: Any, tex: str | None,
                           env: _ph.Env) -> FeatureVariable:
    """A ``FeatureVariable`` written without data, made at bind time from ``env``."""
    k = env.need("kernel") if kernel is None else kernel
    B = env.need("X") if X is None else _ph._resolve(X, env)
    return cls(name, k, B, tex=tex)


class Data(ArrayOperand):
    """A named constant: scalar, vector (rendered ``y_i``) or matrix (rendered ``Q``).

    Multiplying an expression by vector data is elementwise (``y * (w @ phi(X) + b)``).
    ``index`` (the symbol of the set its rows run over, ``"N_B"``) and ``letter`` (their
    running index, ``"j"``) say which rows a matrix's or a vector's entries are: the rows of
    ``Data("B", B, index="N_B", letter="j") @ w`` print ``(b_jᵀw)``, ``j = 1..N_B``, apart from
    the rows of another data set over ``i``.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if _ph.has_deferred(args) or _ph.has_deferred(kwargs):
            return _ph.Deferred(cls, args, kwargs, label="Data")
        return super().__new__(cls)

    def __init__(self, name: str, value: Any, *, tex: str | None = None,
                 txt: str | None = None, index: str | None = None,
                 letter: str | None = None) -> None:
        if index is not None and (not isinstance(index, str) or not index):
            raise TypeError(f"index must be a non-empty string or None, got {index!r}")
        self.name = name
        self.index = index
        self.letter = _check_letter(letter) or (INDEX_LETTERS.get(index, "j") if index
                                                else "i")
        if sp.issparse(value):
            # a sparse matrix stays sparse (a P x N difference matrix of query pairs): CSR/CSC
            # as given, any other format as CSR; np.asarray would make it an object array
            value = value.astype(float)
            self.value = value if value.format in ("csr", "csc") else value.tocsr()
        else:
            self.value = (value if isinstance(value, GramOperator)
                          else np.asarray(value, dtype=float))
        self.ndim = 2 if isinstance(value, GramOperator) or sp.issparse(value) else self.value.ndim
        base_tex = tex or latex_symbol(name)
        base_txt = txt or (tex and text_of_tex(tex)) or text_symbol(name)
        if self.ndim == 1 and txt is not None and "_i" in txt:
            # the user wrote the entry with its index ("[y_i = k]")
            self.txt, self.tex = txt, (tex if tex is not None else txt)
        elif self.ndim == 1:
            k = self.letter
            self.txt, self.tex = f"{base_txt}_{k}", (f"{base_tex}_{{{k}}}" if "_" not in base_tex
                                                     else f"{{{base_tex}}}_{{{k}}}")
        else:
            self.txt, self.tex = base_txt, base_tex

    def __repr__(self) -> str:
        return f"Data({self.name!r})"

    # arithmetic: data is a constant expression (``1 - y``, ``-y``, ``2 * y``, ``C * e``)
    def __mul__(self, o):
        return o.__rmul__(self) if isinstance(o, bindings.AbsVector) else _as_expr(self) * o
    def __rmul__(self, o): return _as_expr(o) * _as_expr(self)
    def __add__(self, o): return _as_expr(self) + o
    def __radd__(self, o): return _as_expr(o) + _as_expr(self)
    def __sub__(self, o): return _as_expr(self) - o
    def __rsub__(self, o): return _as_expr(o) - _as_expr(self)
    def __neg__(self): return -_as_expr(self)
    def __truediv__(self, o): return _as_expr(self) / o
    def __rtruediv__(self, o): return o / _as_expr(self)
    def __matmul__(self, o): return bindings.matmul(self, o)

    @property
    def T(self) -> Data:
        """The transposed data matrix (``Data("X").T @ v``)."""
        if self.ndim != 2 or isinstance(self.value, GramOperator):
            raise TypeError(f"only a data matrix has a transpose ({self.name!r} has not)")
        name = self.name + "ᵀ" if not self.name.endswith("ᵀ") else self.name[:-1]
        out = Data(name, self.value.T, tex=self.tex + "^T")
        out.transposed_of = self     # Xᵀ @ α prints Σ_i x_ik α_i
        return out


class FeatureMap(ArrayOperand):
    """``phi(X)``: the images of data points in feature space, used as ``w @ phi(X)``.

    Rows are linear combinations of the basis points' images (``S`` maps basis points to rows):
    ``phi(X)`` itself, a subset ``phi(X)[I]`` (or ``phi(X).at(I, "i_p")`` with the subscript to
    print) and differences ``phi(X).at(I, "i_p") - phi(X).at(J, "j_p")`` (RankSVM's pairs).
    """

    def __init__(self, X: np.ndarray, name: str = "x", rows: np.ndarray | None = None, *,
                 S: Any = None, txt: str | None = None, tex: str | None = None) -> None:
        #: new points (the placeholder x): <w, phi(x)> is evaluated over w's basis, not in it
        self.new = isinstance(X, _ph.NewPoints)
        self.X = np.asarray(X, dtype=float)
        self.name = name
        self.rows = rows
        n = self.X.shape[0]
        if S is None:
            r = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
            S = sp.csr_matrix((np.ones(len(r)), (np.arange(len(r)), r)), shape=(len(r), n))
        self.S = sp.csr_matrix(S)
        # rows 0..m-1 in order (the labelled points first) are the points x_i themselves
        plain = rows is None or np.array_equal(np.asarray(rows), np.arange(len(rows)))
        sub_t = text_indexed(name) if plain else f"{text_symbol(name)}_{{I_i}}"
        sub_x = latex_indexed(name) if plain else f"{latex_symbol(name)}_{{I_i}}"
        self.txt = txt or f"φ({sub_t})"
        self.tex = tex or rf"\phi({sub_x})"

    def __getitem__(self, idx) -> FeatureMap:
        rows = np.arange(self.S.shape[0])[idx]
        rows = np.atleast_1d(rows)
        base = np.arange(self.X.shape[0]) if self.rows is None else self.rows
        return FeatureMap(self.X, self.name, base[rows] if self.rows is not None or
                          self.S.shape[0] == self.X.shape[0] else rows, S=self.S[rows])

    def at(self, rows, sub: str, sub_tex: str | None = None) -> FeatureMap:
        """The images of the basis points ``rows``, printed ``φ(x_{sub})`` (e.g. ``"i_p"``)."""
        fm = self[np.asarray(rows, dtype=np.int64)]
        sx = sub_tex or sub
        return FeatureMap(self.X, self.name, fm.rows, S=fm.S,
                          txt=f"φ({text_symbol(self.name)}_{sub})",
                          tex=rf"\phi({latex_symbol(self.name)}_{{{sx}}})")

    def _combine(self, o: FeatureMap, sign: float) -> FeatureMap:
        if not isinstance(o, FeatureMap):
            return NotImplemented
        if o.X is not self.X or o.S.shape != self.S.shape:
            raise ValueError("feature maps combine row by row over the same points and rows")
        op = " + " if sign > 0 else " - "
        return FeatureMap(self.X, self.name, None, S=self.S + sign * o.S,
                          txt=self.txt + op + o.txt, tex=self.tex + op + o.tex)

    def __add__(self, o): return self._combine(o, 1.0)

    def __sub__(self, o):
        if isinstance(o, FeatureVariable):
            return FeatureDiff(self, o)
        return self._combine(o, -1.0)


class FeatureDiff:
    """``phi(x_i) - a`` for a feature-space point ``a``; only its squared norm is formed:
    ``norm2(phi(X) - a)`` is the vector ``||phi(x_i) - a||^2 = k(x_i, x_i) - 2 <a, phi(x_i)>
    + ||a||^2`` (SVDD's ball constraint)."""

    def __init__(self, feat: FeatureMap, a: FeatureVariable) -> None:
        self.feat, self.a = feat, a


@_ph.deferrable
def phi(X: np.ndarray, name: str = "x") -> FeatureMap:
    """The feature map applied to the rows of ``X`` (for ``w @ phi(X)``)."""
    return FeatureMap(X, name)


_ph.FACTORIES["Data"] = Data
for _cls in (Variable, Data):
    _ph.defer_calls(_cls, _ph.BINOPS + ("__rtruediv__",))
_ph.defer_calls(FeatureVariable, ("__matmul__",))
_ph.defer_calls(FeatureMap, ("__add__", "__sub__"))
bind(Variable=Variable, Data=Data)
