"""The catalogue's binary fit as a task of the fit engine (:class:`primaldual.engine.FitTask`).

A :class:`CatalogueTask` binds one estimator to one :class:`~._fit.FitData` and one form
(``"dual"`` or ``"primal"``): its target is the method's ``_dual(data)`` (with the structure
record the backend is chosen from) or ``_primal(data)``, built on first use; its recovery,
certificate and fitted attributes are the method's own (``_from_dual``, ``_certify``,
``_set_fitted``). The engine does the rest (:mod:`primaldual.engine.stages`).
"""

from __future__ import annotations

import functools
from typing import Any, NoReturn

import numpy as np

from ..certificate import (
    Certificate,
    certificate_unit,
    certify,
    objective_unit,
    relative_gap,
)
from ..engine import BackendHints
from ..model.problem import LazyProblem, Problem
from ..solution import InfeasibleProblemError, Solution
from ..validation import NumericalTroubleError
from ._fit import FitData, Recovered, _HardMarginMarker, _lowrank_certificate, _scale_hint
from ._steps import _audit_margins

__all__ = ["CatalogueTask"]


class CatalogueTask:
    """One catalogue fit bound to its data (the engine's :class:`~primaldual.engine.FitTask`)."""

    def __init__(self, est: Any, data: FitData, form: str, structure: Any = None) -> None:
        self.estimator = est
        self.label = type(est).__name__
        self.data = data
        self.form = form
        self.params = data.params
        self.tol = est.__dict__.get("tol", 1e-3)
        self.kernel = data.kernel
        self.X = data.X
        self.upper = est._upper(data)
        self._hints: BackendHints | None = None
        self._problems(structure)

    def _problems(self, structure: Any = None) -> None:
        est, data = self.estimator, self.data
        # built on first use only: SMO reads the structure record (equal to the one detection
        # derives from the dual); the expression objects exist once someone asks for them
        # (``structure``: the record a route bound already, the one-vs-one pairs')
        self._P: Problem | None = None
        st = est._dual_structure(data) if structure is None else structure
        # a KKT-system dual has free multipliers: no box, no LP, so no other shape to detect
        only = ("the dual is an unconstrained quadratic with free multipliers (its KKT "
                "system is a linear system): no box, no linear program"
                if st is not None and "kkt_system" in st else None)
        self.D = LazyProblem(functools.partial(est._dual, data), structure=st, only=only)

    @property
    def P(self) -> Problem:
        """The primal, as a lazy problem (most routes never build it)."""
        if self._P is None:
            self._P = LazyProblem(functools.partial(self.estimator._primal, self.data))
        return self._P

    # ----- the engine's questions
    def target(self) -> Problem:
        return self.D if self.form == "dual" else self.P

    def densify(self) -> Problem | None:
        import scipy.sparse as sp
        data = self.data
        if not sp.issparse(data.X):
            return None
        from ._steps import _check_densify_memory
        _check_densify_memory(data.X)
        data.X = self.X = sp.csr_matrix(data.X).toarray()
        self.estimator._sparse_rows = False
        self._problems()
        return self.target()

    def hints(self) -> BackendHints:
        if self._hints is None:
            self._hints = self._make_hints()
        return self._hints

    def _make_hints(self) -> BackendHints:
        data, est = self.data, self.estimator
        fin = data.C[np.isfinite(data.C)]
        tight = bool(getattr(est, "_tight_objective", False)
                     or (fin.size and 0 < float(np.max(fin)) < 1e-2))
        sg = data.extra.get("shared_gram")
        if self.form != "dual":
            return BackendHints(rows=data.N, tight=tight, label=self.label, shared_gram=sg)
        return BackendHints(rows=data.N, upper=self.upper, shared_gram=sg,
                            labels=data.y if est._task == "classification" else None,
                            balance=not getattr(est, "_free_multipliers", False),
                            tight=tight, label=self.label)

    def no_point(self, sol: Solution) -> NoReturn:
        data, form = self.data, self.form
        hard = isinstance(self.estimator, _HardMarginMarker) or bool(np.all(np.isinf(data.C)))
        if not hard:
            # every finite-C / least-squares problem of the catalogue is feasible and
            # bounded: an infeasible status is the solver's numerical failure, not a fact
            raise NumericalTroubleError(
                f"{self.label}: the solver reported the {form} problem {sol.status}, but it "
                "is always feasible and bounded: numerical trouble; " + _scale_hint(data), sol)
        # hard margin: a failed solve (the low-rank solver's "solver_error" included) may be
        # non-separable data; CSVC._solve verifies the unbounded dual ray and turns this into
        # NumericalTroubleError when there is none
        what = (f"is {sol.status}" if sol.status in ("infeasible", "unbounded")
                else f"stopped with status {sol.status!r}")
        raise InfeasibleProblemError(
            f"{self.label}: the {form} problem {what} (hard margin: the classes are not "
            "linearly separable in feature space)", sol)

    def recover(self, sol: Solution) -> Recovered:
        est, data = self.estimator, self.data
        if sol.backend == "lowrank" and "factor" in sol.info:
            # recovery (intercept, slacks, ||w||^2) uses the K ~= V V^T the eta-problem solved
            # (an operator for a factor kept as V = C P: products C (P w), V never formed)
            data.extra["lowrank_V"] = sol.info["factor"].operator()
        if "factor" in sol.info:
            est._check_lowrank_factor(data, sol)
        rec = est._from_dual(data, sol) if self.form == "dual" else est._from_primal(data, sol)
        if not (np.isfinite(rec.beta).all() and np.isfinite(rec.b)):
            raise NumericalTroubleError(
                f"{self.label}: the {sol.backend} solve returned non-finite coefficients or "
                "intercept (NaN/inf): numerical trouble; " + _scale_hint(data), sol)
        return rec

    def certify(self, rec: Recovered, sol: Solution) -> Certificate:
        est, data = self.estimator, self.data
        exact = None
        if sol.backend == "lowrank" and "lowrank" in sol.info:
            # a low-rank fit certifies the eta-problem it solved (K ~= V V^T); the exact-kernel
            # check is opt-in (certify="exact") and reported under its own name
            cert = _lowrank_certificate(sol)
            if data.params.get("certify", "auto") == "exact":
                V = data.extra.pop("lowrank_V")
                exact = certify(self.P, rec.primal_point, rec.primal_multipliers, self.D,
                                rec.dual_point, status=sol.status,
                                unit=objective_unit(self.upper))
                data.extra["lowrank_V"] = V
                cert.extra.update({"exact-kernel relative gap": exact.relative_gap,
                                   "exact-kernel max KKT": exact.max_kkt_residual})
        else:
            cert = est._certify(data, rec, self, sol.status)
        est.exact_certificate_ = exact
        # one unit for every route (closed form, modelling layer, low rank)
        cert.relative_gap = relative_gap(cert.duality_gap, cert.primal_objective,
                                         certificate_unit(self.upper, data.C))
        cert.extra.update({k: data.extra[k] for k in ("l", "u") if k in data.extra})
        return cert

    def audit_more(self, cert: Certificate, rec: Recovered, tol: float) -> None:
        _audit_margins(self.estimator, cert, rec, tol)

    def store(self, sol: Solution, rec: Recovered, cert: Certificate) -> None:
        est, data = self.estimator, self.data
        est._set_fitted(data, sol, rec, cert)
        cert.f = est._training_decision(data, rec)
        data.extra.pop("_kmatvec", None)

    def scale_hint(self) -> str:
        return _scale_hint(self.data)
