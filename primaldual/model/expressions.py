"""The modelling language's expressions in one module: the node types (variables, data,
``phi``, Gram operators), :class:`Expr` and its algebra with :class:`Constraint`, the nonlinear
terms and the builders (``norm2``, ``sum_squares``, ``quad_form``, ``huber``, ...).

They are one module because their operators need each other (``abs(e)`` builds an
``absolute``, ``w @ phi(X)`` an ``inner``, a builder returns an :class:`Expr` holding terms), and
the package's imports form no circle (docs/architecture.md). Their documented homes
:mod:`~primaldual.model.leaves`, :mod:`~primaldual.model.expr`, :mod:`~primaldual.model.terms`
and :mod:`~primaldual.model.atoms` re-export every name from here.
"""

from __future__ import annotations

import functools
import itertools
import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import placeholders as _ph
from .symbols import latex_indexed, latex_symbol, text_indexed, text_symbol

# =================================================================================================
# node types: variables, data, phi, Gram operators (primaldual.model.leaves)
# =================================================================================================
SUM, PROD, ATOM = 0, 1, 2  # rendering precedence
#: key of the constant's symbolic text in ``Expr.ctx`` (``ε - y_i`` in ``ε + ξ_i - y_i``)
CONST = "__const__"
#: index set symbol -> running index letter
INDEX_LETTERS = {"N": "i", "d": "k", "D": "k", "K": "k", "P": "p", "M": "j"}


# ----------------------------------------------------------------------------- leaves
class Variable:
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
    """

    feature = False

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # a size given by a placeholder (Variable("xi", N)): recorded, made at bind time
        if _ph.has_deferred(args) or _ph.has_deferred(kwargs):
            return _ph.Deferred(cls, args, kwargs, label=cls.__name__)
        return super().__new__(cls)

    def __init__(self, name: str, size: int | None = None, *, index: str | None = None,
                 tex: str | None = None) -> None:
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
        """The running index of the variable's entries (``i`` over samples)."""
        return INDEX_LETTERS.get(self.index or "N", "j")

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
    def __abs__(self): return absolute(self.as_expr())
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
        :func:`~primaldual.kernels.kernel_matvec`: no N x N storage)."""
        if self._K is not None:
            return self._K @ v
        from ..kernels import kernel_matvec
        v = np.asarray(v, dtype=float)
        if v.ndim == 1:
            nz = np.flatnonzero(v)
            if nz.size < v.size:   # a sparse expansion (support vectors): K[:, S] v_S only
                return kernel_matvec(self.kernel, self.basis, v[nz], columns=nz)
        return kernel_matvec(self.kernel, self.basis, v)

    def as_expr(self) -> Expr:
        raise TypeError(f"feature-space variable {self.name!r} enters an expression only through "
                        f"'{self.name} @ phi(X)' (inner products) or 'norm2({self.name})'")

    def __matmul__(self, feat: FeatureMap) -> Expr:
        return inner(self, feat)


def _make_feature_variable(cls: type, name: str, kernel: Any, X: Any, tex: str | None,
                           env: _ph.Env) -> FeatureVariable:
    """A ``FeatureVariable`` written without data, made at bind time from ``env``."""
    k = env.need("kernel") if kernel is None else kernel
    B = env.need("X") if X is None else _ph._resolve(X, env)
    return cls(name, k, B, tex=tex)


class Data:
    """A named constant: scalar, vector (rendered ``y_i``) or matrix (rendered ``Q``).

    Multiplying an expression by vector data is elementwise (``y * (w @ phi(X) + b)``).
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if _ph.has_deferred(args) or _ph.has_deferred(kwargs):
            return _ph.Deferred(cls, args, kwargs, label="Data")
        return super().__new__(cls)

    def __init__(self, name: str, value: Any, *, tex: str | None = None,
                 txt: str | None = None) -> None:
        self.name = name
        self.value = value if isinstance(value, GramOperator) else np.asarray(value, dtype=float)
        self.ndim = 2 if isinstance(value, GramOperator) else self.value.ndim
        base_tex = tex or latex_symbol(name)
        base_txt = txt or text_symbol(name)
        if self.ndim == 1 and txt is not None and "_i" in txt:
            # the user wrote the entry with its index ("[y_i = k]")
            self.txt, self.tex = txt, (tex if tex is not None else txt)
        elif self.ndim == 1:
            self.txt, self.tex = f"{base_txt}_i", (f"{base_tex}_{{i}}" if "_" not in base_tex
                                                   else f"{{{base_tex}}}_{{i}}")
        else:
            self.txt, self.tex = base_txt, base_tex

    def __repr__(self) -> str:
        return f"Data({self.name!r})"

    # arithmetic: data is a constant expression (``1 - y``, ``-y``, ``2 * y``, ``C * e``)
    def __mul__(self, o):
        return o.__rmul__(self) if isinstance(o, AbsVector) else _as_expr(self) * o
    def __rmul__(self, o): return _as_expr(o) * _as_expr(self)
    def __add__(self, o): return _as_expr(self) + o
    def __radd__(self, o): return _as_expr(o) + _as_expr(self)
    def __sub__(self, o): return _as_expr(self) - o
    def __rsub__(self, o): return _as_expr(o) - _as_expr(self)
    def __neg__(self): return -_as_expr(self)
    def __truediv__(self, o): return _as_expr(self) / o
    def __rtruediv__(self, o): return o / _as_expr(self)
    def __matmul__(self, o): return matmul(self, o)

    @property
    def T(self) -> Data:
        """The transposed data matrix (``Data("X").T @ v``)."""
        if self.ndim != 2 or isinstance(self.value, GramOperator):
            raise TypeError(f"only a data matrix has a transpose ({self.name!r} has not)")
        name = self.name + "ᵀ" if not self.name.endswith("ᵀ") else self.name[:-1]
        out = Data(name, self.value.T, tex=self.tex + "^T")
        out.transposed_of = self     # Xᵀ @ α prints Σ_i x_ik α_i
        return out


class FeatureMap:
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


def _n_rows(X: Any) -> int:
    """Rows of ``X`` (an array, array-like or scipy sparse matrix)."""
    return int(X.shape[0]) if sp.issparse(X) else np.asarray(X).shape[0]


def _rows(X: Any) -> Any:
    """``X`` as an array whose rows can be indexed; a scipy sparse ``X`` as CSR (kept sparse)."""
    return X.tocsr() if sp.issparse(X) else np.asarray(X)


