"""Sparse (text-like) data on the SMO route: primaldual's CSVC against scikit-learn's SVC
(LIBSVM), the same CSR matrix, fit time and peak memory of each fit.

    PYTHONPATH=. python benchmarks/bench_sparse.py [--n 5000] [--d 50000] [--nnz 50]
                                                   [--kernels rbf linear] [--repeats 1]

The data: rows with about ``--nnz`` nonzeros each at random columns (values in [0, 1], scaled
to unit row norm like tf-idf), labels from a sparse linear rule plus 5 % flipped labels.
Each fit runs in its own child process (the compiled SMO core is loaded first, outside the
timing), which reports

* fit time (wall, ``time.perf_counter``),
* ``peak RSS +``: the growth of the process's peak resident set during the fit
  (``resource.getrusage(...).ru_maxrss`` after minus before; it sees numba's and LIBSVM's
  native allocations, which tracemalloc does not),
* ``peak RSS``: the process's peak resident set (interpreter, libraries, data and fit),
* ``tracemalloc``: the peak of the allocations Python, numpy and numba report during the fit
  (primaldual's includes SMO's float32 kernel-column cache, up to ``cache_size`` MB, which is
  all of ``K`` when ``4 N^2`` bytes fit in it; LIBSVM's cache is native memory, not traced).

For scale: the dense float64 X would need ``8 N d`` bytes (2 GB at the defaults).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp


def make_data(n: int, d: int, nnz: int, seed: int = 0):
    """``n x d`` CSR rows with ``nnz`` random columns each (repeats merged), built in O(n nnz)
    memory (``scipy.sparse.random`` draws its positions from all ``n d`` cells, which at these
    sizes costs more memory than the fits measured here); labels from a sparse linear rule."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), nnz)
    cols = rng.integers(0, d, size=n * nnz)
    vals = rng.random(n * nnz)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    X = (sp.diags(1.0 / norms) @ X).tocsr()
    w = np.zeros(d)
    hot = rng.choice(d, size=max(1, d // 20), replace=False)
    w[hot] = rng.standard_normal(hot.shape[0])
    s = X @ w
    y = np.where(s > np.median(s), 1, -1)
    flip = rng.random(n) < 0.05
    y[flip] = -y[flip]
    return X, y


def _child(lib: str, kernel: str, n: int, d: int, nnz: int) -> dict:
    X, y = make_data(n, d, nnz)
    if lib == "primaldual":
        import primaldual as pd
        from primaldual.backends.smo import compile_core

        compile_core()
        est = pd.CSVC(kernel=kernel, C=1.0, gamma="scale", tol=1e-3, cache_size=200)
    else:
        from sklearn.svm import SVC

        est = SVC(kernel=kernel, C=1.0, gamma="scale", tol=1e-3, cache_size=200)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t0 = time.perf_counter()
    est.fit(X, y)
    t = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {"time": t, "rss_kb": rss1 - rss0, "maxrss_kb": rss1, "traced": peak,
           "n_sv": int(np.sum(est.n_support_)), "acc": float(np.mean(est.predict(X) == y)),
           "sparse_sv": bool(sp.issparse(est.support_vectors_))}
    if lib == "primaldual":
        out["rel_gap"] = float(est.certificate_.relative_gap)
        out["status"] = est.certificate_.status
        out["route"] = est.certificate_.extra.get("smo route")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--d", type=int, default=50_000)
    ap.add_argument("--nnz", type=int, default=50)
    ap.add_argument("--kernels", nargs="+", default=["rbf", "linear"])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--child", nargs=2, metavar=("LIB", "KERNEL"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(_child(a.child[0], a.child[1], a.n, a.d, a.nnz)))
        return
    X, _ = make_data(a.n, a.d, a.nnz)
    print(f"N={a.n} d={a.d} nnz={X.nnz} ({X.nnz / a.n:.1f}/row); CSR "
          f"{(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20:.1f} MiB, dense X "
          f"would be {8 * a.n * a.d / 2**30:.2f} GiB")
    hdr = (f"{'kernel':7} {'library':11} {'fit [s]':>8} {'peak RSS +':>11} {'peak RSS':>10} "
           f"{'tracemalloc':>12} "
           f"{'#SV':>5} {'train acc':>9}  notes")
    print(hdr)
    print("-" * len(hdr))
    for kernel in a.kernels:
        res: dict[str, list[dict]] = {}
        for _ in range(a.repeats):
            for lib in ("primaldual", "sklearn"):
                cmd = [sys.executable, __file__, "--n", str(a.n), "--d", str(a.d), "--nnz",
                       str(a.nnz), "--child", lib, kernel]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True)
                res.setdefault(lib, []).append(json.loads(out.stdout.strip().splitlines()[-1]))
        for lib, runs in res.items():
            best = min(runs, key=lambda r: r["time"])
            note = (f"gap {best['rel_gap']:.1e} {best['status']}, route {best['route']}, "
                    f"sparse SV {best['sparse_sv']}" if lib == "primaldual"
                    else f"sparse SV {best['sparse_sv']}")
            print(f"{kernel:7} {lib:11} {best['time']:8.2f} {best['rss_kb'] / 1024:7.1f} MiB "
                  f"{best['maxrss_kb'] / 1024:6.0f} MiB "
                  f"{best['traced'] / 2**20:8.1f} MiB {best['n_sv']:5d} {best['acc']:9.3f}  "
                  f"{note}")
        tp = min(r["time"] for r in res["primaldual"])
        ts = min(r["time"] for r in res["sklearn"])
        print(f"{kernel:7} time ratio primaldual / sklearn = {tp / ts:.2f}")


if __name__ == "__main__":
    main()
