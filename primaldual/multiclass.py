r"""Multiclass decompositions: output codings, decoding, and the multiclass LS-SVM.

docs/formulations.md section 9. A coding is a code matrix ``M`` of shape ``(n_classes, n_outputs)``
with entries in ``{-1, 0, +1}``: output ``l`` is a binary problem whose label for a row of class
``c`` is ``M[c, l]``; ``0`` leaves the class out of that sub-problem (one-vs-one).

Multiclass LS-SVM [Suykens 3.8-3.14]: ``n_outputs`` binary LS-SVMs with a block-diagonal KKT
system. Output ``l`` solves ``[[0, y_l^T], [y_l, D_{y_l}(K + I/C)D_{y_l}]] [b_l; a_l] = [0; 1]``.
Since every output that uses the same training rows shares ``K + I/C``, all of them are solved
with ONE Cholesky factor and a multi-column right-hand side
(:func:`~primaldual.backends.linsys.direct.solve_bordered` with a per-column sign matrix);
one-vs-one groups the rows per pair and factors each pair's rows once. Scores
``f_l(x) = sum_i beta_il k(x, x_i) + b_l`` with
``beta_il = M[y_i, l] a_il`` are decoded to a class by minimum Hamming distance (ties: lowest
class index; with one-vs-one this is max-wins voting), by loss-based decoding, or (one-vs-one)
by a decision DAG.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from primaldual.backends.linsys.direct import factor_kernel, solve_bordered
from primaldual.kernels.gram import gram
from primaldual.validation import check_data_matrix, check_kernel_or_none

__all__ = ["code_matrix", "decode", "fit_lssvm_multiclass", "MulticlassLSSVM", "CODINGS"]

#: Supported coding names.
CODINGS = ("moc", "ova", "ovo", "ecoc")


def _check_n_classes(n_classes: Any) -> int:
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)):
        raise TypeError(f"n_classes must be an integer, got {type(n_classes).__name__}")
    if n_classes < 2:
        raise ValueError(f"n_classes must be >= 2, got {n_classes}")
    return int(n_classes)


def code_matrix(n_classes: int, coding: str = "moc", *, n_bits: int | None = None,
                random_state: int | np.random.Generator | None = None) -> np.ndarray:
    r"""Code matrix ``M`` (n_classes, n_outputs) with entries in ``{-1, 0, +1}``.

    Parameters
    ----------
    n_classes : int
        Number of classes ``m >= 2``.
    coding : {"moc", "ova", "ovo", "ecoc"}
        * ``"moc"`` minimum output coding: ``ceil(log2 m)`` bits, class ``c`` coded by the
          binary digits of ``c`` (``0 -> -1``, ``1 -> +1``; bit 0 first).
        * ``"ova"`` one-vs-all: ``m`` outputs, ``+1`` on the diagonal, ``-1`` elsewhere.
        * ``"ovo"`` one-vs-one: ``m(m-1)/2`` outputs, pair ``(i, j)`` with ``i < j`` in
          lexicographic order, ``M[i] = +1``, ``M[j] = -1``, other classes ``0``.
        * ``"ecoc"`` error-correcting output code: the exhaustive code (all ``2^(m-1) - 1``
          distinct non-constant columns with ``M[0] = +1``, Dietterich & Bakiri) when
          ``n_bits`` is None and ``m <= 7``; otherwise ``n_bits`` (default
          ``ceil(10 log2 m)``) random +-1 columns, best of 50 draws by minimum row Hamming
          distance, no constant column.
    n_bits : int, optional
        Number of ECOC outputs (``"ecoc"`` only).
    random_state : int or Generator, optional
        Seed for the random ECOC.
    """
    m = _check_n_classes(n_classes)
    if coding not in CODINGS:
        raise ValueError(f"coding must be one of {CODINGS}, got {coding!r}")
    if n_bits is not None and coding != "ecoc":
        raise ValueError("n_bits is only used with coding='ecoc'")
    if coding == "moc":
        L = max(1, math.ceil(math.log2(m)))
        c = np.arange(m)[:, None]
        bits = (c >> np.arange(L)[None, :]) & 1
        return np.where(bits == 1, 1, -1).astype(np.int8)
    if coding == "ova":
        M = -np.ones((m, m), dtype=np.int8)
        np.fill_diagonal(M, 1)
        return M
    if coding == "ovo":
        pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
        M = np.zeros((m, len(pairs)), dtype=np.int8)
        for col, (i, j) in enumerate(pairs):
            M[i, col] = 1
            M[j, col] = -1
        return M
    # ecoc
    if n_bits is None and m <= 7:
        cols = []
        for v in range(2 ** (m - 1) - 1):  # class 0 fixed at +1, exclude the all-ones column
            bits = [(v >> (m - 2 - r)) & 1 for r in range(m - 1)]
            cols.append([1] + [1 if bb else -1 for bb in bits])
        return np.array(cols, dtype=np.int8).T
    if n_bits is None:
        n_bits = math.ceil(10 * math.log2(m))
    if isinstance(n_bits, bool) or not isinstance(n_bits, (int, np.integer)) or n_bits < 1:
        raise ValueError(f"n_bits must be a positive integer, got {n_bits!r}")
    rng = np.random.default_rng(random_state)
    best, best_d = None, -1
    for _ in range(50):
        M = np.where(rng.random((m, n_bits)) < 0.5, 1, -1).astype(np.int8)
        for j in range(n_bits):  # no constant column: flip one entry
            if abs(int(M[:, j].sum())) == m:
                M[rng.integers(m), j] *= -1
        dist = (n_bits - M.astype(int) @ M.T.astype(int)) // 2
        np.fill_diagonal(dist, n_bits + 1)
        dmin = int(dist.min())
        if dmin > best_d:
            best, best_d = M, dmin
    return best


_LOSSES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "squared": lambda z: (1.0 - z) ** 2,
    "hinge": lambda z: np.maximum(0.0, 1.0 - z),
    "exponential": lambda z: np.exp(-z),
    "linear": lambda z: -z,
}


def _check_codes(codes: Any) -> np.ndarray:
    M = np.asarray(codes)
    if M.ndim != 2 or M.shape[0] < 2 or M.shape[1] < 1:
        raise ValueError(f"codes must be a 2-D (n_classes >= 2, n_outputs >= 1) array, "
                         f"got shape {M.shape}")
    if not np.all(np.isin(M, (-1, 0, 1))):
        raise ValueError("codes entries must be -1, 0 or +1")
    return M.astype(np.float64)


def decode(scores: np.ndarray, codes: np.ndarray, *, method: str = "hamming",
           loss: str | Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    r"""Class indices from output scores.

    Parameters
    ----------
    scores : ndarray (n_samples, n_outputs)
        Real-valued outputs ``f_l(x)``.
    codes : ndarray (n_classes, n_outputs)
        Code matrix from :func:`code_matrix`.
    method : {"hamming", "loss", "dag"}
        * ``"hamming"``: ``argmin_c sum_l (1 - sign(f_l) M_cl) / 2`` (a 0 code entry, or a 0
          score, counts 1/2). With one-vs-one codes this is max-wins voting.
        * ``"loss"``: ``argmin_c sum_l loss(M_cl f_l)`` (Allwein, Schapire & Singer 2000);
          ``loss`` is ``"squared"`` (``(1-z)^2``, default, the LS-SVM loss), ``"hinge"``,
          ``"exponential"``, ``"linear"`` or a vectorised callable.
        * ``"dag"``: decision DAG for one-vs-one codes [Zhang 8.5.1]: keep a list of
          candidate classes, test the first ``i`` against the last ``j`` with the ``(i, j)``
          output, drop the loser, until one class is left.

    Returns
    -------
    ndarray (n_samples,) of int: class indices; ties go to the lowest class index.
    """
    M = _check_codes(codes)
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim == 1 and M.shape[1] == 1:
        S = S[:, None]
    if S.ndim != 2 or S.shape[1] != M.shape[1]:
        raise ValueError(f"scores must have shape (n_samples, {M.shape[1]}), got {S.shape}")
    if method == "hamming":
        if loss is not None:
            raise ValueError("loss is only used with method='loss'")
        dist = 0.5 * (M.shape[1] - np.sign(S) @ M.T)
        return np.argmin(dist, axis=1)
    if method == "loss":
        if loss is None:
            loss = "squared"
        if isinstance(loss, str):
            if loss not in _LOSSES:
                raise ValueError(f"loss must be one of {sorted(_LOSSES)} or a callable, "
                                 f"got {loss!r}")
            fn = _LOSSES[loss]
        elif callable(loss):
            fn = loss
        else:
            raise TypeError(f"loss must be a string or a callable, got {type(loss).__name__}")
        out = np.empty(S.shape[0], dtype=np.int64)
        step = max(1, 2**22 // max(1, M.size))
        for i0 in range(0, S.shape[0], step):
            Z = S[i0:i0 + step, None, :] * M[None, :, :]
            out[i0:i0 + step] = np.argmin(np.asarray(fn(Z)).sum(axis=2), axis=1)
        return out
    if method == "dag":
        return _decode_dag(S, M)
    raise ValueError(f"method must be 'hamming', 'loss' or 'dag', got {method!r}")


def _decode_dag(S: np.ndarray, M: np.ndarray) -> np.ndarray:
    m = M.shape[0]
    pair_col: dict[tuple[int, int], tuple[int, float]] = {}
    for col in range(M.shape[1]):
        nz = np.flatnonzero(M[:, col])
        if nz.size != 2 or M[nz[0], col] == M[nz[1], col]:
            raise ValueError("method='dag' needs one-vs-one codes (each output: one class +1, "
                             "one class -1, others 0)")
        i, j = int(nz[0]), int(nz[1])
        pair_col[(i, j)] = (col, float(M[i, col]))  # positive score -> class i when sign +1
    out = np.empty(S.shape[0], dtype=np.int64)
    for n in range(S.shape[0]):
        lo, hi = 0, m - 1
        cand = list(range(m))
        while len(cand) > 1:
            i, j = cand[lo], cand[hi]
            if (i, j) not in pair_col:
                raise ValueError(f"no output for the class pair ({i}, {j})")
            col, sgn = pair_col[(i, j)]
            if sgn * S[n, col] >= 0:  # i wins (ties to the lower index)
                cand.pop(hi)
            else:
                cand.pop(lo)
            hi = len(cand) - 1
        out[n] = cand[0]
    return out


@dataclass
class MulticlassLSSVM:
    """A fitted multiclass LS-SVM (block-diagonal KKT system, one factor per row group).

    Attributes
    ----------
    codes : ndarray (n_classes, n_outputs)
    alpha : ndarray (N, n_outputs)
        Multipliers of each output's signed system (0 for rows left out of an output).
    beta : ndarray (N, n_outputs)
        Predictor coefficients ``beta_il = M[y_i, l] alpha_il``.
    b : ndarray (n_outputs,)
    n_factors : int
        Number of Cholesky factorisations performed (1 for moc/ova/ecoc, one per pair for ovo).
    """

    codes: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    b: np.ndarray
    X: np.ndarray
    kernel: Any
    n_factors: int

    def decision_function(self, X_new: np.ndarray, *, block: int = 4096) -> np.ndarray:
        """Output scores ``f_l(x) = sum_i beta_il k(x, x_i) + b_l`` (n_samples, n_outputs)."""
        X_new = check_data_matrix(X_new, "X_new")
        rows = np.flatnonzero(np.any(self.beta != 0, axis=1))
        Xs, Bs = self.X[rows], self.beta[rows]
        out = np.empty((X_new.shape[0], self.beta.shape[1]))
        for i0 in range(0, X_new.shape[0], block):
            Kb = gram(self.kernel, X_new[i0:i0 + block], Xs)
            out[i0:i0 + block] = Kb @ Bs + self.b[None, :]
        return out

    def predict(self, X_new: np.ndarray, *, method: str = "hamming",
                loss: str | Callable | None = None) -> np.ndarray:
        """Class indices by :func:`decode`."""
        return decode(self.decision_function(X_new), self.codes, method=method, loss=loss)


def fit_lssvm_multiclass(X: np.ndarray, y_idx: np.ndarray, kernel: Any, C: float,
                         coding: str | np.ndarray = "moc", *, n_bits: int | None = None,
                         random_state: int | None = None, bias: bool = True,
                         jitter: float | str | None = None,
                         dtype=np.float64) -> MulticlassLSSVM:
    r"""Fit a multiclass LS-SVM classifier (docs/formulations.md 9) with the KKT backend.

    Output ``l`` is the LS-SVM classifier (docs/formulations.md 7) on the rows ``i`` with
    ``M[y_i, l] != 0`` and labels ``y_il = M[y_i, l]``. Outputs are grouped by their row set;
    each group is solved with ONE Cholesky factor of ``K_rows + I/C`` and a right-hand side of
    ``1 + n_group`` columns (moc, ova, ecoc: a single factor for all outputs; ovo: one factor per
    pair, on that pair's rows only).

    Parameters
    ----------
    X : ndarray (N, n)
    y_idx : ndarray (N,) of int
        Class indices ``0 .. n_classes - 1`` (the estimator layer maps labels to indices).
    kernel : Kernel
    C : float
    coding : {"moc", "ova", "ovo", "ecoc"} or ndarray
        Coding name (see :func:`code_matrix`) or an explicit code matrix.
    """
    kernel = check_kernel_or_none(kernel)
    if kernel is None:
        raise ValueError("fit_lssvm_multiclass needs a kernel object")
    X = check_data_matrix(X)
    y = np.asarray(y_idx)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y_idx must have shape ({X.shape[0]},), got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        if np.issubdtype(y.dtype, np.floating) and np.all(y == np.round(y)):
            y = y.astype(np.int64)
        else:
            raise TypeError("y_idx must hold integer class indices 0..n_classes-1")
    if y.size and y.min() < 0:
        raise ValueError("y_idx must be >= 0")
    if isinstance(coding, str):
        n_classes = int(y.max()) + 1
        M = code_matrix(n_classes, coding, n_bits=n_bits, random_state=random_state)
    else:
        M = _check_codes(coding).astype(np.int8)
        if y.max() >= M.shape[0]:
            raise ValueError(f"y_idx has class {y.max()} but codes has {M.shape[0]} rows")
    Mf = M.astype(np.float64)
    S = Mf[y]                      # (N, L) signed labels per output, 0 = row left out
    N, L = S.shape
    mask = S != 0
    alpha = np.zeros((N, L))
    b = np.zeros(L)
    groups: dict[bytes, list[int]] = {}
    for col in range(L):
        groups.setdefault(np.packbits(mask[:, col]).tobytes(), []).append(col)
    n_factors = 0
    for cols in groups.values():
        rows = np.flatnonzero(mask[:, cols[0]])
        if rows.size == 0:
            raise ValueError(f"outputs {cols} have no training rows (a class is missing)")
        Xr = X if rows.size == N else X[rows]
        fac = factor_kernel(Xr, kernel, C, jitter=jitter, dtype=dtype)
        n_factors += 1
        Sg = S[np.ix_(rows, cols)]
        bg, ag = solve_bordered(fac, np.ones_like(Sg), sign=Sg, bias=bias)
        alpha[np.ix_(rows, cols)] = ag
        b[cols] = bg
        del fac
    beta = alpha * S
    return MulticlassLSSVM(codes=M, alpha=alpha, beta=beta, b=b, X=X, kernel=kernel,
                           n_factors=n_factors)


# =============================================================================================
# Generic multiclass decompositions for ANY primaldual binary classifier (issue 8).
#
# Every decomposition is a code matrix M (n_classes, n_outputs) with entries in {-1, 0, +1}:
# output l is a binary sub-problem on the rows i with M[y_i, l] != 0, labelled +1 where
# M[y_i, l] = +1 (the binary clone sees the integer labels {0, 1}, so its ``classes_[1] = 1`` is
# the +1 side and ``f_l(x) > 0`` votes for the classes coded +1). One-vs-one is code_matrix("ovo")
# (pair (i, j), i < j: class i is +1, so a positive score votes for the LOWER class, as LIBSVM's
# and scikit-learn's ``decision_function_shape="ovo"``), one-vs-rest is code_matrix("ova").
# =============================================================================================

from sklearn.base import BaseEstimator, ClassifierMixin, clone  # noqa: E402
from sklearn.utils.validation import check_is_fitted, validate_data  # noqa: E402

from primaldual.methods._base import _dense, atomic_fit  # noqa: E402

__all__ += ["fit_multiclass_estimator", "multiclass_decision", "multiclass_predict",
            "multiclass_predict_proba",
            "OneVsOneClassifier", "OneVsRestClassifier", "DAGClassifier", "STRATEGIES",
            "ovr_from_ovo"]

#: Multiclass strategies of the generic decomposition (``multiclass`` attribute).
STRATEGIES = ("ovo", "ovr", "dag")
_MC_ATTRS = ("estimators_", "codes_", "multiclass_strategy_", "decoding_")


def _unlabelled(y: np.ndarray) -> np.ndarray:
    """Unlabelled entries (``NaN`` / ``None``): the Laplacian methods' own rule."""
    from primaldual.methods.laplacian import unlabelled_mask

    return unlabelled_mask(y)


def _resolve_codes(estimator: Any, n_classes: int) -> tuple[np.ndarray, str, str, Any]:
    """Code matrix, strategy name, decoding method and loss from the estimator's attributes.

    ``coding`` (LS-SVM codings "moc" / "ecoc" / "ova" (1vsA) / "ovo" (1vs1), or an explicit
    matrix) takes precedence over ``multiclass`` ("ovo" default, "ovr", "dag").
    """
    coding = getattr(estimator, "coding", None)
    decoding = getattr(estimator, "decoding", None)
    loss = getattr(estimator, "decoding_loss", None)
    if coding is not None:
        if isinstance(coding, str):
            aliases = {"1vsa": "ova", "ovr": "ova", "1vs1": "ovo"}
            name = aliases.get(coding.lower(), coding.lower())
            M = code_matrix(n_classes, name, random_state=getattr(estimator, "random_state", 0)
                            if name == "ecoc" else None)
        else:
            M = _check_codes(coding).astype(np.int8)
            name = "custom"
            if M.shape[0] != n_classes:
                raise ValueError(f"coding has {M.shape[0]} rows but y has {n_classes} classes")
        return M, f"coding-{name}", decoding or "hamming", loss
    strategy = getattr(estimator, "multiclass", "ovo") or "ovo"
    if strategy not in STRATEGIES:
        raise ValueError(f"multiclass must be one of {STRATEGIES}, got {strategy!r}")
    if strategy == "ovr":
        return code_matrix(n_classes, "ova"), "ovr", decoding or "argmax", loss
    return code_matrix(n_classes, "ovo"), strategy, decoding or (
        "dag" if strategy == "dag" else "vote"), loss


def _class_sample_weight(estimator: Any, y_idx: np.ndarray, classes: np.ndarray,
                         sample_weight: Any, labelled: np.ndarray) -> np.ndarray | None:
    """Fold ``class_weight`` of the FULL multiclass problem into per-sample weights (as
    scikit-learn's SVC: "balanced" is ``n / (n_classes * n_c)`` over all classes)."""
    cw = getattr(estimator, "class_weight", None)
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float).copy()
    if sw is not None and sw.shape != (y_idx.shape[0],):
        raise ValueError(f"sample_weight must have shape ({y_idx.shape[0]},), got {sw.shape}")
    if cw is None:
        return sw
    k = classes.shape[0]
    if isinstance(cw, str) and cw == "balanced":
        counts = np.bincount(y_idx[labelled], minlength=k).astype(float)
        w = labelled.sum() / (k * np.maximum(counts, 1.0))
    elif isinstance(cw, dict):
        w = np.array([float(cw.get(c, 1.0)) for c in classes])
    else:
        raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {cw!r}")
    per = np.where(labelled, w[np.where(labelled, y_idx, 0)], 1.0)
    return per if sw is None else sw * per


