"""Benchmark (issue 31): the factor growth of the default low-rank fit alone -- the kernel
columns ``C = k(X, X_L)`` and their float32 copy, grown along the rank ladder the auto fit takes
at N = 200,000 (100, 200, 400, 600, 900, 1350, 1600), on the data of ``bench_scale.py``.

Reports wall and CPU time (``time.process_time``) of the growth, best of ``--repeats``, with
the load average. A first, untimed growth on 20,000 rows loads the compiled code (numba's
on-disk cache, or compiles it once). Run it with ``PYTHONPATH`` pointing at the package to
measure (e.g. an exported copy of another commit) to compare two versions side by side:

    PYTHONPATH=. python benchmarks/bench_growth.py --size 200000 --repeats 2
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402

import primaldual  # noqa: E402
from primaldual.kernels import RBF  # noqa: E402
from primaldual.kernels.growth import NystromGrowth  # noqa: E402

LADDER = (100, 200, 400, 600, 900, 1350, 1600)


def grow(X: np.ndarray, ladder: tuple[int, ...]) -> tuple[float, float, NystromGrowth]:
    w0, c0 = time.perf_counter(), time.process_time()
    g = NystromGrowth(RBF(gamma=0.05), X, random_state=0, capacity=ladder[-1], form_V=False,
                      float32_copy=True)
    for m in ladder:
        g.factor(m)
    return time.perf_counter() - w0, time.process_time() - c0, g


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=200000)
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()
    X, _ = make_classification(n_samples=a.size, n_features=20, n_informative=5, n_redundant=2,
                               flip_y=0.03, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    grow(X[:20000], (100, 300))  # warm-up: compiled code loaded, not timed
    print(f"package {os.path.dirname(primaldual.__file__)}; load {os.getloadavg()[0]:.2f}")
    best = None
    for _ in range(a.repeats):
        wall, cpu, g = grow(X, LADDER)
        print(f"growth N={a.size} ladder {LADDER}: wall {wall:.2f} s, CPU {cpu:.2f} s")
        best = (wall, cpu) if best is None or cpu < best[1] else best
        c = g.C
        chk = float(np.abs(c[:5, :5]).sum())
        del g, c
    assert best is not None
    print(f"best by CPU: wall {best[0]:.2f} s, CPU {best[1]:.2f} s (checksum {chk:.12f})")


if __name__ == "__main__":
    main()
