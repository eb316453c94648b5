"""Benchmark of the KKT linear-system backend (issue 5).

Sections (all timings interleaved, median of repeats, ratios from the same run):

1. Direct LSSVC / LSSVR, RBF, N = 2k, 4k, 8k (d = 15): ours (kernel built in the Cholesky
   factor's storage, one POTRF, both right-hand sides in one POTRS; kernel computation included)
   vs (a) ``sklearn.metrics.pairwise.rbf_kernel`` + ``scipy.linalg.cho_factor(K + I/C)``
   (diagonal added in place) + two ``cho_solve`` vs (b) a dense ``numpy.linalg.solve`` of the
   bordered (N+1) x (N+1) system, as existing Python LS-SVM packages do.
2. Multiclass LS-SVM, 10 classes one-vs-all, N = 10k: ``fit_lssvm_multiclass`` vs one binary
   LS-SVM fit (same kernel, same N).
3. CG at N = 50k (d = 10): time, iterations, residual, peak RSS (child process).
4. Low-rank (fixed-size LS-SVM) at N = 1,000,000, d = 10, M = 500: Nystrom V built in the
   script in row blocks, then ``solve_lowrank``; time and peak RSS (child process).

Usage::

    PYTHONPATH=. python benchmarks/bench_kkt.py            # full (about 10-15 minutes)
    PYTHONPATH=. python benchmarks/bench_kkt.py --quick    # small sizes, about 1 minute
    PYTHONPATH=. python benchmarks/bench_kkt.py --md docs/benchmarks/kkt.md
"""

from __future__ import annotations

import argparse
import json
import math
import os

# One BLAS thread for every contender (ours and the references alike), set before numpy loads.
# On this 2-core machine shared with other jobs, OpenBLAS's threaded POTRF measured up to 20x
# slower than the single-threaded one (threads spin while their partner is descheduled), which
# would make every comparison measure scheduler noise. Override with OPENBLAS_NUM_THREADS=k.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", os.environ["OPENBLAS_NUM_THREADS"])
import resource
import subprocess
import sys
import time

import numpy as np
import scipy.linalg as sla
from sklearn.metrics.pairwise import rbf_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from primaldual.backends import linsys as kkt  # noqa: E402
from primaldual.kernels import RBF  # noqa: E402
from primaldual.kernels.gram import gram  # noqa: E402
from primaldual.multiclass import fit_lssvm_multiclass  # noqa: E402

C = 10.0


def make_problem(N, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d))
    y = np.where(X[:, 0] + X[:, 1] ** 2 - 1 + 0.3 * rng.standard_normal(N) > 0, 1.0, -1.0)
    t = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(N)
    return X, y, t


def ours(X, gamma, s, dvec):
    fac = kkt.factor_kernel(X, RBF(gamma=gamma), C)
    b, a = kkt.solve_bordered(fac, dvec, sign=s)
    return b, a


def ref_a(X, gamma, s, dvec):
    """rbf_kernel + cho_factor(K + I/C) + two cho_solve (eta, nu)."""
    N = X.shape[0]
    K = rbf_kernel(X, gamma=gamma)
    K[np.diag_indices(N)] += 1.0 / C
    cf = sla.cho_factor(K)
    ss = np.ones(N) if s is None else s
    eta = ss * sla.cho_solve(cf, np.ones(N))
    nu = ss * sla.cho_solve(cf, ss * dvec)
    b = (ss @ nu) / (ss @ eta)
    return b, nu - b * eta


def ref_b(X, gamma, s, dvec):
    """Dense numpy.linalg.solve of the bordered (N+1) x (N+1) system."""
    N = X.shape[0]
    ss = np.ones(N) if s is None else s
    K = rbf_kernel(X, gamma=gamma)
    M = np.zeros((N + 1, N + 1))
    M[0, 1:] = ss
    M[1:, 0] = ss
    M[1:, 1:] = np.outer(ss, ss) * K + np.eye(N) / C
    sol = np.linalg.solve(M, np.r_[0.0, dvec])
    return sol[0], sol[1:]


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def bench_direct(sizes, d, repeats):
    rows = []
    for N in sizes:
        X, y, t = make_problem(N, d)
        gamma = 1.0 / d
        for task, s, dvec in [("LSSVC", y, np.ones(N)), ("LSSVR", None, t)]:
            fns = {"ours": ours, "a": ref_a, "b": ref_b}
            times = {k: [] for k in fns}
            outs = {}
            ours(X[:200], gamma, None if s is None else s[:200], dvec[:200])  # warm-up
            for r in range(repeats):
                order = list(fns)[r % 3:] + list(fns)[:r % 3]
                for k in order:
                    dt, outs[k] = timed(fns[k], X, gamma, s, dvec)
                    times[k].append(dt)
            med = {k: float(np.median(v)) for k, v in times.items()}
            best = {k: float(np.min(v)) for k, v in times.items()}
            b, a = outs["ours"]
            res = kkt.kkt_residual(X, RBF(gamma=gamma), C, s, dvec, b, a)
            agree = max(abs(b - outs["b"][0]), np.max(np.abs(a - outs["b"][1])))
            rows.append(dict(task=task, N=N, ours=med["ours"], a=med["a"], b=med["b"],
                             ratio_a=med["ours"] / med["a"], speedup_b=med["b"] / med["ours"],
                             kkt_res=res, agree=float(agree),
                             min_ratio_a=best["ours"] / best["a"],
                             min_speedup_b=best["b"] / best["ours"]))
            print(f"{task} N={N:6d}  ours {med['ours']:.3f}s  (a) {med['a']:.3f}s  "
                  f"(b) {med['b']:.3f}s  ours/(a) {med['ours'] / med['a']:.2f}  "
                  f"(b)/ours {med['b'] / med['ours']:.2f}  KKT res {res:.1e}  "
                  f"|ours-(b)| {agree:.1e}  [min-time ratios: ours/(a) "
                  f"{best['ours'] / best['a']:.2f}, (b)/ours {best['b'] / best['ours']:.2f}]",
                  flush=True)
    return rows