def _lean(est: Any) -> bool:
    """The estimator fits through the shared pipeline (:meth:`~primaldual.methods._base.
    KernelMethod._fit_subproblem` skips the second validation of rows already checked)."""
    return hasattr(est, "_fit_subproblem") and getattr(type(est).fit, "__qualname__", "").split(
        ".")[0] in ("KernelMethod", "BinaryClassifier")


def _fit_column(est: Any, X: np.ndarray, y_bin: np.ndarray, sw: np.ndarray | None,
                backend: Any, form: Any, params: dict | None = None) -> Any:
    if params is not None:
        return est._fit_subproblem(X, y_bin, sw, backend, form, params)
    kw: dict[str, Any] = {}
    if sw is not None:
        kw["sample_weight"] = sw
    if backend is not None:
        kw["backend"] = backend
    if form is not None:
        kw["form"] = form
    return est.fit(X, y_bin, **kw)


def fit_multiclass_estimator(estimator: Any, X: np.ndarray, y: np.ndarray,
                             sample_weight: Any = None, backend: str | None = None,
                             form: str | None = None) -> Any:
    r"""Fit ``estimator`` (a primaldual binary classifier) on more than two classes in place.

    The decomposition is a code matrix ``M`` (:func:`code_matrix`); output ``l`` is a binary
    clone fit on the rows with ``M[y_i, l] != 0`` and labels ``[M[y_i, l] > 0]`` in ``{0, 1}``
    (so ``f_l > 0`` votes for the classes coded ``+1``). Attributes read from the estimator
    (all optional, ``getattr`` with defaults):

    * ``multiclass``: ``"ovo"`` (default, as scikit-learn's SVC), ``"ovr"``, ``"dag"``;
    * ``coding``: LS-SVM output coding ``"moc"``, ``"ecoc"``, ``"ova"``/``"1vsA"``,
      ``"ovo"``/``"1vs1"`` or an explicit matrix (takes precedence over ``multiclass``);
    * ``decoding``: ``"hamming"`` or ``"loss"`` (codings), ``decoding_loss`` for ``"loss"``;
    * ``decision_function_shape``: ``"ovr"`` (default) or ``"ovo"``;
    * ``n_jobs``: sub-problems run through :class:`joblib.Parallel` (so
      ``joblib.parallel_config(backend="dask")`` sends them to a Dask cluster).

    ``class_weight`` is applied over the full multiclass problem (scikit-learn's convention)
    and passed to the clones as sample weights. Unlabelled rows (``NaN``, semi-supervised
    methods) are kept in every sub-problem.
    """
    from joblib import Parallel, delayed

    classes = estimator.classes_
    y = np.asarray(y)
    unl = _unlabelled(y)
    labelled = ~unl
    if np.any(unl):
        classes = np.unique(y[labelled])
        estimator.classes_ = classes
    y_idx = np.zeros(y.shape[0], dtype=np.int64)
    y_idx[labelled] = np.searchsorted(classes, y[labelled])
    M, strategy, decoding, loss = _resolve_codes(estimator, classes.shape[0])
    sw = _class_sample_weight(estimator, y_idx, classes, sample_weight, labelled)
    base = clone(estimator)
    params = base.get_params(deep=False)
    updates: dict[str, Any] = {k: None for k in ("class_weight", "n_jobs") if k in params}
    if "gamma" in params and isinstance(params["gamma"], str):
        # gamma="scale"/"auto" is resolved ONCE on the full X (scikit-learn), not per sub-problem
        gamma = estimator.__dict__.get("_gamma")
        if gamma is None and hasattr(estimator, "_resolve_gamma"):
            gamma = estimator._resolve_gamma(X)
        if gamma is not None and not isinstance(gamma, str):
            updates["gamma"] = float(gamma)
    base.set_params(**updates)
    precomputed = getattr(estimator, "kernel", None) == "precomputed"
    jobs = []
    for col in range(M.shape[1]):
        code = M[y_idx, col].astype(float)
        code[unl] = 0.0
        rows = np.flatnonzero((code != 0) | unl)
        yb = (code[rows] > 0).astype(np.int64)
        if np.any(unl):
            yb = yb.astype(float)
            yb[unl[rows]] = np.nan
        jobs.append((rows, yb))
    n_jobs = getattr(estimator, "n_jobs", None)
    # the rows are validated once, here; each sub-problem gets a copy of the unfitted base
    # (its parameters validated once) instead of a clone that validates everything again
    lean = _lean(base) and not np.any(unl) and X.dtype == np.float64
    params = base._validate_params() if lean else None

    def rows_of(rows):
        return X[np.ix_(rows, rows)] if precomputed else X[rows]

    def fresh():
        return copy.copy(base) if lean else clone(base)

    args = [(fresh(), rows_of(rows), yb, None if sw is None else sw[rows], backend, form, params)
            for rows, yb in jobs]
    if n_jobs in (None, 1):
        fitted = [_fit_column(*a) for a in args]  # no joblib dispatch for a sequential fit
    else:
        fitted = Parallel(n_jobs=n_jobs)(delayed(_fit_column)(*a) for a in args)
    for name in ("beta_", "b_", "support_", "free_support_", "bounded_support_", "dual_coef_",
                 "intercept_", "alpha_", "solution_", "eta_", "lowrank_factor_", "margin_",
                 "alpha_spectrum_", "n_support_", "support_vectors_", "n_iter_"):
        estimator.__dict__.pop(name, None)
    estimator.estimators_ = list(fitted)
    estimator.estimator_rows_ = [rows for rows, _ in jobs]
    estimator.codes_ = M
    estimator.multiclass_strategy_ = strategy
    estimator.decoding_ = (decoding, loss)
    if all(hasattr(e, "support_") for e in fitted):
        _libsvm_layout(estimator, X, y_idx, labelled, jobs, fitted, precomputed)
    return estimator