class GramOperator:
    """``Q = D_s K D_s + diag(d)`` with ``K_jk = k(x_{idx_j}, x_{idx_k})``, kept structured.

    ``s`` (``sign``) is ``y`` for classifier duals (``Q = D_y K D_y``), ``index`` maps variables to
    data rows (epsilon-SVR's 2N variables), ``diag`` is e.g. L2-SVC's ``I/C``. Backends read this
    structure (SMO computes kernel columns from ``X``; CVXPY uses a factor ``Q = L L^T``).
    A dense matrix can be wrapped with ``GramOperator.dense_matrix(Q)``.
    """

    def __init__(self, kernel: Any = None, X: np.ndarray | None = None, *, sign=None, index=None,
                 diag=None, matrix: np.ndarray | None = None) -> None:
        self.kernel, self.X, self._Q = kernel, X, None
        self.matrix = None if matrix is None else np.asarray(matrix, dtype=float)
        n = self.matrix.shape[0] if matrix is not None else (
            len(index) if index is not None else _n_rows(X))
        self.n = n
        self.sign = np.ones(n) if sign is None else np.asarray(sign, dtype=float)
        self.index = index if index is None else np.asarray(index, dtype=np.int64)
        self.diag = np.zeros(n) if diag is None else np.broadcast_to(
            np.asarray(diag, dtype=float), (n,)).copy()
        self._factor: np.ndarray | None = None

    @classmethod
    def dense_matrix(cls, Q: np.ndarray) -> GramOperator:
        return cls(matrix=Q)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.n)

    def dense(self) -> np.ndarray:
        if self._Q is None:
            if self.matrix is not None:
                Q = self.matrix.copy()
            else:
                K = np.asarray(self.kernel(self.X), dtype=float)
                if self.index is not None:
                    K = K[np.ix_(self.index, self.index)]
                Q = K * np.outer(self.sign, self.sign)
            Q[np.diag_indices_from(Q)] += self.diag
            self._Q = Q
        return self._Q

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``Q v``; a kernel-defined ``Q`` goes through the chunked
        :func:`~primaldual.kernels.kernel_matvec` (no N x N storage)."""
        if self._Q is not None or self.matrix is not None or not hasattr(self.kernel, "_fill"):
            return self.dense() @ v
        from ..kernels import kernel_matvec
        Xr = self.X if self.index is None else _rows(self.X)[self.index]
        return self.sign * kernel_matvec(self.kernel, Xr, self.sign * v) + self.diag * v

    def factor(self) -> np.ndarray:
        """``L`` with ``Q = L L^T`` from a symmetric eigendecomposition (tiny negative eigenvalues
        from round-off clipped to zero; rank-deficient columns dropped)."""
        if self._factor is None:
            self._factor = psd_factor(self.dense())
        return self._factor


def psd_factor(A: np.ndarray, rtol: float | None = None) -> np.ndarray:
    """``L`` (n x r) with ``A ~= L L^T`` for a symmetric PSD ``A``.

    LAPACK's pivoted Cholesky (``?pstrf``, rank-revealing, ``n^3/3`` flops) stops when the
    largest remaining pivot falls below ``rtol * max(diag A)`` (default ``10 eps``: only round-off
    is dropped); the factor is verified with random probes ``||A v - L L^T v||``. If the probe
    fails (an indefinite ``A``) the symmetric eigendecomposition decides: ``ValueError`` for a
    clearly indefinite matrix, otherwise its factor with round-off eigenvalues dropped.
    """
    from scipy.linalg import lapack

    A = 0.5 * (A + A.T)
    n = A.shape[0]
    dmax = float(np.max(np.abs(np.diag(A)), initial=0.0))
    if n == 0 or dmax == 0.0:
        return np.zeros((n, 0))
    rtol = 10 * np.finfo(float).eps if rtol is None else rtol
    c, piv, rank, info = lapack.dpstrf(A, lower=1, tol=rtol * dmax)
    if info >= 0 and rank > 0:
        L = np.zeros((n, rank))
        L[piv - 1] = np.tril(c)[:, :rank]
        rng = np.random.default_rng(0)
        V = rng.standard_normal((n, 2))
        err = np.abs(A @ V - L @ (L.T @ V)).max()
        if err <= 1e-9 * max(dmax, 1e-300) * np.sqrt(n):
            return L
    lam, U = np.linalg.eigh(A)
    top = max(float(np.max(np.abs(lam))), 1e-300)
    if lam[0] < -1e-8 * top:
        raise ValueError(f"matrix is not positive semidefinite (smallest eigenvalue {lam[0]:.3g});"
                         " use a PSD kernel or add a jitter")
    keep = lam > rtol * top
    return U[:, keep] * np.sqrt(lam[keep])



_ph.FACTORIES["Data"] = Data
for _cls in (Variable, Data):
    _ph.defer_calls(_cls, _ph.BINOPS + ("__rtruediv__",))
_ph.defer_calls(FeatureVariable, ("__matmul__",))
_ph.defer_calls(FeatureMap, ("__add__", "__sub__"))


# =================================================================================================
# the expression class and its algebra, constraints (primaldual.model.expr)
# =================================================================================================
# ----------------------------------------------------------------------------- helpers
def _eye(n: int):
    return sp.identity(n, format="csr")


def _const_txt(c: float) -> tuple[str, str]:
    if c == 0.5:
        return "1/2", r"\frac{1}{2}"
    if float(c).is_integer():
        s = str(int(c))
    else:
        s = f"{c:.6g}"
    return s, s


def _has_top_sum(t: str) -> bool:
    """``t`` has a ``+``/``-`` outside parentheses (so it needs them as a factor)."""
    depth = 0
    i = 0
    while i < len(t):
        ch = t[i]
        if t.startswith(r"\left(", i):
            depth += 1
            i += 6
            continue
        if t.startswith(r"\right)", i):
            depth -= 1
            i += 7
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and t.startswith((" + ", " - "), i):
            return True
        i += 1
    return False


def coef_mul(f: tuple[str, str], c: tuple[str, str]) -> tuple[str, str]:
    """Symbolic product ``f * c`` of two coefficient texts (txt, tex)."""
    out = []
    for a, b in zip(f, c, strict=True):
        neg = False
        if a.startswith("-") and " " not in a.strip("-"):
            neg, a = True, a[1:]
        if b.startswith("-") and (not _has_top_sum(b[1:])):
            neg, b = (not neg), b[1:]
        if _has_top_sum(b):
            b = f"({b})" if "\\" not in b else rf"\left({b}\right)"
        if a == "1":
            r = b
        elif b == "1":
            r = a
        else:
            r = f"{a} {b}"
        out.append(("-" if neg else "") + r)
    return out[0], out[1]


def coef_add(a: tuple[str, str], b: tuple[str, str]) -> tuple[str, str]:
    return tuple(f"{x} - {y[1:]}" if y.startswith("-") else f"{x} + {y}"  # type: ignore
                 for x, y in zip(a, b, strict=True))


def _merge_ctx(a: dict, b: dict) -> dict:
    out = dict(a)
    for v, c in b.items():
        out[v] = coef_add(out[v], c) if v in out else c
    return out


def _paren(txt: str, tex: str, prec: int, need: int) -> tuple[str, str]:
    if prec < need:
        return f"({txt})", rf"\left({tex}\right)"
    return txt, tex


def _as_expr(o: Any, size: int = 1) -> Expr:
    if isinstance(o, Expr):
        return o
    if isinstance(o, Variable):
        return o.as_expr()
    if isinstance(o, Data):
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


def _mono_text(mono) -> tuple[str, str]:
    c, sym = mono
    if sym is None:
        return _const_txt(c)
    if c == 1.0:
        return sym
    if c == -1.0:
        return coef_mul(("-1", "-1"), sym)
    return coef_mul(_const_txt(c), sym)


def _mono_mul(a, b):
    if a is None or b is None:
        return None
    sym = a[1] if b[1] is None else b[1] if a[1] is None else coef_mul(a[1], b[1])
    return (a[0] * b[0], sym)


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
class Expr:
    """Affine vector/scalar expression, plus nonlinear terms for scalar objectives."""

    __array_priority__ = 100

    def __init__(self, size, scalar, lin, const, terms, txt, tex, prec, ctx=None,
                 summed=False, mono=None) -> None:
        self.size = int(size)
        # a constant monomial ``num * sym`` (``2``, ``C``, ``1/2 C``, ``-y_i``): rendered and
        # multiplied symbolically, so ``0.5 * C * e`` and ``C * 0.5 * e`` print alike
        self.mono: tuple[float, tuple[str, str] | None] | None = mono
        # symbolic coefficient of each variable, per row i (txt, tex); see coef_mul/coef_add
        self.ctx: dict[Variable, tuple[str, str]] = dict(ctx or {})
        # variables whose row coefficients are summed over i in this (scalar) expression
        self.summed: set = (set(self.ctx) if summed is True else set() if summed is False
                            else set(summed))
        self.scalar = bool(scalar)
        self.lin: dict[Variable, Any] = lin
        self.const = np.zeros(self.size) if const is None else np.asarray(const, dtype=float)
        self.terms: list[Term] = terms
        # per-row squared norms: rq[v] = q means row i carries + q_i ||v||^2 (SVDD's ball
        # ||phi(x_i) - a||^2); allowed in constraints whose feasible set stays convex
        self.rq: dict[Variable, np.ndarray] = {}
        self.rq_txt: dict[Variable, tuple[str, str]] = {}   # the point's text, phi(x_i)
        # per-component coefficient of a variable with its own index set, in row i: ``x_ik``
        # for ``w`` in ``X @ w`` (ctx holds the row's coefficient vector ``x_i``)
        self.comp: dict[Variable, tuple[str, str]] = {}
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
    def variables(self) -> list[Variable]:
        seen: dict[Variable, None] = {v: None for v in self.lin}
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
        return absolute(self)

    def __sub__(self, o: Any) -> Expr:
        return self + (-_as_expr(o))

    def __rsub__(self, o: Any) -> Expr:
        return _as_expr(o) + (-self)

    def __mul__(self, o: Any) -> Expr:
        if isinstance(o, AbsVector):
            return o.__rmul__(self)
        if isinstance(o, (numbers.Real, Data, Variable)):
            o = _as_expr(o)
        if isinstance(o, Expr) and self.is_constant and not self.terms:
            return _scale(self, o)   # keep the written order: C * y prints "C y_i"
        return self.__rmul__(o)

    def __truediv__(self, o: Any) -> Expr:
        if isinstance(o, numbers.Real):
            if o == 0:
                raise ZeroDivisionError("division of an expression by zero")
            return self.__rmul__(1.0 / float(o))
        if isinstance(o, Data) and o.ndim == 0:
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
        if isinstance(o, (numbers.Real, Data)):
            o = _as_expr(o)
        if isinstance(o, Variable):
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
                if isinstance(u, Variable):
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
            out = out + (M.apply(x) if getattr(M, "cross", False) else M @ v.gram_matvec(x))
        for v, q in self.rq.items():
            x = _lookup(point, v)
            out = out + q * float(x @ v.gram_matvec(x))
        return out

    def value(self, point: dict[str, np.ndarray]) -> np.ndarray | float:
        val = self.affine_value(point)
        if self.scalar:
            return float(val[0]) + sum(t.value(point) for t in self.terms)
        return val

    def gradient(self, point: dict[str, np.ndarray], weights: np.ndarray | None = None
                 ) -> dict[Variable, np.ndarray]:
        """Gradient of ``weights^T expr`` per variable (feature variables: coefficient form, i.e.
        the gradient is ``sum_j g_j phi(z_j)``)."""
        w = np.ones(self.size) if weights is None else np.asarray(weights, dtype=float)
        grads: dict[Variable, np.ndarray] = {}
        for v, M in self.lin.items():
            g = np.asarray(M.T @ w).ravel()
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


def _bcast_vec(c: np.ndarray, m: int) -> np.ndarray:
    return np.broadcast_to(c, (m,)) if c.shape[0] != m else c


def _fail_terms():
    raise TypeError("nonlinear terms (norm2, sum_squares, ...) are only allowed in scalar "
                    "objective expressions")


def _lookup(point: dict, v: Variable) -> np.ndarray:
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
        if self.g.rq and (op == "==" or any(np.any(q > 0) for q in self.g.rq.values())):
            raise TypeError("a squared distance must be bounded from above (||phi(x_i) - a||^2 "
                            "<= ...): any other use makes the feasible set nonconvex")
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



_ph.defer_calls(Expr, _ph.BINOPS + ("__rtruediv__",))


# =================================================================================================
# nonlinear terms: norms, losses, quadratic forms (primaldual.model.terms)
# =================================================================================================
# ----------------------------------------------------------------------------- terms
class Term:
    """A scalar nonlinear term ``coef * atom(x)``; convex when ``curvature * coef >= 0``."""

    curvature = +1  # +1 convex atom, -1 concave atom

    def __init__(self, coef: float = 1.0) -> None:
        self.coef = float(coef)   # the true numeric factor
        self.num = float(coef)    # the numeric factor without symbolic data factors
        self.sym: tuple[str, str] | None = None  # symbolic factor (e.g. "C") for rendering

    def scaled(self, c: float, sym: tuple[str, str] | None = None) -> Term:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.coef = self.coef * c
        if sym is not None:
            new.sym = sym if self.sym is None else coef_mul(sym, self.sym)
        else:
            new.num = self.num * c
        return new

    def factor_text(self, mult: float = 1.0) -> tuple[str, str]:
        """Text of ``mult * coef * sym`` (the factor in front of a derivative)."""
        t = _const_txt(mult * self.num)
        if (self.sym is not None and t[0].isdigit() and self.sym[0].startswith("1/")
                and self.sym[1].startswith(r"\frac{1}")):
            # 2 * 1/l reads 2/l, not "2 1/l"
            return f"{t[0]}/{self.sym[0][2:]}", rf"\frac{{{t[1]}}}" + self.sym[1][len(r"\frac{1}"):]
        return coef_mul(t, self.sym) if self.sym is not None else t

    def derivative_text(self, v: Variable) -> tuple[str, str] | None:
        """Symbolic derivative of the term with respect to ``v`` (per component)."""
        return None

    @property
    def convex(self) -> bool:
        return self.curvature * self.coef >= 0

    variables: list[Variable] = []

    def value(self, point) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def gradient(self, point) -> dict[Variable, np.ndarray]:  # pragma: no cover
        raise NotImplementedError


class FeatureNorm(Term):
    """``coef * ||w||^2 = coef * beta^T K beta`` for a feature-space (or plain) variable."""

    def __init__(self, w: Variable, coef: float = 1.0) -> None:
        super().__init__(coef)
        self.w = w
        self.variables = [w]

    def value(self, point) -> float:
        x = _lookup(point, self.w)
        return self.coef * float(x @ self.w.gram_matvec(x))

    def gradient(self, point):
        return {self.w: 2.0 * self.coef * _lookup(point, self.w)}

    def derivative_text(self, v):
        if v is not self.w:
            return None
        sym = (v.txt, v.tex) if (v.feature or v.scalar) else (v.txt, v.tex)
        return coef_mul(self.factor_text(2.0), sym)


class SumSquares(Term):
    """``coef * sum_i e_i^2`` for an affine vector expression ``e``."""

    def __init__(self, e: Expr, coef: float = 1.0) -> None:
        super().__init__(coef)
        if not e.is_affine:
            raise TypeError("sum_squares needs an affine argument")
        self.e = e
        self.variables = e.variables

    def value(self, point) -> float:
        r = self.e.affine_value(point)
        return self.coef * float(r @ r)

    def gradient(self, point):
        r = self.e.affine_value(point)
        return {v: 2.0 * self.coef * g for v, g in self.e.gradient(point, r).items()}

    derivative_override: tuple[str, str] | None = None  # set by a caller that knows better

    def derivative_text(self, v):
        if v not in self.e.ctx:
            return None
        if self.derivative_override is not None:
            return coef_mul(self.factor_text(2.0), self.derivative_override)
        t, x = _paren(self.e.txt, self.e.tex, self.e.prec, PROD)
        inner_ = coef_mul((t, x), self.e.ctx[v]) if self.e.ctx[v] != ("1", "1") else (t, x)
        if self.sums_rows(v):   # v is not indexed like the rows: its derivative sums over them
            ri = row_index(self.e)
            k = ri[1] if ri is not None else "i"
            inner_ = (f"Σ_{k} {inner_[0]}", rf"\sum_{{{k}}} {inner_[1]}")
        return coef_mul(self.factor_text(2.0), inner_)

    def sums_rows(self, v) -> bool:
        """The derivative in ``v`` sums over the rows of ``e`` (``v`` is not indexed by them)."""
        if self.e.scalar or v not in self.e.ctx:
            return False
        ri = row_index(self.e)
        return v.scalar or v.feature or (v.index or "N") != (ri[0] if ri is not None else "N")


class QuadForm(Term):
    """``coef * x^T Q x`` with ``Q`` a PSD :class:`GramOperator` (kept structured)."""

    def __init__(self, x: Variable, Q: Data, coef: float = 1.0) -> None:
        super().__init__(coef)
        self.x, self.Q = x, Q
        self.variables = [x]

    @property
    def op(self) -> GramOperator:
        return self.Q.value

    def value(self, point) -> float:
        a = _lookup(point, self.x)
        return self.coef * float(a @ self.op.matvec(a))

    def gradient(self, point):
        a = _lookup(point, self.x)
        return {self.x: 2.0 * self.coef * self.op.matvec(a)}

    def derivative_text(self, v):
        if v is not self.x:
            return None
        b, bt = v.block_txt, v.block_tex
        k = v.letter
        return coef_mul(self.factor_text(2.0), (f"({self.Q.txt}{b})_{k}",
                                                 f"({self.Q.tex} {bt})_{{{k}}}"))


class Norm1(Term):
    """``coef * ||e||_1`` (convex) of an affine vector expression."""

    nonsmooth = True

    def derivative_text(self, v):
        if v not in self.e.lin:
            return None
        if self.e.txt == v.txt and not (v.blockwise or v.scalar):
            # a variable over the samples: its entry's subdifferential, ∂|u_i|
            d = (f"∂|{v.txt}|", rf"\partial |{v.tex}|")
            if self.weights is not None:
                if self.weights_sym is None:
                    return None
                d = coef_mul(self.weights_sym, d)
            return coef_mul(self.factor_text(1.0), d)
        t, x = _block_text(self.e)
        return coef_mul(self.factor_text(1.0), (f"∂‖{t}‖₁", rf"\partial \|{x}\|_1"))

    def __init__(self, e: Expr, coef: float = 1.0, weights: np.ndarray | None = None,
                 weights_sym: tuple[str, str] | None = None) -> None:
        super().__init__(coef)
        if not e.is_affine:
            raise TypeError("norm1 needs an affine argument")
        self.e = e
        self.variables = e.variables
        # Σ_k c_k |e_k| with c >= 0 (vsum(c * abs(e))); None: all ones
        self.weights = None if weights is None else np.broadcast_to(
            np.asarray(weights, dtype=float), (e.size,)).copy()
        self.weights_sym = weights_sym

    def _w(self) -> np.ndarray:
        return np.ones(self.e.size) if self.weights is None else self.weights

    def value(self, point) -> float:
        return self.coef * float(self._w() @ np.abs(self.e.affine_value(point)))

    def gradient(self, point):  # a subgradient
        g = self._w() * np.sign(self.e.affine_value(point))
        return {v: self.coef * gv for v, gv in self.e.gradient(point, g).items()}


class NormInf(Term):
    """``coef * ||e||_inf`` (convex) of an affine vector expression."""

    nonsmooth = True

    def __init__(self, e: Expr, coef: float = 1.0) -> None:
        super().__init__(coef)
        if not e.is_affine:
            raise TypeError("norm_inf needs an affine argument")
        self.e = e
        self.variables = e.variables

    def value(self, point) -> float:
        return self.coef * float(np.max(np.abs(self.e.affine_value(point)), initial=0.0))

    def gradient(self, point):  # a subgradient
        r = self.e.affine_value(point)
        g = np.zeros_like(r)
        if r.size:
            k = int(np.argmax(np.abs(r)))
            g[k] = np.sign(r[k])
        return {v: self.coef * gv for v, gv in self.e.gradient(point, g).items()}


def _entry_weights(e: Expr, weights: Any) -> np.ndarray | None:
    """Nonnegative per-entry weights of a separable term (``None``: all ones)."""
    if weights is None:
        return None
    w = np.broadcast_to(np.asarray(weights, dtype=float), (e.size,)).copy()
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("the weights of a convex loss must be finite and >= 0")
    return w


class SumLogistic(Term):
    """``coef * sum_i c_i log(1 + exp(e_i))`` (convex; weights ``c_i >= 0``, all ones by
    default, printed as ``weights_sym``)."""

    #: the KKT conditions write its derivative with σ
    definition = ("σ(u) = 1/(1 + exp(-u)), the logistic function (the loss's derivative)",
                  r"\sigma(u) = 1/(1 + e^{-u})")

    def __init__(self, e: Expr, coef: float = 1.0, weights: Any = None,
                 weights_sym: tuple[str, str] | None = None) -> None:
        super().__init__(coef)
        self.e = e
        self.variables = e.variables
        self.weights = _entry_weights(e, weights)
        self.weights_sym = weights_sym

    def _w(self) -> np.ndarray | float:
        return 1.0 if self.weights is None else self.weights

    def value(self, point) -> float:
        return self.coef * float(np.sum(self._w() * np.logaddexp(0.0, self.e.affine_value(point))))

    def gradient(self, point):
        s = self._w() * 0.5 * (1.0 + np.tanh(0.5 * self.e.affine_value(point)))
        return {v: self.coef * g for v, g in self.e.gradient(point, s).items()}

    def derivative_text(self, v):
        """``coef c_i σ(e_i) ∂e_i/∂v`` (``σ`` the logistic function)."""
        if v not in self.e.ctx:
            return None
        sig = (f"σ({self.e.txt})", rf"\sigma\left({self.e.tex}\right)")
        if self.weights is not None:
            if self.weights_sym is None:
                return None
            sig = coef_mul(self.weights_sym, sig)
        return coef_mul(coef_mul(self.factor_text(1.0), sig), self.e.ctx[v])


class Huber(Term):
    """``coef * sum_i h_delta(e_i)`` (convex) with the Huber function ``h_delta(u) = u^2/2`` for
    ``|u| <= delta`` and ``delta |u| - delta^2/2`` beyond; its convex conjugate is
    ``h_delta^*(t) = t^2/2`` on ``|t| <= delta`` (``+inf`` outside), which makes the dual of a
    Huber loss a QP with a box."""

    def __init__(self, e: Expr, delta: float, sym: tuple[str, str], coef: float = 1.0) -> None:
        super().__init__(coef)
        if not e.is_affine:
            raise TypeError("huber needs an affine argument")
        if not np.isfinite(delta) or delta <= 0:
            raise ValueError(f"delta must be a positive number, got {delta!r}")
        self.e, self.delta, self.delta_sym = e, float(delta), sym
        self.variables = e.variables
        d, dx = sym
        self.definition = (f"h_{d}(u) = u²/2 for |u| ≤ {d}, {d} |u| - {d}²/2 otherwise",
                           rf"h_{{{dx}}}(u) = u^2/2 \text{{ for }} |u| \leq {dx},\ "
                           rf"{dx} |u| - {dx}^2/2 \text{{ otherwise}}")

    def value(self, point) -> float:
        u = np.abs(self.e.affine_value(point))
        d = self.delta
        return self.coef * float(np.sum(np.where(u <= d, 0.5 * u * u, d * u - 0.5 * d * d)))

    def gradient(self, point):
        g = np.clip(self.e.affine_value(point), -self.delta, self.delta)
        return {v: self.coef * gv for v, gv in self.e.gradient(point, g).items()}

    def derivative_text(self, v):
        """``coef h'_δ(e_i) ∂e_i/∂v`` (``h'_δ(u) = clip(u, -δ, δ)``)."""
        if v not in self.e.ctx:
            return None
        d, dx = self.delta_sym
        der = (f"h'_{d}({self.e.txt})", rf"h'_{{{dx}}}\left({self.e.tex}\right)")
        return coef_mul(coef_mul(self.factor_text(1.0), der), self.e.ctx[v])


class SumBinaryEntropy(Term):
    """``coef * sum_i H(e_i)`` with the binary entropy ``H(t) = -t log t - (1-t) log(1-t)``
    (concave, on ``0 <= t <= 1``): ``-H`` is the convex conjugate of the logistic loss
    ``log(1 + exp(u))``, so it is the term a logistic loss leaves in a dual."""

    curvature = -1
    definition = ("H(t) = -t log t - (1 - t) log(1 - t), the binary entropy (the conjugate of "
                  "the logistic loss log(1 + exp(u)) is -H)",
                  r"H(t) = -t \log t - (1 - t) \log(1 - t)")

    def __init__(self, e: Expr, coef: float = 1.0, weights: Any = None) -> None:
        super().__init__(coef)
        self.e = e
        self.variables = e.variables
        self.weights = _entry_weights(e, weights)   # Σ_i c_i H(e_i) (a weighted logistic loss)

    def _w(self) -> np.ndarray | float:
        return 1.0 if self.weights is None else self.weights

    def value(self, point) -> float:
        t = np.clip(self.e.affine_value(point), 0.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -(np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0)
                  + np.where(t < 1, (1 - t) * np.log(np.where(t < 1, 1 - t, 1.0)), 0.0))
        return self.coef * float(np.sum(self._w() * h))

    def gradient(self, point):
        t = np.clip(self.e.affine_value(point), 1e-300, 1 - 1e-16)
        g = self._w() * (np.log1p(-t) - np.log(t))
        return {v: self.coef * gv for v, gv in self.e.gradient(point, g).items()}


class SumEntropy(Term):
    """``coef * sum_i -e_i log e_i`` (concave; ``0 log 0 = 0``)."""

    curvature = -1

    def __init__(self, e: Expr, coef: float = 1.0) -> None:
        super().__init__(coef)
        self.e = e
        self.variables = e.variables

    def value(self, point) -> float:
        z = np.clip(self.e.affine_value(point), 0.0, None)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(z > 0, -z * np.log(np.where(z > 0, z, 1.0)), 0.0)
        return self.coef * float(np.sum(v))

    def gradient(self, point):
        z = np.clip(self.e.affine_value(point), 1e-300, None)
        return {v: self.coef * g for v, g in self.e.gradient(point, -(np.log(z) + 1.0)).items()}


def _term_expr(term: Term, txt: str, tex: str) -> Expr:
    term.txt, term.tex = txt, tex     # the atom's own text, before any factor
    return Expr(1, True, {}, np.zeros(1), [term], txt, tex, ATOM)


# =================================================================================================
# builders: norm2, sum_squares, quad_form, huber, ... (primaldual.model.atoms)
# =================================================================================================
# ----------------------------------------------------------------------------- builders
def inner(w: FeatureVariable, feat: FeatureMap) -> Expr:
    """``<w, phi(x_i)>`` for the rows of ``feat``: ``w``'s basis points, a subset of them, or
    differences of such images (``phi(X).at(I, "i_p") - phi(X).at(J, "j_p")``)."""
    if not isinstance(w, FeatureVariable):
        raise TypeError("inner() needs a FeatureVariable as first argument")
    if not isinstance(feat, FeatureMap):
        raise TypeError(f"'{w.name} @ ...' needs phi(X), got {type(feat).__name__}")
    if not feat.new and feat.X is not w.basis and not (feat.X.shape == w.basis.shape
                                                       and np.array_equal(feat.X, w.basis)):
        raise ValueError("phi(X) must use the basis points of the feature variable "
                         f"{w.name!r} (the representer form covers its training points)")
    G = feat.S
    t, x = feat.txt, feat.tex
    if feat.new:     # new points (placeholder x): <w, phi(z)> = Σ_j β_j k(z, x_j)
        G = CrossGram(w, feat)
    out = Expr(G.shape[0], False, {w: G}, None, [], f"⟨{w.txt}, {t}⟩",
               rf"\langle {w.tex}, {x} \rangle", ATOM, ctx={w: (t, x) if " " not in t
                                                           else (f"({t})", rf"\left({x}\right)")})
    if "{I_i}" in t:     # phi(X)[I] without a subscript of its own: say what I_i is
        out.row_note = ("I_i the i-th of the selected points",
                        r"I_i\ \text{the i-th of the selected points}")
    return out


class CrossGram:
    """The map ``β -> S k(Z, B) β``: ``<w, phi(z_r)>`` at new points ``Z`` for ``w`` spanned by
    its basis ``B`` (a decision expression on the placeholder ``x``). Only evaluated
    (:meth:`apply`), in row chunks and over the non-zero ``β_j`` alone: no ``|Z| x |B|``
    array beyond a chunk."""

    cross = True

    def __init__(self, w: FeatureVariable, feat: FeatureMap, scale: float = 1.0) -> None:
        self.w, self.feat, self.scale = w, feat, scale
        self.shape = (feat.S.shape[0], w.size)

    def apply(self, beta: np.ndarray, chunk: int = 2048) -> np.ndarray:
        beta = np.asarray(beta, dtype=float).ravel()
        nz = np.flatnonzero(beta)
        Z = self.feat.X
        out = np.zeros(Z.shape[0])
        if nz.size:
            B = self.w.basis[nz]
            for lo in range(0, Z.shape[0], chunk):
                Kc = np.asarray(self.w.kernel(Z[lo:lo + chunk], B), dtype=float)
                out[lo:lo + chunk] = Kc @ beta[nz]
        return self.scale * np.asarray(self.feat.S @ out).ravel()

    def __mul__(self, c: Any) -> CrossGram:
        if not isinstance(c, numbers.Real):
            return NotImplemented
        return CrossGram(self.w, self.feat, self.scale * float(c))

    __rmul__ = __mul__

    def __neg__(self) -> CrossGram:
        return self * -1.0


def matmul(A: Data, x: Any) -> Expr:
    """``A x`` for a data matrix ``A`` (``N x d``) and a vector variable or expression of length
    ``d``: row ``i`` is ``a_iᵀx`` (``X @ w`` prints ``x_iᵀw``)."""
    if not isinstance(A, Data) or A.ndim != 2 or isinstance(A.value, GramOperator):
        raise TypeError("the left factor of '@' must be a data matrix (Data with a 2-D value)")
    e = _as_expr(x)
    if e.terms:
        _fail_terms()
    M = A.value
    if e.size != M.shape[1]:
        raise ValueError(f"shape mismatch: {A.name!r} has {M.shape[1]} columns, the vector "
                         f"{e.size} entries")
    lin = {v: sp.csr_matrix(M @ _dense_any(_broadcast(G, e.size))) for v, G in e.lin.items()}
    # x must be a combination of whole vector variables, each times a scalar, for a row to
    # print as a_iᵀ(...): anything else (an entrywise weight, a constant) is refused
    for v, G in e.lin.items():
        D = _dense_any(_broadcast(G, e.size))
        if v.scalar or D.shape != (v.size, v.size) or not np.allclose(D, D[0, 0] * np.eye(
                v.size)) or not isinstance(e.ctx.get(v), tuple):
            raise TypeError(f"'{A.name} @ x' is written for x a vector variable (or a sum of "
                            "scalar multiples of them); this x has no such rendering")
    if e.entrywise:
        raise TypeError(f"'{A.name} @ x' is written for x a vector variable (or a sum of scalar "
                        "multiples of them), not for one weighted entry by entry")
    if np.any(e.const != 0):
        raise TypeError(f"'{A.name} @ x' with a constant in x has no row rendering; write "
                        f"{A.name} @ x + {A.name} @ c with c as Data")
    src = getattr(A, "transposed_of", None)
    if src is not None:
        return _matmul_transposed(A, src, e, lin, M)
    for v in e.lin:
        # the vector a data matrix multiplies has an index set of its own, not the samples':
        # the expansion's (M, j) for a square matrix (K @ u), the features' (d, k) otherwise
        if (isinstance(v, Variable) and not v.scalar and not v.feature and v.index is None
                and getattr(v, "dim_txt", None) is None):
            v.index = "M" if M.shape[0] == M.shape[1] else "d"
    row_t = text_symbol(A.name).lower() + "_i"
    row_x = latex_indexed(A.name.lower())
    parts = [coef_mul(k, (v.block_txt, v.block_tex)) for v, k in e.ctx.items()
             if isinstance(v, Variable)]
    et, ex = parts[0]
    for p_ in parts[1:]:
        et, ex = coef_add((et, ex), p_)
    if len(parts) > 1 or " " in et:
        et, ex = f"({et})", rf"\left({ex}\right)"
    ctx = {v: coef_mul(k, (row_t, row_x)) for v, k in e.ctx.items() if isinstance(v, Variable)}
    out = Expr(M.shape[0], False, lin, M @ _bcast_vec(e.const, e.size), [],
               f"{row_t}ᵀ{et}", f"{row_x}^T {ex}", ATOM, ctx=ctx)
    for v, k in e.ctx.items():   # X @ w: the coefficient of w_k in row i is x_ik
        if isinstance(v, Variable) and k == ("1", "1") and v.blockwise and not v.feature:
            kl = v.letter
            out.comp[v] = (f"{row_t}{kl}", row_x[:-1] + f"{kl}}}" if row_x.endswith("}")
                           else f"{row_x}{kl}")
    return out


def _matmul_transposed(A: Data, src: Data, e: Expr, lin: dict, M: np.ndarray) -> Expr:
    """``Xᵀ α`` for a vector variable ``α`` over the rows of ``X``: entry ``k`` is
    ``Σ_i x_ik α_i``; its rows are ``X``'s columns (index set ``d``, letter ``k``)."""
    if len(e.lin) != 1 or e.ctx.get(next(iter(e.lin))) != ("1", "1"):
        raise TypeError(f"'{A.name} @ x' is written for x one vector variable over the rows of "
                        f"{src.name!r}")
    (v, _), = e.lin.items()
    li = v.letter
    r = "k" if li != "k" else "j"
    base_t, base_x = text_symbol(src.name).lower(), latex_symbol(src.name.lower())
    out = Expr(M.shape[0], False, lin, np.zeros(M.shape[0]), [],
               f"Σ_{li} {base_t}_{li}{r} {v.txt}",
               rf"\sum_{{{li}}} {base_x}_{{{li}{r}}} {v.tex}", PROD,
               ctx={v: (f"{base_t}_{li}{r}", rf"{base_x}_{{{li}{r}}}")})
    out.row_set = ("d", r)     # the rows of Xᵀ α are the columns of X
    return out


