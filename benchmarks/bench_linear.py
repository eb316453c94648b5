"""The linear route: ``CSVC(kernel="linear")`` on its default backend against scikit-learn's
``LinearSVC`` (liblinear's dual coordinate descent, hinge loss) on sparse rows.

Every row times the public call, certificate on, interleaved with the reference on the same
data in the same run (best of ``--repeats``): ours (``backend="auto"``, which chooses the linear
route), ``LinearSVC(loss="hinge", C=1, tol=1e-3)`` (liblinear regularises its intercept as a
feature of value 1: a slightly different problem, so its objective is not compared), and
optionally ``backend="lowrank"`` and ``backend="smo"`` (``--all``). The data: ``N`` training
rows plus 20% held out, ``d = 100`` features, 10 non-zeros a row (CSR), labels from a random
linear rule with noise (about 10% of labels flipped by it).

Usage::

    PYTHONPATH=. python benchmarks/bench_linear.py                      # N = 100,000
    PYTHONPATH=. python benchmarks/bench_linear.py --sizes 10000 100000 --all
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from _timing import best_interleaved  # (benchmarks/, on the path of its scripts)
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from primaldual.methods.svc import CSVC

C, TOL = 1.0, 1e-3


def sparse_data(n: int, d: int = 100, nnz: int = 10, seed: int = 0, noise: float = 0.3):
    """``n`` CSR rows of ``nnz`` standard normal entries at random columns, and labels
    ``sign(X w + 0.5 + noise sqrt(nnz) e)``."""
    rng = np.random.default_rng(seed)
    cols = np.argsort(rng.random((n, d)), axis=1)[:, :nnz].ravel()
    X = sp.csr_matrix((rng.standard_normal(n * nnz), cols, np.arange(0, n * nnz + 1, nnz)),
                      shape=(n, d))
    X.sort_indices()
    f = X @ rng.standard_normal(d) + 0.5 + noise * np.sqrt(nnz) * rng.standard_normal(n)
    return X, np.where(f > 0, 1, -1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--all", action="store_true", help="also time backend lowrank and smo")
    args = ap.parse_args()
    Xw, yw = sparse_data(300, seed=1)
    CSVC(kernel="linear", backend="linear").fit(Xw, yw)   # numba compilation, excluded
    print("| N | ours (auto) [s] | route | LinearSVC [s] | ratio | ours acc | LinearSVC acc | "
          "ours rel. gap | status | extra |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        _row(n, args.repeats, args.all)


def _row(n: int, repeats: int, also: bool) -> None:
    X, y = sparse_data(n + n // 5)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]

    def ours():
        return CSVC(kernel="linear", C=C, tol=TOL).fit(Xtr, ytr)

    def ref():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # liblinear's max_iter
            return LinearSVC(loss="hinge", C=C, tol=TOL).fit(Xtr, ytr)

    (to, tr), _, (mo, mr) = best_interleaved([ours, ref], repeats)
    extra = []
    if also:
        for backend in ("lowrank", "smo"):
            if backend == "smo" and n > 20_000:
                extra.append("smo: skipped above 20,000 rows")
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                mb = CSVC(kernel="linear", C=C, tol=TOL, backend=backend).fit(Xtr, ytr)
                extra.append(f"{backend} {time.perf_counter() - t0:.2f} s, dual "
                             f"{mb.certificate_.dual_objective:.6g}")
    c = mo.certificate_
    print(f"| {n} | {to:.2f} | {mo.backend_} | {tr:.2f} | {to / tr:.2f} | "
          f"{100 * mo.score(Xte, yte):.2f} | {100 * mr.score(Xte, yte):.2f} | "
          f"{c.relative_gap:.1e} | {c.status} | dual {c.dual_objective:.6g}"
          f"{'; ' + '; '.join(extra) if extra else ''} |", flush=True)


if __name__ == "__main__":
    main()
