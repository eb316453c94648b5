"""A ranking SVM over the pairs of each query (Joachims 2002) written as a factory
``Variant(task="ranking")``, against the same primal written by hand in CVXPY (Clarabel), on
the same data in the same run: wall time and the peak of Python-tracked memory
(``tracemalloc``; numba's and the solvers' own buffers are not counted on either side).

Usage::

    PYTHONPATH=. python benchmarks/bench_ranking.py --sizes 4000 10000
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import cvxpy as cp
import numpy as np

import primaldual as pd
from primaldual.model import Data, Problem, Variable, norm2, vsum


def pairs(y, qid):
    out = []
    for q in np.unique(qid):
        r = np.flatnonzero(qid == q)
        ii, jj = np.meshgrid(r, r, indexing="ij")
        ok = y[ii] > y[jj]
        out += list(zip(ii[ok], jj[ok], strict=True))
    return np.array(out)


def ranking_svm(X, y, kernel, C, qid):
    P_ = pairs(y, qid)
    D = X[P_[:, 0]] - X[P_[:, 1]]
    w, xi = Variable("w", X.shape[1]), Variable("xi", D.shape[0])
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi),
                [(Data("D", D) @ w >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "ranking SVM primal")
    return P, Data("X", X) @ w


def data(n, per=20, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    rel = np.digitize(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n), [-1.0, 0.0, 1.0])
    return X, rel.astype(float), np.repeat(np.arange(n // per), per)


def _measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return wall, peak, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000, 10000])
    args = ap.parse_args()
    Xw, yw, qw = data(200)
    pd.Variant(ranking_svm, task="ranking", kernel="linear", C=1.0).fit(Xw, yw, qid=qw)
    print("| rows | pairs | ours [s] | ours peak [MB] | route | status | CVXPY [s] | "
          "CVXPY peak [MB] | objective rel. diff | pairwise acc. |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        X, rel, qid = data(n)
        P_ = pairs(rel, qid)

        def ours(X=X, rel=rel, qid=qid):
            return pd.Variant(ranking_svm, task="ranking", kernel="linear", C=1.0).fit(
                X, rel, qid=qid)

        def hand(X=X, P_=P_):
            D = X[P_[:, 0]] - X[P_[:, 1]]
            w = cp.Variable(X.shape[1])
            pr = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + cp.sum(cp.pos(1 - D @ w))))
            return pr.solve(solver="CLARABEL")

        to, mo, m = _measure(ours)
        th, mh, ref = _measure(hand)
        c = m.certificate_
        print(f"| {n} | {P_.shape[0]} | {to:.2f} | {mo:.0f} | {m.backend_} | {c.status} | "
              f"{th:.2f} | {mh:.0f} | {abs(c.primal_objective - ref) / abs(ref):.1e} | "
              f"{m.score(X, rel, qid=qid):.3f} |", flush=True)


if __name__ == "__main__":
    main()