def _dense_any(M) -> np.ndarray:
    return np.asarray(M.toarray() if sp.issparse(M) else M, dtype=float)


def _block_text(e: Expr) -> tuple[str, str]:
    """Text of a vector expression as a block (``w``, not ``w_k``)."""
    if len(e.lin) == 1 and not np.any(e.const):
        (v, _), = e.lin.items()
        if e.txt == v.txt:
            return v.block_txt, v.block_tex
    return e.txt, e.tex


def _sks_diag(a: FeatureVariable, S: Any, chunk: int = 1024) -> np.ndarray:
    """``diag(S K Sᵀ)`` (``||phi(z_r)||^2`` of each row of ``S phi(X)``) without the Gram
    matrix when every row of ``S`` has at most two entries (points and pair differences) and the
    kernel has a ``diag``: ``s_j² k_jj + s_k² k_kk + 2 s_j s_k k(x_j, x_k)``, the cross terms in
    row chunks; otherwise from the Gram matrix."""
    S = sp.csr_matrix(S)
    nnz = np.diff(S.indptr)
    kdiag = getattr(a.kernel, "diag", None)
    if np.any(nnz > 2) or kdiag is None:
        K = a.gram()
        return np.asarray((S @ K).multiply(S).sum(axis=1)).ravel()
    kd = np.asarray(kdiag(a.basis), dtype=float)
    out = np.asarray(S.multiply(S) @ kd).ravel()          # Σ_j s_j² k_jj
    two = np.flatnonzero(nnz == 2)
    if two.size:
        j = S.indices[S.indptr[two]]
        k = S.indices[S.indptr[two] + 1]
        sj, sk = S.data[S.indptr[two]], S.data[S.indptr[two] + 1]
        cross = np.empty(two.size)
        for lo in range(0, two.size, chunk):
            hi = min(two.size, lo + chunk)
            Kc = np.asarray(a.kernel(a.basis[j[lo:hi]], a.basis[k[lo:hi]]), dtype=float)
            cross[lo:hi] = np.diag(Kc)
        out[two] += 2.0 * sj * sk * cross
    return out


