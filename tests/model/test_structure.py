"""Structure derived from the problem itself (issue 20, part 2): ``detect_box_qp`` and
``detect_kkt_system`` reproduce the records the catalogue attaches by hand, and a box QP written
with the modelling API reaches SMO through the same ``accepts`` path as CSVC's dual."""

import numpy as np
import pytest

import primaldual as pd
from primaldual.backends import choose, get_backend, select
from primaldual.kernels import make_kernel
from primaldual.model import Data, GramOperator, Problem, Variable, dot, quad_form, vsum
from primaldual.model.structure import detect_box_qp, detect_kkt_system


def _xy(n=14, seed=0, regression=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=n) if regression else np.where(X[:, 0] > 0, 1.0, -1.0)
    return X, y


def _same_box(a, b):
    np.testing.assert_allclose(a.Q.dense(), b.Q.dense(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.p, b.p)
    np.testing.assert_allclose(a.C, b.C)
    assert a.equality == b.equality
    if a.equality != "none":
        np.testing.assert_allclose(a.sign, b.sign)
        assert a.delta == pytest.approx(b.delta)
    assert a.variable == b.variable
    for role in ("eq", "lower", "upper"):
        if role in b.multipliers:
            assert a.multipliers.get(role) == b.multipliers[role], role


def _catalogue_duals():
    for name in sorted(pd._METHODS):
        m = getattr(pd, name)()
        reg = "SVR" in name or "Ridge" in name or "RLS" in name or "PLS" in name
        X, y = _xy(regression=reg)
        try:
            data = m._prepare(X, y)
            D = m._dual(data)
        except Exception:  # noqa: BLE001 - methods without a Problem-level dual
            continue
        yield name, D


def test_detection_reproduces_every_hand_attached_record():
    """Every single-variable record attached by hand is found again from the problem itself;
    the multi-variable (SVR's alpha, alpha*, beta) and two-equality (nu) records are listed as
    not detectable so the list cannot grow silently."""
    checked, undetectable = [], []
    for name, D in _catalogue_duals():
        if "box_qp" in D.structure:
            found = detect_box_qp(D)
            if found is None:
                undetectable.append(name)
                continue
            _same_box(found, D.structure["box_qp"])
            checked.append(name)
        if "kkt_system" in D.structure:
            ks, found = D.structure["kkt_system"], detect_kkt_system(D)
            if found is None:
                undetectable.append(name + " (kkt)")
                continue
            np.testing.assert_allclose(found.H() if ks.kernel is not None else 0,
                                       ks.H() if ks.kernel is not None else 0)
            np.testing.assert_allclose(found.d, ks.d)
            assert found.bias == ks.bias
            checked.append(name + " (kkt)")
    assert {"CSVC", "HardMarginSVC", "L2SVC"} <= set(checked), checked
    assert set(undetectable) <= {"EpsilonSVR", "NuSVR", "NuSVC", "LapRLS (kkt)",
                                 "ProximalSVC (kkt)", "LapSVC"}, undetectable


def test_custom_box_qp_reaches_smo_through_the_same_accepts_path():
    X, y = _xy(n=20, seed=3)
    k = make_kernel("rbf", gamma=0.7)
    a = Variable("alpha", len(y))
    Y, C = Data("y", y), Data("C", 1.5)
    custom = Problem(vsum(a) - 0.5 * quad_form(a, GramOperator(k, X, sign=y)),
                     [(dot(Y, a) == 0).named("nu"), (a >= 0).named("s"), (a <= C).named("xi")],
                     "max", "my box QP")
    assert "box_qp" not in custom.structure        # nothing attached by hand
    m = pd.CSVC(C=1.5, kernel="rbf", gamma=0.7)
    D = m._dual(m._prepare(X, y))
    smo = get_backend("smo")
    assert smo.accepts(custom) and smo.accepts(D)
    assert select(custom, "auto") == "smo" == select(D, "auto")
    s1 = custom.solve(backend="auto", tol=1e-8)
    s2 = D.solve(backend="smo", tol=1e-8)
    assert s1.backend == "smo" and "smo" in s1.info["backend_choice"]
    assert s1.objective_value == pytest.approx(s2.objective_value, rel=1e-7)


def test_refusals_name_the_failed_condition():
    a = Variable("alpha", 4)
    P = Problem(vsum(a), [(a >= 0).named("s"), (a <= 1).named("u")], "max", "LP")
    with pytest.raises(ValueError, match="not a box-constrained QP"):
        select(P, "smo")
    name, why = choose(P)
    assert name == "cvxpy" and "smo:" in why and "kkt:" in why
