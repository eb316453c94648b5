"""Fill numba's on-disk cache for the suite, as the first background command (tests/background.py).

On a fresh checkout every compiled function is compiled by the first process that calls it;
the in-process tests would compile them one after the other on the main CPU (the SMO core alone
takes about 50 s). This script runs tiny public fits of the routes whose compiled code the suite
uses, on the second CPU, so that the main process finds most of them in the cache when it gets
there. The SMO core is not among them: the main process needs it within seconds and compiles
it itself (and the background commands, which start once this script is done, find it there).
Each step is independent (one that fails is reported and skipped; the tests themselves say what is
wrong), and a warm cache makes the whole script take a few seconds.

Usage: ``python tests/warm_numba.py`` (prints one line per step with its seconds).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import numpy as np


def _data(n: int = 60, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)


def _block() -> None:
    from primaldual.backends.smo import block
    block.warm()


def _gsmo() -> None:
    import primaldual as pd
    X, y = _data()
    pd.NuSVC(nu=0.3, backend="gsmo").fit(X, y)


def _pairs() -> None:
    import primaldual as pd
    from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum
    from primaldual.ranking import pair_matrix

    def spec(X, y, kernel, C, qid):       # the RBF ranking SVM over the pairs of each query
        D = pair_matrix(y, qid)
        w, xi = FeatureVariable("w", kernel, X), Variable("xi", D.shape[0], index="P")
        P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi),
                    [(Data("D", D) @ (w @ phi(X)) >= 1 - xi).named("alpha"),
                     (xi >= 0).named("mu")], "min", "ranking SVM primal")
        return P, w @ phi(X)

    X, _ = _data()
    rel = np.round(2 * np.abs(X[:, 1]))
    qid = np.arange(X.shape[0]) // 20
    pd.Variant(spec, task="ranking", kernel="rbf", gamma=0.5, C=1.0,
               backend="pairs").fit(X, rel, qid=qid)


def _linear() -> None:
    import primaldual as pd
    X, y = _data(200)
    pd.CSVC(kernel="linear", backend="linear").fit(X, y)


def _rvm() -> None:
    import primaldual as pd
    X, y = _data(80)
    pd.RVR(kernel="rbf", gamma=0.5).fit(X, X[:, 0] + 0.1 * y)


def _kernels() -> None:
    from primaldual.kernels import make_kernel
    X, _ = _data(300, 5)
    make_kernel("rbf", gamma=0.2)(X)


STEPS: list[tuple[str, Callable[[], None]]] = [
    ("block route", _block), ("gsmo", _gsmo), ("pairs", _pairs), ("linear route", _linear),
    ("RVM", _rvm), ("kernels", _kernels)]


def main() -> int:
    warnings.simplefilter("ignore")
    for name, step in STEPS:
        t0 = time.perf_counter()
        try:
            step()
            print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
        except Exception as exc:      # the tests of that route report it properly
            print(f"{name}: skipped ({type(exc).__name__}: {exc})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
