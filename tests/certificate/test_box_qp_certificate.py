"""The box-QP certificate (issue 28, "one road"): every dual that is a box QP with finite bounds
is certified by its bidual at the predictor, written once for the record
(:func:`primaldual.certificate.box_qp_certificate`), not per class.

References independent of that code: the modelling layer's :func:`primaldual.certificate.certify`
on the method's primal and dual Problems at the same point (objectives and the residuals both
report), and the oracle (:func:`primaldual.testing.oracle_gap`: plain numpy, the kernel from
scikit-learn), on seeded random problems with per-sample ``C`` (sample and class weights) and on
a user's :class:`~primaldual.Variant`.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import primaldual as pd
from primaldual.certificate import box_qp_certificate, certify
from primaldual.kernels import matvec_cache
from primaldual.model.structure import box_qp_of
from primaldual.testing import oracle_gap

CASES = [
    (pd.CSVC, {"C": 2.0}, "clf"),
    (pd.NuSVC, {"nu": 0.4}, "clf"),
    (pd.EpsilonSVR, {"C": 3.0, "epsilon": 0.2}, "reg"),
    (pd.NuSVR, {"C": 2.0, "nu": 0.4}, "reg"),
]
#: the record's names for what the modelling layer calls the multiplier of xi >= 0 (mu) and of
#: the threshold's sign constraint (delta)
SAME = {"stationarity[w]": "stationarity[w]", "stationarity[b]": "stationarity[b]",
        "stationarity[rho]": "stationarity[rho]", "stationarity[eps]": "stationarity[eps]",
        "primal_feasibility[rho]": "primal_feasibility[delta]",
        "primal_feasibility[eps]": "primal_feasibility[delta]",
        "primal_feasibility[alpha]": "primal_feasibility[alpha]",
        "primal_feasibility[alpha_star]": "primal_feasibility[alpha_star]",
        "dual_feasibility[alpha]": "dual_feasibility[alpha]",
        "dual_feasibility[alpha_star]": "dual_feasibility[alpha_star]",
        "dual_feasibility[xi]": "dual_feasibility[mu]",
        "dual_feasibility[xi_star]": "dual_feasibility[mu_star]",
        "complementarity[alpha]": "complementarity[alpha]",
        "complementarity[alpha_star]": "complementarity[alpha_star]",
        "complementarity[xi]": "complementarity[mu]",
        "complementarity[xi_star]": "complementarity[mu_star]"}


def _data(kind, n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if kind == "clf":
        y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    else:
        y = X[:, 0] - X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    return X, y, w


def _both(est, X, y, w, backend, form, perturb=0.0):
    params = est._validate_params()
    params = {**params, "gamma": est._resolve_gamma(X, params)}
    data = est._prepare(X, y, w, params)
    with matvec_cache():
        sol, rec, task = est._solve(data, backend, form)
        P, D = task.P, task.D
        if perturb:   # a dual point that is not optimal (and a predictor recovered from it)
            rng = np.random.default_rng(1)
            upper = est._upper(data)
            for k in [k for k in rec.alpha]:
                a = np.clip(rec.alpha[k] + perturb * float(np.max(upper))
                            * rng.uniform(size=data.N), 0.0, upper)
                sol.values[k] = a
            rec = est._from_dual(data, sol)
        fast = est._certify(data, rec, task, sol.status)
        ref = certify(P, rec.primal_point, rec.primal_multipliers, D, rec.dual_point,
                      status=sol.status)
    return fast, ref, rec


@pytest.mark.parametrize("cls, kw, kind", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("perturb", [0.0, 0.3], ids=["smo", "perturbed"])
def test_box_qp_certificate_equals_modelling_layer(cls, kw, kind, perturb):
    """A dual-form fit recovers the predictor's optimal slacks, so the bidual at the predictor
    is the method's primal at the recovered point: the same objectives, gap and residuals as the
    modelling layer, also for a point far from optimal."""
    X, y, w = _data(kind)
    fast, ref, _ = _both(cls(**kw), X, y, w, "smo", "dual", perturb)
    scale = max(1.0, abs(ref.primal_objective))
    assert abs(fast.primal_objective - ref.primal_objective) <= 1e-12 * scale
    assert abs(fast.dual_objective - ref.dual_objective) <= 1e-12 * scale
    assert abs(fast.duality_gap - ref.duality_gap) <= 1e-12 * scale
    assert fast.duality_gap == pytest.approx(fast.primal_objective - fast.dual_objective,
                                             rel=1e-12, abs=1e-15)
    shared = [k for k in fast.kkt_per_sample if k in SAME]
    assert len(shared) >= 6
    for k in shared:
        np.testing.assert_allclose(fast.kkt_per_sample[k], ref.kkt_per_sample[SAME[k]],
                                   rtol=1e-9, atol=1e-12 * scale, err_msg=k)
    if perturb:
        assert fast.relative_gap > 1e-3 and ref.relative_gap > 1e-3


@pytest.mark.parametrize("cls, kw, kind", CASES, ids=[c[0].__name__ for c in CASES])
def test_primal_form_fit_certifies_the_predictor(cls, kw, kind):
    """An interior-point primal fit: the certificate is of the predictor (the multipliers'
    expansion beta that predict uses, b, the threshold) with its optimal slacks; the solver's
    own (w, xi) agree with it to the solver's accuracy, and the dual value is the modelling
    layer's."""
    X, y, w = _data(kind)
    fast, ref, _ = _both(cls(**kw), X, y, w, "cvxpy", "primal")
    scale = max(1.0, abs(ref.primal_objective))
    assert abs(fast.primal_objective - ref.primal_objective) <= 1e-6 * scale
    assert fast.duality_gap >= -1e-9 * scale
    assert abs(fast.dual_objective - ref.dual_objective) <= 1e-12 * scale


