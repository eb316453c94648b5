"""CVXPY backend overhead: the C-SVC dual compiled from our Problem object vs the same dual
hand-coded in CVXPY, same data, same solver and tolerances, interleaved in one run.

    PYTHONPATH=. python benchmarks/bench_cvxpy.py [--n 2000] [--repeats 3] [--quick]

Both sides include building the factor of Q (ours: pivoted Cholesky / eigendecomposition inside
the compiler; hand-coded: numpy Cholesky of Q + 1e-10 I) and CVXPY's compile + Clarabel solve.
"""

from __future__ import annotations

import argparse
import statistics
import time

import cvxpy as cp
import numpy as np
from sklearn.datasets import make_classification

import primaldual as pd
from primaldual.backends import cvxpy_ as cvxb
from primaldual.kernels import RBF


def hand_coded(X, y, gamma, C):
    t0 = time.perf_counter()
    K = RBF(gamma=gamma)(X)
    Q = K * np.outer(y, y)
    L = np.linalg.cholesky(Q + 1e-10 * np.eye(len(y)))
    a = cp.Variable(len(y))
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ a)),
                      [y @ a == 0, a >= 0, a <= C])
    prob.solve(solver="CLARABEL", **cvxb._ACCURATE["CLARABEL"])
    return time.perf_counter() - t0, float(prob.value)


def ours(X, y, gamma, C):
    t0 = time.perf_counter()
    D = pd.CSVC(C=C, kernel="rbf", gamma=gamma).dual(X, y)
    sol = D.solve(backend="cvxpy")
    return time.perf_counter() - t0, float(sol.objective_value)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="N = 300, one repeat")
    args = ap.parse_args(argv)
    n, reps = (300, 1) if args.quick else (args.n, args.repeats)
    X, y = make_classification(n_samples=n, n_features=20, random_state=0)
    y = np.where(y == 1, 1.0, -1.0)
    X = (X - X.mean(0)) / X.std(0)
    gamma, C = 1.0 / 20, 1.0
    t_ours, t_ref = [], []
    for _ in range(reps):  # interleaved
        t, v_ours = ours(X, y, gamma, C)
        t_ours.append(t)
        t, v_ref = hand_coded(X, y, gamma, C)
        t_ref.append(t)
    mo, mr = statistics.median(t_ours), statistics.median(t_ref)
    print("| problem | N | ours [s] | hand-coded CVXPY [s] | ratio | dual value ours | dual value "
          "hand-coded | rel. diff |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| C-SVC dual, RBF, Clarabel | {n} | {mo:.2f} | {mr:.2f} | {mo / mr:.2f} | "
          f"{v_ours:.8f} | {v_ref:.8f} | {abs(v_ours - v_ref) / abs(v_ref):.1e} |")


if __name__ == "__main__":
    main()
