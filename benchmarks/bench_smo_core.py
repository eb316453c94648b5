"""Per-iteration cost of the compiled SMO core on the 45 one-vs-one pairs of digits (issue 31).

Times, best of ``--repeats``, the 45 binary C-SVC solves of ``SVC()`` on digits (RBF,
gamma='scale', C=1, tol=1e-3) three ways, side by side in one process:

* ``libsvm``: ``sklearn.svm.SVC`` on all of digits (one call: LIBSVM's 45 solves with its
  kernel evaluations, no Python between them) and fitted on each pair (its Python overhead
  45 times);
* ``core``: :func:`primaldual.backends.smo.solver.solve_arrays` on each pair (kernel columns
  from X);
* ``core, Gram``: the same solves reading columns from the precomputed kernel matrix (the
  difference to ``core`` is the cost of computing kernel columns).

Prints milliseconds for all pairs, iterations, and microseconds per iteration.
Run: ``PYTHONPATH=. python benchmarks/bench_smo_core.py --repeats 7``.
"""

import argparse
import itertools
import os
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.svm import SVC

from primaldual.backends.smo import solver
from primaldual.kernels import make_kernel


def pairs():
    X, y = load_digits(return_X_y=True)
    gamma = 1.0 / (X.shape[1] * X.var())
    out = []
    for a, b in itertools.combinations(range(10), 2):
        m = (y == a) | (y == b)
        out.append((np.ascontiguousarray(X[m]), np.where(y[m] == a, 1.0, -1.0)))
    return out, gamma


def run_core(data, kern, gram):
    its = 0
    for Xp, s in data:
        g = None
        if gram:
            K = kern(Xp)
            g = (np.ascontiguousarray(K), np.arange(Xp.shape[0]))
        r = solver.solve_arrays(Xp, kern, -np.ones_like(s), 1.0, sign=s, tol=1e-3, gram=g)
        its += r.n_iter
    return its


def run_sk(data, gamma):
    its = 0
    for Xp, s in data:
        m = SVC(C=1.0, gamma=gamma, tol=1e-3).fit(Xp, s)
        its += int(np.sum(m.n_iter_))
    return its


def best(f, k):
    bw = bc = 1e9
    out = None
    for _ in range(k):
        w, c = time.perf_counter(), time.process_time()
        out = f()
        bw = min(bw, time.perf_counter() - w)
        bc = min(bc, time.process_time() - c)
    return bw * 1e3, bc * 1e3, out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-gram", action="store_true")
    a = ap.parse_args()
    data, gamma = pairs()
    kern = make_kernel("rbf", gamma=gamma)
    solver.compile_core()
    run_core(data, kern, False)
    run_sk(data, gamma)
    print("load", os.getloadavg())
    Xa, ya = load_digits(return_X_y=True)
    rows = [("libsvm SVC().fit(digits), 1 call", lambda: int(np.sum(
                SVC(C=1.0, gamma=gamma, tol=1e-3).fit(Xa, ya).n_iter_))),
            ("libsvm SVC per pair", lambda: run_sk(data, gamma)),
            ("core", lambda: run_core(data, kern, False))]
    if not a.no_gram:
        # the Gram matrix of each pair is computed inside, so time it separately
        rows.append(("core, Gram (incl. kernel(X))", lambda: run_core(data, kern, True)))
    for name, f in rows:
        w, c, its = best(f, a.repeats)
        print(f"{name:32s} wall {w:7.2f} ms  cpu {c:7.2f} ms  iterations {its:6d}  "
              f"{1e3 * c / its:6.2f} us/iter")