def _fit(cls, kw, kind, seed, weights):
    X, y, w = _data(kind, n=60, seed=seed)
    kw = dict(kw)
    if weights == "class_weight":
        kw["class_weight"] = "balanced" if seed % 2 else {0: 0.5, 1: 2.0}
        w = None
    elif weights is None:
        w = None
    est = cls(gamma=0.5, tol=1e-6, **kw).fit(X, y, sample_weight=w)
    return est, X, y, w


ORACLE = [(c, kw, kind, wt) for c, kw, kind in CASES for wt in (None, "sample_weight")] + [
    (pd.CSVC, {"C": 2.0}, "clf", "class_weight"), (pd.NuSVC, {"nu": 0.3}, "clf", "class_weight")]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cls, kw, kind, weights", ORACLE,
                         ids=[f"{c[0].__name__}-{c[3]}" for c in ORACLE])
def test_box_qp_certificate_equals_the_oracle(cls, kw, kind, weights, seed):
    """The oracle recomputes P and D from the fitted model with its own kernel. C-SVC and
    epsilon-SVR: the same primal (optimal slacks of the predictor); nu-SVC / nu-SVR: the oracle
    also optimises the threshold along the predictor's ray, so its P is at most ours."""
    est, X, y, w = _fit(cls, kw, kind, seed, weights)
    rep = oracle_gap(est, X, y, w)
    cert = est.certificate_
    unit = max(rep.unit, abs(rep.primal))
    assert rep.independent_kernel
    assert abs(cert.dual_objective - rep.dual) <= 1e-9 * unit
    if cls in (pd.CSVC, pd.EpsilonSVR):
        assert abs(cert.primal_objective - rep.primal) <= 1e-9 * unit
    else:
        assert rep.primal <= cert.primal_objective + 1e-9 * unit
    assert cert.relative_gap == pytest.approx((cert.primal_objective - cert.dual_objective)
                                              / max(rep.unit, abs(cert.primal_objective)),
                                              rel=1e-6, abs=1e-15)
    assert est.status_ == "optimal" and cert.relative_gap <= 1e-6
    assert rep.ok, rep.violations


def test_box_qp_certificate_of_a_user_variant_equals_the_oracle():
    """A user's C-SVC spec: its derived dual's record certified by the same function, against
    plain numpy (scikit-learn's rbf kernel) and against the Variant's own (modelling-layer)
    certificate."""
    from primaldual.model import FeatureVariable, Param, Problem, Variable, norm2, phi, vsum
    from primaldual.model import N as N_
    from primaldual.model import X as X_
    from primaldual.model import x as x_
    from primaldual.model import y as y_

    C = Param("C")
    w, b, xi = FeatureVariable("w"), Variable("b"), Variable("xi", N_)
    spec = Problem(0.5 * norm2(w) + C * vsum(xi),
                   [(y_ * (w @ phi(X_) + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")])
    X, yl, _ = _data("clf", n=50, seed=3)
    v = pd.Variant(spec, decision=w @ phi(x_) + b, kernel="rbf", gamma=0.5, C=2.0,
                   tol=1e-6).fit(X, yl)
    D = v.solution_.problem
    box = box_qp_of(D)
    assert box is not None and np.all(np.isfinite(box.C))
    a = np.concatenate([np.asarray(v.solution_.values[n], float).ravel()
                        for n in ((box.variable,) if box.variables is None else box.variables)])
    beta = np.zeros(X.shape[0])
    beta[v.support_] = v.dual_coef_[0]
    K = rbf_kernel(X, X, gamma=0.5)
    b0 = float(v.intercept_[0])
    cert = box_qp_certificate(box, a, beta, K @ beta, b0)
    ypm = np.where(yl == v.classes_[1], 1.0, -1.0)
    f = K @ beta + b0
    P = 0.5 * beta @ K @ beta + 2.0 * np.sum(np.maximum(0.0, 1.0 - ypm * f))
    ab = ypm * a if box.variables is None else None
    D_ = float(a.sum()) - 0.5 * ab @ K @ ab
    assert cert.primal_objective == pytest.approx(P, rel=1e-9)
    assert cert.dual_objective == pytest.approx(D_, rel=1e-9)
    assert cert.primal_objective == pytest.approx(v.certificate_.primal_objective, rel=1e-6)
    assert cert.dual_objective == pytest.approx(v.certificate_.dual_objective, rel=1e-9)
    assert 0 <= cert.duality_gap <= 1e-5 * max(1.0, abs(P))


def test_infinite_bounds_keep_the_honest_primal():
    """L2-SVC (squared slacks: Q + I/C, no upper bound) and the hard margin have no linear
    slack penalty: their certificate is the modelling layer's primal at the predictor."""
    X, y, _ = _data("clf")
    for est in (pd.L2SVC(C=2.0), pd.CSVC(C=np.inf, kernel="linear")):
        yy = y if not np.isinf(getattr(est, "C", 1.0)) else (X[:, 0] > 0).astype(int)
        est.fit(X, yy)
        assert "stationarity[xi]" in est.certificate_.kkt or \
            "dual_feasibility[alpha]" in est.certificate_.kkt
        assert "complementarity[xi]" not in est.certificate_.kkt    # the primal's own names
        assert est.certificate_.is_optimal(1e-2, 1e-2)


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
