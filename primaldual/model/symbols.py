"""Names to symbols: one place that decides how a user's name is written in text and LaTeX.

A name such as ``"alpha"`` renders as ``α`` in text and ``\\alpha`` in LaTeX; ``"alpha_star"``
as ``α*`` / ``\\alpha^*``; any other name renders as itself.  Indexed forms append ``_i``.
"""

from __future__ import annotations

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "eps": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "lam": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Omega": "Ω", "Lambda": "Λ", "Phi": "Φ",
}
LATEX_GREEK = {k: "\\" + ("epsilon" if k == "eps" else "lambda" if k == "lam" else k)
               for k in GREEK}


def _split(name: str) -> tuple[str, bool]:
    for suffix in ("_star", "*"):
        if name.endswith(suffix):
            return name[: -len(suffix)], True
    return name, False


def _squared(name: str) -> str | None:
    """``R2`` (a variable standing for a square, SVDD's radius) -> ``R`` (upper case only:
    ``b2`` is the second of ``b1, b2, ...``)."""
    if len(name) == 2 and name[0].isupper() and name[1] == "2":
        return name[0]
    return None


def _numbered(name: str) -> tuple[str, str] | None:
    """``alpha1`` -> ``("alpha", "1")``, ``xi_star2`` -> ``("xi_star", "2")``: a trailing
    number is a subscript (``α_1``)."""
    import re
    m = re.fullmatch(r"([A-Za-z](?:[A-Za-z_]*[A-Za-z])?)_?([0-9]+)", name)
    if m is None or _squared(name):
        return None
    base = m.group(1)
    if "_" in _split(base)[0]:       # mu_b2 stays μ_b2 (one subscript)
        return None
    return base, m.group(2)


def text_symbol(name: str) -> str:
    """Plain-text symbol of ``name`` (Greek letters as Unicode, ``_star`` as ``*``; a name
    ``minus_b`` renders as ``-b``: the multiplier of ``yᵀα = 0`` in every dual is ``-b``)."""
    if name.startswith("minus_") and len(name) > 6:
        return "-" + text_symbol(name[6:])
    if _squared(name):
        return f"{_squared(name)}²"
    if _numbered(name):
        base_, num = _numbered(name)
        return f"{text_symbol(base_)}_{num}"
    base, star = _split(name)
    if base not in GREEK and "_" in base:
        head, sub = base.split("_", 1)
        if head in GREEK or sub in GREEK:
            return f"{GREEK.get(head, head)}_{GREEK.get(sub, sub)}" + ("*" if star else "")
    return GREEK.get(base, base) + ("*" if star else "")


def text_of_tex(tex: str) -> str | None:
    """The plain text of a simple LaTeX symbol a user gave (``C_2`` and ``C_{2}`` -> ``C_2``,
    ``\\nu`` -> ``ν``, ``\\xi^*`` -> ``ξ*``), so that ``tex="C_2"`` is not printed ``C²`` from
    the name ``C2``; ``None`` for anything else (the name's own text is used then)."""
    import re
    m = re.fullmatch(r"(\\?[A-Za-z]+)(\^\*|\^\{\*\})?(?:_\{?([A-Za-z0-9]+)\}?)?", tex.strip())
    if m is None:
        return None
    head, star, sub = m.groups()
    if head.startswith("\\"):
        if head[1:] not in GREEK:
            return None
        head = GREEK[head[1:]]
    elif len(head) != 1:
        return None
    return head + ("*" if star else "") + (f"_{sub}" if sub else "")


def latex_symbol(name: str) -> str:
    """LaTeX symbol of ``name`` (``alpha_star`` -> ``\\alpha^*``; long names in ``\\mathrm``;
    ``minus_b`` -> ``-b``)."""
    if name.startswith("minus_") and len(name) > 6:
        return "-" + latex_symbol(name[6:])
    if _squared(name):
        return f"{_squared(name)}^2"
    if _numbered(name):
        base_, num = _numbered(name)
        sym = latex_symbol(base_)
        if sym.endswith("}") and "_{" in sym and "mathrm" not in sym:
            return f"{sym[:-1]}{num}}}"
        return f"{{{sym}}}_{{{num}}}" if "_" in sym else f"{sym}_{{{num}}}"
    base, star = _split(name)
    if base in LATEX_GREEK:
        sym = LATEX_GREEK[base]
    elif len(base) == 1:
        sym = base
    elif "_" in base:
        head, sub = base.split("_", 1)
        sub_x = LATEX_GREEK.get(sub, sub)
        # the star goes on the subscript (s_{\alpha^*}): never a double subscript later
        return f"{latex_symbol(head)}_{{{sub_x}" + ("^*" if star else "") + "}"
    else:
        sym = f"\\mathrm{{{base}}}"
    return sym + ("^*" if star else "")


def text_indexed(name: str, index: str = "i") -> str:
    sym = text_symbol(name)
    if "_" in sym:
        return f"{sym},{index}"          # alpha_0 -> α_0,i
    return f"{sym}_{index}"


def latex_indexed(name: str, index: str = "i") -> str:
    sym = latex_symbol(name)
    if sym.endswith("^*"):
        return f"{sym[:-2]}^*_{{{index}}}"
    if "_{" in sym and sym.endswith("}") and "mathrm" not in sym:
        return f"{sym[:-1]},{index}}}"    # \alpha_{0} -> \alpha_{0,i}
    return f"{{{sym}}}_{{{index}}}" if "_" in sym else f"{sym}_{{{index}}}"


#: non-ASCII characters of text titles and their LaTeX (math) forms
_TITLE_MATH = {**{g: LATEX_GREEK[k] for k, g in GREEK.items() if k not in ("eps", "lam")},
               "⇒": r"\Rightarrow", "≥": r"\geq", "≤": r"\leq", "∂": r"\partial",
               "Σ": r"\Sigma", "∞": r"\infty", "ᵀ": r"^T", "²": r"^2", "⁻¹": r"^{-1}",
               "‖": r"\|", "∈": r"\in", "×": r"\times", "·": r"\cdot", "→": r"\to",
               "−": "-", "⟨": r"\langle", "⟩": r"\rangle", "φ": r"\phi", "₁": "_1",
               "*": "^*"}


def latex_title(title: str) -> str:
    """A text title for ``\\textbf{...}``: every non-ASCII symbol as inline math
    (``Stationarity in ξ`` -> ``Stationarity in $\\xi$``), LaTeX specials escaped."""
    out = []
    i = 0
    while i < len(title):
        ch = title[i]
        two = title[i:i + 2]
        if two in _TITLE_MATH:
            out.append(f"${_TITLE_MATH[two]}$")
            i += 2
            continue
        if ch in _TITLE_MATH and (ch != "*" or (i > 0 and title[i - 1] != " ")):
            out.append(f"${_TITLE_MATH[ch]}$")
        elif ch in "&%#_{}":
            out.append("\\" + ch)
        elif ord(ch) > 127:
            out.append("?")          # pragma: no cover - a symbol without a LaTeX form
        else:
            out.append(ch)
        i += 1
    return "".join(out).replace("$$", "")
