"""The fitted state of a kernel method: the LIBSVM-layout attributes set after a fit
(:meth:`FittedState._set_fitted`), ``coef_``, ``decision_function`` and its input checks, the KKT
table. Mixed into :class:`~primaldual.methods._base.KernelMethod`.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..certificate import Certificate
from ..kernels import Precomputed, kernel_matvec
from ..solution import Solution
from ..validation import plain_xy
from ._fit import FitData, Recovered, _dense, _n_rows, support_split
from ._kkt_table import kkt_table
from ._multiclass import fit_multiclass_estimator
from ._multiclass_predict import multiclass_decision

_COMPILED: list = []   # [support_layout] once imported (numba at hand)


def _compiled_layout(c: np.ndarray, upper: Any, y: np.ndarray | None, a: np.ndarray
                     ) -> tuple | None:
    """:func:`primaldual.kernels.compiled.support_layout` of plain float64 vectors when numba
    is at hand, else ``None`` (the caller's numpy route: also for a non-finite entry)."""
    if "numba" not in sys.modules:
        return None
    n = c.shape[0]
    for v in (c, upper, a) if y is None else (c, upper, a, y):
        if type(v) is not np.ndarray or v.dtype != np.float64 or v.shape != (n,):
            return None
    if not _COMPILED:
        from ..kernels.compiled import support_layout
        _COMPILED.append(support_layout)
    out = _COMPILED[0](c, upper, a if y is None else y, y is not None, a)
    return None if out[3] < 0 else out


class FittedState:
    """Attributes and predictions of a fitted kernel method (a mixin of ``KernelMethod``).

    Fitted size: what ``predict`` needs is O(n_SV d + N) (support vectors, coefficients, the
    certificate's per-sample residuals). The teaching views of a fit made in this session
    (``kkt_table``, ``side_by_side``, ``solution_.problem``, ``radius_margin_bound``) also need
    the training data and the problem objects; those are *session state*: kept in memory on a
    binary fit, dropped from a multiclass fit's sub-problems, and never pickled
    (:meth:`_drop_session_state`).
    """

    #: ``True`` where a prediction path reads the training rows (KernelRidge's
    #: ``predict(return_std=True)``): ``X_fit_`` is then kept in pickles
    _predict_reads_X_fit: bool = False

    def _drop_session_state(self) -> None:
        """Drop what only the in-session teaching views use: the KKT-table state, the training
        rows ``X_fit_`` (unless a prediction reads them) and the problem objects of
        ``solution_`` (:meth:`~primaldual.solution.Solution.lean`)."""
        _drop_session_entries(self.__dict__, self._predict_reads_X_fit, evaluate=False)

    def __getstate__(self) -> dict:
        state = super().__getstate__()  # type: ignore[misc]  # scikit-learn's (adds version)
        state = dict(state)
        _drop_session_entries(state, self._predict_reads_X_fit)
        if state.get("_sv_rows") is not None:
            # a multiclass sub-problem: its support vectors are rows of the parent's
            # support_vectors_ (pickled once, with the parent), rebuilt on unpickling
            state.pop("support_vectors_", None)
        return state

    def __setstate__(self, state: dict) -> None:
        src = state.get("_sv_rows")
        if src is not None and "support_vectors_" not in state:
            state = dict(state)
            state["support_vectors_"] = src[0][src[1]]
        super().__setstate__(state)  # type: ignore[misc]

    def _training_decision(self, data: FitData, rec: Recovered) -> np.ndarray:
        """The certified ``f`` on the training rows: the low-rank model's ``V eta + b``, else
        ``K[:, S] beta_S + b`` (in the fit's evaluation context this is the product the
        certificate already computed)."""
        if self.eta_ is not None and self.lowrank_factor_ is not None:
            return self.lowrank_factor_.dot(self.eta_) + self.b_  # V eta (C (P eta))
        # scikit-learn's scale of dual_coef_/intercept_ (nu-SVC: 1/rho; 1 otherwise)
        return self._coef_scale(rec) * (data.kmatvec(rec.beta) + rec.b)

    def _expand_rows(self, kept: np.ndarray, X_full: np.ndarray, names: list[str]) -> None:
        """Re-index a fit on the rows ``kept`` to the full training set (zero multipliers)."""
        n = X_full.shape[0]
        for name in names:
            v = getattr(self, name)
            if isinstance(v, np.ndarray) and v.shape[:1] == kept.shape:
                full = np.zeros((n,) + v.shape[1:], dtype=v.dtype)
                full[kept] = v
                setattr(self, name, full)
        for name in ("support_", "free_support_", "bounded_support_"):
            setattr(self, name, kept[getattr(self, name)])
        self.X_fit_ = X_full
        self.alpha_spectrum_ = np.r_[self.alpha_spectrum_, np.zeros(n - kept.shape[0])]

    def _validate_input(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        plain = plain_xy(X, y, self._task == "classification")
        if plain is not None:  # what validate_data would return and set, without its cost
            self.n_features_in_ = plain[0].shape[1]
            self.__dict__.pop("feature_names_in_", None)
            return plain
        X, y = validate_data(self, X, y, dtype=np.float64, accept_sparse=("csr", "csc"),
                             y_numeric=self._task == "regression")
        if self._task == "classification":
            check_classification_targets(y)
        return X, y

    def _fit_multiclass(self, X, y, sample_weight, backend, form, params=None):
        return fit_multiclass_estimator(self, X, y, sample_weight, backend, form, params)

    def _coef_scale(self, rec: Recovered) -> float:
        """Factor from the primal-dual ``(beta, b)`` to scikit-learn's ``(dual_coef_,
        intercept_)`` (1; nu-SVC: ``1/rho``, LIBSVM's normalisation)."""
        return 1.0

    def _set_fitted(self, data: FitData, sol: Solution, rec: Recovered, cert: Certificate
                    ) -> None:
        upper = self._upper(data)
        a = rec.alpha.get("alpha", rec.beta)
        c = rec.beta if "alpha_star" in rec.alpha else a
        if np.shape(upper) != c.shape:
            upper = np.broadcast_to(upper, c.shape)
        by_class = self._task == "classification" and data.y.shape[0] == a.shape[0]
        lay = _compiled_layout(c, upper, data.y if by_class else None, a)
        n_class = None
        if lay is not None:
            # one compiled pass: the same split, grouping and sorted |alpha|
            sv, free, bnd, n_pos, spectrum = lay
            if by_class:
                n_class = [sv.shape[0] - n_pos, n_pos]
        else:
            sv, free, bnd = support_split(c, upper)
            if by_class:
                # LIBSVM's order: support vectors grouped by class (classes_[0] first)
                pos = data.y[sv] > 0
                n_pos = int(np.count_nonzero(pos))
                if 0 < n_pos < sv.shape[0]:
                    sv = np.concatenate([sv[~pos], sv[pos]])
                n_class = [sv.shape[0] - n_pos, n_pos]
            spectrum = np.abs(a)
            spectrum.sort()
        d = self.__dict__   # (the attributes are plain instance attributes)
        for k, v in rec.alpha.items():
            d[k + "_"] = v
        d["beta_"] = rec.beta
        b = float(rec.b)
        d["b_"] = b
        d["support_"] = sv
        d["free_support_"] = free
        d["bounded_support_"] = bnd
        d["support_vectors_"] = data.X[sv]
        # scikit-learn's names with scikit-learn's shapes (the public contract of docs/api.md)
        scale = self._coef_scale(rec)
        coef = rec.beta[sv]
        d["dual_coef_"] = (coef * scale if scale != 1.0 else coef).reshape(1, -1)
        d["intercept_"] = np.array([b * scale])
        d["kernel_"] = data.kernel
        d["X_fit_"] = data.X
        d["solution_"] = sol
        d["certificate_"] = cert
        d["backend_"] = sol.backend
        d["status_"] = sol.status
        n_sv = len(sv)
        if self._task == "classification":
            d["n_support_"] = np.array([n_sv] if n_class is None else n_class, dtype=np.int32)
            d["n_iter_"] = np.array([int(sol.n_iter or 0)])
        else:
            d["n_support_"] = np.array([n_sv], dtype=np.int32)
            d["n_iter_"] = int(sol.n_iter or 0)
        norm_w2 = float(rec.beta @ data.kmatvec(rec.beta))
        d["margin_"] = 2.0 / np.sqrt(norm_w2) if norm_w2 > 0 else np.inf
        d["alpha_spectrum_"] = spectrum[::-1]
        for k, v in rec.extra.items():
            d[k + "_"] = v
        info = sol.info
        if "factor" in info and "eta" in info:
            # low-rank backend: the model is w = eta in the factor's feature space,
            # f(x) = v(x)^T eta + b, O(M) per point (docs/formulations.md 14)
            self.lowrank_factor_ = sol.info["factor"]
            self.eta_ = np.asarray(sol.info["eta"], dtype=float)
            cert.extra.update({"rank": int(sol.info["rank"])})
        else:
            self.lowrank_factor_ = None
            self.eta_ = None
        extra = cert.extra
        extra["#SV"] = n_sv
        extra["#SV free"] = len(free)
        extra["#SV bounded"] = len(bnd)
        extra["b"] = b
        extra["backend"] = sol.backend
        if "route" in info:  # smo: "numba", or "dense" while the numba core is not compiled
            extra["smo route"] = info["route"]
        # what the certificate checked, kept for the per-sample table (kkt_table)
        self._kkt_state = (data, rec.primal_point, rec.primal_multipliers)

    def kkt_table(self):
        """Per-sample complementarity table of this fit: α_i, y_i f(x_i), ξ_i, μ_i, each
        inequality's slack and its product with the multiplier, and the category (non-SV, free
        SV, bounded SV). See :class:`primaldual.teaching.KKTTable` (``str``, ``to_latex``,
        ``to_markdown``)."""
        check_is_fitted(self, "beta_")
        return kkt_table(self)

    @property
    def coef_(self) -> np.ndarray:
        """Primal weights ``w = sum_i beta_i x_i`` per binary sub-problem, shape
        ``(n_classes*(n_classes-1)/2 or 1, n_features)``, read-only (linear kernel only)."""
        if hasattr(self, "estimators_"):
            if self.kernel != "linear":
                raise AttributeError("coef_ is only available with a linear kernel")
            w = np.vstack([e.coef_ for e in self.estimators_])
        else:
            check_is_fitted(self, "beta_")
            if getattr(self.kernel_, "name", "") != "linear":
                raise AttributeError("coef_ is only available with a linear kernel")
            sv = self.support_vectors_  # (sparse: the product without densifying the rows)
            w = np.asarray(_dense(self.dual_coef_) @ (sv if sp.issparse(sv) else _dense(sv)))
        w = np.array(w, dtype=float)
        w.flags.writeable = False
        return w

    def decision_function(self, X: Any) -> np.ndarray:
        """``f(x) = sum_i dual_coef_i k(x, x_i) + intercept_`` (``= (sum_i beta_i k(x, x_i)
        + b)`` times nu-SVC's ``1/rho``)."""
        if hasattr(self, "estimators_"):
            return self._multiclass_decision(X)
        check_is_fitted(self, "beta_")
        X = self._validate_predict(X)
        coef, b = np.ravel(_dense(self.dual_coef_)), float(np.ravel(self.intercept_)[0])
        if getattr(self, "eta_", None) is not None and self.lowrank_factor_ is not None:
            return self.lowrank_factor_.transform(X) @ self.eta_ + self.b_
        if len(self.support_) == 0:
            return np.full(_n_rows(X), b)
        if isinstance(self.kernel_, Precomputed):  # X is the n_test x N kernel block
            return kernel_matvec(self.kernel_, X, coef, columns=self.support_) + b
        Z = self.support_vectors_
        if not (sp.issparse(X) and sp.issparse(Z)):
            Z = _dense(Z)
        return kernel_matvec(self.kernel_, X, coef, Z=Z) + b

    def _validate_predict(self, X: Any) -> Any:
        """``X`` for predict: dense float64; sparse only when fitted on sparse data (as
        scikit-learn's SVC)."""
        samples = getattr(self, "_samples_fit_", None)
        if samples is not None:  # a callable kernel on raw samples: the kernel block
            X = np.asarray(self.kernel(X, samples), dtype=np.float64)
        if sp.issparse(X) and not getattr(self, "_sparse", False):
            raise ValueError(f"cannot use sparse input in {type(self).__name__!r} trained on "
                             "dense data")
        X = validate_data(self, X, dtype=np.float64, reset=False, accept_sparse=("csr", "csc"))
        if sp.issparse(X):
            # a fit that kept its rows sparse predicts from sparse rows too (O(nnz))
            return X.tocsr() if getattr(self, "_sparse_rows", False) else X.toarray()
        return X

    def _multiclass_decision(self, X: Any) -> np.ndarray:
        """Decision values of a multiclass fit (:func:`primaldual.multiclass.
        multiclass_decision`)."""
        X = self._validate_predict(X)
        return multiclass_decision(self, X)


def _drop_session_entries(state: dict, keep_X_fit: bool, evaluate: bool = True) -> None:
    """Remove the session state from an estimator's ``__dict__`` (or its pickled copy):
    ``_kkt_state``, ``X_fit_`` (unless ``keep_X_fit``), and ``solution_`` made lean
    (``evaluate``: its objective value computed first; a multiclass sub-problem skips that,
    its certificate holds the objective values)."""
    state.pop("_kkt_state", None)
    if not keep_X_fit:
        state.pop("X_fit_", None)
    sol = state.get("solution_")
    if isinstance(sol, Solution):
        state["solution_"] = sol.lean(evaluate)
