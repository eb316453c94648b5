"""Benchmark: low-rank eta-reformulation (C-SVC, RBF) vs exact LIBSVM vs the eta-problem in CVXPY.

Data: ``make_classification`` with d = 20 features, standardised, RBF with
``gamma = 1 / (d * X.var())`` (scikit-learn's "scale"), C = 1. For each N and rank M:

- ``lowrank``: pivoted incomplete Cholesky factor (``kernels.low_rank_factor``) + the IPM of
  ``primaldual.backends.lowrank`` (fit time = factor + solve);
- ``libsvm``: ``sklearn.svm.SVC`` on the exact kernel (once per N, skipped above ``--svc-max``,
  killed after ``--svc-timeout`` seconds);
- ``cvxpy``: the same eta-problem (same factor) through ``eta_problem_cvxpy`` + Clarabel
  (fit time = factor + compile + solve; skipped above ``--cvxpy-max``).

Each fit runs in its own forked process (so a timeout can stop it and its peak RSS is its own);
our fit is repeated ``--repeats`` times, interleaved with the references, median reported.
Reported: fit time, speed-up of ours, test accuracy, rank, relative trace error of the factor,
relative gap of the eta-problem (recomputed from the returned point), the relative gap of the
recovered (alpha, b) on the exact-kernel problem (N <= ``--exact-gap-max``), peak RSS.

    PYTHONPATH=. python benchmarks/bench_lowrank.py --quick
    PYTHONPATH=. python benchmarks/bench_lowrank.py --sizes 10000,50000,200000 --ranks 200
"""

from __future__ import annotations

import os
import sys

# BLAS threads are fixed before numpy is imported (default 1: LIBSVM is single-threaded, and on a
# shared machine oversubscribed OpenBLAS threads slow small matrix products down by 10-30x).
_threads = "1"
for _i, _a in enumerate(sys.argv):
    if _a == "--threads" and _i + 1 < len(sys.argv):
        _threads = sys.argv[_i + 1]
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = _threads

import argparse  # noqa: E402
import multiprocessing as mp  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402

from primaldual import kernels  # noqa: E402
from primaldual.backends.lowrank import eta_problem_cvxpy, exact_gap, lowrank_csvc  # noqa: E402


def make_data(n_train, n_test, d, informative, redundant, flip_y, seed):
    X, y = make_classification(
        n_samples=n_train + n_test, n_features=d, n_informative=informative,
        n_redundant=redundant, flip_y=flip_y, class_sep=1.0, random_state=seed,
    )
    X = (X - X.mean(0)) / X.std(0)
    y = 2.0 * y - 1.0
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _child(fn, q, args):
    try:
        q.put(fn(*args))
    except Exception as exc:  # report, do not hang the parent
        q.put({"error": repr(exc)})


def run_in_child(fn, args, timeout):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=_child, args=(fn, q, args))
    proc.start()
    t0 = time.perf_counter()
    out = None
    while time.perf_counter() - t0 < timeout:
        try:
            out = q.get(timeout=1.0)
            break
        except Exception:
            if not proc.is_alive() and q.empty():
                break
    if out is None:
        proc.terminate()
        proc.join()
        return {"error": f"timeout after {timeout:.0f} s"}
    proc.join()
    return out


def fit_lowrank(Xtr, ytr, Xte, yte, gamma, C, M, want_alpha, factor_method="icholesky",
                solver="auto"):
    kern = kernels.RBF(gamma=gamma)
    t0 = time.perf_counter()
    res, factor = lowrank_csvc(Xtr, ytr, kern, C, rank=M, method=factor_method, solver=solver)
    t = time.perf_counter() - t0
    f = factor.transform(Xte) @ res.eta + res.b
    out = {
        "time": t, "factor_time": res.info["factor_time"], "solve_time": res.info["solve_time"],
        "acc": float(np.mean(np.where(f >= 0, 1.0, -1.0) == yte)), "rank": factor.rank,
        "rel_err": factor.relative_error, "gap": res.relative_gap, "status": res.status,
        "n_iter": res.n_iter, "objective": res.objective, "peak_mb": _peak_mb(),
        "solver": res.info.get("method", "ipm"), "fallback": res.info.get("fallback"),
        "newton_steps": res.info.get("newton_steps"), "ipm_it": res.info.get("ipm_iterations"),
        "working_set": res.info.get("working_set"),
    }
    if want_alpha:
        out["alpha"], out["b"] = res.alpha, res.b
    return out


