"""Benchmark: Laplace GP classification, ``pd.GPClassifier`` vs scikit-learn's
``GaussianProcessClassifier``, same data, same kernel, same start.

Rows (Ripley's data, ``1.0 * RBF(1.0)`` = ``amplitude=1, gamma=0.5``):

- ``fixed``: ``optimizer=None`` (Newton for the posterior mode, the evidence);
- ``lbfgs``: L-BFGS-B over ``(log amplitude, log gamma)`` resp. ``(log c, log l)``.

The evidence reached by each is printed (``log q``; ours must be at least scikit-learn's).
Each pair runs interleaved ``--repeats`` times, best time reported; the machine may be loaded.

    PYTHONPATH=. python benchmarks/bench_gpc.py            # N = 200, 500
    PYTHONPATH=. python benchmarks/bench_gpc.py --quick    # N = 200, one repeat
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF
from sklearn.gaussian_process.kernels import ConstantKernel as CK

import primaldual as pd
from primaldual.datasets import load_dataset


def _time(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[200, 500])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.n, a.repeats = [200], 1
    warnings.simplefilter("ignore")
    print("| row | N | scikit-learn (s) | primaldual (s) | ratio sk/ours | log q scikit-learn "
          "| log q primaldual |")
    print("|---|---|---|---|---|---|---|")
    for n in a.n:
        X, y = load_dataset("ripley", n_samples=n, random_state=0)
        for row, opt in (("fixed", None), ("lbfgs", "fmin_l_bfgs_b")):
            t_s = t_o = np.inf
            for _ in range(a.repeats):  # interleaved
                t, sk = _time(lambda opt=opt, X=X, y=y: GaussianProcessClassifier(
                    CK(1.0) * RBF(1.0), optimizer=opt).fit(X, y))
                t_s = min(t_s, t)
                t, ours = _time(lambda opt=opt, X=X, y=y: pd.GPClassifier(
                    optimizer=opt).fit(X, y))
                t_o = min(t_o, t)
            print(f"| {row} | {n} | {t_s:.3f} | {t_o:.3f} | {t_s / t_o:.2f} | "
                  f"{sk.log_marginal_likelihood_value_:.6f} | "
                  f"{ours.log_marginal_likelihood_value_:.6f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
