"""RBF-network regression with the regularisation parameter mu chosen by GCV (Fasshauer).

An RBF network ``f(x) = sum_j c_j k(x, x_j)`` fitted with ridge regularisation solves
``(K + mu I) c = y``: this is kernel ridge regression, the dual of
``min 1/2||w||^2 + C/2 sum e_i^2 s.t. y_i = <w, phi(x_i)> + e_i`` with ``mu = 1/C``.
Generalised cross-validation picks ``mu`` without a hold-out set:

    GCV(mu) = N ||(I - A(mu)) y||^2 / trace(I - A(mu))^2,    A(mu) = K (K + mu I)^{-1}

computed here for a whole grid of ``mu`` from one eigendecomposition ``K = U diag(l) U^T``
(``A`` has eigenvalues ``l / (l + mu)``).

What the figure should show (docs/img/rbf_network_gcv.png): left, the GCV curve: high for
over-fitting (mu -> 0, about 7 times its minimum), rising steeply for over-smoothing (mu > 1),
with a shallow minimum near mu = 0.1 (mu between 1e-3 and 1e-1 give nearly the same fit); right,
the noisy data,
the true function and the fit at the GCV-chosen mu, close to the truth.  The printout gives the
chosen mu and checks that ``KernelRidge(C=1/mu)`` reproduces the closed-form coefficients.
"""

import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import primaldual as pd
from primaldual.plotting import save_figure

_DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
IMG = Path(os.environ.get("PRIMALDUAL_FIGURES") or _DOCS_IMG)  # env var: figures elsewhere


def gcv_curve(K: np.ndarray, y: np.ndarray, mus: np.ndarray) -> np.ndarray:
    lam, U = np.linalg.eigh(K)
    lam = np.maximum(lam, 0.0)
    z = U.T @ y
    out = np.empty(len(mus))
    for k, mu in enumerate(mus):
        shrink = mu / (lam + mu)  # eigenvalues of I - A(mu)
        out[k] = len(y) * np.sum((shrink * z) ** 2) / np.sum(shrink) ** 2
    return out


def main() -> int:
    KernelRidge = pd.KernelRidge
    rng = np.random.default_rng(0)
    truth = lambda x: np.exp(-x) * np.sin(2 * np.pi * x) + 0.5 * x
    x = np.sort(rng.uniform(0, 2, 80))
    y = truth(x) + 0.1 * rng.standard_normal(x.size)
    X = x.reshape(-1, 1)
    gamma = 200.0
    K = np.exp(-gamma * (x[:, None] - x[None, :]) ** 2)
    mus = np.logspace(-8, 2, 61)
    g = gcv_curve(K, y, mus)
    mu = float(mus[np.argmin(g)])
    print(f"GCV-chosen mu = {mu:.3e}   (C = 1/mu = {1 / mu:.3e})")
    c_ref = np.linalg.solve(K + mu * np.eye(len(y)), y)
    m = KernelRidge(C=1.0 / mu, kernel="rbf", gamma=gamma).fit(X, y)
    print(f"backend = {m.backend_}, relative duality gap {m.certificate_.relative_gap:.2e}")
    print(f"max |beta - (K + mu I)^-1 y| = {np.max(np.abs(m.beta_ - c_ref)):.2e}")
    xs = np.linspace(0, 2, 300)
    err = np.sqrt(np.mean((m.predict(xs.reshape(-1, 1)) - truth(xs)) ** 2))
    print(f"RMSE against the true function: {err:.4f}")
    for mu_other in (mus[0], mus[-1]):
        mo = KernelRidge(C=1.0 / mu_other, kernel="rbf", gamma=gamma).fit(X, y)
        e2 = np.sqrt(np.mean((mo.predict(xs.reshape(-1, 1)) - truth(xs)) ** 2))
        print(f"  for comparison mu = {mu_other:.0e}: RMSE {e2:.4f}")

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    a1.loglog(mus, g, "b.-", ms=3)
    a1.axvline(mu, color="r", ls="--", label=f"GCV min, mu={mu:.1e}")
    a1.annotate("over-fitting", (mus[2], g[2]), textcoords="offset points", xytext=(5, 8),
                fontsize=8)
    a1.annotate("over-smoothing", (mus[-8], g[-8]), textcoords="offset points",
                xytext=(-80, 0), fontsize=8)
    a1.set_title("generalised cross-validation")
    a1.set_xlabel(r"$\mu$")
    a1.set_ylabel(r"GCV$(\mu)$")
    a1.legend()
    a2.plot(x, y, "k.", ms=4, label="data")
    a2.plot(xs, truth(xs), "g-", label="true function")
    a2.plot(xs, m.predict(xs.reshape(-1, 1)), "r--", label="RBF network, GCV mu")
    a2.set_xlabel("x")
    a2.set_ylabel("y")
    a2.set_title(f"fit at the GCV choice (RMSE {err:.3f})")
    a2.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, IMG / "rbf_network_gcv.png", dpi=90)
    return 0


if __name__ == "__main__":
    sys.exit(main())
