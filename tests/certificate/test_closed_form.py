"""The drop-in SVMs' closed-form certificates equal the modelling layer's (issue 17).

``CSVC``, ``NuSVC``, ``EpsilonSVR`` and ``NuSVR`` write their certificate in closed form
(``_certify``) so that a small fit does not pay for building the expression objects. Here the
same recovered point is certified both ways (:func:`primaldual.certificate.certify` on the
primal and dual Problems) and every objective and per-sample residual must agree to round-off,
for the SMO dual fit, an interior-point primal fit (multipliers not derived from the dual
point) and a perturbed point (large residuals must be reported alike).
"""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
from primaldual.certificate import certify
from primaldual.kernels import matvec_cache

CASES = [
    (pd.CSVC, {"C": 2.0}, "clf"),
    (pd.NuSVC, {"nu": 0.4}, "clf"),
    (pd.EpsilonSVR, {"C": 3.0, "epsilon": 0.2}, "reg"),
    (pd.NuSVR, {"C": 2.0, "nu": 0.4}, "reg"),
]


def _data(kind):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    if kind == "clf":
        y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    else:
        y = X[:, 0] - X[:, 1] ** 2 + 0.1 * rng.normal(size=40)
    w = rng.uniform(0.5, 2.0, size=40)
    return X, y, w


def _both(est, X, y, w, backend, form, perturb=0.0):
    params = est._validate_params()
    params = {**params, "gamma": est._resolve_gamma(X, params)}
    data = est._prepare(X, y, w, params)
    with matvec_cache():
        sol, rec, P, D = est._solve(data, backend, form)
        if perturb:
            rng = np.random.default_rng(1)
            for d in (rec.primal_point, rec.primal_multipliers):
                for k, v in d.items():
                    if isinstance(v, np.ndarray) and v.ndim == 1 and v.size > 1:
                        d[k] = v + perturb * rng.normal(size=v.size)
        fast = est._certify(data, rec, P, D, sol.status)
        ref = certify(P, rec.primal_point, rec.primal_multipliers, D, rec.dual_point,
                      status=sol.status)
    return fast, ref


@pytest.mark.parametrize("cls, kw, kind", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("backend, form, perturb", [("smo", "dual", 0.0),
                                                    ("cvxpy", "primal", 0.0),
                                                    ("smo", "dual", 1e-2)],
                         ids=["smo-dual", "cvxpy-primal", "perturbed"])
def test_closed_form_certificate_equals_modelling_layer(cls, kw, kind, backend, form, perturb):
    X, y, w = _data(kind)
    fast, ref = _both(cls(**kw), X, y, w, backend, form, perturb)
    assert type(fast) is type(ref)
    scale = max(1.0, abs(ref.primal_objective))
    assert abs(fast.primal_objective - ref.primal_objective) <= 1e-12 * scale
    assert abs(fast.dual_objective - ref.dual_objective) <= 1e-12 * scale
    # the gaps themselves (two code paths: a gap zeroed or scaled in either one fails here)
    assert abs(fast.duality_gap - ref.duality_gap) <= 1e-12 * scale
    assert fast.duality_gap == pytest.approx(ref.primal_objective - ref.dual_objective,
                                             rel=1e-9, abs=1e-12 * scale)
    assert list(fast.kkt) == list(ref.kkt)  # same conditions, same order
    for k, v in ref.kkt_per_sample.items():
        np.testing.assert_allclose(fast.kkt_per_sample[k], v, rtol=1e-9,
                                   atol=1e-12 * scale, err_msg=k)
    if perturb:  # the perturbation is visible in both
        assert fast.max_kkt_residual > 1e-4 and ref.max_kkt_residual > 1e-4


def test_fit_does_not_build_the_problems_but_solution_problem_still_works():
    X, y, _ = _data("clf")
    m = pd.CSVC().fit(X, y)
    assert "_builder" in m.solution_.problem.__dict__       # not built by the fit
    assert m.solution_.problem.name == "C-SVC dual"          # built on first use
    assert "_builder" not in m.solution_.problem.__dict__
    assert m.solution_.problem.structure["box_qp"].n == X.shape[0]
    sol_cert = m.solution_.certificate()                     # a certificate of the dual alone
    assert np.isfinite(sol_cert.primal_objective)
    assert m.solution_.objective_value == pytest.approx(m.certificate_.dual_objective,
                                                        rel=1e-10)
