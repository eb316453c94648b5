"""A user's variant against scikit-learn (issue 26): the one-class SVM written as on paper,
fitted as ``primaldual.Variant``, against ``sklearn.svm.OneClassSVM`` (LIBSVM), RBF kernel.

    python benchmarks/bench_variant.py                  # N = 500, 2000, 10000
    python benchmarks/bench_variant.py --n 500 10000 --repeat 3
    python benchmarks/bench_variant.py --quick          # N = 500, 2000, one repeat
    python benchmarks/bench_variant.py --n 500 --catalogue 20000   # + C-SVC spec vs pd.CSVC

Per N, side by side in one run (each fit in a child process of its own, alternating
primaldual / scikit-learn, best of ``--repeat``):

* derivation: ``dualize(spec)`` (symbolic, no data) and ``derivation.bind(X, kernel, params)``
  (the dual on this data set), timed in the parent;
* fit: ``Variant(spec, decision, nu, gamma, tol).fit(X)`` -- derivation (cached per spec),
  bind, SMO, recovery, certificate, expansion -- against ``OneClassSVM(nu, gamma, tol).fit(X)``;
  each child first fits 1000 other points (imports, numba's cached compilation, the BLAS
  thread controller), then the timed fit;
* peak memory: the child's ``ru_maxrss`` (whole process, imports included) and its increase
  during the timed fit;
* agreement: sign of the decision functions on 5000 held-out points (LIBSVM's scaling is
  ``sum alpha = nu N``, ``alpha <= 1``: its decision function is ours times ``nu N``; the table
  also gives the largest relative deviation of ``nu N f`` from LIBSVM's).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NU, GAMMA, TOL = 0.1, 0.5, 1e-3

SPEC = '''
from primaldual.model import N, Param, FeatureVariable, Variable, Problem, X, x, norm2, phi, vsum
nu = Param("nu", tex=r"\\nu")
w = FeatureVariable("w")                       # in the kernel's feature space, basis = X
rho, xi = Variable("rho"), Variable("xi", N)
one_class = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                    [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                    "min", "one-class SVM primal")
decision = w @ phi(x) - rho
'''


SPEC_SVC = '''
from primaldual.model import N, Param, FeatureVariable, Variable, Problem, X, x, y, norm2, phi, vsum
C = Param("C")
w = FeatureVariable("w")
b, xi = Variable("b"), Variable("xi", N)
svc = Problem(0.5 * norm2(w) + C * vsum(xi),
              [(y * (w @ phi(X) + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
              "min", "C-SVC primal")
decision = w @ phi(x) + b
'''


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Training rows (a 2-D mixture of three Gaussians) and 5000 held-out rows."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [3.0, 1.0], [-1.0, 3.0]])
    X = centres[rng.integers(0, 3, n)] + rng.standard_normal((n, 2))
    Xt = rng.uniform(-4, 6, size=(5000, 2))
    return X, Xt


CHILD = '''
import json, resource, sys, time
import numpy as np
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
from bench_variant import data, SPEC, SPEC_SVC, NU, GAMMA, TOL
which, n = sys.argv[1], int(sys.argv[2])
X, Xt = data(n)
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
if which == "primaldual":
    import primaldual as pd
    ns = {{}}
    exec(SPEC, ns)
    make = lambda: pd.Variant(ns["one_class"], decision=ns["decision"], kernel="rbf",
                              gamma=GAMMA, nu=NU, tol=TOL)
elif which == "sklearn":
    from sklearn.svm import OneClassSVM
    make = lambda: OneClassSVM(nu=NU, kernel="rbf", gamma=GAMMA, tol=TOL)
else:                                          # the catalogue's C-SVC, and it as a Variant
    import primaldual as pd
    y = (X[:, 0] + 0.5 * X[:, 1] > 1.0).astype(int)
    if which == "variant-csvc":
        ns = {{}}
        exec(SPEC_SVC, ns)
        make = lambda: pd.Variant(ns["svc"], decision=ns["decision"], kernel="rbf",
                                  gamma=GAMMA, C=1.0, tol=TOL)
    else:
        make = lambda: pd.CSVC(C=1.0, kernel="rbf", gamma=GAMMA, tol=TOL)
    Xw = data(1000, seed=1)[0]
    make().fit(Xw, (Xw[:, 0] > 1.0).astype(int))
    base = rss()
    t0 = time.perf_counter()
    m = make().fit(X, y)
    t = time.perf_counter() - t0
    print(json.dumps({{"time": t, "peak_mb": rss(), "fit_mb": rss() - base,
                      "f": m.decision_function(Xt).tolist()}}))
    sys.exit(0)
make().fit(data(1000, seed=1)[0])             # imports, compiled code, BLAS controller
base = rss()
t0 = time.perf_counter()
m = make().fit(X)
t = time.perf_counter() - t0
peak = rss()
f = m.decision_function(Xt)
out = {{"time": t, "peak_mb": peak, "fit_mb": peak - base, "f": f.tolist()}}
if which == "primaldual":
    c = m.certificate_
    out.update(gap=c.relative_gap, kkt=c.max_kkt_residual, status=m.status_, backend=m.backend_,
               nsv=int(m.support_.size))
print(json.dumps(out))
'''


def child(which: str, n: int) -> dict:
    code = CHILD.format(root=ROOT, here=os.path.join(ROOT, "benchmarks"))
    r = subprocess.run([sys.executable, "-c", code, which, str(n)], capture_output=True,
                       text=True, cwd=ROOT, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{which} N={n} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def derivation_times(n: int, repeat: int) -> tuple[float, float]:
    """Best-of-``repeat`` seconds of ``dualize(spec)`` and of ``derivation.bind(...)``."""
    sys.path.insert(0, ROOT)
    from primaldual.kernels import make_kernel
    from primaldual.model.dualize import dualize
    X, _ = data(n)
    k = make_kernel("rbf", gamma=GAMMA)
    td, tb = np.inf, np.inf
    for _ in range(repeat):
        ns: dict = {}
        exec(SPEC, ns)                 # a fresh spec object: no cached derivation
        t0 = time.perf_counter()
        der = dualize(ns["one_class"])
        t1 = time.perf_counter()
        der.bind(X=X, kernel=k, params={"nu": NU})
        t2 = time.perf_counter()
        td, tb = min(td, t1 - t0), min(tb, t2 - t1)
    return td, tb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[500, 2000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="N = 500, 2000, one repeat")
    ap.add_argument("--catalogue", type=int, nargs="*", default=None, metavar="N",
                    help="also the C-SVC written as a Variant spec against pd.CSVC at these N")
    a = ap.parse_args()
    if a.quick:
        a.n, a.repeat = [500, 2000], 1
    print(f"load average: {os.getloadavg()}; nu = {NU}, gamma = {GAMMA}, tol = {TOL}, RBF")
    print("| N | dualize(spec) [s] | bind [s] | Variant.fit [s] | OneClassSVM.fit [s] | ratio "
          "| peak RSS pd / sk [MB] | fit's RSS increase pd / sk [MB] | sign agreement "
          "| max rel. dev. of nu N f | rel. gap | max KKT | #SV | backend |")
    print("|" + "---|" * 14)
    for n in a.n:
        td, tb = derivation_times(n, a.repeat)
        best: dict[str, dict] = {}
        for _ in range(a.repeat):
            for which in ("primaldual", "sklearn"):
                r = child(which, n)
                if which not in best or r["time"] < best[which]["time"]:
                    best[which] = r
        p, s = best["primaldual"], best["sklearn"]
        fp, fs = np.asarray(p["f"]) * NU * n, np.asarray(s["f"])
        agree = float(np.mean(np.sign(fp) == np.sign(fs)))
        dev = float(np.max(np.abs(fp - fs)) / max(1e-300, float(np.max(np.abs(fs)))))
        print(f"| {n} | {td:.3f} | {tb:.3f} | {p['time']:.3f} | {s['time']:.3f} | "
              f"{p['time'] / s['time']:.2f}x | {p['peak_mb']:.0f} / {s['peak_mb']:.0f} | "
              f"{p['fit_mb']:.0f} / {s['fit_mb']:.0f} | {agree:.4f} | {dev:.1e} | "
              f"{p['gap']:.1e} | {p['kkt']:.1e} | {p['nsv']} | {p['backend']} |", flush=True)
    if a.catalogue is not None:
        catalogue_rows(a.catalogue or [20000], a.repeat)


def catalogue_rows(ns: list[int], repeat: int) -> None:
    """The C-SVC primal written as a Variant spec against the catalogue's ``CSVC`` (same C,
    gamma, tol, labels ``x_1 + x_2 / 2 > 1``): the price of the generic road."""
    print("\n| N | Variant(C-SVC spec).fit [s] | CSVC.fit [s] | ratio | peak RSS [MB] "
          "| label agreement | max abs. dev. of f |")
    print("|" + "---|" * 7)
    for n in ns:
        best: dict[str, dict] = {}
        for _ in range(repeat):
            for which in ("variant-csvc", "csvc"):
                r = child(which, n)
                if which not in best or r["time"] < best[which]["time"]:
                    best[which] = r
        p, s = best["variant-csvc"], best["csvc"]
        fp, fs = np.asarray(p["f"]), np.asarray(s["f"])
        print(f"| {n} | {p['time']:.3f} | {s['time']:.3f} | {p['time'] / s['time']:.2f}x | "
              f"{p['peak_mb']:.0f} / {s['peak_mb']:.0f} | "
              f"{float(np.mean(np.sign(fp) == np.sign(fs))):.4f} | "
              f"{float(np.max(np.abs(fp - fs))):.1e} |", flush=True)


if __name__ == "__main__":
    main()
