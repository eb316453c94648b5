"""Embedded datasets for the CLI, the examples and the benchmarks (no network access).

Only scikit-learn's bundled files and generators are used, plus a few classic synthetic
problems generated here from a seed.  Every loader returns ``(X, y)`` with ``X`` a 2-D
float64 array.

=====================  ==========  ========  ================================================
name                   task        labels    source / default size
=====================  ==========  ========  ================================================
``iris``               3 classes   0, 1, 2   scikit-learn bundled, 150 x 4
``wine``               3 classes   0, 1, 2   scikit-learn bundled, 178 x 13
``breast_cancer``      binary      -1, +1    scikit-learn bundled, 569 x 30;
                                             malignant = -1, benign = +1
``diabetes``           regression  real      scikit-learn bundled, 442 x 10
``two_spirals``        binary      -1, +1    Lang & Witbrock two spirals (Suykens Fig. 3.2), 200
``ripley``             binary      -1, +1    Ripley-style Gaussian mixture (Suykens Fig. 3.3), 250
``sinc``               regression  real      ``sin(x)/x + noise`` (Suykens Figs. 3.9-3.10), 500
``blobs``              binary      -1, +1    ``make_blobs`` with 2 centres, 200 x 2
``moons``              binary      -1, +1    ``make_moons``, 200 x 2
``circles``            binary      -1, +1    ``make_circles`` (factor 0.5), 200 x 2
``classification``     binary      -1, +1    ``make_classification``, 1000 x 20
``regression``         regression  real      ``make_regression``, 1000 x 20
``amini``              binary      -1, +1    the six 2-D points of Amini's "Samples of SVM"
                                             hard-margin example (never standardised), 6 x 2
``amini_soft``         binary      -1, +1    the same points, the third labelled -1 (his soft
                                             margin example, C = 10), 6 x 2
``amini_kernel``       binary      -1, +1    eight 2-D points, four inside a circle (+1) and
                                             four outside (-1): his hard-margin kernel-SVM, 8 x 2
``amini_kernel_soft``  binary      -1, +1    the same with the fourth (+1) point moved outside
                                             the circle (his soft kernel-SVM, C = 10), 8 x 2
``*.csv``              as given    as given  a CSV file; last column is the target
=====================  ==========  ========  ================================================
"""

from __future__ import annotations

import csv
import math
import numbers
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .exceptions import DatasetFileNotFoundError

__all__ = [
    "AMINI_EXAMPLES",
    "DATASETS",
    "DATASET_TASKS",
    "DatasetFileNotFoundError",
    "RIPLEY_CENTRES",
    "RIPLEY_SD",
    "SlideExample",
    "load_dataset",
    "load_csv",
    "two_spirals",
    "ripley",
    "sinc",
    "train_test_split_seeded",
]

#: ``name -> "binary" | "multiclass" | "regression"``.
DATASET_TASKS: dict[str, str] = {
    "iris": "multiclass",
    "wine": "multiclass",
    "breast_cancer": "binary",
    "diabetes": "regression",
    "two_spirals": "binary",
    "ripley": "binary",
    "sinc": "regression",
    "blobs": "binary",
    "moons": "binary",
    "circles": "binary",
    "classification": "binary",
    "regression": "regression",
    "amini": "binary",
    "amini_soft": "binary",
    "amini_kernel": "binary",
    "amini_kernel_soft": "binary",
}

#: The six points of the hard-margin example of Amini's lecture "Samples of SVM" (printed there
#: rounded to 2 decimals), labels +1, +1, +1, -1, -1, -1. With the linear kernel the lecture prints
#: alpha = (0.1105, 0.3898, 0, 0.5003, 0, 0); the exact optimum for these rounded points is
#: alpha ~= (0.112, 0.386, 0, 0.497, 0, 0).
AMINI_X = np.array([[2.16, 2.94], [2.95, 1.89], [3.09, 2.77], [1.17, 0.92], [-0.97, 0.98],
                    [-0.85, -1.21]])
AMINI_Y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])

#: The eight points of Amini's two kernel-SVM examples (hard margin; the soft one moves the fourth
#: point from (0.10, -1.25) to (0.10, -3.25)): the first four lie inside the circle of radius 1.5
#: and are labelled +1, the last four outside it, -1.
AMINI_KERNEL_X = np.array([[0.92, -0.01], [-0.43, 1.33], [-1.36, -0.17], [0.10, -1.25],
                           [-2.21, 1.82], [-1.89, -1.54], [2.01, -2.22], [2.11, 1.88]])
