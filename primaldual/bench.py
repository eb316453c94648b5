"""A quick side-by-side timing that ships with the package (``primaldual bench``).

Each row fits the same problem twice, with primaldual's public estimator and with the
scikit-learn reference, on the same standardised data and hyper-parameters; runs are interleaved
(ours, reference, ours, ...) and the best of ``repeats`` is kept, because timings on a shared
machine are noisy. The ratio is ``ours / reference`` (below 1: primaldual is faster). A warm-up
fit on a tiny problem runs first, so numba compilation is not timed.

The full benchmark scripts (larger sizes, more solvers) live in the source repository's
``benchmarks/`` folder; ``primaldual bench --dir benchmarks`` runs them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

__all__ = ["BenchRow", "format_table", "quick_comparison"]


@dataclass(frozen=True)
class BenchRow:
    """One timed pair: ``ours`` and ``reference`` are the best wall-clock times in seconds,
    ``agreement`` the largest absolute difference of the two decision functions on the
    training data."""

    method: str
    reference: str
    n_samples: int
    ours: float
    ref: float
    agreement: float

    @property
    def ratio(self) -> float:
        """``ours / ref``."""
        return self.ours / self.ref if self.ref > 0 else float("inf")


def _best_interleaved(ours: Callable[[], Any], ref: Callable[[], Any],
                      repeats: int) -> tuple[float, float, Any, Any]:
    to, tr = [], []
    mo = mr = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        mo = ours()
        to.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        mr = ref()
        tr.append(time.perf_counter() - t0)
    return min(to), min(tr), mo, mr


def _fit(model: Any, X: np.ndarray, y: np.ndarray) -> Any:
    from sklearn.base import clone

    return clone(model).fit(X, y)


def _data(task: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_classification, make_friedman1
    from sklearn.preprocessing import StandardScaler

    if task == "regression":
        X, y = make_friedman1(n, 10, noise=0.5, random_state=seed)
    else:
        X, y = make_classification(n, 20, n_informative=10, flip_y=0.05, random_state=seed)
        y = 2.0 * y - 1.0
    return StandardScaler().fit_transform(X), y


def quick_comparison(n_samples: int = 2000, repeats: int = 3, seed: int = 0) -> list[BenchRow]:
    """Time ``CSVC`` vs ``sklearn.svm.SVC``, ``EpsilonSVR`` vs ``sklearn.svm.SVR`` and
    ``KernelRidge`` vs ``sklearn.kernel_ridge.KernelRidge`` (``C = 1/alpha``) on ``n_samples``
    synthetic points (RBF kernel, ``gamma = 1/d``, ``C = 1``, ``tol = 1e-3``).

    Parameters
    ----------
    n_samples : int, default 2000
        Training set size of every row (at least 20).
    repeats : int, default 3
        Interleaved repeats; the best time of each side is kept.
    seed : int, default 0
        Seed of the synthetic data.
    """
    import sklearn.kernel_ridge
    import sklearn.svm

    import primaldual as pd

    if int(n_samples) < 20:
        raise ValueError(f"n_samples must be >= 20, got {n_samples!r}")
    if int(repeats) < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats!r}")
    n = int(n_samples)
    rows = []
    cases: list[tuple[str, str, str, Callable[[float], Any], Callable[[float], Any]]] = [
        ("CSVC", "sklearn SVC", "classification",
         lambda g: pd.CSVC(C=1.0, gamma=g, tol=1e-3),
         lambda g: sklearn.svm.SVC(C=1.0, gamma=g, tol=1e-3)),
        ("EpsilonSVR", "sklearn SVR", "regression",
         lambda g: pd.EpsilonSVR(C=1.0, epsilon=0.1, gamma=g, tol=1e-3),
         lambda g: sklearn.svm.SVR(C=1.0, epsilon=0.1, gamma=g, tol=1e-3)),
        ("KernelRidge", "sklearn KernelRidge", "regression",
         lambda g: pd.KernelRidge(C=1.0, gamma=g),
         lambda g: sklearn.kernel_ridge.KernelRidge(alpha=1.0, kernel="rbf", gamma=g)),
    ]
    from .backends.smo import compile_core

    compile_core()  # numba compilation is not timed (and no fit takes the dense route)
    for name, ref_name, task, make_ours, make_ref in cases:
        X, y = _data(task, n, seed)
        g = 1.0 / X.shape[1]
        make_ours(g).fit(X[:20], y[:20])  # warm-up: numba compilation is not timed
        ours, ref = make_ours(g), make_ref(g)
        t_o, t_r, m_o, m_r = _best_interleaved(partial(_fit, ours, X, y),
                                               partial(_fit, ref, X, y), int(repeats))
        f_o = m_o.decision_function(X) if task == "classification" else m_o.predict(X)
        f_r = m_r.decision_function(X) if task == "classification" else m_r.predict(X)
        rows.append(BenchRow(name, ref_name, n, t_o, t_r, float(np.max(np.abs(f_o - f_r)))))
    return rows


def format_table(rows: list[BenchRow]) -> str:
    """The rows as a Markdown table."""
    lines = ["| method | reference | N | ours (s) | reference (s) | ratio | max abs(f - f_ref) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.method} | {r.reference} | {r.n_samples} | {r.ours:.4f} | "
                     f"{r.ref:.4f} | {r.ratio:.2f} | {r.agreement:.1e} |")
    return "\n".join(lines)
