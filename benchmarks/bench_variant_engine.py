"""A one-class ``Variant`` from its second fit on, against ``sklearn.svm.OneClassSVM``.

    python benchmarks/bench_variant_engine.py            # N = 1000, 5 refits
    python benchmarks/bench_variant_engine.py --n 1000 3000 --refits 5
    python benchmarks/bench_variant_engine.py --n 1000 --cpu-medians 40

In one process: the spec is written on placeholders and fitted once (derivation, numba's
cached compilation, imports), then refitted ``--refits`` times on the same rows and on fresh
rows of the same size; each timed call is the public ``Variant.fit`` (bind, solve, recovery,
certificate, expansion). ``OneClassSVM(nu, gamma, tol).fit`` runs on the same rows in
between. Printed per N: best time of each, their ratios (the fit on new rows also in the
process's CPU time), and the calls into
``primaldual.model.dualize.dualize`` during the refits (the derivation's reductions; 0 means
the fit reused what was derived).

``--cpu-medians K`` prints instead, per N, the medians of ``K`` interleaved process CPU times
(a refit on the same rows, a fit on new rows, ``OneClassSVM``, in turn): on a shared machine
the others' load moves the best wall times of the three by tens of percent, each differently.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from sklearn.svm import OneClassSVM

sys.path.insert(0, os.environ.get("PRIMALDUAL_ROOT")
                or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import primaldual as pd  # noqa: E402
from primaldual.model import FeatureVariable, N, Param, Problem, Variable, X, norm2, phi, vsum, x  # noqa: E402

NU, GAMMA, TOL = 0.1, 0.5, 1e-3


def spec():
    nu = Param("nu")
    w = FeatureVariable("w")
    rho, xi = Variable("rho"), Variable("xi", N)
    P = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")])
    return P, w @ phi(x) - rho


class Counter:
    """Counts Python calls into ``model/dualize.py`` and ``model/reduce_*.py`` (the
    derivation's reductions; a profile hook, so a reference held elsewhere is counted too)."""

    def __init__(self):
        self.n = 0

    def _hook(self, frame, event, arg):
        if event == "call":
            f = frame.f_code.co_filename.replace(os.sep, "/")
            if "/primaldual/model/" in f and (f.endswith("/dualize.py")
                                              or "/reduce_" in f):
                self.n += 1

    def __enter__(self):
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc):
        sys.setprofile(None)


def best(f, k, clock=time.perf_counter):
    ts = []
    for _ in range(k):
        t = clock()
        f()
        ts.append(clock() - t)
    return min(ts)


def cpu_medians(P, dec, n: int, k: int) -> str:
    """The table row of ``--cpu-medians``: medians of ``k`` interleaved CPU times."""
    rng = np.random.default_rng(0)
    Xs = rng.standard_normal((n, 5))
    m = pd.Variant(P, decision=dec, task="novelty", kernel="rbf", gamma=GAMMA, nu=NU, tol=TOL)
    rows = [rng.standard_normal((n, 5)) for _ in range(k + 3)]
    for r in [Xs, Xs, *rows[:3]]:      # the derivation, the templates, numba's caches
        m.fit(r)
    same, new, ref = [], [], []
    for i in range(k):
        same.append(best(lambda: m.fit(Xs), 1, time.process_time))
        new.append(best(lambda i=i: m.fit(rows[3 + i]), 1, time.process_time))
        ref.append(best(lambda: OneClassSVM(nu=NU, gamma=GAMMA, tol=TOL).fit(Xs), 1,
                        time.process_time))
    md = [float(np.median(v)) for v in (same, new, ref)]
    return (f"| {n} | {open('/proc/loadavg').read().split()[0]} | {md[0] * 1e3:.1f} | "
            f"{md[1] * 1e3:.1f} | {md[2] * 1e3:.1f} | {md[0] / md[2]:.2f} | "
            f"{md[1] / md[2]:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[1000])
    ap.add_argument("--refits", type=int, default=5)
    ap.add_argument("--cpu-medians", type=int, default=0, metavar="K")
    a = ap.parse_args()
    P, dec = spec()
    if a.cpu_medians:
        print("| N | load | refit same rows [ms] | fit new rows [ms] | OneClassSVM [ms] "
              "| CPU ratio same | CPU ratio new |")
        print("|---|---|---|---|---|---|---|")
        for n in a.n:
            print(cpu_medians(P, dec, n, a.cpu_medians))
        return
    print("| N | first fit [ms] | refit same rows [ms] | fit new rows [ms] | OneClassSVM [ms] "
          "| ratio same | ratio new | CPU ratio new "
          "| reduction calls: refit same rows / new rows |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in a.n:
        rng = np.random.default_rng(0)
        Xs = rng.standard_normal((n, 5))
        m = pd.Variant(P, decision=dec, task="novelty", kernel="rbf", gamma=GAMMA, nu=NU,
                       tol=TOL)
        t = time.perf_counter()
        m.fit(Xs)
        first = time.perf_counter() - t
        same = best(lambda m=m, Xs=Xs: m.fit(Xs), a.refits)
        with Counter() as c_same:      # (outside the timings: the hook slows every call)
            m.fit(Xs)
        fresh_rows = [rng.standard_normal((n, 5)) for _ in range(2 * a.refits)]
        it = iter(fresh_rows)
        new = best(lambda m=m, it=it: m.fit(next(it)), a.refits)
        # the process's CPU time too (on a shared machine, less of the others' load in it)
        new_cpu = best(lambda m=m, it=it: m.fit(next(it)), a.refits, time.process_time)
        with Counter() as c_new:
            m.fit(fresh_rows[0])
        ref = best(lambda Xs=Xs: OneClassSVM(nu=NU, gamma=GAMMA, tol=TOL).fit(Xs),
                   a.refits)
        ref_cpu = best(lambda Xs=Xs: OneClassSVM(nu=NU, gamma=GAMMA, tol=TOL).fit(Xs),
                       a.refits, time.process_time)
        print(f"| {n} | {first * 1e3:.0f} | {same * 1e3:.1f} | {new * 1e3:.1f} | "
              f"{ref * 1e3:.1f} | {same / ref:.2f} | {new / ref:.2f} | {new_cpu / ref_cpu:.2f} "
              f"| {c_same.n} / {c_new.n} |")


if __name__ == "__main__":
    main()
