"""The duality gap along SMO iterations.

SMO updates two multipliers at a time while keeping the dual feasible (box and ``y^T alpha = 0``),
so the dual objective increases monotonically.  The certificate evaluates the primal at the
recovered point ``w = sum alpha_i y_i phi(x_i)``, ``b``, ``xi_i = max(0, 1 - y_i f_i)``; by weak
duality ``P - D >= 0`` and the gap closes as SMO converges.  Each stage here re-runs SMO with
``max_iter = k`` and certifies the point it stops at.

What the figure should show (docs/img/smo_duality_gap.png): the dual objective rising and the
primal objective (not monotone: it first rises) meeting it at the common optimum, and the
relative duality gap and largest
KKT residual decaying by orders of magnitude (log scale), never negative.
"""

import os
import sys
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import primaldual as pd
from primaldual.datasets import ripley
from primaldual.plotting import save_figure

#: the certificate's relative gap, as the figure labels it (``C_max`` the largest box bound,
#: ``C`` here; tests/integration/test_figures_text.py evaluates it against the certificate)
GAP_FORMULA = "(P - D)/max(min(1, C_max²), |P|)"

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere


def _stamp(path: Path, label: str) -> None:
    """Write the gap label into the PNG's text metadata too, so a test can read what the figure
    says without OCR."""
    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Description", label)
    with Image.open(path) as im:
        im.load()
        im.save(path, pnginfo=info)


def main() -> int:
    X, y = ripley(n_samples=250)
    iters = [1, 2, 5, 10, 20, 50, 100, 150, 200, 300, 500, 1000, 2000]
    rows = []
    print(f"{'max_iter':>8} {'n_iter':>6} {'primal':>12} {'dual':>12} {'rel gap':>10} "
          f"{'KKT max':>10}  status")
    for k in iters:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = pd.CSVC(C=10.0, kernel="rbf", gamma=2.0, backend="smo", max_iter=k,
                        tol=1e-6).fit(X, y)
        c = m.certificate_
        n_iter = int(np.sum(m.n_iter_))  # n_iter_ is per sub-problem (one here)
        rows.append((n_iter, c.primal_objective, c.dual_objective, c.relative_gap,
                     c.max_kkt_residual))
        print(f"{k:8d} {n_iter:6d} {c.primal_objective:12.5f} {c.dual_objective:12.5f} "
              f"{c.relative_gap:10.2e} {c.max_kkt_residual:10.2e}  {c.status}")
        if c.status == "optimal":
            break
    r = np.array(rows, dtype=float)
    print(f"weak duality held at every stage: {bool(np.all(r[:, 1] >= r[:, 2] - 1e-9))}")
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    a1.plot(r[:, 0], r[:, 1], "r.-", label="primal P")
    a1.plot(r[:, 0], r[:, 2], "b.-", label="dual D")
    a1.axhline(r[-1, 2], color="0.5", lw=0.8, ls=":", label=f"optimum {r[-1, 2]:.2f}")
    a1.set_xscale("log")
    a1.set_xlabel("SMO iterations")
    a1.set_ylabel("objective value")
    a1.set_title("P ≥ D at every stage; they meet at the optimum")
    a1.legend()
    # both quantities are positive here (weak duality, residual norms): a plain log axis
    a2.loglog(r[:, 0], np.maximum(r[:, 3], 1e-16), "k.-", label=f"relative gap {GAP_FORMULA}")
    a2.loglog(r[:, 0], np.maximum(r[:, 4], 1e-16), "g.--", label="max KKT residual")
    a2.set_xlabel("SMO iterations")
    a2.set_ylabel("certificate (log scale)")
    a2.set_title("gap and KKT residual close together")
    a2.legend(fontsize=8)
    fig.suptitle("C-SVC on Ripley data: certificate along SMO")
    fig.tight_layout()
    path = IMG / "smo_duality_gap.png"
    save_figure(fig, path, dpi=90)
    _stamp(path, f"relative gap {GAP_FORMULA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
