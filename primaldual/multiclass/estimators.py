"""Any binary estimator made multiclass: one-vs-one (LIBSVM's layout and voting), one-vs-rest,
DAG, or any code matrix of :mod:`~primaldual.multiclass.codings`; fitted once per column, the
scores decoded to a class (:func:`fit_multiclass_estimator`, :func:`multiclass_decision`,
:func:`multiclass_predict`, :func:`multiclass_predict_proba`, and the wrappers
:class:`OneVsOneClassifier`, :class:`OneVsRestClassifier`, :class:`DAGClassifier`).
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

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
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from primaldual.kernels.gram import _one_blas_thread
from primaldual.methods._base import _dense, atomic_fit
from primaldual.methods._params import check_class_weight_keys

from .codings import _check_codes, code_matrix, decode

__all__ = ["fit_multiclass_estimator", "multiclass_decision", "multiclass_predict",
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
        check_class_weight_keys(cw, classes)
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
    """Fit one sub-problem; it keeps what predict needs, O(n_SV d): no training rows, no
    problem objects (the teaching views apply to binary fits; the model's ``certificates_``
    keeps each sub-problem's certificate).  Dropped here, so that a joblib worker sends back
    the lean estimator."""
    if params is not None:
        est._fit_subproblem(X, y_bin, sw, backend, form, params)
    else:
        kw: dict[str, Any] = {}
        if sw is not None:
            kw["sample_weight"] = sw
        if backend is not None:
            kw["backend"] = backend
        if form is not None:
            kw["form"] = form
        est.fit(X, y_bin, **kw)
    drop = getattr(est, "_drop_session_state", None)
    if drop is not None:
        drop()
    return est


def fit_multiclass_estimator(estimator: Any, X: np.ndarray, y: np.ndarray,
                             sample_weight: Any = None, backend: str | None = None,
                             form: str | None = None, validated: dict | None = None) -> Any:
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

    ``validated``: the estimator's parameters as its ``fit`` validated them (with ``gamma``
    resolved); given, the sub-problems reuse them instead of validating their copy again.

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
    if not lean:
        params = None
    elif validated is not None:  # the parent's validated parameters, with the same updates
        params = {**validated, **{k: v for k, v in updates.items() if k in validated}}
    else:
        params = base._validate_params()

    def rows_of(rows):
        return X[np.ix_(rows, rows)] if precomputed else X[rows]

    def fresh():
        if not lean:
            return clone(base)
        # a shallow copy of the unfitted base (copy.copy's result, without the round trip
        # through scikit-learn's pickling hooks __getstate__/__setstate__)
        est = object.__new__(type(base))
        est.__dict__.update(base.__dict__)
        return est

    args = [(fresh(), rows_of(rows), yb, None if sw is None else sw[rows], backend, form, params)
            for rows, yb in jobs]
    if n_jobs in (None, 1):
        # no joblib dispatch for a sequential fit; one BLAS-thread limit for all sub-problems
        # when their kernel products are large enough to ask for one each (a backend that
        # wants more threads, the KKT system's Cholesky, sets its own limit inside)
        with _one_blas_thread() if X.size >= 1 << 12 else contextlib.nullcontext():
            fitted = [_fit_column(*a) for a in args]
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
    n = y_idx.shape[0]
    is_sv = np.zeros(n, dtype=bool)
    for (rows, _), e in zip(jobs, fitted, strict=True):
        is_sv[rows[e.support_]] = True
    sv = np.flatnonzero(is_sv)                      # by index, then (stable) by class
    sv = sv[np.argsort(np.where(labelled[sv], y_idx[sv], K), kind="stable")]
    position = np.zeros(n, dtype=np.int64)          # of a training row in support_
    position[sv] = np.arange(sv.shape[0])
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
        coef[row, position[g]] = d
        if not precomputed and isinstance(e.__dict__.get("support_vectors_"), np.ndarray):
            # the sub-problem's support vectors as rows of the parent's (a pickle stores the
            # rows once, with the parent: FittedState.__getstate__/__setstate__)
            e._sv_rows = (estimator.support_vectors_, position[g])
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
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.shape[0] < 2:
            raise ValueError("y must contain at least 2 classes, got 1 class")
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
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Multiclass: :func:`multiclass_decision`.  Two classes: one column, positive for
        ``classes_[1]`` (scikit-learn's binary convention): ``f_1 - f_0`` of the one-vs-rest
        pair, minus the one-vs-one score (positive there means the lower class)."""
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.classes_.shape[0] == 2:
            S = _scores(self, X)
            return S[:, 1] - S[:, 0] if self.multiclass_strategy_ == "ovr" else -S[:, 0]
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