AMINI_KERNEL_Y = np.array([1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0])


@dataclass(frozen=True)
class SlideExample:
    """One worked example of Amini's "Samples of SVM" slides: the data as printed (``X`` to two
    decimals, the labels as the support and ``yᵀα = 0`` require), the problem the slide solves
    (``method``: the CLI name, ``kernel``, ``C``) and the numbers it prints (``alpha``, ``w0``;
    ``None`` where the slide prints none)."""

    slide: str
    X: np.ndarray
    y: np.ndarray
    method: str
    kernel: str
    C: float | None
    alpha: tuple[float, ...]
    w0: float | None


def _moved(X: np.ndarray, row: int, point: tuple[float, float]) -> np.ndarray:
    out = X.copy()
    out[row] = point
    return out


#: dataset name -> the slide it reproduces (docs/texts.md shows each with its command).
AMINI_EXAMPLES: dict[str, SlideExample] = {
    "amini": SlideExample("Hard Margin SVM", AMINI_X, AMINI_Y, "hard-margin", "linear", None,
                          (0.1105, 0.3898, 0.0, 0.5003, 0.0, 0.0), -2.4943),
    "amini_soft": SlideExample("Soft Margin SVM with C = 10", AMINI_X,
                               np.array([1.0, 1.0, -1.0, -1.0, -1.0, -1.0]), "csvc", "linear",
                               10.0, (5.5408, 8.1495, 10.0, 3.6904, 0.0, 0.0), -2.4943),
    "amini_kernel": SlideExample("Hard Margin kernel-SVM", AMINI_KERNEL_X, AMINI_KERNEL_Y,
                                 "hard-margin", "paraboloid", None,
                                 (0.0, 0.0, 0.1066, 0.0, 0.0, 0.1066, 0.0, 0.0), None),
    "amini_kernel_soft": SlideExample(
        "Soft Margin kernel-SVM with C = 10", _moved(AMINI_KERNEL_X, 3, (0.10, -3.25)),
        AMINI_KERNEL_Y, "csvc", "paraboloid", 10.0,
        (0.0, 2.7729, 3.8414, 10.0, 0.0, 10.0, 6.4263, 0.1879), 2.0089),
}

#: Names accepted by :func:`load_dataset` (besides a path ending in ``.csv``).
DATASETS: tuple[str, ...] = tuple(DATASET_TASKS)


# --------------------------------------------------------------------------- helpers


def _check_n(n_samples: Any, default: int, minimum: int = 2) -> int:
    if n_samples is None:
        return default
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise TypeError(f"n_samples must be an integer, got {n_samples!r}")
    if n_samples < minimum:
        raise ValueError(f"n_samples must be >= {minimum}, got {n_samples}")
    return int(n_samples)


def _check_noise(noise: Any, default: float) -> float:
    if noise is None:
        return default
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real):
        raise TypeError(f"noise must be a non-negative number, got {noise!r}")
    v = float(noise)
    if not (v >= 0 and math.isfinite(v)):
        raise ValueError(f"noise must be a non-negative finite number, got {noise!r}")
    return v


def _pm1(t: np.ndarray) -> np.ndarray:
    """Map 0/1 labels to -1/+1 (float)."""
    return np.where(np.asarray(t) > 0, 1.0, -1.0)