def bench_multiclass(N, d, n_classes, repeats):
    rng = np.random.default_rng(1)
    centers = 2.0 * rng.standard_normal((n_classes, d))
    y = rng.integers(n_classes, size=N)
    X = centers[y] + rng.standard_normal((N, d))
    ker = RBF(gamma=1.0 / d)
    ybin = np.where(y == 0, 1.0, -1.0)

    def binary():
        fac = kkt.factor_kernel(X, ker, C)
        return kkt.solve_bordered(fac, np.ones(N), sign=ybin)

    def multi():
        return fit_lssvm_multiclass(X, y, ker, C, "ova")

    t_bin, t_multi = [], []
    for r in range(repeats):
        for which in (["bin", "multi"] if r % 2 == 0 else ["multi", "bin"]):
            if which == "bin":
                dt, _ = timed(binary)
                t_bin.append(dt)
            else:
                dt, model = timed(multi)
                t_multi.append(dt)
    acc = float(np.mean(model.predict(X[:2000]) == y[:2000]))
    row = dict(N=N, n_classes=n_classes, binary=float(np.median(t_bin)),
               multi=float(np.median(t_multi)), n_factors=model.n_factors, train_acc=acc)
    row["ratio"] = row["multi"] / row["binary"]
    print(f"multiclass ova {n_classes} classes N={N}: multi {row['multi']:.2f}s  binary "
          f"{row['binary']:.2f}s  ratio {row['ratio']:.2f}  factors {model.n_factors}  "
          f"train acc {acc:.3f}", flush=True)
    return row


# ----------------------------------------------------------------------------- child processes


def child_cg(N, d, tol):
    X, y, _ = make_problem(N, d, seed=2)
    ker = RBF(gamma=1.0 / d)
    t0 = time.perf_counter()
    res = kkt.solve_bordered_cg(X, ker, 1.0, np.ones(N), sign=y, tol=tol, block_size=1024,
                                preconditioner="nystrom", precond_rank=300)
    dt = time.perf_counter() - t0
    t1 = time.perf_counter()
    true_res = kkt.kkt_residual(X, ker, 1.0, y, np.ones(N), res.b, res.a, block_size=1024)
    t_check = time.perf_counter() - t1
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # GB (ru_maxrss in KB)
    return dict(N=N, d=d, time=dt, n_iter=res.n_iter, residual=res.residual,
                kkt_residual=true_res, converged=res.converged, peak_gb=rss,
                check_time=t_check)


def nystrom_V(X, gamma, M, seed=0, block=20000):
    """V = K(X, Z) K_ZZ^{-1/2} (Z: M random rows), built in row blocks into one (N, M) array."""
    rng = np.random.default_rng(seed)
    Z = X[rng.choice(X.shape[0], size=M, replace=False)]
    Kzz = rbf_kernel(Z, gamma=gamma)
    w, Q = np.linalg.eigh(Kzz)
    keep = w > 1e-10 * w.max()
    T = Q[:, keep] / np.sqrt(w[keep])
    V = np.empty((X.shape[0], int(keep.sum())))
    ker = RBF(gamma=gamma)
    for i0 in range(0, X.shape[0], block):
        i1 = min(X.shape[0], i0 + block)
        np.matmul(gram(ker, X[i0:i1], Z), T, out=V[i0:i1])
    return V, Z, T


def child_lowrank(N, d, M):
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, size=(N, d))
    t = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * X[:, 2] + 0.1 * rng.standard_normal(N)
    gamma = 1.0 / d
    t0 = time.perf_counter()
    V, Z, T = nystrom_V(X, gamma, M)
    t_v = time.perf_counter() - t0
    t1 = time.perf_counter()
    b, a, w = kkt.solve_lowrank(V, C, t)
    t_solve = time.perf_counter() - t1
    Xt = rng.uniform(-2, 2, size=(5000, d))
    tt = np.sin(Xt[:, 0]) * np.cos(Xt[:, 1]) + 0.1 * Xt[:, 2]
    pred = (rbf_kernel(Xt, Z, gamma=gamma) @ T) @ w + b
    rmse = float(np.sqrt(np.mean((pred - tt) ** 2)))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    return dict(N=N, d=d, M=M, time_V=t_v, time_solve=t_solve, time_total=t_v + t_solve,
                peak_gb=rss, test_rmse=rmse, sum_a=float(abs(a.sum())))


