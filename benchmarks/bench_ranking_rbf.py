"""An RBF ranking SVM over the pairs of each query, written on a sparse pair-difference matrix
``Data("D", D) @ (w @ phi(X))`` (``D`` a scipy CSR ``P x N`` matrix) as a factory
``Variant(task="ranking")``, against the same primal written by hand in CVXPY (Clarabel).

Cases: ``ours-auto`` (the pairs route: scores ``f = K Dᵀ a`` kept, kernel rows from a capped
cache), ``ours-tight`` (the same at ``tol = 1e-9``: a reference where no independent one
fits), ``ours-linear`` (the linear route named explicitly: the rows of ``Z = D L``,
``P x rank(K)``, the previous default road), ``ours-cvxpy`` and ``hand`` (CVXPY).

Each case runs in a fresh process: wall time of the fit (derivation, solve, recovery and
certificate for ours; compile and solve for the hand model) and the process's peak resident
memory (``ru_maxrss``, everything included: numpy, numba, CVXPY and the solvers' buffers).
Every case also scores held-out queries (``--test-rows`` rows of another draw); the table
compares the sign of every held-out pair's score difference with the reference case's
(``--ref``, default ``hand``, else the first case run), counting the disagreements among the
pairs whose reference difference is clear of the fits' tolerance (``> 1e-3``), and the
objective's relative difference to the reference's.

Usage::

    PYTHONPATH=. python benchmarks/bench_ranking_rbf.py --sizes 2000 5000 10000 \
        --cases ours-auto ours-linear --ref ours-linear
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from primaldual.ranking import pair_matrix

GAMMA, C = 0.3, 1.0


def data(n, per=20, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    rel = np.digitize(np.sin(X[:, 0]) + X[:, 1] ** 2 / 2 + 0.2 * rng.normal(size=n),
                      [0.0, 0.5, 1.2])
    return X, rel.astype(float), np.repeat(np.arange(n // per), per)


def ranking_rbf(X, y, kernel, C, qid):
    from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum
    D = pair_matrix(y, qid)
    w, xi = FeatureVariable("w", kernel, X), Variable("xi", D.shape[0], index="P")
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi),
                [(Data("D", D) @ (w @ phi(X)) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "RBF ranking SVM primal")
    return P, w @ phi(X)


def run_case(case: str, n: int, test_rows: int, scores: str) -> dict:
    X, rel, qid = data(n)
    Xt = data(test_rows, seed=1)[0]
    out: dict = {"pairs": int(pair_matrix(rel, qid).shape[0])}
    if case == "hand":
        import cvxpy as cp

        from primaldual.kernels import make_kernel
        t0 = time.perf_counter()
        D = pair_matrix(rel, qid)
        K = make_kernel("rbf", gamma=GAMMA)(X)
        L = np.linalg.cholesky(K + 1e-10 * np.eye(n))
        beta, xi = cp.Variable(n), cp.Variable(D.shape[0])
        prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ beta) + C * cp.sum(xi)),
                          [D @ (K @ beta) >= 1 - xi, xi >= 0])
        prob.solve(solver="CLARABEL")
        out.update(time=time.perf_counter() - t0, objective=float(prob.value),
                   route="CVXPY by hand", status=prob.status)
        ft = make_kernel("rbf", gamma=GAMMA)(Xt, X) @ beta.value
    else:
        import primaldual as pd
        backend = {"ours-auto": "auto", "ours-cvxpy": "cvxpy", "ours-linear": "linear",
                   "ours-tight": "auto"}[case]
        kw = {} if backend == "cvxpy" else {"tol": 1e-9 if case == "ours-tight" else 1e-6}
        t0 = time.perf_counter()
        m = pd.Variant(ranking_rbf, task="ranking", kernel="rbf", gamma=GAMMA, C=C,
                       backend=backend, **kw).fit(X, rel, qid=qid)
        out.update(time=time.perf_counter() - t0, objective=float(m.certificate_.primal_objective),
                   route=m.backend_, status=m.certificate_.status,
                   acc=float(m.score(X, rel, qid=qid)))
        ft = m.predict(Xt)
    np.save(scores, ft)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000])
    ap.add_argument("--cases", nargs="+", default=["ours-auto", "ours-cvxpy", "hand"])
    ap.add_argument("--ref", default="hand", help="the case the held-out order is compared "
                    "with (default hand; the first case run when it did not run)")
    ap.add_argument("--test-rows", type=int, default=2000)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--scores", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.n, args.test_rows, args.scores)))
        return
    tmp = tempfile.mkdtemp(prefix="bench_ranking_rbf_")
    # warm the numba cores of the cases to be timed once, so no case pays their compilation
    for warm in [c for c in ("ours-auto", "ours-linear") if c in args.cases
                 or (c == "ours-auto" and "ours-tight" in args.cases)]:
        subprocess.run([sys.executable, __file__, "--case", warm, "--n", "200", "--test-rows",
                        "40", "--scores", os.path.join(tmp, "warm.npy")],
                       check=True, capture_output=True, env=os.environ)
    Dt = pair_matrix(*data(args.test_rows, seed=1)[1:])
    print(f"held-out: {args.test_rows} rows, {Dt.shape[0]} pairs; load {_load()}")
    print("| rows | pairs | case | route | status | time [s] | peak RSS [MB] | "
          "objective rel. diff to ref | pairwise acc. | held-out order vs ref |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        res = {}
        for case in args.cases:
            out = os.path.join(tmp, f"{case}-{n}.npy")
            try:
                p = subprocess.run([sys.executable, __file__, "--case", case, "--n", str(n),
                                    "--test-rows", str(args.test_rows), "--scores", out],
                                   capture_output=True, text=True, timeout=args.timeout,
                                   env=os.environ)
                res[case] = (json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0
                             else {"error": p.stderr.strip().splitlines()[-1][:80]})
            except subprocess.TimeoutExpired:
                res[case] = {"error": f"stopped after {args.timeout:.0f} s"}
        ok = [c for c, r in res.items() if "error" not in r]
        ref_case = args.ref if args.ref in ok else (ok[0] if ok else None)
        ref = None if ref_case is None else res[ref_case]["objective"]
        d_ref = None if ref_case is None else \
            Dt @ np.load(os.path.join(tmp, f"{ref_case}-{n}.npy"))
        for case, r in res.items():
            if "error" in r:
                print(f"| {n} | | {case} | | {r['error']} | | | | | |", flush=True)
                continue
            diff = "" if ref is None else f"{abs(r['objective'] - ref) / abs(ref):.1e}"
            acc = f"{r['acc']:.3f}" if "acc" in r else ""
            order = "(ref)" if case == ref_case else _order(
                Dt @ np.load(os.path.join(tmp, f"{case}-{n}.npy")), d_ref, ref_case)
            print(f"| {n} | {r['pairs']} | {case} | {r['route']} | {r['status']} | "
                  f"{r['time']:.2f} | {r['peak_mb']:.0f} | {diff} | {acc} | {order} |",
                  flush=True)
        print(f"load after {n} rows: {_load()}", flush=True)


def _order(d: np.ndarray, d_ref: np.ndarray, ref_case: str) -> str:
    """The held-out pairs ordered as by the reference: disagreements among the pairs whose
    reference difference exceeds 1e-3, and among all."""
    clear = np.abs(d_ref) > 1e-3
    bad = np.sign(d) != np.sign(d_ref)
    return (f"{int(bad[clear].sum())} of {int(clear.sum())} clear pairs differ from "
            f"{ref_case} ({int(bad.sum())} of all)")


def _load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


if __name__ == "__main__":
    main()
