r"""Regenerate docs/methods.md: every method's problems exactly as the library builds them.

Each block is the output of `primaldual show METHOD --markdown`; the derivations and sign
conventions they instantiate are stated in docs/formulations.md, which every block links to.
A display equation wider than the site's column (656 px for the math in a 1280 px window) is
broken into an aligned multi-line display at its top-level ``+``/``-`` terms, ``\Rightarrow``
and ``,\ `` separators (`fit_display`); its symbols are unchanged.
Reads nothing outside the repository. Run from anywhere: `python scripts/gen_methods_doc.py`.
"""
import contextlib
import io
import re
from pathlib import Path

from primaldual.cli import main

ROOT = Path(__file__).resolve().parents[1]
#: the widest a display row may be, in the width estimate's unit (1 unit is about 18.7 px of
#: the site's math, measured in Chromium): 580 px, under the column's 656 px with the
#: estimate's error (within 7 % on long rows) to spare
BUDGET = 580 / 18.7

FAMILIES = [
    ("Hard-margin and soft-margin classifiers",
     [("HardMarginSVC", "1-hard-margin-svc"), ("CSVC", "2-c-svc-l1-soft-margin"),
      ("L2SVC", "3-l2-svc-squared-hinge"), ("NuSVC", "4-nu-svc")]),
    ("Support-vector regression", [("EpsilonSVR", "5-epsilon-svr"), ("NuSVR", "6-nu-svr")]),
    ("Least-squares SVMs", [("LSSVC", "7-ls-svm-classifier"), ("LSSVR", "8-ls-svm-regression")]),
    ("Proximal SVM and kernel ridge",
     [("ProximalSVC", "10-proximal-svc"), ("KernelRidge", "11-kernel-ridge-ls-svm-without-bias")]),
    ("Semi-supervised: Laplacian RLS and Laplacian SVM",
     [("LapRLS", "12-laplacian-rls-and-laplacian-svm"),
      ("LapSVC", "12-laplacian-rls-and-laplacian-svm")]),
    ("Kernel logistic regression",
     [("KernelLogisticRegression", "13-kernel-logistic-regression")]),
]


# ----------------------------------------------------------------------------- the width of TeX

#: glyph widths in em (MathJax TeX fonts, roughly); a binary operator carries its medium spaces,
#: a relation its thick spaces
_CMD = {
    r"\sum": 1.44, r"\prod": 1.28, r"\int": 0.6, r"\alpha": 0.64, r"\beta": 0.57, r"\gamma": 0.54,
    r"\delta": 0.45, r"\epsilon": 0.41, r"\varepsilon": 0.47, r"\zeta": 0.47, r"\eta": 0.5,
    r"\theta": 0.47, r"\kappa": 0.58, r"\lambda": 0.58, r"\mu": 0.6, r"\nu": 0.53, r"\xi": 0.46,
    r"\pi": 0.57, r"\rho": 0.52, r"\sigma": 0.57, r"\tau": 0.44, r"\phi": 0.6, r"\varphi": 0.65,
    r"\chi": 0.63, r"\psi": 0.65, r"\omega": 0.62, r"\Omega": 0.72, r"\Lambda": 0.69, r"\Phi": 0.72,
    r"\Sigma": 0.72, r"\Delta": 0.83, r"\Gamma": 0.63, r"\partial": 0.57, r"\nabla": 0.83,
    r"\langle": 0.39, r"\rangle": 0.39, r"\|": 0.5, r"\{": 0.5, r"\}": 0.5, r"\dots": 1.17,
    r"\ldots": 1.17, r"\cdots": 1.17, r"\cdot": 0.72, r"\times": 1.22, r"\quad": 1.0,
    r"\qquad": 2.0, r"\;": 0.28, r"\,": 0.17, r"\:": 0.22, r"\!": -0.17, r"\ ": 0.25,
    r"\leq": 1.33, r"\geq": 1.33, r"\le": 1.33, r"\ge": 1.33, r"\neq": 1.33, r"\approx": 1.33,
    r"\Rightarrow": 1.56, r"\rightarrow": 1.56, r"\to": 1.56, r"\mapsto": 1.56, r"\in": 1.22,
    r"\ni": 1.22, r"\succeq": 1.33, r"\preceq": 1.33, r"\infty": 1.0, r"\pm": 1.22, r"\mp": 1.22,
    r"\ell": 0.42, r"\top": 0.78, r"\mid": 0.84, r"\circ": 0.72, r"\odot": 1.22, r"\star": 0.5,
    r"\ast": 0.5, r"\log": 1.33, r"\exp": 1.5, r"\max": 1.83, r"\min": 1.6, r"\det": 1.3,
    r"\sup": 1.4, r"\inf": 1.1, r"\arg": 1.4, r"\operatorname": 0.0, r"\diag": 1.8,
}
_CHAR = {"(": 0.39, ")": 0.39, "[": 0.28, "]": 0.28, ",": 0.45, ";": 0.45, ".": 0.28,
         "=": 1.33, "<": 1.33, ">": 1.33, "+": 1.22, "-": 1.22, "*": 0.5, "/": 0.5, "|": 0.28,
         "'": 0.3, ":": 0.83, "!": 0.28}
