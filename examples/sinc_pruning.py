"""Sparse LS-SVM regression by pruning the support-value spectrum (Suykens Figs. 3.9-3.10).

An LS-SVM has no zero support values.  Sparseness is imposed afterwards: drop the 5 % of
training points with the smallest ``|alpha_i|`` (they contribute least to
``f(x) = sum_i alpha_i k(x, x_i) + b``), refit on the rest, repeat.  Here on the sinc function
with 500 points, noiseless and noisy, pruned 500 -> 250 -> 50 support vectors.

What the figure should show (docs/img/sinc_pruning.png): for noiseless data (C = 100) the fits
with 500, 250 and 50 SVs are indistinguishable from sinc; for noisy data (noise sd 0.1) the
error weight must match the noise: with C = 1 the pruned fits stay close to the true curve (test
RMSE about 0.02 with 500 or 250 SVs, 0.04 with 50), and the retained SVs spread over the whole
input range. With C = 100 on the noisy data the 50-SV fit interpolates the noise of the points it
keeps and overshoots (RMSE about 0.18; ``--caution`` runs that case): pruning must be stopped by a
validation score, as :class:`primaldual.sparsity.PrunedLSSVM` does. The printout lists the test
RMSE against the noiseless sinc at each stage.
"""

import math
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import primaldual as pd
from primaldual.datasets import sinc
from primaldual.plotting import save_figure

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere
STAGES = (500, 250, 50)


def prune(LSSVR, X, y, targets, C, gamma, frac=0.05):
    """Refit after dropping the ``frac`` smallest |alpha| until each target size is reached."""
    keep = np.arange(len(y))
    models = {}
    while True:
        m = LSSVR(C=C, kernel="rbf", gamma=gamma).fit(X[keep], y[keep])
        if len(keep) in targets:
            models[len(keep)] = (m, keep.copy())
        if len(keep) <= min(targets):
            return models
        nxt = max([t for t in targets if t < len(keep)])
        n_drop = min(max(1, math.ceil(frac * len(keep))), len(keep) - nxt)
        order = np.argsort(np.abs(m.alpha_))
        keep = np.sort(keep[order[n_drop:]])


def main() -> int:
    LSSVR = pd.LSSVR
    xt = np.linspace(-10, 10, 400).reshape(-1, 1)
    ft = np.sinc(xt[:, 0] / np.pi)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, noise, C in zip(axes, (0.0, 0.1), (100.0, 1.0), strict=True):
        X, y = sinc(n_samples=500, noise=noise, random_state=0)
        models = prune(LSSVR, X, y, STAGES, C=C, gamma=0.5)
        ax.plot(X[:, 0], y, ".", color="0.75", ms=3, label="data")
        ax.plot(xt[:, 0], ft, "k-", lw=1, label="sinc")
        print(f"noise = {noise}, C = {C:g}:")
        for n, style in zip(STAGES, ("b-", "g--", "r-."), strict=True):
            m, keep = models[n]
            rmse = float(np.sqrt(np.mean((m.predict(xt) - ft) ** 2)))
            print(f"  {n:4d} SVs: test RMSE vs sinc = {rmse:.4f}, "
                  f"relative gap {m.certificate_.relative_gap:.1e}")
            ax.plot(xt[:, 0], m.predict(xt), style, lw=1, label=f"{n} SVs")
        m50, keep50 = models[50]
        ax.plot(X[keep50, 0], y[keep50], "ro", mfc="none", ms=5, label="50 SVs kept")
        ax.set_title(f"LS-SVM pruning, noise sd = {noise}, C = {C:g}")
        ax.set_xlabel("x")
    if "--caution" in sys.argv[1:]:
        # too little regularisation for the noise, and pruning without a validation stop
        X, y = sinc(n_samples=500, noise=0.1, random_state=0)
        m, _ = prune(LSSVR, X, y, STAGES, C=100.0, gamma=0.5)[50]
        rmse = float(np.sqrt(np.mean((m.predict(xt) - ft) ** 2)))
        print(f"caution: noise = 0.1 with C = 100, 50 SVs: test RMSE {rmse:.4f} (overshoots)")
    axes[0].set_ylabel("y")
    axes[0].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    save_figure(fig, IMG / "sinc_pruning.png", dpi=90)
    return 0


if __name__ == "__main__":
    sys.exit(main())
