"""How the public ``CSVC.fit`` (certificate on) grows with N, next to Intel oneDAL's SVC
(scikit-learn-intelex, a benchmark peer only: ``pip install scikit-learn-intelex``) and
scikit-learn's LIBSVM, same data, same run.

Data: :func:`bench_peers.data` (``make_classification(N, 20, n_informative=10)``, ``X``
standardised; RBF, ``gamma = 1/d``, ``C = 1``, LIBSVM's ``tol = 1e-3``, 200 MB kernel cache on
every side).  ``--family nested`` takes the first ``N`` rows of one draw of the largest size
instead (one distribution for every N: ``make_classification`` draws its cluster shapes after
the points, so the default family's distribution changes with N).

Each size runs the libraries interleaved (ours, oneDAL, LIBSVM, ours, ...), the median of
``--repeats`` (``--big-repeats`` from 40,000 rows on), wall time and process CPU time (every
thread).  The dual values are recomputed from each fit's coefficients with one formula
(:func:`bench_peers.dual_value`); ``rel. diff`` is the largest relative difference of a peer's
from ours.  The growth exponent is the least-squares slope of ``log t`` against ``log N`` over
the sizes from ``--from`` on, and the end-to-end ``log(t_max / t_from) / log(N_max / N_from)``.
LIBSVM runs up to ``--libsvm-max`` rows (its time grows as N^2).

Usage::

    PYTHONPATH=. python benchmarks/bench_svc_scale.py
    PYTHONPATH=. python benchmarks/bench_svc_scale.py --sizes 5000 10000 --repeats 1
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np
from _timing import median_interleaved  # (benchmarks/, on the path of its scripts)
from bench_peers import CACHE_MB, GAMMA, INSTALL_HINT, TOL, C, _onedal, data, dual_value

import primaldual
from primaldual.backends.smo import compile_core


def _ours():
    return primaldual.CSVC(C=C, gamma=GAMMA, tol=TOL, cache_size=CACHE_MB)


def _peer(module):
    return module.SVC(C=C, gamma=GAMMA, tol=TOL, cache_size=CACHE_MB)


def _coef(model):
    return np.asarray(model.support_), np.asarray(model.dual_coef_, float).ravel()


def exponent(ns, ts) -> tuple[float, float]:
    """``(slope, end-to-end)``: the least-squares slope of ``log t`` on ``log N`` and
    ``log(t_last / t_first) / log(N_last / N_first)``."""
    ln, lt = np.log(np.asarray(ns, float)), np.log(np.asarray(ts, float))
    slope = float(np.polyfit(ln, lt, 1)[0]) if len(ns) > 1 else float("nan")
    ends = float((lt[-1] - lt[0]) / (ln[-1] - ln[0])) if len(ns) > 1 else float("nan")
    return slope, ends


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[5000, 10000, 20000, 40000, 80000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--big-repeats", type=int, default=1)
    ap.add_argument("--libsvm-max", type=int, default=20000)
    ap.add_argument("--from", dest="start", type=int, default=10000)
    ap.add_argument("--family", choices=("peers", "nested"), default="peers")
    args = ap.parse_args(argv)
    import sklearn.svm
    onedal = _onedal()
    if onedal is None:
        print(f"oneDAL (scikit-learn-intelex) is not installed: its column is skipped; "
              f"`{INSTALL_HINT}` to compare with it.")
    compile_core(block=True)
    Xw, yw = data("csvc", 300, seed=1)
    _ours().fit(Xw, yw)
    if onedal is not None:
        _peer(onedal).fit(Xw, yw)
    big = data("csvc", max(args.sizes)) if args.family == "nested" else None
    print(f"\n## CSVC.fit against N ({args.family} family; median of {args.repeats}, "
          f"{args.big_repeats} from 40,000)\n")
    print("| N | primaldual [s] | route | oneDAL [s] | LIBSVM [s] | ours / oneDAL | "
          "dual (ours) | rel. diff | certificate | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    times: dict[str, list] = {"ours": [], "oneDAL": [], "ours CPU": [], "oneDAL CPU": [],
                              "ns": []}
    for n in args.sizes:
        X, y = (big[0][:n], big[1][:n]) if big is not None else data("csvc", n)
        names = ["ours"]
        fns = [lambda X=X, y=y: _ours().fit(X, y)]
        if onedal is not None:
            names.append("oneDAL")
            fns.append(lambda X=X, y=y: _peer(onedal).fit(X, y))
        if n <= args.libsvm_max:
            names.append("LIBSVM")
            fns.append(lambda X=X, y=y: _peer(sklearn.svm).fit(X, y))
        reps = args.repeats if n < 40000 else args.big_repeats
        load0 = os.getloadavg()[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wall, cpu, fitted = median_interleaved(fns, reps)
        load1 = os.getloadavg()[0]
        d_ours = dual_value("csvc", X, y, *_coef(fitted[0]))
        diffs = [abs(dual_value("csvc", X, y, *_coef(m)) - d_ours) / abs(d_ours)
                 for m in fitted[1:]]
        cell = {k: f"{wall[i]:.3f} (CPU {cpu[i]:.2f})" for i, k in enumerate(names)}
        times["ns"].append(n)
        times["ours"].append(wall[0])
        times["ours CPU"].append(cpu[0])
        if "oneDAL" in names:
            times["oneDAL"].append(wall[names.index("oneDAL")])
            times["oneDAL CPU"].append(cpu[names.index("oneDAL")])
        ratio = (f"{wall[0] / wall[names.index('oneDAL')]:.2f}" if "oneDAL" in names
                 else "-")
        route = fitted[0].certificate_.extra.get("smo route", "?")
        print(f"| {n} | {cell['ours']} | {route} | {cell.get('oneDAL', '-')} | "
              f"{cell.get('LIBSVM', '-')} | {ratio} | {d_ours:.10g} | "
              f"{max(diffs) if diffs else 0.0:.1e} | {fitted[0].certificate_.status} | "
              f"{load0:.1f}-{load1:.1f} |", flush=True)
    keep = [i for i, n in enumerate(times["ns"]) if n >= args.start]
    if len(keep) > 1:
        ns = [times["ns"][i] for i in keep]
        print()
        for name in ("ours", "oneDAL", "ours CPU", "oneDAL CPU"):
            if len(times[name]) == len(times["ns"]):
                slope, ends = exponent(ns, [times[name][i] for i in keep])
                what = "CPU time" if name.endswith("CPU") else "wall time"
                print(f"{name.split()[0]}: {what} ~ N^{slope:.2f} (least squares over "
                      f"{ns[0]}..{ns[-1]}), N^{ends:.2f} end to end")


if __name__ == "__main__":
    main()
