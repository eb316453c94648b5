"""The direct QP route (backend ``qpdirect``: Clarabel on the arrays read from the Problem)
against the library's CVXPY route and a CVXPY model written by hand, on QPs over plain
variables that no SMO takes: the linear SVM's primal on data and one plane of the twin SVM
(Jayadeva et al. 2007). Each cell is the best of ``--repeats`` interleaved runs of
``Problem.solve`` (building the Problem included) or of the hand model's build and solve.

Usage::

    PYTHONPATH=. python benchmarks/bench_qpdirect.py
    PYTHONPATH=. python benchmarks/bench_qpdirect.py --sizes 2000 10000 --repeats 3
"""

from __future__ import annotations

import argparse
import functools
import time

import cvxpy as cp
import numpy as np

from primaldual.model import Data, Problem, Variable, sum_squares, vsum


def _svm(n, d, rng):
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)

    def ours(backend):
        w, b, xi = Variable("w", d), Variable("b"), Variable("xi", n)
        P = Problem(0.5 * sum_squares(w) + vsum(xi),
                    [Data("A", y[:, None] * X) @ w + Data("y", y) * b + xi >= 1, xi >= 0])
        return P.solve(backend=backend).objective_value

    def hand():
        w, b, xi = cp.Variable(d), cp.Variable(), cp.Variable(n)
        pr = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + cp.sum(xi)),
                        [cp.multiply(y, X @ w + b) >= 1 - xi, xi >= 0])
        return pr.solve(solver="CLARABEL")

    return ours, hand


def _twin(n, d, rng):
    A, B = rng.normal(size=(n // 2, d)) + 1.0, rng.normal(size=(n // 2, d)) - 1.0

    def ours(backend):
        w, b, xi = Variable("w", d), Variable("b"), Variable("xi", n // 2)
        P = Problem(0.5 * sum_squares(Data("A", A) @ w + b) + vsum(xi),
                    [-(Data("B", B) @ w + b) + xi >= 1, xi >= 0])
        return P.solve(backend=backend).objective_value

    def hand():
        w, b, xi = cp.Variable(d), cp.Variable(), cp.Variable(n // 2)
        pr = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ w + b) + cp.sum(xi)),
                        [-(B @ w + b) + xi >= 1, xi >= 0])
        return pr.solve(solver="CLARABEL")

    return ours, hand


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print("| problem | N | qpdirect [s] | library cvxpy [s] | hand CVXPY [s] | "
          "qpdirect / hand | objective rel. diff |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for name, make in (("linear SVM primal", _svm), ("twin SVM plane", _twin)):
            ours, hand = make(n, 10, np.random.default_rng(0))
            fns = [functools.partial(ours, "qpdirect"), functools.partial(ours, "cvxpy"), hand]
            times = [[], [], []]
            vals = [0.0, 0.0, 0.0]
            for _ in range(args.repeats):
                for k, fn in enumerate(fns):
                    t0 = time.perf_counter()
                    vals[k] = fn()
                    times[k].append(time.perf_counter() - t0)
            tq, tc, th = (min(t) for t in times)
            diff = abs(vals[0] - vals[2]) / max(1.0, abs(vals[2]))
            print(f"| {name} | {n} | {tq:.3f} | {tc:.3f} | {th:.3f} | {tq / th:.2f} | "
                  f"{diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