def _libsvm_layout(estimator: Any, X: np.ndarray, y_idx: np.ndarray, labelled: np.ndarray,
                   jobs: list, fitted: list, precomputed: bool) -> None:
    """scikit-learn's (LIBSVM's) multiclass attributes from the binary sub-problems.

    ``support_`` is the union of the sub-problems' support vectors grouped by class
    (``classes_`` order, then index), ``n_support_`` their count per class, ``intercept_`` and
    ``n_iter_`` one entry per sub-problem. One-vs-one ``dual_coef_`` has shape
    ``(n_classes - 1, n_SV)``: for the pair ``(i, j)``, ``i < j``, the coefficient of a class-``i``
    support vector is in row ``j - 1`` and that of a class-``j`` support vector in row ``i``
    (positive = class ``i``, LIBSVM's ``sv_coef``). Other decompositions: one row per output.
    """
    K = estimator.classes_.shape[0]
    sv = np.unique(np.concatenate([rows[e.support_] for (rows, _), e
                                   in zip(jobs, fitted, strict=True)]).astype(np.int64))
    cls = np.where(labelled[sv], y_idx[sv], K)
    sv = sv[np.lexsort((sv, cls))]
    # position of a training row in support_: through the index-sorted copy
    order = np.argsort(sv, kind="stable")
    sv_sorted = sv[order]
    estimator.support_ = sv
    estimator.support_vectors_ = (np.empty((0, 0)) if precomputed else X[sv])
    estimator.n_support_ = np.bincount(y_idx[sv][labelled[sv]], minlength=K).astype(np.int32)
    estimator.n_iter_ = np.array([int(np.ravel(getattr(e, "n_iter_", 0) or 0)[0])
                                  for e in fitted])
    estimator.certificates_ = [getattr(e, "certificate_", None) for e in fitted]
    estimator.intercept_ = np.array([float(np.ravel(e.intercept_)[0]) for e in fitted])
    ovo = estimator.multiclass_strategy_ in ("ovo", "dag")
    coef = np.zeros((K - 1 if ovo else len(fitted), sv.shape[0]))
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    for col, ((rows, _), e) in enumerate(zip(jobs, fitted, strict=True)):
        g = rows[e.support_]
        d = np.ravel(_dense(e.dual_coef_))
        if ovo:
            i, j = pairs[col]
            row = np.where(y_idx[g] == i, j - 1, i)
        else:
            row = np.full(g.shape, col)
        coef[row, order[np.searchsorted(sv_sorted, g)]] = d
    estimator.dual_coef_ = coef


