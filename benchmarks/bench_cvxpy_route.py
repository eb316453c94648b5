"""The library's CVXPY route (``backend="cvxpy"`` on the public ``fit``, certificate included)
against the same problem written by hand in CVXPY (Clarabel), each case in a fresh process:
wall time and the process's peak resident memory (``ru_maxrss``). The route should cost what
a plain CVXPY model costs: the twin SVM's linear planes (each dual ``||Zᵀα||²`` on the
features, ``d + 1`` numbers per row), the linear ranking SVM over pair differences, and the
RBF ranking SVM over a sparse pair matrix (the hand model: ``D (K β)`` with ``K = L Lᵀ``).

Usage::

    PYTHONPATH=. python benchmarks/bench_cvxpy_route.py
    PYTHONPATH=. python benchmarks/bench_cvxpy_route.py --cases twin:10000 rbf-ranking:500
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _twin(n: int, side: str) -> dict:
    from bench_twin import _data, _plane

    X, y = _data(n, 10, 0)
    t0 = time.perf_counter()
    if side == "hand":
        v = _plane(X[y > 0], X[y < 0], 1.0, -1.0)[0] + _plane(X[y < 0], X[y > 0], 1.0, 1.0)[0]
        status = "optimal"
    else:
        from primaldual.methods.twin import TwinSVC
        m = TwinSVC(backend="cvxpy").fit(X, y)
        v = sum(c.primal_objective for c in m.certificates_)
        status = ",".join(sorted({c.status for c in m.certificates_}))
    return {"time": time.perf_counter() - t0, "objective": float(v), "status": status}


def _ranking(n: int, side: str, rbf: bool) -> dict:
    import primaldual as pd
    if rbf:
        from bench_ranking_rbf import GAMMA, data
        from bench_ranking_rbf import ranking_rbf as spec
        kw = {"kernel": "rbf", "gamma": GAMMA}
    else:
        from bench_ranking import data
        from bench_ranking import ranking_svm as spec
        kw = {"kernel": "linear"}
    X, rel, qid = data(n)
    t0 = time.perf_counter()
    if side == "hand":
        import cvxpy as cp

        from primaldual.kernels import make_kernel
        from primaldual.ranking import pair_matrix
        D = pair_matrix(rel, qid)
        xi = cp.Variable(D.shape[0])
        if rbf:
            K = make_kernel("rbf", gamma=kw["gamma"])(X)
            L = __import__("numpy").linalg.cholesky(K + 1e-10 * __import__("numpy").eye(n))
            beta = cp.Variable(n)
            reg, rows = cp.sum_squares(L.T @ beta), D @ (K @ beta)
        else:
            w = cp.Variable(X.shape[1])
            reg, rows = cp.sum_squares(w), (D @ X) @ w
        pr = cp.Problem(cp.Minimize(0.5 * reg + cp.sum(xi)), [rows >= 1 - xi, xi >= 0])
        pr.solve(solver="CLARABEL")
        return {"time": time.perf_counter() - t0, "objective": float(pr.value),
                "status": pr.status}
    m = pd.Variant(spec, task="ranking", C=1.0, backend="cvxpy", **kw).fit(X, rel, qid=qid)
    return {"time": time.perf_counter() - t0,
            "objective": float(m.certificate_.primal_objective),
            "status": m.certificate_.status}


def run_case(kind: str, n: int, side: str) -> dict:
    if kind == "twin":
        out = _twin(n, side)
    else:
        out = _ranking(n, side, rbf=kind == "rbf-ranking")
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _run(kind: str, n: int, side: str, timeout: float) -> dict:
    try:
        p = subprocess.run([sys.executable, __file__, "--one", kind, str(n), side],
                           capture_output=True, text=True, timeout=timeout, env=os.environ)
    except subprocess.TimeoutExpired:
        return {"error": f"stopped after {timeout:.0f} s"}
    if p.returncode:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1][:80]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+",
                    default=["twin:10000", "ranking:10000", "rbf-ranking:500"])
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one[0], int(args.one[1]), args.one[2])))
        return
    _run("twin", 200, "ours", args.timeout)          # numba's cache, once, outside the timings
    with open("/proc/loadavg") as fh:
        print("load:", fh.read().split()[0])
    print("| problem | N | ours [s] | hand CVXPY [s] | ratio | ours peak [MB] | hand peak [MB] "
          "| objective rel. diff | status |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case in args.cases:
        kind, n = case.split(":")
        ours, hand = _run(kind, int(n), "ours", args.timeout), _run(kind, int(n), "hand",
                                                                     args.timeout)
        if "error" in ours or "error" in hand:
            print(f"| {kind} | {n} | {ours.get('error', '')} | {hand.get('error', '')} "
                  "| | | | | |")
            continue
        diff = abs(ours["objective"] - hand["objective"]) / max(1.0, abs(hand["objective"]))
        print(f"| {kind} | {n} | {ours['time']:.2f} | {hand['time']:.2f} | "
              f"{ours['time'] / hand['time']:.2f} | {ours['peak_mb']:.0f} | "
              f"{hand['peak_mb']:.0f} | {diff:.1e} | {ours['status']} |", flush=True)


if __name__ == "__main__":
    main()