def run_child(kind, **kw):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--child-args",
           json.dumps(kw)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..") + \
        os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- report


def markdown(direct, multi, cg, lr, args):
    lines = ["# KKT backend benchmark", "",
             "Reproduce: `PYTHONPATH=. python benchmarks/bench_kkt.py"
             + (" --quick" if args.quick else "") + "`", "",
             f"Machine: {os.cpu_count()} cores shared with other jobs; "
             f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']} for every contender; "
             f"timings interleaved, "
             f"median (and min) of {args.repeats} repeats; ratios measured in the same run. "
             f"RBF kernel, gamma = 1/d, C = {C:g}.", "",
             "## Direct path (kernel computation included)", "",
             "| task | N | ours (s) | (a) rbf_kernel + cho_factor (s) "
             "| (b) dense bordered solve (s) | ours/(a) | (b)/ours | ours/(a) min-time "
             "| (b)/ours min-time | KKT residual | max abs diff vs (b) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in direct:
        lines.append(f"| {r['task']} | {r['N']} | {r['ours']:.3f} | {r['a']:.3f} | {r['b']:.3f} "
                     f"| {r['ratio_a']:.2f} | {r['speedup_b']:.2f} | {r['min_ratio_a']:.2f} "
                     f"| {r['min_speedup_b']:.2f} | {r['kkt_res']:.1e} "
                     f"| {r['agree']:.1e} |")
    lines += ["", "## Multiclass LS-SVM, one-vs-all", "",
              "| N | classes | multiclass (s) | one binary fit (s) | ratio | factors | train acc |",
              "|---|---|---|---|---|---|---|",
              f"| {multi['N']} | {multi['n_classes']} | {multi['multi']:.2f} | "
              f"{multi['binary']:.2f} | {multi['ratio']:.2f} | {multi['n_factors']} | "
              f"{multi['train_acc']:.3f} |"]
    if cg is not None:
        lines += ["", "## Conjugate gradient (matrix-free, Nystrom preconditioner rank 300, "
                  "C = 1)", "",
                  "| N | d | time (s) | iterations | CG residual | independent KKT residual "
                  "| converged | peak RSS (GB) |", "|---|---|---|---|---|---|---|---|",
                  f"| {cg['N']} | {cg['d']} | {cg['time']:.1f} | {cg['n_iter']} | "
                  f"{cg['residual']:.1e} | {cg['kkt_residual']:.1e} | {cg['converged']} | "
                  f"{cg['peak_gb']:.2f} |"]
    if lr is not None:
        lines += ["", "## Low-rank fixed-size LS-SVM regression (Nystrom V built in the script)",
                  "", "| N | d | M | build V (s) | solve_lowrank (s) | total (s) | peak RSS (GB) "
                  "| test RMSE |", "|---|---|---|---|---|---|---|---|",
                  f"| {lr['N']} | {lr['d']} | {lr['M']} | {lr['time_V']:.1f} | "
                  f"{lr['time_solve']:.1f} | {lr['time_total']:.1f} | {lr['peak_gb']:.2f} | "
                  f"{lr['test_rmse']:.3f} |"]
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--skip", nargs="*", default=[], choices=["direct", "multi", "cg", "lowrank"])
    p.add_argument("--sizes", nargs="*", type=int, default=None, help="N for the direct path")
    p.add_argument("--md", default=None, help="write the markdown table to this path")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--child-args", default="{}", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        kw = json.loads(args.child_args)
        out = child_cg(**kw) if args.child == "cg" else child_lowrank(**kw)
        print(json.dumps(out))
        return
    if args.repeats is None:
        args.repeats = 5
    sizes = args.sizes or ([500, 1000, 2000] if args.quick else [2000, 4000, 8000])
    direct = [] if "direct" in args.skip else bench_direct(sizes, 15, args.repeats)
    multi = None if "multi" in args.skip else bench_multiclass(2000 if args.quick else 10000, 10,
                                                                10, args.repeats)
    cg = None
    if "cg" not in args.skip:
        cg = run_child("cg", N=5000 if args.quick else 50000, d=10, tol=1e-6)
        print("CG:", cg, flush=True)
    lr = None
    if "lowrank" not in args.skip:
        lr = run_child("lowrank", N=20000 if args.quick else 1_000_000, d=10,
                       M=100 if args.quick else 500)
        print("low-rank:", lr, flush=True)
    md = markdown(direct, multi or dict(N=0, n_classes=0, multi=math.nan, binary=math.nan,
                                        ratio=math.nan, n_factors=0, train_acc=math.nan),
                  cg, lr, args)
    print()
    print(md)
    if args.md:
        os.makedirs(os.path.dirname(os.path.abspath(args.md)), exist_ok=True)
        with open(args.md, "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