def _scores(estimator: Any, X: Any) -> np.ndarray:
    rows = getattr(estimator, "estimator_rows_", None)
    precomputed = getattr(estimator, "kernel", None) == "precomputed" or getattr(
        estimator, "_samples_fit_", None) is not None  # (a callable kernel on raw samples)
    if precomputed and rows is not None:
        # a precomputed test kernel has one column per training row: each sub-problem
        # sees the columns of its own rows
        X = np.asarray(X, dtype=float)
        return np.column_stack([e.decision_function(X[:, r])
                                for e, r in zip(estimator.estimators_, rows, strict=True)])
    return np.column_stack([e.decision_function(X) for e in estimator.estimators_])


def ovr_from_ovo(S: np.ndarray, n_classes: int) -> np.ndarray:
    """scikit-learn's ``decision_function_shape="ovr"`` transform of one-vs-one scores ``S``
    (positive = lower class of the pair): votes plus the summed confidences squashed into
    ``(-1/3, 1/3)`` so they only break ties."""
    votes = np.zeros((S.shape[0], n_classes))
    conf = np.zeros((S.shape[0], n_classes))
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            votes[:, i] += S[:, k] >= 0
            votes[:, j] += S[:, k] < 0
            conf[:, i] += S[:, k]
            conf[:, j] -= S[:, k]
            k += 1
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


