"""Laplacian RLS and Laplacian SVM, semi-supervised (docs/formulations.md section 12; Zhang
8.2.26-8.2.31, 8.2.44-8.2.52).

``l`` labelled and ``u`` unlabelled points (internally reordered: labelled first), graph Laplacian
``L_G = D - W`` of the symmetrised k-nearest-neighbour graph on all ``l + u`` points (heat-kernel
weights ``W_ij = exp(-||x_i - x_j||^2 / t)`` or binary), ``J = [I_l 0]`` (``l x (l+u)``, picks
the labelled rows),
``f_i = <w, phi(x_i)> = (K alpha)_i`` with ``w = sum_j alpha_j phi(x_j)`` (the primal variable
``w`` is stored by Zhang's expansion coefficients ``alpha``), ``c_I = gamma_I / (u+l)^2`` and
``f^T L f = sum_{i<j} W_ij (f_i - f_j)^2``.

**Unlabelled points** are passed in ``y`` as ``NaN`` (``None`` in an object array), e.g.
``y = np.r_[y_labelled, np.full(u, np.nan)]``; every other value is a label / target.
The fit works on the rows reordered (the loss rows first); the fitted ``alpha_``, ``beta_``,
``support_`` and ``X_fit_`` are given back in the rows' own order (``dual_beta_`` is over the
loss rows, in their own order).

**Sample weights** ``s_i >= 0`` weight the labelled points' loss terms: the loss ``1/l sum_i
loss_i`` becomes the weighted mean ``sum_i v_i loss_i`` with ``v_i = s_i / sum_{j<=l} s_j``
(``v_i = 1/l`` for equal weights, so ``sample_weight=None`` is the unweighted problem). Hence
integer weights equal repeating the labelled rows in the loss, and multiplying all weights by
a constant changes nothing. A labelled point with weight 0 contributes nothing to the loss but
stays a node of the graph: it is exactly an unlabelled point (``l`` counts the labelled points
of positive weight). ``fit`` treats a negative weight as 0 (LIBSVM drops such rows from the
loss); ``primal``/``dual`` refuse it. The weights of unlabelled points are not used. Repeating
a row also adds a graph node, so weights equal repeated rows only without the graph term
(``gamma_I = 0``).

LapRLS primal and dual (``v_i = 1/l`` without sample weights)::

    min_{w,e}  sum_{i<=l} v_i e_i^2 + gamma_A ||w||^2 + c_I f^T L f
    s.t.       <w, phi(x_i)> + e_i = y_i,  i <= l              [beta_i free]

    max_beta   y^T beta - sum_i beta_i^2 / (4 v_i) - 1/2 beta^T G beta,
               G = J K P^{-1} J^T  (l x l),   P = 2 gamma_A I + 2 c_I L_G K

Lagrangian ``L = primal objective - sum_i beta_i (<w, phi(x_i)> + e_i - y_i)``; stationarity
``2 v_i e_i = beta_i`` (``e = l beta / 2``) and ``P alpha = J^T beta``, so
``alpha = P^{-1} J^T beta``, and the dual's optimality condition ``(G + diag(1/(2 v))) beta = y``
is a KKT system (``H = G + diag(1/C')`` with ``C'_i = 2 v_i = 2/l``, no bias); eliminating
``beta`` gives the closed form
``alpha = (J^T J K + gamma_A l I + gamma_I l/(u+l)^2 L_G K)^{-1} J^T y`` (Zhang's
``(J K + ...)^{-1} J y`` with his square ``J = diag(1..1, 0..0)``), weighted
``alpha = (J^T V J K + gamma_A I + c_I L_G K)^{-1} J^T V y`` with ``V = diag(v)``. With
``gamma_I = 0`` and no unlabelled point this is kernel ridge with ``1/C = gamma_A l``.

LapSVM primal and dual::

    min_{w,b,xi}  sum_{i<=l} v_i xi_i + gamma_A ||w||^2 + c_I f^T L f
    s.t.          y_i (<w, phi(x_i)> + b) >= 1 - xi_i          [beta_i >= 0]
                  xi_i >= 0                                    [mu_i >= 0]      (i <= l)

    max_beta  1^T beta - 1/2 beta^T Y G Y beta
    s.t.      y^T beta = 0        [nu free; nu = -b]
              0 <= beta           [s >= 0]
              beta_i <= v_i       [xi >= 0]

``alpha = P^{-1} J^T Y beta``; ``mu = v - beta``; ``b = -nu`` (or LIBSVM's rule on the dual
gradient). Predictions ``f(x) = sum_{j <= l+u} alpha_j k(x, x_j) + b``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.neighbors import kneighbors_graph
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_array, validate_data

from .. import model as pm
from ..model.structure import KKTSystem
from ..solution import Solution
from ..validation import NumericalTroubleError, check_precomputed_kernel
from ._base import (
    BinaryClassifier,
    FitData,
    KernelMethod,
    Recovered,
    Regressor,
    atomic_fit,
    bias_from_gradient,
    support_split,
)
from ._codings import unlabelled_mask
from ._params import KERNEL, MULTICLASS, RUN, check_nonnegative, check_positive, passed_on

__all__ = ["LapRLS", "LapSVC", "graph_laplacian", "unlabelled_mask"]


def graph_laplacian(X: np.ndarray, n_neighbors: int = 6, weights: str = "heat",
                    heat_t: float | None = None) -> sp.csr_matrix:
    """The graph Laplacian ``L_G = D - W`` of the symmetrised k-nearest-neighbour graph
    (scikit-learn ``kneighbors_graph``), with ``W_ij = exp(-||x_i - x_j||^2 / t)``
    (``weights="heat"``; ``t`` defaults to the mean squared k-NN distance) or ``W_ij = 1``
    (``"binary"``); symmetrised by ``W = max(W, W^T)``."""
    X = check_array(X, dtype=np.float64)
    n = X.shape[0]
    if not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 1:
        raise ValueError(f"n_neighbors must be a positive integer, got {n_neighbors!r}")
    if weights not in ("heat", "binary"):
        raise ValueError(f"weights must be 'heat' or 'binary', got {weights!r}")
    k = min(int(n_neighbors), n - 1)
    if k < 1:
        return sp.csr_matrix((n, n))
    if weights == "binary":
        W = kneighbors_graph(X, k, mode="connectivity", include_self=False)
    else:
        G = kneighbors_graph(X, k, mode="distance", include_self=False).tocsr()
        d2 = G.data ** 2
        t = float(np.mean(d2)) if heat_t is None else float(heat_t)
        if not (t > 0):
            t = 1.0 if heat_t is None else t
            if not (t > 0):
                raise ValueError(f"heat_t must be > 0, got {heat_t!r}")
        G.data = np.exp(-d2 / t)
        W = G
    W = W.maximum(W.T).tocsr()
    deg = np.asarray(W.sum(axis=1)).ravel()
    return (sp.diags(deg) - W).tocsr()


def _loss_weights(sample_weight: Any, n: int, unl: np.ndarray) -> np.ndarray | None:
    """``sample_weight`` checked for the problem: ``None`` or a finite vector of ``n`` weights
    ``>= 0`` with a positive weight on at least one labelled point (``ValueError`` naming
    ``sample_weight`` otherwise). The weights of unlabelled points are not used."""
    if sample_weight is None:
        return None
    try:
        sw = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("sample_weight must be a 1-D array of numbers") from None
    if sw.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), got {sw.shape}")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight must be finite (it contains NaN or infinity)")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be >= 0 everywhere (fit drops the labels of "
                         "points with a negative weight, as LIBSVM; the problem does not)")
    if not np.any(sw[~unl] > 0):
        raise ValueError("sample_weight: every labelled point has weight zero (or below); at "
                         "least one labelled point needs a weight > 0")
    return sw


#: the symbols of the Laplacian primals and duals that no variable or data defines
_GRAPH_DEF = ("f_j = ⟨w, φ(x_j)⟩ over all l+u points (labelled first, i = 1..l), W the graph "
              "weights, L_G = D - W the graph Laplacian",
              r"f_j = \langle w, \phi(x_j) \rangle,\ j = 1,\dots,l+u;\ W_{ij} \text{ the graph "
              r"weights},\ L_G = D - W")
_DUAL_DEF_RLS = ("K over all l+u points, J = [I_l 0] (l × (l+u)), P = 2 γ_A I + 2 γ_I/(u+l)² L_G K",
                 r"K \text{ over all } l+u \text{ points},\ J = [I_l\ 0],\ "
                 r"P = 2\gamma_A I + \frac{2\gamma_I}{(u+l)^2} L_G K")
_DUAL_DEF = (_DUAL_DEF_RLS[0] + ", Y = diag(y)", _DUAL_DEF_RLS[1] + r",\ Y = \mathrm{diag}(y)")

_WEIGHT_DEF = ("v_i = sample_weight_i / Σ_j sample_weight_j over the l labelled points "
               "(v_i = 1/l for equal weights)",
               r"v_i = \omega_i / \sum_j \omega_j,\ \omega \text{ the sample weights of the "
               r"labelled points } (v_i = 1/l \text{ for equal weights})")


def _solve_P(P: np.ndarray, B: np.ndarray, est: Any) -> np.ndarray:
    """``P^{-1} B`` for ``P = 2 gamma_A I + 2 c_I L_G K``; a numerically singular ``P`` (badly
    scaled features or gamma_A) is reported as numerical trouble, never a raw LinAlgError."""
    try:
        out = np.linalg.solve(P, B)
    except np.linalg.LinAlgError as exc:
        out, why = None, str(exc)
    else:
        why = "non-finite values"
    if out is None or not np.all(np.isfinite(out)):
        raise NumericalTroubleError(
            f"{type(est).__name__}: P = 2 gamma_A I + 2 gamma_I/(u+l)^2 L_G K is numerically "
            f"singular ({why}); standardize the features (e.g. sklearn.preprocessing."
            "StandardScaler) or increase gamma_A")
    return out


class _LapBase(KernelMethod):
    """Shared data handling (labelled first, Laplacian, ``P``, ``G``) of LapRLS and LapSVC."""

    # the graph's parameters are checked by graph_laplacian, which builds the graph
    _parameter_constraints = {**KERNEL, **{k: RUN[k] for k in ("backend", "form", "solver",
                                                              "verbose")},
                              "gamma_A": check_positive, "gamma_I": check_nonnegative,
                              "n_neighbors": passed_on, "graph_weights": passed_on,
                              "heat_t": passed_on}

    def _upper(self, data: FitData) -> np.ndarray:
        return np.full(data.N, np.inf)

    def _split(self, X: Any, y: Any, sample_weight: Any = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(X reordered, y of the loss rows, their weights s, order)``: the labelled points
        with a positive weight first (the ``l`` rows of the loss), then the unlabelled ones and
        the labelled ones of weight 0 (graph nodes only); ``X_reordered = X[order]`` (a
        precomputed Gram matrix: ``X[order][:, order]``)."""
        X = check_array(X, dtype=np.float64)
        if self.kernel == "precomputed":
            check_precomputed_kernel(X, "X")
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with {X.shape[0]} entries, got shape {y.shape}")
        unl = unlabelled_mask(y)
        if not np.any(~unl):
            raise ValueError("y has no labelled point (all entries are NaN)")
        sw = _loss_weights(sample_weight, X.shape[0], unl)
        loss = ~unl if sw is None else ~unl & (sw > 0)
        order = np.r_[np.flatnonzero(loss), np.flatnonzero(~loss)]
        s = np.ones(int(loss.sum())) if sw is None else sw[loss]
        if self.kernel == "precomputed":  # a Gram matrix: its columns follow its rows
            return X[np.ix_(order, order)], y[loss], s, order
        return X[order], y[loss], s, order

    def _labels(self, y_lab: np.ndarray) -> np.ndarray:
        return np.asarray(y_lab, dtype=float)

    def _prepare(self, X: Any, y: Any, sample_weight: Any = None,
                 params: dict[str, Any] | None = None) -> FitData:
        p = self._validate_params() if params is None else params
        gA, gI = p["gamma_A"], p["gamma_I"]
        Xall, y_lab, s, order = self._split(X, y, sample_weight)
        y_pm = self._labels(y_lab)
        n, l_ = Xall.shape[0], y_pm.shape[0]
        kernel = self._kernel(Xall, p)
        # v_i = s_i / sum_j s_j: the loss is the weighted mean over the l loss rows (1/l for
        # unit weights), so integer weights equal repeated rows and scaling all weights by a
        # constant changes nothing
        v = s / np.sum(s)
        data = FitData(Xall, y_pm, kernel, v, params=p)
        L = graph_laplacian(Xall, p["n_neighbors"], p["graph_weights"], p["heat_t"])
        K = data.gram()
        cI = gI / float(n) ** 2
        P = 2.0 * gA * np.eye(n) + 2.0 * cI * (L @ K)
        KPinv = _solve_P(P.T, K, self).T  # K P^{-1}, symmetric in exact arithmetic
        KPinv = 0.5 * (KPinv + KPinv.T)
        data.extra.update(order=order, l=l_, u=n - l_, L=L, P=P, G=KPinv[:l_, :l_].copy(),
                          cI=cI, gA=gA, weighted=not np.all(v == v[0]))
        return data

    def _set_fitted(self, data: FitData, sol: Solution, rec: Recovered, cert) -> None:
        super()._set_fitted(data, sol, rec, cert)
        # support_ (and its free / bounded parts) index the rows of X as the user passed them,
        # not the fit's order (loss rows first): a precomputed kernel's decision_function reads
        # those columns of the test block, and the multiclass layout those rows of X
        # and alpha_ / beta_ / X_fit_ are in the rows' own order (beta_[support_] is the
        # support vectors' dual_coef_, as for every estimator)
        order = data.extra["order"]
        for k in ("support_", "free_support_", "bounded_support_"):
            setattr(self, k, order[np.asarray(getattr(self, k), dtype=np.intp)])
        for k in ("alpha_", "beta_"):
            v = np.asarray(getattr(self, k))
            out = np.empty_like(v)
            out[order] = v
            setattr(self, k, out)
        inv = np.argsort(order)
        self.X_fit_ = data.X[np.ix_(inv, inv)] if self.kernel == "precomputed" else data.X[inv]

    def _loss_weight_data(self, data: FitData, name: str, root: bool = False) -> pm.Data:
        """``v_i = s_i / sum_j s_j`` (``sqrt(v_i)`` with ``root``) as data printed ``v_i``."""
        v = data.C
        if root:
            return pm.Data(name, np.sqrt(v), txt="√v", tex=r"\sqrt{v}")
        return pm.Data(name, v)

    def _graph_term(self, data: FitData, w: pm.FeatureVariable):
        """``c_I f^T L f = c_I sum_{i<j} W_ij (f_i - f_j)^2`` as a sum of squares."""
        L = sp.triu(data.extra["L"], k=1).tocoo()
        f = w @ pm.phi(data.X)
        cI = pm.Data("c_I", data.extra["cI"], txt="γ_I/(u+l)²", tex=r"\frac{\gamma_I}{(u+l)^2}")
        if L.nnz == 0 or data.extra["cI"] == 0:
            return None
        diff = pm.Data("sqrtW", np.sqrt(-L.data), txt="√W", tex=r"\sqrt{W}") * (f[L.row] - f[L.col])
        diff.txt, diff.tex = "√W_ij (f_i - f_j)", r"\sqrt{W_{ij}} (f_i - f_j)"
        term = pm.sum_squares(diff)
        term.txt, term.tex = "Σ_{i<j} W_ij (f_i - f_j)²", r"\sum_{i<j} W_{ij} (f_i - f_j)^2"
        # its gradient in w, written over the graph's edges (not the per-edge sum of squares)
        term.terms[0].derivative_override = (
            "Σ_{i<j} W_ij (f_i - f_j) (φ(x_i) - φ(x_j))",
            r"\sum_{i<j} W_{ij} (f_i - f_j) \left(\phi(x_i) - \phi(x_j)\right)")
        return cI * term

    def _alpha_from_dual(self, data: FitData, v: np.ndarray) -> np.ndarray:
        """``alpha = P^{-1} J^T v``."""
        n, l_ = data.N, data.extra["l"]
        rhs = np.zeros(n)
        rhs[:l_] = v
        return _solve_P(data.extra["P"], rhs, self)

    def kernel_laplacian(self, X: Any, y: Any, sample_weight: Any = None
                         ) -> tuple[np.ndarray, sp.csr_matrix, int]:
        """``(K, L, l)`` on the reordered data (the ``l`` loss rows first: labelled, positive
        weight)."""
        data = self._prepare(X, y, sample_weight)
        return data.gram(), data.extra["L"], data.extra["l"]

    # ----- fitting: the base pipeline, with unlabelled (NaN) entries allowed in y
    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, backend: str | None = None,
            form: str | None = None):
        """Fit on labelled and unlabelled points (``y = NaN`` marks an unlabelled point).

        Parameters
        ----------
        sample_weight : array-like of shape (n_samples,), optional
            Weights ``s_i`` of the labelled points' loss terms, normalised to ``v_i = s_i /
            sum_j s_j`` over the labelled points (see the module docstring); weight ``<= 0``:
            the point stays in the graph as an unlabelled point. Ignored on unlabelled points.
        backend, form : str, optional
            Override the constructor's ``backend`` / ``form``.
        """
        params = self._validate_params()
        backend, form = self._backend_form(params, backend, form)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y "
                             "is None")
        y_shape = np.asarray(y).shape
        if len(y_shape) == 2 and y_shape[1] == 1:  # scikit-learn's convention: ravel, warn
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please "
                          "change the shape of y to (n_samples, ), for example using ravel().",
                          DataConversionWarning, stacklevel=2)
            y = np.asarray(y).ravel()
        X = validate_data(self, X, dtype=np.float64)
        self._reset_multiclass_state()
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 allow_all_zero_weights=True)
            # a weight <= 0 removes the point from the loss (LIBSVM drops such rows); here it
            # stays a node of the graph, i.e. it becomes an unlabelled point
            sample_weight = np.maximum(sample_weight, 0.0)
            lab = ~unlabelled_mask(np.asarray(y, dtype=object if np.asarray(y).dtype == object
                                              else None))
            if lab.shape == sample_weight.shape and not np.any(sample_weight[lab] > 0):
                raise ValueError("Invalid input - all labelled samples have zero or negative "
                                 "weights (sample_weight must be > 0 on at least one labelled "
                                 "point)")
        if self._task == "classification":
            y_arr = np.asarray(y, dtype=object if np.asarray(y).dtype == object else None)
            if y_arr.ndim != 1 or y_arr.shape[0] != X.shape[0]:
                raise ValueError(f"y must be 1-D with one entry per row of X: found input "
                                 f"variables with inconsistent numbers of samples "
                                 f"[{X.shape[0]}, {y_arr.shape[0] if y_arr.ndim else 0}]")
            lab = ~unlabelled_mask(y_arr)
            if np.any(lab):
                # labels of the labelled points only (NaN marks unlabelled): a continuous or
                # infinite y is rejected as by every scikit-learn classifier, not split into
                # one class per value
                y_lab = y_arr[lab]
                if y_lab.dtype == object and all(isinstance(v, (int, float, np.number))
                                                 and not isinstance(v, bool) for v in y_lab):
                    y_lab = y_lab.astype(float)
                check_classification_targets(y_lab)
            classes = np.unique(y_arr[lab]) if np.any(lab) else np.array([])
            if classes.shape[0] > 2:
                # more than two labelled classes: binary LapSVMs on the same graph, decoded as
                # the estimator's multiclass strategy (unlabelled rows kept in every one)
                self.classes_ = classes
                return self._fit_multiclass(X, y_arr, sample_weight, backend, form)
        self._fit_binary(X, y, sample_weight, backend, form, params)
        return self