def _sqdist(d: FeatureDiff) -> Expr:
    a, feat = d.a, d.feat
    e = inner(a, feat)
    S = feat.S
    diagK = _sks_diag(a, S)
    t, x = feat.txt, feat.tex
    out = Expr(e.size, False, {a: -2.0 * e.lin[a]}, diagK, [], f"‖{t} - {a.txt}‖²",
               rf"\|{x} - {a.tex}\|^2", ATOM,
               ctx={a: (f"2 ({a.txt} - {t})", rf"2 \left({a.tex} - {x}\right)"),
                    CONST: (f"k({feat.name}_i, {feat.name}_i)",
                            rf"k({feat.name}_{{i}}, {feat.name}_{{i}})")})
    out.rq = {a: np.ones(e.size)}
    out.rq_txt = {a: (t, x)}
    return out


def norm2(w: Any) -> Expr:
    """``||w||^2`` (feature-space norm via ``K`` for a FeatureVariable, Euclidean otherwise);
    ``norm2(phi(X) - a)`` is the vector of squared distances ``||phi(x_i) - a||^2``."""
    if isinstance(w, FeatureDiff):
        return _sqdist(w)
    if w.feature:
        return _term_expr(FeatureNorm(w), f"‖{w.txt}‖²", rf"\|{w.tex}\|^2")
    if w.scalar:
        return _term_expr(FeatureNorm(w), f"{w.txt}²", f"{w.tex}^2")
    return _term_expr(FeatureNorm(w), f"‖{w.block_txt}‖²", rf"\|{w.block_tex}\|^2")