def _vote(S: np.ndarray, n_classes: int) -> np.ndarray:
    """Max-wins voting as LIBSVM's ``svm_predict``: the pair ``(i, j)`` votes ``i`` when its
    score is ``> 0`` and ``j`` otherwise (a score of exactly 0 goes to ``j``); ties between
    vote counts go to the lowest class index."""
    votes = np.zeros((S.shape[0], n_classes), dtype=np.int64)
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            votes[:, i] += S[:, k] > 0
            votes[:, j] += S[:, k] <= 0
            k += 1
    return np.argmax(votes, axis=1)  # ties: the lowest class index


def multiclass_decision(estimator: Any, X: Any) -> np.ndarray:
    """Decision values of a multiclass-fitted estimator.

    One-vs-one strategies: ``(n_samples, n_classes)`` (scikit-learn's ovr transform) when
    ``decision_function_shape == "ovr"`` (default), raw pair scores ``(n_samples, K(K-1)/2)``
    (positive = lower class) when ``"ovo"``. One-vs-rest and codings: the output scores
    ``f_l(x)`` (n_samples, n_outputs).
    """
    S = _scores(estimator, X)
    strategy = estimator.multiclass_strategy_
    if strategy in ("ovo", "dag"):
        shape = getattr(estimator, "decision_function_shape", "ovr") or "ovr"
        if shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo', got {shape!r}")
        if shape == "ovr":
            return ovr_from_ovo(S, estimator.classes_.shape[0])
    return S


