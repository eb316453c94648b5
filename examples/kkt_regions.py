"""The three KKT regions of a C-SVC: where each fitted point may lie in the (y f(x), alpha) plane.

Complementary slackness pairs each multiplier with its constraint: ``alpha_i g_i = 0`` with
``g_i = y_i f(x_i) - 1 + xi_i >= 0``, and ``mu_i xi_i = 0`` with ``mu_i = C - alpha_i`` (from
``dL/dxi_i = 0``).  So a point can only be in one of three places:

* ``alpha_i = 0``: then ``mu_i = C > 0``, ``xi_i = 0`` and ``y_i f(x_i) >= 1`` (outside the
  street, not a support vector);
* ``0 < alpha_i < C``: ``g_i = 0`` and ``mu_i > 0`` so ``xi_i = 0``: ``y_i f(x_i) = 1`` exactly
  (a free support vector, on the margin);
* ``alpha_i = C``: ``mu_i = 0``, so ``xi_i = 1 - y_i f(x_i) >= 0``: ``y_i f(x_i) <= 1`` (a bounded
  support vector, inside the street or misclassified).

What the figure should show (docs/img/kkt_regions.png, in the tutorial's "Why" section): the
fitted points of the tutorial's running example (``primaldual fit csvc --data ripley --C 10
--gamma 2``) on the three allowed sets, drawn as thick grey lines in the plane: the bottom ray
``alpha = 0, y f >= 1``, the vertical segment ``y f = 1, 0 < alpha < C`` and the top ray
``alpha = C, y f <= 1``, and no point elsewhere.  The script prints each region's count and the
largest violation of its condition; the tutorial's caption quotes them.
"""

import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import primaldual as pd
from primaldual.datasets import load_dataset
from primaldual.plotting import save_figure

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere

#: the tutorial's running example, section 3 (the command line's tol for SMO)
C, GAMMA, TOL = 10.0, 2.0, 1e-5


def fitted() -> tuple[np.ndarray, np.ndarray, pd.CSVC]:
    X, y = load_dataset("ripley", standardize=False)   # the command line's data
    return X, y, pd.CSVC(C=C, kernel="rbf", gamma=GAMMA, tol=TOL).fit(X, y)


def summary(X: np.ndarray, y: np.ndarray, m: pd.CSVC) -> str:
    """What the figure says, as numbers (also stamped into the PNG's metadata)."""
    n_free, n_bounded = len(m.free_support_), len(m.bounded_support_)
    return (f"C-SVC on Ripley (RBF gamma = {GAMMA:g}, C = {C:g}): "
            f"{len(y) - len(m.support_)} with alpha = 0, {n_free} free, {n_bounded} bounded")


def main() -> int:
    X, y, m = fitted()
    yf = y * m.decision_function(X)
    a = m.alpha_
    free, bounded = np.asarray(m.free_support_), np.asarray(m.bounded_support_)
    zero = np.setdiff1d(np.arange(len(y)), m.support_)
    print(f"C-SVC on Ripley, N = {len(y)}, RBF gamma = {GAMMA}, C = {C}, "
          f"relative gap {m.certificate_.relative_gap:.1e}")
    print(f"alpha = 0      {len(zero):4d} points: min y f(x) = {yf[zero].min():.4f}  (>= 1)")
    print(f"0 < alpha < C  {len(free):4d} points: max |y f(x) - 1| = "
          f"{np.abs(yf[free] - 1).max():.1e}  (= 0)")
    print(f"alpha = C      {len(bounded):4d} points: max y f(x) = {yf[bounded].max():.4f}  "
          f"(<= 1), {int(np.sum(yf[bounded] < 0))} misclassified")
    # how far the worst point is from its region, in the units of y f (the tolerance SMO met)
    off = np.concatenate([np.maximum(0.0, 1 - yf[zero]), np.abs(yf[free] - 1),
                          np.maximum(0.0, yf[bounded] - 1)])
    print(f"largest distance of a point from its region: {off.max():.1e}")

    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    lo, hi = min(yf.min(), -0.5) - 0.2, yf.max() + 0.2
    grey = {"color": "0.75", "lw": 7, "solid_capstyle": "butt", "zorder": 1}
    ax.plot([1, hi], [0, 0], **grey, label="allowed by the KKT conditions")
    ax.plot([1, 1], [0, C], **grey)
    ax.plot([lo, 1], [C, C], **grey)
    ax.scatter(yf[zero], a[zero], s=14, c="0.3", zorder=3,
               label=f"α = 0: y f ≥ 1 ({len(zero)})")
    ax.scatter(yf[free], a[free], s=40, facecolors="none", edgecolors="tab:green", lw=1.5,
               zorder=3, label=f"0 < α < C: y f = 1 ({len(free)})")
    ax.scatter(yf[bounded], a[bounded], s=30, marker="s", facecolors="none",
               edgecolors="tab:red", zorder=3, label=f"α = C: y f ≤ 1 ({len(bounded)})")
    ax.axvline(0, color="k", lw=0.6, ls=":")
    ax.text(0.05, C * 0.5, "misclassified ← | → correct", fontsize=8, rotation=90,
            va="center")
    ax.set_xlim(lo, hi)
    ax.set_ylim(-0.6, C + 0.6)
    ax.set_xlabel("y_i f(x_i)")
    ax.set_ylabel("α_i")
    ax.set_title(f"KKT regions of α: C-SVC on Ripley (RBF γ = {GAMMA:g}, C = {C:g})")
    ax.legend(fontsize=8, loc="center right")
    fig.tight_layout()
    save_figure(fig, IMG / "kkt_regions.png", dpi=90, description=summary(X, y, m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
