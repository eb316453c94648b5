"""Pickled size of a fitted model, ours against scikit-learn's, same data (issue 17).

A fitted estimator keeps what ``predict`` needs (support vectors, coefficients, the
certificate with its per-sample residuals); the training rows and the problem objects are
session state, kept in memory on a binary fit for the teaching views and never pickled.

    python benchmarks/bench_fitted_size.py
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
from sklearn import datasets, svm

import primaldual as pd


def main() -> None:
    warnings.simplefilter("ignore")
    cases = []
    for name in ("iris", "wine", "breast_cancer", "digits"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        cases.append((name, X, y))
    X, y = datasets.load_breast_cancer(return_X_y=True)
    cases.append(("breast_cancer x4", np.vstack([X] * 4), np.concatenate([y] * 4)))
    print("| data | N x d | classes | estimator | scikit-learn [KB] | primaldual [KB] | ratio | "
          "training X [KB] |")
    print("|---|---|---|---|---|---|---|---|")
    for name, X, y in cases:
        for Sk, Ours in ((svm.SVC, pd.CSVC), (svm.NuSVC, pd.NuSVC)):
            try:
                s = len(pickle.dumps(Sk().fit(X, y)))
                o = len(pickle.dumps(Ours().fit(X, y)))
            except ValueError as exc:  # e.g. nu infeasible
                print(f"| {name} | {Sk.__name__}: {exc} |")
                continue
            print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {np.unique(y).size} | "
                  f"{Sk.__name__} | {s / 1e3:.1f} | {o / 1e3:.1f} | {o / s:.1f} | "
                  f"{X.nbytes / 1e3:.0f} |")


if __name__ == "__main__":
    main()
