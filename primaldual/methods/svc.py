"""Hard-margin SVC, C-SVC and L2-SVC (docs/formulations.md sections 1, 2 and 3).

C-SVC primal (``f_i = <w, phi(x_i)> + b``)::

    min_{w,b,xi}  1/2 ||w||^2 + sum_i C_i xi_i
    s.t.          y_i f_i >= 1 - xi_i      [alpha_i >= 0]
                  xi_i >= 0                [mu_i >= 0]

Lagrangian ``L = 1/2||w||^2 + sum C_i xi_i - sum alpha_i (y_i f_i - 1 + xi_i) - sum mu_i xi_i``;
stationarity ``w = sum alpha_i y_i phi(x_i)``, ``y^T alpha = 0``, ``C_i - alpha_i - mu_i = 0``.

Dual::

    max_alpha  1^T alpha - 1/2 alpha^T Q alpha     (Q = D_y K D_y)
    s.t.       y^T alpha = 0                        [nu free;  nu = -b]
               alpha_i >= 0                         [s_i >= 0; s_i = y_i f_i - 1 + xi_i]
               alpha_i <= C_i                       [xi_i >= 0; the primal slack]

Recovery: ``beta_i = alpha_i y_i``; ``b`` = mean of ``y_i - sum_j beta_j K_ji`` over free SVs
(``0 < alpha_i < C_i``), else the LIBSVM midpoint. Hard margin: the same with ``C = inf`` (no
``xi``); non-separable data make the primal infeasible and the dual unbounded, which is reported
as such, never as a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import model as pm
from ..distributed import DaskLowRankClassifierMixin
from ..solution import InfeasibleProblemError
from ..validation import (
    NumericalTroubleError,
    check_precomputed_kernel,
    scale_hint,
    separability_ray,
)
from ._base import (
    BinaryClassifier,
    FitData,
    Recovered,
    _HardMarginMarker,
    bias_from_gradient,
)
from ._params import (
    KERNEL,
    LOWRANK,
    MULTICLASS,
    RUN,
    SMO,
    check_bool,
    check_C_finite,
    check_C_or_inf,
    check_class_weight,
    passed_on,
)


def _margin_expr(data: FitData):
    w = pm.FeatureVariable("w", data.kernel, data.X)
    b = pm.Variable("b")
    Y = pm.Data("y", data.y)
    return w, b, Y, w @ pm.phi(data.X) + b



def _representable_q(est: Any, data: FitData, sol: Any) -> np.ndarray:
    """``Q = D_y K D_y`` for the separability test, refused when ``K`` has underflowed.

    Features of scale ``1e-170`` give kernel values of ``1e-340``, below the smallest float64
    (``5e-324``): ``K`` is then exactly 0 (or subnormal), every ``d`` with ``y^T d = 0`` looks
    like an unbounded dual ray, and "not separable" would be a verdict on rounding, not on
    the data. A ``Q`` whose largest entry is below the smallest normal float is numerical
    trouble."""
    Q = data.y[:, None] * data.gram() * data.y[None, :]
    top = float(np.max(np.abs(Q))) if Q.size else 0.0
    if not top >= np.finfo(np.float64).tiny:
        raise NumericalTroubleError(
            f"{type(est).__name__}: the kernel matrix underflows (largest entry {top:.3g}, "
            "below the smallest normal float64): separability cannot be decided; rescale the "
            "features (e.g. sklearn.preprocessing.StandardScaler)", sol)
    return Q

class CSVC(DaskLowRankClassifierMixin, BinaryClassifier):
    """C-SVC, the L1 soft-margin support-vector classifier (docs/formulations.md section 2).

    Parameters
    ----------
    C : float, default 1.0
        Error weight; per sample ``C_i = C * sample_weight_i * class_weight[y_i]``.
    kernel : str, Kernel or callable, default "rbf"
    gamma : float or {"scale", "auto"}, default "scale"
    degree, coef0 : kernel parameters (polynomial, sigmoid)
    class_weight : dict, "balanced" or None
    tol : float, default 1e-3
        SMO stopping tolerance (maximal violating pair), as LIBSVM.
    max_iter : int, default -1 (no limit)
    backend : {"auto", "cvxpy", "smo", "lowrank"}, default "auto"
    form : {"dual", "primal"}, default "dual"
    solver : str, optional
        CVXPY solver ("CLARABEL", "OSQP", "ECOS", "SCS").
    cache_size : float, default 200 (MB, SMO kernel cache)
    rank, rank_tol : low-rank factor size (an integer, or "auto": grown until the fit stops
        moving, the default of backend "lowrank") / trace tolerance
    factor : {"nystrom", "rpcholesky", "icholesky", "eig"} or LowRankFactor, default "nystrom"
        How the low-rank backend factors ``K ~= V V^T`` (uniform Nystrom: the most accurate
        cheap factor at a given rank), or a factor computed on the training data.
    certify : {"auto", "exact"}, default "auto"
        Low-rank fits: ``certificate_`` certifies the eta-problem that was solved
        (``K ~= V V^T``); ``"exact"`` also certifies the recovered point on the exact kernel
        (``exact_certificate_``, O(N |SV|) kernel evaluations).
    verbose : bool
    multiclass : {"ovo", "ovr", "dag"}, default "ovo"
        Decomposition used when ``y`` has more than two classes (as scikit-learn's SVC).
    decision_function_shape : {"ovr", "ovo"}, default "ovr"
    n_jobs : int, optional
        Binary sub-problems run through joblib (``joblib.parallel_config(backend="dask")``
        sends them to a Dask cluster).
    shrinking : bool, default True
        LIBSVM's shrinking heuristic in the SMO backend.
    probability : bool, default False
        Fit Platt's sigmoid ``P(classes_[1] | f) = 1 / (1 + exp(A f + B))`` on 5-fold
        cross-validated decision values (LIBSVM; multiclass: per pair, then pairwise coupling)
        and enable ``predict_proba`` / ``predict_log_proba``.
    break_ties : bool, default False
        With more than two classes and ``decision_function_shape="ovr"``, predict the argmax of
        ``decision_function`` instead of the vote winner (scikit-learn's SVC).
    random_state : int, RandomState or None
        Seeds the folds of ``probability=True``.
    """
    # sparse X stays sparse on the SMO route (KernelMethod._keeps_sparse)
    _sparse_smo = True

    def __init__(self, C: float = 1.0, kernel: Any = "rbf", gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, class_weight: Any = None, tol: float = 1e-3,
                 max_iter: int = -1, backend: str = "auto", form: str = "dual",
                 solver: str | None = None, cache_size: float = 200.0, rank: int | None = None,
                 rank_tol: float | None = None, verbose: bool = False,
                 multiclass: str = "ovo", decision_function_shape: str = "ovr",
                 n_jobs: int | None = None, shrinking: bool = True, probability: bool = False,
                 break_ties: bool = False, random_state: Any = None,
                 factor: Any = "nystrom", certify: str = "auto") -> None:
        self._store_init_args(locals())

    _name = "C-SVC"
    #: the lean route of its one-vs-one sub-problems (:mod:`._pair`)
    _pair_kind = "csvc"
    # C = inf is the hard margin (as scikit-learn's SVC(C=np.inf))
    _parameter_constraints = {**KERNEL, **RUN, **SMO, **LOWRANK, **MULTICLASS,
                              "C": check_C_or_inf, "class_weight": check_class_weight,
                              # scikit-learn's SVC options (docs/ecosystem.md)
                              "shrinking": check_bool, "probability": check_bool,
                              "break_ties": check_bool, "random_state": passed_on}

    @staticmethod
    def _is_hard(data: FitData) -> bool:
        """``C = inf``: the hard margin (docs/formulations.md section 1), no slack variables."""
        hard = data.extra.get("_hard")
        if hard is None:  # asked by every step of a fit: computed once per FitData
            hard = data.extra["_hard"] = bool(data.C.size) and bool(np.isinf(data.C).all())
        return hard

    # ----- problems
    def _primal(self, data: FitData) -> pm.Problem:
        if self._is_hard(data):
            return HardMarginSVC._primal(self, data)
        w, b, Y, f = _margin_expr(data)
        xi = pm.Variable("xi", data.N)
        C = pm.Data("C", data.C)
        return pm.Problem(0.5 * pm.norm2(w) + pm.vsum(C * xi),
                          [(Y * f >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                          "min", f"{self._name} primal", variables=[w, b, xi])

    def _dual_data(self, data: FitData) -> dict:
        """The numbers the dual is written with (:mod:`._structure` detects its structure once
        per shape and binds it to these): ``y`` and the box ``C`` (the hard margin: ``y``)."""
        if self._is_hard(data):
            return {"y": data.y}
        return {"y": data.y, "C": data.C}

    def _dual(self, data: FitData, values: dict | None = None) -> pm.Problem:
        if self._is_hard(data):
            return HardMarginSVC._dual(self, data, values)
        v = self._dual_data(data) if values is None else values
        a = pm.Variable("alpha", data.N)
        Y, C = pm.Data("y", v["y"]), pm.Data("C", v["C"])
        Q = pm.GramOperator(data.kernel, data.X, sign=v["y"])
        return pm.Problem(pm.vsum(a) - 0.5 * pm.quad_form(a, Q), [
            (pm.dot(Y, a) == 0).named("minus_b"), (a >= 0).named("s"), (a <= C).named("xi")],
            "max", f"{self._name} dual")

    def bound(self) -> float:
        """The radius-margin criterion ``R^2 ||w||^2`` of the fitted binary model (Vapnik &
        Chapelle 2000: ``4 R^2 ||w||^2 / N`` bounds the leave-one-out error rate), with
        ``R`` the radius of the smallest ball enclosing the training points in feature space
        (:func:`primaldual.bounds.radius_margin_bound`; also added to ``certificate_.extra``)."""
        from ..bounds import radius_margin_bound
        return radius_margin_bound(self)

    # ----- numerical trouble (docs/reliability.md)
    def _solve(self, data: FitData, backend: str, form: str, **opts: Any):
        """The shared pipeline, plus: an infeasible/unbounded status with finite ``C`` is
        impossible for this box-bounded dual, so it is reported as numerical trouble with a
        scaling hint; with ``C = inf`` (hard margin) the error carries the unbounded dual ray
        ``d`` (``d >= 0``, ``y^T d = 0``, ``d^T Q d ~ 0``) in ``solution.multipliers["alpha"]``
        and ``solution.info["ray"]``, whichever backend reported the status."""
        try:
            out = super()._solve(data, backend, form, **opts)
            sol = out[0]
            if sol.status != "optimal" and self._is_hard(data):
                # hard margin stopped short (SMO at max_iter on features of 1e12, the low-rank
                # solver's max_iter with P ~ 1e25): non-separable data is the likely cause;
                # said only with a verified ray, else the fit is returned
                Q = _representable_q(self, data, sol)
                ray, val = separability_ray(Q, data.y)
                if ray is not None:
                    sol.info["ray"] = ray
                    sol.info["ray_quadratic"] = val
                    sol.info["ray_verified"] = True
                    sol.multipliers = {"alpha": ray}
                    raise InfeasibleProblemError(
                        f"{type(self).__name__}: the {form} problem stopped with status "
                        f"{sol.status!r} and an unbounded dual ray exists (hard margin: the "
                        "classes are not linearly separable in feature space)", sol)
            return out
        except InfeasibleProblemError as exc:
            if exc.solution.info.get("ray_verified"):  # raised just above, ray checked
                raise
            # only the hard margin gets here (finite C: NumericalTroubleError in the base);
            # "not separable" is said only with a verified ray, found on the scale-free Q
            sol = exc.solution
            Q = _representable_q(self, data, sol)
            ray, val = separability_ray(Q, data.y)
            if ray is None:
                raise NumericalTroubleError(
                    f"{type(self).__name__}: the solver reported the {form} problem "
                    f"{sol.status}, but no unbounded dual ray exists (the classes' convex hulls "
                    f"are at squared distance {val:.3g} relative to max|Q|): the data are "
                    "separable and the solve failed numerically; "
                    + scale_hint(float(np.max(np.abs(Q))), float("inf")), sol) from exc
            sol.info["ray"] = ray
            sol.info["ray_quadratic"] = val
            sol.multipliers = {"alpha": ray}
            raise

    # ----- recovery
    def _bias(self, data: FitData, a: np.ndarray) -> float:
        if self._is_hard(data):
            return HardMarginSVC._bias(self, data, a)
        beta = a * data.y
        grad = data.y * data.kmatvec(beta) - 1.0  # gradient of 1/2 a^T Q a - 1^T a
        return bias_from_gradient(grad, data.y, a, data.C)

    def _from_alpha(self, data: FitData, a: np.ndarray, b: float) -> Recovered:
        if self._is_hard(data):
            return HardMarginSVC._from_alpha(self, data, a, b)
        beta = a * data.y
        f = data.kmatvec(beta) + b
        xi = np.maximum(0.0, 1.0 - data.y * f)
        return Recovered(beta, b, {"alpha": a},
                         {"w": beta, "b": b, "xi": xi},
                         {"alpha": a, "mu": data.C - a},
                         {"alpha": a})

    def _from_dual(self, data: FitData, sol) -> Recovered:
        a = np.asarray(sol.values["alpha"], dtype=float)
        if "minus_b" in sol.multipliers:
            # the multiplier of y^T alpha = 0 is nu = -b (an interior-point solver returns it to
            # full accuracy; the free-SV average is the fallback, as in LIBSVM)
            b = -float(np.asarray(sol.multipliers["minus_b"]).ravel()[0])
        else:
            b = self._bias(data, a)
        return self._from_alpha(data, a, b)

    def _from_primal(self, data: FitData, sol) -> Recovered:
        a = np.asarray(sol.multipliers["alpha"], dtype=float)
        b = float(sol.values["b"][0])
        rec = self._from_alpha(data, a, b)
        rec.primal_point = dict(sol.values)
        rec.primal_multipliers = dict(sol.multipliers)
        return rec


class HardMarginSVC(_HardMarginMarker, CSVC):
    """Hard-margin SVC (docs/formulations.md section 1)::

        min 1/2 ||w||^2   s.t.  y_i (<w, phi(x_i)> + b) >= 1   [alpha_i >= 0]
        max 1^T alpha - 1/2 alpha^T Q alpha   s.t.  y^T alpha = 0 [nu = -b], alpha >= 0 [s]

    Support vectors lie on the margin; ``b`` is their mean of ``y_i - sum_j beta_j K_ji``.
    Non-separable data: the primal is infeasible and the dual unbounded; ``fit`` raises
    :class:`~primaldual.solution.InfeasibleProblemError` carrying the solution (status and ray).
    """
    # sparse X is densified: only C-SVC's own dual is kept sparse
    _sparse_smo = False

    _name = "hard-margin SVC"

    def __init__(self, kernel: Any = "linear", gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, tol: float = 1e-3, max_iter: int = -1,
                 backend: str = "auto", form: str = "dual", solver: str | None = None,
                 cache_size: float = 200.0, verbose: bool = False,
                 multiclass: str = "ovo", decision_function_shape: str = "ovr",
                 n_jobs: int | None = None) -> None:
        self._store_init_args(locals())

    _parameter_constraints = {**KERNEL, **RUN, **SMO, **MULTICLASS}

    def _box_C(self, params: dict) -> float:
        return np.inf  # no error term: the dual's box is alpha >= 0 only

    def _prepare(self, X, y, sample_weight=None, params=None):
        params = self._validate_params() if params is None else params
        X2, y2 = self._validate_xy(np.asarray(X, dtype=float), y)
        if params["kernel"] == "precomputed":
            check_precomputed_kernel(X2, "X")
        classes = np.unique(y2)
        if classes.shape[0] != 2:
            raise ValueError(f"HardMarginSVC needs exactly 2 classes in y, got {classes.shape[0]}")
        self._binary_classes = classes
        y_pm = np.where(y2 == classes[1], 1.0, -1.0)
        return FitData(X2, y_pm, self._kernel(X2, params),
                       np.full(y_pm.shape[0], self._box_C(params)), params=params)

    def _primal(self, data: FitData) -> pm.Problem:
        w, b, Y, f = _margin_expr(data)
        return pm.Problem(0.5 * pm.norm2(w), [(Y * f >= 1).named("alpha")], "min",
                          f"{self._name} primal", variables=[w, b])

    def _dual(self, data: FitData, values: dict | None = None) -> pm.Problem:
        v = {"y": data.y} if values is None else values
        a = pm.Variable("alpha", data.N)
        Y = pm.Data("y", v["y"])
        Q = pm.GramOperator(data.kernel, data.X, sign=v["y"])
        return pm.Problem(pm.vsum(a) - 0.5 * pm.quad_form(a, Q),
                          [(pm.dot(Y, a) == 0).named("minus_b"), (a >= 0).named("s")],
                          "max", f"{self._name} dual")

    def _from_alpha(self, data: FitData, a: np.ndarray, b: float) -> Recovered:
        beta = a * data.y
        return Recovered(beta, b, {"alpha": a}, {"w": beta, "b": b}, {"alpha": a}, {"alpha": a})

    def _bias(self, data: FitData, a: np.ndarray) -> float:
        beta = a * data.y
        sv = a > 1e-7 * float(np.max(a, initial=0.0))  # relative: alpha scales as 1/|x|^2
        if not np.any(sv):
            return 0.0
        return float(np.mean(data.y[sv] - data.kmatvec(beta)[sv]))


class L2SVC(CSVC):
    """L2-SVC, the squared-hinge soft-margin classifier (docs/formulations.md section 3).

    Primal (``f_i = <w, phi(x_i)> + b``; ``xi >= 0`` is implied and not written)::

        min_{w,b,xi}  1/2 ||w||^2 + 1/2 sum_i C_i xi_i^2
        s.t.          y_i f_i >= 1 - xi_i          [alpha_i >= 0]

    Lagrangian ``L = 1/2||w||^2 + 1/2 sum C_i xi_i^2 - sum alpha_i (y_i f_i - 1 + xi_i)``;
    stationarity ``w = sum alpha_i y_i phi(x_i)``, ``y^T alpha = 0``, ``C_i xi_i = alpha_i``.

    Dual (no upper bound: the box of C-SVC becomes the ridge ``I/C`` on ``Q``)::

        max_alpha  1^T alpha - 1/2 alpha^T (Q + diag(1/C_i)) alpha
        s.t.       y^T alpha = 0        [eta free; eta = -b]
                   alpha_i >= 0         [s_i >= 0; s_i = y_i f_i - 1 + xi_i]

    Recovery: ``beta_i = alpha_i y_i``, ``xi_i = max(0, 1 - y_i f_i)`` (the predictor's optimal
    slacks; ``= alpha_i / C_i`` at the optimum); every support vector is free
    (``y_i f_i = 1 - xi_i``), so ``b`` = mean of ``y_i (1 - alpha_i/C_i) - sum_j beta_j K_ji``
    over ``alpha_i > 0`` (the multiplier ``eta`` is preferred when the solver returns it).
    Parameters as :class:`CSVC`.
    """

    #: the squared hinge: the radius-margin bound (primaldual.bounds) uses the kernel
    #: ``K + diag(1/C_i)`` and ``||w||^2 + sum_i alpha_i^2 / C_i`` (Chapelle et al.)
    _squared_hinge = True
    # sparse X is densified: only C-SVC's own dual is kept sparse
    _sparse_smo = False

    _name = "L2-SVC"
    # C = inf is refused by name: CSVC's hard-margin reading does not apply
    _parameter_constraints = {**CSVC._parameter_constraints, "C": check_C_finite}

    def _upper(self, data: FitData) -> np.ndarray:
        return np.full(data.N, np.inf)

    def _primal(self, data: FitData) -> pm.Problem:
        w, b, Y, f = _margin_expr(data)
        xi = pm.Variable("xi", data.N)
        if np.all(data.C == data.C[0]):
            loss = 0.5 * (pm.Data("C", float(data.C[0])) * pm.sum_squares(xi))
        else:  # per-sample weights: 1/2 sum (sqrt(C_i) xi_i)^2
            loss = 0.5 * pm.sum_squares(pm.Data("sqrtC", np.sqrt(data.C), txt="√C",
                                                tex=r"\sqrt{C}") * xi)
        return pm.Problem(0.5 * pm.norm2(w) + loss, [(Y * f >= 1 - xi).named("alpha")],
                          "min", f"{self._name} primal", variables=[w, b, xi])

    def _dual_data(self, data: FitData) -> dict:
        """``y`` and the ridge ``1/C`` of ``Q + I/C``."""
        return {"y": data.y, "1/C": 1.0 / data.C}

    def _dual(self, data: FitData, values: dict | None = None) -> pm.Problem:
        v = self._dual_data(data) if values is None else values
        a = pm.Variable("alpha", data.N)
        Y = pm.Data("y", v["y"])
        Q = pm.GramOperator(data.kernel, data.X, sign=v["y"], diag=v["1/C"])
        return pm.Problem(pm.vsum(a) - 0.5 * pm.quad_form(a, Q, txt="αᵀ(Q + I/C)α",
                                                          tex=r"\alpha^T (Q + I/C) \alpha"),
                          [(pm.dot(Y, a) == 0).named("minus_b"), (a >= 0).named("s")],
                          "max", f"{self._name} dual")

    def _bias(self, data: FitData, a: np.ndarray) -> float:
        beta = a * data.y
        grad = data.y * data.kmatvec(beta) + a / data.C - 1.0  # of 1/2 a^T(Q+I/C)a - 1^T a
        return bias_from_gradient(grad, data.y, a, np.full(data.N, np.inf))

    def _from_alpha(self, data: FitData, a: np.ndarray, b: float) -> Recovered:
        beta = a * data.y
        # the slacks of the predictor itself (its optimal ones, xi_i = max(0, 1 - y_i f_i)),
        # never alpha / C: those equal them only at the exact optimum, and a point that is
        # not one would be certified through slacks that violate its margins
        xi = np.maximum(0.0, 1.0 - data.y * (data.kmatvec(beta) + b))
        rec = Recovered(beta, b, {"alpha": a}, {"w": beta, "b": b, "xi": xi},
                        {"alpha": a}, {"alpha": a})
        rec.extra["sample_C"] = data.C  # C_i of the fit (radius-margin bound, oracle)
        return rec

    # _from_dual is CSVC's: b from the multiplier of y^T alpha = 0, else this class's _bias
