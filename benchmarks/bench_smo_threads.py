"""C-SVC through SMO with its kernel columns shared with helper threads, against LIBSVM (issue 31).

Every row times the public call, certificate on: ``CSVC(C=1, gamma=0.05, tol=1e-3).fit(X, y)``
next to scikit-learn's ``SVC`` (LIBSVM, single-threaded) on the same data
(``make_classification(2N, 20, n_informative=10, random_state=0)``, first N rows; the data of
``bench_public.py``).  Our fit runs three ways:

* ``auto``: the default, :func:`primaldual.backends.smo.core.helper_threads` helpers (one per
  further CPU of the affinity set), columns shared only while that is measured faster;
* ``1 thread``: ``numba.set_num_threads(1)``, so no helper thread;
* ``forced``: one helper thread whatever ``numba``'s thread count says (on this 2-CPU machine
  the same as ``auto``).

With ``--cache-size MB``, two more rows: LIBSVM and ``CSVC`` (default threads) both with that
kernel cache instead of the 200 MB both default to.

Runs are interleaved (LIBSVM, auto, 1 thread, forced, LIBSVM, ...); best of ``--repeats`` wall
and process CPU times (``time.process_time``: all threads of the process) are reported, with the
1-minute load average before each run.  A last section runs the SMO loop alone with ``verbose``
to split its time: kernel columns against the rest of the loop, the column chunks computed by
the solver's thread and by helpers.

Usage::

    PYTHONPATH=. python benchmarks/bench_smo_threads.py                  # N = 20,000
    PYTHONPATH=. python benchmarks/bench_smo_threads.py --sizes 5000 20000 --repeats 5
    PYTHONPATH=. python benchmarks/bench_smo_threads.py --cache-size 500   # both caches 500 MB
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import time

import numba
import numpy as np
from sklearn.datasets import make_classification
from sklearn.svm import SVC

import primaldual.backends.smo.core as core
from primaldual.backends.smo import compile_core, smo_solve
from primaldual.kernels import RBF
from primaldual.methods.svc import CSVC

GAMMA, C, TOL = 0.05, 1.0, 1e-3


def _data(n, seed=0):
    X, y = make_classification(2 * n, 20, n_informative=10, random_state=seed)
    return X[:n], y[:n]


@contextlib.contextmanager
def _one_thread():
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(old)


@contextlib.contextmanager
def _forced(k=1):
    old = core.helper_threads
    core.helper_threads = lambda: k
    try:
        yield
    finally:
        core.helper_threads = old


def _size(n, repeats, cache_size=None):
    X, y = _data(n)

    def ours():
        return CSVC(C=C, gamma=GAMMA, tol=TOL).fit(X, y)

    def serial():
        with _one_thread():
            return ours()

    def forced():
        with _forced():
            return ours()

    runs = [("LIBSVM (sklearn SVC)", lambda: SVC(C=C, gamma=GAMMA, tol=TOL).fit(X, y)),
            ("CSVC auto", ours), ("CSVC 1 thread", serial), ("CSVC forced 1 helper", forced)]
    if cache_size is not None:
        runs += [(f"LIBSVM, cache {cache_size:g} MB",
                  lambda: SVC(C=C, gamma=GAMMA, tol=TOL, cache_size=cache_size).fit(X, y)),
                 (f"CSVC auto, cache {cache_size:g} MB",
                  lambda: CSVC(C=C, gamma=GAMMA, tol=TOL, cache_size=cache_size).fit(X, y))]
    wall = {k: [] for k, _ in runs}
    cpu = {k: [] for k, _ in runs}
    load = {k: [] for k, _ in runs}
    helpers = []
    for _ in range(repeats):
        for name, fn in runs:
            load[name].append(os.getloadavg()[0])
            if name == "CSVC auto":
                helpers.append(core.helper_threads())
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    ref_w, ref_c = min(wall[runs[0][0]]), min(cpu[runs[0][0]])
    print(f"\n### N = {n} (best of {repeats}; helper threads chosen by `auto`: {helpers})\n")
    print("| fit | wall [s] | CPU [s] | wall / LIBSVM | CPU / LIBSVM | CPU / wall | "
          "load avg before runs |")
    print("|---|---|---|---|---|---|---|")
    for name, _ in runs:
        w, c = min(wall[name]), min(cpu[name])
        loads = ", ".join(f"{v:.1f}" for v in load[name])
        print(f"| {name} | {w:.2f} | {c:.2f} | {w / ref_w:.2f} | {c / ref_c:.2f} | "
              f"{c / w:.2f} | {loads} |", flush=True)


_FIELDS = re.compile(
    r"iter (\d+) .*column requests (\d+) columns computed (\d+) kernel entries (\d+) "
    r"column seconds ([\d.e+-]+) loop seconds ([\d.e+-]+) .*\(solver, helpers, recomputed\) "
    r"(\d+) (\d+) (\d+)")


def _split(n, cache_size=None):
    X, y = _data(n)
    s = np.where(y == 1, 1.0, -1.0)
    print(f"\n### Where the SMO loop's time goes, N = {n} (`smo_solve(..., verbose=True)`)\n")
    print("| run | load | loop wall [s] | columns wall [s] | share | iterations | column "
          "requests | columns computed | kernel entries | chunks solver / helper / recomputed |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cases = [("1 thread", _one_thread, 200.0), ("forced 1 helper", _forced, 200.0)]
    if cache_size is not None:
        cases.append((f"1 thread, cache {cache_size:g} MB", _one_thread, cache_size))
    for name, ctx, cs in cases:
        buf = io.StringIO()
        ld = os.getloadavg()[0]
        with ctx(), contextlib.redirect_stdout(buf):
            smo_solve(X, RBF(GAMMA), -np.ones(n), C, sign=s, tol=TOL, verbose=True,
                      cache_size=cs)
        m = _FIELDS.search(buf.getvalue())
        if m is None:  # pragma: no cover - the verbose line changed
            print(f"| {name} | (verbose line not parsed) |")
            continue
        it, req, cols, ent, tc, tl, a, b, c = m.groups()
        print(f"| {name} | {ld:.1f} | {float(tl):.2f} | {float(tc):.2f} | "
              f"{float(tc) / float(tl):.0%} | {it} | {req} | {cols} | {int(ent) / 1e6:.0f} M | "
              f"{a} / {b} / {c} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[20000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-split", action="store_true", help="skip the verbose time split")
    ap.add_argument("--cache-size", type=float, default=None,
                    help="also time LIBSVM and CSVC with this kernel cache (MB)")
    args = ap.parse_args()
    compile_core()
    Xw, yw = _data(3000)
    CSVC(C=C, gamma=GAMMA).fit(Xw, yw)  # warm: the core, the helper, the certificate
    with _forced():
        CSVC(C=C, gamma=GAMMA).fit(Xw, yw)
    print(f"CPUs (affinity) {len(os.sched_getaffinity(0))}, numba threads "
          f"{numba.get_num_threads()}, load average {os.getloadavg()}")
    for n in args.sizes:
        _size(n, args.repeats, args.cache_size)
        if not args.no_split:
            _split(n, args.cache_size)


if __name__ == "__main__":
    main()
