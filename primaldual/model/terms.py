"""Nonlinear terms of a scalar expression: ``||w||^2``, ``sum_squares``, ``x^T P x``, the l1 and
l-inf norms, the logistic and Huber losses and the entropies, each with its value and rendering
(their convex conjugates are used by :func:`~primaldual.model.dualize.dualize`).

A term sits in :attr:`Expr.terms <primaldual.model.expr.Expr>`; :func:`_term_expr` wraps one
in an expression (the builders of :mod:`~primaldual.model.atoms` call it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .coef_text import ATOM, PROD, _const_txt, _paren, coef_mul
from .expr import Expr, _lookup, row_index
from .gram import GramOperator
from .leaves import Data, Variable


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


def _block_text(e: Expr) -> tuple[str, str]:
    """Text of a vector expression as a block (``w``, not ``w_k``)."""
    if len(e.lin) == 1 and not np.any(e.const):
        (v, _), = e.lin.items()
        if e.txt == v.txt:
            return v.block_txt, v.block_tex
    return e.txt, e.tex

