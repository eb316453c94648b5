"""A nu-SVC written on placeholders, fitted as ``primaldual.Variant``, against the catalogue's
``NuSVC`` on the same data (the one-engine design's target: within 1.3x at N = 3,000).

    python benchmarks/bench_variant_nusvc.py [--n 3000] [--repeats 5]

In one process, both warmed on other rows first (numba's cached compilation, the spec's
derivation); then interleaved public fits (certificate included), medians. Printed: the
times, their ratio, each fit's route and status, and the agreement of the predictions.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
from sklearn.datasets import make_classification

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_interleaved  # noqa: E402

import primaldual as pd  # noqa: E402
from primaldual.model import (  # noqa: E402
    FeatureVariable,
    N,
    Param,
    Problem,
    Variable,
    norm2,
    phi,
    vsum,
    x,
)
from primaldual.model import X as PX  # noqa: E402
from primaldual.model import y as PY  # noqa: E402


def nu_svc_spec():
    """``min 1/2 ||w||^2 - nu rho + 1/N sum xi`` s.t. ``y_i (<w, phi(x_i)> + b) >= rho - xi_i``,
    ``xi >= 0`` (Scholkopf et al. 2000; the catalogue's ``NuSVC``)."""
    nu = Param("nu", tex=r"\nu")
    w = FeatureVariable("w")
    rho, b, xi = Variable("rho"), Variable("b"), Variable("xi", N)
    spec = Problem(0.5 * norm2(w) - nu * rho + 1 / N * vsum(xi),
                   [(PY * (w @ phi(PX) + b) >= rho - xi).named("alpha"),
                    (xi >= 0).named("mu")], "min", "nu-SVC primal")
    return spec, w @ phi(x) + b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[3000])
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    spec, dec = nu_svc_spec()
    gamma, nu = 0.05, 0.3

    def placeholder():
        return pd.Variant(spec, decision=dec, task="classification", kernel="rbf",
                          gamma=gamma, nu=nu)

    def catalogue():
        return pd.NuSVC(nu=nu, gamma=gamma)

    warnings.simplefilter("ignore")
    Xw, yw = make_classification(300, 20, random_state=1)
    placeholder().fit(Xw, yw)
    catalogue().fit(Xw, yw)
    print("| N | Variant (placeholders) [ms] | NuSVC [ms] | ratio (target <= 1.3) | routes "
          "| status | same predictions |")
    print("|---|---|---|---|---|---|---|")
    for n in a.n:
        X, y = make_classification(n, 20, random_state=0)
        wall, _, (mv, mc) = median_interleaved(
            [lambda X=X, y=y: placeholder().fit(X, y), lambda X=X, y=y: catalogue().fit(X, y)],
            a.repeats)
        same = float(np.mean(mv.predict(X) == mc.predict(X)))
        print(f"| {n} | {wall[0] * 1e3:.1f} | {wall[1] * 1e3:.1f} | {wall[0] / wall[1]:.2f} "
              f"| {mv.backend_} / {mc.backend_} | {mv.status_} / {mc.status_} | {same:.4f} |")


if __name__ == "__main__":
    main()
