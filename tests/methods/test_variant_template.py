"""A user's spec on the catalogue's road (issue 28 follow-up): ``pd.Variant`` detects its
dual's BoxQP once per shape, learns it as a template (primaldual/methods/_structure.py,
``spec_structure``) and binds it to later fits; a shape without a template is detected on
every fit and says why."""

from __future__ import annotations

import numpy as np
import pytest
from variant_specs import placeholder_specs, svr_spec  # tests/methods (on the path)

import primaldual as pd
from primaldual.methods import _structure, _structure_template
from primaldual.model import FeatureVariable, Param, Problem, Variable, detection, norm2, phi, vsum
from primaldual.model.structure import detect_box_qp
from primaldual.testing import assert_oracle_optimal


@pytest.fixture
def fresh(monkeypatch):
    """No templates, and a spec's template learned on the first fit of its shape (the default
    learns on the second: :func:`test_a_single_fit_pays_no_template_learning`)."""
    _structure.clear_structure_templates()
    monkeypatch.setattr(_structure, "_SPEC_LEARN_ON_FIT", 1)
    yield
    _structure.clear_structure_templates()


def test_a_single_fit_pays_no_template_learning(monkeypatch):
    """By default the first fit of a spec's shape only detects (no probes); the second learns
    the template; the third binds it."""
    _structure.clear_structure_templates()
    learned = []
    real = _structure._learn_spec

    def learn(*a, **k):
        learned.append(1)
        return real(*a, **k)

    monkeypatch.setattr(_structure, "_learn_spec", learn)
    seen, used = _spy(monkeypatch)
    make = _variants()["svc"]
    for i, (n, expect_learned, origin) in enumerate([(40, 0, "(this fit; no shape template: "
                                                      "a template is learned from the next"),
                                                     (45, 1, "(this fit)"),
                                                     (50, 1, "(shape template)")]):
        seen.clear()
        make().fit(*_data(n, i, "svc"))
        assert len(learned) == expect_learned
        assert origin in used[-1][0].origin
        assert (seen == []) == (i == 2)
    _structure.clear_structure_templates()


def _spy(monkeypatch):
    """Names of the duals the detector reads, and the records the fits use."""
    seen, used = [], []
    real_read, real_spec = detection._read_box_qp, _structure.spec_structure

    def read(problem):
        seen.append(problem.name)
        return real_read(problem)

    def spec(der, D, *a, **k):
        rec = real_spec(der, D, *a, **k)
        used.append((rec, D))
        return rec

    monkeypatch.setattr(detection, "_read_box_qp", read)
    monkeypatch.setattr(_structure, "spec_structure", spec)
    return seen, used


def _data(n, seed, task):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    if task == "svc":
        return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    if task == "svr":
        return X, X[:, 0] - X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    return X, None


def _variants():
    (oc, f_oc), (svc, f_svc) = placeholder_specs()
    svr = svr_spec()
    return {"oc": lambda: pd.Variant(oc, decision=f_oc, nu=0.2, gamma=0.5, tol=1e-6),
            "svc": lambda: pd.Variant(svc, decision=f_svc, C=2.0, gamma=0.5, tol=1e-6),
            "svr": lambda: pd.Variant(*svr, task="regression", C=3.0, epsilon=0.1,
                                      gamma=0.5, tol=1e-6)}


FIELDS = ("dual_coef_", "intercept_", "support_")