def _standardize(X: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance per column (constant columns are only centred)."""
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    sd[sd == 0] = 1.0
    return (X - mu) / sd


def _subsample(X, y, n_samples, rng):
    if n_samples is None:
        return X, y
    n = _check_n(n_samples, len(X), minimum=1)
    if n > len(X):
        raise ValueError(f"n_samples={n} exceeds the {len(X)} samples of this dataset")
    idx = np.sort(rng.choice(len(X), size=n, replace=False))
    return X[idx], y[idx]


# --------------------------------------------------------------------------- generators


def two_spirals(
    n_samples: int = 200, noise: float = 0.0,
    random_state: int | np.random.Generator | None = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Two intertwined spirals (Lang & Witbrock 1988; Suykens Fig. 3.2).

    ``m = n_samples // 2`` points per class; point ``i = 0..m-1`` of class +1 has angle
    ``phi_i = 6 pi i / (m - 1)`` (three turns) and radius ``r_i = 6.5 (104 - 96 i/(m-1)) / 104``
    (from 6.5 down to 0.5), at ``(r sin phi, r cos phi)``; class -1 is its point
    reflection ``-(x, y)``.  With ``m = 97`` this is exactly the CMU benchmark.  Gaussian
    jitter of standard deviation ``noise`` is added to both coordinates.  An odd
    ``n_samples`` gives the extra point to class +1.
    """
    n = _check_n(n_samples, 200, minimum=4)
    noise = _check_noise(noise, 0.0)
    rng = np.random.default_rng(random_state)
    m_pos = n - n // 2
    m_neg = n // 2

    def arm(m: int) -> np.ndarray:
        t = np.arange(m) / max(m - 1, 1)
        phi = 6.0 * np.pi * t
        r = 6.5 * (104.0 - 96.0 * t) / 104.0
        return np.column_stack([r * np.sin(phi), r * np.cos(phi)])

    X = np.vstack([arm(m_pos), -arm(m_neg)])
    y = np.concatenate([np.ones(m_pos), -np.ones(m_neg)])
    if noise > 0:
        X = X + noise * rng.standard_normal(X.shape)
    return X, y


#: Ripley-style mixture centres: label -> list of component means.
RIPLEY_CENTRES: dict[int, tuple[tuple[float, float], ...]] = {
    -1: ((-0.3, 0.7), (0.4, 0.7)),
    +1: ((-0.7, 0.3), (0.3, 0.3)),
}
#: Standard deviation of every mixture component (covariance ``0.03 I``, Ripley 1994).
RIPLEY_SD: float = math.sqrt(0.03)


def ripley(n_samples: int = 250, noise: float | None = None,
           random_state: int | np.random.Generator | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """Ripley-like synthetic two-class problem (Suykens Fig. 3.3; Ripley 1994/1996).

    Each class is an equal mixture of two isotropic Gaussians: class -1 (Ripley's
    class 0) has centres (-0.3, 0.7) and (0.4, 0.7), class +1 (Ripley's class 1) has
    centres (-0.7, 0.3) and (0.3, 0.3); every component has covariance ``0.03 I``
    (standard deviation ``sqrt(0.03) ~= 0.173``; ``noise`` overrides this standard
    deviation).  The Suykens text only shows the figure; the means and covariance
    follow Ripley's description of his ``synth.tr`` set (250 training points, 125 per
    class).  The points are freshly drawn from ``random_state``, not Ripley's file.
    """
    n = _check_n(n_samples, 250, minimum=4)
    sd = _check_noise(noise, RIPLEY_SD)
    rng = np.random.default_rng(random_state)
    counts = {+1: n - n // 2, -1: n // 2}
    Xs, ys = [], []
    for label in (-1, +1):
        cent = np.asarray(RIPLEY_CENTRES[label])
        comp = rng.integers(0, 2, size=counts[label])
        Xs.append(cent[comp] + sd * rng.standard_normal((counts[label], 2)))
        ys.append(np.full(counts[label], float(label)))
    X = np.vstack(Xs)
    y = np.concatenate(ys)
    perm = rng.permutation(n)
    return X[perm], y[perm]


def sinc(n_samples: int = 500, noise: float = 0.1,
         random_state: int | np.random.Generator | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """Noisy sinc regression (Suykens Figs. 3.9-3.10: 500 points, noiseless and noisy).

    ``x ~ Uniform[-10, 10]`` (one feature), ``y = sin(x)/x + e``, ``e ~ N(0, noise^2)``
    (``sin(0)/0 = 1``).  ``noise=0`` gives the noiseless curve.
    """
    n = _check_n(n_samples, 500, minimum=2)
    noise = _check_noise(noise, 0.1)
    rng = np.random.default_rng(random_state)
    x = rng.uniform(-10.0, 10.0, size=n)
    y = np.sinc(x / np.pi)
    if noise > 0:
        y = y + noise * rng.standard_normal(n)
    return x.reshape(-1, 1), y


# --------------------------------------------------------------------------- CSV


#: a CSV number: a decimal literal, or nan/inf (then refused as non-finite with its position)
_NUMBER = re.compile(r"\s*[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|nan|inf|infinity)\s*",
                     re.IGNORECASE)


def _is_number(cell: str) -> bool:
    return _NUMBER.fullmatch(cell) is not None


def load_csv(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read a numeric CSV file: every column but the last is a feature, the last is the target.

    A first row none of whose cells is a number is taken as a header (a first row with numbers
    and one bad cell is a data row, and the bad cell is reported).  A cell is a number when it
    is a plain decimal literal (``1``, ``-2.5``, ``.5``, ``3e-4``): Python's ``float`` would
    also read ``1_000`` as 1000, which no CSV writer means.  Raises
    :class:`DatasetFileNotFoundError` (a ``ValueError``) for a missing file and
    ``ValueError`` for non-numeric cells (with row and column), ragged rows, fewer than
    two columns, or no data rows.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise DatasetFileNotFoundError(f"dataset file not found: {path!r}")
    try:
        with open(path, newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    except csv.Error as exc:  # e.g. a cell over the csv module's field size limit
        raise ValueError(f"{path!r}: not a readable CSV file ({exc})") from None
    if not rows:
        raise ValueError(f"{path!r}: the file has no data rows")

    start = 1 if not any(_is_number(c) for c in rows[0]) else 0
    data = rows[start:]
    if not data:
        raise ValueError(f"{path!r}: the file has a header but no data rows")
    ncol = len(data[0])
    if ncol < 2:
        raise ValueError(
            f"{path!r}: need at least 2 columns (features and a target), got {ncol}"
        )
    out = np.empty((len(data), ncol))
    for i, row in enumerate(data):
        line = i + start + 1
        if len(row) != ncol:
            raise ValueError(f"{path!r}: row {line} has {len(row)} columns, expected {ncol}")
        for j, cell in enumerate(row):
            if not _is_number(cell):
                raise ValueError(
                    f"{path!r}: non-numeric cell {cell!r} at row {line}, column {j + 1}"
                )
            out[i, j] = float(cell)
    if not np.all(np.isfinite(out)):
        bad = np.argwhere(~np.isfinite(out))[0]
        raise ValueError(
            f"{path!r}: non-finite value at row {bad[0] + start + 1}, column {bad[1] + 1}"
        )
    return out[:, :-1], out[:, -1]


# --------------------------------------------------------------------------- entry point


def load_dataset(name: str | os.PathLike, *, n_samples: int | None = None,
                 noise: float | None = None, random_state: int | None = 0,
                 standardize: bool = True,
                 n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Load an embedded dataset or a CSV file.

    Parameters
    ----------
    name : str or path
        One of :data:`DATASETS` (see the module docstring for each) or a path ending in
        ``.csv`` (see :func:`load_csv`).
    n_samples : int, optional
        Size of a generated dataset; for bundled files and CSV files, a seeded random
        subset of that size (``ValueError`` if larger than the file).
    noise : float, optional
        Generator noise: jitter sd for ``two_spirals`` (default 0), component sd for
        ``ripley`` (default ``sqrt(0.03)``), target noise sd for ``sinc`` (default 0.1)
        and ``regression`` (default 10), ``cluster_std`` for ``blobs`` (default 1),
        ``noise`` of ``moons``/``circles`` (default 0.1), ``flip_y`` for
        ``classification`` (default 0.01).  Not accepted for bundled or CSV data.
    random_state : int or None
        Seed; the same seed gives the same arrays.
    standardize : bool
        Scale every feature of ``X`` to zero mean and unit variance (targets untouched).
    n_features : int, optional
        Dimension of ``blobs`` (default 2), ``classification`` and ``regression``
        (default 20).

    Returns
    -------
    X : ndarray, shape (n, d), float64
    y : ndarray, shape (n,)
        ``-1.0/+1.0`` for binary problems, ``0, 1, 2`` (int) for iris and wine,
        float for regression and CSV targets.
    """
    if isinstance(name, os.PathLike) or (isinstance(name, str) and name.lower().endswith(".csv")):
        if noise is not None:
            raise ValueError("noise is not used for CSV data")
        X, y = load_csv(name)
        X, y = _subsample(X, y, n_samples, np.random.default_rng(random_state))
        return (_standardize(X) if standardize else X), y
    if not isinstance(name, str):
        raise TypeError(f"name must be a dataset name or a .csv path, got {type(name).__name__}")
    if name not in DATASET_TASKS:
        raise ValueError(
            f"unknown dataset {name!r}; allowed: {', '.join(DATASETS)} or a path ending in .csv"
        )
    if name in AMINI_EXAMPLES:
        if n_samples is not None or noise is not None or n_features is not None:
            raise ValueError(f"the {name} dataset is fixed: n_samples, noise and n_features are "
                             "not used")
        ex = AMINI_EXAMPLES[name]
        return ex.X.copy(), ex.y.copy()   # the lecture's numbers: never standardised
    if n_features is not None and name not in ("blobs", "classification", "regression"):
        raise ValueError("n_features is only used by blobs, classification and regression")
    rng = np.random.default_rng(random_state)
    seed = int(rng.integers(2**31 - 1))  # integer seed for scikit-learn generators

    if name in ("iris", "wine", "breast_cancer", "diabetes"):
        if noise is not None:
            raise ValueError(f"noise is not used for the bundled dataset {name!r}")
        import sklearn.datasets as skd

        loader = {"iris": skd.load_iris, "wine": skd.load_wine,
                  "breast_cancer": skd.load_breast_cancer, "diabetes": skd.load_diabetes}[name]
        bunch = loader()
        X = np.asarray(bunch.data, dtype=np.float64)
        if name == "breast_cancer":
            y = _pm1(bunch.target)  # sklearn: 0 = malignant -> -1, 1 = benign -> +1
        elif name == "diabetes":
            y = np.asarray(bunch.target, dtype=np.float64)
        else:
            y = np.asarray(bunch.target, dtype=np.int64)
        X, y = _subsample(X, y, n_samples, rng)
    elif name == "two_spirals":
        X, y = two_spirals(_check_n(n_samples, 200, 4), _check_noise(noise, 0.0), rng)
    elif name == "ripley":
        X, y = ripley(_check_n(n_samples, 250, 4), noise, rng)
    elif name == "sinc":
        X, y = sinc(_check_n(n_samples, 500), _check_noise(noise, 0.1), rng)
    else:
        import sklearn.datasets as skd

        if name == "blobs":
            d = _check_n(n_features, 2, 1)
            X, t = skd.make_blobs(n_samples=_check_n(n_samples, 200), centers=2, n_features=d,
                                  cluster_std=_check_noise(noise, 1.0), random_state=seed)
            y = _pm1(t)
        elif name == "moons":
            X, t = skd.make_moons(n_samples=_check_n(n_samples, 200),
                                  noise=_check_noise(noise, 0.1), random_state=seed)
            y = _pm1(t)
        elif name == "circles":
            X, t = skd.make_circles(n_samples=_check_n(n_samples, 200), factor=0.5,
                                    noise=_check_noise(noise, 0.1), random_state=seed)
            y = _pm1(t)
        elif name == "classification":
            d = _check_n(n_features, 20, 2)
            flip = _check_noise(noise, 0.01)
            if flip > 1:
                raise ValueError(f"noise (flip_y) must be in [0, 1] for classification, got {flip}")
            X, t = skd.make_classification(n_samples=_check_n(n_samples, 1000), n_features=d,
                                           n_informative=max(2, min(d, d // 2)), n_redundant=0,
                                           flip_y=flip, random_state=seed)
            y = _pm1(t)
        else:  # regression
            d = _check_n(n_features, 20, 1)
            X, y = skd.make_regression(n_samples=_check_n(n_samples, 1000), n_features=d,
                                       noise=_check_noise(noise, 10.0), random_state=seed)
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
    X = np.ascontiguousarray(X, dtype=np.float64)
    return (_standardize(X) if standardize else X), y


def train_test_split_seeded(X: Any, y: Any, test_size: float = 0.25, random_state: int = 0,
                            stratify: bool | None = None):
    """``sklearn.model_selection.train_test_split`` with a fixed seed.

    ``stratify=None`` stratifies when ``y`` looks like class labels (at most 20 distinct
    values, each appearing at least twice).  Returns ``X_train, X_test, y_train, y_test``.
    """
    from sklearn.model_selection import train_test_split

    y_arr = np.asarray(y)
    if stratify is None:
        vals, counts = np.unique(y_arr, return_counts=True)
        stratify = len(vals) <= 20 and counts.min() >= 2 and len(vals) < len(y_arr)
    return train_test_split(X, y, test_size=test_size, random_state=random_state,
                            stratify=y_arr if stratify else None)
