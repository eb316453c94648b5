"""The epsilon-insensitive tube of an SVR and its support vectors (Zhang 8.3; Fasshauer SVR).

The epsilon-SVR primal penalises only residuals outside the tube ``|y_i - f(x_i)| <= eps``.
Complementary slackness makes the points strictly inside the tube non-support vectors
(``alpha_i = alpha*_i = 0``); points on the tube boundary are free SVs (``0 < alpha < C``) and
points outside are bounded SVs (``alpha = C``).  At most one of ``alpha_i, alpha*_i`` is non-zero.

What the figure should show (docs/img/svr_tube.png): the fitted curve, the tube ``f +- eps``, and
circled support vectors exactly on or outside the tube; no point inside the tube is circled.
"""

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


def main() -> int:
    EpsilonSVR = pd.EpsilonSVR
    X, y = sinc(n_samples=100, noise=0.1, random_state=1)
    eps, C = 0.1, 10.0
    # backend="cvxpy": an interior-point solve, so the support-vector categories are sharp
    m = EpsilonSVR(C=C, epsilon=eps, kernel="rbf", gamma=0.5, backend="cvxpy").fit(X, y)
    r = np.abs(y - m.predict(X))
    sv = np.zeros(len(y), bool)
    sv[m.support_] = True
    tol = 1e-3
    print(f"epsilon-SVR: N = {len(y)}, eps = {eps}, C = {C}, backend = {m.backend_}")
    print(f"relative duality gap            {m.certificate_.relative_gap:.2e}")
    print(f"support vectors                 {sv.sum()} "
          f"({len(m.free_support_)} free on the tube, {len(m.bounded_support_)} bounded)")
    print(f"points strictly inside the tube {int(np.sum(r < eps - tol))}, "
          f"of which SVs: {int(np.sum(sv & (r < eps - tol)))}  (should be 0)")
    print(f"points outside the tube         {int(np.sum(r > eps + tol))}, "
          f"all SVs: {bool(np.all(sv[r > eps + tol]))}")
    if hasattr(m, "alpha_star_"):
        print(f"max_i min(alpha_i, alpha*_i)    "
              f"{float(np.max(np.minimum(m.alpha_, m.alpha_star_))):.2e}  (should be 0)")

    xs = np.linspace(-10, 10, 400).reshape(-1, 1)
    f = m.predict(xs)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.fill_between(xs[:, 0], f - eps, f + eps, color="#cfe3ff", label=r"tube $f\pm\varepsilon$")
    ax.plot(xs[:, 0], f, "b-", label="f(x)")
    ax.plot(X[:, 0], y, "k.", ms=4, label="data")
    free, bnd = m.free_support_, m.bounded_support_
    ax.plot(X[free, 0], y[free], "ko", mfc="none", ms=8,
            label=rf"free SV ({len(free)}): on the tube edge, $0<\alpha<C$")
    ax.plot(X[bnd, 0], y[bnd], "rs", mfc="none", ms=8,
            label=rf"bounded SV ({len(bnd)}): outside, $\alpha=C$")
    ax.set_title(rf"$\varepsilon$-SVR tube ($\varepsilon$={eps}, C={C})")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, IMG / "svr_tube.png", dpi=90)
    return 0


if __name__ == "__main__":
    sys.exit(main())
