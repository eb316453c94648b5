"""The data the subcommands read: named or CSV data sets (standardised or not), the
random points of ``check``, the feature rows of ``predict``."""

from __future__ import annotations

import os

import numpy as np

from ..datasets import AMINI_EXAMPLES
from .common import CLIError, check_regular_file

#: generated 2-D/1-D sets whose geometry is the point: the CLI never standardises them
GEOMETRIC = ("two_spirals", "ripley", "sinc", "blobs", "moons", "circles", *AMINI_EXAMPLES)


def show_data(task: str, name: str | None) -> tuple[np.ndarray, np.ndarray, str]:
    """The data ``show`` builds the problems on: ``--data`` if given, else the six points of
    Amini's lecture (classification) or eight points of ``sinc`` (regression); named in the
    output."""
    if name is not None:
        X, y = load_data(name)
        return X, y, name
    if task == "regression":
        X, y = load_data("sinc", 8)
        return X, y, "sinc"
    X, y = load_data("amini")
    return X, y, "amini"


def random_data(task: str, n: int = 24, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    if task == "regression":
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(n)
    else:
        y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
        y[0], y[1] = 1.0, -1.0
    return X, y


def load_data(name: str, n_samples: int | None = None, standardize: bool | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Load ``--data``; ``standardize=None`` scales the features of bundled and CSV data to
    zero mean and unit variance and leaves the generated geometric sets (two_spirals, ripley,
    sinc, blobs, moons, circles, amini) as generated, as the examples use them."""
    from ..datasets import DATASETS, load_dataset

    if not str(name).lower().endswith(".csv") and name not in DATASETS:
        raise CLIError(f"argument --data: unknown dataset {name!r}; allowed: "
                       f"{', '.join(DATASETS)} or a PATH.csv")
    if str(name).lower().endswith(".csv") and not os.path.exists(name):
        raise CLIError(f"argument --data: file not found: {name}")
    if str(name).lower().endswith(".csv"):
        check_regular_file(name, "--data")
    else:
        check_generated_size(name, n_samples)
    if standardize is None:
        standardize = name not in GEOMETRIC
    return load_dataset(name, n_samples=n_samples, standardize=standardize)


def check_generated_size(name: str, n_samples: int | None) -> None:
    """A generated dataset of ``n_samples`` rows (up to 20 features, as float64, plus the
    generator's working copies: 3 x (n, 21)) must fit in memory (system, process and cgroup
    limits): refused with the sizes instead of being killed by the OOM killer."""
    if n_samples is None or n_samples < 1:
        return
    from ..exceptions import InsufficientMemoryError
    from ..validation import block_bytes, check_memory

    try:
        check_memory(block_bytes([(n_samples, 21)] * 3), f"generating {n_samples} rows of "
                     f"{name!r}", hint="use a smaller --n-samples")
    except InsufficientMemoryError as exc:
        raise CLIError(f"argument --n-samples: {exc}") from None


def standardized(X: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(X - mean) / scale`` per column (a constant column only centred, as
    :func:`primaldual.datasets.load_dataset`'s ``standardize``) and the scaler record the
    model file keeps, so that ``predict`` on raw rows sees what ``fit`` saw."""
    with np.errstate(over="ignore", invalid="ignore"):
        mean = X.mean(axis=0)
        scale = X.std(axis=0)
        Xs = (X - mean) / np.where(scale == 0, 1.0, scale)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(scale)) and np.all(np.isfinite(Xs))):
        # finite values near 1e308 overflow the plain sums: the statistics of the columns
        # divided by their largest magnitude, scaled back (the same numbers where both exist)
        top = np.max(np.abs(X), axis=0)
        top[~(top > 0)] = 1.0
        Z = X / top
        mz, sz = Z.mean(axis=0), Z.std(axis=0)
        mean, scale = mz * top, sz * top
        if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(scale))):
            raise CLIError("argument --data: a column's mean or spread is not representable "
                           "in float64; rescale the data")
        Xs = (Z - mz) / np.where(sz == 0, 1.0, sz)
    scale[scale == 0] = 1.0
    return Xs, {"mean": mean, "scale": scale}


def load_fit_data(name: str, n_samples: int | None, standardize: bool | None
                   ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray] | None]:
    """:func:`load_data` for ``fit``: the raw rows standardised here, returning the scaler
    record (``None`` when the data are not standardised)."""
    if standardize is None:
        standardize = name not in GEOMETRIC
    X, y = load_data(name, n_samples, standardize=False)
    if not standardize or name in AMINI_EXAMPLES:
        return X, y, None
    X, scaler = standardized(np.asarray(X, dtype=np.float64))
    return X, y, scaler


def read_features(path: str, n_features: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Read a numeric CSV for ``predict``: ``n_features`` columns, or one more (the target)."""
    if not os.path.exists(path):
        raise CLIError(f"argument CSV: file not found: {path}")
    check_regular_file(path, "CSV")
    try:
        data = np.genfromtxt(path, delimiter=",", dtype=float)
    except ValueError as exc:
        raise CLIError(f"argument CSV: cannot parse {path}: {exc}") from None
    data = np.atleast_2d(data)
    if data.shape[1] == 1 and n_features != 1:
        data = data.T
    if np.all(np.isnan(data[0])):  # header row
        data = data[1:]
    if data.size == 0 or np.any(np.isnan(data)):
        raise CLIError(f"argument CSV: {path} must be numeric (an optional header row allowed)")
    if data.shape[1] == n_features:
        return data, None
    if data.shape[1] == n_features + 1:
        return data[:, :-1], data[:, -1]
    raise CLIError(f"argument CSV: {path} has {data.shape[1]} columns; the model expects "
                   f"{n_features} feature columns (optionally plus a target column)")


#: More distinct labels than this on a classifier is taken as a regression target.
MAX_CLASSES = 20


def check_label_column(y: np.ndarray, data: str, method: str) -> None:
    """A classifier's label column (the CSV's last column) must hold a few discrete labels."""
    y = np.asarray(y, dtype=float)
    n_distinct = np.unique(y).shape[0]
    fractional = bool(np.any(y != np.round(y)))
    if fractional or n_distinct > MAX_CLASSES:
        why = ("non-integer values" if fractional
               else f"{n_distinct} distinct values (more than {MAX_CLASSES})")
        raise CLIError(f"argument --data: the label column (the last column of {data}) has "
                       f"{why}, but {method} is a classifier: it looks like a regression "
                       "target; use a regression method (e.g. primaldual fit EpsilonSVR "
                       f"--data {data}, or LSSVR, KernelRidge), or put the class labels in "
                       "the last column")
