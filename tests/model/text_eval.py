"""A small evaluator of printed formulas (test helper, issue 26): reads the TEXT of an objective
such as ``Σ_i α_i - 1/2 αᵀ(Q + I/C)α - ε (1ᵀα + 1ᵀα*)`` with its symbols bound to numbers by the
test, independently of the code that built the numeric problem.

Grammar (what the library prints): sums and differences of terms; a term is a product of
juxtaposed factors (``N C log C``, ``y_i α_i``), ``a/b`` divisions, ``Σ_i`` over the rest of the
term, ``log``, ``H(t)`` (binary entropy), postfix ``²`` and ``ᵀ`` (a row), parentheses and
tuples ``(α, μ)`` (stacked vectors). A symbol with a running index (``α_i``, ``C_i``, ``α*_i``)
is the whole vector; products of vectors are entrywise unless a row (``vᵀ``) meets a vector or
matrix.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

_TOKEN = re.compile(r"\s*(Σ_[a-z]|log|H(?=\()|[0-9]+(?:\.[0-9]*)?(?:e-?[0-9]+)?|ᵀ|²|⁻¹|[()+\-/,]"
                    r"|[A-Za-zΑ-Ωα-ω]\*?(?:_[a-z0-9]+(?:,[a-z])?)?\*?)")


class _Row:
    def __init__(self, v: np.ndarray) -> None:
        self.v = np.asarray(v, dtype=float)


def _mul(a: Any, b: Any) -> Any:
    if isinstance(a, _Row):
        if isinstance(b, _Row):
            raise ValueError("two rows in a product")
        b = np.asarray(b, dtype=float)
        if a.v.ndim == 0:                         # 1ᵀα: the all-ones row
            return float(a.v * np.sum(b))
        if b.ndim == 2:
            return _Row(a.v @ b)
        if b.ndim == 1:
            return float(a.v @ b)
        return _Row(a.v * b)
    if isinstance(b, _Row):
        if np.ndim(a) == 0:
            return _Row(a * b.v)
        raise ValueError("a vector times a row")
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim == 2 and b.ndim >= 1:
        return a @ b
    return a * b


def _binent(t: np.ndarray) -> np.ndarray:
    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -np.where(t > 0, t * np.log(t), 0.0) - np.where(t < 1, (1 - t) * np.log1p(-t), 0.0)
    return out


class TextEvaluator:
    """``TextEvaluator(symbols).value("Σ_i α_i - 1/2 αᵀQα")``; ``symbols`` maps printed names
    (``"α"``, ``"α*"``, ``"Q"``, ``"C"``, ``"y"``, ``"I"``) to numbers, vectors or matrices."""

    def __init__(self, symbols: dict[str, Any]) -> None:
        self.sym = symbols

    def value(self, text: str) -> float:
        self.toks = [t for t in _TOKEN.findall(text) if t]
        self.pos = 0
        v = self._expr()
        if self.pos != len(self.toks):
            raise ValueError(f"unparsed: {' '.join(self.toks[self.pos:])!r} in {text!r}")
        if isinstance(v, _Row) or np.ndim(v) != 0:
            raise ValueError(f"{text!r} is not a scalar")
        return float(v)

    # ----------------------------------------------------------------- parser
    def _peek(self) -> str | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def _take(self) -> str:
        t = self.toks[self.pos]
        self.pos += 1
        return t

    def _expr(self) -> Any:
        sign = 1.0
        if self._peek() == "-":
            self._take()
            sign = -1.0
        acc = _mul(sign, self._term())
        while self._peek() in ("+", "-"):
            op = self._take()
            t = self._term()
            acc = acc + t if op == "+" else acc - _mul(1.0, t)
        return acc

    def _term(self) -> Any:
        if self._peek() is not None and self._peek().startswith("Σ_"):
            self._take()
            body = self._term()
            return float(np.sum(body))
        acc = self._factor()
        while True:
            t = self._peek()
            if t == "/":
                self._take()
                acc = acc / self._factor()
            elif t is not None and t not in ("+", "-", ")", ","):
                if t.startswith("Σ_"):
                    acc = _mul(acc, self._term())
                    return acc
                acc = _mul(acc, self._factor())
            else:
                return acc

    def _factor(self) -> Any:
        v = self._atom()
        while self._peek() in ("²", "ᵀ", "⁻¹"):
            t = self._take()
            if t == "²":
                v = (v.v ** 2) if isinstance(v, _Row) else np.asarray(v, dtype=float) ** 2
            elif t == "ᵀ":
                v = _Row(v) if np.ndim(v) <= 1 else np.asarray(v).T
            else:
                v = np.linalg.inv(v) if np.ndim(v) == 2 else 1.0 / v
        return v

    def _atom(self) -> Any:
        t = self._take()
        if t == "(":
            parts = [self._expr()]
            while self._peek() == ",":
                self._take()
                parts.append(self._expr())
            if self._take() != ")":
                raise ValueError("missing )")
            return parts[0] if len(parts) == 1 else np.concatenate(
                [np.atleast_1d(p) for p in parts])
        if t == "log":
            return np.log(self._factor())
        if t == "H":
            return _binent(self._factor())
        if re.fullmatch(r"[0-9]+(?:\.[0-9]*)?(?:e-?[0-9]+)?", t):
            return float(t)
        # the running index names the whole vector: α_i -> α, α*_i -> α*, α_1,i -> α_1
        name = re.sub(r",[a-z]$", "", t)
        name = re.sub(r"(?<=[^_])_[a-z]$", "", name) if "," not in t else name
        if name not in self.sym:
            raise KeyError(f"no value bound for the printed symbol {t!r}")
        return self.sym[name]
