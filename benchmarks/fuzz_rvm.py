"""Fuzz: ``pd.RVR`` on random data, kernels and scales; counts what a fit claims.

Per case: ``N`` in [2, 80), 1-3 features scaled by ``10^k`` (k in -3..3), targets ``sin`` of the
first feature plus noise of sd 0, 1e-3, 0.1 or 1, scaled by ``10^k`` (k in -4..4); kernel rbf,
linear or poly; bias on or off.  A problem is: an exception, a non-finite prediction,
``converged_`` with ``optimality_ > 1e-5``, or (N <= 40) a stored evidence that differs from
the dense :func:`primaldual.rvm.rvr_log_evidence` at the stored ``alpha, beta``.

    PYTHONPATH=. python benchmarks/fuzz_rvm.py [--cases 150] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import primaldual as pd
from primaldual.rvm import rvr_log_evidence


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    problems: list[tuple] = []
    converged = 0
    t0 = time.perf_counter()
    for k in range(a.cases):
        N = int(rng.integers(2, 80))
        d = int(rng.integers(1, 4))
        X = rng.normal(size=(N, d)) * 10.0 ** rng.integers(-3, 4)
        y = np.sin(X[:, 0] * rng.uniform(0.1, 3)) + rng.normal(size=N) * rng.choice(
            [0, 1e-3, 0.1, 1])
        y = y * 10.0 ** rng.integers(-4, 5)
        kernel = str(rng.choice(["rbf", "linear", "poly"]))
        bias = bool(rng.integers(2))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = pd.RVR(kernel=kernel, bias=bias).fit(X, y)
            if not np.all(np.isfinite(m.predict(X))):
                problems.append((k, "non-finite prediction"))
            if m.converged_:
                converged += 1
                if not m.optimality_ <= 1e-5:
                    problems.append((k, "converged with optimality_", m.optimality_))
                if N <= 40:
                    P = m._design(X)
                    alpha = np.full(P.shape[1], np.inf)
                    alpha[m.active_] = m.alpha_
                    try:
                        L = rvr_log_evidence(P, y, alpha, m.beta_)
                    except np.linalg.LinAlgError:   # the dense C itself is not factorable
                        continue
                    if abs(L - m.log_marginal_likelihood_value_) > 1e-6 * max(1.0, abs(L)):
                        problems.append((k, "evidence", L, m.log_marginal_likelihood_value_))
        except Exception as exc:  # noqa: BLE001 - counting every kind of failure
            problems.append((k, kernel, bias, N, type(exc).__name__, str(exc)[:80]))
    print(f"{a.cases} cases, {converged} converged, {len(problems)} problems, "
          f"{time.perf_counter() - t0:.1f} s")
    for p in problems:
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
