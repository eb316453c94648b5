"""Per-fit cost of the structure of a user's spec: detection on the bound dual (every fit
before the template road) against binding the spec's shape template (later fits now), with
the bind of the derivation (``der.bind``) every fit still runs, for the one-class spec of
bench_variant.py.

    PYTHONPATH=. python benchmarks/bench_variant_structure.py [--n 500 2000 10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_variant import SPEC, data  # noqa: E402

from primaldual.kernels import make_kernel  # noqa: E402
from primaldual.methods import _structure, _structure_template  # noqa: E402
from primaldual.methods.variant import derive  # noqa: E402
from primaldual.model import detection  # noqa: E402


def best(f, k: int = 7) -> float:
    out = float("inf")
    for _ in range(k):
        t = time.perf_counter()
        f()
        out = min(out, time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[500, 2000, 10000])
    a = ap.parse_args()
    ns: dict = {}
    exec(SPEC, ns)
    der = derive(ns["one_class"])
    print(f"load average: {os.getloadavg()}")
    print("| N | der.bind [ms] | detect [ms] | bind the template [ms] | record equal |")
    print("|---|---|---|---|---|")
    for n in a.n:
        X, _ = data(n)
        k = make_kernel("rbf", 0.5, 3, 0.0, X)
        params = {"nu": 0.1}
        bd = der.bind(X=X, kernel=k, params=params)

        def build(Xp, yp, pp, k=k):
            return der.bind(X=Xp, y=yp, kernel=k, params=pp).dual

        _structure.clear_structure_templates()
        _structure.spec_structure(der, bd.dual, build, X, None, params, k)  # learns
        t_bind = best(lambda X=X, k=k, p=params: der.bind(X=X, kernel=k, params=p))
        t_det = best(lambda bd=bd: detection._read_box_qp(bd.dual))
        fresh = der.bind(X=X, kernel=k, params=params).dual

        def tmpl(fresh=fresh, X=X, k=k, p=params):
            fresh.structure.pop("box_qp", None)
            return _structure.spec_structure(der, fresh, build, X, None, p, k)

        t_tmpl = best(tmpl)
        rec = tmpl()
        same = rec.origin.endswith("(shape template)") and _structure_template._equal(
            rec, detection._read_box_qp(fresh))
        print(f"| {n} | {1e3 * t_bind:.2f} | {1e3 * t_det:.2f} | {1e3 * t_tmpl:.3f} | {same} |")


if __name__ == "__main__":
    main()