_TOKEN = re.compile(r"\\[a-zA-Z]+|\\.|[{}_^&]|\s+|.")


def _tokens(tex: str) -> list[str]:
    return _TOKEN.findall(tex)


def _char(t: str) -> float:
    if t in _CHAR:
        return _CHAR[t]
    if t.isdigit():
        return 0.5
    if t.isupper():
        return 0.72
    return 0.52


def width(tex: str, scale: float = 1.0) -> float:
    """An estimate of the typeset width of TeX in em (display style)."""
    w, _ = _group(_tokens(tex), 0, scale)
    return w


def _atom(toks: list[str], i: int, scale: float) -> tuple[float, int]:
    while i < len(toks) and toks[i].isspace():
        i += 1
    if i >= len(toks):
        return 0.0, i
    if toks[i] == "{":
        w, i = _group(toks, i + 1, scale)
        return w, i + 1
    return _one(toks, i, scale)


def _raw(toks: list[str], i: int) -> tuple[str, int]:
    while toks[i].isspace():
        i += 1
    if toks[i] != "{":
        return toks[i], i + 1
    depth, j, out = 1, i + 1, []
    while depth:
        depth += {"{": 1, "}": -1}.get(toks[j], 0)
        if depth:
            out.append(toks[j])
        j += 1
    return "".join(out), j


def _one(toks: list[str], i: int, scale: float) -> tuple[float, int]:
    t = toks[i]
    if t in (r"\frac", r"\dfrac", r"\tfrac"):
        inner = scale * (0.7 if t == r"\tfrac" or scale < 1 else 1.0)
        a, i = _atom(toks, i + 1, inner)
        b, i = _atom(toks, i, inner)
        return max(a, b) + 0.45 * scale, i
    if t in (r"\text", r"\mathrm", r"\operatorname", r"\textrm"):
        s, i = _raw(toks, i + 1)
        return 0.44 * len(s) * scale, i
    if t in (r"\left", r"\right", r"\big", r"\Big", r"\bigg", r"\Bigg"):
        j = i + 1
        if toks[j] == ".":
            return 0.12 * scale, j + 1
        w, j = _one(toks, j, scale)
        return w * 1.15, j
    if t in (r"\mathbf", r"\boldsymbol", r"\mathcal", r"\hat", r"\bar", r"\tilde", r"\mathbb"):
        return _atom(toks, i + 1, scale)
    if t.startswith("\\"):
        return _CMD.get(t, 0.6) * scale, i + 1
    return _char(t) * scale, i + 1


def _group(toks: list[str], i: int, scale: float) -> tuple[float, int]:
    total, last_script, prev_script = 0.0, 0.0, False
    while i < len(toks) and toks[i] != "}":
        t = toks[i]
        if t.isspace() or t == "&":
            i, prev_script = i + 1, False
            continue
        if t in "_^":
            w, i = _atom(toks, i + 1, scale * 0.7)
            if prev_script:   # a subscript and a superscript stack: the wider one counts
                total += max(0.0, w - last_script)
                last_script = max(w, last_script)
            else:
                total += w
                last_script = w
            prev_script = True
            continue
        w, i = (_group(toks, i + 1, scale)[0], _group(toks, i + 1, scale)[1] + 1) if t == "{" \
            else _one(toks, i, scale)
        total += w
        prev_script = False
    return total, i


# ----------------------------------------------------------------------------- breaking a display
#: where a row may break, at the top level (outside braces and brackets), coarsest first: the
#: separator, the text that opens the continuation row, and whether the separator stays at the
#: end of the broken row
_LEVELS = (((r";\ ", "", True),), ((r"\;\Rightarrow\;", r"\Rightarrow\; ", False),),
           ((r",\ ", "", True),), ((" + ", r"{} + ", False), (" - ", r"{} - ", False)))


def _split_top(s: str, seps: tuple[str, ...]) -> list[tuple[str, str]]:
    """``s`` cut at each top-level occurrence of one of ``seps``: ``[("", p0), (sep1, p1), ...]``."""
    out, depth, i, start, sep = [], 0, 0, 0, ""
    while i < len(s):
        hit = next((x for x in seps if depth == 0 and s.startswith(x, i)), None)
        if hit is not None and i > start:
            out.append((sep, s[start:i]))
            sep, i = hit, i + len(hit)
            start = i
            continue
        if s[i] == "\\":
            i += 2
            continue
        depth += {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}.get(s[i], 0)
        i += 1
    out.append((sep, s[start:]))
    return out


