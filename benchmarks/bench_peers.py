"""The public fit against its peers: ``EpsilonSVR``, ``NuSVR`` and ``CSVC`` (``fit`` with its
certificate, as a user calls it) next to scikit-learn's LIBSVM (``sklearn.svm``) and Intel
oneDAL (scikit-learn-intelex's ``sklearnex.svm``), same data, same run.

The peer oneDAL is a benchmark peer only, not a dependency of the library or its tests::

    pip install scikit-learn-intelex

Without it the oneDAL column says ``not installed`` and the rest of the table runs.

Data (RBF kernel, ``d = 20``, ``gamma = 1/d``, ``C = 1``, LIBSVM's ``tol = 1e-3``, 200 MB
kernel cache on both sides):

* eps-SVR and nu-SVR: ``make_regression(N, 20, n_informative=10, noise=20)``, ``X`` and ``y``
  standardised; ``epsilon = 0.1``; nu-SVR ``nu = 0.5``;
* C-SVC: ``make_classification(N, 20, n_informative=10)``, ``X`` standardised.

Runs are interleaved (ours, LIBSVM, oneDAL, ours, ...) and the median of ``--repeats`` is
reported, wall time and process CPU time (every thread: CPU above wall means more than one core
was used). The dual values are compared from each fit's coefficients (the same formula for
every library, ``beta^T K beta`` in row blocks); ``rel. diff`` is the largest relative
difference from ours, and ``agree`` says whether it is below :data:`DUAL_RTOL`. The ratio is
ours / the fastest peer (below 1: ours is faster). The numba core is compiled (or loaded from
numba's on-disk cache) before the first timing, and a tiny fit of each library runs first.

Usage::

    PYTHONPATH=. python benchmarks/bench_peers.py                       # N = 5,000 and 20,000
    PYTHONPATH=. python benchmarks/bench_peers.py --sizes 2000 --repeats 1 --routes svr
    PYTHONPATH=. python benchmarks/bench_peers.py --peers onedal        # LIBSVM skipped
"""

from __future__ import annotations

import argparse
import logging
import os
import warnings

import numpy as np
from _timing import median_interleaved  # (benchmarks/, on the path of its scripts)
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

import primaldual
from primaldual.backends.smo import compile_core

D = 20
GAMMA = 1.0 / D
C = 1.0
EPSILON = 0.1
NU = 0.5
TOL = 1e-3
CACHE_MB = 200.0
#: the relative difference of dual values the peers must agree to (the issue's acceptance)
DUAL_RTOL = 1e-6
#: rows per block of the kernel in ``beta^T K beta`` (2,000 x N doubles: 320 MB at N = 20,000)
BLOCK = 2000
ROUTES = ("svr", "nusvr", "csvc")
INSTALL_HINT = "pip install scikit-learn-intelex"


def _onedal():
    """``sklearnex.svm`` or ``None`` (not installed: the column is skipped)."""
    try:
        import sklearnex.svm as onedal_svm
    except ImportError:
        return None
    logging.getLogger("sklearnex").setLevel(logging.WARNING)
    return onedal_svm


def data(route: str, n: int, seed: int = 0):
    if route == "csvc":
        X, y = make_classification(n, D, n_informative=10, random_state=seed)
        return StandardScaler().fit_transform(X), np.where(y == 1, 1.0, -1.0)
    X, y = make_regression(n, D, n_informative=10, noise=20.0, random_state=seed)
    X = StandardScaler().fit_transform(X)
    return X, (y - y.mean()) / y.std()


def dual_value(route: str, X, y, support, beta) -> float:
    """The maximised dual of the route at the signed coefficients ``beta`` on ``support``:
    eps-SVR ``y^T beta - 1/2 beta^T K beta - eps |beta|_1``; nu-SVR without the ``eps`` term;
    C-SVC ``1^T alpha - 1/2 beta^T K beta`` with ``alpha = |beta|`` (docs/formulations.md)."""
    S = X[support]
    quad = 0.0
    for k in range(0, len(support), BLOCK):
        quad += float(beta[k:k + BLOCK] @ (rbf_kernel(S[k:k + BLOCK], S, gamma=GAMMA) @ beta))
    if route == "csvc":
        return float(np.abs(beta).sum()) - 0.5 * quad
    lin = float(y[support] @ beta)
    if route == "svr":
        lin -= EPSILON * float(np.abs(beta).sum())
    return lin - 0.5 * quad


