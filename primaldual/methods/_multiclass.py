r"""The multiclass decomposition of a binary estimator, below the estimators that use it.

A binary classifier of :mod:`primaldual.methods` fitted on more than two classes (its
``multiclass`` / ``coding`` attributes) is fitted once per column of a code matrix and its scores
decoded to a class. Here: the strategy's code matrix and per-sample weights,
:func:`fit_multiclass_estimator` (the sub-problems, the lean one-vs-one pairs on their threads,
the shared Gram matrix) and scikit-learn's multiclass attributes of the fit. The code matrices
and decoding live in :mod:`._codings` (re-exported by :mod:`primaldual.multiclass.codings`), the
predict helpers in :mod:`._multiclass_predict` (re-exported by
:mod:`primaldual.multiclass.estimators`); both are importable from here too. All of it lives
under the binary estimators: :mod:`primaldual.multiclass` wraps the estimators, and the
estimators ask nothing of it (docs/architecture.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ..kernels.gram import one_blas_thread, one_blas_thread_on_demand, want_one_blas_thread
from ..kernels.pool import run_in_order
from ._codings import CODINGS, check_codes, code_matrix, decode, unlabelled_mask
from ._fit import _dense
from ._multiclass_predict import (
    multiclass_decision,
    multiclass_predict,
    multiclass_predict_proba,
    ovr_from_ovo,
)
from ._pair import _SHAPES as _PAIR_SHAPES
from ._pair import fit_pair, pair_route, pair_threads
from ._params import check_class_weight_keys

__all__ = ["CODINGS", "STRATEGIES", "code_matrix", "decode", "fit_multiclass_estimator",
           "multiclass_decision", "multiclass_predict", "multiclass_predict_proba",
           "ovr_from_ovo", "unlabelled_mask"]


# =============================================================================================
# Generic multiclass decompositions for ANY primaldual binary classifier.
#
# Every decomposition is a code matrix M (n_classes, n_outputs) with entries in {-1, 0, +1}:
# output l is a binary sub-problem on the rows i with M[y_i, l] != 0, labelled +1 where
# M[y_i, l] = +1 (the binary clone sees the integer labels {0, 1}, so its ``classes_[1] = 1`` is
# the +1 side and ``f_l(x) > 0`` votes for the classes coded +1). One-vs-one is code_matrix("ovo")
# (pair (i, j), i < j: class i is +1, so a positive score votes for the LOWER class, as LIBSVM's
# and scikit-learn's ``decision_function_shape="ovo"``), one-vs-rest is code_matrix("ova").
# =============================================================================================

#: Multiclass strategies of the generic decomposition (``multiclass`` attribute).
STRATEGIES = ("ovo", "ovr", "dag")
MC_ATTRS = ("estimators_", "codes_", "multiclass_strategy_", "decoding_")


def _unlabelled(y: np.ndarray) -> np.ndarray:
    """Unlabelled entries (``NaN`` / ``None``): the Laplacian methods' own rule."""
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
            M = check_codes(coding).astype(np.int8)
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


#: classes whose ``fit`` is the shared pipeline (:meth:`~primaldual.methods._base.KernelMethod.
#: fit`), and mixins whose ``fit`` hands in-memory input to it unchanged (the Dask route of
#: CSVC / EpsilonSVR takes ``dask.array`` input only; a sub-problem's rows are numpy)
_SHARED_FITS = ("KernelMethod", "BinaryClassifier")
_DELEGATING_FITS = ("DaskLowRankMixin",)


def _lean(est: Any) -> bool:
    """The estimator fits through the shared pipeline (:meth:`~primaldual.methods._base.
    KernelMethod._fit_subproblem` skips the second validation of rows already checked): the
    first ``fit`` along its class's MRO is the shared one, or reaches it through mixins that
    only delegate in-memory input."""
    return hasattr(est, "_fit_subproblem") and _lean_class(type(est))