def fit_libsvm(Xtr, ytr, Xte, yte, gamma, C):
    from sklearn.svm import SVC

    t0 = time.perf_counter()
    svc = SVC(C=C, kernel="rbf", gamma=gamma, cache_size=1000).fit(Xtr, ytr)
    t = time.perf_counter() - t0
    return {"time": t, "acc": float(svc.score(Xte, yte)), "n_sv": int(svc.n_support_.sum()),
            "peak_mb": _peak_mb()}


def fit_cvxpy(Xtr, ytr, Xte, yte, gamma, C, M):
    kern = kernels.RBF(gamma=gamma)
    t0 = time.perf_counter()
    factor = kernels.low_rank_factor(kern, Xtr, rank=M)
    t1 = time.perf_counter()
    n = ytr.size
    prob, a, eta = eta_problem_cvxpy(factor.V * ytr[:, None], -np.ones(n), C, sign=ytr)
    t2 = time.perf_counter()
    # b from LIBSVM's rule on the free multipliers of the returned point
    alpha = a.value
    o = factor.V @ eta.value
    free = (alpha > 1e-6 * C) & (alpha < C * (1 - 1e-6))
    b = float(np.mean(ytr[free] - o[free])) if free.any() else 0.0
    f = factor.transform(Xte) @ eta.value + b
    return {"time": t2 - t0, "solve_time": t2 - t1, "status": prob.status,
            "objective": float(prob.value), "acc": float(np.mean(np.where(f >= 0, 1, -1) == yte)),
            "peak_mb": _peak_mb()}


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,50000,200000")
    ap.add_argument("--ranks", default="200")
    ap.add_argument("--n-test", type=int, default=10000)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--informative", type=int, default=5)
    ap.add_argument("--redundant", type=int, default=15)
    ap.add_argument("--flip-y", type=float, default=0.1)
    ap.add_argument("--threads", default="1", help="BLAS threads (set before numpy import)")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--svc-max", type=int, default=50000)
    ap.add_argument("--svc-timeout", type=float, default=600.0)
    ap.add_argument("--cvxpy-max", type=int, default=50000)
    ap.add_argument("--cvxpy-timeout", type=float, default=900.0)
    ap.add_argument("--exact-gap-max", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="sizes 2000,5000, ranks 50,100")
    ap.add_argument("--md", default=None, help="also write the table as markdown here")
    ap.add_argument("--variants", default="icholesky/auto,nystrom/auto,icholesky/ipm",
                    help="our fits as factor/solver pairs (first one: the CVXPY comparison)")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.ranks, args.repeats, args.n_test = "2000,5000", "50,100", 2, 2000
    sizes = [int(s) for s in args.sizes.split(",")]
    ranks = [int(r) for r in args.ranks.split(",")]
    C = args.C

    variants = [v.split("/") for v in args.variants.split(",")]
    header = ("| N | M | method | fit time (s) | LIBSVM time / this | test acc | rank | "
              "rel. trace err | eta rel. gap | exact-kernel rel. gap | peak RSS (MB) | notes |")
    lines = [header, "|" + "---|" * 12]
    print(header, flush=True)

    def emit(row):
        line = "| " + " | ".join(row) + " |"
        lines.append(line)
        print(line, flush=True)

    for N in sizes:
        Xtr, ytr, Xte, yte = make_data(N, args.n_test, args.d, args.informative, args.redundant,
                                       args.flip_y, args.seed)
        gamma = 1.0 / (args.d * Xtr.var())
        data = (Xtr, ytr, Xte, yte, gamma, C)
        svc = None
        for M in ranks:
            ours: dict[tuple, list] = {tuple(v): [] for v in variants}
            cvx = None
            for rep in range(args.repeats):
                for v in variants:  # interleaved with the references
                    want = rep == 0 and N <= args.exact_gap_max
                    out = run_in_child(fit_lowrank, (*data, M, want, v[0], v[1]), 3600)
                    if "error" in out:
                        raise RuntimeError(out["error"])
                    ours[tuple(v)].append(out)
                if rep == 0 and svc is None and N <= args.svc_max:
                    svc = run_in_child(fit_libsvm, data, args.svc_timeout)
                if rep == min(1, args.repeats - 1) and N <= args.cvxpy_max:
                    cvx = run_in_child(fit_cvxpy, (*data, M), args.cvxpy_timeout)
            t_svc = svc["time"] if svc is not None and "error" not in svc else None
            main = ours[tuple(variants[0])]
            t_main = statistics.median(r["time"] for r in main)
            t_main_solve = statistics.median(r["solve_time"] for r in main)
            for v in variants:
                runs = ours[tuple(v)]
                t = statistics.median(r["time"] for r in runs)
                t_solve = statistics.median(r["solve_time"] for r in runs)
                t_fac = statistics.median(r["factor_time"] for r in runs)
                o = runs[0]
                eg = None
                if "alpha" in o:
                    eg = exact_gap((kernels.RBF(gamma=gamma), Xtr), ytr, C, o["alpha"], o["b"])
                if o["solver"] == "newton":
                    how = (f"{o['newton_steps']} Newton steps + {o['ipm_it']} IPM it. on "
                           f"|W| = {o['working_set']}")
                else:
                    how = f"{o['n_iter']} IPM it." + (f" (fallback: {o['fallback']})"
                                                      if o["fallback"] else "")
                emit([str(N), str(M), f"lowrank {o['solver']} ({v[0]})", f"{t:.2f}",
                      fmt(t_svc and t_svc / t, ".1f"), f"{o['acc']:.4f}", str(o["rank"]),
                      f"{o['rel_err']:.3f}", f"{o['gap']:.1e}",
                      fmt(eg and eg["relative_gap"], ".1e"),
                      f"{max(r['peak_mb'] for r in runs):.0f}",
                      f"factor {t_fac:.2f} s + solve {t_solve:.2f} s; {how}; {o['status']}"])
            o = main[0]
            if cvx is not None:
                if "error" in cvx:
                    emit([str(N), str(M), "cvxpy+clarabel (eta)", "-", "-", "-", "-", "-", "-",
                          "-", "-", cvx["error"]])
                else:
                    emit([str(N), str(M), f"cvxpy+clarabel (eta, {variants[0][0]})",
                          f"{cvx['time']:.2f}", fmt(t_svc and t_svc / cvx["time"], ".2f"),
                          f"{cvx['acc']:.4f}", str(o["rank"]), f"{o['rel_err']:.3f}", "-", "-",
                          f"{cvx['peak_mb']:.0f}",
                          f"{cvx['time'] / t_main:.1f}x the time of {'/'.join(variants[0])}; "
                          f"compile+solve {cvx['solve_time']:.2f} s "
                          f"({cvx['solve_time'] / t_main_solve:.1f}x its solve); {cvx['status']}; "
                          f"objective rel. diff "
                          f"{abs(cvx['objective'] - o['objective']) / abs(o['objective']):.1e}"])
            elif N > args.cvxpy_max:
                emit([str(N), str(M), "cvxpy+clarabel (eta)", "skipped", "-", "-", "-", "-", "-",
                      "-", "-", f"N > --cvxpy-max={args.cvxpy_max}"])
        if svc is not None:
            if "error" in svc:
                emit([str(N), "exact", "libsvm (sklearn SVC)", f"> {args.svc_timeout:.0f}", "-",
                      "-", "-", "-", "-", "-", "-", svc["error"]])
            else:
                emit([str(N), "exact", "libsvm (sklearn SVC)", f"{svc['time']:.2f}", "1.0",
                      f"{svc['acc']:.4f}", "-", "0", "-", "-", f"{svc['peak_mb']:.0f}",
                      f"{svc['n_sv']} SVs"])
        else:
            emit([str(N), "exact", "libsvm (sklearn SVC)", "skipped", "-", "-", "-", "-", "-",
                  "-", "-", f"N > --svc-max={args.svc_max}"])
    if args.md:
        with open(args.md, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