def sum_squares(e: Any) -> Expr:
    """``sum_i e_i^2`` of an affine expression."""
    e = _as_expr(e)
    t, x = _paren(e.txt, e.tex, e.prec, ATOM)
    if e.scalar:
        return _term_expr(SumSquares(e), f"{t}²", f"{x}^2")
    return _term_expr(SumSquares(e), f"Σ_i {t}²", rf"\sum_{{i}} {x}^2")


def quad_form(x: Variable, Q: Data | GramOperator | np.ndarray, *, name: str = "Q",
              txt: str | None = None, tex: str | None = None) -> Expr:
    """``x^T Q x`` with ``Q`` PSD (a :class:`GramOperator` keeps kernel structure for backends)
    of a variable ``x`` (for an expression ``e``, write a variable ``r`` and the constraint
    ``r == e`` with its multiplier)."""
    if not isinstance(x, Variable) or isinstance(x, FeatureVariable):
        raise TypeError(f"quad_form(x, Q) takes a (plain) Variable x, got {type(x).__name__}: "
                        "for an expression e write a variable r, quad_form(r, Q) and the "
                        "constraint (r == e).named(...)")
    if not isinstance(Q, Data):
        op = Q if isinstance(Q, GramOperator) else GramOperator.dense_matrix(np.asarray(Q))
        Q = Data(name, op)
    if not isinstance(Q.value, GramOperator):
        Q = Data(Q.name, GramOperator.dense_matrix(Q.value), tex=Q.tex)
    b, bt = x.block_txt, x.block_tex
    return _term_expr(QuadForm(x, Q), txt or f"{b}ᵀ{Q.txt}{b}", tex or f"{bt}^T {Q.tex} {bt}")