def _break(body: str, budget: float, cont: float, levels: tuple = _LEVELS) -> list[str]:
    """``body`` as rows, the first no wider than ``budget``, the others than ``cont``: cut at
    the coarsest separator it has, the rows filled greedily, a piece still too wide cut at the
    next finer one. Continuation rows begin with their opener (``{} - ...``)."""
    body = body.strip()
    if width(body) <= budget:
        return [body]
    cuts = [(k, _split_top(body, tuple(x[0] for x in level))) for k, level in enumerate(levels)]
    k, pieces = next(((k, p) for k, p in cuts if len(p) > 1), (-1, []))
    if k < 0:
        return [body]
    level = levels[k]
    lead = {x[0]: (x[1], x[2]) for x in level}
    rows: list[str] = []
    cur = pieces[0][1].strip()
    for sep, piece in pieces[1:]:
        opener, keep = lead[sep]
        joined = cur + sep + piece.strip()
        if width(joined) <= (cont if rows else budget):
            cur = joined
            continue
        rows.extend(_break(cur, cont if rows else budget, cont, levels[k + 1:]))
        rows[-1] += sep.strip().removesuffix("\\").strip() if keep else ""
        cur = opener + piece.strip()
    rows.extend(_break(cur, cont if rows else budget, cont, levels[k + 1:]))
    return rows


def fit_display(tex: str, budget: float = BUDGET) -> str:
    """One display equation, its rows too wide for the column broken into aligned rows.

    An ``aligned`` block keeps its columns (objective or ``\\text{s.t.}`` head, the row, the
    ``&&`` label): a row whose middle part does not fit continues on rows of its own under it.
    A single-line equation ``A = B + C - ...`` becomes ``A &= B + ... \\\\ &\\qquad {} - ...``.
    Returns ``tex`` unchanged when every row fits.
    """
    s = tex.strip()
    aligned = s.startswith(r"\begin{aligned}") and s.endswith(r"\end{aligned}")
    if not aligned:
        if width(s) <= budget:
            return tex
        eq = _split_top(s, (" = ",))
        if len(eq) < 2:
            return tex
        head, rest = eq[0][1], " = ".join(p for _, p in eq[1:])
        room = budget - width(head)
        lines = _break("= " + rest, room, room - width(r"\qquad"))
        return (r"\begin{aligned}" + f"{head} &" + r" \\ &\qquad ".join(lines)
                + r"\end{aligned}")
    inner = s[len(r"\begin{aligned}"):-len(r"\end{aligned}")]
    rows = []
    for _, row in _split_top(inner, (r"\\",)):
        main_part, label = (row.split("&&", 1) + [None])[:2]
        head, _, body = main_part.partition("&")
        rows.append((head.strip(), body.strip(), None if label is None else label.strip()))
    w_head = max(width(h) for h, _, _ in rows)
    labels = [lab for _, _, lab in rows if lab is not None]
    room = budget - w_head - ((2.0 + max(width(x) for x in labels)) if labels else 0.0)
    out, changed = [], False
    for head, body, label in rows:
        parts = _break(body, room, room - width(r"\quad"))
        changed |= len(parts) > 1
        for k, part in enumerate(parts):
            tail = f" && {label}" if (label is not None and k == 0) else ""
            out.append(f"{head} & {part}{tail}".strip() if k == 0 else rf"& \quad {part}")
    if not changed:
        return tex
    return r"\begin{aligned}" + r" \\ ".join(out) + r"\end{aligned}"


def _fit_blocks(md: str) -> str:
    return re.sub(r"^\$\$\n(.*?)\n\$\$$", lambda m: f"$$\n{fit_display(m.group(1))}\n$$", md,
                  flags=re.M | re.S)


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


def build() -> str:
    out = [
        "# Methods as the library builds them\n",
        "For every method: the primal (each constraint with its multiplier in brackets), the",
        "Lagrangian, the KKT conditions, the dual, how `w` and `b` are recovered, and the",
        "notation, exactly as `primaldual show METHOD --markdown` prints them. The derivations and",
        "sign conventions are in [Formulations](formulations.md) (linked from each method);",
        "the loss weight is `C` everywhere, `gamma` is always the RBF width.\n",
        "The problems are built on the six points of Amini's lecture (dataset `amini`, linear",
        "kernel, `N = 6`) for classifiers and on eight points of `sinc` (RBF kernel) for",
        "regressors; the symbols do not depend on the data. Regenerate this page with",
        "`python scripts/gen_methods_doc.py`.\n",
        "Contents: " + " · ".join(f"[{t}](#{_slug(t)})" for t, _ in FAMILIES) + "\n",
    ]
    for title, items in FAMILIES:
        out.append(f"## {title}\n")
        for cls, anchor in items:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                assert main(["show", cls, "--markdown"]) == 0
            md = buf.getvalue().strip()
            md = re.sub(rf"^# {cls}\n", "", md, flags=re.M)
            md = re.sub(r"^_.* on .*_\n+", "", md, flags=re.M).strip()  # the data header line
            md = _fit_blocks(re.sub(r"^## ", "#### ", md, flags=re.M))
            section = anchor.split("-")[0]
            out.append(f"### {cls}\n\nStatement and derivation: "
                       f"[Formulations, section {section}](formulations.md#{anchor}).\n\n{md}\n")
    return "\n".join(out)


if __name__ == "__main__":
    (ROOT / "docs" / "methods.md").write_text(build())