@functools.cache
def _lean_class(klass: type) -> bool:
    """The MRO test of :func:`_lean` (read once per class)."""
    for cls in klass.__mro__:
        fit = cls.__dict__.get("fit")
        if fit is None:
            continue
        owner = getattr(fit, "__qualname__", "").split(".")[0]
        if owner in _SHARED_FITS:
            return True
        if owner not in _DELEGATING_FITS:
            return False
    return False


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
    * ``n_jobs``: ``None`` (default) or ``1``: the sub-problems are fitted in this process,
      and with ``None`` the lean one-vs-one pairs of C-SVC / nu-SVC run side by side on the
      CPUs left free (:func:`~._pair.pair_threads`; the same model, bit for bit; the fitted
      ``pair_threads_`` says how many threads ran them); other values: sub-problems run
      through :class:`joblib.Parallel` (so ``joblib.parallel_config(backend="dask")`` sends
      them to a Dask cluster).

    ``validated``: the estimator's parameters as its ``fit`` validated them (with ``gamma``
    resolved); given, the sub-problems reuse them instead of validating their copy again.

    ``class_weight`` is applied over the full multiclass problem (scikit-learn's convention)
    and passed to the clones as sample weights. Unlabelled rows (``NaN``, semi-supervised
    methods) are kept in every sub-problem.

    Sub-problems fitted in this process on dense rows with a built-in kernel share one Gram
    matrix ``K = kernel(X)`` of the training set when it is small (:func:`_shared_gram`, at
    most :data:`SHARED_GRAM_MAX_N` rows and ``cache_size`` megabytes): each reads its kernel
    matrix ``K[rows][:, rows]`` from it (the SMO backend its columns, recovery and
    certificate their products) instead of evaluating the kernel again.
    """
    classes, y_idx, unl = _class_indices(estimator, y)
    any_unl = bool(unl.any())
    labelled = ~unl
    M, strategy, decoding, loss = _resolve_codes(estimator, classes.shape[0])
    sw = _class_sample_weight(estimator, y_idx, classes, sample_weight, labelled)
    params = estimator.get_params(deep=False)
    updates = _sub_updates(estimator, params, X)
    base = _unfitted_copy(estimator, params, updates)
    precomputed = getattr(estimator, "kernel", None) == "precomputed"
    jobs = _jobs(M, y_idx, unl, any_unl)
    n_jobs = getattr(estimator, "n_jobs", None)
    sequential = n_jobs in (None, 1)
    # the rows are validated once, here; each sub-problem gets a copy of the unfitted base
    # (its parameters validated once) instead of a clone that validates everything again
    lean = _lean(base) and not any_unl and X.dtype == np.float64
    if not lean:
        sub_params = None
    elif validated is not None:  # the parent's validated parameters, with the same updates
        sub_params = {**validated, **{k: v for k, v in updates.items() if k in validated}}
    else:
        sub_params = base._validate_params()
    # a shared Gram matrix is considered for sequential dense fits (decided after the first
    # sub-problem, from the share of its rows that became support vectors)
    share = (lean and sequential and not precomputed
             and _may_share_gram(base, X, sub_params, backend, form, len(jobs)))
    if sub_params is not None and isinstance(sub_params.get("kernel"), str) \
            and not precomputed and not sp.issparse(X):
        # one kernel object for every sub-problem (what each would build from these params)
        sub_params = {**sub_params, "_kernel": base._kernel(X, sub_params)}
    subs = _SubProblems(base, X, lean, precomputed, sub_params, sw, backend, form)
    if sequential:
        fitted, threads = _fit_in_process(subs, jobs, share, n_jobs)
    else:
        from joblib import Parallel, delayed

        fitted = Parallel(n_jobs=n_jobs)(delayed(_fit_column)(*subs.args_of(rows, yb))
                                         for rows, yb in jobs)
        threads = 1  # (joblib's workers: one sub-problem each)
    subs.sg = None  # (the sub-problems keep no reference to it)
    for name in ("beta_", "b_", "support_", "free_support_", "bounded_support_", "dual_coef_",
                 "intercept_", "alpha_", "solution_", "eta_", "lowrank_factor_", "margin_",
                 "alpha_spectrum_", "n_support_", "support_vectors_", "n_iter_"):
        estimator.__dict__.pop(name, None)
    estimator.estimators_ = list(fitted)
    estimator.pair_threads_ = threads
    estimator.estimator_rows_ = [rows for rows, _ in jobs]
    estimator.codes_ = M
    estimator.multiclass_strategy_ = strategy
    estimator.decoding_ = (decoding, loss)
    if all(hasattr(e, "support_") for e in fitted):
        _libsvm_layout(estimator, X, y_idx, labelled, jobs, fitted, precomputed)
    return estimator


def _class_indices(estimator: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(classes, y_idx, unlabelled)``: the classes of the labelled rows (set as the
    estimator's ``classes_`` when some rows are unlabelled), each row's class index (0 for an
    unlabelled row) and the mask of unlabelled rows."""
    classes = estimator.classes_
    y = np.asarray(y)
    unl = _unlabelled(y)
    if unl.any():
        labelled = ~unl
        classes = np.unique(y[labelled])
        estimator.classes_ = classes
        y_idx = np.zeros(y.shape[0], dtype=np.int64)
        y_idx[labelled] = np.searchsorted(classes, y[labelled])
    else:  # (every row labelled: no masks)
        y_idx = np.searchsorted(classes, y).astype(np.int64, copy=False)
    return classes, y_idx, unl


def _sub_updates(estimator: Any, params: dict, X: Any) -> dict[str, Any]:
    """The parameters a sub-problem's copy differs in: no ``class_weight`` (folded into the
    sample weights over the full problem), no ``n_jobs``, and ``gamma="scale"``/``"auto"``
    resolved ONCE on the full X (scikit-learn), not per sub-problem."""
    updates: dict[str, Any] = {k: None for k in ("class_weight", "n_jobs") if k in params}
    if "gamma" in params and isinstance(params["gamma"], str):
        gamma = estimator.__dict__.get("_gamma")
        if gamma is None and hasattr(estimator, "_resolve_gamma"):
            gamma = estimator._resolve_gamma(X)
        if gamma is not None and not isinstance(gamma, str):
            updates["gamma"] = float(gamma)
    return updates


def _jobs(M: np.ndarray, y_idx: np.ndarray, unl: np.ndarray, any_unl: bool) -> list:
    """One ``(rows, labels)`` per output of the code matrix: the rows coded ``+-1`` (and every
    unlabelled row, labelled NaN), labels ``1`` where coded ``+1`` and ``0`` where ``-1``."""
    codes = np.ascontiguousarray(M.T)[:, y_idx]        # (n_outputs, n): code of each row
    if any_unl:
        codes[:, unl] = 0
    jobs = []
    for col in range(M.shape[1]):
        code = codes[col]                              # (contiguous: one output's codes)
        if any_unl:
            rows = np.flatnonzero((code != 0) | unl)
            yb = (code[rows] > 0).astype(float)
            yb[unl[rows]] = np.nan
        else:
            rows = np.flatnonzero(code)
            yb = (code[rows] > 0).astype(np.int64)
        jobs.append((rows, yb))
    return jobs


class _SubProblems:
    """What every sub-problem of one multiclass fit shares: the unfitted base estimator, the
    training rows, the validated parameters (``None``: each copy validates its own), the
    sample weights, the route, and the shared Gram matrix once one is built (``sg``)."""

    def __init__(self, base: Any, X: Any, lean: bool, precomputed: bool, params: dict | None,
                 sw: np.ndarray | None, backend: Any, form: Any) -> None:
        self.base, self.X, self.lean, self.precomputed = base, X, lean, precomputed
        self.params, self.sw, self.backend, self.form = params, sw, backend, form
        self.sg: Any = None
        self.both = np.array([0, 1], dtype=np.int64)  # a sub-problem's classes (both present)

    def rows_of(self, rows: np.ndarray) -> Any:
        X = self.X
        return X[np.ix_(rows, rows)] if self.precomputed else X[rows]

    def fresh(self) -> Any:
        base = self.base
        if not self.lean:
            return clone(base)
        # a shallow copy of the unfitted base (copy.copy's result, without the round trip
        # through scikit-learn's pickling hooks __getstate__/__setstate__)
        est = object.__new__(type(base))
        est.__dict__.update(base.__dict__)
        return est

    def args_of(self, rows: np.ndarray, yb: np.ndarray) -> tuple:
        """:func:`_fit_column`'s arguments for the sub-problem on ``rows`` labelled ``yb``."""
        p = self.params
        if p is not None:
            p = dict(p)
            if yb.shape[0] and yb.any() and not yb.all():
                p["_classes"] = self.both.copy()  # (its own array: it becomes classes_)
            if self.sg is not None:
                p["_shared_gram"] = self.sg.subset(rows)
        sw = self.sw
        return (self.fresh(), self.rows_of(rows), yb, None if sw is None else sw[rows],
                self.backend, self.form, p)


def _fit_in_process(subs: _SubProblems, jobs: list, share: bool, n_jobs: Any
                    ) -> tuple[list, int]:
    """The sub-problems fitted in this process, in order: ``(fitted estimators, threads that
    ran the lean pairs)``.

    No joblib dispatch, and one BLAS-thread limit for all sub-problems (a backend that wants
    more threads, the KKT system's Cholesky, sets its own limit inside): from the start on
    larger data; on small data only once a kernel product is large enough to ask for it
    (setting a limit costs 20-40 us, a small sub-problem's whole fit ~0.3 ms)."""
    base, X, sub_params, both = subs.base, subs.X, subs.params, subs.both
    fitted: list[Any] = []
    # the lean route of C-SVC / nu-SVC pairs (._pair), when it applies
    route = pair_route(base, X, sub_params, subs.backend, subs.form, subs.sw) \
        if subs.lean else None
    paired = [route is not None and yb.shape[0] > 0 and bool(yb.any()) and not yb.all()
              for _, yb in jobs]
    # ... and the lean pairs side by side on the free CPUs, unless n_jobs=1 asks for one
    # thread: the first pair alone when it decides the shared Gram matrix (or is the
    # first of its class, which learns the shape of its dual data), the others on
    # ``threads`` threads, every generic sub-problem on this thread afterwards, in order
    first = 1 if share or type(base) not in _PAIR_SHAPES else 0
    threads = 1 if n_jobs == 1 or route is None else pair_threads(
        [rows.shape[0] for (rows, _), p in zip(jobs[first:], paired[first:], strict=True)
         if p], X.shape[1])
    small = X.size < 1 << 12 and threads == 1
    with one_blas_thread_on_demand() if small else one_blas_thread():
        done: list[Any] = []
        for k, (rows, yb) in enumerate(jobs):
            if share and k == 1 and _gram_pays(fitted[0], jobs, X.shape[0]):
                from ..kernels.gram import SharedGram
                want_one_blas_thread()
                kern = sub_params.get("_kernel")
                subs.sg = SharedGram.of(base._kernel(X, sub_params) if kern is None else kern,
                                        X)
            sg = subs.sg
            if threads > 1 and k == first:
                done = _pairs_side_by_side(jobs[k:], paired[k:], subs.fresh, subs.rows_of,
                                           both, route, sg, threads)
            if k >= first and threads > 1:
                ok, est = done[k - first]
                if ok:
                    fitted.append(est)
                    continue
                if est is not None:
                    raise est  # the first failure, as the loop would have met it
            elif paired[k]:
                est = subs.fresh()
                if fit_pair(est, subs.rows_of(rows), yb, both.copy(), route,
                            None if sg is None else sg.subset(rows)):
                    fitted.append(est)
                    continue
            fitted.append(_fit_column(*subs.args_of(rows, yb)))
    return fitted, threads


def _pairs_side_by_side(jobs: list, paired: list, fresh: Callable, rows_of: Callable,
                        both: np.ndarray, route: dict, sg: Any, threads: int) -> list:
    """The lean pairs among ``jobs`` (``paired``) fitted on ``threads`` threads (this one and
    pool workers, :func:`~primaldual.kernels.pool.run_in_order`), their SMO solves without
    column helpers. One ``(ok, value)`` per job, in order: ``(True, est)`` a fitted pair;
    ``(False, None)`` a job for the generic route (not a lean pair, the lean route declined
    it, or not started after an earlier pair raised); ``(False, exc)`` the exception a pair
    raised."""
    def task(rows: np.ndarray, yb: np.ndarray) -> Callable[[], Any]:
        def run() -> Any:
            est = fresh()
            ok = fit_pair(est, rows_of(rows), yb, both.copy(), route,
                          None if sg is None else sg.subset(rows), helpers=False)
            return est if ok else None
        return run

    lean = [k for k, p in enumerate(paired) if p]
    res = run_in_order([task(*jobs[k]) for k in lean], threads, "pairs")
    out: list[tuple[bool, Any]] = [(False, None)] * len(jobs)
    for k, (ok, v) in zip(lean, res, strict=True):
        out[k] = (ok and v is not None, v)
    return out


#: parameter values a sub-problem may share with its parent (immutable): anything else is
#: deep-copied by :func:`sklearn.base.clone`
_IMMUTABLE = (str, int, float, bool, type(None), np.integer, np.floating)


def _unfitted_copy(estimator: Any, params: dict, updates: dict) -> Any:
    """An unfitted estimator of the same class with ``params`` updated by ``updates``:
    scikit-learn's :func:`~sklearn.base.clone` (parameters deep-copied), or, when every
    parameter is an immutable scalar or string, the constructor called on them directly
    (what ``clone`` does then, without its copies and checks)."""
    new = {**params, **updates}
    if all(isinstance(v, _IMMUTABLE) for v in new.values()):
        return type(estimator)(**new)
    base = clone(estimator)
    base.set_params(**updates)
    return base


#: training sets whose Gram matrix a multiclass fit may compute once for its sub-problems
#: (``8 N^2`` bytes, also bounded by the estimator's ``cache_size``): below the smaller size
#: the kernel columns SMO evaluates per sub-problem cost less than the matrix
SHARED_GRAM_MIN_N = 500
SHARED_GRAM_MAX_N = 3000


def _may_share_gram(base: Any, X: Any, params: dict | None, backend: str | None,
                    form: str | None, n_outputs: int) -> bool:
    """Whether the sub-problems of a multiclass fit may read their kernel matrices from one
    :class:`~primaldual.kernels.SharedGram` of ``X``: dense float64 rows, a built-in kernel
    named by a string, at least three sub-problems, ``SHARED_GRAM_MIN_N <= N <=
    SHARED_GRAM_MAX_N`` and ``8 N^2`` bytes within ``cache_size`` megabytes, solved in the
    dual by SMO (``backend`` ``"auto"`` or ``"smo"``; the other routes use their own)."""
    if params is None or n_outputs < 3 or not isinstance(X, np.ndarray) or X.ndim != 2:
        return False
    N = X.shape[0]
    kernel = params.get("kernel")
    if not isinstance(kernel, str) or kernel == "precomputed" \
            or not SHARED_GRAM_MIN_N <= N <= SHARED_GRAM_MAX_N:
        return False
    cache = params.get("cache_size", 200.0)
    if isinstance(cache, bool) or not isinstance(cache, (int, float)) \
            or 8.0 * N * N > float(cache) * 2**20:
        return False
    try:
        route, how = base._backend_form(params, backend, form)
    except (ValueError, TypeError, AttributeError):
        return False
    return route in ("auto", "smo") and how == "dual"


def _gram_pays(first: Any, jobs: list, N: int) -> bool:
    """After the first sub-problem: the kernel entries SMO is expected to evaluate for the
    others, ``phi sum_l n_l^2`` with ``phi`` the first one's share of support vectors (SMO
    computes a column per support vector at least), exceed the ``N^2 / 2`` of one Gram
    matrix (measured on digits: C-SVC, ``phi ~ 0.14``, no; nu-SVC, ``phi >= nu = 0.5``, yes)."""
    sv = getattr(first, "support_", None)
    n0 = jobs[0][0].shape[0]
    if sv is None or n0 == 0 or getattr(first, "backend_", "smo") != "smo":
        return False
    phi = len(sv) / n0
    rest = float(sum(rows.shape[0] ** 2 for rows, _ in jobs[1:]))
    return phi * rest > 0.5 * float(N) * N


def _first_int(v: Any) -> int:
    """``int(np.ravel(v or 0)[0])``: a sub-problem's ``n_iter_`` (a 1-element array, or a
    number) as one integer."""
    if type(v) is np.ndarray and v.shape == (1,):
        return int(v[0])
    return int(np.ravel(v or 0)[0])


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
    sv_rows = []                                    # each sub-problem's support_ as rows
    for (rows, _), e in zip(jobs, fitted, strict=True):
        g = rows[e.support_]
        sv_rows.append(g)
        is_sv[g] = True
    sv = np.flatnonzero(is_sv)                      # by index, then (stable) by class
    every = bool(labelled.all())                    # (no unlabelled row: y_idx is the class)
    sv_y = y_idx[sv]
    sv = sv[np.argsort(sv_y if every else np.where(labelled[sv], sv_y, K), kind="stable")]
    position = np.zeros(n, dtype=np.int64)          # of a training row in support_
    position[sv] = np.arange(sv.shape[0])
    estimator.support_ = sv
    estimator.support_vectors_ = (np.empty((0, 0)) if precomputed else X[sv])
    sv_y = y_idx[sv]
    estimator.n_support_ = np.bincount(sv_y if every else sv_y[labelled[sv]],
                                       minlength=K).astype(np.int32)
    estimator.n_iter_ = np.array([_first_int(getattr(e, "n_iter_", 0)) for e in fitted])
    estimator.certificates_ = [getattr(e, "certificate_", None) for e in fitted]
    estimator.intercept_ = np.array([float(e.intercept_[0]) if type(e.intercept_) is np.ndarray
                                     and e.intercept_.ndim == 1 else
                                     float(np.ravel(e.intercept_)[0]) for e in fitted])
    ovo = estimator.multiclass_strategy_ in ("ovo", "dag")
    coef = np.zeros((K - 1 if ovo else len(fitted), sv.shape[0]))
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    for col, (g, e) in enumerate(zip(sv_rows, fitted, strict=True)):
        dc = e.dual_coef_   # (a dense float64 array but for sparse input)
        d = dc.ravel() if type(dc) is np.ndarray and dc.dtype == np.float64 else \
            np.ravel(_dense(dc))
        if ovo:
            i, j = pairs[col]
            row = np.where(y_idx[g] == i, j - 1, i)
        else:
            row = np.full(g.shape, col)
        pg = position[g]
        coef[row, pg] = d
        if not precomputed and isinstance(e.__dict__.get("support_vectors_"), np.ndarray):
            # the sub-problem's support vectors as rows of the parent's (a pickle stores the
            # rows once, with the parent: FittedState.__getstate__/__setstate__)
            e._sv_rows = (estimator.support_vectors_, pg)
    estimator.dual_coef_ = coef
