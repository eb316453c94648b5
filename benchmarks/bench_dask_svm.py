"""Benchmark (issue 31): one hinge-loss SVM over Dask -- ``CSVC(rank=M).fit`` on a ``dask.array``
on a ``distributed.LocalCluster`` against the same fit on the numpy array (same seed).

Data as ``bench_scale.py`` (``make_classification``, d = 20, 5 informative, 2 redundant,
flip_y = 0.03, standardised; 10,000 rows held out); C = 1, RBF gamma = 0.05. The cluster has
``--workers`` worker processes with one thread each and ``--memory-limit`` per worker; X is
split into ``--chunks`` row chunks. Reported: wall time of each fit, held-out accuracy, the
largest relative difference of the held-out decision values (dask vs numpy), the
eta-problem's relative gap, the number of chunked passes over V, and the peak resident memory
of each worker process (``ru_maxrss``) against the size of V.

    python benchmarks/bench_dask_svm.py --n 200000 --rank 200
    python benchmarks/bench_dask_svm.py --n 2000000 --rank 500 --memory-limit 3GB --no-numpy \\
        --no-persist
"""

from __future__ import annotations

import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scale import make_data  # noqa: E402


def _peak_rss_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--rank", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="4GB")
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--no-numpy", action="store_true")
    ap.add_argument("--no-persist", action="store_true",
                    help="force recomputing V from X at every pass (the estimator's default, "
                         "persist='auto', decides from the workers' memory limits)")
    ap.add_argument("--verbose", action="store_true", help="print the fit's progress")
    a = ap.parse_args(argv)
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    import primaldual as pd
    from primaldual.distributed import lowrank_svm_dask

    print(f"load average before: {os.getloadavg()}", flush=True)
    Xtr, ytr, Xte, yte = make_data(a.n)
    v_mb = a.n * a.rank * 8 / 2**20
    cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                           memory_limit=a.memory_limit, dashboard_address=None)
    client = Client(cluster)
    try:
        step = -(-a.n // a.chunks)
        Xd = da.from_array(Xtr, chunks=(step, -1)).persist()
        yd = da.from_array(ytr, chunks=step).persist()
        t0 = time.perf_counter()
        if a.no_persist:
            fit = lowrank_svm_dask(Xd, ytr, C=1.0, gamma=0.05, rank=a.rank, persist=False,
                                   verbose=a.verbose)
            f_dask = fit.factor.transform(Xte) @ fit.eta + fit.b
        else:  # the public call; V is kept or recomputed per pass by the workers' limits
            m = pd.CSVC(C=1.0, gamma=0.05, rank=a.rank, verbose=a.verbose).fit(Xd, yd)
            f_dask = m.decision_function(Xte)
            fit = m.dask_fit_
        gap, passes = fit.result.relative_gap, fit.passes
        t_dask = time.perf_counter() - t0
        peaks = client.run(_peak_rss_mb)
        acc_dask = float(np.mean(np.where(f_dask > 0, 1.0, -1.0) == yte))
        print(f"dask fit: {t_dask:.1f} s wall, accuracy {acc_dask:.4f}, eta gap {gap:.1e}, "
              f"{passes} chunked passes over V "
              f"({'V kept in memory' if fit.persisted else 'V recomputed per pass'}); "
              f"{fit.result.info}", flush=True)
    finally:
        client.close()
        cluster.close()
    rows = [f"| dask.array on LocalCluster ({a.workers} workers x 1 thread, "
            f"{a.memory_limit} each, {'V kept' if fit.persisted else 'V recomputed'}) | "
            f"{t_dask:.1f} | {acc_dask:.4f} | {gap:.1e} | "
            f"{max(peaks.values()):.0f} MB (V: {v_mb:.0f} MB) |"]
    diff = float("nan")
    if not a.no_numpy:
        t0 = time.perf_counter()
        ref = pd.CSVC(C=1.0, gamma=0.05, rank=a.rank).fit(Xtr, ytr)
        t_np = time.perf_counter() - t0
        f_np = ref.decision_function(Xte)
        diff = float(np.max(np.abs(f_dask - f_np)) / np.max(np.abs(f_np)))
        acc_np = float(np.mean(ref.predict(Xte) == yte))
        rows.append(f"| numpy, one process | {t_np:.1f} | {acc_np:.4f} | "
                    f"{ref.certificate_.relative_gap:.1e} | {_peak_rss_mb():.0f} MB (process) |")
    print(f"\nN = {a.n}, rank {a.rank}, load average after: {os.getloadavg()}")
    print("| fit | wall [s] | held-out accuracy | eta-problem relative gap | peak memory |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nmax |f_dask - f_numpy| / max |f_numpy| on the held-out rows: {diff:.1e}")


if __name__ == "__main__":
    main()
