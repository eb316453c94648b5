"""LS-SVM direct route against a bare Cholesky: ``LSSVC.fit`` (certificate on) next to
``rbf_kernel`` + ``cho_factor(K + I/C)`` + the bordered solve, same data, same run.

The bare route is what the direct route should cost: one kernel pass and one Cholesky, then two
triangular solve pairs with the same factor, ``eta = A^{-1} 1``, ``nu = A^{-1} y``,
``b = 1^T nu / 1^T eta``, ``alpha = nu - b eta`` (the Schur complement of the bordered system).
Runs are interleaved (ours, bare with bias, bare without bias, bare with bias on the BLAS
threads the fit used, ours, ...) and the best of ``--repeats`` is reported, because the machine
is shared. The ratio is ours / bare with bias (target <= 1.1). The BLAS threads each Cholesky
used are printed: the fit picks its own (the CPUs other processes leave free,
:func:`primaldual.kernels.cpus.free_cpus`), the bare route takes the BLAS default.

Usage::

    PYTHONPATH=. python benchmarks/bench_lssvm_direct.py                    # N = 4000, 10000
    PYTHONPATH=. python benchmarks/bench_lssvm_direct.py --sizes 2000 --repeats 1
    PYTHONPATH=. python benchmarks/bench_lssvm_direct.py --quick            # 1000, 2000, once
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import scipy.linalg
from _timing import best_interleaved  # (benchmarks/, on the path of its scripts)
from sklearn.datasets import make_classification
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_info, threadpool_limits

from primaldual.methods.lssvm import LSSVC

GAMMA, C = 0.05, 1.0


def _bare(X, yy, bias=True):
    """``rbf_kernel`` + ``cho_factor(K + I/C)`` + the bordered solve (or ``A^{-1} y`` alone)."""
    A = rbf_kernel(X, gamma=GAMMA)
    A[np.diag_indices_from(A)] += 1.0 / C
    cf = scipy.linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    if not bias:
        return 0.0, scipy.linalg.cho_solve(cf, yy, check_finite=False)
    # eta = A^{-1} 1, nu = A^{-1} y; alpha here is the signed coefficient beta = y * alpha
    EN = scipy.linalg.cho_solve(cf, np.column_stack([np.ones(len(yy)), yy]),
                                check_finite=False)
    eta, nu = EN[:, 0], EN[:, 1]
    b = nu.sum() / eta.sum()
    return b, nu - b * eta


def _blas_default() -> int:
    return max((i.get("num_threads", 1) for i in threadpool_info()
                if i.get("user_api") == "blas"), default=1)


def bench(sizes, repeats):
    print("\n## LS-SVM direct route against a bare Cholesky\n")
    print("| N | ours `LSSVC.fit` [s] | bare, bias [s] | bare, no bias [s] | ratio (target "
          "<= 1.1) | CPU ratio | ours BLAS threads | bare BLAS threads | bare, bias, ours' "
          "threads [s] | ratio to it | max abs diff beta | abs diff b | cert. max KKT | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    LSSVC(C=C, gamma=GAMMA).fit(*make_classification(60, 20, random_state=0))  # imports
    for n in sizes:
        _size(n, repeats)


def _size(n, repeats):
    X, y = make_classification(n, 20, n_informative=10, random_state=0)
    yy = np.where(y == 1, 1.0, -1.0)
    threads = []

    def ours():
        m = LSSVC(C=C, gamma=GAMMA).fit(X, y)
        threads.append(m.solution_.info["blas_threads"])  # what the fit's Cholesky used
        return m

    def same_threads():
        # the bare route with BLAS limited to the threads the fit just used: what is left of
        # the ratio is the work, not the threading choice
        with threadpool_limits(threads[-1], user_api="blas"):
            return _bare(X, yy)

    (to, tb, tn, ts), (co, cb, _, _), (mo, (b, beta), _, _) = best_interleaved(
        [ours, lambda: _bare(X, yy), lambda: _bare(X, yy, bias=False), same_threads], repeats)
    cert = mo.certificate_
    print(f"| {n} | {to:.2f} | {tb:.2f} | {tn:.2f} | {to / tb:.2f} | {co / cb:.2f} | "
          f"{','.join(map(str, threads))} | {_blas_default()} | {ts:.2f} | {to / ts:.2f} | "
          f"{float(np.max(np.abs(mo.beta_ - beta))):.1e} | "
          f"{abs(float(np.ravel(mo.intercept_)[0]) - b):.1e} | {cert.max_kkt_residual:.1e} | "
          f"{os.getloadavg()[0]:.1f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[4000, 10000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="N = 1000, 2000, one run")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.repeats = [1000, 2000], 1
    bench(args.sizes, args.repeats)


if __name__ == "__main__":
    main()
