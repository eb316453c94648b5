"""Support values of an LS-SVM classifier on Ripley-like data (Suykens Fig. 3.3).

For the LS-SVM the KKT conditions give ``alpha_i = C e_i`` with ``e_i = 1 - y_i f(x_i)``: the
support value of a point is proportional to its error with respect to the target ``y_i f = 1``.
Points far on the wrong side carry the largest positive ``alpha``; points well inside their
class carry negative ``alpha``; nothing is exactly zero, so LS-SVMs are not sparse.

What the figure should show (docs/img/ripley_support_values.png): the decision boundary, and
the points coloured by ``alpha_i`` — large values near and across the boundary, negative values
deep inside the classes.  The printout checks ``alpha = C e`` numerically.
"""

import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import primaldual as pd
from primaldual.datasets import ripley
from primaldual.plotting import save_figure

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere


def main() -> int:
    LSSVC = pd.LSSVC
    X, y = ripley(n_samples=250)
    C = 1.0
    model = LSSVC(C=C, kernel="rbf", gamma=5.0).fit(X, y)
    alpha = np.asarray(model.alpha_, dtype=float)
    f = model.decision_function(X)
    e = 1.0 - y * f
    print(f"LS-SVM on Ripley data: N = {len(y)}, C = {C}, backend = {model.backend_}")
    print(f"training accuracy           {model.score(X, y):.3f}")
    print(f"relative duality gap        {model.certificate_.relative_gap:.2e}")
    print(f"alpha range                 [{alpha.min():.3f}, {alpha.max():.3f}]")
    print(f"max |alpha - C e|           {np.max(np.abs(alpha - C * e)):.2e}   (KKT: alpha = C e)")
    print(f"sum alpha_i y_i             {alpha @ y:.2e}   (KKT: y^T alpha = 0)")
    print(f"exact zeros among alpha     {int(np.sum(alpha == 0))}   (LS-SVM is not sparse)")
    wrong = y * f < 0
    print(f"mean alpha, misclassified   {alpha[wrong].mean() if wrong.any() else float('nan'):.3f}")
    print(f"mean alpha, y f > 1         {alpha[y * f > 1].mean():.3f}")

    xx, yy = np.meshgrid(np.linspace(-1.3, 1.1, 150), np.linspace(-0.4, 1.3, 150))
    zz = model.decision_function(np.column_stack([xx.ravel(), yy.ravel()])).reshape(xx.shape)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.contour(xx, yy, zz, levels=[0], colors="k")
    sc = ax.scatter(X[:, 0], X[:, 1], c=alpha, cmap="viridis", s=25,
                    marker="o", edgecolors=np.where(y > 0, "b", "r"))
    fig.colorbar(sc, ax=ax, label=r"support value $\alpha_i$")
    ax.set_title("LS-SVM support values (Suykens Fig. 3.3); f = 0 solid\n"
                 "edge colour = class (blue +1, red -1), fill = support value")
    ax.title.set_fontsize(9)
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_aspect("equal", adjustable="box")
    fig.tight_layout()
    save_figure(fig, IMG / "ripley_support_values.png", dpi=90)
    return 0


if __name__ == "__main__":
    sys.exit(main())