def norm1(e: Any) -> Expr:
    """``||e||_1 = sum_k |e_k|`` of a vector variable or affine expression (printed ``‖w‖₁``
    for a variable, ``Σ_i |e_i|`` for an expression written entry by entry)."""
    e = _as_expr(e)
    t, x = _block_text(e)
    if t == e.txt and not (len(e.lin) == 1 and t == next(iter(e.lin)).block_txt):
        return AbsVector(e).summed()
    return _term_expr(Norm1(e), f"‖{t}‖₁", rf"\|{x}\|_1")


class AbsVector:
    """``|e_i|`` entry by entry (``abs(e)`` of a vector expression): a convex vector that is only
    summed, ``vsum(abs(e))`` (the l1 norm, printed ``Σ_i |e_i|``), optionally with nonnegative
    weights, ``vsum(c * abs(w))`` (``Σ_k c_k |w_k|``)."""

    def __init__(self, e: Expr, weights: np.ndarray | None = None,
                 weights_sym: tuple[str, str] | None = None, data: Data | None = None) -> None:
        if not e.is_affine:
            raise TypeError("abs needs an affine argument")
        self.e, self.weights, self.weights_sym = e, weights, weights_sym
        self.data = data     # vector weights given as Data: printed with the rows' own index

    def __rmul__(self, o: Any) -> AbsVector:
        f = _as_expr(o)
        if not f.is_constant:
            raise TypeError("abs(e) can only be multiplied by nonnegative constants")
        w = np.broadcast_to(f.const, (self.e.size,)).astype(float)
        if np.any(w < 0):
            raise ValueError("abs(e) times a negative constant is concave; weights must be >= 0")
        if isinstance(o, Data) and o.ndim == 1:
            if self.weights is not None:
                raise TypeError("abs(e) takes one vector of weights")
            return AbsVector(self.e, w, None, o)
        sym = f._factor_text()     # a scalar factor (kept apart from Data weights)
        if self.weights is not None:
            w = w * self.weights
            if self.weights_sym is not None:
                sym = coef_mul(sym, self.weights_sym)
        return AbsVector(self.e, w, sym, self.data)

    __mul__ = __rmul__

    def __add__(self, o):
        raise TypeError("abs(e) is a vector of convex entries: sum it first, vsum(abs(e))")

    __radd__ = __sub__ = __rsub__ = __add__

    def summed(self) -> Expr:
        t, x = self.e.txt, self.e.tex        # the bars delimit it
        ri = row_index(self.e)
        k = ri[1] if ri is not None else "i"
        sym = self.weights_sym
        if self.data is not None:     # the weights' entry with the rows' index: c_k |w_k|
            d = self.data
            own = d.txt.endswith("_i") and d.txt[:-2] == text_symbol(d.name)
            ds = ((text_indexed(d.name, k), latex_indexed(d.name, k)) if own or k == "i"
                  else None)
            if ds is None:
                raise ValueError(f"the weights {d.name!r} print as {d.txt!r}, indexed by i, "
                                 f"but the entries of abs(...) are indexed by {k}: name the "
                                 "Data without a custom txt")
            sym = ds if sym is None else coef_mul(sym, ds)
        wt, wx = ("", "") if sym is None else (sym[0] + " ", sym[1] + " ")
        return _term_expr(Norm1(self.e, 1.0, self.weights, sym),
                          f"Σ_{k} {wt}|{t}|", rf"\sum_{{{k}}} {wx}\left|{x}\right|")


