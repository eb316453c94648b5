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
    """``R2`` (a variable standing for a square, SVDD's radius) -> ``R``."""
    if len(name) == 2 and name[0].isalpha() and name[1] == "2":
        return name[0]
    return None


def text_symbol(name: str) -> str:
    """Plain-text symbol of ``name`` (Greek letters as Unicode, ``_star`` as ``*``; a name
    ``minus_b`` renders as ``-b``: the multiplier of ``yᵀα = 0`` in every dual is ``-b``)."""
    if name.startswith("minus_") and len(name) > 6:
        return "-" + text_symbol(name[6:])
    if _squared(name):
        return f"{_squared(name)}²"
    base, star = _split(name)
    if base not in GREEK and "_" in base:
        head, sub = base.split("_", 1)
        if head in GREEK:
            return f"{GREEK[head]}_{sub}" + ("*" if star else "")
    return GREEK.get(base, base) + ("*" if star else "")


def latex_symbol(name: str) -> str:
    """LaTeX symbol of ``name`` (``alpha_star`` -> ``\\alpha^*``; long names in ``\\mathrm``;
    ``minus_b`` -> ``-b``)."""
    if name.startswith("minus_") and len(name) > 6:
        return "-" + latex_symbol(name[6:])
    if _squared(name):
        return f"{_squared(name)}^2"
    base, star = _split(name)
    if base in LATEX_GREEK:
        sym = LATEX_GREEK[base]
    elif len(base) == 1:
        sym = base
    elif "_" in base:
        head, sub = base.split("_", 1)
        sym = f"{latex_symbol(head)}_{{{sub}}}"
    else:
        sym = f"\\mathrm{{{base}}}"
    return sym + ("^*" if star else "")


def text_indexed(name: str, index: str = "i") -> str:
    sym = text_symbol(name)
    if "_" in sym and not sym.endswith("*"):
        return f"{sym},{index}"          # alpha_0 -> α_0,i
    return f"{sym}_{index}"


def latex_indexed(name: str, index: str = "i") -> str:
    sym = latex_symbol(name)
    if sym.endswith("^*"):
        return f"{sym[:-2]}^*_{{{index}}}"
    if "_{" in sym and sym.endswith("}") and "mathrm" not in sym:
        return f"{sym[:-1]},{index}}}"    # \alpha_{0} -> \alpha_{0,i}
    return f"{{{sym}}}_{{{index}}}" if "_" in sym else f"{sym}_{{{index}}}"
