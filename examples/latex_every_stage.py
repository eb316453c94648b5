"""Notebook-style walk through one C-SVC, printing the LaTeX of every stage.

Stages: the primal problem, its Lagrangian, the KKT conditions, the hand-derived dual, the
solution (alpha, b, w) and the certificate (primal value, dual value, gap).  In a notebook each
Problem displays itself through ``_repr_latex_``; in a script we print ``to_latex()``.

What the figure should show (docs/img/latex_every_stage.png): every stage typeset by
matplotlib's mathtext, row by row (mathtext has no ``aligned`` environment, so each row of an
aligned block is rendered as its own line, and ``\\ge``/``\\le`` are written ``\\geq``/``\\leq``).
"""

import os
import re
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import primaldual as pd
from primaldual.plotting import save_figure

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere


def mathtext_rows(latex: str) -> list[str]:
    """Split an ``aligned`` block into rows mathtext can typeset."""
    t = latex.replace(r"\begin{aligned}", "").replace(r"\end{aligned}", "")
    t = re.sub(r"\\(ge|le)(?![a-zA-Z])", r"\\\1q", t)
    rows = [r.replace("&&", r"\quad ").replace("&", "").strip() for r in re.split(r"\\\\", t)]
    return [r for r in rows if r]


def main() -> int:
    X = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 0.5], [-1.0, -0.5], [-2.0, 0.0], [0.5, -1.5]])
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    m = pd.CSVC(C=1.0, kernel="linear")
    P = m.primal(X, y)
    stages = [("Primal", P.to_latex()), ("Lagrangian", m.lagrangian(X, y).to_latex()),
              ("KKT conditions", m.kkt(X, y).to_latex()), ("Dual", m.dual(X, y).to_latex())]
    m.fit(X, y, backend="cvxpy")
    c = m.certificate_
    w = ", ".join(f"{v:.4f}" for v in m.coef_.ravel())
    stages.append(("Solution", rf"\alpha = ({', '.join(f'{a:.3f}' for a in m.alpha_)})^T,\ "
                   rf"b = {m.b_:.4f},\ w = ({w})^T"))
    stages.append(("Certificate", rf"P = {c.primal_objective:.6f},\ D = {c.dual_objective:.6f},"
                   rf"\ P - D = {c.duality_gap:.1e},\ \max \mathrm{{KKT}} = "
                   rf"{c.max_kkt_residual:.1e}"))
    for title, tex in stages:
        print(f"% ---- {title}")
        print(tex)
        print()

    lines = []
    for title, tex in stages:
        lines.append(("title", title))
        lines += [("math", r) for r in mathtext_rows(tex)]
    fig = plt.figure(figsize=(11, 0.32 * len(lines) + 0.5))
    for k, (kind, txt) in enumerate(lines):
        ypos = 1 - (k + 0.8) / (len(lines) + 0.5)
        if kind == "title":
            fig.text(0.01, ypos, txt, fontsize=10, weight="bold")
        else:
            fig.text(0.04, ypos, f"${txt}$", fontsize=9)
    print(f"rendered {sum(k == 'math' for k, _ in lines)} rows with mathtext")
    save_figure(fig, IMG / "latex_every_stage.png", dpi=90)
    return 0


if __name__ == "__main__":
    sys.exit(main())