def absolute(e: Any) -> Expr | AbsVector:
    """``|e|``: a scalar expression's absolute value (a convex term), or a vector's entries
    (:class:`AbsVector`, summed with :func:`vsum`). Also reached by Python's ``abs(e)``."""
    e = _as_expr(e)
    if e.scalar:
        t, x = e.txt, e.tex
        return _term_expr(Norm1(e), f"|{t}|", rf"\left|{x}\right|")
    return AbsVector(e)


def norm_inf(e: Any) -> Expr:
    """``||e||_inf = max_k |e_k|`` of a vector variable or affine expression."""
    e = _as_expr(e)
    t, x = _block_text(e)
    if t == e.txt and not (len(e.lin) == 1 and t == next(iter(e.lin)).block_txt):
        ri = row_index(e)
        k = ri[1] if ri is not None else "i"     # an expression written entry by entry
        return _term_expr(NormInf(e), f"max_{k} |{t}|", rf"\max_{{{k}}} \left|{x}\right|")
    return _term_expr(NormInf(e), f"‖{t}‖_∞", rf"\|{x}\|_\infty")


def sum_logistic(e: Any, weights: Data | None = None) -> Expr:
    """``sum_i log(1 + exp(e_i))``; with ``weights`` (a 1-D :class:`Data` ``c >= 0``, e.g.
    per-sample ``C_i``) ``sum_i c_i log(1 + exp(e_i))``, printed with the data's own symbol
    (``Σ_i C_i log(1 + exp(-z_i))``)."""
    e = _as_expr(e)
    if weights is None:
        return _term_expr(SumLogistic(e), f"Σ_i log(1 + exp({e.txt}))",
                          rf"\sum_{{i}} \log\left(1 + e^{{{e.tex}}}\right)")
    if not isinstance(weights, Data) or weights.ndim != 1 or weights.value.shape != (e.size,):
        raise TypeError(f"weights must be a 1-D Data of length {e.size} (so that it prints with "
                        "its name)")
    sym = (text_indexed(weights.name, "i"), latex_indexed(weights.name, "i"))
    return _term_expr(SumLogistic(e, weights=weights.value, weights_sym=sym),
                      f"Σ_i {sym[0]} log(1 + exp({e.txt}))",
                      rf"\sum_{{i}} {sym[1]} \log\left(1 + e^{{{e.tex}}}\right)")