def _check_break_ties(estimator: Any) -> None:
    shape = getattr(estimator, "decision_function_shape", "ovr") or "ovr"
    if shape not in ("ovr", "ovo"):
        raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo', got {shape!r}")
    if getattr(estimator, "break_ties", False) and shape == "ovo":
        raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")


def multiclass_predict(estimator: Any, X: Any) -> np.ndarray:
    """Class labels of a multiclass-fitted estimator (max-wins voting with ties to the lowest
    class for one-vs-one, argmax for one-vs-rest, DAG, Hamming or loss-based decoding)."""
    break_ties = bool(getattr(estimator, "break_ties", False))
    _check_break_ties(estimator)
    S = _scores(estimator, X)
    K = estimator.classes_.shape[0]
    decoding, loss = estimator.decoding_
    if break_ties and decoding == "vote":
        # scikit-learn's SVC: the argmax of the ovr-shaped decision values (votes plus
        # squashed confidences) instead of the vote winner with ties to the lowest class
        idx = np.argmax(ovr_from_ovo(S, K), axis=1)
    elif decoding == "vote":
        idx = _vote(S, K)
    elif decoding == "argmax":
        idx = np.argmax(S, axis=1)
    else:
        idx = decode(S, estimator.codes_, method=decoding, loss=loss)
    return estimator.classes_[idx]