class LapRLS(_LapBase, Regressor):
    """Laplacian regularised least squares (docs/formulations.md section 12).

    Primal ``min sum_{i<=l} v_i e_i^2 + gamma_A ||w||^2 + gamma_I/(u+l)^2 f^T L f  s.t.
    <w, phi(x_i)> + e_i = y_i [beta_i free]``; dual ``max y^T beta - sum_i beta_i^2/(4 v_i) -
    1/2 beta^T J K P^{-1} J^T beta``; ``alpha = P^{-1} J^T beta`` =
    ``(J^T J K + gamma_A l I + gamma_I l/(u+l)^2 L_G K)^{-1} J^T y`` for ``v_i = 1/l``. Unlabelled
    points: ``y = NaN``. ``v_i = s_i / sum_j s_j`` with ``s = sample_weight`` (``1/l``
    without): the loss is the weighted mean of the squared errors; a labelled point of weight 0
    is an unlabelled point (module docstring).

    Parameters
    ----------
    gamma_A : float, default 1e-2
        Ambient (RKHS) regularisation; ``gamma_A l = 1/C`` of kernel ridge.
    gamma_I : float, default 1.0
        Intrinsic (graph) regularisation; 0 gives kernel ridge on the labelled points.
    kernel, gamma, degree, coef0 : kernel specification.
    n_neighbors : int, default 6
    graph_weights : {"heat", "binary"}, default "heat"
    heat_t : float, optional
        Heat-kernel width ``t`` (default: mean squared k-NN distance).
    backend : {"auto", "cvxpy", "kkt"}, form : {"dual", "primal"}, solver, verbose
    """

    _name = "LapRLS"

    def __init__(self, gamma_A: float = 1e-2, gamma_I: float = 1.0, kernel: Any = "rbf",
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0, n_neighbors: int = 6,
                 graph_weights: str = "heat", heat_t: float | None = None, backend: str = "auto",
                 form: str = "dual", solver: str | None = None, verbose: bool = False) -> None:
        self._store_init_args(locals())

    def _kkt(self, data: FitData) -> KKTSystem:
        C = 2.0 / data.extra["l"] if not data.extra["weighted"] else 2.0 * data.C
        return KKTSystem(None, data.extra["G"], C, data.y.copy(), sign=None, bias=False,
                         variable="beta", multipliers={})

    def kkt_system(self, X: Any, y: Any, sample_weight: Any = None) -> KKTSystem:
        """``(G + diag(1/(2 v))) beta = y`` (``G = J K P^{-1} J^T``, precomputed:
        ``kernel=None``; ``1/(2 v_i) = l/2`` for unit weights)."""
        return self._kkt(self._prepare(X, y, sample_weight))

    def _primal(self, data: FitData) -> pm.Problem:
        l_ = data.extra["l"]
        w, e = pm.FeatureVariable("w", data.kernel, data.X), pm.Variable("e", l_)
        e.dim_txt = "l"
        Y = pm.Data("y", data.y)
        gA = pm.Data("gamma_A", data.extra["gA"], txt="γ_A", tex=r"\gamma_A")
        if data.extra["weighted"]:
            # Σ_i v_i e_i² = Σ_i (√v_i e_i)², printed as the weighted sum it is
            loss = pm.sum_squares(self._loss_weight_data(data, "sqrt_v", root=True) * e)
            loss.txt = loss.terms[0].txt = "Σ_i v_i e_i²"
            loss.tex = loss.terms[0].tex = r"\sum_{i} v_i e_i^2"
        else:
            inv_l = pm.Data("1/l", 1.0 / l_, txt="1/l", tex=r"\frac{1}{l}")
            loss = inv_l * pm.sum_squares(e)
        obj = loss + gA * pm.norm2(w)
        g = self._graph_term(data, w)
        if g is not None:
            obj = obj + g
        f_lab = w @ pm.phi(data.X)[:l_]
        P = pm.Problem(obj, [(f_lab + e == Y).named("beta", "i = 1..l")], "min",
                       f"{self._name} primal", variables=[w, e])
        P.definitions.append(_GRAPH_DEF)
        if data.extra["weighted"]:
            P.definitions.append(_WEIGHT_DEF)
        return P

    def _dual(self, data: FitData) -> pm.Problem:
        l_ = data.extra["l"]
        bt = pm.Variable("beta", l_)
        bt.dim_txt = "l"
        Y = pm.Data("y", data.y)
        G = pm.GramOperator(matrix=data.extra["G"])
        if data.extra["weighted"]:
            # Σ_i β_i²/(4 v_i) = Σ_i (β_i / (2 √v_i))²
            q = pm.sum_squares(pm.Data("inv_2sqrt_v", 0.5 / np.sqrt(data.C), txt="1/(2√v)",
                                       tex=r"\frac{1}{2\sqrt{v}}") * bt)
            q.txt = q.terms[0].txt = "Σ_i β_i²/(4 v_i)"
            q.tex = q.terms[0].tex = r"\sum_{i} \frac{\beta_i^2}{4 v_i}"
        else:
            q = pm.Data("l/4", l_ / 4.0, txt="l/4", tex=r"\frac{l}{4}") * pm.sum_squares(bt)
        obj = (pm.dot(Y, bt) - q
               - 0.5 * pm.quad_form(bt, G, txt="βᵀ(J K P⁻¹ Jᵀ)β",
                                    tex=r"\beta^T (J K P^{-1} J^T) \beta"))
        D = pm.Problem(obj, [], "max", f"{self._name} dual")
        D.definitions.append(_DUAL_DEF_RLS)
        if data.extra["weighted"]:
            D.definitions.append(_WEIGHT_DEF)
        return D

    def _rec(self, data: FitData, bt: np.ndarray, alpha: np.ndarray | None = None) -> Recovered:
        alpha = self._alpha_from_dual(data, bt) if alpha is None else alpha
        # stationarity in e: 2 v_i e_i = beta_i (v_i = 1/l: e = l beta / 2)
        return Recovered(alpha, 0.0, {"alpha": alpha}, {"w": alpha, "e": bt / (2.0 * data.C)},
                         {"beta": bt}, {"beta": bt}, {"dual_beta": bt})

    def _from_dual(self, data: FitData, sol: Solution) -> Recovered:
        return self._rec(data, np.asarray(sol.values["beta"], dtype=float))

    def _from_primal(self, data: FitData, sol: Solution) -> Recovered:
        bt = np.asarray(sol.multipliers["beta"], dtype=float)
        rec = self._rec(data, bt, np.asarray(sol.values["w"], dtype=float))
        rec.primal_point = dict(sol.values)
        rec.primal_multipliers = dict(sol.multipliers)
        return rec


