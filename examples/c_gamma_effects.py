"""Effect of C and of the RBF width gamma on the separator and the number of SVs (Fasshauer).

A small ``C`` allows many margin violations (wide margin, many bounded SVs, smooth boundary); a
large ``C`` approaches the hard margin (few SVs, narrow margin).  A small ``gamma`` gives an
almost linear boundary; a large ``gamma`` a wiggly one in which almost every point becomes an SV.

What the figure should show (docs/img/c_gamma_effects.png): a 3 x 3 grid; across a row (C
growing) the margin band between the dashed lines f = +-1 shrinks and the bounded SVs (squares)
give way to a few free SVs (circles); down a column (gamma growing) the boundary bends more and
more around individual points. Points and regions share colours (class -1 red, class +1
blue). The printed table gives #SV, margin width ``2/||w||`` and training accuracy per cell.
"""

import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt

import primaldual as pd
from primaldual.datasets import load_dataset
from primaldual.plotting import plot_decision_boundary, save_figure

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere
CS = (0.1, 1.0, 100.0)
GAMMAS = (0.1, 1.0, 10.0)


def main() -> int:
    X, y = load_dataset("moons", n_samples=120, noise=0.25, random_state=0)
    fig, axes = plt.subplots(3, 3, figsize=(10, 9.5))
    print(f"{'gamma':>6} {'C':>7} {'#SV':>5} {'free':>5} {'bounded':>7} {'margin':>8} "
          f"{'train acc':>9} {'rel gap':>9}")
    for i, g in enumerate(GAMMAS):
        for j, C in enumerate(CS):
            m = pd.CSVC(C=C, kernel="rbf", gamma=g, tol=1e-5).fit(X, y)
            ax = axes[i, j]
            # regions and points share colours (class -1 red, f < 0; class +1 blue, f > 0);
            # free SVs circled, bounded SVs squared, margins f = +-1 dashed
            plot_decision_boundary(m, X, y, ax=ax, resolution=120, legend=(i == 0 and j == 0),
                                   title=rf"$\gamma$={g}, C={C}: {len(m.free_support_)} free + "
                                         f"{len(m.bounded_support_)} bounded SVs")
            ax.title.set_fontsize(8)
            print(f"{g:6g} {C:7g} {len(m.support_):5d} {len(m.free_support_):5d} "
                  f"{len(m.bounded_support_):7d} {m.margin_:8.3f} {m.score(X, y):9.3f} "
                  f"{m.certificate_.relative_gap:9.1e}")
    fig.tight_layout()
    save_figure(fig, IMG / "c_gamma_effects.png", dpi=80)
    return 0


if __name__ == "__main__":
    sys.exit(main())
