"""CPU time of the public `pd.CSVC().fit(X, y)` (certificate on) on digits and iris: best of 7 / 21.

Run it in a checkout of any commit (`git worktree add DIR COMMIT`, then `python
benchmarks/bench_fit_time.py` in DIR) to compare commits one after the other on the same machine
(docs/benchmarks.md, "This round's merges against the public small-data fit").
"""

import time
import warnings

from sklearn.datasets import load_digits, load_iris

import primaldual as pd


def best(f, k: int = 7) -> float:
    """Best CPU time of ``k`` calls, in milliseconds."""
    b = 1e9
    for _ in range(k):
        t = time.process_time()
        f()
        b = min(b, time.process_time() - t)
    return b * 1e3


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    X, y = load_digits(return_X_y=True)
    Xi, yi = load_iris(return_X_y=True)
    pd.CSVC().fit(X, y)  # warm-up: the compiled SMO core is loaded from its cache
    pd.CSVC().fit(Xi, yi)
    digits = best(lambda: pd.CSVC().fit(X, y))
    iris = best(lambda: pd.CSVC().fit(Xi, yi), 21)
    print(f"digits {digits:.1f} ms  iris {iris:.2f} ms")