@pytest.mark.parametrize("task", ["oc", "svc", "svr"])
def test_second_fit_binds_the_template_and_fits_as_detection(fresh, monkeypatch, task):
    make = _variants()[task]
    seen, used = _spy(monkeypatch)
    X1, y1 = _data(40, 0, task)
    make().fit(X1, y1)                          # first fit of the shape: detects and learns
    assert seen and "(this fit)" in used[-1][0].origin
    assert "template" in _structure.structure_templates().values()
    X2, y2 = _data(57, 1, task)
    seen.clear()
    m = make().fit(X2, y2)
    rec, D = used[-1]
    assert seen == [], "a template-bound fit must not detect"
    assert rec.origin.endswith("(shape template)")
    ref = detect_box_qp(D)                      # the detector on this fit's own dual
    assert _structure_template._equal(rec, ref)
    np.testing.assert_array_equal(rec.C, ref.C)
    np.testing.assert_array_equal(rec.p, ref.p)
    # the same fit with the template forgotten (detected on the fit's own dual)
    _structure.clear_structure_templates()
    r = make().fit(X2, y2)
    assert "(this fit)" in used[-1][0].origin
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(m, f), getattr(r, f))
    for f in ("primal_objective", "dual_objective", "relative_gap", "status"):
        assert getattr(m.certificate_, f) == getattr(r.certificate_, f)
    assert m.certificate_.kkt == r.certificate_.kkt
    np.testing.assert_array_equal(m.certificate_.f, r.certificate_.f)


def test_two_specs_never_share_a_template(fresh, monkeypatch):
    from primaldual.model import N, X, x, y
    seen, used = _spy(monkeypatch)
    C = Param("C")

    def svc(scale):                             # the same text but for a factor on the box
        w, b, xi = FeatureVariable("w"), Variable("b"), Variable("xi", N)
        P = Problem(0.5 * norm2(w) + scale * C * vsum(xi),
                    [(y * (w @ phi(X) + b) >= 1 - xi).named("alpha"),
                     (xi >= 0).named("mu")], "min", "C-SVC primal")
        return P, w @ phi(x) + b

    Xa, ya = _data(30, 0, "svc")
    recs = []
    for scale in (1.0, 2.0, 1.0):               # the third: a new spec object, same text
        P, f = svc(scale)
        for seed in (0, 1):
            seen.clear()
            pd.Variant(P, decision=f, C=1.0, gamma=0.5).fit(*_data(30 + seed, seed, "svc"))
            rec = used[-1][0]
            assert ("(this fit)" in rec.origin) == (seed == 0)
            assert bool(seen) == (seed == 0)
            recs.append(rec)
        np.testing.assert_allclose(recs[-1].C, scale)
    assert len([v for v in _structure.structure_templates().values() if v == "template"]) == 3
    assert len(_structure._SPEC_TEMPLATES) == 3


def _oracle_gap(m, X, y, task, gamma=0.5):
    """The duality gap of the predictor ``m`` predicts with, in plain numpy (kernel rebuilt):
    primal at the expansion with optimal slacks, dual at the multipliers it is made of."""
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    beta = np.zeros(X.shape[0])
    beta[m.support_] = m.dual_coef_[0]
    Kb = K @ beta
    c = float(m.intercept_[0])
    f = Kb + c
    np.testing.assert_allclose(m.decision_function(X) if task != "svr" else m.predict(X), f,
                               rtol=1e-10, atol=1e-10)
    q = float(beta @ Kb)
    if task == "svc":
        Cb, ypm = 2.0, np.where(y == 1, 1.0, -1.0)
        a = ypm * beta
        assert np.all(a >= -1e-12) and np.all(a <= Cb + 1e-12) and abs(a @ ypm) < 1e-9
        P = 0.5 * q + Cb * np.maximum(0.0, 1 - ypm * f).sum()
        D = a.sum() - 0.5 * q
    elif task == "svr":
        Cb, eps = 3.0, 0.1
        assert np.all(np.abs(beta) <= Cb + 1e-12) and abs(beta.sum()) < 1e-9
        P = 0.5 * q + Cb * np.maximum(0.0, np.abs(y - f) - eps).sum()
        D = -eps * np.abs(beta).sum() + y @ beta - 0.5 * q
    else:
        u = 1 / (0.2 * X.shape[0])
        rho = -c
        assert np.all(beta >= -1e-12) and np.all(beta <= u + 1e-12) and abs(beta.sum() - 1) < 1e-9
        P = 0.5 * q + u * np.maximum(0.0, rho - Kb).sum() - rho
        D = -0.5 * q
    return (P - D) / max(1.0, abs(P)), P


