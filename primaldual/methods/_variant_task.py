"""A ``Variant`` fit as a task of the fit engine (:class:`primaldual.engine.FitTask`).

The bound derivation ``bd`` is the task's problem: its dual is the target, its recovery gives
the primal point and multipliers, and the decision expressions at that point give the
expansion ``predict`` uses (``f(x) = sum_j B_j k(x, p_j) + x^T L + c + q k(x, x)``,
:mod:`._variant_expansion`).
The certificate is the modelling layer's, from that point; the engine chooses the backend,
solves, audits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from ..certificate import Certificate, audit_negative_gap, certify
from ..engine import BackendHints
from ..model.problem import Problem
from ..solution import InfeasibleProblemError, Solution
from ..validation import NumericalTroubleError
from ._variant_expansion import _check_expansion, _expansion, _unit

__all__ = ["VariantTask"]


@dataclass
class VariantPoint:
    """What a Variant fit recovers: the primal ``point``, the ``multipliers`` and the expansion
    ``(B, L, c, S, P, checks)`` of the decision expressions at that point (``checks``: their
    values on training rows, which the stored model must reproduce)."""

    point: dict
    multipliers: dict
    expansion: tuple


class VariantTask:
    """One ``Variant`` fit bound to its data (the engine's :class:`~primaldual.engine.FitTask`)."""

    label = "Variant"

    def __init__(self, est: Any, der: Any, bd: Any, decisions: list, X: np.ndarray,
                 kernel: Any, params: dict, t_bind: float) -> None:
        self.estimator = est
        self.der, self.bd, self.decisions = der, bd, decisions
        self.X, self.kernel = X, kernel
        self.params = params
        self.tol = params["tol"]
        self.t_bind = t_bind

    def target(self) -> Problem:
        return self.bd.dual

    def densify(self) -> Problem | None:
        return None   # a Variant's rows are dense float64 (validate_data)

    def hints(self) -> BackendHints:
        return BackendHints(label=self.label)

    def no_point(self, sol: Solution) -> NoReturn:
        if sol.status == "solver_error":
            raise NumericalTroubleError(f"Variant: the {sol.backend} backend failed on the "
                                        f"derived dual ({sol.status})", sol)
        raise InfeasibleProblemError(f"Variant: the derived dual is {sol.status} (the primal "
                                     "is infeasible or unbounded on this data)", sol)

    def recover(self, sol: Solution) -> VariantPoint:
        bd = self.bd
        point = bd.recover(sol)
        return VariantPoint(point, bd.multipliers(sol),
                            _expansion(bd, self.decisions, point, self.X, self.kernel))

    def certify(self, rec: VariantPoint, sol: Solution) -> Certificate:
        bd = self.bd
        return certify(bd.primal, rec.point, rec.multipliers, bd.dual, dict(sol.values),
                       status=sol.status, unit=_unit(bd.dual))

    def audit_more(self, cert: Certificate, rec: VariantPoint, tol: float) -> None:
        # the catalogue recovers optimal slacks, a variant's recovery is generic: its primal
        # point can violate the margins within the residual bound and still fall below D
        audit_negative_gap(cert)

    def store(self, sol: Solution, rec: VariantPoint, cert: Certificate) -> None:
        est = self.estimator
        B, L, c, S, P, checks, q = rec.expansion
        est.derivation_ = self.der
        est.kernel_ = self.kernel
        est.point_ = rec.point
        est.support_ = S
        est.support_vectors_ = P[S]   # training rows, or the basis a factory spans w by
        est.dual_coef_ = B.T.copy()
        est.linear_coef_ = L
        est.intercept_ = c
        est.diag_coef_ = q
        f = est._raw_decision(self.X, (P, S))
        _check_expansion(checks, f)
        cert.f = f if f.shape[1] > 1 else f[:, 0]
        extra: dict[str, Any] = {"bind [s]": self.t_bind, "#SV": int(S.shape[0]),
                                 "backend": sol.backend}
        cert.extra.update(extra)
        est.certificate_ = cert
        est.solution_ = sol
        est.backend_ = sol.backend
        est.status_ = sol.status
        est.n_iter_ = int(sol.n_iter or 0)
        if self.params["task"] == "novelty":
            est.offset_ = -float(c[0])

    def scale_hint(self) -> str:
        return ("standardize the features (e.g. sklearn.preprocessing.StandardScaler) or "
                "change the hyper-parameters")