def _ours(route: str):
    if route == "svr":
        return primaldual.EpsilonSVR(C=C, epsilon=EPSILON, gamma=GAMMA, tol=TOL,
                                     cache_size=CACHE_MB)
    if route == "nusvr":
        return primaldual.NuSVR(nu=NU, C=C, gamma=GAMMA, tol=TOL, cache_size=CACHE_MB)
    return primaldual.CSVC(C=C, gamma=GAMMA, tol=TOL, cache_size=CACHE_MB)


def _peer(module, route: str):
    """The peer estimator of ``module`` (``sklearn.svm`` or ``sklearnex.svm``) for ``route``."""
    if route == "svr":
        return module.SVR(C=C, epsilon=EPSILON, gamma=GAMMA, tol=TOL, cache_size=CACHE_MB)
    if route == "nusvr":
        return module.NuSVR(nu=NU, C=C, gamma=GAMMA, tol=TOL, cache_size=CACHE_MB)
    return module.SVC(C=C, gamma=GAMMA, tol=TOL, cache_size=CACHE_MB)


def _coef(model):
    """``(support, beta)`` of a fitted model (ours or a peer: both keep ``support_`` and
    ``dual_coef_``, the signed coefficients of the support vectors)."""
    return np.asarray(model.support_), np.asarray(model.dual_coef_, float).ravel()


def peers(names) -> dict:
    """The peer modules asked for (``None`` for an asked-for peer that is not installed)."""
    import sklearn.svm
    out: dict = {}
    if "libsvm" in names:
        out["LIBSVM"] = sklearn.svm
    if "onedal" in names:
        out["oneDAL"] = _onedal()
    return out


def _warm(route: str, mods) -> None:
    """One tiny fit of each: numba's on-disk cache and the peers' imports out of the timings."""
    compile_core(block=True)   # (the block route of the large fits too)
    X, y = data(route, 200, seed=1)
    _ours(route).fit(X, y)
    for mod in mods.values():
        if mod is not None:
            _peer(mod, route).fit(X, y)


def row(route: str, n: int, repeats: int, mods) -> str:
    X, y = data(route, n)
    live = {k: m for k, m in mods.items() if m is not None}
    fns = [lambda: _ours(route).fit(X, y)]
    fns += [lambda m=m: _peer(m, route).fit(X, y) for m in live.values()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (a peer's ConvergenceWarning says nothing here)
        wall, cpu, fitted = median_interleaved(fns, repeats)
    ours = fitted[0]
    d_ours = dual_value(route, X, y, *_coef(ours))
    cells, diffs = [], []
    times = dict(zip(live, wall[1:], strict=True))
    for name in mods:
        if name not in live:
            cells.append("not installed")
            continue
        k = list(live).index(name) + 1
        d_peer = dual_value(route, X, y, *_coef(fitted[k]))
        diffs.append(abs(d_peer - d_ours) / max(abs(d_ours), 1e-300))
        cells.append(f"{wall[k]:.3f} (CPU {cpu[k]:.2f})")
    best = min(times, key=times.__getitem__) if times else None
    ratio = f"{wall[0] / times[best]:.2f}x {best}" if best else "-"
    worst = max(diffs) if diffs else 0.0
    return (f"| {route} | {n} | {wall[0]:.3f} (CPU {cpu[0]:.2f}) | " + " | ".join(cells)
            + f" | {ratio} | {d_ours:.10g} | {worst:.1e} | {'yes' if worst <= DUAL_RTOL else 'NO'}"
            f" | {ours.certificate_.status} | {os.getloadavg()[0]:.1f} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[5000, 20000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--routes", nargs="*", choices=ROUTES, default=list(ROUTES))
    ap.add_argument("--peers", nargs="*", choices=("libsvm", "onedal"),
                    default=["libsvm", "onedal"])
    args = ap.parse_args(argv)
    mods = peers(args.peers)
    if "oneDAL" in mods and mods["oneDAL"] is None:
        print(f"oneDAL (scikit-learn-intelex) is not installed: its column is skipped; "
              f"`{INSTALL_HINT}` to compare with it.")
    print(f"\n## The public fit against its peers (median of {args.repeats}, interleaved)\n")
    print("| route | N | primaldual [s] | " + " | ".join(f"{k} [s]" for k in mods)
          + " | ours / fastest peer | dual (ours) | rel. diff | agree | certificate | load |")
    print("|---|---|---|" + "---|" * len(mods) + "---|---|---|---|---|---|")
    for route in args.routes:
        _warm(route, mods)
        for n in args.sizes:
            print(row(route, n, args.repeats, mods), flush=True)


if __name__ == "__main__":
    main()
