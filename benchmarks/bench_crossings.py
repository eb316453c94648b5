"""Calls that cross between primaldual's files on a warm fit (a measure of how many layers
one fit walks through), counted with ``sys.setprofile``.

    python benchmarks/bench_crossings.py

On 300 x 5 data (seeded), each estimator is fitted twice (imports, numba's cached
compilation, derivation and templates warm), then once under a profile hook that
counts every Python call (on any thread) whose caller's file and callee's file are two
different files of the package ``primaldual``. Printed per estimator: the crossings,
the files touched, the most crossed files, and the target of the one-engine design
(Variant one-class 200, LSSVC 150, 3-class CSVC 120, binary CSVC 80).
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import warnings

import numpy as np

sys.path.insert(0, os.environ.get("PRIMALDUAL_ROOT")
                or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import primaldual as pd  # noqa: E402
from primaldual.model import (  # noqa: E402
    FeatureVariable,
    N,
    Param,
    Problem,
    Variable,
    X,
    norm2,
    phi,
    vsum,
    x,
)

PKG = os.sep + "primaldual" + os.sep


def crossings(fit) -> tuple[int, collections.Counter]:
    n = [0]
    files: collections.Counter = collections.Counter()

    def hook(frame, event, arg):
        if event != "call":
            return
        callee = frame.f_code.co_filename
        back = frame.f_back
        if back is None or PKG not in callee:
            return
        caller = back.f_code.co_filename
        if PKG in caller and caller != callee:
            n[0] += 1
            files[callee.split(PKG, 1)[1]] += 1

    # (threads too: the one-vs-one pairs may run on worker threads; += on a list cell is
    # not atomic, but two threads rarely cross at the same instant: a count, not a proof)
    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        fit()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return n[0], files


def one_class_spec():
    nu = Param("nu")
    w = FeatureVariable("w")
    rho, xi = Variable("rho"), Variable("xi", N)
    P = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")])
    return P, w @ phi(x) - rho


def main() -> None:
    rng = np.random.default_rng(0)
    Xd = rng.standard_normal((300, 5))
    y2 = np.where(Xd[:, 0] + 0.3 * rng.standard_normal(300) > 0, 1, 0)
    y3 = np.digitize(Xd[:, 0] + 0.3 * rng.standard_normal(300), [-0.4, 0.4])
    P, dec = one_class_spec()     # one spec: derived once, as a user writes it once
    rows = [("Variant one-class", lambda: pd.Variant(P, decision=dec, task="novelty",
                                                     gamma=0.5, nu=0.1), (Xd,), 200),
            ("LSSVC", lambda: pd.LSSVC(C=1.0, gamma=0.5), (Xd, y2), 150),
            ("CSVC 3-class", lambda: pd.CSVC(C=1.0, gamma=0.5), (Xd, y3), 120),
            ("CSVC binary", lambda: pd.CSVC(C=1.0, gamma=0.5), (Xd, y2), 80)]
    print("| estimator | crossings | files | target | most crossed |")
    print("|---|---|---|---|---|")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make, args, target in rows:
            for _ in range(2):
                make().fit(*args)
            m = make()
            c, files = crossings(lambda m=m, args=args: m.fit(*args))
            top = ", ".join(f"{f} {k}" for f, k in files.most_common(3))
            print(f"| {name} | {c} | {len(files)} | {target} | {top} |")


if __name__ == "__main__":
    main()
