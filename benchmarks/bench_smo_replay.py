"""The compiled SMO core alone on small multiclass fits: its calls recorded, then replayed.

A fit of ``CSVC`` (iris, digits) or ``NuSVC`` (wine) on standardised data calls the core once
per one-vs-one pair; those calls (their arguments copied) are recorded, then replayed
``--repeats`` times, each replay on fresh copies.  Printed: the best replay's milliseconds for
all the pairs of one fit, the iterations, and nanoseconds per iteration.  With ``--split`` the
replays run the core with ``verbose`` on, and its own timers split the loop into kernel
columns and the rest (summed over the pairs; columns computed and kernel entries too).

The core is compiled (or loaded from numba's cache) first: a fit while it is not would take
the dense numpy route (:mod:`primaldual.backends.smo.dense`) and time that instead.  Timings
are noisy on a shared machine: compare two trees by running this script in each, alternately,
several times.

Usage::

    PYTHONPATH=. python benchmarks/bench_smo_replay.py
    PYTHONPATH=. python benchmarks/bench_smo_replay.py --data digits --repeats 20 --split
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.preprocessing import StandardScaler

import primaldual as pd
from primaldual.backends.smo import solver
from primaldual.backends.smo.solver import compile_core

_DATA = {"iris": (load_iris, pd.CSVC), "wine": (load_wine, pd.NuSVC),
         "digits": (load_digits, pd.CSVC)}


def _copy(args: list) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def record(name: str) -> tuple[object, list[list]]:
    """The core function and the argument lists of its calls in one fit on ``name``."""
    loader, est = _DATA[name]
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    core = solver._core_function()
    calls: list[list] = []

    def spy(*args: object) -> object:
        calls.append(_copy(list(args)))
        return core(*args)

    saved = solver._core_function
    solver._core_function = lambda: spy
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est().fit(X, y)
    finally:
        solver._core_function = saved
    return core, calls


def replay(core: object, calls: list[list], repeats: int, split: bool) -> dict[str, float]:
    """Best of ``repeats`` replays: milliseconds, iterations (and the verbose split)."""
    vi = core.py_func.__code__.co_varnames.index("verbose")  # type: ignore[attr-defined]
    best: dict[str, float] = {"ms": float("inf")}
    for _ in range(repeats):
        total = 0.0
        iters = 0
        text = io.StringIO()
        for args in calls:
            a = _copy(args)
            a[vi] = split
            with contextlib.redirect_stdout(text):
                t0 = time.perf_counter()
                out = core(*a)  # type: ignore[operator]
                total += time.perf_counter() - t0
            iters += int(out[0])
        if total * 1e3 < best["ms"]:
            best = {"ms": total * 1e3, "iters": iters}
            if split:
                t = text.getvalue()
                for key, pat in (("column_ms", r"column seconds (\S+)"),
                                 ("loop_ms", r"loop seconds (\S+)")):
                    best[key] = 1e3 * sum(float(v) for v in re.findall(pat, t))
                for key, pat in (("columns", r"columns computed (\d+)"),
                                 ("entries", r"kernel entries (\d+)")):
                    best[key] = sum(int(v) for v in re.findall(pat, t))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=list(_DATA), choices=list(_DATA))
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--split", action="store_true", help="verbose timers: columns / rest")
    args = ap.parse_args()
    compile_core()
    print(f"{'data':8s} {'pairs':>5s} {'ms/fit':>8s} {'iters':>6s} {'ns/iter':>8s}"
          + ("  loop ms  column ms  rest ms  columns  entries" if args.split else ""))
    for name in args.data:
        core, calls = record(name)
        r = replay(core, calls, args.repeats, args.split)
        line = (f"{name:8s} {len(calls):5d} {r['ms']:8.3f} {int(r['iters']):6d} "
                f"{1e6 * r['ms'] / max(r['iters'], 1):8.0f}")
        if args.split:
            line += (f"  {r['loop_ms']:7.2f}  {r['column_ms']:9.2f}  "
                     f"{r['loop_ms'] - r['column_ms']:7.2f}  {int(r['columns']):7d}  "
                     f"{int(r['entries']):7d}")
        print(line)


if __name__ == "__main__":
    main()