@pytest.mark.parametrize("task", ["oc", "svc", "svr"])
def test_oracle_accepts_template_bound_fits(fresh, monkeypatch, task):
    # primaldual.testing.assert_oracle_optimal has no oracle for a Variant yet (TypeError: no
    # oracle for Variant): the same oracle (primal of the predictor with optimal slacks, dual
    # of the multipliers it is made of, kernel in numpy) is written here for the three specs
    make = _variants()[task]
    seen, used = _spy(monkeypatch)
    make().fit(*_data(35, 3, task))
    for seed in (4, 5):
        X, y = _data(50 + seed, seed, task)
        m = make().fit(X, y)
        assert used[-1][0].origin.endswith("(shape template)")
        assert m.status_ == "optimal"
        gap, P = _oracle_gap(m, X, y, task)
        assert -1e-9 <= gap <= 1e-5
        assert np.isclose(m.certificate_.primal_objective, P, rtol=1e-6, atol=1e-9)
        try:                                    # the library's oracle, once it reads Variants
            assert_oracle_optimal(m, X, y)
        except TypeError as exc:
            assert "no oracle for Variant" in str(exc)


@pytest.mark.parametrize("params, why", [
    ({"a": 1.0, "b2": 2.0, "c3": 0.5}, "more than 2 hyper-parameters"),
    ({"a": 1.0, "b2": 1.0}, "not affine in the dual data"),       # the box is a * b2
])
def test_a_spec_without_template_falls_back_and_says_why(fresh, monkeypatch, params, why):
    from primaldual.model import N, X, x, y
    seen, used = _spy(monkeypatch)
    ps = [Param(n) for n in params]
    box = ps[0]
    for p_ in ps[1:]:
        box = box * p_
    w, b, xi = FeatureVariable("w"), Variable("b"), Variable("xi", N)
    P = Problem(0.5 * norm2(w) + box * vsum(xi),
                [(y * (w @ phi(X) + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "three-parameter C-SVC")
    ms = []
    for seed in (0, 1, 2, 3):
        seen.clear()
        X_, y_ = _data(30 + seed, seed, "svc")
        ms.append(pd.Variant(P, decision=w @ phi(x) + b, gamma=0.5, **params).fit(X_, y_))
        rec = used[-1][0]
        assert seen, "a shape without a template is detected on every fit"
        assert "no shape template: " in rec.origin and why in rec.origin
        np.testing.assert_allclose(rec.C, np.prod(list(params.values())))
        assert ms[-1].backend_ == "smo" and ms[-1].status_ == "optimal"
    (said,) = _structure.structure_templates().values()
    assert why in said and "(3 tries)" in said


def test_a_template_binds_at_other_scales(fresh, monkeypatch):
    (oc, f_oc), (svc, f_svc) = placeholder_specs()
    seen, used = _spy(monkeypatch)
    X, y = _data(30, 0, "svc")
    pd.Variant(svc, decision=f_svc, C=1.0, gamma=0.5).fit(X, y)
    pd.Variant(oc, decision=f_oc, nu=0.5, gamma=0.5).fit(X)
    for n, C, nu in ((45, 1e4, 0.01), (33, 1e-4, 0.9)):
        X, y = _data(n, n, "svc")
        for est, yy in ((pd.Variant(svc, decision=f_svc, C=C, gamma=0.5), y),
                        (pd.Variant(oc, decision=f_oc, nu=nu, gamma=0.5), None)):
            est.fit(X, yy)
            rec, D = used[-1]
            assert rec.origin.endswith("(shape template)")
            ref = detect_box_qp(D)
            assert _structure_template._equal(rec, ref)
            np.testing.assert_allclose(rec.C, C if yy is not None else 1 / (nu * n),
                                       rtol=1e-14)
