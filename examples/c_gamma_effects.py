"""Effect of C and of the RBF width gamma on the separator and the number of SVs (Fasshauer).

A small ``C`` allows many margin violations (wide margin, many bounded SVs, smooth boundary); a
large ``C`` approaches the hard margin (few SVs, narrow margin).  A small ``gamma`` gives an
almost linear boundary; a large ``gamma`` a wiggly one in which almost every point becomes an SV.

What the figure should show (docs/img/c_gamma_effects.png): a 3 x 3 grid; across a row (C
growing) the margin band shrinks and the number of SVs falls; down a column (gamma growing) the
boundary bends more and more around individual points.  The printed table gives #SV, margin
width ``2/||w||`` and training accuracy for each cell.
"""

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import primaldual as pd  # noqa: E402
from primaldual.datasets import load_dataset  # noqa: E402

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere
CS = (0.1, 1.0, 100.0)
GAMMAS = (0.1, 1.0, 10.0)


def main() -> int:
    X, y = load_dataset("moons", n_samples=120, noise=0.25, random_state=0)
    xx, yy = np.meshgrid(np.linspace(X[:, 0].min() - .3, X[:, 0].max() + .3, 120),
                         np.linspace(X[:, 1].min() - .3, X[:, 1].max() + .3, 120))
    grid = np.column_stack([xx.ravel(), yy.ravel()])
    fig, axes = plt.subplots(3, 3, figsize=(10, 9), sharex=True, sharey=True)
    print(f"{'gamma':>6} {'C':>7} {'#SV':>5} {'free':>5} {'bounded':>7} {'margin':>8} "
          f"{'train acc':>9} {'rel gap':>9}")
    for i, g in enumerate(GAMMAS):
        for j, C in enumerate(CS):
            m = pd.CSVC(C=C, kernel="rbf", gamma=g, tol=1e-5).fit(X, y)
            zz = m.decision_function(grid).reshape(xx.shape)
            ax = axes[i, j]
            ax.contourf(xx, yy, zz, levels=[-1e9, -1, 0, 1, 1e9],
                        colors=["#f4b6b6", "#fadada", "#dae4fa", "#b6c8f4"])
            ax.contour(xx, yy, zz, levels=[-1, 0, 1], colors="k", linestyles=["--", "-", "--"],
                       linewidths=0.8)
            ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=8)
            ax.scatter(*X[m.support_].T, s=40, facecolors="none", edgecolors="k", lw=0.6)
            ax.set_title(rf"$\gamma$={g}, C={C}: {len(m.support_)} SVs", fontsize=9)
            print(f"{g:6g} {C:7g} {len(m.support_):5d} {len(m.free_support_):5d} "
                  f"{len(m.bounded_support_):7d} {m.margin_:8.3f} {m.score(X, y):9.3f} "
                  f"{m.certificate_.relative_gap:9.1e}")
    fig.tight_layout()
    IMG.mkdir(parents=True, exist_ok=True)
    fig.savefig(IMG / "c_gamma_effects.png", dpi=80)
    print(f"figure: {IMG / 'c_gamma_effects.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