def multiclass_predict_proba(estimator: Any, X: Any) -> np.ndarray:
    r"""Class probabilities of a multiclass fit of a probabilistic binary estimator.

    One-vs-rest: ``p_c = P_c(x) / sum_k P_k(x)``. One-vs-one (and DAG): pairwise coupling of
    Wu, Lin & Weng (2004, method 2, as LIBSVM): with ``r_ij = P(i | i or j, x)``,
    ``min_p sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2`` s.t. ``sum p = 1``, solved through its
    KKT system ``[[Q, 1], [1^T, 0]] [p; mu] = [0; 1]``, ``Q_ii = sum_{j != i} r_ji^2``,
    ``Q_ij = -r_ji r_ij``.
    """
    K = estimator.classes_.shape[0]
    P = np.stack([e.predict_proba(X)[:, 1] for e in estimator.estimators_], axis=1)
    if estimator.multiclass_strategy_ == "ovr":
        return P / np.maximum(P.sum(axis=1, keepdims=True), 1e-300)
    if estimator.multiclass_strategy_ not in ("ovo", "dag"):
        raise ValueError("predict_proba needs the ovr, ovo or dag strategy")
    out = np.empty((P.shape[0], K))
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    A = np.zeros((K + 1, K + 1))
    A[:K, K] = A[K, :K] = 1.0
    rhs = np.zeros(K + 1)
    rhs[K] = 1.0
    for n in range(P.shape[0]):
        r = np.zeros((K, K))
        for k, (i, j) in enumerate(pairs):
            r[i, j], r[j, i] = P[n, k], 1.0 - P[n, k]
        Q = -r.T * r
        np.fill_diagonal(Q, (r ** 2).sum(axis=0))
        A[:K, :K] = Q
        p = np.linalg.lstsq(A, rhs, rcond=None)[0][:K]
        p = np.clip(p, 0.0, None)
        out[n] = p / p.sum()
    return out