def logistic(e: Any, weights: Data | None = None) -> Expr:
    """``sum_i log(1 + exp(e_i))``, the logistic loss summed over the rows (the same atom as
    :func:`sum_logistic`; ``weights``: ``sum_i c_i log(1 + exp(e_i))``). Its convex conjugate
    ``-H`` (the binary entropy, on ``[0, 1]``) is known to :func:`~primaldual.model.dualize.
    dualize`: written on a variable, ``C * logistic(-z)`` with ``y_i f_i = z_i [α_i]``, it
    derives kernel logistic regression's dual (with weights: ``Σ_i C_i H(α_i/C_i)``)."""
    return sum_logistic(e, weights)


def huber(e: Any, delta: Any = 1.0) -> Expr:
    """``sum_i h_δ(e_i)``: the Huber function ``u^2/2`` for ``|u| <= δ`` and ``δ |u| - δ^2/2``
    beyond (``δ`` a positive number or scalar :class:`Data`). Its conjugate is ``t^2/2`` on
    ``|t| <= δ``: the dual of a Huber loss written on a variable is a QP with a box."""
    e = _as_expr(e)
    if isinstance(delta, Data):
        if delta.ndim != 0:
            raise TypeError("delta must be a number or scalar Data")
        d, sym = float(delta.value), (delta.txt, delta.tex)
    elif isinstance(delta, numbers.Real) and not isinstance(delta, bool):
        d, sym = float(delta), _const_txt(float(delta))
    else:
        raise TypeError(f"delta must be a number or scalar Data, got {type(delta).__name__}")
    term = Huber(e, d, sym)
    return _term_expr(term, f"Σ_i h_{sym[0]}({e.txt})",
                      rf"\sum_{{i}} h_{{{sym[1]}}}\left({e.tex}\right)")


def sum_entropy(e: Any) -> Expr:
    """``sum_i -e_i log e_i`` (concave)."""
    e = _as_expr(e)
    t, x = _paren(e.txt, e.tex, e.prec, ATOM)
    return _term_expr(SumEntropy(e), f"-Σ_i {t} log {t}", rf"-\sum_{{i}} {x}\log {x}")


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


def vsum(e: Any) -> Expr:
    """``sum_i e_i`` of a vector expression (rendered with a summation sign); of ``abs(e)``, the
    (weighted) l1 norm ``Σ_i c_i |e_i|``."""
    if isinstance(e, AbsVector):
        return e.summed()
    e = _as_expr(e)
    if e.scalar:
        return e
    if e.terms:
        _fail_terms()
    ones = np.ones((1, e.size))
    lin = {v: sp.csr_matrix(ones @ M) if sp.issparse(M) else ones @ M for v, M in e.lin.items()}
    t, x = _paren(e.txt, e.tex, e.prec, PROD)
    ri = row_index(e)
    k = ri[1] if ri is not None else "i"
    return Expr(1, True, lin, np.array([e.const.sum()]), [], f"Σ_{k} {t}", rf"\sum_{{{k}}} {x}",
                PROD, ctx=e.ctx, summed=True)


def dot(d: Data, x: Variable) -> Expr:
    """``d^T x`` rendered in vector notation (``yᵀα``)."""
    e = vsum(d * x)
    e.txt = f"{text_symbol(d.name)}ᵀ{x.block_txt}"
    e.tex = f"{latex_symbol(d.name)}^T {x.block_tex}"
    e.prec = ATOM
    return e


def as_expr(o: Any) -> Expr:
    """Public conversion of numbers, data and variables to :class:`Expr`."""
    return _as_expr(o)


# a call with a placeholder argument (norm2(w) for w = FeatureVariable("w")) is recorded

for _name in ("inner", "matmul", "norm2", "sum_squares", "quad_form", "norm1", "absolute",
              "norm_inf", "sum_logistic", "logistic", "huber", "sum_entropy", "vsum", "dot",
              "as_expr"):
    globals()[_name] = _ph.deferrable(globals()[_name])
_ph.defer_calls(AbsVector, ("__rmul__", "__add__"))
