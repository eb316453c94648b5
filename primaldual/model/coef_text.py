"""Symbolic coefficient texts: how the factors of an expression are written, as ``(txt, tex)``
pairs, while its numbers are computed.

:class:`~primaldual.model.expr.Expr` keeps, next to each variable's numeric coefficients, their
text per row (``y_i``, ``-C``, ``1/2 C``): products and sums of such texts
(:func:`coef_mul`, :func:`coef_add`), constants (``1/2``, ``2``), constant monomials
``num * sym`` and parentheses by precedence (``SUM < PROD < ATOM``) are built here, from strings
alone.
"""

from __future__ import annotations

SUM, PROD, ATOM = 0, 1, 2  # rendering precedence


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

