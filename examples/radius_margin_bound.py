"""The radius-margin criterion ``R^2 ||w||^2 / N`` for model selection (Vapnik & Chapelle 2000;
the leave-one-out bound itself is ``4 R^2 ||w||^2 / N``).

``R`` is the radius of the smallest ball enclosing the training points in feature space (itself a
primal-dual problem: ``pd.EnclosingBall``, the SVDD ball with ``C = inf``) and ``||w||^2`` the
squared norm of the fitted SVM's weight vector; for a hard margin ``4 R^2 ||w||^2 / N`` bounds
the expected leave-one-out error rate (Vapnik's ``D^2 ||w||^2 / N`` with the diameter ``D = 2R``).
For the L2-SVC (squared hinge) both factors are taken in the
feature space of ``K + I/C``, where its soft margin is a hard margin (Chapelle et al. 2002); for
the C-SVC the same product is only a heuristic criterion.

What the script prints and the figure shows (docs/img/radius_margin_bound.png): on Ripley's data
(N = 250), over a 4 x 4 grid of ``(C, gamma)``, the criterion next to the 3-fold
cross-validation error, for the L2-SVC and the C-SVC. The bound is loose (values well above the
CV error: it bounds a leave-one-out error rate and is loose on noisy data) and its rank
correlation with the CV error is weak (Spearman ~0.3). For the L2-SVC its minimum (C = 0.1,
gamma = 0.25) has CV error ~0.11 against the grid's best ~0.10, at one fit per pair instead of
three; for the C-SVC the product keeps falling as C shrinks and picks the smallest C of the
grid: a criterion, not a bound, there.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import spearmanr
from sklearn.model_selection import StratifiedKFold, cross_val_score

import primaldual as pd
from primaldual.datasets import load_dataset
from primaldual.plotting import save_figure
from primaldual.tuning import radius_margin_select

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere
CS = (0.1, 1.0, 10.0, 100.0)
GAMMAS = (0.25, 1.0, 4.0, 16.0)
FOLDS = 3


def main() -> int:
    X, y = load_dataset("ripley")
    cv = StratifiedKFold(FOLDS, shuffle=True, random_state=0)
    ball = pd.EnclosingBall(kernel="rbf", gamma=1.0).fit(X)
    print(f"Ripley N = {len(y)}; enclosing ball (gamma = 1): R^2 = {ball.radius2_:.6f}, "
          f"{len(ball.support_)} points on the sphere, relative gap "
          f"{ball.certificate_.relative_gap:.1e}")
    fig, axes = plt.subplots(2, 2, figsize=(9, 7.5))
    for row, est in enumerate((pd.L2SVC(kernel="rbf"), pd.CSVC(kernel="rbf"))):
        name = type(est).__name__
        sel = radius_margin_select(est, X, y, CS, GAMMAS)
        T = sel["bounds"]
        err = np.array([[1.0 - cross_val_score(est.set_params(C=C, gamma=g), X, y, cv=cv).mean()
                         for g in GAMMAS] for C in CS])
        print(f"\n{name}: radius-margin criterion T = R^2 ||w||^2 / N  |  "
              f"{FOLDS}-fold CV error")
        print(f"{'C':>7} " + " ".join(f"g={g:<5g}{'':>10}" for g in GAMMAS))
        for i, C in enumerate(CS):
            print(f"{C:7g} " + " ".join(f"{T[i, j]:7.3f} | {err[i, j]:5.3f}"
                                        for j in range(len(GAMMAS))))
        ib = np.unravel_index(np.argmin(T), T.shape)
        ic = np.unravel_index(np.argmin(err), err.shape)
        rho = spearmanr(T.ravel(), err.ravel()).statistic
        print(f"bound picks C={CS[ib[0]]:g}, gamma={GAMMAS[ib[1]]:g}: CV error {err[ib]:.3f}; "
              f"CV picks C={CS[ic[0]]:g}, gamma={GAMMAS[ic[1]]:g}: CV error {err[ic]:.3f}; "
              f"Spearman rank correlation {rho:.2f}")
        for col, (Z, title) in enumerate(((np.log10(T), "log10 R²‖w‖²/N"),
                                          (err, f"{FOLDS}-fold CV error"))):
            ax = axes[row, col]
            im = ax.imshow(Z, origin="lower", cmap="viridis")
            ax.set_xticks(range(len(GAMMAS)), [f"{g:g}" for g in GAMMAS])
            ax.set_yticks(range(len(CS)), [f"{c:g}" for c in CS])
            ax.set_xlabel("gamma")
            ax.set_ylabel("C")
            ax.set_title(f"{name}: {title}", fontsize=10)
            ax.scatter(ib[1], ib[0], marker="o", s=90, facecolors="none", edgecolors="red")
            ax.scatter(ic[1], ic[0], marker="x", s=70, c="red")
            fig.colorbar(im, ax=ax, shrink=0.8)
    fig.suptitle("radius-margin criterion (o: its minimum) vs CV error (x: its minimum)")
    fig.tight_layout()
    save_figure(fig, IMG / "radius_margin_bound.png", dpi=80)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
