"""The margin of a linear C-SVC in the plane: why the SVM maximises ``2/||w||``.

``f(x) = <w, x> + b``.  The constraints ``y_i f(x_i) >= 1 - xi_i`` fix the scale of ``(w, b)``:
the lines ``f = +1`` and ``f = -1`` are the margins, and the distance between them is the
projection of ``x_+ - x_-`` (one point on each) on the unit normal ``w/||w||``:
``<x_+ - x_-, w>/||w|| = ((1 - b) - (-1 - b))/||w|| = 2/||w||``.  Minimising ``||w||^2/2``
therefore widens the street; ``C sum xi_i`` pays for every point inside it or beyond.

What the figure should show (docs/img/margin_geometry.png, in the tutorial's "Why" section):
the line ``f = 0``, the two margins at distance ``2/||w||`` apart (the arrow), the free support
vectors (``0 < alpha_i < C``, circled) exactly on the margins, the bounded ones
(``alpha_i = C``, squares) inside the street or on the wrong side, and every other point
outside it.  The script prints each of these statements with its numbers; the tutorial's
caption quotes them (tests/integration/test_examples.py checks that it does).
"""

import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import primaldual as pd
from primaldual.datasets import load_dataset
from primaldual.plotting import plot_decision_boundary, save_figure

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere

#: the data and the fit the tutorial's figures (this one and kkt_regions.py) show
N_POINTS, C = 100, 1.0


def fitted() -> tuple[np.ndarray, np.ndarray, pd.CSVC]:
    X, y = load_dataset("ripley", n_samples=N_POINTS, standardize=False)  # as the CLI
    m = pd.CSVC(kernel="linear", C=C, tol=1e-8).fit(X, y)
    return X, y, m


def summary(X: np.ndarray, y: np.ndarray, m: pd.CSVC) -> str:
    """What the figure says, as numbers (also stamped into the PNG's metadata)."""
    n_free, n_bounded = len(m.free_support_), len(m.bounded_support_)
    return (f"linear C-SVC, C = {C:g}, N = {len(y)}: 2/‖w‖ = {2 / np.linalg.norm(m.coef_):.4f}; "
            f"{n_free} free SVs, {n_bounded} bounded, {len(y) - n_free - n_bounded} with alpha = 0")


def main() -> int:
    X, y, m = fitted()
    w, b = m.coef_.ravel(), float(m.b_)
    yf = y * m.decision_function(X)
    free, bounded = np.asarray(m.free_support_), np.asarray(m.bounded_support_)
    others = np.setdiff1d(np.arange(len(y)), np.r_[free, bounded])
    norm = float(np.linalg.norm(w))
    # the street width measured, not assumed: the distance between the two margin lines along
    # w/||w|| from one free support vector of each class
    pos = free[y[free] > 0][0]
    neg = free[y[free] < 0][0]
    width = float((X[pos] - X[neg]) @ w / norm)
    print(f"linear C-SVC, C = {C}, N = {len(y)} (Ripley's two classes)")
    print(f"||w|| = {norm:.4f}, margin width 2/||w|| = {2 / norm:.4f}")
    print(f"width measured between a free SV of each class along w/||w|| = {width:.4f}")
    print(f"free SVs (0 < alpha < C) {len(free)}: max |y f(x) - 1| = "
          f"{np.abs(yf[free] - 1).max():.1e}")
    print(f"bounded SVs (alpha = C) {len(bounded)}: max y f(x) = {yf[bounded].max():.4f} "
          f"(<= 1: inside the street or beyond), {int(np.sum(yf[bounded] < 0))} misclassified")
    print(f"other points (alpha = 0) {len(others)}: min y f(x) = {yf[others].min():.4f} (>= 1)")
    print(f"relative gap {m.certificate_.relative_gap:.1e}")

    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    plot_decision_boundary(m, X, y, ax=ax, title=f"linear C-SVC (C = {C:g}): the street")
    # the width: an arrow along w/||w|| from the line f = -1 to f = +1, drawn through the
    # point of f = 0 above x_1 = -0.9 (where few points are)
    x1 = -0.9
    on_f0 = np.array([x1, -(b + w[0] * x1) / w[1]])
    u = w / norm
    lo, hi = on_f0 - u / norm, on_f0 + u / norm   # f = -1, f = +1: f grows ||w|| per unit
    ax.annotate("", xy=hi, xytext=lo,
                arrowprops={"arrowstyle": "<->", "color": "k", "lw": 1.4})
    ax.text(on_f0[0] + 0.05, on_f0[1] + 0.03, f"2/‖w‖ = {2 / norm:.3f}", fontsize=9,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    fig.tight_layout()
    save_figure(fig, IMG / "margin_geometry.png", dpi=90, description=summary(X, y, m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
