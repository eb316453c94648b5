"""Derivation cost of a user's primal spec vs N (issue 26): the one-class SVM written as on paper
(docs/write_your_own_variant.md), RBF kernel. Prints, per N, the time and peak traced memory of
``dualize(P)`` (primal construction included) and the time of the SMO solve of the derived dual.

The derivation forms no N x N array (the dual's Q is a GramOperator read by SMO through kernel
columns), so its time and memory grow linearly in N.

Run: ``PYTHONPATH=. python benchmarks/bench_derivation.py [N ...]``
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np

from primaldual.kernels import make_kernel
from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum
from primaldual.model.dualize import dualize


def one_class(X: np.ndarray, nu: float, kernel) -> Problem:
    N = X.shape[0]
    w = FeatureVariable("w", kernel, X)
    rho, xi = Variable("rho"), Variable("xi", N)
    c = Data("c", 1.0 / (nu * N), txt="1/(νN)", tex=r"\frac{1}{\nu N}")
    return Problem(0.5 * norm2(w) + c * vsum(xi) - rho,
                   [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "one-class SVM primal", variables=[w, rho, xi])


def run(N: int, repeat: int = 3) -> tuple[float, float, float, object]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, 2))
    kernel = make_kernel("rbf", gamma=0.5)
    best = np.inf
    der = None
    for _ in range(repeat):
        t = time.perf_counter()
        der = dualize(one_class(X, 0.1, kernel))
        best = min(best, time.perf_counter() - t)
    tracemalloc.start()
    der = dualize(one_class(X, 0.1, kernel))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t = time.perf_counter()
    sol = der.dual.solve(backend="smo", tol=1e-6)
    t_smo = time.perf_counter() - t
    return best, peak / 2**20, t_smo, sol


def main(sizes: list[int]) -> None:
    run(200, repeat=1)        # warm-up: the SMO core's first call loads its compiled code
    print(f"{'N':>7} {'derive [s]':>11} {'peak [MiB]':>11} {'SMO solve [s]':>14} {'status':>8}")
    for N in sizes:
        t, mem, t_smo, sol = run(N)
        print(f"{N:>7} {t:>11.3f} {mem:>11.1f} {t_smo:>14.2f} {sol.status:>8}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [500, 2000, 10000])