class _Wrapper(ClassifierMixin, BaseEstimator):
    """Shared code of the standalone multiclass wrappers."""

    _strategy = "ovo"

    def __init__(self, estimator: Any, *, n_jobs: int | None = None) -> None:
        self.estimator = estimator
        self.n_jobs = n_jobs

    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, **fit_params: Any):
        """Fit one binary clone of ``estimator`` per output of the decomposition."""
        if not hasattr(self.estimator, "fit"):
            raise TypeError("estimator must be a primaldual binary classifier")
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_ = np.unique(y)
        if self.classes_.shape[0] < 2:
            raise ValueError("y must contain at least 2 classes, got 1")
        proxy = clone(self.estimator)
        proxy.classes_ = self.classes_
        proxy.multiclass = self._strategy
        proxy.n_jobs = self.n_jobs
        fit_multiclass_estimator(proxy, X, y, sample_weight, fit_params.get("backend"),
                                 fit_params.get("form"))
        self.estimators_ = proxy.estimators_
        self.codes_ = proxy.codes_
        self.multiclass_strategy_ = proxy.multiclass_strategy_
        self.decoding_ = proxy.decoding_
        self.decision_function_shape = getattr(self, "decision_function_shape", "ovr")
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return multiclass_decision(self, X)

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return multiclass_predict(self, X)


class OneVsOneClassifier(_Wrapper):
    """One-vs-one: ``K(K-1)/2`` binary clones, max-wins voting (ties to the lowest class).

    ``decision_function`` returns scikit-learn's ovr transform (``n_classes`` columns)."""

    _strategy = "ovo"


class OneVsRestClassifier(_Wrapper):
    """One-vs-rest: ``K`` binary clones (class ``c`` against the rest), ``argmax_c f_c(x)``."""

    _strategy = "ovr"


class DAGClassifier(_Wrapper):
    """One-vs-one training with decision-DAG prediction [Zhang 8.5.1]: ``K - 1`` evaluations
    per point (first against last candidate, the loser is dropped)."""

    _strategy = "dag"