class LapSVC(_LapBase, BinaryClassifier):
    """Laplacian SVM (docs/formulations.md section 12).

    Primal ``min sum_i v_i xi_i + gamma_A ||w||^2 + gamma_I/(u+l)^2 f^T L f  s.t.
    y_i (<w, phi(x_i)> + b) >= 1 - xi_i [beta_i >= 0], xi_i >= 0 [mu_i >= 0]`` (i <= l); dual
    ``max 1^T beta - 1/2 beta^T Y J K P^{-1} J^T Y beta  s.t.  y^T beta = 0 [nu = -b],
    0 <= beta_i <= v_i``; ``alpha = P^{-1} J^T Y beta``. ``v_i = s_i / sum_j s_j`` with
    ``s = sample_weight`` (``v_i = 1/l`` without): a per-sample box, as C-SVC's ``C_i``; a
    labelled point of weight 0 is an unlabelled point (module docstring). Unlabelled points:
    ``y = NaN`` (or ``None`` in an object array of labels).

    Parameters
    ----------
    gamma_A : float, default 1e-2
    gamma_I : float, default 1.0
    kernel, gamma, degree, coef0 : kernel specification.
    n_neighbors, graph_weights, heat_t : graph construction (see :func:`graph_laplacian`).
    backend : {"auto", "cvxpy", "smo"}, form : {"dual", "primal"}, solver, verbose
    """

    _name = "LapSVM"
    _parameter_constraints = {**_LapBase._parameter_constraints, **MULTICLASS}

    def __init__(self, gamma_A: float = 1e-2, gamma_I: float = 1.0, kernel: Any = "rbf",
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0, n_neighbors: int = 6,
                 graph_weights: str = "heat", heat_t: float | None = None, backend: str = "auto",
                 form: str = "dual", solver: str | None = None, verbose: bool = False,
                 multiclass: str = "ovo", decision_function_shape: str = "ovr",
                 n_jobs: int | None = None) -> None:
        self._store_init_args(locals())

    def _labels(self, y_lab: np.ndarray) -> np.ndarray:
        classes = np.unique(y_lab)
        if classes.shape[0] != 2:
            raise ValueError(f"LapSVC needs at least 2 classes among the labelled points (with "
                             f"a positive sample_weight), got {classes.shape[0]} class"
                             + ("es" if classes.shape[0] != 1 else ""))
        self._binary_classes = classes
        self.classes_ = classes
        return np.where(y_lab == classes[1], 1.0, -1.0)

    def _primal(self, data: FitData) -> pm.Problem:
        l_ = data.extra["l"]
        w, b = pm.FeatureVariable("w", data.kernel, data.X), pm.Variable("b")
        xi = pm.Variable("xi", l_)
        xi.dim_txt = "l"
        Y = pm.Data("y", data.y)
        gA = pm.Data("gamma_A", data.extra["gA"], txt="γ_A", tex=r"\gamma_A")
        if data.extra["weighted"]:
            loss = pm.vsum(self._loss_weight_data(data, "v") * xi)
        else:
            loss = pm.Data("1/l", 1.0 / l_, txt="1/l", tex=r"\frac{1}{l}") * pm.vsum(xi)
        obj = loss + gA * pm.norm2(w)
        g = self._graph_term(data, w)
        if g is not None:
            obj = obj + g
        f_lab = w @ pm.phi(data.X)[:l_] + b
        P = pm.Problem(obj, [(Y * f_lab >= 1 - xi).named("beta", "i = 1..l"),
                             (xi >= 0).named("mu", "i = 1..l")],
                       "min", f"{self._name} primal", variables=[w, b, xi])
        P.definitions.append(_GRAPH_DEF)
        if data.extra["weighted"]:
            P.definitions.append(_WEIGHT_DEF)
        return P

    def _dual(self, data: FitData) -> pm.Problem:
        l_ = data.extra["l"]
        bt = pm.Variable("beta", l_)
        bt.dim_txt = "l"
        Y = pm.Data("y", data.y)
        Q = pm.GramOperator(matrix=data.extra["G"] * np.outer(data.y, data.y))
        U = (self._loss_weight_data(data, "v") if data.extra["weighted"]
             else pm.Data("1/l", 1.0 / l_, txt="1/l", tex=r"\frac{1}{l}"))
        obj = pm.vsum(bt) - 0.5 * pm.quad_form(bt, Q, txt="βᵀ(Y J K P⁻¹ Jᵀ Y)β",
                                               tex=r"\beta^T (Y J K P^{-1} J^T Y) \beta")
        D = pm.Problem(obj, [(pm.dot(Y, bt) == 0).named("minus_b"),
                             (bt >= 0).named("s", "i = 1..l"), (bt <= U).named("xi", "i = 1..l")],
                       "max", f"{self._name} dual")
        D.definitions.append(_DUAL_DEF)
        if data.extra["weighted"]:
            D.definitions.append(_WEIGHT_DEF)
        return D

    def _rec(self, data: FitData, bt: np.ndarray, b: float,
             alpha: np.ndarray | None = None) -> Recovered:
        l_ = data.extra["l"]
        alpha = self._alpha_from_dual(data, bt * data.y) if alpha is None else alpha
        f = data.kmatvec(alpha)[:l_] + b
        xi = np.maximum(0.0, 1.0 - data.y * f)
        return Recovered(alpha, b, {"alpha": alpha}, {"w": alpha, "b": b, "xi": xi},
                         {"beta": bt, "mu": data.C - bt}, {"beta": bt}, {"dual_beta": bt})

    def _set_fitted(self, data: FitData, sol: Solution, rec: Recovered, cert) -> None:
        super()._set_fitted(data, sol, rec, cert)
        # support vectors are the labelled points with beta_i > 0 (the multipliers of the
        # margin constraints), not the l + u expansion coefficients of w
        l_ = data.extra["l"]
        sv, free, bnd = support_split(self.dual_beta_, data.C[:l_])
        self.dual_support_, self.dual_free_support_, self.dual_bounded_support_ = sv, free, bnd
        cert.extra.update({"#SV": len(sv), "#SV free": len(free), "#SV bounded": len(bnd)})

    def _from_dual(self, data: FitData, sol: Solution) -> Recovered:
        bt = np.asarray(sol.values["beta"], dtype=float)
        if "minus_b" in sol.multipliers:
            b = -float(np.asarray(sol.multipliers["minus_b"]).ravel()[0])
        else:
            Qb = (data.extra["G"] * np.outer(data.y, data.y)) @ bt
            b = bias_from_gradient(Qb - 1.0, data.y, bt, data.C)
        return self._rec(data, bt, b)

    def _from_primal(self, data: FitData, sol: Solution) -> Recovered:
        bt = np.asarray(sol.multipliers["beta"], dtype=float)
        b = float(np.asarray(sol.values["b"]).ravel()[0])
        rec = self._rec(data, bt, b, np.asarray(sol.values["w"], dtype=float))
        rec.primal_point = dict(sol.values)
        rec.primal_multipliers = dict(sol.multipliers)
        return rec
