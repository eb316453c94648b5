"""Kernel logistic regression (docs/formulations.md section 13; soft-margin notes 9.45-9.50).

Primal (unconstrained; ``f_i = <w, phi(x_i)> + b``, ``b`` not penalised; ``C_i = C s_i`` with
``s = sample_weight``, ``C_i = C`` without)::

    min_{w,b}  1/2 ||w||^2 + sum_i C_i log(1 + exp(-y_i f_i))

written with the margins as variables, ``y_i f_i = z_i [alpha_i free]``, so that stationarity
reads ``w = sum alpha_i y_i phi(x_i)``, ``y^T alpha = 0`` and ``alpha_i = C_i sigma(-z_i)``
(Lagrangian ``objective - sum alpha_i (y_i f_i - z_i)``).

Dual (concave, not a QP: it compiles to CVXPY exponential cones through the entropy atom)::

    max_alpha  -1/2 alpha^T Q alpha
               - sum_i [alpha_i log alpha_i + (C_i - alpha_i) log(C_i - alpha_i)]
               + sum_i C_i log C_i                           (= N C log C for equal C_i)
    s.t.       y^T alpha = 0          [eta free; eta = -b]
               alpha_i >= 0           [s_i >= 0]
               alpha_i <= C_i         [t_i >= 0]

Derivation: with ``p_i = alpha_i / C_i`` the conjugate of ``C_i log(1 + exp(-m))`` gives
``C_i log(1+e^{-m_i}) + alpha_i m_i = C_i H(p_i) = -C_i [p_i log p_i + (1-p_i) log(1-p_i)]`` at
``alpha_i = C_i sigma(-m_i)`` (the mechanical derivation prints ``Σ_i C_i H(α_i/C_i)``); the
constant ``sum_i C_i log C_i`` makes the dual value equal the primal value at the optimum
(strong duality, no gap). The optimum is interior (``0 < alpha_i < C_i``), so ``s = t = 0``.
Recovery: ``beta_i = alpha_i y_i``, ``b = -eta`` (or, without the multiplier, from
``y_i f_i = log((C_i - alpha_i)/alpha_i)`` averaged with weights ``alpha_i (C_i - alpha_i)``);
from the primal, ``alpha_i = C_i sigma(-y_i f_i)``. ``predict_proba`` is ``sigma(f(x))``.

Sample weights: integer weights equal repeated rows; ``fit`` drops rows of weight ``<= 0`` (as
LIBSVM and every estimator here: their ``alpha_i`` is exactly 0), and refuses weights that
leave one class only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit, xlogy
from sklearn.utils.validation import check_is_fitted

from .. import model as pm
from ._base import BinaryClassifier, FitData, Recovered
from ._multiclass_predict import multiclass_predict_proba
from ._params import (
    KERNEL,
    MULTICLASS,
    check_backend,
    check_form,
    check_positive,
    check_verbose,
    passed_on,
)
from .lssvm import _C_value
from .svc import _margin_expr


class KernelLogisticRegression(BinaryClassifier):
    """Kernel logistic regression (docs/formulations.md section 13).

    Parameters
    ----------
    C : float, default 1.0
        Weight of the log-loss (scikit-learn's ``LogisticRegression`` convention); per sample
        ``C_i = C * sample_weight_i`` (``fit(X, y, sample_weight)``).
    kernel : str, Kernel or callable, default "rbf"
    gamma, degree, coef0 : kernel parameters
    backend : {"auto", "cvxpy"}, default "auto"
    form : {"dual", "primal"}, default "dual"
    solver : str, optional
        CVXPY solver with exponential cones ("CLARABEL", "ECOS", "SCS").
    """

    _name = "kernel logistic regression"
    _parameter_constraints = {**KERNEL, **MULTICLASS, "C": check_positive,
                              "backend": check_backend, "form": check_form,
                              "solver": passed_on, "verbose": check_verbose}

    def __init__(self, C: float = 1.0, kernel: Any = "rbf", gamma: Any = "scale",
                 degree: int = 3, coef0: float = 0.0, backend: str = "auto",
                 form: str = "dual", solver: str | None = None, verbose: bool = False,
                 multiclass: str = "ovr", decision_function_shape: str = "ovr",
                 n_jobs: int | None = None) -> None:
        self._store_init_args(locals())

    def _primal(self, data: FitData) -> pm.Problem:
        # the margins z_i = y_i f_i are named variables so that their constraint carries the
        # multiplier alpha_i: stationarity then reads w = sum alpha_i y_i phi(x_i), y^T alpha = 0
        # and alpha_i = C sigma(-z_i), the dual's variables
        w, b, Y, f = _margin_expr(data)
        z = pm.Variable("z", data.N)
        C = _C_value(data)
        if np.ndim(C) == 0:
            loss = pm.Data("C", C) * pm.sum_logistic(-z)
        else:   # C_i = C * sample_weight_i (* class weight): Σ_i C_i log(1 + exp(-z_i))
            loss = pm.sum_logistic(-z, weights=pm.Data("C", data.C))
        return pm.Problem(0.5 * pm.norm2(w) + loss,
                          [(Y * f == z).named("alpha")], "min", f"{self._name} primal",
                          variables=[w, b, z])

    def _dual(self, data: FitData) -> pm.Problem:
        a = pm.Variable("alpha", data.N)
        Y = pm.Data("y", data.y)
        C = _C_value(data)
        Cd = pm.Data("C", C)
        Q = pm.GramOperator(data.kernel, data.X, sign=data.y)
        if np.ndim(C) == 0:
            const = pm.Data("NClogC", data.N * C * np.log(C), txt="N C log C",
                            tex=r"N C \log C")
        else:   # Σ_i C_i log C_i (0 log 0 = 0)
            const = pm.Data("sumClogC", float(np.sum(xlogy(data.C, data.C))),
                            txt="Σ_i C_i log C_i", tex=r"\sum_i C_i \log C_i")
        obj = -(0.5 * pm.quad_form(a, Q)) + pm.sum_entropy(a) + pm.sum_entropy(Cd - a) + const
        return pm.Problem(obj, [(pm.dot(Y, a) == 0).named("minus_b"), (a >= 0).named("s"),
                                (a <= Cd).named("t")], "max", f"{self._name} dual")

    # ----- recovery
    def _recovered(self, data: FitData, a: np.ndarray, b: float) -> Recovered:
        beta = a * data.y
        z = data.y * (data.kmatvec(beta) + b)
        return Recovered(beta, b, {"alpha": a}, {"w": beta, "b": b, "z": z}, {"alpha": a},
                         {"alpha": a})

    def _from_dual(self, data: FitData, sol) -> Recovered:
        a = np.asarray(sol.values["alpha"], dtype=float)
        C = data.C
        if data.N <= 2000:
            polished = self._newton_polish_dual(data, a)
            if polished is not None:
                a, b = polished
                return self._recovered(data, a, b)
        if "minus_b" in sol.multipliers:
            b = -float(np.asarray(sol.multipliers["minus_b"]).ravel()[0])
        else:
            ac = np.clip(a, 1e-300, C * (1 - 1e-16))
            m = np.log((C - ac) / ac)          # y_i f_i at the optimum
            wts = ac * (C - ac)
            b = float(np.sum(wts * (data.y * m - data.kmatvec(a * data.y))) / np.sum(wts))
        return self._recovered(data, a, b)

    def _from_primal(self, data: FitData, sol) -> Recovered:
        beta = np.asarray(sol.values["w"], dtype=float)
        b = float(np.ravel(sol.values["b"])[0])
        if data.N <= 2000:
            beta, b = self._newton_polish(data, beta, b)
        f = data.kmatvec(beta) + b
        a = data.C * expit(-data.y * f)
        rec = self._recovered(data, a, b)
        rec.beta = beta   # the primal's own w (alpha y equals it only at the exact optimum)
        rec.primal_point["w"] = beta
        return rec

    @staticmethod
    def _newton_polish_dual(data: FitData, a: np.ndarray, steps: int = 8
                            ) -> tuple[np.ndarray, float] | None:
        """A few equality-constrained Newton steps on the smooth dual from the solver's point.

        Exponential-cone solvers may stop "almost solved" with ``alpha`` correct to ~1e-5 near a
        bound, while the dual is smooth and strictly concave inside the box: with the
        gradient ``g = -Q a + log((C - a)/a)`` and the negated Hessian
        ``H = Q + diag(1/a + 1/(C - a))``, each step solves ``[[H, y], [y^T, 0]] [d; nu] =
        [grad; 0]`` (``y^T a = 0`` kept) and is damped to stay strictly inside the box; the
        multiplier ``nu`` is ``b`` (``log((C_i - a_i)/a_i) = y_i f_i``).  Returns ``(alpha, b)``
        or ``None`` when the start is not strictly interior or a step fails to help."""
        K, y, C = data.gram(), data.y, np.broadcast_to(np.asarray(data.C, float), a.shape)
        a = np.clip(a, 1e-12 * C, C * (1 - 1e-12))
        Q = K * np.outer(y, y)
        y0 = y @ a
        a = a - y * y0 / a.shape[0]             # y^T a = 0 exactly (|y_i| = 1)
        if np.any(a <= 0) or np.any(a >= C):
            return None

        def val(v):
            return -0.5 * v @ Q @ v - np.sum(xlogy(v, v) + xlogy(C - v, C - v))

        n = a.shape[0]
        A = np.zeros((n + 1, n + 1))
        A[:n, n] = y
        A[n, :n] = y
        cur, b = val(a), np.nan
        for _ in range(steps):
            g = -(Q @ a) + np.log((C - a) / a)
            A[:n, :n] = Q
            A[np.arange(n), np.arange(n)] += 1.0 / a + 1.0 / (C - a)
            try:
                sol = np.linalg.solve(A, np.r_[g, 0.0])
            except np.linalg.LinAlgError:
                return None
            d, b = sol[:n], float(sol[n])
            # the largest step <= 1 that keeps a strictly inside the box (fraction 0.99)
            with np.errstate(divide="ignore", invalid="ignore"):
                lim = np.where(d < 0, -a / d, np.where(d > 0, (C - a) / d, np.inf))
            t = min(1.0, 0.99 * float(np.min(lim)))
            while t > 1e-8 and not val(a + t * d) >= cur - 1e-15 * max(1.0, abs(cur)):
                t *= 0.5
            if t <= 1e-8:
                break
            a = a + t * d
            cur = val(a)
            if float(np.max(np.abs(t * d) / C)) <= 1e-14:
                break
        if not np.isfinite(b):
            return None
        # b from the final point: y_i f_i = log((C_i - a_i)/a_i), weighted as in the recovery
        m = np.log((C - a) / a)
        wts = a * (C - a)
        b = float(np.sum(wts * (y * m - data.kmatvec(a * y))) / np.sum(wts))
        return a, b

    @staticmethod
    def _newton_polish(data: FitData, beta: np.ndarray, b: float, steps: int = 5
                       ) -> tuple[np.ndarray, float]:
        """A few Newton steps on the smooth primal (exponential-cone solvers stop at ~1e-6 on the
        primal form); each step solves ``H d = -g`` by least squares (``K`` may be singular) and
        is kept only if it lowers the objective."""
        K, y, C = data.gram(), data.y, data.C

        def obj(bt, bb):
            f = K @ bt + bb
            return 0.5 * bt @ K @ bt + np.sum(C * np.logaddexp(0.0, -y * f))

        def grad(bt, bb):
            sg = expit(-y * (K @ bt + bb))
            return np.r_[K @ (bt - C * sg * y), -np.sum(C * sg * y)], sg

        cur, gn = obj(beta, b), np.inf
        for _ in range(steps):
            g, sg = grad(beta, b)
            gn = float(np.max(np.abs(g)))
            d = C * sg * (1.0 - sg)
            KD = K * d
            H = np.block([[K + KD @ K, KD.sum(axis=1, keepdims=True)],
                          [(d @ K)[None, :], np.array([[d.sum()]])]])
            step = np.linalg.lstsq(H, -g, rcond=None)[0]
            nb, nbb = beta + step[:-1], b + step[-1]
            new = obj(nb, nbb)
            # accept when the objective does not rise beyond round-off and the gradient shrinks
            if not (new <= cur + 1e-12 * max(1.0, abs(cur))
                    and float(np.max(np.abs(grad(nb, nbb)[0]))) < gn):
                break
            beta, b, cur = nb, nbb, new
        return beta, b

    def predict(self, X: Any) -> np.ndarray:
        """Binary: the sign of ``f``; more than two classes: the class of largest coupled
        probability, so ``predict`` and ``predict_proba`` always agree. One-vs-rest takes the
        argmax of the decision values ``f_c`` (its ``decoding_``): ``sigma`` is increasing, so
        that is the class of largest ``sigma(f_c)``, decided even where the sigmoids round to
        1.0 and ``predict_proba``'s columns tie."""
        if getattr(self, "estimators_", None) is not None:
            if self.multiclass_strategy_ == "ovr":
                return self.classes_[np.argmax(self.decision_function(X), axis=1)]
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        return super().predict(X)

    # ----- probabilities
    def predict_proba(self, X: Any) -> np.ndarray:
        """``[1 - sigma(f(x)), sigma(f(x))]`` for ``classes_[0], classes_[1]``; with more than
        two classes, the pairwise probabilities coupled as in :mod:`primaldual.multiclass`."""
        check_is_fitted(self, "classes_")
        if getattr(self, "estimators_", None) is not None:
            return multiclass_predict_proba(self, X)
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithm of :meth:`predict_proba` (computed stably in the binary case)."""
        if getattr(self, "estimators_", None) is not None:
            with np.errstate(divide="ignore"):
                return np.log(self.predict_proba(X))
        f = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, f), -np.logaddexp(0.0, -f)])
