"""Peak resident memory of public calls, each in its own child process (issue 19).

Each case runs in a fresh ``python`` child: it builds its data, records the resident set size
(RSS) just before the public call, makes the call, and reports the process's peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``; the kernel's high-water mark, so nothing
between samples is missed) together with the call's wall time.  "peak" includes the
interpreter, the imported libraries and the data; "peak - before" is what the call added.

Cases:

* ``smo``: ``CSVC(C=1, gamma=0.05).fit(X, y)`` (SMO backend, certificate on),
  make_classification N = 50,000, d = 20.  Target: peak < 1 GB.
* ``fixed``: ``fixed_size_lssvm(X, y, rank=500)`` on a numpy X, N = 1,000,000, d = 10
  (regression, RBF gamma = 0.1).  ``V`` alone is N x M x 8 B = 4.0 GB.  Target: peak < 6 GB.

Usage::

    PYTHONPATH=. python benchmarks/bench_memory.py                 # both cases
    PYTHONPATH=. python benchmarks/bench_memory.py --only fixed --n 1000000
    PYTHONPATH=. python benchmarks/bench_memory.py --only smo --n 50000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np

def rss_gb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024**2
    return float("nan")

case, n = sys.argv[1], int(sys.argv[2])
out = {"case": case, "n": n}
if case == "smo":
    from sklearn.datasets import make_classification
    from primaldual.methods.svc import CSVC
    X, y = make_classification(n, 20, n_informative=10, random_state=0)
    from primaldual.backends.smo import compile_core
    compile_core()  # numba warm-up (cached code)
    CSVC(C=1.0, gamma=0.05).fit(X[:60], y[:60])
    before = rss_gb()
    t0 = time.perf_counter()
    m = CSVC(C=1.0, gamma=0.05, tol=1e-3).fit(X, y)
    out["time"] = time.perf_counter() - t0
    out["status"] = m.certificate_.status
    out["rel_gap"] = float(m.certificate_.relative_gap)
    out["n_sv"] = int(len(m.support_))
elif case == "fixed":
    from primaldual.distributed import fixed_size_lssvm
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 10))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(n)
    Xt = rng.standard_normal((10000, 10))
    yt = np.sin(Xt[:, 0]) + 0.5 * Xt[:, 1]
    before = rss_gb()
    t0 = time.perf_counter()
    m = fixed_size_lssvm(X, y, C=10.0, gamma=0.1, rank=500, classifier=False)
    out["time"] = time.perf_counter() - t0
    out["test_rmse"] = float(np.sqrt(np.mean((m.predict(Xt) - yt) ** 2)))
else:
    raise SystemExit(f"unknown case {case}")
out["before_gb"] = before
out["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
print(json.dumps(out))
"""


def run(case: str, n: int) -> dict:
    env = dict(os.environ)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-c", CHILD, case, str(n)], env=env,
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"{case} child failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("smo", "fixed"), default=None)
    ap.add_argument("--n", type=int, default=None, help="N (default 50,000 / 1,000,000)")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"load average at start: {load:.1f}\n")
    print("| case | N | call time [s] | RSS before call [GiB] | peak RSS [GiB] | "
          "peak - before [GiB] | target | notes |")
    print("|---|---|---|---|---|---|---|---|")
    cases = [("smo", 50_000, 1.0), ("fixed", 1_000_000, 6.0)]
    for case, n_default, target in cases:
        if args.only not in (None, case):
            continue
        r = run(case, args.n or n_default)
        if case == "smo":
            note = f"status {r['status']}, rel. gap {r['rel_gap']:.1e}, {r['n_sv']} SVs"
            name = "`CSVC().fit` (SMO, certified)"
        else:
            note = f"test RMSE {r['test_rmse']:.3f}; V alone {r['n'] * 500 * 8 / 1024**3:.2f} GiB"
            name = "`fixed_size_lssvm` (M = 500, d = 10)"
        print(f"| {name} | {r['n']} | {r['time']:.1f} | {r['before_gb']:.2f} | "
              f"{r['peak_gb']:.2f} | {r['peak_gb'] - r['before_gb']:.2f} | < {target:g} GB | "
              f"{note} |", flush=True)
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
